//! The lengths and checksums [`Packet::finish`](super::Packet::finish) fills in, innermost
//! layer first, through the headers' views.

use sift_wire::icmp::{IcmpPacket, Icmpv6Packet};
use sift_wire::ipv4::{self, Ipv4Packet};
use sift_wire::ipv6::{self, Ipv6Packet};
use sift_wire::pppoe::{self, PppoePacket};
use sift_wire::sctp::{self, SctpPacket};
use sift_wire::tcp::{self, TcpPacket};
use sift_wire::udp::{self, UdpPacket};

/// A length or checksum to fill in at [`Packet::finish`](super::Packet::finish).
#[derive(Clone, Copy, Debug)]
pub struct Fixup {
    pub(super) kind: FixupKind,
    pub(super) start: usize,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum FixupKind {
    /// IPv4 total length and header checksum.
    Ipv4,
    /// IPv6 payload length.
    Ipv6,
    /// UDP length and (optionally) checksum; `ip` is the enclosing IP header.
    Udp { ip: IpRef, checksum: bool },
    /// TCP checksum.
    Tcp { ip: IpRef },
    /// ICMP checksum (no pseudo-header).
    Icmp,
    /// ICMPv6 checksum.
    Icmpv6 { ip: IpRef },
    /// SCTP CRC32c.
    Sctp,
    /// PPPoE payload length.
    Pppoe,
}

/// The IP header that a transport checksum's pseudo-header comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum IpRef {
    None,
    V4(usize),
    V6(usize),
}

/// The addresses of the IP header at `ip` (empty without one), for a pseudo-header.
fn addresses(buf: &[u8], ip: IpRef) -> ([u8; 16], [u8; 16], usize) {
    let (mut src, mut dst) = ([0u8; 16], [0u8; 16]);
    let n = match ip {
        IpRef::V4(at) if buf.len() >= at + ipv4::HEADER_LEN => {
            let h = Ipv4Packet::new_unchecked(&buf[at..]);
            src[..4].copy_from_slice(&h.src_addr());
            dst[..4].copy_from_slice(&h.dst_addr());
            4
        }
        IpRef::V6(at) if buf.len() >= at + ipv6::HEADER_LEN => {
            let h = Ipv6Packet::new_unchecked(&buf[at..]);
            src = h.src_addr();
            dst = h.dst_addr();
            16
        }
        _ => 0,
    };
    (src, dst, n)
}

fn clamp16(n: usize) -> u16 {
    n.min(0xffff) as u16
}

pub(super) fn apply(buf: &mut [u8], fix: Fixup, end: usize) {
    let start = fix.start;
    let Some(region) = buf.get(start..end) else { return };
    let len = region.len();
    let (src, dst, n) = match fix.kind {
        FixupKind::Udp { ip, .. } | FixupKind::Tcp { ip } | FixupKind::Icmpv6 { ip } => {
            addresses(buf, ip)
        }
        _ => ([0; 16], [0; 16], 0),
    };
    let (src, dst) = (&src[..n], &dst[..n]);
    let region = &mut buf[start..end];
    match fix.kind {
        FixupKind::Ipv4 => {
            if len >= ipv4::HEADER_LEN {
                let mut h = Ipv4Packet::new_unchecked(region);
                h.set_total_len(clamp16(len));
                if h.header_len() <= len {
                    h.fill_checksum();
                }
            }
        }
        FixupKind::Ipv6 => {
            if len >= ipv6::HEADER_LEN {
                Ipv6Packet::new_unchecked(region).set_payload_len(clamp16(len - ipv6::HEADER_LEN));
            }
        }
        FixupKind::Pppoe => {
            if len >= pppoe::HEADER_LEN {
                PppoePacket::new_unchecked(region)
                    .set_payload_len(clamp16(len - pppoe::HEADER_LEN));
            }
        }
        FixupKind::Udp { checksum, .. } => {
            if len >= udp::HEADER_LEN {
                let mut u = UdpPacket::new_unchecked(region);
                u.set_len(clamp16(len));
                u.set_checksum(0);
                if checksum {
                    u.fill_checksum(src, dst);
                }
            }
        }
        FixupKind::Tcp { .. } => {
            if len >= tcp::HEADER_LEN {
                TcpPacket::new_unchecked(region).fill_checksum(src, dst);
            }
        }
        FixupKind::Icmp => {
            if len >= sift_wire::icmp::HEADER_LEN {
                IcmpPacket::new_unchecked(region).fill_checksum();
            }
        }
        FixupKind::Icmpv6 { .. } => {
            if len >= sift_wire::icmp::HEADER_LEN {
                Icmpv6Packet::new_unchecked(region).fill_checksum(src, dst);
            }
        }
        FixupKind::Sctp => {
            if len >= sctp::HEADER_LEN {
                SctpPacket::new_unchecked(region).fill_checksum();
            }
        }
    }
}
