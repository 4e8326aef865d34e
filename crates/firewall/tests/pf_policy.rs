//! OpenBSD's `regress/sys/net/pf_policy`: each rule set is loaded into the anchor `regress`
//! under a main rule set `anchor "regress"` (as `pfctl -a regress -f X.conf`), then one ICMP
//! echo request goes out and its reply comes in — for IPv4 and IPv6, as the rule sets name
//! both `icmp` and `icmp6`. The README's outcomes: pass (`absolute`, `quick`, `relative`),
//! block (`list`, `loop`, `loop-relative`, `nesting`, `simple`), once (`nesting-once`, `once`:
//! the first ping passes, the next is blocked).
//!
//! This part has no state table: a request passed by a rule that keeps state stands for the
//! state its reply would match (pf's rules do not match echo replies with keep-state rules).
//!
//! `loop.conf` calls `/second` and `/first`: absolute paths, which pf's `pf_anchor_setup`
//! resolves from the root, not from `regress`. Loaded into `regress` they name two empty
//! anchors at the root and nothing loops, so the echo passes by the default rule (OpenBSD's
//! regress does not check this case: its block tests end in `|| true`). Loaded as the main rule
//! set, the same file loops, and evaluation ends at pf's depth of 64 with a block; both are
//! checked, as is every other file in both places.

use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Decision, Firewall, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

fn echo(v6: bool, reply: bool) -> Vec<u8> {
    let (a, b): (&[u8], &[u8]) = if v6 {
        (
            &[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            &[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50],
        )
    } else {
        (&[10, 188, 211, 1], &[10, 188, 210, 50])
    };
    let (src, dst) = if reply { (b, a) } else { (a, b) };
    let mut icmp = vec![0u8; 8];
    icmp[0] = match (v6, reply) {
        (false, false) => 8,
        (false, true) => 0,
        (true, false) => 128,
        (true, true) => 129,
    };
    icmp[5] = 1;
    let mut p = Vec::new();
    if v6 {
        p.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 58, 64]);
    } else {
        p.extend_from_slice(&[0x45, 0, 0, 28, 0, 1, 0, 0, 64, 1, 0, 0]);
    }
    p.extend_from_slice(src);
    p.extend_from_slice(dst);
    p.extend_from_slice(&icmp);
    p
}

/// One ping: the request out, the reply in. Whether it got through, and the request's
/// decision.
fn ping(fw: &mut Firewall, v6: bool) -> (bool, Decision) {
    let req = fw.decide_bytes(&echo(v6, false), &Meta::new("em0", Direction::Out));
    if req.action != Verdict::Pass {
        return (false, req);
    }
    if req.keep_state != 0 {
        return (true, req);
    }
    let rep = fw.decide_bytes(&echo(v6, true), &Meta::new("em0", Direction::In));
    (rep.action == Verdict::Pass, req)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Pass,
    Block,
    Once,
}

fn outcome(fw: &Firewall, v6: bool) -> (Outcome, bool) {
    let mut fw = fw.clone();
    let (first, d1) = ping(&mut fw, v6);
    let (second, d2) = ping(&mut fw, v6);
    let overflow = d1.anchor_overflow || d2.anchor_overflow;
    let o = match (first, second) {
        (true, true) => Outcome::Pass,
        (true, false) => Outcome::Once,
        (false, false) => Outcome::Block,
        (false, true) => panic!("blocked, then passed"),
    };
    (o, overflow)
}

const EXPECTED: &[(&str, Outcome)] = &[
    ("absolute", Outcome::Pass),
    ("quick", Outcome::Pass),
    ("relative", Outcome::Pass),
    ("list", Outcome::Block),
    ("loop", Outcome::Block),
    ("loop-relative", Outcome::Block),
    ("nesting", Outcome::Block),
    ("simple", Outcome::Block),
    ("nesting-once", Outcome::Once),
    ("once", Outcome::Once),
];

#[test]
fn pf_policy_corpus() {
    let Some(dir) = sift_testkit::corpus("pf/pf_policy") else { return };
    let host = FixtureHost::openbsd(&dir);
    let main = parse("pf.conf", "anchor \"regress\"\n", &Options::default(), &host).unwrap();
    for &(name, want) in EXPECTED {
        let text = std::fs::read_to_string(dir.join(format!("{name}.conf"))).unwrap();
        let into = Options { anchor: Some("regress".into()), ..Options::default() };
        let rs = parse(&format!("{name}.conf"), &text, &into, &host)
            .unwrap_or_else(|e| panic!("{name}: {:?}", e.first().map(|e| e.pfctl_line())));
        let mut fw = Firewall::new(&main, &host).unwrap();
        fw.load_anchor("regress", &rs, &host).unwrap();
        let as_main =
            Firewall::new(&parse(name, &text, &Options::default(), &host).unwrap(), &host).unwrap();
        for v6 in [false, true] {
            // In `regress`: absolute paths leave it (see the module's comment).
            let (got, overflow) = outcome(&fw, v6);
            let want_here = if name == "loop" { Outcome::Pass } else { want };
            assert_eq!(got, want_here, "{name} in regress, v6 {v6}");
            assert_eq!(overflow, name == "loop-relative", "{name} in regress: anchor overflow");
            // As the main rule set.
            let (got, overflow) = outcome(&as_main, v6);
            assert_eq!(got, want, "{name} as the main rule set, v6 {v6}");
            assert_eq!(overflow, name.starts_with("loop"), "{name} as main: anchor overflow");
        }
    }
}

/// A loop of anchors ends at pf's depth: 63 anchors entered below the main rule set.
#[test]
fn anchor_depth_is_pfs() {
    let host = FixtureHost::openbsd(".");
    // A chain of `depth` nested inline anchors, a pass rule at the bottom, under `block`.
    let chain = |depth: usize| {
        let mut s = String::from("block\n");
        for i in 0..depth {
            s += &format!("{}anchor \"a{i}\" {{\n", " ".repeat(i));
        }
        s += &format!("{}pass\n", " ".repeat(depth));
        for i in (0..depth).rev() {
            s += &format!("{}}}\n", " ".repeat(i));
        }
        s
    };
    let pkt = echo(false, false);
    let meta = Meta::new("em0", Direction::Out);
    // pfctl itself refuses inline anchors nested 64 deep, so 63 is the deepest chain.
    let rs = parse("pf.conf", &chain(63), &Options::default(), &host).unwrap();
    let mut fw = Firewall::new(&rs, &host).unwrap();
    let d = fw.decide_bytes(&pkt, &meta);
    assert_eq!((d.action, d.anchor_overflow), (Verdict::Pass, false));
    // One more level by a call from the deepest anchor to a loaded one.
    let mut s = chain(63);
    s = s.replacen(
        &format!("{}pass\n", " ".repeat(63)),
        &format!("{}anchor \"/deeper\"\n", " ".repeat(63)),
        1,
    );
    let mut fw =
        Firewall::new(&parse("pf.conf", &s, &Options::default(), &host).unwrap(), &host).unwrap();
    let deeper = parse(
        "d",
        "pass\n",
        &Options { anchor: Some("deeper".into()), ..Options::default() },
        &host,
    )
    .unwrap();
    fw.load_anchor("deeper", &deeper, &host).unwrap();
    let d = fw.decide_bytes(&pkt, &meta);
    assert_eq!((d.action, d.anchor_overflow), (Verdict::Block, true));
    assert_eq!(d, fw.decide_naive(&Packet::parse(&pkt).unwrap(), &meta));
}

use sift_firewall::packet::Packet;
