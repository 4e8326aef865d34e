//! SCTP (RFC 9260): the common header, its CRC32c, and the chunks after it.

use crate::bytes::{get16, get32, need, need_length, ports, set16, set32, view};
use crate::checksum;
use crate::{Header, Result};

/// Bytes in the common header.
pub const HEADER_LEN: usize = 12;
/// Bytes in a chunk header (type, flags, length).
pub const CHUNK_HEADER_LEN: usize = 4;

/// Chunk type: payload data.
pub const CHUNK_DATA: u8 = 0;
/// Chunk type: association initiation.
pub const CHUNK_INIT: u8 = 1;
/// Chunk type: initiation acknowledgement.
pub const CHUNK_INIT_ACK: u8 = 2;
/// Chunk type: selective acknowledgement.
pub const CHUNK_SACK: u8 = 3;
/// Chunk type: state cookie echo.
pub const CHUNK_COOKIE_ECHO: u8 = 10;
/// Chunk type: cookie acknowledgement.
pub const CHUNK_COOKIE_ACK: u8 = 11;

/// Field offsets.
pub mod field {
    pub use crate::ports::{DST_PORT, SRC_PORT};
    /// Verification tag.
    pub const VTAG: usize = 4;
    /// CRC32c, stored least significant byte first.
    pub const CHECKSUM: usize = 8;
    /// Chunk: type.
    pub const CHUNK_TYPE: usize = 0;
    /// Chunk: flags.
    pub const CHUNK_FLAGS: usize = 1;
    /// Chunk: length (header and value, not the padding).
    pub const CHUNK_LENGTH: usize = 2;
}

view! {
    /// An SCTP common header and its chunks (the view's buffer is the whole packet: the CRC
    /// covers it).
    SctpPacket
}

ports!(SctpPacket);

impl<T: AsRef<[u8]>> SctpPacket<T> {
    /// The common header must fit (chunks are checked as they are walked).
    pub fn check_len(&self) -> Result<()> {
        need(Header::Sctp, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Verification tag.
    #[inline]
    pub fn verification_tag(&self) -> u32 {
        get32(self.buffer.as_ref(), field::VTAG)
    }

    /// The CRC32c as a number (the field stores it least significant byte first).
    #[inline]
    pub fn checksum(&self) -> u32 {
        let d = self.buffer.as_ref();
        let c = field::CHECKSUM;
        u32::from_le_bytes([d[c], d[c + 1], d[c + 2], d[c + 3]])
    }

    /// The checksum field as its four bytes read big-endian (as tcpdump and the JSON output
    /// show it).
    #[inline]
    pub fn checksum_field(&self) -> u32 {
        get32(self.buffer.as_ref(), field::CHECKSUM)
    }

    fn crc(&self) -> u32 {
        let d = self.buffer.as_ref();
        let head = checksum::crc32c_update(0, &d[..field::CHECKSUM]);
        let zeroed = checksum::crc32c_update(head, &[0; 4]);
        checksum::crc32c_update(zeroed, &d[HEADER_LEN..])
    }

    /// Whether the CRC32c over the whole buffer is right.
    pub fn verify_checksum(&self) -> bool {
        self.crc() == self.checksum()
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> SctpPacket<&'a T> {
    /// The bytes after the common header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// The chunks, one by one.
    pub fn chunks(&self) -> SctpChunks<'a> {
        SctpChunks { data: self.payload(), at: 0 }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SctpPacket<T> {
    /// Sets the verification tag.
    #[inline]
    pub fn set_verification_tag(&mut self, tag: u32) {
        set32(self.buffer.as_mut(), field::VTAG, tag);
    }

    /// Sets the CRC32c (stored least significant byte first).
    #[inline]
    pub fn set_checksum(&mut self, crc: u32) {
        let c = field::CHECKSUM;
        self.buffer.as_mut()[c..c + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// Computes and stores the CRC32c over the whole buffer.
    pub fn fill_checksum(&mut self) {
        let crc = self.crc();
        self.set_checksum(crc);
    }

    /// The bytes after the common header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

view! {
    /// One chunk: type, flags, length and value (the buffer starts at the chunk).
    SctpChunk
}

impl<T: AsRef<[u8]>> SctpChunk<T> {
    /// The chunk header must fit, its length be at least 4 and fit.
    pub fn check_len(&self) -> Result<()> {
        let (h, at) = (Header::SctpChunk, field::CHUNK_LENGTH);
        let length = |d: &[u8]| usize::from(get16(d, at));
        need_length(h, self.buffer.as_ref(), CHUNK_HEADER_LEN, at, "length", length)
    }

    /// Chunk type.
    #[inline]
    pub fn chunk_type(&self) -> u8 {
        self.buffer.as_ref()[field::CHUNK_TYPE]
    }

    /// Chunk flags.
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::CHUNK_FLAGS]
    }

    /// Chunk length (header and value, without padding).
    #[inline]
    pub fn len(&self) -> u16 {
        get16(self.buffer.as_ref(), field::CHUNK_LENGTH)
    }

    /// Whether the chunk has no value.
    #[inline]
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= CHUNK_HEADER_LEN
    }

    /// The chunk's length with its padding to 4 bytes.
    #[inline]
    pub fn padded_len(&self) -> usize {
        (usize::from(self.len()) + 3) & !3
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> SctpChunk<&'a T> {
    /// The chunk's value.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        &self.buffer.as_ref()[CHUNK_HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SctpChunk<T> {
    /// Sets the chunk type.
    #[inline]
    pub fn set_chunk_type(&mut self, t: u8) {
        self.buffer.as_mut()[field::CHUNK_TYPE] = t;
    }

    /// Sets the chunk flags.
    #[inline]
    pub fn set_flags(&mut self, flags: u8) {
        self.buffer.as_mut()[field::CHUNK_FLAGS] = flags;
    }

    /// Sets the chunk length.
    #[inline]
    pub fn set_len(&mut self, len: u16) {
        set16(self.buffer.as_mut(), field::CHUNK_LENGTH, len);
    }

    /// The chunk's value, writable.
    #[inline]
    pub fn value_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[CHUNK_HEADER_LEN..end]
    }
}

/// The chunks of a packet, one by one. A chunk that does not fit, or claims less than its own
/// header, is an error (and ends the walk); the last chunk's padding may be missing.
#[derive(Clone, Debug)]
pub struct SctpChunks<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Iterator for SctpChunks<'a> {
    type Item = Result<SctpChunk<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.data.get(self.at..).filter(|r| !r.is_empty())?;
        match SctpChunk::new_checked(rest) {
            Ok(chunk) => {
                self.at += chunk.padded_len();
                Some(Ok(chunk))
            }
            Err(e) => {
                let at = self.at;
                self.at = self.data.len();
                Some(Err(e.shifted(HEADER_LEN + at)))
            }
        }
    }
}

/// The fields of an SCTP common header; the CRC32c is filled by
/// [`SctpPacket::fill_checksum`] once the chunks are in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SctpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Verification tag.
    pub verification_tag: u32,
}

impl SctpRepr {
    /// Reads a checked common header (the CRC is not verified).
    pub fn parse<T: AsRef<[u8]>>(packet: &SctpPacket<T>) -> Result<SctpRepr> {
        packet.check_len()?;
        Ok(SctpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            verification_tag: packet.verification_tag(),
        })
    }

    /// The header's length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header with a zero CRC.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut SctpPacket<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_verification_tag(self.verification_tag);
        packet.set_checksum(0);
    }
}

/// One chunk: type, flags and value (the length and padding follow from the value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SctpChunkRepr<'a> {
    /// Chunk type.
    pub chunk_type: u8,
    /// Chunk flags.
    pub flags: u8,
    /// The value.
    pub value: &'a [u8],
}

impl<'a> SctpChunkRepr<'a> {
    /// Reads a checked chunk.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(chunk: &SctpChunk<&'a T>) -> Result<SctpChunkRepr<'a>> {
        chunk.check_len()?;
        Ok(SctpChunkRepr {
            chunk_type: chunk.chunk_type(),
            flags: chunk.flags(),
            value: chunk.value(),
        })
    }

    /// The chunk's length with padding (the length field is clamped to 65535).
    pub fn buffer_len(&self) -> usize {
        (CHUNK_HEADER_LEN + self.value.len()).div_ceil(4) * 4
    }

    /// Writes the chunk and zero padding (the buffer must hold [`SctpChunkRepr::buffer_len`]).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, chunk: &mut SctpChunk<T>) {
        let len = CHUNK_HEADER_LEN + self.value.len();
        chunk.set_chunk_type(self.chunk_type);
        chunk.set_flags(self.flags);
        chunk.set_len(len.min(0xffff) as u16);
        let buf = chunk.as_bytes_mut();
        buf[CHUNK_HEADER_LEN..len].copy_from_slice(self.value);
        buf[len..self.buffer_len()].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet() -> Vec<u8> {
        let mut bytes = vec![0u8; 12 + 8 + 20];
        let mut p = SctpPacket::new_unchecked(&mut bytes[..]);
        SctpRepr { src_port: 5000, dst_port: 38412, verification_tag: 0xdead_beef }.emit(&mut p);
        let data = SctpChunkRepr { chunk_type: CHUNK_DATA, flags: 3, value: b"abc" };
        let init = SctpChunkRepr { chunk_type: CHUNK_INIT, flags: 0, value: &[7; 16] };
        data.emit(&mut SctpChunk::new_unchecked(&mut p.payload_mut()[..8]));
        init.emit(&mut SctpChunk::new_unchecked(&mut p.payload_mut()[8..]));
        p.fill_checksum();
        bytes
    }

    #[test]
    fn deconstruct() {
        let bytes = packet();
        let p = SctpPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.verification_tag()), (5000, 38412, 0xdead_beef));
        assert!(p.verify_checksum());
        assert_eq!(p.checksum(), u32::from_le_bytes(bytes[8..12].try_into().unwrap()));
        let chunks: Vec<_> = p.chunks().map(|c| c.unwrap()).collect();
        assert_eq!(chunks.len(), 2);
        assert_eq!(
            (chunks[0].chunk_type(), chunks[0].flags(), chunks[0].value()),
            (0, 3, &b"abc"[..])
        );
        assert_eq!((chunks[1].len(), chunks[1].padded_len()), (20, 20));
        let mut bad = bytes.clone();
        bad[20] ^= 1;
        assert!(!SctpPacket::new_unchecked(&bad[..]).verify_checksum());
        assert!(SctpPacket::new_checked(&bytes[..11]).is_err());
    }

    #[test]
    fn bad_chunks_end_the_walk() {
        let mut bytes = packet();
        bytes[12 + 3] = 2; // a chunk length below 4
        let walk: Vec<_> = SctpPacket::new_unchecked(&bytes[..]).chunks().collect();
        assert_eq!(walk.len(), 1);
        assert_eq!(walk[0].unwrap_err().offset, 14);
        let bytes = packet();
        let short: Vec<_> = SctpPacket::new_unchecked(&bytes[..30]).chunks().collect();
        assert!(short[0].is_ok() && short[1].is_err());
    }

    #[test]
    fn reprs_round_trip() {
        let bytes = packet();
        let p = SctpPacket::new_unchecked(&bytes[..]);
        let repr = SctpRepr::parse(&p).unwrap();
        let mut out = vec![0xee; bytes.len()];
        let mut q = SctpPacket::new_unchecked(&mut out[..]);
        repr.emit(&mut q);
        let mut at = 0;
        for chunk in p.chunks() {
            let c = SctpChunkRepr::parse(&chunk.unwrap()).unwrap();
            c.emit(&mut SctpChunk::new_unchecked(&mut q.payload_mut()[at..]));
            at += c.buffer_len();
        }
        q.fill_checksum();
        assert_eq!(out, bytes);
    }
}
