//! `sift bench`: every engine on the same program and the same packets, in one run.
//!
//! The capture is loaded into memory first, so the figures are the engines' own cost. Each
//! engine runs over all packets repeatedly for at least the requested time (0.5 s by default);
//! the line printed per engine is `NAME  <ns> ns/packet  <Mpps> Mpps  accepted <n>`, followed by
//! what it cost to prepare (compile time, code size). `libpcap` is the system libpcap's
//! `bpf_filter`, loaded with dlopen, as the reference. Engines must agree on every packet before
//! they are timed; a disagreement is an error.
//!
//! The filter is either a classic BPF program (`--program PROG`, every engine runs the same
//! instructions) or a pcap-filter expression. An expression is compiled for the capture's link
//! type by sift for sift's engines, and by the system libpcap's `pcap_compile` (optimizing, as
//! tcpdump does) for the `libpcap` engine: each engine runs the program its users would get,
//! and only accept/reject must agree.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sift_verify::{Mode, validate};

/// Engines `sift bench` can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchEngine {
    /// The reference interpreter.
    Interp,
    /// The x86-64 JIT.
    Jit,
    /// The system libpcap's `bpf_filter` (dlopen).
    Libpcap,
    /// The Linux kernel: the program translated to eBPF, timed by `BPF_PROG_TEST_RUN` (root).
    Kernel,
    /// The 1987 CSPF stack machine, compiled from the expression where it can express it.
    Cspf,
    /// All of the above.
    All,
}

/// Options of `sift bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The capture to run over (loaded into memory).
    #[arg(short = 'r', value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// An engine to run (repeat for several, or `all`); default: interp, jit and libpcap.
    #[arg(long = "engine", value_enum)]
    pub engines: Vec<BenchEngine>,
    /// The classic BPF program (any text form: tcpdump -d/-dd/-ddd, bpf_asm), instead of an
    /// expression.
    #[arg(long, value_name = "PROG", conflicts_with = "expression")]
    pub program: Option<PathBuf>,
    /// Minimum time per engine, in seconds.
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Treat each argument as a separate expression and bench them all.
    #[arg(long)]
    pub compare: bool,
    /// Draw ns/packet per engine and expression as a bar chart into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// With `cspf`: give CSPF the BPF paper's indirect-push extension.
    #[arg(long)]
    pub cspf_indirect: bool,
    /// The filter expression (pcap-filter syntax), when no --program is given.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "EXPR")]
    pub expression: Vec<String>,
}

/// What the engines run: one program for all, or an expression each compiles its own way.
enum Source {
    Program(sift_insn::Program),
    Expression(String),
}

/// One engine's figure for one filter, for the chart.
struct Figure {
    filter: String,
    engine: &'static str,
    ns: f64,
}

/// Runs `sift bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let sources: Vec<(String, Source)> = match (&args.program, args.expression.is_empty()) {
        (Some(path), _) => {
            vec![(path.display().to_string(), Source::Program(crate::bpf_cmd::read_program(path)?))]
        }
        (None, false) if args.compare => {
            args.expression.iter().map(|e| (e.clone(), Source::Expression(e.clone()))).collect()
        }
        (None, false) => {
            let e = args.expression.join(" ");
            vec![(e.clone(), Source::Expression(e))]
        }
        (None, true) => bail!("give a filter expression or --program PROG"),
    };
    let packets = load(&args.capture)?;
    if packets.spans.is_empty() {
        bail!("{}: no packets to run over", args.capture.display());
    }
    let mut engines = if args.engines.is_empty() {
        vec![BenchEngine::Interp, BenchEngine::Jit, BenchEngine::Libpcap]
    } else {
        args.engines.clone()
    };
    if engines.contains(&BenchEngine::All) {
        engines = vec![
            BenchEngine::Interp,
            BenchEngine::Jit,
            BenchEngine::Libpcap,
            BenchEngine::Kernel,
            BenchEngine::Cspf,
        ];
    }
    let resolver = sift_filter::SystemResolver::new();
    let libpcap = sift_libpcap::Libpcap::load();
    let mut figures = Vec::new();
    for (i, (name, source)) in sources.iter().enumerate() {
        if i > 0 {
            println!();
        }
        bench_one(&args, &packets, &engines, &resolver, &libpcap, name, source, &mut figures)?;
    }
    if let Some(path) = &args.plot {
        crate::plot::bars(path, "ns per packet (lower is better)", &figures_table(&figures))?;
        println!("chart written to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The figures as (filter, [(engine, ns)]) groups, in first-seen order.
fn figures_table(figures: &[Figure]) -> Vec<(String, Vec<(&'static str, f64)>)> {
    let mut out: Vec<(String, Vec<(&'static str, f64)>)> = Vec::new();
    for f in figures {
        match out.iter_mut().find(|(name, _)| *name == f.filter) {
            Some((_, v)) => v.push((f.engine, f.ns)),
            None => out.push((f.filter.clone(), vec![(f.engine, f.ns)])),
        }
    }
    out
}

/// Benches every engine on one program or expression, printing a line per engine.
#[allow(clippy::too_many_arguments)]
fn bench_one(
    args: &BenchArgs,
    packets: &Packets,
    engines: &[BenchEngine],
    resolver: &sift_filter::SystemResolver,
    libpcap: &Result<sift_libpcap::Libpcap, sift_libpcap::Error>,
    name: &str,
    source: &Source,
    figures: &mut Vec<Figure>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let prog = match source {
        Source::Program(p) => p.clone(),
        Source::Expression(e) => {
            crate::dump::compile_for_file(e, resolver, packets.link_type, packets.snaplen, true)?
        }
    };
    let sift_compile_time = started.elapsed();
    let validated = validate(&prog, Mode::Libpcap).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    println!(
        "{} packets ({} bytes) from {}, {} {} instructions",
        packets.spans.len(),
        packets.bytes.len(),
        args.capture.display(),
        match source {
            Source::Program(_) => format!("{name}: program of"),
            Source::Expression(e) =>
                format!("`{e}` compiled by sift in {:.1} µs to", micros(sift_compile_time)),
        },
        prog.len()
    );
    let min_time = Duration::from_secs_f64(args.seconds.max(0.01));
    let mut bench = Bench { packets, min_time, reference: None };
    let mut record = |engine: &'static str, ns: Option<f64>| {
        if let Some(ns) = ns {
            figures.push(Figure { filter: name.to_owned(), engine, ns });
        }
    };
    for &engine in engines {
        let started = Instant::now();
        // Each engine is timed through its own monomorphised loop, so no engine pays for an
        // extra indirect call.
        match engine {
            BenchEngine::Interp => {
                let i = sift_vm::Interpreter::new(&validated);
                let executed: u64 = packets.iter().map(|(p, w)| i.run_counted(p, w).executed).sum();
                let note = format!(
                    "prepare {:.1} µs, {} instructions, {:.1} executed per packet",
                    micros(started.elapsed()),
                    prog.len(),
                    executed as f64 / packets.spans.len() as f64
                );
                record("interp", Some(bench.run("interp", &note, |p, w| i.run(p, w))?));
            }
            BenchEngine::Jit => {
                let j = sift_jit::JitFilter::compile(&validated).context("JIT")?;
                let t = started.elapsed();
                let note = format!("compile {:.1} µs, code {} bytes", micros(t), j.code().len());
                record("jit", Some(bench.run("jit", &note, |p, w| j.run(p, w))?));
            }
            BenchEngine::Libpcap => {
                let lib = match libpcap {
                    Ok(l) => l,
                    Err(e) => {
                        println!("libpcap  unavailable: {e}");
                        continue;
                    }
                };
                let (own, note) = match source {
                    Source::Program(_) => (None, lib.version()),
                    Source::Expression(e) => {
                        let started = Instant::now();
                        let p = lib
                            .compile(
                                packets.link_type.dlt(),
                                packets.snaplen.min(i32::MAX as u32) as i32,
                                e,
                                true,
                                0,
                            )
                            .map_err(|m| anyhow::anyhow!("libpcap cannot compile it: {m}"))?;
                        let note = format!(
                            "pcap_compile -O {:.1} µs to {} instructions, {}",
                            micros(started.elapsed()),
                            p.len(),
                            lib.version()
                        );
                        (Some(p), note)
                    }
                };
                let insns = own.as_deref().unwrap_or(prog.insns());
                let f = lib
                    .prepare(insns)
                    .map_err(|e| anyhow::anyhow!("libpcap cannot run the program: {e}"))?;
                record("libpcap", Some(bench.run("libpcap", &note, |p, w| f.run(p, w))?));
            }
            BenchEngine::Kernel => record("kernel", bench.kernel(&validated)?),
            BenchEngine::Cspf => {
                let Source::Expression(e) = source else {
                    println!("cspf     unavailable: CSPF is compiled from an expression");
                    continue;
                };
                let dlt = packets.link_type.dlt();
                let opts = sift_cspf::Options::new(resolver).with_indirect(args.cspf_indirect);
                match sift_cspf::compile_str(e, dlt, &opts) {
                    Ok(c) => {
                        let t = started.elapsed();
                        record("cspf", Some(bench.cspf(&c, t)?));
                    }
                    Err(err) => println!("cspf     unavailable: {}", err.message),
                }
            }
            BenchEngine::All => unreachable!("expanded above"),
        }
    }
    Ok(())
}

/// The shared timing loop and the verdicts every engine must reproduce.
struct Bench<'a> {
    packets: &'a Packets,
    min_time: Duration,
    /// The first engine's verdicts.
    reference: Option<Vec<u32>>,
}

impl Bench<'_> {
    /// Checks the engine's verdicts against the first engine's, then times it and prints its
    /// line; returns ns/packet.
    fn run(
        &mut self,
        name: &str,
        note: &str,
        engine: impl Fn(&[u8], u32) -> u32,
    ) -> anyhow::Result<f64> {
        let verdicts: Vec<u32> = self.packets.iter().map(|(p, w)| engine(p, w)).collect();
        match &self.reference {
            Some(r) => {
                // Programs compiled by different compilers agree on accept/reject and on the
                // accept value (the snaplen); the same program must agree exactly anyway.
                if let Some(i) = r.iter().zip(&verdicts).position(|(a, b)| a != b) {
                    bail!(
                        "{name} returns {} on packet {i}, the first engine {}",
                        verdicts[i],
                        r[i]
                    );
                }
            }
            None => self.reference = Some(verdicts.clone()),
        }
        let accepted = verdicts.iter().filter(|&&v| v != 0).count();
        let (mut rounds, start) = (0u64, Instant::now());
        let mut sink = 0u32;
        while start.elapsed() < self.min_time {
            for (p, w) in self.packets.iter() {
                sink = sink.wrapping_add(engine(std::hint::black_box(p), w));
            }
            rounds += 1;
        }
        std::hint::black_box(sink);
        let ns =
            start.elapsed().as_nanos() as f64 / (rounds as f64 * self.packets.spans.len() as f64);
        print_line(name, ns, accepted, note);
        Ok(ns)
    }

    /// The kernel engine: verdicts with one `BPF_PROG_TEST_RUN` per packet, then the kernel's
    /// own ns/run over repeated runs of every packet. `None` when it is unavailable here.
    fn kernel(&mut self, validated: &sift_verify::Validated) -> anyhow::Result<Option<f64>> {
        let started = Instant::now();
        let k = match sift_kernel::KernelEbpf::new(validated) {
            Ok(k) => k,
            Err(e) => {
                println!("kernel   unavailable: {e}");
                return Ok(None);
            }
        };
        let load = started.elapsed();
        // Packets longer than TEST_RUN takes are left out (and counted).
        let fits = |p: &[u8]| p.len() <= sift_kernel::MAX_PACKET;
        let mut accepted = 0;
        for (i, (p, w)) in self.packets.iter().enumerate().filter(|(_, (p, _))| fits(p)) {
            let v = k.run(p, w).context("BPF_PROG_TEST_RUN")?;
            accepted += usize::from(v != 0);
            if let Some(r) = &self.reference
                && r[i] != v
            {
                bail!("kernel returns {v} on packet {i}, the first engine {}", r[i]);
            }
        }
        // Repeat so that each packet runs about as long as the other engines in all.
        let n = self.packets.iter().filter(|(p, _)| fits(p)).count().max(1) as f64;
        let repeat = (self.min_time.as_secs_f64() * 1e9 / 40.0 / n).clamp(1.0, 1e5);
        let mut total = 0f64;
        for (p, w) in self.packets.iter().filter(|(p, _)| fits(p)) {
            total += f64::from(k.time(p, w, repeat as u32).context("BPF_PROG_TEST_RUN")?);
        }
        let ns = total / n;
        let left_out = self.packets.spans.len() - n as usize;
        let note = format!(
            "eBPF via bpf(2): load + verify {:.1} µs, {} eBPF instructions; time measured by \
             the kernel (BPF_PROG_TEST_RUN, repeat {}){}",
            micros(load),
            k.program().len(),
            repeat as u32,
            if left_out > 0 {
                format!("; {left_out} packets too long left out")
            } else {
                String::new()
            }
        );
        print_line("kernel", ns, accepted, &note);
        Ok(Some(ns))
    }

    /// The CSPF engine: accept/reject must match the reference where CSPF judges exactly.
    fn cspf(&mut self, c: &sift_cspf::CspfProgram, compile: Duration) -> anyhow::Result<f64> {
        let mut executed = 0u64;
        let mut accepted = 0;
        for (i, (p, _)) in self.packets.iter().enumerate() {
            let (ok, n) = c.run(p);
            executed += u64::from(n);
            accepted += usize::from(ok);
            if let Some(r) = &self.reference
                && c.exact_for(p)
                && ok != (r[i] != 0)
            {
                bail!("cspf {} packet {i}, the first engine returns {}", ok, r[i]);
            }
        }
        let (mut rounds, start) = (0u64, Instant::now());
        let mut sink = 0u32;
        while start.elapsed() < self.min_time {
            for (p, _) in self.packets.iter() {
                sink = sink.wrapping_add(u32::from(c.run(std::hint::black_box(p)).0));
            }
            rounds += 1;
        }
        std::hint::black_box(sink);
        let n = self.packets.spans.len() as f64;
        let ns = start.elapsed().as_nanos() as f64 / (rounds as f64 * n);
        let note = format!(
            "compile {:.1} µs, {} words, {:.1} executed per packet",
            micros(compile),
            c.words().len(),
            executed as f64 / n
        );
        print_line("cspf", ns, accepted, &note);
        Ok(ns)
    }
}

fn print_line(name: &str, ns: f64, accepted: usize, note: &str) {
    println!("{name:<8} {ns:8.2} ns/packet {:8.2} Mpps  accepted {accepted}  ({note})", 1e3 / ns);
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The capture's packets stored back to back in one buffer, as in a mapped file: engines stream
/// through memory the way they do when filtering a capture.
pub(crate) struct Packets {
    /// The first interface's link type (LINKTYPE_) and snapshot length.
    pub(crate) link_type: sift_pcap::LinkType,
    pub(crate) snaplen: u32,
    bytes: Vec<u8>,
    /// `(start, end, wire length)` of each packet in `bytes`.
    spans: Vec<(usize, usize, u32)>,
}

impl Packets {
    /// How many packets there are.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.spans.iter().map(|&(s, e, w)| (&self.bytes[s..e], w))
    }
}

pub(crate) fn load(path: &Path) -> anyhow::Result<Packets> {
    let mut reader =
        sift_pcap::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut packets = Packets {
        link_type: sift_pcap::LinkType::EN10MB,
        snaplen: 0,
        bytes: Vec::new(),
        spans: Vec::new(),
    };
    while let Some((p, interfaces)) =
        reader.next_with_interfaces().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    {
        if packets.spans.is_empty() {
            let iface = &interfaces[p.interface as usize];
            packets.link_type = iface.link_type;
            packets.snaplen =
                if iface.snaplen == 0 { sift_pcap::MAX_CAPLEN } else { iface.snaplen };
        } else if p.link_type != packets.link_type {
            bail!(
                "{}: packets of several link types ({} and {}); sift bench needs one",
                path.display(),
                packets.link_type,
                p.link_type
            );
        }
        let start = packets.bytes.len();
        packets.bytes.extend_from_slice(p.data);
        packets.spans.push((start, packets.bytes.len(), p.wire_len));
    }
    Ok(packets)
}
