//! Link layers and what Ethernet carries directly: Ethernet and VLAN tags, Linux cooked v1/v2,
//! BSD loopback, MPLS, PPPoE and ARP.

use sift_wire::arp::{self, ArpPacket};
use sift_wire::ethernet::{self, EthernetFrame, VlanTag};
use sift_wire::ethertype;
use sift_wire::loopback::{self, LoopbackPacket};
use sift_wire::mpls::{self, MplsPacket};
use sift_wire::pppoe::{self, PppoePacket};
use sift_wire::sll::{self, Sll2Packet, SllPacket};

use super::{Arp, Cx, Ether, Layer, Loopback, Mpls, Pppoe, Proto, Sll, Unknown, Vlan, sub};

/// What reading a VLAN tag gave.
enum Tag {
    /// The EtherType after the tag.
    Next(u16),
    /// The capture ended inside the tag (marked).
    Truncated,
    /// The layer list is full.
    Full,
}

impl<'a> Cx<'_, 'a> {
    /// Ethernet; returns the link header length (up to the first non-VLAN EtherType).
    pub(super) fn ether(&mut self, data: &'a [u8], len: u32) -> usize {
        if data.len() < ethernet::HEADER_LEN {
            self.trunc(Proto::Ether, data, len);
            return data.len();
        }
        let frame = EthernetFrame::new_unchecked(data);
        let ethertype = frame.ethertype();
        let ether = Ether { dst: frame.dst_addr(), src: frame.src_addr(), ethertype, len };
        if !self.push(Layer::Ether(ether)) {
            return ethernet::HEADER_LEN;
        }
        let mut off = ethernet::HEADER_LEN;
        let mut et = ethertype;
        // VLAN tags belong to the link header (tcpdump's -x starts after them).
        while ethertype::is_vlan_tpid(et) {
            match self.vlan(et, &data[off..], sub(len, off)) {
                Tag::Next(next) => et = next,
                Tag::Truncated => return data.len(),
                Tag::Full => return off,
            }
            off += ethernet::VLAN_TAG_LEN;
        }
        if et < ethertype::MIN_ETHERTYPE {
            // 802.3 length field: LLC follows; not decoded further.
            self.payload(&data[off..], sub(len, off));
            return off;
        }
        self.ethertype(et, &data[off..], sub(len, off));
        off
    }

    /// One VLAN tag, announced by `tpid`.
    fn vlan(&mut self, tpid: u16, data: &'a [u8], len: u32) -> Tag {
        if data.len() < ethernet::VLAN_TAG_LEN {
            self.trunc(Proto::Vlan, data, len);
            return Tag::Truncated;
        }
        let tag = VlanTag::new_unchecked(data);
        let ethertype = tag.ethertype();
        let vlan = Vlan { tpid, pcp: tag.pcp(), dei: tag.dei(), vid: tag.vid(), ethertype, len };
        if self.push(Layer::Vlan(vlan)) { Tag::Next(ethertype) } else { Tag::Full }
    }

    pub(super) fn ethertype(&mut self, et: u16, data: &'a [u8], len: u32) {
        match et {
            ethertype::IPV4 => self.ipv4(data, len),
            ethertype::IPV6 => self.ipv6(data, len),
            ethertype::ARP | ethertype::REVARP => self.arp(data, len),
            ethertype::MPLS | ethertype::MPLS_MULTICAST => self.mpls(data, len),
            ethertype::PPPOE_DISCOVERY | ethertype::PPPOE_SESSION => self.pppoe(et, data, len),
            ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_9100 => {
                // A tag after a non-Ethernet link header (SLL…).
                if let Tag::Next(next) = self.vlan(et, data, len) {
                    let n = ethernet::VLAN_TAG_LEN;
                    self.ethertype(next, &data[n..], sub(len, n));
                }
            }
            ethertype::TEB => {
                self.ether(data, len);
            }
            other => {
                self.push(Layer::Unknown { what: Unknown::EtherType(other), data, len });
            }
        }
    }

    pub(super) fn sll(&mut self, data: &'a [u8], len: u32) -> usize {
        if data.len() < sll::HEADER_LEN {
            self.trunc(Proto::Sll, data, len);
            return data.len();
        }
        let p = SllPacket::new_unchecked(data);
        let protocol = p.protocol();
        let layer = Sll {
            version: 1,
            pkttype: p.packet_type(),
            hatype: p.hatype(),
            addr: p.addr_bytes(),
            protocol,
            ifindex: 0,
            len,
        };
        if self.push(Layer::Sll(layer)) {
            self.sll_payload(protocol, p.payload(), sub(len, sll::HEADER_LEN));
        }
        sll::HEADER_LEN
    }

    pub(super) fn sll2(&mut self, data: &'a [u8], len: u32) -> usize {
        if data.len() < sll::V2_HEADER_LEN {
            self.trunc(Proto::Sll2, data, len);
            return data.len();
        }
        let p = Sll2Packet::new_unchecked(data);
        let protocol = p.protocol();
        let layer = Sll {
            version: 2,
            pkttype: u16::from(p.packet_type()),
            hatype: p.hatype(),
            addr: p.addr_bytes(),
            protocol,
            ifindex: p.ifindex(),
            len,
        };
        if self.push(Layer::Sll(layer)) {
            self.sll_payload(protocol, p.payload(), sub(len, sll::V2_HEADER_LEN));
        }
        sll::V2_HEADER_LEN
    }

    fn sll_payload(&mut self, protocol: u16, data: &'a [u8], len: u32) {
        if protocol < ethertype::MIN_ETHERTYPE {
            // Linux "protocols" below 0x600: 802.3, 802.2, CAN…; not decoded.
            self.payload(data, len);
        } else {
            self.ethertype(protocol, data, len);
        }
    }

    pub(super) fn loopback(&mut self, data: &'a [u8], len: u32, network_order: bool) -> usize {
        if data.len() < loopback::HEADER_LEN {
            self.trunc(Proto::Loopback, data, len);
            return data.len();
        }
        let p = LoopbackPacket::new_unchecked(data);
        // tcpdump accepts either byte order for DLT_NULL (the capturing host's).
        let family = if network_order { p.family_be() } else { p.family_any_order() };
        if self.push(Layer::Loopback(Loopback { family, len })) {
            let rest = p.payload();
            let l = sub(len, loopback::HEADER_LEN);
            match family {
                loopback::AF_INET => self.ipv4(rest, l),
                f if loopback::is_inet6(f) => self.ipv6(rest, l),
                other => {
                    self.push(Layer::Unknown { what: Unknown::Family(other), data: rest, len: l });
                }
            }
        }
        loopback::HEADER_LEN
    }

    pub(super) fn raw_ip(&mut self, data: &'a [u8], len: u32) {
        match data.first().map(|b| b >> 4) {
            Some(6) => self.ipv6(data, len),
            Some(4) => self.ipv4(data, len),
            Some(_) => {
                self.push(Layer::Malformed { proto: Proto::Ipv4, why: "raw-version", data, len });
            }
            None => self.trunc(Proto::Ipv4, data, len),
        }
    }

    pub(super) fn mpls(&mut self, data: &'a [u8], len: u32) {
        let mut off = 0;
        loop {
            let rest = &data[off..];
            if rest.len() < mpls::HEADER_LEN {
                self.trunc(Proto::Mpls, rest, sub(len, off));
                return;
            }
            let entry = MplsPacket::new_unchecked(rest);
            let bottom = entry.bottom();
            if !self.push(Layer::Mpls(Mpls {
                label: entry.label(),
                tc: entry.traffic_class(),
                bottom,
                ttl: entry.ttl(),
                len: sub(len, off),
            })) {
                return;
            }
            off += mpls::HEADER_LEN;
            if bottom {
                break;
            }
        }
        let rest = &data[off..];
        let l = sub(len, off);
        // The payload is guessed from the first nibble, as tcpdump does.
        match rest.first().map(|b| b >> 4) {
            Some(4) => self.ipv4(rest, l),
            Some(6) => self.ipv6(rest, l),
            Some(_) => self.payload(rest, l),
            None => self.trunc(Proto::Mpls, rest, l),
        }
    }

    pub(super) fn pppoe(&mut self, ethertype: u16, data: &'a [u8], len: u32) {
        if data.len() < pppoe::HEADER_LEN {
            self.trunc(Proto::Pppoe, data, len);
            return;
        }
        let p = PppoePacket::new_unchecked(data);
        let code = p.code();
        let payload_len = p.payload_len();
        let session = code == pppoe::CODE_SESSION;
        let has_protocol = data.len() >= pppoe::SESSION_HEADER_LEN;
        let body_end = (pppoe::HEADER_LEN + usize::from(payload_len)).min(data.len());
        let layer = Pppoe {
            ethertype,
            ver_type: p.ver_type(),
            code,
            session: p.session_id(),
            payload_len,
            ppp_protocol: if session && has_protocol { p.ppp_protocol() } else { 0 },
            tags: if session { &[] } else { &data[pppoe::HEADER_LEN..body_end] },
            len,
        };
        if !self.push(Layer::Pppoe(layer)) || !session {
            return;
        }
        if !has_protocol {
            let h = pppoe::HEADER_LEN;
            self.trunc(Proto::Ppp, &data[h..], sub(len, h));
            return;
        }
        // PPP payload length: the PPPoE length (minus the protocol), bounded by the wire.
        let h = pppoe::SESSION_HEADER_LEN;
        let l = u32::from(payload_len).saturating_sub(2).min(sub(len, h));
        let rest = &data[h..];
        match layer.ppp_protocol {
            pppoe::PPP_IPV4 => self.ipv4(rest, l),
            pppoe::PPP_IPV6 => self.ipv6(rest, l),
            other => {
                self.push(Layer::Unknown { what: Unknown::Ppp(other), data: rest, len: l });
            }
        }
    }

    pub(super) fn arp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < arp::HEADER_LEN {
            self.trunc(Proto::Arp, data, len);
            return;
        }
        let p = ArpPacket::new_unchecked(data);
        let (hlen, plen) = (p.hlen(), p.plen());
        let (h, pl) = (usize::from(hlen), usize::from(plen));
        let complete = data.len() >= p.total_len();
        // The addresses as far as they were captured.
        let get = |at: usize, n: usize| -> &'a [u8] {
            let s = at.min(data.len());
            &data[s..(at + n).min(data.len())]
        };
        let [sha, spa, tha, tpa] = p.addr_offsets();
        self.push(Layer::Arp(Arp {
            htype: p.htype(),
            ptype: p.ptype(),
            hlen,
            plen,
            op: p.op(),
            sha: get(sha, h),
            spa: get(spa, pl),
            tha: get(tha, h),
            tpa: get(tpa, pl),
            complete,
            len,
        }));
    }
}
