//! The skip-step evaluator against the naive one: random rule sets over a small value space
//! (so that rules match often) with `quick`, `match`, inline, nested, absolute, relative and
//! wildcard anchors, anchor loops, tags and `tagged`, `once`, negation, tables, ranges, every
//! port operator, flags, ICMP types, `probability`; random packets through both. Over
//! 1,000,000 (rule set, packet) pairs the verdict, the deciding rule (rule set and number),
//! its anchor, the tag, `quick` and the anchor overflow must be the same.

use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Decision, Firewall};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};
use sift_testkit::Rng;

mod support;
use support::random::{IFACES, packet_bytes_free, rule};

/// A rule set: rules and anchors (inline, named, nested, wildcard, relative, absolute,
/// occasionally a loop), `depth` levels of inline anchors deep at most.
fn rules(rng: &mut Rng, depth: u32, n: u64, out: &mut String, indent: &str) {
    for _ in 0..rng.range(1, n as i64) {
        let k = rng.below(100);
        if depth > 0 && k < 12 {
            let name = rng.pick(&["a", "b", "c"]);
            let quick = if rng.chance(30) { " quick" } else { "" };
            let head = if rng.chance(30) { rule_head(rng) } else { String::new() };
            let (dir, rest) = match head.as_str() {
                " in" | " out" => (head.as_str(), ""),
                _ => ("", head.as_str()),
            };
            out.push_str(&format!("{indent}anchor \"{name}\"{dir}{quick}{rest} {{\n"));
            rules(rng, depth - 1, n / 2 + 1, out, &format!("{indent} "));
            out.push_str(&format!("{indent}}}\n"));
        } else if k < 18 {
            let quick = if rng.chance(30) { " quick" } else { "" };
            let mut target =
                rng.pick(&["a", "b", "a/*", "../a", "/a", "/b/*", "/w/*", "w/*", "/l1"]);
            if target == "../a" && indent.is_empty() {
                // `..` above the root is refused when the rule set is loaded.
                target = "/a";
            }
            out.push_str(&format!("{indent}anchor \"{target}\"{quick}\n"));
        } else {
            out.push_str(&format!("{indent}{}\n", rule(rng)));
        }
    }
}

/// What an anchor rule may test besides its name (it has no state or actions).
fn rule_head(rng: &mut Rng) -> String {
    rng.pick(&[" in", " out", " on em0", " inet", " proto tcp", " from 10.0.0.0/31", " to ! <t1>"])
        .to_string()
}

fn ruleset(rng: &mut Rng) -> String {
    let mut s = String::from(
        "table <t1> { 10.0.0.0/30, !10.0.0.1 }\ntable <t2> { 10.0.0.2, 10.0.1.0/24 }\n\
         table <t6> { 2001:db8::/126, !2001:db8::2 }\n",
    );
    if rng.chance(30) {
        s += "anchor \"w\" {\n anchor \"x\" {\n  pass quick proto udp\n }\n anchor \"y\" {\n  block proto tcp\n }\n}\n";
    }
    if rng.chance(5) {
        s += "anchor \"l1\" {\n anchor \"/l2\"\n}\nanchor \"l2\" {\n anchor \"/l1\"\n}\n";
    }
    rules(rng, 3, 16, &mut s, "");
    s
}

fn key(fw: &Firewall, d: &Decision) -> String {
    let id = |r: Option<sift_firewall::RuleId>| match r {
        Some(r) => format!("{}@{}", fw.ruleset_path(r.ruleset), r.nr),
        None => "-".into(),
    };
    format!(
        "{:?} rule={} anchor={} tag={:?} quick={} overflow={} matches={}",
        d.action,
        id(d.rule),
        id(d.anchor),
        d.tag,
        d.quick,
        d.anchor_overflow,
        d.matches.len()
    )
}

#[test]
fn skip_steps_agree_with_the_naive_evaluator() {
    let host = FixtureHost::openbsd(".");
    let mut rng = Rng(0x5eed_f00d);
    let (mut pairs, mut sets, mut refused) = (0u64, 0u64, 0u64);
    let (mut decided_by_rule, mut in_anchor, mut overflows, mut blocks) = (0u64, 0u64, 0u64, 0u64);
    while pairs < 1_000_000 {
        let text = ruleset(&mut rng);
        let Ok(rs) = parse("stdin", &text, &Options::default(), &host).map_err(|e| {
            if let Some(e) = e.first().filter(|_| refused < 8) {
                let line = text.lines().nth((e.line as usize).saturating_sub(1)).unwrap_or("");
                eprintln!("refused: {} :: {line}", e.pfctl_line());
            }
        }) else {
            refused += 1;
            continue;
        };
        sets += 1;
        let Ok(mut skip) = Firewall::new(&rs, &host) else {
            refused += 1;
            continue;
        };
        let mut naive = skip.clone();
        skip.seed(sets);
        naive.seed(sets);
        for _ in 0..200 {
            let pkt = packet_bytes_free(&mut rng);
            let ifname = rng.pick(IFACES);
            let dir = if rng.chance(50) { Direction::In } else { Direction::Out };
            let mut meta = Meta::new(ifname, dir);
            if rng.chance(10) {
                meta.tag = Some(rng.pick(&["T1", "T2", "other"]));
            }
            let a = skip.decide(&pkt, &meta);
            let b = naive.decide_naive(&pkt, &meta);
            let (ka, kb) = (key(&skip, &a), key(&naive, &b));
            assert_eq!(ka, kb, "rule set:\n{text}\npacket {pkt:?}\nmeta {meta:?}");
            pairs += 1;
            decided_by_rule += u64::from(a.rule.is_some());
            in_anchor += u64::from(a.anchor.is_some());
            overflows += u64::from(a.anchor_overflow);
            blocks += u64::from(a.action == sift_firewall::Verdict::Block);
        }
    }
    eprintln!(
        "{pairs} pairs over {sets} rule sets ({refused} generated sets refused by the parser): \
         {decided_by_rule} decided by a rule, {in_anchor} inside anchors, {blocks} blocked, \
         {overflows} anchor overflows"
    );
    // The generator must exercise what it claims to.
    assert!(refused < sets / 5, "{refused} of {} generated rule sets refused", sets + refused);
    assert!(decided_by_rule > pairs / 3 && in_anchor > pairs / 50 && overflows > 0);
    assert!(blocks > pairs / 10 && blocks < pairs * 9 / 10);
}
