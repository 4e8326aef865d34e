//! The `sift` command: a thin front end over the `sift` library and sift's other crates.
//!
//! Without a subcommand `sift` behaves like tcpdump (`-r`, `-w`, `-c`…); subcommands hold what
//! tcpdump has no flag for. Each mode lives in its own module, which parses its options, calls
//! the library and prints; this file only parses and dispatches, and turns errors into
//! tcpdump's exit status 1.
#![forbid(unsafe_code)]

mod bench_cmd;
mod bpf_cmd;
mod compile_cmd;
mod diff_cmd;
mod dump;
mod gen_cmd;
mod inject_cmd;
mod live;
mod plot;
mod print;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "sift", version, about = "sift: a packet-filter toolkit")]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
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
    /// Run engines side by side on a program and a capture (ns/packet, compile time).
    Bench(bench_cmd::BenchArgs),
    /// Run every engine on an expression over a capture and compare verdicts packet by packet.
    Diff(diff_cmd::DiffArgs),
    /// Write a deterministic, realistic capture (for benchmarks and trying filters).
    Gen(gen_cmd::GenArgs),
    /// Compile a filter expression to classic BPF (like `tcpdump -O -d`; unoptimized for now).
    Compile(compile_cmd::CompileArgs),
    /// Send the packets of a capture on an interface (needs root or CAP_NET_RAW).
    Inject(inject_cmd::InjectArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Bpf(cmd)) => bpf_cmd::run(cmd),
        Some(Command::Gen(args)) => gen_cmd::run(args),
        Some(Command::Bench(args)) => bench_cmd::run(args),
        Some(Command::Diff(args)) => diff_cmd::run(args),
        Some(Command::Compile(args)) => compile_cmd::run(args),
        Some(Command::Inject(args)) => inject_cmd::run(args),
        None if cli.live.wanted() => live::run(cli.live, cli.dump),
        None => dump::run(cli.dump),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sift: {e:#}");
            ExitCode::from(1)
        }
    }
}
