//! Read errors: what was wrong and at which byte offset of the file.

use std::fmt;

/// A read error, located at the byte offset of the damaged header, record or block.
#[derive(Debug)]
pub struct Error {
    /// Byte offset in the file where the damaged structure starts.
    pub offset: u64,
    /// What was wrong.
    pub kind: ErrorKind,
}

/// What was wrong with a capture file.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system failed to read (or map) the file.
    Io(std::io::Error),
    /// The file is empty.
    Empty,
    /// The first four bytes are not a pcap or pcapng magic number.
    BadMagic(u32),
    /// The file ends inside the file header or a section header.
    TruncatedFileHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// A pcap file whose version is not 2.x (x ≤ 4).
    PcapVersion {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
    /// A pcapng section whose version is not 1.0 or 1.2.
    PcapngVersion {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
    /// The reserved bits 16–25 of a pcap link-type field are set.
    LinkTypeReserved(u32),
    /// The file ends inside a packet record header.
    TruncatedRecordHeader {
        /// Bytes the record header needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// The file ends inside a packet's data.
    TruncatedPacket {
        /// Captured bytes the record announces.
        caplen: u32,
        /// Bytes left in the file.
        available: u64,
    },
    /// A captured length larger than the snapshot length or than 256 KiB.
    CaplenTooLarge {
        /// The record's captured length.
        caplen: u32,
        /// The largest acceptable captured length.
        limit: u32,
    },
    /// The file ends inside a pcapng block.
    TruncatedBlock {
        /// Block type.
        block_type: u32,
        /// Total length the block announces.
        length: u32,
        /// Bytes left in the file.
        available: u64,
    },
    /// A pcapng block length that is too small, not a multiple of 4, or too large.
    BadBlockLength {
        /// Block type.
        block_type: u32,
        /// The announced total length.
        length: u32,
    },
    /// The trailing length of a pcapng block differs from its leading length.
    BlockLengthMismatch {
        /// Block type.
        block_type: u32,
        /// Leading length.
        leading: u32,
        /// Trailing length.
        trailing: u32,
    },
    /// A pcapng block whose fixed fields or data do not fit in the block.
    BlockBodyTooShort {
        /// Block type.
        block_type: u32,
        /// What did not fit.
        what: &'static str,
    },
    /// A pcapng option that runs past the end of its block.
    OptionTooLong {
        /// Block type.
        block_type: u32,
        /// Option code.
        code: u16,
        /// Option length.
        length: u16,
    },
    /// A pcapng option whose value has the wrong length.
    BadOptionLength {
        /// Block type.
        block_type: u32,
        /// Option code.
        code: u16,
        /// The option's length.
        length: u16,
        /// The length it must have.
        expected: u16,
    },
    /// A pcapng option that may appear once, given again.
    RepeatedOption {
        /// Block type.
        block_type: u32,
        /// Option code.
        code: u16,
    },
    /// A pcapng `if_tsresol` that no 64-bit timestamp can use.
    BadTsResolution(u8),
    /// A pcapng byte-order magic that is neither `0x1A2B3C4D` nor its swap.
    BadByteOrderMagic(u32),
    /// The file shrank while it was being read (another program truncated or rewrote it): the
    /// bytes from the error's offset on are gone. Every packet delivered before was read
    /// from the file as it was.
    TruncatedWhileReading {
        /// The file's size when the damage was found.
        size: u64,
    },
    /// A pcapng packet naming an interface the section has not described.
    UnknownInterface {
        /// The interface ID in the packet.
        id: u32,
        /// How many interfaces the section has described.
        count: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.kind)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

fn block_name(t: u32) -> String {
    match t {
        0x0A0D_0D0A => "section header block".into(),
        1 => "interface description block".into(),
        2 => "packet block".into(),
        3 => "simple packet block".into(),
        5 => "interface statistics block".into(),
        6 => "enhanced packet block".into(),
        _ => format!("block of type {t:#x}"),
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "read error: {e}"),
            ErrorKind::Empty => write!(f, "the file is empty"),
            ErrorKind::BadMagic(m) => {
                write!(f, "not a pcap or pcapng file (magic number {m:#010x})")
            }
            ErrorKind::TruncatedFileHeader { needed, available } => write!(
                f,
                "truncated file header: {needed} bytes needed, only {available} in the file"
            ),
            ErrorKind::PcapVersion { major, minor } => {
                write!(f, "unsupported pcap savefile version {major}.{minor} (expected 2.4)")
            }
            ErrorKind::PcapngVersion { major, minor } => {
                write!(f, "unsupported pcapng savefile version {major}.{minor} (expected 1.0)")
            }
            ErrorKind::LinkTypeReserved(v) => write!(
                f,
                "link-type field {v:#010x} has reserved bits set (bits 16-25 must be zero)"
            ),
            ErrorKind::TruncatedRecordHeader { needed, available } => write!(
                f,
                "truncated packet record header: {needed} bytes needed, only {available} left"
            ),
            ErrorKind::TruncatedPacket { caplen, available } => write!(
                f,
                "truncated packet: the record has {caplen} captured bytes, only {available} left in the file"
            ),
            ErrorKind::CaplenTooLarge { caplen, limit } => {
                write!(f, "invalid captured length {caplen}: larger than the limit of {limit}")
            }
            ErrorKind::TruncatedBlock { block_type, length, available } => write!(
                f,
                "truncated {}: it announces {length} bytes, only {available} left in the file",
                block_name(*block_type)
            ),
            ErrorKind::BadBlockLength { block_type, length } => write!(
                f,
                "bad length {length} in {} (must be a multiple of 4, at least 12, at most 16 MiB)",
                block_name(*block_type)
            ),
            ErrorKind::BlockLengthMismatch { block_type, leading, trailing } => write!(
                f,
                "{} length {leading} does not match its trailing length {trailing}",
                block_name(*block_type)
            ),
            ErrorKind::BlockBodyTooShort { block_type, what } => {
                write!(f, "{} is too short for its {what}", block_name(*block_type))
            }
            ErrorKind::OptionTooLong { block_type, code, length } => write!(
                f,
                "option {code} of length {length} runs past the end of the {}",
                block_name(*block_type)
            ),
            ErrorKind::BadOptionLength { block_type, code, length, expected } => write!(
                f,
                "option {code} of the {} has length {length}, not {expected}",
                block_name(*block_type)
            ),
            ErrorKind::RepeatedOption { block_type, code } => {
                write!(f, "option {code} appears twice in the {}", block_name(*block_type))
            }
            ErrorKind::BadTsResolution(b) => write!(f, "unsupported if_tsresol {b:#04x}"),
            ErrorKind::BadByteOrderMagic(m) => {
                write!(f, "bad byte-order magic {m:#010x} in section header block")
            }
            ErrorKind::TruncatedWhileReading { size } => {
                write!(f, "the file was truncated while being read (it now holds {size} bytes)")
            }
            ErrorKind::UnknownInterface { id, count } => {
                write!(f, "packet names interface {id}, but the section describes only {count}")
            }
        }
    }
}
