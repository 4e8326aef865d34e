//! Packet decoding and printing: tcpdump-style text and JSON, one packet at a time.
//!
//! `sift -r FILE` prints what it reads the way `tcpdump -n` does, and `sift --json` writes one
//! JSON object per packet for jq, pandas or DuckDB. Both renderers share one decoder:
//!
//! * [`decode()`] turns a packet's bytes into a short list of [`Layer`]s (Ethernet, Linux
//!   cooked v1/v2, BSD loopback, raw IP, 802.1Q/QinQ, MPLS, PPPoE, ARP, IPv4, IPv6 and its
//!   extension headers, TCP, UDP, SCTP, ICMP, ICMPv6, GRE, VXLAN, Geneve, DNS). Layers borrow
//!   the packet and live in a fixed array: decoding allocates nothing. A capture that ends
//!   inside a header ends the list with [`Layer::Truncated`]; inconsistent headers end it with
//!   [`Layer::Malformed`]; nothing panics.
//! * [`Printer`] renders tcpdump's one-line format (`-e`, `-q`, `-t`…`-ttttt`, `-x`/`-X`…,
//!   `-v`), keeping tcpdump's state across packets (relative TCP sequence numbers, time deltas).
//! * [`JsonWriter`] renders one JSON object per packet, following the schema in
//!   `schema/packet.schema.json`.
//!
//! Both write into a caller-owned `Vec<u8>` that is meant to be reused across packets.
//! Names are always numeric (tcpdump's `-n`): no resolver is ever consulted.
#![forbid(unsafe_code)]

pub mod decode;
mod json;
mod names;
mod out;
mod text;
mod time;

pub use decode::{Decoded, Layer, PacketType, Proto, decode, decode_with};
pub use json::JsonWriter;
pub use text::{HexDump, Options, Printer};
pub use time::{TimeFormat, UtcOffset};
