//! The dumps after traffic: `tests/data/switch.flows` under a fixed stream of hand-built
//! frames, then `ovs-ofctl dump-flows` (per-rule counters, the caches' hits credited) in
//! `switch.flows.after` and `ovs-dpctl dump-flows` (the megaflows with what they consulted,
//! their counters and last use) in `switch.megaflows`. `BLESS=1` rewrites them.

use std::path::{Path, PathBuf};

use sift_flow::{CacheConfig, Datapath, FlowKey, FlowTable, Hit, PortMap, parse_rules};
use sift_gen::build::{Packet, ipv4_header, ipv6_header};
use sift_wire::tcp::{TcpRepr, flags};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn ports() -> PortMap {
    let mut p = PortMap::new();
    for (name, no) in [("eth1", 1), ("eth2", 2), ("veth0", 3), ("veth1", 4)] {
        p.add(name, no).unwrap();
    }
    p
}

const LAN: [u8; 6] = [2, 0, 10, 0, 0, 10];
const GW: [u8; 6] = [2, 0, 10, 0, 0, 1];

fn v6(last: u8) -> [u8; 16] {
    let mut a = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    a[15] = last;
    a
}

/// (in_port, frame) of the stream, in order.
fn traffic() -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |port: u32, build: &dyn Fn(&mut Packet<'_>)| {
        let (mut f, mut s) = (Vec::new(), Vec::new());
        let mut p = Packet::new(&mut f, &mut s);
        build(&mut p);
        p.finish();
        out.push((port, f));
    };
    let tcp = |sp, dp| TcpRepr {
        src_port: sp,
        dst_port: dp,
        seq: 1,
        ack: 0,
        flags: flags::SYN,
        window: 64,
        urgent: 0,
        options: &[],
    };
    for i in 0..3u16 {
        // DNS from two clients (one megaflow: only the port and protocol were consulted).
        for host in [10u8, 11] {
            add(1, &|p| {
                p.ethernet(GW, LAN)
                    .ipv4(&ipv4_header([10, 0, 0, host], [192, 0, 2, 1]))
                    .udp(40000 + i, 53);
            });
        }
        // Web to two servers of 198.51.100.0/24 and one outside it.
        for dst in [[198, 51, 100, 7], [198, 51, 100, 8], [203, 0, 113, 5]] {
            add(1, &|p| {
                p.ethernet(GW, LAN)
                    .ipv4(&ipv4_header([10, 0, 0, 10], dst))
                    .tcp(&tcp(50000 + i, 443));
            });
        }
        // Telnet, either way.
        add(2, &|p| {
            p.ethernet(LAN, GW)
                .ipv4(&ipv4_header([192, 0, 2, 9], [10, 0, 0, 10]))
                .tcp(&tcp(40000, 23));
        });
        // A later fragment.
        add(1, &|p| {
            let mut h = ipv4_header([10, 0, 0, 10], [192, 0, 2, 1]);
            h.frag_offset = 100;
            h.dont_frag = false;
            p.ethernet(GW, LAN).ipv4(&h).payload(&[0; 32]);
        });
        // VLAN 10 from eth1; untagged from eth2.
        add(1, &|p| {
            p.ethernet(GW, LAN)
                .vlan(false, 0, 10)
                .ipv4(&ipv4_header([10, 0, 0, 10], [10, 0, 0, 1]))
                .udp(1, 2);
        });
        add(2, &|p| {
            p.ethernet(LAN, GW).ipv4(&ipv4_header([10, 0, 0, 1], [10, 0, 0, 10])).udp(2, 1);
        });
        // IPv6 DNS, pings, ARP.
        add(1, &|p| {
            p.ethernet(GW, LAN).ipv6(&ipv6_header(v6(0x10), v6(0x53))).udp(40000, 53);
        });
        add(1, &|p| {
            p.ethernet(GW, LAN)
                .ipv4(&ipv4_header([10, 0, 0, 10], [192, 0, 2, 1]))
                .icmp_echo(true, 1, i);
        });
        add(2, &|p| {
            p.ethernet(LAN, GW).ipv6(&ipv6_header(v6(0x10), v6(0x53))).icmpv6_echo(true, 1, i);
        });
        add(2, &|p| {
            p.ethernet([0xff; 6], GW).arp(1, GW, [10, 0, 0, 1], [0; 6], [10, 0, 0, 10]);
        });
    }
    out
}

#[test]
fn dumps_after_traffic() {
    let ports = ports();
    let text = std::fs::read_to_string(data("switch.flows")).unwrap();
    let table = FlowTable::with_rules(parse_rules(&text, &ports).unwrap());
    let mut dp = Datapath::new(table, CacheConfig { seed: Some(7), ..CacheConfig::default() });
    let mut hits = [0usize; 3];
    let stream = traffic();
    for (i, (port, frame)) in stream.iter().enumerate() {
        dp.set_now(1_000_000 * (i as u64 + 1));
        let key = FlowKey::extract(*port, frame);
        let (_, hit) = dp.lookup(&key, frame);
        hits[hit as usize] += 1;
    }
    dp.sync_stats();
    sift_testkit::golden(&data("switch.flows.after"), &dp.slow_path().dump(&ports));
    sift_testkit::golden(&data("switch.megaflows"), &dp.dump_megaflows(&ports));
    let total: u64 = dp.slow_path().rules().map(|(_, s)| s.packets).sum::<u64>()
        + dp.slow_path().miss_stats().packets;
    assert_eq!(total, stream.len() as u64, "every packet counted once");
    assert_eq!(hits.iter().sum::<usize>(), stream.len());
    assert!(hits[Hit::Microflow as usize] > 0 && hits[Hit::Megaflow as usize] > 0, "{hits:?}");
}
