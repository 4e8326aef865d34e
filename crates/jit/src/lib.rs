//! A JIT compiler from classic BPF to x86-64 machine code.
//!
//! The 1987 packet filter's authors wished for "compiling filters into machine code"; the
//! engine shoot-out in `shared/seeds/003_…` measured the Linux JIT at 2.6× libpcap's
//! interpreter. This crate compiles a [`Validated`] program once into native code that gives
//! exactly the reference interpreter's ([`sift_vm::Interpreter`], libpcap semantics) return
//! value on every packet: a load past the captured length returns 0, division by X = 0 returns
//! 0, shifts by 32 or more give 0, memory starts zeroed, `len` is the wire length.
//!
//! Design:
//!
//! * **Code** is emitted through the `sift-x86` assembler, which also sizes the jumps: short
//!   (rel8) where they reach, by a fixed-point pass; every bounds check and `div x` jumps to
//!   one shared "return 0" exit (module `lower`).
//! * **Registers** are a parameter of the lowering (module `regs`). By default A lives in `eax`, X
//!   in `ecx`; the packet pointer, captured length and wire length arrive in `rdi`, `rsi`,
//!   `edx` (System V) and the wire length moves to `r8d` out of `div`'s way. Only
//!   caller-saved registers are touched, so there is no register save/restore. Scratch memory
//!   gets a 64-byte stack frame only when the program uses it.
//! * **Memory** is never writable and executable at once (`sift_x86::exec`); turning it into
//!   a function pointer and calling it are this crate's only `unsafe`.
//! * **Fallback.** [`Filter`] runs the JIT where it can and the interpreter elsewhere (other
//!   architectures, or a compile failure), keeping the reason.
//!
//! Only `lower`'s output is ever executed, and `lower` takes a [`Validated`] program: jumps
//! are forward and in range, so the code always reaches a `ret`; every packet access is
//! preceded by a check against the captured length.
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod lower;
#[cfg(target_arch = "x86_64")]
mod regs;

#[cfg(target_arch = "x86_64")]
use sift_x86::exec::ExecBuf;

use sift_verify::Validated;
use sift_vm::Interpreter;

/// Why a program was not compiled to native code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JitError {
    /// The JIT targets x86-64 only.
    #[error("the JIT supports x86-64 only (this is {0})")]
    UnsupportedArch(&'static str),
    /// The interpreter was asked for (`--engine interp`).
    #[error("the interpreter was selected")]
    NotRequested,
    /// The system refused executable memory.
    #[error("cannot get executable memory: {0}")]
    Memory(#[from] std::io::Error),
    /// The assembler refused an instruction (a bug in the lowering: no program causes it).
    #[error("cannot assemble the program: {0}")]
    Assemble(#[from] sift_x86::AsmError),
}

/// The signature of generated code: `(packet, captured length, wire length) -> return value`.
#[cfg(target_arch = "x86_64")]
type Entry = unsafe extern "sysv64" fn(*const u8, u64, u32) -> u32;

/// A classic BPF program compiled to native code.
pub struct JitFilter {
    #[cfg(target_arch = "x86_64")]
    code: ExecBuf,
    #[cfg(target_arch = "x86_64")]
    entry: Entry,
}

impl std::fmt::Debug for JitFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitFilter").field("code_size", &self.code().len()).finish()
    }
}

impl JitFilter {
    /// Compiles a validated program (either validator mode; semantics are libpcap's).
    #[cfg(target_arch = "x86_64")]
    pub fn compile(prog: &Validated) -> Result<JitFilter, JitError> {
        JitFilter::compile_with(prog, &regs::Regs::default())
    }

    /// Compiles with a chosen register assignment.
    #[cfg(target_arch = "x86_64")]
    fn compile_with(prog: &Validated, regs: &regs::Regs) -> Result<JitFilter, JitError> {
        let lowered = lower::lower(prog, regs)?;
        let code = ExecBuf::new(&lowered.code)?;
        let entry = entry_point(&code);
        Ok(JitFilter { code, entry })
    }

    /// Compiles a validated program: not available on this architecture.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn compile(_prog: &Validated) -> Result<JitFilter, JitError> {
        Err(JitError::UnsupportedArch(std::env::consts::ARCH))
    }

    /// Runs the filter over `pkt` (the captured bytes) with wire length `wire_len`.
    #[inline]
    pub fn run(&self, pkt: &[u8], wire_len: u32) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            call(self.entry, pkt, wire_len)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (pkt, wire_len);
            0
        }
    }

    /// The generated machine code.
    pub fn code(&self) -> &[u8] {
        #[cfg(target_arch = "x86_64")]
        {
            self.code.bytes()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            &[]
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn entry_point(code: &ExecBuf) -> Entry {
    // SAFETY: the buffer holds a complete function produced by `lower` for the System V
    // calling convention with exactly `Entry`'s parameters; it stays mapped (read-execute) for
    // as long as the `JitFilter` that owns both the buffer and this pointer lives.
    unsafe { std::mem::transmute::<*const u8, Entry>(code.entry()) }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline]
fn call(entry: Entry, pkt: &[u8], wire_len: u32) -> u32 {
    // SAFETY: the generated code reads at most `pkt.len()` bytes from `pkt.as_ptr()` (every
    // load is preceded by a comparison with the length passed in rsi), writes only its own
    // stack (a 64-byte frame, saved registers), restores every callee-saved register it
    // uses, and always returns (the program it was lowered from was validated: forward jumps
    // only, ending in ret).
    unsafe { entry(pkt.as_ptr(), pkt.len() as u64, wire_len) }
}

/// A filter that runs natively where it can and in the interpreter otherwise.
#[derive(Debug)]
pub enum Filter {
    /// Compiled to native code.
    Jit(JitFilter),
    /// Interpreted, with the reason the JIT was not used.
    Interp(Interpreter, JitError),
}

impl Filter {
    /// Compiles `prog` with the JIT, falling back to the interpreter with the reason.
    pub fn new(prog: &Validated) -> Filter {
        match JitFilter::compile(prog) {
            Ok(j) => Filter::Jit(j),
            Err(e) => Filter::Interp(Interpreter::new(prog), e),
        }
    }

    /// The interpreter, by choice.
    pub fn interpreter(prog: &Validated) -> Filter {
        Filter::Interp(Interpreter::new(prog), JitError::NotRequested)
    }

    /// The engine's name: `jit` or `interp`.
    pub fn engine_name(&self) -> &'static str {
        match self {
            Filter::Jit(_) => "jit",
            Filter::Interp(..) => "interp",
        }
    }

    /// Runs the filter.
    #[inline]
    pub fn run(&self, pkt: &[u8], wire_len: u32) -> u32 {
        match self {
            Filter::Jit(j) => j.run(pkt, wire_len),
            Filter::Interp(i, _) => i.run(pkt, wire_len),
        }
    }

    /// Runs the filter over many packets, writing one return value per packet into `out`
    /// (which is cleared first).
    pub fn run_batch<'a>(
        &self,
        packets: impl IntoIterator<Item = (&'a [u8], u32)>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        match self {
            Filter::Jit(j) => out.extend(packets.into_iter().map(|(p, w)| j.run(p, w))),
            Filter::Interp(i, _) => out.extend(packets.into_iter().map(|(p, w)| i.run(p, w))),
        }
    }

    /// Why the JIT is not in use, if it is not.
    pub fn fallback_reason(&self) -> Option<&JitError> {
        match self {
            Filter::Jit(_) => None,
            Filter::Interp(_, e) => Some(e),
        }
    }
}
