//! The interpreter: a loop over the loaded slots dispatching on the opcode byte (as the
//! kernel's `___bpf_prog_run` does), with the kernel's results where C would be undefined
//! (division and modulo by zero, `MIN / -1`, shift counts masked to the width), 32-bit
//! operations zero-extending, bpf-to-bpf calls in frames of their own, helpers from the
//! embedder's table, checked memory, and an instruction budget so that no run hangs.

use sift_ebpf::EbpfInsn;
use thiserror::Error;

use crate::context::{SkbInfo, XdpPacket, sk_buff};
use crate::engine::{Compiled, ExecCx};
use crate::env::{ProgKind, VmEnv};
use crate::helpers::{Args, HelperOutcome, Helpers};
use crate::maps::{MAP_BASE, MAP_HANDLE_BASE, Map};
use crate::memory::{
    MAX_FRAMES, MEM_BASE, Memory, OutOfBounds, PACKET_BASE, PacketBounds, STACK_BASE,
    STACK_PER_FRAME, STACK_SIZE,
};
use crate::program::{LoadError, Program};

/// Instructions a run may execute unless [`Vm::set_budget`] says otherwise.
pub const DEFAULT_BUDGET: u64 = 10_000_000;

/// Tail calls one run may make (the kernel's `MAX_TAIL_CALL_CNT`); the next falls through.
pub const MAX_TAIL_CALL_CNT: u32 = 33;

/// Why a run stopped without `exit`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Fault {
    /// A load or store outside every region.
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
    /// The instruction budget ran out.
    #[error("instruction budget of {0} exhausted")]
    Budget(u64),
    /// A ninth nested call.
    #[error("call depth exceeds {MAX_FRAMES} frames")]
    CallDepth,
    /// `callx` to a value that is no helper.
    #[error("callx to {0:#x}, which is no helper")]
    CallxTarget(u64),
    /// A helper refused its arguments.
    #[error("helper {id} ({name}): {message}")]
    Helper {
        /// The helper's number.
        id: u32,
        /// Its name.
        name: &'static str,
        /// What it said.
        message: String,
    },
    /// A legacy packet load in a run without a packet or input memory.
    #[error("legacy packet load without a packet")]
    NoPacket,
    /// A state the load checks exclude (a bug in this crate, reported rather than panicking).
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// A located run-time fault.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("instruction {pc}: {fault}")]
pub struct RunError {
    /// The slot index of the faulting instruction.
    pub pc: usize,
    /// What happened.
    pub fault: Fault,
}

/// A caller's state saved across a bpf-to-bpf call (with the program it returns into: a
/// tail call in the callee replaces only the callee's program).
#[derive(Clone, Copy)]
struct Frame<'p> {
    slots: &'p [EbpfInsn],
    ret: usize,
    saved: [u64; 4],
    fp: u64,
}

/// A loaded program with its helpers, ready to run.
///
/// Split in two so that a run's set-up moves nothing: the run state the [`Memory`] of a run
/// borrows (stack, maps, the helpers' world) sits beside the engine that runs it
/// (programs, helpers, compiled code, budget), and both are borrowed at once.
#[derive(Debug)]
pub struct Vm {
    engine: Engine,
    maps: Vec<Map>,
    env: VmEnv,
    /// The stack of every frame ([`STACK_SIZE`] bytes), kept from run to run: zeroed once,
    /// not before each run (as in the kernel, whose programs find their stack as the last user
    /// left it; a program the verifier accepts never reads stack it did not write), which
    /// keeps a run's fixed cost to a few nanoseconds. Its buffer never moves (compiled code
    /// relies on that to keep its host address from run to run).
    stack: Vec<u8>,
}

/// What runs a prepared run: the programs, helpers, budget and compiled code.
#[derive(Debug)]
struct Engine {
    program: Program,
    helpers: Helpers,
    budget: u64,
    executed: u64,
    /// Tail call targets: program `k + 1` (0 is the VM's own program).
    programs: Vec<Program>,
    /// Compiled code that runs in place of the interpreter ([`Vm::set_compiled`]).
    compiled: CompiledSlot,
}

/// The installed compiled code, if any (a newtype so that `Vm` stays `Debug`).
#[derive(Default)]
struct CompiledSlot(Option<Box<dyn Compiled>>);

impl std::fmt::Debug for CompiledSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(<compiled>)" } else { "None" })
    }
}

#[inline(always)]
fn udiv64(a: u64, b: u64) -> u64 {
    a.checked_div(b).unwrap_or(0)
}
#[inline(always)]
fn umod64(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { a % b }
}
#[inline(always)]
fn sdiv64(a: u64, b: u64) -> u64 {
    if b == 0 { 0 } else { (a as i64).wrapping_div(b as i64) as u64 }
}
#[inline(always)]
fn smod64(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { (a as i64).wrapping_rem(b as i64) as u64 }
}
#[inline(always)]
fn udiv32(a: u64, b: u64) -> u64 {
    u64::from((a as u32).checked_div(b as u32).unwrap_or(0))
}
#[inline(always)]
fn umod32(a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    u64::from(if b == 0 { a } else { a % b })
}
#[inline(always)]
fn sdiv32(a: u64, b: u64) -> u64 {
    let (a, b) = (a as i32, b as i32);
    u64::from(if b == 0 { 0 } else { a.wrapping_div(b) as u32 })
}
#[inline(always)]
fn smod32(a: u64, b: u64) -> u64 {
    let (a, b) = (a as i32, b as i32);
    u64::from(if b == 0 { a as u32 } else { a.wrapping_rem(b) as u32 })
}
#[inline(always)]
fn sext(v: u64, bits: i16) -> u64 {
    match bits {
        8 => v as i8 as i64 as u64,
        16 => v as i16 as i64 as u64,
        32 => v as i32 as i64 as u64,
        _ => v,
    }
}

impl Vm {
    /// A VM for an already loaded program. The program must have been loaded against these
    /// helpers (see [`Vm::load`]).
    pub fn new(program: Program, helpers: Helpers) -> Vm {
        Vm::assemble(program, helpers, Vec::new())
    }

    /// Loads slots against `helpers` and `maps` (see [`Program::load_with_maps`]); add the map
    /// helpers with [`register_map_helpers`](crate::maps::register_map_helpers).
    pub fn load_with_maps(
        slots: &[EbpfInsn],
        helpers: Helpers,
        maps: Vec<Map>,
    ) -> Result<Vm, LoadError> {
        let defs: Vec<_> = maps.iter().map(Map::def).collect();
        let program = Program::load_with_maps(slots, |id| helpers.has(id), &defs)?;
        Ok(Vm::assemble(program, helpers, maps))
    }

    fn assemble(program: Program, helpers: Helpers, maps: Vec<Map>) -> Vm {
        Vm {
            engine: Engine {
                program,
                helpers,
                budget: DEFAULT_BUDGET,
                executed: 0,
                programs: Vec::new(),
                compiled: CompiledSlot(None),
            },
            maps,
            env: VmEnv::default(),
            stack: vec![0; STACK_SIZE],
        }
    }

    /// Loads another program against this VM's helpers and maps, as a tail call target: its
    /// index for prog arrays (the VM's own program is 0, added ones 1, 2, …).
    ///
    /// Compiled code installed with [`Vm::set_compiled`] is dropped (it does not have the new
    /// program): runs go back to the interpreter until code for every program is installed.
    pub fn add_program(&mut self, slots: &[EbpfInsn]) -> Result<u32, LoadError> {
        let defs: Vec<_> = self.maps.iter().map(Map::def).collect();
        let helpers = &self.engine.helpers;
        let p = Program::load_with_maps(slots, |id| helpers.has(id), &defs)?;
        self.engine.programs.push(p);
        self.engine.compiled.0 = None;
        Ok(self.engine.programs.len() as u32)
    }

    /// Every program's slots: the VM's own (0), then the tail-call targets added with
    /// [`Vm::add_program`] (1, 2, …), the numbering of `HelperOutcome::TailCall`.
    pub fn program_slots(&self) -> impl Iterator<Item = &[EbpfInsn]> {
        std::iter::once(&self.engine.program).chain(&self.engine.programs).map(Program::slots)
    }

    /// Every program (as [`Vm::program_slots`]).
    pub fn programs(&self) -> impl Iterator<Item = &Program> {
        std::iter::once(&self.engine.program).chain(&self.engine.programs)
    }

    /// Installs compiled code for every program (see [`crate::engine`]): every run entry
    /// point runs it instead of the interpreter; `None` goes back to the interpreter.
    pub fn set_compiled(&mut self, code: Option<Box<dyn Compiled>>) {
        self.engine.compiled.0 = code;
    }

    /// Whether compiled code is installed.
    pub fn is_compiled(&self) -> bool {
        self.engine.compiled.0.is_some()
    }

    /// The budget a run may use ([`Vm::set_budget`]).
    pub fn budget(&self) -> u64 {
        self.engine.budget
    }

    /// The helpers' world: clock, random seed, virtual CPU, trace output, redirect target.
    pub fn env(&self) -> &VmEnv {
        &self.env
    }

    /// The helpers' world, writable (set the clock or the CPU before a run).
    pub fn env_mut(&mut self) -> &mut VmEnv {
        &mut self.env
    }

    /// The maps (they keep their contents from run to run).
    pub fn maps(&self) -> &[Map] {
        &self.maps
    }

    /// The maps, writable (to fill them before a run).
    pub fn maps_mut(&mut self) -> &mut [Map] {
        &mut self.maps
    }

    /// Loads slots against `helpers` and makes a VM.
    pub fn load(slots: &[EbpfInsn], helpers: Helpers) -> Result<Vm, LoadError> {
        let program = Program::load(slots, |id| helpers.has(id))?;
        Ok(Vm::new(program, helpers))
    }

    /// Loads a byte image (8 bytes a slot) against `helpers`.
    pub fn from_bytes(bytes: &[u8], helpers: Helpers) -> Result<Vm, LoadError> {
        let program = Program::from_bytes(bytes, |id| helpers.has(id))?;
        Ok(Vm::new(program, helpers))
    }

    /// The loaded program.
    pub fn program(&self) -> &Program {
        &self.engine.program
    }

    /// Sets the most instructions one run may execute.
    pub fn set_budget(&mut self, budget: u64) {
        self.engine.budget = budget;
    }

    /// Instructions the last run executed (under compiled code: the budget the run used, in
    /// the compiled code's own measure).
    pub fn executed(&self) -> u64 {
        self.engine.executed
    }

    /// Runs with `mem` as the input memory, the conformance suite's convention: `r1` points at
    /// it and `r2` holds its length (both 0 when it is empty). Legacy packet loads read it.
    pub fn run(&mut self, mem: &mut [u8]) -> Result<u64, RunError> {
        let (r1, r2) = if mem.is_empty() { (0, 0) } else { (MEM_BASE, mem.len() as u64) };
        // The memory borrows the run state while the engine runs: nothing moves.
        let env = &mut self.env;
        env.kind = ProgKind::Other;
        env.redirect = None;
        let mut memory =
            Memory::new(&mut self.stack, mem, true, &mut [], &mut self.maps).with_env(env);
        self.engine.exec(&mut memory, r1, r2, true, ProgKind::Other)
    }

    /// Runs with `ctx` as the context (`r1`, read-only) and `packet` as the packet that
    /// legacy packet loads read and that the context's pointers may point into
    /// ([`PACKET_BASE`]).
    pub fn run_with_packet(&mut self, ctx: &mut [u8], packet: &mut [u8]) -> Result<u64, RunError> {
        let end = packet.len();
        self.run_ctx(ctx, false, packet, PacketBounds { meta: 0, data: 0, end }, ProgKind::Other).0
    }

    /// One run over a context and a packet window of a frame; the bounds as the run left
    /// them.
    fn run_ctx(
        &mut self,
        ctx: &mut [u8],
        ctx_writable: bool,
        frame: &mut [u8],
        bounds: PacketBounds,
        kind: ProgKind,
    ) -> (Result<u64, RunError>, PacketBounds) {
        let env = &mut self.env;
        env.kind = kind;
        env.redirect = None;
        let mut memory = Memory::new(&mut self.stack, ctx, ctx_writable, frame, &mut self.maps)
            .with_frame(bounds)
            .with_env(env);
        let r = self.engine.exec(&mut memory, MEM_BASE, 0, false, kind);
        (r, memory.packet_bounds())
    }

    /// Runs as an XDP program on `packet` (read and written in place), `r1` the packet's
    /// `xdp_md`; returns the verdict ([`context::xdp`](crate::context::xdp)). A program
    /// that moves the packet's bounds (`bpf_xdp_adjust_head/meta/tail`) needs
    /// [`Vm::run_xdp_packet`] to see the result; here the bytes of the final packet that fit
    /// are copied back.
    pub fn run_xdp(&mut self, packet: &mut [u8], ingress_ifindex: u32) -> Result<u64, RunError> {
        let mut p = XdpPacket::new(packet);
        let r = self.run_xdp_packet(&mut p, ingress_ifindex, 0);
        let out = p.data();
        let n = out.len().min(packet.len());
        packet[..n].copy_from_slice(&out[..n]);
        r
    }

    /// Runs as an XDP program on `packet` in its frame, `r1` its `xdp_md`; afterwards
    /// `packet` is as the program left it. Returns the verdict; a redirect's target is in
    /// [`VmEnv::redirect`].
    pub fn run_xdp_packet(
        &mut self,
        packet: &mut XdpPacket,
        ingress_ifindex: u32,
        rx_queue_index: u32,
    ) -> Result<u64, RunError> {
        let mut md = packet.md(ingress_ifindex, rx_queue_index);
        let (r, bounds) =
            self.run_ctx(&mut md, false, &mut packet.frame, packet.bounds, ProgKind::Xdp);
        packet.bounds = bounds;
        r
    }

    /// Runs as a TC classifier (`SCHED_CLS`) on `packet` (an Ethernet frame, written in
    /// place), `r1` its `__sk_buff` ([`sk_buff`]) with direct packet access; returns the
    /// result (`TC_ACT_*`, [`context::tc`](crate::context::tc)).
    pub fn run_tc(&mut self, packet: &mut [u8], info: &SkbInfo) -> Result<u64, RunError> {
        let mut ctx = sk_buff(packet, info, true);
        let end = packet.len();
        let b = PacketBounds { meta: 0, data: 0, end };
        self.run_ctx(&mut ctx, true, packet, b, ProgKind::Tc).0
    }

    /// Runs as a socket filter on `packet`, `r1` its `__sk_buff` without direct packet
    /// access (`data`/`data_end` 0; legacy packet loads and `bpf_skb_load_bytes` read it);
    /// returns the bytes to keep (0 drops the packet; more than its length keeps it all).
    pub fn run_socket_filter(
        &mut self,
        packet: &mut [u8],
        info: &SkbInfo,
    ) -> Result<u64, RunError> {
        let mut ctx = sk_buff(packet, info, false);
        let end = packet.len();
        let b = PacketBounds { meta: 0, data: 0, end };
        self.run_ctx(&mut ctx, true, packet, b, ProgKind::SocketFilter).0
    }
}

impl Engine {
    /// Runs on the compiled code if there is one, else on the interpreter. Inlined into the
    /// entry points, so that a compiled run makes no call but the compiled code's own (the
    /// interpreter, with its large frame, is a call of its own).
    #[inline(always)]
    fn exec(
        &mut self,
        mem: &mut Memory<'_>,
        r1: u64,
        r2: u64,
        mem_is_packet: bool,
        kind: ProgKind,
    ) -> Result<u64, RunError> {
        if let Some(code) = self.compiled.0.as_mut() {
            let cx = ExecCx {
                r1,
                r2,
                mem_is_packet,
                kind,
                budget: self.budget,
                programs: 1 + self.programs.len(),
            };
            return code.exec(mem, &mut self.helpers, &cx, &mut self.executed);
        }
        self.interpret(mem, r1, r2, mem_is_packet)
    }

    #[inline(never)]
    fn interpret(
        &mut self,
        mem: &mut Memory<'_>,
        r1: u64,
        r2: u64,
        mem_is_packet: bool,
    ) -> Result<u64, RunError> {
        let mut slots = self.program.slots();
        let programs = &self.programs;
        let mut tail_calls = 0u32;
        let helpers = &mut self.helpers;
        let mut reg = [0u64; 16];
        reg[1] = r1;
        reg[2] = r2;
        reg[10] = STACK_BASE + STACK_SIZE as u64;
        let mut frames: Vec<Frame> = Vec::new();
        let mut pc = 0usize;
        let mut left = self.budget;
        let budget = self.budget;
        let result = loop {
            let fault = |f: Fault, at: usize| RunError { pc: at, fault: f };
            let Some(&i) = slots.get(pc) else {
                // Load checks make this unreachable (functions end in exit or ja).
                break Err(fault(Fault::Internal("ran past the last instruction"), pc));
            };
            if left == 0 {
                break Err(fault(Fault::Budget(budget), pc));
            }
            left -= 1;
            let at = pc;
            pc += 1;
            let d = usize::from(i.dst & 0xf);
            let s = usize::from(i.src & 0xf);
            let imm = i.imm as i64 as u64;
            let addr = |base: u64| base.wrapping_add(i.off as i64 as u64);
            macro_rules! jump {
                ($cond:expr) => {
                    if $cond {
                        pc = (pc as isize + i.off as isize) as usize;
                    }
                };
            }
            macro_rules! mem {
                ($e:expr) => {
                    match $e {
                        Ok(v) => v,
                        Err(e) => break Err(fault(Fault::OutOfBounds(e), at)),
                    }
                };
            }
            match i.code {
                // ALU64
                0x07 => reg[d] = reg[d].wrapping_add(imm),
                0x0f => reg[d] = reg[d].wrapping_add(reg[s]),
                0x17 => reg[d] = reg[d].wrapping_sub(imm),
                0x1f => reg[d] = reg[d].wrapping_sub(reg[s]),
                0x27 => reg[d] = reg[d].wrapping_mul(imm),
                0x2f => reg[d] = reg[d].wrapping_mul(reg[s]),
                0x37 => reg[d] = if i.off == 0 { udiv64(reg[d], imm) } else { sdiv64(reg[d], imm) },
                0x3f => {
                    reg[d] =
                        if i.off == 0 { udiv64(reg[d], reg[s]) } else { sdiv64(reg[d], reg[s]) }
                }
                0x47 => reg[d] |= imm,
                0x4f => reg[d] |= reg[s],
                0x57 => reg[d] &= imm,
                0x5f => reg[d] &= reg[s],
                0x67 => reg[d] <<= imm & 63,
                0x6f => reg[d] <<= reg[s] & 63,
                0x77 => reg[d] >>= imm & 63,
                0x7f => reg[d] >>= reg[s] & 63,
                0x87 => reg[d] = reg[d].wrapping_neg(),
                0x97 => reg[d] = if i.off == 0 { umod64(reg[d], imm) } else { smod64(reg[d], imm) },
                0x9f => {
                    reg[d] =
                        if i.off == 0 { umod64(reg[d], reg[s]) } else { smod64(reg[d], reg[s]) }
                }
                0xa7 => reg[d] ^= imm,
                0xaf => reg[d] ^= reg[s],
                0xb7 => reg[d] = imm,
                0xbf => reg[d] = sext(reg[s], i.off),
                0xc7 => reg[d] = ((reg[d] as i64) >> (imm & 63)) as u64,
                0xcf => reg[d] = ((reg[d] as i64) >> (reg[s] & 63)) as u64,
                0xd7 => {
                    reg[d] = match i.imm {
                        16 => u64::from((reg[d] as u16).swap_bytes()),
                        32 => u64::from((reg[d] as u32).swap_bytes()),
                        _ => reg[d].swap_bytes(),
                    }
                }
                // ALU (32 bits, zero-extending)
                0x04 => reg[d] = u64::from((reg[d] as u32).wrapping_add(i.imm as u32)),
                0x0c => reg[d] = u64::from((reg[d] as u32).wrapping_add(reg[s] as u32)),
                0x14 => reg[d] = u64::from((reg[d] as u32).wrapping_sub(i.imm as u32)),
                0x1c => reg[d] = u64::from((reg[d] as u32).wrapping_sub(reg[s] as u32)),
                0x24 => reg[d] = u64::from((reg[d] as u32).wrapping_mul(i.imm as u32)),
                0x2c => reg[d] = u64::from((reg[d] as u32).wrapping_mul(reg[s] as u32)),
                0x34 => reg[d] = if i.off == 0 { udiv32(reg[d], imm) } else { sdiv32(reg[d], imm) },
                0x3c => {
                    reg[d] =
                        if i.off == 0 { udiv32(reg[d], reg[s]) } else { sdiv32(reg[d], reg[s]) }
                }
                0x44 => reg[d] = u64::from(reg[d] as u32 | i.imm as u32),
                0x4c => reg[d] = u64::from(reg[d] as u32 | reg[s] as u32),
                0x54 => reg[d] = u64::from(reg[d] as u32 & i.imm as u32),
                0x5c => reg[d] = u64::from(reg[d] as u32 & reg[s] as u32),
                0x64 => reg[d] = u64::from((reg[d] as u32) << (i.imm as u32 & 31)),
                0x6c => reg[d] = u64::from((reg[d] as u32) << (reg[s] as u32 & 31)),
                0x74 => reg[d] = u64::from((reg[d] as u32) >> (i.imm as u32 & 31)),
                0x7c => reg[d] = u64::from((reg[d] as u32) >> (reg[s] as u32 & 31)),
                0x84 => reg[d] = u64::from((reg[d] as u32).wrapping_neg()),
                0x94 => reg[d] = if i.off == 0 { umod32(reg[d], imm) } else { smod32(reg[d], imm) },
                0x9c => {
                    reg[d] =
                        if i.off == 0 { umod32(reg[d], reg[s]) } else { smod32(reg[d], reg[s]) }
                }
                0xa4 => reg[d] = u64::from(reg[d] as u32 ^ i.imm as u32),
                0xac => reg[d] = u64::from(reg[d] as u32 ^ reg[s] as u32),
                0xb4 => reg[d] = u64::from(i.imm as u32),
                0xbc => reg[d] = u64::from(sext(reg[s], i.off) as u32),
                0xc4 => reg[d] = u64::from(((reg[d] as i32) >> (i.imm as u32 & 31)) as u32),
                0xcc => reg[d] = u64::from(((reg[d] as i32) >> (reg[s] as u32 & 31)) as u32),
                0xd4 => {
                    reg[d] = match i.imm {
                        16 => u64::from(reg[d] as u16),
                        32 => u64::from(reg[d] as u32),
                        _ => reg[d],
                    }
                }
                0xdc => {
                    reg[d] = match i.imm {
                        16 => u64::from((reg[d] as u16).swap_bytes()),
                        32 => u64::from((reg[d] as u32).swap_bytes()),
                        _ => reg[d].swap_bytes(),
                    }
                }
                // Loads and stores
                0x61 => reg[d] = mem!(mem.load(addr(reg[s]), 4)),
                0x69 => reg[d] = mem!(mem.load(addr(reg[s]), 2)),
                0x71 => reg[d] = mem!(mem.load(addr(reg[s]), 1)),
                0x79 => reg[d] = mem!(mem.load(addr(reg[s]), 8)),
                0x81 => reg[d] = sext(mem!(mem.load(addr(reg[s]), 4)), 32),
                0x89 => reg[d] = sext(mem!(mem.load(addr(reg[s]), 2)), 16),
                0x91 => reg[d] = sext(mem!(mem.load(addr(reg[s]), 1)), 8),
                0x62 => mem!(mem.store(addr(reg[d]), 4, imm)),
                0x6a => mem!(mem.store(addr(reg[d]), 2, imm)),
                0x72 => mem!(mem.store(addr(reg[d]), 1, imm)),
                0x7a => mem!(mem.store(addr(reg[d]), 8, imm)),
                0x63 => mem!(mem.store(addr(reg[d]), 4, reg[s])),
                0x6b => mem!(mem.store(addr(reg[d]), 2, reg[s])),
                0x73 => mem!(mem.store(addr(reg[d]), 1, reg[s])),
                0x7b => mem!(mem.store(addr(reg[d]), 8, reg[s])),
                0xc3 | 0xdb => {
                    let n = if i.code == 0xc3 { 4 } else { 8 };
                    let mask = if n == 4 { u64::from(u32::MAX) } else { u64::MAX };
                    let a = addr(reg[d]);
                    let old = mem!(mem.load(a, n));
                    let v = reg[s] & mask;
                    let (new, fetched) = match i.imm {
                        0xe1 => (v, Some((s, old))),
                        0xf1 => {
                            let hit = old == reg[0] & mask;
                            (if hit { v } else { old }, Some((0, old)))
                        }
                        op => {
                            let new = match op & !1 {
                                0x00 => old.wrapping_add(v),
                                0x40 => old | v,
                                0x50 => old & v,
                                _ => old ^ v,
                            };
                            (new, (op & 1 != 0).then_some((s, old)))
                        }
                    };
                    mem!(mem.store(a, n, new & mask));
                    if let Some((r, old)) = fetched {
                        reg[r] = old;
                    }
                }
                0x18 => {
                    let hi = u64::from(slots.get(pc).map_or(0, |n| n.imm as u32));
                    let lo = u64::from(i.imm as u32);
                    reg[d] = match i.src {
                        0 => lo | (hi << 32),
                        1 | 5 => MAP_HANDLE_BASE + lo,
                        _ => MAP_BASE + (lo << 32) + hi,
                    };
                    pc += 1;
                }
                // Legacy packet loads: big-endian; out of the packet the program returns 0.
                0x20 | 0x28 | 0x30 | 0x40 | 0x48 | 0x50 => {
                    let n = match i.code & 0x18 {
                        0x00 => 4,
                        0x08 => 2,
                        _ => 1,
                    };
                    let base = if mem_is_packet { MEM_BASE } else { PACKET_BASE };
                    let len = if mem_is_packet { r2 } else { mem.packet().len() as u64 };
                    if len == 0 && mem_is_packet {
                        break Err(fault(Fault::NoPacket, at));
                    }
                    let off = if i.code & 0xe0 == 0x40 {
                        i64::from(reg[s] as u32).wrapping_add(i64::from(i.imm))
                    } else {
                        i64::from(i.imm)
                    };
                    if off < 0 || off as u64 + n as u64 > len {
                        break Ok(0);
                    }
                    let v = mem!(mem.load(base + off as u64, n));
                    reg[0] = match n {
                        4 => u64::from((v as u32).swap_bytes()),
                        2 => u64::from((v as u16).swap_bytes()),
                        _ => v,
                    };
                }
                // Jumps
                0x05 => jump!(true),
                0x06 => pc = (pc as i64 + i64::from(i.imm)) as usize,
                0x15 => jump!(reg[d] == imm),
                0x1d => jump!(reg[d] == reg[s]),
                0x25 => jump!(reg[d] > imm),
                0x2d => jump!(reg[d] > reg[s]),
                0x35 => jump!(reg[d] >= imm),
                0x3d => jump!(reg[d] >= reg[s]),
                0x45 => jump!(reg[d] & imm != 0),
                0x4d => jump!(reg[d] & reg[s] != 0),
                0x55 => jump!(reg[d] != imm),
                0x5d => jump!(reg[d] != reg[s]),
                0x65 => jump!((reg[d] as i64) > imm as i64),
                0x6d => jump!((reg[d] as i64) > reg[s] as i64),
                0x75 => jump!((reg[d] as i64) >= imm as i64),
                0x7d => jump!((reg[d] as i64) >= reg[s] as i64),
                0xa5 => jump!(reg[d] < imm),
                0xad => jump!(reg[d] < reg[s]),
                0xb5 => jump!(reg[d] <= imm),
                0xbd => jump!(reg[d] <= reg[s]),
                0xc5 => jump!((reg[d] as i64) < imm as i64),
                0xcd => jump!((reg[d] as i64) < reg[s] as i64),
                0xd5 => jump!((reg[d] as i64) <= imm as i64),
                0xdd => jump!((reg[d] as i64) <= reg[s] as i64),
                0x16 => jump!(reg[d] as u32 == i.imm as u32),
                0x1e => jump!(reg[d] as u32 == reg[s] as u32),
                0x26 => jump!(reg[d] as u32 > i.imm as u32),
                0x2e => jump!(reg[d] as u32 > reg[s] as u32),
                0x36 => jump!(reg[d] as u32 >= i.imm as u32),
                0x3e => jump!(reg[d] as u32 >= reg[s] as u32),
                0x46 => jump!(reg[d] as u32 & i.imm as u32 != 0),
                0x4e => jump!(reg[d] as u32 & reg[s] as u32 != 0),
                0x56 => jump!(reg[d] as u32 != i.imm as u32),
                0x5e => jump!(reg[d] as u32 != reg[s] as u32),
                0x66 => jump!(reg[d] as i32 > i.imm),
                0x6e => jump!(reg[d] as i32 > reg[s] as i32),
                0x76 => jump!(reg[d] as i32 >= i.imm),
                0x7e => jump!(reg[d] as i32 >= reg[s] as i32),
                0xa6 => jump!((reg[d] as u32) < i.imm as u32),
                0xae => jump!((reg[d] as u32) < reg[s] as u32),
                0xb6 => jump!(reg[d] as u32 <= i.imm as u32),
                0xbe => jump!(reg[d] as u32 <= reg[s] as u32),
                0xc6 => jump!((reg[d] as i32) < i.imm),
                0xce => jump!((reg[d] as i32) < reg[s] as i32),
                0xd6 => jump!(reg[d] as i32 <= i.imm),
                0xde => jump!(reg[d] as i32 <= reg[s] as i32),
                // Calls and exit
                0x85 if i.src == 1 => {
                    if frames.len() + 1 >= MAX_FRAMES {
                        break Err(fault(Fault::CallDepth, at));
                    }
                    frames.push(Frame {
                        slots,
                        ret: pc,
                        saved: [reg[6], reg[7], reg[8], reg[9]],
                        fp: reg[10],
                    });
                    reg[10] -= STACK_PER_FRAME as u64;
                    pc = (pc as i64 + i64::from(i.imm)) as usize;
                }
                0x85 | 0x8d => {
                    let target = if i.code == 0x85 { u64::from(i.imm as u32) } else { reg[d] };
                    let id = match u32::try_from(target) {
                        Ok(id) if helpers.has(id) => id,
                        _ => break Err(fault(Fault::CallxTarget(target), at)),
                    };
                    let args = Args([reg[1], reg[2], reg[3], reg[4], reg[5]]);
                    let Some(f) = helpers.get_mut(id) else {
                        break Err(fault(Fault::CallxTarget(target), at));
                    };
                    match f(mem, args) {
                        Ok(HelperOutcome::Return(v)) => reg[0] = v,
                        Ok(HelperOutcome::Exit(v)) => break Ok(v),
                        Ok(HelperOutcome::TailCall(k)) => {
                            // The target replaces the running program in the same frame,
                            // with the same context; a missing one or one past the limit
                            // falls through.
                            let target = match k {
                                0 => Some(self.program.slots()),
                                k => programs.get(k as usize - 1).map(Program::slots),
                            };
                            if let Some(t) = target
                                && tail_calls < MAX_TAIL_CALL_CNT
                            {
                                tail_calls += 1;
                                slots = t;
                                pc = 0;
                            }
                        }
                        Err(message) => {
                            let name = helpers.name(id).unwrap_or("?");
                            break Err(fault(Fault::Helper { id, name, message }, at));
                        }
                    }
                }
                0x95 => match frames.pop() {
                    None => break Ok(reg[0]),
                    Some(f) => {
                        slots = f.slots;
                        pc = f.ret;
                        [reg[6], reg[7], reg[8], reg[9]] = f.saved;
                        reg[10] = f.fp;
                    }
                },
                // Load checks admit no other opcode.
                _ => break Err(fault(Fault::Internal("opcode the load checks refuse"), at)),
            }
        };
        self.executed = budget - left;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helpers::test_helpers;
    use sift_ebpf::asm::assemble;
    use sift_ebpf::encode_program;

    fn vm(text: &str) -> Vm {
        Vm::load(&encode_program(&assemble(text).unwrap()), test_helpers()).unwrap()
    }

    #[test]
    fn faults_are_located_and_runs_end() {
        let e = vm("mov %r0, 0\nldxw %r0, [%r1+2]\nexit").run(&mut [0; 4]).unwrap_err();
        assert_eq!(e.to_string(), "instruction 1: out-of-bounds read of 4 bytes at 0x20000002");
        let mut v = vm("l:\nja l2\nl2:\nja l\nexit");
        v.set_budget(1000);
        let e = v.run(&mut []).unwrap_err();
        assert_eq!(e.fault, Fault::Budget(1000));
        assert_eq!(v.executed(), 1000);
        // Recursion: the ninth frame is refused.
        let e = vm("call local f\nexit\nf:\ncall local f\nexit").run(&mut []).unwrap_err();
        assert_eq!((e.pc, e.fault), (2, Fault::CallDepth));
        let e = vm("mov %r2, 77\ncall %r2\nexit").run(&mut []).unwrap_err();
        assert_eq!(e.to_string(), "instruction 1: callx to 0x4d, which is no helper");
        // Writes to the context of a packet run are refused (read-only); the stack works.
        let mut v = vm("stw [%r1], 1\nexit");
        assert!(v.run_with_packet(&mut [0; 8], &mut []).is_err());
        let mut v = vm("stw [%r10-512], 7\nldxw %r0, [%r10-512]\nexit");
        assert_eq!(v.run(&mut []), Ok(7));
    }

    #[test]
    fn legacy_packet_loads_read_big_endian_and_return_0_out_of_the_packet() {
        let mut packet = [0x08, 0x00, 0x45, 0x11];
        let mut v = vm("ldabsh 0\nmov %r6, 2\nldindb %r6, 1\nexit");
        assert_eq!(v.run_with_packet(&mut [], &mut packet), Ok(0x11));
        let mut v = vm("ldabsh 0\nexit");
        assert_eq!(v.run_with_packet(&mut [], &mut packet), Ok(0x0800));
        let mut v = vm("mov %r0, 9\nldabsw 1\nexit");
        assert_eq!(v.run_with_packet(&mut [], &mut packet), Ok(0));
    }

    #[test]
    fn maps_keep_state_across_runs() {
        use crate::maps::{Map, MapDef, MapKind, register_map_helpers};
        // Count runs per first memory byte in a hash map; array map 1 element 0 counts all
        // runs through a direct value pointer (map_value).
        let text = "ldxb %r2, [%r1]\nstxw [%r10-4], %r2\nlddw %r1, map_fd(0)\nmov %r2, %r10\n\
                    add %r2, -4\ncall 1\njne %r0, 0, found\nstdw [%r10-16], 1\nlddw %r1, map_fd(0)\n\
                    mov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 1\ncall 2\n\
                    ja total\nfound:\nmov %r1, 1\nlock add [%r0], %r1\ntotal:\n\
                    lddw %r6, map_value(1, 0)\nmov %r1, 1\nlock fetch add [%r6], %r1\nmov %r0, %r1\nexit";
        let mut helpers = Helpers::new();
        register_map_helpers(&mut helpers);
        let maps = vec![
            Map::new(MapDef { kind: MapKind::Hash, key_size: 4, value_size: 8, max_entries: 16 })
                .unwrap(),
            Map::new(MapDef { kind: MapKind::Array, key_size: 4, value_size: 8, max_entries: 1 })
                .unwrap(),
        ];
        let mut v =
            Vm::load_with_maps(&encode_program(&assemble(text).unwrap()), helpers, maps).unwrap();
        for (k, b) in [7u8, 9, 7, 7].into_iter().enumerate() {
            assert_eq!(v.run(&mut [b]), Ok(k as u64));
        }
        let e = v.maps()[0].entries();
        assert_eq!(
            e,
            vec![
                (vec![7, 0, 0, 0], 3u64.to_le_bytes().to_vec()),
                (vec![9, 0, 0, 0], 1u64.to_le_bytes().to_vec())
            ]
        );
        assert_eq!(v.maps()[1].lookup(&[0; 4]), Some(&4u64.to_le_bytes()[..]));
        // A map the VM does not have is refused at load.
        let e = Vm::load(
            &encode_program(&assemble("lddw %r1, map_fd(2)\nexit").unwrap()),
            Helpers::new(),
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "instruction 0: lddw MapFd: no map 2 (or no offset 0 in it)"
        );
    }

    #[test]
    fn xdp_programs_read_and_write_the_packet_through_xdp_md() {
        use crate::context::xdp;
        // Drop IPv6 (EtherType 0x86dd); swap the first two bytes of everything else and pass.
        let text = "ldxw %r2, [%r1]\nldxw %r3, [%r1+4]\nmov %r4, %r2\nadd %r4, 14\n\
                    jgt %r4, %r3, pass\nldxh %r5, [%r2+12]\nmov %r0, 1\njeq %r5, 0xdd86, out\n\
                    ldxb %r5, [%r2]\nldxb %r6, [%r2+1]\nstxb [%r2], %r6\nstxb [%r2+1], %r5\n\
                    pass:\nmov %r0, 2\nout:\nexit";
        let mut v = vm(text);
        let mut ipv6 = [0u8; 60];
        ipv6[12..14].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(v.run_xdp(&mut ipv6, 1), Ok(xdp::DROP));
        let mut ipv4 = [0u8; 60];
        ipv4[..2].copy_from_slice(&[1, 2]);
        ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(v.run_xdp(&mut ipv4, 1), Ok(xdp::PASS));
        assert_eq!(ipv4[..2], [2, 1]);
        assert_eq!(v.run_xdp(&mut [0u8; 10], 1), Ok(xdp::PASS));
        // The context is read-only; a read past data_end faults.
        assert!(vm("stw [%r1], 0\nexit").run_xdp(&mut [0; 4], 1).is_err());
        let e = vm("ldxw %r2, [%r1]\nldxb %r0, [%r2+4]\nexit").run_xdp(&mut [0; 4], 1).unwrap_err();
        assert_eq!(e.to_string(), "instruction 1: out-of-bounds read of 1 bytes at 0x30000004");
    }

    #[test]
    fn kernel_results_for_undefined_c() {
        let r = |t: &str| vm(t).run(&mut []).unwrap();
        assert_eq!(r("mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit"), 0);
        assert_eq!(r("lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1\nexit"), 7);
        assert_eq!(r("lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit"), 1 << 63);
        assert_eq!(r("lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit"), 0);
        assert_eq!(r("mov32 %r0, 0x80000000\nsdiv32 %r0, -1\nexit"), 0x8000_0000);
        assert_eq!(r("mov %r0, 1\nlsh %r0, 65\nexit"), 2);
        assert_eq!(r("mov %r0, -1\nadd32 %r0, 1\nexit"), 0);
    }
}
