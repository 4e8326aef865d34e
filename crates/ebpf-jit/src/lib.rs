//! sift's eBPF JIT: every program of a [`Vm`] compiled to x86-64 and run through the VM's own
//! entry points ([`Vm::run`], [`Vm::run_xdp_packet`], [`Vm::run_tc`], …).
//!
//! [`Report::access_bases`]: sift_ebpf_verifier::Report::access_bases
//!
//! **Why it works this way.** The compiled code keeps the interpreter's *virtual* addresses
//! in eBPF registers (stack at `STACK_BASE`, input memory or context at `MEM_BASE`, the
//! packet window, map values at `MAP_BASE + (i << 32)`) and translates each access to a host
//! address as it happens. So helpers, maps, contexts (with their 32-bit packet pointers),
//! tail-call targets and every `Vm::run*` entry point are shared with the interpreter
//! unchanged, and in checked mode memory safety holds by construction — every access is checked
//! against a region, or is provably inside the current stack frame — without trusting any
//! verifier; verified mode drops the checks the verifier's proof makes redundant.
//! Results equal the interpreter's: `r0`, memory, maps, and faults with their location.
//!
//! * [`compile`] makes [`JitCode`] for a VM's programs; [`jit`] installs it in the VM
//!   ([`Vm::set_compiled`]), so that every run uses it. A [`JitError::TooComplex`] refusal
//!   (the size caps of [`JitOptions`]) leaves the VM on its interpreter, as the kernel falls
//!   back when its JIT gives up.
//! * `lower` is the instruction selection (registers, frames, the checked access sequence);
//!   `prov` the guess of which region each access reaches; `loops` the counted loops whose
//!   accesses are checked once per loop entry (an unchecked copy of the loop runs when the
//!   entry's range checks hold, the checked copy otherwise); `runtime` the run context and
//!   the Rust functions the code calls (slow accesses, legacy packet loads, helpers, tail
//!   calls).
//! * Checked mode (the default, for programs no verifier has seen) also charges backward
//!   jumps and calls against the run's budget, so that no run hangs (`Fault::Budget`).
//! * Constant blinding ([`JitOptions::blinding`]) hides the program's immediates from the
//!   code (each XORed with a random key, unblinded in a scratch register).
//! * The code lives in [`sift_x86::exec::ExecBuf`]: never writable and executable at once.
//! * Verified mode ([`compile_verified`]) runs sift's verifier on every program and turns
//!   each access whose region it fixed into `mov r11, [r12 + delta]; op [base + r11 + off]`:
//!   no bounds check, no slow path, no budget charges.
//!
//! **Why verified mode is sound.** The verifier's [`Report::access_bases`] gives, for each
//! access, the one kind of pointer its base register holds on *every* path that reaches it
//! (pruning compares pointer kinds exactly, so pruned paths had the recorded kind too), and
//! its acceptance proves the access inside that object. Each kind is one VM region whose
//! host address is its virtual address plus a delta that is fixed for the whole run:
//!
//! * *Stack* (any frame, `Kind::Stack(n)`): the verifier proves `[-512, 0)` of frame `n`'s
//!   top. The VM's stack is one region of 8 × 512 bytes, frame `k` at `top - 512k`; the
//!   generated code keeps every frame inside it (a call from the 7th frame faults, also in
//!   verified mode, which covers tail-called programs entered at depth > 0), and one delta
//!   (`stack host - STACK_BASE`) serves all frames.
//! * *Context* (loads only; stores stay checked, as the VM's XDP context is read-only): the
//!   verifier allows fields inside `sizeof(xdp_md)` or `sizeof(__sk_buff)` for the program
//!   type; a run checks before the program starts that it came through that type's entry
//!   point (`ExecCx::kind`) and that the context region is at least that size.
//! * *Packet, packet meta*: the verifier proves `data ≤ p < data + range ≤ data_end` (meta:
//!   `data_meta ≤ p < data`), where `data`, `data_end` and `data_meta` are what the VM's
//!   context holds: virtual addresses of the VM's packet window (`data_meta..data_end` of the
//!   frame buffer). The frame buffer is borrowed for the whole run and never moves, and
//!   `packet_base` is fixed per run, so `host - virtual` of the window is constant even when
//!   a helper moves the bounds (after which the verifier forgets every packet pointer, as
//!   the kernel does).
//! * *Map value of map `i`*: the verifier proves `[0, value_size)` of a value returned by a
//!   lookup (or `lddw map_value`); the VM's values are `value_size`-byte slots of map `i`'s
//!   fixed buffer at `MAP_BASE + (i << 32)`. A run checks that each such map still has the
//!   type, key, value size and entries it was verified with (`maps_mut` could replace it).
//! * Ring buffer records and accesses with mixed bases stay checked.
//!
//! This crate's `unsafe` is calling the code and the run-time functions' dereferences of the
//! run context (module `runtime`), each with its `// SAFETY:` argument.

#[cfg(target_arch = "x86_64")]
mod loops;
#[cfg(target_arch = "x86_64")]
mod lower;
#[cfg(target_arch = "x86_64")]
mod prov;
#[cfg(target_arch = "x86_64")]
mod runtime;

use sift_ebpf::ProgType;
use sift_ebpf_vm::{Compiled, ExecCx, Helpers, Memory, ProgKind, RunError, Vm};
use sift_x86::exec::ExecBuf;
use thiserror::Error;

#[cfg(target_arch = "x86_64")]
pub use lower::REGS;

/// How to compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// Charge backward jumps and calls against the run's budget (`Fault::Budget`), so that
    /// a program no verifier has seen cannot hang. On by default.
    pub checked: bool,
    /// Blind immediates (constant blinding against JIT spraying). Off by default.
    pub blinding: bool,
    /// Refuse programs whose code would need more machine instructions than this.
    pub max_machine_insns: usize,
    /// Refuse programs whose code would be longer than this many bytes.
    pub max_code_bytes: usize,
}

impl Default for JitOptions {
    fn default() -> JitOptions {
        JitOptions {
            checked: true,
            blinding: false,
            max_machine_insns: 4 << 20,
            max_code_bytes: 64 << 20,
        }
    }
}

/// Why a VM's programs were not compiled.
#[derive(Debug, Error)]
pub enum JitError {
    /// The code would exceed a size cap of [`JitOptions`]: keep the interpreter.
    #[error("program too complex for the JIT (over {limit})")]
    TooComplex {
        /// The cap that was exceeded.
        limit: usize,
    },
    /// An instruction the lowering does not know (the VM's load checks exclude it).
    #[error("instruction {pc}: opcode {code:#04x} not supported by the JIT")]
    Unsupported {
        /// The slot.
        pc: usize,
        /// The opcode.
        code: u8,
    },
    /// The assembler refused an instruction (a bug in this crate).
    #[error("assembler: {0}")]
    Asm(#[from] sift_x86::AsmError),
    /// The executable mapping failed.
    #[error("executable memory: {0}")]
    Memory(#[from] std::io::Error),
    /// Not an x86-64 host.
    #[error("the eBPF JIT needs an x86-64 host")]
    UnsupportedArch,
    /// [`compile_verified`]: the verifier refused one of the VM's programs.
    #[error("program {program}: {error}")]
    Verify {
        /// The program (0 the VM's own, then the tail-call targets).
        program: usize,
        /// The verifier's refusal.
        error: sift_ebpf_verifier::VerifyError,
    },
    /// [`compile_verified`]: a program type the VM has no entry point for.
    #[error("no VM entry point runs {0:?} programs")]
    ProgType(ProgType),
}

/// Compiled code for every program of one VM (see [`compile`]).
pub struct JitCode {
    buf: ExecBuf,
    #[cfg(target_arch = "x86_64")]
    entry: runtime::EntryFn,
    /// Host addresses of each program's body (tail-call targets).
    bodies: Vec<u64>,
    /// The run context, kept from run to run.
    #[cfg(target_arch = "x86_64")]
    run: Box<runtime::RunCx>,
}

impl std::fmt::Debug for JitCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitCode").field("bytes", &self.buf.bytes().len()).finish_non_exhaustive()
    }
}

impl JitCode {
    /// The machine code (for disassembly and size reports).
    pub fn bytes(&self) -> &[u8] {
        self.buf.bytes()
    }

    /// Offset in [`JitCode::bytes`] of each program's body (after its first function's
    /// prologue): program 0 is the VM's own, then the tail-call targets.
    pub fn body_offsets(&self) -> Vec<usize> {
        let start = self.buf.entry() as u64;
        self.bodies.iter().map(|&b| (b - start) as usize).collect()
    }
}

impl Compiled for JitCode {
    #[cfg(target_arch = "x86_64")]
    fn exec(
        &mut self,
        memory: &mut Memory<'_>,
        helpers: &mut Helpers,
        cx: &ExecCx,
        executed: &mut u64,
    ) -> Result<u64, RunError> {
        runtime::run(self.entry, &mut self.run, memory, helpers, cx, executed)
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn exec(
        &mut self,
        _memory: &mut Memory<'_>,
        _helpers: &mut Helpers,
        _cx: &ExecCx,
        _executed: &mut u64,
    ) -> Result<u64, RunError> {
        unreachable!("no JitCode exists off x86-64")
    }
}

/// Compiles every program of `vm` (its own and those added with [`Vm::add_program`]).
#[cfg(target_arch = "x86_64")]
pub fn compile(vm: &Vm, opts: &JitOptions) -> Result<JitCode, JitError> {
    let sources: Vec<lower::Source<'_>> = vm
        .programs()
        .map(|p| lower::Source { slots: p.slots(), functions: p.functions(), bases: None })
        .collect();
    build(&sources, opts, None)
}

/// The VM's program type and the verifier's context size for `prog`.
fn entry_point(prog: ProgType) -> Result<(ProgKind, usize), JitError> {
    use sift_ebpf_verifier::context::{sk_buff, xdp_md};
    match prog {
        ProgType::Xdp => Ok((ProgKind::Xdp, xdp_md::SIZE as usize)),
        ProgType::SchedCls => Ok((ProgKind::Tc, sk_buff::SIZE as usize)),
        ProgType::SocketFilter => Ok((ProgKind::SocketFilter, sk_buff::SIZE as usize)),
        other => Err(JitError::ProgType(other)),
    }
}

/// Verified mode: verifies every program of `vm` as a `prog` program against the VM's maps
/// (`verifier` the verifier's options) and compiles them so that each access whose region
/// the verifier fixed ([`sift_ebpf_verifier::Report::access_bases`]) is a plain host access
/// (`host = vaddr + delta(region)`, no bounds check) and no back edge is charged to the
/// budget (the verifier bounds loops; [`Vm::executed`] reports 0). Accesses with mixed
/// bases, ring buffer records, context stores and maps past the 29th stay checked.
///
/// The code runs only through the VM entry point of `prog` (`Vm::run_xdp_packet`/`run_xdp`
/// for XDP, `Vm::run_tc` for `SchedCls`, `Vm::run_socket_filter` for socket filters) and
/// with the maps it was verified against: any other run ends with `Fault::Internal` before
/// the program starts. The crate documentation says why this is sound.
#[cfg(target_arch = "x86_64")]
pub fn compile_verified(
    vm: &Vm,
    prog: ProgType,
    verifier: &sift_ebpf_verifier::Options,
    opts: &JitOptions,
) -> Result<JitCode, JitError> {
    let (kind, ctx_len) = entry_point(prog)?;
    let specs: Vec<sift_ebpf::MapSpec> = vm.maps().iter().map(|m| m.spec().clone()).collect();
    let mut reports = Vec::new();
    for (program, p) in vm.programs().enumerate() {
        let r = sift_ebpf_verifier::verify_with(p.slots(), prog, &specs, *verifier)
            .map_err(|error| JitError::Verify { program, error })?;
        reports.push(r);
    }
    let mut maps: Vec<usize> = reports
        .iter()
        .flat_map(|r| r.access_bases.iter().flatten())
        .filter_map(|b| match b {
            sift_ebpf_verifier::AccessBase::MapValue(i) => Some(*i as usize),
            _ => None,
        })
        .filter(|&i| i < runtime::delta::MAX_MAPS && i < specs.len())
        .collect();
    maps.sort_unstable();
    maps.dedup();
    let sources: Vec<lower::Source<'_>> = vm
        .programs()
        .zip(&reports)
        .map(|(p, r)| lower::Source {
            slots: p.slots(),
            functions: p.functions(),
            bases: Some(&r.access_bases),
        })
        .collect();
    let maps = maps.into_iter().map(|i| (i, runtime::shape(&specs[i]))).collect();
    build(&sources, opts, Some(runtime::Verified { kind, ctx_len, maps }))
}

/// Verified mode off x86-64: always [`JitError::UnsupportedArch`].
#[cfg(not(target_arch = "x86_64"))]
pub fn compile_verified(
    _vm: &Vm,
    _prog: ProgType,
    _verifier: &sift_ebpf_verifier::Options,
    _opts: &JitOptions,
) -> Result<JitCode, JitError> {
    Err(JitError::UnsupportedArch)
}

/// Verifies and compiles `vm`'s programs ([`compile_verified`]) and installs the code.
pub fn jit_verified(
    vm: &mut Vm,
    prog: ProgType,
    verifier: &sift_ebpf_verifier::Options,
    opts: &JitOptions,
) -> Result<(), JitError> {
    let code = compile_verified(vm, prog, verifier, opts)?;
    vm.set_compiled(Some(Box::new(code)));
    Ok(())
}

#[cfg(target_arch = "x86_64")]
fn build(
    sources: &[lower::Source<'_>],
    opts: &JitOptions,
    verified: Option<runtime::Verified>,
) -> Result<JitCode, JitError> {
    let lowered = lower::lower(sources, opts)?;
    let buf = ExecBuf::new(&lowered.code)?;
    let start = buf.entry();
    // SAFETY: `start + lowered.entry` is the entry stub `lower` emitted, a function with the
    // System V signature `EntryFn`; the buffer (read-execute) lives as long as the JitCode
    // that holds both, and the pointer is only called through `runtime::run`.
    let entry =
        unsafe { std::mem::transmute::<*const u8, runtime::EntryFn>(start.add(lowered.entry)) };
    let bodies: Vec<u64> = lowered.bodies.iter().map(|&o| start as u64 + o as u64).collect();
    // The context points at `bodies`' heap buffer, which moves with the JitCode untouched.
    let mut run = Box::new(runtime::RunCx::new(&bodies));
    run.verified = verified;
    Ok(JitCode { buf, entry, bodies, run })
}

/// Compiles every program of `vm` (off x86-64: always [`JitError::UnsupportedArch`]).
#[cfg(not(target_arch = "x86_64"))]
pub fn compile(_vm: &Vm, _opts: &JitOptions) -> Result<JitCode, JitError> {
    Err(JitError::UnsupportedArch)
}

/// Compiles `vm`'s programs and installs the code: every run of `vm` uses it from now on
/// (until [`Vm::add_program`] or [`Vm::set_compiled`]`(None)`). On an error the VM keeps
/// its interpreter.
pub fn jit(vm: &mut Vm, opts: &JitOptions) -> Result<(), JitError> {
    let code = compile(vm, opts)?;
    vm.set_compiled(Some(Box::new(code)));
    Ok(())
}
