//! Any sequence of packets through pf's whole path with translation (af-to included),
//! modulation, synproxy, scrub and reassembly on (`Firewall::process`): the first byte of each
//! record picks its direction and a clock step, the next two its length, the rest is the
//! packet. No panic, no
//! unbounded growth (states and held fragments stay under the limits), every packet sent on
//! parses, and a translated TCP/UDP packet whose checksum held still holds.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sift_firewall::packet::{Direction, Meta, Packet};
use sift_firewall::{Firewall, Settings};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

const RULES: &str = "set limit { states 64, frags 64, src-nodes 16 }\n\
    match out on em0 from 10.0.0.0/8 nat-to 192.0.2.0/30 round-robin\n\
    match out on em0 inet6 from fd00::/8 nat-to 2001:db8::1\n\
    match in on em0 proto tcp to 192.0.2.9 port 80 rdr-to 10.0.0.10 port 8080\n\
    match scrub (max-mss 1200 min-ttl 32 random-id)\n\
    block return in on em0 proto { tcp udp } to port 23\n\
    pass out modulate state\n\
    pass in quick proto tcp to port 22 synproxy state\n\
    pass in quick on em0 inet6 to 64:ff9b::/96 af-to inet from 192.0.2.77\n\
    pass in\n";

fn firewall() -> Firewall {
    static FW: OnceLock<Firewall> = OnceLock::new();
    FW.get_or_init(|| {
        let host = FixtureHost::openbsd(".");
        let out = pfctl("pf.conf", RULES, &Options { verbose: true, ..Options::default() }, &host);
        let mut fw = Firewall::new(&out.ruleset, &host).expect("rule set");
        fw.set_settings(Settings::from_pfctl_verbose(&out.stdout).expect("settings"));
        fw.seed(1);
        fw
    })
    .clone()
}

/// Whether the TCP or UDP checksum of an unfragmented IPv4/IPv6 packet holds.
fn l4_sum_ok(ip: &[u8]) -> Option<bool> {
    let p = Packet::parse(ip).ok()?;
    if p.fragment || !matches!(p.proto, 6 | 17) {
        return None;
    }
    let l4 = p.l4();
    if p.proto == 17 && l4.get(6..8) == Some(&[0, 0]) {
        return None;
    }
    let (s, d) = match p.af {
        sift_firewall::Family::Inet => (&ip[12..16], &ip[16..20]),
        sift_firewall::Family::Inet6 => (&ip[8..24], &ip[24..40]),
    };
    let acc = sift_wire::checksum::pseudo(s, d, p.proto, l4.len() as u32);
    Some(sift_wire::checksum::finish(sift_wire::checksum::add(acc, l4)) == 0)
}

fuzz_target!(|data: &[u8]| {
    let mut fw = firewall();
    let mut now = 1u64;
    let mut rest = data;
    while rest.len() >= 3 {
        let ctl = rest[0];
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let ip = &rest[3..3 + len];
        rest = &rest[3 + len..];
        now += u64::from(ctl >> 4);
        let dir = if ctl & 1 != 0 { Direction::In } else { Direction::Out };
        let mut meta = Meta::new("em0", dir);
        meta.now = now;
        let before = l4_sum_ok(ip);
        let p = fw.process(ip, &meta);
        for o in &p.out {
            assert!(Packet::parse(o).is_ok(), "a packet sent on does not parse");
            if before == Some(true) && p.out.len() == 1 {
                assert_eq!(l4_sum_ok(o), Some(true), "a checksum broke on the way");
            }
        }
        for made in [&p.decision.reply, &p.decision.ahead].into_iter().flatten() {
            assert!(Packet::parse(made).is_ok(), "a packet pf made does not parse");
        }
        assert!(fw.states().len() <= 64);
        assert!(fw.reassembler().fragments() <= 64);
    }
});
