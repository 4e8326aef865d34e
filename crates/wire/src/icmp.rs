//! ICMP (RFC 792) and ICMPv6 (RFC 4443) messages.
//!
//! Both start with type, code, checksum and a 32-bit rest-of-header whose meaning depends on
//! the type (identifier and sequence number of an echo, an MTU, a pointer, flags…). They differ
//! in the checksum: ICMPv6's covers an IPv6 pseudo-header, ICMP's only the message. One macro
//! writes the shared accessors for both views, so each keeps its own checksum methods.

use crate::bytes::{get16, get32, need, set16, set32, view};
use crate::checksum;
use crate::{Header, Result};

/// Bytes in the header (type, code, checksum, rest of header).
pub const HEADER_LEN: usize = 8;

/// ICMP type: echo reply.
pub const ECHO_REPLY: u8 = 0;
/// ICMP type: destination unreachable.
pub const DEST_UNREACHABLE: u8 = 3;
/// ICMP type: echo request.
pub const ECHO_REQUEST: u8 = 8;
/// ICMP type: time exceeded.
pub const TIME_EXCEEDED: u8 = 11;
/// ICMPv6 type: destination unreachable.
pub const V6_DEST_UNREACHABLE: u8 = 1;
/// ICMPv6 type: packet too big.
pub const V6_PACKET_TOO_BIG: u8 = 2;
/// ICMPv6 type: echo request.
pub const V6_ECHO_REQUEST: u8 = 128;
/// ICMPv6 type: echo reply.
pub const V6_ECHO_REPLY: u8 = 129;
/// ICMPv6 type: neighbour solicitation.
pub const V6_NEIGHBOR_SOLICIT: u8 = 135;
/// ICMPv6 type: neighbour advertisement.
pub const V6_NEIGHBOR_ADVERT: u8 = 136;

/// Field offsets.
pub mod field {
    /// Type.
    pub const TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Checksum.
    pub const CHECKSUM: usize = 2;
    /// Rest of header (echo: identifier).
    pub const REST: usize = 4;
    /// Echo: sequence number.
    pub const ECHO_SEQ: usize = 6;
}

macro_rules! icmp_view {
    ($(#[$doc:meta])* $name:ident, $header:expr) => {
        view! {
            $(#[$doc])*
            $name
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// The header (eight bytes) must fit.
            pub fn check_len(&self) -> Result<()> {
                need($header, self.buffer.as_ref(), HEADER_LEN)
            }

            /// Message type.
            #[inline]
            pub fn msg_type(&self) -> u8 {
                self.buffer.as_ref()[field::TYPE]
            }

            /// Message code.
            #[inline]
            pub fn msg_code(&self) -> u8 {
                self.buffer.as_ref()[field::CODE]
            }

            /// Checksum.
            #[inline]
            pub fn checksum(&self) -> u16 {
                get16(self.buffer.as_ref(), field::CHECKSUM)
            }

            /// The 32-bit rest of header.
            #[inline]
            pub fn rest_of_header(&self) -> u32 {
                get32(self.buffer.as_ref(), field::REST)
            }

            /// Echo: identifier.
            #[inline]
            pub fn echo_ident(&self) -> u16 {
                get16(self.buffer.as_ref(), field::REST)
            }

            /// Echo: sequence number.
            #[inline]
            pub fn echo_seq_no(&self) -> u16 {
                get16(self.buffer.as_ref(), field::ECHO_SEQ)
            }
        }

        impl<'a, T: AsRef<[u8]> + ?Sized> $name<&'a T> {
            /// The bytes after the eight-byte header.
            #[inline]
            pub fn payload(&self) -> &'a [u8] {
                &self.buffer.as_ref()[HEADER_LEN..]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            /// Sets the type.
            #[inline]
            pub fn set_msg_type(&mut self, t: u8) {
                self.buffer.as_mut()[field::TYPE] = t;
            }

            /// Sets the code.
            #[inline]
            pub fn set_msg_code(&mut self, code: u8) {
                self.buffer.as_mut()[field::CODE] = code;
            }

            /// Sets the checksum.
            #[inline]
            pub fn set_checksum(&mut self, checksum: u16) {
                set16(self.buffer.as_mut(), field::CHECKSUM, checksum);
            }

            /// Sets the rest of header.
            #[inline]
            pub fn set_rest_of_header(&mut self, rest: u32) {
                set32(self.buffer.as_mut(), field::REST, rest);
            }

            /// Echo: sets the identifier.
            #[inline]
            pub fn set_echo_ident(&mut self, ident: u16) {
                set16(self.buffer.as_mut(), field::REST, ident);
            }

            /// Echo: sets the sequence number.
            #[inline]
            pub fn set_echo_seq_no(&mut self, seq: u16) {
                set16(self.buffer.as_mut(), field::ECHO_SEQ, seq);
            }

            /// The bytes after the header, writable.
            #[inline]
            pub fn payload_mut(&mut self) -> &mut [u8] {
                &mut self.buffer.as_mut()[HEADER_LEN..]
            }
        }
    };
}

icmp_view! {
    /// An ICMP message (the view's buffer is the whole message: the checksum covers it).
    IcmpPacket, Header::Icmp
}

icmp_view! {
    /// An ICMPv6 message (the view's buffer is the whole message: the checksum covers it and
    /// an IPv6 pseudo-header).
    Icmpv6Packet, Header::Icmpv6
}

impl<T: AsRef<[u8]>> IcmpPacket<T> {
    /// Whether the checksum over the whole buffer is right.
    pub fn verify_checksum(&self) -> bool {
        checksum::internet(self.buffer.as_ref()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IcmpPacket<T> {
    /// Computes and stores the checksum over the whole buffer.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let sum = checksum::internet(self.buffer.as_ref());
        self.set_checksum(sum);
    }
}

impl<T: AsRef<[u8]>> Icmpv6Packet<T> {
    fn sum(&self, src: &[u8], dst: &[u8]) -> u16 {
        let data = self.buffer.as_ref();
        let pseudo = checksum::pseudo(src, dst, crate::ipproto::ICMPV6, data.len() as u32);
        checksum::finish(checksum::add(pseudo, data))
    }

    /// Whether the checksum over the whole buffer and the pseudo-header (of the enclosing IP
    /// header's addresses) is right.
    pub fn verify_checksum(&self, src: &[u8], dst: &[u8]) -> bool {
        self.sum(src, dst) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv6Packet<T> {
    /// Computes and stores the checksum over the whole buffer and the pseudo-header.
    pub fn fill_checksum(&mut self, src: &[u8], dst: &[u8]) {
        self.set_checksum(0);
        let sum = self.sum(src, dst);
        self.set_checksum(sum);
    }
}

/// The header of an ICMP or ICMPv6 message: type, code and the rest of header. The checksum
/// is filled once the payload is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IcmpRepr {
    /// Message type.
    pub msg_type: u8,
    /// Message code.
    pub code: u8,
    /// The 32-bit rest of header.
    pub rest: u32,
}

impl IcmpRepr {
    /// An echo request or reply (ICMP types 8 and 0).
    pub fn echo(request: bool, ident: u16, seq: u16) -> IcmpRepr {
        let msg_type = if request { ECHO_REQUEST } else { ECHO_REPLY };
        IcmpRepr { msg_type, code: 0, rest: (u32::from(ident) << 16) | u32::from(seq) }
    }

    /// An ICMPv6 echo request or reply (types 128 and 129).
    pub fn echo_v6(request: bool, ident: u16, seq: u16) -> IcmpRepr {
        let msg_type = if request { V6_ECHO_REQUEST } else { V6_ECHO_REPLY };
        IcmpRepr { msg_type, code: 0, rest: (u32::from(ident) << 16) | u32::from(seq) }
    }

    /// Reads a checked ICMP header.
    pub fn parse<T: AsRef<[u8]>>(packet: &IcmpPacket<T>) -> Result<IcmpRepr> {
        packet.check_len()?;
        Ok(IcmpRepr {
            msg_type: packet.msg_type(),
            code: packet.msg_code(),
            rest: packet.rest_of_header(),
        })
    }

    /// Reads a checked ICMPv6 header.
    pub fn parse_v6<T: AsRef<[u8]>>(packet: &Icmpv6Packet<T>) -> Result<IcmpRepr> {
        packet.check_len()?;
        Ok(IcmpRepr {
            msg_type: packet.msg_type(),
            code: packet.msg_code(),
            rest: packet.rest_of_header(),
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes an ICMP header with a zero checksum.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut IcmpPacket<T>) {
        packet.set_msg_type(self.msg_type);
        packet.set_msg_code(self.code);
        packet.set_checksum(0);
        packet.set_rest_of_header(self.rest);
    }

    /// Writes an ICMPv6 header with a zero checksum.
    pub fn emit_v6<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Icmpv6Packet<T>) {
        packet.set_msg_type(self.msg_type);
        packet.set_msg_code(self.code);
        packet.set_checksum(0);
        packet.set_rest_of_header(self.rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_round_trips_and_checksums() {
        let mut bytes = [0u8; 12];
        let repr = IcmpRepr::echo(true, 0x1234, 7);
        let mut p = IcmpPacket::new_unchecked(&mut bytes[..]);
        repr.emit(&mut p);
        p.payload_mut().copy_from_slice(b"ping");
        p.fill_checksum();
        let p = IcmpPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!(
            (p.msg_type(), p.msg_code(), p.echo_ident(), p.echo_seq_no()),
            (8, 0, 0x1234, 7)
        );
        assert!(p.verify_checksum());
        assert_eq!(p.payload(), b"ping");
        assert_eq!(IcmpRepr::parse(&p).unwrap(), repr);
        assert!(IcmpPacket::new_checked(&bytes[..7]).is_err());

        let (src, dst) = ([0xfe; 16], [0xff; 16]);
        let repr = IcmpRepr::echo_v6(false, 1, 2);
        let mut p = Icmpv6Packet::new_unchecked(&mut bytes[..]);
        repr.emit_v6(&mut p);
        p.fill_checksum(&src, &dst);
        assert!(p.verify_checksum(&src, &dst));
        assert!(!p.verify_checksum(&src, &[0xfd; 16]));
        assert_eq!(IcmpRepr::parse_v6(&p).unwrap(), repr);
    }
}
