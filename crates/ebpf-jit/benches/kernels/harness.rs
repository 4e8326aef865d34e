//! The eBPF benchmark kernels, built and ready on every engine: shared by the criterion bench
//! (`benches/kernels.rs`) and the correctness test (`tests/kernels.rs`), which include this
//! file with `#[path]`, so that what is measured is exactly what is checked.
//!
//! Each kernel is a C file beside this one (`kernels/*.c`, conventions in `kernel.h`). It is
//! compiled twice from the same source into a scratch directory under `target/`:
//! `clang -O2 -target bpf -c` (loaded with `sift-ebpf-elf` into slots for the eBPF engines) and
//! `clang -O2 -shared -fPIC` (native x86-64 code, loaded with `libloading`). Its input memory
//! is generated here, deterministically: the same bytes for every engine.
//!
//! The engines ([`Engine`]): native C, sift's interpreter and JIT, rbpf's interpreter and JIT.
#![allow(dead_code)] // The bench and the test each use part of it.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use sift_ebpf_vm::{Helpers, Vm};
use sift_testkit::Rng;

/// The kernels, in the order they are reported. `return0` is the per-call cost.
pub const KERNELS: &[&str] = &["log2", "prime", "memcpy", "switch", "strcmp", "parse", "return0"];

/// One parse slot (`parse.c`'s `SLOT`): a u16 length and at most 126 bytes of frame.
const PARSE_SLOT: usize = 128;

/// A kernel compiled for every engine, with its input.
pub struct Kernel {
    /// Its name (the C file's stem).
    pub name: &'static str,
    /// The eBPF program: slots in the kernel's encoding.
    pub program: Vec<u8>,
    /// The native build.
    pub native: Native,
    /// The input memory every engine starts from.
    pub input: Vec<u8>,
    /// The bytes of the memory the kernel writes (compared between engines besides `r0`).
    pub output: Range<usize>,
}

/// The native build of a kernel: `u64 bench(u8 *mem, u64 len)` from a shared object.
pub struct Native {
    function: unsafe extern "C" fn(*mut u8, u64) -> u64,
    // Keeps `function`'s code mapped.
    _library: libloading::Library,
}

/// The engines a kernel runs on, by the names the bench reports (the criterion function ids
/// `benches/ebpf-kernels.sh` reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The C kernel compiled natively with `clang -O2`.
    Native,
    /// sift's interpreter ([`Vm::run`]).
    SiftInterp,
    /// rbpf's interpreter (`EbpfVmRaw::execute_program`).
    RbpfInterp,
    /// rbpf's x86-64 JIT (`EbpfVmRaw::execute_program_jit`).
    RbpfJit,
    /// sift's eBPF JIT (`sift-ebpf-jit`, checked: every access outside the frame is checked
    /// against its region, backward jumps charged to the budget), through [`Vm::run`].
    SiftJit,
}

impl Engine {
    /// Every engine, in the order they are reported.
    pub const ALL: [Engine; 5] =
        [Engine::Native, Engine::SiftInterp, Engine::RbpfInterp, Engine::RbpfJit, Engine::SiftJit];

    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Native => "native",
            Engine::SiftInterp => "sift-interp",
            Engine::RbpfInterp => "rbpf-interp",
            Engine::RbpfJit => "rbpf-jit",
            Engine::SiftJit => "sift-jit",
        }
    }
}

/// Builds every kernel, or `None` (with the reason printed; a failure under
/// `SIFT_REQUIRE_ORACLES=1`) when clang is missing. A kernel that clang or the loader refuses
/// is a failure: the kernels are part of the repository.
pub fn build_all() -> Option<Vec<Kernel>> {
    let clang = sift_testkit::tool("clang")?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ebpf-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kernels = KERNELS
        .iter()
        .map(|name| build(&clang, &dir, name).unwrap_or_else(|e| panic!("kernel {name}: {e}")))
        .collect();
    // The objects are read and the libraries mapped: the directory is no longer needed.
    let _ = std::fs::remove_dir_all(&dir);
    Some(kernels)
}

/// The directory of the C sources.
fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/kernels")
}

fn clang(clang: &Path, args: &[&str], source: &Path, out: &Path) -> Result<(), String> {
    let output = Command::new(clang)
        .args(args)
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("running {}: {e}", clang.display()))?;
    if !output.status.success() {
        return Err(format!(
            "clang {} failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

fn build(clang_path: &Path, dir: &Path, name: &'static str) -> Result<Kernel, String> {
    let source = source_dir().join(format!("{name}.c"));
    let object = dir.join(format!("{name}.o"));
    let shared = dir.join(format!("{name}.so"));
    clang(clang_path, &["-O2", "-target", "bpf", "-c"], &source, &object)?;
    clang(clang_path, &["-O2", "-shared", "-fPIC"], &source, &shared)?;
    let elf = std::fs::read(&object).map_err(|e| format!("{}: {e}", object.display()))?;
    let parsed = sift_ebpf_elf::Object::parse(&elf).map_err(|e| format!("{name}.o: {e}"))?;
    let program = parsed.program(None).map_err(|e| format!("{name}.o: {e}"))?.bytes();
    let native = Native::load(&shared)?;
    let (input, output) = input(name);
    Ok(Kernel { name, program, native, input, output })
}

impl Native {
    fn load(path: &Path) -> Result<Native, String> {
        // SAFETY: the library is one of the kernels just compiled from this directory's C
        // sources: no initialisers, nothing but the `bench` function.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: every kernel defines `bench` with this signature (`KERNEL` in kernel.h);
        // the pointer is copied out and kept valid by keeping the library in the struct.
        let function = unsafe {
            *library
                .get::<unsafe extern "C" fn(*mut u8, u64) -> u64>(b"bench\0")
                .map_err(|e| format!("{}: {e}", path.display()))?
        };
        Ok(Native { function, _library: library })
    }
}

/// Each kernel's input and the range it writes. Sizes are those of the public benchmark
/// (eunomia-bpf/bpf-benchmark) or larger, bounded so that one run of the slowest interpreter
/// stays well under half a second.
pub fn input(name: &str) -> (Vec<u8>, Range<usize>) {
    let mut rng = Rng(0x5eed_0000 + name.len() as u64);
    let with_count = |count: u64, body: Vec<u8>| {
        let mut mem = count.to_le_bytes().to_vec();
        mem.extend(body);
        mem
    };
    match name {
        "log2" => {
            let n = 8192;
            let body = (0..n).flat_map(|_| (rng.next() >> rng.below(64)).to_le_bytes()).collect();
            (with_count(n, body), 0..0)
        }
        "prime" => (with_count(10_000, Vec::new()), 0..0),
        "memcpy" => {
            let n = 131_072u64; // 1 MiB of u64 words.
            let mut body: Vec<u8> = (0..n).flat_map(|_| rng.next().to_le_bytes()).collect();
            body.resize(2 * n as usize * 8, 0);
            let dst = 8 + n as usize * 8;
            (with_count(n, body), dst..dst + n as usize * 8)
        }
        "switch" => {
            let n = 16_384;
            let body = (0..n).map(|_| rng.below(80) as u8).collect();
            (with_count(n, body), 0..0)
        }
        "strcmp" => {
            let n = 65_536;
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let mut b = a.clone();
            b[n as usize - 1] += 1;
            (with_count(n, [a, b].concat()), 0..0)
        }
        "parse" => {
            let n = 8192;
            let body = (0..n).flat_map(|_| parse_slot(&mut rng)).collect();
            (with_count(n, body), 0..0)
        }
        "return0" => (with_count(0, Vec::new()), 0..0),
        _ => panic!("no input for kernel {name}"),
    }
}

/// One slot of `parse`'s input: a mix of IPv4/IPv6, TCP/UDP/other, VLAN and QinQ tags, ARP,
/// fragments and truncated frames.
fn parse_slot(rng: &mut Rng) -> Vec<u8> {
    let mut frame: Vec<u8> = (0..12).map(|_| rng.next() as u8).collect();
    let tags = rng.pick(&[0, 0, 0, 1, 2]);
    if tags == 2 {
        frame.extend([0x88, 0xa8, 0, rng.next() as u8]);
    }
    if tags >= 1 {
        frame.extend([0x81, 0x00, 0, rng.next() as u8]);
    }
    let l3 = rng.pick(&[4, 4, 4, 6, 6, 0]);
    let l4 = rng.pick(&[6u8, 6, 17, 17, 1]);
    match l3 {
        4 => {
            let fragment = rng.chance(5);
            frame.extend([0x08, 0x00, 0x45, 0, 0, 60, 0x12, 0x34]);
            frame.extend(if fragment { [0x00, 0x10] } else { [0x40, 0x00] });
            frame.extend([64, l4, 0, 0]);
            frame.extend((0..8).map(|_| rng.next() as u8));
        }
        6 => {
            frame.extend([0x86, 0xdd, 0x60, 0, 0, 0, 0, 20, l4, 64]);
            frame.extend((0..32).map(|_| rng.next() as u8));
        }
        _ => {
            frame.extend([0x08, 0x06]); // ARP
            frame.extend((0..28).map(|_| rng.next() as u8));
        }
    }
    let port = rng.next() as u16;
    match l4 {
        6 => {
            frame.extend([0x30, 0x39]);
            frame.extend(port.to_be_bytes());
            frame.extend((0..8).map(|_| rng.next() as u8));
            frame.extend([0x50, if rng.chance(30) { 0x02 } else { 0x10 }, 0xff, 0xff, 0, 0, 0, 0]);
        }
        17 => {
            frame.extend([0x30, 0x39]);
            frame.extend(port.to_be_bytes());
            frame.extend([0, 8, 0, 0]);
        }
        _ => frame.extend([8, 0, 0, 0, 0, 0, 0, 0]),
    }
    let payload = rng.below(40) as usize;
    frame.extend((0..payload).map(|_| rng.next() as u8));
    frame.truncate(PARSE_SLOT - 2);
    if rng.chance(8) {
        frame.truncate(rng.below(frame.len() as u64) as usize);
    }
    let mut slot = (frame.len() as u16).to_le_bytes().to_vec();
    slot.extend(frame);
    slot.resize(PARSE_SLOT, 0);
    slot
}

/// A kernel's engines, ready to run. Built only after both interpreters ran the kernel on its
/// input without a fault (rbpf's interpreter checks every access), which is what allows the
/// unchecked engines (native, rbpf's JIT) to run on memory of the same count and length.
pub struct Engines<'k> {
    kernel: &'k Kernel,
    sift: Vm,
    /// The same program on sift's JIT.
    sift_jit: Vm,
    rbpf_interp: rbpf::EbpfVmRaw<'k>,
    /// rbpf's JIT, or why it is unavailable (rbpf 0.4.1 compiles into one 4 KiB page and
    /// panics past it).
    rbpf_jit: Result<rbpf::EbpfVmRaw<'k>, String>,
}

impl<'k> Engines<'k> {
    /// Loads the kernel on every engine and runs it once on both interpreters.
    pub fn new(kernel: &'k Kernel) -> Result<Engines<'k>, String> {
        let name = kernel.name;
        let mut sift = Vm::from_bytes(&kernel.program, Helpers::new())
            .map_err(|e| format!("{name}: sift refuses the program: {e}"))?;
        sift.set_budget(u64::MAX);
        let rbpf_interp = rbpf::EbpfVmRaw::new(Some(&kernel.program))
            .map_err(|e| format!("{name}: rbpf refuses the program: {e}"))?;
        sift.run(&mut kernel.input.clone()).map_err(|e| format!("{name}: sift-interp: {e}"))?;
        rbpf_interp
            .execute_program(&mut kernel.input.clone())
            .map_err(|e| format!("{name}: rbpf-interp: {e}"))?;
        let rbpf_jit = rbpf_jit(&kernel.program);
        let mut sift_jit = Vm::from_bytes(&kernel.program, Helpers::new())
            .map_err(|e| format!("{name}: sift refuses the program: {e}"))?;
        sift_jit.set_budget(u64::MAX);
        sift_ebpf_jit::jit(&mut sift_jit, &sift_ebpf_jit::JitOptions::default())
            .map_err(|e| format!("{name}: sift-jit: {e}"))?;
        Ok(Engines { kernel, sift, sift_jit, rbpf_interp, rbpf_jit })
    }

    /// Whether `engine` can run this kernel; `Err` says why not.
    pub fn available(&self, engine: Engine) -> Result<(), &str> {
        match (engine, &self.rbpf_jit) {
            (Engine::RbpfJit, Err(why)) => Err(why),
            _ => Ok(()),
        }
    }

    /// Runs the kernel on `engine` over `mem`, a copy of the kernel's input (its output
    /// bytes may differ: they are only written).
    ///
    /// # Panics
    /// When `mem` is not a copy of the input's count and length (the unchecked engines would
    /// be unsafe), when the engine is unavailable, and on an interpreter fault.
    pub fn run(&mut self, engine: Engine, mem: &mut [u8]) -> u64 {
        let input = &self.kernel.input;
        assert!(
            mem.len() == input.len() && mem[..8] == input[..8],
            "{}: memory is not the input's shape",
            self.kernel.name
        );
        match engine {
            // SAFETY: the kernels' addresses depend only on the input's count and length
            // (kernel.h), both checked equal to the input's above, on which rbpf's
            // bounds-checked interpreter ran without a fault in `new`.
            Engine::Native => unsafe {
                (self.kernel.native.function)(mem.as_mut_ptr(), mem.len() as u64)
            },
            Engine::SiftInterp => self.sift.run(mem).unwrap(),
            Engine::SiftJit => self.sift_jit.run(mem).unwrap(),
            Engine::RbpfInterp => self.rbpf_interp.execute_program(mem).unwrap(),
            Engine::RbpfJit => {
                let jit = self.rbpf_jit.as_ref().unwrap();
                // SAFETY: as for `Native`: the same program ran on rbpf's checked interpreter
                // over memory of this count and length.
                unsafe { jit.execute_program_jit(mem) }.unwrap()
            }
        }
    }
}

/// rbpf's JIT of `program`, or why it cannot compile it.
pub fn rbpf_jit(program: &[u8]) -> Result<rbpf::EbpfVmRaw<'_>, String> {
    let mut vm = rbpf::EbpfVmRaw::new(Some(program)).map_err(|e| e.to_string())?;
    // rbpf 0.4.1 asserts that the code fits its one-page buffer: a panic, caught (quietly).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vm.jit_compile()));
    std::panic::set_hook(hook);
    match compiled {
        Ok(Ok(())) => Ok(vm),
        Ok(Err(e)) => Err(format!("rbpf's JIT refuses it: {e}")),
        Err(_) => Err("too large for rbpf 0.4.1's JIT (one 4 KiB code page)".to_string()),
    }
}
