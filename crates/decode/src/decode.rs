//! The zero-copy layered decoder: bytes of one packet → a short list of [`Layer`]s.
//!
//! Each layer is a small `Copy` struct that borrows the packet; decoding allocates nothing. The
//! list lives in a fixed array ([`MAX_LAYERS`] entries; deeper nesting ends in a
//! [`Layer::Payload`]). Every layer records `len`, the length the enclosing header says it has
//! (what tcpdump prints as "length"), which may exceed the captured bytes. When the capture ends
//! inside a header, the list ends with [`Layer::Truncated`], naming the protocol and the bytes
//! that were there; a header whose fields contradict themselves (IHL below 5, UDP length below
//! 8…) ends it with [`Layer::Malformed`]. Nothing here panics on any input.

use crate::out::{be16, be32, u8_at};
use sift_wire::LinkType;

/// At most this many layers are decoded (tunnels inside tunnels stop here).
pub const MAX_LAYERS: usize = 32;

/// Which protocol a [`Layer::Truncated`] or [`Layer::Malformed`] was decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Proto {
    Ether,
    Sll,
    Sll2,
    Loopback,
    Vlan,
    Mpls,
    Pppoe,
    Ppp,
    Arp,
    Ipv4,
    Ipv6,
    Ipv6Ext,
    HopOpts,
    DstOpts,
    Routing,
    Fragment,
    Tcp,
    Udp,
    Sctp,
    Icmp,
    Icmpv6,
    Gre,
    Vxlan,
    Geneve,
    Dns,
    Syslog,
}

impl Proto {
    /// The lower-case name (tcpdump's `[|name]` and the JSON layer name).
    pub fn name(self) -> &'static str {
        match self {
            Proto::Ether => "ether",
            Proto::Sll => "sll",
            Proto::Sll2 => "sll2",
            Proto::Loopback => "null",
            Proto::Vlan => "vlan",
            Proto::Mpls => "mpls",
            Proto::Pppoe => "pppoe",
            Proto::Ppp => "ppp",
            Proto::Arp => "arp",
            Proto::Ipv4 => "ip",
            Proto::Ipv6 => "ip6",
            Proto::Ipv6Ext => "ip6",
            Proto::HopOpts => "hbhopt",
            Proto::DstOpts => "dstopt",
            Proto::Routing => "rt6",
            Proto::Fragment => "frag6",
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Sctp => "sctp",
            Proto::Icmp => "icmp",
            Proto::Icmpv6 => "icmp6",
            Proto::Gre => "gre",
            Proto::Vxlan => "vxlan",
            Proto::Geneve => "geneve",
            Proto::Dns => "domain",
            Proto::Syslog => "syslog",
        }
    }
}

/// Ethernet II / 802.3 header.
#[derive(Clone, Copy, Debug)]
pub struct Ether<'a> {
    /// Destination MAC.
    pub dst: &'a [u8],
    /// Source MAC.
    pub src: &'a [u8],
    /// EtherType, or the 802.3 length when below 0x600.
    pub ethertype: u16,
    /// Length of the frame from this header on (wire).
    pub len: u32,
}

/// Linux cooked capture v1 or v2 header.
#[derive(Clone, Copy, Debug)]
pub struct Sll<'a> {
    /// 1 or 2.
    pub version: u8,
    /// Packet type (0 host, 1 broadcast, 2 multicast, 3 other host, 4 outgoing).
    pub pkttype: u16,
    /// ARPHRD_ type.
    pub hatype: u16,
    /// Link-layer address (up to 8 bytes, as long as the header says).
    pub addr: &'a [u8],
    /// Protocol (EtherType).
    pub protocol: u16,
    /// Interface index (v2 only; 0 for v1).
    pub ifindex: u32,
    /// Length from this header on (wire).
    pub len: u32,
}

/// BSD (`NULL`, host order) or OpenBSD (`LOOP`, network order) loopback header.
#[derive(Clone, Copy, Debug)]
pub struct Loopback {
    /// The address family.
    pub family: u32,
    /// Length from this header on (wire).
    pub len: u32,
}

/// An 802.1Q or 802.1ad tag.
#[derive(Clone, Copy, Debug)]
pub struct Vlan {
    /// The TPID that announced this tag (0x8100, 0x88a8, 0x9100).
    pub tpid: u16,
    /// Priority code point.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier.
    pub vid: u16,
    /// The EtherType after the tag.
    pub ethertype: u16,
    /// Length from this tag on (wire).
    pub len: u32,
}

/// One MPLS label stack entry.
#[derive(Clone, Copy, Debug)]
pub struct Mpls {
    /// Label value.
    pub label: u32,
    /// Traffic class.
    pub tc: u8,
    /// Bottom of stack.
    pub bottom: bool,
    /// Time to live.
    pub ttl: u8,
    /// Length from this entry on (wire).
    pub len: u32,
}

/// A PPPoE header (discovery or session), with the PPP protocol of a session frame.
#[derive(Clone, Copy, Debug)]
pub struct Pppoe<'a> {
    /// 0x8863 (discovery) or 0x8864 (session).
    pub ethertype: u16,
    /// Version and type nibbles.
    pub ver_type: u8,
    /// Code (0 for session data, 0x09 PADI…).
    pub code: u8,
    /// Session id.
    pub session: u16,
    /// Payload length from the header.
    pub payload_len: u16,
    /// PPP protocol of session data (0 when absent).
    pub ppp_protocol: u16,
    /// Discovery tags (raw).
    pub tags: &'a [u8],
    /// Length from this header on (wire).
    pub len: u32,
}

/// An ARP or RARP packet.
#[derive(Clone, Copy, Debug)]
pub struct Arp<'a> {
    /// Hardware type.
    pub htype: u16,
    /// Protocol type.
    pub ptype: u16,
    /// Hardware address length.
    pub hlen: u8,
    /// Protocol address length.
    pub plen: u8,
    /// Operation.
    pub op: u16,
    /// Sender hardware address.
    pub sha: &'a [u8],
    /// Sender protocol address.
    pub spa: &'a [u8],
    /// Target hardware address.
    pub tha: &'a [u8],
    /// Target protocol address.
    pub tpa: &'a [u8],
    /// Whether the addresses were all captured.
    pub complete: bool,
    /// Length from this header on (wire).
    pub len: u32,
}

/// An IPv4 header.
#[derive(Clone, Copy, Debug)]
pub struct Ipv4<'a> {
    /// The whole header as captured (`ihl * 4` bytes).
    pub header: &'a [u8],
    /// Header length in bytes.
    pub hlen: u8,
    /// Type of service.
    pub tos: u8,
    /// Total length field.
    pub total_len: u16,
    /// Identification.
    pub id: u16,
    /// Flags and fragment offset field.
    pub frag: u16,
    /// Time to live.
    pub ttl: u8,
    /// Protocol.
    pub protocol: u8,
    /// Header checksum.
    pub checksum: u16,
    /// Source address.
    pub src: &'a [u8],
    /// Destination address.
    pub dst: &'a [u8],
    /// Options (`hlen - 20` bytes).
    pub options: &'a [u8],
    /// Bytes missing between the total length and the wire length (0 when consistent).
    pub missing: u32,
    /// Length available for this packet on the wire (before trimming to `total_len`).
    pub len: u32,
}

impl Ipv4<'_> {
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u32 {
        u32::from(self.frag & 0x1fff) * 8
    }
    /// More fragments flag.
    pub fn more_fragments(&self) -> bool {
        self.frag & 0x2000 != 0
    }
    /// Don't fragment flag.
    pub fn dont_fragment(&self) -> bool {
        self.frag & 0x4000 != 0
    }
    /// Payload length per the header (`total_len - hlen`).
    pub fn payload_len(&self) -> u32 {
        u32::from(self.total_len).saturating_sub(u32::from(self.hlen))
    }
}

/// An IPv6 fixed header.
#[derive(Clone, Copy, Debug)]
pub struct Ipv6<'a> {
    /// Traffic class.
    pub class: u8,
    /// Flow label.
    pub flow: u32,
    /// Payload length field.
    pub payload_len: u16,
    /// Next header.
    pub next: u8,
    /// Hop limit.
    pub hlim: u8,
    /// Source address.
    pub src: &'a [u8],
    /// Destination address.
    pub dst: &'a [u8],
    /// Bytes missing between the payload length and the wire length (0 when consistent).
    pub missing: u32,
    /// Length available on the wire from this header on.
    pub len: u32,
}

/// An IPv6 extension header.
#[derive(Clone, Copy, Debug)]
pub struct Ipv6Ext<'a> {
    /// Its protocol number (0 hop-by-hop, 43 routing, 44 fragment, 60 destination options).
    pub kind: u8,
    /// Next header.
    pub next: u8,
    /// The whole header as captured.
    pub header: &'a [u8],
    /// Length of the header in bytes.
    pub hdr_len: u32,
    /// Payload length from the IPv6 header after this extension header.
    pub len: u32,
}

/// A TCP header.
#[derive(Clone, Copy, Debug)]
pub struct Tcp<'a> {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Header length in bytes (data offset × 4).
    pub hlen: u8,
    /// Flags (12 bits, including AE/NS at 0x100).
    pub flags: u16,
    /// Window.
    pub win: u16,
    /// Checksum.
    pub checksum: u16,
    /// Urgent pointer.
    pub urp: u16,
    /// Options bytes (as captured).
    pub options: &'a [u8],
    /// Segment length (header + data) per the IP header.
    pub len: u32,
}

/// A UDP header.
#[derive(Clone, Copy, Debug)]
pub struct Udp {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Length field.
    pub ulen: u16,
    /// Checksum.
    pub checksum: u16,
    /// Datagram length per the IP header.
    pub len: u32,
}

/// An SCTP common header and its chunks (raw).
#[derive(Clone, Copy, Debug)]
pub struct Sctp<'a> {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Verification tag.
    pub vtag: u32,
    /// Checksum.
    pub checksum: u32,
    /// The captured chunk bytes.
    pub chunks: &'a [u8],
    /// Packet length per the IP header.
    pub len: u32,
}

/// An ICMP or ICMPv6 message.
#[derive(Clone, Copy, Debug)]
pub struct Icmp<'a> {
    /// Type.
    pub icmp_type: u8,
    /// Code.
    pub code: u8,
    /// Checksum.
    pub checksum: u16,
    /// The bytes after the checksum, as captured.
    pub rest: &'a [u8],
    /// Message length per the IP header.
    pub len: u32,
}

/// A GRE header.
#[derive(Clone, Copy, Debug)]
pub struct Gre {
    /// Flags and version word.
    pub flags: u16,
    /// Protocol type.
    pub protocol: u16,
    /// Checksum, when present.
    pub checksum: Option<u16>,
    /// Key, when present.
    pub key: Option<u32>,
    /// Sequence number, when present.
    pub seq: Option<u32>,
    /// Packet length from this header on.
    pub len: u32,
}

/// A VXLAN header.
#[derive(Clone, Copy, Debug)]
pub struct Vxlan {
    /// Flags byte.
    pub flags: u8,
    /// Network identifier.
    pub vni: u32,
    /// Length from this header on.
    pub len: u32,
}

/// A Geneve header.
#[derive(Clone, Copy, Debug)]
pub struct Geneve<'a> {
    /// Version.
    pub version: u8,
    /// Options length in bytes.
    pub opt_len: u32,
    /// O (control) flag.
    pub oam: bool,
    /// C (critical options) flag.
    pub critical: bool,
    /// Protocol type (EtherType).
    pub protocol: u16,
    /// Network identifier.
    pub vni: u32,
    /// Options (raw, as captured).
    pub options: &'a [u8],
    /// Length from this header on.
    pub len: u32,
}

/// A DNS message; sections are walked by the renderers.
#[derive(Clone, Copy, Debug)]
pub struct Dns<'a> {
    /// The message as captured, from the DNS header on (for compression pointers).
    pub msg: &'a [u8],
    /// Identifier.
    pub id: u16,
    /// Flags word.
    pub flags: u16,
    /// Question count.
    pub qdcount: u16,
    /// Answer count.
    pub ancount: u16,
    /// Authority count.
    pub nscount: u16,
    /// Additional count.
    pub arcount: u16,
    /// Message length per the transport.
    pub len: u32,
    /// Whether it came over TCP (with a length prefix, already skipped).
    pub over_tcp: bool,
}

/// One decoded layer.
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub enum Layer<'a> {
    Ether(Ether<'a>),
    Sll(Sll<'a>),
    Loopback(Loopback),
    Vlan(Vlan),
    Mpls(Mpls),
    Pppoe(Pppoe<'a>),
    Arp(Arp<'a>),
    Ipv4(Ipv4<'a>),
    Ipv6(Ipv6<'a>),
    Ipv6Ext(Ipv6Ext<'a>),
    Tcp(Tcp<'a>),
    Udp(Udp),
    Sctp(Sctp<'a>),
    Icmp(Icmp<'a>),
    Icmpv6(Icmp<'a>),
    Gre(Gre),
    Vxlan(Vxlan),
    Geneve(Geneve<'a>),
    Dns(Dns<'a>),
    /// Bytes no decoder claimed: `data` is what was captured, `len` the wire length.
    Payload {
        data: &'a [u8],
        len: u32,
    },
    /// The capture ended inside `proto`'s header: `data` holds what was there.
    Truncated {
        proto: Proto,
        data: &'a [u8],
        len: u32,
    },
    /// `proto`'s header is inconsistent; `why` says how.
    Malformed {
        proto: Proto,
        why: &'static str,
        data: &'a [u8],
        len: u32,
    },
    /// An upper-layer protocol this decoder does not know.
    Unknown {
        what: Unknown,
        data: &'a [u8],
        len: u32,
    },
}

/// What an [`Layer::Unknown`] was announced as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// An EtherType.
    EtherType(u16),
    /// An IP protocol number.
    IpProto(u8),
    /// A loopback address family.
    Family(u32),
    /// A PPP protocol.
    Ppp(u16),
    /// A link type.
    LinkType(LinkType),
    /// A non-first IP fragment (`ip-proto-N`).
    Fragment(u8),
}

/// A decoded packet: up to [`MAX_LAYERS`] layers.
#[derive(Clone, Copy, Debug)]
pub struct Decoded<'a> {
    layers: [Layer<'a>; MAX_LAYERS],
    count: usize,
    /// The captured bytes.
    pub data: &'a [u8],
    /// The link type.
    pub link_type: LinkType,
    /// Offset in `data` where the link-layer header ends.
    pub link_header_len: usize,
    /// The length on the wire, as given.
    pub wire_len: u32,
}

impl<'a> Decoded<'a> {
    /// The layers, outermost first.
    pub fn layers(&self) -> &[Layer<'a>] {
        &self.layers[..self.count]
    }

    fn push(&mut self, layer: Layer<'a>) -> bool {
        if self.count < MAX_LAYERS {
            self.layers[self.count] = layer;
            self.count += 1;
            true
        } else {
            false
        }
    }
}

/// Ports that carry DNS.
const DNS_PORT: u16 = 53;
const VXLAN_PORT: u16 = 4789;
const GENEVE_PORT: u16 = 6081;

/// tcpdump's `-T TYPE`: transport payloads read as one protocol instead of by port. Every UDP
/// payload is read as it; TCP payloads are read as DNS for `Domain`, and not at all otherwise
/// (as tcpdump, which then prints no HTTP or SSH line either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketType {
    /// `-T domain`: DNS.
    Domain,
    /// `-T vxlan`: VXLAN.
    Vxlan,
}

/// Decodes one packet of the given link type. `wire_len` is the length on the wire (may
/// exceed `data.len()`).
pub fn decode(link_type: LinkType, data: &[u8], wire_len: u32) -> Decoded<'_> {
    decode_with(link_type, data, wire_len, None)
}

/// [`decode`], with transport payloads read as `packet_type` when given.
pub fn decode_with(
    link_type: LinkType,
    data: &[u8],
    wire_len: u32,
    packet_type: Option<PacketType>,
) -> Decoded<'_> {
    let empty = Layer::Payload { data: &[], len: 0 };
    let mut d = Decoded {
        layers: [empty; MAX_LAYERS],
        count: 0,
        data,
        link_type,
        link_header_len: 0,
        wire_len,
    };
    let wire = wire_len.max(data.len() as u32);
    let mut cx = Cx { d: &mut d, packet_type };
    let link_len = match link_type {
        LinkType::EN10MB => cx.ether(data, wire, true),
        LinkType::LINUX_SLL => cx.sll(data, wire),
        LinkType::LINUX_SLL2 => cx.sll2(data, wire),
        LinkType::NULL | LinkType::LOOP => cx.loopback(data, wire, link_type == LinkType::LOOP),
        LinkType::RAW => {
            cx.raw_ip(data, wire);
            0
        }
        LinkType::IPV4 => {
            cx.ipv4(data, wire);
            0
        }
        LinkType::IPV6 => {
            cx.ipv6(data, wire);
            0
        }
        other => {
            cx.push(Layer::Unknown { what: Unknown::LinkType(other), data, len: wire });
            0
        }
    };
    d.link_header_len = link_len;
    d
}

struct Cx<'d, 'a> {
    d: &'d mut Decoded<'a>,
    packet_type: Option<PacketType>,
}

fn sub(len: u32, n: usize) -> u32 {
    len.saturating_sub(n as u32)
}

impl<'a> Cx<'_, 'a> {
    fn push(&mut self, layer: Layer<'a>) -> bool {
        self.d.push(layer)
    }

    fn trunc(&mut self, proto: Proto, data: &'a [u8], len: u32) {
        self.push(Layer::Truncated { proto, data, len });
    }

    fn payload(&mut self, data: &'a [u8], len: u32) {
        self.push(Layer::Payload { data, len });
    }

    /// Ethernet; returns the link header length (up to the first non-VLAN EtherType) when
    /// `outer`.
    fn ether(&mut self, data: &'a [u8], len: u32, _outer: bool) -> usize {
        if data.len() < 14 {
            self.trunc(Proto::Ether, data, len);
            return data.len();
        }
        let ethertype = u16::from_be_bytes([data[12], data[13]]);
        if !self.push(Layer::Ether(Ether { dst: &data[0..6], src: &data[6..12], ethertype, len })) {
            return 14;
        }
        let mut off = 14;
        let mut et = ethertype;
        // VLAN tags belong to the link header (tcpdump's -x starts after them).
        while matches!(et, 0x8100 | 0x88a8 | 0x9100) {
            let rest = &data[off..];
            if rest.len() < 4 {
                self.trunc(Proto::Vlan, rest, sub(len, off));
                return data.len();
            }
            let tci = u16::from_be_bytes([rest[0], rest[1]]);
            let next = u16::from_be_bytes([rest[2], rest[3]]);
            if !self.push(Layer::Vlan(Vlan {
                tpid: et,
                pcp: (tci >> 13) as u8,
                dei: tci & 0x1000 != 0,
                vid: tci & 0xfff,
                ethertype: next,
                len: sub(len, off),
            })) {
                return off;
            }
            off += 4;
            et = next;
        }
        if et < 0x600 {
            // 802.3 length field: LLC follows; not decoded further.
            let rest = &data[off..];
            self.payload(rest, sub(len, off));
            return off;
        }
        self.ethertype(et, &data[off..], sub(len, off));
        off
    }

    fn ethertype(&mut self, et: u16, data: &'a [u8], len: u32) {
        match et {
            0x0800 => self.ipv4(data, len),
            0x86dd => self.ipv6(data, len),
            0x0806 | 0x8035 => self.arp(data, len),
            0x8847 | 0x8848 => self.mpls(data, len),
            0x8863 | 0x8864 => self.pppoe(et, data, len),
            0x8100 | 0x88a8 | 0x9100 => {
                // A tag after a non-Ethernet link header (SLL…).
                if data.len() < 4 {
                    self.trunc(Proto::Vlan, data, len);
                    return;
                }
                let tci = u16::from_be_bytes([data[0], data[1]]);
                let next = u16::from_be_bytes([data[2], data[3]]);
                if self.push(Layer::Vlan(Vlan {
                    tpid: et,
                    pcp: (tci >> 13) as u8,
                    dei: tci & 0x1000 != 0,
                    vid: tci & 0xfff,
                    ethertype: next,
                    len,
                })) {
                    self.ethertype(next, &data[4..], sub(len, 4));
                }
            }
            0x6558 => {
                self.ether(data, len, false);
            }
            other => {
                self.push(Layer::Unknown { what: Unknown::EtherType(other), data, len });
            }
        }
    }

    fn sll(&mut self, data: &'a [u8], len: u32) -> usize {
        if data.len() < 16 {
            self.trunc(Proto::Sll, data, len);
            return data.len();
        }
        let alen = usize::from(u16::from_be_bytes([data[4], data[5]])).min(8);
        let protocol = u16::from_be_bytes([data[14], data[15]]);
        let layer = Sll {
            version: 1,
            pkttype: u16::from_be_bytes([data[0], data[1]]),
            hatype: u16::from_be_bytes([data[2], data[3]]),
            addr: &data[6..6 + alen],
            protocol,
            ifindex: 0,
            len,
        };
        if self.push(Layer::Sll(layer)) {
            self.sll_payload(protocol, &data[16..], sub(len, 16));
        }
        16
    }

    fn sll2(&mut self, data: &'a [u8], len: u32) -> usize {
        if data.len() < 20 {
            self.trunc(Proto::Sll2, data, len);
            return data.len();
        }
        let protocol = u16::from_be_bytes([data[0], data[1]]);
        let alen = usize::from(data[11]).min(8);
        let layer = Sll {
            version: 2,
            pkttype: u16::from(data[10]),
            hatype: u16::from_be_bytes([data[8], data[9]]),
            addr: &data[12..12 + alen],
            protocol,
            ifindex: u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
            len,
        };
        if self.push(Layer::Sll(layer)) {
            self.sll_payload(protocol, &data[20..], sub(len, 20));
        }
        20
    }

    fn sll_payload(&mut self, protocol: u16, data: &'a [u8], len: u32) {
        if protocol < 0x600 {
            // Linux "protocols" below 0x600: 802.3, 802.2, CAN…; not decoded.
            self.payload(data, len);
        } else {
            self.ethertype(protocol, data, len);
        }
    }

    fn loopback(&mut self, data: &'a [u8], len: u32, network_order: bool) -> usize {
        if data.len() < 4 {
            self.trunc(Proto::Loopback, data, len);
            return data.len();
        }
        let b = [data[0], data[1], data[2], data[3]];
        let mut family = if network_order { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) };
        // tcpdump accepts either byte order for DLT_NULL (the capturing host's).
        if !network_order && family & 0xffff == 0 {
            family = u32::from_be_bytes(b);
        }
        if self.push(Layer::Loopback(Loopback { family, len })) {
            let rest = &data[4..];
            let l = sub(len, 4);
            match family {
                2 => self.ipv4(rest, l),
                24 | 28 | 30 => self.ipv6(rest, l),
                other => {
                    self.push(Layer::Unknown { what: Unknown::Family(other), data: rest, len: l });
                }
            }
        }
        4
    }

    fn raw_ip(&mut self, data: &'a [u8], len: u32) {
        match data.first().map(|b| b >> 4) {
            Some(6) => self.ipv6(data, len),
            Some(4) => self.ipv4(data, len),
            Some(_) => {
                self.push(Layer::Malformed { proto: Proto::Ipv4, why: "raw-version", data, len });
            }
            None => self.trunc(Proto::Ipv4, data, len),
        }
    }

    fn mpls(&mut self, data: &'a [u8], len: u32) {
        let mut off = 0;
        loop {
            let Some(word) = be32(data, off) else {
                self.trunc(Proto::Mpls, &data[off.min(data.len())..], sub(len, off));
                return;
            };
            let bottom = word & 0x100 != 0;
            let label = word >> 12;
            if !self.push(Layer::Mpls(Mpls {
                label,
                tc: ((word >> 9) & 7) as u8,
                bottom,
                ttl: word as u8,
                len: sub(len, off),
            })) {
                return;
            }
            off += 4;
            if bottom {
                break;
            }
        }
        let rest = &data[off..];
        let l = sub(len, off);
        // The payload is guessed from the first nibble, as tcpdump does.
        match rest.first().map(|b| b >> 4) {
            Some(4) => self.ipv4(rest, l),
            Some(6) => self.ipv6(rest, l),
            Some(_) => self.payload(rest, l),
            None => self.trunc(Proto::Mpls, rest, l),
        }
    }

    fn pppoe(&mut self, ethertype: u16, data: &'a [u8], len: u32) {
        if data.len() < 6 {
            self.trunc(Proto::Pppoe, data, len);
            return;
        }
        let code = data[1];
        let session = u16::from_be_bytes([data[2], data[3]]);
        let payload_len = u16::from_be_bytes([data[4], data[5]]);
        let body_end = (6 + usize::from(payload_len)).min(data.len());
        let body = &data[6..body_end];
        let ppp_protocol = if code == 0 { be16(data, 6).unwrap_or(0) } else { 0 };
        let layer = Pppoe {
            ethertype,
            ver_type: data[0],
            code,
            session,
            payload_len,
            ppp_protocol,
            tags: if code == 0 { &[] } else { body },
            len,
        };
        if !self.push(Layer::Pppoe(layer)) || code != 0 {
            return;
        }
        if data.len() < 8 {
            self.trunc(Proto::Ppp, &data[6..], sub(len, 6));
            return;
        }
        // PPP payload length: the PPPoE length (minus the protocol), bounded by the wire.
        let l = u32::from(payload_len).saturating_sub(2).min(sub(len, 8));
        let rest = &data[8..];
        match ppp_protocol {
            0x0021 => self.ipv4(rest, l),
            0x0057 => self.ipv6(rest, l),
            other => {
                self.push(Layer::Unknown { what: Unknown::Ppp(other), data: rest, len: l });
            }
        }
    }

    fn arp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 8 {
            self.trunc(Proto::Arp, data, len);
            return;
        }
        let hlen = data[4];
        let plen = data[5];
        let (h, p) = (usize::from(hlen), usize::from(plen));
        let end = 8 + 2 * h + 2 * p;
        let complete = data.len() >= end;
        let get = |at: usize, n: usize| -> &'a [u8] {
            let s = at.min(data.len());
            &data[s..(at + n).min(data.len())]
        };
        self.push(Layer::Arp(Arp {
            htype: u16::from_be_bytes([data[0], data[1]]),
            ptype: u16::from_be_bytes([data[2], data[3]]),
            hlen,
            plen,
            op: u16::from_be_bytes([data[6], data[7]]),
            sha: get(8, h),
            spa: get(8 + h, p),
            tha: get(8 + h + p, h),
            tpa: get(8 + 2 * h + p, p),
            complete,
            len,
        }));
    }

    fn ipv4(&mut self, data: &'a [u8], len: u32) {
        if data.first().is_some_and(|b| b >> 4 != 4) {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "version", data, len });
            return;
        }
        if data.len() < 20 {
            self.trunc(Proto::Ipv4, data, len);
            return;
        }
        let hlen = usize::from(data[0] & 15) * 4;
        if hlen < 20 {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "hlen", data, len });
            return;
        }
        let total_len = u16::from_be_bytes([data[2], data[3]]);
        let missing = u32::from(total_len).saturating_sub(len);
        let header = &data[..hlen.min(data.len())];
        let ip = Ipv4 {
            header,
            hlen: hlen as u8,
            tos: data[1],
            total_len,
            id: u16::from_be_bytes([data[4], data[5]]),
            frag: u16::from_be_bytes([data[6], data[7]]),
            ttl: data[8],
            protocol: data[9],
            checksum: u16::from_be_bytes([data[10], data[11]]),
            src: &data[12..16],
            dst: &data[16..20],
            options: &header[20.min(header.len())..],
            missing,
            len,
        };
        if !self.push(Layer::Ipv4(ip)) {
            return;
        }
        // Like tcpdump, a total length beyond the wire is reported (`missing`) but still used.
        let eff = u32::from(total_len);
        if (total_len as usize) < hlen {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "len", data, len });
            return;
        }
        if data.len() < hlen {
            self.trunc(Proto::Ipv4, data, len);
            return;
        }
        let end = (eff as usize).min(data.len());
        let body = &data[hlen..end.max(hlen)];
        let plen = eff - hlen as u32;
        if ip.frag & 0x1fff != 0 {
            self.push(Layer::Unknown {
                what: Unknown::Fragment(ip.protocol),
                data: body,
                len: plen,
            });
            return;
        }
        self.ip_proto(ip.protocol, body, plen, true);
    }

    fn ipv6(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 40 {
            self.trunc(Proto::Ipv6, data, len);
            return;
        }
        if data[0] >> 4 != 6 {
            self.push(Layer::Malformed { proto: Proto::Ipv6, why: "version", data, len });
            return;
        }
        let w = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
        let payload_len = u16::from_be_bytes([data[4], data[5]]);
        let ip = Ipv6 {
            class: (w >> 20) as u8,
            flow: w & 0xfffff,
            payload_len,
            next: data[6],
            hlim: data[7],
            src: &data[8..24],
            dst: &data[24..40],
            missing: (40 + u32::from(payload_len)).saturating_sub(len),
            len,
        };
        if !self.push(Layer::Ipv6(ip)) {
            return;
        }
        // A payload length beyond the wire is reported (`missing`) but still used, as tcpdump
        // does. A zero payload length (without a jumbo option, which is not decoded) leaves
        // the header alone, as in tcpdump.
        let total = 40 + u32::from(payload_len);
        let end = (total as usize).min(data.len());
        let mut off = 40;
        let mut next = ip.next;
        let mut remaining = total - 40;
        loop {
            match next {
                0 | 43 | 44 | 60 => {
                    let rest = &data[off..end];
                    let ext_proto = match next {
                        0 => Proto::HopOpts,
                        60 => Proto::DstOpts,
                        43 => Proto::Routing,
                        _ => Proto::Fragment,
                    };
                    if rest.is_empty() {
                        // tcpdump checks one byte before a routing header, naming IPv6.
                        let p = if next == 43 { Proto::Ipv6Ext } else { ext_proto };
                        self.trunc(p, rest, remaining);
                        return;
                    }
                    if next == 44 && (4..8).contains(&rest.len()) {
                        // Enough for the offset: tcpdump prints the fragment and stops.
                        self.push(Layer::Ipv6Ext(Ipv6Ext {
                            kind: 44,
                            next: rest[0],
                            header: rest,
                            hdr_len: 8,
                            len: remaining.saturating_sub(8),
                        }));
                        return;
                    }
                    let hdr_len = if next == 44 {
                        8
                    } else {
                        (usize::from(rest.get(1).copied().unwrap_or(255)) + 1) * 8
                    };
                    if rest.len() < hdr_len {
                        self.trunc(ext_proto, rest, remaining);
                        return;
                    }
                    let header = &rest[..hdr_len];
                    let after = remaining.saturating_sub(hdr_len as u32);
                    if !self.push(Layer::Ipv6Ext(Ipv6Ext {
                        kind: next,
                        next: rest[0],
                        header,
                        hdr_len: hdr_len as u32,
                        len: after,
                    })) {
                        return;
                    }
                    if next == 44 {
                        let offlg = u16::from_be_bytes([rest[2], rest[3]]);
                        // Not the first fragment, or nothing captured after the header.
                        if offlg & 0xfff8 != 0 || rest.len() == hdr_len {
                            return;
                        }
                    }
                    if rest.len() < hdr_len || hdr_len as u32 > remaining {
                        return;
                    }
                    next = rest[0];
                    off += hdr_len;
                    remaining = after;
                }
                _ => {
                    let rest = &data[off.min(end)..end];
                    self.ip_proto(next, rest, remaining, false);
                    return;
                }
            }
        }
    }

    fn ip_proto(&mut self, proto: u8, data: &'a [u8], len: u32, v4: bool) {
        match proto {
            6 => self.tcp(data, len),
            17 => self.udp(data, len),
            132 => self.sctp(data, len),
            1 if v4 => self.icmp(data, len, false),
            58 => self.icmp(data, len, true),
            47 => self.gre(data, len),
            4 => self.ipv4(data, len),
            41 => self.ipv6(data, len),
            other => {
                self.push(Layer::Unknown { what: Unknown::IpProto(other), data, len });
            }
        }
    }

    fn tcp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 20 {
            self.trunc(Proto::Tcp, data, len);
            return;
        }
        let hlen = (data[12] >> 4) * 4;
        let opt_end = usize::from(hlen).min(data.len()).max(20);
        let tcp = Tcp {
            sport: u16::from_be_bytes([data[0], data[1]]),
            dport: u16::from_be_bytes([data[2], data[3]]),
            seq: u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
            ack: u32::from_be_bytes([data[8], data[9], data[10], data[11]]),
            hlen,
            flags: u16::from_be_bytes([data[12], data[13]]) & 0x1ff,
            win: u16::from_be_bytes([data[14], data[15]]),
            checksum: u16::from_be_bytes([data[16], data[17]]),
            urp: u16::from_be_bytes([data[18], data[19]]),
            options: &data[20..opt_end],
            len,
        };
        if !self.push(Layer::Tcp(tcp)) || hlen < 20 || u32::from(hlen) > len {
            return;
        }
        let h = usize::from(hlen);
        let body = &data[h.min(data.len())..];
        let blen = len - u32::from(hlen);
        if blen == 0 {
            return;
        }
        let dns = match self.packet_type {
            Some(forced) => forced == PacketType::Domain,
            None => tcp.sport == DNS_PORT || tcp.dport == DNS_PORT,
        };
        if dns && body.len() >= 2 {
            self.dns(&body[2..], blen.saturating_sub(2), true);
        } else {
            self.payload(body, blen);
        }
    }

    fn udp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 8 {
            self.trunc(Proto::Udp, data, len);
            return;
        }
        let udp = Udp {
            sport: u16::from_be_bytes([data[0], data[1]]),
            dport: u16::from_be_bytes([data[2], data[3]]),
            ulen: u16::from_be_bytes([data[4], data[5]]),
            checksum: u16::from_be_bytes([data[6], data[7]]),
            len,
        };
        if !self.push(Layer::Udp(udp)) {
            return;
        }
        if udp.ulen < 8 || len < 8 {
            return;
        }
        let blen = (u32::from(udp.ulen) - 8).min(len - 8);
        let body = &data[8..(8 + blen as usize).min(data.len())];
        if let Some(forced) = self.packet_type {
            match forced {
                PacketType::Domain => self.dns(body, blen, false),
                PacketType::Vxlan => self.vxlan(body, blen),
            }
        } else if udp.sport == DNS_PORT || udp.dport == DNS_PORT {
            self.dns(body, blen, false);
        } else if udp.dport == VXLAN_PORT {
            self.vxlan(body, blen);
        } else if udp.dport == GENEVE_PORT {
            self.geneve(body, blen);
        } else {
            self.payload(body, blen);
        }
    }

    fn sctp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 12 {
            self.trunc(Proto::Sctp, data, len);
            return;
        }
        self.push(Layer::Sctp(Sctp {
            sport: u16::from_be_bytes([data[0], data[1]]),
            dport: u16::from_be_bytes([data[2], data[3]]),
            vtag: u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
            checksum: u32::from_be_bytes([data[8], data[9], data[10], data[11]]),
            chunks: &data[12..],
            len,
        }));
    }

    fn icmp(&mut self, data: &'a [u8], len: u32, v6: bool) {
        let proto = if v6 { Proto::Icmpv6 } else { Proto::Icmp };
        if data.len() < 4 {
            self.trunc(proto, data, len);
            return;
        }
        let m = Icmp {
            icmp_type: data[0],
            code: data[1],
            checksum: u16::from_be_bytes([data[2], data[3]]),
            rest: &data[4..],
            len,
        };
        self.push(if v6 { Layer::Icmpv6(m) } else { Layer::Icmp(m) });
    }

    fn gre(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 4 {
            self.trunc(Proto::Gre, data, len);
            return;
        }
        let flags = u16::from_be_bytes([data[0], data[1]]);
        let protocol = u16::from_be_bytes([data[2], data[3]]);
        let mut off = 4;
        let mut field = |present: bool| -> Result<Option<u32>, ()> {
            if !present {
                return Ok(None);
            }
            let v = be32(data, off).ok_or(())?;
            off += 4;
            Ok(Some(v))
        };
        let (Ok(ck), Ok(key), Ok(seq)) = (
            field(flags & 0x8000 != 0 || flags & 0x4000 != 0),
            field(flags & 0x2000 != 0),
            field(flags & 0x1000 != 0),
        ) else {
            self.trunc(Proto::Gre, data, len);
            return;
        };
        let gre = Gre { flags, protocol, checksum: ck.map(|v| (v >> 16) as u16), key, seq, len };
        if !self.push(Layer::Gre(gre)) || flags & 7 != 0 {
            return;
        }
        let rest = &data[off..];
        let l = sub(len, off);
        match protocol {
            0x0800 => self.ipv4(rest, l),
            0x86dd => self.ipv6(rest, l),
            0x6558 => {
                self.ether(rest, l, false);
            }
            0x8847 => self.mpls(rest, l),
            other => {
                self.push(Layer::Unknown { what: Unknown::EtherType(other), data: rest, len: l });
            }
        }
    }

    fn vxlan(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 8 {
            self.trunc(Proto::Vxlan, data, len);
            return;
        }
        let vni = u32::from_be_bytes([0, data[4], data[5], data[6]]);
        if self.push(Layer::Vxlan(Vxlan { flags: data[0], vni, len })) {
            self.ether(&data[8..], sub(len, 8), false);
        }
    }

    fn geneve(&mut self, data: &'a [u8], len: u32) {
        if data.len() < 8 {
            self.trunc(Proto::Geneve, data, len);
            return;
        }
        let opt_len = u32::from(data[0] & 0x3f) * 4;
        let protocol = u16::from_be_bytes([data[2], data[3]]);
        let hl = 8 + opt_len as usize;
        let g = Geneve {
            version: data[0] >> 6,
            opt_len,
            oam: data[1] & 0x80 != 0,
            critical: data[1] & 0x40 != 0,
            protocol,
            vni: u32::from_be_bytes([0, data[4], data[5], data[6]]),
            options: &data[8..hl.min(data.len())],
            len,
        };
        if !self.push(Layer::Geneve(g)) {
            return;
        }
        if data.len() < hl {
            self.trunc(Proto::Geneve, data, len);
            return;
        }
        self.ethertype_or_bridge(protocol, &data[hl..], sub(len, hl));
    }

    fn ethertype_or_bridge(&mut self, protocol: u16, data: &'a [u8], len: u32) {
        if protocol == 0x6558 {
            self.ether(data, len, false);
        } else {
            self.ethertype(protocol, data, len);
        }
    }

    fn dns(&mut self, data: &'a [u8], len: u32, over_tcp: bool) {
        if data.len() < 12 {
            self.trunc(Proto::Dns, data, len);
            return;
        }
        let w = |i: usize| u16::from_be_bytes([data[i], data[i + 1]]);
        self.push(Layer::Dns(Dns {
            msg: data,
            id: w(0),
            flags: w(2),
            qdcount: w(4),
            ancount: w(6),
            nscount: w(8),
            arcount: w(10),
            len,
            over_tcp,
        }));
    }
}

/// Reads a possibly compressed DNS name starting at `at` in `msg`, calling `label` for each
/// label. Returns the offset just after the name in the original position, or `None` when the
/// name runs past the captured bytes, loops, or uses a reserved label type.
pub fn dns_name(msg: &[u8], at: usize, mut label: impl FnMut(&[u8])) -> Option<usize> {
    let mut pos = at;
    let mut end = None;
    let mut jumps = 0;
    loop {
        let n = u8_at(msg, pos)?;
        match n & 0xc0 {
            0x00 => {
                if n == 0 {
                    return Some(end.unwrap_or(pos + 1));
                }
                let l = msg.get(pos + 1..pos + 1 + usize::from(n))?;
                label(l);
                pos += 1 + usize::from(n);
            }
            0xc0 => {
                let target = usize::from(be16(msg, pos)? & 0x3fff);
                if end.is_none() {
                    end = Some(pos + 2);
                }
                jumps += 1;
                if jumps > 64 {
                    return None;
                }
                pos = target;
            }
            _ => return None,
        }
    }
}
