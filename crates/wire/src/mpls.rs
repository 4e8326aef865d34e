//! MPLS label stack entries (RFC 3032). The stack ends at the entry with the bottom-of-stack
//! bit; nothing says what follows it (readers guess from the first nibble).

use crate::bytes::{get32, need, set32, view};
use crate::{Header, Result};

/// Bytes in one label stack entry.
pub const HEADER_LEN: usize = 4;

view! {
    /// One MPLS label stack entry and what follows it.
    MplsPacket
}

impl<T: AsRef<[u8]>> MplsPacket<T> {
    /// The entry must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Mpls, self.buffer.as_ref(), HEADER_LEN)
    }

    /// The whole entry.
    #[inline]
    pub fn entry(&self) -> u32 {
        get32(self.buffer.as_ref(), 0)
    }

    /// Label (20 bits).
    #[inline]
    pub fn label(&self) -> u32 {
        self.entry() >> 12
    }

    /// Traffic class (3 bits).
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        ((self.entry() >> 9) & 7) as u8
    }

    /// Bottom of stack.
    #[inline]
    pub fn bottom(&self) -> bool {
        self.entry() & 0x100 != 0
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.entry() as u8
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> MplsPacket<&'a T> {
    /// What follows the entry (the next entry, or the payload after the bottom one).
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MplsPacket<T> {
    /// Sets the whole entry.
    #[inline]
    pub fn set_entry(&mut self, entry: u32) {
        set32(self.buffer.as_mut(), 0, entry);
    }

    /// Sets the time to live.
    #[inline]
    pub fn set_ttl(&mut self, ttl: u8) {
        self.set_entry((self.entry() & !0xff) | u32::from(ttl));
    }

    /// What follows the entry, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// The fields of a label stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MplsRepr {
    /// Label (20 bits).
    pub label: u32,
    /// Traffic class (3 bits).
    pub traffic_class: u8,
    /// Bottom of stack.
    pub bottom: bool,
    /// Time to live.
    pub ttl: u8,
}

impl MplsRepr {
    /// Reads a checked entry.
    pub fn parse<T: AsRef<[u8]>>(packet: &MplsPacket<T>) -> Result<MplsRepr> {
        packet.check_len()?;
        Ok(MplsRepr {
            label: packet.label(),
            traffic_class: packet.traffic_class(),
            bottom: packet.bottom(),
            ttl: packet.ttl(),
        })
    }

    /// The entry's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the entry.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut MplsPacket<T>) {
        packet.set_entry(
            ((self.label & 0xf_ffff) << 12)
                | (u32::from(self.traffic_class & 7) << 9)
                | (u32::from(self.bottom) << 8)
                | u32::from(self.ttl),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let bytes = [0x00, 0x3e, 0x85, 0x40, 0x45];
        let p = MplsPacket::new_checked(&bytes[..]).unwrap();
        let repr = MplsRepr::parse(&p).unwrap();
        assert_eq!(repr, MplsRepr { label: 1000, traffic_class: 2, bottom: true, ttl: 64 });
        assert_eq!(p.payload(), &[0x45]);
        let mut out = [0x45; 5];
        repr.emit(&mut MplsPacket::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
        assert!(MplsPacket::new_checked(&bytes[..3]).is_err());
    }
}
