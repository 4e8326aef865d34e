//! The state table at a million states (issue 24's figures): inserting the states of 1,000,000
//! UDP flows (one first packet each through `pass all`), then packets of those established
//! flows (the state lookup, no rules), then the same packets with the state table bypassed by
//! a rule set that keeps no state (`pass all no state`: the rules alone, the naive
//! comparison), and the longest a packet waits while the million states expire (the purge is
//! incremental: each packet removes a bounded slice).
//!
//! Each packet is written into a buffer just before it is tested, as a firewall tests the
//! packet it has just received (in cache); what misses the caches is the state table.
//!
//! A plain `main` (not criterion): building a million states is the measured work, once per
//! run. `cargo bench -p sift-firewall --bench state` (`SIFT_STATE_FLOWS=N` for another
//! number of flows). The figures are medians of 5 passes where a pass repeats.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Firewall, Settings};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

/// An IPv4/UDP packet of flow `i` (client 10.a.b.c:port → 192.0.2.1:53).
fn udp(i: u32) -> [u8; 36] {
    let mut p = [0u8; 36];
    p[..12].copy_from_slice(&[0x45, 0, 0, 36, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    p[12..16].copy_from_slice(&[10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
    p[16..20].copy_from_slice(&[192, 0, 2, 1]);
    p[20..22].copy_from_slice(&(1024 + (i % 60_000) as u16).to_be_bytes());
    p[22..24].copy_from_slice(&53u16.to_be_bytes());
    p[24..26].copy_from_slice(&16u16.to_be_bytes());
    p
}

fn firewall(rules: &str, states: u32) -> Firewall {
    let host = FixtureHost::openbsd(".");
    let rs = parse("pf.conf", rules, &Options::default(), &host).expect("rule set");
    let mut fw = Firewall::new(&rs, &host).expect("firewall");
    let settings = Settings::from_pfctl_verbose(&format!("set limit states {states}\n"));
    fw.set_settings(settings.expect("settings"));
    fw
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let flows: u32 =
        std::env::var("SIFT_STATE_FLOWS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let mut meta = Meta::new("em0", Direction::In);
    meta.now = 1_000_000; // seconds on the firewall's clock

    let mut fw = firewall("pass all\n", flows + 16);
    let start = Instant::now();
    for i in 0..flows {
        let d = fw.test_bytes(&udp(i), &meta);
        assert!(d.state.is_some(), "{d:?}");
    }
    let insert = start.elapsed();
    assert_eq!(fw.states().len(), flows as usize);
    println!(
        "insert: {flows} states in {:.3} s = {:.2} M states/s",
        insert.as_secs_f64(),
        f64::from(flows) / insert.as_secs_f64() / 1e6
    );

    // Established flows, in a scattered order (every 7th flow, wrapping), as traffic mixes them.
    let order: Vec<usize> = (0..flows as usize).map(|k| (k * 7919) % flows as usize).collect();
    let pass = |fw: &mut Firewall, by_state: bool| {
        let start = Instant::now();
        for &k in &order {
            let d = fw.test_bytes(&udp(k as u32), &meta);
            assert_eq!(d.from_state, by_state);
        }
        start.elapsed().as_secs_f64() / f64::from(flows) * 1e9
    };
    let ns = median((0..5).map(|_| pass(&mut fw, true)).collect());
    println!("established: {ns:.1} ns/packet = {:.2} Mpps with {flows} states", 1e3 / ns);
    let mut stateless = firewall("pass all no state\n", 16);
    let ns_rules = median((0..5).map(|_| pass(&mut stateless, false)).collect());
    println!(
        "same packets, rules only (pass all no state): {ns_rules:.1} ns/packet = {:.2} Mpps",
        1e3 / ns_rules
    );

    // NAT (issue 17): the same flows leaving through `nat-to` a /20 pool (round-robin), each
    // packet rewritten in place (addresses, port, checksums) as pf sends it on.
    let mut nat = firewall("match out nat-to 198.18.0.0/20 round-robin\npass all\n", flows + 16);
    let mut out = Meta::new("em0", Direction::Out);
    out.now = meta.now;
    let start = Instant::now();
    for i in 0..flows {
        let mut p = udp(i);
        let d = nat.filter(&mut p, &out);
        assert!(d.state.is_some() && d.rewrite.is_some(), "{d:?}");
    }
    let nat_insert = start.elapsed();
    println!(
        "nat insert: {flows} translated states in {:.3} s = {:.2} M states/s",
        nat_insert.as_secs_f64(),
        f64::from(flows) / nat_insert.as_secs_f64() / 1e6
    );
    let nat_pass = |fw: &mut Firewall| {
        let start = Instant::now();
        for &k in &order {
            let mut p = udp(k as u32);
            let d = fw.filter(&mut p, &out);
            debug_assert!(d.from_state && p[12] == 198);
            std::hint::black_box(&p);
        }
        start.elapsed().as_secs_f64() / f64::from(flows) * 1e9
    };
    let ns_nat = median((0..5).map(|_| nat_pass(&mut nat)).collect());
    println!(
        "nat established: {ns_nat:.1} ns/packet = {:.2} Mpps with {flows} translated states",
        1e3 / ns_nat
    );
    drop(nat);

    // Expiry: the clock jumps past every UDP timeout; packets of new flows go on arriving and
    // each one purges a slice of the table; the longest single packet is the stall.
    meta.now += 3600;
    let (mut worst, mut k) = (Duration::ZERO, flows);
    let start = Instant::now();
    while !fw.states().is_empty() && k < flows * 4 {
        let t = Instant::now();
        fw.test_bytes(&udp(k), &meta);
        worst = worst.max(t.elapsed());
        k += 1;
        if fw.states().len() <= (k - flows) as usize {
            break;
        }
    }
    println!(
        "expiry: {} packets while the old states expired ({:.3} s), longest packet {:.1} µs",
        k - flows,
        start.elapsed().as_secs_f64(),
        worst.as_secs_f64() * 1e6
    );
}
