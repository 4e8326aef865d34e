//! Realistic filter sets: what users who split traffic by tenant write, by the thousand.
//!
//! **Why it exists.** Many-filter programs (`sift --split`, `sift bench --filters`) are tested
//! and measured on sets that look like real ones — per-host, per-subnet, per-port, per-VLAN
//! filters and mixes of them — drawn from the same [`pools`] as the generated
//! traffic, so a useful fraction of them match it, while most (other tenants' addresses) match
//! nothing on a given packet, as in a real split: only the first [`TRAFFIC_FILTERS`] filters
//! name the traffic's hosts, networks and ports (each a few times at most), the rest name other
//! tenants, each its own. So a packet goes to a few filters whatever the set's size.
//! Deterministic: the same seed and count give the same set.

use crate::pools::{self, CLIENTS, FIRST_CLIENT, SERVER_NETS_V4, TCP_SERVICES};
use crate::rng::Rng;

/// How many filters of a set may name the generated traffic.
pub const TRAFFIC_FILTERS: usize = 200;

/// `n` filters as `(name, expression)`, names `t0`… in order; the same for the same seed.
pub fn realistic(n: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = Rng::new(seed);
    (0..n).map(|i| (format!("t{i}"), realistic_one(&mut rng, i))).collect()
}

/// The lines of a filter-set file (`NAME EXPR`) for [`realistic`].
pub fn realistic_file(n: usize, seed: u64) -> String {
    let mut s = String::new();
    for (name, expr) in realistic(n, seed) {
        s.push_str(&name);
        s.push(' ');
        s.push_str(&expr);
        s.push('\n');
    }
    s
}

fn v4(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// A host: one the traffic uses (among the first filters) or another tenant's.
fn host(rng: &mut Rng, i: usize) -> String {
    if i < TRAFFIC_FILTERS {
        if rng.below(2) == 0 {
            let c = FIRST_CLIENT + rng.below(u64::from(CLIENTS)) as u32;
            return v4([10, 0, 0, c as u8]);
        }
        let (net, count) = SERVER_NETS_V4[rng.below(SERVER_NETS_V4.len() as u64) as usize];
        let h = 1 + rng.below(u64::from(count)) as u8;
        return v4([net[0], net[1], net[2], h]);
    }
    // Other tenants: 10.16.0.0/12, distinct per filter index.
    let i = i as u32;
    v4([10, 16 + ((i >> 16) & 0xf) as u8, (i >> 8) as u8, i as u8])
}

fn subnet(rng: &mut Rng, i: usize) -> String {
    match rng.below(4) {
        0 if i < TRAFFIC_FILTERS => {
            let (net, _) = SERVER_NETS_V4[rng.below(SERVER_NETS_V4.len() as u64) as usize];
            format!("{}/24", v4(net))
        }
        1 => format!("10.{}.0.0/16", 32 + (i % 32)),
        _ => format!("10.{}.{}.0/24", 64 + ((i >> 8) % 64), i % 256),
    }
}

fn port(rng: &mut Rng, i: usize) -> u32 {
    if i < TRAFFIC_FILTERS && rng.below(3) == 0 {
        let s = TCP_SERVICES[rng.below(TCP_SERVICES.len() as u64) as usize].1;
        return u32::from(s);
    }
    10_000 + (i as u32 % 20_000)
}

fn realistic_one(rng: &mut Rng, i: usize) -> String {
    match rng.below(20) {
        0..=5 => format!("host {}", host(rng, i)),
        6 => format!("src host {}", host(rng, i)),
        7..=9 => format!("net {}", subnet(rng, i)),
        10 => format!("dst net {}", subnet(rng, i)),
        11 | 12 => format!("tcp port {}", port(rng, i)),
        13 => format!(
            "udp port {}",
            if rng.below(2) == 0 { pools::SYSLOG_PORT as u32 } else { port(rng, i) }
        ),
        14 => format!("vlan {}", 1 + (i % 4094)),
        15 => format!("vlan {} and host {}", 1 + (i % 4094), host(rng, i)),
        16 => format!("host {} and tcp port {}", host(rng, i), port(rng, i)),
        17 => format!("src net {} and dst port {}", subnet(rng, i), port(rng, i)),
        18 => {
            let n = 1 + rng.below(u64::from(pools::SERVERS_V6)) as u32;
            let tenant = if i < TRAFFIC_FILTERS { 2 } else { 0x100 + (i as u32 % 0xff00) };
            format!("ip6 host 2001:db8:{tenant:x}::{n:x}")
        }
        _ => format!("udp port 53 and host {}", host(rng, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_varied() {
        let a = realistic(500, 1);
        assert_eq!(a, realistic(500, 1));
        assert_ne!(a, realistic(500, 2));
        let kinds =
            ["host", "src host", "net", "dst net", "tcp port", "udp port", "vlan", "ip6 host"];
        for k in kinds {
            assert!(a.iter().any(|(_, e)| e.starts_with(k)), "{k}");
        }
        assert!(realistic_file(3, 1).lines().all(|l| l.starts_with('t') && l.contains(' ')));
    }
}
