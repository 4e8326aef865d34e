//! `sift ebpf …`: eBPF programs by hand (issue 25): `exec` runs a program the way the eBPF
//! conformance suite's plugins do, `asm` assembles the suite's syntax, `disasm` lists a
//! program as `llvm-objdump -d` does.
//!
//! The conformance plugin protocol (upstream `bpf_conformance`): the program arrives on
//! standard input as hex bytes, the memory as the first argument (hex bytes; absent when there
//! is none), and the plugin prints `r0` in hex; a refused program prints the reason on
//! standard error and exits non-zero. So `sift ebpf exec` can be given to the suite's runner
//! as `--plugin_path`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use sift::text::{TextKind, read_limited};
use sift_ebpf::asm::{assemble, print};
use sift_ebpf::datafile::parse_hex_bytes;
use sift_ebpf::isa::{decode_program, slots_from_bytes};
use sift_ebpf::listing::objdump;
use sift_ebpf::{EbpfInsn, encode_program};
use sift_ebpf_vm::context::xdp;
use sift_ebpf_vm::{Helpers, Map, MapDef, MapKind, Vm, register_map_helpers, test_helpers};

use crate::console::{errln, outln};

/// The largest program file read (64 MiB: a 65,536-slot program in hex words is 1.2 MiB).
const MAX_PROGRAM_BYTES: u64 = 64 << 20;

/// The `sift ebpf` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum EbpfCommand {
    /// Run a program read from standard input as hex (bytes, or 64-bit words `0x…`); print
    /// `r0` in hex. Refusals and faults go to standard error with exit status 1.
    Exec {
        /// The memory `r1` points at (`r2` holds its length), as hex bytes.
        #[arg(long = "mem", value_name = "HEX")]
        mem: Option<String>,
        /// The memory as the conformance runner passes it: the first argument.
        #[arg(value_name = "MEM", conflicts_with = "mem")]
        positional_mem: Option<String>,
        /// The most instructions to execute.
        #[arg(long, default_value_t = sift_ebpf_vm::DEFAULT_BUDGET)]
        budget: u64,
    },
    /// Assemble a program in the conformance suite's syntax (`-` for standard input).
    Asm {
        /// The source file.
        file: PathBuf,
        /// `words`: 64-bit slots in hex, one a line (the suite's `-- raw`); `bytes`: hex bytes,
        /// a slot a line; `binary`: the raw bytes.
        #[arg(long, value_enum, default_value_t = AsmFormat::Words)]
        format: AsmFormat,
    },
    /// Run an XDP program over a capture: one line per packet, `INDEX ACTION`
    /// (`XDP_PASS`, `XDP_DROP`, …), then the count of each action on standard error.
    Run {
        /// The program: assembly in the conformance syntax, hex bytes or words, or a binary
        /// image.
        prog: PathBuf,
        /// The capture file (pcap or pcapng; `-` for standard input).
        #[arg(short = 'r')]
        capture: PathBuf,
        /// Stop after N packets.
        #[arg(short = 'c')]
        count: Option<u64>,
        /// A map, `KIND:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES` (`KIND` `array` or `hash`); the
        /// first is `map_fd(0)`, the next `map_fd(1)`…
        #[arg(long = "map", value_name = "SPEC")]
        maps: Vec<String>,
        /// Print every map's entries at the end (`map N: KEY => VALUE`, hex).
        #[arg(long = "dump-maps")]
        dump_maps: bool,
    },
    /// List a program (hex bytes or words, or a raw binary file) as `llvm-objdump -d` does,
    /// or with `--asm` in the conformance syntax.
    Disasm {
        /// The program file (`-` for standard input).
        file: PathBuf,
        /// Print the conformance suite's assembly syntax instead of the listing.
        #[arg(long)]
        asm: bool,
    },
}

/// How `sift ebpf asm` writes the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AsmFormat {
    /// `0x0000000000000095`, one slot a line.
    Words,
    /// `95 00 00 00 00 00 00 00`, one slot a line.
    Bytes,
    /// The bytes themselves.
    Binary,
}

/// Runs one `sift ebpf` subcommand.
pub fn run(cmd: EbpfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        EbpfCommand::Exec { mem, positional_mem, budget } => exec(mem.or(positional_mem), budget),
        EbpfCommand::Asm { file, format } => asm(&file, format),
        EbpfCommand::Disasm { file, asm } => disasm(&file, asm),
        EbpfCommand::Run { prog, capture, count, maps, dump_maps } => {
            run_xdp(&prog, &capture, count, &maps, dump_maps)
        }
    }
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    Ok(read_limited(path, TextKind::Program, MAX_PROGRAM_BYTES)?)
}

/// A program given as hex: bytes (`b7 00 …`) or 64-bit words (`0x00000000000000b7`, the slot
/// as a little-endian number), separated by white space or commas.
fn parse_program_hex(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for tok in text.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()) {
        let digits = tok.strip_prefix("0x").unwrap_or(tok);
        if digits.len() == 16 {
            let w = u64::from_str_radix(digits, 16).map_err(|_| format!("bad hex word `{tok}`"))?;
            out.extend_from_slice(&w.to_le_bytes());
        } else {
            out.extend(parse_hex_bytes(tok)?);
        }
    }
    Ok(out)
}

fn exec(mem: Option<String>, budget: u64) -> anyhow::Result<ExitCode> {
    let text = String::from_utf8(read(Path::new("-"))?).context("standard input is not text")?;
    let bytes = match parse_program_hex(&text) {
        Ok(b) => b,
        Err(e) => {
            errln!("standard input: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut mem = match mem.as_deref().map(parse_hex_bytes).transpose() {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => {
            errln!("memory: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut vm = match Vm::from_bytes(&bytes, test_helpers()) {
        Ok(vm) => vm,
        Err(e) => {
            errln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    vm.set_budget(budget);
    match vm.run(&mut mem) {
        Ok(r0) => {
            outln!("{r0:x}")?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            errln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn asm(path: &Path, format: AsmFormat) -> anyhow::Result<ExitCode> {
    let text = String::from_utf8(read(path)?)
        .with_context(|| format!("{}: not UTF-8 text", path.display()))?;
    let insns = match assemble(&text) {
        Ok(i) => i,
        Err(e) => bail!("{}:{e}", path.display()),
    };
    let slots = encode_program(&insns);
    let out: Vec<u8> = match format {
        AsmFormat::Binary => slots.iter().flat_map(EbpfInsn::encode).collect(),
        AsmFormat::Words => slots
            .iter()
            .map(|s| format!("{:#018x}\n", u64::from_le_bytes(s.encode())))
            .collect::<String>()
            .into_bytes(),
        AsmFormat::Bytes => slots
            .iter()
            .map(|s| {
                let b: Vec<String> = s.encode().iter().map(|b| format!("{b:02x}")).collect();
                b.join(" ") + "\n"
            })
            .collect::<String>()
            .into_bytes(),
    };
    crate::console::print(out)?;
    Ok(ExitCode::SUCCESS)
}

fn disasm(path: &Path, as_asm: bool) -> anyhow::Result<ExitCode> {
    let raw = read(path)?;
    // Hex text if it parses as hex; a binary image otherwise.
    let bytes = match std::str::from_utf8(&raw).ok().map(parse_program_hex) {
        Some(Ok(b)) if !raw.is_empty() => b,
        _ => raw,
    };
    let slots = slots_from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if as_asm {
        let insns =
            decode_program(&slots).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        crate::console::print(print(&sift_ebpf::asm::strip(&insns)))?;
    } else {
        crate::console::print(objdump(&slots))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A program file in any form: assembly if it assembles, else hex, else a binary image.
fn read_program_file(path: &Path) -> anyhow::Result<Vec<EbpfInsn>> {
    let raw = read(path)?;
    if let Ok(text) = std::str::from_utf8(&raw) {
        if let Ok(b) = parse_program_hex(text)
            && !b.is_empty()
        {
            return slots_from_bytes(&b).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()));
        }
        return match assemble(text) {
            Ok(insns) => Ok(encode_program(&insns)),
            Err(e) => bail!("{}:{e}", path.display()),
        };
    }
    slots_from_bytes(&raw).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn map_spec(spec: &str) -> anyhow::Result<Map> {
    let parts: Vec<&str> = spec.split(':').collect();
    let [kind, key, value, entries] = parts.as_slice() else {
        bail!("--map {spec}: expected KIND:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES");
    };
    let kind = match *kind {
        "array" => MapKind::Array,
        "hash" => MapKind::Hash,
        k => bail!("--map {spec}: unknown map kind `{k}` (array or hash)"),
    };
    let num =
        |t: &str| t.parse::<u32>().with_context(|| format!("--map {spec}: `{t}` is not a size"));
    let def =
        MapDef { kind, key_size: num(key)?, value_size: num(value)?, max_entries: num(entries)? };
    Map::new(def).with_context(|| format!("--map {spec}"))
}

fn hex_string(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn run_xdp(
    prog: &Path,
    capture: &Path,
    count: Option<u64>,
    map_specs: &[String],
    dump_maps: bool,
) -> anyhow::Result<ExitCode> {
    let slots = read_program_file(prog)?;
    let maps = map_specs.iter().map(|s| map_spec(s)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut helpers = Helpers::new();
    register_map_helpers(&mut helpers);
    let mut vm = Vm::load_with_maps(&slots, helpers, maps)
        .map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?;
    let mut reader =
        sift_pcap::open(capture).map_err(|e| anyhow::anyhow!("{}: {e}", capture.display()))?;
    let mut counts: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    let mut out = String::new();
    let mut index = 0u64;
    let mut faults = 0u64;
    while count.is_none_or(|c| index < c) {
        let packet = match reader.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => bail!("{}: {e}", capture.display()),
        };
        let mut data = packet.data.to_vec();
        let action = match vm.run_xdp(&mut data, 1) {
            Ok(v) => xdp::name(v).map_or_else(|| format!("XDP_INVALID({v})"), str::to_string),
            Err(e) => {
                // The kernel's verifier admits no faulting program; here a fault aborts the
                // packet, as XDP_ABORTED does, and says why.
                errln!("packet {index}: {e}");
                faults += 1;
                "XDP_ABORTED".to_string()
            }
        };
        out.push_str(&format!("{index} {action}\n"));
        *counts.entry(action).or_insert(0) += 1;
        index += 1;
        if out.len() > 1 << 16 {
            crate::console::print(std::mem::take(&mut out))?;
        }
    }
    if dump_maps {
        for (k, m) in vm.maps().iter().enumerate() {
            for (key, value) in m.entries() {
                out.push_str(&format!("map {k}: {} => {}\n", hex_string(&key), hex_string(&value)));
            }
        }
    }
    crate::console::print(out)?;
    let summary: Vec<String> = counts.iter().map(|(a, n)| format!("{a} {n}")).collect();
    let faults = if faults > 0 { format!(" ({faults} faults)") } else { String::new() };
    errln!("{index} packets: {}{faults}", summary.join(", "));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_hex_takes_bytes_and_words() {
        assert_eq!(
            parse_program_hex("b7 00 00 00 01 00 00 00\n").unwrap(),
            [0xb7, 0, 0, 0, 1, 0, 0, 0]
        );
        assert_eq!(parse_program_hex("0x0000000100000095").unwrap(), [0x95, 0, 0, 0, 1, 0, 0, 0]);
        assert!(parse_program_hex("zz").is_err());
    }
}
