//! IPv6 extension headers (RFC 8200 §4, AH from RFC 4302) and the walk over a chain of them.
//!
//! Every extension header starts with the next header and a length byte, but the length's unit
//! differs: 8 octets beyond the first 8 (hop-by-hop, routing, destination options), 4 octets
//! beyond the first 8 (AH), or none (fragment: always 8 bytes). [`ExtHeaders`] walks a chain
//! and stops at the first protocol that is not an extension header; it gives up after
//! [`MAX_EXT_HEADERS`] headers, so a hostile chain costs a bounded amount of work.

use crate::bytes::{get16, get32, need, set16, set32, tlv, walk};
use crate::ipproto;
use crate::{Error, Header, Result};

/// The longest chain [`ExtHeaders`] walks.
pub const MAX_EXT_HEADERS: usize = 16;
/// Bytes in a fragment header.
pub const FRAGMENT_LEN: usize = 8;

/// Option type: one byte of padding (hop-by-hop and destination options).
pub const OPT_PAD1: u8 = 0;
/// Option type: `n` bytes of padding.
pub const OPT_PADN: u8 = 1;
/// Option type: router alert (RFC 2711).
pub const OPT_ROUTER_ALERT: u8 = 5;
/// Option type: jumbo payload (RFC 2675).
pub const OPT_JUMBO: u8 = 0xc2;

/// Field offsets (all extension headers start with the first two).
pub mod field {
    /// Next header.
    pub const NEXT_HEADER: usize = 0;
    /// Length (in the unit of the header's kind).
    pub const LENGTH: usize = 1;
    /// Routing: routing type.
    pub const ROUTING_TYPE: usize = 2;
    /// Routing: segments left.
    pub const SEGMENTS_LEFT: usize = 3;
    /// Fragment: offset (13 bits, 8-byte units), 2 reserved bits, more-fragments flag.
    pub const FRAG_OFFSET: usize = 2;
    /// Fragment: identification.
    pub const FRAG_IDENT: usize = 4;
    /// AH: security parameters index.
    pub const AH_SPI: usize = 4;
    /// AH: sequence number.
    pub const AH_SEQ: usize = 8;
}

/// Whether `next_header` names an extension header this module walks: hop-by-hop, routing,
/// fragment, destination options or AH.
#[inline]
pub fn is_ext_header(next_header: u8) -> bool {
    matches!(
        next_header,
        ipproto::HOPOPTS | ipproto::ROUTING | ipproto::FRAGMENT | ipproto::DSTOPTS | ipproto::AH
    )
}

/// The length in bytes of an extension header of kind `kind` whose length byte is `len_byte`.
#[inline]
pub fn header_len(kind: u8, len_byte: u8) -> usize {
    match kind {
        ipproto::FRAGMENT => FRAGMENT_LEN,
        ipproto::AH => (usize::from(len_byte) + 2) * 4,
        _ => (usize::from(len_byte) + 1) * 8,
    }
}

/// The bytes of an AH header's fixed fields (next header, length, reserved, SPI, sequence).
pub const AH_FIXED_LEN: usize = 12;

/// One extension header of a known kind (its protocol number, from the header before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6ExtHeader<T: AsRef<[u8]>> {
    kind: u8,
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6ExtHeader<T> {
    /// Wraps `buffer` (starting at the header) without checking it; accessors panic past the
    /// buffer's end.
    #[inline]
    pub const fn new_unchecked(kind: u8, buffer: T) -> Self {
        Ipv6ExtHeader { kind, buffer }
    }

    /// Wraps `buffer` after [`Ipv6ExtHeader::check_len`].
    #[inline]
    pub fn new_checked(kind: u8, buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(kind, buffer);
        h.check_len()?;
        Ok(h)
    }

    /// The first two bytes, then the whole header as its length says, must fit, and at least
    /// the fixed fields of its kind (an AH header whose length byte says fewer than its 12
    /// bytes of fixed fields is cut short where they end).
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need(Header::Ipv6Ext, data, 2)?;
        let fixed = if self.kind == ipproto::AH { AH_FIXED_LEN } else { 0 };
        need(Header::Ipv6Ext, data, self.header_len().max(fixed))
    }

    /// The buffer, given back.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The header's kind (its protocol number).
    #[inline]
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// Next header.
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_HEADER]
    }

    /// The raw length byte.
    #[inline]
    pub fn len_field(&self) -> u8 {
        self.buffer.as_ref()[field::LENGTH]
    }

    /// The header's length in bytes.
    #[inline]
    pub fn header_len(&self) -> usize {
        header_len(self.kind, self.len_field())
    }

    /// Routing: the routing type.
    #[inline]
    pub fn routing_type(&self) -> u8 {
        self.buffer.as_ref()[field::ROUTING_TYPE]
    }

    /// Routing: segments left.
    #[inline]
    pub fn segments_left(&self) -> u8 {
        self.buffer.as_ref()[field::SEGMENTS_LEFT]
    }

    /// Fragment: the offset and flags word.
    #[inline]
    pub fn frag_word(&self) -> u16 {
        get16(self.buffer.as_ref(), field::FRAG_OFFSET)
    }

    /// Fragment: the offset in 8-byte units.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        self.frag_word() >> 3
    }

    /// Fragment: the more-fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.frag_word() & 1 != 0
    }

    /// Fragment: identification.
    #[inline]
    pub fn frag_ident(&self) -> u32 {
        get32(self.buffer.as_ref(), field::FRAG_IDENT)
    }

    /// AH: security parameters index.
    #[inline]
    pub fn ah_spi(&self) -> u32 {
        get32(self.buffer.as_ref(), field::AH_SPI)
    }

    /// AH: sequence number.
    #[inline]
    pub fn ah_seq(&self) -> u32 {
        get32(self.buffer.as_ref(), field::AH_SEQ)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Ipv6ExtHeader<&'a T> {
    /// The whole header.
    #[inline]
    pub fn header(&self) -> &'a [u8] {
        &self.buffer.as_ref()[..self.header_len()]
    }

    /// The header after its first two bytes (the options of hop-by-hop and destination
    /// options headers; routing type, segments left and data of a routing header).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        &self.buffer.as_ref()[2..self.header_len()]
    }

    /// The options of a hop-by-hop or destination options header, one by one.
    pub fn option_iter(&self) -> Ipv6Options<'a> {
        Ipv6Options::new(self.data())
    }

    /// What follows the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6ExtHeader<T> {
    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, next: u8) {
        self.buffer.as_mut()[field::NEXT_HEADER] = next;
    }

    /// Sets the raw length byte.
    #[inline]
    pub fn set_len_field(&mut self, len: u8) {
        self.buffer.as_mut()[field::LENGTH] = len;
    }

    /// Routing: sets the routing type.
    #[inline]
    pub fn set_routing_type(&mut self, t: u8) {
        self.buffer.as_mut()[field::ROUTING_TYPE] = t;
    }

    /// Routing: sets segments left.
    #[inline]
    pub fn set_segments_left(&mut self, n: u8) {
        self.buffer.as_mut()[field::SEGMENTS_LEFT] = n;
    }

    /// Fragment: sets the offset (8-byte units) and the more-fragments flag.
    #[inline]
    pub fn set_frag(&mut self, offset: u16, more: bool) {
        set16(self.buffer.as_mut(), field::FRAG_OFFSET, (offset << 3) | u16::from(more));
    }

    /// Fragment: sets the identification.
    #[inline]
    pub fn set_frag_ident(&mut self, ident: u32) {
        set32(self.buffer.as_mut(), field::FRAG_IDENT, ident);
    }

    /// The header after its first two bytes, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let end = self.header_len();
        &mut self.buffer.as_mut()[2..end]
    }
}

/// One option of a hop-by-hop or destination options header (padding included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6Option<'a> {
    /// Option type.
    pub kind: u8,
    /// Option data (none for Pad1).
    pub data: &'a [u8],
}

walk! {
    /// The options of a hop-by-hop or destination options header; a length past the header is
    /// an error (and ends the walk).
    Ipv6Options => Ipv6Option<'a>, option_at
}

fn option_at(data: &[u8], at: usize) -> Option<Result<(Ipv6Option<'_>, usize)>> {
    let option = tlv(data, at, Header::Ipv6Ext, &[OPT_PAD1], false)?;
    Some(option.map(|(kind, value, next)| (Ipv6Option { kind, data: value }, next)))
}

/// A walk over a chain of extension headers: each header in turn, then
/// [`ExtHeaders::upper_layer`] says what follows. A header that does not fit, or more than
/// [`MAX_EXT_HEADERS`] of them, is an error that ends the walk.
#[derive(Clone, Debug)]
pub struct ExtHeaders<'a> {
    next: u8,
    data: &'a [u8],
    offset: usize,
    count: usize,
    failed: bool,
}

impl<'a> ExtHeaders<'a> {
    /// A walk over `data` (what follows the fixed header) whose first header is `next_header`.
    pub fn new(next_header: u8, data: &'a [u8]) -> ExtHeaders<'a> {
        ExtHeaders { next: next_header, data, offset: 0, count: 0, failed: false }
    }

    /// The protocol after the headers walked so far and its offset in the data: after a
    /// complete walk, the upper-layer protocol and where it starts.
    pub fn upper_layer(&self) -> (u8, usize) {
        (self.next, self.offset)
    }
}

impl<'a> Iterator for ExtHeaders<'a> {
    type Item = Result<Ipv6ExtHeader<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || !is_ext_header(self.next) {
            return None;
        }
        if self.count == MAX_EXT_HEADERS {
            self.failed = true;
            return Some(Err(Error::too_many(Header::Ipv6Ext, self.offset, MAX_EXT_HEADERS)));
        }
        let rest = &self.data[self.offset..];
        match Ipv6ExtHeader::new_checked(self.next, rest) {
            Ok(h) => {
                self.next = h.next_header();
                self.offset += h.header_len();
                self.count += 1;
                Some(Ok(h))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(self.offset)))
            }
        }
    }
}

/// A hop-by-hop, destination options or routing header: the next header and the bytes after
/// the length byte (options; or routing type, segments left and the routing data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6ExtRepr<'a> {
    /// Next header.
    pub next_header: u8,
    /// The header after its first two bytes; [`Ipv6ExtRepr::emit`] pads it with zeros (Pad1
    /// options) to a multiple of 8 bytes with the first two.
    pub data: &'a [u8],
}

impl<'a> Ipv6ExtRepr<'a> {
    /// Reads a checked hop-by-hop, destination options or routing header.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(h: &Ipv6ExtHeader<&'a T>) -> Result<Ipv6ExtRepr<'a>> {
        h.check_len()?;
        if matches!(h.kind(), ipproto::FRAGMENT | ipproto::AH) {
            return Err(Error::invalid(Header::Ipv6Ext, 0, "kind", h.kind().into()));
        }
        Ok(Ipv6ExtRepr { next_header: h.next_header(), data: h.data() })
    }

    /// The header's length: the data and two bytes, rounded up to 8 (at most 2048).
    pub fn buffer_len(&self) -> usize {
        (self.data.len().min(2046) + 2).div_ceil(8) * 8
    }

    /// Writes the header (the buffer must hold [`Ipv6ExtRepr::buffer_len`] bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv6ExtHeader<T>) {
        let len = self.buffer_len();
        h.set_next_header(self.next_header);
        h.set_len_field((len / 8 - 1) as u8);
        let data = &self.data[..self.data.len().min(len - 2)];
        let area = h.data_mut();
        area[..data.len()].copy_from_slice(data);
        area[data.len()..].fill(0);
    }
}

/// A fragment header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6FragmentRepr {
    /// Next header.
    pub next_header: u8,
    /// Offset in 8-byte units (13 bits).
    pub frag_offset: u16,
    /// More-fragments flag.
    pub more_frags: bool,
    /// Identification.
    pub ident: u32,
}

impl Ipv6FragmentRepr {
    /// Reads a checked fragment header.
    pub fn parse<T: AsRef<[u8]>>(h: &Ipv6ExtHeader<T>) -> Result<Ipv6FragmentRepr> {
        h.check_len()?;
        if h.kind() != ipproto::FRAGMENT {
            return Err(Error::invalid(Header::Ipv6Ext, 0, "kind", h.kind().into()));
        }
        Ok(Ipv6FragmentRepr {
            next_header: h.next_header(),
            frag_offset: h.frag_offset(),
            more_frags: h.more_frags(),
            ident: h.frag_ident(),
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        FRAGMENT_LEN
    }

    /// Writes the header, reserved fields zero (the buffer must hold 8 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv6ExtHeader<T>) {
        h.set_next_header(self.next_header);
        h.set_len_field(0);
        h.set_frag(self.frag_offset, self.more_frags);
        h.set_frag_ident(self.ident);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hop-by-hop (router alert) → fragment → destination options → UDP.
    fn chain() -> Vec<u8> {
        let mut c = vec![44, 0, 5, 2, 0, 0, 1, 0];
        c.extend_from_slice(&[60, 0, 0x00, 0x09, 0, 0, 0x12, 0x34]);
        c.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]);
        c.extend_from_slice(&[0xaa; 8]);
        c
    }

    #[test]
    fn walk_finds_the_upper_layer() {
        let c = chain();
        let mut walk = ExtHeaders::new(ipproto::HOPOPTS, &c);
        let kinds: Vec<u8> = walk.by_ref().map(|h| h.unwrap().kind()).collect();
        assert_eq!(kinds, [0, 44, 60]);
        assert_eq!(walk.upper_layer(), (17, 24));
        let frag = Ipv6ExtHeader::new_checked(44, &c[8..]).unwrap();
        assert_eq!((frag.frag_offset(), frag.more_frags(), frag.frag_ident()), (1, true, 0x1234));
        let hbh = Ipv6ExtHeader::new_checked(0, &c[..]).unwrap();
        let opts: Vec<_> = hbh.option_iter().map(|o| o.unwrap()).collect();
        assert_eq!(opts[0], Ipv6Option { kind: 5, data: &[0, 0] });
        assert_eq!(opts[1], Ipv6Option { kind: 1, data: &[] });
    }

    #[test]
    fn walk_is_bounded_and_checked() {
        // Destination options headers naming each other, forever.
        let looped = [60u8, 0, 1, 4, 0, 0, 0, 0].repeat(100);
        let results: Vec<_> = ExtHeaders::new(60, &looped).collect();
        assert_eq!(results.len(), MAX_EXT_HEADERS + 1);
        let e = results.last().unwrap().unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::TooMany { limit: MAX_EXT_HEADERS });
        // A routing header longer than the data.
        let short = [17u8, 3, 0, 0, 0, 0, 0, 0];
        let e = ExtHeaders::new(43, &short).next().unwrap().unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Truncated { needed: 32, available: 8 });
        // AH counts in 4-byte units.
        let ah = [6u8, 4, 0, 0, 1, 2, 3, 4, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let h = ExtHeaders::new(51, &ah).next().unwrap().unwrap();
        assert_eq!((h.header_len(), h.ah_spi(), h.ah_seq()), (24, 0x0102_0304, 9));
    }

    #[test]
    fn reprs_round_trip() {
        let c = chain();
        let hbh = Ipv6ExtRepr::parse(&Ipv6ExtHeader::new_unchecked(0, &c[..])).unwrap();
        let frag = Ipv6FragmentRepr::parse(&Ipv6ExtHeader::new_unchecked(44, &c[8..])).unwrap();
        let mut out = vec![0xee; 16];
        hbh.emit(&mut Ipv6ExtHeader::new_unchecked(0, &mut out[..8]));
        frag.emit(&mut Ipv6ExtHeader::new_unchecked(44, &mut out[8..]));
        assert_eq!(out, c[..16]);
        assert!(Ipv6ExtRepr::parse(&Ipv6ExtHeader::new_unchecked(44, &c[8..])).is_err());
        let short = Ipv6ExtRepr { next_header: 59, data: &[1, 2] };
        assert_eq!(short.buffer_len(), 8);
    }
}
