//! Actions on frames, against frames computed independently: each case builds a frame, runs
//! a rule's actions on it, and compares the output byte for byte with the frame built from
//! scratch with the new field values (`sift_gen`'s builder fills every length and checksum by
//! summing the whole packet). So the incremental checksum updates must equal full
//! recomputations; the outputs' checksums are also verified from scratch.

use sift_flow::{ExecError, FrameMut, PortMap, VecFrame, execute, parse_rule};
use sift_gen::build::{Packet, ipv4_header, ipv6_header};
use sift_wire::ethernet::Mac;
use sift_wire::tcp::{TcpRepr, flags};

#[derive(Clone, Copy, Debug)]
enum Ip {
    V4 { src: [u8; 4], dst: [u8; 4], tos: u8, ttl: u8, frag: u16, more: bool },
    V6 { src: [u8; 16], dst: [u8; 16], tclass: u8, hlimit: u8 },
}

#[derive(Clone, Copy, Debug)]
enum L4 {
    Tcp(u16, u16),
    Udp(u16, u16),
    UdpNoChecksum(u16, u16),
    Sctp(u16, u16),
    Icmpv6,
    Icmp,
}

#[derive(Clone, Debug)]
struct Spec {
    dst: Mac,
    src: Mac,
    /// (802.1ad?, pcp, vid), outer first.
    tags: Vec<(bool, u8, u16)>,
    ip: Ip,
    l4: L4,
}

const PAYLOAD: &[u8] = b"the flow datapath's payload.";

fn build(s: &Spec) -> Vec<u8> {
    let (mut buf, mut scratch) = (Vec::new(), Vec::new());
    let mut p = Packet::new(&mut buf, &mut scratch);
    p.ethernet(s.dst, s.src);
    for &(outer, pcp, vid) in &s.tags {
        p.vlan(outer, pcp, vid);
    }
    match s.ip {
        Ip::V4 { src, dst, tos, ttl, frag, more } => {
            let mut h = ipv4_header(src, dst);
            h.tos = tos;
            h.ttl = ttl;
            h.frag_offset = frag;
            h.more_frags = more;
            h.dont_frag = frag == 0 && !more;
            h.ident = 0x1234;
            p.ipv4(&h);
        }
        Ip::V6 { src, dst, tclass, hlimit } => {
            let mut h = ipv6_header(src, dst);
            h.traffic_class = tclass;
            h.hop_limit = hlimit;
            h.flow_label = 0x12345;
            p.ipv6(&h);
        }
    }
    match s.l4 {
        L4::Tcp(sp, dp) => {
            p.tcp(&TcpRepr {
                src_port: sp,
                dst_port: dp,
                seq: 1000,
                ack: 2000,
                flags: flags::ACK | flags::PSH,
                window: 512,
                urgent: 0,
                options: &[],
            });
        }
        L4::Udp(sp, dp) => {
            p.udp(sp, dp);
        }
        L4::UdpNoChecksum(sp, dp) => {
            p.udp_no_checksum(sp, dp);
        }
        L4::Sctp(sp, dp) => {
            p.sctp(sp, dp, 0xabcd_ef01);
            p.sctp_data(7, 0, 0, 0, PAYLOAD);
        }
        L4::Icmpv6 => {
            p.icmpv6_echo(true, 7, 9);
        }
        L4::Icmp => {
            p.icmp_echo(true, 7, 9);
        }
    }
    if !matches!(s.l4, L4::Sctp(..)) {
        p.payload(PAYLOAD);
    }
    p.finish();
    buf
}

fn v4() -> Ip {
    Ip::V4 { src: [10, 0, 0, 10], dst: [198, 51, 100, 7], tos: 0x01, ttl: 64, frag: 0, more: false }
}

fn v6() -> Ip {
    let mut src = [0u8; 16];
    src[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    src[15] = 0x10;
    let mut dst = src;
    dst[5] = 2;
    dst[15] = 5;
    Ip::V6 { src, dst, tclass: 0x02, hlimit: 64 }
}

fn spec(ip: Ip, l4: L4) -> Spec {
    Spec { dst: [2, 0, 10, 0, 0, 1], src: [2, 0, 10, 0, 0, 10], tags: Vec::new(), ip, l4 }
}

fn ports() -> PortMap {
    let mut p = PortMap::new();
    p.add("eth1", 1).unwrap();
    p.add("eth2", 2).unwrap();
    p.add("eth3", 3).unwrap();
    p
}

/// The frames a rule sent, with their ports.
type Sent = Vec<(u32, Vec<u8>)>;

/// Runs `rule`'s actions on `frame` received on port 1; the outputs.
fn run(
    rule: &str,
    frame: &[u8],
    headroom: usize,
) -> (Sent, Result<sift_flow::Executed, ExecError>) {
    let r = parse_rule(rule, &ports()).unwrap_or_else(|e| panic!("{rule}: {e}"));
    let mut f = VecFrame::new(frame, headroom);
    let mut out = Vec::new();
    let done = execute(&r.actions, &mut f, 1, |p, b| out.push((p, b.to_vec())));
    (out, done)
}

/// Verifies every checksum of an output from scratch.
fn verify(frame: &[u8]) {
    let l = sift_decode_free_layout(frame);
    let Some((l3, v6)) = l else { return };
    let ip = &frame[l3..];
    let (src, dst, proto, payload): (Vec<u8>, Vec<u8>, u8, &[u8]) = if v6 {
        let p = sift_wire::ipv6::Ipv6Packet::new_checked(ip).unwrap();
        (p.src_addr().to_vec(), p.dst_addr().to_vec(), p.next_header(), &ip[40..])
    } else {
        let p = sift_wire::ipv4::Ipv4Packet::new_checked(ip).unwrap();
        assert!(p.verify_checksum(), "IPv4 header checksum of {frame:02x?}");
        if p.frag_offset() != 0 {
            return;
        }
        (p.src_addr().to_vec(), p.dst_addr().to_vec(), p.protocol(), p.payload())
    };
    match proto {
        6 => assert!(
            sift_wire::tcp::TcpPacket::new_checked(payload).unwrap().verify_checksum(&src, &dst)
        ),
        17 => assert!(
            sift_wire::udp::UdpPacket::new_checked(payload).unwrap().verify_checksum(&src, &dst)
        ),
        58 => assert!(
            sift_wire::icmp::Icmpv6Packet::new_checked(payload)
                .unwrap()
                .verify_checksum(&src, &dst)
        ),
        1 => assert!(sift_wire::icmp::IcmpPacket::new_checked(payload).unwrap().verify_checksum()),
        132 => {
            assert!(sift_wire::sctp::SctpPacket::new_checked(payload).unwrap().verify_checksum())
        }
        _ => {}
    }
}

/// Where the IP header starts (after up to two tags), and whether it is IPv6.
fn sift_decode_free_layout(f: &[u8]) -> Option<(usize, bool)> {
    let mut at = 12;
    loop {
        let t = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
        match t {
            0x8100 | 0x88a8 => at += 4,
            0x0800 => return Some((at + 2, false)),
            0x86dd => return Some((at + 2, true)),
            _ => return None,
        }
    }
}

/// `rule` turns `before` into `after`, sent to port 2.
fn case(rule: &str, before: &Spec, after: &Spec) {
    let (out, done) = run(rule, &build(before), 8);
    done.unwrap();
    let want = build(after);
    assert_eq!(out.len(), 1, "{rule}");
    assert_eq!(out[0].0, 2, "{rule}");
    assert_eq!(out[0].1, want, "{rule}\n got {:02x?}\nwant {want:02x?}", out[0].1);
    verify(&out[0].1);
}

#[test]
fn ipv4_addresses_with_tcp_udp_and_no_udp_checksum() {
    let new = [203, 0, 113, 99];
    for l4 in [L4::Tcp(40000, 443), L4::Udp(5353, 53), L4::UdpNoChecksum(514, 514), L4::Icmp] {
        let before = spec(v4(), l4);
        let mut after = before.clone();
        let Ip::V4 { src, .. } = &mut after.ip else { unreachable!() };
        *src = new;
        case("ip,actions=set_field:203.0.113.99->nw_src,output:eth2", &before, &after);
        let mut after = before.clone();
        let Ip::V4 { dst, .. } = &mut after.ip else { unreachable!() };
        *dst = new;
        case("ip,actions=mod_nw_dst:203.0.113.99,output:eth2", &before, &after);
    }
    // The zero UDP checksum stayed zero (not recomputed, not 0xffff).
    let (out, _) = run(
        "ip,actions=mod_nw_dst:1.2.3.4,output:2",
        &build(&spec(v4(), L4::UdpNoChecksum(1, 2))),
        0,
    );
    assert_eq!(&out[0].1[14 + 20 + 6..14 + 20 + 8], &[0, 0]);
}

#[test]
fn ipv4_tos_and_ttl() {
    let before = spec(v4(), L4::Tcp(1, 2));
    let mut after = before.clone();
    let Ip::V4 { tos, .. } = &mut after.ip else { unreachable!() };
    *tos = 184 | 0x01; // DSCP set, ECN kept
    case("ip,actions=mod_nw_tos:184,output:2", &before, &after);
    let mut after = before.clone();
    let Ip::V4 { ttl, .. } = &mut after.ip else { unreachable!() };
    *ttl = 1;
    case("ip,actions=set_field:1->nw_ttl,output:2", &before, &after);
}

#[test]
fn ports_of_tcp_udp_and_sctp() {
    for (l4, new_src, new_dst) in [
        (L4::Tcp(40000, 443), L4::Tcp(1234, 443), L4::Tcp(40000, 8443)),
        (L4::Udp(40000, 53), L4::Udp(1234, 53), L4::Udp(40000, 8443)),
        (L4::UdpNoChecksum(40000, 53), L4::UdpNoChecksum(1234, 53), L4::UdpNoChecksum(40000, 8443)),
        (L4::Sctp(40000, 9899), L4::Sctp(1234, 9899), L4::Sctp(40000, 8443)),
    ] {
        for ip in [v4(), v6()] {
            let proto = match (l4, ip) {
                (L4::Tcp(..), Ip::V4 { .. }) => "tcp",
                (L4::Tcp(..), _) => "tcp6",
                (L4::Sctp(..), Ip::V4 { .. }) => "sctp",
                (L4::Sctp(..), _) => "sctp6",
                (_, Ip::V4 { .. }) => "udp",
                _ => "udp6",
            };
            if matches!(l4, L4::UdpNoChecksum(..)) && matches!(ip, Ip::V6 { .. }) {
                continue; // IPv6 requires the checksum
            }
            let before = spec(ip, l4);
            case(&format!("{proto},actions=mod_tp_src:1234,output:2"), &before, &spec(ip, new_src));
            case(
                &format!("{proto},actions=set_field:8443->tp_dst,output:2"),
                &before,
                &spec(ip, new_dst),
            );
        }
    }
}

#[test]
fn ipv6_addresses_class_and_hop_limit() {
    let new: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe, 0xef];
    for l4 in [L4::Tcp(40000, 443), L4::Udp(5353, 53), L4::Icmpv6] {
        let before = spec(v6(), l4);
        let mut after = before.clone();
        let Ip::V6 { src, .. } = &mut after.ip else { unreachable!() };
        *src = new;
        case("ipv6,actions=set_field:2001:db8:9::beef->ipv6_src,output:2", &before, &after);
        let mut after = before.clone();
        let Ip::V6 { dst, .. } = &mut after.ip else { unreachable!() };
        *dst = new;
        case("ipv6,actions=set_field:2001:db8:9::beef->ipv6_dst,output:2", &before, &after);
    }
    let before = spec(v6(), L4::Udp(1, 2));
    let mut after = before.clone();
    let Ip::V6 { tclass, hlimit, .. } = &mut after.ip else { unreachable!() };
    *tclass = 32 | 0x02;
    *hlimit = 7;
    case("ipv6,actions=mod_nw_tos:32,mod_nw_ttl:7,output:2", &before, &after);
}

#[test]
fn macs_and_vlan_tags() {
    let before = spec(v4(), L4::Udp(1, 2));
    let mut after = before.clone();
    after.src = [2, 0, 0, 0, 0, 0x99];
    after.dst = [0xff; 6];
    case(
        "actions=mod_dl_src:02:00:00:00:00:99,set_field:ff:ff:ff:ff:ff:ff->eth_dst,output:2",
        &before,
        &after,
    );

    // push on an untagged frame: TCI 0, then the VID set.
    let mut after = before.clone();
    after.tags = vec![(false, 0, 10)];
    case("actions=push_vlan:0x8100,set_field:10->vlan_vid,output:2", &before, &after);
    // mod_vlan_vid on an untagged frame pushes an 802.1Q tag.
    case("actions=mod_vlan_vid:10,output:2", &before, &after);
    let mut pcp = before.clone();
    pcp.tags = vec![(false, 5, 0)];
    case("actions=mod_vlan_pcp:5,output:2", &before, &pcp);

    // On a tagged frame: the VID changes, the priority stays; push copies the outer TCI.
    let mut tagged = before.clone();
    tagged.tags = vec![(false, 3, 10)];
    let mut after = tagged.clone();
    after.tags = vec![(false, 3, 20)];
    case("actions=mod_vlan_vid:20,output:2", &tagged, &after);
    let mut after = tagged.clone();
    after.tags = vec![(true, 3, 10), (false, 3, 10)];
    case("actions=push_vlan:0x88a8,output:2", &tagged, &after);

    // pop removes the outer tag; on an untagged frame it does nothing.
    let mut qinq = before.clone();
    qinq.tags = vec![(true, 1, 100), (false, 3, 10)];
    case("actions=pop_vlan,output:2", &qinq, &tagged);
    case("actions=strip_vlan,strip_vlan,output:2", &qinq, &before);
    case("actions=pop_vlan,output:2", &before, &before);

    // Rewrites find the IP header behind the tags.
    let mut after = qinq.clone();
    let Ip::V4 { dst, .. } = &mut after.ip else { unreachable!() };
    *dst = [1, 2, 3, 4];
    case("ip,actions=mod_nw_dst:1.2.3.4,output:2", &qinq, &after);
    // ... also behind a tag pushed by an earlier action.
    let mut after = before.clone();
    after.tags = vec![(false, 0, 7)];
    let Ip::V4 { dst, .. } = &mut after.ip else { unreachable!() };
    *dst = [1, 2, 3, 4];
    case("ip,actions=mod_vlan_vid:7,mod_nw_dst:1.2.3.4,output:2", &before, &after);
}

#[test]
fn outputs_see_the_frame_as_it_is_then() {
    let before = spec(v4(), L4::Tcp(40000, 80));
    let f = build(&before);
    let (out, done) = run("tcp,actions=output:2,mod_tp_dst:8080,output:3,in_port,output:1", &f, 0);
    assert_eq!(done.unwrap(), sift_flow::Executed { outputs: 3, skipped: 1 });
    assert_eq!(out.len(), 3);
    assert_eq!(out[0], (2, f.clone()));
    let changed = build(&spec(v4(), L4::Tcp(40000, 8080)));
    assert_eq!(out[1], (3, changed.clone()));
    // `in_port` sends back; output:1 to the ingress port is skipped.
    assert_eq!(out[2], (1, changed));

    // The seed's l2fwd: in_port rewritten, so output to the ingress port goes out.
    let (out, _) = run("in_port=eth1,actions=set_field:eth2->in_port,output:eth1", &f, 0);
    assert_eq!(out, [(1, f.clone())]);
    let (out, _) = run("in_port=eth1,actions=output:eth1", &f, 0);
    assert!(out.is_empty());
    let (out, done) = run("actions=drop", &f, 0);
    assert!(out.is_empty() && done.unwrap().outputs == 0);
}

#[test]
fn headroom_runs_out() {
    let f = build(&spec(v4(), L4::Udp(1, 2)));
    let (out, done) = run("actions=output:2,push_vlan:0x8100,push_vlan:0x8100,output:3", &f, 4);
    assert_eq!(done, Err(ExecError::NoHeadroom { action: 2, needed: 4 }));
    assert_eq!(out.len(), 1, "the output before the failing push happened");
    let mut frame = VecFrame::new(&f, 4);
    assert!(frame.push_front(4) && !frame.push_front(1));
    assert!(
        frame.pull_front(frame.bytes().len()) && frame.bytes().is_empty() && !frame.pull_front(1)
    );
}

#[test]
fn fragments_and_truncation() {
    // A later fragment has no transport header: ports are left alone, addresses change.
    let later = |dst| {
        let mut s = spec(v4(), L4::Udp(1, 2));
        s.ip = Ip::V4 { src: [10, 0, 0, 10], dst, tos: 0, ttl: 64, frag: 185, more: false };
        s
    };
    let f = build(&later([198, 51, 100, 7]));
    let (out, done) = run("udp,actions=mod_tp_dst:99,output:2", &f, 0);
    assert_eq!(done.unwrap().skipped, 1);
    assert_eq!(out[0].1, f);
    // (Behind the IP header is the middle of a datagram: not a header, not changed.)
    let (out, _) = run("udp,actions=mod_nw_dst:1.2.3.4,output:2", &f, 0);
    assert_eq!(&out[0].1[..34], &build(&later([1, 2, 3, 4]))[..34]);
    assert_eq!(&out[0].1[34..], &f[34..]);

    // A TCP header cut short: the IP header is rewritten (its checksum right), the rest of
    // the frame untouched.
    let before = spec(v4(), L4::Tcp(40000, 80));
    let full = build(&before);
    let cut = &full[..14 + 20 + 10];
    let mut after = before.clone();
    let Ip::V4 { src, .. } = &mut after.ip else { unreachable!() };
    *src = [10, 9, 9, 9];
    let want = build(&after);
    let (out, _) = run("tcp,actions=mod_nw_src:10.9.9.9,mod_tp_dst:1,output:2", cut, 0);
    assert_eq!(&out[0].1[..34], &want[..34]);
    assert_eq!(&out[0].1[34..], &cut[34..]);
    assert!(sift_wire::ipv4::Ipv4Packet::new_unchecked(&out[0].1[14..]).verify_checksum());

    // Frames with no Ethernet header: nothing to act on, outputs still go.
    let (out, done) = run(
        "actions=mod_dl_src:02:00:00:00:00:01,push_vlan:0x8100,pop_vlan,output:2",
        &[1, 2, 3],
        0,
    );
    assert_eq!(out, [(2, vec![1, 2, 3])]);
    assert_eq!(done.unwrap().skipped, 3);
}

#[test]
fn sctp_keeps_a_bad_crc_bad() {
    let before = spec(v4(), L4::Sctp(1, 2));
    let mut f = build(&before);
    let crc_at = 14 + 20 + 8;
    f[crc_at] ^= 0x5a;
    let (out, _) = run("sctp,actions=mod_tp_dst:9,output:2", &f, 0);
    let mut want = build(&spec(v4(), L4::Sctp(1, 9)));
    want[crc_at] ^= 0x5a;
    assert_eq!(out[0].1, want);
}
