//! Geneve headers (RFC 8926) and their options.

use crate::bytes::{get16, get24, need, options_area, set16, set24, view, walk};
use crate::{Error, Header, Result};

/// The UDP port Geneve is sent to (IANA).
pub const UDP_PORT: u16 = 6081;
/// Bytes in the header without options.
pub const HEADER_LEN: usize = 8;
/// Bytes in an option header (class, type, length).
pub const OPTION_HEADER_LEN: usize = 4;

/// Field offsets.
pub mod field {
    /// Version (2 bits) and options length in 4-byte words (6 bits).
    pub const VER_OPT_LEN: usize = 0;
    /// O (control) and C (critical options) flags.
    pub const FLAGS: usize = 1;
    /// Protocol type (an EtherType).
    pub const PROTOCOL: usize = 2;
    /// Network identifier (24 bits).
    pub const VNI: usize = 4;
}

view! {
    /// A Geneve header, its options and what follows.
    GenevePacket
}

impl<T: AsRef<[u8]>> GenevePacket<T> {
    /// The header and the options its length announces must fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Geneve, data, HEADER_LEN)?;
        need(Header::Geneve, data, self.header_len())
    }

    /// Version.
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_OPT_LEN] >> 6
    }

    /// Options length in bytes.
    #[inline]
    pub fn options_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_OPT_LEN] & 0x3f) * 4
    }

    /// The header's length, options included.
    #[inline]
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options_len()
    }

    /// O flag: a control packet.
    #[inline]
    pub fn oam(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x80 != 0
    }

    /// C flag: critical options are present.
    #[inline]
    pub fn critical(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x40 != 0
    }

    /// Protocol type of the payload (an EtherType).
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PROTOCOL)
    }

    /// Network identifier.
    #[inline]
    pub fn vni(&self) -> u32 {
        get24(self.buffer.as_ref(), field::VNI)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> GenevePacket<&'a T> {
    /// What follows the header and its options.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> GenevePacket<T> {
    /// Sets the version (2 bits).
    #[inline]
    pub fn set_version(&mut self, version: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_OPT_LEN];
        *b = (*b & 0x3f) | (version << 6);
    }

    /// Sets the options length in bytes (a multiple of 4, at most 252).
    #[inline]
    pub fn set_options_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[field::VER_OPT_LEN];
        *b = (*b & 0xc0) | ((len / 4) as u8 & 0x3f);
    }

    /// Sets the O and C flags (the reserved bits become zero).
    #[inline]
    pub fn set_flags(&mut self, oam: bool, critical: bool) {
        self.buffer.as_mut()[field::FLAGS] = (u8::from(oam) << 7) | (u8::from(critical) << 6);
    }

    /// Sets the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, protocol: u16) {
        set16(self.buffer.as_mut(), field::PROTOCOL, protocol);
    }

    /// Sets the network identifier (low 24 bits).
    #[inline]
    pub fn set_vni(&mut self, vni: u32) {
        set24(self.buffer.as_mut(), field::VNI, vni);
    }

    /// What follows the header and its options, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// One Geneve option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GeneveOption<'a> {
    /// Option class.
    pub class: u16,
    /// Option type (the high bit marks a critical option).
    pub option_type: u8,
    /// Option data (a multiple of 4 bytes).
    pub data: &'a [u8],
}

walk! {
    /// The options of a header, one by one; an option longer than the area is an error (and
    /// ends the walk).
    GeneveOptions => GeneveOption<'a>, option_at
}

options_area!(GenevePacket, GeneveOptions);

fn option_at(data: &[u8], at: usize) -> Option<Result<(GeneveOption<'_>, usize)>> {
    let rest = data.get(at..).filter(|r| !r.is_empty())?;
    let h = Header::GeneveOption;
    if rest.len() < OPTION_HEADER_LEN {
        return Some(Err(Error::truncated(h, OPTION_HEADER_LEN, rest.len()).shifted(at)));
    }
    let len = OPTION_HEADER_LEN + usize::from(rest[3] & 0x1f) * 4;
    let Some(value) = rest.get(OPTION_HEADER_LEN..len) else {
        return Some(Err(Error::truncated(h, len, rest.len()).shifted(at)));
    };
    let option = GeneveOption { class: get16(rest, 0), option_type: rest[2], data: value };
    Some(Ok((option, at + len)))
}

/// The fields of a version 0 Geneve header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GeneveRepr<'a> {
    /// O flag.
    pub oam: bool,
    /// C flag.
    pub critical: bool,
    /// Protocol type of the payload.
    pub protocol_type: u16,
    /// Network identifier (24 bits).
    pub vni: u32,
    /// Raw options (a multiple of 4 bytes, at most 252).
    pub options: &'a [u8],
}

impl<'a> GeneveRepr<'a> {
    /// Reads a checked header of version 0.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &GenevePacket<&'a T>) -> Result<GeneveRepr<'a>> {
        packet.check_len()?;
        if packet.version() != 0 {
            return Err(Error::invalid(Header::Geneve, 0, "version", packet.version().into()));
        }
        Ok(GeneveRepr {
            oam: packet.oam(),
            critical: packet.critical(),
            protocol_type: packet.protocol_type(),
            vni: packet.vni(),
            options: packet.options(),
        })
    }

    /// The header's length, options included.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.options.len().min(252) / 4 * 4
    }

    /// Writes the header (the buffer must hold [`GeneveRepr::buffer_len`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut GenevePacket<T>) {
        let opts = &self.options[..self.buffer_len() - HEADER_LEN];
        packet.as_bytes_mut()[field::VER_OPT_LEN] = 0;
        packet.set_options_len(opts.len());
        packet.set_flags(self.oam, self.critical);
        packet.set_protocol_type(self.protocol_type);
        packet.set_vni(self.vni);
        packet.as_bytes_mut()[7] = 0;
        packet.options_mut().copy_from_slice(opts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_round_trip() {
        let mut bytes = vec![0x03, 0x40, 0x65, 0x58, 0, 0, 42, 0];
        bytes.extend_from_slice(&[0x01, 0x02, 0x80, 0x01, 9, 9, 9, 9]);
        bytes.extend_from_slice(&[0x00, 0x00, 0x05, 0x00, 0xff]);
        let p = GenevePacket::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.version(), p.options_len(), p.critical(), p.oam()), (0, 12, true, false));
        assert_eq!((p.protocol_type(), p.vni(), p.payload()), (0x6558, 42, &[0xff][..]));
        let opts: Vec<_> = p.option_iter().map(|o| o.unwrap()).collect();
        assert_eq!(opts[0], GeneveOption { class: 0x0102, option_type: 0x80, data: &[9; 4] });
        assert_eq!(opts[1], GeneveOption { class: 0, option_type: 5, data: &[] });
        let repr = GeneveRepr::parse(&p).unwrap();
        let mut out = vec![0xee; bytes.len()];
        let mut q = GenevePacket::new_unchecked(&mut out[..]);
        repr.emit(&mut q);
        q.payload_mut()[0] = 0xff;
        assert_eq!(out, bytes);
        assert!(GenevePacket::new_checked(&bytes[..19]).is_err());
        assert!(GeneveOptions::new(&[0, 0, 0, 2, 1, 1]).next().unwrap().is_err());
    }
}
