//! The skip-step evaluator against the naive one: random rule sets over a small value space
//! (so that rules match often) with `quick`, `match`, inline, nested, absolute, relative and
//! wildcard anchors, anchor loops, tags and `tagged`, `once`, negation, tables, ranges, every
//! port operator, flags, ICMP types, `probability`; random packets through both. Over
//! 1,000,000 (rule set, packet) pairs the verdict, the deciding rule (rule set and number),
//! its anchor, the tag, `quick` and the anchor overflow must be the same.

use sift_firewall::packet::{Direction, Family, Meta, Packet};
use sift_firewall::{Decision, Firewall};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};
use sift_testkit::Rng;

const IFACES: &[&str] = &["em0", "lo0", "tun1000000"];
const V4: &[&str] = &["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.1.1"];
const V6: &[&str] = &["2001:db8::", "2001:db8::1", "2001:db8::2"];

fn addr(rng: &mut Rng, v6: bool) -> String {
    let not = if rng.chance(15) { "! " } else { "" };
    let a = if v6 {
        match rng.below(4) {
            0 => "2001:db8::/127".to_string(),
            1 => "<t6>".to_string(),
            _ => rng.pick(V6).to_string(),
        }
    } else {
        match rng.below(9) {
            0 => "10.0.0.0/31".into(),
            1 => "10.0.0.0/30".into(),
            2 => "<t1>".into(),
            3 => "<t2>".into(),
            4 => "10.0.0.1 - 10.0.0.2".into(),
            5 => "10.0.0.0/16".into(),
            _ => rng.pick(V4).to_string(),
        }
    };
    format!("{not}{a}")
}

fn port(rng: &mut Rng) -> String {
    let a = rng.range(1, 4);
    let b = rng.range(a + 1, 5);
    match rng.below(9) {
        0 => format!("port {a}"),
        1 => format!("port != {a}"),
        2 => format!("port < {a}"),
        3 => format!("port <= {a}"),
        4 => format!("port > {a}"),
        5 => format!("port >= {a}"),
        6 => format!("port {a}:{b}"),
        7 => format!("port {a} >< {b}"),
        _ => format!("port {a} <> {b}"),
    }
}

/// One filter rule (no anchors).
fn rule(rng: &mut Rng) -> String {
    let mut s = String::new();
    s += rng.pick(&["pass", "pass", "block", "block", "match"]);
    let block = s == "block";
    if block && rng.chance(20) {
        s += rng.pick(&[" return", " drop", " return-icmp"]);
    }
    s += rng.pick(&["", "", " in", " out"]);
    if !s.starts_with("match") && rng.chance(25) {
        s += " quick";
    }
    if rng.chance(35) {
        let not = if rng.chance(30) { "! " } else { "" };
        s += &format!(" on {not}{}", rng.pick(&["em0", "lo0", "egress", "lo", "tun1000000"]));
    }
    let v6 = rng.chance(25);
    let af = if v6 {
        " inet6"
    } else if rng.chance(40) {
        " inet"
    } else {
        ""
    };
    s += af;
    let proto = match rng.below(6) {
        0 | 1 => Some("tcp"),
        2 => Some("udp"),
        3 if !v6 => Some("icmp"),
        4 => Some("47"),
        _ => None,
    };
    if let Some(p) = proto {
        s += &format!(" proto {p}");
    }
    let ports = matches!(proto, Some("tcp" | "udp"));
    let mut any = true;
    if rng.chance(50) || (ports && rng.chance(50)) {
        any = false;
        s += " from ";
        s += &if rng.chance(40) { "any".to_string() } else { addr(rng, v6) };
        if ports && rng.chance(40) {
            s += &format!(" {}", port(rng));
        }
    }
    if rng.chance(50) || (ports && rng.chance(50)) {
        if any {
            s += " from any";
        }
        any = false;
        s += " to ";
        s += &if rng.chance(40) { "any".to_string() } else { addr(rng, v6) };
        if ports && rng.chance(40) {
            s += &format!(" {}", port(rng));
        }
    }
    if any && rng.chance(50) {
        s += " all";
    }
    if proto == Some("tcp") && rng.chance(30) {
        s += rng.pick(&[" flags S/SA", " flags A/A", " flags /F", " flags SA/SAFR"]);
    }
    if proto == Some("icmp") && af == " inet" && rng.chance(50) {
        s += rng.pick(&[" icmp-type echoreq", " icmp-type echorep", " icmp-type unreach code 1"]);
    }
    if rng.chance(10) {
        s += rng.pick(&[" tos 0x10", " tos 0x20"]);
    }
    if rng.chance(15) {
        s += rng.pick(&[" tag T1", " tag T2"]);
    }
    if rng.chance(15) {
        s += rng.pick(&[" tagged T1", " ! tagged T2", " tagged T2"]);
    }
    if rng.chance(8) {
        s += rng.pick(&[" received-on em0", " received-on lo"]);
    }
    if rng.chance(5) {
        s += " probability 50%";
    }
    if rng.chance(4) && !s.starts_with("match") {
        s += " once";
    }
    if rng.chance(10) && s.starts_with("pass") {
        s += rng.pick(&[" no state", " keep state (sloppy)"]);
    }
    s
}

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

fn packet_bytes_free(rng: &mut Rng) -> Packet<'static> {
    let v6 = rng.chance(25);
    let proto = rng.pick(&[6u8, 6, 17, 1, 47, 58]);
    let proto = match (v6, proto) {
        (true, 1) => 58,
        (false, 58) => 1,
        (_, p) => p,
    };
    let key = |s: &str| -> u128 {
        match s.parse::<std::net::IpAddr>().unwrap() {
            std::net::IpAddr::V4(a) => u128::from(u32::from(a)) << 96,
            std::net::IpAddr::V6(a) => u128::from(a),
        }
    };
    let a = |rng: &mut Rng| if v6 { key(rng.pick(V6)) } else { key(rng.pick(V4)) };
    let icmp = proto == 1 || proto == 58;
    Packet {
        af: if v6 { Family::Inet6 } else { Family::Inet },
        proto,
        src: a(rng),
        dst: a(rng),
        sport: if icmp { 0 } else { rng.range(0, 5) as u16 },
        dport: if icmp { 0 } else { rng.range(0, 5) as u16 },
        tcp_flags: if proto == 6 {
            rng.pick(&[0x02u8, 0x12, 0x10, 0x01, 0x11, 0x04, 0x18])
        } else {
            0
        },
        icmp_type: if icmp { rng.pick(&[8u8, 0, 3, 11, 128, 129]) } else { 0 },
        icmp_code: if icmp { rng.range(0, 1) as u8 } else { 0 },
        tos: rng.pick(&[0u8, 0x10, 0x20]),
        ttl: 64,
        fragment: rng.chance(5),
        len: 60,
        bytes: &[],
    }
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
