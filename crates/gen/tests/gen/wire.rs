//! Every generated frame re-parsed by an independent parser (tests/common): lengths agree,
//! and every checksum (IPv4 header, TCP, UDP and ICMPv6 with their v4/v6 pseudo-headers, ICMP,
//! SCTP CRC32c) is recomputed with naive arithmetic and must be right. Also the stream's
//! statistical promises: timestamps, snap length, truncation, malformed fraction, mix.

use crate::common;

use std::collections::BTreeMap;

use sift_gen::{Config, Generator, Link};

#[test]
fn every_checksum_and_length_verifies() {
    for link in Link::ALL {
        let mut g = Generator::new(2024, Config::with_link(link));
        let mut buf = Vec::new();
        let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
        let mut protos: BTreeMap<&str, usize> = BTreeMap::new();
        for i in 0..20_000 {
            let meta = g.next_frame(&mut buf);
            assert_eq!(meta.wire_len as usize, buf.len(), "no truncation configured");
            let parsed = common::parse(link, &buf);
            assert!(
                parsed.errors.is_empty(),
                "{link:?} frame {i}: {:?}\n{buf:02x?}",
                parsed.errors
            );
            for (what, ok) in &parsed.checks {
                assert!(ok, "{link:?} frame {i}: bad {what} checksum\n{buf:02x?}");
                *checked.entry(what).or_default() += 1;
            }
            for p in parsed.protos {
                *protos.entry(p).or_default() += 1;
            }
        }
        for w in ["ipv4", "tcp", "udp", "icmp", "icmpv6", "sctp"] {
            assert!(
                checked.get(w).copied().unwrap_or(0) > 20,
                "{link:?}: only {checked:?} checksums verified"
            );
        }
        let mut want = vec![
            "ip", "ipv6", "tcp", "udp", "dns", "icmp", "icmpv6", "sctp", "gre", "vxlan", "geneve",
        ];
        want.extend(["ipv6.hopopts", "ipv6.dstopts", "ipv6.routing", "ipv6.fraghdr"]);
        if link.has_ethertype() {
            want.push("arp");
        }
        if link == Link::Ethernet {
            want.extend(["vlan", "ieee8021ad", "mpls", "pppoes"]);
        }
        for w in want {
            assert!(protos.contains_key(w), "{link:?}: no {w} in 20,000 frames: {protos:?}");
        }
    }
}

#[test]
fn sctp_crc_matches_the_rfc_vectors() {
    // The independent implementation agrees with the crate's on the published check values.
    assert_eq!(common::crc32c_bitwise(b"123456789"), 0xe306_9283);
    assert_eq!(sift_wire::checksum::crc32c(b"123456789"), 0xe306_9283);
    let data: Vec<u8> = (0..=255).collect();
    assert_eq!(common::crc32c_bitwise(&data), sift_wire::checksum::crc32c(&data));
}

#[test]
fn timestamps_strictly_increase_with_the_configured_mean() {
    let cfg = Config { start_ns: 1_000_000_000_123, mean_gap_ns: 50_000, ..Config::default() };
    let mut g = Generator::new(5, cfg);
    let mut buf = Vec::new();
    let mut prev = 0u128;
    let n = 50_000u128;
    let mut first = 0u128;
    for i in 0..n {
        let m = g.next_frame(&mut buf);
        assert!(m.ts_nsec < 1_000_000_000);
        let t = u128::from(m.ts_sec) * 1_000_000_000 + u128::from(m.ts_nsec);
        if i == 0 {
            first = t;
            assert!(
                t > 1_000_000_000_123 && t < 1_000_000_000_123 + 2_000_000,
                "first timestamp {t}"
            );
        }
        assert!(t > prev, "timestamps must strictly increase");
        prev = t;
    }
    let mean = (prev - first) / (n - 1);
    assert!((48_000..52_000).contains(&mean), "mean gap {mean} ns");
}

#[test]
fn snaplen_and_random_truncation() {
    let cfg = Config { snaplen: 128, truncate: 0.2, ..Config::default() };
    let mut g = Generator::new(9, cfg);
    let mut buf = Vec::new();
    let (mut cut, mut snapped, n) = (0, 0, 20_000);
    for _ in 0..n {
        let m = g.next_frame(&mut buf);
        assert!(buf.len() <= 128);
        assert!(buf.len() <= m.wire_len as usize);
        assert!(!buf.is_empty());
        if buf.len() < (m.wire_len as usize).min(128) {
            cut += 1;
        }
        if m.wire_len > 128 {
            snapped += 1;
        }
    }
    assert!((3_400..4_600).contains(&cut), "{cut} of {n} randomly cut, expected about 20%");
    assert!(snapped > 2_000, "{snapped} frames longer than the snap length");
}

#[test]
fn malformed_fraction_and_flag() {
    let cfg = Config { malformed: 0.1, ..Config::default() };
    let mut g = Generator::new(13, cfg);
    let mut buf = Vec::new();
    let n = 20_000;
    let mut flagged = 0;
    for _ in 0..n {
        let m = g.next_frame(&mut buf);
        if m.malformed {
            flagged += 1;
            let parsed = common::parse(Link::Ethernet, &buf);
            assert!(
                !parsed.errors.is_empty() || parsed.checks.iter().any(|(_, ok)| !ok),
                "a frame flagged malformed parses cleanly: {buf:02x?}"
            );
        }
    }
    assert!((1_700..2_300).contains(&flagged), "{flagged} malformed of {n}");
}

#[test]
fn address_pools_give_filters_something_to_match() {
    let mut g = Generator::new(21, Config::default());
    let mut buf = Vec::new();
    let n = 20_000;
    let (mut lan, mut top_host, mut https) = (0, 0, 0);
    for _ in 0..n {
        g.next_frame(&mut buf);
        let s = &buf[..];
        if s.windows(3).any(|w| w == [10, 0, 0]) {
            lan += 1;
        }
        if s.windows(4).any(|w| w == [10, 0, 0, 10]) {
            top_host += 1;
        }
        if s.windows(2).any(|w| w == 443u16.to_be_bytes()) {
            https += 1;
        }
    }
    // Rough bounds: "net 10.0.0.0/24" is common, the busiest host is visible, 443 is popular.
    assert!(lan > n / 3, "{lan}");
    assert!(top_host > n / 50 && top_host < n / 2, "{top_host}");
    assert!(https > n / 10, "{https}");
}

#[test]
fn link_type_numbers() {
    let got: Vec<u16> = Link::ALL
        .iter()
        .map(|l| Generator::new(0, Config::with_link(*l)).link_type().number())
        .collect();
    assert_eq!(got, [1, 113, 276, 101, 0, 108]);
    let names: Vec<&str> = Link::ALL.iter().map(|l| l.name()).collect();
    assert_eq!(names, ["EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "NULL", "LOOP"]);
}

#[test]
fn degenerate_configs_do_not_panic() {
    let zero_mix =
        sift_gen::Mix { tcp: 0, dns: 0, ping: 0, arp: 0, ndp: 0, sctp: 0, syslog: 0, fragments: 0 };
    let cfgs = [
        Config { mix: zero_mix, max_flows: 0, ..Config::default() },
        Config { snaplen: 0, truncate: 1.0, malformed: 1.0, mean_gap_ns: 0, ..Config::default() },
        Config {
            ipv6: 1.0,
            encapsulation: 1.0,
            tunnels: 1.0,
            ipv4_options: 1.0,
            ipv6_extensions: 1.0,
            ..Config::default()
        },
        Config {
            start_ns: u64::MAX - 10,
            mean_gap_ns: u64::MAX,
            truncate: f64::NAN,
            ..Config::default()
        },
    ];
    for cfg in cfgs {
        for link in Link::ALL {
            let mut g = Generator::new(1, Config { link, ..cfg });
            let mut buf = Vec::new();
            for _ in 0..2000 {
                let m = g.next_frame(&mut buf);
                assert!(buf.len() <= m.wire_len as usize);
            }
        }
    }
}
