//! What the decoder produces: one small `Copy` struct per header, borrowing the packet, and
//! the fixed-size list of them.

use sift_wire::LinkType;
use sift_wire::ethernet::Mac;

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
pub struct Ether {
    /// Destination MAC.
    pub dst: Mac,
    /// Source MAC.
    pub src: Mac,
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
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
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
    /// The fixed header as captured (40 bytes).
    pub header: &'a [u8],
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
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
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
    Ether(Ether),
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
    pub(super) layers: [Layer<'a>; MAX_LAYERS],
    pub(super) count: usize,
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

    pub(super) fn push(&mut self, layer: Layer<'a>) -> bool {
        if self.count < MAX_LAYERS {
            self.layers[self.count] = layer;
            self.count += 1;
            true
        } else {
            false
        }
    }
}
