//! `sift diff`: every engine on the same expression and the same packets, verdict by verdict.
//!
//! The engine shoot-out in `shared/seeds/003_…` caught an engine that was wrong on 1% of
//! packets only by comparing verdicts packet by packet; this command makes that check one line.
//! The expression is compiled once by sift; the interpreter's return values over the capture
//! are the reference, and every other available engine must reproduce them:
//!
//! * `jit`: sift's x86-64 JIT on the same program;
//! * `libpcap`: the system libpcap compiling the expression itself (`pcap_compile` without its
//!   optimizer, as `tcpdump -O`) and running `bpf_filter`;
//! * `kernel-ebpf`: the program translated to eBPF, loaded with `bpf(2)` and run by
//!   `BPF_PROG_TEST_RUN`;
//! * `kernel-socket` (Ethernet only): the program attached with `SO_ATTACH_FILTER` to an
//!   `AF_PACKET` socket on a veth pair in a private network namespace. The kernel strips an
//!   outer VLAN tag before any socket filter runs, so this engine's reference is the
//!   interpreter on the untagged frame, and its value is the number of bytes delivered;
//! * `cspf`: the 1987 stack machine compiled from the same expression, where it can express
//!   it; it answers accept/reject only, and packets it cannot judge exactly (odd-length tails)
//!   are skipped;
//! * `optimized`: the interpreter on sift's optimized program.
//!
//! Engines that cannot run here (no root, no libpcap, an inexpressible expression) are listed
//! with the reason. Exit status 1 when any engine disagrees, with the first differing packets.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use sift_verify::{Mode, validate};

/// Options of `sift diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The capture to run over.
    #[arg(short = 'r', value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// Give CSPF the indirect-push extension the BPF paper added for its comparison (fields
    /// after a variable-length IP header).
    #[arg(long)]
    pub cspf_indirect: bool,
    /// How many differing packets to list.
    #[arg(long, default_value_t = 10)]
    pub show: usize,
    /// Compare every expression in FILE (one per line; `#` comments and blank lines skipped)
    /// instead of one: a line per expression, the full table only where engines disagree.
    #[arg(long, value_name = "FILE", conflicts_with = "expression")]
    pub expressions: Option<PathBuf>,
    /// The filter expression (pcap-filter syntax).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "EXPR")]
    pub expression: Vec<String>,
}

/// One engine's answers: per packet `Some((value, expected))`, or `None` when it did not judge
/// that packet.
struct Answers {
    name: &'static str,
    note: String,
    per_packet: Vec<Option<(u32, u32)>>,
}

impl Answers {
    fn accepted(&self) -> usize {
        self.per_packet.iter().flatten().filter(|(v, _)| *v != 0).count()
    }
    fn skipped(&self) -> usize {
        self.per_packet.iter().filter(|a| a.is_none()).count()
    }
    fn differs(&self, i: usize) -> bool {
        matches!(self.per_packet[i], Some((v, e)) if v != e)
    }
}

/// Engines set up once and reused across expressions.
struct Shared {
    resolver: sift_filter::SystemResolver,
    libpcap: Result<sift_libpcap::Libpcap, String>,
    /// The veth engine, created with the first program (`None` until then), or why not.
    veth: Option<Result<sift_kernel::VethSocketFilter, String>>,
}

/// What comparing one expression found.
enum Outcome {
    /// sift refuses the expression (the message).
    Refused(String),
    /// The engines' answers and the unavailable ones.
    Compared { engines: Vec<Answers>, unavailable: Vec<(&'static str, String)>, size: usize },
}

/// Runs `sift diff`.
pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let packets = crate::bench_cmd::load(&args.capture)?;
    if packets.len() == 0 {
        bail!("{}: no packets to compare on", args.capture.display());
    }
    let mut shared = Shared {
        resolver: sift_filter::SystemResolver::new(),
        libpcap: sift_libpcap::Libpcap::load().map_err(|e| e.to_string()),
        veth: None,
    };
    let Some(list) = &args.expressions else {
        let expr = args.expression.join(" ");
        let (engines, unavailable, size) = match compare(&expr, &packets, &mut shared, &args)? {
            Outcome::Refused(message) => bail!("{message}"),
            Outcome::Compared { engines, unavailable, size } => (engines, unavailable, size),
        };
        println!(
            "{} packets from {}, `{expr}` compiled to {size} instructions",
            packets.len(),
            args.capture.display(),
        );
        let agree = report(&engines, &unavailable, packets.len(), args.show);
        return Ok(if agree { ExitCode::SUCCESS } else { ExitCode::from(1) });
    };
    let text = std::fs::read_to_string(list)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", list.display()))?;
    let (mut compared, mut refused, mut disagreeing) = (0, 0, 0);
    let mut per_engine: std::collections::BTreeMap<&str, usize> = Default::default();
    for line in text.lines() {
        let expr = line.trim();
        if expr.is_empty() || expr.starts_with('#') {
            continue;
        }
        match compare(expr, &packets, &mut shared, &args)? {
            Outcome::Refused(message) => {
                refused += 1;
                println!("refused  `{expr}`: {}", message.lines().next().unwrap_or(""));
            }
            Outcome::Compared { engines, unavailable, .. } => {
                compared += 1;
                for e in &engines {
                    *per_engine.entry(e.name).or_default() += 1;
                }
                let wrong = (0..packets.len()).any(|i| engines.iter().any(|e| e.differs(i)));
                if wrong {
                    disagreeing += 1;
                    println!("DIFFERS  `{expr}`");
                    report(&engines, &unavailable, packets.len(), args.show);
                } else {
                    let names: Vec<&str> = engines.iter().map(|e| e.name).collect();
                    println!("agree    `{expr}` ({})", names.join(" "));
                }
            }
        }
    }
    let runs: Vec<String> = per_engine.iter().map(|(n, c)| format!("{n} {c}")).collect();
    println!(
        "{compared} expressions compared over {} packets ({refused} refused by sift), \
         {disagreeing} with disagreeing engines; engine runs: {}",
        packets.len(),
        runs.join(", ")
    );
    Ok(if disagreeing == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Compiles `expr` and runs every engine over the packets.
fn compare(
    expr: &str,
    packets: &crate::bench_cmd::Packets,
    shared: &mut Shared,
    args: &DiffArgs,
) -> anyhow::Result<Outcome> {
    let resolver = &shared.resolver;
    let (link_type, snaplen) = (packets.link_type, packets.snaplen);
    let prog = match crate::dump::compile_for_file(expr, resolver, link_type, snaplen, false) {
        Ok(p) => p,
        Err(e) => return Ok(Outcome::Refused(e.to_string())),
    };
    let validated = validate(&prog, Mode::Libpcap)
        .map_err(|e| anyhow::anyhow!("internal error: the compiled program is invalid: {e}"))?;
    let interp = sift_vm::Interpreter::new(&validated);
    let reference: Vec<u32> = packets.iter().map(|(p, w)| interp.run(p, w)).collect();
    let same = |values: Vec<u32>| -> Vec<Option<(u32, u32)>> {
        values.into_iter().zip(&reference).map(|(v, &r)| Some((v, r))).collect()
    };
    let mut engines = vec![Answers {
        name: "interp",
        note: "the reference".into(),
        per_packet: reference.iter().map(|&r| Some((r, r))).collect(),
    }];
    let mut unavailable: Vec<(&str, String)> = Vec::new();

    match sift_jit::JitFilter::compile(&validated) {
        Ok(j) => engines.push(Answers {
            name: "jit",
            note: format!("{} bytes of x86-64", j.code().len()),
            per_packet: same(packets.iter().map(|(p, w)| j.run(p, w)).collect()),
        }),
        Err(e) => unavailable.push(("jit", e.to_string())),
    }

    // sift's optimized program, in the interpreter and the JIT. "Rejects all packets" is an
    // answer too: then the reference must reject every packet.
    match crate::dump::compile_for_file(expr, resolver, link_type, snaplen, true) {
        Ok(opt) => match validate(&opt, Mode::Libpcap) {
            Ok(v) => {
                let i = sift_vm::Interpreter::new(&v);
                let note = format!("sift's optimizer: {} instructions", opt.len());
                let values = packets.iter().map(|(p, w)| i.run(p, w)).collect();
                engines.push(Answers { name: "optimized", note, per_packet: same(values) });
                if let Ok(j) = sift_jit::JitFilter::compile(&v) {
                    let values = packets.iter().map(|(p, w)| j.run(p, w)).collect();
                    let note = format!("the optimized program, {} bytes", j.code().len());
                    engines.push(Answers { name: "jit-optimized", note, per_packet: same(values) });
                }
            }
            Err(e) => bail!("internal error: the optimized program is invalid: {e}"),
        },
        Err(e) if e.to_string().contains("rejects all packets") => engines.push(Answers {
            name: "optimized",
            note: "sift's optimizer: rejects all packets".into(),
            per_packet: same(vec![0; packets.len()]),
        }),
        Err(e) => unavailable.push(("optimized", e.to_string())),
    }

    match &shared.libpcap {
        Ok(lib) => {
            let dlt = packets.link_type.dlt();
            let snaplen = packets.snaplen.min(i32::MAX as u32) as i32;
            match lib.compile(dlt, snaplen, expr, false, 0) {
                Ok(own) => match lib.prepare(&own) {
                    Ok(f) => engines.push(Answers {
                        name: "libpcap",
                        note: format!("pcap_compile -O: {} instructions, bpf_filter", own.len()),
                        per_packet: same(packets.iter().map(|(p, w)| f.run(p, w)).collect()),
                    }),
                    Err(e) => unavailable.push(("libpcap", format!("cannot run its program: {e}"))),
                },
                Err(m) => unavailable.push(("libpcap", format!("pcap_compile refuses it: {m}"))),
            }
        }
        Err(e) => unavailable.push(("libpcap", e.clone())),
    }

    match sift_kernel::KernelEbpf::new(&validated) {
        Ok(k) => {
            let mut per_packet = Vec::with_capacity(packets.len());
            let mut refused = 0;
            for ((p, w), &r) in packets.iter().zip(&reference) {
                match k.run(p, w) {
                    Ok(v) => per_packet.push(Some((v, r))),
                    // Packets TEST_RUN cannot take (longer than MAX_PACKET) are not judged.
                    Err(_) => {
                        refused += 1;
                        per_packet.push(None);
                    }
                }
            }
            let note = if refused > 0 {
                format!("bpf(2) + BPF_PROG_TEST_RUN; {refused} packets too long for TEST_RUN")
            } else {
                "bpf(2) + BPF_PROG_TEST_RUN".into()
            };
            engines.push(Answers { name: "kernel-ebpf", note, per_packet });
        }
        Err(e) => unavailable.push(("kernel-ebpf", e.to_string())),
    }

    if packets.link_type == sift_pcap::LinkType::EN10MB {
        let veth = match shared.veth.take() {
            None => sift_kernel::VethSocketFilter::new(prog.insns()).map_err(|e| e.to_string()),
            Some(Ok(mut v)) => match v.set_filter(prog.insns()) {
                Ok(()) => Ok(v),
                Err(e) => {
                    unavailable.push(("kernel-socket", format!("the kernel refuses it: {e}")));
                    shared.veth = Some(Ok(v));
                    Err(String::new())
                }
            },
            Some(Err(e)) => Err(e),
        };
        match veth {
            Ok(mut v) => {
                let mut per_packet = Vec::with_capacity(packets.len());
                let mut untagged = 0;
                for (p, _) in packets.iter() {
                    let Some(view) = sift_kernel::kernel_view(p) else {
                        per_packet.push(None);
                        continue;
                    };
                    if view.len() != p.len() {
                        untagged += 1;
                    }
                    // What the socket should get: the filter's value on the kernel's view,
                    // capped at the frame's length (the kernel's `len` is the view's length).
                    let expected = interp.run(&view, view.len() as u32).min(view.len() as u32);
                    per_packet.push(v.run(p)?.map(|got| (got, expected)));
                }
                let note = format!(
                    "SO_ATTACH_FILTER on AF_PACKET/veth; value = bytes delivered; \
                     {untagged} VLAN frames seen untagged"
                );
                engines.push(Answers { name: "kernel-socket", note, per_packet });
                shared.veth = Some(Ok(v));
            }
            Err(e) if e.is_empty() => {}
            Err(e) => {
                unavailable.push(("kernel-socket", e.clone()));
                shared.veth = Some(Err(e));
            }
        }
    } else {
        unavailable.push(("kernel-socket", "Ethernet captures only (veth)".into()));
    }

    let dlt = packets.link_type.dlt();
    let cspf_options = sift_cspf::Options::new(resolver).with_indirect(args.cspf_indirect);
    match sift_cspf::compile_str(expr, dlt, &cspf_options) {
        Ok(c) => {
            let per_packet = packets
                .iter()
                .zip(&reference)
                .map(|((p, _), &r)| {
                    c.exact_for(p).then(|| (u32::from(c.run(p).0), u32::from(r != 0)))
                })
                .collect();
            let ext = if args.cspf_indirect { ", indirect-push extension" } else { "" };
            let note = format!("{} words{ext}; accept/reject only", c.words().len());
            engines.push(Answers { name: "cspf", note, per_packet });
        }
        Err(e) => unavailable.push(("cspf", e.message)),
    }
    Ok(Outcome::Compared { engines, unavailable, size: prog.len() })
}

/// Prints one line per engine and, when they disagree, the first differing packets; returns
/// whether all agree.
fn report(
    engines: &[Answers],
    unavailable: &[(&str, String)],
    packets: usize,
    show: usize,
) -> bool {
    let mut disagree = false;
    for e in engines {
        let wrong = (0..packets).filter(|&i| e.differs(i)).count();
        disagree |= wrong > 0;
        let skipped = match e.skipped() {
            0 => String::new(),
            n => format!(", {n} not judged"),
        };
        let verdict = if wrong > 0 { format!("  DIFFERS on {wrong}") } else { String::new() };
        println!("{:<14} accepted {:>8}{skipped}{verdict}  ({})", e.name, e.accepted(), e.note);
    }
    for (name, why) in unavailable {
        println!("{name:<14} unavailable: {why}");
    }
    if !disagree {
        println!("all {} engines agree on every packet", engines.len());
        return true;
    }
    println!("first differing packets (index: each engine's value, expected in brackets):");
    let differing = (0..packets).filter(|&i| engines.iter().any(|e| e.differs(i)));
    for i in differing.take(show) {
        let cells: Vec<String> = engines
            .iter()
            .map(|e| match e.per_packet[i] {
                Some((v, x)) if v != x => format!("{} {v} [{x}]", e.name),
                Some((v, _)) => format!("{} {v}", e.name),
                None => format!("{} -", e.name),
            })
            .collect();
        println!("  {i}: {}", cells.join(", "));
    }
    false
}
