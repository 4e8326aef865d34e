//! A deterministic generator of realistic packets, for tests, samples and benchmarks.
//!
//! Much of sift is tested by running something over many packets and comparing with a
//! reference: the capture crate writes and re-reads generated frames, the filter compiler is
//! compared with libpcap on them, benchmarks run over millions of them. Those packets must be
//!
//! * **realistic**, so that filters match a useful fraction and every protocol path is taken:
//!   TCP connections with handshakes, data and closes, DNS, pings, ARP, neighbour discovery,
//!   SCTP, fragments, IPv6 extension headers, VLAN/QinQ/MPLS/PPPoE, VXLAN/Geneve/GRE tunnels,
//!   on six link types, plus truncated and deliberately malformed frames on request;
//! * **reproducible**: the same seed gives the same bytes, always. The crate therefore has its
//!   own small PRNG ([`rng`], xoshiro256** seeded by SplitMix64) and its own integer-only
//!   sampling, and **deliberately depends on nothing outside sift**, not even `rand`: a
//!   dependency upgrade could otherwise silently change every generated capture, golden file
//!   and benchmark input. Headers and checksums come from [`sift_wire`], itself a leaf with no
//!   dependencies. A test pins a digest of a fixed-seed stream; changing the stream is a
//!   conscious decision.
//!
//! The pieces:
//!
//! * [`build`]: packet builders that write headers into a `Vec<u8>` through
//!   [`sift_wire`]'s representations and views, and fill in next-protocol fields, lengths and
//!   checksums (Internet checksum, pseudo-headers, SCTP's CRC32c, all [`sift_wire::checksum`]);
//! * [`generator`]: the traffic model, [`Generator::next_frame`];
//! * [`pools`]: the fixed address and port pools (documentation ranges only);
//! * [`rng`]: the PRNG, public for tests that check it independently.
//!
//! ```
//! use sift_gen::{Config, Generator, Link};
//!
//! let mut generator = Generator::new(7, Config::with_link(Link::Ethernet));
//! let mut frame = Vec::new();
//! let meta = generator.next_frame(&mut frame);
//! assert_eq!(generator.link_type(), sift_wire::LinkType::EN10MB);
//! assert!(frame.len() <= meta.wire_len as usize);
//! ```
#![forbid(unsafe_code)]

pub mod build;
pub mod filters;
pub mod generator;
pub mod pools;
pub mod rng;

pub use build::Packet;
pub use generator::{Config, FrameMeta, Generator, Link, Mix};
pub use rng::{Prob, Rng};
