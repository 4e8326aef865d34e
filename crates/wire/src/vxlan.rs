//! VXLAN headers (RFC 7348): an Ethernet frame follows.

use crate::bytes::{get24, need, set24, view};
use crate::{Header, Result};

/// Bytes in a header.
pub const HEADER_LEN: usize = 8;
/// The UDP port VXLAN is sent to (IANA).
pub const UDP_PORT: u16 = 4789;
/// Flag bit: the network identifier is valid.
pub const FLAG_VNI: u8 = 0x08;

/// Field offsets.
pub mod field {
    /// Flags.
    pub const FLAGS: usize = 0;
    /// Network identifier (24 bits).
    pub const VNI: usize = 4;
}

view! {
    /// A VXLAN header and the frame after it.
    VxlanPacket
}

impl<T: AsRef<[u8]>> VxlanPacket<T> {
    /// The header must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Vxlan, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Flags.
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// Network identifier.
    #[inline]
    pub fn vni(&self) -> u32 {
        get24(self.buffer.as_ref(), field::VNI)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> VxlanPacket<&'a T> {
    /// The frame after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VxlanPacket<T> {
    /// Sets the flags.
    #[inline]
    pub fn set_flags(&mut self, flags: u8) {
        self.buffer.as_mut()[field::FLAGS] = flags;
    }

    /// Sets the network identifier (low 24 bits).
    #[inline]
    pub fn set_vni(&mut self, vni: u32) {
        set24(self.buffer.as_mut(), field::VNI, vni);
    }

    /// The frame after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// A VXLAN header with a valid network identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VxlanRepr {
    /// Network identifier (24 bits).
    pub vni: u32,
}

impl VxlanRepr {
    /// Reads a checked header.
    pub fn parse<T: AsRef<[u8]>>(packet: &VxlanPacket<T>) -> Result<VxlanRepr> {
        packet.check_len()?;
        Ok(VxlanRepr { vni: packet.vni() })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header: the I flag, the identifier, reserved bytes zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut VxlanPacket<T>) {
        packet.as_bytes_mut()[..HEADER_LEN].fill(0);
        packet.set_flags(FLAG_VNI);
        packet.set_vni(self.vni);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let bytes = [0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0, 0xaa];
        let p = VxlanPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.flags(), p.vni(), p.payload()), (8, 0x12_3456, &[0xaa][..]));
        let mut out = [0xee; 9];
        VxlanRepr::parse(&p).unwrap().emit(&mut VxlanPacket::new_unchecked(&mut out[..]));
        out[8] = 0xaa;
        assert_eq!(out, bytes);
        assert!(VxlanPacket::new_checked(&bytes[..7]).is_err());
    }
}
