//! Issue 26's benchmark of pf in the kernel: the kernel's own time per packet
//! (`BPF_PROG_TEST_RUN`, `repeat` runs of one packet, XDP) of the pf program at 64, 512 and
//! 2,048 realistic rules (per host, per subnet, per port, per table), for
//!
//! * a first packet that keeps no state (its winner is a `pass … no state` rule near the end);
//! * a first packet that creates a state (a `keep state` rule; `set timeout udp.first 0`, so
//!   each run finds the previous run's state expired, removes it, judges the packet by the
//!   rules and creates the state again: the figure includes that removal);
//! * a packet of an established TCP connection (its state found and tracked: the same
//!   acknowledgement each run, in its window).
//!
//! Targets: ≤ 2 µs for first packets at 2,048 rules (bpfilter's published figure: 13.7 µs),
//! ≤ 200 ns for established flows. Root (`bpf(2)`); prints SKIP otherwise.
//!
//! ```text
//! cargo run --release -p sift-firewall-ebpf --example kernel_bench [-- REPEAT [RULES…]]
//! ```

use std::fmt::Write as _;

use sift_firewall::{Firewall, Settings, Verdict};
use sift_firewall_ebpf::kernel::KernelPf;
use sift_firewall_ebpf::{Hook, RuleSet};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

/// A rule set of `n` rules: a default block, then rules per host, per subnet, per port and
/// per table in turn, and the three rules the measured packets meet, last.
fn rules(n: usize) -> String {
    let mut r = String::from("set timeout udp.first 0\nblock all\n");
    let body = n.saturating_sub(4);
    for i in 0..body {
        let (hi, lo) = (i / 256 % 256, i % 256);
        match i % 4 {
            0 => {
                let _ = writeln!(
                    r,
                    "pass in proto tcp from 198.18.{hi}.{lo} to any port 22 flags S/SA keep state"
                );
            }
            1 => {
                let _ = writeln!(
                    r,
                    "pass in proto udp from 10.{lo}.0.0/16 to 192.0.2.0/24 port {} keep state",
                    1024 + i
                );
            }
            2 => {
                let _ = writeln!(
                    r,
                    "pass out proto tcp from 192.0.2.0/24 to any port {} flags S/SA keep state",
                    2048 + i
                );
            }
            _ => {
                let _ = writeln!(
                    r,
                    "table <t{i}> {{ 203.0.{hi}.{lo}, 100.{lo}.0.0/16, 2001:db8:{i:x}::/48, 172.{}.{lo}.0/24 }}\n\
                     block in quick from <t{i}> to any",
                    16 + i % 16
                );
            }
        }
    }
    r.push_str("pass in proto udp from 198.51.100.0/24 to any port 7000 no state\n");
    r.push_str("pass in proto udp from 198.51.100.0/24 to any port 7001 keep state\n");
    r.push_str("pass out proto tcp from 192.0.2.0/24 to any port 443 flags S/SA keep state\n");
    r
}

fn load(text: &str) -> (Firewall, FixtureHost, Settings) {
    let host = FixtureHost::openbsd(".");
    let out = pfctl("pf.conf", text, &Options { verbose: true, ..Options::default() }, &host);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let fw = Firewall::new(&out.ruleset, &host).expect("load");
    let settings = Settings::from_pfctl_verbose(&out.stdout).expect("settings");
    (fw, host, settings)
}

fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(ip);
    f
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8]) -> Vec<u8> {
    let total = 20 + l4.len();
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0, 64, proto, 0, 0];
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(l4);
    p
}

fn udp(sport: u16, dport: u16) -> Vec<u8> {
    let mut u = sport.to_be_bytes().to_vec();
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&[0, 26, 0, 0]);
    u.resize(26, 0x55);
    u
}

fn tcp(sport: u16, dport: u16, flags: u8, seq: u32, ack: u32) -> Vec<u8> {
    let mut t = sport.to_be_bytes().to_vec();
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    t
}

fn main() {
    let mut args = std::env::args().skip(1);
    let repeat: u32 = args.next().map_or(1_000_000, |a| a.parse().expect("REPEAT"));
    let sizes: Vec<usize> = {
        let v: Vec<usize> = args.map(|a| a.parse().expect("RULES")).collect();
        if v.is_empty() { vec![64, 512, 2048] } else { v }
    };
    if sift_sys::bpf::map_create(2, 4, 4, 1, 0).is_err() {
        println!("SKIP: the kernel's bpf(2) is not available (root needed)");
        return;
    }
    let client = [192, 0, 2, 10];
    let server = [203, 0, 113, 80];
    let remote = [198, 51, 100, 20];
    let no_state = ethernet(&ipv4(remote, client, 17, &udp(5000, 7000)));
    let creates = ethernet(&ipv4(remote, client, 17, &udp(5000, 7001)));
    let syn = ethernet(&ipv4(client, server, 6, &tcp(40000, 443, 0x02, 1000, 0)));
    let synack = ethernet(&ipv4(server, client, 6, &tcp(443, 40000, 0x12, 9000, 1001)));
    let ack = ethernet(&ipv4(client, server, 6, &tcp(40000, 443, 0x10, 1001, 9001)));
    let established = ethernet(&ipv4(server, client, 6, &tcp(443, 40000, 0x10, 9001, 1001)));

    println!(
        "pf in the kernel: BPF_PROG_TEST_RUN (XDP), the kernel's ns per packet, {repeat} runs each"
    );
    println!(
        "{:>6} {:>8} {:>8}  {:>22} {:>22} {:>18}",
        "rules", "classes", "words", "first packet, no state", "first packet, state", "established"
    );
    let mut worst_first = 0u32;
    let mut worst_est = 0u32;
    for &n in &sizes {
        let text = rules(n);
        let (fw, host, settings) = load(&text);
        let rs = RuleSet::compile(&fw, &host, "em0", &settings).expect("compile");
        let pf = KernelPf::load(&rs).expect("load");
        // The verdicts first (once each), then the times.
        assert_eq!(pf.run(Hook::Xdp, &no_state).unwrap(), Some(Verdict::Pass));
        assert_eq!(pf.run(Hook::Xdp, &creates).unwrap(), Some(Verdict::Pass));
        assert_eq!(pf.run(Hook::TcEgress, &syn).unwrap(), Some(Verdict::Pass));
        assert_eq!(pf.run(Hook::Xdp, &synack).unwrap(), Some(Verdict::Pass));
        assert_eq!(pf.run(Hook::TcEgress, &ack).unwrap(), Some(Verdict::Pass));
        assert_eq!(pf.run(Hook::Xdp, &established).unwrap(), Some(Verdict::Pass));
        let t_no = pf.time(Hook::Xdp, &no_state, repeat).unwrap();
        let t_state = pf.time(Hook::Xdp, &creates, repeat).unwrap();
        let t_est = pf.time(Hook::Xdp, &established, repeat).unwrap();
        let c = sift_firewall_ebpf::read::counters(&pf).unwrap();
        assert!(c.inserts >= u64::from(repeat), "each run created its state: {c:?}");
        worst_first = worst_first.max(t_no).max(t_state);
        worst_est = worst_est.max(t_est);
        println!(
            "{:>6} {:>8} {:>8}  {:>19} ns {:>19} ns {:>15} ns",
            rs.rules.len(),
            rs.image.bits.len(),
            rs.image.config.nwords,
            t_no,
            t_state,
            t_est
        );
    }
    let ok = |v: u32, limit: u32| if v <= limit { "ok" } else { "MISSED" };
    println!(
        "targets: first packets <= 2000 ns at 2,048 rules ({}, worst {worst_first} ns), \
         established <= 200 ns ({}, worst {worst_est} ns)",
        ok(worst_first, 2000),
        ok(worst_est, 200)
    );
}
