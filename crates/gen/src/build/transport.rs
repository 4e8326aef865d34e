//! Transport layers, tunnels and the DNS messages the generator sends.

use sift_wire::geneve::{GenevePacket, GeneveRepr};
use sift_wire::gre::{GrePacket, GreRepr};
use sift_wire::icmp::{self, IcmpPacket, IcmpRepr, Icmpv6Packet};
use sift_wire::sctp::{self, SctpChunk, SctpChunkRepr, SctpPacket, SctpRepr};
use sift_wire::tcp::{TcpPacket, TcpRepr};
use sift_wire::udp::{UdpPacket, UdpRepr};
use sift_wire::vxlan::{VxlanPacket, VxlanRepr};

use sift_wire::ipproto;

use super::{FixupKind, Mac, Names, NextField, Packet};

/// One answer of a DNS response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DnsAnswer {
    /// An A record.
    A([u8; 4]),
    /// An AAAA record.
    Aaaa([u8; 16]),
}

/// DNS query types.
pub mod dns_type {
    /// A.
    pub const A: u16 = 1;
    /// AAAA.
    pub const AAAA: u16 = 28;
}

impl Packet<'_> {
    /// A GRE header (RFC 2784, no optional fields); the protocol type is an EtherType.
    pub fn gre(&mut self) -> &mut Self {
        self.announce(Names::ip(ipproto::GRE));
        let repr = GreRepr { protocol_type: 0, checksum: false, key: None, seq: None };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut GrePacket::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Gre(at));
        self
    }

    /// A UDP header with its checksum.
    pub fn udp(&mut self, sport: u16, dport: u16) -> &mut Self {
        self.udp_opt(sport, dport, true)
    }

    /// A UDP header whose checksum is left 0 ("not computed", allowed over IPv4 and common for
    /// tunnels such as VXLAN).
    pub fn udp_no_checksum(&mut self, sport: u16, dport: u16) -> &mut Self {
        self.udp_opt(sport, dport, false)
    }

    fn udp_opt(&mut self, sport: u16, dport: u16, checksum: bool) -> &mut Self {
        self.announce(Names::ip(ipproto::UDP));
        let repr = UdpRepr { src_port: sport, dst_port: dport, payload_len: 0 };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut UdpPacket::new_unchecked(&mut self.buf[at..]));
        self.fixup(FixupKind::Udp { ip: self.ip, checksum }, at);
        self.next = None;
        self
    }

    /// A TCP header; its checksum is filled by [`Packet::finish`]. Options are raw bytes
    /// (write them with [`sift_wire::tcp::emit_options`]), padded to a multiple of 4 with
    /// end-of-list bytes (at most 40 kept).
    pub fn tcp(&mut self, h: &TcpRepr<'_>) -> &mut Self {
        self.announce(Names::ip(ipproto::TCP));
        let at = self.grow(h.buffer_len());
        h.emit(&mut TcpPacket::new_unchecked(&mut self.buf[at..]));
        self.fixup(FixupKind::Tcp { ip: self.ip }, at);
        self.next = None;
        self
    }

    /// An SCTP common header; add chunks with [`Packet::sctp_chunk`] and friends.
    pub fn sctp(&mut self, sport: u16, dport: u16, vtag: u32) -> &mut Self {
        self.announce(Names::ip(ipproto::SCTP));
        let repr = SctpRepr { src_port: sport, dst_port: dport, verification_tag: vtag };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut SctpPacket::new_unchecked(&mut self.buf[at..]));
        self.fixup(FixupKind::Sctp, at);
        self.next = None;
        self
    }

    /// One SCTP chunk: type, flags, length, `body`, padding to 4 bytes (not counted in the
    /// length).
    pub fn sctp_chunk(&mut self, chunk_type: u8, flags: u8, body: &[u8]) -> &mut Self {
        let repr = SctpChunkRepr { chunk_type, flags, value: body };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut SctpChunk::new_unchecked(&mut self.buf[at..]));
        self
    }

    /// An SCTP INIT chunk (type 1) with no parameters.
    pub fn sctp_init(&mut self, init_tag: u32, a_rwnd: u32, streams: u16, tsn: u32) -> &mut Self {
        let mut body = [0u8; 16];
        body[0..4].copy_from_slice(&init_tag.to_be_bytes());
        body[4..8].copy_from_slice(&a_rwnd.to_be_bytes());
        body[8..10].copy_from_slice(&streams.to_be_bytes());
        body[10..12].copy_from_slice(&streams.to_be_bytes());
        body[12..16].copy_from_slice(&tsn.to_be_bytes());
        self.sctp_chunk(sctp::CHUNK_INIT, 0, &body)
    }

    /// An SCTP DATA chunk (type 0, unfragmented: B and E flags set): TSN, stream, stream
    /// sequence number, payload protocol and `data`.
    pub fn sctp_data(
        &mut self,
        tsn: u32,
        stream: u16,
        ssn: u16,
        ppid: u32,
        data: &[u8],
    ) -> &mut Self {
        let value_len = 12 + data.len();
        let repr = SctpChunkRepr { chunk_type: sctp::CHUNK_DATA, flags: 0x03, value: &[] };
        let at = self.grow((sctp::CHUNK_HEADER_LEN + value_len).div_ceil(4) * 4);
        let mut chunk = SctpChunk::new_unchecked(&mut self.buf[at..]);
        repr.emit(&mut chunk);
        chunk.set_len((sctp::CHUNK_HEADER_LEN + value_len).min(0xffff) as u16);
        let value = &mut chunk.as_bytes_mut()[sctp::CHUNK_HEADER_LEN..][..value_len];
        value[0..4].copy_from_slice(&tsn.to_be_bytes());
        value[4..6].copy_from_slice(&stream.to_be_bytes());
        value[6..8].copy_from_slice(&ssn.to_be_bytes());
        value[8..12].copy_from_slice(&ppid.to_be_bytes());
        value[12..].copy_from_slice(data);
        self
    }

    /// An ICMP echo request (`request`) or reply header; append the data with
    /// [`Packet::payload`].
    pub fn icmp_echo(&mut self, request: bool, id: u16, seq: u16) -> &mut Self {
        let repr = IcmpRepr::echo(request, id, seq);
        self.icmp(repr.msg_type, repr.code, repr.rest)
    }

    /// An ICMP header with any type, code and 32-bit rest-of-header.
    pub fn icmp(&mut self, icmp_type: u8, code: u8, rest: u32) -> &mut Self {
        self.announce(Names::ip(ipproto::ICMP));
        let repr = IcmpRepr { msg_type: icmp_type, code, rest };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut IcmpPacket::new_unchecked(&mut self.buf[at..]));
        self.fixup(FixupKind::Icmp, at);
        self.next = None;
        self
    }

    /// An ICMPv6 header with any type, code and 32-bit rest-of-header.
    pub fn icmpv6(&mut self, icmp_type: u8, code: u8, rest: u32) -> &mut Self {
        self.announce(Names::ip(ipproto::ICMPV6));
        let repr = IcmpRepr { msg_type: icmp_type, code, rest };
        let at = self.grow(repr.buffer_len());
        repr.emit_v6(&mut Icmpv6Packet::new_unchecked(&mut self.buf[at..]));
        self.fixup(FixupKind::Icmpv6 { ip: self.ip }, at);
        self.next = None;
        self
    }

    /// An ICMPv6 echo request or reply header.
    pub fn icmpv6_echo(&mut self, request: bool, id: u16, seq: u16) -> &mut Self {
        let repr = IcmpRepr::echo_v6(request, id, seq);
        self.icmpv6(repr.msg_type, repr.code, repr.rest)
    }

    /// An ICMPv6 neighbour solicitation for `target` with a source link-layer address option.
    pub fn icmpv6_neighbor_solicitation(&mut self, target: [u8; 16], src_mac: Mac) -> &mut Self {
        self.icmpv6(icmp::V6_NEIGHBOR_SOLICIT, 0, 0);
        self.buf.extend_from_slice(&target);
        self.buf.extend_from_slice(&[1, 1]);
        self.buf.extend_from_slice(&src_mac);
        self
    }

    /// An ICMPv6 neighbour advertisement (solicited, override) with a target link-layer
    /// address option.
    pub fn icmpv6_neighbor_advertisement(
        &mut self,
        target: [u8; 16],
        mac: Mac,
        router: bool,
    ) -> &mut Self {
        let flags = (u32::from(router) << 31) | (1 << 30) | (1 << 29);
        self.icmpv6(icmp::V6_NEIGHBOR_ADVERT, 0, flags);
        self.buf.extend_from_slice(&target);
        self.buf.extend_from_slice(&[2, 1]);
        self.buf.extend_from_slice(&mac);
        self
    }

    // ---- Payloads and tunnels ----------------------------------------------------------------

    /// A VXLAN header (RFC 7348); an Ethernet frame follows.
    pub fn vxlan(&mut self, vni: u32) -> &mut Self {
        let repr = VxlanRepr { vni: vni & 0xff_ffff };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut VxlanPacket::new_unchecked(&mut self.buf[at..]));
        self.next = None;
        self
    }

    /// A Geneve header (RFC 8926) without options; the protocol type (an EtherType) is filled
    /// by the next layer, usually [`Packet::ethernet`].
    pub fn geneve(&mut self, vni: u32) -> &mut Self {
        let repr = GeneveRepr { oam: false, critical: false, protocol_type: 0, vni, options: &[] };
        let at = self.grow(repr.buffer_len());
        repr.emit(&mut GenevePacket::new_unchecked(&mut self.buf[at..]));
        self.next = Some(NextField::Geneve(at));
        self
    }

    fn push16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    fn dns_name(&mut self, name: &str) {
        for label in name.split('.').filter(|l| !l.is_empty()) {
            let label = &label.as_bytes()[..label.len().min(63)];
            self.buf.push(label.len() as u8);
            self.buf.extend_from_slice(label);
        }
        self.buf.push(0);
    }

    /// A DNS query (recursion desired) for `name`.
    pub fn dns_query(&mut self, id: u16, name: &str, qtype: u16) -> &mut Self {
        self.push16(id);
        self.push16(0x0100);
        self.buf.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
        self.dns_name(name);
        self.push16(qtype);
        self.push16(1);
        self.next = None;
        self
    }

    /// A DNS response to a query for `name` with `answers` (names compressed to the question).
    pub fn dns_response(
        &mut self,
        id: u16,
        name: &str,
        qtype: u16,
        answers: &[DnsAnswer],
        ttl: u32,
    ) -> &mut Self {
        self.push16(id);
        self.push16(if answers.is_empty() { 0x8183 } else { 0x8180 }); // NXDOMAIN when empty
        self.push16(1);
        self.push16(answers.len().min(0xffff) as u16);
        self.buf.extend_from_slice(&[0; 4]);
        self.dns_name(name);
        self.push16(qtype);
        self.push16(1);
        for a in answers {
            self.push16(0xc00c);
            let (t, data): (u16, &[u8]) = match a {
                DnsAnswer::A(v) => (dns_type::A, v),
                DnsAnswer::Aaaa(v) => (dns_type::AAAA, v),
            };
            self.push16(t);
            self.push16(1);
            self.buf.extend_from_slice(&ttl.to_be_bytes());
            self.push16(data.len() as u16);
            self.buf.extend_from_slice(data);
        }
        self.next = None;
        self
    }
}
