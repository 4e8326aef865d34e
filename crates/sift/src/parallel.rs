//! Filtering a large classic pcap file on every core, with the output of one thread.
//!
//! The mapped file is cut into chunks of [`CHUNK_BYTES`]; worker threads each take the next
//! chunk, find its first record ([`sift_pcap::split`]: a guessed sync point), filter its
//! packets ([`BATCH_PACKETS`] records at a time, in one call of the engine:
//! [`Compiled::run_batch`]) and encode the kept ones into an [`Encoded`]: bytes in a buffer, or, for records the
//! output takes as they are in the file, just where they lie (so a filtered copy is copied once,
//! by the kernel's `writev` from the mapping, and the buffers are reused). The calling
//! thread consumes the buffers strictly in file order, after checking that each chunk started
//! exactly where the previous one stopped (and redoing it from there when the guess was wrong),
//! so the output is byte for byte that of a sequential read. Workers run at most
//! [`WINDOW_PER_THREAD`] chunks per thread ahead of the consumer, which bounds memory. Damage in
//! the file ends the run after every packet before it has been consumed, as sequentially.
//!
//! [`copy`] (a filtered pcap copy), [`count`] and [`for_each`] (kept packets handed to the
//! calling thread in order, e.g. to print them) are built on [`run`].

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, mpsc};

use sift_jit::PacketRef;
use sift_pcap::split::PcapBytes;
use sift_pcap::{ClippedRecords, LinkType, Packet, PcapWriter, Timestamp};

use crate::filter::{BATCH_PACKETS, Compiled};
use crate::output::OutputError;

/// Bytes of input per chunk.
pub const CHUNK_BYTES: u64 = 8 << 20;

/// How many chunks per worker may wait, encoded, for the consumer.
pub const WINDOW_PER_THREAD: usize = 3;

/// Why a parallel run stopped early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParallelError {
    /// Damage in the file (located).
    #[error(transparent)]
    Read(#[from] sift_pcap::Error),
    /// A kept packet that cannot be encoded for the output.
    #[error("packet at byte {offset}")]
    Encode {
        /// The packet's offset in the file.
        offset: u64,
        /// Why.
        #[source]
        source: OutputError,
    },
    /// The consumer failed (writing the output).
    #[error(transparent)]
    Output(OutputError),
    /// A worker thread ended without handing over its chunk (a bug).
    #[error("internal error: a worker thread ended early")]
    WorkerEnded,
}

impl ParallelError {
    /// When the input shrank while its records were being copied from it: how long the output
    /// is up to the last record known to hold the input's real bytes. A regular-file output
    /// should be cut back to that length once the writer is finished (everything before it was
    /// written; see [`sift_pcap::PcapWriter::write_pieces_from`]). The error itself is the
    /// input's, located in the input.
    pub fn input_shrank(&self) -> Option<u64> {
        match self {
            ParallelError::Output(OutputError::Write(sift_pcap::WriteError::Input {
                complete,
                ..
            })) => Some(*complete),
            _ => None,
        }
    }
}

/// What a run read and kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    /// Packets read.
    pub read: u64,
    /// Packets the filter kept.
    pub kept: u64,
    /// Records cut to the snapshot length.
    pub clipped: ClippedRecords,
}

/// Whether `file` is large enough (two chunks or more) for the threads to pay off.
pub fn worth_splitting(file: &PcapBytes<'_>) -> bool {
    file.len() >= 2 * CHUNK_BYTES
}

/// Worker threads to use: `SIFT_THREADS` if set, else every available core.
pub fn threads() -> usize {
    if let Some(n) = std::env::var("SIFT_THREADS").ok().and_then(|v| v.parse::<usize>().ok()) {
        return n.max(1);
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// A chunk's output: bytes encoded into `buf`, with runs of the input file inserted between
/// them.
#[derive(Debug, Default)]
pub struct Encoded {
    /// Encoded bytes.
    pub buf: Vec<u8>,
    /// File ranges, each inserted where `buf` had the given length (in order, adjacent ones
    /// merged).
    runs: Vec<(usize, Range<u64>)>,
}

impl Encoded {
    /// Appends the file's bytes `range` (after whatever `buf` holds now).
    pub fn verbatim(&mut self, range: Range<u64>) {
        let at = self.buf.len();
        match self.runs.last_mut() {
            Some((pos, r)) if *pos == at && r.end == range.start => r.end = range.end,
            _ => self.runs.push((at, range)),
        }
    }

    /// The output in order, as slices of `buf` and of `file`.
    pub fn pieces<'a>(&'a self, file: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
        let mut from = 0;
        let runs = self.runs.iter().flat_map(move |(at, r)| {
            let encoded = &self.buf[from..*at];
            from = *at;
            [encoded, &file[r.start as usize..r.end as usize]]
        });
        let last = self.runs.last().map_or(0, |(at, _)| *at);
        runs.chain([&self.buf[last..]]).filter(|p| !p.is_empty())
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.runs.clear();
    }
}

/// One chunk's outcome.
struct Chunk {
    /// Where it started (a guessed sync point; `u64::MAX` when there was none) and stopped.
    start: u64,
    stop: u64,
    out: Encoded,
    read: u64,
    kept: u64,
    clipped: ClippedRecords,
    /// What ended the chunk early: damage in the file or a packet that cannot be encoded.
    error: Option<ParallelError>,
}

/// How a run decides which packets to keep.
enum Keep<'k, K> {
    /// Every packet.
    All,
    /// Those a program accepts, a batch at a time.
    Filter(&'k Compiled),
    /// Those a function accepts, one by one.
    Each(&'k K),
}

// Not derived: that would ask `K: Copy`.
impl<K> Clone for Keep<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Keep<'_, K> {}

impl<K: Fn(&Packet<'_>) -> bool> Keep<'_, K> {
    /// A verdict per packet into `verdicts` (non-zero: keep), through `refs` for a program.
    fn verdicts<'a>(
        self,
        packets: &[Packet<'a>],
        refs: &mut Vec<PacketRef<'a>>,
        verdicts: &mut Vec<u32>,
    ) {
        verdicts.clear();
        match self {
            Keep::All => verdicts.resize(packets.len(), 1),
            Keep::Filter(f) => {
                refs.clear();
                refs.extend(packets.iter().map(|p| PacketRef::new(p.data, p.wire_len)));
                f.run_batch(refs, verdicts);
            }
            Keep::Each(keep) => verdicts.extend(packets.iter().map(|p| u32::from(keep(p)))),
        }
    }
}

/// A worker's room for a batch: the packets, their descriptors and the verdicts (reused from
/// batch to batch and chunk to chunk).
struct Scratch<'a> {
    packets: Vec<Packet<'a>>,
    refs: Vec<PacketRef<'a>>,
    verdicts: Vec<u32>,
}

impl Scratch<'_> {
    fn new() -> Self {
        Scratch {
            packets: Vec::with_capacity(BATCH_PACKETS),
            refs: Vec::with_capacity(BATCH_PACKETS),
            verdicts: Vec::with_capacity(BATCH_PACKETS),
        }
    }
}

/// Filters and encodes (into `out`, cleared first) the records from `start` up to the first one
/// at or after `stop_at`, [`BATCH_PACKETS`] at a time: each batch is read, filtered in one call,
/// then its kept packets encoded in order.
fn process<'a, K, E>(
    file: PcapBytes<'a>,
    start: u64,
    stop_at: u64,
    keep: Keep<'_, K>,
    encode: &E,
    scratch: &mut Scratch<'a>,
    mut out: Encoded,
) -> Chunk
where
    K: Fn(&Packet<'_>) -> bool,
    E: Fn(&Packet<'_>, &mut Encoded) -> Result<(), OutputError>,
{
    out.clear();
    let mut chunk = Chunk {
        start,
        stop: start,
        out,
        read: 0,
        kept: 0,
        clipped: ClippedRecords::default(),
        error: None,
    };
    let mut records = file.records(start, stop_at);
    let Scratch { packets, refs, verdicts } = scratch;
    'chunk: loop {
        packets.clear();
        let mut damage = None;
        for packet in records.by_ref().take(BATCH_PACKETS) {
            match packet {
                Ok(p) => packets.push(p),
                Err(e) => {
                    damage = Some(e);
                    break;
                }
            }
        }
        if packets.is_empty() && damage.is_none() {
            break;
        }
        keep.verdicts(packets, refs, verdicts);
        for (i, (packet, &verdict)) in packets.iter().zip(verdicts.iter()).enumerate() {
            chunk.read += 1;
            if verdict == 0 {
                continue;
            }
            if let Err(source) = encode(packet, &mut chunk.out) {
                chunk.error = Some(ParallelError::Encode { offset: packet.offset, source });
                // The chunk stops after this packet's record, as read one by one.
                chunk.stop = packets.get(i + 1).map_or(records.stop(), |next| next.offset);
                break 'chunk;
            }
            chunk.kept += 1;
        }
        if let Some(e) = damage {
            chunk.error = Some(ParallelError::Read(e));
            break;
        }
    }
    if chunk.error.as_ref().is_none_or(|e| matches!(e, ParallelError::Read(_))) {
        chunk.stop = records.stop();
    }
    chunk.clipped = records.clipped();
    chunk
}

/// Runs `keep` and `encode` over every packet of `file` on `threads` workers and hands the
/// encoded chunks to `consume` in file order (with the offset reached and packets kept so far,
/// for progress). Returns the totals, and the first error after consuming everything before it.
/// Chunk buffers go back to the workers once consumed. (`keep` is called per packet; [`count`],
/// [`copy`] and [`for_each`] run a program on batches instead.)
pub fn run<K, E, C>(
    file: PcapBytes<'_>,
    threads: usize,
    keep: &K,
    encode: &E,
    consume: C,
) -> (Totals, Result<(), ParallelError>)
where
    K: Fn(&Packet<'_>) -> bool + Sync,
    E: Fn(&Packet<'_>, &mut Encoded) -> Result<(), OutputError> + Sync,
    C: FnMut(&Encoded, u64, u64) -> Result<(), OutputError>,
{
    run_with(file, threads, Keep::Each(keep), encode, consume)
}

/// [`run`] with `keep` a program ([`Compiled::run_batch`] on batches), or none to keep all.
fn run_filtered<E, C>(
    file: PcapBytes<'_>,
    threads: usize,
    filter: Option<&Compiled>,
    encode: &E,
    consume: C,
) -> (Totals, Result<(), ParallelError>)
where
    E: Fn(&Packet<'_>, &mut Encoded) -> Result<(), OutputError> + Sync,
    C: FnMut(&Encoded, u64, u64) -> Result<(), OutputError>,
{
    let keep: Keep<'_, fn(&Packet<'_>) -> bool> = match filter {
        Some(f) => Keep::Filter(f),
        None => Keep::All,
    };
    run_with(file, threads, keep, encode, consume)
}

/// [`run`], whatever decides what to keep.
fn run_with<K, E, C>(
    file: PcapBytes<'_>,
    threads: usize,
    keep: Keep<'_, K>,
    encode: &E,
    mut consume: C,
) -> (Totals, Result<(), ParallelError>)
where
    K: Fn(&Packet<'_>) -> bool + Sync,
    E: Fn(&Packet<'_>, &mut Encoded) -> Result<(), OutputError> + Sync,
    C: FnMut(&Encoded, u64, u64) -> Result<(), OutputError>,
{
    let first = file.first_record();
    let body = file.len().saturating_sub(first);
    let n = body.div_ceil(CHUNK_BYTES).max(1) as usize;
    let bound = |i: usize| if i == 0 { first } else { first + body * i as u64 / n as u64 };
    let threads = threads.clamp(1, n);
    let window = threads * WINDOW_PER_THREAD;

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many chunks the consumer has taken, for the window.
    let consumed = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Chunk)>();
    // Consumed chunks' buffers, for the next chunks.
    let spare: Mutex<Vec<Encoded>> = Mutex::new(Vec::new());
    let reuse = || spare.lock().unwrap_or_else(|p| p.into_inner()).pop().unwrap_or_default();
    let mut totals = Totals::default();

    let result = std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, consumed, reuse) = (&next, &stop, &consumed, &reuse);
            scope.spawn(move || {
                let mut scratch = Scratch::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    {
                        let (lock, ready) = consumed;
                        let mut done = lock.lock().unwrap_or_else(|p| p.into_inner());
                        while i >= *done + window && !stop.load(Ordering::Relaxed) {
                            done = ready.wait(done).unwrap_or_else(|p| p.into_inner());
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let start = if i == 0 { Some(first) } else { file.sync(bound(i)) };
                    let (from, to) = match start {
                        Some(s) => (s, bound(i + 1).max(s)),
                        None => (u64::MAX, u64::MAX),
                    };
                    let chunk = process(file, from, to, keep, encode, &mut scratch, reuse());
                    if tx.send((i, chunk)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);

        let finish = |stop: &AtomicBool| {
            stop.store(true, Ordering::Relaxed);
            consumed.1.notify_all();
        };
        let mut pending: BTreeMap<usize, Chunk> = BTreeMap::new();
        let mut scratch = Scratch::new();
        let mut prev_stop = first;
        for i in 0..n {
            let chunk = loop {
                if let Some(c) = pending.remove(&i) {
                    break Some(c);
                }
                match rx.recv() {
                    Ok((j, c)) => {
                        pending.insert(j, c);
                    }
                    Err(_) => break None,
                }
            };
            let Some(mut chunk) = chunk else {
                finish(&stop);
                return Err(ParallelError::WorkerEnded);
            };
            if chunk.start != prev_stop {
                // The guess was wrong (or there was none): redo the chunk from the true start.
                let out = std::mem::take(&mut chunk.out);
                let to = bound(i + 1).max(prev_stop);
                chunk = process(file, prev_stop, to, keep, encode, &mut scratch, out);
            }
            totals.read += chunk.read;
            totals.kept += chunk.kept;
            totals.clipped.count += chunk.clipped.count;
            if totals.clipped.first_offset.is_none() {
                totals.clipped.first_offset = chunk.clipped.first_offset;
            }
            if let Err(e) = consume(&chunk.out, chunk.stop, totals.kept) {
                finish(&stop);
                return Err(ParallelError::Output(e));
            }
            if let Some(e) = chunk.error {
                finish(&stop);
                return Err(e);
            }
            prev_stop = chunk.stop;
            spare.lock().unwrap_or_else(|p| p.into_inner()).push(chunk.out);
            *consumed.0.lock().unwrap_or_else(|p| p.into_inner()) = i + 1;
            consumed.1.notify_all();
        }
        finish(&stop);
        Ok(())
    });
    (totals, result)
}

/// Counts the packets of `file` that `filter` keeps; `progress` gets the offset reached and the
/// count so far after each chunk.
pub fn count(
    file: PcapBytes<'_>,
    threads: usize,
    filter: Option<&Compiled>,
    mut progress: impl FnMut(u64, u64),
) -> (Totals, Result<(), ParallelError>) {
    run_filtered(file, threads, filter, &|_, _| Ok(()), |_, at, kept| {
        progress(at, kept);
        Ok(())
    })
}

/// Appends the packets of `file` that `filter` keeps to `writer` (a pcap file already started,
/// normally with the input's link type and snapshot length), exactly as writing them one by one
/// would. Records that are already what the writer would write are written straight from the
/// mapping; `progress` as for [`count`].
pub fn copy<W: Write>(
    file: PcapBytes<'_>,
    threads: usize,
    filter: Option<&Compiled>,
    writer: &mut PcapWriter<W>,
    mut progress: impl FnMut(u64, u64),
) -> (Totals, Result<(), ParallelError>) {
    let precision = writer.precision();
    let encode = |p: &Packet<'_>, out: &mut Encoded| -> Result<(), OutputError> {
        // A record already as the output has it is copied from the mapping by the kernel when
        // written; others are encoded.
        if let Some(range) = file.verbatim(p, precision) {
            out.verbatim(range);
            return Ok(());
        }
        let h = PcapWriter::<io::Sink>::record_header(
            precision,
            p.timestamp,
            p.wire_len,
            p.data.len(),
        )?;
        out.buf.extend_from_slice(&h);
        out.buf.extend_from_slice(p.data);
        Ok(())
    };
    run_filtered(file, threads, filter, &encode, |out, at, kept| {
        progress(at, kept);
        Ok(writer.write_pieces_from(&file, at, out.pieces(file.bytes()))?)
    })
}

/// Hands the packets of `file` that `filter` keeps, of link type `link_type`, to `each` on the
/// calling thread, in file order (for work that keeps state across packets, such as printing
/// relative sequence numbers); `progress` as for [`count`]. Workers only filter: they pass the
/// kept packets on as records in reused buffers.
pub fn for_each(
    file: PcapBytes<'_>,
    threads: usize,
    filter: Option<&Compiled>,
    link_type: LinkType,
    mut each: impl FnMut(&Packet<'_>) -> io::Result<()>,
    mut progress: impl FnMut(u64, u64),
) -> (Totals, Result<(), ParallelError>) {
    let encode = |p: &Packet<'_>, out: &mut Encoded| -> Result<(), OutputError> {
        encode_packet(&mut out.buf, p);
        Ok(())
    };
    run_filtered(file, threads, filter, &encode, |chunk, at, kept| {
        progress(at, kept);
        for p in decode_packets(&chunk.buf, link_type) {
            each(&p)?;
        }
        Ok(())
    })
}

/// Bytes before each packet's data in [`encode_packet`]'s records.
const PACKET_HEAD: usize = 8 + 4 + 4 + 4 + 8;

/// Appends `p` to `buf` as an internal record (timestamp, lengths, offset, bytes), for
/// [`decode_packets`].
fn encode_packet(buf: &mut Vec<u8>, p: &Packet<'_>) {
    buf.extend_from_slice(&p.timestamp.secs.to_le_bytes());
    buf.extend_from_slice(&p.timestamp.nanos.to_le_bytes());
    buf.extend_from_slice(&p.wire_len.to_le_bytes());
    buf.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
    buf.extend_from_slice(&p.offset.to_le_bytes());
    buf.extend_from_slice(p.data);
}

/// The packets [`encode_packet`] wrote into `buf`, with link type `link_type`.
fn decode_packets(buf: &[u8], link_type: LinkType) -> impl Iterator<Item = Packet<'_>> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.len() < PACKET_HEAD {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(rest[i..i + 8].try_into().expect("8 bytes"));
        let caplen = u32_at(16) as usize;
        let packet = Packet {
            timestamp: Timestamp { secs: u64_at(0), nanos: u32_at(8) },
            wire_len: u32_at(12),
            data: rest.get(PACKET_HEAD..PACKET_HEAD + caplen)?,
            interface: 0,
            link_type,
            offset: u64_at(20),
        };
        rest = &rest[PACKET_HEAD + caplen..];
        Some(packet)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_interleave_buffer_and_file_runs_in_order() {
        let file = b"0123456789";
        let mut e = Encoded::default();
        e.buf.extend_from_slice(b"ab");
        e.verbatim(2..4);
        e.verbatim(4..6); // adjacent: merged with the previous run
        e.buf.extend_from_slice(b"cd");
        e.verbatim(8..10);
        e.verbatim(0..1); // at the same place in `buf` but not adjacent in the file
        let got: Vec<u8> = e.pieces(file).flatten().copied().collect();
        assert_eq!(got, b"ab2345cd890");
        assert_eq!(e.pieces(file).count(), 5, "adjacent runs are one piece");
    }

    #[test]
    fn packets_round_trip_through_the_internal_records() {
        let data = [[1u8, 2, 3].as_slice(), &[], &[9; 70]];
        let mut buf = Vec::new();
        for (i, d) in data.iter().enumerate() {
            let p = Packet {
                timestamp: Timestamp::new(i as u64 + 1_000, 7 * i as u32),
                wire_len: d.len() as u32 + 4,
                data: d,
                interface: 0,
                link_type: LinkType::RAW,
                offset: 24 + 100 * i as u64,
            };
            encode_packet(&mut buf, &p);
        }
        let back: Vec<Packet<'_>> = decode_packets(&buf, LinkType::RAW).collect();
        assert_eq!(back.len(), 3);
        for (i, p) in back.iter().enumerate() {
            assert_eq!(p.data, data[i]);
            assert_eq!(p.timestamp, Timestamp::new(i as u64 + 1_000, 7 * i as u32));
            assert_eq!((p.wire_len, p.offset), (data[i].len() as u32 + 4, 24 + 100 * i as u64));
        }
    }
}
