//! pcapng: a sequence of blocks `type, total length, body, total length`, grouped in sections.
//!
//! Each Section Header Block sets the byte order for the blocks after it and starts a new
//! numbering of interfaces; the reader keeps one global list of interfaces across sections and
//! maps each section's local interface IDs onto it. Block types this reader does not know (name
//! resolution, decryption secrets, custom blocks…) are skipped after their length is checked.
//!
//! Damage is judged as libpcap judges it, so that sift and tcpdump read the same packets from
//! the same damaged file (`tests/oracle_pcapng_damage.rs` compares them class by class). Like
//! libpcap, opening a file reads up to its first Interface Description Block, so damage before
//! it fails the open (and a copy writes no output file, as tcpdump's).
//! libpcap reads past what it never parses: statistics blocks (skipped unread: sift reads the
//! counters when the block is sound and otherwise skips it), the first section header's trailing
//! length, section headers' options, a later section's minor version. sift reads on there too and
//! counts what it skipped ([`SkippedDamage`]). Everything libpcap checks stops the read with a
//! located error: block lengths and trailers, fixed fields, packet data past the block, a
//! captured length above the interface's snapshot length, interface options (`opt_endofopt` with
//! a length, `if_tsresol` and `if_tsoffset` of the wrong size or given twice). Deliberately more
//! forgiving than libpcap 1.10: sections in different byte orders, interfaces of different link
//! types or snapshot lengths, and a file with no interface (read as empty).

use crate::error::{Error, ErrorKind};
use crate::pcap::{u16_at, u32_at};
use crate::reader::{PacketLoc, SkippedDamage, Source, Tally};
use crate::types::{Interface, InterfaceStats, PacketFlags, Timestamp, TsResolution};
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
/// Options of an Interface Description Block that libpcap checks.
const OPT_ENDOFOPT: u16 = 0;
const IF_TSRESOL: u16 = 9;
const IF_TSOFFSET: u16 = 14;
/// A packet block's flags word (`epb_flags`, and `pack_flags` of the obsolete Packet Block).
pub(crate) const EPB_FLAGS: u16 = 2;
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
    /// Damage skipped to read on.
    pub(crate) skipped: SkippedDamage,
    /// Bogus interface snapshot lengths read as the link type's largest.
    pub(crate) snaplens: Tally,
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
    // libpcap never reads the first section header's trailer (it reads the block by its
    // leading length); a later one's it checks like any block's.
    match check_trailer(block, SHB_TYPE, length, big, pos) {
        Err(e) if first => state.skipped.add(e.offset),
        other => other?,
    }
    let major = u16_at(block, 12, big);
    let minor = u16_at(block, 14, big);
    // The first section must be 1.0 or 1.2; for later ones libpcap checks the major version.
    if major != 1 || (first && minor != 0 && minor != 2) {
        return Err(err(pos + 12, ErrorKind::PcapngVersion { major, minor }));
    }
    // Section options are not used, and libpcap does not read them: damage there is skipped.
    let options = &block[24..length as usize - 4];
    if let Err(e) = for_each_option(SHB_TYPE, options, big, pos + 24, |_, _| Ok(())) {
        state.skipped.add(e.offset);
    }
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
/// `opt_endofopt` is passed to `f` too (with its value, normally empty) before the walk stops.
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
        if code == OPT_ENDOFOPT && length == 0 {
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
        if code == OPT_ENDOFOPT {
            break;
        }
        at += 4 + padded;
    }
    Ok(())
}

/// The largest captured length a packet of `iface` may have: its (adjusted) snapshot length,
/// at most the link type's largest.
fn caplen_limit(iface: &Interface) -> u32 {
    iface.snaplen.min(crate::max_snaplen(iface.link_type))
}

/// Reads an Interface Description Block's options into `iface`, as strictly as libpcap (which
/// refuses the file otherwise): `opt_endofopt` with a length, `if_tsresol` not of 1 byte or
/// given twice, `if_tsoffset` not of 8 bytes or given twice, an unusable resolution.
fn read_idb_options(data: &[u8], big: bool, base: u64, iface: &mut Interface) -> Result<(), Error> {
    let (mut saw_tsresol, mut saw_tsoffset) = (false, false);
    for_each_option(IDB_TYPE, data, big, base, |code, value| {
        let bad_length = |expected| ErrorKind::BadOptionLength {
            block_type: IDB_TYPE,
            code,
            length: value.len() as u16,
            expected,
        };
        let twice = ErrorKind::RepeatedOption { block_type: IDB_TYPE, code };
        match code {
            OPT_ENDOFOPT => return Err(bad_length(0)),
            2 => iface.name = Some(String::from_utf8_lossy(value).into_owned()),
            3 => iface.description = Some(String::from_utf8_lossy(value).into_owned()),
            IF_TSRESOL => {
                let [b] = value else { return Err(bad_length(1)) };
                if std::mem::replace(&mut saw_tsresol, true) {
                    return Err(twice);
                }
                iface.ts_resolution =
                    TsResolution::from_option_byte(*b).ok_or(ErrorKind::BadTsResolution(*b))?;
            }
            IF_TSOFFSET => {
                let v = u64_option(value, big).filter(|_| value.len() == 8).ok_or(bad_length(8))?;
                if std::mem::replace(&mut saw_tsoffset, true) {
                    return Err(twice);
                }
                iface.ts_offset = v as i64;
            }
            _ => {}
        }
        Ok(())
    })
}

/// Reads an Interface Statistics Block's counters into its interface. libpcap skips these
/// blocks unread, so a damaged one (too short for its fields, naming an unknown interface, with
/// options past its end or counters not of 8 bytes) is skipped too: `Err` gives where.
fn read_isb(
    body: &[u8],
    big: bool,
    pos: u64,
    state: &NgState,
    interfaces: &mut [Interface],
) -> Result<(), u64> {
    if body.len() < 12 {
        return Err(pos);
    }
    let global = lookup(state, u32_at(body, 0, big), pos).map_err(|e| e.offset)?;
    let mut stats = InterfaceStats::default();
    for_each_option(ISB_TYPE, &body[12..], big, pos + 20, |code, value| {
        let slot = match code {
            4 => &mut stats.received,
            5 => &mut stats.dropped,
            6 => &mut stats.filter_accepted,
            7 => &mut stats.os_dropped,
            8 => &mut stats.delivered,
            _ => return Ok(()),
        };
        *slot = Some(u64_option(value, big).filter(|_| value.len() == 8).ok_or(
            ErrorKind::BadOptionLength {
                block_type: ISB_TYPE,
                code,
                length: value.len() as u16,
                expected: 8,
            },
        )?);
        Ok(())
    })
    .map_err(|e| e.offset)?;
    interfaces[global as usize].stats = Some(stats);
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
        match next_step(source, pos, state, interfaces, false)? {
            Step::Packet(loc, next) => return Ok(Some((loc, next))),
            Step::Interface(next) => pos = next,
            Step::End => return Ok(None),
        }
    }
}

/// Processes blocks from `pos` up to and including the first Interface Description Block, as
/// libpcap does when it opens a file (so damage before it fails the open, as there); returns
/// where reading goes on. A file with no interface ends there (it is read as empty).
pub(crate) fn read_to_first_interface(
    source: &mut Source,
    pos: u64,
    state: &mut NgState,
    interfaces: &mut Vec<Interface>,
) -> Result<u64, Error> {
    Ok(match next_step(source, pos, state, interfaces, true)? {
        Step::Interface(next) => next,
        // No packet can come before an interface (it would name an unknown one); should one,
        // reading goes on at it.
        Step::Packet(loc, _) => loc.record_offset,
        Step::End => pos,
    })
}

/// What [`next_step`] stopped at.
enum Step {
    /// A packet, and the offset of the block after it.
    Packet(PacketLoc, u64),
    /// An Interface Description Block (when asked to stop there), and the offset after it.
    Interface(u64),
    /// The end of the file.
    End,
}

/// Processes blocks from `pos` until a packet, the end of the file, or (with
/// `stop_at_interface`) an Interface Description Block.
fn next_step(
    source: &mut Source,
    mut pos: u64,
    state: &mut NgState,
    interfaces: &mut Vec<Interface>,
    stop_at_interface: bool,
) -> Result<Step, Error> {
    loop {
        let io = |e| err(pos, ErrorKind::Io(e));
        let head = source.peek(pos, 12).map_err(io)?;
        if head.is_empty() {
            return Ok(Step::End);
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
                let link_type = LinkType::new(u16_at(body, 0, big));
                let given = u32_at(body, 4, big);
                // As libpcap: a bogus snapshot length is the link type's largest.
                let snaplen = crate::adjusted_snaplen(link_type, given);
                if snaplen != given {
                    state.snaplens.add(u64::from(given));
                }
                let mut iface = Interface::new(link_type, snaplen, TsResolution::MICRO);
                iface.section = state.section;
                iface.big_endian = big;
                read_idb_options(&body[8..], big, pos + 16, &mut iface)?;
                state.section_interfaces.push(interfaces.len() as u32);
                interfaces.push(iface);
                if stop_at_interface {
                    return Ok(Step::Interface(next));
                }
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
                check_caplen(caplen, caplen_limit(iface), pos)?;
                if caplen as usize > body.len() - 20 {
                    return Err(too_short("packet data"));
                }
                let units = (u64::from(ts_hi) << 32) | u64::from(ts_lo);
                let timestamp =
                    with_offset(Timestamp::from_units(units, iface.ts_resolution), iface.ts_offset);
                let options = body.get(20 + (caplen as usize).next_multiple_of(4)..);
                let loc = PacketLoc {
                    data_offset: pos + 28,
                    caplen,
                    wire_len,
                    timestamp,
                    interface: global,
                    record_offset: pos,
                    clipped: false,
                    flags: options.and_then(|o| packet_flags(block_type, o, big)),
                };
                return Ok(Step::Packet(loc, next));
            }
            SPB_TYPE => {
                if body.len() < 4 {
                    return Err(too_short("fixed fields"));
                }
                let global = lookup(state, 0, pos)?;
                let wire_len = u32_at(body, 0, big);
                // The packet up to the snapshot length is in the block, or the block is short.
                let iface = &interfaces[global as usize];
                let caplen = wire_len.min(caplen_limit(iface));
                if caplen as usize > body.len() - 4 {
                    return Err(too_short("packet data"));
                }
                // A simple packet block has no timestamp: libpcap gives it 0 plus the
                // interface's offset.
                let loc = PacketLoc {
                    data_offset: pos + 12,
                    caplen,
                    wire_len,
                    timestamp: with_offset(Timestamp::default(), iface.ts_offset),
                    interface: global,
                    record_offset: pos,
                    clipped: false,
                    flags: None,
                };
                return Ok(Step::Packet(loc, next));
            }
            ISB_TYPE => {
                if let Err(at) = read_isb(body, big, pos, state, interfaces) {
                    state.skipped.add(at);
                }
            }
            _ => {}
        }
        pos = next;
    }
}

/// The `epb_flags` (`pack_flags`) word among a packet block's `options`, if they hold a
/// well-formed one. libpcap reads no packet block options, so options that cannot be walked
/// give no flags rather than an error.
fn packet_flags(block_type: u32, options: &[u8], big: bool) -> Option<PacketFlags> {
    let mut flags = None;
    let walked = for_each_option(block_type, options, big, 0, |code, value| {
        if let (EPB_FLAGS, Ok(v)) = (code, <[u8; 4]>::try_from(value)) {
            flags =
                Some(PacketFlags(if big { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) }));
        }
        Ok(())
    });
    walked.ok().and(flags)
}

fn lookup(state: &NgState, local: u32, pos: u64) -> Result<u32, Error> {
    state.section_interfaces.get(local as usize).copied().ok_or_else(|| {
        err(
            pos + 8,
            ErrorKind::UnknownInterface { id: local, count: state.section_interfaces.len() as u32 },
        )
    })
}

fn check_caplen(caplen: u32, limit: u32, pos: u64) -> Result<(), Error> {
    if caplen > limit {
        return Err(err(pos, ErrorKind::CaplenTooLarge { caplen, limit }));
    }
    Ok(())
}

/// `ts` moved by `if_tsoffset` seconds, modulo 2^64 as libpcap computes it: a time before
/// 1970 has `secs` ≥ 2^63 (a negative `time_t` to libpcap), one past 2106 keeps counting; a
/// pcap copy keeps the low 32 bits, as tcpdump's does.
fn with_offset(ts: Timestamp, offset: i64) -> Timestamp {
    Timestamp { secs: ts.secs.wrapping_add_signed(offset), nanos: ts.nanos }
}
