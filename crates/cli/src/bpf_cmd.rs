//! `sift bpf …`: classic BPF programs by hand (check, run, asm, disasm). Issue 3.

use std::process::ExitCode;

/// The `sift bpf` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BpfCommand {
    /// Placeholder until issue 3 lands.
    Check,
}

/// Runs one `sift bpf` subcommand.
pub fn run(cmd: BpfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BpfCommand::Check => anyhow::bail!("not implemented yet"),
    }
}
