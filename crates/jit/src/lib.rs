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
//! * **Batches.** On the first [`JitFilter::run_batch`] the program is lowered a second time,
//!   into a batch function that loops over [`PacketRef`] descriptors in machine code, one
//!   native call per batch, keeping its loop state in three more registers (saved once per
//!   batch) and prefetching the packet some descriptors ahead ([`Prefetch`]). Lazily, because
//!   it doubles the compile time, which callers of [`JitFilter::run`] alone should not pay.
//! * **Memory** is never writable and executable at once (`sift_x86::exec`); turning it into
//!   function pointers and calling them are this crate's only `unsafe`.
//! * **Fallback.** [`Filter`] runs the JIT where it can and the interpreter elsewhere (other
//!   architectures, or a compile failure), keeping the reason.
//!
//! Only `lower`'s output is ever executed, and `lower` takes a [`Validated`] program: jumps
//! are in range, and forward unless the program loops (below), so the code always reaches a
//! `ret`; every packet access is preceded by a check against the captured length.
//!
//! * **Loops.** A program validated under `Mode::LibpcapLoops` may jump back (libpcap's
//!   `protochain` walk). Its frame then holds a budget word, set to
//!   [`sift_verify::LOOP_BUDGET`] on entry (for every packet of a batch); each backward `ja`
//!   subtracts its distance and ends the run with 0 on a borrow, exactly as the interpreter
//!   does, so every run still ends. Bounds checks hoisted across a loop assume nothing at its
//!   head.
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod lower;
#[cfg(target_arch = "x86_64")]
mod regs;

#[cfg(target_arch = "x86_64")]
use sift_x86::exec::ExecBuf;

use sift_verify::Validated;
use sift_vm::Interpreter;
pub use sift_vm::PacketRef;

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

/// How far ahead the batch function prefetches packet data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefetch {
    /// How many descriptors ahead of the current one (0: no prefetch).
    pub distance: u32,
    /// How many cache lines of that packet (at most 4): those holding the bytes the program's
    /// loads read, from the first (usually the EtherType at 12, not the packet's first byte)
    /// towards the last.
    pub lines: u8,
}

impl Prefetch {
    /// The distance and line count measured best on a 114 MB capture
    /// (`crates/jit/examples/batch_figures.rs`).
    pub const TUNED: Prefetch = Prefetch { distance: 24, lines: 2 };
}

/// The signature of generated code: `(packet, captured length, wire length) -> return value`.
#[cfg(target_arch = "x86_64")]
type Entry = unsafe extern "sysv64" fn(*const u8, u64, u32) -> u32;

/// The signature of the batch function: `(descriptors, count, results)`; it writes `count`
/// results.
#[cfg(target_arch = "x86_64")]
type BatchEntry = unsafe extern "sysv64" fn(*const PacketRef<'_>, u64, *mut u32);

/// A classic BPF program compiled to native code.
pub struct JitFilter {
    /// The single-packet function.
    #[cfg(target_arch = "x86_64")]
    code: ExecBuf,
    #[cfg(target_arch = "x86_64")]
    entry: Entry,
    /// The batch function, lowered on first use (it doubles the compile time, which users
    /// of [`JitFilter::run`] alone should not pay); `None` if that failed.
    #[cfg(target_arch = "x86_64")]
    batch: std::sync::OnceLock<Option<BatchCode>>,
    /// What the batch function is lowered from.
    #[cfg(target_arch = "x86_64")]
    source: Source,
}

/// What a program is lowered from: the program, the register assignment, the batch
/// function's prefetch, the loop budget.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Debug)]
struct Source {
    prog: Validated,
    regs: regs::Regs,
    prefetch: Prefetch,
    loop_budget: u32,
}

#[cfg(target_arch = "x86_64")]
impl Source {
    /// `prog` with the defaults: the default registers, the tuned prefetch, the loop budget.
    fn new(prog: &Validated) -> Source {
        Source {
            prog: prog.clone(),
            regs: regs::Regs::default(),
            prefetch: Prefetch::TUNED,
            loop_budget: sift_verify::LOOP_BUDGET,
        }
    }
}

/// The batch function and its entry.
#[cfg(target_arch = "x86_64")]
struct BatchCode {
    code: ExecBuf,
    entry: BatchEntry,
}

impl std::fmt::Debug for JitFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitFilter").field("code_size", &self.code().len()).finish()
    }
}

impl JitFilter {
    /// Compiles a validated program (any validator mode; semantics are libpcap's, loops
    /// bounded by [`sift_verify::LOOP_BUDGET`]).
    #[cfg(target_arch = "x86_64")]
    pub fn compile(prog: &Validated) -> Result<JitFilter, JitError> {
        JitFilter::compile_with(prog, &regs::Regs::default())
    }

    /// Compiles with a chosen prefetch distance for the batch function instead of the tuned
    /// one ([`Prefetch::TUNED`]): for measuring the distance.
    #[cfg(target_arch = "x86_64")]
    pub fn compile_with_prefetch(
        prog: &Validated,
        prefetch: Prefetch,
    ) -> Result<JitFilter, JitError> {
        JitFilter::compile_full(Source { prefetch, ..Source::new(prog) })
    }

    /// Compiles with another loop budget than [`sift_verify::LOOP_BUDGET`] (what a run's
    /// backward jumps may charge before it ends with 0), as
    /// `sift_vm::Interpreter::with_loop_budget` runs: tests and fuzzers bound loops tightly.
    #[cfg(target_arch = "x86_64")]
    pub fn compile_with_loop_budget(
        prog: &Validated,
        loop_budget: u32,
    ) -> Result<JitFilter, JitError> {
        JitFilter::compile_full(Source { loop_budget, ..Source::new(prog) })
    }

    /// Compiles with a chosen register assignment.
    #[cfg(target_arch = "x86_64")]
    fn compile_with(prog: &Validated, regs: &regs::Regs) -> Result<JitFilter, JitError> {
        JitFilter::compile_full(Source { regs: *regs, ..Source::new(prog) })
    }

    #[cfg(target_arch = "x86_64")]
    fn compile_full(source: Source) -> Result<JitFilter, JitError> {
        let Source { prog, regs, loop_budget, .. } = &source;
        let code =
            ExecBuf::new(&lower::lower(prog, regs, lower::Form::Single, *loop_budget)?.code)?;
        let Entries::Single(entry) = entry_point(&code, lower::Form::Single) else {
            // The single form always gives a single entry.
            return Err(JitError::Memory(std::io::Error::other("no single-packet entry")));
        };
        Ok(JitFilter { code, entry, batch: std::sync::OnceLock::new(), source })
    }

    /// The batch function, lowered and mapped on the first call.
    #[cfg(target_arch = "x86_64")]
    fn batch(&self) -> Option<&BatchCode> {
        let make = || {
            let Source { prog, regs, prefetch, loop_budget } = &self.source;
            let form = lower::Form::Batch(*prefetch);
            let lowered = lower::lower(prog, regs, form, *loop_budget).ok()?;
            let code = ExecBuf::new(&lowered.code).ok()?;
            match entry_point(&code, form) {
                Entries::Batch(entry) => Some(BatchCode { code, entry }),
                Entries::Single(_) => None,
            }
        };
        self.batch.get_or_init(make).as_ref()
    }

    /// Compiles a validated program: not available on this architecture.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn compile(_prog: &Validated) -> Result<JitFilter, JitError> {
        Err(JitError::UnsupportedArch(std::env::consts::ARCH))
    }

    /// Compiles a validated program: not available on this architecture.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn compile_with_loop_budget(
        _prog: &Validated,
        _loop_budget: u32,
    ) -> Result<JitFilter, JitError> {
        Err(JitError::UnsupportedArch(std::env::consts::ARCH))
    }

    /// Compiles a validated program: not available on this architecture.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn compile_with_prefetch(
        _prog: &Validated,
        _prefetch: Prefetch,
    ) -> Result<JitFilter, JitError> {
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

    /// Runs the filter over every packet of a batch, in one native call: `verdicts` is
    /// cleared and receives one value per packet, the value [`JitFilter::run`] gives for it;
    /// returns how many packets were accepted (non-zero values).
    ///
    /// The batch function is generated on the first call (as long again as
    /// [`JitFilter::compile`]); should that fail (no executable memory), batches run one
    /// packet at a time. Batches of a thousand packets or more keep the cost of starting
    /// the prefetch small.
    pub fn run_batch(&self, packets: &[PacketRef<'_>], verdicts: &mut Vec<u32>) -> usize {
        verdicts.clear();
        verdicts.resize(packets.len(), 0);
        #[cfg(target_arch = "x86_64")]
        match self.batch() {
            Some(b) => call_batch(b.entry, packets, verdicts),
            None => {
                for (v, p) in verdicts.iter_mut().zip(packets) {
                    *v = self.run(p.data(), p.wire_len());
                }
            }
        }
        verdicts.iter().filter(|&&v| v != 0).count()
    }

    /// The generated machine code of the single-packet function.
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

    /// The generated machine code of the batch function (generated now if it was not yet;
    /// empty if that failed).
    pub fn batch_code(&self) -> &[u8] {
        #[cfg(target_arch = "x86_64")]
        {
            self.batch().map_or(&[][..], |b| b.code.bytes())
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            &[]
        }
    }
}

/// The entry of a function in a code buffer, typed by its form.
#[cfg(target_arch = "x86_64")]
enum Entries {
    Single(Entry),
    Batch(BatchEntry),
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn entry_point(code: &ExecBuf, form: lower::Form) -> Entries {
    let start = code.entry();
    match form {
        lower::Form::Single => {
            // SAFETY: `code` holds exactly one complete function, produced by `lower` in the
            // form `form` for the System V calling convention: the single form takes exactly
            // `Entry`'s parameters. It stays mapped (read-execute) for as long as the
            // `JitFilter` that owns both the buffer and this pointer lives.
            let entry = unsafe { std::mem::transmute::<*const u8, Entry>(start) };
            Entries::Single(entry)
        }
        lower::Form::Batch(_) => {
            // SAFETY: as above; the batch form takes exactly `BatchEntry`'s parameters.
            let entry = unsafe { std::mem::transmute::<*const u8, BatchEntry>(start) };
            Entries::Batch(entry)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline]
fn call(entry: Entry, pkt: &[u8], wire_len: u32) -> u32 {
    // SAFETY: the generated code reads at most `pkt.len()` bytes from `pkt.as_ptr()` (every
    // load is preceded by a comparison with the length passed in rsi), writes only its own
    // stack (a 64-byte frame, saved registers), restores every callee-saved register it
    // uses, and always returns (the program it was lowered from was validated: forward jumps,
    // ending in ret, and backward ones only under `Mode::LibpcapLoops`, each charged against the
    // loop budget in its frame, which ends the run once spent).
    unsafe { entry(pkt.as_ptr(), pkt.len() as u64, wire_len) }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline]
fn call_batch(entry: BatchEntry, packets: &[PacketRef<'_>], verdicts: &mut [u32]) {
    let n = packets.len().min(verdicts.len());
    // SAFETY: the generated code reads the `n` descriptors at `packets.as_ptr()` (its
    // `PacketRef::SIZE` stride and field offsets are `PacketRef`'s own constants); from each it
    // reads at most the captured length of bytes at the packet's address, which `PacketRef`
    // keeps equal to the borrowed slice it was made from (private fields, set only by
    // `PacketRef::new`); its prefetches take addresses from those descriptors only and never
    // fault anyway. It writes exactly `n` `u32`s at `verdicts.as_mut_ptr()`, and otherwise
    // only its own stack; it restores every callee-saved register it uses and returns after
    // the last descriptor (each packet's run ends: validated programs jump forward, or back
    // against a loop budget reset for every packet).
    unsafe { entry(packets.as_ptr(), n as u64, verdicts.as_mut_ptr()) }
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

    /// Runs the filter over every packet of a batch: `verdicts` is cleared and receives one
    /// value per packet, the value [`Filter::run`] gives for it; returns how many packets
    /// were accepted (non-zero values). See [`JitFilter::run_batch`] and
    /// [`Interpreter::run_batch`].
    pub fn run_batch(&self, packets: &[PacketRef<'_>], verdicts: &mut Vec<u32>) -> usize {
        match self {
            Filter::Jit(j) => j.run_batch(packets, verdicts),
            Filter::Interp(i, _) => i.run_batch(packets, verdicts),
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
