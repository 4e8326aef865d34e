//! Packets as pf reads them: real headers give pf's fields, and any bytes give a packet or a
//! typed refusal — never a panic — and a decision through a rule set.

use proptest::prelude::*;
use sift_firewall::packet::{Direction, Family, Meta, Packet, PacketError};
use sift_firewall::{Firewall, Reason, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

fn tcp4() -> Vec<u8> {
    let mut p = vec![0x45, 0x10, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 192, 0, 2, 1, 198, 51, 100, 2];
    p.extend_from_slice(&[
        0x04, 0xd2, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x12, 0xff, 0xff, 0, 0, 0, 0,
    ]);
    p
}

#[test]
fn fields_of_real_headers() {
    let b = tcp4();
    let p = Packet::parse(&b).unwrap();
    assert_eq!(
        (p.af, p.proto, p.sport, p.dport, p.tcp_flags, p.tos, p.ttl),
        (Family::Inet, 6, 1234, 80, 0x12, 0x10, 64)
    );
    assert_eq!(p.src_addr().to_string(), "192.0.2.1");
    assert_eq!(p.dst_addr().to_string(), "198.51.100.2");
    assert!(!p.fragment);
    // A later fragment carries no transport fields.
    let mut f = b.clone();
    f[6] = 0x00;
    f[7] = 0x10;
    let p = Packet::parse(&f).unwrap();
    assert!(p.fragment && p.sport == 0);
    // IPv6 with a hop-by-hop header before UDP.
    let mut v6 = vec![0x60, 0, 0, 0, 0, 16, 0, 64];
    v6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    v6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    v6.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]);
    v6.extend_from_slice(&[0, 53, 0x9c, 0x40, 0, 8, 0, 0]);
    let p = Packet::parse(&v6).unwrap();
    assert_eq!((p.af, p.proto, p.sport, p.dport), (Family::Inet6, 17, 53, 40000));
    // Truncations and impossible lengths are refused with pf's reasons.
    assert_eq!(Packet::parse(&b[..30]), Err(PacketError::Short("IPv4")));
    let mut bad = b.clone();
    bad[0] = 0x44;
    assert_eq!(Packet::parse(&bad), Err(PacketError::BadOffset("IPv4 header length")));
    let mut short_tcp = b.clone();
    short_tcp[3] = 30;
    assert_eq!(Packet::parse(&short_tcp[..30]), Err(PacketError::Short("TCP")));
    let mut icmp6_in_v4 = b.clone();
    icmp6_in_v4[9] = 58;
    assert!(matches!(Packet::parse(&icmp6_in_v4), Err(PacketError::Normalize(_))));
    assert_eq!(PacketError::Short("x").reason(), Reason::Short);
}

proptest! {
    #[test]
    fn any_bytes_decide_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..120), v6 in any::<bool>()) {
        let host = FixtureHost::openbsd(".");
        let rs = parse("pf.conf", "block all\npass in proto tcp to port 80\npass out inet6\n", &Options::default(), &host).unwrap();
        let mut fw = Firewall::new(&rs, &host).unwrap();
        let mut b = bytes;
        if let Some(first) = b.first_mut() {
            *first = (*first & 0x0f) | if v6 { 0x60 } else { 0x45 };
        }
        let meta = Meta::new("em0", Direction::In);
        let d = fw.decide_bytes(&b, &meta);
        match Packet::parse(&b) {
            Ok(p) => prop_assert_eq!(d, fw.decide_naive(&p, &meta)),
            Err(e) => prop_assert_eq!((d.action, d.reason), (Verdict::Block, e.reason())),
        }
    }
}
