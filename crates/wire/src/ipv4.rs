//! IPv4 headers (RFC 791) and their options.

use crate::bytes::{array, get16, need, options_area, set16, tlv, view, walk};
use crate::checksum;
use crate::{Error, Header, Result};

/// Bytes in a header without options.
pub const HEADER_LEN: usize = 20;
/// The longest header (IHL 15).
pub const MAX_HEADER_LEN: usize = 60;

/// Option type: end of option list.
pub const OPT_EOL: u8 = 0;
/// Option type: no operation.
pub const OPT_NOP: u8 = 1;

/// Field offsets.
pub mod field {
    use std::ops::Range;
    /// Version (high nibble) and header length in 32-bit words (low nibble).
    pub const VER_IHL: usize = 0;
    /// Type of service (DSCP and ECN).
    pub const TOS: usize = 1;
    /// Total length.
    pub const LENGTH: usize = 2;
    /// Identification.
    pub const IDENT: usize = 4;
    /// Flags (3 bits) and fragment offset (13 bits, in 8-byte units).
    pub const FLAGS_FRAG: usize = 6;
    /// Time to live.
    pub const TTL: usize = 8;
    /// Protocol.
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: usize = 10;
    /// Source address.
    pub const SRC: Range<usize> = 12..16;
    /// Destination address.
    pub const DST: Range<usize> = 16..20;
}

view! {
    /// An IPv4 header and what follows it.
    Ipv4Packet
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// The fixed header must fit, the header length be at least 20 and fit, the total length
    /// cover the header and fit.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Ipv4, data, HEADER_LEN)?;
        let hlen = self.header_len();
        if hlen < HEADER_LEN {
            return Err(Error::invalid(Header::Ipv4, field::VER_IHL, "ihl", (hlen / 4) as u32));
        }
        need(Header::Ipv4, data, hlen)?;
        let total = usize::from(self.total_len());
        if total < hlen {
            return Err(Error::invalid(Header::Ipv4, field::LENGTH, "total length", total as u32));
        }
        need(Header::Ipv4, data, total)
    }

    /// Version (4 for IPv4).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// Type of service byte.
    #[inline]
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::TOS]
    }

    /// Differentiated services code point (high 6 bits of the TOS byte).
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// Explicit congestion notification (low 2 bits of the TOS byte).
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.tos() & 3
    }

    /// Total length of header and payload.
    #[inline]
    pub fn total_len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Identification.
    #[inline]
    pub fn ident(&self) -> u16 {
        get16(self.buffer.as_ref(), field::IDENT)
    }

    /// The flags and fragment offset word.
    #[inline]
    pub fn flags_frag(&self) -> u16 {
        get16(self.buffer.as_ref(), field::FLAGS_FRAG)
    }

    /// Don't-fragment flag.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & 0x4000 != 0
    }

    /// More-fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & 0x2000 != 0
    }

    /// Fragment offset in 8-byte units.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        self.flags_frag() & 0x1fff
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Protocol of the payload.
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    /// Header checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> [u8; 4] {
        array(self.buffer.as_ref(), field::SRC.start)
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> [u8; 4] {
        array(self.buffer.as_ref(), field::DST.start)
    }

    /// Whether the header checksum is right (needs the whole header).
    pub fn verify_checksum(&self) -> bool {
        checksum::internet(&self.buffer.as_ref()[..self.header_len()]) == 0
    }

    /// The running sum of the pseudo-header for a transport checksum over `len` bytes.
    pub fn pseudo_header(&self, len: u32) -> u64 {
        checksum::pseudo_ipv4(&self.src_addr(), &self.dst_addr(), self.protocol(), len)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Ipv4Packet<&'a T> {
    /// The header, options included.
    #[inline]
    pub fn header(&self) -> &'a [u8] {
        &self.buffer.as_ref()[..self.header_len()]
    }

    /// The payload, as far as the total length says.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets the version.
    #[inline]
    pub fn set_version(&mut self, version: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (version << 4);
    }

    /// Sets the header length in bytes (a multiple of 4, at most 60).
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | ((len / 4) as u8 & 0x0f);
    }

    /// Sets the type of service byte.
    #[inline]
    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[field::TOS] = tos;
    }

    /// Sets the total length.
    #[inline]
    pub fn set_total_len(&mut self, len: u16) {
        set16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Sets the identification.
    #[inline]
    pub fn set_ident(&mut self, ident: u16) {
        set16(self.buffer.as_mut(), field::IDENT, ident);
    }

    /// Sets the flags and fragment offset word.
    #[inline]
    pub fn set_flags_frag(&mut self, word: u16) {
        set16(self.buffer.as_mut(), field::FLAGS_FRAG, word);
    }

    /// Sets the don't-fragment flag.
    #[inline]
    pub fn set_dont_frag(&mut self, on: bool) {
        self.set_flags_frag((self.flags_frag() & !0x4000) | (u16::from(on) << 14));
    }

    /// Sets the more-fragments flag.
    #[inline]
    pub fn set_more_frags(&mut self, on: bool) {
        self.set_flags_frag((self.flags_frag() & !0x2000) | (u16::from(on) << 13));
    }

    /// Sets the fragment offset (8-byte units, 13 bits).
    #[inline]
    pub fn set_frag_offset(&mut self, offset: u16) {
        self.set_flags_frag((self.flags_frag() & 0xe000) | (offset & 0x1fff));
    }

    /// Sets the time to live.
    #[inline]
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::TTL] = ttl;
    }

    /// Sets the protocol.
    #[inline]
    pub fn set_protocol(&mut self, protocol: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = protocol;
    }

    /// Sets the header checksum.
    #[inline]
    pub fn set_checksum(&mut self, checksum: u16) {
        set16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, addr: [u8; 4]) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr);
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, addr: [u8; 4]) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr);
    }

    /// Computes and stores the header checksum (needs the whole header).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let sum = checksum::internet(&self.buffer.as_ref()[..self.header_len()]);
        self.set_checksum(sum);
    }

    /// Sets the source address and updates the header checksum incrementally (RFC 1624).
    /// Returns the old address, for the transport checksum's pseudo-header.
    pub fn rewrite_src_addr(&mut self, addr: [u8; 4]) -> [u8; 4] {
        let old = self.src_addr();
        self.set_checksum(checksum::update_bytes(self.checksum(), &old, &addr));
        self.set_src_addr(addr);
        old
    }

    /// Sets the destination address and updates the header checksum incrementally. Returns
    /// the old address.
    pub fn rewrite_dst_addr(&mut self, addr: [u8; 4]) -> [u8; 4] {
        let old = self.dst_addr();
        self.set_checksum(checksum::update_bytes(self.checksum(), &old, &addr));
        self.set_dst_addr(addr);
        old
    }

    /// Sets the time to live and updates the header checksum incrementally.
    pub fn rewrite_ttl(&mut self, ttl: u8) {
        let old = get16(self.buffer.as_ref(), field::TTL);
        let new = (u16::from(ttl) << 8) | (old & 0xff);
        self.set_checksum(checksum::update16(self.checksum(), old, new));
        self.set_ttl(ttl);
    }

    /// The payload (as far as the total length says), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[start..end]
    }
}

/// One IPv4 option: its type byte and the bytes after its length byte (none for EOL and NOP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Option<'a> {
    /// The option type (copied flag, class and number).
    pub kind: u8,
    /// The option's data.
    pub data: &'a [u8],
}

walk! {
    /// The options of a header, one by one; an end-of-list option ends the walk, a length that
    /// is below 2 or runs past the options area is an error (and ends it).
    Ipv4Options => Ipv4Option<'a>, option_at
}

options_area!(Ipv4Packet, Ipv4Options);

fn option_at(data: &[u8], at: usize) -> Option<Result<(Ipv4Option<'_>, usize)>> {
    let option = tlv(data, at, Header::Ipv4Option, &[OPT_EOL, OPT_NOP], true)?;
    Some(option.map(|(kind, value, next)| {
        let next = if kind == OPT_EOL { data.len() } else { next };
        (Ipv4Option { kind, data: value }, next)
    }))
}

/// The fields of an IPv4 header. Lengths and the checksum are computed by [`Ipv4Repr::emit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Repr<'a> {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Protocol of the payload.
    pub protocol: u8,
    /// Time to live.
    pub ttl: u8,
    /// Type of service byte.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// More-fragments flag.
    pub more_frags: bool,
    /// Fragment offset in 8-byte units (13 bits).
    pub frag_offset: u16,
    /// Raw options; [`Ipv4Repr::emit`] pads them to a multiple of 4 with end-of-list bytes.
    pub options: &'a [u8],
    /// Payload length (the total length less the header).
    pub payload_len: usize,
}

impl<'a> Ipv4Repr<'a> {
    /// Reads a checked header of version 4. The checksum is not verified (see
    /// [`Ipv4Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Ipv4Packet<&'a T>) -> Result<Ipv4Repr<'a>> {
        packet.check_len()?;
        if packet.version() != 4 {
            return Err(Error::invalid(Header::Ipv4, 0, "version", packet.version().into()));
        }
        Ok(Ipv4Repr {
            src: packet.src_addr(),
            dst: packet.dst_addr(),
            protocol: packet.protocol(),
            ttl: packet.ttl(),
            tos: packet.tos(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            options: packet.options(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
        })
    }

    /// The header's length: 20 bytes and the options padded to 4 (at most 40 bytes of them).
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.options.len().min(MAX_HEADER_LEN - HEADER_LEN).div_ceil(4) * 4
    }

    /// Writes the header with its total length (clamped to 65535) and checksum. The buffer
    /// must hold [`Ipv4Repr::buffer_len`] bytes; options past 40 bytes are dropped.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv4Packet<T>) {
        let hlen = self.buffer_len();
        packet.as_bytes_mut()[0] = 0x40;
        packet.set_header_len(hlen);
        packet.set_tos(self.tos);
        packet.set_total_len((hlen + self.payload_len).min(0xffff) as u16);
        packet.set_ident(self.ident);
        let flags = (u16::from(self.dont_frag) << 14) | (u16::from(self.more_frags) << 13);
        packet.set_flags_frag(flags | (self.frag_offset & 0x1fff));
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src_addr(self.src);
        packet.set_dst_addr(self.dst);
        let opts = &self.options[..self.options.len().min(hlen - HEADER_LEN)];
        let area = packet.options_mut();
        area[..opts.len()].copy_from_slice(opts);
        area[opts.len()..].fill(OPT_EOL);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header with a record-route-sized NOP/EOL option area, then 4 payload bytes.
    static PACKET: [u8; 28] = [
        0x46, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 192, 0, 2, 1, 198,
        51, 100, 7, 0x01, 0x01, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd,
    ];

    fn packet() -> [u8; 28] {
        let mut p = PACKET;
        Ipv4Packet::new_unchecked(&mut p[..]).fill_checksum();
        p
    }

    #[test]
    fn deconstruct() {
        let bytes = packet();
        let p = Ipv4Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.version(), p.header_len(), p.total_len()), (4, 24, 28));
        assert_eq!(
            (p.ident(), p.dont_frag(), p.more_frags(), p.frag_offset()),
            (0x1234, true, false, 0)
        );
        assert_eq!((p.ttl(), p.protocol()), (64, 17));
        assert_eq!((p.src_addr(), p.dst_addr()), ([192, 0, 2, 1], [198, 51, 100, 7]));
        assert!(p.verify_checksum());
        assert_eq!(p.options(), &[1, 1, 0, 0]);
        assert_eq!(p.payload(), &[0xaa, 0xbb, 0xcc, 0xdd]);
        let kinds: Vec<u8> = p.option_iter().map(|o| o.unwrap().kind).collect();
        assert_eq!(kinds, [1, 1, 0]);
    }

    #[test]
    fn checked_constructor_names_the_problem() {
        let bytes = packet();
        let e = Ipv4Packet::new_checked(&bytes[..19]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Truncated { needed: 20, available: 19 });
        let mut b = bytes;
        b[0] = 0x44;
        let e = Ipv4Packet::new_checked(&b[..]).unwrap_err();
        assert_eq!((e.offset, e.kind), (0, crate::ErrorKind::Invalid { field: "ihl", value: 4 }));
        let mut b = bytes;
        b[3] = 22;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err().offset, 2);
        assert!(Ipv4Packet::new_checked(&bytes[..27]).is_err(), "total length past the buffer");
        let mut b = bytes;
        b[0] = 0x66;
        assert!(Ipv4Repr::parse(&Ipv4Packet::new_unchecked(&b[..])).is_err(), "version 6");
    }

    #[test]
    fn options_walk_stops_at_bad_lengths() {
        let walk = |o: &[u8]| -> Vec<Result<(u8, usize)>> {
            Ipv4Options::new(o).map(|r| r.map(|o| (o.kind, o.data.len()))).collect()
        };
        assert_eq!(walk(&[7, 7, 4, 1, 2, 3, 4, 1]), [Ok((7, 5)), Ok((1, 0))]);
        assert!(walk(&[7, 1, 0]).pop().unwrap().is_err());
        assert!(walk(&[7, 9, 0]).pop().unwrap().is_err());
        assert!(walk(&[1, 68]).pop().unwrap().is_err());
        assert_eq!(walk(&[0, 7, 7]), [Ok((0, 0))]);
    }

    #[test]
    fn rewrites_keep_the_checksum_right() {
        let mut bytes = packet();
        let mut p = Ipv4Packet::new_unchecked(&mut bytes[..]);
        assert_eq!(p.rewrite_src_addr([10, 1, 2, 3]), [192, 0, 2, 1]);
        p.rewrite_dst_addr([255, 255, 255, 255]);
        p.rewrite_ttl(0);
        assert!(p.verify_checksum());
        assert_eq!(p.ttl(), 0);
    }

    #[test]
    fn repr_round_trips() {
        let bytes = packet();
        let repr = Ipv4Repr::parse(&Ipv4Packet::new_unchecked(&bytes[..])).unwrap();
        assert_eq!(repr.payload_len, 4);
        let mut out = [0xee; 28];
        let mut p = Ipv4Packet::new_unchecked(&mut out[..]);
        repr.emit(&mut p);
        p.payload_mut().copy_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(out, bytes);
    }
}
