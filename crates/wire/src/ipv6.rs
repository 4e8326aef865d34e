//! IPv6 fixed headers (RFC 8200). Extension headers are in [`crate::ipv6ext`].

use crate::bytes::{array, get16, get32, need, set16, set32, view};
use crate::checksum;
use crate::ipv6ext::ExtHeaders;
use crate::{Error, Header, Result};

/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 40;

/// Field offsets.
pub mod field {
    use std::ops::Range;
    /// Version (4 bits), traffic class (8) and flow label (20).
    pub const VER_TC_FLOW: usize = 0;
    /// Payload length.
    pub const LENGTH: usize = 4;
    /// Next header.
    pub const NEXT_HEADER: usize = 6;
    /// Hop limit.
    pub const HOP_LIMIT: usize = 7;
    /// Source address.
    pub const SRC: Range<usize> = 8..24;
    /// Destination address.
    pub const DST: Range<usize> = 24..40;
}

view! {
    /// An IPv6 fixed header and what follows it.
    Ipv6Packet
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// The fixed header and the payload length it announces must fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Ipv6, data, HEADER_LEN)?;
        need(Header::Ipv6, data, HEADER_LEN + usize::from(self.payload_len()))
    }

    /// Version (6 for IPv6).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_TC_FLOW] >> 4
    }

    /// Traffic class.
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (get32(self.buffer.as_ref(), field::VER_TC_FLOW) >> 20) as u8
    }

    /// Flow label (20 bits).
    #[inline]
    pub fn flow_label(&self) -> u32 {
        get32(self.buffer.as_ref(), field::VER_TC_FLOW) & 0xf_ffff
    }

    /// Payload length (everything after the fixed header, extension headers included).
    #[inline]
    pub fn payload_len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Next header.
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_HEADER]
    }

    /// Hop limit.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> [u8; 16] {
        array(self.buffer.as_ref(), field::SRC.start)
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> [u8; 16] {
        array(self.buffer.as_ref(), field::DST.start)
    }

    /// The running sum of the pseudo-header for an upper-layer checksum over `len` bytes with
    /// next header `next_header` (after any extension headers).
    pub fn pseudo_header(&self, next_header: u8, len: u32) -> u64 {
        checksum::pseudo_ipv6(&self.src_addr(), &self.dst_addr(), next_header, len)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Ipv6Packet<&'a T> {
    /// The payload, as far as the payload length says.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + usize::from(self.payload_len())]
    }

    /// The extension headers at the start of the payload, then (from
    /// [`ExtHeaders::upper_layer`]) the upper-layer protocol and where it starts.
    pub fn ext_headers(&self) -> ExtHeaders<'a> {
        ExtHeaders::new(self.next_header(), self.payload())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    fn set_word0(&mut self, word: u32) {
        set32(self.buffer.as_mut(), field::VER_TC_FLOW, word);
    }

    fn word0(&self) -> u32 {
        get32(self.buffer.as_ref(), field::VER_TC_FLOW)
    }

    /// Sets the version.
    #[inline]
    pub fn set_version(&mut self, version: u8) {
        self.set_word0((self.word0() & 0x0fff_ffff) | (u32::from(version & 15) << 28));
    }

    /// Sets the traffic class.
    #[inline]
    pub fn set_traffic_class(&mut self, class: u8) {
        self.set_word0((self.word0() & 0xf00f_ffff) | (u32::from(class) << 20));
    }

    /// Sets the flow label (low 20 bits).
    #[inline]
    pub fn set_flow_label(&mut self, label: u32) {
        self.set_word0((self.word0() & 0xfff0_0000) | (label & 0xf_ffff));
    }

    /// Sets the payload length.
    #[inline]
    pub fn set_payload_len(&mut self, len: u16) {
        set16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, next: u8) {
        self.buffer.as_mut()[field::NEXT_HEADER] = next;
    }

    /// Sets the hop limit.
    #[inline]
    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = hop_limit;
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, addr: [u8; 16]) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr);
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, addr: [u8; 16]) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr);
    }

    /// The payload (as far as the payload length says), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of an IPv6 fixed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Next header.
    pub next_header: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Payload length.
    pub payload_len: usize,
}

impl Ipv6Repr {
    /// Reads a checked header of version 6.
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv6Packet<T>) -> Result<Ipv6Repr> {
        packet.check_len()?;
        if packet.version() != 6 {
            return Err(Error::invalid(Header::Ipv6, 0, "version", packet.version().into()));
        }
        Ok(Ipv6Repr {
            src: packet.src_addr(),
            dst: packet.dst_addr(),
            next_header: packet.next_header(),
            hop_limit: packet.hop_limit(),
            traffic_class: packet.traffic_class(),
            flow_label: packet.flow_label(),
            payload_len: usize::from(packet.payload_len()),
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (payload length clamped to 65535; the buffer must hold 40 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv6Packet<T>) {
        let word =
            (6u32 << 28) | (u32::from(self.traffic_class) << 20) | (self.flow_label & 0xf_ffff);
        packet.set_word0(word);
        packet.set_payload_len(self.payload_len.min(0xffff) as u16);
        packet.set_next_header(self.next_header);
        packet.set_hop_limit(self.hop_limit);
        packet.set_src_addr(self.src);
        packet.set_dst_addr(self.dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet() -> Vec<u8> {
        let mut p = vec![0x6a, 0xb1, 0x23, 0x45, 0x00, 0x04, 17, 64];
        p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8].repeat(4));
        p.extend_from_slice(&[0xfe, 0x80, 0, 1].repeat(4));
        p.extend_from_slice(&[1, 2, 3, 4, 5]); // one byte past the payload length
        p
    }

    #[test]
    fn deconstruct() {
        let bytes = packet();
        let p = Ipv6Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.version(), p.traffic_class(), p.flow_label()), (6, 0xab, 0x1_2345));
        assert_eq!((p.payload_len(), p.next_header(), p.hop_limit()), (4, 17, 64));
        assert_eq!(p.src_addr()[..4], [0x20, 0x01, 0x0d, 0xb8]);
        assert_eq!(p.payload(), &[1, 2, 3, 4]);
        assert!(Ipv6Packet::new_checked(&bytes[..43]).is_err());
        assert!(Ipv6Packet::new_checked(&bytes[..39]).is_err());
    }

    #[test]
    fn repr_round_trips() {
        let bytes = packet();
        let repr = Ipv6Repr::parse(&Ipv6Packet::new_unchecked(&bytes[..])).unwrap();
        let mut out = vec![0xee; 44];
        let mut p = Ipv6Packet::new_unchecked(&mut out[..]);
        repr.emit(&mut p);
        p.payload_mut().copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(out, bytes[..44]);
        let mut p = Ipv6Packet::new_unchecked(&mut out[..]);
        p.set_traffic_class(0);
        p.set_flow_label(0);
        p.set_version(6);
        assert_eq!(&out[..4], &[0x60, 0, 0, 0]);
    }
}
