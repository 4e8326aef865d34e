//! What pf judges: the fields of an IPv4 or IPv6 packet its rules look at, read without
//! copying from the raw bytes through sift-wire's views, and the facts about a packet that are
//! not in its bytes (interface, direction, where it was received, its tag).
//!
//! Why its own module: pf reads a packet once (`pf_setup_pdesc`) into a descriptor and every
//! rule is tested against that descriptor; parsing here follows pf's: IPv6 extension headers
//! are walked to the upper layer, a fragment (more-fragments set or an offset) carries no
//! transport fields, a transport header that does not fit or ICMP of the other family is
//! refused with pf's reason. Any bytes give a packet or a [`PacketError`], never a panic.

use sift_wire::icmp::{IcmpPacket, Icmpv6Packet};
use sift_wire::ipproto;
use sift_wire::ipv4::Ipv4Packet;
use sift_wire::ipv6::Ipv6Packet;
use sift_wire::ipv6ext::{Ipv6ExtHeader, is_ext_header};
use sift_wire::tcp::TcpPacket;

use crate::Reason;

/// An address family of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// IPv4.
    Inet,
    /// IPv6.
    Inet6,
}

/// A direction through an interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Arriving.
    In,
    /// Leaving.
    Out,
}

/// Why bytes are not a packet pf would judge (pf drops them before its rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The IP header or the transport header pf reads does not fit (pf's `short`).
    #[error("{0} header does not fit")]
    Short(&'static str),
    /// A header length or total length that cannot be (pf's `bad-offset`).
    #[error("bad {0}")]
    BadOffset(&'static str),
    /// Not IPv4 or IPv6, or ICMP of the other family (pf's `normalize`).
    #[error("{0}")]
    Normalize(&'static str),
}

impl PacketError {
    /// The pf reason a packet refused for this error is blocked with.
    pub fn reason(self) -> Reason {
        match self {
            PacketError::Short(_) => Reason::Short,
            PacketError::BadOffset(_) => Reason::BadOffset,
            PacketError::Normalize(_) => Reason::Normalize,
        }
    }
}

/// The fields of a packet pf's rules test (pf's `pf_pdesc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The address family.
    pub af: Family,
    /// The upper-layer protocol (after IPv6 extension headers).
    pub proto: u8,
    /// Source address as pf's 16 bytes, big-endian, IPv4 in the top 32 bits.
    pub src: u128,
    /// Destination address, as `src`.
    pub dst: u128,
    /// TCP/UDP source port (0 otherwise).
    pub sport: u16,
    /// TCP/UDP destination port (0 otherwise).
    pub dport: u16,
    /// TCP flags (FIN 0x01 … CWR 0x80).
    pub tcp_flags: u8,
    /// ICMP or ICMPv6 type.
    pub icmp_type: u8,
    /// ICMP or ICMPv6 code.
    pub icmp_code: u8,
    /// Type of service / traffic class without the ECN bits (pf's `pd->tos`).
    pub tos: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// A fragment (IPv4 more-fragments or an offset; an IPv6 fragment header saying the same):
    /// pf's `PF_VPROTO_FRAGMENT`, no transport fields.
    pub fragment: bool,
    /// The IP total length as the header says (IPv6: payload length + 40).
    pub len: u32,
    /// The bytes, from the IP header on.
    pub bytes: &'a [u8],
}

/// TCP flag bits.
pub mod tcp_flags {
    /// FIN
    pub const FIN: u8 = 0x01;
    /// SYN
    pub const SYN: u8 = 0x02;
    /// RST
    pub const RST: u8 = 0x04;
    /// PUSH
    pub const PUSH: u8 = 0x08;
    /// ACK
    pub const ACK: u8 = 0x10;
    /// URG
    pub const URG: u8 = 0x20;
    /// ECE
    pub const ECE: u8 = 0x40;
    /// CWR
    pub const CWR: u8 = 0x80;
}

impl<'a> Packet<'a> {
    /// Reads an IPv4 or IPv6 packet (the first byte's version says which).
    pub fn parse(bytes: &'a [u8]) -> Result<Packet<'a>, PacketError> {
        match bytes.first().map(|b| b >> 4) {
            Some(4) => Packet::parse_v4(bytes),
            Some(6) => Packet::parse_v6(bytes),
            Some(_) => Err(PacketError::Normalize("not IPv4 or IPv6")),
            None => Err(PacketError::Short("IP")),
        }
    }

    fn parse_v4(bytes: &'a [u8]) -> Result<Packet<'a>, PacketError> {
        if bytes.len() < sift_wire::ipv4::HEADER_LEN {
            return Err(PacketError::Short("IPv4"));
        }
        let ip = Ipv4Packet::new_unchecked(bytes);
        let hlen = ip.header_len();
        if hlen < sift_wire::ipv4::HEADER_LEN {
            return Err(PacketError::BadOffset("IPv4 header length"));
        }
        let total = usize::from(ip.total_len());
        if total < hlen {
            return Err(PacketError::BadOffset("IPv4 total length"));
        }
        if bytes.len() < total {
            return Err(PacketError::Short("IPv4"));
        }
        let fragment = ip.more_frags() || ip.frag_offset() != 0;
        let mut p = Packet {
            af: Family::Inet,
            proto: ip.protocol(),
            src: u128::from(u32::from_be_bytes(ip.src_addr())) << 96,
            dst: u128::from(u32::from_be_bytes(ip.dst_addr())) << 96,
            sport: 0,
            dport: 0,
            tcp_flags: 0,
            icmp_type: 0,
            icmp_code: 0,
            tos: ip.tos() & !0x03,
            ttl: ip.ttl(),
            fragment,
            len: total as u32,
            bytes,
        };
        if !fragment {
            p.transport(&bytes[hlen..total])?;
        }
        Ok(p)
    }

    fn parse_v6(bytes: &'a [u8]) -> Result<Packet<'a>, PacketError> {
        if bytes.len() < sift_wire::ipv6::HEADER_LEN {
            return Err(PacketError::Short("IPv6"));
        }
        let ip = Ipv6Packet::new_unchecked(bytes);
        let total = sift_wire::ipv6::HEADER_LEN + usize::from(ip.payload_len());
        if bytes.len() < total {
            return Err(PacketError::Short("IPv6"));
        }
        let data = &bytes[sift_wire::ipv6::HEADER_LEN..total];
        let mut next = ip.next_header();
        let mut off = 0usize;
        let mut fragment = false;
        let mut count = 0;
        // Walk the extension headers pf walks (hop-by-hop, routing, destination options, AH,
        // fragment) to the upper layer.
        loop {
            let kind = next;
            if !is_ext_header(kind) {
                break;
            }
            count += 1;
            if count > 64 {
                return Err(PacketError::BadOffset("IPv6 extension header chain"));
            }
            let h = Ipv6ExtHeader::new_checked(kind, &data[off..])
                .map_err(|_| PacketError::Short("IPv6 extension"))?;
            if kind == ipproto::FRAGMENT && (h.frag_offset() != 0 || h.more_frags()) {
                fragment = true;
            }
            next = h.next_header();
            off += h.header_len();
            if fragment {
                break;
            }
        }
        let tc = ip.traffic_class();
        let mut p = Packet {
            af: Family::Inet6,
            proto: next,
            src: u128::from_be_bytes(ip.src_addr()),
            dst: u128::from_be_bytes(ip.dst_addr()),
            sport: 0,
            dport: 0,
            tcp_flags: 0,
            icmp_type: 0,
            icmp_code: 0,
            tos: tc & !0x03,
            ttl: ip.hop_limit(),
            fragment,
            len: total as u32,
            bytes,
        };
        if !fragment {
            p.transport(&data[off..])?;
        }
        Ok(p)
    }

    /// Reads the transport fields pf's rules test.
    fn transport(&mut self, t: &[u8]) -> Result<(), PacketError> {
        match self.proto {
            ipproto::TCP => {
                let tcp = TcpPacket::new_checked(t).map_err(|_| PacketError::Short("TCP"))?;
                let (s, d) = sift_wire::ports::ports(t).ok_or(PacketError::Short("TCP"))?;
                self.sport = s;
                self.dport = d;
                self.tcp_flags = (tcp.flags() & 0xff) as u8;
            }
            ipproto::UDP => {
                if t.len() < 8 {
                    return Err(PacketError::Short("UDP"));
                }
                let (s, d) = sift_wire::ports::ports(t).ok_or(PacketError::Short("UDP"))?;
                self.sport = s;
                self.dport = d;
            }
            ipproto::ICMP => {
                if self.af != Family::Inet {
                    return Err(PacketError::Normalize("ICMP in IPv6"));
                }
                let icmp = IcmpPacket::new_checked(t).map_err(|_| PacketError::Short("ICMP"))?;
                self.icmp_type = icmp.msg_type();
                self.icmp_code = icmp.msg_code();
            }
            ipproto::ICMPV6 => {
                if self.af != Family::Inet6 {
                    return Err(PacketError::Normalize("ICMPv6 in IPv4"));
                }
                let icmp =
                    Icmpv6Packet::new_checked(t).map_err(|_| PacketError::Short("ICMPv6"))?;
                self.icmp_type = icmp.msg_type();
                self.icmp_code = icmp.msg_code();
            }
            _ => {}
        }
        Ok(())
    }

    /// The transport header and its data, up to the IP total length (empty for a fragment).
    pub fn l4(&self) -> &'a [u8] {
        if self.fragment {
            return &[];
        }
        let total = (self.len as usize).min(self.bytes.len());
        match self.af {
            // `get`, not indexing: a `Packet` built by hand may carry fewer bytes than its
            // fields claim.
            Family::Inet => {
                let hlen = usize::from(self.bytes.first().map_or(0, |b| b & 0x0f)) * 4;
                self.bytes.get(hlen..total).unwrap_or(&[])
            }
            Family::Inet6 => {
                let data = self.bytes.get(sift_wire::ipv6::HEADER_LEN..total).unwrap_or(&[]);
                let Some(&(mut next)) = self.bytes.get(6) else { return &[] };
                let mut off = 0usize;
                for _ in 0..64 {
                    if next == self.proto || !is_ext_header(next) {
                        break;
                    }
                    let Ok(h) = Ipv6ExtHeader::new_checked(next, data.get(off..).unwrap_or(&[]))
                    else {
                        return &[];
                    };
                    next = h.next_header();
                    off += h.header_len();
                }
                data.get(off..).unwrap_or(&[])
            }
        }
    }

    /// The source address.
    pub fn src_addr(&self) -> std::net::IpAddr {
        addr(self.src, self.af)
    }

    /// The destination address.
    pub fn dst_addr(&self) -> std::net::IpAddr {
        addr(self.dst, self.af)
    }
}

fn addr(key: u128, af: Family) -> std::net::IpAddr {
    match af {
        Family::Inet => std::net::IpAddr::V4(std::net::Ipv4Addr::from((key >> 96) as u32)),
        Family::Inet6 => std::net::IpAddr::V6(std::net::Ipv6Addr::from(key)),
    }
}

/// What pf knows about a packet besides its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta<'a> {
    /// The interface the packet passes.
    pub ifname: &'a str,
    /// Which way.
    pub dir: Direction,
    /// The routing domain of the interface.
    pub rdomain: i32,
    /// The interface the packet was received on (`received-on`); `None` for packets the host
    /// sends.
    pub received_on: Option<&'a str>,
    /// The tag the packet already carries (set by an earlier pass through pf).
    pub tag: Option<&'a str>,
    /// The packet's priority (pf's `prio`, 3 by default).
    pub prio: u8,
    /// The user and group of the local socket (`user`/`group` rules), when known.
    pub uid: Option<u32>,
    /// See `uid`.
    pub gid: Option<u32>,
    /// Seconds on the firewall's clock (for `max-pkt-rate`).
    pub now: u64,
}

impl<'a> Meta<'a> {
    /// A packet passing `ifname` in direction `dir`, the other facts at their defaults.
    pub fn new(ifname: &'a str, dir: Direction) -> Meta<'a> {
        Meta {
            ifname,
            dir,
            rdomain: 0,
            received_on: if dir == Direction::In { Some(ifname) } else { None },
            tag: None,
            prio: 3,
            uid: None,
            gid: None,
            now: 0,
        }
    }
}
