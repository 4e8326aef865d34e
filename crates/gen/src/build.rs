//! Packet builders: write protocol headers into a `Vec<u8>`, outermost first.
//!
//! A [`Packet`] appends one layer per call and remembers two kinds of loose ends:
//!
//! * the **next-protocol field** of the layer just written (an EtherType, an IP protocol
//!   number, a PPP protocol, an `AF_` value…), filled in by whichever layer comes next, so
//!   `p.ethernet(..).ipv4(..).udp(..)` gets 0x0800 and 17 without the caller naming them;
//! * **length and checksum fields**, which depend on everything after the header. They are
//!   filled in by [`Packet::finish`], innermost layer first, so an outer checksum covers inner
//!   headers that are already final (VXLAN inside UDP, IPv4 inside GRE…).
//!
//! Every layer is assumed to extend to the end of the frame (no trailers), which holds for the
//! protocols here; Ethernet padding is added by the caller after `finish`. Builders never panic:
//! a layer that cannot be named by the previous layer's next-protocol field (ARP inside IPv4)
//! leaves that field as it was, and a length too large for its field is truncated to the field.

use crate::checksum::{crc32c, finish16, pseudo_v4, pseudo_v6, sum16};

/// A 48-bit MAC address.
pub type Mac = [u8; 6];

/// Protocols a layer can announce to the layer in front of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Proto {
    /// IPv4.
    Ipv4,
    /// IPv6.
    Ipv6,
    /// ARP.
    Arp,
    /// An 802.1Q tag (TPID 0x8100).
    Vlan,
    /// An 802.1ad service tag (TPID 0x88a8).
    QinQ,
    /// An MPLS label stack (unicast).
    Mpls,
    /// A PPPoE session header.
    PppoeSession,
    /// Ethernet (transparent Ethernet bridging, 0x6558).
    Ethernet,
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
    /// ICMP.
    Icmp,
    /// ICMPv6.
    Icmpv6,
    /// GRE.
    Gre,
    /// IPv6 hop-by-hop options.
    HopByHop,
    /// IPv6 routing header.
    Routing,
    /// IPv6 fragment header.
    Fragment,
    /// IPv6 destination options.
    DestOptions,
}

impl Proto {
    /// The EtherType naming this protocol.
    pub fn ethertype(self) -> Option<u16> {
        Some(match self {
            Proto::Ipv4 => 0x0800,
            Proto::Ipv6 => 0x86dd,
            Proto::Arp => 0x0806,
            Proto::Vlan => 0x8100,
            Proto::QinQ => 0x88a8,
            Proto::Mpls => 0x8847,
            Proto::PppoeSession => 0x8864,
            Proto::Ethernet => 0x6558,
            _ => return None,
        })
    }

    /// The IP protocol / IPv6 next-header number naming this protocol.
    pub fn ip_proto(self) -> Option<u8> {
        Some(match self {
            Proto::HopByHop => 0,
            Proto::Icmp => 1,
            Proto::Ipv4 => 4,
            Proto::Tcp => 6,
            Proto::Udp => 17,
            Proto::Ipv6 => 41,
            Proto::Routing => 43,
            Proto::Fragment => 44,
            Proto::Gre => 47,
            Proto::Icmpv6 => 58,
            Proto::DestOptions => 60,
            Proto::Sctp => 132,
            _ => return None,
        })
    }

    /// The PPP protocol number naming this protocol.
    pub fn ppp(self) -> Option<u16> {
        match self {
            Proto::Ipv4 => Some(0x0021),
            Proto::Ipv6 => Some(0x0057),
            _ => None,
        }
    }

    /// The BSD address family used by DLT_NULL / DLT_LOOP (IPv6 as on the BSDs: 24).
    pub fn bsd_af(self) -> Option<u32> {
        match self {
            Proto::Ipv4 => Some(2),
            Proto::Ipv6 => Some(24),
            _ => None,
        }
    }
}

/// Where the next layer's identity goes.
#[derive(Clone, Copy, Debug)]
enum NextField {
    EtherType(usize),
    IpProto(usize),
    Ppp(usize),
    AfLittle(usize),
    AfBig(usize),
}

/// A length or checksum to fill in at [`Packet::finish`].
#[derive(Clone, Copy, Debug)]
pub struct Fixup {
    kind: FixupKind,
    start: usize,
}

#[derive(Clone, Copy, Debug)]
enum FixupKind {
    /// IPv4 total length and header checksum; the header length is in the header.
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
enum IpRef {
    None,
    V4(usize),
    V6(usize),
}

/// Fields of an IPv4 header; lengths and the checksum are computed.
#[derive(Clone, Copy, Debug)]
pub struct Ipv4<'a> {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Time to live.
    pub ttl: u8,
    /// Identification.
    pub id: u16,
    /// DSCP and ECN byte.
    pub tos: u8,
    /// Don't-fragment flag.
    pub dont_fragment: bool,
    /// More-fragments flag.
    pub more_fragments: bool,
    /// Fragment offset in 8-byte units (13 bits).
    pub frag_offset: u16,
    /// Raw options, padded to a multiple of 4 with end-of-list bytes (at most 40 bytes kept).
    pub options: &'a [u8],
}

impl Ipv4<'static> {
    /// A plain header: TTL 64, DF set, no options.
    pub fn new(src: [u8; 4], dst: [u8; 4]) -> Ipv4<'static> {
        Ipv4 {
            src,
            dst,
            ttl: 64,
            id: 0,
            tos: 0,
            dont_fragment: true,
            more_fragments: false,
            frag_offset: 0,
            options: &[],
        }
    }
}

/// Fields of an IPv6 header; the payload length is computed.
#[derive(Clone, Copy, Debug)]
pub struct Ipv6 {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
}

impl Ipv6 {
    /// A plain header: hop limit 64.
    pub fn new(src: [u8; 16], dst: [u8; 16]) -> Ipv6 {
        Ipv6 { src, dst, hop_limit: 64, traffic_class: 0, flow_label: 0 }
    }
}

/// TCP flag bits.
pub mod tcp_flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// URG.
    pub const URG: u8 = 0x20;
    /// ECE.
    pub const ECE: u8 = 0x40;
    /// CWR.
    pub const CWR: u8 = 0x80;
}

/// One TCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption {
    /// No-operation (1 byte).
    Nop,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// One SACK block (left edge, right edge).
    Sack(u32, u32),
    /// Timestamps (value, echo reply).
    Timestamps(u32, u32),
}

/// Fields of a TCP header; the data offset and checksum are computed.
#[derive(Clone, Copy, Debug)]
pub struct Tcp<'a> {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags ([`tcp_flags`]).
    pub flags: u8,
    /// Window.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Options, padded with end-of-list bytes to a multiple of 4 (at most 40 bytes kept).
    pub options: &'a [TcpOption],
}

/// One answer of a DNS response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DnsAnswer {
    /// An A record.
    A([u8; 4]),
    /// An AAAA record.
    Aaaa([u8; 16]),
}

/// DNS query types.
pub mod dns_type {
    /// A.
    pub const A: u16 = 1;
    /// AAAA.
    pub const AAAA: u16 = 28;
}

/// Builds one frame into a caller-owned buffer. See the module documentation.
#[derive(Debug)]
pub struct Packet<'a> {
    buf: &'a mut Vec<u8>,
    fixups: &'a mut Vec<Fixup>,
    next: Option<NextField>,
    ip: IpRef,
}

impl<'a> Packet<'a> {
    /// Starts a frame: clears `buf` and `scratch` (which holds pending fixups; reuse it to
    /// avoid allocating per frame).
    pub fn new(buf: &'a mut Vec<u8>, scratch: &'a mut Vec<Fixup>) -> Packet<'a> {
        buf.clear();
        scratch.clear();
        Packet { buf, fixups: scratch, next: None, ip: IpRef::None }
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        self.buf
    }

    /// The length written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn announce(&mut self, proto: Proto) {
        let Some(next) = self.next.take() else { return };
        match next {
            NextField::EtherType(at) => {
                if let Some(v) = proto.ethertype() {
                    self.put16(at, v);
                }
            }
            NextField::IpProto(at) => {
                if let (Some(v), Some(slot)) = (proto.ip_proto(), self.buf.get_mut(at)) {
                    *slot = v;
                }
            }
            NextField::Ppp(at) => {
                if let Some(v) = proto.ppp() {
                    self.put16(at, v);
                }
            }
            NextField::AfLittle(at) => {
                if let Some(v) = proto.bsd_af() {
                    self.put(at, &v.to_le_bytes());
                }
            }
            NextField::AfBig(at) => {
                if let Some(v) = proto.bsd_af() {
                    self.put(at, &v.to_be_bytes());
                }
            }
        }
    }

    fn put(&mut self, at: usize, bytes: &[u8]) {
        if let Some(slot) = self.buf.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    }

    fn put16(&mut self, at: usize, v: u16) {
        self.put(at, &v.to_be_bytes());
    }

    fn push16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    fn push32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// The buffer itself, to append bytes with `std::io::Write` (`write!`). Appending is the
    /// only sensible use: the pending fixups point into it.
    pub fn buf_mut(&mut self) -> &mut Vec<u8> {
        self.next = None;
        self.buf
    }

    /// Appends raw bytes (a payload, or a header this module does not build).
    pub fn payload(&mut self, data: &[u8]) -> &mut Self {
        self.next = None;
        self.buf.extend_from_slice(data);
        self
    }

    /// Appends `n` copies of `byte`.
    pub fn fill(&mut self, n: usize, byte: u8) -> &mut Self {
        self.next = None;
        self.buf.resize(self.buf.len() + n, byte);
        self
    }

    /// Appends `n` bytes produced by `f(i)`.
    pub fn payload_with(&mut self, n: usize, mut f: impl FnMut(usize) -> u8) -> &mut Self {
        self.next = None;
        self.buf.extend((0..n).map(&mut f));
        self
    }

    // ---- Link layers -------------------------------------------------------------------------

    /// Ethernet II header (EtherType filled by the next layer).
    pub fn ethernet(&mut self, dst: Mac, src: Mac) -> &mut Self {
        self.announce(Proto::Ethernet);
        self.buf.extend_from_slice(&dst);
        self.buf.extend_from_slice(&src);
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self
    }

    /// Linux cooked header v1 (DLT_LINUX_SLL, 16 bytes) for an Ethernet device: packet type
    /// (0 to us, 1 broadcast, 2 multicast, 3 other host, 4 outgoing) and the sender's MAC.
    pub fn linux_sll(&mut self, packet_type: u16, src: Mac) -> &mut Self {
        self.push16(packet_type);
        self.push16(1); // ARPHRD_ETHER
        self.push16(6);
        self.buf.extend_from_slice(&src);
        self.buf.extend_from_slice(&[0, 0]);
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self
    }

    /// Linux cooked header v2 (DLT_LINUX_SLL2, 20 bytes) for an Ethernet device.
    pub fn linux_sll2(&mut self, packet_type: u8, ifindex: u32, src: Mac) -> &mut Self {
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self.push16(0); // reserved
        self.push32(ifindex);
        self.push16(1); // ARPHRD_ETHER
        self.buf.push(packet_type);
        self.buf.push(6);
        self.buf.extend_from_slice(&src);
        self.buf.extend_from_slice(&[0, 0]);
        self
    }

    /// BSD loopback header (DLT_NULL): the address family in little-endian byte order, as
    /// written by a little-endian host (pair it with a little-endian capture file).
    pub fn null_header(&mut self) -> &mut Self {
        self.next = Some(NextField::AfLittle(self.buf.len()));
        self.push32(0);
        self
    }

    /// OpenBSD loopback header (DLT_LOOP): the address family in network byte order.
    pub fn loop_header(&mut self) -> &mut Self {
        self.next = Some(NextField::AfBig(self.buf.len()));
        self.push32(0);
        self
    }

    /// An 802.1Q (`outer == false`, TPID 0x8100) or 802.1ad (`outer == true`, 0x88a8) tag.
    pub fn vlan(&mut self, outer: bool, pcp: u8, vid: u16) -> &mut Self {
        self.announce(if outer { Proto::QinQ } else { Proto::Vlan });
        self.push16((u16::from(pcp & 7) << 13) | (vid & 0x0fff));
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self
    }

    /// An MPLS label stack (bottom-of-stack set on the last label). MPLS has no next-protocol
    /// field: the payload must be IPv4 or IPv6, which readers tell apart by the version nibble.
    pub fn mpls(&mut self, labels: &[u32], ttl: u8) -> &mut Self {
        self.announce(Proto::Mpls);
        for (i, label) in labels.iter().enumerate() {
            let bos = u32::from(i + 1 == labels.len());
            self.push32(((label & 0xf_ffff) << 12) | (bos << 8) | u32::from(ttl));
        }
        self.next = None;
        self
    }

    /// A PPPoE session header (RFC 2516) and the PPP protocol field.
    pub fn pppoe_session(&mut self, session_id: u16) -> &mut Self {
        self.announce(Proto::PppoeSession);
        self.fixups.push(Fixup { kind: FixupKind::Pppoe, start: self.buf.len() });
        self.buf.extend_from_slice(&[0x11, 0x00]);
        self.push16(session_id);
        self.push16(0); // length
        self.next = Some(NextField::Ppp(self.buf.len()));
        self.push16(0);
        self
    }

    /// An ARP packet for IPv4 over Ethernet (`op` 1 request, 2 reply).
    pub fn arp(&mut self, op: u16, sha: Mac, spa: [u8; 4], tha: Mac, tpa: [u8; 4]) -> &mut Self {
        self.announce(Proto::Arp);
        self.buf.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4]);
        self.push16(op);
        self.buf.extend_from_slice(&sha);
        self.buf.extend_from_slice(&spa);
        self.buf.extend_from_slice(&tha);
        self.buf.extend_from_slice(&tpa);
        self.next = None;
        self
    }

    // ---- Network layers ----------------------------------------------------------------------

    /// An IPv4 header.
    pub fn ipv4(&mut self, h: &Ipv4<'_>) -> &mut Self {
        self.announce(Proto::Ipv4);
        let start = self.buf.len();
        let opts = &h.options[..h.options.len().min(40)];
        let padded = opts.len().div_ceil(4) * 4;
        let ihl = (20 + padded) / 4;
        self.buf.push(0x40 | ihl as u8);
        self.buf.push(h.tos);
        self.push16(0); // total length
        self.push16(h.id);
        let flags = (u16::from(h.dont_fragment) << 14) | (u16::from(h.more_fragments) << 13);
        self.push16(flags | (h.frag_offset & 0x1fff));
        self.buf.push(h.ttl);
        self.next = Some(NextField::IpProto(self.buf.len()));
        self.buf.push(0);
        self.push16(0); // checksum
        self.buf.extend_from_slice(&h.src);
        self.buf.extend_from_slice(&h.dst);
        self.buf.extend_from_slice(opts);
        self.buf.resize(start + 20 + padded, 0);
        self.fixups.push(Fixup { kind: FixupKind::Ipv4, start });
        self.ip = IpRef::V4(start);
        self
    }

    /// An IPv6 header.
    pub fn ipv6(&mut self, h: &Ipv6) -> &mut Self {
        self.announce(Proto::Ipv6);
        let start = self.buf.len();
        let word = (6u32 << 28) | (u32::from(h.traffic_class) << 20) | (h.flow_label & 0xf_ffff);
        self.push32(word);
        self.push16(0); // payload length
        self.next = Some(NextField::IpProto(self.buf.len()));
        self.buf.push(0);
        self.buf.push(h.hop_limit);
        self.buf.extend_from_slice(&h.src);
        self.buf.extend_from_slice(&h.dst);
        self.fixups.push(Fixup { kind: FixupKind::Ipv6, start });
        self.ip = IpRef::V6(start);
        self
    }

    fn ext_header_start(&mut self, proto: Proto) {
        self.announce(proto);
        self.next = Some(NextField::IpProto(self.buf.len()));
        self.buf.push(0);
    }

    /// An IPv6 hop-by-hop options header: a router-alert option (MLD) when `router_alert`,
    /// padded to 8 bytes.
    pub fn ipv6_hop_by_hop(&mut self, router_alert: bool) -> &mut Self {
        self.ext_header_start(Proto::HopByHop);
        self.buf.push(0); // length in 8-octet units beyond the first
        if router_alert {
            self.buf.extend_from_slice(&[0x05, 0x02, 0x00, 0x00, 0x01, 0x00]); // RA, PadN(0)
        } else {
            self.buf.extend_from_slice(&[0x01, 0x04, 0, 0, 0, 0]); // PadN(4)
        }
        self
    }

    /// An IPv6 destination options header holding only padding (8 bytes).
    pub fn ipv6_dest_options(&mut self) -> &mut Self {
        self.ext_header_start(Proto::DestOptions);
        self.buf.push(0);
        self.buf.extend_from_slice(&[0x01, 0x04, 0, 0, 0, 0]);
        self
    }

    /// An IPv6 segment routing header (routing type 4) with `segments_left` 0, i.e. as seen at
    /// the last segment: `segments[0]` should be the IPv6 destination (at most 16 kept).
    pub fn ipv6_routing_srh(&mut self, segments: &[[u8; 16]]) -> &mut Self {
        let segments = &segments[..segments.len().min(16)];
        self.ext_header_start(Proto::Routing);
        self.buf.push((segments.len() * 2) as u8);
        self.buf.push(4); // routing type: SRH
        self.buf.push(0); // segments left
        self.buf.push(segments.len().saturating_sub(1) as u8); // last entry
        self.buf.push(0); // flags
        self.push16(0); // tag
        for s in segments {
            self.buf.extend_from_slice(s);
        }
        self
    }

    /// An IPv6 fragment header (`offset` in 8-byte units).
    pub fn ipv6_fragment(&mut self, offset: u16, more: bool, id: u32) -> &mut Self {
        self.ext_header_start(Proto::Fragment);
        self.buf.push(0);
        self.push16((offset << 3) | u16::from(more));
        self.push32(id);
        self
    }

    /// A GRE header (RFC 2784, no optional fields); the protocol type is an EtherType.
    pub fn gre(&mut self) -> &mut Self {
        self.announce(Proto::Gre);
        self.push16(0);
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self
    }

    // ---- Transport layers --------------------------------------------------------------------

    /// A UDP header with its checksum.
    pub fn udp(&mut self, sport: u16, dport: u16) -> &mut Self {
        self.udp_opt(sport, dport, true)
    }

    /// A UDP header whose checksum is left 0 ("not computed", allowed over IPv4 and common for
    /// tunnels such as VXLAN).
    pub fn udp_no_checksum(&mut self, sport: u16, dport: u16) -> &mut Self {
        self.udp_opt(sport, dport, false)
    }

    fn udp_opt(&mut self, sport: u16, dport: u16, checksum: bool) -> &mut Self {
        self.announce(Proto::Udp);
        let start = self.buf.len();
        self.push16(sport);
        self.push16(dport);
        self.push32(0); // length, checksum
        self.fixups.push(Fixup { kind: FixupKind::Udp { ip: self.ip, checksum }, start });
        self.next = None;
        self
    }

    /// A TCP header with options and its checksum.
    pub fn tcp(&mut self, h: &Tcp<'_>) -> &mut Self {
        self.announce(Proto::Tcp);
        let start = self.buf.len();
        self.push16(h.sport);
        self.push16(h.dport);
        self.push32(h.seq);
        self.push32(h.ack);
        self.push16(0); // data offset + flags, below
        self.push16(h.window);
        self.push16(0); // checksum
        self.push16(h.urgent);
        for opt in h.options {
            if self.buf.len() - start >= 60 {
                break;
            }
            let before = self.buf.len();
            match *opt {
                TcpOption::Nop => self.buf.push(1),
                TcpOption::Mss(v) => {
                    self.buf.extend_from_slice(&[2, 4]);
                    self.push16(v);
                }
                TcpOption::WindowScale(s) => self.buf.extend_from_slice(&[3, 3, s]),
                TcpOption::SackPermitted => self.buf.extend_from_slice(&[4, 2]),
                TcpOption::Sack(l, r) => {
                    self.buf.extend_from_slice(&[5, 10]);
                    self.push32(l);
                    self.push32(r);
                }
                TcpOption::Timestamps(v, e) => {
                    self.buf.extend_from_slice(&[8, 10]);
                    self.push32(v);
                    self.push32(e);
                }
            }
            if self.buf.len() - start > 60 {
                self.buf.truncate(before);
                break;
            }
        }
        let hlen = (self.buf.len() - start).div_ceil(4) * 4;
        self.buf.resize(start + hlen, 0);
        let word = ((hlen as u16 / 4) << 12) | u16::from(h.flags);
        self.put16(start + 12, word);
        self.fixups.push(Fixup { kind: FixupKind::Tcp { ip: self.ip }, start });
        self.next = None;
        self
    }

    /// An SCTP common header; add chunks with [`Packet::sctp_chunk`] and friends.
    pub fn sctp(&mut self, sport: u16, dport: u16, vtag: u32) -> &mut Self {
        self.announce(Proto::Sctp);
        let start = self.buf.len();
        self.push16(sport);
        self.push16(dport);
        self.push32(vtag);
        self.push32(0);
        self.fixups.push(Fixup { kind: FixupKind::Sctp, start });
        self.next = None;
        self
    }

    /// One SCTP chunk: type, flags, length, `body`, padding to 4 bytes (not counted in the
    /// length).
    pub fn sctp_chunk(&mut self, chunk_type: u8, flags: u8, body: &[u8]) -> &mut Self {
        self.buf.push(chunk_type);
        self.buf.push(flags);
        self.push16((4 + body.len()).min(0xffff) as u16);
        self.buf.extend_from_slice(body);
        let pad = (4 - body.len() % 4) % 4;
        self.buf.resize(self.buf.len() + pad, 0);
        self
    }

    /// An SCTP INIT chunk (type 1) with no parameters.
    pub fn sctp_init(&mut self, init_tag: u32, a_rwnd: u32, streams: u16, tsn: u32) -> &mut Self {
        let mut body = [0u8; 16];
        body[0..4].copy_from_slice(&init_tag.to_be_bytes());
        body[4..8].copy_from_slice(&a_rwnd.to_be_bytes());
        body[8..10].copy_from_slice(&streams.to_be_bytes());
        body[10..12].copy_from_slice(&streams.to_be_bytes());
        body[12..16].copy_from_slice(&tsn.to_be_bytes());
        self.sctp_chunk(1, 0, &body)
    }

    /// An SCTP DATA chunk (type 0, unfragmented: B and E flags set).
    pub fn sctp_data(
        &mut self,
        tsn: u32,
        stream: u16,
        ssn: u16,
        ppid: u32,
        data: &[u8],
    ) -> &mut Self {
        self.buf.push(0);
        self.buf.push(0x03);
        self.push16((16 + data.len()).min(0xffff) as u16);
        self.push32(tsn);
        self.push16(stream);
        self.push16(ssn);
        self.push32(ppid);
        self.buf.extend_from_slice(data);
        let pad = (4 - data.len() % 4) % 4;
        self.buf.resize(self.buf.len() + pad, 0);
        self
    }

    /// An ICMP echo request (`request`) or reply header; append the data with
    /// [`Packet::payload`].
    pub fn icmp_echo(&mut self, request: bool, id: u16, seq: u16) -> &mut Self {
        self.icmp(if request { 8 } else { 0 }, 0, (u32::from(id) << 16) | u32::from(seq))
    }

    /// An ICMP header with any type, code and 32-bit rest-of-header.
    pub fn icmp(&mut self, icmp_type: u8, code: u8, rest: u32) -> &mut Self {
        self.announce(Proto::Icmp);
        let start = self.buf.len();
        self.buf.extend_from_slice(&[icmp_type, code, 0, 0]);
        self.push32(rest);
        self.fixups.push(Fixup { kind: FixupKind::Icmp, start });
        self.next = None;
        self
    }

    /// An ICMPv6 header with any type, code and 32-bit rest-of-header.
    pub fn icmpv6(&mut self, icmp_type: u8, code: u8, rest: u32) -> &mut Self {
        self.announce(Proto::Icmpv6);
        let start = self.buf.len();
        self.buf.extend_from_slice(&[icmp_type, code, 0, 0]);
        self.push32(rest);
        self.fixups.push(Fixup { kind: FixupKind::Icmpv6 { ip: self.ip }, start });
        self.next = None;
        self
    }

    /// An ICMPv6 echo request or reply header.
    pub fn icmpv6_echo(&mut self, request: bool, id: u16, seq: u16) -> &mut Self {
        self.icmpv6(if request { 128 } else { 129 }, 0, (u32::from(id) << 16) | u32::from(seq))
    }

    /// An ICMPv6 neighbour solicitation for `target` with a source link-layer address option.
    pub fn icmpv6_neighbor_solicitation(&mut self, target: [u8; 16], src_mac: Mac) -> &mut Self {
        self.icmpv6(135, 0, 0);
        self.buf.extend_from_slice(&target);
        self.buf.extend_from_slice(&[1, 1]);
        self.buf.extend_from_slice(&src_mac);
        self
    }

    /// An ICMPv6 neighbour advertisement (solicited, override) with a target link-layer
    /// address option.
    pub fn icmpv6_neighbor_advertisement(
        &mut self,
        target: [u8; 16],
        mac: Mac,
        router: bool,
    ) -> &mut Self {
        let flags = (u32::from(router) << 31) | (1 << 30) | (1 << 29);
        self.icmpv6(136, 0, flags);
        self.buf.extend_from_slice(&target);
        self.buf.extend_from_slice(&[2, 1]);
        self.buf.extend_from_slice(&mac);
        self
    }

    // ---- Payloads and tunnels ----------------------------------------------------------------

    /// A VXLAN header (RFC 7348); an Ethernet frame follows.
    pub fn vxlan(&mut self, vni: u32) -> &mut Self {
        self.buf.extend_from_slice(&[0x08, 0, 0, 0]);
        self.push32((vni & 0xff_ffff) << 8);
        self.next = None;
        self
    }

    /// A Geneve header (RFC 8926) without options; the protocol type (an EtherType) is filled
    /// by the next layer, usually [`Packet::ethernet`].
    pub fn geneve(&mut self, vni: u32) -> &mut Self {
        self.buf.extend_from_slice(&[0x00, 0x00]);
        self.next = Some(NextField::EtherType(self.buf.len()));
        self.push16(0);
        self.push32((vni & 0xff_ffff) << 8);
        self
    }

    fn dns_name(&mut self, name: &str) {
        for label in name.split('.').filter(|l| !l.is_empty()) {
            let label = &label.as_bytes()[..label.len().min(63)];
            self.buf.push(label.len() as u8);
            self.buf.extend_from_slice(label);
        }
        self.buf.push(0);
    }

    /// A DNS query (recursion desired) for `name`.
    pub fn dns_query(&mut self, id: u16, name: &str, qtype: u16) -> &mut Self {
        self.push16(id);
        self.push16(0x0100);
        self.buf.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
        self.dns_name(name);
        self.push16(qtype);
        self.push16(1);
        self.next = None;
        self
    }

    /// A DNS response to a query for `name` with `answers` (names compressed to the question).
    pub fn dns_response(
        &mut self,
        id: u16,
        name: &str,
        qtype: u16,
        answers: &[DnsAnswer],
        ttl: u32,
    ) -> &mut Self {
        self.push16(id);
        self.push16(if answers.is_empty() { 0x8183 } else { 0x8180 }); // NXDOMAIN when empty
        self.push16(1);
        self.push16(answers.len().min(0xffff) as u16);
        self.push32(0);
        self.dns_name(name);
        self.push16(qtype);
        self.push16(1);
        for a in answers {
            self.push16(0xc00c);
            let (t, data): (u16, &[u8]) = match a {
                DnsAnswer::A(v) => (1, v),
                DnsAnswer::Aaaa(v) => (28, v),
            };
            self.push16(t);
            self.push16(1);
            self.push32(ttl);
            self.push16(data.len() as u16);
            self.buf.extend_from_slice(data);
        }
        self.next = None;
        self
    }

    // ---- Finishing ---------------------------------------------------------------------------

    /// Fills every pending length and checksum, innermost layer first, and returns the frame
    /// length.
    pub fn finish(self) -> usize {
        let end = self.buf.len();
        for fix in self.fixups.iter().rev() {
            apply(self.buf, *fix, end);
        }
        self.fixups.clear();
        end
    }
}

fn set16(buf: &mut [u8], at: usize, v: u16) {
    if let Some(b) = buf.get_mut(at..at + 2) {
        b.copy_from_slice(&v.to_be_bytes());
    }
}

fn addr<const N: usize>(buf: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(b) = buf.get(at..at + N) {
        a.copy_from_slice(b);
    }
    a
}

/// The pseudo-header sum for a transport header at `start` (length to `end`).
fn pseudo(buf: &[u8], ip: IpRef, proto: u8, len: usize) -> u64 {
    let len = len as u32;
    match ip {
        IpRef::None => 0,
        IpRef::V4(at) => pseudo_v4(addr(buf, at + 12), addr(buf, at + 16), proto, len),
        IpRef::V6(at) => pseudo_v6(addr(buf, at + 8), addr(buf, at + 24), proto, len),
    }
}

fn apply(buf: &mut [u8], fix: Fixup, end: usize) {
    let start = fix.start;
    if start > end {
        return;
    }
    let len = end - start;
    let clamp16 = |n: usize| n.min(0xffff) as u16;
    match fix.kind {
        FixupKind::Ipv4 => {
            set16(buf, start + 2, clamp16(len));
            set16(buf, start + 10, 0);
            let ihl = usize::from(buf.get(start).map_or(5, |b| b & 0x0f)) * 4;
            let sum = buf.get(start..(start + ihl).min(end)).map_or(0, |h| sum16(0, h));
            set16(buf, start + 10, finish16(sum));
        }
        FixupKind::Ipv6 => set16(buf, start + 4, clamp16(len.saturating_sub(40))),
        FixupKind::Pppoe => set16(buf, start + 4, clamp16(len.saturating_sub(6))),
        FixupKind::Udp { ip, checksum } => {
            set16(buf, start + 4, clamp16(len));
            set16(buf, start + 6, 0);
            if checksum {
                let sum = sum16(pseudo(buf, ip, 17, len), &buf[start..end]);
                let c = finish16(sum);
                set16(buf, start + 6, if c == 0 { 0xffff } else { c });
            }
        }
        FixupKind::Tcp { ip } => {
            set16(buf, start + 16, 0);
            let c = finish16(sum16(pseudo(buf, ip, 6, len), &buf[start..end]));
            set16(buf, start + 16, c);
        }
        FixupKind::Icmp => {
            set16(buf, start + 2, 0);
            let c = finish16(sum16(0, &buf[start..end]));
            set16(buf, start + 2, c);
        }
        FixupKind::Icmpv6 { ip } => {
            set16(buf, start + 2, 0);
            let c = finish16(sum16(pseudo(buf, ip, 58, len), &buf[start..end]));
            set16(buf, start + 2, c);
        }
        FixupKind::Sctp => {
            if let Some(field) = buf.get_mut(start + 8..start + 12) {
                field.copy_from_slice(&[0; 4]);
                let c = crc32c(&buf[start..end]);
                buf[start + 8..start + 12].copy_from_slice(&c.to_le_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::internet;

    fn get16(buf: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([buf[at], buf[at + 1]])
    }

    #[test]
    fn ethernet_ipv4_udp_links_protocols_and_lengths() {
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let mut p = Packet::new(&mut buf, &mut scratch);
        p.ethernet([2; 6], [4; 6])
            .ipv4(&Ipv4::new([10, 0, 0, 1], [10, 0, 0, 2]))
            .udp(1000, 53)
            .payload(b"hi");
        let n = p.finish();
        assert_eq!(n, 14 + 20 + 8 + 2);
        assert_eq!(&buf[12..14], &[0x08, 0x00]);
        assert_eq!(buf[14 + 9], 17);
        assert_eq!(get16(&buf, 16), 30);
        assert_eq!(internet(&buf[14..34]), 0);
        assert_eq!(get16(&buf, 34 + 4), 10);
    }

    #[test]
    fn protocol_fields_follow_the_next_layer() {
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let mut p = Packet::new(&mut buf, &mut scratch);
        p.ethernet([2; 6], [4; 6])
            .vlan(true, 0, 100)
            .vlan(false, 3, 200)
            .pppoe_session(7)
            .ipv6(&Ipv6::new([1; 16], [2; 16]));
        p.ipv6_hop_by_hop(false).ipv6_fragment(0, false, 1).icmpv6_echo(true, 1, 1);
        p.finish();
        assert_eq!(&buf[12..14], &[0x88, 0xa8]);
        assert_eq!(&buf[14..16], &[0x00, 100]);
        assert_eq!(&buf[16..18], &[0x81, 0x00]);
        assert_eq!(&buf[18..20], &[0x60, 200]);
        assert_eq!(&buf[20..22], &[0x88, 0x64]);
        assert_eq!(&buf[28..30], &[0x00, 0x57]); // PPP: IPv6
        assert_eq!(get16(&buf, 26), (buf.len() - 28) as u16); // PPPoE length
        let ip = 30;
        assert_eq!(buf[ip + 6], 0); // hop-by-hop
        assert_eq!(buf[ip + 40], 44); // then fragment
        assert_eq!(buf[ip + 48], 58); // then ICMPv6
    }

    #[test]
    fn raw_link_layers_name_the_family() {
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let mut p = Packet::new(&mut buf, &mut scratch);
        p.null_header().ipv6(&Ipv6::new([1; 16], [2; 16]));
        p.finish();
        assert_eq!(&buf[..4], &[24, 0, 0, 0]);
        let mut p = Packet::new(&mut buf, &mut scratch);
        p.loop_header().ipv4(&Ipv4::new([1; 4], [2; 4]));
        p.finish();
        assert_eq!(&buf[..4], &[0, 0, 0, 2]);
        let mut p = Packet::new(&mut buf, &mut scratch);
        p.linux_sll2(4, 3, [2; 6]).arp(1, [2; 6], [1; 4], [0; 6], [2; 4]);
        p.finish();
        assert_eq!(&buf[..2], &[0x08, 0x06]);
        assert_eq!(buf.len(), 20 + 28);
    }

    #[test]
    fn oversized_options_are_cut_not_panicking() {
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let mut p = Packet::new(&mut buf, &mut scratch);
        let opts = [TcpOption::Timestamps(1, 2); 10];
        p.ipv4(&Ipv4 { options: &[1; 100], ..Ipv4::new([1; 4], [2; 4]) }).tcp(&Tcp {
            sport: 1,
            dport: 2,
            seq: 0,
            ack: 0,
            flags: tcp_flags::SYN,
            window: 0,
            urgent: 0,
            options: &opts,
        });
        p.finish();
        assert_eq!(buf[0], 0x4f);
        assert_eq!(buf[60 + 12] >> 4, 15, "four timestamps fill the 40 option bytes");
    }
}
