//! Packet builders: write protocol headers into a `Vec<u8>`, outermost first.
//!
//! A [`Packet`] appends one layer per call, writing it through [`sift_wire`]'s
//! representations and views, and remembers two kinds of loose ends:
//!
//! * the **next-protocol field** of the layer just written (an EtherType, an IP protocol
//!   number, a PPP protocol, an `AF_` value…), filled in by whichever layer comes next, so
//!   `p.ethernet(..).ipv4(..).udp(..)` gets 0x0800 and 17 without the caller naming them;
//! * **length and checksum fields**, which depend on everything after the header. They are
//!   filled in by [`Packet::finish`], innermost layer first, so an outer checksum covers inner
//!   headers that are already final (VXLAN inside UDP, IPv4 inside GRE…).
//!
//! Every layer is assumed to extend to the end of the frame (no trailers), which holds for the
//! protocols here; Ethernet padding is added by the caller after `finish`. Builders never panic:
//! a layer that cannot be named by the previous layer's next-protocol field (ARP inside IPv4)
//! leaves that field as it was, and a length too large for its field is truncated to the field.
//!
//! The layers are split by seam: link and network layers here, transports, tunnels and DNS in
//! `transport.rs`, and the fix-ups `finish` applies in `finish.rs`.

mod finish;
mod transport;

use sift_wire::arp::{ArpPacket, ArpRepr};
use sift_wire::ethernet::{EthernetFrame, EthernetRepr, VlanRepr, VlanTag};
use sift_wire::ipv4::{Ipv4Packet, Ipv4Repr};
use sift_wire::ipv6::{Ipv6Packet, Ipv6Repr};
use sift_wire::ipv6ext::{Ipv6ExtHeader, Ipv6ExtRepr, Ipv6FragmentRepr};
use sift_wire::loopback::{self, LoopbackPacket};
use sift_wire::mpls::{MplsPacket, MplsRepr};
use sift_wire::pppoe::{self, PppoePacket, PppoeSessionRepr};
use sift_wire::sll::{Sll2Packet, SllPacket, SllRepr};
use sift_wire::{ethertype, ipproto};

pub use finish::Fixup;
pub use sift_wire::ethernet::Mac;
pub use transport::{DnsAnswer, dns_type};

use finish::{FixupKind, IpRef};

/// The numbers by which the header in front can name a layer: its EtherType, IP protocol, PPP
/// protocol and BSD address family (`None` where a number space has none for it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Names {
    ethertype: Option<u16>,
    ip_proto: Option<u8>,
    ppp: Option<u16>,
    af: Option<u32>,
}

impl Names {
    const NONE: Names = Names { ethertype: None, ip_proto: None, ppp: None, af: None };

    /// A layer named by an EtherType only.
    pub(crate) const fn ether(ethertype: u16) -> Names {
        Names { ethertype: Some(ethertype), ..Names::NONE }
    }

    /// A layer named by an IP protocol number only.
    pub(crate) const fn ip(protocol: u8) -> Names {
        Names { ip_proto: Some(protocol), ..Names::NONE }
    }
}

/// IPv4 in every number space.
const IPV4: Names = Names {
    ethertype: Some(ethertype::IPV4),
    ip_proto: Some(ipproto::IPIP),
    ppp: Some(pppoe::PPP_IPV4),
    af: Some(loopback::AF_INET),
};

/// IPv6 in every number space (the address family as on the BSDs: 24).
const IPV6: Names = Names {
    ethertype: Some(ethertype::IPV6),
    ip_proto: Some(ipproto::IPV6),
    ppp: Some(pppoe::PPP_IPV6),
    af: Some(loopback::AF_INET6_BSD),
};

/// The header (by its start) whose next-protocol field the next layer fills in.
#[derive(Clone, Copy, Debug)]
enum NextField {
    Ethernet(usize),
    Vlan(usize),
    Sll(usize),
    Sll2(usize),
    Gre(usize),
    Geneve(usize),
    Pppoe(usize),
    Ipv4(usize),
    Ipv6(usize),
    Ext(usize),
    LoopbackLe(usize),
    LoopbackBe(usize),
}

/// A plain IPv4 header for [`Packet::ipv4`]: TTL 64, DF set, no options. The protocol and
/// the lengths are the builder's to fill.
pub const fn ipv4_header(src: [u8; 4], dst: [u8; 4]) -> Ipv4Repr<'static> {
    Ipv4Repr {
        src,
        dst,
        protocol: 0,
        ttl: 64,
        tos: 0,
        ident: 0,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        options: &[],
        payload_len: 0,
    }
}

/// A plain IPv6 header for [`Packet::ipv6`]: hop limit 64. The next header and the payload
/// length are the builder's to fill.
pub const fn ipv6_header(src: [u8; 16], dst: [u8; 16]) -> Ipv6Repr {
    Ipv6Repr {
        src,
        dst,
        next_header: 0,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
        payload_len: 0,
    }
}

/// Builds one frame into a caller-owned buffer. See the module documentation.
#[derive(Debug)]
pub struct Packet<'a> {
    buf: &'a mut Vec<u8>,
    fixups: &'a mut Vec<Fixup>,
    next: Option<NextField>,
    ip: IpRef,
}

impl<'a> Packet<'a> {
    /// Starts a frame: clears `buf` and `scratch` (which holds pending fixups; reuse it to
    /// avoid allocating per frame).
    pub fn new(buf: &'a mut Vec<u8>, scratch: &'a mut Vec<Fixup>) -> Packet<'a> {
        buf.clear();
        scratch.clear();
        Packet { buf, fixups: scratch, next: None, ip: IpRef::None }
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        self.buf
    }

    /// The length written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Appends `n` zero bytes for a header and returns where it starts.
    fn grow(&mut self, n: usize) -> usize {
        let at = self.buf.len();
        self.buf.resize(at + n, 0);
        at
    }

    /// The buffer from `at` on, if it still holds `need` bytes there (the caller may have
    /// shortened it through [`Packet::buf_mut`]).
    fn at(&mut self, at: usize, need: usize) -> Option<&mut [u8]> {
        self.buf.get_mut(at..).filter(|b| b.len() >= need)
    }

    fn announce(&mut self, names: Names) {
        let Some(next) = self.next.take() else { return };
        let ether = names.ethertype;
        let ip = names.ip_proto;
        match next {
            NextField::Ethernet(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 14)) {
                    EthernetFrame::new_unchecked(b).set_ethertype(v);
                }
            }
            NextField::Vlan(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 4)) {
                    VlanTag::new_unchecked(b).set_ethertype(v);
                }
            }
            NextField::Sll(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 16)) {
                    SllPacket::new_unchecked(b).set_protocol(v);
                }
            }
            NextField::Sll2(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 20)) {
                    Sll2Packet::new_unchecked(b).set_protocol(v);
                }
            }
            NextField::Gre(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 4)) {
                    sift_wire::gre::GrePacket::new_unchecked(b).set_protocol_type(v);
                }
            }
            NextField::Geneve(at) => {
                if let (Some(v), Some(b)) = (ether, self.at(at, 8)) {
                    sift_wire::geneve::GenevePacket::new_unchecked(b).set_protocol_type(v);
                }
            }
            NextField::Pppoe(at) => {
                if let (Some(v), Some(b)) = (names.ppp, self.at(at, 8)) {
                    PppoePacket::new_unchecked(b).set_ppp_protocol(v);
                }
            }
            NextField::Ipv4(at) => {
                if let (Some(v), Some(b)) = (ip, self.at(at, 20)) {
                    Ipv4Packet::new_unchecked(b).set_protocol(v);
                }
            }
            NextField::Ipv6(at) => {
                if let (Some(v), Some(b)) = (ip, self.at(at, 40)) {
                    Ipv6Packet::new_unchecked(b).set_next_header(v);
                }
            }
            NextField::Ext(at) => {
                if let (Some(v), Some(b)) = (ip, self.at(at, 2)) {
                    Ipv6ExtHeader::new_unchecked(ipproto::DSTOPTS, b).set_next_header(v);
                }
            }
            NextField::LoopbackLe(at) => {
                if let (Some(v), Some(b)) = (names.af, self.at(at, 4)) {
                    LoopbackPacket::new_unchecked(b).set_family_le(v);
                }
            }
            NextField::LoopbackBe(at) => {
                if let (Some(v), Some(b)) = (names.af, self.at(at, 4)) {
                    LoopbackPacket::new_unchecked(b).set_family_be(v);
                }
            }
        }
    }

    fn fixup(&mut self, kind: FixupKind, start: usize) {
        self.fixups.push(Fixup { kind, start });
    }

    /// The buffer itself, to append bytes with `std::io::Write` (`write!`). Appending is the
    /// only sensible use: the pending fixups point into it.
    pub fn buf_mut(&mut self) -> &mut Vec<u8> {
        self.next = None;
        self.buf
    }

    /// Appends raw bytes (a payload, or a header this module does not build).
    pub fn payload(&mut self, data: &[u8]) -> &mut Self {
        self.next = None;
        self.buf.extend_from_slice(data);
        self
    }

    /// Appends `n` copies of `byte`.
    pub fn fill(&mut self, n: usize, byte: u8) -> &mut Self {
        self.next = None;
        self.buf.resize(self.buf.len() + n, byte);
        self
    }

    /// Appends `n` bytes produced by `f(i)`.
    pub fn payload_with(&mut self, n: usize, mut f: impl FnMut(usize) -> u8) -> &mut Self {
        self.next = None;
        self.buf.extend((0..n).map(&mut f));
        self
    }

    // ---- Link layers -------------------------------------------------------------------------

    /// Ethernet II header (EtherType filled by the next layer).
    pub fn ethernet(&mut self, dst: Mac, src: Mac) -> &mut Self {
        self.announce(Names::ether(ethertype::TEB));
        let at = self.grow(sift_wire::ethernet::HEADER_LEN);
        let repr = EthernetRepr { dst, src, ethertype: 0 };
        repr.emit(&mut EthernetFrame::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Ethernet(at));
        self
    }

    /// Linux cooked header v1 (DLT_LINUX_SLL, 16 bytes) for an Ethernet device: packet type
    /// (0 to us, 1 broadcast, 2 multicast, 3 other host, 4 outgoing) and the sender's MAC.
    pub fn linux_sll(&mut self, packet_type: u16, src: Mac) -> &mut Self {
        let at = self.grow(sift_wire::sll::HEADER_LEN);
        let repr = SllRepr::ethernet(packet_type, src, 0, 0);
        repr.emit(&mut SllPacket::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Sll(at));
        self
    }

    /// Linux cooked header v2 (DLT_LINUX_SLL2, 20 bytes) for an Ethernet device.
    pub fn linux_sll2(&mut self, packet_type: u8, ifindex: u32, src: Mac) -> &mut Self {
        let at = self.grow(sift_wire::sll::V2_HEADER_LEN);
        let repr = SllRepr::ethernet(packet_type.into(), src, 0, ifindex);
        repr.emit_v2(&mut Sll2Packet::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Sll2(at));
        self
    }

    /// BSD loopback header (DLT_NULL): the address family in little-endian byte order, as
    /// written by a little-endian host (pair it with a little-endian capture file).
    pub fn null_header(&mut self) -> &mut Self {
        let at = self.grow(loopback::HEADER_LEN);
        self.next = Some(NextField::LoopbackLe(at));
        self
    }

    /// OpenBSD loopback header (DLT_LOOP): the address family in network byte order.
    pub fn loop_header(&mut self) -> &mut Self {
        let at = self.grow(loopback::HEADER_LEN);
        self.next = Some(NextField::LoopbackBe(at));
        self
    }

    /// An 802.1Q (`outer == false`, TPID 0x8100) or 802.1ad (`outer == true`, 0x88a8) tag.
    pub fn vlan(&mut self, outer: bool, pcp: u8, vid: u16) -> &mut Self {
        self.announce(Names::ether(if outer { ethertype::QINQ } else { ethertype::VLAN }));
        let at = self.grow(sift_wire::ethernet::VLAN_TAG_LEN);
        let repr = VlanRepr { pcp, dei: false, vid, ethertype: 0 };
        repr.emit(&mut VlanTag::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Vlan(at));
        self
    }

    /// An MPLS label stack (bottom-of-stack set on the last label). MPLS has no next-protocol
    /// field: the payload must be IPv4 or IPv6, which readers tell apart by the version nibble.
    pub fn mpls(&mut self, labels: &[u32], ttl: u8) -> &mut Self {
        self.announce(Names::ether(ethertype::MPLS));
        for (i, &label) in labels.iter().enumerate() {
            let at = self.grow(sift_wire::mpls::HEADER_LEN);
            let repr = MplsRepr { label, traffic_class: 0, bottom: i + 1 == labels.len(), ttl };
            repr.emit(&mut MplsPacket::new_unchecked(&mut self.buf[at..]));
        }
        self.next = None;
        self
    }

    /// A PPPoE session header (RFC 2516) and the PPP protocol field.
    pub fn pppoe_session(&mut self, session_id: u16) -> &mut Self {
        self.announce(Names::ether(ethertype::PPPOE_SESSION));
        let at = self.grow(pppoe::SESSION_HEADER_LEN);
        self.fixup(FixupKind::Pppoe, at);
        let repr = PppoeSessionRepr { session_id, protocol: 0, payload_len: 0 };
        repr.emit(&mut PppoePacket::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Pppoe(at));
        self
    }

    /// An ARP packet for IPv4 over Ethernet (`op` 1 request, 2 reply).
    pub fn arp(&mut self, op: u16, sha: Mac, spa: [u8; 4], tha: Mac, tpa: [u8; 4]) -> &mut Self {
        self.announce(Names::ether(ethertype::ARP));
        let at = self.grow(sift_wire::arp::ETHERNET_IPV4_LEN);
        let repr = ArpRepr { op, sender_hw: sha, sender_ip: spa, target_hw: tha, target_ip: tpa };
        repr.emit(&mut ArpPacket::new_unchecked(&mut self.buf[at..]));
        self.next = None;
        self
    }

    // ---- Network layers ----------------------------------------------------------------------

    /// An IPv4 header (see [`ipv4_header`]); its protocol comes from the next layer, its total
    /// length and checksum from [`Packet::finish`] (`h.protocol` and `h.payload_len` are not
    /// used). Options are padded to a multiple of 4 with end-of-list bytes (at most 40 kept).
    pub fn ipv4(&mut self, h: &Ipv4Repr<'_>) -> &mut Self {
        self.announce(IPV4);
        let repr = Ipv4Repr { protocol: 0, payload_len: 0, ..*h };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut Ipv4Packet::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Ipv4(at));
        self.fixup(FixupKind::Ipv4, at);
        self.ip = IpRef::V4(at);
        self
    }

    /// An IPv6 header (see [`ipv6_header`]); its next header comes from the next layer, its
    /// payload length from [`Packet::finish`].
    pub fn ipv6(&mut self, h: &Ipv6Repr) -> &mut Self {
        self.announce(IPV6);
        let repr = Ipv6Repr { next_header: 0, payload_len: 0, ..*h };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut Ipv6Packet::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Ipv6(at));
        self.fixup(FixupKind::Ipv6, at);
        self.ip = IpRef::V6(at);
        self
    }

    /// An IPv6 hop-by-hop, destination options or routing header with `data` after its length
    /// byte.
    fn ext_header(&mut self, kind: u8, data: &[u8]) -> &mut Self {
        self.announce(Names::ip(kind));
        let repr = Ipv6ExtRepr { next_header: 0, data };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut Ipv6ExtHeader::new_unchecked(kind, &mut self.buf[at..]));
        self.next = Some(NextField::Ext(at));
        self
    }

    /// An IPv6 hop-by-hop options header: a router-alert option (MLD) when `router_alert`,
    /// padded to 8 bytes.
    pub fn ipv6_hop_by_hop(&mut self, router_alert: bool) -> &mut Self {
        let options: &[u8] = if router_alert {
            &[0x05, 0x02, 0x00, 0x00, 0x01, 0x00] // RA, PadN(0)
        } else {
            &[0x01, 0x04, 0, 0, 0, 0] // PadN(4)
        };
        self.ext_header(ipproto::HOPOPTS, options)
    }

    /// An IPv6 destination options header holding only padding (8 bytes).
    pub fn ipv6_dest_options(&mut self) -> &mut Self {
        self.ext_header(ipproto::DSTOPTS, &[0x01, 0x04, 0, 0, 0, 0])
    }

    /// An IPv6 segment routing header (routing type 4) with `segments_left` 0, i.e. as seen at
    /// the last segment: `segments[0]` should be the IPv6 destination (at most 16 kept).
    pub fn ipv6_routing_srh(&mut self, segments: &[[u8; 16]]) -> &mut Self {
        let segments = &segments[..segments.len().min(16)];
        // Routing type 4, segments left 0, last entry, flags 0, tag 0; then the segments.
        let mut data = [0u8; 6 + 16 * 16];
        data[0] = 4;
        data[2] = segments.len().saturating_sub(1) as u8;
        for (i, s) in segments.iter().enumerate() {
            data[6 + 16 * i..22 + 16 * i].copy_from_slice(s);
        }
        self.ext_header(ipproto::ROUTING, &data[..6 + 16 * segments.len()])
    }

    /// An IPv6 fragment header (`offset` in 8-byte units).
    pub fn ipv6_fragment(&mut self, offset: u16, more: bool, id: u32) -> &mut Self {
        self.announce(Names::ip(ipproto::FRAGMENT));
        let repr =
            Ipv6FragmentRepr { next_header: 0, frag_offset: offset, more_frags: more, ident: id };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut Ipv6ExtHeader::new_unchecked(ipproto::FRAGMENT, &mut self.buf[at..]));
        self.next = Some(NextField::Ext(at));
        self
    }

    /// Fills every pending length and checksum, innermost layer first, and returns the frame
    /// length.
    pub fn finish(self) -> usize {
        let end = self.buf.len();
        for fix in self.fixups.iter().rev() {
            finish::apply(self.buf, *fix, end);
        }
        self.fixups.clear();
        end
    }
}

#[cfg(test)]
mod tests;
