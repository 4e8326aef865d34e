//! The packet and interface model shared by readers and writers.

use sift_wire::LinkType;

/// A capture timestamp: seconds since the Unix epoch and nanoseconds within the second.
///
/// Nanoseconds are exact for every pcap file and for pcapng resolutions down to 1 ns; finer
/// pcapng resolutions are truncated to the nanosecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    pub secs: u64,
    /// Nanoseconds, `0..1_000_000_000`.
    pub nanos: u32,
}

impl Timestamp {
    /// Builds a timestamp from seconds and nanoseconds (nanoseconds must be below 10^9).
    pub const fn new(secs: u64, nanos: u32) -> Self {
        Timestamp { secs, nanos }
    }

    /// Converts a count of `1/units_per_sec` units since the epoch.
    pub fn from_units(units: u64, resolution: TsResolution) -> Self {
        let ups = resolution.units_per_sec();
        let secs = units / ups;
        let frac = units % ups;
        let nanos = (u128::from(frac) * 1_000_000_000 / u128::from(ups)) as u32;
        Timestamp { secs, nanos }
    }

    /// Converts to a count of `1/units_per_sec` units since the epoch; `None` if it does not fit
    /// in 64 bits.
    ///
    /// When some count converts back to exactly this timestamp (as when it was read at this
    /// resolution), that count is returned, so read → write → read is the identity even for
    /// resolutions that do not divide a nanosecond (2^-30 s); otherwise the time is truncated.
    pub fn to_units(self, resolution: TsResolution) -> Option<u64> {
        let ups = u128::from(resolution.units_per_sec());
        let whole = u128::from(self.secs) * ups;
        let frac = u128::from(self.nanos) * ups / 1_000_000_000;
        let truncated = u64::try_from(whole + frac).ok()?;
        match truncated.checked_add(1) {
            Some(up)
                if Timestamp::from_units(truncated, resolution) != self
                    && Timestamp::from_units(up, resolution) == self =>
            {
                Some(up)
            }
            _ => Some(truncated),
        }
    }
}

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
    /// The snapshot length; 0 means "no limit" in pcapng.
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
}

impl Interface {
    /// An interface with the given link type and snapshot length and default everything else.
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
