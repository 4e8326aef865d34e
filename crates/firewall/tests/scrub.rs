//! pf's normalizations (`sift_firewall::scrub`) against golden cases, an independent checksum
//! computation and tshark.
//!
//! `tests/scrub/cases.txt` holds cases `=== NAME` / `input: OP | PACKET`, where PACKET is a
//! description for tests/scrub/build.rs and OP one of `tcp` (pf_normalize_tcp), `mss N`
//! (pf_normalize_mss), `scrub [nodf] [random-id] [min-ttl=N] [max-mss=N] [tos=N]` (pf_test's
//! max-mss then pf_scrub; random ids count from 0xbeef), `ip4off [nodf]` (pf_normalize_ip's DF
//! rule). The expected lines (`BLESS=1` rewrites them) are the result and the packet after.

#[path = "scrub/build.rs"]
mod build;

use std::path::Path;

use proptest::prelude::*;
use sift_firewall::packet::Packet;
use sift_firewall::scrub::{self, ScrubOpts};

fn opts_of(words: &[&str]) -> ScrubOpts {
    let mut o = ScrubOpts::default();
    for w in words {
        let (k, v) = w.split_once('=').unwrap_or((w, "0"));
        let n: u16 = v
            .parse()
            .unwrap_or_else(|_| u16::from_str_radix(v.trim_start_matches("0x"), 16).unwrap());
        match k {
            "nodf" => o.nodf = true,
            "random-id" => o.random_id = true,
            "min-ttl" => o.min_ttl = n as u8,
            "max-mss" => o.max_mss = n,
            "tos" => o.set_tos = Some(n as u8),
            _ => panic!("scrub option {k}"),
        }
    }
    o
}

/// Runs one case; returns the result line and the packet after.
fn run(input: &str) -> (String, Vec<u8>) {
    let (op, desc) = input.split_once('|').expect("OP | PACKET");
    let mut ip = build::build(desc.trim());
    let l4 = Packet::parse(&ip).ok().and_then(|p| scrub::l4_offset(&p));
    let words: Vec<&str> = op.split_whitespace().collect();
    let result = match words[0] {
        "tcp" => match scrub::normalize_tcp(&mut ip, l4.expect("a TCP segment")) {
            Ok(true) => "pass rewrote".to_string(),
            Ok(false) => "pass unchanged".to_string(),
            Err(r) => format!("drop {}", r.name()),
        },
        "mss" => {
            let changed = scrub::normalize_mss(
                &mut ip,
                l4.expect("a TCP segment"),
                words[1].parse().unwrap(),
            );
            format!("changed {changed}")
        }
        "scrub" => {
            let mut next = 0xbeefu16;
            let mut id = || {
                next = next.wrapping_add(1);
                next - 1
            };
            let changed = scrub::scrub(&mut ip, l4, &opts_of(&words[1..]), &mut id);
            format!("changed {changed}")
        }
        "ip4off" => match scrub::normalize_ip4_off(&mut ip, words.get(1) == Some(&"nodf")) {
            Ok(c) => format!("pass changed {c}"),
            Err(r) => format!("drop {}", r.name()),
        },
        other => panic!("op {other}"),
    };
    (result, ip)
}

fn cases() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scrub/cases.txt"))
}

#[test]
fn golden_cases() {
    let n = sift_testkit::golden_cases(cases(), |_, input| {
        let (result, ip) = run(input);
        format!("> {result}\n> {}\n", build::describe(&ip))
    });
    assert!(n >= 30, "{n} cases");
}

/// Every packet the cases produce, and its input, has checksums tshark calls good (the cases
/// with a deliberately bad checksum aside).
#[test]
fn tshark_agrees_on_checksums() {
    let text = std::fs::read_to_string(cases()).unwrap();
    let mut packets = Vec::new();
    for line in text.lines() {
        let Some(input) = line.strip_prefix("input: ") else { continue };
        let desc = input.split_once('|').unwrap().1.trim();
        let original = build::build(desc);
        // tshark checks no transport checksum of a fragment.
        if input.contains("badsum") || Packet::parse(&original).is_ok_and(|p| p.fragment) {
            continue;
        }
        packets.push(original);
        packets.push(run(input).1);
    }
    let n = build::tshark_checksums("scrub", &packets);
    eprintln!("tshark checked {n} packets");
}

/// `ScrubOpts::from_rule` reads the parsed rule as pf_rule_to_actions does.
#[test]
fn options_from_parsed_rules() {
    use sift_pf::host::FixtureHost;
    use sift_pf::{Options, parse};
    let host = FixtureHost::openbsd(".");
    let text = "match all scrub (no-df random-id min-ttl 15 max-mss 1400)\n\
                match all set tos 0x10\n\
                pass all\n";
    let rules = parse("pf.conf", text, &Options::default(), &host).unwrap();
    let r = &rules.anchors[0].rules;
    let a = ScrubOpts::from_rule(&r[0]).expect("scrub options");
    assert_eq!(
        a,
        ScrubOpts {
            nodf: true,
            random_id: true,
            min_ttl: 15,
            max_mss: 1400,
            set_tos: None,
            reassemble_tcp: false
        }
    );
    let b = ScrubOpts::from_rule(&r[1]).expect("set tos");
    assert_eq!(b.set_tos, Some(0x10));
    assert_eq!(ScrubOpts::from_rule(&r[2]), None);
    let mut acc = a;
    acc.add_rule(&r[1]);
    assert_eq!(acc, ScrubOpts { set_tos: Some(0x10), ..a });
}

fn tcp_desc() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        any::<u8>(),
        0u8..16,
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..40),
        0usize..40,
        any::<u8>(),
        any::<u8>(),
        prop_oneof![Just(0u16), Just(0x4000), Just(0x8000), Just(0xc000)],
    )
        .prop_map(|(v6, flags, x2, urp, opt, len, ttl, tos, off)| {
            let hex = build::to_hex(&opt);
            let opt = if opt.is_empty() { String::new() } else { format!(" opt={hex}") };
            format!(
                "{} tcp flags={} x2={x2} urp={urp}{opt} len={len} ttl={ttl} tos={tos} off={off:#x}",
                if v6 { "v6" } else { "v4" },
                build::flag_letters(flags).replace('.', "")
            )
            .replace("flags= ", "")
        })
}

fn any_opts() -> impl Strategy<Value = ScrubOpts> {
    (any::<bool>(), any::<bool>(), any::<u8>(), any::<u16>(), prop::option::of(any::<u8>()))
        .prop_map(|(nodf, random_id, min_ttl, max_mss, set_tos)| ScrubOpts {
            nodf,
            random_id,
            min_ttl,
            max_mss,
            set_tos,
            reassemble_tcp: false,
        })
}

proptest! {
    /// Any TCP/IPv4 or TCP/IPv6 packet with right checksums keeps them right through every
    /// normalization (checked by a full recomputation), and a drop changes nothing.
    #[test]
    fn normalizing_keeps_checksums(desc in tcp_desc(), opts in any_opts(), mss in any::<u16>(), id in any::<u16>()) {
        let mut ip = build::build(&desc);
        prop_assert!(build::checksums_ok(&ip), "built {desc}");
        let l4 = scrub::l4_offset(&Packet::parse(&ip).unwrap()).unwrap();
        let before = ip.clone();
        match scrub::normalize_tcp(&mut ip, l4) {
            Ok(changed) => prop_assert_eq!(changed, ip != before),
            Err(_) => prop_assert_eq!(&ip, &before),
        }
        prop_assert!(build::checksums_ok(&ip), "normalize_tcp {desc}");
        scrub::normalize_mss(&mut ip, l4, mss);
        prop_assert!(build::checksums_ok(&ip), "normalize_mss {desc}");
        scrub::scrub(&mut ip, Some(l4), &opts, &mut || id);
        prop_assert!(build::checksums_ok(&ip), "scrub {desc} {opts:?}");
        let _ = scrub::normalize_ip4_off(&mut ip, opts.nodf);
        prop_assert!(build::checksums_ok(&ip), "normalize_ip4_off {desc}");
        prop_assert_eq!(ip.len(), before.len());
    }

    /// Random bytes at any transport offset: no panic, the length never changes.
    #[test]
    fn random_bytes_do_not_panic(mut bytes in prop::collection::vec(any::<u8>(), 0..120), l4 in 0usize..130,
                                 opts in any_opts(), mss in any::<u16>()) {
        let n = bytes.len();
        let _ = scrub::normalize_tcp(&mut bytes, l4);
        scrub::normalize_mss(&mut bytes, l4, mss);
        scrub::scrub(&mut bytes, Some(l4), &opts, &mut || 7);
        let _ = scrub::normalize_ip4_off(&mut bytes, true);
        if let Ok(p) = Packet::parse(&bytes) {
            let _ = scrub::l4_offset(&p);
        }
        prop_assert_eq!(bytes.len(), n);
    }
}
