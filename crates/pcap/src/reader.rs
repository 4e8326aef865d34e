//! The reader: one parser over two ways of getting bytes.
//!
//! [`open`] memory-maps a regular file, so the whole file is one slice and packets borrow it
//! directly. Anything that cannot be mapped (a pipe, standard input with `-`) goes through the
//! streaming source: a buffer refilled from the [`Read`]er, which only ever moves forward. Both
//! answer the same question, "give me `len` bytes at `offset`", so the pcap and pcapng parsers
//! above them do not know which one they run on.
//!
//! A mapped file can shrink under the reader (log rotation, a capture ring, `-r X -w X`). The
//! mapping is a [`sift_sys::mmap::MappedFile`], which turns the fault of touching a vanished
//! page into zeros plus a recorded offset; the reader probes the mapping after parsing each
//! record ([`MappedFile::probe`]: touch the record's end, one atomic load) and delivers the
//! record only if the damage starts at or past its end, else it ends with
//! [`ErrorKind::TruncatedWhileReading`] located at the damage. At the end of the file, and
//! after a parse error, it also compares the file's size with the mapping's (`fstat`).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sift_sys::mmap::{Advice, MappedFile};

use crate::error::{Error, ErrorKind};
use crate::pcap;
use crate::pcapng::{self, NgState};
use crate::types::{Interface, Packet, PacketFlags, Precision, Timestamp};

/// Where the packet bytes of the current record are and what they mean.
pub(crate) struct PacketLoc {
    pub data_offset: u64,
    pub caplen: u32,
    pub wire_len: u32,
    pub timestamp: Timestamp,
    pub interface: u32,
    pub record_offset: u64,
    /// The record held more bytes than the snaplen; only `caplen` of them are delivered.
    pub clipped: bool,
    /// A pcapng packet block's `epb_flags` (`pack_flags`), when it has one.
    pub flags: Option<PacketFlags>,
}

/// The bytes of a capture, either all at once or as a forward-only stream.
pub(crate) enum Source {
    Whole(Whole),
    Stream(Stream),
}

pub(crate) enum Whole {
    Mapped(MappedFile),
    Owned(Vec<u8>),
}

impl Whole {
    fn bytes(&self) -> &[u8] {
        match self {
            Whole::Mapped(m) => m.bytes(),
            Whole::Owned(v) => v,
        }
    }

    fn mapping(&self) -> Option<&MappedFile> {
        match self {
            Whole::Mapped(m) => Some(m),
            Whole::Owned(_) => None,
        }
    }
}

/// The located error for a mapping whose bytes from `at` on are gone.
pub(crate) fn damage_error(map: &MappedFile, at: u64) -> Error {
    let kind = match map.current_size() {
        Some(size) if size < map.len() as u64 => ErrorKind::TruncatedWhileReading { size },
        // A page that faulted although the file is as long as ever: an I/O error, or a file
        // truncated and written again in between.
        _ => ErrorKind::Io(io::Error::other(
            "a page of the mapped file could not be read (an I/O error, or the file was \
             truncated and rewritten while being read)",
        )),
    };
    Error { offset: at, kind }
}

/// Damage checks on an optional mapping (none for bytes in memory or a stream).
pub(crate) trait DamageCheck {
    fn mapping(&self) -> Option<&MappedFile>;

    /// The damage error if the bytes before `end` (a record's end) are not all the file's
    /// ([`MappedFile::probe`]).
    fn damage_before(&self, end: u64) -> Option<Error> {
        let map = self.mapping()?;
        map.probe(end).filter(|&at| at < end).map(|at| damage_error(map, at))
    }

    /// The damage error if any damage was seen or the file is now shorter than the mapping
    /// (one `fstat`): at the end of a read, and to explain a parse error.
    fn damage_anywhere(&self) -> Option<Error> {
        let map = self.mapping()?;
        map.check_size().map(|at| damage_error(map, at))
    }
}

impl DamageCheck for Source {
    fn mapping(&self) -> Option<&MappedFile> {
        match self {
            Source::Whole(w) => w.mapping(),
            Source::Stream(_) => None,
        }
    }
}

pub(crate) struct Stream {
    inner: Box<dyn Read + Send>,
    /// Storage; `buf[start..end]` holds the file's bytes from offset `base` on, and
    /// `buf[end..]` is spare room for the next read.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    base: u64,
    eof: bool,
}

/// The stream buffer starts small (many streams are tiny) and doubles up to this size, or to
/// the largest record seen.
const STREAM_CHUNK: usize = 1 << 20;
const STREAM_FIRST: usize = 1 << 16;

impl Source {
    /// Up to `len` bytes at `offset`: fewer only where the input ends. For a stream, `offset`
    /// must not go backwards past bytes already released.
    pub(crate) fn peek(&mut self, offset: u64, len: usize) -> io::Result<&[u8]> {
        match self {
            Source::Whole(w) => {
                let bytes = w.bytes();
                let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
                let end = start.saturating_add(len).min(bytes.len());
                Ok(&bytes[start..end])
            }
            Source::Stream(s) => s.peek(offset, len),
        }
    }
}

impl Stream {
    fn new(inner: Box<dyn Read + Send>) -> Self {
        Stream { inner, buf: Vec::new(), start: 0, end: 0, base: 0, eof: false }
    }

    fn peek(&mut self, offset: u64, len: usize) -> io::Result<&[u8]> {
        // Release what lies before `offset`: the parser never looks back.
        let skip = offset.saturating_sub(self.base);
        let held = (self.end - self.start) as u64;
        if skip >= held {
            self.base += held;
            self.start = 0;
            self.end = 0;
            // Bytes between the held data and `offset` are read and dropped.
            let mut to_skip = skip - held;
            let mut sink = [0u8; 8192];
            while to_skip > 0 && !self.eof {
                let want = to_skip.min(sink.len() as u64) as usize;
                let n = read_some(&mut self.inner, &mut sink[..want])?;
                self.eof = n == 0;
                to_skip -= n as u64;
                self.base += n as u64;
            }
        } else {
            self.start += skip as usize;
            self.base += skip;
        }
        // Fill until `len` bytes are held or the input ends.
        while self.end - self.start < len && !self.eof {
            if self.end == self.buf.len() {
                // Out of room: move the held bytes to the front, then grow if still needed.
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                let need = len.max((self.buf.len() * 2).clamp(STREAM_FIRST, STREAM_CHUNK));
                if self.buf.len() < need {
                    self.buf.resize(need, 0);
                }
            }
            let n = read_some(&mut self.inner, &mut self.buf[self.end..])?;
            self.end += n;
            self.eof = n == 0;
        }
        let stop = self.end.min(self.start + len);
        Ok(&self.buf[self.start..stop])
    }
}

fn read_some(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The format of an open capture file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap.
    Pcap {
        /// Timestamp precision (from the magic number).
        precision: Precision,
        /// Whether the file's fields are big-endian.
        big_endian: bool,
        /// `(major, minor)` version.
        version: (u16, u16),
    },
    /// pcapng (the byte order may change from section to section).
    Pcapng,
}

enum State {
    Pcap(pcap::RecordFormat),
    Pcapng(NgState),
}

/// A capture-file reader over a mapped file or a stream; see the crate documentation.
pub struct Reader {
    source: Source,
    format: Format,
    state: State,
    interfaces: Vec<Interface>,
    pos: u64,
    done: bool,
    clipped: ClippedRecords,
    /// Snapshot lengths adjusted at open (pcap; pcapng counts its own as it reads).
    snaplens: Tally,
    odd_fractions: Tally,
    /// An error met while filling a batch after some packets, for the next call
    /// ([`Reader::next_batch`]).
    held_error: Option<Error>,
    /// Where the packets of the batch being filled are (reused from batch to batch).
    batch_locs: Vec<PacketLoc>,
}

/// Records that held more bytes than their snaplen and were cut to it (as libpcap does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClippedRecords {
    /// How many records were cut.
    pub count: u64,
    /// Byte offset of the first one.
    pub first_offset: Option<u64>,
}

/// Damaged blocks, or damaged parts of blocks, that the reader skipped to read on, as libpcap
/// does (a statistics block too short for its fields, a section header whose trailing length
/// differs, options past the end of a block libpcap does not read options of…). Callers
/// should warn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkippedDamage {
    /// How many blocks were skipped in part or whole.
    pub count: u64,
    /// Byte offset of the first one.
    pub first_offset: Option<u64>,
}

impl SkippedDamage {
    /// Counts one more, at `offset`.
    pub(crate) fn add(&mut self, offset: u64) {
        self.count += 1;
        self.first_offset.get_or_insert(offset);
    }
}

/// What the reader read as libpcap does though the file says otherwise, or found out of range
/// and kept, without a word from libpcap; callers should warn once per kind, with the count.
/// Copies are as tcpdump's either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adjustments {
    /// Bogus snapshot lengths (0, or above 2^31 − 1: a pcap file header's, a pcapng
    /// interface's) read as the link type's largest ([`crate::adjusted_snaplen`]); a copy's
    /// header says that largest, as tcpdump's does.
    pub snaplens: u64,
    /// The first such snapshot length, as the file gives it.
    pub first_snaplen: Option<u32>,
    /// pcap records whose fraction of a second is a second or more: kept as recorded, as
    /// libpcap keeps them ([`Timestamp::from_record`]), so a copy writes them unchanged.
    pub odd_fractions: u64,
    /// Byte offset of the first such record.
    pub first_odd_fraction: Option<u64>,
}

/// A count and the first value or offset counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub count: u64,
    pub first: Option<u64>,
}

impl Tally {
    pub(crate) fn add(&mut self, what: u64) {
        self.count += 1;
        self.first.get_or_insert(what);
    }
}

/// Whether writing `output` would overwrite the file `input` reads (`sift -r X -w X`, or
/// another name for it: a link, a path through `..`): both exist, are regular files and have the
/// same device and inode. `-` means standard input for `input` and standard output for
/// `output`. An output that does not exist yet is not the input. Callers refuse such a pair
/// before creating the output (creating it would empty the input).
pub fn same_file(input: &Path, output: &Path) -> io::Result<bool> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let (Some(a), Some(b)) =
        (existing(input, io::stdin().as_fd())?, existing(output, io::stdout().as_fd())?)
    else {
        return Ok(false);
    };
    Ok(a.is_file() && b.is_file() && a.dev() == b.dev() && a.ino() == b.ino())
}

/// The metadata of `path` (of `stdio` for `-`), `None` if it does not exist.
fn existing(
    path: &Path,
    stdio: std::os::fd::BorrowedFd<'_>,
) -> io::Result<Option<std::fs::Metadata>> {
    if path.as_os_str() == "-" {
        return File::from(stdio.try_clone_to_owned()?).metadata().map(Some);
    }
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens a capture file: `-` reads standard input; regular files are memory-mapped, anything
/// else is streamed.
pub fn open(path: &Path) -> Result<Reader, Error> {
    if path.as_os_str() == "-" {
        return Reader::from_read(Box::new(io::stdin()));
    }
    let io_err = |e| Error { offset: 0, kind: ErrorKind::Io(e) };
    let file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_file() {
        if meta.len() == 0 {
            return Err(Error { offset: 0, kind: ErrorKind::Empty });
        }
        if let Some(map) = map_file(&file) {
            return Reader::from_source(Source::Whole(Whole::Mapped(map)));
        }
    }
    Reader::from_read(Box::new(file))
}

/// Maps a regular file read-only; `None` when the system refuses, so the caller streams instead.
fn map_file(file: &File) -> Option<MappedFile> {
    let map = MappedFile::map(file).ok()?;
    // Sequential access: let the kernel read ahead aggressively. A failed hint is harmless.
    let _ = map.advise(Advice::Sequential);
    Some(map)
}

impl Reader {
    /// Reads a capture held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Reader, Error> {
        if bytes.is_empty() {
            return Err(Error { offset: 0, kind: ErrorKind::Empty });
        }
        Reader::from_source(Source::Whole(Whole::Owned(bytes)))
    }

    /// Reads a capture from a stream (a pipe, a socket, standard input).
    pub fn from_read(inner: Box<dyn Read + Send>) -> Result<Reader, Error> {
        Reader::from_source(Source::Stream(Stream::new(inner)))
    }

    fn from_source(mut source: Source) -> Result<Reader, Error> {
        // A file that shrank between its size and its header being read: say so.
        Reader::open_source(&mut source).map_err(|e| source.damage_anywhere().unwrap_or(e)).map(
            |(format, state, interfaces, pos, snaplens)| Reader {
                source,
                format,
                state,
                interfaces,
                pos,
                done: false,
                clipped: ClippedRecords::default(),
                snaplens,
                odd_fractions: Tally::default(),
                held_error: None,
                batch_locs: Vec::new(),
            },
        )
    }

    /// Reads the file header (or first section header) of `source`; also returns the pcap
    /// header's snapshot length if it was bogus.
    #[allow(clippy::type_complexity)]
    fn open_source(
        source: &mut Source,
    ) -> Result<(Format, State, Vec<Interface>, u64, Tally), Error> {
        let head = source.peek(0, 4).map_err(|e| Error { offset: 0, kind: ErrorKind::Io(e) })?;
        if head.is_empty() {
            return Err(Error { offset: 0, kind: ErrorKind::Empty });
        }
        if head.len() < 4 {
            let kind = ErrorKind::TruncatedFileHeader { needed: 4, available: head.len() as u64 };
            return Err(Error { offset: 0, kind });
        }
        let magic = [head[0], head[1], head[2], head[3]];
        if let Some((big_endian, precision)) = pcap::magic(magic) {
            let header = pcap::read_file_header(source, big_endian)?;
            // libpcap reads a bogus snapshot length as the link type's largest, and tcpdump
            // writes that into a copy's header.
            let snaplen = crate::adjusted_snaplen(header.link_type, header.snaplen);
            let mut snaplens = Tally::default();
            if snaplen != header.snaplen {
                snaplens.add(u64::from(header.snaplen));
            }
            let mut iface = Interface::new(header.link_type, snaplen, precision.resolution());
            iface.link_type_ext = header.link_type_ext;
            iface.big_endian = big_endian;
            let records = pcap::RecordFormat {
                big_endian,
                precision,
                snaplen,
                max_caplen: crate::max_snaplen(header.link_type),
            };
            return Ok((
                Format::Pcap { precision, big_endian, version: header.version },
                State::Pcap(records),
                vec![iface],
                pcap::FILE_HEADER_LEN,
                snaplens,
            ));
        }
        if u32::from_le_bytes(magic) == pcapng::SHB_TYPE {
            let mut state = NgState::default();
            // The first block must be a section header; read it now so that a file that is
            // not pcapng after all fails at open, like libpcap. Like libpcap, read on to the
            // first interface: damage before it fails the open, and the interface is known
            // before the first packet is read.
            let pos = pcapng::read_first_section(source, &mut state)?;
            let mut interfaces = Vec::new();
            let pos = pcapng::read_to_first_interface(source, pos, &mut state, &mut interfaces)?;
            return Ok((Format::Pcapng, State::Pcapng(state), interfaces, pos, Tally::default()));
        }
        Err(Error { offset: 0, kind: ErrorKind::BadMagic(u32::from_be_bytes(magic)) })
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The interfaces described so far (a pcapng file may describe more as reading goes on).
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// Records cut to their snaplen so far (libpcap does the same silently; callers should warn).
    pub fn clipped_records(&self) -> ClippedRecords {
        self.clipped
    }

    /// Damaged blocks skipped so far to read on where libpcap reads on (pcapng only; callers
    /// should warn).
    pub fn skipped_damage(&self) -> SkippedDamage {
        match &self.state {
            State::Pcapng(ng) => ng.skipped,
            State::Pcap(_) => SkippedDamage::default(),
        }
    }

    /// Values read as libpcap reads them though the file says otherwise, or kept out of range,
    /// so far (callers should warn once per kind, with the count). A parallel read of a pcap
    /// file ([`crate::split`]) sees the header's snapshot length here, and counts odd fractions
    /// itself ([`crate::split::Records::odd_fractions`]).
    pub fn adjustments(&self) -> Adjustments {
        let snaplens = match &self.state {
            State::Pcapng(ng) => ng.snaplens,
            State::Pcap(_) => self.snaplens,
        };
        Adjustments {
            snaplens: snaplens.count,
            first_snaplen: snaplens.first.map(|v| v as u32),
            odd_fractions: self.odd_fractions.count,
            first_odd_fraction: self.odd_fractions.first,
        }
    }

    /// The whole file as classic pcap bytes, for reading it from several threads
    /// ([`crate::split`]); `None` for pcapng or a stream.
    pub fn pcap_bytes(&self) -> Option<crate::split::PcapBytes<'_>> {
        let (State::Pcap(format), Source::Whole(whole)) = (&self.state, &self.source) else {
            return None;
        };
        let iface = self.interfaces.first()?;
        Some(crate::split::PcapBytes::new(whole.bytes(), whole.mapping(), *format, iface.link_type))
    }

    /// The byte offset of the next record to read.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next packet, `Ok(None)` at the clean end of the file, or the error that ends the
    /// read. After an error, or at the end, every further call returns `Ok(None)`.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, Error> {
        Ok(self.next_with_interfaces()?.map(|(p, _)| p))
    }

    /// Like [`next_packet`](Self::next_packet), also returning the interfaces known so far
    /// (which include the packet's), for callers that must describe them while holding it.
    pub fn next_with_interfaces(&mut self) -> Result<Option<(Packet<'_>, &[Interface])>, Error> {
        Ok(self.next_with_flags()?.map(|(p, interfaces, _)| (p, interfaces)))
    }

    /// Like [`next_with_interfaces`](Self::next_with_interfaces), also returning the packet's
    /// pcapng flags ([`PacketFlags`]: its direction), `None` when the record has none (a pcap
    /// record, a simple packet block, a packet block without the option).
    ///
    /// libpcap does not read packet blocks' options; sift reads them only for this word, and
    /// options it cannot walk (damaged) are ignored, as libpcap ignores them: the packet is
    /// delivered, without flags.
    #[allow(clippy::type_complexity)]
    pub fn next_with_flags(
        &mut self,
    ) -> Result<Option<(Packet<'_>, &[Interface], Option<PacketFlags>)>, Error> {
        let Some(loc) = self.next_loc()? else { return Ok(None) };
        let data = packet_data(&mut self.source, &loc, &mut self.done)?;
        let packet = loc.packet(data, &self.interfaces);
        Ok(Some((packet, &self.interfaces, loc.flags)))
    }

    /// Where the next packet is: its record parsed, checked against damage to the mapping, and
    /// the position moved past it. `Ok(None)` at the clean end and ever after an error or the
    /// end (but first the error a batch held back).
    fn next_loc(&mut self) -> Result<Option<PacketLoc>, Error> {
        if let Some(e) = self.held_error.take() {
            return Err(e);
        }
        if self.done {
            return Ok(None);
        }
        let located = match &mut self.state {
            State::Pcap(format) => pcap::next_record(&mut self.source, self.pos, format),
            State::Pcapng(ng) => {
                pcapng::next_packet(&mut self.source, self.pos, ng, &mut self.interfaces)
            }
        };
        match located {
            Ok(Some((loc, next))) => {
                // Deliver only a record that lies wholly before any damage to the mapping.
                if let Some(e) = self.source.damage_before(next) {
                    self.done = true;
                    return Err(e);
                }
                self.pos = next;
                if loc.clipped {
                    self.clipped.count += 1;
                    self.clipped.first_offset.get_or_insert(loc.record_offset);
                }
                if !loc.timestamp.is_normal() {
                    self.odd_fractions.add(loc.record_offset);
                }
                Ok(Some(loc))
            }
            Ok(None) => {
                self.done = true;
                // A clean end, unless the file shrank (within its last page, no fault says so).
                match self.source.damage_anywhere() {
                    Some(e) => Err(e),
                    None => Ok(None),
                }
            }
            Err(e) => {
                self.done = true;
                // Damage read as zeros makes the parser fail; the damage is the real cause.
                Err(self.source.damage_anywhere().unwrap_or(e))
            }
        }
    }

    /// Up to `max` next packets at once, into `out` (cleared first), and the interfaces known
    /// after them (the list their `interface` indexes): what as many calls of
    /// [`next_with_interfaces`](Self::next_with_interfaces) would give, for callers that
    /// filter packets a batch at a time. `out` stays empty at the end of the file.
    ///
    /// A file read whole (mapped or in memory, pcap or pcapng) gives up to `max` packets per
    /// call; a stream gives one, as the bytes of its packets do not stay in memory together.
    /// An error met after some packets of the batch is held back and returned by the next
    /// call, so that the packets before it are handled first, as one by one.
    pub fn next_batch<'s>(
        &'s mut self,
        max: usize,
        out: &mut Vec<Packet<'s>>,
    ) -> Result<&'s [Interface], Error> {
        out.clear();
        if !matches!(self.source, Source::Whole(_)) {
            if let Some(loc) = self.next_loc()? {
                let data = packet_data(&mut self.source, &loc, &mut self.done)?;
                out.push(loc.packet(data, &self.interfaces));
            }
            return Ok(&self.interfaces);
        }
        let mut locs = std::mem::take(&mut self.batch_locs);
        locs.clear();
        while locs.len() < max {
            match self.next_loc() {
                Ok(Some(loc)) => locs.push(loc),
                Ok(None) => break,
                Err(e) if locs.is_empty() => {
                    self.batch_locs = locs;
                    return Err(e);
                }
                Err(e) => {
                    self.held_error = Some(e);
                    break;
                }
            }
        }
        self.batch_locs = locs;
        let bytes = match &self.source {
            Source::Whole(whole) => whole.bytes(),
            Source::Stream(_) => &[],
        };
        for loc in &self.batch_locs {
            let start = usize::try_from(loc.data_offset).unwrap_or(usize::MAX);
            let Some(data) = bytes.get(start..).and_then(|b| b.get(..loc.caplen as usize)) else {
                // The parsers checked that the bytes are there: as in `packet_data`.
                self.done = true;
                let e = Error { offset: loc.record_offset, kind: ErrorKind::Io(shrank()) };
                if out.is_empty() {
                    return Err(e);
                }
                self.held_error = Some(e);
                break;
            };
            out.push(loc.packet(data, &self.interfaces));
        }
        Ok(&self.interfaces)
    }
}

/// The captured bytes of the packet at `loc` (a record [`Reader::next_loc`] just parsed);
/// `done` is set on failure.
fn packet_data<'s>(
    source: &'s mut Source,
    loc: &PacketLoc,
    done: &mut bool,
) -> Result<&'s [u8], Error> {
    match source.peek(loc.data_offset, loc.caplen as usize) {
        Ok(d) if d.len() == loc.caplen as usize => Ok(d),
        // The parsers checked that the bytes are there; a short read here means the stream
        // changed under us, reported as the I/O problem it is.
        Ok(_) => {
            *done = true;
            Err(Error { offset: loc.record_offset, kind: ErrorKind::Io(shrank()) })
        }
        Err(e) => {
            *done = true;
            Err(Error { offset: loc.record_offset, kind: ErrorKind::Io(e) })
        }
    }
}

/// The error of bytes that the parser saw but that are gone when the packet is taken.
fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "input shrank while reading")
}

impl PacketLoc {
    /// The packet at this place, with its captured bytes `data` and its interface's link type
    /// (from `interfaces`).
    fn packet<'a>(&self, data: &'a [u8], interfaces: &[Interface]) -> Packet<'a> {
        Packet {
            timestamp: self.timestamp,
            wire_len: self.wire_len,
            data,
            interface: self.interface,
            link_type: interfaces[self.interface as usize].link_type,
            offset: self.record_offset,
        }
    }
}
