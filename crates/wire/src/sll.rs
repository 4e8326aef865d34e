//! Linux cooked capture headers, v1 (`LINUX_SLL`, 16 bytes) and v2 (`LINUX_SLL2`, 20 bytes):
//! what Linux captures on the "any" device instead of a link-layer header.

use crate::bytes::{get16, get32, need, set16, set32, view};
use crate::{Header, Result};

/// Bytes in a v1 header.
pub const HEADER_LEN: usize = 16;
/// Bytes in a v2 header.
pub const V2_HEADER_LEN: usize = 20;
/// The most address bytes either header holds.
pub const MAX_ADDR_LEN: usize = 8;

/// `ARPHRD_ETHER`: the device is Ethernet.
pub const ARPHRD_ETHER: u16 = 1;

/// Packet type: to this host.
pub const HOST: u16 = 0;
/// Packet type: broadcast.
pub const BROADCAST: u16 = 1;
/// Packet type: multicast.
pub const MULTICAST: u16 = 2;
/// Packet type: to another host.
pub const OTHERHOST: u16 = 3;
/// Packet type: sent by this host.
pub const OUTGOING: u16 = 4;

/// Field offsets.
pub mod field {
    /// v1: packet type.
    pub const PKTTYPE: usize = 0;
    /// v1: ARPHRD_ device type.
    pub const HATYPE: usize = 2;
    /// v1: address length.
    pub const HALEN: usize = 4;
    /// v1: address (8 bytes).
    pub const ADDR: usize = 6;
    /// v1: protocol (an EtherType, or a Linux protocol below 0x600).
    pub const PROTOCOL: usize = 14;
    /// v2: protocol.
    pub const V2_PROTOCOL: usize = 0;
    /// v2: reserved.
    pub const V2_RESERVED: usize = 2;
    /// v2: interface index.
    pub const V2_IFINDEX: usize = 4;
    /// v2: ARPHRD_ device type.
    pub const V2_HATYPE: usize = 8;
    /// v2: packet type.
    pub const V2_PKTTYPE: usize = 10;
    /// v2: address length.
    pub const V2_HALEN: usize = 11;
    /// v2: address (8 bytes).
    pub const V2_ADDR: usize = 12;
}

view! {
    /// A Linux cooked v1 header and what follows.
    SllPacket
}

impl<T: AsRef<[u8]>> SllPacket<T> {
    /// The header must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Sll, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Packet type ([`HOST`], [`OUTGOING`]…).
    #[inline]
    pub fn packet_type(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PKTTYPE)
    }

    /// ARPHRD_ device type.
    #[inline]
    pub fn hatype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::HATYPE)
    }

    /// Address length as stored.
    #[inline]
    pub fn addr_len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::HALEN)
    }

    /// The address: as many bytes as the length says, at most 8.
    #[inline]
    pub fn addr(&self) -> &[u8] {
        let n = usize::from(self.addr_len()).min(MAX_ADDR_LEN);
        &self.buffer.as_ref()[field::ADDR..field::ADDR + n]
    }

    /// Protocol.
    #[inline]
    pub fn protocol(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PROTOCOL)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> SllPacket<&'a T> {
    /// The address, for as long as the buffer is borrowed.
    #[inline]
    pub fn addr_bytes(&self) -> &'a [u8] {
        let n = usize::from(self.addr_len()).min(MAX_ADDR_LEN);
        &self.buffer.as_ref()[field::ADDR..field::ADDR + n]
    }

    /// What follows the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SllPacket<T> {
    /// Sets the packet type.
    #[inline]
    pub fn set_packet_type(&mut self, t: u16) {
        set16(self.buffer.as_mut(), field::PKTTYPE, t);
    }

    /// Sets the ARPHRD_ device type.
    #[inline]
    pub fn set_hatype(&mut self, t: u16) {
        set16(self.buffer.as_mut(), field::HATYPE, t);
    }

    /// Sets the address (at most 8 bytes, zero-padded) and its length.
    pub fn set_addr(&mut self, addr: &[u8]) {
        let addr = &addr[..addr.len().min(MAX_ADDR_LEN)];
        set16(self.buffer.as_mut(), field::HALEN, addr.len() as u16);
        let area = &mut self.buffer.as_mut()[field::ADDR..field::ADDR + MAX_ADDR_LEN];
        area[..addr.len()].copy_from_slice(addr);
        area[addr.len()..].fill(0);
    }

    /// Sets the protocol.
    #[inline]
    pub fn set_protocol(&mut self, protocol: u16) {
        set16(self.buffer.as_mut(), field::PROTOCOL, protocol);
    }

    /// What follows the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

view! {
    /// A Linux cooked v2 header and what follows.
    Sll2Packet
}

impl<T: AsRef<[u8]>> Sll2Packet<T> {
    /// The header must fit.
    pub fn check_len(&self) -> Result<()> {
        need(Header::Sll2, self.buffer.as_ref(), V2_HEADER_LEN)
    }

    /// Protocol.
    #[inline]
    pub fn protocol(&self) -> u16 {
        get16(self.buffer.as_ref(), field::V2_PROTOCOL)
    }

    /// Interface index.
    #[inline]
    pub fn ifindex(&self) -> u32 {
        get32(self.buffer.as_ref(), field::V2_IFINDEX)
    }

    /// ARPHRD_ device type.
    #[inline]
    pub fn hatype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::V2_HATYPE)
    }

    /// Packet type.
    #[inline]
    pub fn packet_type(&self) -> u8 {
        self.buffer.as_ref()[field::V2_PKTTYPE]
    }

    /// Address length as stored.
    #[inline]
    pub fn addr_len(&self) -> u8 {
        self.buffer.as_ref()[field::V2_HALEN]
    }

    /// The address: as many bytes as the length says, at most 8.
    #[inline]
    pub fn addr(&self) -> &[u8] {
        let n = usize::from(self.addr_len()).min(MAX_ADDR_LEN);
        &self.buffer.as_ref()[field::V2_ADDR..field::V2_ADDR + n]
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Sll2Packet<&'a T> {
    /// The address, for as long as the buffer is borrowed.
    #[inline]
    pub fn addr_bytes(&self) -> &'a [u8] {
        let n = usize::from(self.addr_len()).min(MAX_ADDR_LEN);
        &self.buffer.as_ref()[field::V2_ADDR..field::V2_ADDR + n]
    }

    /// What follows the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[V2_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Sll2Packet<T> {
    /// Sets the protocol and zeroes the reserved field.
    #[inline]
    pub fn set_protocol(&mut self, protocol: u16) {
        set16(self.buffer.as_mut(), field::V2_PROTOCOL, protocol);
        set16(self.buffer.as_mut(), field::V2_RESERVED, 0);
    }

    /// Sets the interface index.
    #[inline]
    pub fn set_ifindex(&mut self, ifindex: u32) {
        set32(self.buffer.as_mut(), field::V2_IFINDEX, ifindex);
    }

    /// Sets the ARPHRD_ device type.
    #[inline]
    pub fn set_hatype(&mut self, t: u16) {
        set16(self.buffer.as_mut(), field::V2_HATYPE, t);
    }

    /// Sets the packet type.
    #[inline]
    pub fn set_packet_type(&mut self, t: u8) {
        self.buffer.as_mut()[field::V2_PKTTYPE] = t;
    }

    /// Sets the address (at most 8 bytes, zero-padded) and its length.
    pub fn set_addr(&mut self, addr: &[u8]) {
        let addr = &addr[..addr.len().min(MAX_ADDR_LEN)];
        self.buffer.as_mut()[field::V2_HALEN] = addr.len() as u8;
        let area = &mut self.buffer.as_mut()[field::V2_ADDR..field::V2_ADDR + MAX_ADDR_LEN];
        area[..addr.len()].copy_from_slice(addr);
        area[addr.len()..].fill(0);
    }

    /// What follows the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[V2_HEADER_LEN..]
    }
}

/// The fields of a cooked header, either version (v1 stores the packet type in 16 bits, v2
/// in 8 and adds the interface index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SllRepr {
    /// Packet type.
    pub packet_type: u16,
    /// ARPHRD_ device type.
    pub hatype: u16,
    /// Address bytes (the first `addr_len` count).
    pub addr: [u8; MAX_ADDR_LEN],
    /// Address length (at most 8).
    pub addr_len: u8,
    /// Protocol.
    pub protocol: u16,
    /// Interface index (v2 only).
    pub ifindex: u32,
}

impl SllRepr {
    /// A header for an Ethernet device with the sender's MAC.
    pub fn ethernet(packet_type: u16, src: [u8; 6], protocol: u16, ifindex: u32) -> SllRepr {
        let mut addr = [0; MAX_ADDR_LEN];
        addr[..6].copy_from_slice(&src);
        SllRepr { packet_type, hatype: ARPHRD_ETHER, addr, addr_len: 6, protocol, ifindex }
    }

    fn from_addr(addr: &[u8]) -> ([u8; MAX_ADDR_LEN], u8) {
        let mut a = [0; MAX_ADDR_LEN];
        a[..addr.len()].copy_from_slice(addr);
        (a, addr.len() as u8)
    }

    /// Reads a checked v1 header (an address length above 8 reads as 8).
    pub fn parse<T: AsRef<[u8]>>(packet: &SllPacket<T>) -> Result<SllRepr> {
        packet.check_len()?;
        let (addr, addr_len) = Self::from_addr(packet.addr());
        Ok(SllRepr {
            packet_type: packet.packet_type(),
            hatype: packet.hatype(),
            addr,
            addr_len,
            protocol: packet.protocol(),
            ifindex: 0,
        })
    }

    /// Reads a checked v2 header.
    pub fn parse_v2<T: AsRef<[u8]>>(packet: &Sll2Packet<T>) -> Result<SllRepr> {
        packet.check_len()?;
        let (addr, addr_len) = Self::from_addr(packet.addr());
        Ok(SllRepr {
            packet_type: packet.packet_type().into(),
            hatype: packet.hatype(),
            addr,
            addr_len,
            protocol: packet.protocol(),
            ifindex: packet.ifindex(),
        })
    }

    fn addr(&self) -> &[u8] {
        &self.addr[..usize::from(self.addr_len).min(MAX_ADDR_LEN)]
    }

    /// Writes a v1 header (16 bytes; the interface index is not stored).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut SllPacket<T>) {
        packet.set_packet_type(self.packet_type);
        packet.set_hatype(self.hatype);
        packet.set_addr(self.addr());
        packet.set_protocol(self.protocol);
    }

    /// Writes a v2 header (20 bytes; the packet type is truncated to 8 bits).
    pub fn emit_v2<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Sll2Packet<T>) {
        packet.set_protocol(self.protocol);
        packet.set_ifindex(self.ifindex);
        packet.set_hatype(self.hatype);
        packet.set_packet_type(self.packet_type as u8);
        packet.set_addr(self.addr());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_round_trip() {
        let repr = SllRepr::ethernet(OUTGOING, [2, 0, 0, 0, 0, 9], 0x86dd, 3);
        let mut v1 = [0xee; 17];
        repr.emit(&mut SllPacket::new_unchecked(&mut v1[..]));
        assert_eq!(&v1[..16], &[0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 9, 0, 0, 0x86, 0xdd]);
        let p = SllPacket::new_checked(&v1[..]).unwrap();
        assert_eq!(SllRepr::parse(&p).unwrap(), SllRepr { ifindex: 0, ..repr });
        assert_eq!((p.addr(), p.payload()), (&v1[6..12], &[0xee][..]));
        let mut v2 = [0xee; 20];
        repr.emit_v2(&mut Sll2Packet::new_unchecked(&mut v2[..]));
        assert_eq!(v2, [0x86, 0xdd, 0, 0, 0, 0, 0, 3, 0, 1, 4, 6, 2, 0, 0, 0, 0, 9, 0, 0]);
        let p = Sll2Packet::new_checked(&v2[..]).unwrap();
        assert_eq!(SllRepr::parse_v2(&p).unwrap(), repr);
        assert!(Sll2Packet::new_checked(&v2[..19]).is_err());
        assert!(SllPacket::new_checked(&v1[..15]).is_err());
    }
}
