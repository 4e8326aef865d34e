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
//!   so mixed link types need no special case downstream.
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
pub use reader::{ClippedRecords, Format, Reader, open};
pub use reader::{SkippedDamage, same_file};
/// Link types are [`sift_wire`]'s (one table for the workspace).
pub use sift_wire::LinkType;
/// Timestamps are [`sift_wire`]'s (every source of packets shares them).
pub use sift_wire::Timestamp;
pub use types::{Interface, InterfaceStats, Packet, Precision, TsResolution};
pub use writer::{PcapWriter, PcapngWriter, WriteError};

/// The largest captured length accepted in a record (libpcap's `MAXIMUM_SNAPLEN`, 256 KiB).
pub const MAX_CAPLEN: u32 = 262_144;
