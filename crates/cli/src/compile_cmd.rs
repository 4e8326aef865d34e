//! `sift compile`: compile a pcap-filter expression to classic BPF and print it the way
//! `tcpdump -y LINKTYPE -s SNAPLEN -d EXPR` does.
//!
//! The program is optimized by default (`sift_compile::opt`); `-O` turns the optimizer off, as
//! in tcpdump, and prints libpcap's unoptimized program. `--dump-cfg` prints the control-flow
//! graph (after optimization, unless `-O`) as Graphviz dot instead of the program. A bad
//! expression, or one the optimizer proves can never match ("expression rejects all
//! packets", as libpcap), exits with status 1 and the rendered diagnostic on stderr.
//!
//! The program is the one sift runs on capture files, as libpcap's: `protochain` walks are
//! libpcap's loop. `--kernel` prints the one a socket filter gets instead (the walks unrolled
//! to fit the kernel's 4,096 instructions, checked with the kernel's rules).
//!
//! `--target ebpf|xdp|tc` prints the filter as native eBPF instead (`sift_compile::ebpf`): for
//! a socket filter (`ebpf`; a match keeps `-s` bytes), XDP (`XDP_PASS`/`XDP_DROP`) or TC
//! (`TC_ACT_OK`/`TC_ACT_SHOT`), one instruction a line in the kernel verifier's notation. Its
//! `protochain` walks are bounded loops as deep as the kernel's classic program unrolls them.

use std::process::ExitCode;

use anyhow::bail;

use crate::console;
use sift_compile::ebpf::{self, EbpfOptions, Hook};
use sift_compile::pipeline::{self, LinkType, Mode, Options};
use sift_filter::SystemResolver;
use sift_insn::text;

/// Options of `sift compile`.
#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// Link type, as tcpdump's `-y`: a name (EN10MB, RAW, LINUX_SLL, NULL, PPP, IEEE802_11_RADIO,
    /// …: every link type libpcap 1.10 compiles filters for, with its protocol primitives where
    /// libpcap has them and `len`/`link[…]` everywhere) or a DLT number.
    #[arg(short = 'y', long = "linktype", default_value = "EN10MB")]
    pub link: String,
    /// Snapshot length: the value returned for accepted packets.
    #[arg(short = 's', long, default_value_t = 262_144)]
    pub snaplen: u32,
    /// Do not optimize (as tcpdump's `-O`): print the unoptimized program.
    #[arg(short = 'O')]
    pub no_optimize: bool,
    /// Print the control-flow graph as Graphviz dot instead of the program.
    #[arg(long)]
    pub dump_cfg: bool,
    /// Compile for the kernel's socket filter: `protochain` walks unrolled (no backward
    /// jumps) to fit its 4,096 instructions, and the kernel's rules checked.
    #[arg(long)]
    pub kernel: bool,
    /// What to compile to: classic BPF (`bpf`), or native eBPF for a socket filter (`ebpf`),
    /// XDP (`xdp`) or TC (`tc`), printed one instruction a line.
    #[arg(long, value_enum, default_value_t = Target::Bpf)]
    pub target: Target,
    /// Output form: `-d` listing (default), `-dd` C array, `-ddd` decimal.
    #[arg(short = 'd', action = clap::ArgAction::Count)]
    pub dump: u8,
    /// Read the expression from this file (as tcpdump's `-F`); arguments are then ignored.
    #[arg(short = 'F', value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// The filter expression (several arguments are joined with spaces, as tcpdump does).
    #[arg(value_name = "EXPR", trailing_var_arg = true, allow_hyphen_values = true)]
    pub expr: Vec<String>,
}

/// What `sift compile` compiles to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Classic BPF, as tcpdump's `-d`.
    Bpf,
    /// eBPF for a socket filter (`SO_ATTACH_BPF`).
    Ebpf,
    /// eBPF for XDP.
    Xdp,
    /// eBPF for TC (`SCHED_CLS`).
    Tc,
}

impl Target {
    /// The eBPF hook (`None`: classic BPF).
    fn hook(self) -> Option<Hook> {
        match self {
            Target::Bpf => None,
            Target::Ebpf => Some(Hook::SocketFilter),
            Target::Xdp => Some(Hook::Xdp),
            Target::Tc => Some(Hook::Tc),
        }
    }
}

/// Runs `sift compile`.
pub fn run(args: CompileArgs) -> anyhow::Result<ExitCode> {
    // `-y` takes a name or a DLT number.
    let Some(link) = LinkType::parse(&args.link) else {
        bail!(
            "unknown data link type {} (see `sift compile --help` for the link types sift \
             supports)",
            args.link
        );
    };
    // As the default mode reads them: `-F` bounded, comments stripped whatever bytes they
    // hold; `-s 0` is tcpdump's 262144.
    let src = match &args.file {
        Some(path) => sift::filter::read_file(path)?,
        None => args.expr.join(" "),
    };
    let snaplen = if args.snaplen == 0 { sift_capture::MAX_SNAPLEN } else { args.snaplen };
    let resolver = SystemResolver::new();
    let hook = args.target.hook();
    if hook.is_some() && args.dump > 1 {
        bail!("-dd and -ddd print classic BPF; eBPF targets print one instruction a line");
    }
    // eBPF walks loop as deep as the kernel's classic program unrolls them.
    let mode = match (args.kernel, hook) {
        (true, _) => Mode::Linux,
        (false, Some(_)) => Mode::Libpcap,
        (false, None) => Mode::LibpcapLoops,
    };
    let opts =
        Options::new(link, &resolver).snaplen(snaplen).optimize(!args.no_optimize).mode(mode);
    if args.dump_cfg {
        // The graph as generated (and optimized): a filter that rejects every packet is
        // still printed, as a lone `ret #0` block.
        return match pipeline::graph(&src, &opts) {
            Ok(g) => {
                console::print(sift_compile::print::dot(&g.cfg))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                console::eprint(format_args!("{}", e.render(&src)));
                Ok(ExitCode::from(1))
            }
        };
    }
    let compiled = match pipeline::compile(&src, &opts) {
        Ok(c) => c,
        Err(e) => {
            console::eprint(format_args!("{}", e.render(&src)));
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(hook) = hook {
        let mut eopts = EbpfOptions::new(hook);
        if hook == Hook::SocketFilter {
            eopts = eopts.verdicts(snaplen, 0);
        }
        let lowered = ebpf::lower(&compiled, &eopts)?;
        console::print(lowered.listing())?;
        return Ok(ExitCode::SUCCESS);
    }
    let prog = compiled.program;
    let out = match args.dump {
        0 | 1 => text::listing(prog.insns()),
        2 => text::c_array(prog.insns()),
        _ => text::decimal(prog.insns()),
    };
    console::print(out)?;
    Ok(ExitCode::SUCCESS)
}
