//! The kernel's `xdpsock` sample, on sift's datapath: receive-and-drop (`rxdrop`) or
//! forward back out of the same port with the MAC addresses swapped (`l2fwd`), through the
//! whole datapath (pool, metadata, a pipeline) or as the `--baseline` (the rings only), in
//! Mpps, with the drops and the CPU cost per packet. Needs root; everything happens in a
//! private network namespace.
//!
//! ```text
//! cargo run --release -p sift-xdp --example xdpsock -- [rxdrop|l2fwd] [--baseline]
//!     [--frames N] [--poll] [--batch N] [--pool stack|ring|list|mutex]
//!     [--meta array|alloc|inline] [--kick every|N] [--no-need-wakeup] [--copy|--zerocopy]
//!     [--generic] [--gen-batch N]
//! ```
//!
//! * The port is `vb0` of a veth pair `vb0`/`vb1` (one queue each). The traffic is one 60-byte
//!   UDP frame sent `--frames` times (5,000,000 by default) out of `vb1` into `vb0` by the
//!   kernel's live-frames generator ([`sift_kernel::livegen`], `--gen-batch` frames a test-run
//!   batch, 64 by default: they reach the socket's RX ring together),
//!   run on the main thread; the datapath's thread polls `vb0`'s socket.
//! * `rxdrop`: the pipeline reads each packet's Ethernet header and drops it (the seed's
//!   single drop rule). `l2fwd`: it swaps the MAC addresses and sends the packet back out of
//!   `vb0` (to `vb1`, whose stack drops it). `--baseline`: no pipeline, pool or metadata; RX
//!   straight to FILL, or RX to TX with the MACs swapped and COMPLETION straight to FILL.
//! * Reported: the generator's rate; frames received by the socket and their rate (from the
//!   generator's start to the last frame received), and where the others were lost (refused
//!   by the veth ring: `vb1`'s `tx_dropped`; the socket's `XDP_STATISTICS`; what is left is
//!   "other": dropped before the socket without a counter); for `l2fwd` the frames sent back
//!   (COMPLETION) and their rate; the CPU time per received frame of the datapath's thread
//!   (spinning in PMD mode, so also the time of its rounds that received frames: its own cost
//!   per frame) and of the generator's (which also runs the veth's receive path: XDP and the
//!   copy into the UMEM). The last line, `RESULT …`, is for scripts (`benches/afxdp-steps.sh`).
//!
//! Do not run it while building or testing: it measures a shared machine.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use sift_kernel::livegen::{self, LiveGen};
use sift_sys::netlink::{LinkStats, Rtnetlink};
use sift_sys::{iface, netns, time};
use sift_xdp::{
    Baseline, Batch, BindMode, Datapath, Kick, MetaMode, Options, PollMode, PoolKind, PortConfig,
    PortStats, XdpMode,
};

const PORT: &str = "vb0";
const PEER: &str = "vb1";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    RxDrop,
    L2fwd,
}

struct Args {
    mode: Mode,
    baseline: bool,
    frames: u32,
    opts: Options,
    bind: BindMode,
    need_wakeup: bool,
    xdp_mode: XdpMode,
    gen_batch: u32,
}

const USAGE: &str = "usage: xdpsock [rxdrop|l2fwd] [--baseline] [--frames N] [--poll] [--batch N] \
    [--pool stack|ring|list|mutex] [--meta array|alloc|inline] [--kick every|N] \
    [--no-need-wakeup] [--copy|--zerocopy] [--generic] [--gen-batch N]";

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        mode: Mode::RxDrop,
        baseline: false,
        frames: 5_000_000,
        opts: Options::default(),
        bind: BindMode::Auto,
        need_wakeup: true,
        xdp_mode: XdpMode::Native,
        gen_batch: livegen::BATCH,
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, v: Option<String>| -> Result<u32, String> {
        let v = v.ok_or(format!("{flag} needs a number"))?;
        v.parse().map_err(|_| format!("{flag} {v}: not a number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "rxdrop" => a.mode = Mode::RxDrop,
            "l2fwd" => a.mode = Mode::L2fwd,
            "--baseline" => a.baseline = true,
            "--frames" => a.frames = number("--frames", args.next())?,
            "--poll" => a.opts.poll = PollMode::Poll,
            "--batch" => a.opts.batch = number("--batch", args.next())?,
            "--pool" => {
                let v = args.next().ok_or("--pool needs stack, ring, list or mutex")?;
                a.opts.pool = PoolKind::from_name(&v).ok_or(format!("--pool {v}: unknown"))?;
            }
            "--meta" => {
                let v = args.next().ok_or("--meta needs array, alloc or inline")?;
                a.opts.meta = MetaMode::from_name(&v).ok_or(format!("--meta {v}: unknown"))?;
            }
            "--kick" => {
                let v = args.next().ok_or("--kick needs every or a number")?;
                a.opts.kick = match v.as_str() {
                    "every" => Kick::EveryBatch,
                    n => Kick::Waiting(number("--kick", Some(n.to_string()))?),
                };
            }
            "--no-need-wakeup" => a.need_wakeup = false,
            "--copy" => a.bind = BindMode::Copy,
            "--zerocopy" => a.bind = BindMode::ZeroCopy,
            "--generic" => a.xdp_mode = XdpMode::Generic,
            "--gen-batch" => a.gen_batch = number("--gen-batch", args.next())?,
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument {arg:?} (see --help)")),
        }
    }
    if a.baseline {
        a.opts.baseline =
            Some(if a.mode == Mode::RxDrop { Baseline::RxDrop } else { Baseline::L2fwd });
    }
    Ok(a)
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn link_stats(dev: &str) -> Result<LinkStats, String> {
    let idx = iface::index_of(dev).map_err(|e| format!("{dev}: {e}"))?;
    let mut rt = Rtnetlink::open().map_err(|e| e.to_string())?;
    rt.link_stats(idx).map_err(|e| e.to_string())
}

/// The namespace: IPv6 off, the pair, up; GRO on for `vb0` (its NAPI path in generic mode).
fn setup() -> Result<(), String> {
    netns::unshare_net().map_err(|e| format!("a private network namespace (root?): {e}"))?;
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, "1").map_err(|e| format!("{path}: {e}"))?;
        }
    }
    let q = ["numtxqueues", "1", "numrxqueues", "1"];
    let mut add = vec!["link", "add", PORT];
    add.extend(q);
    add.extend(["type", "veth", "peer", "name", PEER]);
    add.extend(q);
    ip(&add)?;
    for dev in [PORT, PEER] {
        ip(&["link", "set", dev, "up"])?;
    }
    iface::set_gro(PORT, true).map_err(|e| format!("GRO on {PORT}: {e}"))
}

/// The pipeline of a mode (the baseline runs none).
fn pipeline(mode: Mode) -> impl FnMut(&mut Batch<'_>) + Send {
    move |batch: &mut Batch<'_>| match mode {
        Mode::RxDrop => batch.for_each(|p| {
            // The seed's drop rule still classifies: read the Ethernet header.
            let d = p.data();
            std::hint::black_box(d.get(12..14));
        }),
        Mode::L2fwd => batch.for_each(|mut p| {
            let d = p.data_mut();
            if d.len() >= 12 {
                let (dst, src) = d[..12].split_at_mut(6);
                dst.swap_with_slice(src);
            }
            p.output(p.in_port());
        }),
    }
}

struct Snapshot {
    port: PortStats,
    peer: LinkStats,
    pmd_cpu: u64,
    pmd_busy: u64,
}

fn snapshot(dp: &Datapath) -> Result<Snapshot, String> {
    let port = dp.stats().into_iter().next().unwrap_or_default();
    let pmd_cpu = dp.threads().iter().map(|t| t.cpu_ns).sum();
    let pmd_busy = dp.threads().iter().map(|t| t.busy_ns).sum();
    Ok(Snapshot { port, peer: link_stats(PEER)?, pmd_cpu, pmd_busy })
}

fn describe(a: &Args) -> String {
    let mode = if a.mode == Mode::RxDrop { "rxdrop" } else { "l2fwd" };
    if a.baseline {
        return format!("{mode} baseline, batch {}", a.opts.batch);
    }
    let kick = match a.opts.kick {
        Kick::EveryBatch => "every batch".to_string(),
        Kick::Waiting(n) => format!("at {n}"),
    };
    format!(
        "{mode}, {}, batch {}, pool {}, metadata {}, kick {kick}, need-wakeup {}",
        if a.opts.poll == PollMode::Pmd { "pmd" } else { "poll()" },
        a.opts.batch,
        a.opts.pool.name(),
        a.opts.meta.name(),
        if a.need_wakeup { "on" } else { "off" },
    )
}

fn run(a: &Args) -> Result<(), String> {
    setup()?;
    let mut port = PortConfig::new(PORT);
    port.bind = a.bind;
    port.need_wakeup = a.need_wakeup;
    port.xdp_mode = a.xdp_mode;
    let mode = a.mode;
    let dp = Datapath::start(&[port], &a.opts, |_| pipeline(mode)).map_err(|e| e.to_string())?;
    let bound = dp.ports()[0].mode;
    let peer = iface::index_of(PEER).map_err(|e| e.to_string())?;
    let generator = LiveGen::new(peer).map_err(|e| e.to_string())?;
    let frame = livegen::udp_frame(livegen::NOBODY, livegen::SENDER);
    // Until both ends run (the link watcher, asynchronously), frames vanish.
    let t0 = Instant::now();
    loop {
        generator.send(&frame, 1000, livegen::BATCH).map_err(|e| format!("generator: {e}"))?;
        std::thread::sleep(Duration::from_millis(20));
        if dp.stats()[0].rx_packets > 0 {
            break;
        }
        if t0.elapsed() > Duration::from_secs(10) {
            return Err(format!("no frame reached the socket on {PORT} in 10 s"));
        }
    }
    generator.send(&frame, a.frames / 20, a.gen_batch).map_err(|e| e.to_string())?;
    settle(&dp);
    let before = snapshot(&dp)?;
    let gen_cpu0 = time::thread_cpu_ns();
    let start = Instant::now();
    generator.send(&frame, a.frames, a.gen_batch).map_err(|e| format!("generator: {e}"))?;
    let gen_secs = start.elapsed().as_secs_f64();
    let gen_cpu = time::thread_cpu_ns() - gen_cpu0;
    let last = settle(&dp);
    let secs = (last - start).as_secs_f64().max(gen_secs);
    let after = snapshot(&dp)?;
    let report = dp.stop().map_err(|e| e.to_string())?;
    let _ = report;

    let d = |f: fn(&PortStats) -> u64| f(&after.port) - f(&before.port);
    let rx = d(|s| s.rx_packets);
    let sent = u64::from(a.frames);
    let refused = after.peer.tx_dropped - before.peer.tx_dropped;
    let xdp_dropped = d(|s| s.xdp.rx_dropped);
    let fill_empty = d(|s| s.xdp.rx_fill_ring_empty_descs);
    let ring_full = d(|s| s.xdp.rx_ring_full);
    let other = sent.saturating_sub(rx + refused + xdp_dropped + ring_full);
    let fwd = d(|s| s.tx_completed);
    let back = after.peer.rx_packets - before.peer.rx_packets;
    let per = |ns: u64| if rx == 0 { 0.0 } else { ns as f64 / rx as f64 };
    let pmd_ns = per(after.pmd_cpu - before.pmd_cpu);
    let busy_ns = per(after.pmd_busy - before.pmd_busy);
    // What the datapath itself costs per frame: its CPU time when it sleeps between batches
    // (poll), the time of its rounds that did work when it spins (PMD).
    let work_ns = if a.opts.poll == PollMode::Poll { pmd_ns } else { busy_ns };
    let gen_ns = per(gen_cpu);
    println!("xdpsock {} ({bound:?} mode): {sent} frames of {} bytes", describe(a), frame.len());
    println!("  generator  {:>10.2} Mfps ({gen_secs:.2} s)", sent as f64 / gen_secs / 1e6);
    println!(
        "  received   {:>10.2} Mpps {rx} frames; lost {}: veth ring {refused}, xdp rx_dropped \
         {xdp_dropped} (FILL found empty {fill_empty} times), RX ring full {ring_full}, other \
         {other}",
        rx as f64 / secs / 1e6,
        sent - rx.min(sent)
    );
    if a.mode == Mode::L2fwd {
        println!(
            "  forwarded  {:>10.2} Mpps {fwd} frames ({back} arrived at {PEER}; tx full {}, no \
             frame {})",
            fwd as f64 / secs / 1e6,
            d(|s| s.drop_tx_full),
            d(|s| s.drop_no_frame)
        );
    }
    println!(
        "  CPU        {pmd_ns:>10.1} ns/frame datapath thread ({busy_ns:.1} in rounds that \
         received), {gen_ns:.1} generator+kernel"
    );
    println!(
        "RESULT rx_mpps={:.3} fwd_mpps={:.3} gen_mfps={:.3} lost={} pmd_ns={pmd_ns:.1} \
         busy_ns={busy_ns:.1} work_ns={work_ns:.1} gen_ns={gen_ns:.1}",
        rx as f64 / secs / 1e6,
        fwd as f64 / secs / 1e6,
        sent as f64 / gen_secs / 1e6,
        sent - rx.min(sent)
    );
    Ok(())
}

/// Waits until the port's counters stop moving for 50 ms (at most 5 s) and returns when they
/// last moved.
fn settle(dp: &Datapath) -> Instant {
    let key = |dp: &Datapath| {
        let s = dp.stats().into_iter().next().unwrap_or_default();
        (s.rx_packets, s.tx_completed)
    };
    let start = Instant::now();
    let mut last = key(dp);
    let mut moved = start;
    while moved.elapsed() < Duration::from_millis(50) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
        let now = key(dp);
        if now != last {
            last = now;
            moved = Instant::now();
        }
    }
    moved
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("xdpsock: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The namespace is the thread's: everything runs on one thread made for it.
    match std::thread::spawn(move || run(&args)).join() {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("xdpsock: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("xdpsock: panicked");
            ExitCode::FAILURE
        }
    }
}
