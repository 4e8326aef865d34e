//! What a [`Generator`](super::Generator) is asked for: the link type, the traffic mix and
//! the damage rates, and what it says about each frame.

use sift_wire::LinkType;

/// The link-layer encapsulation of generated frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Link {
    /// Ethernet II (LINKTYPE_ETHERNET / DLT_EN10MB, 1).
    Ethernet,
    /// Linux cooked capture v1 (LINKTYPE_LINUX_SLL, 113).
    LinuxSll,
    /// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276).
    LinuxSll2,
    /// Raw IP, no link header (LINKTYPE_RAW, 101).
    Raw,
    /// BSD loopback, host-order (here little-endian) address family (LINKTYPE_NULL, 0).
    Null,
    /// OpenBSD loopback, network-order address family (LINKTYPE_LOOP, 108).
    Loop,
}

impl Link {
    /// Every link type, in a fixed order.
    pub const ALL: [Link; 6] =
        [Link::Ethernet, Link::LinuxSll, Link::LinuxSll2, Link::Raw, Link::Null, Link::Loop];

    /// The link type of the frames.
    pub fn link_type(self) -> LinkType {
        match self {
            Link::Ethernet => LinkType::EN10MB,
            Link::LinuxSll => LinkType::LINUX_SLL,
            Link::LinuxSll2 => LinkType::LINUX_SLL2,
            Link::Raw => LinkType::RAW,
            Link::Null => LinkType::NULL,
            Link::Loop => LinkType::LOOP,
        }
    }

    /// The LINKTYPE_ number written in pcap and pcapng files.
    pub fn linktype(self) -> u32 {
        self.link_type().number().into()
    }

    /// libpcap's name for the link type (`tcpdump -y`).
    pub fn name(self) -> &'static str {
        self.link_type().name().unwrap_or("")
    }

    /// Whether frames carry an Ethernet-like header with an EtherType, so that ARP and
    /// neighbour discovery make sense.
    pub fn has_ethertype(self) -> bool {
        matches!(self, Link::Ethernet | Link::LinuxSll | Link::LinuxSll2)
    }
}

/// Relative weights of the flow kinds started by the generator (0 disables a kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    /// TCP connections: handshake, HTTP / TLS-like / bulk exchanges, FIN or RST close.
    pub tcp: u32,
    /// DNS query and response (UDP 53).
    pub dns: u32,
    /// Pings (ICMP or ICMPv6 echo).
    pub ping: u32,
    /// ARP request and reply (Ethernet-like links only).
    pub arp: u32,
    /// IPv6 neighbour solicitation and advertisement.
    pub ndp: u32,
    /// SCTP associations: INIT handshake, DATA and SACK.
    pub sctp: u32,
    /// Small syslog datagrams (UDP 514).
    pub syslog: u32,
    /// Large UDP datagrams sent as IP fragments (IPv4, or IPv6 fragment headers).
    pub fragments: u32,
}

impl Default for Mix {
    fn default() -> Mix {
        Mix { tcp: 55, dns: 15, ping: 6, arp: 4, ndp: 3, sctp: 3, syslog: 10, fragments: 4 }
    }
}

/// Generator settings. `Config::default()` gives Ethernet frames with a realistic mix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Link-layer encapsulation.
    pub link: Link,
    /// Timestamp of the first frame, in nanoseconds since the epoch.
    pub start_ns: u64,
    /// Mean gap between frames, in nanoseconds.
    pub mean_gap_ns: u64,
    /// Captured length limit.
    pub snaplen: u32,
    /// Fraction of frames additionally cut at a random length below what the snap length keeps
    /// (so `caplen < wirelen`).
    pub truncate: f64,
    /// Fraction of frames deliberately malformed (bad checksums, impossible lengths, short
    /// headers).
    pub malformed: f64,
    /// Fraction of IP flows over IPv6.
    pub ipv6: f64,
    /// Fraction of flows (Ethernet only) carried in 802.1Q, QinQ, MPLS or PPPoE.
    pub encapsulation: f64,
    /// Fraction of IPv4 flows carried in a tunnel (VXLAN, Geneve, GRE).
    pub tunnels: f64,
    /// Fraction of IPv4 flows with IP options.
    pub ipv4_options: f64,
    /// Fraction of IPv6 flows with extension headers.
    pub ipv6_extensions: f64,
    /// Flow-kind weights.
    pub mix: Mix,
    /// Maximum number of flows open at once (at least 1).
    pub max_flows: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            link: Link::Ethernet,
            start_ns: 1_700_000_000_000_000_000,
            mean_gap_ns: 20_000,
            snaplen: 262_144,
            truncate: 0.0,
            malformed: 0.0,
            ipv6: 0.25,
            encapsulation: 0.08,
            tunnels: 0.03,
            ipv4_options: 0.02,
            ipv6_extensions: 0.08,
            mix: Mix::default(),
            max_flows: 32,
        }
    }
}

impl Config {
    /// The default configuration on another link type.
    pub fn with_link(link: Link) -> Config {
        Config { link, ..Config::default() }
    }
}

/// What [`Generator::next_frame`](super::Generator::next_frame) says about the frame it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameMeta {
    /// Seconds since the epoch.
    pub ts_sec: u64,
    /// Nanoseconds within the second.
    pub ts_nsec: u32,
    /// The frame's length on the wire; the buffer holds the captured bytes (at most this many).
    pub wire_len: u32,
    /// Whether the frame was deliberately malformed.
    pub malformed: bool,
}
