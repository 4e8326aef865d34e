//! The classification tables (what pf in the kernel matches with) against the evaluator:
//! random rule sets of what the kernel can run (quick, in/out, interfaces and groups,
//! negation, tables with negated entries, ranges, every port operator, flags, ICMP types and
//! codes, TOS, `fragment`, keep state or not), random packets through both; the deciding rule
//! and the verdict must be the same. Rule sets that the tables refuse must name the rule.

use sift_firewall::classify::{ClassifyError, Fields};
use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Firewall, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};
use sift_testkit::Rng;

mod support;
use support::random::{IFACES, packet_bytes_free, rule_with};

fn ruleset(rng: &mut Rng) -> String {
    let mut s = String::from(
        "table <t1> { 10.0.0.0/30, !10.0.0.1 }\ntable <t2> { 10.0.0.2, 10.0.1.0/24 }\n\
         table <t6> { 2001:db8::/126, !2001:db8::2 }\n",
    );
    for _ in 0..rng.range(1, 24) {
        s += &rule_with(rng, false);
        if rng.chance(5) {
            s += " fragment";
        }
        s.push('\n');
    }
    s
}

#[test]
fn tables_decide_as_the_evaluator() {
    let host = FixtureHost::openbsd(".");
    let mut rng = Rng(0xc1a5_51f1);
    let (mut pairs, mut sets, mut by_rule, mut quick_wins) = (0u64, 0u64, 0u64, 0u64);
    while pairs < 200_000 {
        let text = ruleset(&mut rng);
        let Ok(rs) = parse("stdin", &text, &Options::default(), &host) else { continue };
        let Ok(mut fw) = Firewall::new(&rs, &host) else { continue };
        let ifname = rng.pick(IFACES);
        let tables = fw.classify(ifname).unwrap_or_else(|e| panic!("{e}\n{text}"));
        sets += 1;
        for _ in 0..200 {
            let pkt = packet_bytes_free(&mut rng);
            let dir = if rng.chance(50) { Direction::In } else { Direction::Out };
            let d = fw.decide(&pkt, &Meta::new(ifname, dir));
            let got = tables.lookup(&Fields::of(&pkt, dir));
            let want = d.rule.map(|r| r.nr as usize);
            assert_eq!(got, want, "{text}\non {ifname} {dir:?}: {pkt:?}\n{d:?}");
            let verdict = match got {
                Some(i) if tables.rules[i].block => Verdict::Block,
                _ => Verdict::Pass,
            };
            assert_eq!(verdict, d.action, "{text}\n{pkt:?}");
            by_rule += u64::from(got.is_some());
            quick_wins += u64::from(got.is_some_and(|i| tables.rules[i].quick));
            pairs += 1;
        }
    }
    println!(
        "{sets} rule sets, {pairs} packets: {by_rule} decided by a rule, {quick_wins} by a quick one"
    );
    assert!(by_rule > pairs / 3 && quick_wins > pairs / 20);
}

#[test]
fn what_the_kernel_cannot_run_is_refused_by_rule() {
    let host = FixtureHost::openbsd(".");
    for (text, nr, what) in [
        ("pass all\npass in tagged T1\n", 1, "tags"),
        ("block all\nmatch out proto tcp\n", 1, "a `match` rule"),
        ("pass probability 10%\n", 0, "`probability`"),
        ("pass in all\npass out all\npass in received-on em0\n", 2, "`received-on`"),
        ("block all\npass from no-route\n", 1, "`no-route`"),
        ("anchor \"a\" {\n pass all\n}\n", 0, "an anchor"),
    ] {
        let rs = parse("stdin", text, &Options::default(), &host).expect(text);
        let fw = Firewall::new(&rs, &host).expect(text);
        assert_eq!(fw.classify("em0"), Err(ClassifyError::Rule { nr, what }), "{text}");
    }
}

#[test]
fn many_rules_fit_and_lookups_stay_exact() {
    // 2,048 per-host and per-port rules: the tables are built quickly and decide as pf.
    let host = FixtureHost::openbsd(".");
    let mut text = String::from("block all\n");
    for i in 0..2047u32 {
        text += &format!(
            "pass in proto tcp from 10.{}.{}.0/24 to any port {}\n",
            i / 256,
            i % 256,
            1000 + i % 500
        );
    }
    let rs = parse("stdin", &text, &Options::default(), &host).unwrap();
    let mut fw = Firewall::new(&rs, &host).unwrap();
    let t = std::time::Instant::now();
    let tables = fw.classify("em0").unwrap();
    println!("2,048 rules classified in {:?}, {} classes", t.elapsed(), tables.bits.len());
    assert_eq!(tables.nwords, 32);
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let mut pkt = packet_bytes_free(&mut rng);
        pkt.src =
            u128::from(u32::from_be_bytes([10, rng.below(9) as u8, rng.below(256) as u8, 1])) << 96;
        pkt.dport = 990 + rng.below(520) as u16;
        let d = fw.decide(&pkt, &Meta::new("em0", Direction::In));
        let got = tables.lookup(&Fields::of(&pkt, Direction::In));
        assert_eq!(got, d.rule.map(|r| r.nr as usize), "{pkt:?}");
    }
}
