//! Ethernet II frames and 802.1Q / 802.1ad VLAN tags.
//!
//! A tag is the four bytes after a VLAN TPID (the EtherType 0x8100, 0x88a8 or 0x9100 that
//! announced it): the tag control information and the EtherType of what follows. Stacked tags
//! (Q-in-Q) are read by wrapping each tag's payload in turn.

use crate::bytes::{array, get16, need, set16, view};
use crate::{Header, Result};

/// Bytes in an Ethernet II header.
pub const HEADER_LEN: usize = 14;
/// Bytes in a VLAN tag (after its TPID).
pub const VLAN_TAG_LEN: usize = 4;

/// A 48-bit MAC address.
pub type Mac = [u8; 6];

/// Field offsets.
pub mod field {
    use std::ops::Range;
    /// Destination MAC.
    pub const DST: Range<usize> = 0..6;
    /// Source MAC.
    pub const SRC: Range<usize> = 6..12;
    /// EtherType (or an 802.3 length up to 1500).
    pub const ETHERTYPE: usize = 12;
    /// VLAN tag control information (in a tag).
    pub const VLAN_TCI: usize = 0;
    /// VLAN: the EtherType after the tag.
    pub const VLAN_ETHERTYPE: usize = 2;
}

view! {
    /// An Ethernet II header and what follows it.
    EthernetFrame
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// The header must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Ethernet, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Destination MAC.
    #[inline]
    pub fn dst_addr(&self) -> Mac {
        array(self.buffer.as_ref(), field::DST.start)
    }

    /// Source MAC.
    #[inline]
    pub fn src_addr(&self) -> Mac {
        array(self.buffer.as_ref(), field::SRC.start)
    }

    /// EtherType, or the 802.3 length when at most 1500.
    #[inline]
    pub fn ethertype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::ETHERTYPE)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> EthernetFrame<&'a T> {
    /// The bytes after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination MAC.
    #[inline]
    pub fn set_dst_addr(&mut self, mac: Mac) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&mac);
    }

    /// Sets the source MAC.
    #[inline]
    pub fn set_src_addr(&mut self, mac: Mac) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&mac);
    }

    /// Sets the EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, ethertype: u16) {
        set16(self.buffer.as_mut(), field::ETHERTYPE, ethertype);
    }

    /// The bytes after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// The fields of an Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    /// Destination MAC.
    pub dst: Mac,
    /// Source MAC.
    pub src: Mac,
    /// EtherType.
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Reads the fields of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<EthernetRepr> {
        frame.check_len()?;
        Ok(EthernetRepr {
            dst: frame.dst_addr(),
            src: frame.src_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (the buffer must hold [`HEADER_LEN`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst_addr(self.dst);
        frame.set_src_addr(self.src);
        frame.set_ethertype(self.ethertype);
    }
}

view! {
    /// An 802.1Q / 802.1ad tag (the four bytes after its TPID) and what follows it.
    VlanTag
}

impl<T: AsRef<[u8]>> VlanTag<T> {
    /// The tag must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Vlan, self.buffer.as_ref(), VLAN_TAG_LEN)
    }

    /// The whole tag control information word.
    #[inline]
    pub fn tci(&self) -> u16 {
        get16(self.buffer.as_ref(), field::VLAN_TCI)
    }

    /// Priority code point (3 bits).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator.
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// VLAN identifier (12 bits).
    #[inline]
    pub fn vid(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// The EtherType after the tag.
    #[inline]
    pub fn ethertype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::VLAN_ETHERTYPE)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> VlanTag<&'a T> {
    /// The bytes after the tag.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[VLAN_TAG_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanTag<T> {
    /// Sets the whole tag control information word.
    #[inline]
    pub fn set_tci(&mut self, tci: u16) {
        set16(self.buffer.as_mut(), field::VLAN_TCI, tci);
    }

    /// Sets the priority code point (low 3 bits of `pcp`).
    #[inline]
    pub fn set_pcp(&mut self, pcp: u8) {
        self.set_tci((self.tci() & 0x1fff) | (u16::from(pcp & 7) << 13));
    }

    /// Sets the drop eligible indicator.
    #[inline]
    pub fn set_dei(&mut self, dei: bool) {
        self.set_tci((self.tci() & !0x1000) | (u16::from(dei) << 12));
    }

    /// Sets the VLAN identifier (low 12 bits of `vid`).
    #[inline]
    pub fn set_vid(&mut self, vid: u16) {
        self.set_tci((self.tci() & 0xf000) | (vid & 0x0fff));
    }

    /// Sets the EtherType after the tag.
    #[inline]
    pub fn set_ethertype(&mut self, ethertype: u16) {
        set16(self.buffer.as_mut(), field::VLAN_ETHERTYPE, ethertype);
    }

    /// The bytes after the tag, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[VLAN_TAG_LEN..]
    }
}

/// The fields of a VLAN tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VlanRepr {
    /// Priority code point (3 bits).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier (12 bits).
    pub vid: u16,
    /// The EtherType after the tag.
    pub ethertype: u16,
}

impl VlanRepr {
    /// Reads the fields of a checked tag.
    pub fn parse<T: AsRef<[u8]>>(tag: &VlanTag<T>) -> Result<VlanRepr> {
        tag.check_len()?;
        Ok(VlanRepr { pcp: tag.pcp(), dei: tag.dei(), vid: tag.vid(), ethertype: tag.ethertype() })
    }

    /// The tag's length.
    pub const fn buffer_len(&self) -> usize {
        VLAN_TAG_LEN
    }

    /// Writes the tag (the buffer must hold [`VLAN_TAG_LEN`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, tag: &mut VlanTag<T>) {
        let tci =
            (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0xfff);
        tag.set_tci(tci);
        tag.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static FRAME: [u8; 22] =
        [0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0x60, 0x64, 0x08, 0x00, 1, 2, 3, 4];

    #[test]
    fn deconstruct_frame_and_tag() {
        let f = EthernetFrame::new_checked(&FRAME[..]).unwrap();
        assert_eq!(f.dst_addr(), [2, 0, 0, 0, 0, 1]);
        assert_eq!(f.src_addr(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(f.ethertype(), crate::ethertype::VLAN);
        let t = VlanTag::new_checked(f.payload()).unwrap();
        assert_eq!((t.pcp(), t.dei(), t.vid(), t.ethertype()), (3, false, 100, 0x0800));
        assert_eq!(t.payload(), &[1, 2, 3, 4]);
        assert!(EthernetFrame::new_checked(&FRAME[..13]).is_err());
        assert!(VlanTag::new_checked(&FRAME[..3]).is_err());
    }

    #[test]
    fn construct_round_trips() {
        let mut bytes = [0u8; 22];
        let eth = EthernetRepr::parse(&EthernetFrame::new_unchecked(&FRAME[..])).unwrap();
        eth.emit(&mut EthernetFrame::new_unchecked(&mut bytes[..]));
        let tag = VlanRepr::parse(&VlanTag::new_unchecked(&FRAME[14..])).unwrap();
        let mut t = VlanTag::new_unchecked(&mut bytes[14..]);
        tag.emit(&mut t);
        t.payload_mut().copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(bytes, FRAME);
        let mut t = VlanTag::new_unchecked(&mut bytes[14..]);
        t.set_dei(true);
        t.set_pcp(7);
        t.set_vid(0xfff);
        assert_eq!(t.tci(), 0xffff);
    }
}
