//! Where a frame's headers are: one walk over Ethernet, up to two VLAN tags, ARP, IPv4, IPv6
//! (with its extension headers) and the transport header, shared by key extraction and by the
//! actions that rewrite fields, so that both agree on what a frame holds.
//!
//! A header is either whole and sane or absent: a truncated or damaged header ends the walk,
//! and what was read before it stays (OVS's `flow_extract` works the same way). Nothing here
//! panics on any input; every read is behind a length check.

use sift_wire::arp::{self, ArpPacket};
use sift_wire::ethernet::{self, VLAN_TAG_LEN};
use sift_wire::ipv4::{self, Ipv4Packet};
use sift_wire::ipv6::{self, Ipv6Packet};
use sift_wire::ipv6ext::{ExtHeaders, Ipv6ExtHeader};
use sift_wire::{ethertype, icmp, ipproto, sctp, tcp, udp};

/// `nw_frag` bit: the packet is a fragment (OVS's `FLOW_NW_FRAG_ANY`).
pub const NW_FRAG_ANY: u8 = 1;
/// `nw_frag` bit: a fragment other than the first (OVS's `FLOW_NW_FRAG_LATER`).
pub const NW_FRAG_LATER: u8 = 2;
/// The `dl_type` of frames whose type field is an 802.3 length (OVS's `FLOW_DL_TYPE_NONE`).
pub const DL_TYPE_NONE: u16 = 0x05ff;
/// The bit of a key's `vlan_tci` that says a tag is present (the tag's own DEI bit is not
/// kept, as in OVS).
pub const VLAN_PRESENT: u16 = 0x1000;
/// VLAN tags read into a key; a third tag's TPID is left as the key's `dl_type`.
pub const MAX_VLAN_TAGS: usize = 2;

/// The network header a frame carries, once checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Net {
    /// None, or not whole.
    #[default]
    None,
    /// IPv4 with this header length.
    Ipv4 { hlen: usize },
    /// IPv6 (the fixed header).
    Ipv6,
    /// Ethernet/IPv4 ARP, 28 bytes.
    Arp,
}

/// The transport header: where it starts and where the IP payload ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct L4 {
    /// Offset of the transport header.
    pub start: usize,
    /// End of the IP payload (the frame's end if the IP length says more).
    pub end: usize,
}

/// The offsets of a frame's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Whether the 14-byte Ethernet header is there.
    pub eth: bool,
    /// Complete VLAN tags after the MAC addresses.
    pub tags: usize,
    /// Their TCIs, outer first.
    pub tcis: [u16; MAX_VLAN_TAGS],
    /// The EtherType after the tags (0 without an Ethernet header).
    pub dl_type: u16,
    /// Offset of the network header.
    pub l3: usize,
    /// The network header.
    pub net: Net,
    /// IP protocol (after IPv6 extension headers), or ARP's opcode when it fits in 8 bits.
    pub nw_proto: u8,
    /// `NW_FRAG_*` bits.
    pub nw_frag: u8,
    /// The transport header, when whole and not in a later fragment.
    pub l4: Option<L4>,
}

impl Layout {
    /// Walks `frame`.
    pub fn of(frame: &[u8]) -> Layout {
        let mut l = Layout::default();
        if frame.len() < ethernet::HEADER_LEN {
            return l;
        }
        l.eth = true;
        let mut at = ethernet::field::ETHERTYPE;
        let mut ty = u16::from_be_bytes([frame[at], frame[at + 1]]);
        while ethertype::is_vlan_tpid(ty) && l.tags < MAX_VLAN_TAGS {
            // A tag is the TPID (already read) and the TCI, then the next type field.
            let Some(tag) = frame.get(at + 2..at + 2 + VLAN_TAG_LEN) else { break };
            l.tcis[l.tags] = u16::from_be_bytes([tag[0], tag[1]]);
            l.tags += 1;
            at += VLAN_TAG_LEN;
            ty = u16::from_be_bytes([tag[2], tag[3]]);
        }
        l.dl_type = if ty < ethertype::MIN_ETHERTYPE { DL_TYPE_NONE } else { ty };
        l.l3 = at + 2;
        let rest = &frame[l.l3..];
        match l.dl_type {
            ethertype::IPV4 => l.ipv4(rest),
            ethertype::IPV6 => l.ipv6(rest),
            ethertype::ARP => l.arp(rest),
            _ => {}
        }
        l
    }

    fn ipv4(&mut self, data: &[u8]) {
        if data.len() < ipv4::HEADER_LEN {
            return;
        }
        let ip = Ipv4Packet::new_unchecked(data);
        let hlen = ip.header_len();
        if ip.version() != 4 || hlen < ipv4::HEADER_LEN || hlen > data.len() {
            return;
        }
        self.net = Net::Ipv4 { hlen };
        self.nw_proto = ip.protocol();
        if ip.more_frags() || ip.frag_offset() != 0 {
            self.nw_frag = NW_FRAG_ANY;
        }
        if ip.frag_offset() != 0 {
            self.nw_frag |= NW_FRAG_LATER;
            return;
        }
        let total = usize::from(ip.total_len());
        if total < hlen {
            return;
        }
        let end = self.l3 + total.min(data.len());
        self.transport(self.l3 + hlen, end, false);
    }

    fn ipv6(&mut self, data: &[u8]) {
        if data.len() < ipv6::HEADER_LEN {
            return;
        }
        let ip = Ipv6Packet::new_unchecked(data);
        if ip.version() != 6 {
            return;
        }
        self.net = Net::Ipv6;
        let plen = usize::from(ip.payload_len());
        // A zero payload length is a jumbogram's (or a lie): read to the frame's end.
        let end = if plen == 0 { data.len() } else { (ipv6::HEADER_LEN + plen).min(data.len()) };
        let payload = &data[ipv6::HEADER_LEN..end];
        let mut walk = ExtHeaders::new(ip.next_header(), payload);
        let mut kind = ip.next_header();
        for h in walk.by_ref() {
            let Ok(h): Result<Ipv6ExtHeader<&[u8]>, _> = h else {
                // A header that does not fit: the protocol is the header's kind, nothing after.
                self.nw_proto = kind;
                return;
            };
            if h.kind() == ipproto::FRAGMENT {
                self.nw_frag |= NW_FRAG_ANY;
                if h.frag_offset() != 0 {
                    self.nw_frag |= NW_FRAG_LATER;
                }
            }
            kind = h.next_header();
        }
        let (proto, offset) = walk.upper_layer();
        self.nw_proto = proto;
        if self.nw_frag & NW_FRAG_LATER != 0 {
            return;
        }
        let start = self.l3 + ipv6::HEADER_LEN + offset;
        self.transport(start, self.l3 + end, true);
    }

    fn arp(&mut self, data: &[u8]) {
        if data.len() < arp::ETHERNET_IPV4_LEN {
            return;
        }
        let a = ArpPacket::new_unchecked(data);
        if a.htype() != arp::HTYPE_ETHERNET
            || a.ptype() != ethertype::IPV4
            || a.hlen() != 6
            || a.plen() != 4
        {
            return;
        }
        self.net = Net::Arp;
        // OVS keeps the opcode in nw_proto when it fits (every opcode in use does).
        self.nw_proto = u8::try_from(a.op()).unwrap_or(0);
    }

    /// Records the transport header at `start` if its fixed part fits before `end`, the end
    /// of the IP payload within the frame.
    fn transport(&mut self, start: usize, end: usize, v6: bool) {
        let need = match (self.nw_proto, v6) {
            (ipproto::TCP, _) => tcp::HEADER_LEN,
            (ipproto::UDP, _) => udp::HEADER_LEN,
            (ipproto::SCTP, _) => sctp::HEADER_LEN,
            (ipproto::ICMP, false) | (ipproto::ICMPV6, true) => icmp::HEADER_LEN,
            _ => return,
        };
        if start + need <= end {
            self.l4 = Some(L4 { start, end });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_frames_have_no_ethernet_header() {
        for n in 0..ethernet::HEADER_LEN {
            assert_eq!(Layout::of(&vec![0x81; n]), Layout::default());
        }
    }

    #[test]
    fn tags_and_lengths() {
        // Two tags, then IPv4 with a truncated header: the tags stay, the network is absent.
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x20, 0x0a, 0x88, 0xa8, 0x00, 0x0b, 0x08, 0x00, 0x45]);
        let l = Layout::of(&f);
        assert_eq!((l.tags, l.tcis, l.dl_type, l.l3), (2, [0x200a, 0x000b], 0x0800, 22));
        assert_eq!(l.net, Net::None);
        // A truncated tag leaves the TPID as the type.
        let l = Layout::of(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x20]);
        assert_eq!((l.tags, l.dl_type), (0, 0x8100));
        // An 802.3 length.
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x00, 0x40]);
        assert_eq!(Layout::of(&f).dl_type, DL_TYPE_NONE);
    }
}
