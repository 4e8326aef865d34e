//! The `sift` command: a thin front end over the `sift` library and sift's other crates.
//!
//! Without a subcommand `sift` behaves like tcpdump (`-r`, `-w`, `-c`…, read the way tcpdump's
//! getopt reads them: see `args`); subcommands hold what tcpdump has no flag for. Each mode
//! lives in its own module, which parses its options, calls the library and prints (through
//! `console`, which never panics); this file only parses and dispatches, and turns errors
//! into tcpdump's exit status 1 (a closed pipe on standard output is a normal end).
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod bench_cmd;
mod bpf_cmd;
// Prints with `print!` until it goes through `console::print` (one line each).
mod compile_cmd;
mod console;
mod diff_cmd;
mod dump;
mod ebpf_cmd;
mod gen_cmd;
mod inject_cmd;
mod live;
mod pf_bridge;
mod pf_cmd;
mod pf_kernel;
mod pf_run;
mod plot;
mod print;
mod program;
mod progress;
mod split_cmd;
mod switch_cmd;
mod xdp_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::console::errln;

#[derive(Debug, Parser)]
#[command(name = "sift", version, about = "sift: a packet-filter toolkit")]
#[command(args_conflicts_with_subcommands = true, disable_version_flag = true)]
struct Cli {
    /// Print the version (tcpdump's -V is something else).
    #[arg(long = "version", action = clap::ArgAction::Version)]
    version: Option<bool>,
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    dump: dump::DumpArgs,
    #[command(flatten)]
    live: live::LiveArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Classic BPF programs by hand: check, run, assemble, disassemble.
    #[command(subcommand)]
    Bpf(bpf_cmd::BpfCommand),
    /// eBPF programs by hand: run (the conformance plugin protocol), assemble, disassemble.
    #[command(subcommand)]
    Ebpf(ebpf_cmd::EbpfCommand),
    /// Run engines side by side on a program and a capture (ns/packet, compile time).
    Bench(bench_cmd::BenchArgs),
    /// Run every engine on an expression over a capture and compare verdicts packet by packet.
    Diff(diff_cmd::DiffArgs),
    /// Write a deterministic, realistic capture (for benchmarks and trying filters).
    Gen(gen_cmd::GenArgs),
    /// Compile a filter expression to classic BPF and print it as `tcpdump -d` does
    /// (optimized by sift's optimizer; `-O`: libpcap's unoptimized program).
    Compile(compile_cmd::CompileArgs),
    /// Send the packets of a capture on an interface (needs root or CAP_NET_RAW).
    Inject(inject_cmd::InjectArgs),
    /// Read an OpenBSD pf rule set as `pfctl -o none -n[v] -f FILE` does.
    Pfctl(pf_cmd::PfctlArgs),
    /// OpenBSD pf rule sets: `sift pf -f RULES -r CAPTURE` (or `sift pf run …`) replays a
    /// capture through them; `sift pf check FILE` shows each mistake with a caret.
    Pf(Box<pf_cmd::PfArgs>),
    /// Filters at an interface's XDP hook in the kernel: `sift xdp attach -i IFACE EXPR`
    /// drops what does not match (needs root).
    #[command(subcommand)]
    Xdp(xdp_cmd::XdpCommand),
    /// A software switch between AF_XDP ports, forwarding by OpenFlow-style rules with
    /// microflow and megaflow caches (needs root).
    Switch(switch_cmd::SwitchArgs),
}

/// The command line, parsed; `Err`: the exit status after a usage message, help or version.
fn parse() -> Result<Cli, ExitCode> {
    let subcommands: Vec<String> =
        Cli::command().get_subcommands().map(|c| c.get_name().to_owned()).collect();
    let argv = match args::normalize(std::env::args_os().collect(), &subcommands) {
        Ok(argv) => argv,
        Err(e) => {
            errln!("sift: {e}");
            errln!("Try 'sift --help' for the options.");
            return Err(ExitCode::from(1));
        }
    };
    Cli::try_parse_from(argv).map_err(|e| {
        if e.use_stderr() {
            // clap's first line, without its "error: " prefix; bad arguments exit 1, as
            // tcpdump's do.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            errln!("sift: {}", first.strip_prefix("error: ").unwrap_or(first));
            errln!("Try 'sift --help' for the options.");
            ExitCode::from(1)
        } else {
            // --help, --version: a closed pipe is no error.
            let _ = console::print(e.render().to_string());
            ExitCode::SUCCESS
        }
    })
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Some(Command::Bpf(cmd)) => bpf_cmd::run(cmd),
        Some(Command::Ebpf(cmd)) => ebpf_cmd::run(cmd),
        Some(Command::Gen(args)) => gen_cmd::run(args),
        Some(Command::Bench(args)) => bench_cmd::run(args),
        Some(Command::Diff(args)) => diff_cmd::run(args),
        Some(Command::Compile(args)) => compile_cmd::run(args),
        Some(Command::Inject(args)) => inject_cmd::run(args),
        Some(Command::Pfctl(args)) => pf_cmd::run_pfctl(args),
        Some(Command::Pf(args)) => pf_cmd::run_args(*args),
        Some(Command::Xdp(cmd)) => xdp_cmd::run(cmd),
        Some(Command::Switch(args)) => switch_cmd::run(args),
        None if cli.live.list => live::list_interfaces(),
        None if cli.live.list_ts_types && cli.dump.read.is_empty() => {
            live::list_time_stamp_types(&cli.live)
        }
        None if cli.dump.split.is_some() => split_cmd::run(cli.dump, cli.live),
        None if cli.dump.first => split_cmd::check_first(&cli.dump).map(|()| ExitCode::SUCCESS),
        None if cli.dump.dump_program > 0 => program::run(&cli.dump, &cli.live),
        None if cli.live.wanted() => live::run(cli.live, cli.dump),
        None => cli.live.check_xdp().and_then(|()| dump::run(cli.dump, &cli.live)),
    };
    match result {
        Ok(code) => code,
        Err(e) if console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("sift: {}", console::render(&e));
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option the getopt pass knows reaches clap in a form clap takes.
    #[test]
    fn clap_takes_every_option_the_getopt_pass_gives() {
        for (option, value) in args::supported() {
            let mut argv = vec!["sift".into(), option.clone()];
            if value {
                argv.push(value_for(&option).into());
            }
            match Cli::try_parse_from(&argv) {
                Ok(_) => {}
                Err(e) if !e.use_stderr() => {} // --help, --version
                Err(e) => panic!("{argv:?}: {e}"),
            }
        }
    }

    fn value_for(option: &std::ffi::OsStr) -> &'static str {
        match option.to_str().unwrap() {
            "--time-stamp-precision" => "nano",
            "--engine" => "interp",
            "-Q" => "in",
            "-y" => "EN10MB",
            "-T" => "vxlan",
            _ => "1",
        }
    }
}
