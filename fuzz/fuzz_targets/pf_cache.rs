//! Any frames through pf between two ports twice: through the caches in front of pf
//! (`sift::pf_between::PfCache`) and through `between::judge` alone, each on its own copy of
//! one firewall (stateful, eligible rules). Every frame's verdicts and frames out, and the
//! state tables' inserts and removals, must be equal, and nothing panics.
//!
//! Input: records of a control byte (bit 0: the frame comes from the second port; bit 1: send
//! the previous frame again, so flows repeat and the caches answer; bits 2–4: seconds the clock
//! moves on), a length byte and that many frame bytes.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use sift::pf_between::{Outcome, PfCache, SharedPf};
use sift_firewall::{Firewall, between};
use sift_flow::CacheConfig;
use sift_pf::host::FixtureHost;
use sift_pf::{Options, Ruleset, parse};

const IFS: [&str; 2] = ["pa", "pb"];

const RULES: &str = "set timeout { udp.first 2, udp.single 2, udp.multiple 3, tcp.first 2, \
    interval 1 }
block all
pass in on pa proto udp from 10.1.0.0/16 to any port 1000:1999 no state
pass out on pb proto udp to port 1000:1999 no state
pass proto tcp to port 80 flags S/SA keep state
pass proto udp to port 53 keep state
block in quick on pa proto tcp to port 23
pass quick proto tcp to port 443 flags any no state
pass inet6 proto udp no state
";

fn firewall() -> Firewall {
    static RULESET: OnceLock<Ruleset> = OnceLock::new();
    let host = FixtureHost::openbsd("/nonexistent");
    let rs = RULESET
        .get_or_init(|| parse("pf.conf", RULES, &Options::default(), &host).expect("rule set"));
    let mut fw = Firewall::new(rs, &host).expect("firewall");
    fw.seed(7);
    fw
}

fuzz_target!(|data: &[u8]| {
    let mut alone = firewall();
    let shared = Arc::new(SharedPf::new(firewall(), IFS.map(String::from)));
    // Small caches: a run is short, and evictions get exercised.
    let config = CacheConfig { microflow_entries: 64, megaflow_limit: 128, seed: Some(1) };
    let mut cache = PfCache::new(shared.clone(), config);
    let mut now = 1_000u64;
    let mut rest = data;
    let mut last: Vec<u8> = Vec::new();
    while let [ctrl, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let frame =
            if ctrl & 2 != 0 && !last.is_empty() { last.clone() } else { tail[..n].to_vec() };
        rest = &tail[n..];
        now += u64::from((ctrl >> 2) & 7);
        let from = usize::from(ctrl & 1);
        let mut line = String::new();
        let fate = between::judge(&mut alone, 1, &frame, IFS[from], IFS[from ^ 1], now, &mut line);
        match cache.judge(&frame, from, now) {
            Outcome::Cached { pass, line: cached } => {
                assert_eq!(cached, line, "verdicts");
                let on = if pass { vec![frame.clone()] } else { vec![] };
                assert_eq!(on, fate.on, "frames on");
                assert!(fate.back.is_empty(), "a cached decision answers nothing");
            }
            Outcome::Judged(j) => {
                assert_eq!(j.line, line, "verdicts");
                assert_eq!(j.fate.on, fate.on, "frames on");
                assert_eq!(j.fate.back, fate.back, "frames back");
            }
        }
        let (a, b) = (alone.states().counters(), shared.with(|fw| fw.states().counters()));
        assert_eq!((a.inserts, a.removals), (b.inserts, b.removals), "state tables");
        last = frame;
    }
});
