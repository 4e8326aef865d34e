//! `sift compile`: compile a pcap-filter expression to classic BPF and print it the way
//! `tcpdump -y LINKTYPE -s SNAPLEN -O -d EXPR` does.
//!
//! The optimizer is not written yet: the program printed is always libpcap's *unoptimized*
//! one (`-O` is accepted, for command lines copied from tcpdump). A bad expression exits with
//! status 1 and the rendered diagnostic (with a caret under the offending text) on stderr.

use std::process::ExitCode;

use anyhow::bail;
use sift_compile::{Context, compile_str, link_type_by_name};
use sift_filter::SystemResolver;
use sift_insn::text;

/// Options of `sift compile`.
#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// Link type, as tcpdump's `-y`: EN10MB, RAW, IPV4, IPV6, LINUX_SLL, LINUX_SLL2, NULL, LOOP,
    /// PPP, C_HDLC, FDDI, IEEE802 or SLIP (or a DLT number).
    #[arg(short = 'y', long = "linktype", default_value = "EN10MB")]
    pub link: String,
    /// Snapshot length: the value returned for accepted packets.
    #[arg(short = 's', long, default_value_t = 262_144)]
    pub snaplen: u32,
    /// Do not optimize. Accepted for tcpdump compatibility: sift has no optimizer yet, so the
    /// program is always the unoptimized one.
    #[arg(short = 'O')]
    pub no_optimize: bool,
    /// Output form: `-d` listing (default), `-dd` C array, `-ddd` decimal.
    #[arg(short = 'd', action = clap::ArgAction::Count)]
    pub dump: u8,
    /// The filter expression (several arguments are joined with spaces, as tcpdump does).
    #[arg(value_name = "EXPR", trailing_var_arg = true, allow_hyphen_values = true)]
    pub expr: Vec<String>,
}

/// Runs `sift compile`.
pub fn run(args: CompileArgs) -> anyhow::Result<ExitCode> {
    let Some(dlt) = link_type_by_name(&args.link) else {
        bail!(
            "unknown data link type {}, or one sift does not support yet (EN10MB, RAW, IPV4, IPV6, \
             LINUX_SLL, LINUX_SLL2, NULL, LOOP, PPP, C_HDLC, FDDI, IEEE802, SLIP)",
            args.link
        );
    };
    let src = args.expr.join(" ");
    let resolver = SystemResolver::new();
    let ctx = Context {
        link_type: dlt,
        snaplen: args.snaplen,
        netmask: None,
        linux_ext: false,
        resolver: &resolver,
    };
    let prog = match compile_str(&src, &ctx) {
        Ok(p) => p,
        Err(e) => {
            eprint!("{}", e.render(&src));
            return Ok(ExitCode::from(1));
        }
    };
    let out = match args.dump {
        0 | 1 => text::listing(&prog.0),
        2 => text::c_array(&prog.0),
        _ => text::decimal(&prog.0),
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
