//! What is on the wire: the numbers and headers every layer of sift agrees on.
//!
//! **Why it exists.** Reading a file, compiling a filter, printing a packet, generating traffic
//! and rewriting addresses in a firewall all need the same facts: which link type a number is,
//! what an EtherType or IP protocol number means, where a header's fields are and how its
//! checksum is computed. This crate holds each of those facts once. It is a leaf: it depends
//! on nothing (not even in sift), so the generator that builds on it stays reproducible.
//!
//! - [`LinkType`]: link-layer header types, LINKTYPE and DLT numbers, names.
//! - [`ethertype`], [`ipproto`]: the numbers.
//! - [`checksum`]: the Internet checksum, pseudo-headers, RFC 1624 incremental updates, CRC32c.
//! - [`Timestamp`]: when a packet was seen.
//! - [`ports`]: where TCP, UDP, SCTP and DCCP keep their ports (a flow's 5-tuple).
//! - One module per header, each with a zero-copy view and (for the headers sift builds) a
//!   `Repr`: [`ethernet`] (and VLAN tags), [`sll`], [`loopback`], [`mpls`], [`pppoe`],
//!   [`arp`], [`ipv4`], [`ipv6`], [`ipv6ext`], [`tcp`], [`udp`], [`icmp`] (and ICMPv6),
//!   [`sctp`], [`gre`], [`vxlan`], [`geneve`].
//!
//! # Views and representations
//!
//! The split is smoltcp's. A **view** (`Ipv4Packet<T>`, `TcpPacket<T>`…) wraps any
//! `T: AsRef<[u8]>` starting at its header and reads fields in place; with `T: AsMut<[u8]>` it
//! writes them too. Field offsets are named once, in each module's `field` module.
//!
//! - `new_checked(buffer)` checks that the header fits and that its own length fields are
//!   consistent (an IPv4 header length of at least 20 that fits, a total length that fits…),
//!   and returns an [`Error`] naming the header, the byte offset and the problem. After it,
//!   no accessor panics.
//! - `new_unchecked(buffer)` checks nothing, for callers that have checked what they read: the
//!   fixed-field getters need the fixed header (each module's `HEADER_LEN`), the accessors of
//!   variable parts what `check_len` checks. Getters are `#[inline]` and index the buffer
//!   directly, so a caller that checked a length once pays for no second check.
//! - Views over a borrowed `&'a [u8]` hand out `payload()`, `options()` and the like for `'a`,
//!   so decoders can keep slices of the packet; `payload_mut()` and setters need `AsMut`.
//! - Option lists, chunk lists and IPv6 extension-header chains are walked by iterators that
//!   yield `Result`s and stop at the first error; the extension-header walk is bounded in
//!   count ([`ipv6ext::MAX_EXT_HEADERS`]), so a hostile chain costs bounded work.
//!
//! A **representation** (`Ipv4Repr`, `TcpRepr`…) is a plain struct of a header's meaning:
//! `parse(&view)` reads it, `buffer_len()` says how long it is on the wire and `emit(&mut view)`
//! writes it, so a packet can be built from a description. For canonical bytes (reserved bits
//! zero, options padded) `parse` then `emit` gives the same bytes, and `emit` then `parse`
//! gives the same representation. Checksums that cover a payload are filled by the view's
//! `fill_checksum` once the payload is in place.
//!
//! Checksums and the NAT case: views with a checksum have `verify_checksum` and
//! `fill_checksum`; IPv4, TCP and UDP also have `rewrite_*` setters that update the checksum
//! incrementally (RFC 1624), and `adjust_checksum` for a pseudo-header address rewritten in
//! the IP header.
//!
//! ```
//! use sift_wire::ipv4::{Ipv4Packet, Ipv4Repr};
//! use sift_wire::udp::{UdpPacket, UdpRepr};
//!
//! // Build: IPv4 + UDP + 4 bytes of data, from descriptions.
//! let ip = Ipv4Repr {
//!     src: [192, 0, 2, 1],
//!     dst: [198, 51, 100, 7],
//!     protocol: sift_wire::ipproto::UDP,
//!     ttl: 64,
//!     tos: 0,
//!     ident: 1,
//!     dont_frag: true,
//!     more_frags: false,
//!     frag_offset: 0,
//!     options: &[],
//!     payload_len: 12,
//! };
//! let mut buf = vec![0u8; 32];
//! ip.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
//! let mut udp = UdpPacket::new_unchecked(&mut buf[20..]);
//! UdpRepr { src_port: 4000, dst_port: 53, payload_len: 4 }.emit(&mut udp);
//! udp.payload_mut().copy_from_slice(b"sift");
//! udp.fill_checksum(&ip.src, &ip.dst);
//!
//! // Read back, checked.
//! let packet = Ipv4Packet::new_checked(&buf[..]).unwrap();
//! assert!(packet.verify_checksum());
//! let datagram = UdpPacket::new_checked(packet.payload()).unwrap();
//! assert_eq!(datagram.dst_port(), 53);
//! assert!(datagram.verify_checksum(&packet.src_addr(), &packet.dst_addr()));
//!
//! // Rewrite the source port (NAT): the checksum follows incrementally.
//! let mut datagram = UdpPacket::new_unchecked(&mut buf[20..]);
//! datagram.rewrite_src_port(40000);
//! assert!(datagram.verify_checksum(&[192, 0, 2, 1], &[198, 51, 100, 7]));
//! ```
#![forbid(unsafe_code)]

mod bytes;
mod error;

pub mod arp;
pub mod checksum;
pub mod ethernet;
pub mod ethertype;
pub mod geneve;
pub mod gre;
pub mod icmp;
pub mod ipproto;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod link;
pub mod loopback;
pub mod mpls;
pub mod ports;
pub mod pppoe;
pub mod sctp;
pub mod sll;
pub mod tcp;
pub mod timestamp;
pub mod udp;
pub mod vxlan;

pub use error::{Error, ErrorKind, Header, Result};
pub use link::LinkType;
pub use timestamp::Timestamp;
