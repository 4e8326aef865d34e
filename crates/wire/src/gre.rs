//! GRE (RFC 2784 with the key and sequence number of RFC 2890; the routing-present bit of RFC
//! 1701 also announces the checksum word, as tcpdump reads it).

use crate::bytes::{get16, get32, need, set16, set32, view};
use crate::checksum;
use crate::{Header, Result};

/// Bytes in the header without optional fields.
pub const HEADER_LEN: usize = 4;

/// Flag bit: checksum present.
pub const FLAG_CHECKSUM: u16 = 0x8000;
/// Flag bit: routing present (RFC 1701; the checksum word is then present too).
pub const FLAG_ROUTING: u16 = 0x4000;
/// Flag bit: key present.
pub const FLAG_KEY: u16 = 0x2000;
/// Flag bit: sequence number present.
pub const FLAG_SEQ: u16 = 0x1000;

/// Field offsets.
pub mod field {
    /// Flags and version.
    pub const FLAGS: usize = 0;
    /// Protocol type (an EtherType).
    pub const PROTOCOL: usize = 2;
    /// The first optional field.
    pub const OPTIONAL: usize = 4;
}

view! {
    /// A GRE header and what follows it.
    GrePacket
}

impl<T: AsRef<[u8]>> GrePacket<T> {
    /// The fixed header and the optional fields its flags announce must fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Gre, data, HEADER_LEN)?;
        need(Header::Gre, data, self.header_len())
    }

    /// The flags and version word.
    #[inline]
    pub fn flags(&self) -> u16 {
        get16(self.buffer.as_ref(), field::FLAGS)
    }

    /// Version (low 3 bits).
    #[inline]
    pub fn version(&self) -> u8 {
        (self.flags() & 7) as u8
    }

    /// Protocol type of the payload (an EtherType).
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PROTOCOL)
    }

    /// Whether the checksum word is present (checksum or routing bit).
    #[inline]
    pub fn has_checksum(&self) -> bool {
        self.flags() & (FLAG_CHECKSUM | FLAG_ROUTING) != 0
    }

    /// Whether the key is present.
    #[inline]
    pub fn has_key(&self) -> bool {
        self.flags() & FLAG_KEY != 0
    }

    /// Whether the sequence number is present.
    #[inline]
    pub fn has_seq(&self) -> bool {
        self.flags() & FLAG_SEQ != 0
    }

    /// The header's length: four bytes and four per optional field present.
    #[inline]
    pub fn header_len(&self) -> usize {
        HEADER_LEN
            + 4 * (usize::from(self.has_checksum())
                + usize::from(self.has_key())
                + usize::from(self.has_seq()))
    }

    fn optional(&self, present: bool, before: usize) -> Option<u32> {
        present.then(|| get32(self.buffer.as_ref(), field::OPTIONAL + 4 * before))
    }

    /// The checksum, when present.
    #[inline]
    pub fn checksum(&self) -> Option<u16> {
        self.optional(self.has_checksum(), 0).map(|w| (w >> 16) as u16)
    }

    /// The key, when present.
    #[inline]
    pub fn key(&self) -> Option<u32> {
        self.optional(self.has_key(), usize::from(self.has_checksum()))
    }

    /// The sequence number, when present.
    #[inline]
    pub fn seq(&self) -> Option<u32> {
        let before = usize::from(self.has_checksum()) + usize::from(self.has_key());
        self.optional(self.has_seq(), before)
    }

    /// Whether the checksum (over the whole buffer) is right; true when there is none.
    pub fn verify_checksum(&self) -> bool {
        !self.has_checksum() || checksum::internet(self.buffer.as_ref()) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> GrePacket<&'a T> {
    /// The bytes after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> GrePacket<T> {
    /// Sets the flags and version word (which decides where the optional fields are).
    #[inline]
    pub fn set_flags(&mut self, flags: u16) {
        set16(self.buffer.as_mut(), field::FLAGS, flags);
    }

    /// Sets the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, protocol: u16) {
        set16(self.buffer.as_mut(), field::PROTOCOL, protocol);
    }

    fn set_optional(&mut self, present: bool, before: usize, v: u32) {
        if present {
            set32(self.buffer.as_mut(), field::OPTIONAL + 4 * before, v);
        }
    }

    /// Sets the checksum (and zeroes the reserved half of its word) if present.
    pub fn set_checksum(&mut self, checksum: u16) {
        self.set_optional(self.has_checksum(), 0, u32::from(checksum) << 16);
    }

    /// Sets the key if present.
    pub fn set_key(&mut self, key: u32) {
        self.set_optional(self.has_key(), usize::from(self.has_checksum()), key);
    }

    /// Sets the sequence number if present.
    pub fn set_seq(&mut self, seq: u32) {
        let before = usize::from(self.has_checksum()) + usize::from(self.has_key());
        self.set_optional(self.has_seq(), before, seq);
    }

    /// Computes and stores the checksum over the whole buffer, if present.
    pub fn fill_checksum(&mut self) {
        if self.has_checksum() {
            self.set_checksum(0);
            let sum = checksum::internet(self.buffer.as_ref());
            self.set_checksum(sum);
        }
    }

    /// The bytes after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// The fields of a version 0 GRE header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GreRepr {
    /// Protocol type of the payload.
    pub protocol_type: u16,
    /// Whether a checksum is present (filled by [`GrePacket::fill_checksum`]).
    pub checksum: bool,
    /// The key, if any.
    pub key: Option<u32>,
    /// The sequence number, if any.
    pub seq: Option<u32>,
}

impl GreRepr {
    /// Reads a checked header (the checksum is not verified; version and routing bits are
    /// not kept).
    pub fn parse<T: AsRef<[u8]>>(packet: &GrePacket<T>) -> Result<GreRepr> {
        packet.check_len()?;
        Ok(GreRepr {
            protocol_type: packet.protocol_type(),
            checksum: packet.has_checksum(),
            key: packet.key(),
            seq: packet.seq(),
        })
    }

    /// The header's length.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
            + 4 * (usize::from(self.checksum)
                + usize::from(self.key.is_some())
                + usize::from(self.seq.is_some()))
    }

    /// Writes the header with a zero checksum (the buffer must hold
    /// [`GreRepr::buffer_len`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut GrePacket<T>) {
        let mut flags = 0;
        if self.checksum {
            flags |= FLAG_CHECKSUM;
        }
        if self.key.is_some() {
            flags |= FLAG_KEY;
        }
        if self.seq.is_some() {
            flags |= FLAG_SEQ;
        }
        packet.set_flags(flags);
        packet.set_protocol_type(self.protocol_type);
        packet.set_checksum(0);
        packet.set_key(self.key.unwrap_or(0));
        packet.set_seq(self.seq.unwrap_or(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_find_their_places() {
        for repr in [
            GreRepr { protocol_type: 0x0800, checksum: false, key: None, seq: None },
            GreRepr { protocol_type: 0x6558, checksum: true, key: Some(7), seq: Some(9) },
            GreRepr { protocol_type: 0x86dd, checksum: false, key: None, seq: Some(1) },
            GreRepr { protocol_type: 0x8847, checksum: true, key: Some(3), seq: None },
        ] {
            let mut bytes = vec![0xee; repr.buffer_len() + 4];
            let mut p = GrePacket::new_unchecked(&mut bytes[..]);
            repr.emit(&mut p);
            p.payload_mut().copy_from_slice(&[1, 2, 3, 4]);
            p.fill_checksum();
            let p = GrePacket::new_checked(&bytes[..]).unwrap();
            assert_eq!(GreRepr::parse(&p).unwrap(), repr);
            assert!(p.verify_checksum());
            assert_eq!(p.payload(), &[1, 2, 3, 4]);
            assert_eq!(p.checksum().is_some(), repr.checksum);
            assert!(GrePacket::new_checked(&bytes[..p.header_len() - 1]).is_err());
        }
        // The routing bit brings the checksum word along.
        let p = GrePacket::new_unchecked(&[0x40, 0, 0x08, 0, 0xab, 0xcd, 0, 0][..]);
        assert_eq!((p.header_len(), p.checksum()), (8, Some(0xabcd)));
    }
}
