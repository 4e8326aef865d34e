//! Live capture over AF_XDP (`sift -i IFACE --xdp [EXPR]`): the filter runs in the interface's
//! XDP hook, before the kernel builds a socket buffer, and only matching frames reach sift.
//!
//! Why it exists: `AF_PACKET` (the [`crate::live`] path, libpcap's) costs a socket buffer and a
//! copy into the ring per frame and tops out near a million frames a second per socket; an XDP
//! program redirecting into `AF_XDP` sockets skips both (`sift_xdp`). The expression is
//! compiled as for any live capture (Ethernet, tcpdump's snapshot length) and lowered by the
//! native eBPF back end with matches redirected to the socket of the frame's receive queue
//! ([`sift_compile::ebpf::EbpfOptions::xsk`]); what does not match is dropped there, or with
//! [`XdpConfig::pass_rest`] left to the kernel's stack. XDP sees only what arrives: frames the
//! host sends are not captured (tcpdump's `-Q in`).
//!
//! One thread per receive queue takes batches off its socket (`sift_xdp::Datapath`), copies
//! each frame (cut to the snapshot length) with the time of its batch — AF_XDP frames carry
//! no time stamp, so a batch's frames share the time it was taken off the ring — and hands the
//! batch to the caller's thread, which gives the packets to the [`Sink`] in order. A full
//! hand-over queue stalls the receiving thread; frames that then find the socket's ring full
//! are the kernel's drops.
//!
//! The counters are tcpdump's, exact: "received by filter" is what the program handed to a
//! socket (its per-CPU count of redirects taken, which stops when the sockets leave the map at
//! the stop), "dropped by kernel" what the sockets could not take (`XDP_STATISTICS`: no free
//! frame, ring full, invalid descriptors), "captured" what the sink took. After a stop every
//! frame received is delivered first, so received = captured + dropped unless `-c` ended it.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sift_compile::ebpf::{self, EbpfFilter, EbpfOptions, Hook};
use sift_compile::pipeline::{self, LinkType, Mode};
use sift_pcap::Timestamp;
use sift_xdp::{Batch, CustomProgram, Datapath, Options, PortConfig, XdpProgram};
pub use sift_xdp::{BindMode, Bound, PollMode, XdpMode, XdpStatistics};

use crate::filter::FilterError;
use crate::live::{Event, Outcome, Signals, Sink, Taker};

/// Why a capture over AF_XDP cannot start or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum XdpCaptureError {
    /// The expression does not compile.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The compiled filter has no eBPF form.
    #[error("the filter cannot run at XDP: {0}")]
    Lower(#[from] ebpf::EbpfGenError),
    /// The sockets, their program or their threads.
    #[error(transparent)]
    Xdp(#[from] sift_xdp::Error),
    /// The program's counters cannot be read.
    #[error("reading the filter's counters: {0}")]
    Counters(String),
}

/// How to capture.
#[derive(Clone, Debug)]
pub struct XdpConfig {
    /// The interface.
    pub interface: String,
    /// Bytes kept of each frame (tcpdump's `-s`).
    pub snaplen: u32,
    /// Leave frames that do not match to the kernel's stack (`--xdp-pass`); else XDP drops them.
    pub pass_rest: bool,
    /// Copy or zero-copy sockets (zero-copy when the driver has it, by default).
    pub bind: BindMode,
    /// Native or generic XDP.
    pub xdp_mode: XdpMode,
    /// Bytes of frames each queue's socket holds (tcpdump's `-B`), at least [`MIN_BUFFER`].
    pub buffer_bytes: usize,
    /// How the queues' threads wait: `poll()` by default, since the thread writing the packets
    /// needs a CPU too (measured on two CPUs: 1.86 Mpps captured with `poll()`, 1.36 with
    /// spinning threads; `benches/capture-xdp.sh`).
    pub poll: PollMode,
}

/// The smallest buffer per queue: 16 MiB, 4,096 frames (a capture's socket keeps half of them
/// on FILL and RX: at a million frames a second, 2 ms of frames).
pub const MIN_BUFFER: usize = 16 << 20;
/// The buffer per queue unless `-B` asks for more: 32 MiB.
pub const DEFAULT_BUFFER: usize = 32 << 20;
/// The frame size: a page, so that native XDP's largest frames fit.
const FRAME_SIZE: u32 = 4096;

impl XdpConfig {
    /// `interface`, tcpdump's snapshot length, non-matching frames dropped, zero-copy when
    /// possible, native XDP.
    pub fn new(interface: impl Into<String>) -> XdpConfig {
        XdpConfig {
            interface: interface.into(),
            snaplen: sift_capture::MAX_SNAPLEN,
            pass_rest: false,
            bind: BindMode::Auto,
            xdp_mode: XdpMode::Native,
            buffer_bytes: DEFAULT_BUFFER,
            poll: PollMode::Poll,
        }
    }
}

/// The counters of a capture over AF_XDP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpStats {
    /// Frames the program handed to the sockets (tcpdump's "received by filter").
    pub received: u64,
    /// Frames the sockets could not take (tcpdump's "dropped by kernel").
    pub dropped: u64,
    /// Frames that did not match (or found no socket at their queue).
    pub not_matched: u64,
    /// The sockets' own counters, summed over the queues.
    pub xdp: XdpStatistics,
}

/// A capture over AF_XDP, its filter compiled (nothing is attached before [`XdpSession::run`]).
#[derive(Debug)]
pub struct XdpSession {
    cfg: XdpConfig,
    filter: EbpfFilter,
}

/// Frames handed from a queue's thread to the caller's: their bytes back to back.
struct Chunk {
    /// The queue thread it goes back to ([`Chunk::recycle`]).
    from: usize,
    time: Timestamp,
    bytes: Vec<u8>,
    /// (stored length, length on the wire) of each frame, in order.
    lens: Vec<(u32, u32)>,
}

impl Chunk {
    /// Empties the chunk and hands it back to its queue's thread (dropped if that thread has
    /// ended or holds enough).
    fn recycle(mut self, returns: &[mpsc::SyncSender<Chunk>]) {
        self.bytes.clear();
        self.lens.clear();
        if let Some(back) = returns.get(self.from) {
            let _ = back.try_send(self);
        }
    }
}

/// Batches waiting for the caller's thread (each up to a socket batch of frames).
const HANDOVER_CHUNKS: usize = 256;

/// A batch's time of arrival as a time stamp.
fn timestamp(t: SystemTime) -> Timestamp {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp::new(d.as_secs(), d.subsec_nanos())
}

impl XdpSession {
    /// Compiles `expr` (`None`: every frame) for the interface's XDP hook, optimized when
    /// `optimize`.
    pub fn open(
        cfg: XdpConfig,
        expr: Option<&str>,
        optimize: bool,
    ) -> Result<XdpSession, XdpCaptureError> {
        let resolver = sift_filter::SystemResolver::new();
        let src = expr.unwrap_or("");
        let opts = pipeline::Options::new(LinkType::EN10MB, &resolver)
            .snaplen(cfg.snaplen)
            .optimize(optimize)
            .mode(Mode::Libpcap);
        let compiled = pipeline::compile(src, &opts).map_err(|error| FilterError::Compile {
            expr: src.to_string(),
            error: Box::new(error),
        })?;
        let on_miss = if cfg.pass_rest { ebpf::XDP_PASS } else { ebpf::XDP_DROP };
        let eopts =
            EbpfOptions::new(Hook::Xdp).verdicts(ebpf::XDP_PASS, on_miss).counting().to_xsk();
        let filter = ebpf::lower(&compiled, &eopts)?;
        Ok(XdpSession { cfg, filter })
    }

    /// How the queues' threads run ([`XdpConfig::poll`]).
    fn datapath_options(&self) -> Options {
        Options { poll: self.cfg.poll, ..Options::default() }
    }

    /// The filter's eBPF instructions.
    pub fn instructions(&self) -> usize {
        self.filter.len()
    }

    /// Captures until a stop, `count` frames were taken, the sink is full or fails; obeys
    /// `signals` meanwhile (SIGUSR1: [`Event::Counters`] with the counters so far; SIGUSR2: the
    /// sink's flush). `events` hears [`Event::Listening`] once the program is attached, with
    /// the mode the sockets were bound in.
    pub fn run<S: Sink>(
        self,
        sink: &mut S,
        count: Option<u64>,
        signals: Signals,
        mut events: impl FnMut(Event, Bound),
    ) -> Result<Outcome<S::Error, XdpStats>, XdpCaptureError> {
        let mut port = PortConfig::new(&self.cfg.interface);
        port.bind = self.cfg.bind;
        port.xdp_mode = self.cfg.xdp_mode;
        // Frames a power of two; half of them on FILL (and as many RX entries), the rest for
        // the pool; TX is not used.
        let frames = (self.cfg.buffer_bytes.max(MIN_BUFFER) / FRAME_SIZE as usize)
            .min(1 << 17)
            .next_power_of_two() as u32;
        port.frame_size = FRAME_SIZE;
        port.frames = frames;
        port.rings.fill = frames / 2;
        port.rings.rx = frames / 2;
        port.program = XdpProgram::Custom(CustomProgram {
            insns: self.filter.slots(),
            maps: self.filter.maps.clone(),
            xskmap: ebpf::XSK_MAP.to_string(),
        });
        let snaplen = self.cfg.snaplen as usize;
        let (tx, rx) = mpsc::sync_channel::<Chunk>(HANDOVER_CHUNKS);
        // Each queue's chunks come back to it emptied, so a capture allocates nothing per
        // batch once it runs.
        let mut returns: Vec<mpsc::SyncSender<Chunk>> = Vec::new();
        let dp = Datapath::start(&[port], &self.datapath_options(), |_queue| {
            let tx = tx.clone();
            let (back, free) = mpsc::sync_channel::<Chunk>(HANDOVER_CHUNKS);
            let from = returns.len();
            returns.push(back);
            move |batch: &mut Batch<'_>| {
                let mut chunk = free.try_recv().unwrap_or_else(|_| Chunk {
                    from,
                    time: Timestamp::new(0, 0),
                    bytes: Vec::with_capacity(batch.len() * 128),
                    lens: Vec::with_capacity(batch.len()),
                });
                chunk.time = timestamp(batch.received());
                batch.for_each(|p| {
                    let data = p.data();
                    let kept = &data[..data.len().min(snaplen)];
                    chunk.bytes.extend_from_slice(kept);
                    chunk.lens.push((kept.len() as u32, data.len() as u32));
                });
                // The caller's thread is gone only when the capture ends.
                let _ = tx.send(chunk);
            }
        })?;
        drop(tx);
        let bound = dp.ports().first().map_or(Bound::Copy, |p| p.mode);
        let counts = dp.program_map(0, &ebpf::count_map().name)?;
        let read_stats = |dp: Option<&Datapath>, xdp: Option<XdpStatistics>| {
            let xdp = xdp
                .or_else(|| dp.and_then(|d| d.stats().first().map(|s| s.xdp)))
                .unwrap_or_default();
            let get = |k: u32| -> Result<u64, XdpCaptureError> {
                let v = counts
                    .lookup_summed(&k.to_le_bytes())
                    .map_err(|e| XdpCaptureError::Counters(e.to_string()))?
                    .unwrap_or_default();
                Ok(v.get(..8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes"))))
            };
            Ok::<_, XdpCaptureError>(XdpStats {
                received: get(0)?,
                not_matched: get(1)?,
                dropped: xdp.rx_dropped + xdp.rx_ring_full + xdp.rx_invalid_descs,
                xdp,
            })
        };
        events(Event::Listening, bound);

        let limit = count.unwrap_or(u64::MAX);
        let mut taker = Taker::new(sink, sift_pcap::LinkType::EN10MB, limit);
        let mut seen = signals.seen_now();
        let mut dp = Some(dp);
        let mut report = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(chunk) => {
                    take_chunk(&mut taker, &chunk);
                    chunk.recycle(&returns);
                }
                // Every queue's thread has ended: the stop is complete.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if let Some(d) = dp.as_ref() {
                if signals.counters_asked(&mut seen) {
                    let stats = read_stats(Some(d), None)?;
                    events(
                        Event::Counters { captured: taker.captured, stats: stats.as_capture() },
                        bound,
                    );
                }
                if signals.flush_asked(&mut seen) {
                    taker.flush();
                }
                if taker.done() || signals.stop().load(Ordering::SeqCst) || d.is_degraded() {
                    // The stop drains the sockets into the hand-over queue, which this thread
                    // keeps emptying meanwhile; it ends when the threads have.
                    let d = dp.take().expect("checked");
                    report = Some(std::thread::scope(|s| {
                        let stopper = s.spawn(move || d.stop());
                        while let Ok(chunk) = rx.recv() {
                            take_chunk(&mut taker, &chunk);
                        }
                        stopper.join().unwrap_or_else(|_| {
                            Err(sift_xdp::Error::Config { what: "the stop panicked".into() })
                        })
                    }));
                }
            }
        }
        let report = match report {
            Some(r) => r?,
            // The threads ended by themselves (a pipeline panicked): stop reports it.
            None => match dp.take() {
                Some(d) => d.stop()?,
                None => Default::default(),
            },
        };
        let xdp = report.ports.first().map(|p| p.xdp);
        let stats = read_stats(None, xdp)?;
        let Taker { captured, failure, full, .. } = taker;
        Ok(Outcome { stats, captured, full, failure, error: None })
    }
}

impl XdpStats {
    /// As `AF_PACKET`'s counters (what SIGUSR1 prints).
    pub fn as_capture(&self) -> sift_capture::Stats {
        sift_capture::Stats { received: self.received, dropped: self.dropped, taken: 0 }
    }
}

/// Gives a chunk's packets to the sink, in order, while it wants them.
fn take_chunk<S: Sink>(taker: &mut Taker<'_, S>, chunk: &Chunk) {
    let mut at = 0usize;
    for &(stored, wire) in &chunk.lens {
        let data = &chunk.bytes[at..at + stored as usize];
        at += stored as usize;
        if !taker.take_bytes(chunk.time, wire, data) {
            return;
        }
    }
}
