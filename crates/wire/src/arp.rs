//! ARP (RFC 826) and RARP packets.
//!
//! The view reads any hardware and protocol address lengths (the header says them); the
//! [`ArpRepr`] is the one case that matters on a LAN, Ethernet addresses and IPv4.

use crate::bytes::{get16, need, set16, view};
use crate::ethernet::Mac;
use crate::{Error, Header, Result};

/// Bytes in the fixed part (before the addresses).
pub const HEADER_LEN: usize = 8;
/// Bytes in an Ethernet/IPv4 packet.
pub const ETHERNET_IPV4_LEN: usize = 28;

/// Hardware type: Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;
/// Operation: request.
pub const OP_REQUEST: u16 = 1;
/// Operation: reply.
pub const OP_REPLY: u16 = 2;

/// Field offsets.
pub mod field {
    /// Hardware type.
    pub const HTYPE: usize = 0;
    /// Protocol type (an EtherType).
    pub const PTYPE: usize = 2;
    /// Hardware address length.
    pub const HLEN: usize = 4;
    /// Protocol address length.
    pub const PLEN: usize = 5;
    /// Operation.
    pub const OP: usize = 6;
    /// The first address (sender hardware).
    pub const ADDRS: usize = 8;
}

view! {
    /// An ARP packet.
    ArpPacket
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// The fixed part and the four addresses its lengths announce must fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Arp, data, HEADER_LEN)?;
        need(Header::Arp, data, self.total_len())
    }

    /// Hardware type.
    #[inline]
    pub fn htype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::HTYPE)
    }

    /// Protocol type.
    #[inline]
    pub fn ptype(&self) -> u16 {
        get16(self.buffer.as_ref(), field::PTYPE)
    }

    /// Hardware address length.
    #[inline]
    pub fn hlen(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    /// Protocol address length.
    #[inline]
    pub fn plen(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    /// Operation.
    #[inline]
    pub fn op(&self) -> u16 {
        get16(self.buffer.as_ref(), field::OP)
    }

    /// The length of the fixed part and the four addresses.
    #[inline]
    pub fn total_len(&self) -> usize {
        HEADER_LEN + 2 * usize::from(self.hlen()) + 2 * usize::from(self.plen())
    }

    /// Where each address starts: sender hardware, sender protocol, target hardware, target
    /// protocol.
    #[inline]
    pub fn addr_offsets(&self) -> [usize; 4] {
        let (h, p) = (usize::from(self.hlen()), usize::from(self.plen()));
        let a = field::ADDRS;
        [a, a + h, a + h + p, a + 2 * h + p]
    }

    fn addr(&self, which: usize, len: u8) -> &[u8] {
        let at = self.addr_offsets()[which];
        &self.buffer.as_ref()[at..at + usize::from(len)]
    }

    /// Sender hardware address.
    pub fn sender_hw_addr(&self) -> &[u8] {
        self.addr(0, self.hlen())
    }

    /// Sender protocol address.
    pub fn sender_proto_addr(&self) -> &[u8] {
        self.addr(1, self.plen())
    }

    /// Target hardware address.
    pub fn target_hw_addr(&self) -> &[u8] {
        self.addr(2, self.hlen())
    }

    /// Target protocol address.
    pub fn target_proto_addr(&self) -> &[u8] {
        self.addr(3, self.plen())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Sets the hardware type.
    #[inline]
    pub fn set_htype(&mut self, v: u16) {
        set16(self.buffer.as_mut(), field::HTYPE, v);
    }

    /// Sets the protocol type.
    #[inline]
    pub fn set_ptype(&mut self, v: u16) {
        set16(self.buffer.as_mut(), field::PTYPE, v);
    }

    /// Sets the hardware address length.
    #[inline]
    pub fn set_hlen(&mut self, v: u8) {
        self.buffer.as_mut()[field::HLEN] = v;
    }

    /// Sets the protocol address length.
    #[inline]
    pub fn set_plen(&mut self, v: u8) {
        self.buffer.as_mut()[field::PLEN] = v;
    }

    /// Sets the operation.
    #[inline]
    pub fn set_op(&mut self, v: u16) {
        set16(self.buffer.as_mut(), field::OP, v);
    }

    fn set_addr(&mut self, which: usize, addr: &[u8]) {
        let at = self.addr_offsets()[which];
        self.buffer.as_mut()[at..at + addr.len()].copy_from_slice(addr);
    }

    /// Sets the sender hardware address (`hlen` bytes).
    pub fn set_sender_hw_addr(&mut self, addr: &[u8]) {
        self.set_addr(0, addr);
    }

    /// Sets the sender protocol address (`plen` bytes).
    pub fn set_sender_proto_addr(&mut self, addr: &[u8]) {
        self.set_addr(1, addr);
    }

    /// Sets the target hardware address (`hlen` bytes).
    pub fn set_target_hw_addr(&mut self, addr: &[u8]) {
        self.set_addr(2, addr);
    }

    /// Sets the target protocol address (`plen` bytes).
    pub fn set_target_proto_addr(&mut self, addr: &[u8]) {
        self.set_addr(3, addr);
    }
}

/// An ARP packet for IPv4 over Ethernet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArpRepr {
    /// Operation ([`OP_REQUEST`], [`OP_REPLY`]…).
    pub op: u16,
    /// Sender MAC.
    pub sender_hw: Mac,
    /// Sender IPv4 address.
    pub sender_ip: [u8; 4],
    /// Target MAC.
    pub target_hw: Mac,
    /// Target IPv4 address.
    pub target_ip: [u8; 4],
}

impl ArpRepr {
    /// Reads an Ethernet/IPv4 packet; other hardware or protocol types are errors.
    pub fn parse<T: AsRef<[u8]>>(packet: &ArpPacket<T>) -> Result<ArpRepr> {
        packet.check_len()?;
        if packet.htype() != HTYPE_ETHERNET {
            return Err(Error::invalid(Header::Arp, field::HTYPE, "htype", packet.htype().into()));
        }
        if packet.ptype() != crate::ethertype::IPV4 {
            return Err(Error::invalid(Header::Arp, field::PTYPE, "ptype", packet.ptype().into()));
        }
        if packet.hlen() != 6 || packet.plen() != 4 {
            return Err(Error::invalid(Header::Arp, field::HLEN, "hlen", packet.hlen().into()));
        }
        let mac = |s: &[u8]| -> Mac { s.try_into().unwrap_or_default() };
        let ip = |s: &[u8]| -> [u8; 4] { s.try_into().unwrap_or_default() };
        Ok(ArpRepr {
            op: packet.op(),
            sender_hw: mac(packet.sender_hw_addr()),
            sender_ip: ip(packet.sender_proto_addr()),
            target_hw: mac(packet.target_hw_addr()),
            target_ip: ip(packet.target_proto_addr()),
        })
    }

    /// The packet's length.
    pub const fn buffer_len(&self) -> usize {
        ETHERNET_IPV4_LEN
    }

    /// Writes the packet (the buffer must hold [`ETHERNET_IPV4_LEN`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut ArpPacket<T>) {
        packet.set_htype(HTYPE_ETHERNET);
        packet.set_ptype(crate::ethertype::IPV4);
        packet.set_hlen(6);
        packet.set_plen(4);
        packet.set_op(self.op);
        packet.set_sender_hw_addr(&self.sender_hw);
        packet.set_sender_proto_addr(&self.sender_ip);
        packet.set_target_hw_addr(&self.target_hw);
        packet.set_target_proto_addr(&self.target_ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static PACKET: [u8; 28] =
        [0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 192, 0, 2, 1, 0, 0, 0, 0, 0, 0, 192, 0, 2, 2];

    #[test]
    fn deconstruct() {
        let p = ArpPacket::new_checked(&PACKET[..]).unwrap();
        assert_eq!((p.htype(), p.ptype(), p.hlen(), p.plen(), p.op()), (1, 0x800, 6, 4, 1));
        assert_eq!(p.sender_proto_addr(), &[192, 0, 2, 1]);
        assert_eq!(p.target_proto_addr(), &[192, 0, 2, 2]);
        assert!(ArpPacket::new_checked(&PACKET[..27]).is_err());
        let mut odd = PACKET;
        odd[4] = 200; // hardware addresses longer than the buffer
        assert!(ArpPacket::new_checked(&odd[..]).is_err());
        assert!(ArpRepr::parse(&ArpPacket::new_unchecked(&odd[..])).is_err());
    }

    #[test]
    fn construct() {
        let repr = ArpRepr::parse(&ArpPacket::new_unchecked(&PACKET[..])).unwrap();
        let mut bytes = [0xee; 28];
        repr.emit(&mut ArpPacket::new_unchecked(&mut bytes[..]));
        assert_eq!(bytes, PACKET);
    }
}
