//! Transports: TCP, UDP (and what the decoder recognises on top by port: DNS, VXLAN,
//! Geneve), SCTP, ICMP and ICMPv6, and DNS messages.

use sift_wire::icmp::{self, IcmpPacket};
use sift_wire::sctp::{self, SctpPacket};
use sift_wire::tcp::{self, TcpPacket};
use sift_wire::udp::{self, UdpPacket};
use sift_wire::{geneve, vxlan};

use super::{Cx, Dns, Icmp, Layer, PacketType, Proto, Sctp, Tcp, Udp};

/// The port that carries DNS (over UDP, and over TCP with a length prefix).
const DNS_PORT: u16 = 53;
/// Bytes in a DNS header.
const DNS_HEADER_LEN: usize = 12;
/// The bytes of the common ICMP header the decoder needs (type, code, checksum).
const ICMP_COMMON_LEN: usize = 4;

impl<'a> Cx<'_, 'a> {
    pub(super) fn tcp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < tcp::HEADER_LEN {
            self.trunc(Proto::Tcp, data, len);
            return;
        }
        let p = TcpPacket::new_unchecked(data);
        let hlen = p.header_len();
        let opt_end = hlen.min(data.len()).max(tcp::HEADER_LEN);
        let t = Tcp {
            sport: p.src_port(),
            dport: p.dst_port(),
            seq: p.seq_number(),
            ack: p.ack_number(),
            hlen: hlen as u8,
            flags: p.flags(),
            win: p.window_len(),
            checksum: p.checksum(),
            urp: p.urgent_at(),
            options: &data[tcp::HEADER_LEN..opt_end],
            len,
        };
        if !self.push(Layer::Tcp(t)) || hlen < tcp::HEADER_LEN || hlen as u32 > len {
            return;
        }
        let body = &data[hlen.min(data.len())..];
        let blen = len - hlen as u32;
        if blen == 0 {
            return;
        }
        let dns = match self.packet_type {
            Some(forced) => forced == PacketType::Domain,
            None => t.sport == DNS_PORT || t.dport == DNS_PORT,
        };
        if dns && body.len() >= 2 {
            self.dns(&body[2..], blen.saturating_sub(2), true);
        } else {
            self.payload(body, blen);
        }
    }

    pub(super) fn udp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < udp::HEADER_LEN {
            self.trunc(Proto::Udp, data, len);
            return;
        }
        let p = UdpPacket::new_unchecked(data);
        let u = Udp {
            sport: p.src_port(),
            dport: p.dst_port(),
            ulen: p.len(),
            checksum: p.checksum(),
            len,
        };
        if !self.push(Layer::Udp(u)) {
            return;
        }
        let h = udp::HEADER_LEN;
        if usize::from(u.ulen) < h || (len as usize) < h {
            return;
        }
        let blen = (u32::from(u.ulen) - h as u32).min(len - h as u32);
        let body = &data[h..(h + blen as usize).min(data.len())];
        if let Some(forced) = self.packet_type {
            match forced {
                PacketType::Domain => self.dns(body, blen, false),
                PacketType::Vxlan => self.vxlan(body, blen),
            }
        } else if u.sport == DNS_PORT || u.dport == DNS_PORT {
            self.dns(body, blen, false);
        } else if u.dport == vxlan::UDP_PORT {
            self.vxlan(body, blen);
        } else if u.dport == geneve::UDP_PORT {
            self.geneve(body, blen);
        } else {
            self.payload(body, blen);
        }
    }

    pub(super) fn sctp(&mut self, data: &'a [u8], len: u32) {
        if data.len() < sctp::HEADER_LEN {
            self.trunc(Proto::Sctp, data, len);
            return;
        }
        let p = SctpPacket::new_unchecked(data);
        self.push(Layer::Sctp(Sctp {
            sport: p.src_port(),
            dport: p.dst_port(),
            vtag: p.verification_tag(),
            checksum: p.checksum_field(),
            chunks: p.payload(),
            len,
        }));
    }

    pub(super) fn icmp(&mut self, data: &'a [u8], len: u32, v6: bool) {
        let proto = if v6 { Proto::Icmpv6 } else { Proto::Icmp };
        if data.len() < ICMP_COMMON_LEN {
            self.trunc(proto, data, len);
            return;
        }
        // Type, code and checksum are common to ICMP and ICMPv6; the rest is per type.
        let p = IcmpPacket::new_unchecked(data);
        let m = Icmp {
            icmp_type: p.msg_type(),
            code: p.msg_code(),
            checksum: p.checksum(),
            rest: &data[icmp::field::REST..],
            len,
        };
        self.push(if v6 { Layer::Icmpv6(m) } else { Layer::Icmp(m) });
    }

    pub(super) fn dns(&mut self, data: &'a [u8], len: u32, over_tcp: bool) {
        if data.len() < DNS_HEADER_LEN {
            self.trunc(Proto::Dns, data, len);
            return;
        }
        let w = |i: usize| u16::from_be_bytes([data[i], data[i + 1]]);
        self.push(Layer::Dns(Dns {
            msg: data,
            id: w(0),
            flags: w(2),
            qdcount: w(4),
            ancount: w(6),
            nscount: w(8),
            arcount: w(10),
            len,
            over_tcp,
        }));
    }
}
