//! The first packet of a flow through a realistic 1,000-rule set, with skip steps and with the
//! naive evaluator in the same run, and with its state created; a table lookup in a table of
//! 1,000,000 prefixes.
//!
//! `cargo bench -p sift-firewall --bench eval`; medians in
//! `target/criterion/<group>/<name>/new/estimates.json`. Each iteration decides a batch of
//! 1,024 different packets (or looks up 1,024 addresses), so per-packet figures are the
//! median divided by 1,024.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sift_firewall::packet::{Direction, Family, Meta, Packet};
use sift_firewall::{Firewall, Prefix, Settings, Table};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};
use sift_testkit::Rng;

const BATCH: usize = 1024;
/// How many different addresses the table lookups cycle through.
const LOOKUP_ADDRESSES: usize = 1 << 20;

/// A firewall's rule set of 1,000 rules: defaults, antispoofing, per-server service rules
/// grouped by server (as generated rule sets are), a few tables and anchors, outbound rules.
fn ruleset() -> String {
    let mut s = String::from(
        "set block-policy drop\ntable <bogons> { 0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, 192.0.2.0/24, 224.0.0.0/3 }\n\
         table <admins> { 198.51.100.0/28, 203.0.113.7 }\n\
         block log all\nblock in quick from <bogons>\nblock in quick on em0 from 10.0.0.0/8\n\
         pass out on em0 inet proto { tcp, udp, icmp }\n\
         match in on em0 proto tcp scrub (max-mss 1440)\n",
    );
    let mut n = 7;
    let services = [22u16, 25, 53, 80, 110, 143, 443, 465, 587, 993, 995, 3306, 5432, 8080, 8443];
    let mut server = 0u32;
    while n < 990 {
        let host = format!("10.{}.{}.{}", 1 + server / 250, server % 250, 10);
        for (i, port) in services.iter().enumerate() {
            if (server as usize + i).is_multiple_of(3) {
                continue;
            }
            let from = if *port == 22 || *port == 3306 { "<admins>" } else { "any" };
            s += &format!("pass in on em0 proto tcp from {from} to {host} port {port}\n");
            n += 1;
        }
        s += &format!("pass in on em0 inet proto icmp to {host} icmp-type echoreq\n");
        n += 1;
        server += 1;
    }
    s += "anchor \"relayd/*\"\nanchor \"ftp-proxy/*\"\n";
    while n < 1000 {
        s += &format!("block in on em1 proto udp to port {}\n", 6000 + n);
        n += 1;
    }
    s
}

fn packets(rng: &mut Rng) -> Vec<Packet<'static>> {
    (0..BATCH)
        .map(|_| {
            let server = rng.below(70) as u32;
            let dst =
                u32::from(Ipv4Addr::new(10, (1 + server / 250) as u8, (server % 250) as u8, 10));
            let src = u32::from(Ipv4Addr::new(198, 51, 100, rng.below(32) as u8));
            Packet {
                af: Family::Inet,
                proto: 6,
                src: u128::from(src) << 96,
                dst: u128::from(dst) << 96,
                sport: 1024 + rng.below(60000) as u16,
                dport: rng.pick(&[22, 25, 80, 443, 993, 8080, 8443, 9999]),
                tcp_flags: 0x02,
                icmp_type: 0,
                icmp_code: 0,
                tos: 0,
                ttl: 64,
                fragment: false,
                len: 60,
                bytes: &[],
            }
        })
        .collect()
}

/// The bytes of `p` as an IPv4 TCP SYN from source port `sport`.
fn syn(p: &Packet<'_>, sport: u16) -> [u8; 40] {
    let mut b = [0u8; 40];
    b[..10].copy_from_slice(&[0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6]);
    b[12..16].copy_from_slice(&((p.src >> 96) as u32).to_be_bytes());
    b[16..20].copy_from_slice(&((p.dst >> 96) as u32).to_be_bytes());
    b[20..22].copy_from_slice(&sport.to_be_bytes());
    b[22..24].copy_from_slice(&p.dport.to_be_bytes());
    b[24..28].copy_from_slice(&1000u32.to_be_bytes());
    b[32] = 5 << 4;
    b[33] = 0x02;
    b[34..36].copy_from_slice(&65535u16.to_be_bytes());
    b
}

fn first_packet(c: &mut Criterion) {
    let host = FixtureHost::openbsd(".");
    let rs = parse("pf.conf", &ruleset(), &Options::default(), &host).expect("rule set");
    let rules: usize = rs.anchors.iter().map(|a| a.rules.len()).sum();
    assert!(rules >= 1000, "{rules} rules");
    let mut fw = Firewall::new(&rs, &host).expect("firewall");
    let pkts = packets(&mut Rng(7));
    let meta = Meta::new("em0", Direction::In);
    for p in &pkts {
        assert_eq!(fw.decide(p, &meta), fw.decide_naive(p, &meta));
    }
    let mut g = c.benchmark_group("first_packet_1000_rules");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("skip_steps", |b| {
        b.iter(|| pkts.iter().map(|p| fw.decide(p, &meta).rule.map_or(0, |r| r.nr)).sum::<u32>())
    });
    g.bench_function("naive", |b| {
        b.iter(|| {
            pkts.iter().map(|p| fw.decide_naive(p, &meta).rule.map_or(0, |r| r.nr)).sum::<u32>()
        })
    });
    // The whole of pf_test for a flow's first packet: the state lookup that misses, the rules,
    // and the state that the passing rule keeps. Every packet is of a new flow (its source port
    // counts up); the clock moves a second a batch, so states (tcp.first 30 s) expire and are
    // purged as they would be under steady churn: about 30,000 states live.
    let settings = Settings::from_pfctl_verbose("set timeout tcp.first 30\n").expect("settings");
    fw.set_settings(settings);
    let (mut now, mut flow) = (1_000u64, 0u32);
    g.bench_function("skip_steps_keeping_state", |b| {
        b.iter(|| {
            now += 1;
            let m = Meta { now, ..meta };
            let mut created = 0;
            for p in &pkts {
                flow = flow.wrapping_add(1);
                let bytes = syn(p, 1024 + (flow % 60_000) as u16);
                created += usize::from(fw.test_bytes(&bytes, &m).state.is_some());
            }
            created
        })
    });
    g.finish();
    println!("states at the end: {}", fw.states().len());
}

fn table_lookup(c: &mut Criterion) {
    let mut rng = Rng(11);
    let mut t = Table::new("big");
    while t.len() < 1_000_000 {
        let a = IpAddr::V4(Ipv4Addr::from(rng.next() as u32));
        let len = rng.pick(&[8u8, 12, 16, 20, 22, 24, 24, 24, 28, 32]);
        t.add(Prefix::new(a, len, rng.chance(5)).expect("prefix"));
    }
    let addrs: Vec<IpAddr> =
        (0..BATCH).map(|_| IpAddr::V4(Ipv4Addr::from(rng.next() as u32))).collect();
    // The trie is looked up with 2^20 different addresses, a batch at a time in turn, so that
    // the nodes a batch visits are not still cached from the previous iteration.
    let keys: Vec<u128> = (0..LOOKUP_ADDRESSES)
        .map(|_| sift_firewall::table::key_of(IpAddr::V4(Ipv4Addr::from(rng.next() as u32))))
        .collect();
    let entries = t.entries();
    let mut g = c.benchmark_group("table_1000000_prefixes");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.measurement_time(Duration::from_secs(4));
    let mut turn = 0;
    g.bench_function("trie", |b| {
        b.iter(|| {
            turn = (turn + BATCH) % LOOKUP_ADDRESSES;
            keys[turn..turn + BATCH].iter().filter(|k| t.match_key(**k, true)).count()
        })
    });
    // The naive reference: a linear scan, on 1,024 of the prefixes only (a million would take
    // seconds per batch); scale by 1,000,000 / 1,024 to compare.
    let few = &entries[..BATCH];
    g.bench_function("scan_1024_prefixes", |b| {
        b.iter(|| {
            addrs
                .iter()
                .filter(|a| {
                    let k = sift_firewall::table::key_of(**a);
                    few.iter()
                        .filter(|e| {
                            k & sift_firewall::table::mask(e.len)
                                == sift_firewall::table::key_of(e.addr)
                        })
                        .max_by_key(|e| e.len)
                        .is_some_and(|e| !e.negated)
                })
                .count()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1));
    targets = first_packet, table_lookup
}
criterion_main!(benches);
