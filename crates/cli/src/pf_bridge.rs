//! `sift pf bridge -f RULES IF_A IF_B`: sift's pf live between two interfaces, filtering as an
//! OpenBSD bridge (or router) does, so that real TCP/IP stacks on either side judge what pf's
//! rewriting makes of their packets.
//!
//! Why it exists: the offline replay (`sift pf -f RULES -r CAPTURE -w OUT`) shows what pf would
//! send, but only a kernel receiving it shows that `modulate state`, `synproxy state`,
//! translation, scrubbing and `block return`'s answers make working TCP. The bridge puts pf's
//! whole packet path (`Firewall::process`) between two links (two network namespaces' veth
//! pairs in the tests, or any two Ethernet interfaces):
//!
//! - a frame read on IF_A is judged `in on IF_A`; each packet that goes on (the packet as pf
//!   rewrote it, or the datagram a fragment completed) is judged `out on IF_B` (received on
//!   IF_A, carrying the tag the first pass gave it) and, if it passes, sent on IF_B. The same
//!   from IF_B to IF_A. Both passes share the state table, as on OpenBSD.
//! - frames that are not IPv4 or IPv6 (ARP, …) are forwarded unchanged, as pf never sees them.
//! - the packets pf makes itself go where pf sends them: a packet back toward the sender
//!   (`Decision::reply`: `block return`'s TCP RST or ICMP unreachable, synproxy's SYN+ACK to
//!   the client or ACK to the server) out of the interface the frame came from, in a frame
//!   with the Ethernet addresses swapped (`frame::answer_frame`), also when the `out` pass made
//!   it; a packet on in the packet's direction (`Decision::ahead`: synproxy's SYN to the
//!   server, its ACK to the client) out of the other interface. pf's own packets are not
//!   filtered again (OpenBSD tags them as generated).
//!
//! How: a `PACKET_MMAP` ring per interface that keeps only incoming frames (what the bridge
//! sends is `PACKET_OUTGOING` there and never read back, so nothing loops) and an injector per
//! interface and direction. A thread per interface waits on its ring; the firewall is shared
//! behind a mutex, and both passes of a frame are made under one lock. The firewall's clock
//! (`Meta::now`) is the wall clock in seconds. The bridge runs until SIGINT/SIGTERM or `-c
//! COUNT` frames, then prints a summary on standard error.
//!
//! Limits: frames are forwarded as read, so the hosts on either side must send complete
//! checksums and segments that fit the MTU (on veth: transmit checksum offload off, which also
//! turns off TSO; `ethtool -K DEV tx off`); a frame the outgoing interface refuses (a
//! reassembled datagram larger than its MTU, too) is counted as a send error. Frames are not
//! learned or switched by address: every incoming frame crosses.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use sift_capture::{Capture, Config, Direction as RingDirection, Injector};
use sift_firewall::{Firewall, between};

use crate::console::{errln, print};

/// `sift pf bridge`
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A frame read on IF_A is judged `in on IF_A` (fragments reassembled first), then `out on IF_B`, \
then sent on IF_B as pf left it (normalized, modulated, translated, scrubbed); the same from \
IF_B to IF_A. Frames that are not IP (ARP...) cross unchanged. Packets pf sends back toward a \
sender (the answer of `block return`: a TCP RST, an ICMP unreachable; synproxy's) go out of the \
interface the frame came from; those it sends on (synproxy's) out of the other. Runs until \
SIGINT/SIGTERM or -c COUNT frames, then prints frames each way, passed, held, blocked and states \
on standard error.

Needs root (CAP_NET_RAW). The hosts on either side must send complete checksums and segments \
that fit the MTU: on veth, turn off transmit checksum offload (`ethtool -K DEV tx off`).

Example: sift pf bridge -f pf.conf -D ext=veth1 -D int=veth2 veth1 veth2")]
pub struct BridgeArgs {
    /// The rule set.
    #[arg(short = 'f', value_name = "RULES")]
    rules: String,
    /// The first interface.
    #[arg(value_name = "IF_A")]
    if_a: String,
    /// The second interface.
    #[arg(value_name = "IF_B")]
    if_b: String,
    /// Stop after COUNT frames (both ways together).
    #[arg(short = 'c', value_name = "COUNT")]
    count: Option<u64>,
    /// Print each frame's verdicts: `N IF_A>IF_B in pass|block @R|state|@-1 REASON` and, when
    /// it passed in, `out …` on the same line; `answered` when an answer was sent; `not-ip` for
    /// frames pf does not judge.
    #[arg(long)]
    verdicts: bool,
    /// Define a macro.
    #[arg(short = 'D', value_name = "MACRO=VALUE")]
    define: Vec<String>,
    /// Resolve names on this host: `system` (default) or `openbsd`.
    #[arg(long = "host", value_name = "HOST", default_value = "system")]
    host: String,
}

/// What crossed one way.
#[derive(Default)]
struct WayCounts {
    /// Frames read.
    frames: AtomicU64,
    /// Frames sent on (not-IP ones included).
    passed: AtomicU64,
    /// Frames pf kept (fragments waiting, synproxy's handshake).
    held: AtomicU64,
    /// Frames blocked (in either pass).
    blocked: AtomicU64,
    /// Frames that were not IP.
    not_ip: AtomicU64,
    /// Packets pf sent back toward a sender (`block return`'s answers, synproxy's).
    answers: AtomicU64,
    /// Frames or answers an interface refused.
    send_errors: AtomicU64,
}

/// What both threads share.
struct Shared {
    fw: Mutex<Firewall>,
    /// Frames read so far, both ways (numbers the `--verdicts` lines).
    seen: AtomicU64,
    /// `-c`.
    count: Option<u64>,
    /// Set when `-c` is reached or a thread failed.
    done: AtomicBool,
    /// SIGINT/SIGTERM.
    signalled: &'static AtomicBool,
    verdicts: bool,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.done.load(Ordering::SeqCst) || self.signalled.load(Ordering::SeqCst)
    }
}

/// One direction of the bridge: frames read on `from` go out on `to`.
struct Way {
    from: String,
    to: String,
    ring: Capture,
    /// Sends on `to`.
    forward: Injector,
    /// Sends on `from` (answers).
    back: Injector,
    counts: WayCounts,
}

/// How many send errors are described one by one before only being counted.
const ERRORS_SHOWN: u64 = 5;

/// How long a thread waits on its ring before looking at the stop flags again.
const POLL: Duration = Duration::from_millis(50);

fn wall_clock() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn send(inj: &mut Injector, frame: &[u8], counts: &WayCounts) {
    if let Err(e) = inj.send(frame) {
        let n = counts.send_errors.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= ERRORS_SHOWN {
            errln!("sift: pf bridge: sending {} bytes on {}: {e}", frame.len(), inj.interface());
        }
    }
}

/// Reads `way.from` until the bridge stops, forwarding what pf passes; when it ends (also
/// on an error), the other way stops too.
fn run_way(shared: &Shared, way: &mut Way) -> anyhow::Result<()> {
    let r = forward_way(shared, way);
    shared.done.store(true, Ordering::SeqCst);
    r
}

fn forward_way(shared: &Shared, way: &mut Way) -> anyhow::Result<()> {
    let link = way.ring.link_type();
    let mut line = String::new();
    let mut outcome: anyhow::Result<()> = Ok(());
    let Way { from, to, ring, forward, back, counts } = way;
    while outcome.is_ok() && !shared.stopping() {
        let mut handle = |fr: &sift_capture::Frame<'_>| {
            let n = shared.seen.fetch_add(1, Ordering::SeqCst) + 1;
            if shared.count.is_some_and(|c| n > c) {
                shared.done.store(true, Ordering::SeqCst);
                return false;
            }
            counts.frames.fetch_add(1, Ordering::Relaxed);
            line.clear();
            let fate = {
                let mut fw = shared.fw.lock().unwrap_or_else(PoisonError::into_inner);
                between::judge(&mut fw, link, fr.data, from, to, wall_clock(), &mut line)
            };
            let count = |c: &AtomicU64, yes: bool| {
                if yes {
                    c.fetch_add(1, Ordering::Relaxed);
                }
            };
            count(&counts.not_ip, fate.not_ip);
            count(&counts.blocked, fate.blocked);
            count(&counts.held, fate.held && !fate.blocked);
            count(&counts.passed, !fate.blocked && !fate.held);
            for f in &fate.on {
                send(forward, f, counts);
            }
            for f in &fate.back {
                counts.answers.fetch_add(1, Ordering::Relaxed);
                send(back, f, counts);
            }
            if !fate.back.is_empty() {
                line.push_str(" answered");
            }
            if shared.verdicts {
                let text = format!("{n} {from}>{to}{line}\n");
                if let Err(e) = print(text) {
                    outcome = Err(e);
                    return false;
                }
            }
            if shared.count.is_some_and(|c| n >= c) {
                shared.done.store(true, Ordering::SeqCst);
                return false;
            }
            !shared.stopping()
        };
        if let Err(e) = ring.dispatch(POLL, &mut handle) {
            // A signal interrupts the wait: look at the flags again.
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(anyhow::Error::new(e).context(format!("reading {from}")));
            }
        }
    }
    outcome
}

fn open_way(from: &str, to: &str) -> anyhow::Result<Way> {
    let mut cfg = Config::new(from);
    // Only what arrives: the bridge's own frames are PACKET_OUTGOING and stay unread.
    cfg.direction = RingDirection::In;
    // A frame waits for its block to be handed over at most this long.
    cfg.block_timeout_ms = 1;
    cfg.buffer_bytes = 8 << 20;
    let mut ring = Capture::open(&cfg)?;
    let forward = Injector::open(to, false)?;
    let back = Injector::open(from, false)?;
    if ring.link_type() != forward.link_type() {
        bail!(
            "{from} (link type {}) and {to} (link type {}) cannot be bridged",
            ring.link_type(),
            forward.link_type()
        );
    }
    ring.start()?;
    Ok(Way {
        from: from.to_string(),
        to: to.to_string(),
        ring,
        forward,
        back,
        counts: WayCounts::default(),
    })
}

fn way_summary(w: &Way, kernel_drops: u64) -> String {
    let c = &w.counts;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let mut s = format!(
        "{}>{}: {} frames, {} passed ({} not IP), {} held, {} blocked, {} answers",
        w.from,
        w.to,
        get(&c.frames),
        get(&c.passed),
        get(&c.not_ip),
        get(&c.held),
        get(&c.blocked),
        get(&c.answers)
    );
    if get(&c.send_errors) > 0 {
        s.push_str(&format!(", {} send errors", get(&c.send_errors)));
    }
    if kernel_drops > 0 {
        s.push_str(&format!(", {kernel_drops} dropped by the kernel"));
    }
    s
}

/// Runs `sift pf bridge`.
pub fn run(args: BridgeArgs) -> anyhow::Result<ExitCode> {
    if args.if_a == args.if_b {
        bail!("IF_A and IF_B must be two interfaces");
    }
    let Some(fw) = crate::pf_cmd::load_firewall(&args.rules, &args.host, &args.define)? else {
        return Ok(ExitCode::FAILURE);
    };
    sift_capture::check_privileges()?;
    let mut ab = open_way(&args.if_a, &args.if_b)?;
    let mut ba = open_way(&args.if_b, &args.if_a)?;
    let signalled =
        sift_capture::stop_on_signals().context("cannot install the signal handlers")?;
    let shared = Shared {
        fw: Mutex::new(fw),
        seen: AtomicU64::new(0),
        count: args.count,
        done: AtomicBool::new(false),
        signalled,
        verdicts: args.verdicts,
    };
    errln!("sift: pf bridge: {} <-> {}", args.if_a, args.if_b);
    let start = Instant::now();
    let (ra, rb) = std::thread::scope(|s| {
        let t = s.spawn(|| run_way(&shared, &mut ba));
        let ra = run_way(&shared, &mut ab);
        (ra, t.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a bridge thread panicked"))))
    });
    let secs = start.elapsed().as_secs_f64();
    let drops = |w: &mut Way| w.ring.stats().map_or(0, |s| s.dropped);
    let (da, db) = (drops(&mut ab), drops(&mut ba));
    let fw = shared.fw.into_inner().unwrap_or_else(PoisonError::into_inner);
    errln!("{}", way_summary(&ab, da));
    errln!("{}", way_summary(&ba, db));
    errln!(
        "{} frames in {secs:.1} s; {} states",
        shared.seen.load(Ordering::SeqCst).min(args.count.unwrap_or(u64::MAX)),
        fw.states().len()
    );
    ra?;
    rb?;
    Ok(ExitCode::SUCCESS)
}
