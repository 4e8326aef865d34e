//! `sift xdp attach|detach|show`: a pcap-filter expression as a native eBPF program at an
//! interface's XDP hook, dropping what does not match (or, `--pass-only`, counting).
//!
//! The expression is compiled for Ethernet as a live capture's is, lowered by the native eBPF
//! back end (`sift_compile::ebpf`), loaded by the kernel (`sift_kernel::object`) and attached
//! through a pinned `bpf_link` (`sift_kernel::attach`), so it stays after the command ends, as
//! `ip link set dev IFACE xdp …` does, until `sift xdp detach`. Attaching again replaces the
//! program atomically.

use std::process::ExitCode;

use anyhow::{Context, bail};
use sift_compile::ebpf::{self, EbpfFilter, EbpfOptions};
use sift_compile::pipeline::{self, LinkType, Mode, Options};
use sift_filter::SystemResolver;
use sift_kernel::attach::{Attacher, Hook, XdpMode};
use sift_kernel::object::{KernelMap, ObjectLoader, ProgramSource};

use crate::console::{eprint, print};

/// `sift xdp …`
#[derive(Debug, clap::Subcommand)]
pub enum XdpCommand {
    /// Attach a filter to an interface's XDP hook: matching packets pass, the rest are
    /// dropped (needs root).
    Attach(AttachArgs),
    /// Remove sift's XDP program from an interface.
    Detach(IfaceArgs),
    /// What sift has attached to an interface, with the counts of `--pass-only` programs.
    Show(IfaceArgs),
}

/// `sift xdp attach`
#[derive(Debug, clap::Args)]
pub struct AttachArgs {
    /// The interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: String,
    /// Where XDP runs: `native` (in the driver; veth and most NICs) or `generic`.
    #[arg(long, value_name = "MODE", default_value = "native")]
    mode: String,
    /// Pass every packet and count matches and misses (see `sift xdp show`).
    #[arg(long = "pass-only")]
    pass_only: bool,
    /// Print the eBPF program and the kernel verifier's log; attach nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Read the expression from this file.
    #[arg(short = 'F', value_name = "FILE")]
    file: Option<std::path::PathBuf>,
    /// The filter expression.
    #[arg(value_name = "EXPRESSION", trailing_var_arg = true, allow_hyphen_values = true)]
    expr: Vec<String>,
}

/// An interface.
#[derive(Debug, clap::Args)]
pub struct IfaceArgs {
    /// The interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: String,
}

/// The name the kernel shows for sift's filters (`bpftool prog`).
const PROG_NAME: &str = "sift_filter";

/// Runs a `sift xdp` command.
pub fn run(cmd: XdpCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        XdpCommand::Attach(args) => attach(args),
        XdpCommand::Detach(args) => {
            Attacher::new()?.detach(&args.iface, Hook::Xdp { mode: XdpMode::Native })?;
            print(format!("detached from {}\n", args.iface))?;
            Ok(ExitCode::SUCCESS)
        }
        XdpCommand::Show(args) => show(&args.iface),
    }
}

/// The expression as an XDP program (`None`: the compiler's error was printed).
fn program(src: &str, pass_only: bool) -> anyhow::Result<Option<EbpfFilter>> {
    let resolver = SystemResolver::new();
    let opts = Options::new(LinkType::EN10MB, &resolver)
        .snaplen(sift_capture::MAX_SNAPLEN)
        .mode(Mode::Libpcap);
    let compiled = match pipeline::compile(src, &opts) {
        Ok(c) => c,
        Err(e) => {
            eprint(format_args!("{}", e.render(src)));
            return Ok(None);
        }
    };
    let mut eopts = EbpfOptions::new(ebpf::Hook::Xdp);
    if pass_only {
        eopts = eopts.counting();
    }
    Ok(Some(ebpf::lower(&compiled, &eopts)?))
}

fn attach(args: AttachArgs) -> anyhow::Result<ExitCode> {
    let mode = match args.mode.as_str() {
        "native" | "drv" => XdpMode::Native,
        "generic" | "skb" => XdpMode::Generic,
        other => bail!("unknown XDP mode {other:?} (native or generic)"),
    };
    let src = match &args.file {
        Some(path) => sift::filter::read_file(path)?,
        None => args.expr.join(" "),
    };
    let Some(filter) = program(&src, args.pass_only)? else { return Ok(ExitCode::from(1)) };
    let slots = filter.slots();
    let source = ProgramSource {
        name: PROG_NAME,
        section: "xdp",
        prog_type: filter.prog_type(),
        insns: &slots,
    };
    let loader = ObjectLoader::new(&filter.maps, std::slice::from_ref(&source), "GPL");
    if args.dry_run {
        print(filter.listing())?;
        let object = loader.verifier_log(true).load()?;
        let prog = object.program(PROG_NAME)?;
        print(format!("\n{}", prog.log.as_deref().unwrap_or("")))?;
        return Ok(ExitCode::SUCCESS);
    }
    let object = loader.load()?;
    let prog = object.program(PROG_NAME)?;
    let attacher = Attacher::new()?;
    let hook = Hook::Xdp { mode };
    let (a, replaced) = attacher.attach_or_replace(&args.iface, hook, prog.fd())?;
    print(format!(
        "{} {} {}: {} eBPF instructions, program id {}{}\n",
        if replaced { "replaced on" } else { "attached to" },
        args.iface,
        a.hook,
        filter.len(),
        a.prog_id,
        if args.pass_only { ", passing every packet and counting" } else { "" }
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn show(iface: &str) -> anyhow::Result<ExitCode> {
    let attached = Attacher::new()?.query(iface)?;
    if attached.is_empty() {
        eprint(format_args!("sift: nothing of sift's is attached to {iface}\n"));
        return Ok(ExitCode::from(1));
    }
    for a in attached {
        let mut line = format!(
            "{iface} {}: program {} (id {}){}",
            a.hook,
            a.prog_name,
            a.prog_id,
            if a.attached { "" } else { ", no longer attached" }
        );
        if let Some((matched, missed)) = counts(a.prog_id)? {
            line += &format!(", {matched} matched, {missed} not matched");
        }
        print(format!("{line}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The counts of a `--pass-only` program (`None` for a program without the counting map).
fn counts(prog_id: u32) -> anyhow::Result<Option<(u64, u64)>> {
    let spec = ebpf::count_map();
    let Some(map) = KernelMap::of_program(prog_id, &spec).context("reading the counters")? else {
        return Ok(None);
    };
    let get = |k: u32| -> anyhow::Result<u64> {
        let v = map.lookup_summed(&k.to_le_bytes())?.unwrap_or_default();
        Ok(v.get(..8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes"))))
    };
    Ok(Some((get(0)?, get(1)?)))
}
