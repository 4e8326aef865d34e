//! Live capture: the loop over `sift-capture`'s socket, on one socket or a fan-out group.
//!
//! A [`Session`] opens the interface, compiles the expression for its link type (with Linux's
//! ancillary loads, as libpcap does for a live capture) and attaches it to the socket; when the
//! kernel refuses the program, the chosen engine runs it on every packet in user space instead
//! ([`Session::set_filter`] says so). [`Session::run`] then hands every packet to a [`Sink`]
//! (writing files, printing: the caller's choice) until a stop, a packet count, a sink that is
//! full or an error. On a stop the ring is drained first, so every packet the kernel counted is
//! delivered; the result carries the kernel's counters with libpcap's meaning.
//!
//! A capture obeys tcpdump's signals ([`Signals`]): SIGINT, SIGTERM and SIGHUP stop it (after
//! the drain), SIGUSR1 asks for the counters so far ([`Event::Counters`]) and SIGUSR2 writes
//! out what the sink buffers ([`Sink::flush`]); neither of the last two ends the capture.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use sift_capture::{Capture, CaptureError, Config, Frame, FrameMeta, Placement, Stats, UserFilter};
use sift_insn::code;
use sift_pcap::{LinkType, Packet, Timestamp};
use sift_verify::Validated;

use crate::filter::{Compiled, Engine, FilterError, Target};
use crate::output::{OutputError, Rotating, Written};

/// Why a live capture cannot start or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// Opening, configuring or reading the socket failed.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The expression gives no filter.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// Reading the ring failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The kernel's counters cannot be read.
    #[error("cannot read the capture statistics")]
    Stats(#[source] io::Error),
}

/// What a [`Sink`] did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// It took it.
    Yes,
    /// It is full (a file limit): it did not take this packet, and the capture ends.
    Full,
}

/// What to do with each captured packet.
pub trait Sink {
    /// Why a packet could not be taken (the capture then ends).
    type Error;

    /// Takes one packet (cut to the snapshot length; `interface` 0, `offset` 0).
    fn take(&mut self, packet: &Packet<'_>) -> Result<Taken, Self::Error>;

    /// Writes out what it buffers, so that a reader sees every packet taken so far (SIGUSR2,
    /// as tcpdump's `pcap_dump_flush`). By default there is nothing to write out.
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl Sink for Rotating {
    type Error = OutputError;

    fn take(&mut self, packet: &Packet<'_>) -> Result<Taken, OutputError> {
        Ok(match self.write(packet.timestamp, packet.wire_len, packet.data)? {
            Written::Yes => Taken::Yes,
            Written::LimitReached => Taken::Full,
        })
    }

    fn flush(&mut self) -> Result<(), OutputError> {
        Rotating::flush(self)
    }
}

/// The signals a capture obeys, as tcpdump's: SIGINT, SIGTERM and SIGHUP stop it (the ring is
/// drained first), SIGUSR1 asks for the counters ([`Event::Counters`]), SIGUSR2 writes out the
/// output ([`Sink::flush`]).
#[derive(Clone, Copy, Debug)]
pub struct Signals {
    stop: &'static AtomicBool,
    counters: Option<&'static AtomicU64>,
    flush: Option<&'static AtomicU64>,
}

impl Signals {
    /// Installs the handlers. SIGHUP is left ignored when it is ignored now, as `nohup`
    /// arranges (tcpdump does the same). Every call returns the same flags.
    pub fn install() -> io::Result<Signals> {
        use sift_sys::signal;
        let mut stops = vec![libc::SIGINT, libc::SIGTERM];
        if !signal::is_ignored(libc::SIGHUP)? {
            stops.push(libc::SIGHUP);
        }
        Ok(Signals {
            stop: signal::install_stop_handler(&stops)?,
            counters: Some(signal::install_count_handler(libc::SIGUSR1)?),
            flush: Some(signal::install_count_handler(libc::SIGUSR2)?),
        })
    }

    /// Only a stop flag, which the caller sets (no handler is installed).
    pub fn stop_flag(stop: &'static AtomicBool) -> Signals {
        Signals { stop, counters: None, flush: None }
    }

    /// The stop flag.
    pub fn stop(&self) -> &'static AtomicBool {
        self.stop
    }
}

/// Counts of SIGUSR1 and SIGUSR2 already acted on.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Seen {
    counters: u64,
    flush: u64,
}

impl Signals {
    /// Whether SIGUSR1 arrived since `seen` (and notes it).
    pub(crate) fn counters_asked(&self, seen: &mut Seen) -> bool {
        let now = self.counters.map_or(0, |c| c.load(Ordering::SeqCst));
        std::mem::replace(&mut seen.counters, now) != now
    }

    /// Whether SIGUSR2 arrived since `seen` (and notes it).
    pub(crate) fn flush_asked(&self, seen: &mut Seen) -> bool {
        let now = self.flush.map_or(0, |c| c.load(Ordering::SeqCst));
        std::mem::replace(&mut seen.flush, now) != now
    }

    pub(crate) fn seen_now(&self) -> Seen {
        let mut seen = Seen::default();
        self.counters_asked(&mut seen);
        self.flush_asked(&mut seen);
        seen
    }
}

/// What a capture tells its caller while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Packets flow (every fan-out member is ready): when tcpdump says "listening on".
    Listening,
    /// The counters so far, as SIGUSR1 asked (the capture goes on).
    Counters {
        /// Packets the sink took.
        captured: u64,
        /// The kernel's counters (summed over a fan-out group).
        stats: Stats,
    },
}

/// How a capture ended (`T`: its counters).
#[derive(Debug)]
pub struct Outcome<E, T = Stats> {
    /// The kernel's counters (summed over a fan-out group).
    pub stats: T,
    /// Packets the sink took.
    pub captured: u64,
    /// Whether the sink said it was full.
    pub full: bool,
    /// The sink's error, which ended the capture.
    pub failure: Option<E>,
    /// A failure reading the ring, which ended the capture.
    pub error: Option<io::Error>,
}

/// When [`Session::run`] stops, besides the stop flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// After this many packets.
    pub count: Option<u64>,
    /// Capture with this many sockets in one `PACKET_FANOUT` group, one thread each (values
    /// below 2: one socket).
    pub fanout: usize,
}

/// An open live capture with its filter.
pub struct Session {
    cap: Capture,
    cfg: Config,
    link_type: LinkType,
    /// The program on the socket and the engine for user space; `None`: not set yet.
    filter: Option<(Validated, Engine)>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("interface", &self.cfg.interface)
            .field("link_type", &self.link_type)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Opens the capture `cfg` describes (nothing is received before [`run`](Self::run)).
    pub fn open(cfg: Config) -> Result<Session, LiveError> {
        let cap = Capture::open(&cfg)?;
        let link_type = LinkType::new(cap.link_type());
        Ok(Session { cap, cfg, link_type, filter: None })
    }

    /// The link type of the packets.
    pub fn link_type(&self) -> LinkType {
        self.link_type
    }

    /// The snapshot length (the configured one, 0 meaning the largest).
    pub fn snaplen(&self) -> u32 {
        self.cap.snaplen()
    }

    /// Compiles `expr` (`None`: keep every packet) for this capture, optimized when
    /// `optimize`, and attaches it to the socket; says where it runs. When the kernel refuses
    /// it, `engine` runs it in user space ([`user_engine`](Self::user_engine) names it).
    pub fn set_filter(
        &mut self,
        expr: Option<&str>,
        optimize: bool,
        engine: Engine,
    ) -> Result<Placement, LiveError> {
        let snaplen = self.snaplen();
        // No expression: the empty filter, which keeps `snaplen` bytes of every packet.
        let resolver = sift_filter::SystemResolver::new();
        let target = Target::live(self.link_type, snaplen);
        let validated = crate::filter::compile(expr.unwrap_or(""), &target, optimize, &resolver)?;
        let placement =
            self.cap.set_filter(validated.insns(), || user_filter(&validated, engine))?;
        self.filter = Some((validated, engine));
        Ok(placement)
    }

    /// The engine that runs the filter when it runs in user space.
    pub fn user_engine(&self) -> &'static str {
        match &self.filter {
            Some((validated, engine)) => user_engine(validated, *engine),
            None => "none",
        }
    }

    /// Captures until a stop (then drains the ring), `limits.count` packets were taken, the
    /// sink is full or fails, or reading fails; obeys `signals` meanwhile. `events` hears
    /// [`Event::Listening`] once packets flow (every fan-out member is ready), then the
    /// counters each time SIGUSR1 asks.
    pub fn run<S: Sink>(
        mut self,
        sink: &mut S,
        limits: Limits,
        signals: Signals,
        mut events: impl FnMut(Event),
    ) -> Result<Outcome<S::Error>, LiveError> {
        if self.filter.is_none() {
            self.set_filter(None, false, Engine::default())?;
        }
        let (validated, engine) = self.filter.take().expect("set above");
        let mut taker = Taker::new(sink, self.link_type, limits.count.unwrap_or(u64::MAX));
        let (stats, error) = if limits.fanout > 1 {
            // Each member opens its own socket; this one only served to learn the link type
            // and where the filter runs. It was never bound, so it saw no packet.
            drop(self.cap);
            let mut cfg = self.cfg;
            cfg.fanout_group = Some((std::process::id() & 0xffff) as u16);
            (
                fanout(limits.fanout, &cfg, &validated, engine, &mut taker, signals, &mut events)?,
                None,
            )
        } else {
            self.cap.start()?;
            events(Event::Listening);
            single(self.cap, &mut taker, signals, &mut events)?
        };
        let Taker { captured, failure, full, .. } = taker;
        Ok(Outcome { stats, captured, full, failure, error })
    }
}

/// Hands packets to the sink until the count, a failure or a full sink.
pub(crate) struct Taker<'s, S: Sink> {
    pub(crate) sink: &'s mut S,
    pub(crate) link_type: LinkType,
    pub(crate) limit: u64,
    pub(crate) captured: u64,
    pub(crate) failure: Option<S::Error>,
    pub(crate) full: bool,
}

impl<'s, S: Sink> Taker<'s, S> {
    /// Packets of `link_type` to `sink`, at most `limit`.
    pub(crate) fn new(sink: &'s mut S, link_type: LinkType, limit: u64) -> Taker<'s, S> {
        Taker { sink, link_type, limit, captured: 0, failure: None, full: false }
    }

    pub(crate) fn done(&self) -> bool {
        self.captured >= self.limit || self.failure.is_some() || self.full
    }

    /// Has the sink write out what it buffers; a failure ends the capture.
    pub(crate) fn flush(&mut self) {
        if self.failure.is_none()
            && let Err(e) = self.sink.flush()
        {
            self.failure = Some(e);
        }
    }

    /// Gives one packet to the sink; `false` once no more are wanted.
    fn take(&mut self, frame: &Frame<'_>) -> bool {
        let time = Timestamp::new(frame.secs, frame.nanos);
        self.take_bytes(time, frame.wire_len, frame.data)
    }

    /// Gives one packet (`data`, `wire_len` bytes long on the wire, at `timestamp`) to the
    /// sink; `false` once no more are wanted.
    pub(crate) fn take_bytes(&mut self, timestamp: Timestamp, wire_len: u32, data: &[u8]) -> bool {
        if self.done() {
            return false;
        }
        let packet = Packet {
            timestamp,
            wire_len,
            data,
            interface: 0,
            link_type: self.link_type,
            offset: 0,
        };
        match self.sink.take(&packet) {
            Ok(Taken::Yes) => {
                self.captured += 1;
                !self.done()
            }
            Ok(Taken::Full) => {
                self.full = true;
                false
            }
            Err(e) => {
                self.failure = Some(e);
                false
            }
        }
    }
}

/// Captures on one socket until a signal, the count, or a sink failure.
fn single<S: Sink>(
    mut cap: Capture,
    taker: &mut Taker<'_, S>,
    signals: Signals,
    events: &mut dyn FnMut(Event),
) -> Result<(Stats, Option<io::Error>), LiveError> {
    let mut io_error = None;
    let mut stats = None;
    let mut seen = signals.seen_now();
    loop {
        if signals.flush_asked(&mut seen) {
            taker.flush();
        }
        if signals.counters_asked(&mut seen) {
            let stats = cap.stats().map_err(LiveError::Stats)?;
            events(Event::Counters { captured: taker.captured, stats });
        }
        if taker.done() {
            break;
        }
        if signals.stop.load(Ordering::SeqCst) {
            // Stop the flow, then deliver everything the kernel counted as queued.
            match cap.drain(&mut |f| taker.take(f)) {
                Ok(s) => stats = Some(s),
                Err(e) => io_error = Some(e),
            }
            break;
        }
        if let Err(e) = cap.dispatch(Duration::from_millis(100), &mut |f| taker.take(f)) {
            io_error = Some(e);
            break;
        }
        if taker.done() {
            break;
        }
    }
    let stats = match stats {
        Some(s) => s,
        None => cap.stats().map_err(LiveError::Stats)?,
    };
    Ok((stats, io_error))
}

/// What a fan-out member sends to the consuming thread.
enum Member {
    Ready,
    Packet {
        secs: u64,
        nanos: u32,
        wire_len: u32,
        data: Vec<u8>,
    },
    /// Its counters, for the SIGUSR1 request numbered `asked`.
    Counters {
        member: usize,
        asked: u64,
        stats: Stats,
    },
    Finished(Result<Stats, LiveError>),
}

/// Captures with `n` sockets in one `PACKET_FANOUT` group (flow-hash mode), one thread each;
/// the kernel spreads flows over them and this thread hands what they take to the sink.
/// Packets of one flow keep their order; packets of different flows may be interleaved
/// differently than on the wire. The counters are the sums over the members.
fn fanout<S: Sink>(
    n: usize,
    cfg: &Config,
    validated: &Validated,
    engine: Engine,
    taker: &mut Taker<'_, S>,
    signals: Signals,
    events: &mut dyn FnMut(Event),
) -> Result<Stats, LiveError> {
    let stop = signals.stop;
    let done = Arc::new(AtomicBool::new(false));
    // The number of the last SIGUSR1 request, which members answer with their counters.
    let asked = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::sync_channel::<Member>(1 << 14);
    for member in 0..n {
        let (cfg, validated, tx, done) = (cfg.clone(), validated.clone(), tx.clone(), done.clone());
        let asked = asked.clone();
        std::thread::spawn(move || {
            let result = (|| -> Result<Stats, LiveError> {
                let mut cap = Capture::open(&cfg)?;
                cap.set_filter(validated.insns(), || user_filter(&validated, engine))?;
                cap.start()?;
                let _ = tx.send(Member::Ready);
                let mut send = |f: &Frame<'_>| {
                    let p = Member::Packet {
                        secs: f.secs,
                        nanos: f.nanos,
                        wire_len: f.wire_len,
                        data: f.data.to_vec(),
                    };
                    tx.send(p).is_ok() && !done.load(Ordering::SeqCst)
                };
                let mut answered = 0;
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(cap.drain(&mut send)?);
                    }
                    if done.load(Ordering::SeqCst) {
                        return Ok(cap.stats()?);
                    }
                    let request = asked.load(Ordering::SeqCst);
                    if request != answered {
                        answered = request;
                        let stats = cap.stats()?;
                        let _ = tx.send(Member::Counters { member, asked: request, stats });
                    }
                    cap.dispatch(Duration::from_millis(100), &mut send)?;
                }
            })();
            let _ = tx.send(Member::Finished(result));
        });
    }
    drop(tx);
    let (mut ready, mut finished) = (0, 0);
    let mut total = Stats::default();
    let mut failure = None;
    let meta = FrameMeta::default();
    let mut seen = signals.seen_now();
    // The members' answers to the current SIGUSR1 request.
    let mut answers: Vec<Option<Stats>> = vec![None; n];
    while finished < n {
        if signals.flush_asked(&mut seen) {
            taker.flush();
            if taker.done() {
                done.store(true, Ordering::SeqCst);
            }
        }
        if signals.counters_asked(&mut seen) {
            answers.iter_mut().for_each(|a| *a = None);
            asked.store(seen.counters, Ordering::SeqCst);
        }
        let msg = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(msg) => msg,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match msg {
            Member::Ready => {
                ready += 1;
                if ready == n {
                    events(Event::Listening);
                }
            }
            Member::Counters { member, asked: request, stats } => {
                if request == asked.load(Ordering::SeqCst) {
                    answers[member] = Some(stats);
                    if answers.iter().all(Option::is_some) {
                        let stats = answers.iter().flatten().fold(Stats::default(), |t, s| Stats {
                            received: t.received + s.received,
                            dropped: t.dropped + s.dropped,
                            taken: t.taken + s.taken,
                        });
                        events(Event::Counters { captured: taker.captured, stats });
                        answers.iter_mut().for_each(|a| *a = None);
                    }
                }
            }
            Member::Packet { secs, nanos, wire_len, data } => {
                let frame = Frame { secs, nanos, wire_len, data: &data, meta: &meta };
                if !taker.done() && !taker.take(&frame) {
                    done.store(true, Ordering::SeqCst);
                }
            }
            Member::Finished(r) => {
                finished += 1;
                match r {
                    Ok(s) => {
                        total.received += s.received;
                        total.dropped += s.dropped;
                        total.taken += s.taken;
                    }
                    Err(e) => {
                        done.store(true, Ordering::SeqCst);
                        failure.get_or_insert(e);
                    }
                }
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(total),
    }
}

/// Whether the program reads packet metadata (Linux ancillary loads), which only the kernel
/// or the interpreter's Linux flavor can supply.
fn uses_metadata(validated: &Validated) -> bool {
    validated.insns().iter().any(|i| {
        let class = code::class(i.code);
        (class == code::BPF_LD || class == code::BPF_LDX)
            && matches!(code::mode(i.code), code::BPF_ABS | code::BPF_IND)
            && i.k >= code::SKF_AD_OFF
    })
}

/// The name of the engine [`user_filter`] picks.
fn user_engine(validated: &Validated, engine: Engine) -> &'static str {
    if uses_metadata(validated) {
        "the interpreter, Linux semantics"
    } else if engine == Engine::Interp {
        "the interpreter"
    } else {
        "the JIT"
    }
}

/// The filter run in user space when the kernel refuses the program: the JIT (or the chosen
/// engine), or the interpreter with Linux semantics when the program reads metadata (only it
/// can supply).
fn user_filter(validated: &Validated, engine: Engine) -> UserFilter {
    if uses_metadata(validated) {
        let interp = sift_vm::Interpreter::with_flavor(validated, sift_vm::Flavor::Linux);
        return Box::new(move |data: &[u8], wire_len: u32, m: &FrameMeta| {
            let meta = sift_vm::PacketMeta {
                wire_len,
                protocol: m.link.protocol,
                pkttype: m.link.pkttype,
                ifindex: Some(m.link.ifindex),
                hatype: Some(m.link.hatype),
                vlan_tci: m.vlan.map(|v| v.1).unwrap_or(0),
                vlan_present: m.vlan.is_some(),
                vlan_tpid: m.vlan.map(|v| v.0).unwrap_or(0),
                rxhash: m.rxhash,
                mac_header: Some(0),
                ..sift_vm::PacketMeta::default()
            };
            interp.run_with_meta(data, &meta) != 0
        });
    }
    let filter = Compiled::new(validated, engine);
    Box::new(move |data: &[u8], wire_len: u32, _: &FrameMeta| filter.accepts(data, wire_len))
}
