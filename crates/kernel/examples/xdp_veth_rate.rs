//! The receive rate of a veth interface with an XDP program that drops everything, with one
//! that runs a given filter, and with no program at all (the kernel stack dropping frames not
//! addressed to it), in Mpps. Needs root; everything happens in a private network namespace.
//!
//! ```text
//! cargo run --release -p sift-kernel --example xdp_veth_rate -- [--frames N] [--generic]
//!     [--filter FILE]... [--expr EXPR]...
//! ```
//!
//! * The generator is the kernel's ([`sift_kernel::livegen`]): an XDP program that redirects
//!   to `vb1` run with `BPF_PROG_TEST_RUN` in live-frames mode (`BPF_F_TEST_XDP_LIVE_FRAMES`,
//!   64 frames a batch), which transmits each copy of one 60-byte UDP frame through `vb1` into
//!   its peer `vb0` (pktgen is not in every kernel; see `docs/capture-notes.md`). The frame's
//!   destination MAC is not `vb0`'s, so without a program the stack drops it as `OTHERHOST`
//!   once it has built a socket buffer for it.
//! * The receive side is `vb0` with GRO on (the veth's NAPI path, without which redirected
//!   frames vanish) and the XDP program of the case attached natively (or generically with
//!   `--generic`) through [`sift_kernel::attach`].
//! * The rate is `vb0`'s receive counter (`IFLA_STATS64` `rx_packets`, which counts every frame
//!   the veth's NAPI loop took, dropped by XDP or not) over the wall time of the generator's
//!   run; the generator's own rate and the frames the veth ring refused (`vb1`'s `tx_dropped`)
//!   are printed beside it. Generator and receiver share the CPU that runs the test run (the
//!   NAPI poll is scheduled there), so this is the cost of the whole path per frame.
//! * `--filter FILE` adds a case (repeatable): an XDP program's instructions, as raw 8-byte
//!   slots (`EbpfProgram::to_bytes`, what a compiler back end writes) or, for a `.s`/`.asm`
//!   file, in sift-ebpf's assembly. Without one, a built-in filter runs: parse Ethernet, IPv4
//!   and UDP with bounds checks and drop UDP to port 9 (every generated frame), pass the rest.
//! * `--expr EXPR` adds a case (repeatable): a pcap-filter expression as `sift xdp attach`
//!   deploys it (the native eBPF back end; what does not match is dropped).
//!
//! Do not run it while building or testing: it measures a shared machine.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use sift_ebpf::{EbpfProgram, asm, encode_program};
use sift_kernel::attach::{Attacher, Hook, Mechanism, XdpMode, load};
use sift_kernel::livegen::{self, LiveGen};
use sift_sys::netlink::{LinkStats, Rtnetlink};
use sift_sys::{bpf, iface, netns};

const RX: &str = "vb0";
const TX: &str = "vb1";
const BATCH: u32 = livegen::BATCH;
/// XDP's return values by number.
const XDP_ACTIONS: [&str; 5] = ["ABORTED", "DROP", "PASS", "TX", "REDIRECT"];

struct Options {
    frames: u32,
    mode: XdpMode,
    filters: Vec<PathBuf>,
    /// Expressions compiled by the native eBPF back end (drop what does not match).
    exprs: Vec<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        frames: 5_000_000,
        mode: XdpMode::Native,
        filters: Vec::new(),
        exprs: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => {
                let n = args.next().ok_or("--frames needs a number")?;
                opts.frames = n.parse().map_err(|_| format!("--frames {n}: not a number"))?;
            }
            "--generic" => opts.mode = XdpMode::Generic,
            "--filter" => opts.filters.push(args.next().ok_or("--filter needs a file")?.into()),
            "--expr" => opts.exprs.push(args.next().ok_or("--expr needs an expression")?),
            "-h" | "--help" => {
                return Err(
                    "usage: xdp_veth_rate [--frames N] [--generic] [--filter FILE]... [--expr EXPR]...".into()
                );
            }
            _ => return Err(format!("unknown argument {a:?} (see --help)")),
        }
    }
    Ok(opts)
}

fn assemble(text: &str) -> Result<EbpfProgram, String> {
    let insns = asm::assemble(text).map_err(|e| e.to_string())?;
    Ok(EbpfProgram { insns: encode_program(&insns) })
}

/// Drops UDP to port 9 after parsing Ethernet, IPv4 (any header length) and UDP with the bounds
/// checks the verifier asks for; passes everything else.
const BUILTIN_FILTER: &str = "
    ldxw %r2, [%r1]
    ldxw %r3, [%r1+4]
    mov %r0, 2
    mov %r4, %r2
    add %r4, 34
    jgt %r4, %r3, out
    ldxh %r5, [%r2+12]
    jne %r5, 0x8, out
    ldxb %r5, [%r2+23]
    jne %r5, 17, out
    ldxb %r5, [%r2+14]
    and %r5, 0xf
    lsh %r5, 2
    jlt %r5, 20, out
    add %r5, %r2
    add %r5, 14
    mov %r4, %r5
    add %r4, 8
    jgt %r4, %r3, out
    ldxh %r5, [%r5+2]
    jne %r5, 0x900, out
    mov %r0, 1
out:
    exit
";

fn read_filter(path: &PathBuf) -> Result<EbpfProgram, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "s" || ext == "asm" {
        let text = String::from_utf8(bytes).map_err(|_| format!("{}: not text", path.display()))?;
        return assemble(&text).map_err(|e| format!("{}: {e}", path.display()));
    }
    if bytes.is_empty() || !bytes.len().is_multiple_of(8) {
        return Err(format!("{}: not whole 8-byte instructions", path.display()));
    }
    Ok(EbpfProgram::from_bytes(&bytes))
}

/// `expr` as `sift xdp attach` builds it: compiled for Ethernet, lowered to native eBPF.
fn compile_expr(expr: &str) -> Result<EbpfProgram, String> {
    use sift_compile::ebpf::{self, EbpfOptions};
    use sift_compile::pipeline::{self, LinkType, Mode, Options};
    let resolver = sift_filter::TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::Libpcap);
    let compiled = pipeline::compile(expr, &opts).map_err(|e| e.render(expr))?;
    let lowered = ebpf::lower(&compiled, &EbpfOptions::new(ebpf::Hook::Xdp))
        .map_err(|e| format!("{expr}: {e}"))?;
    Ok(lowered.program())
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Runs `f` on a thread in namespace `ns`.
fn in_ns<T: Send>(ns: &OwnedFd, f: impl FnOnce() -> Result<T, String> + Send) -> Result<T, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            netns::enter(ns).map_err(|e| format!("setns: {e}"))?;
            f()
        })
        .join()
        .map_err(|_| "a thread panicked".to_string())?
    })
}

fn stats(dev: &str) -> Result<LinkStats, String> {
    let idx = iface::index_of(dev).map_err(|e| format!("{dev}: {e}"))?;
    let mut rt = Rtnetlink::open().map_err(|e| e.to_string())?;
    rt.link_stats(idx).map_err(|e| e.to_string())
}

struct Measured {
    generated: u32,
    secs: f64,
    received: u64,
    refused: u64,
}

/// One generator run of `frames` frames, with `vb0`'s and `vb1`'s counters around it.
fn measure(generator: &LiveGen, frame: &[u8], frames: u32) -> Result<Measured, String> {
    let (rx0, tx0) = (stats(RX)?, stats(TX)?);
    let t = Instant::now();
    generator.send(frame, frames, BATCH).map_err(|e| format!("live-frames test run: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    // The last batches are still in the ring: let NAPI finish them.
    std::thread::sleep(Duration::from_millis(50));
    let (rx1, tx1) = (stats(RX)?, stats(TX)?);
    Ok(Measured {
        generated: frames,
        secs,
        received: rx1.rx_packets - rx0.rx_packets,
        refused: tx1.tx_dropped - tx0.tx_dropped,
    })
}

fn run(opts: &Options) -> Result<(), String> {
    let ns = std::thread::spawn(|| {
        netns::unshare_net()?;
        netns::current()
    })
    .join()
    .map_err(|_| "namespace thread panicked")?
    .map_err(|e| format!("a private network namespace (root?): {e}"))?;
    let mut cases: Vec<(String, Option<EbpfProgram>)> = vec![
        ("no program (stack drops OTHERHOST)".into(), None),
        ("XDP_DROP everything".into(), Some(assemble("mov %r0, 1\nexit\n")?)),
    ];
    if opts.filters.is_empty() {
        cases.push((
            "built-in filter (eth/ip/udp parse, drop)".into(),
            Some(assemble(BUILTIN_FILTER)?),
        ));
    }
    for f in &opts.filters {
        cases.push((format!("filter {}", f.display()), Some(read_filter(f)?)));
    }
    for e in &opts.exprs {
        cases.push((format!("expression {e:?}"), Some(compile_expr(e)?)));
    }
    let root = PathBuf::from(format!("/sys/fs/bpf/sift-rate-{}", std::process::id()));
    bpf::mount_bpffs(std::path::Path::new("/sys/fs/bpf")).map_err(|e| format!("bpffs: {e}"))?;
    let attacher = Attacher::with_root(&root).mechanism(Mechanism::Link);
    let hook = Hook::Xdp { mode: opts.mode };
    let result = in_ns(&ns, || {
        ip(&[
            "link",
            "add",
            RX,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
            "type",
            "veth",
            "peer",
            "name",
            TX,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
        ])?;
        for dev in [RX, TX] {
            ip(&["link", "set", dev, "up"])?;
        }
        iface::set_gro(RX, true).map_err(|e| format!("GRO on {RX}: {e}"))?;
        let tx_index = iface::index_of(TX).map_err(|e| e.to_string())?;
        let generator = LiveGen::new(tx_index).map_err(|e| e.to_string())?;
        let frame = livegen::udp_frame(livegen::NOBODY, livegen::SENDER);
        // Until both ends are running (the link watcher, asynchronously), frames vanish.
        let t0 = Instant::now();
        while measure(&generator, &frame, 1000)?.received == 0 {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("no frame reached vb0 in 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        println!(
            "{} frames of {} bytes into {RX} ({}), {BATCH} a batch",
            opts.frames,
            frame.len(),
            hook
        );
        println!(
            "{:<44} {:>8} {:>9} {:>9} {:>10} {:>8}",
            "case", "verdict", "gen Mfps", "rx Mpps", "received", "refused"
        );
        for (name, prog) in &cases {
            let fd = match prog {
                Some(p) => Some(load(p, hook, "sift_rate").map_err(|e| format!("{name}: {e}"))?),
                None => None,
            };
            // What the program does with the frame (one ordinary test run).
            let verdict = match &fd {
                Some(fd) => match bpf::prog_test_run(fd, &frame, &[], 1) {
                    Ok(r) => XDP_ACTIONS.get(r.retval as usize).copied().unwrap_or("?"),
                    Err(e) => return Err(format!("{name}: test run: {e}")),
                },
                None => "-",
            };
            if let Some(fd) = &fd {
                attacher.attach(RX, hook, fd.as_fd()).map_err(|e| format!("{name}: {e}"))?;
            }
            measure(&generator, &frame, opts.frames / 20)?; // warm up
            let m = measure(&generator, &frame, opts.frames)?;
            println!(
                "{:<44} {:>8} {:>9.2} {:>9.2} {:>10} {:>8}",
                name,
                verdict,
                f64::from(m.generated) / m.secs / 1e6,
                m.received as f64 / m.secs / 1e6,
                m.received,
                m.refused
            );
            if fd.is_some() {
                attacher.detach(RX, hook).map_err(|e| format!("{name}: {e}"))?;
            }
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&root);
    result
}

fn main() -> ExitCode {
    match parse_args().and_then(|o| run(&o)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xdp_veth_rate: {e}");
            ExitCode::FAILURE
        }
    }
}
