//! UDP headers (RFC 768).
//!
//! A zero checksum means "not computed" over IPv4 (and is not allowed over IPv6), so a
//! computed zero is sent as 0xFFFF, and rewrites leave an absent checksum absent.

use crate::bytes::{get16, need_length, ports, set16, view};
use crate::checksum;
use crate::{Header, Result};

/// Bytes in a header.
pub const HEADER_LEN: usize = 8;

/// Field offsets.
pub mod field {
    pub use crate::ports::{DST_PORT, SRC_PORT};
    /// Length of header and data.
    pub const LENGTH: usize = 4;
    /// Checksum.
    pub const CHECKSUM: usize = 6;
}

view! {
    /// A UDP header and its datagram's data.
    UdpPacket
}

ports!(UdpPacket);

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// The header must fit, its length be at least 8 and fit.
    pub fn check_len(&self) -> Result<()> {
        let length = |d: &[u8]| usize::from(get16(d, field::LENGTH));
        need_length(Header::Udp, self.buffer.as_ref(), HEADER_LEN, field::LENGTH, "length", length)
    }

    /// Length of header and data.
    #[inline]
    pub fn len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Whether the length field says there is no data.
    #[inline]
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }

    /// Checksum (0: not computed).
    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Whether the checksum over the datagram (as long as its length says) is right with the
    /// pseudo-header of the enclosing IP header; an absent checksum is right over IPv4.
    pub fn verify_checksum(&self, src: &[u8], dst: &[u8]) -> bool {
        if self.checksum() == 0 && src.len() == 4 {
            return true;
        }
        let data = &self.buffer.as_ref()[..usize::from(self.len())];
        let pseudo = checksum::pseudo(src, dst, crate::ipproto::UDP, data.len() as u32);
        checksum::finish(checksum::add(pseudo, data)) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> UdpPacket<&'a T> {
    /// The datagram's data, as far as the length says.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the length.
    #[inline]
    pub fn set_len(&mut self, len: u16) {
        set16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Sets the checksum.
    #[inline]
    pub fn set_checksum(&mut self, checksum: u16) {
        set16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Computes and stores the checksum over the datagram (as long as its length says) with
    /// the pseudo-header; a computed zero is stored as 0xFFFF.
    pub fn fill_checksum(&mut self, src: &[u8], dst: &[u8]) {
        self.set_checksum(0);
        let data = &self.buffer.as_ref()[..usize::from(self.len())];
        let pseudo = checksum::pseudo(src, dst, crate::ipproto::UDP, data.len() as u32);
        let sum = checksum::finish(checksum::add(pseudo, data));
        self.set_checksum(if sum == 0 { 0xffff } else { sum });
    }

    fn update(&mut self, new: impl FnOnce(u16) -> u16) {
        let old = self.checksum();
        if old != 0 {
            let sum = new(old);
            self.set_checksum(if sum == 0 { 0xffff } else { sum });
        }
    }

    /// Updates the checksum (unless absent) for a change of the aligned bytes `old` to `new`
    /// of the pseudo-header (an address rewritten by NAT).
    pub fn adjust_checksum(&mut self, old: &[u8], new: &[u8]) {
        self.update(|c| checksum::update_bytes(c, old, new));
    }

    /// Sets the source port and updates the checksum (unless absent) incrementally.
    pub fn rewrite_src_port(&mut self, port: u16) {
        let old = self.src_port();
        self.update(|c| checksum::update16(c, old, port));
        self.set_src_port(port);
    }

    /// Sets the destination port and updates the checksum (unless absent) incrementally.
    pub fn rewrite_dst_port(&mut self, port: u16) {
        let old = self.dst_port();
        self.update(|c| checksum::update16(c, old, port));
        self.set_dst_port(port);
    }

    /// The datagram's data (as far as the length says), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of a UDP header; the checksum is filled by [`UdpPacket::fill_checksum`] once
/// the payload is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Length of the data.
    pub payload_len: usize,
}

impl UdpRepr {
    /// Reads a checked header (the checksum is not verified).
    pub fn parse<T: AsRef<[u8]>>(packet: &UdpPacket<T>) -> Result<UdpRepr> {
        packet.check_len()?;
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload_len: usize::from(packet.len()) - HEADER_LEN,
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header with its length (clamped to 65535) and a zero checksum.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut UdpPacket<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len((HEADER_LEN + self.payload_len).min(0xffff) as u16);
        packet.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    #[test]
    fn deconstruct_construct() {
        let mut bytes = [0u8; 13];
        let repr = UdpRepr { src_port: 53, dst_port: 40000, payload_len: 4 };
        let mut p = UdpPacket::new_unchecked(&mut bytes[..]);
        repr.emit(&mut p);
        p.payload_mut().copy_from_slice(b"abcd");
        p.fill_checksum(&SRC, &DST);
        let p = UdpPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len()), (53, 40000, 12));
        assert_eq!(p.payload(), b"abcd");
        assert!(p.verify_checksum(&SRC, &DST));
        assert_eq!(UdpRepr::parse(&p).unwrap(), repr);
        assert!(UdpPacket::new_checked(&bytes[..11]).is_err());
        let mut b = bytes;
        b[5] = 7;
        assert!(UdpPacket::new_checked(&b[..]).is_err());
    }

    #[test]
    fn zero_checksum_rules() {
        let mut bytes = [0u8; 8];
        UdpRepr { src_port: 1, dst_port: 2, payload_len: 0 }
            .emit(&mut UdpPacket::new_unchecked(&mut bytes[..]));
        let mut p = UdpPacket::new_unchecked(&mut bytes[..]);
        assert!(p.verify_checksum(&[10, 0, 0, 1], &[10, 0, 0, 2]), "absent over IPv4");
        assert!(!p.verify_checksum(&SRC, &DST), "required over IPv6");
        p.rewrite_src_port(99);
        assert_eq!(p.checksum(), 0, "an absent checksum stays absent");
        // Addresses and ports chosen so that the sum is 0xffff: stored as 0xffff, not 0.
        let (src, dst) = ([0u8, 0, 0, 0], [0xff, 0xde, 0, 0]);
        let mut p = UdpPacket::new_unchecked(&mut bytes[..]);
        p.set_src_port(0);
        p.set_dst_port(0);
        p.fill_checksum(&src, &dst);
        assert_eq!(p.checksum(), 0xffff);
        assert!(p.verify_checksum(&src, &dst));
    }
}
