//! Any bytes as an IPv4 or IPv6 packet through a fixed rule set (tables, anchors, tags, ports,
//! flags, ICMP types, once): no panic; the skip-step evaluator and the naive one agree, and
//! bytes that are not a packet pf would judge are blocked with pf's reason. Then the same
//! bytes, cut into packets, through the state table of a firewall with a small state limit:
//! no panic, and the table never holds more states than the limit (bounded memory).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sift_firewall::packet::{Direction, Meta, Packet};
use sift_firewall::{Firewall, Settings, Verdict};
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

/// The state limit of the stateful firewall.
const STATE_LIMIT: u32 = 16;

fn stateful() -> &'static Firewall {
    static FW: OnceLock<Firewall> = OnceLock::new();
    FW.get_or_init(|| {
        let host = FixtureHost::openbsd("/nonexistent");
        let rules = "pass all keep state\npass proto tcp all keep state (sloppy, max 8)\n";
        let rs = parse("pf.conf", rules, &Options::default(), &host).expect("rule set");
        let mut fw = Firewall::new(&rs, &host).expect("firewall");
        let mut s = Settings::default();
        s.set_state_limit(STATE_LIMIT);
        fw.set_settings(s);
        fw
    })
}

fuzz_target!(|data: &[u8]| {
    // Packets: [direction|clock step, length, bytes…]…
    let mut fw = stateful().clone();
    let mut rest = data;
    let mut now = 0u64;
    while let [ctl, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (bytes, next) = tail.split_at(n);
        now += u64::from(ctl >> 1);
        let mut meta = Meta::new("em0", if ctl & 1 == 0 { Direction::In } else { Direction::Out });
        meta.now = now;
        let _ = fw.test_bytes(bytes, &meta);
        assert!(fw.states().len() <= STATE_LIMIT as usize);
        rest = next;
    }

    let Some((&dir, bytes)) = data.split_first() else { return };
    // (The stateless half.)
    let mut skip = firewall().clone();
    let mut naive = skip.clone();
    let meta = Meta::new("em0", if dir & 1 == 0 { Direction::In } else { Direction::Out });
    let d = skip.decide_bytes(bytes, &meta);
    match Packet::parse(bytes) {
        Ok(p) => assert_eq!(d, naive.decide_naive(&p, &meta)),
        Err(e) => assert_eq!((d.action, d.reason), (Verdict::Block, e.reason())),
    }
});
