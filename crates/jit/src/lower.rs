//! Lowering a validated program to machine code through the `sift-x86` assembler.
//!
//! **Bounds checks are hoisted** (NetBSD bpfjit's "array bounds check elimination"): a
//! backward pass ([`required_lengths`]) computes, for each instruction, a packet length every
//! path from it is sure to need before it can return anything but 0 — an absolute load of `s`
//! bytes at `k` needs `k + s`, and a `ret #0` (or a path that can only return 0) counts as
//! needing any length, because a failed check returns 0 as well. A forward pass then emits
//! `if caplen < L return 0` only where `L` exceeds what every path into the instruction has
//! already checked, and absolute loads carry no check of their own. A straight-line filter
//! checks once; a branching one once per path where it can. Indexed (`[x + k]`) loads keep
//! their own check, since their offset is not known in advance.
//!
//! Each classic instruction becomes straight-line code and jumps to labels: one label per
//! classic instruction and one for the shared "return 0" exit. The assembler sizes the jumps
//! (rel8 where they reach, rel32 otherwise, to a fixed point). Which machine registers hold A,
//! X and the rest is a [`Regs`] parameter.
//!
//! The same program lowers to two functions ([`Form`]): the single-packet one, whose `ret`s
//! return, and the batch one, a loop over [`PacketRef`] descriptors whose `ret`s store the
//! value into the packet's result slot and go on with the next descriptor. The batch loop
//! loads each packet's address and lengths from its descriptor into the registers the single
//! form gets them in, so the program's code is the same in both; before that it issues
//! `prefetcht0` for the packet some descriptors ahead (clamped to the last descriptor, so it
//! never reads past the array), on the cache lines the program's loads read
//! ([`prefetch_offsets`]), which hides most of the memory latency on a capture larger than
//! the caches. The packets the loop starts on without having prefetched them (the first
//! `distance` of the batch) are prefetched together before the loop, so that their misses
//! overlap.

use sift_insn::{Insn, Opcode, code};
use sift_verify::Validated;
use sift_vm::PacketRef;
use sift_x86::{AluOp, AsmError, Assembler, Cond, Label, Mem, Reg, Scale, ShiftOp, Size};

use crate::Prefetch;
use crate::regs::Regs;

/// The generated code.
pub(crate) struct Lowered {
    pub code: Vec<u8>,
}

/// Which function to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `(packet, captured length, wire length) -> value` (System V: `rdi`, `rsi`, `edx`).
    Single,
    /// `(descriptors, count, results)`: for each of `count` [`PacketRef`]s from `descriptors`,
    /// the program's value into `results[i]` (`u32`s).
    Batch(Prefetch),
}

/// The descriptor layout, as displacements.
const DESC_SIZE: i32 = PacketRef::SIZE as i32;
const DESC_ADDR: i32 = PacketRef::ADDR_OFFSET as i32;
const DESC_CAPLEN: i32 = PacketRef::CAPLEN_OFFSET as i32;
const DESC_WIRE_LEN: i32 = PacketRef::WIRE_LEN_OFFSET as i32;
/// The farthest prefetch distance taken (keeps the displacement in 32 bits).
const MAX_DISTANCE: u32 = 1 << 16;

/// A length no packet has: "every path from here returns 0".
const NEVER: u64 = u64::MAX;

/// For each instruction, a captured length below which every path from it returns 0
/// ([`NEVER`] when every path returns 0 whatever the length). Backward over the program; a
/// backward `ja` (a loop, `Mode::LibpcapLoops`) says nothing (0): its target's bound is not
/// known yet when the sweep reaches it, and 0 is true of every instruction.
fn required_lengths(insns: &[Insn]) -> Vec<u64> {
    let n = insns.len();
    let mut need = vec![0u64; n];
    let at = |need: &[u64], j: usize| need.get(j).copied().unwrap_or(0);
    for i in (0..n).rev() {
        let insn = &insns[i];
        let next = i + 1;
        need[i] = match insn.opcode() {
            Opcode::RetK if insn.k == 0 => NEVER,
            Opcode::RetK | Opcode::RetA => 0,
            Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB | Opcode::LdxMsh => {
                let size = if insn.opcode() == Opcode::LdxMsh { 1 } else { size_of(insn.code) };
                (u64::from(insn.k) + u64::from(size)).max(at(&need, next))
            }
            Opcode::Ja => match backward_target(insn, i) {
                Some(_) => 0,
                None => at(&need, next + insn.k as usize),
            },
            op if op.is_conditional_jump() => {
                at(&need, next + usize::from(insn.jt)).min(at(&need, next + usize::from(insn.jf)))
            }
            _ => at(&need, next),
        };
    }
    need
}

/// Where a `ja` at `i` jumps when it jumps backward (its offset wraps around in 32 bits, as
/// libpcap computes it; validated under `Mode::LibpcapLoops`).
fn backward_target(insn: &Insn, i: usize) -> Option<usize> {
    let next = u32::try_from(i + 1).ok()?;
    let t = next.wrapping_add(insn.k);
    (insn.opcode() == Opcode::Ja && t < next).then_some(t as usize)
}

/// Where to put length checks: `Some(L)` at instruction `i` means "check `caplen >= L` on
/// entry to `i`"; [`NEVER`] means "return 0 at once".
fn plan_checks(insns: &[Insn]) -> Vec<Option<u64>> {
    let need = required_lengths(insns);
    let n = insns.len();
    // The length already checked on every path into each instruction. The forward sweep sees
    // forward edges only, so the target of a backward jump (a loop's head) assumes nothing, as
    // the program's entry does.
    let mut checked_in = vec![NEVER; n + 1];
    if n > 0 {
        checked_in[0] = 0;
    }
    for (i, insn) in insns.iter().enumerate() {
        if let Some(t) = backward_target(insn, i) {
            checked_in[t] = 0;
        }
    }
    let mut plan = vec![None; n];
    for i in 0..n {
        let known = checked_in[i];
        if known == NEVER {
            continue; // unreachable
        }
        let out = if need[i] > known {
            plan[i] = Some(need[i]);
            need[i]
        } else {
            known
        };
        if out == NEVER {
            continue;
        }
        let insn = &insns[i];
        let next = i + 1;
        let mut flow = |j: usize| {
            if let Some(c) = checked_in.get_mut(j) {
                *c = (*c).min(out);
            }
        };
        match insn.opcode() {
            Opcode::RetK | Opcode::RetA => {}
            // A backward target already assumes nothing.
            Opcode::Ja if backward_target(insn, i).is_some() => {}
            Opcode::Ja => flow(next + insn.k as usize),
            op if op.is_conditional_jump() => {
                flow(next + usize::from(insn.jt));
                flow(next + usize::from(insn.jf));
            }
            _ => flow(next),
        }
    }
    plan
}

/// Classic A and X, and M[] words, are 32 bits.
const D: Size = Size::Dword;
/// Pointers and lengths are 64 bits.
const Q: Size = Size::Qword;
/// The scratch memory M[0..16]: 16 words at `[rsp]`.
const FRAME: i32 = 64;
/// The frame of a program with loops: M[] and, at [`BUDGET`], what its backward jumps may
/// still charge (see `sift_verify::LOOP_BUDGET`); 16 bytes more keep `rsp` 16-byte aligned.
const LOOP_FRAME: i32 = FRAME + 16;
/// Where the loop budget lives in the frame.
const BUDGET: i32 = FRAME;

/// Lowers `prog` with register assignment `regs` into the function `form`. Every classic
/// opcode is supported; the result is position-independent. Errs only if the assembler
/// refuses an instruction, which no program and no valid [`Regs`] causes.
pub(crate) fn lower(
    prog: &Validated,
    regs: &Regs,
    form: Form,
    loop_budget: u32,
) -> Result<Lowered, AsmError> {
    let insns = prog.insns();
    let plan = plan_checks(insns);
    let memory = insns
        .iter()
        .any(|i| matches!(i.opcode(), Opcode::LdMem | Opcode::LdxMem | Opcode::St | Opcode::Stx));
    let loops = !prog.is_acyclic();
    let frame = match (memory, loops) {
        (_, true) => Some(LOOP_FRAME),
        (true, false) => Some(FRAME),
        (false, false) => None,
    };
    let mut asm = Assembler::with_capacity(insns.len() * 8 + 64);
    let labels = (0..insns.len()).map(|_| asm.new_label()).collect();
    let reject = asm.new_label();
    let batch = match form {
        Form::Single => None,
        Form::Batch(prefetch) => Some(BatchLoop {
            top: asm.new_label(),
            next: asm.new_label(),
            done: asm.new_label(),
            distance: prefetch.distance.min(MAX_DISTANCE) as i32,
            offsets: prefetch_offsets(insns, prefetch.lines),
        }),
    };
    let mut used: Vec<Reg> = regs.all().to_vec();
    if batch.is_some() {
        used.extend([regs.cursor(), regs.end(), regs.out()]);
    }
    let saved = used.into_iter().filter(|r| !r.is_caller_saved()).collect();
    let mut l = Lowering { asm, r: *regs, labels, reject, frame, saved, batch, loop_budget };
    match l.batch {
        None => l.prologue()?,
        Some(b) => l.batch_prologue(b)?,
    }
    for (i, insn) in insns.iter().enumerate() {
        l.asm.bind(l.labels[i])?;
        match plan[i] {
            Some(NEVER) => {
                l.asm.jmp(l.reject)?;
                continue;
            }
            Some(len) => {
                l.check_caplen(len)?;
                l.asm.jcc(Cond::B, l.reject)?;
            }
            None => {}
        }
        l.insn(insn, i)?;
    }
    l.asm.bind(l.reject)?;
    match l.batch {
        None => l.ret_k(0)?,
        Some(b) => l.batch_epilogue(b)?,
    }
    Ok(Lowered { code: l.asm.finish()?.code })
}

/// The batch loop's labels and prefetch settings.
#[derive(Clone, Copy, Debug)]
struct BatchLoop {
    /// The start of one packet's run.
    top: Label,
    /// Where a run goes once its value is stored: the next descriptor.
    next: Label,
    /// The epilogue.
    done: Label,
    /// How many descriptors ahead to prefetch (0: none).
    distance: i32,
    /// Which bytes of a packet to prefetch the cache lines of (at most four; `None`: unused).
    offsets: [Option<i32>; 4],
}

/// Offsets whose cache lines hold the bytes the program reads, at most `lines` of them: the
/// first byte its loads read, then every 64 bytes up to the last (its absolute loads, and its
/// `[x + k]` loads as if X were 20, an IPv4 header without options: a guess, and only a hint).
/// Loads at 4096 or beyond (ancillary data, or past any header) are left out.
fn prefetch_offsets(insns: &[Insn], lines: u8) -> [Option<i32>; 4] {
    const GUESSED_X: u32 = 20;
    const FAR: u32 = 4096;
    let reads = insns.iter().filter_map(|i| {
        let (at, size) = match i.opcode() {
            Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB => (i.k, size_of(i.code)),
            Opcode::LdxMsh => (i.k, 1),
            Opcode::LdIndW | Opcode::LdIndH | Opcode::LdIndB => {
                (i.k.checked_add(GUESSED_X)?, size_of(i.code))
            }
            _ => return None,
        };
        (at < FAR).then(|| (at as i32, at as i32 + i32::from(size) - 1))
    });
    let (first, last) = reads.fold((i32::MAX, 0), |(f, l), (a, b)| (f.min(a), l.max(b)));
    let first = if first == i32::MAX { 0 } else { first };
    let mut out = [None; 4];
    for j in 0..usize::from(lines.min(4)) {
        let at = if j == 0 { first } else { (first + 64 * j as i32).min(last.max(first)) };
        if !out[..j].contains(&Some(at)) {
            out[j] = Some(at);
        }
    }
    out
}

/// The state of one lowering.
struct Lowering {
    asm: Assembler,
    r: Regs,
    /// The start of each classic instruction.
    labels: Vec<Label>,
    /// The shared `return 0`.
    reject: Label,
    /// The stack frame's size, if the program has one: M[] when it uses it, and the loop
    /// budget when it has backward jumps ([`LOOP_FRAME`]).
    frame: Option<i32>,
    /// Callee-saved registers in the assignment, pushed on entry and popped on exit.
    saved: Vec<Reg>,
    /// The batch loop, when generating the batch function.
    batch: Option<BatchLoop>,
    /// What backward jumps may charge per run (`sift_verify::LOOP_BUDGET` by default).
    loop_budget: u32,
}

impl Lowering {
    /// The label of classic instruction `n` (the reject exit past the end, which a validated
    /// program never jumps to).
    fn target(&self, n: usize) -> Label {
        self.labels.get(n).copied().unwrap_or(self.reject)
    }

    fn zero(&mut self, reg: Reg) -> Result<(), AsmError> {
        self.asm.xor(D, reg, reg)
    }

    /// `reg = k` (32 bits), as `xor` for 0.
    fn set(&mut self, reg: Reg, k: u32) -> Result<(), AsmError> {
        if k == 0 { self.zero(reg) } else { self.asm.mov(D, reg, k) }
    }

    /// Saves callee-saved registers, zeroes A and X, moves the arguments (System V: packet in
    /// `rdi`, captured length in `rsi`, wire length in `edx`) where the assignment wants them,
    /// and sets up a zeroed M[] frame if the program uses one.
    fn prologue(&mut self) -> Result<(), AsmError> {
        for i in 0..self.saved.len() {
            self.asm.push(self.saved[i])?;
        }
        const ARGS: [Reg; 3] = [Reg::Rdi, Reg::Rsi, Reg::Rdx];
        let (a, x) = (self.r.a(), self.r.x());
        let zero_first = !ARGS.contains(&a) && !ARGS.contains(&x);
        if zero_first {
            self.zero(a)?;
            self.zero(x)?;
        }
        self.move_args(vec![
            (self.r.packet(), Reg::Rdi, Q),
            (self.r.caplen(), Reg::Rsi, Q),
            (self.r.wirelen(), Reg::Rdx, D),
        ])?;
        if !zero_first {
            self.zero(a)?;
            self.zero(x)?;
        }
        if let Some(size) = self.frame {
            self.asm.sub(Q, Reg::Rsp, size)?;
            self.reset_frame()?;
        }
        Ok(())
    }

    /// Zeroes M[] (the frame at `rsp`) and, in a program with loops, sets the loop budget.
    fn reset_frame(&mut self) -> Result<(), AsmError> {
        let s = self.r.scratch(0);
        self.zero(s)?;
        for j in 0..FRAME / 8 {
            self.asm.mov(Q, Mem::base(Reg::Rsp).disp(8 * j), s)?;
        }
        if self.frame == Some(LOOP_FRAME) {
            self.asm.mov(D, Mem::base(Reg::Rsp).disp(BUDGET), self.loop_budget)?;
        }
        Ok(())
    }

    /// `ja` back to classic instruction `t`, charging the distance `d` against the loop
    /// budget: when less than `d` is left, the run ends with 0 (`sub` borrows), exactly as
    /// the interpreter's `JaBack`.
    fn jump_back(&mut self, t: usize, d: u32) -> Result<(), AsmError> {
        self.asm.sub(D, Mem::base(Reg::Rsp).disp(BUDGET), d)?;
        self.asm.jcc(Cond::B, self.reject)?;
        self.asm.jmp(self.target(t))
    }

    /// The batch function's entry (System V: descriptors in `rdi`, their count in `rsi`, the
    /// results in `rdx`): saves callee-saved registers, makes the M[] frame, sets up the loop
    /// registers, returns at once for an empty batch, prefetches the first `distance` packets;
    /// then the loop's head, which prefetches the packet `distance` descriptors ahead (the
    /// last one near the end), loads the current packet's address and lengths and zeroes A,
    /// X and M[] as the single form's prologue does.
    fn batch_prologue(&mut self, b: BatchLoop) -> Result<(), AsmError> {
        for i in 0..self.saved.len() {
            self.asm.push(self.saved[i])?;
        }
        if let Some(size) = self.frame {
            self.asm.sub(Q, Reg::Rsp, size)?;
        }
        let (cursor, end, out) = (self.r.cursor(), self.r.end(), self.r.out());
        self.move_args(vec![(cursor, Reg::Rdi, Q), (end, Reg::Rsi, Q), (out, Reg::Rdx, Q)])?;
        self.asm.imul_imm(Q, end, end, i64::from(DESC_SIZE))?;
        self.asm.add(Q, end, cursor)?;
        self.asm.cmp(Q, cursor, end)?;
        self.asm.jcc(Cond::Ae, b.done)?;
        let distance = b.distance;
        let offsets: Vec<i32> = b.offsets.iter().flatten().copied().collect();
        let prefetch = distance > 0 && !offsets.is_empty();
        if prefetch {
            // The packets the loop will not prefetch (the first `distance`), all at once, so
            // that their misses overlap instead of each waiting for its turn.
            let (at, limit, addr) = (self.r.scratch(0), self.r.scratch(1), self.r.scratch(2));
            let warm = self.asm.new_label();
            self.asm.mov(Q, at, cursor)?;
            self.asm.lea(Q, limit, Mem::base(cursor).disp(distance * DESC_SIZE))?;
            self.asm.cmp(Q, limit, end)?;
            self.asm.cmovcc(Cond::A, Q, limit, end)?;
            self.asm.bind(warm)?;
            self.asm.mov(Q, addr, Mem::base(at).disp(DESC_ADDR))?;
            for &off in &offsets {
                self.asm.prefetcht0(Mem::base(addr).disp(off))?;
            }
            self.asm.add(Q, at, DESC_SIZE)?;
            self.asm.cmp(Q, at, limit)?;
            self.asm.jcc(Cond::B, warm)?;
        }
        self.asm.bind(b.top)?;
        if prefetch {
            let ahead = self.r.scratch(0);
            self.asm.lea(Q, ahead, Mem::base(cursor).disp(distance * DESC_SIZE))?;
            self.asm.cmp(Q, ahead, end)?;
            self.asm.cmovcc(Cond::Ae, Q, ahead, cursor)?;
            self.asm.mov(Q, ahead, Mem::base(ahead).disp(DESC_ADDR))?;
            for &off in &offsets {
                self.asm.prefetcht0(Mem::base(ahead).disp(off))?;
            }
        }
        self.asm.mov(Q, self.r.packet(), Mem::base(cursor).disp(DESC_ADDR))?;
        // 32-bit loads zero the upper halves: the captured length is compared as 64 bits.
        self.asm.mov(D, self.r.caplen(), Mem::base(cursor).disp(DESC_CAPLEN))?;
        self.asm.mov(D, self.r.wirelen(), Mem::base(cursor).disp(DESC_WIRE_LEN))?;
        self.zero(self.r.a())?;
        self.zero(self.r.x())?;
        if self.frame.is_some() {
            self.reset_frame()?;
        }
        Ok(())
    }

    /// The batch function's shared tail, at the reject label: store 0, then (`next`) step to
    /// the next descriptor and result slot and loop; at the end, drop the frame, restore the
    /// saved registers and return.
    fn batch_epilogue(&mut self, b: BatchLoop) -> Result<(), AsmError> {
        let (cursor, end, out) = (self.r.cursor(), self.r.end(), self.r.out());
        self.asm.mov(D, Mem::base(out), 0)?;
        self.asm.bind(b.next)?;
        self.asm.add(Q, out, 4)?;
        self.asm.add(Q, cursor, DESC_SIZE)?;
        self.asm.cmp(Q, cursor, end)?;
        self.asm.jcc(Cond::B, b.top)?;
        self.asm.bind(b.done)?;
        self.leave()
    }

    /// Moves values between registers at once (a parallel move of distinct destinations): a
    /// move whose destination no other move still reads goes first; when none is left, the
    /// rest are cycles, and an `xchg` puts one value in place.
    fn move_args(&mut self, mut moves: Vec<(Reg, Reg, Size)>) -> Result<(), AsmError> {
        moves.retain(|&(dst, src, _)| dst != src);
        while !moves.is_empty() {
            let free =
                moves.iter().position(|&(dst, ..)| moves.iter().all(|&(_, src, _)| src != dst));
            if let Some(i) = free {
                let (dst, src, size) = moves.remove(i);
                self.asm.mov(size, dst, src)?;
            } else {
                let (dst, src, _) = moves.remove(0);
                self.asm.xchg(Q, dst, src)?;
                for m in &mut moves {
                    if m.1 == dst {
                        m.1 = src;
                    }
                }
                moves.retain(|&(dst, src, _)| dst != src);
            }
        }
        Ok(())
    }

    /// Drops the frame, restores saved registers and returns (the value is in `eax`).
    fn leave(&mut self) -> Result<(), AsmError> {
        if let Some(size) = self.frame {
            self.asm.add(Q, Reg::Rsp, size)?;
        }
        for i in (0..self.saved.len()).rev() {
            self.asm.pop(self.saved[i])?;
        }
        self.asm.ret();
        Ok(())
    }

    /// `ret #k`; in the batch function, store k and go on with the next packet.
    fn ret_k(&mut self, k: u32) -> Result<(), AsmError> {
        if let Some(b) = self.batch {
            self.asm.mov(D, Mem::base(self.r.out()), k)?;
            return self.asm.jmp(b.next);
        }
        self.set(Reg::Rax, k)?;
        self.leave()
    }

    /// `ret a`; in the batch function, store A and go on with the next packet.
    fn ret_a(&mut self) -> Result<(), AsmError> {
        let a = self.r.a();
        if let Some(b) = self.batch {
            self.asm.mov(D, Mem::base(self.r.out()), a)?;
            return self.asm.jmp(b.next);
        }
        if a != Reg::Rax {
            self.asm.mov(D, Reg::Rax, a)?;
        }
        self.leave()
    }

    /// Compares the captured length with `need`: CF is set when it is shorter.
    fn check_caplen(&mut self, need: u64) -> Result<(), AsmError> {
        let caplen = self.r.caplen();
        if let Ok(n) = i32::try_from(need) {
            self.asm.cmp(Q, caplen, n)
        } else {
            let s = self.r.scratch(0);
            self.asm.mov(Q, s, need)?;
            self.asm.cmp(Q, caplen, s)
        }
    }

    /// Where an absolute load at `k` reads. Its bounds check was hoisted (see the module
    /// documentation): every path reaching it has checked at least `k + size` bytes.
    fn abs_addr(&mut self, k: u32) -> Result<Mem, AsmError> {
        let packet = Mem::base(self.r.packet());
        if let Ok(disp) = i32::try_from(k) {
            Ok(packet.disp(disp))
        } else {
            let s = self.r.scratch(0);
            self.asm.mov(D, s, k)?;
            Ok(packet.index(s, Scale::X1))
        }
    }

    /// A = the big-endian `size`-byte number at `at`.
    fn load_a(&mut self, at: Mem, size: u8) -> Result<(), AsmError> {
        let a = self.r.a();
        match size {
            4 => {
                self.asm.mov(D, a, at)?;
                self.asm.bswap(D, a)
            }
            2 => {
                self.asm.movzx(D, a, Size::Word, at)?;
                // The upper half is already zero.
                self.asm.rol(Size::Word, a, 8)
            }
            _ => self.asm.movzx(D, a, Size::Byte, at),
        }
    }

    /// `ld [x + k]`: the 64-bit offset `x + k` (no 32-bit wrap), checked against the captured
    /// length, then the load. When `k + size` fits a displacement (any offset a packet can
    /// reach), `k` rides in the addresses instead of being added first.
    fn load_indirect(&mut self, k: u32, size: u8) -> Result<(), AsmError> {
        let (off, addend, end) = (self.r.scratch(0), self.r.scratch(1), self.r.scratch(2));
        // A 32-bit move zero-extends.
        self.asm.mov(D, off, self.r.x())?;
        let packet = Mem::base(self.r.packet()).index(off, Scale::X1);
        match (i32::try_from(k), i32::try_from(u64::from(k) + u64::from(size))) {
            (Ok(disp), Ok(reach)) => {
                self.asm.lea(Q, end, Mem::base(off).disp(reach))?;
                self.asm.cmp(Q, self.r.caplen(), end)?;
                self.asm.jcc(Cond::B, self.reject)?;
                self.load_a(packet.disp(disp), size)
            }
            _ => {
                self.asm.mov(D, addend, k)?;
                self.asm.add(Q, off, addend)?;
                self.asm.lea(Q, end, Mem::base(off).disp(i32::from(size)))?;
                self.asm.cmp(Q, self.r.caplen(), end)?;
                self.asm.jcc(Cond::B, self.reject)?;
                self.load_a(packet, size)
            }
        }
    }

    /// `ldx 4*([k]&0xf)`
    fn msh(&mut self, k: u32) -> Result<(), AsmError> {
        let at = self.abs_addr(k)?;
        let x = self.r.x();
        self.asm.movzx(D, x, Size::Byte, at)?;
        self.asm.and(D, x, 0xF)?;
        self.asm.shl(D, x, 2)
    }

    /// M[k] (`k` < 16).
    fn scratch_word(k: u32) -> Mem {
        Mem::base(Reg::Rsp).disp(4 * (k & 15) as i32)
    }

    /// Unsigned A / divisor or A % divisor, the divisor being X (checked non-zero before) or
    /// the constant `k`. `div` wants the dividend in `edx:eax` and leaves the quotient in `eax`
    /// and the remainder in `edx`, so whatever else lives there is saved around it.
    fn divide(&mut self, k: Option<u32>, remainder: bool) -> Result<(), AsmError> {
        let (a, x) = (self.r.a(), self.r.x());
        let fixed = [Reg::Rax, Reg::Rdx];
        let divisor = match k {
            None if !fixed.contains(&x) => x,
            _ => self.r.scratch_except(&fixed),
        };
        if k.is_none() && divisor != x {
            self.asm.mov(D, divisor, x)?;
        }
        let live: Vec<Reg> =
            self.r.live_besides_a().into_iter().filter(|r| fixed.contains(r)).collect();
        for &r in &live {
            self.asm.push(r)?;
        }
        if a != Reg::Rax {
            self.asm.mov(D, Reg::Rax, a)?;
        }
        self.zero(Reg::Rdx)?;
        if let Some(k) = k {
            self.asm.mov(D, divisor, k)?;
        }
        self.asm.div(D, divisor)?;
        let result = if remainder { Reg::Rdx } else { Reg::Rax };
        if a != result {
            self.asm.mov(D, a, result)?;
        }
        for &r in live.iter().rev() {
            self.asm.pop(r)?;
        }
        Ok(())
    }

    /// A shift by X with libpcap's rule (X ≥ 32 gives 0), branch-free:
    /// `xor z, z; shl/shr A, cl; cmp ecx, 31; cmova A, z`. The count must be in `cl`: when X
    /// lives elsewhere, X and `rcx` trade places around the shift.
    fn shift_x(&mut self, op: ShiftOp) -> Result<(), AsmError> {
        let (a, x) = (self.r.a(), self.r.x());
        let zero = self.r.scratch_except(&[Reg::Rcx]);
        self.zero(zero)?;
        let swap = x != Reg::Rcx;
        if swap {
            self.asm.xchg(Q, x, Reg::Rcx)?;
        }
        // If A was in rcx, the swap moved it to X's register.
        let value = if swap && a == Reg::Rcx { x } else { a };
        self.asm.shift(op, D, value, Reg::Rcx)?;
        self.asm.cmp(D, Reg::Rcx, 31)?;
        self.asm.cmovcc(Cond::A, D, value, zero)?;
        if swap {
            self.asm.xchg(Q, x, Reg::Rcx)?;
        }
        Ok(())
    }

    fn alu_k(&mut self, op: AluOp, k: u32) -> Result<(), AsmError> {
        let a = self.r.a();
        self.asm.alu(op, D, a, k)
    }

    fn alu_x(&mut self, op: AluOp) -> Result<(), AsmError> {
        let (a, x) = (self.r.a(), self.r.x());
        self.asm.alu(op, D, a, x)
    }

    fn insn(&mut self, insn: &Insn, i: usize) -> Result<(), AsmError> {
        let k = insn.k;
        let next = i + 1;
        let (a, x) = (self.r.a(), self.r.x());
        match insn.opcode() {
            Opcode::RetK => self.ret_k(k),
            Opcode::RetA => self.ret_a(),
            Opcode::LdImm => self.set(a, k),
            Opcode::LdxImm => self.set(x, k),
            Opcode::LdLen => self.asm.mov(D, a, self.r.wirelen()),
            Opcode::LdxLen => self.asm.mov(D, x, self.r.wirelen()),
            Opcode::LdMem => self.asm.mov(D, a, Self::scratch_word(k)),
            Opcode::LdxMem => self.asm.mov(D, x, Self::scratch_word(k)),
            Opcode::St => self.asm.mov(D, Self::scratch_word(k), a),
            Opcode::Stx => self.asm.mov(D, Self::scratch_word(k), x),
            Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB => {
                let at = self.abs_addr(k)?;
                self.load_a(at, size_of(insn.code))
            }
            Opcode::LdIndW | Opcode::LdIndH | Opcode::LdIndB => {
                self.load_indirect(k, size_of(insn.code))
            }
            Opcode::LdxMsh => self.msh(k),
            Opcode::AddK => self.alu_k(AluOp::Add, k),
            Opcode::SubK => self.alu_k(AluOp::Sub, k),
            Opcode::MulK => self.asm.imul_imm(D, a, a, i64::from(k)),
            Opcode::AndK => self.alu_k(AluOp::And, k),
            Opcode::OrK => self.alu_k(AluOp::Or, k),
            Opcode::XorK => self.alu_k(AluOp::Xor, k),
            Opcode::AddX => self.alu_x(AluOp::Add),
            Opcode::SubX => self.alu_x(AluOp::Sub),
            Opcode::MulX => self.asm.imul(D, a, x),
            Opcode::AndX => self.alu_x(AluOp::And),
            Opcode::OrX => self.alu_x(AluOp::Or),
            Opcode::XorX => self.alu_x(AluOp::Xor),
            // Both validators refuse a constant divisor of 0; stay total anyway.
            Opcode::DivK | Opcode::ModK if k == 0 => self.asm.jmp(self.reject),
            Opcode::DivK => self.divide(Some(k), false),
            Opcode::ModK => self.divide(Some(k), true),
            Opcode::DivX | Opcode::ModX => {
                self.asm.test(D, x, x)?;
                self.asm.jcc(Cond::E, self.reject)?;
                self.divide(None, insn.opcode() == Opcode::ModX)
            }
            Opcode::LshK | Opcode::RshK if k >= 32 => self.zero(a),
            Opcode::LshK => self.asm.shl(D, a, k),
            Opcode::RshK => self.asm.shr(D, a, k),
            Opcode::LshX => self.shift_x(ShiftOp::Shl),
            Opcode::RshX => self.shift_x(ShiftOp::Shr),
            Opcode::Neg => self.asm.neg(D, a),
            Opcode::Tax => self.asm.mov(D, x, a),
            Opcode::Txa => self.asm.mov(D, a, x),
            Opcode::Ja => match (backward_target(insn, i), next.checked_add(k as usize)) {
                // `next - t` is at most the program's length, which the backward target's
                // computation keeps below 2^32.
                (Some(t), _) => self.jump_back(t, (next - t) as u32),
                (None, Some(t)) if t == next => Ok(()),
                (None, Some(t)) => self.asm.jmp(self.target(t)),
                (None, None) => self.asm.jmp(self.reject),
            },
            op @ (Opcode::JeqK
            | Opcode::JgtK
            | Opcode::JgeK
            | Opcode::JsetK
            | Opcode::JeqX
            | Opcode::JgtX
            | Opcode::JgeX
            | Opcode::JsetX) => {
                let (cond, test, with_x) = match op {
                    Opcode::JeqK => (Cond::E, false, false),
                    Opcode::JgtK => (Cond::A, false, false),
                    Opcode::JgeK => (Cond::Ae, false, false),
                    Opcode::JsetK => (Cond::Ne, true, false),
                    Opcode::JeqX => (Cond::E, false, true),
                    Opcode::JgtX => (Cond::A, false, true),
                    Opcode::JgeX => (Cond::Ae, false, true),
                    _ => (Cond::Ne, true, true),
                };
                let (t, f) = (next + usize::from(insn.jt), next + usize::from(insn.jf));
                if t == f {
                    return if t != next { self.asm.jmp(self.target(t)) } else { Ok(()) };
                }
                match (with_x, test) {
                    (true, true) => self.asm.test(D, a, x)?,
                    (true, false) => self.asm.cmp(D, a, x)?,
                    (false, true) => self.asm.test(D, a, k)?,
                    (false, false) if k == 0 => self.asm.test(D, a, a)?,
                    (false, false) => self.asm.cmp(D, a, k)?,
                }
                if f == next {
                    self.asm.jcc(cond, self.target(t))
                } else if t == next {
                    self.asm.jcc(cond.negate(), self.target(f))
                } else {
                    self.asm.jcc(cond, self.target(t))?;
                    self.asm.jmp(self.target(f))
                }
            }
            // Validated programs contain no unknown opcodes; reject if one slips through.
            Opcode::Unknown(_) => self.asm.jmp(self.reject),
        }
    }
}

fn size_of(code: u16) -> u8 {
    match code & 0x18 {
        code::BPF_W => 4,
        code::BPF_H => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::prefetch_offsets;
    use sift_insn::asm::assemble;

    #[test]
    fn prefetch_offsets_follow_the_loads() {
        let prog = assemble(
            "ldh [12]\njeq #0x800, v4, drop\nv4: ld [30]\nldxb 4*([14]&0xf)\nldh [x+16]\n\
             ld [0xfffff000]\nret a\ndrop: ret #0\n",
        )
        .unwrap();
        // Loads read 12..=13, 14, 30..=33 and (X guessed 20) 36..=37; the ancillary one at
        // 0xfffff000 is left out.
        assert_eq!(prefetch_offsets(&prog, 0), [None; 4]);
        assert_eq!(prefetch_offsets(&prog, 1), [Some(12), None, None, None]);
        assert_eq!(prefetch_offsets(&prog, 2), [Some(12), Some(37), None, None]);
        assert_eq!(prefetch_offsets(&prog, 4), [Some(12), Some(37), None, None]);
        let wide = assemble("ldb [20]\nldb [200]\nret a\n").unwrap();
        assert_eq!(prefetch_offsets(&wide, 9), [Some(20), Some(84), Some(148), Some(200)]);
        let none = assemble("ret #1\n").unwrap();
        assert_eq!(prefetch_offsets(&none, 2), [Some(0), None, None, None]);
    }
}
