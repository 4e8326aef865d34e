//! The run context compiled code reads through `r12`, and the Rust functions it calls.
//!
//! Compiled code keeps the VM's *virtual* addresses in eBPF registers and translates each
//! access with the region table here ([`RunCx::regions`]); what the inline checks cannot
//! place (another region, a map value, an address outside every region) goes to
//! [`rt_call`], which asks the run's [`Memory`] ([`Memory::locate`], the interpreter's own
//! lookup) and returns the host address or records the fault. Helper calls go through
//! [`helper_call`], which rebuilds the `&mut Memory` of the run, calls the VM's helper,
//! turns its outcome into `r0`, an exit, a tail call or a fault, and refreshes the region
//! table (a helper may move the packet window). Both are `extern "sysv64"` and never unwind
//! (a panicking helper aborts the process rather than unwinding through generated code).
//!
//! This module and [`crate::JitCode`]'s call of the code hold the crate's `unsafe`.

use std::mem::offset_of;

use sift_ebpf_vm::interp::Fault;
use sift_ebpf_vm::memory::{MEM_BASE, PACKET_BASE, STACK_PER_FRAME, STACK_SIZE};
use sift_ebpf_vm::{
    Args, HelperOutcome, Helpers, MAX_TAIL_CALL_CNT, Memory, Place, ProgKind, RawRegion, RawRegions,
};
use sift_ebpf_vm::{RunError, memory::MAX_FRAMES};

/// Region indexes of [`RunCx::regions`].
pub(crate) const STACK: usize = 0;
/// The input memory or context.
pub(crate) const MEM: usize = 1;
/// The packet window.
pub(crate) const PACKET: usize = 2;
/// The values of the map the last slow access reached (none until one does): accesses
/// through map value pointers check against it inline.
pub(crate) const MAP: usize = 3;

/// One region for the inline checks: an access of `1 << k` bytes at virtual `a` is inside
/// when `a - base < ok[k]` (unsigned), i.e. `ok[k] = len + 1 - size` (0 when it cannot fit);
/// `ok_write` is all zeros for a read-only region. `len` and `writable` (Rust only) tell a
/// refresh whether anything changed.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RegionCx {
    pub base: u64,
    pub host: u64,
    pub ok: [u64; 4],
    pub ok_write: [u64; 4],
    len: u64,
    writable: bool,
}

impl RegionCx {
    /// Takes `r`'s parts; the bounds are recomputed only when they changed (most runs see
    /// the same regions as the last one: the persistent stack, a reused buffer).
    #[inline]
    fn set(&mut self, r: &RawRegion) {
        let host = r.host as u64;
        if self.host == host
            && self.base == r.base
            && self.len == r.len as u64
            && self.writable == r.writable
        {
            return;
        }
        self.base = r.base;
        self.host = host;
        self.len = r.len as u64;
        self.writable = r.writable;
        for k in 0..4 {
            self.ok[k] = (r.len as u64 + 1).saturating_sub(1 << k);
            self.ok_write[k] = if r.writable { self.ok[k] } else { 0 };
        }
    }
}

/// The raw regions (and packet window start) the region table was last taken from: a run
/// whose regions are these needs no refresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seen {
    stack: u64,
    stack_len: u64,
    mem: u64,
    mem_len: u64,
    mem_writable: bool,
    packet: u64,
    packet_len: u64,
    packet_base: u64,
    meta: u64,
}

impl Seen {
    #[inline(always)]
    fn of(raw: &RawRegions, meta: usize) -> Seen {
        Seen {
            stack: raw.stack.host as u64,
            stack_len: raw.stack.len as u64,
            mem: raw.mem.host as u64,
            mem_len: raw.mem.len as u64,
            mem_writable: raw.mem.writable,
            packet: raw.packet.host as u64,
            packet_len: raw.packet.len as u64,
            packet_base: raw.packet.base,
            meta: meta as u64,
        }
    }
}

/// Indexes of [`RunCx::deltas`].
pub(crate) mod delta {
    /// The stack.
    pub const STACK: usize = 0;
    /// The context.
    pub const CTX: usize = 1;
    /// The packet window (`data_meta` to `data_end`).
    pub const PACKET: usize = 2;
    /// Map `i`'s values are at `MAPS + i`.
    pub const MAPS: usize = 3;
    /// Maps past this many keep checked accesses.
    pub const MAX_MAPS: usize = 29;
    /// Entries in all.
    pub const COUNT: usize = MAPS + MAX_MAPS;
}

/// What verified code assumes of a run, checked at its start (see the crate's soundness
/// argument): the entry point of the program type it was verified as, a context at least
/// the verifier's size, and the maps it was verified against.
#[derive(Debug)]
pub(crate) struct Verified {
    /// The VM's program type for the verified one.
    pub kind: ProgKind,
    /// The verifier's context size for it.
    pub ctx_len: usize,
    /// The maps verified accesses reach: index, and the spec's (type, key, value, entries).
    pub maps: Vec<(usize, MapShape)>,
}

/// The parts of a map's spec its values' layout depends on.
pub(crate) type MapShape = (sift_ebpf::MapType, u32, u32, u32);

/// The shape of a map's spec.
pub(crate) fn shape(s: &sift_ebpf::MapSpec) -> MapShape {
    (s.map_type, s.key_size, s.value_size, s.max_entries)
}

/// The fault of a run of verified code through an entry point it was not verified for.
const NOT_VERIFIED_FOR: &str =
    "verified code run with another program type, context or maps than it was verified for";

/// The fault of a run whose stack is not the VM's.
const BAD_STACK: &str = "the stack is not STACK_SIZE bytes";

/// What the run does after a call into Rust ([`RunCx::action`]).
pub(crate) mod action {
    /// Go on.
    pub const CONTINUE: u64 = 0;
    /// End the run with `r0` = [`RunCx::ret`](super::RunCx::ret).
    pub const EXIT: u64 = 1;
    /// Continue in the program whose body is at [`RunCx::tail_target`](super::RunCx::tail_target).
    pub const TAIL: u64 = 2;
    /// End the run with the fault in [`RunCx::fault`](super::RunCx::fault).
    pub const FAULT: u64 = 3;
    /// End the run with a fault the generated code raised ([`RunCx::asm_fault`](super::RunCx::asm_fault)).
    pub const ASM_FAULT: u64 = 4;
}

/// Faults the generated code raises itself ([`RunCx::asm_fault`]).
pub(crate) mod asm_fault {
    /// The budget ran out (a back edge or a call).
    pub const BUDGET: u64 = 1;
    /// A ninth frame.
    pub const CALL_DEPTH: u64 = 2;
}

/// The bits of the `info` argument of [`rt_call`]: bit 0 write, bits 1–2 the size's log2,
/// bit 3 a legacy packet load, bit 4 an atomic, bits 8 and up the instruction's slot.
pub(crate) mod info {
    /// A write.
    pub const WRITE: u32 = 1;
    /// A legacy packet load (else an access).
    pub const LEGACY: u32 = 8;
    /// An atomic read-modify-write: a read fault is reported before a write fault, as the
    /// interpreter loads before it stores.
    pub const ATOMIC: u32 = 16;
    /// The size's log2 is at bit 1.
    pub const SIZE_SHIFT: u32 = 1;
    /// The slot is at bit 8.
    pub const PC_SHIFT: u32 = 8;
}

/// The context of one run; `r12` points at it. The fields before `memory` are read and
/// written by the generated code at their `offset_of!` offsets.
#[repr(C)]
pub(crate) struct RunCx {
    pub regions: [RegionCx; 4],
    /// Host minus virtual address of the stack: `r10` = `rbp - stack_delta`.
    pub stack_delta: u64,
    /// The lowest frame pointer (host) that may still call: deeper is `CallDepth`.
    pub min_fp: u64,
    /// What is left of the budget (stored by the code when it calls into Rust and when it
    /// faults).
    pub budget_left: u64,
    /// The run's budget (the entry stub's start value of `r9`).
    pub budget: u64,
    /// `rsp` of the entry stub after its pushes (faults and exits unwind to it).
    pub saved_rsp: u64,
    pub action: u64,
    /// `r0` for [`action::EXIT`].
    pub ret: u64,
    /// The helper number (or `callx` target) of the current helper call.
    pub helper_target: u64,
    /// The slot of the current helper call, or of a fault the code raised.
    pub pc: u64,
    /// `r0` before the current helper call (a tail call that falls through keeps it).
    pub saved_r0: u64,
    /// The host address of the tail call's target program's body.
    pub tail_target: u64,
    pub asm_fault: u64,
    /// A counted loop's bound of iterations, while its entry check runs.
    pub loop_n: u64,
    /// A counted loop's counter at its entry, while its unchecked copy runs.
    pub loop_x: u64,
    pub rt_fn: u64,
    pub helper_fn: u64,
    /// Host minus virtual address of each region verified accesses reach
    /// ([`delta`]): `host = vaddr + deltas[r]`.
    pub deltas: [u64; delta::COUNT],
    // Rust only from here.
    // The run's `Memory`, `Helpers` and body table as addresses (set by `run`, used only
    // during it; as plain numbers they keep `JitCode` `Send` between runs).
    memory: usize,
    helpers: usize,
    fault: Option<RunError>,
    tail_calls: u32,
    bodies: usize,
    programs: usize,
    mem_is_packet: bool,
    r2: u64,
    meta: usize,
    /// The map in `regions[MAP]` (kept from run to run, re-taken at each run's start).
    map: Option<usize>,
    /// What the region table was taken from.
    seen: Seen,
    /// What verified code needs of each run (none for checked code).
    pub(crate) verified: Option<Verified>,
    /// The host address of the stack's top (frame 0's `rbp`).
    top: u64,
}

/// Field offsets for the generated code.
pub(crate) mod off {
    use super::*;
    /// Region `r`'s field.
    pub const fn region(r: usize) -> i32 {
        (offset_of!(RunCx, regions) + r * size_of::<RegionCx>()) as i32
    }
    pub const BASE: i32 = offset_of!(RegionCx, base) as i32;
    pub const HOST: i32 = offset_of!(RegionCx, host) as i32;
    pub const OK: i32 = offset_of!(RegionCx, ok) as i32;
    pub const OK_WRITE: i32 = offset_of!(RegionCx, ok_write) as i32;
    pub const STACK_DELTA: i32 = offset_of!(RunCx, stack_delta) as i32;
    pub const MIN_FP: i32 = offset_of!(RunCx, min_fp) as i32;
    pub const BUDGET: i32 = offset_of!(RunCx, budget_left) as i32;
    pub const BUDGET_START: i32 = offset_of!(RunCx, budget) as i32;
    pub const SAVED_RSP: i32 = offset_of!(RunCx, saved_rsp) as i32;
    pub const ACTION: i32 = offset_of!(RunCx, action) as i32;
    pub const RET: i32 = offset_of!(RunCx, ret) as i32;
    pub const HELPER_TARGET: i32 = offset_of!(RunCx, helper_target) as i32;
    pub const PC: i32 = offset_of!(RunCx, pc) as i32;
    pub const SAVED_R0: i32 = offset_of!(RunCx, saved_r0) as i32;
    pub const TAIL_TARGET: i32 = offset_of!(RunCx, tail_target) as i32;
    pub const ASM_FAULT: i32 = offset_of!(RunCx, asm_fault) as i32;
    pub const LOOP_N: i32 = offset_of!(RunCx, loop_n) as i32;
    pub const LOOP_X: i32 = offset_of!(RunCx, loop_x) as i32;
    pub const RT_FN: i32 = offset_of!(RunCx, rt_fn) as i32;
    pub const HELPER_FN: i32 = offset_of!(RunCx, helper_fn) as i32;
    /// Delta `d`'s field.
    pub const fn delta(d: usize) -> i32 {
        (offset_of!(RunCx, deltas) + d * 8) as i32
    }
}

/// The entry stub: `(run context, r1, r2, host frame top)`, the budget in the context
/// ([`RunCx::budget`]). At `exit` it returns `r0` and what is left of the budget; after a
/// fault or a helper's exit the outcome is in the context ([`RunCx::action`]).
pub(crate) type EntryFn = unsafe extern "sysv64" fn(*mut RunCx, u64, u64, u64) -> Exit;

/// What the entry stub returns (in `rax` and `rdx`).
#[repr(C)]
pub(crate) struct Exit {
    r0: u64,
    left: u64,
}

impl RunCx {
    /// A context for runs of the compiled code whose program bodies are at `bodies` (host
    /// addresses, tail-call targets: the slice must outlive the context); [`run`] sets what
    /// each run reads.
    pub(crate) fn new(bodies: &[u64]) -> RunCx {
        RunCx {
            regions: [RegionCx::default(); 4],
            stack_delta: 0,
            min_fp: 0,
            budget_left: 0,
            budget: 0,
            saved_rsp: 0,
            action: action::CONTINUE,
            ret: 0,
            helper_target: 0,
            pc: 0,
            saved_r0: 0,
            tail_target: 0,
            asm_fault: 0,
            loop_n: 0,
            loop_x: 0,
            rt_fn: rt_call as *const () as u64,
            helper_fn: helper_call as *const () as u64,
            memory: 0,
            helpers: 0,
            fault: None,
            tail_calls: 0,
            bodies: bodies.as_ptr() as usize,
            programs: bodies.len(),
            mem_is_packet: false,
            r2: 0,
            meta: 0,
            map: None,
            seen: Seen::default(),
            top: 0,
            deltas: [0; delta::COUNT],
            verified: None,
        }
    }

    /// Takes the regions of `mem` (at a run's start and after each helper call). When they
    /// are those of the last refresh (the persistent stack, a reused buffer: most runs) and
    /// no map region is cached, this is one comparison; otherwise [`RunCx::retake`].
    /// `false` when the stack is not the VM's (`STACK_SIZE` bytes).
    #[inline(always)]
    fn refresh(&mut self, mem: &mut Memory<'_>) -> bool {
        self.unchanged(mem) || self.retake(mem)
    }

    /// Whether the region table is that of `mem` as it is (no map region cached, which a
    /// run re-takes).
    #[inline(always)]
    fn unchanged(&self, mem: &mut Memory<'_>) -> bool {
        let raw = mem.raw_regions();
        Seen::of(&raw, mem.packet_bounds().meta) == self.seen && self.map.is_none()
    }

    /// [`RunCx::refresh`] when something changed: only what changed is recomputed (the
    /// frame bounds only when the stack moved).
    #[inline(never)]
    fn retake(&mut self, mem: &mut Memory<'_>) -> bool {
        let raw = &mem.raw_regions();
        let seen = Seen::of(raw, mem.packet_bounds().meta);
        if raw.stack.host as u64 != self.regions[STACK].host
            || raw.stack.len as u64 != self.regions[STACK].len
        {
            if raw.stack.len != STACK_SIZE {
                return false;
            }
            self.regions[STACK].set(&raw.stack);
            let stack = &self.regions[STACK];
            self.stack_delta = stack.host.wrapping_sub(stack.base);
            self.top = stack.host + STACK_SIZE as u64;
            self.deltas[delta::STACK] = self.stack_delta;
            self.min_fp = self.top - (STACK_PER_FRAME * (MAX_FRAMES - 2)) as u64;
        }
        self.regions[MEM].set(&raw.mem);
        self.regions[PACKET].set(&raw.packet);
        self.deltas[delta::CTX] = self.regions[MEM].host.wrapping_sub(MEM_BASE);
        let p = &self.regions[PACKET];
        self.deltas[delta::PACKET] = p.host.wrapping_sub(p.base);
        self.meta = seen.meta as usize;
        self.seen = seen;
        if let Some(i) = self.map {
            match mem.raw_map(i) {
                Some(m) => self.regions[MAP].set(&m),
                None => {
                    self.regions[MAP] = RegionCx::default();
                    self.map = None;
                }
            }
        }
        true
    }

    /// The checks of a run's start that [`run`] makes only when one may fail: the set of
    /// programs, the stack (a refresh), and what verified code assumes of a run (see
    /// [`Verified`]), with the deltas of the maps it reaches.
    #[cold]
    fn check_start(
        &mut self,
        memory: &mut Memory<'_>,
        cx: &sift_ebpf_vm::ExecCx,
    ) -> Result<(), RunError> {
        if cx.programs != self.programs {
            let e = Fault::Internal("compiled code is for another set of programs");
            return Err(RunError { pc: 0, fault: e });
        }
        if !self.refresh(memory) {
            return Err(RunError { pc: 0, fault: Fault::Internal(BAD_STACK) });
        }
        let Some(v) = &self.verified else { return Ok(()) };
        let mut ok = cx.kind == v.kind && self.regions[MEM].len >= v.ctx_len as u64;
        for &(i, shape_then) in &v.maps {
            ok &= memory.maps().get(i).is_some_and(|m| shape(m.spec()) == shape_then);
            if let Some(m) = memory.raw_map(i) {
                self.deltas[delta::MAPS + i] = (m.host as u64).wrapping_sub(m.base);
            }
        }
        if ok { Ok(()) } else { Err(RunError { pc: 0, fault: Fault::Internal(NOT_VERIFIED_FOR) }) }
    }

    /// The result of a run that did not end in the code's own `exit`: a helper's exit or
    /// a fault (the budget used from what the code left in the context).
    #[cold]
    fn outcome(&mut self, executed: &mut u64) -> Result<u64, RunError> {
        let (left, budget) = (self.budget_left, self.budget);
        *executed = if left > budget { budget } else { budget - left };
        let action = std::mem::replace(&mut self.action, action::CONTINUE);
        match action {
            action::EXIT => Ok(self.ret),
            action::ASM_FAULT => {
                let fault = match self.asm_fault {
                    asm_fault::BUDGET => Fault::Budget(budget),
                    asm_fault::CALL_DEPTH => Fault::CallDepth,
                    _ => Fault::Internal("unknown fault from compiled code"),
                };
                Err(RunError { pc: self.pc as usize, fault })
            }
            _ => Err(self.fault.take().unwrap_or(RunError {
                pc: 0,
                fault: Fault::Internal("compiled code stopped without a fault"),
            })),
        }
    }

    fn fail(&mut self, pc: usize, fault: Fault) -> u64 {
        self.fault = Some(RunError { pc, fault });
        self.action = action::FAULT;
        0
    }
}

/// Runs compiled code: `entry` is the entry stub of the code `run` was made for. Returns
/// the result; the budget used goes to `executed`.
///
/// The set-up is a handful of stores: the context is kept from run to run, the program
/// bodies were set at compile time, and the region table is refreshed only where a region
/// changed.
#[inline]
pub(crate) fn run(
    entry: EntryFn,
    run: &mut RunCx,
    memory: &mut Memory<'_>,
    helpers: &mut Helpers,
    cx: &sift_ebpf_vm::ExecCx,
    executed: &mut u64,
) -> Result<u64, RunError> {
    if cx.programs != run.programs || !run.unchanged(memory) || run.verified.is_some() {
        return run_checked(entry, run, memory, helpers, cx, executed);
    }
    go(entry, run, memory, helpers, cx, executed)
}

/// [`run`] with the checks of a run's start that rarely apply (another set of programs,
/// regions that moved, a map region, verified code): out of line, so that the common run
/// makes no call but the code's.
#[cold]
#[inline(never)]
fn run_checked(
    entry: EntryFn,
    run: &mut RunCx,
    memory: &mut Memory<'_>,
    helpers: &mut Helpers,
    cx: &sift_ebpf_vm::ExecCx,
    executed: &mut u64,
) -> Result<u64, RunError> {
    if let Err(e) = run.check_start(memory, cx) {
        *executed = 0;
        return Err(e);
    }
    go(entry, run, memory, helpers, cx, executed)
}

/// Stores `v` in `field` unless it is there already.
#[inline(always)]
fn set<T: PartialEq>(field: &mut T, v: T) {
    if *field != v {
        *field = v;
    }
}

/// Calls the code of a run whose start was checked.
#[inline(always)]
fn go(
    entry: EntryFn,
    run: &mut RunCx,
    memory: &mut Memory<'_>,
    helpers: &mut Helpers,
    cx: &sift_ebpf_vm::ExecCx,
    executed: &mut u64,
) -> Result<u64, RunError> {
    // Read only now: nothing of the run's arguments is kept across the calls above.
    let sift_ebpf_vm::ExecCx { r1, r2, mem_is_packet, budget, .. } = *cx;
    // What a run reads of the context, stored only where it changed: from one run to the
    // next most of it stays (a run's fixed cost is mostly stores). `action` is CONTINUE
    // between runs (`RunCx::outcome` resets it).
    set(&mut run.tail_calls, 0);
    set(&mut run.helpers, helpers as *mut Helpers as usize);
    set(&mut run.mem_is_packet, mem_is_packet);
    set(&mut run.r2, r2);
    set(&mut run.memory, memory as *mut Memory<'_> as usize);
    set(&mut run.budget, budget);
    let top = run.top;
    // SAFETY: `entry` is the entry stub of code made by `lower` for exactly these programs
    // (`programs` is the number of bodies `run` was made with), which follows the System V
    // ABI: it saves and restores every callee-saved register, keeps `rsp` 16-byte aligned at
    // its calls, and returns to this frame on `exit`, on a fault and on a helper's exit
    // (unwinding through `saved_rsp`). It reads and writes memory only inside the regions
    // `run.regions` and the helper calls describe (every access is checked against them or
    // provably in the current stack frame), `run` and its own native stack (at
    // most 8 frames of 48 bytes and two calls into Rust). The regions are those of `memory`
    // (just refreshed), which is not used otherwise until the call returns: the Rust
    // functions the code calls reach it only through `run.memory`, one at a time, and
    // refresh the table after a helper used it.
    let exit = unsafe { entry(run, r1, r2, top) };
    if run.action == action::CONTINUE {
        // No charge borrowed: what is left is at most the budget.
        *executed = budget - exit.left;
        return Ok(exit.r0);
    }
    run.outcome(executed)
}

/// Memory accesses the inline checks did not place, and legacy packet loads: `arg` is the
/// virtual address (an access) or the offset (a legacy load), `bits` the [`info`] bits.
/// Returns the host address (an access) or the loaded value (a legacy load); on a fault or an
/// exit it sets [`RunCx::action`] and the code unwinds.
pub(crate) extern "sysv64" fn rt_call(cx: *mut RunCx, arg: u64, bits: u64) -> u64 {
    // SAFETY: the generated code passes `r12`, the `RunCx` that `run` set up for this run and
    // that outlives it; no other reference to it is live while the code is inside this call.
    let cx = unsafe { &mut *cx };
    // SAFETY: `cx.memory` is the run's `Memory`, which nothing else uses during the run
    // (see `run`); only a shared reference is made here.
    let mem = unsafe { &*(cx.memory as *const Memory<'_>) };
    let bits = bits as u32;
    let pc = (bits >> info::PC_SHIFT) as usize;
    let size = 1usize << ((bits >> info::SIZE_SHIFT) & 3);
    if bits & info::LEGACY != 0 {
        let (base, len) = if cx.mem_is_packet {
            (MEM_BASE, cx.r2)
        } else {
            (PACKET_BASE, mem.packet().len() as u64)
        };
        if len == 0 && cx.mem_is_packet {
            return cx.fail(pc, Fault::NoPacket);
        }
        let off = arg as i64;
        if off < 0 || off as u64 + size as u64 > len {
            cx.action = action::EXIT;
            cx.ret = 0;
            return 0;
        }
        return match mem.load(base + off as u64, size) {
            Ok(v) => match size {
                4 => u64::from((v as u32).swap_bytes()),
                2 => u64::from((v as u16).swap_bytes()),
                _ => v,
            },
            Err(e) => cx.fail(pc, Fault::OutOfBounds(e)),
        };
    }
    let write = bits & info::WRITE != 0;
    if bits & info::ATOMIC != 0
        && let Err(e) = mem.locate(arg, size, false)
    {
        return cx.fail(pc, Fault::OutOfBounds(e));
    }
    match mem.locate(arg, size, write) {
        Ok(Place::Stack(o)) => cx.regions[STACK].host + o as u64,
        Ok(Place::Mem(o)) => cx.regions[MEM].host + o as u64,
        Ok(Place::Packet(o)) => cx.regions[PACKET].host + (o - cx.meta) as u64,
        Ok(Place::Map(i, o)) => {
            // SAFETY: as above; the shared reference `mem` is not used past this point, and
            // this exclusive one only takes map `i`'s buffer (the other regions' host
            // pointers stay as they are).
            let mem = unsafe { &mut *(cx.memory as *mut Memory<'_>) };
            match mem.raw_map(i) {
                Some(m) => {
                    cx.regions[MAP].set(&m);
                    cx.map = Some(i);
                    m.host as u64 + o as u64
                }
                None => cx.fail(pc, Fault::Internal("a located map that is not there")),
            }
        }
        Err(e) => cx.fail(pc, Fault::OutOfBounds(e)),
    }
}

/// A helper call (or `callx`): `r1`–`r5` as arguments, the target and slot in the context.
/// Returns `r0`; an exit, a tail call or a fault is left in [`RunCx::action`].
pub(crate) extern "sysv64" fn helper_call(
    r1: u64,
    r2: u64,
    r3: u64,
    r4: u64,
    r5: u64,
    cx: *mut RunCx,
) -> u64 {
    // SAFETY: as in `rt_call`.
    let cx = unsafe { &mut *cx };
    let (target, pc) = (cx.helper_target, cx.pc as usize);
    // SAFETY: `cx.helpers` is the run's `Helpers`, borrowed exclusively for the run by `run`
    // and used by nothing else while the code runs.
    let helpers = unsafe { &mut *(cx.helpers as *mut Helpers) };
    // SAFETY: `cx.memory` is the run's `Memory` (see `run`): no other reference to it is live
    // during this call; the region table is refreshed from it before returning.
    let mem = unsafe { &mut *(cx.memory as *mut Memory<'_>) };
    let id = match u32::try_from(target) {
        Ok(id) if helpers.has(id) => id,
        _ => return cx.fail(pc, Fault::CallxTarget(target)),
    };
    let outcome = helpers.call(id, mem, Args([r1, r2, r3, r4, r5]));
    if !cx.refresh(mem) {
        return cx.fail(pc, Fault::Internal(BAD_STACK));
    }
    match outcome {
        None => cx.fail(pc, Fault::CallxTarget(target)),
        Some(Ok(HelperOutcome::Return(v))) => v,
        Some(Ok(HelperOutcome::Exit(v))) => {
            cx.action = action::EXIT;
            cx.ret = v;
            0
        }
        Some(Ok(HelperOutcome::TailCall(k))) => {
            if (k as usize) < cx.programs && cx.tail_calls < MAX_TAIL_CALL_CNT {
                cx.tail_calls += 1;
                cx.action = action::TAIL;
                // SAFETY: `bodies` points at `programs` addresses (checked in `run`), and
                // `k < programs`.
                cx.tail_target = unsafe { *(cx.bodies as *const u64).add(k as usize) };
            }
            cx.saved_r0
        }
        Some(Err(message)) => {
            let name = helpers.name(id).unwrap_or("?");
            cx.fail(pc, Fault::Helper { id, name, message })
        }
    }
}
