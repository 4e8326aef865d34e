//! pcapng: a sequence of blocks `type, total length, body, total length`, grouped in sections.
//!
//! Each Section Header Block sets the byte order for the blocks after it and starts a new
//! numbering of interfaces; the reader keeps one global list of interfaces across sections and
//! maps each section's local interface IDs onto it. Block types this reader does not know (name
//! resolution, decryption secrets, custom blocks…) are skipped after their length is checked.

use crate::MAX_CAPLEN;
use crate::error::{Error, ErrorKind};
use crate::pcap::{clip_to_snaplen, u16_at, u32_at};
use crate::reader::{PacketLoc, Source};
use crate::types::{Interface, InterfaceStats, Timestamp, TsResolution};
use sift_wire::LinkType;

pub(crate) const SHB_TYPE: u32 = 0x0A0D_0D0A;
pub(crate) const IDB_TYPE: u32 = 1;
pub(crate) const PB_TYPE: u32 = 2;
pub(crate) const SPB_TYPE: u32 = 3;
pub(crate) const ISB_TYPE: u32 = 5;
pub(crate) const EPB_TYPE: u32 = 6;
pub(crate) const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

/// Blocks larger than this are refused (libpcap's limit for a block holding one packet).
const MAX_BLOCK_LEN: u32 = 16 * 1024 * 1024;
/// Header (type, length) plus trailer (length).
const BLOCK_OVERHEAD: u32 = 12;

/// Per-file parsing state: the current section's byte order and interface map.
#[derive(Default)]
pub(crate) struct NgState {
    big_endian: bool,
    section: u32,
    /// Local interface ID (index) → global interface index.
    section_interfaces: Vec<u32>,
    sections_seen: u32,
}

fn err(offset: u64, kind: ErrorKind) -> Error {
    Error { offset, kind }
}

/// Reads the file's first Section Header Block; returns the offset of the block after it.
pub(crate) fn read_first_section(source: &mut Source, state: &mut NgState) -> Result<u64, Error> {
    let (block_len, body_len) = read_shb(source, 0, state, true)?;
    let _ = body_len;
    Ok(u64::from(block_len))
}

/// Parses the SHB at `pos`, switching `state` to its byte order; returns its total length.
fn read_shb(
    source: &mut Source,
    pos: u64,
    state: &mut NgState,
    first: bool,
) -> Result<(u32, u32), Error> {
    let io = |e| err(pos, ErrorKind::Io(e));
    let head = source.peek(pos, 12).map_err(io)?;
    if head.len() < 12 {
        let kind = ErrorKind::TruncatedFileHeader { needed: 12, available: head.len() as u64 };
        return Err(err(pos, kind));
    }
    let bom_le = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
    let big = match bom_le {
        BYTE_ORDER_MAGIC => false,
        m if m.swap_bytes() == BYTE_ORDER_MAGIC => true,
        m => {
            // At the start of a file a bad byte-order magic means "not pcapng at all".
            let kind =
                if first { ErrorKind::BadMagic(SHB_TYPE) } else { ErrorKind::BadByteOrderMagic(m) };
            return Err(err(pos + 8, kind));
        }
    };
    let length = u32_at(head, 4, big);
    // SHB fixed body: byte-order magic, version (2+2), section length (8).
    check_length(SHB_TYPE, length, 16, pos)?;
    let block = source.peek(pos, length as usize).map_err(io)?;
    if block.len() < length as usize {
        let kind = if first {
            ErrorKind::TruncatedFileHeader {
                needed: u64::from(length),
                available: block.len() as u64,
            }
        } else {
            ErrorKind::TruncatedBlock {
                block_type: SHB_TYPE,
                length,
                available: block.len() as u64,
            }
        };
        return Err(err(pos, kind));
    }
    check_trailer(block, SHB_TYPE, length, big, pos)?;
    let major = u16_at(block, 12, big);
    let minor = u16_at(block, 14, big);
    if !(major == 1 && (minor == 0 || minor == 2)) {
        return Err(err(pos + 12, ErrorKind::PcapngVersion { major, minor }));
    }
    let options = &block[24..length as usize - 4];
    for_each_option(SHB_TYPE, options, big, pos + 24, |_, _| Ok(()))?;
    state.big_endian = big;
    state.section = state.sections_seen;
    state.sections_seen += 1;
    state.section_interfaces.clear();
    Ok((length, length - BLOCK_OVERHEAD))
}

fn check_length(block_type: u32, length: u32, min_body: u32, pos: u64) -> Result<(), Error> {
    if length < BLOCK_OVERHEAD + min_body || !length.is_multiple_of(4) || length > MAX_BLOCK_LEN {
        return Err(err(pos + 4, ErrorKind::BadBlockLength { block_type, length }));
    }
    Ok(())
}

fn check_trailer(
    block: &[u8],
    block_type: u32,
    length: u32,
    big: bool,
    pos: u64,
) -> Result<(), Error> {
    let trailing = u32_at(block, length as usize - 4, big);
    if trailing != length {
        let kind = ErrorKind::BlockLengthMismatch { block_type, leading: length, trailing };
        return Err(err(pos + u64::from(length) - 4, kind));
    }
    Ok(())
}

/// Calls `f(code, value)` for each option until `opt_endofopt` or the end of `data`.
fn for_each_option(
    block_type: u32,
    data: &[u8],
    big: bool,
    base: u64,
    mut f: impl FnMut(u16, &[u8]) -> Result<(), ErrorKind>,
) -> Result<(), Error> {
    let mut at = 0usize;
    while data.len() - at >= 4 {
        let code = u16_at(data, at, big);
        let length = u16_at(data, at + 2, big);
        if code == 0 {
            break;
        }
        let padded = (usize::from(length) + 3) & !3;
        if padded > data.len() - at - 4 {
            return Err(err(
                base + at as u64,
                ErrorKind::OptionTooLong { block_type, code, length },
            ));
        }
        let value = &data[at + 4..at + 4 + usize::from(length)];
        f(code, value).map_err(|kind| err(base + at as u64, kind))?;
        at += 4 + padded;
    }
    Ok(())
}

fn u64_option(value: &[u8], big: bool) -> Option<u64> {
    let b: [u8; 8] = value.get(..8)?.try_into().ok()?;
    Some(if big { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) })
}

/// Finds the next packet at or after `pos`, processing the non-packet blocks on the way.
pub(crate) fn next_packet(
    source: &mut Source,
    mut pos: u64,
    state: &mut NgState,
    interfaces: &mut Vec<Interface>,
) -> Result<Option<(PacketLoc, u64)>, Error> {
    loop {
        let io = |e| err(pos, ErrorKind::Io(e));
        let head = source.peek(pos, 12).map_err(io)?;
        if head.is_empty() {
            return Ok(None);
        }
        if head.len() < 8 {
            let kind = ErrorKind::TruncatedRecordHeader { needed: 8, available: head.len() as u64 };
            return Err(err(pos, kind));
        }
        let block_type = u32_at(head, 0, state.big_endian);
        if block_type == SHB_TYPE {
            let (length, _) = read_shb(source, pos, state, false)?;
            pos += u64::from(length);
            continue;
        }
        let length = u32_at(head, 4, state.big_endian);
        check_length(block_type, length, 0, pos)?;
        let block = source.peek(pos, length as usize).map_err(io)?;
        if block.len() < length as usize {
            let kind =
                ErrorKind::TruncatedBlock { block_type, length, available: block.len() as u64 };
            return Err(err(pos, kind));
        }
        let big = state.big_endian;
        check_trailer(block, block_type, length, big, pos)?;
        let body = &block[8..length as usize - 4];
        let next = pos + u64::from(length);
        let too_short = |what| err(pos, ErrorKind::BlockBodyTooShort { block_type, what });
        match block_type {
            IDB_TYPE => {
                if body.len() < 8 {
                    return Err(too_short("fixed fields"));
                }
                let mut iface = Interface::new(
                    LinkType::new(u16_at(body, 0, big)),
                    u32_at(body, 4, big),
                    TsResolution::MICRO,
                );
                iface.section = state.section;
                for_each_option(block_type, &body[8..], big, pos + 16, |code, value| {
                    match code {
                        2 => iface.name = Some(String::from_utf8_lossy(value).into_owned()),
                        3 => iface.description = Some(String::from_utf8_lossy(value).into_owned()),
                        9 => {
                            let b = *value.first().unwrap_or(&6);
                            iface.ts_resolution = TsResolution::from_option_byte(b)
                                .ok_or(ErrorKind::BadTsResolution(b))?;
                        }
                        14 => {
                            if let Some(v) = u64_option(value, big) {
                                iface.ts_offset = v as i64;
                            }
                        }
                        _ => {}
                    }
                    Ok(())
                })?;
                state.section_interfaces.push(interfaces.len() as u32);
                interfaces.push(iface);
            }
            EPB_TYPE | PB_TYPE => {
                if body.len() < 20 {
                    return Err(too_short("fixed fields"));
                }
                let (local, ts_hi, ts_lo, caplen, wire_len) = if block_type == EPB_TYPE {
                    (
                        u32_at(body, 0, big),
                        u32_at(body, 4, big),
                        u32_at(body, 8, big),
                        u32_at(body, 12, big),
                        u32_at(body, 16, big),
                    )
                } else {
                    (
                        u32::from(u16_at(body, 0, big)),
                        u32_at(body, 4, big),
                        u32_at(body, 8, big),
                        u32_at(body, 12, big),
                        u32_at(body, 16, big),
                    )
                };
                let global = lookup(state, local, pos)?;
                let iface = &interfaces[global as usize];
                check_caplen(caplen, pos)?;
                if caplen as usize > body.len() - 20 {
                    return Err(too_short("packet data"));
                }
                let (caplen, clipped) = clip_to_snaplen(caplen, iface.snaplen);
                let units = (u64::from(ts_hi) << 32) | u64::from(ts_lo);
                let timestamp =
                    with_offset(Timestamp::from_units(units, iface.ts_resolution), iface.ts_offset);
                let loc = PacketLoc {
                    data_offset: pos + 28,
                    caplen,
                    wire_len,
                    timestamp,
                    interface: global,
                    record_offset: pos,
                    clipped,
                };
                return Ok(Some((loc, next)));
            }
            SPB_TYPE => {
                if body.len() < 4 {
                    return Err(too_short("fixed fields"));
                }
                let global = lookup(state, 0, pos)?;
                let wire_len = u32_at(body, 0, big);
                let snaplen = interfaces[global as usize].snaplen;
                let mut caplen = wire_len.min((body.len() - 4) as u32);
                if snaplen != 0 {
                    caplen = caplen.min(snaplen);
                }
                check_caplen(caplen, pos)?;
                // A simple packet block has no timestamp.
                let loc = PacketLoc {
                    data_offset: pos + 12,
                    caplen,
                    wire_len,
                    timestamp: Timestamp::default(),
                    interface: global,
                    record_offset: pos,
                    clipped: false,
                };
                return Ok(Some((loc, next)));
            }
            ISB_TYPE => {
                if body.len() < 12 {
                    return Err(too_short("fixed fields"));
                }
                let global = lookup(state, u32_at(body, 0, big), pos)?;
                let mut stats = InterfaceStats::default();
                for_each_option(block_type, &body[12..], big, pos + 20, |code, value| {
                    let v = u64_option(value, big);
                    match code {
                        4 => stats.received = v,
                        5 => stats.dropped = v,
                        6 => stats.filter_accepted = v,
                        7 => stats.os_dropped = v,
                        8 => stats.delivered = v,
                        _ => {}
                    }
                    Ok(())
                })?;
                interfaces[global as usize].stats = Some(stats);
            }
            _ => {}
        }
        pos = next;
    }
}

fn lookup(state: &NgState, local: u32, pos: u64) -> Result<u32, Error> {
    state.section_interfaces.get(local as usize).copied().ok_or_else(|| {
        err(
            pos + 8,
            ErrorKind::UnknownInterface { id: local, count: state.section_interfaces.len() as u32 },
        )
    })
}

fn check_caplen(caplen: u32, pos: u64) -> Result<(), Error> {
    if caplen > MAX_CAPLEN {
        return Err(err(pos, ErrorKind::CaplenTooLarge { caplen, limit: MAX_CAPLEN }));
    }
    Ok(())
}

fn with_offset(ts: Timestamp, offset: i64) -> Timestamp {
    Timestamp { secs: ts.secs.saturating_add_signed(offset), nanos: ts.nanos }
}
