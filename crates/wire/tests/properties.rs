//! Properties of the views, representations and checksums over random inputs:
//!
//! * an incremental checksum update (RFC 1624) after any sequence of field changes equals a
//!   full recomputation, including when fields or checksums pass through 0x0000 and 0xFFFF;
//! * `emit` then `parse` gives the representation back, and `parse` then `emit` gives the
//!   bytes back for canonical inputs (reserved bits zero, versions right);
//! * no checked constructor, getter or walk panics on arbitrary bytes (the fuzz target
//!   `wire_views` does the same at greater depth).

use proptest::prelude::*;
use sift_wire::checksum::{self, update_bytes, update16, update32};
use sift_wire::ipv4::{Ipv4Packet, Ipv4Repr};
use sift_wire::tcp::{TcpPacket, TcpRepr};
use sift_wire::udp::{UdpPacket, UdpRepr};
use sift_wire::*;

/// A 16-bit value that is often one of the corner cases.
fn word() -> impl Strategy<Value = u16> {
    prop_oneof![Just(0u16), Just(0xffff), Just(0xfffe), Just(1), any::<u16>()]
}

fn full(words: &[u16], at: usize) -> u16 {
    let bytes: Vec<u8> = words
        .iter()
        .enumerate()
        .flat_map(|(i, w)| if i == at { [0, 0] } else { w.to_be_bytes() })
        .collect();
    checksum::internet(&bytes)
}

#[derive(Clone, Debug)]
enum Change {
    Word(usize, u16),
    Pair(usize, u32),
    Span(usize, Vec<u16>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (any::<usize>(), word()).prop_map(|(i, w)| Change::Word(i, w)),
        (any::<usize>(), word(), word())
            .prop_map(|(i, a, b)| Change::Pair(i, (u32::from(a) << 16) | u32::from(b))),
        (any::<usize>(), prop::collection::vec(word(), 1..9)).prop_map(|(i, v)| Change::Span(i, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Word 0 is a fixed nonzero word (a version, a protocol: every real header has one);
    /// `at` is the checksum; every change rewrites other words, and after each one the
    /// incrementally updated checksum equals the recomputed one.
    #[test]
    fn incremental_updates_equal_recomputation(
        mut words in prop::collection::vec(word(), 3..48),
        first in 1u16..,
        at_seed in any::<usize>(),
        changes in prop::collection::vec(change(), 1..24),
    ) {
        words[0] = first;
        let n = words.len();
        let at = 1 + at_seed % (n - 1);
        let mut hc = full(&words, at);
        for c in changes {
            // Aligned runs of words that leave word 0 and the checksum alone.
            let run = |start: usize, len: usize| {
                let s = 1 + start % (n - 1);
                let e = (s + len).min(n);
                (s..e).all(|i| i != at).then_some((s, e))
            };
            match c {
                Change::Word(i, w) => {
                    let Some((i, _)) = run(i, 1) else { continue };
                    hc = update16(hc, words[i], w);
                    words[i] = w;
                }
                Change::Pair(i, v) => {
                    let Some((i, e)) = run(i, 2) else { continue };
                    if e - i < 2 { continue }
                    let old = (u32::from(words[i]) << 16) | u32::from(words[i + 1]);
                    hc = update32(hc, old, v);
                    words[i] = (v >> 16) as u16;
                    words[i + 1] = v as u16;
                }
                Change::Span(i, v) => {
                    let Some((s, e)) = run(i, v.len()) else { continue };
                    let old: Vec<u8> = words[s..e].iter().flat_map(|w| w.to_be_bytes()).collect();
                    let new: Vec<u8> = v[..e - s].iter().flat_map(|w| w.to_be_bytes()).collect();
                    hc = update_bytes(hc, &old, &new);
                    words[s..e].copy_from_slice(&v[..e - s]);
                }
            }
            prop_assert_eq!(hc, full(&words, at), "words {:04x?}, checksum at {}", words, at);
        }
    }

    /// NAT on IPv4 + TCP and IPv4 + UDP: addresses, ports and TTL rewritten through the
    /// views' `rewrite_*` and `adjust_checksum`; both checksums stay equal to recomputed ones.
    #[test]
    fn nat_rewrites_keep_checksums_equal_to_recomputation(
        src in any::<[u8; 4]>(),
        dst in any::<[u8; 4]>(),
        ports in any::<(u16, u16)>(),
        ttl in any::<u8>(),
        payload in prop::collection::vec(any::<u8>(), 0..64),
        udp in any::<bool>(),
        rewrites in prop::collection::vec((0u8..5, any::<[u8; 4]>(), word()), 1..12),
    ) {
        let l4 = if udp { 8 } else { 20 };
        let mut buf = vec![0u8; 20 + l4 + payload.len()];
        let ip = Ipv4Repr {
            src, dst, protocol: if udp { ipproto::UDP } else { ipproto::TCP }, ttl, tos: 0,
            ident: 7, dont_frag: true, more_frags: false, frag_offset: 0, options: &[],
            payload_len: l4 + payload.len(),
        };
        ip.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        let (sp, dp) = ports;
        if udp {
            let mut u = UdpPacket::new_unchecked(&mut buf[20..]);
            UdpRepr { src_port: sp, dst_port: dp, payload_len: payload.len() }.emit(&mut u);
            u.payload_mut().copy_from_slice(&payload);
            u.fill_checksum(&src, &dst);
        } else {
            let mut t = TcpPacket::new_unchecked(&mut buf[20..]);
            TcpRepr {
                src_port: sp, dst_port: dp, seq: 1, ack: 2, flags: 0x18, window: 9, urgent: 0,
                options: &[],
            }.emit(&mut t);
            t.payload_mut().copy_from_slice(&payload);
            t.fill_checksum(&src, &dst);
        }
        for (what, addr, port) in rewrites {
            let (ip_part, l4_part) = buf.split_at_mut(20);
            let mut ip = Ipv4Packet::new_unchecked(ip_part);
            let old = match what {
                0 => Some((ip.rewrite_src_addr(addr), addr)),
                1 => Some((ip.rewrite_dst_addr(addr), addr)),
                4 => { ip.rewrite_ttl(addr[0]); None }
                _ => None,
            };
            if udp {
                let mut u = UdpPacket::new_unchecked(l4_part);
                if let Some((o, n)) = old { u.adjust_checksum(&o, &n) }
                if what == 2 { u.rewrite_src_port(port) }
                if what == 3 { u.rewrite_dst_port(port) }
            } else {
                let mut t = TcpPacket::new_unchecked(l4_part);
                if let Some((o, n)) = old { t.adjust_checksum(&o, &n) }
                if what == 2 { t.rewrite_src_port(port) }
                if what == 3 { t.rewrite_dst_port(port) }
            }
            let ip = Ipv4Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(ip.verify_checksum());
            let mut copy = buf.clone();
            let (s, d) = (ip.src_addr(), ip.dst_addr());
            if udp {
                let stored = UdpPacket::new_unchecked(&buf[20..]).checksum();
                let mut u = UdpPacket::new_unchecked(&mut copy[20..]);
                u.fill_checksum(&s, &d);
                prop_assert_eq!(stored, u.checksum());
            } else {
                let stored = TcpPacket::new_unchecked(&buf[20..]).checksum();
                let mut t = TcpPacket::new_unchecked(&mut copy[20..]);
                t.fill_checksum(&s, &d);
                prop_assert_eq!(stored, t.checksum());
            }
        }
    }

    /// Arbitrary bytes through every checked constructor, getter and walk: no panics.
    #[test]
    fn views_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        common::exercise(&bytes);
    }
}

mod common;

/// Inputs the `wire_views` fuzz target found panicking, kept as regressions.
#[test]
fn fuzz_findings_do_not_panic() {
    // An IPv6 header whose hop-by-hop options hold a jumbo payload option cut short.
    let ipv6_options: &[u8] = &[
        0x60, 0x01, 0x09, 0x80, 0x00, 0x09, 0x33, 0x00, 0x00, 0x00, 0x33, 0x79, 0x79, 0x41, 0x00,
        0x00, 0x6b, 0x6b, 0x6b, 0x6b, 0x0c, 0xff, 0x67, 0xf4, 0x01, 0x05, 0x01, 0x05, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x33, 0x6b, 0x6b, 0x6b, 0x00, 0x00, 0x01, 0x00, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0b, 0xfb, 0x00, 0x00, 0x00,
    ];
    common::exercise(ipv6_options);
}

/// Emit a representation into a buffer of its length and parse it back.
macro_rules! emit_parse {
    ($repr:expr, $view:ident, $parse:path, $emit:ident) => {{
        let repr = $repr;
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.$emit(&mut $view::new_unchecked(&mut buf[..]));
        let back = $parse(&$view::new_unchecked(&buf[..])).unwrap();
        (repr, back, buf)
    }};
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn emit_then_parse_gives_the_repr(
        a in any::<[u8; 16]>(), b in any::<[u8; 16]>(), w in any::<[u16; 6]>(),
        x in any::<[u32; 3]>(), f in any::<[bool; 3]>(), opts in prop::collection::vec(any::<u8>(), 0..10),
    ) {
        use sift_wire::ethernet::*;
        use sift_wire::ipv6::*;
        use sift_wire::sctp::*;
        use sift_wire::gre::*;
        use sift_wire::geneve::*;
        use sift_wire::arp::*;
        use sift_wire::icmp::*;
        use sift_wire::mpls::*;
        use sift_wire::sll::*;
        use sift_wire::pppoe::*;
        use sift_wire::vxlan::*;
        let mac = |s: &[u8]| -> [u8; 6] { s[..6].try_into().unwrap() };
        let v4 = |s: &[u8]| -> [u8; 4] { s[..4].try_into().unwrap() };
        let words4: Vec<u8> = opts.iter().copied().chain([0; 3]).take(opts.len() / 4 * 4).collect();

        let (r, back, _) = emit_parse!(
            EthernetRepr { dst: mac(&a), src: mac(&b), ethertype: w[0] },
            EthernetFrame, EthernetRepr::parse, emit);
        prop_assert_eq!(r, back);
        let (r, back, _) = emit_parse!(
            VlanRepr { pcp: (w[0] >> 13) as u8, dei: f[0], vid: w[1] & 0xfff, ethertype: w[2] },
            VlanTag, VlanRepr::parse, emit);
        prop_assert_eq!(r, back);
        let (r, back, _) = emit_parse!(
            ArpRepr { op: w[0], sender_hw: mac(&a), sender_ip: v4(&b), target_hw: mac(&b[4..]),
                      target_ip: v4(&a[8..]) },
            ArpPacket, ArpRepr::parse, emit);
        prop_assert_eq!(r, back);
        let ip4 = Ipv4Repr {
            src: v4(&a), dst: v4(&b), protocol: a[5], ttl: b[5], tos: a[6], ident: w[0],
            dont_frag: f[0], more_frags: f[1], frag_offset: w[1] & 0x1fff, options: &words4,
            payload_len: 0,
        };
        let mut buf = vec![0u8; ip4.buffer_len()];
        ip4.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        prop_assert!(p.verify_checksum());
        prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), ip4);
        let ip6 = Ipv6Repr {
            src: a, dst: b, next_header: a[0], hop_limit: a[1], traffic_class: a[2],
            flow_label: x[0] & 0xf_ffff, payload_len: 0,
        };
        let (r, back, _) = emit_parse!(ip6, Ipv6Packet, Ipv6Repr::parse, emit);
        prop_assert_eq!(r, back);
        let tcp = TcpRepr {
            src_port: w[0], dst_port: w[1], seq: x[0], ack: x[1], flags: w[2] & 0x1ff,
            window: w[3], urgent: w[4], options: &words4,
        };
        let mut buf = vec![0u8; tcp.buffer_len()];
        tcp.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap()).unwrap(), tcp);
        let (r, back, _) = emit_parse!(
            UdpRepr { src_port: w[0], dst_port: w[1], payload_len: 0 }, UdpPacket, UdpRepr::parse, emit);
        prop_assert_eq!(r, back);
        let icmp = IcmpRepr { msg_type: a[0], code: a[1], rest: x[0] };
        let (r, back, _) = emit_parse!(icmp, IcmpPacket, IcmpRepr::parse, emit);
        prop_assert_eq!(r, back);
        let (r, back, _) = emit_parse!(icmp, Icmpv6Packet, IcmpRepr::parse_v6, emit_v6);
        prop_assert_eq!(r, back);
        let (r, back, _) = emit_parse!(
            SctpRepr { src_port: w[0], dst_port: w[1], verification_tag: x[0] },
            SctpPacket, SctpRepr::parse, emit);
        prop_assert_eq!(r, back);
        let gre = GreRepr {
            protocol_type: w[0], checksum: f[0], key: f[1].then_some(x[0]), seq: f[2].then_some(x[1]),
        };
        let (r, back, _) = emit_parse!(gre, GrePacket, GreRepr::parse, emit);
        prop_assert_eq!(r, back);
        let (r, back, _) = emit_parse!(VxlanRepr { vni: x[0] & 0xff_ffff }, VxlanPacket, VxlanRepr::parse, emit);
        prop_assert_eq!(r, back);
        let geneve = GeneveRepr {
            oam: f[0], critical: f[1], protocol_type: w[0], vni: x[0] & 0xff_ffff, options: &words4,
        };
        let mut buf = vec![0u8; geneve.buffer_len()];
        geneve.emit(&mut GenevePacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(GeneveRepr::parse(&GenevePacket::new_checked(&buf[..]).unwrap()).unwrap(), geneve);
        let (r, back, _) = emit_parse!(
            MplsRepr { label: x[0] & 0xf_ffff, traffic_class: a[0] & 7, bottom: f[0], ttl: a[1] },
            MplsPacket, MplsRepr::parse, emit);
        prop_assert_eq!(r, back);
        let sll = SllRepr {
            packet_type: w[0] & 0xff, hatype: w[1], addr: a[..8].try_into().unwrap(), addr_len: 8,
            protocol: w[2], ifindex: x[0],
        };
        let mut buf = [0u8; 16];
        sll.emit(&mut SllPacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(SllRepr::parse(&SllPacket::new_unchecked(&buf[..])).unwrap(), SllRepr { ifindex: 0, ..sll });
        let mut buf = [0u8; 20];
        sll.emit_v2(&mut Sll2Packet::new_unchecked(&mut buf[..]));
        prop_assert_eq!(SllRepr::parse_v2(&Sll2Packet::new_unchecked(&buf[..])).unwrap(), sll);
        let pppoe = PppoeSessionRepr { session_id: w[0], protocol: w[1], payload_len: 0 };
        let (r, back, _) = emit_parse!(pppoe, PppoePacket, PppoeSessionRepr::parse, emit);
        prop_assert_eq!(r, back);
    }

    /// Canonical bytes (reserved bits zero, version and fixed values right) survive
    /// parse then emit unchanged.
    #[test]
    fn parse_then_emit_gives_the_bytes(mut bytes in prop::collection::vec(any::<u8>(), 64)) {
        use sift_wire::ipv6::*;
        use sift_wire::ipv6ext::*;
        use sift_wire::vxlan::*;
        // Ethernet, VLAN, MPLS, UDP, ICMP and SCTP have no reserved bits.
        macro_rules! same {
            ($len:expr, $view:ident, $parse:path, $emit:ident) => {{
                let orig = &bytes[..$len];
                let repr = $parse(&$view::new_unchecked(orig)).unwrap();
                let mut out = vec![0u8; $len];
                repr.$emit(&mut $view::new_unchecked(&mut out[..]));
                prop_assert_eq!(&out[..], orig);
            }};
        }
        use sift_wire::ethernet::*;
        use sift_wire::mpls::*;
        use sift_wire::icmp::*;
        use sift_wire::sctp::*;
        same!(14, EthernetFrame, EthernetRepr::parse, emit);
        same!(4, VlanTag, VlanRepr::parse, emit);
        same!(4, MplsPacket, MplsRepr::parse, emit);
        // ICMP and SCTP: their checksums are filled after the payload, so zero here.
        bytes[2..4].fill(0);
        bytes[8..12].fill(0);
        same!(8, IcmpPacket, IcmpRepr::parse, emit);
        same!(12, SctpPacket, SctpRepr::parse, emit);
        // UDP: a length that fits; the checksum is zero after emit.
        bytes[4] = 0;
        bytes[5] = 8;
        bytes[6] = 0;
        bytes[7] = 0;
        same!(8, UdpPacket, UdpRepr::parse, emit);
        // IPv6: version 6, no payload.
        bytes[0] = 0x60 | (bytes[0] & 0x0f);
        bytes[4] = 0;
        bytes[5] = 0;
        same!(40, Ipv6Packet, Ipv6Repr::parse, emit);
        // A fragment header with its reserved fields zero.
        bytes[1] = 0;
        bytes[3] &= 0xf9;
        let orig = &bytes[..8];
        let repr = Ipv6FragmentRepr::parse(&Ipv6ExtHeader::new_unchecked(44, orig)).unwrap();
        let mut out = [0u8; 8];
        repr.emit(&mut Ipv6ExtHeader::new_unchecked(44, &mut out[..]));
        prop_assert_eq!(&out[..], orig);
        // VXLAN: the I flag, reserved bytes zero.
        let v = [0x08, 0, 0, 0, bytes[9], bytes[10], bytes[11], 0];
        let repr = VxlanRepr::parse(&VxlanPacket::new_unchecked(&v[..])).unwrap();
        let mut out = [0u8; 8];
        repr.emit(&mut VxlanPacket::new_unchecked(&mut out[..]));
        prop_assert_eq!(out, v);
        // IPv4: version 4, no options, total length 20, reserved flag zero, checksum right.
        let mut h = bytes[..20].to_vec();
        h[0] = 0x45;
        h[2] = 0;
        h[3] = 20;
        h[6] &= 0x7f;
        Ipv4Packet::new_unchecked(&mut h[..]).fill_checksum();
        let repr = Ipv4Repr::parse(&Ipv4Packet::new_unchecked(&h[..])).unwrap();
        let mut out = [0u8; 20];
        repr.emit(&mut Ipv4Packet::new_unchecked(&mut out[..]));
        prop_assert_eq!(&out[..], &h[..]);
        // TCP: data offset 5, reserved bits zero, checksum zero.
        let mut t = bytes[..20].to_vec();
        t[12] = 0x50 | (t[12] & 1);
        t[16] = 0;
        t[17] = 0;
        let repr = TcpRepr::parse(&TcpPacket::new_unchecked(&t[..])).unwrap();
        let mut out = [0u8; 20];
        repr.emit(&mut TcpPacket::new_unchecked(&mut out[..]));
        prop_assert_eq!(&out[..], &t[..]);
    }
}
