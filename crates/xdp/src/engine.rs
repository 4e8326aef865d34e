//! The datapath engine: ports opened, programs attached, and one thread per receive queue
//! index that polls that queue of every port, hands each batch to the caller's [`Pipeline`]
//! and carries out its decisions with batched transmission.
//!
//! Thread `q` owns queue `q`'s socket of every port: its UMEM, rings and pool. Nothing on the
//! packet path is shared between threads (no locks, no atomic read-modify-writes; counters are
//! written by their one thread and read by anyone), except with [`PoolKind::SharedMutex`],
//! the seed's first design kept for comparison. A round of a thread:
//!
//! 1. for each port: take up to a batch of frames off RX, run the pipeline on them, then for
//!    each packet: drop it (its frame back to the pool), send it back out of the port it came
//!    in on (the same frame goes on that socket's TX ring: no copy), or out of another port
//!    (copied into a free frame of that port's UMEM for this queue); put what is to be sent
//!    on the TX rings and kick as [`Kick`] says;
//! 2. for each port: take sent frames off COMPLETION, top FILL up from the pool; when the
//!    round received nothing, kick what waits on TX and wake drivers that asked for it.
//!
//! In [`PollMode::Pmd`] the thread spins on its rings (a poll-mode driver: one CPU per queue,
//! no system call when idle); in [`PollMode::Poll`] it sleeps in `poll()` on its sockets
//! before each round (the seed's first design, which measured far slower).
//!
//! Stopping ([`Datapath::stop`]) takes the sockets out of the `XSKMAP`s first, so no frame is
//! redirected to a socket nobody will read; each thread then keeps running rounds until its
//! rings have been empty and everything it transmitted has come back on COMPLETION for a short
//! quiet period (bounded by [`DRAIN_LIMIT`]). So every frame counted as received went through
//! the pipeline, and every frame counted as transmitted was sent.

use std::collections::BTreeSet;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use sift_sys::xsk::{self, Desc, Umem};
use sift_sys::{iface, time};

use crate::Error;
use crate::batch::{Batch, MAX_PORTS, Meta, MetaMode, Metas, PortId};
use crate::pool::{PoolKind, PtrStack};
use crate::port::{Bound, Counters, PortConfig, PortInfo, Xsk, bump, check_config, rx_queues};
use crate::program::Attached;
use sift_kernel::object::KernelMap;

/// What the caller's code does with each batch.
pub trait Pipeline: Send {
    /// Decides the fate of each packet of `batch` ([`Packet::output`](crate::Packet::output);
    /// a packet sent nowhere is dropped). The bytes may be changed in place, the start moved
    /// into the headroom, the length changed.
    fn process(&mut self, batch: &mut Batch<'_>);
}

impl<F: FnMut(&mut Batch<'_>) + Send> Pipeline for F {
    fn process(&mut self, batch: &mut Batch<'_>) {
        self(batch)
    }
}

/// How a thread waits for frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PollMode {
    /// Spin on the rings (poll-mode driver): the fast one.
    #[default]
    Pmd,
    /// `poll()` on the thread's sockets before each round (at most 100 ms, so that a stop is
    /// seen).
    Poll,
}

/// When a thread asks the kernel to send what it put on a TX ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kick {
    /// After every batch.
    EveryBatch,
    /// Once this many entries wait on the ring since the last kick (and whenever a round
    /// received nothing, so that the tail of a burst goes out).
    Waiting(u32),
}

impl Default for Kick {
    /// `Waiting(512)`, the seed's setting (§4.5.3).
    fn default() -> Self {
        Kick::Waiting(512)
    }
}

/// The datapath without itself, as the kernel's `xdpsock` sample runs: the rings only, no
/// pool, no metadata, no pipeline (which is not called). What the real datapath costs is
/// measured against it (`examples/xdpsock.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Baseline {
    /// Received frames go straight back on FILL.
    RxDrop,
    /// Received frames get their MAC addresses swapped and go straight onto TX of the port
    /// they came from; sent frames go straight back on FILL.
    L2fwd,
}

/// How the datapath runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Frames taken off RX at a time (1 to 256).
    pub batch: u32,
    /// Spinning or `poll()`.
    pub poll: PollMode,
    /// The free-frame pool.
    pub pool: PoolKind,
    /// Where packet metadata lives.
    pub meta: MetaMode,
    /// When to kick TX.
    pub kick: Kick,
    /// Run the baseline instead of the pipeline (benchmarks only).
    pub baseline: Option<Baseline>,
}

impl Default for Options {
    /// Batches of 64, poll mode, `ptr_stack` pools, metadata in an array, kick at 512.
    fn default() -> Self {
        Options {
            batch: 64,
            poll: PollMode::Pmd,
            pool: PoolKind::Stack,
            meta: MetaMode::Array,
            kick: Kick::default(),
            baseline: None,
        }
    }
}

/// The most frames a batch may have.
pub const MAX_BATCH: u32 = 256;
/// How long a stopping thread may take to drain its rings and see its frames sent.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// How long a stopping thread's rings must stay empty before it ends.
const QUIET: Duration = Duration::from_millis(20);
/// The longest `poll()` wait in [`PollMode::Poll`].
const POLL_MS: i32 = 100;

/// One port's counters, summed over its queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames taken off RX (each went through the pipeline).
    pub rx_packets: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames put on TX.
    pub tx_packets: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Frames the kernel has sent (taken off COMPLETION).
    pub tx_completed: u64,
    /// Received frames the pipeline sent nowhere.
    pub drop_pipeline: u64,
    /// Received frames' outputs to a port the datapath does not have (or has no socket for on
    /// this queue).
    pub drop_no_port: u64,
    /// Copies to send out of this port lost for want of a free frame.
    pub drop_no_frame: u64,
    /// Copies to send out of this port longer than its frames.
    pub drop_too_long: u64,
    /// Frames to send lost because the TX ring stayed full after a kick.
    pub drop_tx_full: u64,
    /// `sendto` kicks.
    pub kicks: u64,
    /// `recvfrom` wake-ups of the driver (need-wakeup).
    pub wakeups: u64,
    /// The kernel's counters of the port's sockets (`XDP_STATISTICS`).
    pub xdp: xsk::Statistics,
}

/// One thread's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    /// The queue it polls.
    pub queue: u32,
    /// The CPU time it used, in nanoseconds (updated every few hundred rounds and at its end).
    pub cpu_ns: u64,
    /// Rounds over its ports.
    pub rounds: u64,
    /// Rounds that received nothing.
    pub idle_rounds: u64,
    /// The wall time spent in rounds that received something, in nanoseconds. A PMD thread's
    /// CPU time is mostly spinning; this is the part that did work, so divided by the frames
    /// received it is the datapath's own cost per frame, whatever the traffic's rate.
    pub busy_ns: u64,
}

#[derive(Debug, Default)]
struct ThreadCounters {
    cpu_ns: AtomicU64,
    rounds: AtomicU64,
    idle_rounds: AtomicU64,
    busy_ns: AtomicU64,
}

/// What [`Datapath::stop`] returns: the final counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Per port, in the order given.
    pub ports: Vec<PortStats>,
    /// Per thread, by queue.
    pub threads: Vec<ThreadStats>,
}

/// One queue's socket as the datapath keeps track of it.
#[derive(Debug)]
struct QueueHandle {
    counters: Arc<Counters>,
    fd: Arc<OwnedFd>,
}

#[derive(Debug)]
struct PortState {
    info: PortInfo,
    queues: Vec<QueueHandle>,
    attached: Option<Attached>,
}

/// A running datapath (see the module docs). Dropping it stops it as [`Datapath::stop`] does.
#[derive(Debug)]
pub struct Datapath {
    ports: Vec<PortState>,
    threads: Vec<(u32, Arc<ThreadCounters>, Option<JoinHandle<()>>)>,
    stop: Arc<AtomicBool>,
}

impl Datapath {
    /// Opens the ports (names resolved in the calling thread's network namespace), attaches
    /// their programs and starts one thread per queue index; `pipeline(q)` makes thread `q`'s
    /// pipeline. Port `i` of `ports` is [`PortId`] `i`.
    pub fn start<P: Pipeline + 'static>(
        ports: &[PortConfig],
        opts: &Options,
        mut pipeline: impl FnMut(u32) -> P,
    ) -> Result<Datapath, Error> {
        if opts.batch == 0 || opts.batch > MAX_BATCH {
            return Err(Error::Config {
                what: format!("batch size {}: must be 1 to {MAX_BATCH}", opts.batch),
            });
        }
        if let Kick::Waiting(0) = opts.kick {
            return Err(Error::Config { what: "kick threshold 0: must be at least 1".into() });
        }
        if ports.is_empty() || ports.len() > MAX_PORTS {
            return Err(Error::Config {
                what: format!("{} ports: a datapath has 1 to {MAX_PORTS}", ports.len()),
            });
        }
        // Check everything before touching the kernel.
        let mut plans = Vec::with_capacity(ports.len());
        for cfg in ports {
            check_config(cfg)?;
            let ifindex = iface::index_of(&cfg.iface).map_err(|e| match e.raw_os_error() {
                Some(libc::ENODEV) => Error::UnknownInterface { iface: cfg.iface.clone() },
                _ => Error::Socket {
                    iface: cfg.iface.clone(),
                    queue: 0,
                    what: "interface",
                    source: e,
                },
            })?;
            let have = rx_queues(&cfg.iface);
            let queues: Vec<u32> = match &cfg.queues {
                None => (0..have).collect(),
                Some(qs) => qs.iter().copied().collect::<BTreeSet<u32>>().into_iter().collect(),
            };
            if queues.is_empty() {
                return Err(Error::Config { what: format!("{}: no queue to bind", cfg.iface) });
            }
            if let Some(&q) = queues.iter().find(|&&q| q >= have) {
                return Err(Error::QueueOutOfRange {
                    iface: cfg.iface.clone(),
                    queue: q,
                    queues: have,
                });
            }
            plans.push((ifindex, have, queues));
        }
        // Sockets, then programs (so that no frame is redirected to a queue without one).
        let nports = ports.len();
        let mut by_queue: Vec<(u32, Vec<Option<Xsk>>)> = Vec::new();
        let mut states = Vec::with_capacity(nports);
        for (p, (cfg, (ifindex, have, queues))) in ports.iter().zip(&plans).enumerate() {
            let shared = (opts.pool == PoolKind::SharedMutex).then(|| {
                let stacks = queues.iter().map(|_| PtrStack::new(cfg.frames as usize)).collect();
                Arc::new(Mutex::new(stacks))
            });
            let mut handles = Vec::new();
            let mut mode = Bound::ZeroCopy;
            let mut opened = Vec::new();
            for (i, &q) in queues.iter().enumerate() {
                let share = shared.as_ref().map(|s| (s.clone(), i));
                let (x, bound) = Xsk::open(cfg, *ifindex, q, opts.pool, opts.meta, share)?;
                if bound == Bound::Copy {
                    mode = Bound::Copy;
                }
                handles.push(QueueHandle { counters: x.counters.clone(), fd: x.fd_handle() });
                opened.push(x);
            }
            let sockets: Vec<(u32, std::os::fd::BorrowedFd<'_>)> =
                opened.iter().map(|x| (x.queue, x.fd())).collect();
            let attached = Attached::attach(
                &cfg.iface,
                *ifindex,
                *have,
                &cfg.program,
                cfg.xdp_mode,
                &sockets,
            )?;
            states.push(PortState {
                info: PortInfo {
                    iface: cfg.iface.clone(),
                    ifindex: *ifindex,
                    queues: queues.clone(),
                    mode,
                },
                queues: handles,
                attached: Some(attached),
            });
            for x in opened {
                let slot = match by_queue.iter().position(|(q, _)| *q == x.queue) {
                    Some(i) => i,
                    None => {
                        by_queue.push((x.queue, (0..nports).map(|_| None).collect()));
                        by_queue.len() - 1
                    }
                };
                by_queue[slot].1[p] = Some(x);
            }
        }
        by_queue.sort_by_key(|(q, _)| *q);
        let stop = Arc::new(AtomicBool::new(false));
        let mut dp = Datapath { ports: states, threads: Vec::new(), stop: stop.clone() };
        for (queue, xsks) in by_queue {
            let counters = Arc::new(ThreadCounters::default());
            let worker =
                Worker::new(queue, xsks, pipeline(queue), opts, stop.clone(), counters.clone());
            let handle = std::thread::Builder::new()
                .name(format!("sift-xdp-q{queue}"))
                .spawn(move || worker.run())
                .map_err(|source| Error::Thread { queue, source })?;
            dp.threads.push((queue, counters, Some(handle)));
        }
        Ok(dp)
    }

    /// The ports, as opened ([`PortId`] order).
    pub fn ports(&self) -> Vec<PortInfo> {
        self.ports.iter().map(|p| p.info.clone()).collect()
    }

    /// Every port's counters now ([`PortId`] order); the kernel's are read with one
    /// `getsockopt` per socket.
    pub fn stats(&self) -> Vec<PortStats> {
        self.ports.iter().map(port_stats).collect()
    }

    /// Another handle on map `name` of port `port`'s XDP program (a caller's counters, read
    /// while running and after [`Datapath::stop`]: the handle keeps the map).
    pub fn program_map(&self, port: PortId, name: &str) -> Result<KernelMap, Error> {
        let attached = self.ports.get(port).and_then(|p| p.attached.as_ref()).ok_or_else(|| {
            Error::Config { what: format!("port {port}: no such port with a program") }
        })?;
        attached.map(name)
    }

    /// Every thread's counters now, by queue.
    pub fn threads(&self) -> Vec<ThreadStats> {
        self.threads
            .iter()
            .map(|(queue, c, _)| ThreadStats {
                queue: *queue,
                cpu_ns: c.cpu_ns.load(Ordering::Relaxed),
                rounds: c.rounds.load(Ordering::Relaxed),
                idle_rounds: c.idle_rounds.load(Ordering::Relaxed),
                busy_ns: c.busy_ns.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Whether a thread has ended (only a panic in a pipeline ends one before a stop).
    pub fn is_degraded(&self) -> bool {
        self.threads.iter().any(|(_, _, h)| h.as_ref().is_some_and(|h| h.is_finished()))
    }

    /// Stops: the sockets leave the `XSKMAP`s (frames get the programs' fallback), each thread
    /// drains its rings and waits for its transmissions (at most [`DRAIN_LIMIT`]), the
    /// programs are detached. Returns the final counters; an error when a thread panicked
    /// (its pipeline did).
    pub fn stop(mut self) -> Result<Report, Error> {
        let panicked = self.halt();
        let report = Report { ports: self.stats(), threads: self.threads() };
        for p in &mut self.ports {
            p.attached = None;
        }
        match panicked {
            Some(queue) => Err(Error::Thread {
                queue,
                source: io::Error::other("the thread's pipeline panicked"),
            }),
            None => Ok(report),
        }
    }

    /// Stops the threads; the queue of one that panicked.
    fn halt(&mut self) -> Option<u32> {
        for p in &self.ports {
            if let Some(a) = &p.attached {
                a.remove_sockets(p.info.queues.iter().copied());
            }
        }
        self.stop.store(true, Ordering::Release);
        let mut panicked = None;
        for (queue, _, handle) in &mut self.threads {
            if let Some(h) = handle.take()
                && h.join().is_err()
            {
                panicked = Some(*queue);
            }
        }
        panicked
    }
}

impl Drop for Datapath {
    fn drop(&mut self) {
        self.halt();
    }
}

fn port_stats(p: &PortState) -> PortStats {
    let mut s = PortStats::default();
    for q in &p.queues {
        let c = &q.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        s.rx_packets += get(&c.rx_packets);
        s.rx_bytes += get(&c.rx_bytes);
        s.tx_packets += get(&c.tx_packets);
        s.tx_bytes += get(&c.tx_bytes);
        s.tx_completed += get(&c.tx_completed);
        s.drop_pipeline += get(&c.drop_pipeline);
        s.drop_no_port += get(&c.drop_no_port);
        s.drop_no_frame += get(&c.drop_no_frame);
        s.drop_too_long += get(&c.drop_too_long);
        s.drop_tx_full += get(&c.drop_tx_full);
        s.kicks += get(&c.kicks);
        s.wakeups += get(&c.wakeups);
        if let Ok(x) = xsk::statistics(q.fd.as_fd()) {
            s.xdp.rx_dropped += x.rx_dropped;
            s.xdp.rx_invalid_descs += x.rx_invalid_descs;
            s.xdp.tx_invalid_descs += x.tx_invalid_descs;
            s.xdp.rx_ring_full += x.rx_ring_full;
            s.xdp.rx_fill_ring_empty_descs += x.rx_fill_ring_empty_descs;
            s.xdp.tx_ring_empty_descs += x.tx_ring_empty_descs;
        }
    }
    s
}

/// One thread: queue `queue` of every port that has it.
struct Worker<P> {
    queue: u32,
    /// By port; `None` for ports without this queue.
    xsks: Vec<Option<Xsk>>,
    pipeline: P,
    batch: u32,
    poll: PollMode,
    kick: Kick,
    baseline: Option<Baseline>,
    stop: Arc<AtomicBool>,
    counters: Arc<ThreadCounters>,
    metas: Metas,
    /// Frame addresses moved between rings and pools.
    scratch: Vec<u64>,
    /// Received frames to give back to the in-port's pool after a batch.
    free: Vec<u64>,
    /// Per out-port: copies to make (address in the in-port's UMEM, length).
    copies: Vec<Vec<(u64, u32)>>,
    /// Per port: entries to put on its TX ring.
    txq: Vec<Vec<Desc>>,
    /// Free frames of an out-port for copies.
    frames: Vec<u64>,
    fds: Vec<Arc<OwnedFd>>,
}

impl<P: Pipeline> Worker<P> {
    fn new(
        queue: u32,
        xsks: Vec<Option<Xsk>>,
        pipeline: P,
        opts: &Options,
        stop: Arc<AtomicBool>,
        counters: Arc<ThreadCounters>,
    ) -> Worker<P> {
        let n = xsks.len();
        let batch = opts.batch as usize;
        let fds = xsks.iter().flatten().map(|x| x.fd_handle()).collect();
        Worker {
            queue,
            xsks,
            pipeline,
            batch: opts.batch,
            poll: opts.poll,
            kick: opts.kick,
            baseline: opts.baseline,
            stop,
            counters,
            metas: Metas::new(opts.meta, batch),
            scratch: vec![0; 256],
            free: Vec::with_capacity(batch),
            copies: (0..n).map(|_| Vec::with_capacity(batch)).collect(),
            txq: (0..n).map(|_| Vec::with_capacity(batch)).collect(),
            frames: vec![0; batch],
            fds,
        }
    }

    fn run(mut self) {
        let (mut rounds, mut idle, mut busy) = (0u64, 0u64, Duration::ZERO);
        loop {
            if self.stop.load(Ordering::Acquire) {
                self.drain();
                break;
            }
            if self.poll == PollMode::Poll {
                let _ = xsk::poll(&self.fds, false, POLL_MS);
            }
            let t0 = Instant::now();
            let got = self.round();
            rounds += 1;
            if got == 0 {
                idle += 1;
                std::hint::spin_loop();
            } else {
                busy += t0.elapsed();
            }
            if rounds.is_multiple_of(256) {
                self.publish(rounds, idle, busy);
            }
        }
        self.publish(rounds, idle, busy);
    }

    fn publish(&self, rounds: u64, idle: u64, busy: Duration) {
        let c = &self.counters;
        c.cpu_ns.store(time::thread_cpu_ns(), Ordering::Relaxed);
        c.rounds.store(rounds, Ordering::Relaxed);
        c.idle_rounds.store(idle, Ordering::Relaxed);
        c.busy_ns.store(u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Rounds until the rings stay empty and every transmission has completed for [`QUIET`],
    /// or [`DRAIN_LIMIT`] passes.
    fn drain(&mut self) {
        let start = Instant::now();
        let mut quiet_since = start;
        loop {
            let got = self.round();
            let mut busy = got > 0;
            for x in self.xsks.iter_mut().flatten() {
                if x.unkicked > 0 {
                    x.kick();
                }
                x.reap(&mut self.scratch);
                busy |= x.outstanding > 0;
            }
            let now = Instant::now();
            if busy {
                quiet_since = now;
            } else if now - quiet_since >= QUIET {
                return;
            }
            if now - start >= DRAIN_LIMIT {
                return;
            }
        }
    }

    /// One round over the ports; returns the frames received.
    fn round(&mut self) -> u32 {
        let mut got = 0;
        for p in 0..self.xsks.len() {
            got += self.service(p);
        }
        for x in self.xsks.iter_mut().flatten() {
            match self.baseline {
                Some(Baseline::L2fwd) => x.comp_to_fill(),
                _ => {
                    x.reap(&mut self.scratch);
                }
            }
            if got == 0 && x.unkicked > 0 {
                x.kick();
            }
            x.refill(&mut self.scratch);
            if got == 0 {
                x.wake_if_needed();
            }
        }
        got
    }

    /// Receives a batch on port `p`, runs the pipeline, executes and transmits.
    fn service(&mut self, p: PortId) -> u32 {
        let Some(x) = self.xsks[p].as_mut() else { return 0 };
        if let Some(b) = self.baseline {
            let (n, bytes) = match b {
                Baseline::RxDrop => x.rx_to_fill(self.batch),
                Baseline::L2fwd => x.rx_to_tx(self.batch),
            };
            bump(&x.counters.rx_packets, u64::from(n));
            bump(&x.counters.rx_bytes, bytes);
            if n > 0 {
                match self.kick {
                    Kick::EveryBatch => x.kick(),
                    Kick::Waiting(w) if x.unkicked >= w => x.kick(),
                    Kick::Waiting(_) => {}
                }
            }
            return n;
        }
        let metas = &mut self.metas;
        metas.clear();
        let mut bytes = 0u64;
        let n = x.receive(self.batch, |umem, d| {
            let base = umem.frame_base(d.addr);
            bytes += u64::from(d.len);
            metas
                .push(umem, Meta { addr: base, start: (d.addr - base) as u32, len: d.len, out: 0 });
        });
        if n == 0 {
            return 0;
        }
        bump(&x.counters.rx_packets, u64::from(n));
        bump(&x.counters.rx_bytes, bytes);
        let now = SystemTime::now();
        self.pipeline.process(&mut Batch::new(p, self.queue, now, &mut x.umem, metas));
        self.execute(p);
        self.flush();
        n
    }

    /// Carries out the pipeline's decisions on port `p`'s batch.
    fn execute(&mut self, p: PortId) {
        let nports = self.xsks.len();
        let Some(x) = self.xsks[p].as_ref() else { return };
        let (mut dropped, mut no_port) = (0u64, 0u64);
        for i in 0..self.metas.len() {
            let m = self.metas.get(&x.umem, i);
            if m.out == 0 {
                self.free.push(m.addr);
                dropped += 1;
                continue;
            }
            let data = m.addr + u64::from(m.start);
            let mut keep = false;
            let mut out = m.out;
            while out != 0 {
                let q = out.trailing_zeros() as usize;
                out &= out - 1;
                if q == p {
                    self.txq[p].push(Desc { addr: data, len: m.len, options: 0 });
                    keep = true;
                } else if q < nports && self.xsks[q].is_some() {
                    self.copies[q].push((data, m.len));
                } else {
                    no_port += 1;
                }
            }
            if !keep {
                self.free.push(m.addr);
            }
        }
        bump(&x.counters.drop_pipeline, dropped);
        bump(&x.counters.drop_no_port, no_port);
        for q in 0..nports {
            if q != p && !self.copies[q].is_empty() {
                self.copy_out(p, q);
            }
        }
        if let Some(x) = self.xsks[p].as_mut() {
            x.pool.put(&self.free);
        }
        self.free.clear();
    }

    /// Copies the frames for port `q` from port `p`'s UMEM into free frames of `q`'s.
    fn copy_out(&mut self, p: PortId, q: PortId) {
        let copies = &mut self.copies[q];
        let Ok([Some(src), Some(dst)]) = self.xsks.get_disjoint_mut([p, q]) else {
            copies.clear();
            return;
        };
        let want = copies.len();
        if self.frames.len() < want {
            self.frames.resize(want, 0);
        }
        let got = dst.pool.get(&mut self.frames[..want]);
        let off = u64::from(dst.data_offset());
        let room = u64::from(dst.umem.frame_size()) - off;
        let (mut too_long, mut used) = (0u64, 0usize);
        for &(addr, len) in copies.iter().take(got) {
            if u64::from(len) > room {
                too_long += 1;
                continue;
            }
            let frame = self.frames[used];
            if copy(&src.umem, addr, &mut dst.umem, frame + off, len as usize) {
                self.txq[q].push(Desc { addr: frame + off, len, options: 0 });
                used += 1;
            } else {
                too_long += 1;
            }
        }
        dst.pool.put(&self.frames[used..got]);
        bump(&dst.counters.drop_too_long, too_long);
        bump(&dst.counters.drop_no_frame, (want - got) as u64);
        copies.clear();
    }

    /// Puts each port's pending entries on its TX ring and kicks as the policy says.
    fn flush(&mut self) {
        for q in 0..self.xsks.len() {
            if self.txq[q].is_empty() {
                continue;
            }
            let Some(x) = self.xsks[q].as_mut() else {
                self.txq[q].clear();
                continue;
            };
            let pending = &self.txq[q];
            let mut done = x.enqueue(pending);
            if done < pending.len() {
                // Full: have the kernel send, take back what it sent, try once more.
                x.kick();
                x.reap(&mut self.scratch);
                done += x.enqueue(&pending[done..]);
            }
            let bytes: u64 = pending[..done].iter().map(|d| u64::from(d.len)).sum();
            bump(&x.counters.tx_packets, done as u64);
            bump(&x.counters.tx_bytes, bytes);
            if done < pending.len() {
                let lost = &pending[done..];
                for d in lost {
                    let base = x.umem.frame_base(d.addr);
                    x.pool.put(&[base]);
                }
                bump(&x.counters.drop_tx_full, lost.len() as u64);
            }
            match self.kick {
                Kick::EveryBatch => x.kick(),
                Kick::Waiting(n) if x.unkicked >= n => x.kick(),
                Kick::Waiting(_) => {}
            }
            self.txq[q].clear();
        }
    }
}

/// Copies `len` bytes at `from` in `src` to `to` in `dst`; `false` when either range is not
/// inside one frame.
fn copy(src: &Umem, from: u64, dst: &mut Umem, to: u64, len: usize) -> bool {
    match (src.bytes(from, len), dst.bytes_mut(to, len)) {
        (Some(s), Some(d)) => {
            d.copy_from_slice(s);
            true
        }
        _ => false,
    }
}
