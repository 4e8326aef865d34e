//! Flow keys of hand-built frames, their truncations, and properties: extraction never
//! panics; the slow path's mask is exact (any key agreeing on it gets the same rule); rules
//! print and read back; actions never panic and keep right checksums right.

use proptest::prelude::*;
use sift_flow::key::{DL_TYPE_NONE, NW_FRAG_ANY, NW_FRAG_LATER};
use sift_flow::testgen::{self, Entropy, XorShift};
use sift_flow::{
    Field, FlowKey, FlowTable, VecFrame, execute, parse_rule, parse_rules, rules::print,
};
use sift_gen::build::{Packet, ipv4_header, ipv6_header};
use sift_wire::tcp::{TcpRepr, flags};

fn tcp(sp: u16, dp: u16, f: u16) -> TcpRepr<'static> {
    TcpRepr {
        src_port: sp,
        dst_port: dp,
        seq: 1,
        ack: 2,
        flags: f,
        window: 9,
        urgent: 0,
        options: &[],
    }
}

const A: [u8; 6] = [2, 0, 10, 0, 0, 1];
const B: [u8; 6] = [2, 0, 10, 0, 0, 10];

fn v6(last: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a[15] = last;
    a
}

#[test]
fn tcp_in_two_vlan_tags() {
    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut f, &mut s);
    p.ethernet(A, B).vlan(true, 5, 100).vlan(false, 2, 7);
    let mut h = ipv4_header([10, 0, 0, 10], [192, 0, 2, 1]);
    h.tos = 0xb9;
    h.ttl = 33;
    p.ipv4(&h).tcp(&tcp(40000, 443, flags::SYN | flags::ECE));
    p.finish();
    let k = FlowKey::extract(3, &f);
    assert_eq!(k.in_port(), 3);
    assert_eq!((k.dl_dst(), k.dl_src(), k.dl_type()), (A, B, 0x0800));
    assert_eq!(k.vlan_tci(), 0x1000 | (5 << 13) | 100);
    assert_eq!(k.get(Field::VlanTci2), 0x1000 | (2 << 13) | 7);
    assert_eq!((k.nw_src(), k.nw_dst(), k.nw_proto()), ([10, 0, 0, 10], [192, 0, 2, 1], 6));
    assert_eq!((k.get(Field::NwTos), k.get(Field::NwTtl), k.get(Field::NwFrag)), (0xb9, 33, 0));
    assert_eq!((k.tp_src(), k.tp_dst()), (40000, 443));
    assert_eq!(k.get(Field::TcpFlags), u128::from(flags::SYN | flags::ECE));

    // Every truncation: what fits is read, the rest is zero.
    for n in 0..=f.len() {
        let k = FlowKey::extract(3, &f[..n]);
        assert_eq!(k.dl_src(), if n >= 14 { B } else { [0; 6] }, "{n}");
        assert_eq!(k.vlan_tci() != 0, n >= 18, "{n}");
        assert_eq!(k.get(Field::VlanTci2) != 0, n >= 22, "{n}");
        let ip = 22 + 20;
        assert_eq!(k.nw_src(), if n >= ip { [10, 0, 0, 10] } else { [0; 4] }, "{n}");
        assert_eq!(k.tp_dst(), if n >= ip + 20 { 443 } else { 0 }, "{n}");
    }
}

#[test]
fn ipv6_extension_headers_and_fragments() {
    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut f, &mut s);
    let mut h = ipv6_header(v6(1), v6(2));
    h.traffic_class = 0x28;
    h.hop_limit = 9;
    p.ethernet(A, B).ipv6(&h).ipv6_hop_by_hop(false).ipv6_fragment(0, true, 77).udp(53, 5353);
    p.payload(b"dns");
    p.finish();
    let k = FlowKey::extract(1, &f);
    assert_eq!((k.dl_type(), k.nw_proto(), k.ipv6_src(), k.ipv6_dst()), (0x86dd, 17, v6(1), v6(2)));
    assert_eq!((k.get(Field::NwTos), k.get(Field::NwTtl)), (0x28, 9));
    assert_eq!(k.get(Field::NwFrag), u128::from(NW_FRAG_ANY));
    assert_eq!((k.tp_src(), k.tp_dst()), (53, 5353));

    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut f, &mut s);
    p.ethernet(A, B).ipv6(&ipv6_header(v6(1), v6(2))).ipv6_fragment(8, false, 77).udp(53, 5353);
    p.finish();
    let k = FlowKey::extract(1, &f);
    assert_eq!(k.get(Field::NwFrag), u128::from(NW_FRAG_ANY | NW_FRAG_LATER));
    assert_eq!((k.nw_proto(), k.tp_src(), k.tp_dst()), (17, 0, 0));
}

#[test]
fn arp_icmp_and_802_3() {
    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut f, &mut s);
    p.ethernet([0xff; 6], B).arp(1, B, [10, 0, 0, 10], [0; 6], [10, 0, 0, 1]);
    p.finish();
    let k = FlowKey::extract(1, &f);
    assert_eq!(
        (k.dl_type(), k.nw_proto(), k.nw_src(), k.nw_dst()),
        (0x0806, 1, [10, 0, 0, 10], [10, 0, 0, 1])
    );
    assert_eq!((k.get(Field::ArpSha), k.get(Field::ArpTha)), (0x02000a00000a, 0));

    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut f, &mut s);
    p.ethernet(A, B).ipv4(&ipv4_header([10, 0, 0, 10], [10, 0, 0, 1])).icmp(3, 4, 0);
    p.finish();
    let k = FlowKey::extract(1, &f);
    assert_eq!((k.nw_proto(), k.tp_src(), k.tp_dst()), (1, 3, 4));

    let mut f = vec![0u8; 60];
    f[12..14].copy_from_slice(&46u16.to_be_bytes());
    assert_eq!(FlowKey::extract(1, &f).dl_type(), DL_TYPE_NONE);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn extraction_never_panics(seed in any::<u64>(), bytes in proptest::collection::vec(any::<u8>(), 0..160)) {
        let mut e = XorShift(seed);
        let mut f = bytes;
        // Steer half the inputs into the deeper parsers.
        if e.chance(50) {
            let mut r = Vec::new();
            testgen::random_frame(&mut e, &mut r);
            f = r;
        }
        let k = FlowKey::extract(seed as u32, &f);
        prop_assert_eq!(k.in_port(), seed as u32);
    }

    #[test]
    fn the_consulted_mask_is_exact(seed in any::<u64>()) {
        let mut e = XorShift(seed);
        let ports = testgen::ports();
        let n = 1 + e.below(60) as usize;
        let table = FlowTable::with_rules(parse_rules(&testgen::rule_set_text(&mut e, n), &ports).unwrap());
        let mut frames = testgen::Frames::new(seed);
        let mut buf = Vec::new();
        for _ in 0..50 {
            frames.next(&mut e, &mut buf);
            let key = FlowKey::extract(1 + e.below(4) as u32, &buf);
            let c = table.classify(&key);
            let naive = table.rules().position(|(r, _)| r.matches.matches(&key));
            prop_assert_eq!(c.rule, naive);
            // Keys that agree on the mask, random elsewhere, get the same rule.
            for _ in 0..8 {
                let mut w = *key.words();
                for (x, m) in w.iter_mut().zip(c.mask.words()) {
                    *x = (*x & m) | (e.next_u64() & !m);
                }
                let other = FlowKey::from_words(w);
                let naive = table.rules().position(|(r, _)| r.matches.matches(&other));
                prop_assert_eq!(c.rule, naive);
            }
        }
    }

    #[test]
    fn rules_print_and_read_back(seed in any::<u64>()) {
        let mut e = XorShift(seed);
        let ports = testgen::ports();
        let text = testgen::rule_text(&mut e);
        let r = parse_rule(&text, &ports).unwrap();
        let line = print::rule(&r, &ports);
        let again = parse_rule(&line, &ports).unwrap();
        prop_assert_eq!(&again, &r);
        prop_assert_eq!(print::rule(&again, &ports), line);
    }

    #[test]
    fn actions_never_panic_and_keep_checksums(seed in any::<u64>(), headroom in 0usize..12) {
        let mut e = XorShift(seed);
        let ports = testgen::ports();
        let r = parse_rule(&testgen::rule_text(&mut e), &ports).unwrap();
        let mut frames = testgen::Frames::new(seed);
        let mut buf = Vec::new();
        for _ in 0..20 {
            frames.next(&mut e, &mut buf);
            let before = checksums_ok(&buf);
            let mut f = VecFrame::new(&buf, headroom);
            let mut outs = Vec::new();
            let _ = execute(&r.actions, &mut f, 1, |p, b| outs.push((p, b.to_vec())));
            for (_, o) in &outs {
                // A frame whose checksums were right leaves with right checksums.
                if before == Some(true) {
                    prop_assert_eq!(checksums_ok(o), Some(true), "{} on {:02x?} gave {:02x?}", print::rule(&r, &ports), buf, o);
                }
            }
        }
    }
}

/// Whether the IPv4 header and TCP/UDP checksums of an untagged or tagged frame are right
/// (`None` when the frame is not whole IPv4/IPv6 + TCP/UDP, or a fragment).
fn checksums_ok(f: &[u8]) -> Option<bool> {
    let mut at = 12;
    let mut ty = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
    while ty == 0x8100 || ty == 0x88a8 || ty == 0x9100 {
        at += 4;
        ty = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
    }
    let ip = f.get(at + 2..)?;
    let (src, dst, proto, payload) = match ty {
        0x0800 => {
            let p = sift_wire::ipv4::Ipv4Packet::new_checked(ip).ok()?;
            if p.version() != 4 || p.more_frags() || p.frag_offset() != 0 {
                return None;
            }
            if !p.verify_checksum() {
                return Some(false);
            }
            (p.src_addr().to_vec(), p.dst_addr().to_vec(), p.protocol(), p.payload())
        }
        0x86dd => {
            let p = sift_wire::ipv6::Ipv6Packet::new_checked(ip).ok()?;
            if p.version() != 6 {
                return None;
            }
            (p.src_addr().to_vec(), p.dst_addr().to_vec(), p.next_header(), p.payload())
        }
        _ => return None,
    };
    match proto {
        6 => {
            Some(sift_wire::tcp::TcpPacket::new_checked(payload).ok()?.verify_checksum(&src, &dst))
        }
        17 => {
            Some(sift_wire::udp::UdpPacket::new_checked(payload).ok()?.verify_checksum(&src, &dst))
        }
        _ => None,
    }
}
