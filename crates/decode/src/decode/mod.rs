//! The zero-copy layered decoder: bytes of one packet → a short list of [`Layer`]s.
//!
//! Each layer is a small `Copy` struct that borrows the packet; decoding allocates nothing. The
//! list lives in a fixed array ([`MAX_LAYERS`] entries; deeper nesting ends in a
//! [`Layer::Payload`]). Every layer records `len`, the length the enclosing header says it has
//! (what tcpdump prints as "length"), which may exceed the captured bytes. When the capture ends
//! inside a header, the list ends with [`Layer::Truncated`], naming the protocol and the bytes
//! that were there; a header whose fields contradict themselves (IHL below 5, UDP length below
//! 8…) ends it with [`Layer::Malformed`]. Nothing here panics on any input.
//!
//! Headers are read through [`sift_wire`]'s views. The decoder checks the captured length
//! against each header's fixed part (the wire modules' `HEADER_LEN`) once, then reads fields
//! with the unchecked view, so no length is checked twice. It does not use the views' checked
//! constructors because a capture is allowed to end inside a header or its options: tcpdump
//! prints what is there, and so must the decoder.
//!
//! The decoding is split by layer: `link.rs` (Ethernet, VLAN tags, cooked
//! headers, loopback, MPLS, PPPoE, ARP), `network.rs` (IPv4, IPv6 and its extension headers),
//! `transport.rs` (TCP, UDP, SCTP, ICMP, DNS) and `tunnel.rs` (GRE, VXLAN, Geneve).

mod layers;
mod link;
mod network;
mod transport;
mod tunnel;

pub use layers::*;

use crate::out::{be16, u8_at};
use sift_wire::LinkType;

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
        LinkType::EN10MB => cx.ether(data, wire),
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

/// The decoding context: the list being filled.
struct Cx<'d, 'a> {
    d: &'d mut Decoded<'a>,
    /// `-T`: how transport payloads are read, instead of by port.
    packet_type: Option<PacketType>,
}

/// `len` less `n`, not below 0.
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
