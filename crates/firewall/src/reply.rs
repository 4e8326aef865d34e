//! The packets pf sends back for a blocked packet: the TCP reset of `block return` /
//! `return-rst` and the ICMP or ICMPv6 error of `block return` / `return-icmp` /
//! `return-icmp6`, built from the blocked packet's bytes as OpenBSD builds them.
//!
//! Why this module: sift decides offline what pf decides; for a rule that answers, the answer
//! is part of what pf does on the wire, and a capture written by sift should hold it. The
//! decision ([`crate::Decision::ret`]) says which answer; [`reply`] makes its bytes, an IP
//! packet (the caller adds the link layer).
//!
//! **The reset** (`pf_test_rule` → `pf_send_tcp` → `pf_build_tcp`): addresses and ports
//! swapped; the sequence number is the blocked segment's acknowledgment field whether or not
//! it had ACK (pf does not follow RFC 9293's "seq 0 when no ACK"); the acknowledgment is the
//! blocked segment's sequence number plus its payload length, plus one for SYN and one for
//! FIN; flags RST|ACK, window 0, no options. IPv4: TOS `lowdelay` (0x10), DF set (OpenBSD's
//! `ip_mtudisc` default), TTL the rule's `return-rst (ttl N)` or `ip_defttl` 64. IPv6: hop
//! limit 64 always — `pf_build_tcp` ignores the rule's TTL for IPv6. pf never answers a RST,
//! and sends nothing when the blocked segment's TCP checksum is wrong (it sets the reason
//! `proto-cksum` instead: [`NoReply::reason`]).
//!
//! **The ICMP error** (`pf_send_icmp` → `icmp_error` → `icmp_reflect`): type and code from the
//! rule (a parameter problem carries the code as its pointer, with code 0, as `icmp_error`
//! does); the quote is the offending IP header with its options and then
//! `min(8, ip_len)` bytes, cut at the packet's end; TOS 0, no DF, TTL 255 (`MAXTTL`). None for
//! a fragment (pf answers no fragment), an ICMP error (only the informational types get one),
//! a packet to a multicast or the limited broadcast address or one that came as link-layer
//! broadcast ([`ReplyOpts::link_broadcast`]), or from a source `icmp_reflect` refuses
//! (0/8, multicast, 240/4; loopback is allowed).
//!
//! **The ICMPv6 error** (`icmp6_error` → `icmp6_reflect`): the offending packet quoted whole up
//! to the IPv6 minimum MTU (1280 bytes in all: 1232 of quote), pointer 0, hop limit 64
//! (`ip6_defhlim`), traffic class and flow label 0. None for a fragment, an ICMPv6 error or
//! redirect (types below 128, and 137), a packet from `::` or a multicast source, or to a
//! multicast destination or link-layer broadcast (but for packet-too-big and the
//! parameter-problem "option" code, RFC 4443 §2.4 e.2).
//!
//! What differs from the kernel, and why: the source address of an error is the blocked
//! packet's destination (the kernel uses it when the packet was addressed to the host, and
//! the outgoing interface's address otherwise — a firewall offline has no interfaces; pf's
//! reset uses the destination too); the IPv4 identification, random in the kernel, is the
//! caller's ([`ReplyOpts::ip_id`]); ICMP rate limiting (`icmperrppslim`) and subnet-directed
//! broadcasts (the kernel knows its subnets) are not modelled. All checksums are computed in
//! full: the answer is new bytes.

use sift_wire::checksum;
use sift_wire::ipproto;

use crate::packet::{Family, Packet, tcp_flags as th};
use crate::{Reason, Return};

/// OpenBSD's default IPv4 TTL (`ip_defttl`).
pub const IP_DEFTTL: u8 = 64;
/// OpenBSD's default IPv6 hop limit (`ip6_defhlim`, `IPV6_DEFHLIM`).
pub const IP6_DEFHLIM: u8 = 64;
/// The TTL of an ICMP error (`MAXTTL`, set by `icmp_reflect`).
pub const ICMP_TTL: u8 = 255;
/// The most an ICMPv6 error quotes: the minimum MTU less the IPv6 and ICMPv6 headers
/// (`ICMPV6_PLD_MAXLEN`).
pub const ICMP6_QUOTE_MAX: usize = 1280 - 40 - 8;
/// The longest answer [`reply`] returns (an ICMPv6 error of the minimum MTU).
pub const REPLY_MAX: usize = 1280;

/// What the caller knows besides the blocked packet's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReplyOpts {
    /// The IPv4 identification of the answer (the kernel's `ip_randomid()`).
    pub ip_id: u16,
    /// The blocked packet came as link-layer broadcast or multicast (the kernel's
    /// `M_BCAST`/`M_MCAST`): no ICMP error for it.
    pub link_broadcast: bool,
}

/// Why a blocked packet gets no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum NoReply {
    /// The rule drops silently ([`Return::Drop`]).
    #[error("the rule drops silently")]
    Drop,
    /// The bytes are not a packet pf judges.
    #[error("not a packet pf judges")]
    Unparsable,
    /// A reset asked for a packet that is not TCP.
    #[error("a reset answers TCP only")]
    NotTcp,
    /// The blocked segment is itself a reset.
    #[error("pf never answers a reset")]
    Reset,
    /// The blocked segment's TCP checksum is wrong (pf sets the reason `proto-cksum`).
    #[error("bad TCP checksum")]
    BadChecksum,
    /// A fragment (pf answers none).
    #[error("a fragment")]
    Fragment,
    /// An ICMP or ICMPv6 error (or redirect): errors are not answered with errors.
    #[error("an ICMP error is not answered")]
    IcmpError,
    /// Sent to a multicast or broadcast address, or as link-layer broadcast.
    #[error("multicast or broadcast destination")]
    Broadcast,
    /// From a source address an error cannot go back to.
    #[error("unusable source address")]
    BadSource,
    /// An ICMP type the kernel cannot send (above `ICMP_MAXTYPE`, 40).
    #[error("bad ICMP type")]
    BadType,
}

impl NoReply {
    /// The pf reason the decision takes because of this (only a bad checksum changes it).
    pub fn reason(self) -> Option<Reason> {
        (self == NoReply::BadChecksum).then_some(Reason::ProtoCksum)
    }
}

/// The answer pf sends for `blocked` (its bytes from the IP header on) under the return `ret`
/// of the deciding rule, as an IP packet; or why there is none.
pub fn reply(blocked: &[u8], ret: Return, opts: &ReplyOpts) -> Result<Vec<u8>, NoReply> {
    match ret {
        Return::Drop => Err(NoReply::Drop),
        Return::Rst { ttl } => tcp_reset(blocked, ttl, opts),
        Return::Icmp { ty, code } => icmp_error(blocked, ty, code, opts),
    }
}

/// The TCP reset pf sends for the blocked segment `blocked` (`ttl` 0: the default).
pub fn tcp_reset(blocked: &[u8], ttl: u8, opts: &ReplyOpts) -> Result<Vec<u8>, NoReply> {
    let pkt = Packet::parse(blocked).map_err(|_| NoReply::Unparsable)?;
    if pkt.fragment {
        return Err(NoReply::Fragment);
    }
    if pkt.proto != ipproto::TCP {
        return Err(NoReply::NotTcp);
    }
    if pkt.tcp_flags & th::RST != 0 {
        return Err(NoReply::Reset);
    }
    let seg = pkt.l4();
    if seg.len() < 20 {
        return Err(NoReply::Unparsable);
    }
    let (src, dst) = addrs(blocked, pkt.af);
    if checksum::finish(checksum::add(
        checksum::pseudo(src, dst, ipproto::TCP, seg.len() as u32),
        seg,
    )) != 0
    {
        return Err(NoReply::BadChecksum);
    }
    let be32 = |at: usize| u32::from_be_bytes([seg[at], seg[at + 1], seg[at + 2], seg[at + 3]]);
    let hlen = usize::from(seg[12] >> 4) * 4;
    let payload = seg.len().saturating_sub(hlen) as u32;
    let mut ack = be32(4).wrapping_add(payload);
    if pkt.tcp_flags & th::SYN != 0 {
        ack = ack.wrapping_add(1);
    }
    if pkt.tcp_flags & th::FIN != 0 {
        ack = ack.wrapping_add(1);
    }
    let mut tcp = [0u8; 20];
    tcp[0..2].copy_from_slice(&seg[2..4]);
    tcp[2..4].copy_from_slice(&seg[0..2]);
    tcp[4..8].copy_from_slice(&be32(8).to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = th::RST | th::ACK;
    let ttl = match pkt.af {
        Family::Inet if ttl != 0 => ttl,
        Family::Inet => IP_DEFTTL,
        // pf_build_tcp sets IPV6_DEFHLIM whatever the rule says.
        Family::Inet6 => IP6_DEFHLIM,
    };
    Ok(build(pkt.af, dst, src, ipproto::TCP, &tcp, &[], 16, ttl, opts.ip_id, IpKind::Reset))
}

/// The ICMP (IPv4) or ICMPv6 (IPv6) error of type `ty` and code `code` the kernel sends for
/// `blocked`.
pub fn icmp_error(blocked: &[u8], ty: u8, code: u8, opts: &ReplyOpts) -> Result<Vec<u8>, NoReply> {
    let pkt = Packet::parse(blocked).map_err(|_| NoReply::Unparsable)?;
    if pkt.fragment {
        return Err(NoReply::Fragment);
    }
    let total = (pkt.len as usize).min(blocked.len());
    match pkt.af {
        Family::Inet => icmp4_error(&pkt, &blocked[..total], ty, code, opts),
        Family::Inet6 => icmp6_error(&pkt, &blocked[..total], ty, code, opts),
    }
}

/// ICMP types that are not errors (`ICMP_INFOTYPE`).
pub(crate) fn icmp_info_type(ty: u8) -> bool {
    matches!(ty, 0 | 8 | 9 | 10 | 13 | 14 | 15 | 16 | 17 | 18)
}

fn icmp4_error(
    pkt: &Packet<'_>,
    orig: &[u8],
    ty: u8,
    code: u8,
    opts: &ReplyOpts,
) -> Result<Vec<u8>, NoReply> {
    const ICMP_REDIRECT: u8 = 5;
    const ICMP_PARAMPROB: u8 = 12;
    if ty > 40 {
        return Err(NoReply::BadType);
    }
    let l4 = pkt.l4();
    if pkt.proto == ipproto::ICMP && ty != ICMP_REDIRECT && l4.len() >= 8 && !icmp_info_type(l4[0])
    {
        return Err(NoReply::IcmpError);
    }
    let (src, dst) = addrs(orig, Family::Inet);
    let dst_word = u32::from_be_bytes([dst[0], dst[1], dst[2], dst[3]]);
    if opts.link_broadcast || dst_word >> 28 == 0xe || dst_word == u32::MAX {
        return Err(NoReply::Broadcast);
    }
    // icmp_reflect: !in_canforward(src) and not loopback.
    let s = src[0];
    if s >= 224 || s == 0 {
        return Err(NoReply::BadSource);
    }
    let hlen = usize::from(orig[0] & 0x0f) * 4;
    let ip_len = usize::from(u16::from_be_bytes([orig[2], orig[3]]));
    let quote = &orig[..(hlen + ip_len.min(8)).min(orig.len())];
    let mut icmp = [0u8; 8];
    icmp[0] = ty;
    icmp[1] = code;
    if ty == ICMP_PARAMPROB {
        icmp[4] = code;
        icmp[1] = 0;
    }
    Ok(build(
        Family::Inet,
        dst,
        src,
        ipproto::ICMP,
        &icmp,
        quote,
        2,
        ICMP_TTL,
        opts.ip_id,
        IpKind::Icmp,
    ))
}

fn icmp6_error(
    pkt: &Packet<'_>,
    orig: &[u8],
    ty: u8,
    code: u8,
    opts: &ReplyOpts,
) -> Result<Vec<u8>, NoReply> {
    const PACKET_TOO_BIG: u8 = 2;
    const PARAM_PROB: u8 = 4;
    const PARAMPROB_OPTION: u8 = 2;
    const ECHO_REQUEST: u8 = 128;
    const ND_REDIRECT: u8 = 137;
    let (src, dst) = addrs(orig, Family::Inet6);
    let exempt = ty == PACKET_TOO_BIG || (ty == PARAM_PROB && code == PARAMPROB_OPTION);
    if (opts.link_broadcast || dst[0] == 0xff) && !exempt {
        return Err(NoReply::Broadcast);
    }
    if src.iter().all(|&b| b == 0) || src[0] == 0xff {
        return Err(NoReply::BadSource);
    }
    if pkt.proto == ipproto::ICMPV6 {
        let l4 = pkt.l4();
        if l4.len() < 8 {
            return Err(NoReply::Unparsable);
        }
        if l4[0] < ECHO_REQUEST || l4[0] == ND_REDIRECT {
            return Err(NoReply::IcmpError);
        }
    }
    // The answer's source is the blocked packet's destination: a multicast one (the two
    // exempt types) has no unicast address to answer from offline.
    if dst[0] == 0xff {
        return Err(NoReply::Broadcast);
    }
    let quote = &orig[..orig.len().min(ICMP6_QUOTE_MAX)];
    let mut icmp = [0u8; 8];
    icmp[0] = ty;
    icmp[1] = code;
    Ok(build(
        Family::Inet6,
        dst,
        src,
        ipproto::ICMPV6,
        &icmp,
        quote,
        2,
        IP6_DEFHLIM,
        0,
        IpKind::Icmp,
    ))
}

/// A TCP segment pf makes itself (pf's `pf_send_tcp`): `synproxy`'s handshakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnSegment {
    /// The family.
    pub af: Family,
    /// Source address (pf's 16 bytes as a key: IPv4 in the top 32 bits).
    pub src: u128,
    /// Destination address.
    pub dst: u128,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// TCP flags.
    pub flags: u8,
    /// Window.
    pub win: u16,
    /// An MSS option to carry (0: none).
    pub mss: u16,
    /// The IPv4 identification.
    pub ip_id: u16,
}

/// The bytes of `s` as pf's `pf_build_tcp` lays them out (IPv4: TOS low-delay, DF, the
/// default TTL; IPv6: the default hop limit), every checksum filled in.
pub fn own_segment(s: &OwnSegment) -> Vec<u8> {
    let mut tcp = vec![0u8; if s.mss != 0 { 24 } else { 20 }];
    tcp[0..2].copy_from_slice(&s.sport.to_be_bytes());
    tcp[2..4].copy_from_slice(&s.dport.to_be_bytes());
    tcp[4..8].copy_from_slice(&s.seq.to_be_bytes());
    tcp[8..12].copy_from_slice(&s.ack.to_be_bytes());
    tcp[12] = ((tcp.len() / 4) as u8) << 4;
    tcp[13] = s.flags;
    tcp[14..16].copy_from_slice(&s.win.to_be_bytes());
    if s.mss != 0 {
        tcp[20..22].copy_from_slice(&[2, 4]);
        tcp[22..24].copy_from_slice(&s.mss.to_be_bytes());
    }
    let (src, dst) = (s.src.to_be_bytes(), s.dst.to_be_bytes());
    let (n, ttl) = match s.af {
        Family::Inet => (4, IP_DEFTTL),
        Family::Inet6 => (16, IP6_DEFHLIM),
    };
    build(s.af, &src[..n], &dst[..n], ipproto::TCP, &tcp, &[], 16, ttl, s.ip_id, IpKind::Reset)
}

/// The source and destination address bytes of an IPv4 or IPv6 packet already parsed.
fn addrs(ip: &[u8], af: Family) -> (&[u8], &[u8]) {
    match af {
        Family::Inet => (&ip[12..16], &ip[16..20]),
        Family::Inet6 => (&ip[8..24], &ip[24..40]),
    }
}

/// Which IPv4 header pf's path writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IpKind {
    /// `pf_build_tcp`: TOS lowdelay, DF.
    Reset,
    /// `icmp_error`: TOS 0, no DF.
    Icmp,
}

/// An IP packet from `src` to `dst` holding the transport header `hdr` and then `data`, with
/// the transport checksum (at `csum_at` in `hdr`, over the pseudo-header for TCP and ICMPv6)
/// and the IPv4 header checksum filled in. The IPv6 hop limit is `ttl` too.
#[allow(clippy::too_many_arguments)]
fn build(
    af: Family,
    src: &[u8],
    dst: &[u8],
    proto: u8,
    hdr: &[u8],
    data: &[u8],
    csum_at: usize,
    ttl: u8,
    ip_id: u16,
    kind: IpKind,
) -> Vec<u8> {
    let l4_len = hdr.len() + data.len();
    let ip_len = match af {
        Family::Inet => 20,
        Family::Inet6 => 40,
    };
    let mut out = Vec::with_capacity(ip_len + l4_len);
    match af {
        Family::Inet => {
            let (tos, off) = match kind {
                IpKind::Reset => (0x10u8, 0x4000u16),
                IpKind::Icmp => (0, 0),
            };
            out.extend_from_slice(&[0x45, tos]);
            out.extend_from_slice(&((ip_len + l4_len) as u16).to_be_bytes());
            out.extend_from_slice(&ip_id.to_be_bytes());
            out.extend_from_slice(&off.to_be_bytes());
            out.extend_from_slice(&[ttl, proto, 0, 0]);
            out.extend_from_slice(src);
            out.extend_from_slice(dst);
            let sum = checksum::internet(&out);
            out[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        Family::Inet6 => {
            out.extend_from_slice(&[0x60, 0, 0, 0]);
            out.extend_from_slice(&(l4_len as u16).to_be_bytes());
            out.extend_from_slice(&[proto, ttl]);
            out.extend_from_slice(src);
            out.extend_from_slice(dst);
        }
    }
    let l4 = out.len();
    out.extend_from_slice(hdr);
    out.extend_from_slice(data);
    // ICMP (IPv4) has no pseudo-header; TCP and ICMPv6 do.
    let start =
        if proto == ipproto::ICMP { 0 } else { checksum::pseudo(src, dst, proto, l4_len as u32) };
    let sum = checksum::finish(checksum::add(start, &out[l4..]));
    out[l4 + csum_at..l4 + csum_at + 2].copy_from_slice(&sum.to_be_bytes());
    out
}
