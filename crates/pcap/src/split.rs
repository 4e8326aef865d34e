//! Reading one classic pcap file from several threads.
//!
//! A mapped pcap file is a run of records with no index and no sync marks, so a thread handed
//! "the bytes from offset B on" must find where a record starts. [`PcapBytes::sync`] guesses:
//! the first offset from which [`SYNC_RECORDS`] consecutive plausible record headers chain up
//! exactly. The guess is only an optimisation: the caller reads chunk *i* up to the first
//! record at or past chunk *i+1*'s boundary ([`Records::stop`]), which is where chunk *i+1*
//! truly starts, and redoes chunk *i+1* from there in the rare case its guess was different. So
//! the packets delivered are always exactly those of a sequential read.
//!
//! A mapped file that shrinks during the read is handled as in the sequential reader
//! ([`crate::reader`]): [`Records`] delivers a record only if the mapping's damage starts past
//! its end, and ends with [`ErrorKind::TruncatedWhileReading`] otherwise. Bytes that leave the
//! mapping later, through the kernel (`writev` of ranges handed out by
//! [`PcapBytes::verbatim`]), are checked by
//! [`PcapWriter::write_pieces_from`](crate::PcapWriter::write_pieces_from).

use crate::ClippedRecords;
use crate::error::{Error, ErrorKind};
use crate::pcap::{self, FILE_HEADER_LEN, RECORD_HEADER_LEN, RecordFormat};
use crate::reader::{DamageCheck, Tally};
use crate::types::{Packet, Precision};
use sift_sys::mmap::MappedFile;
use sift_wire::LinkType;

/// How many consecutive record headers must chain up for a guessed sync point.
pub const SYNC_RECORDS: usize = 16;

/// The bytes of a whole classic pcap file (mapped or in memory), shareable between threads.
#[derive(Clone, Copy, Debug)]
pub struct PcapBytes<'a> {
    bytes: &'a [u8],
    /// The mapping `bytes` lies in, for damage checks (`None` for bytes in memory).
    map: Option<&'a MappedFile>,
    pub(crate) format: RecordFormat,
    link_type: LinkType,
}

impl DamageCheck for PcapBytes<'_> {
    fn mapping(&self) -> Option<&MappedFile> {
        self.map
    }
}

impl<'a> PcapBytes<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        map: Option<&'a MappedFile>,
        format: RecordFormat,
        link_type: LinkType,
    ) -> PcapBytes<'a> {
        PcapBytes { bytes, map, format, link_type }
    }

    /// The offset from which the mapped file's bytes are gone (it shrank while being read; they
    /// read as zeros), `None` while no damage has been seen or for a file held in memory. One
    /// atomic load: cheap enough to call per chunk or per record.
    pub fn damaged_at(&self) -> Option<u64> {
        self.map.and_then(MappedFile::damaged_at)
    }

    /// `Ok` unless the mapped file is damaged or now shorter than when it was mapped (one
    /// `fstat`); the error is located at the damage. For the end of a run, and after a
    /// surprising failure, to name the cause.
    pub fn check_intact(&self) -> Result<(), Error> {
        self.damage_anywhere().map_or(Ok(()), Err)
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether the file holds no bytes (never true for a file that opened).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The offset of the first record.
    pub fn first_record(&self) -> u64 {
        FILE_HEADER_LEN
    }

    /// A guessed record start at or after `from` (see the module documentation), or `None`
    /// when no plausible chain starts before the end of the file.
    pub fn sync(&self, from: u64) -> Option<u64> {
        let from = from.max(FILE_HEADER_LEN);
        let end = self.len();
        let mut pos = from;
        while pos + RECORD_HEADER_LEN <= end {
            if self.chains_from(pos) {
                return Some(pos);
            }
            pos += 1;
        }
        None
    }

    /// Whether [`SYNC_RECORDS`] plausible headers (or all up to the exact end of the file)
    /// chain up from `pos`.
    fn chains_from(&self, mut pos: u64) -> bool {
        let limit = self.format.snaplen.min(self.format.max_caplen);
        let per_sec = self.format.precision.unit().per_sec();
        let big_endian = self.format.big_endian;
        let mut previous_secs: Option<u32> = None;
        for _ in 0..SYNC_RECORDS {
            if pos == self.len() {
                return true;
            }
            let Some(h) = self.bytes.get(pos as usize..(pos + RECORD_HEADER_LEN) as usize) else {
                return false;
            };
            let secs = pcap::u32_at(h, 0, big_endian);
            let frac = pcap::u32_at(h, 4, big_endian);
            let caplen = pcap::u32_at(h, 8, big_endian);
            let wire_len = pcap::u32_at(h, 12, big_endian);
            let plausible = frac < per_sec
                && caplen <= limit
                && caplen <= wire_len
                && wire_len <= 0x0400_0000
                && previous_secs.is_none_or(|p| secs.abs_diff(p) <= 86_400);
            if !plausible {
                return false;
            }
            previous_secs = Some(secs);
            pos += RECORD_HEADER_LEN + u64::from(caplen);
            if pos > self.len() {
                return false;
            }
        }
        true
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Where `p`'s record lies in the file, when its bytes are exactly the record
    /// [`PcapWriter`](crate::PcapWriter) writes for `p` at `precision` (little-endian, the same
    /// precision, not clipped): a copy may then take them from the file as they are. `p`
    /// must come from this file's [`records`](Self::records).
    pub fn verbatim(&self, p: &Packet<'_>, precision: Precision) -> Option<std::ops::Range<u64>> {
        if self.format.big_endian || self.format.precision != precision {
            return None;
        }
        let start = p.offset;
        let end = start + RECORD_HEADER_LEN + p.data.len() as u64;
        let record = self.bytes.get(start as usize..end as usize)?;
        let header = crate::PcapWriter::<std::io::Sink>::record_header(
            precision,
            p.timestamp,
            p.wire_len,
            p.data.len(),
        )
        .ok()?;
        // The header must match, and the data must be the bytes right behind it (not a
        // clipped record's first part).
        let behind = std::ptr::eq(record[RECORD_HEADER_LEN as usize..].as_ptr(), p.data.as_ptr());
        (record[..RECORD_HEADER_LEN as usize] == header && behind).then_some(start..end)
    }

    /// The records from `start` (a record boundary) on, stopping before the first record
    /// that starts at or after `stop_at`.
    pub fn records(&self, start: u64, stop_at: u64) -> Records<'a> {
        Records {
            file: *self,
            pos: start,
            stop_at,
            done: false,
            clipped: ClippedRecords::default(),
            odd_fractions: Tally::default(),
        }
    }
}

/// An iterator over the records of one chunk of a [`PcapBytes`].
#[derive(Debug)]
pub struct Records<'a> {
    file: PcapBytes<'a>,
    pos: u64,
    stop_at: u64,
    done: bool,
    clipped: ClippedRecords,
    odd_fractions: Tally,
}

impl<'a> Records<'a> {
    /// Where the read stopped: the offset of the first record not delivered (the start of the
    /// next chunk, or the end of the file). Meaningful once the iterator returned `None`.
    pub fn stop(&self) -> u64 {
        self.pos
    }

    /// Records cut to the snapshot length so far.
    pub fn clipped(&self) -> ClippedRecords {
        self.clipped
    }

    /// Records so far whose fraction of a second is a second or more, kept as recorded
    /// ([`crate::Adjustments::odd_fractions`]): how many, and the offset of the first.
    pub fn odd_fractions(&self) -> (u64, Option<u64>) {
        (self.odd_fractions.count, self.odd_fractions.first)
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Packet<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.stop_at {
            return None;
        }
        let f = &self.file;
        let pos = self.pos;
        let rest = &f.bytes[(pos as usize).min(f.bytes.len())..];
        if rest.is_empty() {
            self.done = true;
            // A clean end, unless the file shrank (within its last page, no fault says so).
            return f.damage_anywhere().map(Err);
        }
        // Damage read as zeros makes the parser fail; the damage is the real cause.
        let fail = |done: &mut bool, kind| {
            *done = true;
            Some(Err(f.damage_anywhere().unwrap_or(Error { offset: pos, kind })))
        };
        if rest.len() < RECORD_HEADER_LEN as usize {
            let kind = ErrorKind::TruncatedRecordHeader {
                needed: RECORD_HEADER_LEN,
                available: rest.len() as u64,
            };
            return fail(&mut self.done, kind);
        }
        let header = match pcap::parse_record_header(rest, pos, &f.format) {
            Ok(h) => h,
            Err(e) => {
                self.done = true;
                return Some(Err(f.damage_anywhere().unwrap_or(e)));
            }
        };
        let available = rest.len() as u64 - RECORD_HEADER_LEN;
        if available < u64::from(header.caplen) {
            let kind = ErrorKind::TruncatedPacket { caplen: header.caplen, available };
            return fail(&mut self.done, kind);
        }
        let end = pos + RECORD_HEADER_LEN + u64::from(header.caplen);
        // Deliver only a record that lies wholly before any damage to the mapping.
        if let Some(e) = f.damage_before(end) {
            self.done = true;
            return Some(Err(e));
        }
        let loc = header.locate(pos, f.format.snaplen);
        if loc.clipped {
            self.clipped.count += 1;
            self.clipped.first_offset.get_or_insert(pos);
        }
        if !loc.timestamp.is_normal() {
            self.odd_fractions.add(pos);
        }
        self.pos = end;
        let data = &f.bytes[loc.data_offset as usize..][..loc.caplen as usize];
        Some(Ok(Packet {
            timestamp: loc.timestamp,
            wire_len: loc.wire_len,
            data,
            interface: 0,
            link_type: f.link_type,
            offset: pos,
        }))
    }
}
