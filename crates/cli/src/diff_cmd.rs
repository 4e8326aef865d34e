//! `sift diff`: every engine on the same expression and the same packets, verdict by verdict.
//!
//! The comparison is the library's (`sift::diff`: sift's interpreter is the reference; the
//! JIT, sift's optimized program, libpcap, the kernel's eBPF test run and socket filter, and
//! CSPF must reproduce it where they can run). This module prints a line per engine, the
//! engines that cannot run here with the reason, and the first differing packets; with
//! `--expressions FILE`, a line per expression and the full table only where engines disagree.
//! Exit status 1 when any engine disagrees.

use crate::console::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use sift::diff::{Answers, Comparison, Engines, Run};

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

/// Runs `sift diff`.
pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let packets = crate::bench_cmd::load(&args.capture)?;
    if packets.is_empty() {
        bail!("{}: no packets to compare on", args.capture.display());
    }
    let mut engines = Engines::new(args.cspf_indirect);
    let Some(list) = &args.expressions else {
        let expr = args.expression.join(" ");
        let (answers, unavailable, size) = match engines.compare(&expr, &packets)? {
            Comparison::Refused(message) => bail!("{message}"),
            Comparison::Compared { engines, unavailable, size } => (engines, unavailable, size),
        };
        outln!(
            "{} packets from {}, `{expr}` compiled to {size} instructions",
            packets.len(),
            args.capture.display(),
        )?;
        let agree = report(&answers, &unavailable, packets.len(), args.show)?;
        return Ok(if agree { ExitCode::SUCCESS } else { ExitCode::from(1) });
    };
    let text = sift::text::read_string(list, sift::text::TextKind::Expressions)?;
    let (mut compared, mut refused, mut disagreeing) = (0, 0, 0);
    let mut per_engine: std::collections::BTreeMap<&str, usize> = Default::default();
    for line in text.lines() {
        let expr = line.trim();
        if expr.is_empty() || expr.starts_with('#') {
            continue;
        }
        match engines.compare(expr, &packets)? {
            Comparison::Refused(message) => {
                refused += 1;
                outln!("refused  `{expr}`: {}", message.lines().next().unwrap_or(""))?;
            }
            Comparison::Compared { engines, unavailable, .. } => {
                compared += 1;
                for e in &engines {
                    *per_engine.entry(e.name()).or_default() += 1;
                }
                if sift::diff::any_differs(&engines, packets.len()) {
                    disagreeing += 1;
                    outln!("DIFFERS  `{expr}`")?;
                    report(&engines, &unavailable, packets.len(), args.show)?;
                } else {
                    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
                    outln!("agree    `{expr}` ({})", names.join(" "))?;
                }
            }
        }
    }
    let runs: Vec<String> = per_engine.iter().map(|(n, c)| format!("{n} {c}")).collect();
    outln!(
        "{compared} expressions compared over {} packets ({refused} refused by sift), \
         {disagreeing} with disagreeing engines; engine runs: {}",
        packets.len(),
        runs.join(", ")
    )?;
    Ok(if disagreeing == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// What an engine ran, in words.
fn note(run: &Run) -> String {
    match run {
        Run::Interp => "the reference".into(),
        Run::Jit { code_bytes } => format!("{code_bytes} bytes of x86-64"),
        Run::Optimized { instructions: Some(n) } => format!("sift's optimizer: {n} instructions"),
        Run::Optimized { instructions: None } => "sift's optimizer: rejects all packets".into(),
        Run::JitOptimized { code_bytes } => format!("the optimized program, {code_bytes} bytes"),
        Run::Libpcap { instructions, cycles: 0 } => {
            format!("pcap_compile -O: {instructions} instructions, bpf_filter")
        }
        Run::Libpcap { instructions, cycles } => format!(
            "pcap_compile -O: {instructions} instructions, bpf_filter; {cycles} packets whose \
             protochain walk cycles not run (bpf_filter never returns there)"
        ),
        Run::KernelEbpf { too_long: 0 } => "bpf(2) + BPF_PROG_TEST_RUN".into(),
        Run::KernelEbpf { too_long } => {
            format!("bpf(2) + BPF_PROG_TEST_RUN; {too_long} packets too long for TEST_RUN")
        }
        Run::KernelSocket { untagged } => format!(
            "SO_ATTACH_FILTER on AF_PACKET/veth; value = bytes delivered; {untagged} VLAN frames \
             seen untagged"
        ),
        Run::Cspf { words, indirect } => {
            let ext = if *indirect { ", indirect-push extension" } else { "" };
            format!("{words} words{ext}; accept/reject only")
        }
    }
}

/// Prints one line per engine and, when they disagree, the first differing packets; returns
/// whether all agree.
fn report(
    engines: &[Answers],
    unavailable: &[(&str, String)],
    packets: usize,
    show: usize,
) -> anyhow::Result<bool> {
    let mut disagree = false;
    for e in engines {
        let wrong = e.differences();
        disagree |= wrong > 0;
        let skipped = match e.skipped() {
            0 => String::new(),
            n => format!(", {n} not judged"),
        };
        let verdict = if wrong > 0 { format!("  DIFFERS on {wrong}") } else { String::new() };
        outln!(
            "{:<14} accepted {:>8}{skipped}{verdict}  ({})",
            e.name(),
            e.accepted(),
            note(&e.run)
        )?;
    }
    for (name, why) in unavailable {
        outln!("{name:<14} unavailable: {why}")?;
    }
    if !disagree {
        outln!("all {} engines agree on every packet", engines.len())?;
        return Ok(true);
    }
    outln!("first differing packets (index: each engine's value, expected in brackets):")?;
    let differing = (0..packets).filter(|&i| engines.iter().any(|e| e.differs(i)));
    for i in differing.take(show) {
        let cells: Vec<String> = engines
            .iter()
            .map(|e| match e.per_packet[i] {
                Some((v, x)) if v != x => format!("{} {v} [{x}]", e.name()),
                Some((v, _)) => format!("{} {v}", e.name()),
                None => format!("{} -", e.name()),
            })
            .collect();
        outln!("  {i}: {}", cells.join(", "))?;
    }
    Ok(false)
}
