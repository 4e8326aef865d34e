//! IPv4 and IPv6 (with its extension headers), and the dispatch on the IP protocol.

use sift_wire::ipproto;
use sift_wire::ipv4::{self, Ipv4Packet};
use sift_wire::ipv6::{self, Ipv6Packet};
use sift_wire::ipv6ext::{self, Ipv6ExtHeader};

use super::{Cx, Ipv4, Ipv6, Ipv6Ext, Layer, Proto, Unknown};

impl<'a> Cx<'_, 'a> {
    pub(super) fn ipv4(&mut self, data: &'a [u8], len: u32) {
        if data.first().is_some_and(|b| b >> 4 != 4) {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "version", data, len });
            return;
        }
        if data.len() < ipv4::HEADER_LEN {
            self.trunc(Proto::Ipv4, data, len);
            return;
        }
        let p = Ipv4Packet::new_unchecked(data);
        let hlen = p.header_len();
        if hlen < ipv4::HEADER_LEN {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "hlen", data, len });
            return;
        }
        let total_len = p.total_len();
        let header = &data[..hlen.min(data.len())];
        let ip = Ipv4 {
            header,
            hlen: hlen as u8,
            tos: p.tos(),
            total_len,
            id: p.ident(),
            frag: p.flags_frag(),
            ttl: p.ttl(),
            protocol: p.protocol(),
            checksum: p.checksum(),
            src: p.src_addr(),
            dst: p.dst_addr(),
            options: &header[ipv4::HEADER_LEN.min(header.len())..],
            missing: u32::from(total_len).saturating_sub(len),
            len,
        };
        if !self.push(Layer::Ipv4(ip)) {
            return;
        }
        // Like tcpdump, a total length beyond the wire is reported (`missing`) but still used.
        if usize::from(total_len) < hlen {
            self.push(Layer::Malformed { proto: Proto::Ipv4, why: "len", data, len });
            return;
        }
        if data.len() < hlen {
            self.trunc(Proto::Ipv4, data, len);
            return;
        }
        let end = usize::from(total_len).min(data.len());
        let body = &data[hlen..end.max(hlen)];
        let plen = u32::from(total_len) - hlen as u32;
        if p.frag_offset() != 0 {
            let what = Unknown::Fragment(ip.protocol);
            self.push(Layer::Unknown { what, data: body, len: plen });
            return;
        }
        self.ip_proto(ip.protocol, body, plen, true);
    }

    pub(super) fn ipv6(&mut self, data: &'a [u8], len: u32) {
        if data.len() < ipv6::HEADER_LEN {
            self.trunc(Proto::Ipv6, data, len);
            return;
        }
        let p = Ipv6Packet::new_unchecked(data);
        if p.version() != 6 {
            self.push(Layer::Malformed { proto: Proto::Ipv6, why: "version", data, len });
            return;
        }
        let payload_len = p.payload_len();
        let ip = Ipv6 {
            header: &data[..ipv6::HEADER_LEN],
            class: p.traffic_class(),
            flow: p.flow_label(),
            payload_len,
            next: p.next_header(),
            hlim: p.hop_limit(),
            src: p.src_addr(),
            dst: p.dst_addr(),
            missing: (40 + u32::from(payload_len)).saturating_sub(len),
            len,
        };
        if !self.push(Layer::Ipv6(ip)) {
            return;
        }
        // A payload length beyond the wire is reported (`missing`) but still used, as tcpdump
        // does. A zero payload length (without a jumbo option, which is not decoded) leaves
        // the header alone, as in tcpdump.
        let total = ipv6::HEADER_LEN + usize::from(payload_len);
        let end = total.min(data.len());
        self.ipv6_ext_headers(ip.next, &data[..end], u32::from(payload_len));
    }

    /// The extension headers from `data[40..]` on (the fixed header's `next` first), then the
    /// upper layer. tcpdump walks hop-by-hop, routing, fragment and destination options
    /// headers (not AH, which it prints as a protocol of its own) and marks a truncation at
    /// each step, so this is the decoder's own walk over [`Ipv6ExtHeader`] views; every step
    /// consumes at least 8 bytes and pushes a layer, so it is bounded.
    fn ipv6_ext_headers(&mut self, first: u8, data: &'a [u8], payload_len: u32) {
        let mut off = ipv6::HEADER_LEN;
        let mut next = first;
        let mut remaining = payload_len;
        loop {
            let ext_proto = match next {
                ipproto::HOPOPTS => Proto::HopOpts,
                ipproto::DSTOPTS => Proto::DstOpts,
                ipproto::ROUTING => Proto::Routing,
                ipproto::FRAGMENT => Proto::Fragment,
                _ => {
                    let rest = &data[off.min(data.len())..];
                    self.ip_proto(next, rest, remaining, false);
                    return;
                }
            };
            let rest = &data[off..];
            if rest.is_empty() {
                // tcpdump checks one byte before a routing header, naming IPv6.
                let p = if next == ipproto::ROUTING { Proto::Ipv6Ext } else { ext_proto };
                self.trunc(p, rest, remaining);
                return;
            }
            let fragment = next == ipproto::FRAGMENT;
            if fragment && (4..ipv6ext::FRAGMENT_LEN).contains(&rest.len()) {
                // Enough for the offset: tcpdump prints the fragment and stops.
                self.push(Layer::Ipv6Ext(Ipv6Ext {
                    kind: next,
                    next: rest[0],
                    header: rest,
                    hdr_len: ipv6ext::FRAGMENT_LEN as u32,
                    len: remaining.saturating_sub(ipv6ext::FRAGMENT_LEN as u32),
                }));
                return;
            }
            // Without its length byte the header cannot be there in full.
            let hdr_len = rest.get(1).map_or(usize::MAX, |&l| ipv6ext::header_len(next, l));
            if rest.len() < hdr_len {
                self.trunc(ext_proto, rest, remaining);
                return;
            }
            let h = Ipv6ExtHeader::new_unchecked(next, rest);
            let after = remaining.saturating_sub(hdr_len as u32);
            if !self.push(Layer::Ipv6Ext(Ipv6Ext {
                kind: next,
                next: h.next_header(),
                header: h.header(),
                hdr_len: hdr_len as u32,
                len: after,
            })) {
                return;
            }
            // Not the first fragment, or nothing captured after the header.
            if fragment && (h.frag_offset() != 0 || rest.len() == hdr_len) {
                return;
            }
            if hdr_len as u32 > remaining {
                return;
            }
            next = h.next_header();
            off += hdr_len;
            remaining = after;
        }
    }

    pub(super) fn ip_proto(&mut self, proto: u8, data: &'a [u8], len: u32, v4: bool) {
        match proto {
            ipproto::TCP => self.tcp(data, len),
            ipproto::UDP => self.udp(data, len),
            ipproto::SCTP => self.sctp(data, len),
            ipproto::ICMP if v4 => self.icmp(data, len, false),
            ipproto::ICMPV6 => self.icmp(data, len, true),
            ipproto::GRE => self.gre(data, len),
            ipproto::IPIP => self.ipv4(data, len),
            ipproto::IPV6 => self.ipv6(data, len),
            other => {
                self.push(Layer::Unknown { what: Unknown::IpProto(other), data, len });
            }
        }
    }
}
