//! Classic pcap: a 24-byte file header, then 16-byte record headers each followed by the data.

use crate::error::{Error, ErrorKind};
use crate::reader::{PacketLoc, Source};
use crate::types::{Precision, Timestamp};
use sift_wire::LinkType;
use sift_wire::timestamp::FieldSign;

/// `(bytes to deliver, whether that is fewer than recorded)` for a record of `caplen` bytes in
/// a file with (adjusted, never 0) snapshot length `snaplen`.
pub(crate) fn clip_to_snaplen(caplen: u32, snaplen: u32) -> (u32, bool) {
    if caplen > snaplen { (snaplen, true) } else { (caplen, false) }
}

pub(crate) const FILE_HEADER_LEN: u64 = 24;
pub(crate) const RECORD_HEADER_LEN: u64 = 16;

pub(crate) const MAGIC_MICRO: u32 = 0xa1b2_c3d4;
pub(crate) const MAGIC_NANO: u32 = 0xa1b2_3c4d;

/// Recognizes a pcap magic: `(big_endian, precision)`.
pub(crate) fn magic(bytes: [u8; 4]) -> Option<(bool, Precision)> {
    match (u32::from_be_bytes(bytes), u32::from_le_bytes(bytes)) {
        (MAGIC_MICRO, _) => Some((true, Precision::Micro)),
        (MAGIC_NANO, _) => Some((true, Precision::Nano)),
        (_, MAGIC_MICRO) => Some((false, Precision::Micro)),
        (_, MAGIC_NANO) => Some((false, Precision::Nano)),
        _ => None,
    }
}

pub(crate) fn u16_at(b: &[u8], at: usize, big: bool) -> u16 {
    let v = [b[at], b[at + 1]];
    if big { u16::from_be_bytes(v) } else { u16::from_le_bytes(v) }
}

pub(crate) fn u32_at(b: &[u8], at: usize, big: bool) -> u32 {
    let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if big { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) }
}

pub(crate) struct FileHeader {
    pub version: (u16, u16),
    pub snaplen: u32,
    pub link_type: LinkType,
    pub link_type_ext: u32,
}

/// Link-type bits libpcap reserves (`LT_RESERVED1`): must be zero.
const LINKTYPE_RESERVED_BITS: u32 = 0x03ff_0000;

pub(crate) fn read_file_header(source: &mut Source, big: bool) -> Result<FileHeader, Error> {
    let h = source
        .peek(0, FILE_HEADER_LEN as usize)
        .map_err(|e| Error { offset: 0, kind: ErrorKind::Io(e) })?;
    if h.len() < FILE_HEADER_LEN as usize {
        let kind =
            ErrorKind::TruncatedFileHeader { needed: FILE_HEADER_LEN, available: h.len() as u64 };
        return Err(Error { offset: 0, kind });
    }
    let major = u16_at(h, 4, big);
    let minor = u16_at(h, 6, big);
    if major != 2 || minor > 4 {
        return Err(Error { offset: 4, kind: ErrorKind::PcapVersion { major, minor } });
    }
    let snaplen = u32_at(h, 16, big);
    let field = u32_at(h, 20, big);
    if field & LINKTYPE_RESERVED_BITS != 0 {
        return Err(Error { offset: 20, kind: ErrorKind::LinkTypeReserved(field) });
    }
    Ok(FileHeader {
        version: (major, minor),
        snaplen,
        link_type: LinkType::new((field & 0xffff) as u16),
        link_type_ext: field & 0xffff_0000,
    })
}

/// What reading a file's records needs to know from its header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordFormat {
    pub big_endian: bool,
    pub precision: Precision,
    /// The adjusted snapshot length ([`crate::adjusted_snaplen`]): longer records are clipped.
    pub snaplen: u32,
    /// The link type's [`crate::max_snaplen`]: longer records are damage.
    pub max_caplen: u32,
}

/// Locates the record at `pos`: `Ok(None)` at a clean end of file, else the packet and the
/// offset of the following record.
pub(crate) fn next_record(
    source: &mut Source,
    pos: u64,
    format: &RecordFormat,
) -> Result<Option<(PacketLoc, u64)>, Error> {
    let io = |e| Error { offset: pos, kind: ErrorKind::Io(e) };
    let h = source.peek(pos, RECORD_HEADER_LEN as usize).map_err(io)?;
    if h.is_empty() {
        return Ok(None);
    }
    if h.len() < RECORD_HEADER_LEN as usize {
        let kind = ErrorKind::TruncatedRecordHeader {
            needed: RECORD_HEADER_LEN,
            available: h.len() as u64,
        };
        return Err(Error { offset: pos, kind });
    }
    let header = parse_record_header(h, pos, format)?;
    let caplen = header.caplen;
    let data_offset = pos + RECORD_HEADER_LEN;
    let available = source.peek(data_offset, caplen as usize).map_err(io)?.len();
    if available < caplen as usize {
        return Err(Error {
            offset: pos,
            kind: ErrorKind::TruncatedPacket { caplen, available: available as u64 },
        });
    }
    let loc = header.locate(pos, format.snaplen);
    Ok(Some((loc, data_offset + u64::from(caplen))))
}

/// A decoded 16-byte record header.
pub(crate) struct RecordHeader {
    pub caplen: u32,
    pub wire_len: u32,
    pub timestamp: Timestamp,
}

/// Decodes and checks the record header `h` (16 bytes) found at `pos`.
///
/// The timestamp is kept as recorded ([`Timestamp::from_record`]), as libpcap keeps it: a
/// fraction of a second or more is not carried into the seconds, so that a copy writes the
/// same fields back (and [`Timestamp::is_normal`] says so, for callers that count them).
pub(crate) fn parse_record_header(
    h: &[u8],
    pos: u64,
    format: &RecordFormat,
) -> Result<RecordHeader, Error> {
    let big = format.big_endian;
    let secs = u32_at(h, 0, big);
    let frac = u32_at(h, 4, big);
    let caplen = u32_at(h, 8, big);
    let wire_len = u32_at(h, 12, big);
    if caplen > format.max_caplen {
        return Err(Error {
            offset: pos,
            kind: ErrorKind::CaplenTooLarge { caplen, limit: format.max_caplen },
        });
    }
    let sign = if big { FieldSign::Unsigned } else { FieldSign::Signed };
    let timestamp = Timestamp::from_record(secs, frac, format.precision.unit(), sign);
    Ok(RecordHeader { caplen, wire_len, timestamp })
}

impl RecordHeader {
    /// Where the record at `pos` delivers its packet. More bytes than the (adjusted) snaplen:
    /// libpcap delivers the first `snaplen` and skips the rest; so does the reader, counting it
    /// so that the caller can warn.
    pub(crate) fn locate(&self, pos: u64, snaplen: u32) -> PacketLoc {
        let (delivered, clipped) = clip_to_snaplen(self.caplen, snaplen);
        PacketLoc {
            data_offset: pos + RECORD_HEADER_LEN,
            caplen: delivered,
            wire_len: self.wire_len,
            timestamp: self.timestamp,
            interface: 0,
            record_offset: pos,
            clipped,
            flags: None,
        }
    }
}
