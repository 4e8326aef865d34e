//! Hostile input: random token soup never panics, whatever parses prints to text that parses
//! back to the same tree (spans aside),
//! and deep or long input is handled without recursion trouble.

use proptest::prelude::*;
use sift_filter::{ParseErrorKind, parse};

const VOCAB: &[&str] = &[
    "host",
    "net",
    "port",
    "portrange",
    "proto",
    "protochain",
    "gateway",
    "src",
    "dst",
    "and",
    "or",
    "not",
    "!",
    "&&",
    "||",
    "(",
    ")",
    "[",
    "]",
    ":",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "tcp",
    "udp",
    "ip",
    "ip6",
    "ether",
    "arp",
    "icmp",
    "len",
    "vlan",
    "mpls",
    "pppoes",
    "geneve",
    "vxlan",
    "llc",
    "type",
    "subtype",
    "dir",
    "wlan",
    "ra",
    "addr1",
    "mask",
    "broadcast",
    "multicast",
    "less",
    "greater",
    "byte",
    "1",
    "0",
    "80",
    "65536",
    "4096",
    "0x10",
    "08",
    "1.2.3.4",
    "10.0.0.0",
    "255.0.0.0",
    "1.2",
    "::1",
    "fe80::/16",
    "aa:bb:cc:dd:ee:ff",
    "$1f",
    "foo",
    "ftp",
    "1-2",
    "\\tcp",
    "tcp-syn",
    "icmp-echo",
    "mgt",
    "beacon",
    "tods",
    "vpi",
    "fisu",
    "sio",
    "inbound",
    "ifindex",
    "reason",
    "action",
    "pass",
    "decnet",
    "iso",
    "isis",
    "link",
    "radio",
    "@",
    "#",
    "1:2:3",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCAB), 0..24).prop_map(|v| v.join(" "))
}

fn tight_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCAB), 0..16).prop_map(|v| v.concat())
}

fn roundtrip(s: &str) {
    if let Ok(Some(e)) = parse(s) {
        let p = e.to_string();
        let again = parse(&p).unwrap_or_else(|err| panic!("{s:?} → {p:?} does not parse: {err}"));
        let again = again.expect("non-empty");
        assert_eq!(again.to_string(), p, "{s:?}");
        assert_eq!(shape(&again), shape(&e), "{s:?}: print → parse changed the tree");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn token_soup_never_panics(s in soup()) {
        roundtrip(&s);
        if let Err(e) = parse(&s) {
            let _ = e.render(&s);
        }
    }

    #[test]
    fn glued_tokens_never_panic(s in tight_soup()) {
        roundtrip(&s);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,40}") {
        roundtrip(&s);
        if let Err(e) = parse(&s) {
            let _ = e.render(&s);
        }
    }
}

/// Builds a random, grammatical relation from a seed: every arithmetic operator (including the
/// precedence-less `%` and `^`), unary minus, parentheses, accessors.
fn arith_from_seed(seed: u64) -> String {
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    fn term(r: &mut Rng, depth: u32) -> String {
        match r.next(if depth > 3 { 3 } else { 7 }) {
            0 => format!("tcp[{}:{}]", r.next(20), [1, 2, 4][r.next(3) as usize]),
            1 => format!("{}", 1 + r.next(40)),
            2 => "len".into(),
            3 => format!("-{}", term(r, depth + 1)),
            4 => format!("ip[{}]", expr(r, depth + 1)),
            _ => format!("({})", expr(r, depth + 1)),
        }
    }
    fn expr(r: &mut Rng, depth: u32) -> String {
        const OPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
        let mut s = term(r, depth);
        for _ in 0..r.next(4) {
            s = format!("{s} {} {}", OPS[r.next(10) as usize], term(r, depth));
        }
        s
    }
    let mut r = Rng(seed | 1);
    let rel = ["=", "!=", "<", ">", "<=", ">="][r.next(6) as usize];
    format!("{} {rel} {}", expr(&mut r, 0), expr(&mut r, 0))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn structured_arithmetic_round_trips(seed in any::<u64>()) {
        let s = arith_from_seed(seed);
        // Literal divisors may be 0 only through subexpressions, never as literals here, but a
        // shift by a literal > 31 is possible: errors are fine, panics and drift are not.
        roundtrip(&s);
    }
}

/// A cheap stand-in for the fuzz target in `cargo test`: libpcap's corpus expressions with
/// deterministic byte-level mutations (flip, delete, duplicate, splice) run through the same
/// checks as `fuzz/fuzz_targets/filter_parse.rs`.
#[test]
fn mutated_corpus_never_panics() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let text = std::fs::read_to_string(dir.join("libpcap_filter_expressions.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let r = sift_filter::TableResolver::well_known();
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n.max(1) as u64) as usize
    };
    for i in 0..40_000 {
        let mut b = lines[i % lines.len()].as_bytes().to_vec();
        for _ in 0..1 + rnd(3) {
            let at = rnd(b.len() + 1);
            match rnd(5) {
                0 if at < b.len() => b[at] ^= 1 << rnd(8),
                1 if at < b.len() => {
                    b.remove(at);
                }
                2 => b.insert(at, b"()[]:!-%^$\\.0aZ# "[rnd(17)]),
                3 => {
                    let other = lines[rnd(lines.len())].as_bytes();
                    let cut = rnd(other.len() + 1);
                    b.splice(at..at, other[..cut].iter().copied());
                }
                _ => b.truncate(at),
            }
        }
        let src = String::from_utf8_lossy(&b);
        if let Err(e) = sift_filter::parse_with(&src, &r) {
            let _ = e.render(&src);
        }
        roundtrip(&src);
    }
}

#[test]
fn pathological_tokens_lex_quickly() {
    let start = std::time::Instant::now();
    for s in [
        ":".repeat(200_000),
        "a:".repeat(100_000),
        "1.".repeat(100_000),
        "ab".repeat(100_000),
        "a-".repeat(100_000) + "a",
        "\\".repeat(100_000),
        "$".repeat(100_000),
        "0x".repeat(100_000),
    ] {
        let _ = parse(&s);
    }
    assert!(start.elapsed().as_secs() < 10, "lexing took {:?}", start.elapsed());
}

#[test]
fn long_or_chain_parses() {
    let s: Vec<String> =
        (0..10_000).map(|i| format!("host 10.0.{}.{}", i / 256, i % 256)).collect();
    let e = parse(&s.join(" or ")).unwrap().unwrap();
    assert_eq!(e.to_string().len(), s.join(" or ").len());
    let inherited = format!("host 1.2.3.4{}", " or 1.2.3.5".repeat(10_000));
    assert!(parse(&inherited).is_ok());
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for s in [
        "(".repeat(100_000) + "tcp",
        "not ".repeat(100_000) + "tcp",
        "! ".repeat(100_000) + "tcp",
        "host ".to_string() + &"(".repeat(100_000) + "a",
        "ip[".repeat(100_000),
        "-".repeat(100_000) + "1 = 1",
        "1 = ".to_string() + &"1 % ".repeat(100_000) + "1",
        "1 = ".to_string() + &"1 + ".repeat(100_000) + "1",
    ] {
        let err = parse(&s).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::NestingTooDeep, "{}", &s[..20]);
    }
    // Just under the cap is fine.
    let ok = "(".repeat(200) + "tcp" + &")".repeat(200);
    assert!(parse(&ok).is_ok());
}

/// The tree's `Debug` form with every span removed: equal trees up to spans.
fn shape(e: &sift_filter::ast::Expr) -> String {
    let d = format!("{e:?}");
    let mut out = String::with_capacity(d.len());
    let mut rest = d.as_str();
    while let Some(i) = rest.find("Span {") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
        rest = &rest[j..];
    }
    out.push_str(rest);
    out
}
