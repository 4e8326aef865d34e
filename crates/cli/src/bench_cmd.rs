//! `sift bench`: every engine on the same program and the same packets, in one run.
//!
//! The timing is the library's (`sift::bench`: the capture loaded into memory, every engine
//! checked against the first one's verdicts, then timed for at least `--seconds`); this module
//! prints a line per engine, `NAME  <ns> ns/packet  <Mpps> Mpps  accepted <n>  (what it cost to
//! prepare)`, and draws the chart (`--plot`). `libpcap` is the system libpcap's `bpf_filter`,
//! loaded with dlopen, as the reference. `interp` and `jit` run on batches of packets, as
//! `sift -r` runs them (`interp-single` and `jit-single`: one call per packet). Every run
//! reports the floor, what filtering costs at least on that capture: `floor`, a pass that
//! loads each packet's first byte and filters nothing, and `floor-pf`, the same load through
//! the JIT's batch loop with its prefetch of the packets ahead (the bound of `jit`). Both come
//! first unless asked for with `--engine` (then where asked, as often as asked, to alternate
//! them with the engines).
//!
//! The filter is either a classic BPF program (`--program PROG`, every engine runs the same
//! instructions) or a pcap-filter expression, which each engine compiles its own way (sift,
//! libpcap's `pcap_compile -O`, the CSPF compiler): each engine runs the program its users
//! would get, and only accept/reject must agree.
//!
//! `--filters FILTERS.txt` measures a filter set instead (`sift::multi_bench`): the decision
//! program (every match and first match, JIT and interpreter), the set's first filter alone
//! and every filter separately, medians of `--rounds` rounds of one run, their ratios, and the
//! set's compile time. Without `-r` it runs over a generated capture (`--packets`, seed 1).

use crate::console::outln;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail};
use sift::bench::{Bench, Detail, Engine, LoadError, Outcome, Packets, PrepareError, Subject};
use sift::error_line;

/// Engines `sift bench` can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchEngine {
    /// The reference interpreter, on batches of 1,024 packets (as `sift -r` runs it).
    Interp,
    /// The x86-64 JIT, on batches of 1,024 packets (as `sift -r` runs it).
    Jit,
    /// The reference interpreter, one call per packet.
    InterpSingle,
    /// The x86-64 JIT, one call per packet.
    JitSingle,
    /// No filter: a pass loading each packet's first byte (printed first unless asked for).
    Floor,
    /// No filter: each packet's first byte loaded through the JIT's batch loop, with its
    /// prefetch (printed first unless asked for).
    FloorPf,
    /// The system libpcap's `bpf_filter` (dlopen).
    Libpcap,
    /// The Linux kernel: the program translated to eBPF, timed by `BPF_PROG_TEST_RUN` (root).
    Kernel,
    /// The 1987 CSPF stack machine, compiled from the expression where it can express it.
    Cspf,
    /// sift's eBPF VM: the program translated to eBPF as for the kernel, one call per packet.
    Ebpf,
    /// The same on sift's eBPF JIT.
    EbpfJit,
    /// All of the above but the floors (printed first anyway).
    All,
}

/// Options of `sift bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The capture to run over (loaded into memory). With --filters it may be left out: a
    /// generated capture is used.
    #[arg(short = 'r', value_name = "CAPTURE")]
    pub capture: Option<PathBuf>,
    /// Measure a filter set (one `NAME [priority N] [continue] EXPR` a line): one decision
    /// program against one filter and against every filter run separately.
    #[arg(long, value_name = "FILTERS", conflicts_with_all = ["program", "engines", "compare", "plot"])]
    pub filters: Option<PathBuf>,
    /// With --filters: rounds of the measures, the figure being each one's median.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub rounds: usize,
    /// With --filters: at most this many filters are timed separately; a larger set is
    /// sampled (evenly spaced) and the sum scaled to the whole set.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub separate_max: usize,
    /// With --filters and no -r: how many packets to generate.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub packets: usize,
    /// An engine to run (repeat for several, or `all`); default: interp, jit and libpcap.
    /// Every run also reports the floors (floor, floor-pf): each packet's first byte loaded,
    /// no filter.
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

/// What one line of `sift bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// An engine, on the filter.
    Engine(Engine),
    /// The floor ([`Bench::floor`]).
    Floor,
    /// The JIT's floor ([`Bench::floor_prefetched`]).
    FloorPf,
}

impl BenchEngine {
    /// The lines this stands for.
    fn lines(self) -> Vec<Line> {
        let engine = match self {
            BenchEngine::Interp => Engine::Interp,
            BenchEngine::Jit => Engine::Jit,
            BenchEngine::InterpSingle => Engine::InterpSingle,
            BenchEngine::JitSingle => Engine::JitSingle,
            BenchEngine::Libpcap => Engine::Libpcap,
            BenchEngine::Kernel => Engine::Kernel,
            BenchEngine::Cspf => Engine::Cspf,
            BenchEngine::Ebpf => Engine::Ebpf,
            BenchEngine::EbpfJit => Engine::EbpfJit,
            BenchEngine::Floor => return vec![Line::Floor],
            BenchEngine::FloorPf => return vec![Line::FloorPf],
            BenchEngine::All => return Engine::ALL.iter().map(|&e| Line::Engine(e)).collect(),
        };
        vec![Line::Engine(engine)]
    }
}

/// One engine's figure for one filter, for the chart.
struct Figure {
    filter: String,
    engine: &'static str,
    ns: f64,
}

/// Runs `sift bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if let Some(filters) = &args.filters {
        if !args.expression.is_empty() {
            bail!("--filters measures the filters of {}; give no expression", filters.display());
        }
        return run_filters(&args, filters);
    }
    let Some(capture) = args.capture.clone() else {
        bail!("give the capture to run over with -r CAPTURE");
    };
    let subjects: Vec<(String, Subject)> = match (&args.program, args.expression.is_empty()) {
        (Some(path), _) => {
            let program = crate::bpf_cmd::read_program(path)?;
            vec![(path.display().to_string(), Subject::Program(program))]
        }
        (None, false) if args.compare => {
            args.expression.iter().map(|e| (e.clone(), Subject::Expression(e.clone()))).collect()
        }
        (None, false) => {
            let e = args.expression.join(" ");
            vec![(e.clone(), Subject::Expression(e))]
        }
        (None, true) => bail!("give a filter expression or --program PROG"),
    };
    let packets = load(&capture)?;
    if packets.is_empty() {
        bail!("{}: no packets to run over", capture.display());
    }
    let lines: Vec<Line> = if args.engines.is_empty() {
        [Engine::Interp, Engine::Jit, Engine::Libpcap].map(Line::Engine).to_vec()
    } else {
        args.engines.iter().flat_map(|e| e.lines()).collect()
    };
    // The floors come first (once), unless asked for.
    let floors = [Line::Floor, Line::FloorPf];
    let first: Vec<Line> = if lines.iter().any(|l| floors.contains(l)) {
        lines.clone()
    } else {
        floors.iter().chain(&lines).copied().collect()
    };
    let min_time = Duration::from_secs_f64(args.seconds.max(0.01));
    let bench = Bench::new(&packets, min_time, args.cspf_indirect);
    let mut figures = Vec::new();
    for (i, (name, subject)) in subjects.into_iter().enumerate() {
        if i > 0 {
            outln!("")?;
        }
        let mut prepared = bench.prepare(subject).map_err(|e| match e {
            PrepareError::Invalid(e) => anyhow!("{name}: {e}"),
            e => e.into(),
        })?;
        outln!(
            "{} packets ({} bytes) from {}, {} {} instructions",
            packets.len(),
            packets.total_bytes(),
            capture.display(),
            match (&prepared.subject, prepared.compile_time) {
                (Subject::Expression(e), Some(t)) =>
                    format!("`{e}` compiled by sift in {:.1} µs to", micros(t)),
                _ => format!("{name}: program of"),
            },
            prepared.program.insns().len()
        )?;
        for &line in if i == 0 { &first } else { &lines } {
            let engine = match line {
                Line::Engine(engine) => engine,
                Line::Floor => {
                    floor_line("floor", bench.floor(), "each packet's first byte loaded in turn")?;
                    continue;
                }
                Line::FloorPf => {
                    match bench.floor_prefetched() {
                        Ok(ns) => floor_line(
                            "floor-pf",
                            ns,
                            "each packet's first byte loaded by the JIT's batch loop, which \
                             prefetches the packets ahead",
                        )?,
                        Err(e) => outln!("{:<13} unavailable: {}", "floor-pf", error_line(&e))?,
                    }
                    continue;
                }
            };
            match bench.run(engine, &mut prepared)? {
                Outcome::Timed(f) => {
                    let (ns, accepted) = (f.ns_per_packet, f.accepted);
                    let name_ = engine.name();
                    outln!(
                        "{name_:<13} {ns:8.2} ns/packet {:8.2} Mpps  accepted {accepted}  ({})",
                        1e3 / ns,
                        note(&f.detail)
                    )?;
                    figures.push(Figure { filter: name.clone(), engine: name_, ns });
                }
                Outcome::Unavailable(why) => outln!("{:<13} unavailable: {why}", engine.name())?,
            }
        }
    }
    if let Some(path) = &args.plot {
        crate::plot::bars(path, "ns per packet (lower is better)", &figures_table(&figures))?;
        outln!("chart written to {}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `sift bench --filters FILTERS [-r CAPTURE]`: the table of `sift::multi_bench`.
fn run_filters(args: &BenchArgs, path: &Path) -> anyhow::Result<ExitCode> {
    use sift::multi_bench::{Measure, MultiBenchOptions};
    let origin = path.display().to_string();
    let text = sift::text::read(path, sift::text::TextKind::FilterSet)?;
    let set = sift::multi::parse_set(&text, &origin).map_err(|e| anyhow!("{e}"))?;
    let (packets, shown) = match &args.capture {
        Some(c) => (load(c)?, c.display().to_string()),
        None => (generated(args.packets), format!("sift gen -c {} (in memory)", args.packets)),
    };
    if packets.is_empty() {
        bail!("{shown}: no packets to run over");
    }
    let options = MultiBenchOptions {
        rounds: args.rounds.max(1),
        min_time: Duration::from_secs_f64(args.seconds.max(0.0) / 5.0),
        separate_max: args.separate_max.max(1),
    };
    let f = sift::multi_bench::measure(&packets, &set, &origin, &options).map_err(|e| match e {
        sift::multi_bench::MultiBenchError::Set(e) => anyhow!("{e}"),
        e => e.into(),
    })?;
    outln!(
        "{} filters from {origin} over {} packets ({} bytes) from {shown}",
        f.filters,
        f.packets,
        packets.total_bytes()
    )?;
    outln!(
        "compile: {:.1} ms for the decision program, {:.1} ms more for its members' JIT code",
        f.compile.as_secs_f64() * 1e3,
        f.jit.as_secs_f64() * 1e3
    )?;
    for line in f.summary.lines() {
        outln!("  {line}")?;
    }
    outln!(
        "{} packets go to a filter, {} matches in all; {:.2} filters run per packet (candidates)",
        f.matched.0,
        f.matched.1,
        f.candidates_per_packet
    )?;
    outln!(
        "ns/packet, median of {} rounds (each measure at least {:.2} s a round, all in this run):",
        options.rounds,
        options.min_time.as_secs_f64()
    )?;
    for t in &f.timings {
        let what = match t.measure {
            Measure::DecideAllJit => "decision program, every match, members on the JIT".into(),
            Measure::DecideFirstJit => "decision program, first match (CSPF), JIT".into(),
            Measure::DecideAllInterp => "decision program, every match, interpreter".into(),
            Measure::DecideFirstInterp => "decision program, first match, interpreter".into(),
            Measure::OneFilter => {
                format!("the first filter alone (`{}`), JIT, batches", set.filters()[0].expr)
            }
            Measure::Separate if f.separate_timed < f.filters => format!(
                "every filter separately, JIT, batches: {} of {} timed (evenly spaced), sum \
                 scaled to all",
                f.separate_timed, f.filters
            ),
            Measure::Separate => format!("every filter separately ({}), JIT, batches", f.filters),
        };
        let spread =
            t.rounds.iter().copied().fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        outln!(
            "{:<19} {:>12.2}  (rounds {:.2}–{:.2})  {what}",
            t.measure.name(),
            t.median(),
            spread.0,
            spread.1
        )?;
    }
    let multi = f.median(Measure::DecideAllJit);
    let one = f.median(Measure::OneFilter);
    let separate = f.median(Measure::Separate);
    outln!("ratio multi-all-jit / one-filter: {:.2}x", multi / one)?;
    outln!("ratio multi-first-jit / one-filter: {:.2}x", f.median(Measure::DecideFirstJit) / one)?;
    outln!("ratio separate / multi-all-jit: {:.1}x", separate / multi)?;
    Ok(ExitCode::SUCCESS)
}

/// `count` packets of `sift gen` (seed 1, Ethernet) in memory.
fn generated(count: usize) -> Packets {
    let mut g = sift_gen::Generator::new(1, sift_gen::Config::default());
    let mut packets = Packets::new(g.link_type(), 262_144);
    let mut frame = Vec::with_capacity(2048);
    for _ in 0..count {
        let m = g.next_frame(&mut frame);
        packets.push(&frame, m.wire_len);
    }
    packets
}

/// A floor's line: `NAME <ns> ns/packet <Mpps> Mpps  (no filter: HOW)`.
fn floor_line(name: &str, ns: f64, how: &str) -> anyhow::Result<()> {
    outln!("{name:<13} {ns:8.2} ns/packet {:8.2} Mpps  (no filter: {how})", 1e3 / ns)?;
    Ok(())
}

/// What preparing an engine cost, in words.
fn note(detail: &Detail) -> String {
    match detail {
        Detail::Interp { prepare, instructions, executed_per_packet, batch } => format!(
            "prepare {:.1} µs, {instructions} instructions, {executed_per_packet:.1} executed per \
             packet, {}",
            micros(*prepare),
            per_call(*batch)
        ),
        Detail::Jit { compile, code_bytes, batch } => format!(
            "compile {:.1} µs, code {code_bytes} bytes, {}",
            micros(*compile),
            per_call(*batch)
        ),
        Detail::Libpcap { version, compiled: None } => version.clone(),
        Detail::Libpcap { version, compiled: Some((t, n)) } => {
            format!("pcap_compile -O {:.1} µs to {n} instructions, {version}", micros(*t))
        }
        Detail::Kernel { load, instructions, repeat, left_out } => format!(
            "eBPF via bpf(2): load + verify {:.1} µs, {instructions} eBPF instructions; time \
             measured by the kernel (BPF_PROG_TEST_RUN, repeat {repeat}){}",
            micros(*load),
            if *left_out > 0 {
                format!("; {left_out} packets too long left out")
            } else {
                String::new()
            }
        ),
        Detail::Ebpf { load, instructions } => format!(
            "translate + load (+ compile) {:.1} µs, {instructions} eBPF instructions, one call \
             per packet",
            micros(*load)
        ),
        Detail::Cspf { compile, words, executed_per_packet } => format!(
            "compile {:.1} µs, {words} words, {executed_per_packet:.1} executed per packet",
            micros(*compile)
        ),
    }
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

/// How many packets an engine got per call, in words.
fn per_call(batch: usize) -> String {
    if batch == 1 { "one call per packet".to_owned() } else { format!("batches of {batch}") }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The capture's packets in memory, for `bench` and `diff`.
pub(crate) fn load(path: &Path) -> anyhow::Result<Packets> {
    Packets::load(path).map_err(|e| match e {
        LoadError::MixedLinkTypes { path, first, other } => {
            anyhow!(
                "{path}: packets of several link types ({first} and {other}); sift bench needs one"
            )
        }
        e => e.into(),
    })
}
