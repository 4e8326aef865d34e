//! Any bytes as an IPv4 or IPv6 packet through a fixed rule set (tables, anchors, tags, ports,
//! flags, ICMP types, once): no panic; the skip-step evaluator and the naive one agree, and
//! bytes that are not a packet pf would judge are blocked with pf's reason.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sift_firewall::packet::{Direction, Meta, Packet};
use sift_firewall::{Firewall, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

const RULES: &str = "\
table <lan> { 10.0.0.0/8, !10.1.0.0/16, 2001:db8::/32 }
block return all
match in from <lan> tag lan
pass in quick proto tcp to port { 22, 80 } flags S/SA
pass in proto udp from port >= 1024 to port 53:54
pass inet proto icmp icmp-type { echoreq, unreach }
pass inet6 proto icmp6
anchor \"a\" in {
 block proto tcp to port 80 tagged lan
 anchor \"b\" quick {
  pass proto tcp from ! <lan> to port 443
 }
}
anchor \"a/*\"
pass out proto 47 fragment
pass in proto tcp to port 8080 once
";

fn firewall() -> &'static Firewall {
    static FW: OnceLock<Firewall> = OnceLock::new();
    FW.get_or_init(|| {
        let host = FixtureHost::openbsd("/nonexistent");
        let rs = parse("pf.conf", RULES, &Options::default(), &host).expect("rule set");
        Firewall::new(&rs, &host).expect("firewall")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&dir, bytes)) = data.split_first() else { return };
    let mut skip = firewall().clone();
    let mut naive = skip.clone();
    let meta = Meta::new("em0", if dir & 1 == 0 { Direction::In } else { Direction::Out });
    let d = skip.decide_bytes(bytes, &meta);
    match Packet::parse(bytes) {
        Ok(p) => assert_eq!(d, naive.decide_naive(&p, &meta)),
        Err(e) => assert_eq!((d.action, d.reason), (Verdict::Block, e.reason())),
    }
});
