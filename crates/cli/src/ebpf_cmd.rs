//! `sift ebpf …`: eBPF programs by hand (issue 25): `exec` runs a program the way the eBPF
//! conformance suite's plugins do, `asm` assembles the suite's syntax, `disasm` lists a
//! program as `llvm-objdump -d` does.
//!
//! `run` runs a program over a capture: an ELF object as `clang -target bpf` writes it (its
//! program chosen by `--section`, its maps created from the object, `sift-ebpf-elf`), or a
//! program in assembly or hex with maps from `--map`.
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
use sift_ebpf::{EbpfInsn, MapSpec, MapType, encode_program};
use sift_ebpf_elf::{Object, ProgType};
use sift_ebpf_vm::context::{tc, xdp};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, XdpPacket, register_kernel_helpers, test_helpers};
use sift_pcap::Precision;

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
        /// The most instructions to execute (the JIT charges its backward jumps and calls
        /// against it instead).
        #[arg(long, default_value_t = sift_ebpf_vm::DEFAULT_BUDGET)]
        budget: u64,
        /// Which engine runs the program.
        #[arg(long, value_enum, default_value_t = EngineArg::Jit)]
        engine: EngineArg,
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
    /// Run a program over a capture: one line per packet, `INDEX ACTION` (`XDP_PASS`,
    /// `XDP_DROP`…; `TC_ACT_OK`, `TC_ACT_SHOT`…; a socket filter's `KEEP N` or `DROP`), then the
    /// count of each action on standard error.
    Run {
        /// The program: an ELF object (`clang -O2 -g -target bpf -c`), or assembly in the
        /// conformance syntax, hex bytes or words, or a binary image (run as XDP).
        prog: PathBuf,
        /// The ELF object's program to run, by section (`xdp/lb`) or function name (needed
        /// when the object has several).
        #[arg(long, value_name = "NAME")]
        section: Option<String>,
        /// The capture file (pcap or pcapng; `-` for standard input).
        #[arg(short = 'r')]
        capture: PathBuf,
        /// Stop after N packets.
        #[arg(short = 'c')]
        count: Option<u64>,
        /// Write every packet as the program left it to this pcap file (`-`: standard output,
        /// then the per-packet lines are not printed).
        #[arg(short = 'w', value_name = "OUT")]
        write: Option<PathBuf>,
        /// A map for a program that is not an ELF object,
        /// `TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS]` (`TYPE` the kernel's name: `array`,
        /// `hash`, `percpu_array`, `lru_hash`, `lpm_trie`, `ringbuf`, `queue`…); the first is
        /// `map_fd(0)`, the next `map_fd(1)`…
        #[arg(long = "map", value_name = "SPEC")]
        maps: Vec<String>,
        /// Set a map entry before the first packet, `MAP:KEY:VALUE` (the map by name or
        /// number, key and value in hex: `blocked:180000000a000000:01000000`; an empty key
        /// pushes onto a queue or stack). Repeatable.
        #[arg(long = "map-update", value_name = "MAP:KEY:VALUE")]
        updates: Vec<String>,
        /// Print every map's entries at the end (`map N: KEY => VALUE`, hex; an ELF object's
        /// maps also by name).
        #[arg(long = "maps", alias = "dump-maps")]
        dump_maps: bool,
        /// Which engine runs the program.
        #[arg(long, value_enum, default_value_t = EngineArg::Jit)]
        engine: EngineArg,
    },
    /// Check programs with sift's verifier (the kernel's rules): every program of an ELF
    /// object (or the one `--section` names), or a program in assembly or hex as `--type`.
    /// Prints `accepted` with the instructions processed, or the refusal located
    /// (`instruction N: …`, the kernel's wording); exit status 1 when one is refused.
    Verify {
        /// The program: an ELF object, or assembly, hex or a binary image.
        prog: PathBuf,
        /// Only this program of an ELF object (section or function name).
        #[arg(long, value_name = "NAME")]
        section: Option<String>,
        /// The program type of a program that is not an ELF object (or of an object's
        /// untyped `.text`): `xdp`, `tc`, `socket`.
        #[arg(long = "type", value_name = "TYPE", default_value = "xdp")]
        prog_type: String,
        /// Check as the kernel does for an unprivileged loader (no pointer leaks, no reads of
        /// uninitialised stack); by default as for root.
        #[arg(long)]
        unprivileged: bool,
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

/// Which engine runs a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The x86-64 JIT (`sift-ebpf-jit`): verified mode (no run-time checks) when sift's
    /// verifier accepts a program run as XDP, TC or socket filter, else checked mode; a program
    /// too large for it runs on the interpreter, with a warning, as the kernel falls back when
    /// its JIT gives up.
    Jit,
    /// The interpreter (`sift-ebpf-vm`).
    Interp,
}

/// Puts `vm` on `engine`; a program run with a context (`as_type`) goes on the JIT's
/// verified mode when sift's verifier accepts it (as root would load it).
fn use_engine(vm: &mut Vm, engine: EngineArg, as_type: Option<ProgType>) {
    if engine != EngineArg::Jit {
        return;
    }
    let opts = sift_ebpf_jit::JitOptions::default();
    if let Some(t) = as_type {
        let verifier = sift_ebpf_verifier::Options { privileged: true };
        if sift_ebpf_jit::jit_verified(vm, t, &verifier, &opts).is_ok() {
            return;
        }
    }
    if let Err(e) = sift_ebpf_jit::jit(vm, &opts) {
        errln!("warning: {e}; running on the interpreter");
    }
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
        EbpfCommand::Exec { mem, positional_mem, budget, engine } => {
            exec(mem.or(positional_mem), budget, engine)
        }
        EbpfCommand::Asm { file, format } => asm(&file, format),
        EbpfCommand::Disasm { file, asm } => disasm(&file, asm),
        EbpfCommand::Verify { prog, section, prog_type, unprivileged } => {
            verify(&prog, section.as_deref(), &prog_type, unprivileged)
        }
        EbpfCommand::Run {
            prog,
            section,
            capture,
            count,
            write,
            maps,
            updates,
            dump_maps,
            engine,
        } => {
            let opts = RunOptions { capture, count, write, updates, dump_maps, engine };
            run_program(&prog, section.as_deref(), &maps, &opts)
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

fn exec(mem: Option<String>, budget: u64, engine: EngineArg) -> anyhow::Result<ExitCode> {
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
    use_engine(&mut vm, engine, None);
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

fn map_spec(index: usize, spec: &str) -> anyhow::Result<Map> {
    let parts: Vec<&str> = spec.split(':').collect();
    let [kind, key, value, entries, rest @ ..] = parts.as_slice() else {
        bail!("--map {spec}: expected TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS]");
    };
    let map_type =
        MapType::ALL.iter().copied().find(|t| t.name().eq_ignore_ascii_case(kind)).with_context(
            || format!("--map {spec}: unknown map type `{kind}` (array, hash, lpm_trie…)"),
        )?;
    let num =
        |t: &str| t.parse::<u32>().with_context(|| format!("--map {spec}: `{t}` is not a number"));
    let flags = match rest {
        [] => 0,
        [f] => num(f)?,
        _ => bail!("--map {spec}: too many fields"),
    };
    let spec = MapSpec {
        name: format!("map {index}"),
        map_type,
        key_size: num(key)?,
        value_size: num(value)?,
        max_entries: num(entries)?,
        flags,
        initial: Vec::new(),
    };
    Map::from_spec(&spec).map_err(|e| anyhow::anyhow!("--map {}: {e}", parts.join(":")))
}

/// `--map-update MAP:KEY:VALUE` applied to the VM's maps (`BPF_ANY`).
fn map_update(vm: &mut Vm, names: &[String], update: &str) -> anyhow::Result<()> {
    let [map, key, value] = update.splitn(3, ':').collect::<Vec<_>>()[..] else {
        bail!("--map-update {update}: expected MAP:KEY:VALUE");
    };
    let index = names
        .iter()
        .position(|n| n == map)
        .or_else(|| map.parse::<usize>().ok())
        .filter(|&i| i < vm.maps().len())
        .with_context(|| format!("--map-update {update}: no map `{map}`"))?;
    let hex = |t: &str| -> anyhow::Result<Vec<u8>> {
        if !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("--map-update {update}: `{t}` is not hex bytes");
        }
        Ok((0..t.len()).step_by(2).map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap()).collect())
    };
    let (key, value) = (hex(key)?, hex(value)?);
    let m = &mut vm.maps_mut()[index];
    let spec = m.def();
    if (!key.is_empty() && key.len() != spec.key_size as usize)
        || value.len() != spec.value_size as usize
    {
        bail!(
            "--map-update {update}: map `{map}` has {}-byte keys and {}-byte values",
            spec.key_size,
            spec.value_size
        );
    }
    m.update(&key, &value, 0).map_err(|e| {
        anyhow::anyhow!(
            "--map-update {update}: refused ({})",
            std::io::Error::from_raw_os_error(-e as i32)
        )
    })
}

fn hex_string(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// What `sift ebpf run` does besides choosing the program.
struct RunOptions {
    capture: PathBuf,
    count: Option<u64>,
    write: Option<PathBuf>,
    updates: Vec<String>,
    dump_maps: bool,
    engine: EngineArg,
}

/// The context a program runs with, from its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunAs {
    /// `xdp_md` (XDP programs, and programs that are not ELF objects).
    Xdp,
    /// `__sk_buff` with the packet from its link-layer header (`SCHED_CLS`).
    Tc,
    /// `__sk_buff`, the result the bytes to keep (`SOCKET_FILTER`).
    Socket,
}

/// An ELF object's map in the VM, with its initial contents (global data sections).
fn vm_map(spec: &MapSpec) -> anyhow::Result<Map> {
    Map::from_spec(spec).map_err(|e| anyhow::anyhow!("map {}: {e}", spec.name))
}

/// `TC_ACT_*` names (`TC_ACT(N)` for others).
fn tc_action(v: u64) -> String {
    tc::name(v).map_or_else(|| format!("TC_ACT({})", v as u32 as i32), str::to_string)
}

fn verify(
    prog: &Path,
    section: Option<&str>,
    type_name: &str,
    unprivileged: bool,
) -> anyhow::Result<ExitCode> {
    use sift_ebpf_verifier::{Options, verify_with};
    let given = ProgType::from_name(type_name)
        .with_context(|| format!("--type {type_name}: expected xdp, tc or socket"))?;
    let options = Options { privileged: !unprivileged };
    let raw = read(prog)?;
    // (name, program, type) for each program to check, and the maps they name.
    let mut programs: Vec<(String, Vec<EbpfInsn>, ProgType)> = Vec::new();
    let mut maps: Vec<MapSpec> = Vec::new();
    if raw.starts_with(b"\x7fELF") {
        let object = Object::parse(&raw).map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?;
        let chosen = match section {
            Some(_) => vec![
                object.program(section).map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?,
            ],
            None => object.programs.iter().collect(),
        };
        for p in chosen {
            let t = if p.prog_type == ProgType::Unspec { given } else { p.prog_type };
            programs.push((format!("{} ({})", prog.display(), p.section), p.insns.clone(), t));
        }
        maps = object.maps;
    } else {
        if section.is_some() {
            bail!("{}: --section chooses a program of an ELF object", prog.display());
        }
        programs.push((prog.display().to_string(), read_program_file(prog)?, given));
    }
    let mut refused = false;
    for (name, insns, t) in programs {
        match verify_with(&insns, t, &maps, options) {
            Ok(report) => outln!(
                "{name}: accepted ({} instructions processed, {} states)",
                report.processed,
                report.total_states
            )?,
            Err(e) => {
                outln!("{name}: {e}")?;
                refused = true;
            }
        }
    }
    Ok(if refused { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn run_program(
    prog: &Path,
    section: Option<&str>,
    map_specs: &[String],
    opts: &RunOptions,
) -> anyhow::Result<ExitCode> {
    let raw = read(prog)?;
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let (vm, run_as, names) = if raw.starts_with(b"\x7fELF") {
        if !map_specs.is_empty() {
            bail!(
                "{}: an ELF object declares its maps; --map is for other programs",
                prog.display()
            );
        }
        let object = Object::parse(&raw).map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?;
        let p = object.program(section).map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?;
        let maps = object.maps.iter().map(vm_map).collect::<anyhow::Result<Vec<_>>>()?;
        let vm = Vm::load_with_maps(&p.insns, helpers, maps)
            .map_err(|e| anyhow::anyhow!("{} ({}): {e}", prog.display(), p.section))?;
        let run_as = match p.prog_type {
            ProgType::Xdp | ProgType::Unspec => RunAs::Xdp,
            ProgType::SchedCls => RunAs::Tc,
            ProgType::SocketFilter => RunAs::Socket,
        };
        (vm, run_as, object.maps.iter().map(|m| m.name.clone()).collect())
    } else {
        if section.is_some() {
            bail!("{}: --section chooses a program of an ELF object", prog.display());
        }
        let slots = read_program_file(prog)?;
        let maps = map_specs
            .iter()
            .enumerate()
            .map(|(i, s)| map_spec(i, s))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let vm = Vm::load_with_maps(&slots, helpers, maps)
            .map_err(|e| anyhow::anyhow!("{}: {e}", prog.display()))?;
        (vm, RunAs::Xdp, Vec::new())
    };
    let mut vm = vm;
    for u in &opts.updates {
        map_update(&mut vm, &names, u)?;
    }
    let as_type = match run_as {
        RunAs::Xdp => ProgType::Xdp,
        RunAs::Tc => ProgType::SchedCls,
        RunAs::Socket => ProgType::SocketFilter,
    };
    use_engine(&mut vm, opts.engine, Some(as_type));
    run_capture(vm, run_as, &names, opts)
}

fn run_capture(
    mut vm: Vm,
    run_as: RunAs,
    map_names: &[String],
    opts: &RunOptions,
) -> anyhow::Result<ExitCode> {
    let capture = &opts.capture;
    let mut reader =
        sift_pcap::open(capture).map_err(|e| anyhow::anyhow!("{}: {e}", capture.display()))?;
    let link_type = reader.interfaces().first().map(|i| i.link_type);
    let to_stdout = opts.write.as_deref() == Some(Path::new("-"));
    let mut writer = match &opts.write {
        None => None,
        Some(path) => {
            let sink: Box<dyn std::io::Write> = if to_stdout {
                Box::new(std::io::stdout())
            } else {
                Box::new(
                    std::fs::File::create(path)
                        .with_context(|| format!("{}: cannot create", path.display()))?,
                )
            };
            let link = link_type.unwrap_or(sift_pcap::LinkType::EN10MB);
            Some(sift_pcap::PcapWriter::new(sink, link, 0, 262_144, Precision::default())?)
        }
    };
    let mut counts: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    let mut out = String::new();
    let mut index = 0u64;
    let mut faults = 0u64;
    while opts.count.is_none_or(|c| index < c) {
        let packet = match reader.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => bail!("{}: {e}", capture.display()),
        };
        // The virtual clock (`bpf_ktime_get_ns`) is the packet's time.
        let t = packet.timestamp.instant();
        vm.env_mut().clock_ns = t.secs.saturating_mul(1_000_000_000).saturating_add(t.nanos.into());
        let info =
            SkbInfo { wire_len: packet.wire_len, dev_broadcast: [0xff; 6], ..SkbInfo::default() };
        let (result, data) = match run_as {
            RunAs::Xdp => {
                let mut frame = XdpPacket::new(packet.data);
                let r = vm.run_xdp_packet(&mut frame, 1, 0);
                (r, frame.data().to_vec())
            }
            RunAs::Tc => {
                let mut data = packet.data.to_vec();
                (vm.run_tc(&mut data, &info), data)
            }
            RunAs::Socket => {
                let mut data = packet.data.to_vec();
                (vm.run_socket_filter(&mut data, &info), data)
            }
        };
        let action = match (result, run_as) {
            (Ok(v), RunAs::Xdp) => {
                xdp::name(v).map_or_else(|| format!("XDP_INVALID({v})"), str::to_string)
            }
            (Ok(v), RunAs::Tc) => tc_action(v),
            (Ok(0), RunAs::Socket) => "DROP".to_string(),
            (Ok(v), RunAs::Socket) => format!("KEEP {}", v as u32),
            (Err(e), _) => {
                // The kernel's verifier admits no faulting program; here a fault aborts the
                // packet (XDP_ABORTED, TC_ACT_SHOT, a dropped packet) and says why.
                errln!("packet {index}: {e}");
                faults += 1;
                match run_as {
                    RunAs::Xdp => "XDP_ABORTED",
                    RunAs::Tc => "TC_ACT_SHOT",
                    RunAs::Socket => "DROP",
                }
                .to_string()
            }
        };
        if let Some(w) = writer.as_mut() {
            let wire_len = packet.wire_len.max(data.len() as u32);
            w.write(packet.timestamp, wire_len, &data)
                .with_context(|| format!("writing packet {index}"))?;
        }
        if !to_stdout {
            out.push_str(&format!("{index} {action}\n"));
        }
        let kind = action.split(' ').next().unwrap_or_default().to_string();
        *counts.entry(kind).or_insert(0) += 1;
        index += 1;
        if out.len() > 1 << 16 {
            crate::console::print(std::mem::take(&mut out))?;
        }
    }
    if let Some(w) = writer {
        w.finish()?.flush()?;
    }
    if opts.dump_maps {
        for (k, m) in vm.maps().iter().enumerate() {
            let name = map_names.get(k).map_or_else(String::new, |n| format!(" ({n})"));
            for (key, value) in m.entries() {
                let line =
                    format!("map {k}{name}: {} => {}\n", hex_string(&key), hex_string(&value));
                if to_stdout {
                    errln!("{}", line.trim_end());
                } else {
                    out.push_str(&line);
                }
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
