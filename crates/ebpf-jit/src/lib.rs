//! sift's eBPF JIT: every program of a [`Vm`] compiled to x86-64 and run through the VM's own
//! entry points ([`Vm::run`], [`Vm::run_xdp_packet`], [`Vm::run_tc`], …).
//!
//! **Why it works this way.** The compiled code keeps the interpreter's *virtual* addresses
//! in eBPF registers (stack at `STACK_BASE`, input memory or context at `MEM_BASE`, the
//! packet window, map values at `MAP_BASE + (i << 32)`) and translates each access to a host
//! address as it happens. So helpers, maps, contexts (with their 32-bit packet pointers),
//! tail-call targets and every `Vm::run*` entry point are shared with the interpreter
//! unchanged, and memory safety holds by construction — every access is checked against a
//! region, or is provably inside the current stack frame — without trusting any verifier.
//! Results equal the interpreter's: `r0`, memory, maps, and faults with their location.
//!
//! * [`compile`] makes [`JitCode`] for a VM's programs; [`jit`] installs it in the VM
//!   ([`Vm::set_compiled`]), so that every run uses it. A [`JitError::TooComplex`] refusal
//!   (the size caps of [`JitOptions`]) leaves the VM on its interpreter, as the kernel falls
//!   back when its JIT gives up.
//! * `lower` is the instruction selection (registers, frames, the checked access sequence);
//!   `prov` the guess of which region each access reaches; `runtime` the run context and the
//!   Rust functions the code calls (slow accesses, legacy packet loads, helpers, tail calls).
//! * Checked mode (the default, for programs no verifier has seen) also charges backward
//!   jumps and calls against the run's budget, so that no run hangs (`Fault::Budget`).
//! * Constant blinding ([`JitOptions::blinding`]) hides the program's immediates from the
//!   code (each XORed with a random key, unblinded in a scratch register).
//! * The code lives in [`sift_x86::exec::ExecBuf`]: never writable and executable at once.
//!
//! This crate's `unsafe` is calling the code and the run-time functions' dereferences of the
//! run context (module `runtime`), each with its `// SAFETY:` argument.

#[cfg(target_arch = "x86_64")]
mod lower;
#[cfg(target_arch = "x86_64")]
mod prov;
#[cfg(target_arch = "x86_64")]
mod runtime;

use sift_ebpf_vm::{Compiled, ExecCx, Helpers, Memory, RunError, Vm};
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
        .map(|p| lower::Source { slots: p.slots(), functions: p.functions() })
        .collect();
    let lowered = lower::lower(&sources, opts)?;
    let buf = ExecBuf::new(&lowered.code)?;
    let start = buf.entry();
    // SAFETY: `start + lowered.entry` is the entry stub `lower` emitted, a function with the
    // System V signature `EntryFn`; the buffer (read-execute) lives as long as the JitCode
    // that holds both, and the pointer is only called through `runtime::run`.
    let entry =
        unsafe { std::mem::transmute::<*const u8, runtime::EntryFn>(start.add(lowered.entry)) };
    let bodies: Vec<u64> = lowered.bodies.iter().map(|&o| start as u64 + o as u64).collect();
    // The context points at `bodies`' heap buffer, which moves with the JitCode untouched.
    let run = Box::new(runtime::RunCx::new(&bodies));
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
