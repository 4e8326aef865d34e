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
}

/// Options of `sift bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The capture to run over (loaded into memory).
    #[arg(short = 'r', value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// An engine to run (repeat for several); default: interp, jit and libpcap.
    #[arg(long = "engine", value_enum)]
    pub engines: Vec<BenchEngine>,
    /// The classic BPF program (any text form: tcpdump -d/-dd/-ddd, bpf_asm), instead of an
    /// expression.
    #[arg(long, value_name = "PROG", conflicts_with = "expression")]
    pub program: Option<PathBuf>,
    /// Minimum time per engine, in seconds.
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// The filter expression (pcap-filter syntax), when no --program is given.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "EXPR")]
    pub expression: Vec<String>,
}

/// What the engines run: one program for all, or an expression each compiles its own way.
enum Source {
    Program(sift_insn::Program),
    Expression(String),
}

/// Runs `sift bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let source = match (&args.program, args.expression.is_empty()) {
        (Some(path), _) => Source::Program(crate::bpf_cmd::read_program(path)?),
        (None, false) => Source::Expression(args.expression.join(" ")),
        (None, true) => bail!("give a filter expression or --program PROG"),
    };
    let packets = load(&args.capture)?;
    if packets.spans.is_empty() {
        bail!("{}: no packets to run over", args.capture.display());
    }
    let resolver = sift_filter::SystemResolver::new();
    let started = Instant::now();
    let (prog, what) = match &source {
        Source::Program(p) => (p.clone(), args.program.as_ref().map(|p| p.display().to_string())),
        Source::Expression(e) => {
            let p =
                crate::dump::compile_for_file(e, &resolver, packets.link_type, packets.snaplen)?;
            (p, None)
        }
    };
    let sift_compile_time = started.elapsed();
    let validated = validate(&prog, Mode::Libpcap).map_err(|e| {
        anyhow::anyhow!("{}: {e}", what.as_deref().unwrap_or("the compiled program"))
    })?;
    println!(
        "{} packets ({} bytes) from {}, {} {} instructions",
        packets.spans.len(),
        packets.bytes.len(),
        args.capture.display(),
        match source {
            Source::Program(_) => "program of".to_owned(),
            Source::Expression(_) =>
                format!("compiled by sift in {:.1} µs to", micros(sift_compile_time)),
        },
        prog.len()
    );
    let engines = if args.engines.is_empty() {
        vec![BenchEngine::Interp, BenchEngine::Jit, BenchEngine::Libpcap]
    } else {
        args.engines.clone()
    };
    let min_time = Duration::from_secs_f64(args.seconds.max(0.01));
    let mut bench = Bench { packets: &packets, min_time, reference: None };
    for engine in engines {
        let started = Instant::now();
        // Each engine is timed through its own monomorphised loop, so no engine pays for an
        // extra indirect call.
        match engine {
            BenchEngine::Interp => {
                let i = sift_vm::Interpreter::new(&validated);
                let note = format!("prepare {:.1} µs", micros(started.elapsed()));
                bench.run("interp", &note, |p, w| i.run(p, w))?;
            }
            BenchEngine::Jit => {
                let j = sift_jit::JitFilter::compile(&validated).context("JIT")?;
                let t = started.elapsed();
                let note = format!("compile {:.1} µs, code {} bytes", micros(t), j.code().len());
                bench.run("jit", &note, |p, w| j.run(p, w))?;
            }
            BenchEngine::Libpcap => {
                let lib = match sift_libpcap::Libpcap::load() {
                    Ok(l) => l,
                    Err(e) => {
                        println!("libpcap  unavailable: {e}");
                        continue;
                    }
                };
                let (own, note) = match &source {
                    Source::Program(_) => (None, lib.version()),
                    Source::Expression(e) => {
                        let started = Instant::now();
                        let p = lib
                            .compile(
                                sift_compile::dlt_from_linktype(packets.link_type),
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
                bench.run("libpcap", &note, |p, w| f.run(p, w))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
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
    /// line.
    fn run(
        &mut self,
        name: &str,
        note: &str,
        engine: impl Fn(&[u8], u32) -> u32,
    ) -> anyhow::Result<()> {
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
        println!(
            "{name:<8} {ns:8.2} ns/packet {:8.2} Mpps  accepted {accepted}  ({note})",
            1e3 / ns
        );
        Ok(())
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The capture's packets stored back to back in one buffer, as in a mapped file: engines stream
/// through memory the way they do when filtering a capture.
pub(crate) struct Packets {
    /// The first interface's link type (LINKTYPE_) and snapshot length.
    pub(crate) link_type: u16,
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
    let mut packets = Packets { link_type: 1, snaplen: 0, bytes: Vec::new(), spans: Vec::new() };
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
