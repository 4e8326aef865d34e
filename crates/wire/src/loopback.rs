//! BSD loopback headers: a 32-bit address family before the packet. `NULL` stores it in the
//! capturing host's byte order, OpenBSD's `LOOP` in network order.

use crate::bytes::{get32, need, set32, view};
use crate::{Header, Result};

/// Bytes in a header.
pub const HEADER_LEN: usize = 4;

/// `AF_INET`.
pub const AF_INET: u32 = 2;
/// `AF_ISO` (OSI).
pub const AF_OSI: u32 = 7;
/// `AF_APPLETALK`.
pub const AF_APPLETALK: u32 = 16;
/// `AF_IPX`.
pub const AF_IPX: u32 = 23;
/// `AF_INET6` on NetBSD and OpenBSD (what `NULL` files usually carry for IPv6).
pub const AF_INET6_BSD: u32 = 24;
/// `AF_INET6` on FreeBSD and DragonFly BSD.
pub const AF_INET6_FREEBSD: u32 = 28;
/// `AF_INET6` on macOS.
pub const AF_INET6_DARWIN: u32 = 30;

/// Whether `family` is one of the values that mean IPv6 on some BSD.
pub fn is_inet6(family: u32) -> bool {
    matches!(family, AF_INET6_BSD | AF_INET6_FREEBSD | AF_INET6_DARWIN)
}

view! {
    /// A loopback header and the packet after it.
    LoopbackPacket
}

impl<T: AsRef<[u8]>> LoopbackPacket<T> {
    /// The header must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Loopback, self.buffer.as_ref(), HEADER_LEN)
    }

    /// The family read in network byte order (`LOOP`).
    #[inline]
    pub fn family_be(&self) -> u32 {
        get32(self.buffer.as_ref(), 0)
    }

    /// The family read little-endian.
    #[inline]
    pub fn family_le(&self) -> u32 {
        self.family_be().swap_bytes()
    }

    /// The family of a `NULL` header, whose byte order is the capturing host's: read
    /// little-endian unless that leaves the low 16 bits zero (then it was big-endian), as
    /// tcpdump does.
    #[inline]
    pub fn family_any_order(&self) -> u32 {
        let le = self.family_le();
        if le & 0xffff == 0 { self.family_be() } else { le }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> LoopbackPacket<&'a T> {
    /// The packet after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> LoopbackPacket<T> {
    /// Sets the family in network byte order.
    #[inline]
    pub fn set_family_be(&mut self, family: u32) {
        set32(self.buffer.as_mut(), 0, family);
    }

    /// Sets the family little-endian (as a little-endian host writes `NULL`).
    #[inline]
    pub fn set_family_le(&mut self, family: u32) {
        set32(self.buffer.as_mut(), 0, family.swap_bytes());
    }

    /// The packet after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_orders() {
        let mut b = [0u8; 5];
        let mut p = LoopbackPacket::new_unchecked(&mut b[..]);
        p.set_family_le(AF_INET6_BSD);
        assert_eq!(b[..4], [24, 0, 0, 0]);
        let p = LoopbackPacket::new_checked(&b[..]).unwrap();
        assert_eq!((p.family_le(), p.family_any_order(), p.payload().len()), (24, 24, 1));
        let mut p = LoopbackPacket::new_unchecked(&mut b[..]);
        p.set_family_be(AF_INET);
        assert_eq!(b[..4], [0, 0, 0, 2]);
        let p = LoopbackPacket::new_unchecked(&b[..]);
        assert_eq!((p.family_be(), p.family_any_order()), (2, 2));
        assert!(is_inet6(30) && !is_inet6(2));
        assert!(LoopbackPacket::new_checked(&b[..3]).is_err());
    }
}
