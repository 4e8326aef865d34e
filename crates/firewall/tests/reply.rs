//! The answers of `block return` (`sift_firewall::reply`) against golden cases, an independent
//! checksum computation and tshark.
//!
//! `tests/reply/cases.txt` holds cases `=== NAME` / `input: RETURN | PACKET`, where PACKET is
//! a description for tests/scrub/build.rs and RETURN is `rst [TTL]`, `icmp TYPE/CODE` or
//! `drop`, optionally followed by `bcast` (link-layer broadcast). The expected lines
//! (`BLESS=1` rewrites them) are the answer decoded and in hex, or why there is none.

#[path = "scrub/build.rs"]
mod build;

use std::path::Path;

use proptest::prelude::*;
use sift_firewall::Return;
use sift_firewall::packet::Packet;
use sift_firewall::reply::{self, NoReply, REPLY_MAX, ReplyOpts};

fn run(input: &str) -> Result<Vec<u8>, NoReply> {
    let (ret, desc) = input.split_once('|').expect("RETURN | PACKET");
    let blocked = build::build(desc.trim());
    let words: Vec<&str> = ret.split_whitespace().collect();
    let opts = ReplyOpts { ip_id: 0x4242, link_broadcast: words.contains(&"bcast") };
    let ret = match words[0] {
        "drop" => Return::Drop,
        "rst" => Return::Rst { ttl: words.get(1).and_then(|t| t.parse().ok()).unwrap_or(0) },
        "icmp" => {
            let (t, c) = words[1].split_once('/').expect("TYPE/CODE");
            Return::Icmp { ty: t.parse().unwrap(), code: c.parse().unwrap() }
        }
        other => panic!("return {other}"),
    };
    reply::reply(&blocked, ret, &opts)
}

fn cases() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reply/cases.txt"))
}

#[test]
fn golden_cases() {
    let n = sift_testkit::golden_cases(cases(), |_, input| match run(input) {
        Ok(p) => format!("> {}\n> {}\n", build::describe(&p), build::to_hex(&p)),
        Err(e) => format!(
            "> none: {e}{}\n",
            e.reason().map(|r| format!(" (reason {})", r.name())).unwrap_or_default()
        ),
    });
    assert!(n >= 25, "{n} cases");
}

#[test]
fn tshark_agrees_on_checksums() {
    let text = std::fs::read_to_string(cases()).unwrap();
    let packets: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("input: "))
        .filter_map(|i| run(i).ok())
        .collect();
    assert!(packets.len() >= 12);
    let n = build::tshark_checksums("reply", &packets);
    eprintln!("tshark checked {n} answers");
}

/// The quote of an ICMPv6 error stops at the minimum MTU; an IPv4 one at 8 bytes of data.
#[test]
fn quotes_are_bounded() {
    let big6 = build::build("v6 udp len=3000");
    let p = reply::reply(&big6, Return::Icmp { ty: 1, code: 1 }, &ReplyOpts::default()).unwrap();
    assert_eq!(p.len(), 1280);
    assert_eq!(&p[48..], &big6[..1232]);
    let big4 = build::build("v4 udp len=3000 ipopt=3");
    let p = reply::reply(&big4, Return::Icmp { ty: 3, code: 13 }, &ReplyOpts::default()).unwrap();
    assert_eq!(p.len(), 20 + 8 + 32 + 8);
    assert_eq!(&p[28..], &big4[..40]);
}

fn blocked_desc() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof![
            Just("tcp".to_string()),
            Just("udp".to_string()),
            (0u8..=255, 0u8..4).prop_map(|(t, c)| format!("icmp {t}/{c}")),
            Just("47".to_string())
        ],
        any::<u8>(),
        any::<u32>(),
        any::<u32>(),
        0usize..1500,
        any::<u8>(),
    )
        .prop_map(|(v6, proto, flags, seq, ack, len, ttl)| {
            let proto = if v6 { proto.replace("icmp ", "icmp6 ") } else { proto };
            let f = build::flag_letters(flags);
            let f = if f == "." { String::new() } else { format!(" flags={f}") };
            format!(
                "{} {proto}{f} seq={seq} ack={ack} len={len} ttl={ttl}",
                if v6 { "v6" } else { "v4" }
            )
        })
}

fn any_return() -> impl Strategy<Value = Return> {
    prop_oneof![
        Just(Return::Drop),
        any::<u8>().prop_map(|ttl| Return::Rst { ttl }),
        (any::<u8>(), any::<u8>()).prop_map(|(ty, code)| Return::Icmp { ty, code }),
    ]
}

proptest! {
    /// Every answer parses as a packet pf judges, has right checksums (full recomputation),
    /// goes back to the blocked packet's source and is at most the IPv6 minimum MTU.
    #[test]
    fn answers_parse_with_good_checksums(desc in blocked_desc(), ret in any_return(), id in any::<u16>()) {
        let blocked = build::build(&desc);
        let Ok(p) = reply::reply(&blocked, ret, &ReplyOpts { ip_id: id, link_broadcast: false }) else { return Ok(()) };
        prop_assert!(p.len() <= REPLY_MAX);
        prop_assert!(build::checksums_ok(&p), "{desc} {ret:?}: {}", build::to_hex(&p));
        let got = Packet::parse(&p).expect("answer parses");
        let orig = Packet::parse(&blocked).unwrap();
        prop_assert_eq!(got.dst, orig.src);
        prop_assert_eq!(got.src, orig.dst);
        prop_assert_eq!(got.af, orig.af);
    }

    /// Random bytes: no panic, bounded answers.
    #[test]
    fn random_bytes_do_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), ret in any_return(), bcast in any::<bool>()) {
        if let Ok(p) = reply::reply(&bytes, ret, &ReplyOpts { ip_id: 1, link_broadcast: bcast }) {
            prop_assert!(p.len() <= REPLY_MAX);
            prop_assert!(build::checksums_ok(&p));
        }
    }
}
