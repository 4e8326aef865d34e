//! Splitting packets by many named filters in one pass: `sift --split FILTERS.txt`.
//!
//! **Why it exists.** A user who splits a capture (or a live tap) per tenant, VLAN, subnet or
//! service would otherwise run tcpdump once per filter. [`crate::multi`] compiles the whole
//! set into one decision program; this module is what the command line does around it, so
//! that the bindings get the same behaviour:
//!
//! * [`Splitter`]: the set compiled for each link type on first use, as [`crate::Filter`]
//!   compiles one expression (a pcapng file may change link type, and the same expression is
//!   other code on another link type or in a file of the other byte order), deciding packets
//!   one at a time or a batch at a time — every matching filter ([`Decide::All`]) or CSPF's
//!   first match ([`Decide::First`], `continue` flags respected);
//! * [`SplitOutputs`]: one output file per filter, named from a `-w` pattern with one `%s`,
//!   each written exactly as `sift -r CAPTURE -w FILE EXPR` writes that filter's packets
//!   (the same header, from the first packet it keeps, else the capture's first interface).
//!
//! Thousands of filters mean thousands of output files: memory and descriptors stay bounded.
//! Each file's bytes wait in a small buffer of their own ([`PENDING_BYTES`]), and only the
//! first [`OPEN_FILES`] files keep a descriptor; the others are reopened (appending) for each
//! write-out.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sift_compile::multi::FilterSet;
use sift_filter::{Resolver, SystemResolver};
use sift_pcap::{Interface, LinkType, Packet, Precision};
use sift_vm::PacketRef;

pub use sift_compile::multi::Decide;

use crate::filter::{Engine, Target};
use crate::multi::{Decision, MultiFilter, MultiFilterError};
use crate::output::{OutputError, Writer};

/// Bytes a file's output gathers before they are written out.
pub const PENDING_BYTES: usize = 16 << 10;
/// How many output files keep a descriptor open; the others are reopened for each write-out.
pub const OPEN_FILES: usize = 512;

/// Why packets cannot be split.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// The filter set gives no decision program.
    #[error(transparent)]
    Filters(#[from] MultiFilterError),
    /// The output pattern does not hold exactly one `%s`.
    #[error(
        "{pattern}: the output name needs exactly one `%s`, which each filter's name replaces \
         (as in -w 'out-%s.pcap')"
    )]
    Pattern {
        /// The pattern.
        pattern: String,
    },
    /// An output file cannot be created or written.
    #[error("{path}")]
    Output {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: OutputError,
    },
}

/// A filter set compiled for each link type it meets, deciding packets.
pub struct Splitter {
    set: FilterSet,
    origin: String,
    engine: Engine,
    optimize: bool,
    mode: Decide,
    live: bool,
    resolver: Box<dyn Resolver + Send>,
    /// By link type and the byte order of the interface's file, in the order met.
    compiled: Vec<((LinkType, bool), MultiFilter, Decision)>,
}

impl std::fmt::Debug for Splitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Splitter")
            .field("origin", &self.origin)
            .field("filters", &self.set.len())
            .field("mode", &self.mode)
            .field("link_types", &self.compiled.len())
            .finish_non_exhaustive()
    }
}

impl Splitter {
    /// `set` (read from `origin`, named in errors), every match, on the JIT, optimized, names
    /// looked up in the system's files. Nothing is compiled before the first interface.
    pub fn new(set: FilterSet, origin: impl Into<String>) -> Splitter {
        Splitter {
            set,
            origin: origin.into(),
            engine: Engine::default(),
            optimize: true,
            mode: Decide::All,
            live: false,
            resolver: Box::new(SystemResolver::new()),
            compiled: Vec::new(),
        }
    }

    /// Reads a filter-set file (bounded as [`crate::text`] bounds text files).
    pub fn from_file(path: &Path) -> Result<Splitter, SplitFileError> {
        let text = crate::text::read(path, crate::text::TextKind::FilterSet)?;
        let origin = path.display().to_string();
        let set = crate::multi::parse_set(&text, &origin)?;
        Ok(Splitter::new(set, origin))
    }

    /// Runs on `engine` instead.
    pub fn with_engine(mut self, engine: Engine) -> Splitter {
        self.engine = engine;
        self
    }

    /// Whether to run sift's optimizer on each filter (the default; verdicts are the same).
    pub fn with_optimizer(mut self, optimize: bool) -> Splitter {
        self.optimize = optimize;
        self
    }

    /// Every matching filter ([`Decide::All`], the default) or the first match.
    pub fn with_mode(mut self, mode: Decide) -> Splitter {
        self.mode = mode;
        self
    }

    /// Looks names up with `resolver` instead of the system's files.
    pub fn with_resolver(mut self, resolver: Box<dyn Resolver + Send>) -> Splitter {
        self.resolver = resolver;
        self
    }

    /// For a live capture's packets, decided in user space on the frames as they are written
    /// (VLAN tags put back, no Linux ancillary data): compiled as for a file, without a file's
    /// byte order.
    pub fn for_live(mut self) -> Splitter {
        self.live = true;
        self
    }

    /// The set, in rank order (decreasing priority, then as written).
    pub fn set(&self) -> &FilterSet {
        &self.set
    }

    /// How many filters.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether there is none (a parsed set always has one).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The name of the filter ranked `rank`.
    pub fn name(&self, rank: u32) -> &str {
        &self.set.filters()[rank as usize].name
    }

    /// The engine that runs (`jit` or `interp`; `none` before the first interface).
    pub fn engine_name(&self) -> &'static str {
        self.compiled
            .first()
            .and_then(|(_, m, _)| (0..m.program().len() as u32).find_map(|r| m.member_engine(r)))
            .map_or("none", |f| f.engine_name())
    }

    /// What the set is compiled for, for packets of `iface`.
    fn target(&self, iface: &Interface) -> Target {
        let t = Target::interface(iface);
        if self.live { Target { netmask: None, savefile: None, ..t } } else { t }
    }

    /// Compiles the set for `iface`'s packets now, unless it was for their link type before.
    pub fn prepare(&mut self, iface: &Interface) -> Result<&MultiFilter, MultiFilterError> {
        let i = self.index(iface)?;
        Ok(&self.compiled[i].1)
    }

    fn index(&mut self, iface: &Interface) -> Result<usize, MultiFilterError> {
        let key = (iface.link_type, iface.big_endian);
        if let Some(i) = self.compiled.iter().position(|(k, _, _)| *k == key) {
            return Ok(i);
        }
        let target = self.target(iface);
        let program = crate::multi::compile(
            &self.set,
            &target,
            self.optimize,
            self.resolver.as_ref(),
            &self.origin,
        )?;
        let filter = MultiFilter::new(program, self.engine);
        let decision = filter.decision();
        self.compiled.push((key, filter, decision));
        Ok(self.compiled.len() - 1)
    }

    /// The ranks of the filters `packet` (of interface `iface`) goes to, ascending.
    pub fn decide(
        &mut self,
        packet: &Packet<'_>,
        iface: &Interface,
    ) -> Result<&[u32], MultiFilterError> {
        let i = self.index(iface)?;
        let (_, filter, decision) = &mut self.compiled[i];
        Ok(filter.decide(packet.data, packet.wire_len, self.mode, decision))
    }

    /// Decides every packet of a batch (`interfaces`: the list the packets' `interface`
    /// indexes): `out(i, ranks)` for each packet `i` that goes to at least one filter, in
    /// order. Consecutive packets of one link type are decided through
    /// [`MultiFilter::decide_batch`] (their headers loaded ahead). When the set cannot be
    /// compiled for a packet's link type, the packets before it have been decided and the
    /// error is returned.
    pub fn decide_batch(
        &mut self,
        packets: &[Packet<'_>],
        interfaces: &[Interface],
        mut out: impl FnMut(usize, &[u32]),
    ) -> Result<(), MultiFilterError> {
        let mut at = 0;
        let mut refs = Vec::with_capacity(packets.len());
        while at < packets.len() {
            let key = |p: &Packet<'_>| (p.link_type, interfaces[p.interface as usize].big_endian);
            let first = key(&packets[at]);
            let run =
                packets[at..].iter().position(|p| key(p) != first).unwrap_or(packets.len() - at);
            let i = self.index(&interfaces[packets[at].interface as usize])?;
            let (_, filter, decision) = &mut self.compiled[i];
            refs.clear();
            refs.extend(packets[at..at + run].iter().map(|p| PacketRef::new(p.data, p.wire_len)));
            filter.decide_batch(&refs, self.mode, decision, |j, ranks| out(at + j, ranks));
            at += run;
        }
        Ok(())
    }
}

/// Why a filter-set file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitFileError {
    /// The file cannot be read.
    #[error(transparent)]
    Read(#[from] crate::text::TextError),
    /// It is not a filter set.
    #[error(transparent)]
    Set(#[from] MultiFilterError),
}

/// The output file name for filter `name`: the pattern with its `%s` replaced.
pub fn output_path(pattern: &Path, name: &str) -> Option<PathBuf> {
    let text = pattern.to_str()?;
    let (before, after) = text.split_once("%s")?;
    if after.contains("%s") {
        return None;
    }
    Some(PathBuf::from(format!("{before}{name}{after}")))
}

/// Checks an output pattern: exactly one `%s`.
pub fn check_pattern(pattern: &Path) -> Result<(), SplitError> {
    match output_path(pattern, "x") {
        Some(_) => Ok(()),
        None => Err(SplitError::Pattern { pattern: pattern.display().to_string() }),
    }
}

/// How the output files are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputFormat {
    /// pcapng instead of pcap.
    pub pcapng: bool,
    /// The timestamp precision (pcap), or the resolution every interface gets (pcapng);
    /// `None`: pcap's microseconds, pcapng's interfaces' own.
    pub precision: Option<Precision>,
    /// Each packet written out at once (`-U`).
    pub packet_buffered: bool,
}

/// One output file per filter, opened on the filter's first packet.
pub struct SplitOutputs {
    paths: Vec<PathBuf>,
    format: OutputFormat,
    outs: Vec<Option<Writer<Pending>>>,
    written: Vec<u64>,
    opened: usize,
    /// Whether a flush writes the gathered bytes out (`-U`, and during [`Self::flush`]).
    through: Arc<AtomicBool>,
}

impl std::fmt::Debug for SplitOutputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitOutputs")
            .field("files", &self.paths.len())
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

impl SplitOutputs {
    /// The files of the set's filters (by rank) named from `pattern` (exactly one `%s`);
    /// nothing is created yet.
    pub fn new(
        pattern: &Path,
        set: &FilterSet,
        format: OutputFormat,
    ) -> Result<SplitOutputs, SplitError> {
        check_pattern(pattern)?;
        let paths: Vec<PathBuf> = set
            .filters()
            .iter()
            .map(|f| output_path(pattern, &f.name).expect("the pattern was checked"))
            .collect();
        let n = paths.len();
        Ok(SplitOutputs {
            paths,
            format,
            outs: (0..n).map(|_| None).collect(),
            written: vec![0; n],
            opened: 0,
            through: Arc::new(AtomicBool::new(format.packet_buffered)),
        })
    }

    /// Each filter's output file, by rank.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Packets written so far, by rank.
    pub fn written(&self) -> &[u64] {
        &self.written
    }

    fn error(&self, rank: usize, source: OutputError) -> SplitError {
        SplitError::Output { path: self.paths[rank].display().to_string(), source }
    }

    /// Creates filter `rank`'s file for packets like those of `first`.
    fn open(&mut self, rank: usize, first: &Interface) -> Result<(), SplitError> {
        let keep_open = self.opened < OPEN_FILES;
        let pending = Pending::create(&self.paths[rank], keep_open, self.through.clone())
            .map_err(|source| self.error(rank, source))?;
        self.opened += 1;
        let writer = if self.format.pcapng {
            Writer::pcapng(pending, self.format.precision.map(Precision::resolution))
        } else {
            Writer::pcap(pending, first, self.format.precision.unwrap_or_default())
        }
        .map_err(|e| self.error(rank, e))?;
        self.outs[rank] = Some(writer);
        Ok(())
    }

    /// Writes `packet` (whose `interface` indexes `interfaces`) to filter `rank`'s file.
    pub fn write(
        &mut self,
        rank: u32,
        packet: &Packet<'_>,
        interfaces: &[Interface],
    ) -> Result<(), SplitError> {
        let r = rank as usize;
        if self.outs[r].is_none() {
            self.open(r, &interfaces[packet.interface as usize])?;
        }
        let Some(w) = self.outs[r].as_mut() else { unreachable!("opened above") };
        // The writer's own buffer is handed on at once: the file's bytes wait in `Pending`,
        // whose buffer is small.
        let done = w.write(packet, interfaces).and_then(|()| w.flush());
        done.map_err(|e| self.error(r, e))?;
        self.written[r] += 1;
        Ok(())
    }

    /// Writes out what every file holds (SIGUSR2).
    pub fn flush(&mut self) -> Result<(), SplitError> {
        self.through.store(true, Ordering::Relaxed);
        let mut result = Ok(());
        for r in 0..self.outs.len() {
            if let Some(w) = self.outs[r].as_mut()
                && let Err(e) = w.flush()
            {
                result = Err(self.error(r, e));
                break;
            }
        }
        self.through.store(self.format.packet_buffered, Ordering::Relaxed);
        result
    }

    /// Ends every file; filters that kept no packet get a file too (for packets like those of
    /// `first`), as `sift -r … -w FILE EXPR` writes one. All files are ended even after an
    /// error; the first error is returned.
    pub fn finish(mut self, first: &Interface) -> Result<Vec<u64>, SplitError> {
        let mut result = Ok(());
        for r in 0..self.outs.len() {
            if self.outs[r].is_none()
                && let Err(e) = self.open(r, first)
            {
                result = result.and(Err(e));
                continue;
            }
            let Some(w) = self.outs[r].take() else { continue };
            let done = w.finish().and_then(|mut p| p.write_out().map_err(OutputError::Io));
            if let Err(e) = done {
                result = result.and(Err(self.error(r, e)));
            }
        }
        result.map(|()| self.written)
    }

    /// Ends the files opened so far (after an error elsewhere), without creating the others.
    pub fn abandon(mut self) -> Result<(), SplitError> {
        let mut result = Ok(());
        for r in 0..self.outs.len() {
            let Some(w) = self.outs[r].take() else { continue };
            let done = w.finish().and_then(|mut p| p.write_out().map_err(OutputError::Io));
            if let Err(e) = done {
                result = result.and(Err(self.error(r, e)));
            }
        }
        result
    }
}

/// An output file's bytes on their way: gathered up to [`PENDING_BYTES`], then written out,
/// through a descriptor kept open or the file reopened for appending.
pub struct Pending {
    path: PathBuf,
    file: Option<File>,
    keep_open: bool,
    buf: Vec<u8>,
    through: Arc<AtomicBool>,
}

impl Pending {
    /// Creates (or truncates) the file now.
    fn create(
        path: &Path,
        keep_open: bool,
        through: Arc<AtomicBool>,
    ) -> Result<Pending, OutputError> {
        let file = File::create(path)
            .map_err(|source| OutputError::Create { path: path.display().to_string(), source })?;
        Ok(Pending {
            path: path.to_path_buf(),
            file: keep_open.then_some(file),
            keep_open,
            buf: Vec::new(),
            through,
        })
    }

    /// Writes what is gathered to the file.
    fn write_out(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(OpenOptions::new().append(true).open(&self.path)?),
        };
        let written = file.write_all(&self.buf);
        self.buf.clear();
        if !self.keep_open {
            self.file = None;
        }
        written
    }
}

impl Write for Pending {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= PENDING_BYTES {
            self.write_out()?;
        }
        Ok(data.len())
    }

    /// Usually nothing: the writer flushes after each packet to hand its bytes here; they are
    /// written out when enough are gathered, with `-U`, on request ([`SplitOutputs::flush`])
    /// and at the end.
    fn flush(&mut self) -> io::Result<()> {
        if self.through.load(Ordering::Relaxed) {
            self.write_out()?;
            if let Some(f) = &mut self.file {
                f.flush()?;
            }
        }
        Ok(())
    }
}
