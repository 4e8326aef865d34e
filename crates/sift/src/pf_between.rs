//! `sift pf run --between IF1 IF2`: pf between two AF_XDP ports, every frame judged as an
//! OpenBSD bridge judges it (`sift_firewall::between::judge`: `in` on the interface it came
//! from, `out` on the other, one state table), with OVS's caches in front of pf where that is
//! exact.
//!
//! Why it exists: issue 19 puts pf behind the flow datapath's caches as its slow path. pf is
//! stateful, so a cache may answer only for decisions that cannot change while it holds them.
//!
//! **The datapath.** `sift-xdp` runs a thread per receive queue; each owns a [`PfCache`] (a
//! `sift_flow::Datapath<PfSlowPath>`: microflow and megaflow caches) in front of one pf shared
//! behind a mutex ([`SharedPf`]; both passes of a frame are made under one lock, as in `sift pf
//! bridge`). What pf lets through leaves by the other port; when pf changed the frame (it
//! normalized, modulated or translated it) the frame is rewritten in its UMEM chunk first. The
//! frames pf makes besides (answers back toward the sender, synproxy's packets, the second
//! part of a datagram cut again) and frames that outgrow their chunk are sent through an
//! `AF_PACKET` socket on the interface (`sift_capture::Injector`): `sift-xdp` has no way to
//! transmit extra frames. SIGHUP loads the rule set over the running pf, states kept (`pfctl
//! -f`: [`PfBetween::reload`]).
//!
//! **When a decision is cached, and why that is exact.** A cached decision is answered
//! without calling pf, so it must be what pf would decide for every later frame with the same
//! flow key, and skipping pf must change nothing pf would do later. The mask is the whole key
//! (exact match); a decision is cached only when all of this holds:
//!
//! 1. *The rule set is eligible* ([`eligibility`]), checked at load and at every reload:
//!    `Firewall::classify` accepts it for both interfaces (so no anchors, `match` rules, tags,
//!    `received-on`, `probability`, `once`, `max-pkt-rate`, user or group tests, routing
//!    domains, `prio`, route-based addresses: nothing that depends on more than a packet's
//!    addresses, protocol, ports, TCP flags, TOS, interface and direction, or on how many
//!    packets came before), and no rule translates (`nat-to`, `rdr-to`, `binat-to`, `af-to`),
//!    routes (`route-to`, `reply-to`, `dup-to`), scrubs, answers (`return`), logs, tests an
//!    `os` or fills a table (`overload`, which would change other rules' answers).
//! 2. *The frame has the cacheable shape* ([`cacheable_shape`]): untagged Ethernet, IPv4
//!    without options and not a fragment or IPv6 with TCP or UDP right after its header,
//!    lengths that fit, TCP with a data offset that fits, the reserved bits clear and the
//!    urgent pointer zero unless URG is set. For such a frame everything pf's path reads is in
//!    the flow key: reassembly sees no fragment; the parse cannot fail; TCP normalization
//!    (`pf_normalize_tcp`) decides on the flags (in the key) and, with reserved bits and the
//!    urgent pointer fixed, rewrites only as the flags say; the rules test family, protocol,
//!    addresses, ports, TCP flags, TOS (all in the key), interface (the key's in-port) and
//!    direction. Frames of any other shape always go to pf.
//! 3. *The decision came from rules, not states, and touched no state*: every pass was
//!    decided by a rule (or pf's default) for reason `match`, and the state table's inserts and
//!    removals did not move. For TCP and UDP a passing rule that keeps state creates one (or
//!    fails with another reason), so such decisions are by `block` and `no state` rules only.
//! 4. *The frame leaves unchanged or not at all, and nothing is sent besides*: passed and
//!    sent on byte for byte, or blocked, with no answer. A cached pass hands the frame to the
//!    other port as it came.
//! 5. *Nothing changed since*: a generation bumped whenever the state table's inserts or
//!    removals move (a new state could match the key; one removed could be the one a decision
//!    relied on not existing) or the rules are reloaded is compared at every frame; any change
//!    flushes the thread's caches. Expired states need no flush: pf finds none on its clock.
//! 6. *pf's housekeeping is owed nothing*: pf ticks its state table for each packet it
//!    judges (the purge pays a slice of the table per packet while the clock moves). A cache
//!    answers only while a tick at the frame's time would do nothing (the clock would not
//!    move, no purge work is owed: `StateTable::tick_pending`), so skipping pf skips no
//!    work. Fragment expiry and state expiry are decided on the clock when pf next looks, and
//!    no random number is drawn for a cacheable decision.
//!
//! pf's own per-rule counters count the frames pf judged; the caches' hits are in their
//! counters. `tests/pf_cache.rs` holds the argument to account: 10^5 generated frames of every
//! shape through the caches and through `judge` alone, verdicts and bytes equal.

mod cache;

pub use cache::{
    Ineligible, Judged, Outcome, PfCache, PfSlowPath, SharedPf, cacheable_shape, eligibility,
};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sift_capture::{CaptureError, Injector};
use sift_firewall::Firewall;
use sift_flow::{CacheConfig, Counters};
use sift_xdp::{Batch, Datapath, Packet, Pipeline, PortInfo, PortStats, ThreadStats};

use crate::switch::{Config, add_counters};

/// Why pf cannot run between the ports.
#[derive(Debug, thiserror::Error)]
pub enum PfBetweenError {
    /// Two ports are needed, and two different ones.
    #[error("pf runs between two interfaces, not {0:?}")]
    Ports(Vec<String>),
    /// The sockets for pf's own frames.
    #[error(transparent)]
    Injector(#[from] CaptureError),
    /// Setting up or running the AF_XDP datapath.
    #[error(transparent)]
    Datapath(#[from] sift_xdp::Error),
}

/// What crossed one way.
#[derive(Debug, Default)]
struct WayCounts {
    frames: AtomicU64,
    passed: AtomicU64,
    not_ip: AtomicU64,
    held: AtomicU64,
    blocked: AtomicU64,
    answers: AtomicU64,
    send_errors: AtomicU64,
}

/// One way's counters, as reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Way {
    /// Frames read.
    pub frames: u64,
    /// Frames sent on (not-IP ones included).
    pub passed: u64,
    /// Frames that were not IP (sent on unchanged).
    pub not_ip: u64,
    /// Frames pf kept (fragments waiting, synproxy's handshake).
    pub held: u64,
    /// Frames blocked (in either pass).
    pub blocked: u64,
    /// Packets pf sent back toward a sender.
    pub answers: u64,
    /// Frames an interface refused.
    pub send_errors: u64,
}

impl WayCounts {
    fn snapshot(&self) -> Way {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Way {
            frames: get(&self.frames),
            passed: get(&self.passed),
            not_ip: get(&self.not_ip),
            held: get(&self.held),
            blocked: get(&self.blocked),
            answers: get(&self.answers),
            send_errors: get(&self.send_errors),
        }
    }
}

/// A frame's verdicts for `--verdicts`: `N IF1>IF2 in pass @3 match, out pass @5 match`.
pub type VerdictSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What the threads share.
struct Run {
    pf: Arc<SharedPf>,
    /// Port 1's and port 2's injectors (pf's own frames, frames that outgrow their chunk).
    inject: [Mutex<Injector>; 2],
    ways: [WayCounts; 2],
    seen: AtomicU64,
    count: Option<u64>,
    done: AtomicBool,
    verdicts: Option<VerdictSink>,
    /// The first frame an interface refused, described.
    first_send_error: Mutex<Option<String>>,
    finished: Mutex<Vec<(u32, Counters, u64)>>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run").field("pf", &self.pf).field("ways", &self.ways).finish()
    }
}

impl Run {
    fn send(&self, port: usize, frame: &[u8]) {
        let r = self.inject[port].lock().unwrap_or_else(PoisonError::into_inner).send(frame);
        if let Err(e) = r {
            self.ways[port ^ 1].send_errors.fetch_add(1, Ordering::Relaxed);
            let mut first = self.first_send_error.lock().unwrap_or_else(PoisonError::into_inner);
            if first.is_none() {
                let ifname = &self.pf.ifnames()[port];
                *first = Some(format!("sending {} bytes on {ifname}: {e}", frame.len()));
            }
        }
    }
}

fn wall_clock() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// One queue thread's pipeline.
struct PfPipe {
    queue: u32,
    cache: PfCache,
    run: Arc<Run>,
}

/// Makes `p` carry `bytes` instead (growing into its tailroom); false when they do not fit.
fn rewrite(p: &mut Packet<'_>, bytes: &[u8]) -> bool {
    if bytes.len() > p.len() + p.tailroom() || !p.set_len(bytes.len()) {
        return false;
    }
    p.data_mut().copy_from_slice(bytes);
    true
}

impl Pipeline for PfPipe {
    fn process(&mut self, batch: &mut Batch<'_>) {
        let from = batch.in_port() & 1;
        let to = from ^ 1;
        let run = &*self.run;
        let way = &run.ways[from];
        let n = batch.len() as u64;
        let base = run.seen.fetch_add(n, Ordering::SeqCst);
        if let Some(c) = run.count
            && base + n >= c
        {
            run.done.store(true, Ordering::SeqCst);
        }
        let now = wall_clock();
        let names = run.pf.ifnames();
        let mut i = 0u64;
        batch.for_each(|mut p| {
            i += 1;
            let nr = base + i;
            if run.count.is_some_and(|c| nr > c) {
                p.discard();
                return;
            }
            way.frames.fetch_add(1, Ordering::Relaxed);
            let mut answered = false;
            let line = match self.cache.judge(p.data(), from, now) {
                Outcome::Cached { pass, line } => {
                    if pass {
                        way.passed.fetch_add(1, Ordering::Relaxed);
                        p.output(to);
                    } else {
                        way.blocked.fetch_add(1, Ordering::Relaxed);
                    }
                    run.verdicts.as_ref().map(|_| line.to_string())
                }
                Outcome::Judged(j) => {
                    let fate = j.fate;
                    let count = |c: &AtomicU64, yes: bool| {
                        if yes {
                            c.fetch_add(1, Ordering::Relaxed);
                        }
                    };
                    count(&way.not_ip, fate.not_ip);
                    count(&way.blocked, fate.blocked);
                    count(&way.held, fate.held && !fate.blocked);
                    count(&way.passed, !fate.blocked && !fate.held);
                    let mut on = fate.on.iter();
                    if let Some(first) = on.next() {
                        if first.as_slice() == p.data() || rewrite(&mut p, first) {
                            p.output(to);
                        } else {
                            run.send(to, first);
                        }
                    }
                    for f in on {
                        run.send(to, f);
                    }
                    for f in &fate.back {
                        way.answers.fetch_add(1, Ordering::Relaxed);
                        run.send(from, f);
                    }
                    answered = !fate.back.is_empty();
                    Some(j.line)
                }
            };
            if let (Some(sink), Some(line)) = (&run.verdicts, line) {
                let answered = if answered { " answered" } else { "" };
                sink(&format!("{nr} {}>{}{line}{answered}", names[from], names[to]));
            }
        });
    }
}

impl Drop for PfPipe {
    fn drop(&mut self) {
        let mut done = self.run.finished.lock().unwrap_or_else(PoisonError::into_inner);
        done.push((self.queue, self.cache.counters(), self.cache.bypassed()));
    }
}

/// pf running between two ports. Dropping it stops it (without a report).
#[derive(Debug)]
pub struct PfBetween {
    dp: Datapath,
    run: Arc<Run>,
    start: Instant,
}

/// What pf between the ports did, when it stopped.
#[derive(Debug)]
pub struct Report {
    /// The interfaces (port 1, port 2).
    pub ifnames: [String; 2],
    /// Frames from port 1 to port 2, and from port 2 to port 1.
    pub ways: [Way; 2],
    /// The ports' datapath counters.
    pub ports: [PortStats; 2],
    /// The cache counters summed over the threads.
    pub caches: Counters,
    /// Frames judged without the caches (other shapes, a rule set not eligible, pf's
    /// housekeeping due).
    pub bypassed: u64,
    /// Why the rule set's decisions were not cached, if they were not.
    pub ineligible: Option<Ineligible>,
    /// The first frame an interface refused, described.
    pub first_send_error: Option<String>,
    /// Frames received (those past `-c` included).
    pub frames: u64,
    /// The threads' counters.
    pub threads: Vec<ThreadStats>,
    /// How long it ran.
    pub elapsed: Duration,
    /// pf as it ended (its states).
    pub firewall: Firewall,
}

impl PfBetween {
    /// Opens the two ports of `cfg` and runs `fw` between them; `verdicts` hears every frame's
    /// verdicts.
    pub fn start(
        fw: Firewall,
        cfg: &Config,
        verdicts: Option<VerdictSink>,
    ) -> Result<PfBetween, PfBetweenError> {
        let [a, b] = <[String; 2]>::try_from(cfg.ports.clone())
            .map_err(|_| PfBetweenError::Ports(cfg.ports.clone()))?;
        if a == b {
            return Err(PfBetweenError::Ports(cfg.ports.clone()));
        }
        let inject =
            [Mutex::new(Injector::open(&a, false)?), Mutex::new(Injector::open(&b, false)?)];
        let pf = Arc::new(SharedPf::new(fw, [a, b]));
        let run = Arc::new(Run {
            pf: pf.clone(),
            inject,
            ways: Default::default(),
            seen: AtomicU64::new(0),
            count: cfg.count,
            done: AtomicBool::new(false),
            verdicts,
            first_send_error: Mutex::new(None),
            finished: Mutex::new(Vec::new()),
        });
        let (ports, opts) = cfg.xdp();
        let r = run.clone();
        let dp = Datapath::start(&ports, &opts, move |queue| PfPipe {
            queue,
            cache: PfCache::new(r.pf.clone(), CacheConfig::default()),
            run: r.clone(),
        })?;
        Ok(PfBetween { dp, run, start: Instant::now() })
    }

    /// The ports as opened.
    pub fn ports(&self) -> Vec<PortInfo> {
        self.dp.ports()
    }

    /// Why the rule set's decisions are not cached, if they are not.
    pub fn ineligible(&self) -> Option<Ineligible> {
        self.run.pf.ineligible()
    }

    /// Changes pf under traffic (a rule set loaded over it: `Firewall::load_anchor("", …)`;
    /// states stay); the caches are flushed.
    pub fn reload<R>(&self, change: impl FnOnce(&mut Firewall) -> R) -> R {
        self.run.pf.reload(change)
    }

    /// Reads pf.
    pub fn with_firewall<R>(&self, f: impl FnOnce(&Firewall) -> R) -> R {
        self.run.pf.with(f)
    }

    /// Whether `-c`'s count of frames was reached (or a thread ended early).
    pub fn finished(&self) -> bool {
        self.run.done.load(Ordering::SeqCst) || self.dp.is_degraded()
    }

    /// Stops (the datapath drains what it received) and reports.
    pub fn stop(self) -> Result<Report, PfBetweenError> {
        let PfBetween { dp, run, start } = self;
        let xdp = dp.stop()?;
        let elapsed = start.elapsed();
        let mut caches = Counters::default();
        let mut bypassed = 0;
        for (_, c, b) in run.finished.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            add_counters(&mut caches, c);
            bypassed += b;
        }
        let ways = [run.ways[0].snapshot(), run.ways[1].snapshot()];
        let first_send_error =
            run.first_send_error.lock().unwrap_or_else(PoisonError::into_inner).take();
        let ineligible = run.pf.ineligible();
        let ifnames = run.pf.ifnames().clone();
        let frames = run.seen.load(Ordering::SeqCst);
        let ports = [
            xdp.ports.first().copied().unwrap_or_default(),
            xdp.ports.get(1).copied().unwrap_or_default(),
        ];
        // The threads are gone: the last reference to pf besides this one goes with `run`.
        let pf = Arc::clone(&run.pf);
        drop(run);
        let firewall = match Arc::try_unwrap(pf) {
            Ok(pf) => pf.into_firewall(),
            Err(pf) => pf.with(Firewall::clone),
        };
        Ok(Report {
            ifnames,
            ways,
            ports,
            caches,
            bypassed,
            ineligible,
            first_send_error,
            frames,
            threads: xdp.threads,
            elapsed,
            firewall,
        })
    }
}
