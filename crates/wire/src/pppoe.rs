//! PPPoE headers (RFC 2516): discovery frames carry tags, session frames a PPP protocol and
//! the PPP payload.

use crate::bytes::{get16, need, set16, view};
use crate::{Header, Result};

/// Bytes in the header.
pub const HEADER_LEN: usize = 6;
/// Bytes in a session header with its PPP protocol field.
pub const SESSION_HEADER_LEN: usize = 8;
/// Version 1, type 1.
pub const VER_TYPE: u8 = 0x11;
/// Code of session data.
pub const CODE_SESSION: u8 = 0;
/// PPP protocol: IPv4.
pub const PPP_IPV4: u16 = 0x0021;
/// PPP protocol: IPv6.
pub const PPP_IPV6: u16 = 0x0057;
/// PPP protocol: the link control protocol.
pub const PPP_LCP: u16 = 0xc021;

/// Field offsets.
pub mod field {
    /// Version and type nibbles.
    pub const VER_TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Session id.
    pub const SESSION: usize = 2;
    /// Payload length.
    pub const LENGTH: usize = 4;
    /// Session data: PPP protocol.
    pub const PPP_PROTOCOL: usize = 6;
}

view! {
    /// A PPPoE header and its payload.
    PppoePacket
}

impl<T: AsRef<[u8]>> PppoePacket<T> {
    /// The header and its payload length must fit, and session data must hold a PPP protocol.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Pppoe, data, HEADER_LEN)?;
        need(Header::Pppoe, data, HEADER_LEN + usize::from(self.payload_len()))?;
        if self.code() == CODE_SESSION {
            need(Header::Pppoe, data, SESSION_HEADER_LEN)?;
        }
        Ok(())
    }

    /// Version and type nibbles.
    #[inline]
    pub fn ver_type(&self) -> u8 {
        self.buffer.as_ref()[field::VER_TYPE]
    }

    /// Code (0 for session data, 0x09 PADI…).
    #[inline]
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// Session id.
    #[inline]
    pub fn session_id(&self) -> u16 {
        get16(self.buffer.as_ref(), field::SESSION)
    }

    /// Payload length.
    #[inline]
    pub fn payload_len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Session data: the PPP protocol (needs 8 bytes).
    #[inline]
    pub fn ppp_protocol(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PPP_PROTOCOL)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> PppoePacket<&'a T> {
    /// The payload (tags, or PPP protocol and data), as far as the length says.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + usize::from(self.payload_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PppoePacket<T> {
    /// Sets version and type.
    #[inline]
    pub fn set_ver_type(&mut self, v: u8) {
        self.buffer.as_mut()[field::VER_TYPE] = v;
    }

    /// Sets the code.
    #[inline]
    pub fn set_code(&mut self, code: u8) {
        self.buffer.as_mut()[field::CODE] = code;
    }

    /// Sets the session id.
    #[inline]
    pub fn set_session_id(&mut self, id: u16) {
        set16(self.buffer.as_mut(), field::SESSION, id);
    }

    /// Sets the payload length.
    #[inline]
    pub fn set_payload_len(&mut self, len: u16) {
        set16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Session data: sets the PPP protocol (needs 8 bytes).
    #[inline]
    pub fn set_ppp_protocol(&mut self, protocol: u16) {
        set16(self.buffer.as_mut(), field::PPP_PROTOCOL, protocol);
    }
}

/// A PPPoE session header with its PPP protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PppoeSessionRepr {
    /// Session id.
    pub session_id: u16,
    /// PPP protocol.
    pub protocol: u16,
    /// Bytes after the PPP protocol field.
    pub payload_len: usize,
}

impl PppoeSessionRepr {
    /// Reads a checked session header (other codes are errors).
    pub fn parse<T: AsRef<[u8]>>(packet: &PppoePacket<T>) -> Result<PppoeSessionRepr> {
        packet.check_len()?;
        if packet.code() != CODE_SESSION {
            let code = packet.code().into();
            return Err(crate::Error::invalid(Header::Pppoe, field::CODE, "code", code));
        }
        Ok(PppoeSessionRepr {
            session_id: packet.session_id(),
            protocol: packet.ppp_protocol(),
            payload_len: usize::from(packet.payload_len()).saturating_sub(2),
        })
    }

    /// The header's length, PPP protocol included.
    pub const fn buffer_len(&self) -> usize {
        SESSION_HEADER_LEN
    }

    /// Writes the header (the length field counts the PPP protocol; clamped to 65535).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut PppoePacket<T>) {
        packet.set_ver_type(VER_TYPE);
        packet.set_code(CODE_SESSION);
        packet.set_session_id(self.session_id);
        packet.set_payload_len((self.payload_len + 2).min(0xffff) as u16);
        packet.set_ppp_protocol(self.protocol);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_round_trip() {
        let bytes = [0x11, 0, 0, 7, 0, 3, 0, 0x21, 0x45];
        let p = PppoePacket::new_checked(&bytes[..]).unwrap();
        let repr = PppoeSessionRepr::parse(&p).unwrap();
        assert_eq!(repr, PppoeSessionRepr { session_id: 7, protocol: PPP_IPV4, payload_len: 1 });
        assert_eq!(p.payload(), &[0, 0x21, 0x45]);
        let mut out = [0x45; 9];
        repr.emit(&mut PppoePacket::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
        assert!(PppoePacket::new_checked(&bytes[..8]).is_err(), "length past the buffer");
        let padi = [0x11, 0x09, 0, 0, 0, 0];
        let p = PppoePacket::new_checked(&padi[..]).unwrap();
        assert!(PppoeSessionRepr::parse(&p).is_err());
    }
}
