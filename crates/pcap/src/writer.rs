//! Writers for pcap and pcapng, buffered.
//!
//! Both write little-endian files. [`PcapWriter`] writes the 24-byte header at creation, then
//! one record per packet, with the timestamp fields libpcap's `pcap_dump` would write
//! ([`Timestamp::timeval`]): a record read with odd fields gets them back unchanged, and a time
//! a pcap record cannot hold (before 1970 or past 2106, from pcapng) is written modulo 2^32, as
//! tcpdump writes it, and counted ([`PcapWriter::wrapped`]) so that the caller can warn. [`PcapngWriter`] writes a Section Header Block at creation, an
//! Interface Description Block each time [`PcapngWriter::add_interface`] is called (so
//! interfaces can appear mid-stream, before their first packet), Enhanced Packet Blocks, and at
//! [`PcapngWriter::finish`] an Interface Statistics Block per interface.
//!
//! [`PcapWriter::write_pieces_from`] copies records straight from a mapped input file, through
//! `writev`: the kernel reads the mapping. If the input shrinks meanwhile, the kernel meets a
//! vanished page (the call fails with `EFAULT` or writes short) or zeros that stand in for one.
//! So that method checks the input after each `writev` and reports the input's damage (not
//! `EFAULT`), with the output length up to the last record known to be the input's real bytes,
//! for the caller to cut a regular-file output back to.

use std::io::{self, BufWriter, Write};

use crate::pcap::{MAGIC_MICRO, MAGIC_NANO, RECORD_HEADER_LEN, u32_at};
use crate::pcapng::{BYTE_ORDER_MAGIC, EPB_FLAGS, EPB_TYPE, IDB_TYPE, ISB_TYPE, SHB_TYPE};
use crate::reader::{DamageCheck, damage_error};
use crate::split::PcapBytes;
use crate::types::{Interface, InterfaceStats, PacketFlags, Precision, Timestamp, TsResolution};
use sift_wire::LinkType;

/// Output buffer size, and the size of each `write`. 128 KiB: on the development machine's
/// kernel (6.x, ext4), writing a 1.2 GB capture in 1 MiB writes cost 2 s of system time and
/// in 128 KiB writes 0.4 s (`benches/offline-vs-tcpdump.sh`); smaller buffers only add calls.
const BUFFER: usize = 1 << 17;

/// A write failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The underlying writer failed.
    #[error("write error: {0}")]
    Io(#[from] io::Error),
    /// A packet longer than 4 GiB.
    #[error("packet of {0} bytes is too long to write")]
    TooLong(usize),
    /// A packet for an interface that was never added.
    #[error("no interface {0} was added to the pcapng writer")]
    UnknownInterface(u32),
    /// The input file the records were copied from shrank while being copied
    /// ([`PcapWriter::write_pieces_from`]).
    #[error("{error}")]
    Input {
        /// The input's damage, located in the input.
        error: crate::Error,
        /// The output's length up to the end of the last record known to hold the input's real
        /// bytes: a regular-file output should be cut back to it (`File::set_len`) once the
        /// writer is finished. Everything before it was written.
        complete: u64,
    },
}

/// Timestamps a writer could not hold and wrote changed; callers should warn once, with the
/// count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangedTimestamps {
    /// How many packets were written with a changed timestamp.
    pub count: u64,
    /// The first such timestamp, as given.
    pub first: Option<Timestamp>,
}

impl ChangedTimestamps {
    fn add(&mut self, ts: Timestamp) {
        self.count += 1;
        self.first.get_or_insert(ts);
    }
}

/// Writes a classic pcap file.
pub struct PcapWriter<W: Write> {
    out: BufWriter<W>,
    precision: Precision,
    /// Bytes written so far (the output's length once flushed).
    written: u64,
    /// Where pieces from the input lie, for the call of `write_pieces_from` under way.
    runs: Vec<InputRun>,
    wrapped: ChangedTimestamps,
}

/// A run of output bytes copied from the input's mapping: `len` bytes at output offset `out`
/// (from the start of the call) from input offset `input`.
#[derive(Clone, Copy, Debug)]
struct InputRun {
    out: u64,
    input: u64,
    len: u64,
}

/// What `write_pieces_from` watches: the input, and where this call's records end in it.
struct Watch<'s, 'a> {
    source: &'s PcapBytes<'a>,
    input_end: u64,
    /// The output's length when the call began.
    call_start: u64,
}

impl Watch<'_, '_> {
    /// The damage offset, if some record of this call may be affected (it is before
    /// `input_end`); `fstat` too when `thorough`.
    fn damage(&self, thorough: bool) -> Option<u64> {
        let map = self.source.mapping()?;
        let at = if thorough { map.check_size() } else { map.damaged_at() };
        at.filter(|&d| d < self.input_end)
    }

    /// Where in the input `part` lies, if it lies in the mapped input.
    fn input_offset(&self, part: &[u8]) -> Option<u64> {
        let bytes = self.source.bytes();
        let base = bytes.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        (at >= base && at + part.len() <= base + bytes.len()).then(|| (at - base) as u64)
    }

    /// How many output bytes of this call, from its start, are whole records known to be the
    /// input's real bytes when the input is gone from `damage` on. Records copied from the
    /// input are known by where they lie; records encoded by the caller lie, in the input,
    /// before the next copied one (records keep the input's order), so they are known real
    /// when that one starts before the damage; encoded records after the last such copied one
    /// are not known, and left out.
    fn proven(&self, runs: &[InputRun], damage: u64) -> u64 {
        let bytes = self.source.bytes();
        let mut proven = 0;
        for r in runs {
            if r.input + r.len <= damage {
                proven = r.out + r.len;
                continue;
            }
            if r.input <= damage {
                // Whole records of this run before the damage (runs start at a record).
                let mut at = r.input;
                while at + RECORD_HEADER_LEN <= damage {
                    let caplen = u32_at(bytes, at as usize + 8, self.source.format.big_endian);
                    let end = at + RECORD_HEADER_LEN + u64::from(caplen);
                    if end > damage || end > r.input + r.len {
                        break;
                    }
                    at = end;
                }
                proven = r.out + (at - r.input);
            }
            break;
        }
        proven
    }

    /// The error for damage at `damage`, with the output's provable length.
    fn failure(&self, runs: &[InputRun], damage: u64, written: u64) -> WriteError {
        let map = self.source.mapping().expect("damage is only seen in a mapping");
        let complete = (self.call_start + self.proven(runs, damage)).min(written);
        WriteError::Input { error: damage_error(map, damage), complete }
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header: `link_type` plus the upper link-type bits `link_type_ext` (FCS
    /// information, as read from a pcap file), the snapshot length and the timestamp precision.
    pub fn new(
        inner: W,
        link_type: LinkType,
        link_type_ext: u32,
        snaplen: u32,
        precision: Precision,
    ) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(BUFFER, inner);
        let magic = match precision {
            Precision::Micro => MAGIC_MICRO,
            Precision::Nano => MAGIC_NANO,
        };
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&magic.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0.
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(
            &(u32::from(link_type.number()) | (link_type_ext & 0xffff_0000)).to_le_bytes(),
        );
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            precision,
            written: h.len() as u64,
            runs: Vec::new(),
            wrapped: ChangedTimestamps::default(),
        })
    }

    /// Appends one packet: its timestamp, wire length and captured bytes. A time a pcap record
    /// cannot hold (seconds before 1970 or from 2106-02-07T06:28:16Z on) is written modulo
    /// 2^32, as tcpdump writes it, and counted ([`wrapped`](Self::wrapped)).
    pub fn write(&mut self, ts: Timestamp, wire_len: u32, data: &[u8]) -> Result<(), WriteError> {
        let h = Self::record_header(self.precision, ts, wire_len, data.len())?;
        if ts.is_normal() && ts.secs > u64::from(u32::MAX) {
            self.wrapped.add(ts);
        }
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        self.written += (h.len() + data.len()) as u64;
        Ok(())
    }

    /// Bytes written so far, the file header included (the output's length once flushed).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Packets written so far by [`write`](Self::write) whose time a pcap record cannot hold,
    /// written modulo 2^32 seconds (callers should warn once, with the count).
    pub fn wrapped(&self) -> ChangedTimestamps {
        self.wrapped
    }

    /// The 16-byte record header [`write`](Self::write) puts before `data_len` bytes: for
    /// callers that encode records themselves (in parallel) and append them to a file
    /// started by this writer. The timestamp fields are those libpcap's `pcap_dump` writes: the
    /// low 32 bits of [`Timestamp::timeval`] at `precision`.
    pub fn record_header(
        precision: Precision,
        ts: Timestamp,
        wire_len: u32,
        data_len: usize,
    ) -> Result<[u8; 16], WriteError> {
        let tv = ts.timeval(precision.unit());
        let (secs, frac) = (tv.sec as u32, tv.frac as u32);
        let caplen = u32::try_from(data_len).map_err(|_| WriteError::TooLong(data_len))?;
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&wire_len.to_le_bytes());
        Ok(h)
    }

    /// Writes records already encoded, given as pieces in order, gathered into `writev` calls
    /// of about 128 KiB (the writer's buffer size): the bytes are copied once, by the kernel.
    /// For pieces taken from a mapped input file
    /// ([`PcapBytes::verbatim`](crate::split::PcapBytes::verbatim)) use
    /// [`write_pieces_from`](Self::write_pieces_from), which also watches the input.
    pub fn write_pieces<'p>(
        &mut self,
        pieces: impl IntoIterator<Item = &'p [u8]>,
    ) -> Result<(), WriteError> {
        self.write_batches(pieces, None)
    }

    /// [`write_pieces`](Self::write_pieces) for whole records, some of them copied straight
    /// from `source`'s mapping (ranges from [`PcapBytes::verbatim`](crate::split::PcapBytes::verbatim),
    /// each starting at a record), all of them lying before `input_end` in the input (a
    /// chunk's [`Records::stop`](crate::split::Records::stop)), in the input's order.
    ///
    /// If the input shrinks during the copy, this stops and returns [`WriteError::Input`]: the
    /// input's located damage (not the `EFAULT` the kernel may give), and the output length up
    /// to the last record known to be the input's real bytes. The input is checked before
    /// writing (with `fstat`: records encoded by the caller were read from the mapping), after
    /// each `writev` (an atomic load) and at the end (`fstat` again, for a shrink within the
    /// last page, which faults nowhere). When `Ok`, every byte written is the input's.
    pub fn write_pieces_from<'p>(
        &mut self,
        source: &PcapBytes<'_>,
        input_end: u64,
        pieces: impl IntoIterator<Item = &'p [u8]>,
    ) -> Result<(), WriteError> {
        let watch = Watch { source, input_end, call_start: self.written };
        self.runs.clear();
        if let Some(damage) = watch.damage(true) {
            // Already damaged before this call: write only what is known to be real.
            let pieces: Vec<&[u8]> = pieces.into_iter().collect();
            let mut runs = Vec::new();
            let mut out = 0;
            for piece in &pieces {
                if let Some(input) = watch.input_offset(piece) {
                    push_run(&mut runs, InputRun { out, input, len: piece.len() as u64 });
                }
                out += piece.len() as u64;
            }
            let mut keep = watch.proven(&runs, damage);
            let prefix = pieces.into_iter().map_while(|p| {
                let take = (p.len() as u64).min(keep) as usize;
                keep -= take as u64;
                (take > 0).then(|| &p[..take])
            });
            self.write_batches(prefix, None)?;
            return Err(watch.failure(&runs, damage, self.written));
        }
        self.write_batches(pieces, Some(&watch))?;
        if let Some(damage) = watch.damage(true) {
            return Err(watch.failure(&self.runs, damage, self.written));
        }
        Ok(())
    }

    /// Gathers `pieces` into batches and writes them; with `watch`, notes where input pieces
    /// go and stops at damage.
    fn write_batches<'p>(
        &mut self,
        pieces: impl IntoIterator<Item = &'p [u8]>,
        watch: Option<&Watch<'_, '_>>,
    ) -> Result<(), WriteError> {
        const MAX_SLICES: usize = 1024;
        let mut batch: Vec<io::IoSlice<'p>> = Vec::with_capacity(MAX_SLICES);
        let mut bytes = 0;
        for piece in pieces {
            for part in piece.chunks(BUFFER) {
                if bytes + part.len() > BUFFER || batch.len() == MAX_SLICES {
                    self.write_slices(&mut batch, watch)?;
                    bytes = 0;
                }
                if let Some(w) = watch
                    && let Some(input) = w.input_offset(part)
                {
                    let out = self.written + bytes as u64 - w.call_start;
                    push_run(&mut self.runs, InputRun { out, input, len: part.len() as u64 });
                }
                bytes += part.len();
                batch.push(io::IoSlice::new(part));
            }
        }
        self.write_slices(&mut batch, watch)
    }

    /// Writes every byte of `slices` (emptying it), continuing after partial writes: straight
    /// to the inner writer, after what the buffer holds (a `BufWriter` would copy a batch
    /// smaller than its buffer into it). With `watch`, checks the input after each `writev`.
    fn write_slices(
        &mut self,
        slices: &mut Vec<io::IoSlice<'_>>,
        watch: Option<&Watch<'_, '_>>,
    ) -> Result<(), WriteError> {
        self.out.flush()?;
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            let result = self.out.get_mut().write_vectored(rest);
            if let Ok(n) = result {
                self.written += n as u64;
            }
            // The input may have shrunk under the kernel's copy: a short write, EFAULT (a page
            // gone) or zeros (a page the fault handler replaced). Its damage is the error.
            if let Some(w) = watch
                && let Some(damage) = w.damage(result.is_err())
            {
                return Err(w.failure(&self.runs, damage, self.written));
            }
            match result {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        slices.clear();
        Ok(())
    }

    /// The timestamp precision records are written with.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Writes what the buffer holds to the inner writer and flushes that (tcpdump's `-U` and
    /// SIGUSR2: `pcap_dump_flush`).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// Appends `run`, merged with the last one when it continues it in both input and output.
fn push_run(runs: &mut Vec<InputRun>, run: InputRun) {
    match runs.last_mut() {
        Some(last) if last.input + last.len == run.input && last.out + last.len == run.out => {
            last.len += run.len;
        }
        _ => runs.push(run),
    }
}

struct NgInterface {
    resolution: TsResolution,
    written: u64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    stats: InterfaceStats,
}

/// Writes a pcapng file with one section.
pub struct PcapngWriter<W: Write> {
    out: BufWriter<W>,
    interfaces: Vec<NgInterface>,
    scratch: Vec<u8>,
    clamped: ChangedTimestamps,
}

fn push_option(buf: &mut Vec<u8>, code: u16, value: &[u8]) {
    buf.extend_from_slice(&code.to_le_bytes());
    buf.extend_from_slice(&(value.len() as u16).to_le_bytes());
    buf.extend_from_slice(value);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

fn push_end_of_options(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&[0, 0, 0, 0]);
}

/// Frames `body` as a block of `block_type` and writes it.
fn write_block(out: &mut impl Write, block_type: u32, body: &[u8]) -> io::Result<()> {
    let length = (body.len() + 12) as u32;
    out.write_all(&block_type.to_le_bytes())?;
    out.write_all(&length.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&length.to_le_bytes())
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the Section Header Block (with `shb_userappl` naming sift).
    pub fn new(inner: W) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(BUFFER, inner);
        let mut body = Vec::new();
        body.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes());
        push_option(&mut body, 4, concat!("sift ", env!("CARGO_PKG_VERSION")).as_bytes());
        push_end_of_options(&mut body);
        write_block(&mut out, SHB_TYPE, &body)?;
        Ok(PcapngWriter {
            out,
            interfaces: Vec::new(),
            scratch: Vec::with_capacity(2048),
            clamped: ChangedTimestamps::default(),
        })
    }

    /// Writes an Interface Description Block for `iface` (link type, snaplen, `if_name`,
    /// `if_description`, `if_tsresol`) and returns the interface ID packets must name.
    pub fn add_interface(&mut self, iface: &Interface) -> io::Result<u32> {
        let mut body = Vec::new();
        body.extend_from_slice(&iface.link_type.number().to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&iface.snaplen.to_le_bytes());
        if let Some(name) = &iface.name {
            push_option(&mut body, 2, name.as_bytes());
        }
        if let Some(desc) = &iface.description {
            push_option(&mut body, 3, desc.as_bytes());
        }
        if iface.ts_resolution != TsResolution::MICRO {
            push_option(&mut body, 9, &[iface.ts_resolution.option_byte()]);
        }
        push_end_of_options(&mut body);
        write_block(&mut self.out, IDB_TYPE, &body)?;
        self.interfaces.push(NgInterface {
            resolution: iface.ts_resolution,
            written: 0,
            first: None,
            last: None,
            stats: InterfaceStats::default(),
        });
        Ok(self.interfaces.len() as u32 - 1)
    }

    /// Sets the counters written in the interface's statistics block at [`finish`](Self::finish).
    /// `isb_usrdeliv` defaults to the number of packets written for the interface.
    pub fn set_stats(&mut self, interface: u32, stats: InterfaceStats) -> Result<(), WriteError> {
        let slot = self
            .interfaces
            .get_mut(interface as usize)
            .ok_or(WriteError::UnknownInterface(interface))?;
        slot.stats = stats;
        Ok(())
    }

    /// Packets written so far whose time the interface's 64-bit count cannot hold (before
    /// 1970, or too far ahead), written as the nearest time it can: callers should warn once,
    /// with the count.
    pub fn clamped(&self) -> ChangedTimestamps {
        self.clamped
    }

    /// Appends an Enhanced Packet Block. A time the interface's resolution cannot count in 64
    /// bits is written as the nearest one it can (1970, or the last count) and counted
    /// ([`clamped`](Self::clamped)); a record kept as recorded is written as its
    /// [`instant`](Timestamp::instant).
    pub fn write(
        &mut self,
        interface: u32,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
    ) -> Result<(), WriteError> {
        self.write_block(interface, ts, wire_len, data, None)
    }

    /// Appends an Enhanced Packet Block with an `epb_flags` option (such as the packet's
    /// direction, [`PacketFlags::with_direction`]), as [`write`](Self::write) otherwise.
    pub fn write_with_flags(
        &mut self,
        interface: u32,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
        flags: PacketFlags,
    ) -> Result<(), WriteError> {
        self.write_block(interface, ts, wire_len, data, Some(flags))
    }

    fn write_block(
        &mut self,
        interface: u32,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
        flags: Option<PacketFlags>,
    ) -> Result<(), WriteError> {
        let slot = self
            .interfaces
            .get_mut(interface as usize)
            .ok_or(WriteError::UnknownInterface(interface))?;
        // Seconds from 2^63 on are times before 1970 (libpcap's arithmetic modulo 2^64).
        let before_1970 = ts.instant().secs > i64::MAX as u64;
        let units = if before_1970 { None } else { ts.to_units(slot.resolution) };
        let units = units.unwrap_or_else(|| {
            self.clamped.add(ts);
            if before_1970 { 0 } else { u64::MAX }
        });
        let caplen = u32::try_from(data.len()).map_err(|_| WriteError::TooLong(data.len()))?;
        let padded = data.len().next_multiple_of(4);
        // `epb_flags` (code, length, the 4-byte word) and `opt_endofopt`.
        let mut option = [0u8; 12];
        let options = match flags {
            Some(f) => {
                option[0..2].copy_from_slice(&EPB_FLAGS.to_le_bytes());
                option[2..4].copy_from_slice(&4u16.to_le_bytes());
                option[4..8].copy_from_slice(&f.0.to_le_bytes());
                &option[..]
            }
            None => &option[..0],
        };
        let length = u32::try_from(32 + padded + options.len())
            .map_err(|_| WriteError::TooLong(data.len()))?;
        let mut h = [0u8; 28];
        h[0..4].copy_from_slice(&EPB_TYPE.to_le_bytes());
        h[4..8].copy_from_slice(&length.to_le_bytes());
        h[8..12].copy_from_slice(&interface.to_le_bytes());
        h[12..16].copy_from_slice(&((units >> 32) as u32).to_le_bytes());
        h[16..20].copy_from_slice(&(units as u32).to_le_bytes());
        h[20..24].copy_from_slice(&caplen.to_le_bytes());
        h[24..28].copy_from_slice(&wire_len.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        self.out.write_all(&[0u8; 3][..padded - data.len()])?;
        self.out.write_all(options)?;
        self.out.write_all(&length.to_le_bytes())?;
        slot.written += 1;
        slot.first.get_or_insert(ts);
        slot.last = Some(ts);
        Ok(())
    }

    /// Writes what the buffer holds to the inner writer and flushes that (tcpdump's `-U` and
    /// SIGUSR2: `pcap_dump_flush`).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes an Interface Statistics Block per interface (`isb_starttime`, `isb_endtime` and
    /// the counters), flushes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        for (id, slot) in self.interfaces.iter().enumerate() {
            let body = &mut self.scratch;
            body.clear();
            let end = slot.last.unwrap_or_default();
            let units = end.to_units(slot.resolution).unwrap_or(0);
            body.extend_from_slice(&(id as u32).to_le_bytes());
            body.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
            body.extend_from_slice(&(units as u32).to_le_bytes());
            let stamp = |t: Timestamp| {
                let u = t.to_units(slot.resolution).unwrap_or(0);
                let mut v = [0u8; 8];
                v[..4].copy_from_slice(&((u >> 32) as u32).to_le_bytes());
                v[4..].copy_from_slice(&(u as u32).to_le_bytes());
                v
            };
            if let (Some(first), Some(last)) = (slot.first, slot.last) {
                push_option(body, 2, &stamp(first));
                push_option(body, 3, &stamp(last));
            }
            let s = slot.stats;
            for (code, value) in [
                (4, s.received),
                (5, s.dropped),
                (6, s.filter_accepted),
                (7, s.os_dropped),
                (8, s.delivered.or(Some(slot.written))),
            ] {
                if let Some(v) = value {
                    push_option(body, code, &v.to_le_bytes());
                }
            }
            push_end_of_options(body);
            write_block(&mut self.out, ISB_TYPE, body)?;
        }
        self.out.into_inner().map_err(|e| e.into_error())
    }
}
