//! Live capture: `sift -i IFACE [-w OUT] [-c N] [-s SNAPLEN] [-B KiB] [--immediate-mode]
//! [-Q in|out|inout] [-p] [--time-stamp-precision=nano] [--pcapng] [-C SIZE] [-G SECS]
//! [-W COUNT] [EXPR]`, and `sift -D`.
//!
//! The expression is compiled for the interface's link type (with Linux's ancillary loads, as
//! libpcap does for a live capture) and attached to the socket (crate `sift-capture`); when the
//! kernel refuses it, the JIT runs it on every packet instead and standard error says so.
//! Packets are written (pcap or pcapng, with tcpdump's `-C`/`-G`/`-W` rotation and file names)
//! or printed one line each, flushed line by line. SIGINT, SIGTERM and `-c` end the capture;
//! on a signal the ring is drained first, so every packet the kernel counted is written, and
//! the counters are printed as tcpdump prints them.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use sift_capture::{Capture, Config, Direction, FrameMeta, Placement, Stats, UserFilter};
use sift_insn::Insn;
use sift_pcap::{Interface, LinkType, Packet, PcapWriter, PcapngWriter, Precision, Timestamp};

use crate::dump::DumpArgs;

/// Options of live capture (the rest, `-w`, `-c`, `--pcapng`, `-F`, the expression…, are the
/// default mode's).
#[derive(Debug, clap::Args)]
pub struct LiveArgs {
    /// Capture on interface IFACE (`any` for all interfaces, with cooked headers).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// List the interfaces one can capture on, and exit.
    #[arg(short = 'D', long = "list-interfaces")]
    pub list: bool,
    /// Keep at most SNAPLEN bytes of each packet (0: 262144, the default).
    #[arg(short = 's', long = "snapshot-length", value_name = "SNAPLEN")]
    pub snaplen: Option<u32>,
    /// Capture buffer (ring) size in KiB (default 2048).
    #[arg(short = 'B', long = "buffer-size", value_name = "KiB")]
    pub buffer_kib: Option<u64>,
    /// Deliver packets as soon as they arrive (1 ms block timeout) instead of in batches.
    #[arg(long = "immediate-mode")]
    pub immediate: bool,
    /// Direction of the packets to capture.
    #[arg(short = 'Q', long = "direction", value_parser = ["in", "out", "inout"])]
    pub direction: Option<String>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', long = "no-promiscuous-mode")]
    pub no_promiscuous: bool,
    /// Start a new output file when the current one exceeds FILE_SIZE millions of bytes (a k,
    /// m or g suffix means KiB, MiB, GiB); files get a number appended, as with tcpdump.
    #[arg(short = 'C', value_name = "FILE_SIZE")]
    pub file_size: Option<String>,
    /// Start a new output file every SECONDS seconds (the -w name goes through strftime).
    #[arg(short = 'G', value_name = "SECONDS")]
    pub rotate_seconds: Option<u64>,
    /// With -C: keep a ring of COUNT files; with -G alone: stop after COUNT files.
    #[arg(short = 'W', value_name = "COUNT")]
    pub file_count: Option<u32>,
    /// How long the kernel holds a partly filled ring block, in ms (default 100; 1 with
    /// --immediate-mode or when printing).
    #[arg(long = "block-timeout", value_name = "MS")]
    pub block_timeout: Option<u32>,
    /// Capture with N sockets in a PACKET_FANOUT group, one thread each (flows are spread
    /// over them; packets of different flows may be written in a different order).
    #[arg(long = "fanout", value_name = "N")]
    pub fanout: Option<usize>,
}

impl LiveArgs {
    /// Whether the command line asks for live capture or the interface list.
    pub fn wanted(&self) -> bool {
        self.interface.is_some() || self.list
    }
}

/// `sift -D`.
fn list_interfaces() -> anyhow::Result<ExitCode> {
    let list = sift_capture::iface::list().context("cannot list the interfaces")?;
    let mut out = io::stdout().lock();
    for (n, i) in list.iter().enumerate() {
        let descr =
            if i.name == "any" { " (Pseudo-device that captures on all interfaces)" } else { "" };
        writeln!(out, "{}.{}{descr} {}", n + 1, i.name, i.flags_text())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `-C` as tcpdump reads it: millions of bytes, or KiB/MiB/GiB with a suffix.
fn parse_file_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let unit = match c.to_ascii_lowercase() {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                _ => bail!("invalid file size {text}"),
            };
            (&t[..i], unit)
        }
        _ => (t, 1_000_000),
    };
    let n: u64 = num.parse().map_err(|_| anyhow::anyhow!("invalid file size {text}"))?;
    if n == 0 {
        bail!("invalid file size {text}");
    }
    n.checked_mul(unit).ok_or_else(|| anyhow::anyhow!("invalid file size {text}"))
}

/// Digits of `count - 1`: tcpdump's zero padding of `-W` file numbers.
fn w_chars(count: u32) -> usize {
    let mut x = count.saturating_sub(1);
    let mut c = 0;
    while x > 0 {
        c += 1;
        x /= 10;
    }
    c
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// The format of every output file.
struct FileFormat {
    pcapng: bool,
    precision: Precision,
    interface: Interface,
}

/// One open output file.
enum FileSink {
    Pcap(PcapWriter<Box<dyn Write>>),
    Pcapng(PcapngWriter<Box<dyn Write>>),
}

/// The output files, rotated by size and time with tcpdump's rules and names.
struct Rotating {
    pattern: String,
    format: FileFormat,
    c_bytes: Option<u64>,
    g_secs: Option<u64>,
    w_count: Option<u32>,
    w_chars: usize,
    c_count: u32,
    g_count: u32,
    g_time: i64,
    current: Option<FileSink>,
    bytes: u64,
    /// Names of the files opened, in order.
    files: Vec<String>,
}

/// Why writing stopped.
enum Rotation {
    Continue,
    /// `-G` with `-W` (and no `-C`): the file limit is reached.
    LimitReached,
}

impl Rotating {
    fn new(pattern: String, format: FileFormat, live: &LiveArgs) -> anyhow::Result<Rotating> {
        let c_bytes = live.file_size.as_deref().map(parse_file_size).transpose()?;
        if live.rotate_seconds == Some(0) {
            bail!("invalid number of seconds 0");
        }
        if live.file_count == Some(0) {
            bail!("invalid number of output files 0");
        }
        if pattern == "-" && (c_bytes.is_some() || live.rotate_seconds.is_some()) {
            bail!("-C and -G need a file name for -w, not standard output");
        }
        let mut r = Rotating {
            pattern,
            format,
            c_bytes,
            g_secs: live.rotate_seconds,
            w_count: live.file_count,
            w_chars: live.file_count.map(w_chars).unwrap_or(0),
            c_count: 0,
            g_count: 0,
            g_time: now_secs(),
            current: None,
            bytes: 0,
            files: Vec::new(),
        };
        let chars = if r.c_bytes.is_some() { r.w_chars } else { 0 };
        let name = r.file_name(0, chars)?;
        r.open(name)?;
        Ok(r)
    }

    /// tcpdump's `MakeFilename`: strftime with `-G`, then the number when asked for.
    fn file_name(&self, count: u32, chars: usize) -> anyhow::Result<String> {
        let base = if self.g_secs.is_some() {
            sift_capture::strftime_local(&self.pattern, self.g_time)
                .with_context(|| format!("{}: cannot format the file name", self.pattern))?
        } else {
            self.pattern.clone()
        };
        Ok(if count == 0 && chars == 0 { base } else { format!("{base}{count:0chars$}") })
    }

    fn open(&mut self, name: String) -> anyhow::Result<()> {
        let out: Box<dyn Write> = if name == "-" {
            Box::new(io::stdout())
        } else {
            Box::new(File::create(&name).with_context(|| format!("{name}: cannot create"))?)
        };
        let f = &self.format;
        let iface = &f.interface;
        self.current = Some(if f.pcapng {
            let mut w = PcapngWriter::new(out)?;
            w.add_interface(iface)?;
            self.bytes = pcapng_header_len(iface);
            FileSink::Pcapng(w)
        } else {
            self.bytes = 24;
            FileSink::Pcap(PcapWriter::new(out, iface.link_type, 0, iface.snaplen, f.precision)?)
        });
        self.files.push(name);
        Ok(())
    }

    fn close(&mut self, stats: Option<sift_pcap::InterfaceStats>) -> anyhow::Result<()> {
        match self.current.take() {
            Some(FileSink::Pcap(w)) => w.finish()?.flush()?,
            Some(FileSink::Pcapng(mut w)) => {
                if let Some(s) = stats {
                    w.set_stats(0, s)?;
                }
                w.finish()?.flush()?;
            }
            None => {}
        }
        Ok(())
    }

    /// tcpdump's `dump_packet_and_trunc`: rotate by time, then by size, then write.
    fn write(&mut self, ts: Timestamp, wire_len: u32, data: &[u8]) -> anyhow::Result<Rotation> {
        if let Some(g) = self.g_secs {
            let t = now_secs();
            if t - self.g_time >= g as i64 {
                self.g_time = t;
                self.g_count += 1;
                self.close(None)?;
                if self.c_bytes.is_none() && self.w_count.is_some_and(|w| self.g_count >= w) {
                    return Ok(Rotation::LimitReached);
                }
                self.c_count = 0;
                let chars = if self.c_bytes.is_some() { self.w_chars } else { 0 };
                let name = self.file_name(0, chars)?;
                self.open(name)?;
            }
        }
        if let Some(c) = self.c_bytes
            && self.bytes > c
        {
            self.c_count += 1;
            if self.w_count.is_some_and(|w| self.c_count >= w) {
                self.c_count = 0;
            }
            self.close(None)?;
            let name = self.file_name(self.c_count, self.w_chars)?;
            self.open(name)?;
        }
        match self.current.as_mut() {
            Some(FileSink::Pcap(w)) => {
                w.write(ts, wire_len, data)?;
                self.bytes += 16 + data.len() as u64;
            }
            Some(FileSink::Pcapng(w)) => {
                w.write(0, ts, wire_len, data)?;
                self.bytes += 32 + data.len().next_multiple_of(4) as u64;
            }
            None => unreachable!("a file is open between rotations"),
        }
        Ok(Rotation::Continue)
    }
}

/// Bytes of the section header and interface description blocks `PcapngWriter` writes.
fn pcapng_header_len(iface: &Interface) -> u64 {
    let opt = |len: usize| 4 + len.next_multiple_of(4) as u64;
    let shb = 12 + 16 + opt(concat!("sift ", env!("CARGO_PKG_VERSION")).len()) + 4;
    let mut idb = 12 + 8 + 4;
    if let Some(n) = &iface.name {
        idb += opt(n.len());
    }
    if iface.ts_resolution != sift_pcap::TsResolution::MICRO {
        idb += opt(1);
    }
    shb + idb
}

/// Where captured packets go.
enum Output {
    Files(Box<Rotating>),
    Print { out: io::StdoutLock<'static>, printer: Box<crate::dump::PacketPrinter> },
}

/// Whether the program reads packet metadata (Linux ancillary loads), which only the kernel
/// or the interpreter's Linux flavor can supply.
fn uses_metadata(validated: &sift_verify::Validated) -> bool {
    validated.insns().iter().any(|i| {
        let class = sift_insn::code::class(i.code);
        (class == sift_insn::code::BPF_LD || class == sift_insn::code::BPF_LDX)
            && matches!(
                sift_insn::code::mode(i.code),
                sift_insn::code::BPF_ABS | sift_insn::code::BPF_IND
            )
            && i.k >= sift_insn::code::SKF_AD_OFF
    })
}

/// The name of the engine [`user_filter`] picks.
fn user_engine(
    validated: &sift_verify::Validated,
    engine: Option<crate::bpf_cmd::Engine>,
) -> &'static str {
    if uses_metadata(validated) {
        "the interpreter, Linux semantics"
    } else if matches!(engine, Some(crate::bpf_cmd::Engine::Interp)) {
        "the interpreter"
    } else {
        "the JIT"
    }
}

/// The user-space filter: the JIT (or the interpreter with Linux semantics when the program
/// reads packet metadata, which only the kernel or that interpreter can supply).
fn user_filter(
    validated: &sift_verify::Validated,
    engine: Option<crate::bpf_cmd::Engine>,
) -> UserFilter {
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
    let filter = match engine {
        Some(crate::bpf_cmd::Engine::Interp) => sift_jit::Filter::interpreter(validated),
        _ => sift_jit::Filter::new(validated),
    };
    Box::new(move |data: &[u8], wire_len: u32, _: &FrameMeta| filter.run(data, wire_len) != 0)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Runs live capture (or `-D`).
pub fn run(live: LiveArgs, args: DumpArgs) -> anyhow::Result<ExitCode> {
    if live.list {
        return list_interfaces();
    }
    let Some(interface) = live.interface.clone() else { bail!("no interface given (-i)") };
    if !args.read.is_empty() {
        bail!("-r and -i cannot be used together");
    }
    if args.write.is_none()
        && (live.file_size.is_some() || live.rotate_seconds.is_some() || live.file_count.is_some())
    {
        bail!("-C, -G and -W need an output file (-w)");
    }
    // Privileges first, before any file is created.
    sift_capture::check_privileges()?;

    let snaplen = match live.snaplen {
        None | Some(0) => sift_capture::MAX_SNAPLEN,
        Some(s) => s.min(sift_capture::MAX_SNAPLEN),
    };
    let printing = args.write.is_none();
    let mut cfg = Config::new(&interface);
    cfg.snaplen = snaplen;
    if let Some(kib) = live.buffer_kib {
        if kib == 0 {
            bail!("invalid buffer size 0");
        }
        cfg.buffer_bytes = usize::try_from(kib.saturating_mul(1024)).unwrap_or(usize::MAX);
    }
    cfg.block_timeout_ms =
        live.block_timeout.unwrap_or(if live.immediate || printing { 1 } else { 100 });
    cfg.promiscuous = !live.no_promiscuous;
    cfg.direction = match live.direction.as_deref() {
        Some("in") => Direction::In,
        Some("out") => Direction::Out,
        _ => Direction::InOut,
    };
    let mut cap = Capture::open(&cfg)?;
    let link_type = LinkType::new(cap.link_type());

    // Compile before any output exists: a bad filter leaves no file, as with tcpdump.
    let expr = crate::dump::expression(&args)?;
    let prog: Vec<Insn> = match &expr {
        Some(text) => {
            let resolver = sift_filter::SystemResolver::new();
            let ctx = sift_compile::Context {
                link_type: link_type.dlt(),
                snaplen,
                netmask: None,
                linux_ext: true,
                resolver: &resolver,
            };
            sift_compile::compile_program(text, &ctx, !args.no_optimize)
                .map_err(|e| anyhow::anyhow!("{}", e.render(text).trim_end()))?
                .0
        }
        None => vec![Insn::stmt(sift_insn::code::BPF_RET | sift_insn::code::BPF_K, snaplen)],
    };
    let validated = sift_verify::validate(&prog, sift_verify::Mode::Libpcap)
        .map_err(|e| anyhow::anyhow!("internal error: the compiled filter is invalid: {e}"))?;
    let placement = cap.set_filter(&prog, || user_filter(&validated, args.engine))?;
    if let Placement::UserSpace { reason } = &placement {
        eprintln!(
            "sift: warning: filtering in user space ({}): {reason}",
            user_engine(&validated, args.engine)
        );
    }

    let precision = args.precision().unwrap_or_default();
    let mut iface = Interface::new(link_type, snaplen, precision.resolution());
    iface.name = Some(interface.clone());
    let output = match &args.write {
        Some(path) => {
            let format = FileFormat { pcapng: args.pcapng, precision, interface: iface };
            Output::Files(Box::new(Rotating::new(path_text(path), format, &live)?))
        }
        None => Output::Print {
            out: io::stdout().lock(),
            printer: Box::new(crate::dump::PacketPrinter::new(&args, precision == Precision::Nano)),
        },
    };

    let stop = sift_capture::stop_on_signals().context("cannot install the signal handlers")?;
    let sink = Sink {
        output,
        link_type,
        limit: args.count.unwrap_or(u64::MAX),
        captured: 0,
        failure: None,
        limit_reached: false,
    };
    let listening = || {
        eprintln!(
            "sift: listening on {interface}, link-type {} ({}), snapshot length {snaplen} bytes",
            link_type,
            link_type.description().unwrap_or("unknown"),
        );
    };
    let (stats, io_error, sink) = match live.fanout {
        Some(n) if n > 1 => {
            // Each member opens its own socket; this one only served to learn the link type
            // and where the filter runs. It was never bound, so it saw no packet.
            drop(cap);
            cfg.fanout_group = Some((std::process::id() & 0xffff) as u16);
            fanout(n, &cfg, &prog, args.engine, sink, stop, listening)?
        }
        _ => {
            cap.start()?;
            listening();
            single(cap, sink, stop)?
        }
    };

    let Sink { output, captured, failure, limit_reached, .. } = sink;
    let finished = match output {
        Output::Files(mut files) => {
            let isb = sift_pcap::InterfaceStats {
                received: Some(stats.received),
                dropped: Some(stats.dropped),
                ..Default::default()
            };
            files.close(Some(isb))
        }
        Output::Print { mut out, .. } => out.flush().map_err(anyhow::Error::from),
    };
    if let (true, Some(w)) = (limit_reached, live.file_count) {
        eprintln!("Maximum file limit reached: {w}");
    }
    eprintln!("{captured} packet{} captured", plural(captured));
    eprintln!("{} packet{} received by filter", stats.received, plural(stats.received));
    eprintln!("{} packet{} dropped by kernel", stats.dropped, plural(stats.dropped));
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(e) = io_error {
        return Err(anyhow::Error::new(e).context(format!("{interface}: capture failed")));
    }
    finished.context("writing output")?;
    Ok(ExitCode::SUCCESS)
}

/// Captures on one socket until a signal, the count, or a write error.
fn single(
    mut cap: Capture,
    mut sink: Sink,
    stop: &AtomicBool,
) -> anyhow::Result<(Stats, Option<io::Error>, Sink)> {
    let mut io_error = None;
    let mut stats = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            // Stop the flow, then write everything the kernel counted as queued.
            match cap.drain(&mut |f| sink.take(f)) {
                Ok(s) => stats = Some(s),
                Err(e) => io_error = Some(e),
            }
            break;
        }
        if let Err(e) = cap.dispatch(Duration::from_millis(100), &mut |f| sink.take(f)) {
            io_error = Some(e);
            break;
        }
        if sink.done() {
            break;
        }
    }
    let stats = match stats {
        Some(s) => s,
        None => cap.stats().context("cannot read the capture statistics")?,
    };
    Ok((stats, io_error, sink))
}

/// What a fan-out member sends to the writer.
enum Member {
    Ready,
    Packet { secs: u64, nanos: u32, wire_len: u32, data: Vec<u8> },
    Finished(anyhow::Result<Stats>),
}

/// Captures with `n` sockets in one `PACKET_FANOUT` group (flow-hash mode), one thread each;
/// the kernel spreads flows over them and this thread writes what they take. Packets of one
/// flow keep their order; packets of different flows may be interleaved differently than on
/// the wire. The counters are the sums over the members.
fn fanout(
    n: usize,
    cfg: &Config,
    prog: &[Insn],
    engine: Option<crate::bpf_cmd::Engine>,
    mut sink: Sink,
    stop: &'static AtomicBool,
    listening: impl FnOnce(),
) -> anyhow::Result<(Stats, Option<io::Error>, Sink)> {
    let done = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::sync_channel::<Member>(1 << 14);
    for _ in 0..n {
        let (cfg, prog, tx, done) = (cfg.clone(), prog.to_vec(), tx.clone(), done.clone());
        std::thread::spawn(move || {
            let result = (|| -> anyhow::Result<Stats> {
                let mut cap = Capture::open(&cfg)?;
                let validated = sift_verify::validate(&prog, sift_verify::Mode::Libpcap)
                    .map_err(|e| anyhow::anyhow!("the compiled filter is invalid: {e}"))?;
                cap.set_filter(&prog, || user_filter(&validated, engine))?;
                cap.start()?;
                let _ = tx.send(Member::Ready);
                let mut send = |f: &sift_capture::Frame<'_>| {
                    let p = Member::Packet {
                        secs: f.secs,
                        nanos: f.nanos,
                        wire_len: f.wire_len,
                        data: f.data.to_vec(),
                    };
                    tx.send(p).is_ok() && !done.load(Ordering::SeqCst)
                };
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(cap.drain(&mut send)?);
                    }
                    if done.load(Ordering::SeqCst) {
                        return Ok(cap.stats()?);
                    }
                    cap.dispatch(Duration::from_millis(100), &mut send)?;
                }
            })();
            let _ = tx.send(Member::Finished(result));
        });
    }
    drop(tx);
    let (mut ready, mut finished) = (0, 0);
    let mut listening = Some(listening);
    let mut total = Stats::default();
    let mut failure = None;
    let meta = sift_capture::FrameMeta::default();
    while finished < n {
        let Ok(msg) = rx.recv() else { break };
        match msg {
            Member::Ready => {
                ready += 1;
                if ready == n
                    && let Some(f) = listening.take()
                {
                    f();
                }
            }
            Member::Packet { secs, nanos, wire_len, data } => {
                let frame = sift_capture::Frame { secs, nanos, wire_len, data: &data, meta: &meta };
                if !sink.done() && !sink.take(&frame) {
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
    if let Some(e) = failure {
        return Err(e);
    }
    Ok((total, None, sink))
}

/// Takes captured packets until the count, a write error or the file limit.
struct Sink {
    output: Output,
    link_type: LinkType,
    limit: u64,
    captured: u64,
    failure: Option<anyhow::Error>,
    limit_reached: bool,
}

impl Sink {
    fn done(&self) -> bool {
        self.captured >= self.limit || self.failure.is_some() || self.limit_reached
    }

    /// Writes or prints one packet; `false` once no more are wanted.
    fn take(&mut self, frame: &sift_capture::Frame<'_>) -> bool {
        if self.done() {
            return false;
        }
        let ts = Timestamp::new(frame.secs, frame.nanos);
        let result = match &mut self.output {
            Output::Files(files) => files.write(ts, frame.wire_len, frame.data).map(|r| {
                if matches!(r, Rotation::LimitReached) {
                    self.limit_reached = true;
                }
            }),
            Output::Print { out, printer } => {
                let packet = Packet {
                    timestamp: ts,
                    wire_len: frame.wire_len,
                    data: frame.data,
                    interface: 0,
                    link_type: self.link_type,
                    offset: 0,
                };
                printer.print(out, &packet).and_then(|()| out.flush()).map_err(anyhow::Error::from)
            }
        };
        match result {
            Ok(()) if self.limit_reached => false,
            Ok(()) => {
                self.captured += 1;
                !self.done()
            }
            Err(e) => {
                self.failure = Some(e);
                false
            }
        }
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_sizes_use_tcpdump_units() {
        assert_eq!(parse_file_size("1").unwrap(), 1_000_000);
        assert_eq!(parse_file_size("3k").unwrap(), 3072);
        assert_eq!(parse_file_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_file_size("1g").unwrap(), 1 << 30);
        assert!(parse_file_size("0").is_err());
        assert!(parse_file_size("1x").is_err());
        assert!(parse_file_size("k").is_err());
    }

    #[test]
    fn pcapng_header_length_is_what_the_writer_writes() {
        for (name, res) in [
            (Some("cap0"), sift_pcap::TsResolution::MICRO),
            (Some("a-longer-name"), sift_pcap::TsResolution::NANO),
            (None, sift_pcap::TsResolution::MICRO),
        ] {
            let mut iface = Interface::new(LinkType::EN10MB, 262_144, res);
            iface.name = name.map(str::to_string);
            let mut w = PcapngWriter::new(Vec::new()).unwrap();
            w.add_interface(&iface).unwrap();
            let bytes = w.finish().unwrap();
            let block_len = |at: usize| {
                u64::from(u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()))
            };
            let shb = block_len(0);
            let idb = block_len(shb as usize);
            assert_eq!(pcapng_header_len(&iface), shb + idb, "{name:?}");
        }
    }

    #[test]
    fn w_padding_is_the_digits_of_count_minus_one() {
        assert_eq!(w_chars(1), 0);
        assert_eq!(w_chars(3), 1);
        assert_eq!(w_chars(10), 1);
        assert_eq!(w_chars(11), 2);
        assert_eq!(w_chars(101), 3);
    }
}
