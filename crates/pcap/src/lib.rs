//! Capture files: pcap and pcapng, read and written.
//!
//! Every tool in this field stands on two file formats: classic pcap (libpcap's savefile, in two
//! byte orders and two timestamp precisions) and pcapng (blocks, sections, several interfaces
//! with their own link types). This crate reads both behind one [`Reader`] and writes both with
//! [`PcapWriter`] and [`PcapngWriter`].
//!
//! Design choices:
//!
//! * **Zero copy.** A file is memory-mapped and [`Reader::next_packet`] hands out [`Packet`]s
//!   that borrow the map, so iterating allocates nothing per packet. Pipes (`-r -`) use the same
//!   parser over a refilled buffer; the two differ only in how bytes arrive ([`reader`]).
//! * **Bad input is normal input.** A damaged file ends the iteration with an [`Error`] that
//!   names the byte offset and what was wrong; every intact packet before it has already been
//!   delivered. Nothing here panics on any input (fuzzed by `fuzz/fuzz_targets/pcap*_read.rs`).
//! * **One packet model.** A packet carries the index of the interface it came from; a pcap file
//!   has exactly one interface, a pcapng file as many as it describes (across all its sections),
//!   so mixed link types need no special case downstream. Which way a pcapng packet crossed its
//!   interface (`epb_flags`) comes with [`Reader::next_with_flags`].
//! * **Copies as tcpdump's.** What libpcap reads without checking is read the same way, so a
//!   copy is byte for byte what `tcpdump -r IN -w OUT` writes: a bogus snapshot length is the
//!   link type's largest ([`adjusted_snaplen`]), a record's out-of-range fraction of a second is
//!   kept as recorded ([`Timestamp::from_record`]), pcapng times count modulo 2^64 and a pcap
//!   record gets their low 32 bits. Each such change is counted for the caller to warn about
//!   ([`Reader::adjustments`], [`PcapWriter::wrapped`], [`PcapngWriter::clamped`]).
//! * **Explicit byte order.** Every field is read with an explicit endianness; the host's order
//!   never leaks in. Writers emit little-endian files (what tcpdump writes on x86-64 and arm64).
#![forbid(unsafe_code)]

mod error;
mod pcap;
mod pcapng;
pub mod reader;
pub mod split;
mod types;
mod writer;

pub use error::{Error, ErrorKind};
pub use reader::{Adjustments, SkippedDamage, same_file};
pub use reader::{ClippedRecords, Format, Reader, open};
/// Link types are [`sift_wire`]'s (one table for the workspace).
pub use sift_wire::LinkType;
/// Timestamps are [`sift_wire`]'s (every source of packets shares them).
pub use sift_wire::Timestamp;
/// How libpcap hands tcpdump a timestamp, and what a pcap record's fields mean to it.
pub use sift_wire::timestamp::{FieldSign, FracUnit, Timeval};
pub use types::{
    Direction, Interface, InterfaceStats, Packet, PacketFlags, Precision, TsResolution,
};
pub use writer::{ChangedTimestamps, PcapWriter, PcapngWriter, WriteError};

/// The largest captured length accepted in a record of most link types (libpcap's
/// `MAXIMUM_SNAPLEN`, 256 KiB); [`max_snaplen`] gives the exceptions.
pub const MAX_CAPLEN: u32 = 262_144;

/// The largest captured length libpcap accepts for `link_type` (`max_snaplen_for_dlt`):
/// [`MAX_CAPLEN`], except D-Bus (128 MiB), USBPcap (1 MiB) and EBHSCR (8 MiB) whose messages
/// are longer.
pub fn max_snaplen(link_type: LinkType) -> u32 {
    match link_type.number() {
        231 => 128 << 20,
        249 => 1 << 20,
        279 => 8 << 20,
        _ => MAX_CAPLEN,
    }
}

/// The snapshot length libpcap reads for a file header's or an interface's `snaplen`
/// (`pcap_adjust_snapshot`): a bogus one (0, or above 2^31 − 1) is the link type's
/// [`max_snaplen`]; any other is kept, even above that maximum. tcpdump writes this value into
/// the header of a copy.
pub fn adjusted_snaplen(link_type: LinkType, snaplen: u32) -> u32 {
    if snaplen == 0 || snaplen > i32::MAX as u32 { max_snaplen(link_type) } else { snaplen }
}
