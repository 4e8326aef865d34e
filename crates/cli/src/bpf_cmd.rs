//! `sift bpf …`: classic BPF programs by hand (check, run, asm, disasm). Issue 3.
//!
//! Program files (`PROG`) are read in any text form: tcpdump's `-d`, `-dd` or `-ddd` output,
//! `bpf_asm`'s `count,code jt jf k,…` line, or assembler source; the form is detected. `-` reads
//! standard input.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::console::errln;
use sift_insn::{Program, asm, text};
use sift_verify::{Mode, validate};
use sift_vm::{Flavor, Interpreter};

/// The `sift bpf` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BpfCommand {
    /// Validate a program: exit 0 if valid, else 1 with `PROG: instruction N: reason`.
    Check {
        /// Apply the Linux kernel's rules (what SO_ATTACH_FILTER accepts) instead of libpcap's.
        #[arg(long)]
        linux: bool,
        /// The program file (any text form; `-` for standard input).
        prog: PathBuf,
    },
    /// Run a program over a capture: prints `INDEX RETVAL` for each packet with a non-zero
    /// result, then `total N accepted M`.
    Run {
        /// The program file (any text form).
        #[arg(long)]
        program: PathBuf,
        /// The capture file (pcap or pcapng; `-` for standard input).
        #[arg(short = 'r')]
        capture: PathBuf,
        /// Validate with the Linux kernel's rules and run with its semantics (ancillary loads,
        /// 32-bit `[x + k]` wrap-around, shifts by X masked to 5 bits).
        #[arg(long)]
        linux: bool,
        /// Also print executed-instruction counts (total and per packet) on standard error.
        #[arg(long)]
        stats: bool,
        /// The engine: `jit` (the default on x86-64) or `interp`. `--linux` and `--stats` need
        /// the interpreter.
        #[arg(long, value_enum)]
        engine: Option<EngineArg>,
    },
    /// Assemble `bpf_asm`-style source; prints `-ddd` by default (for SO_ATTACH_FILTER tools).
    Asm {
        /// The source file (`-` for standard input).
        file: PathBuf,
        /// `-d` listing, `-dd` C array, `-ddd` decimal (the default).
        #[arg(short = 'd', action = clap::ArgAction::Count)]
        dump: u8,
    },
    /// Print a program as assembler source with labels, or with `-d`/`-dd`/`-ddd` in tcpdump's
    /// forms.
    Disasm {
        /// The program file (any text form).
        prog: PathBuf,
        /// `-d` listing, `-dd` C array, `-ddd` decimal; none: assembler source.
        #[arg(short = 'd', action = clap::ArgAction::Count)]
        dump: u8,
    },
}

/// Runs one `sift bpf` subcommand.
pub fn run(cmd: BpfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BpfCommand::Check { linux, prog } => check(&prog, linux),
        BpfCommand::Run { program, capture, linux, stats, engine } => {
            run_capture(&program, &capture, linux, stats, engine)
        }
        BpfCommand::Asm { file, dump } => {
            let src = read_text(&file)?;
            let prog =
                asm::assemble(&src).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            print_form(&prog, if dump == 0 { 3 } else { dump })
        }
        BpfCommand::Disasm { prog, dump } => {
            let program = read_program(&prog)?;
            print_form(&program, dump)
        }
    }
}

/// A program or assembler source (`-` for standard input), bounded as every text input is
/// ([`sift::text`]).
fn read_text(path: &Path) -> anyhow::Result<String> {
    Ok(sift::text::read_string(path, sift::text::TextKind::Program)?)
}

pub(crate) fn read_program(path: &Path) -> anyhow::Result<Program> {
    let src = read_text(path)?;
    text::parse(&src).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn print_form(prog: &Program, dump: u8) -> anyhow::Result<ExitCode> {
    let out = match dump {
        0 => asm::disassemble(prog),
        1 => text::listing(prog),
        2 => text::c_array(prog),
        _ => text::decimal(prog),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Writes to standard output (a closed pipe, `| head`, ends the program quietly).
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    crate::console::print(bytes)
}

fn check(path: &Path, linux: bool) -> anyhow::Result<ExitCode> {
    let prog = read_program(path)?;
    let mode = if linux { Mode::Linux } else { Mode::Libpcap };
    match validate(&prog, mode) {
        Ok(_) => {
            let rules = if linux { "Linux" } else { "libpcap" };
            write_stdout(
                format!("{}: valid ({} instructions, {rules} rules)\n", path.display(), prog.len())
                    .as_bytes(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            errln!("{}: {e}", path.display());
            Ok(ExitCode::from(1))
        }
    }
}

/// `--engine`: [`sift::Engine`] as clap parses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// Native code (x86-64), falling back to the interpreter elsewhere.
    Jit,
    /// The reference interpreter.
    Interp,
}

impl EngineArg {
    /// The engine `--engine` chose (the JIT when not given).
    pub fn chosen(engine: Option<EngineArg>) -> sift::Engine {
        match engine {
            Some(EngineArg::Interp) => sift::Engine::Interp,
            Some(EngineArg::Jit) | None => sift::Engine::Jit,
        }
    }
}

fn run_capture(
    program: &Path,
    capture: &Path,
    linux: bool,
    stats: bool,
    engine: Option<EngineArg>,
) -> anyhow::Result<ExitCode> {
    if engine == Some(EngineArg::Jit) && (linux || stats) {
        anyhow::bail!(
            "--engine jit runs libpcap's semantics without counting; --linux and --stats need --engine interp"
        );
    }
    let prog = read_program(program)?;
    let (mode, flavor) =
        if linux { (Mode::Linux, Flavor::Linux) } else { (Mode::Libpcap, Flavor::Libpcap) };
    let validated =
        validate(&prog, mode).map_err(|e| anyhow::anyhow!("{}: {e}", program.display()))?;
    let interp = Interpreter::with_flavor(&validated, flavor);
    let engine = if linux || stats { sift::Engine::Interp } else { EngineArg::chosen(engine) };
    let filter = sift::filter::Compiled::new(&validated, engine);
    let mut reader =
        sift_pcap::open(capture).map_err(|e| anyhow::anyhow!("{}: {e}", capture.display()))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let (mut total, mut accepted, mut executed) = (0u64, 0u64, 0u64);
    let result = loop {
        let packet = match reader.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break Ok(()),
            Err(e) => break Err(anyhow::anyhow!("{}: {e}", capture.display())),
        };
        let ret = if stats {
            let c = interp.run_counted(packet.data, packet.wire_len);
            executed += c.executed;
            c.ret
        } else if linux {
            interp.run(packet.data, packet.wire_len)
        } else {
            filter.run(packet.data, packet.wire_len)
        };
        if ret != 0 {
            accepted += 1;
            if let Err(e) = writeln!(out, "{total} {ret}") {
                return pipe_ok(e);
            }
        }
        total += 1;
    };
    if let Err(e) = writeln!(out, "total {total} accepted {accepted}").and_then(|()| out.flush()) {
        return pipe_ok(e);
    }
    if stats {
        let avg = if total == 0 { 0.0 } else { executed as f64 / total as f64 };
        errln!("instructions {executed} per-packet {avg:.2}");
    }
    // A damaged capture ends the run with an error, after the packets before it were filtered.
    result.map(|()| ExitCode::SUCCESS)
}

fn pipe_ok(e: std::io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(anyhow::Error::new(e).context("standard output"))
    }
}
