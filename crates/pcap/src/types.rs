//! The packet and interface model shared by readers and writers.

use sift_wire::LinkType;
// Timestamps are sift-wire's (every source of packets shares them); readers and writers here
// use them through this path.
pub use sift_wire::Timestamp;

/// The resolution of timestamps on a pcapng interface (`if_tsresol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TsResolution {
    /// `10^-n` seconds per unit (`n` ≤ 19).
    Decimal(u8),
    /// `2^-n` seconds per unit (`n` ≤ 63).
    Binary(u8),
}

impl TsResolution {
    /// Microseconds, pcapng's default and classic pcap's.
    pub const MICRO: TsResolution = TsResolution::Decimal(6);
    /// Nanoseconds.
    pub const NANO: TsResolution = TsResolution::Decimal(9);

    /// Decodes an `if_tsresol` option byte; `None` for resolutions no 64-bit count can use.
    pub fn from_option_byte(b: u8) -> Option<Self> {
        let n = b & 0x7f;
        if b & 0x80 == 0 {
            (n <= 19).then_some(TsResolution::Decimal(n))
        } else {
            (n <= 63).then_some(TsResolution::Binary(n))
        }
    }

    /// The `if_tsresol` option byte.
    pub fn option_byte(self) -> u8 {
        match self {
            TsResolution::Decimal(n) => n,
            TsResolution::Binary(n) => 0x80 | n,
        }
    }

    /// Units per second.
    pub fn units_per_sec(self) -> u64 {
        match self {
            TsResolution::Decimal(n) => 10u64.pow(u32::from(n)),
            TsResolution::Binary(n) => 1u64 << n,
        }
    }
}

/// A resolution converts timestamps to and from counts ([`Timestamp::from_units`],
/// [`Timestamp::to_units`]).
impl sift_wire::timestamp::UnitsPerSec for TsResolution {
    fn units_per_sec(self) -> u64 {
        TsResolution::units_per_sec(self)
    }
}

/// Timestamp precision of a classic pcap file (its magic number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Magic `0xa1b2c3d4`: microseconds.
    #[default]
    Micro,
    /// Magic `0xa1b23c4d`: nanoseconds.
    Nano,
}

impl Precision {
    /// What a record's fraction field counts.
    pub fn unit(self) -> sift_wire::timestamp::FracUnit {
        match self {
            Precision::Micro => sift_wire::timestamp::FracUnit::Micros,
            Precision::Nano => sift_wire::timestamp::FracUnit::Nanos,
        }
    }

    /// The equivalent pcapng resolution.
    pub fn resolution(self) -> TsResolution {
        match self {
            Precision::Micro => TsResolution::MICRO,
            Precision::Nano => TsResolution::NANO,
        }
    }
}

/// One capture interface: a pcap file's header, or a pcapng Interface Description Block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// The link-layer header type.
    pub link_type: LinkType,
    /// The upper bits of a pcap file's link-type field (FCS length information); 0 for pcapng.
    pub link_type_ext: u32,
    /// The snapshot length. A reader gives libpcap's adjusted value
    /// ([`crate::adjusted_snaplen`]: never 0, the link type's maximum for a bogus one), the
    /// value tcpdump reports and writes into a copy; a writer writes what it is given (0 means
    /// "no limit" in pcapng).
    pub snaplen: u32,
    /// `if_name`, when the file gives one.
    pub name: Option<String>,
    /// `if_description`, when the file gives one.
    pub description: Option<String>,
    /// Timestamp resolution of this interface's packets.
    pub ts_resolution: TsResolution,
    /// `if_tsoffset`: seconds added to every timestamp of this interface.
    pub ts_offset: i64,
    /// Counters from the last Interface Statistics Block seen for this interface.
    pub stats: Option<InterfaceStats>,
    /// The pcapng section this interface belongs to (0 for pcap files).
    pub section: u32,
    /// Whether the file (pcapng: the section) that describes this interface stores its
    /// fields big-endian: the byte order of the system that wrote it, which libpcap's filter
    /// compiler follows for loopback headers (DLT_NULL's address family).
    pub big_endian: bool,
}

impl Interface {
    /// An interface with the given link type and snapshot length and default everything else
    /// (a little-endian file).
    pub fn new(link_type: LinkType, snaplen: u32, ts_resolution: TsResolution) -> Self {
        Interface {
            link_type,
            link_type_ext: 0,
            snaplen,
            name: None,
            description: None,
            ts_resolution,
            ts_offset: 0,
            stats: None,
            section: 0,
            big_endian: false,
        }
    }
}

/// Counters from a pcapng Interface Statistics Block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InterfaceStats {
    /// `isb_ifrecv`: packets received by the interface.
    pub received: Option<u64>,
    /// `isb_ifdrop`: packets dropped by the interface.
    pub dropped: Option<u64>,
    /// `isb_filteraccept`: packets accepted by the capture filter.
    pub filter_accepted: Option<u64>,
    /// `isb_osdrop`: packets dropped by the operating system.
    pub os_dropped: Option<u64>,
    /// `isb_usrdeliv`: packets delivered to the user.
    pub delivered: Option<u64>,
}

/// One captured packet, borrowed from the reader's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    /// When the packet was captured.
    pub timestamp: Timestamp,
    /// The length of the packet on the wire (`len`/`orig_len`); may exceed `data.len()`.
    pub wire_len: u32,
    /// The captured bytes (the record's `caplen` bytes).
    pub data: &'a [u8],
    /// Index into [`crate::Reader::interfaces`] of the interface the packet came from.
    pub interface: u32,
    /// The link type of that interface.
    pub link_type: LinkType,
    /// Byte offset of the packet's record or block in the file.
    pub offset: u64,
}

/// Which way a packet crossed its interface, as a pcapng packet block's flags say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Received by the interface.
    Inbound,
    /// Sent by the interface.
    Outbound,
}

/// The flags word of a pcapng packet: the Enhanced Packet Block's `epb_flags` option (code 2),
/// or the obsolete Packet Block's `pack_flags`. Bits 0–1 give the direction, bits 2–4 the
/// reception type, bits 5–8 the FCS length, bits 16–31 link-layer errors; sift reads the
/// direction ([`PacketFlags::direction`]) and keeps the rest as recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PacketFlags(pub u32);

impl PacketFlags {
    /// Flags that say only the direction.
    pub fn with_direction(dir: Direction) -> Self {
        PacketFlags(match dir {
            Direction::Inbound => 1,
            Direction::Outbound => 2,
        })
    }

    /// The direction, when the flags give one (bits 0–1: 1 inbound, 2 outbound; 0 says
    /// "not available" and 3 is not defined).
    pub fn direction(self) -> Option<Direction> {
        match self.0 & 3 {
            1 => Some(Direction::Inbound),
            2 => Some(Direction::Outbound),
            _ => None,
        }
    }
}
