//! The bytes of fragments: reading one (what pf's `pf_setup_pdesc`, `pf_walk_header6` and
//! `pf_normalize_ip{,6}` learn before `pf_reassemble{,6}`), writing the reassembled datagram's
//! header as pf leaves it, and cutting an IPv6 datagram again (`pf_refragment6`).

use crate::Reason;

use super::{Family, Refrag};

/// IPv4 header without options.
const IPV4_HEADER: usize = 20;
/// IPv6 header.
const IPV6_HEADER: usize = 40;
/// IPv6 fragment header.
const FRAG6_HEADER: usize = 8;
/// IPv4 don't-fragment flag (in the flags and offset word).
const IP_DF: u16 = 0x4000;
/// IPv4 more-fragments flag.
const IP_MF: u16 = 0x2000;
/// IPv4 fragment offset, in 8-octet units.
const IP_OFFMASK: u16 = 0x1fff;
/// IPv6 fragment offset, in octets (the low 3 bits are flags).
const IP6F_OFF_MASK: u16 = 0xfff8;
/// IPv6 more-fragments flag.
const IP6F_MORE_FRAG: u16 = 0x0001;
/// pf's `pf_hdr_limit`: the most IPv6 extension headers walked.
const PF_HDR_LIMIT: usize = 20;

mod proto {
    pub const HOPOPTS: u8 = 0;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const AH: u8 = 51;
    pub const DSTOPTS: u8 = 60;
}

/// The queue a fragment belongs to, as pf keys it: family, protocol (IPv4 only; 0 for IPv6,
/// whose later fragments do not carry it), source, destination and identification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    /// `af`, `proto` (the `pf_frnode`), then the 32-bit id.
    pub node: NodeKey,
    /// The identification (IPv4's 16 bits or IPv6's 32).
    pub id: u32,
}

/// pf's `pf_frnode` key: what fragments of one source to one destination share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct NodeKey {
    /// Family and protocol: `[4 or 6, proto]`.
    pub af_proto: [u8; 2],
    /// Source then destination (IPv4: the first 4 bytes of each).
    pub addrs: [u8; 32],
}

/// A fragment as read from its packet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fragment<'a> {
    /// Offset of its data (`fe_off`).
    pub off: u16,
    /// Length of its data (`fe_len`).
    pub len: u16,
    /// More fragments follow.
    pub mff: bool,
    /// Its data: `len` bytes.
    pub data: &'a [u8],
    /// Its headers (`fe_hdrlen` bytes): kept when it is the first fragment.
    pub head: &'a [u8],
    /// IPv6: offset of the last extension header before the fragment header, or 0.
    pub extoff: u16,
}

/// What a packet is, for reassembly.
pub(super) enum Parsed<'a> {
    /// Not a fragment pf reassembles.
    Whole,
    /// Refused before reassembly, with pf's reason.
    Refused(Reason),
    /// A fragment of the datagram `Key`; the family is the key's.
    Fragment(Family, Key, Fragment<'a>),
}

/// Reads `ip`: an IPv4 or IPv6 packet.
pub(super) fn parse(ip: &[u8], no_df: bool) -> Parsed<'_> {
    match ip.first().map(|b| b >> 4) {
        Some(4) => parse4(ip, no_df),
        Some(6) => parse6(ip),
        Some(_) => Parsed::Refused(Reason::Normalize),
        None => Parsed::Refused(Reason::Short),
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// IPv4: `pf_setup_pdesc`'s length checks, `pf_walk_header`'s header length check, then
/// `pf_normalize_ip`: no fragment, `no-df`, a fragment with DF.
fn parse4(ip: &[u8], no_df: bool) -> Parsed<'_> {
    if ip.len() < IPV4_HEADER {
        return Parsed::Refused(Reason::Short);
    }
    let total = usize::from(be16(ip, 2));
    if ip.len() < total {
        return Parsed::Refused(Reason::Short);
    }
    let hlen = usize::from(ip[0] & 0x0f) * 4;
    if hlen < IPV4_HEADER || hlen > total {
        return Parsed::Refused(Reason::Short);
    }
    let offw = be16(ip, 6);
    let off = (offw & IP_OFFMASK) << 3;
    let mff = offw & IP_MF != 0;
    if off == 0 && !mff {
        return Parsed::Whole;
    }
    if offw & IP_DF != 0 && !no_df {
        return Parsed::Refused(Reason::Fragment);
    }
    let mut addrs = [0u8; 32];
    addrs[..4].copy_from_slice(&ip[12..16]);
    addrs[16..20].copy_from_slice(&ip[16..20]);
    let key = Key { node: NodeKey { af_proto: [4, ip[9]], addrs }, id: u32::from(be16(ip, 4)) };
    let data = &ip[hlen..total];
    Parsed::Fragment(
        Family::Inet,
        key,
        Fragment { off, len: data.len() as u16, mff, data, head: &ip[..hlen], extoff: 0 },
    )
}

/// IPv6: `pf_setup_pdesc`'s length checks and the part of `pf_walk_header6` that finds the
/// fragment header (`fragoff`) and the extension header before it (`extoff`). Atomic
/// fragments (offset 0, no more fragments; RFC 6946) are not reassembled.
fn parse6(ip: &[u8]) -> Parsed<'_> {
    if ip.len() < IPV6_HEADER {
        return Parsed::Refused(Reason::Short);
    }
    let end = IPV6_HEADER + usize::from(be16(ip, 4));
    if ip.len() < end {
        return Parsed::Refused(Reason::Short);
    }
    let mut off = IPV6_HEADER;
    let mut next = ip[6];
    let (mut fragoff, mut extoff, mut frag_headers) = (0usize, 0usize, 0);
    let mut walked = 0;
    loop {
        if walked == PF_HDR_LIMIT {
            return Parsed::Refused(Reason::IpOption);
        }
        walked += 1;
        match next {
            proto::FRAGMENT => {
                frag_headers += 1;
                if frag_headers > 1 {
                    return Parsed::Refused(Reason::Fragment);
                }
                if end < off + FRAG6_HEADER {
                    return Parsed::Refused(Reason::Short);
                }
                let offlg = be16(ip, off + 2);
                if offlg & IP6F_OFF_MASK != 0 {
                    fragoff = off;
                    break;
                }
                if offlg & IP6F_MORE_FRAG != 0 {
                    fragoff = off;
                }
                next = ip[off];
                off += FRAG6_HEADER;
            }
            proto::HOPOPTS | proto::ROUTING | proto::AH | proto::DSTOPTS => {
                // Fragments may be short: the rest belongs to the fragmentable part.
                if fragoff != 0 && end < off + 2 {
                    break;
                }
                if end < off + 2 {
                    return Parsed::Refused(Reason::Short);
                }
                if fragoff == 0 {
                    extoff = off;
                }
                let units = usize::from(ip[off + 1]);
                let len = if next == proto::AH { (units + 2) * 4 } else { (units + 1) * 8 };
                next = ip[off];
                off += len;
            }
            _ => break,
        }
    }
    if fragoff == 0 {
        return Parsed::Whole;
    }
    let hdrlen = fragoff + FRAG6_HEADER;
    let offlg = be16(ip, fragoff + 2);
    let mut addrs = [0u8; 32];
    addrs.copy_from_slice(&ip[8..40]);
    let key = Key {
        node: NodeKey { af_proto: [6, 0], addrs },
        id: u32::from_be_bytes([
            ip[fragoff + 4],
            ip[fragoff + 5],
            ip[fragoff + 6],
            ip[fragoff + 7],
        ]),
    };
    let data = &ip[hdrlen..end];
    Parsed::Fragment(
        Family::Inet6,
        key,
        Fragment {
            off: offlg & IP6F_OFF_MASK,
            len: data.len() as u16,
            mff: offlg & IP6F_MORE_FRAG != 0,
            data,
            head: &ip[..hdrlen],
            extoff: extoff as u16,
        },
    )
}

/// The reassembled IPv4 datagram's header, rewritten in place at the front of `out` (whose
/// first `hlen` bytes are the first fragment's header): total length, flags and offset
/// cleared, header checksum. pf keeps only DF (`pf_normalize_ip`'s `no_fragment`), but DF never
/// survives to here: a fragment with DF is dropped, or has it cleared by `no-df`.
pub(super) fn finish4(out: &mut [u8], hlen: usize) {
    let total = out.len() as u16;
    out[2..4].copy_from_slice(&total.to_be_bytes());
    out[6..8].copy_from_slice(&[0, 0]);
    out[10..12].copy_from_slice(&[0, 0]);
    let sum = sift_wire::checksum::internet(&out[..hlen]);
    out[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The reassembled IPv6 datagram, from the first fragment's headers `head` (its fragment
/// header last) and the data: the fragment header removed, the payload length set, and its
/// next header written where the fragment header was announced (`extoff`, else the IPv6
/// header). `None` when the datagram would exceed `IPV6_MAXPACKET`.
pub(super) fn start6(head: &[u8], extoff: u16, total: usize, out: &mut Vec<u8>) -> Option<()> {
    let hdrlen = head.len() - FRAG6_HEADER;
    let plen = hdrlen - IPV6_HEADER + total;
    if plen > super::queue::IP_MAXPACKET {
        return None;
    }
    let next = head[hdrlen];
    out.extend_from_slice(&head[..hdrlen]);
    out[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
    if extoff != 0 {
        out[usize::from(extoff)] = next;
    } else {
        out[6] = next;
    }
    Some(())
}

/// pf's `pf_refragment6` (with `ip6_fragment`): cuts `datagram` back into fragments of
/// `refrag.maxlen` data octets (rounded down to 8), each with the unfragmentable headers, a
/// fragment header carrying the original identification, and the payload length set.
pub(super) fn refragment6(datagram: &[u8], refrag: &Refrag) -> Result<Vec<Vec<u8>>, Reason> {
    if datagram.len() < IPV6_HEADER || datagram[0] >> 4 != 6 {
        return Err(Reason::Short);
    }
    let end = IPV6_HEADER + usize::from(be16(datagram, 4));
    let hdrlen = usize::from(refrag.hdrlen);
    let extoff = usize::from(refrag.extoff);
    if datagram.len() < end || hdrlen < IPV6_HEADER || hdrlen > end || extoff >= hdrlen {
        return Err(Reason::Short);
    }
    let len = usize::from(refrag.maxlen) & !7;
    if len < 8 {
        // ip6_fragment's EMSGSIZE: pf drops the packet.
        return Err(Reason::Fragment);
    }
    let next_at = if extoff != 0 { extoff } else { 6 };
    let next = datagram[next_at];
    let mut out = Vec::with_capacity((end - hdrlen).div_ceil(len));
    let mut off = hdrlen;
    while off < end {
        let chunk = len.min(end - off);
        let more = off + chunk < end;
        let mut f = Vec::with_capacity(hdrlen + FRAG6_HEADER + chunk);
        f.extend_from_slice(&datagram[..hdrlen]);
        f[next_at] = proto::FRAGMENT;
        let plen = (hdrlen - IPV6_HEADER + FRAG6_HEADER + chunk) as u16;
        f[4..6].copy_from_slice(&plen.to_be_bytes());
        let offlg = (off - hdrlen) as u16 | if more { IP6F_MORE_FRAG } else { 0 };
        f.extend_from_slice(&[next, 0]);
        f.extend_from_slice(&offlg.to_be_bytes());
        f.extend_from_slice(&refrag.id.to_be_bytes());
        f.extend_from_slice(&datagram[off..off + chunk]);
        out.push(f);
        off += chunk;
    }
    Ok(out)
}
