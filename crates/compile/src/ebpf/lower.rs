//! The graph's blocks, statements and terminators as eBPF, in one or two bodies, then the
//! shared exits.
//!
//! **Why it exists.** This is the back end proper: [`super::lower`] checks the filter and
//! picks the bodies; this module writes them, following [`super::plan`].
//!
//! **Registers.** Classic A is `w7` and X is `w8` (32-bit sub-registers, so every result is the
//! classic 32-bit value, zero-extended); the context stays in `r6`. Direct access keeps `data`
//! in `r9` and `data_end` in `r5`, and uses `r0`–`r4` as scratch (`r1` points at an X group's
//! bytes, `r4` counts a walk's steps): no helper is called there, so nothing is clobbered. A
//! copying body calls `bpf_skb_load_bytes` (which clobbers `r0`–`r5`), so a walk counts in `r9`.
//! `M[k]` is the 32-bit stack word at `r10 - 4(k+1)`.
//!
//! **Packet loads.** Classic semantics: a load past the packet's end ends the program with 0
//! (the miss verdict). Direct access checks once per group of loads: a block's absolute loads
//! at its start (`data + end <= data_end`; skipped when every path into the block has already
//! proven as much), the `[x + k]` loads between two definitions of X before the first of them
//! (`x <= limit - end`, then `data + x + end <= data_end`). Only failures can come between such a
//! check and the loads it covers, so checking early never changes a verdict. A copying body
//! makes one `bpf_skb_load_bytes` call per cluster of nearby loads, which fails exactly when
//! the cluster's last byte is past the end.

use std::collections::{BTreeMap, HashMap};

use sift_ebpf::isa::{AluOp as EAlu, ByteOrder, CallTarget, Cond, ImmKind, Insn, Operand, Width};
use sift_ebpf::reg::*;
use sift_ebpf::{Reg, helper_ids::id, skb};

use super::asm::{Asm, Label};
use super::plan::{
    Access, BodyPlan, COPY_LIMIT, CopyPlan, DIRECT_LIMIT, Load, Outcome, Target, access_size,
    copy_plan, outcome, x_groups,
};
use super::{EbpfOptions, Hook};
use crate::ir::{
    AluOp, BlockId, Cfg, JmpOp, Operand as COperand, RegSet, RetVal, Size, Slot, Src, Stmt,
    Terminator, XSrc,
};
use crate::walk::Walk;

/// Classic A.
pub(crate) const A: Reg = R7;
/// Classic X.
pub(crate) const X: Reg = R8;
/// The context, kept from entry.
pub(crate) const CTX: Reg = R6;
/// `data` (direct access).
pub(crate) const DATA: Reg = R9;
/// `data_end` (direct access).
pub(crate) const DATA_END: Reg = R5;
/// Where an X group's bytes start (direct access).
pub(crate) const IND: Reg = R1;
/// The end pointer a check compares with `data_end`.
const CHECK: Reg = R2;
/// A pointer for offsets beyond a load's 16-bit displacement.
const FAR: Reg = R3;

/// `XDP_REDIRECT`.
const XDP_REDIRECT: i32 = 4;
/// The key of the counting map's element (stack).
pub(crate) const KEY: i16 = -72;
/// Two bytes a copying walk reads its header's first bytes into (stack).
pub(crate) const WALK_BUF: i16 = -80;
/// Where a walk passes X through the stack at the end of a step, so that the verifier forgets
/// its range (see `walk`): not 8-byte aligned, so the kernel's verifier (and sift's) keep no
/// spilled register there, only bytes of unknown value.
pub(crate) const WALK_X: i16 = -84;
/// The buffer copied clusters of loads go into (stack), and its size.
pub(crate) const BUF: i16 = -344;
const _: () = assert!(BUF % 8 == 0, "the copy buffer is 8-byte aligned");
/// Bytes in [`BUF`].
pub(crate) const BUF_SIZE: u64 = 256;

/// How many header advances a walk may make, and what happens after the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Steps {
    /// As the unrolled classic walk: then `A = v` if the header is `v`, else `A = !v`.
    Unrolled(usize),
    /// As libpcap's loop when its budget runs out: a walk that would advance once more ends
    /// the program with 0.
    Looped(usize),
}

/// `w{dst} = value`.
pub(crate) fn mov32(dst: Reg, value: u32) -> Insn {
    Insn::Alu { width: Width::W32, op: EAlu::Mov, dst, src: Operand::Imm(value as i32) }
}

pub(crate) fn mov32_reg(dst: Reg, src: Reg) -> Insn {
    Insn::Alu { width: Width::W32, op: EAlu::Mov, dst, src: Operand::Reg(src) }
}

pub(crate) fn mov64_reg(dst: Reg, src: Reg) -> Insn {
    Insn::Alu { width: Width::W64, op: EAlu::Mov, dst, src: Operand::Reg(src) }
}

pub(crate) fn alu32(op: EAlu, dst: Reg, k: u32) -> Insn {
    Insn::Alu { width: Width::W32, op, dst, src: Operand::Imm(k as i32) }
}

pub(crate) fn alu64(op: EAlu, dst: Reg, src: Operand) -> Insn {
    Insn::Alu { width: Width::W64, op, dst, src }
}

pub(crate) fn ldx(size: sift_ebpf::Size, dst: Reg, src: Reg, off: i16) -> Insn {
    Insn::Load { size, dst, src, off }
}

/// The stack offset of `M[slot]`.
pub(crate) fn mem(slot: Slot) -> i16 {
    -4 * (slot.index() as i16 + 1)
}

/// An offset that fits a displacement or an immediate (the lowering's offsets are bounded by
/// [`COPY_LIMIT`], so this never saturates in practice).
fn imm(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

fn alu_op(op: AluOp) -> EAlu {
    match op {
        AluOp::Add => EAlu::Add,
        AluOp::Sub => EAlu::Sub,
        AluOp::Mul => EAlu::Mul,
        AluOp::Div => EAlu::Div,
        AluOp::Mod => EAlu::Mod,
        AluOp::And => EAlu::And,
        AluOp::Or => EAlu::Or,
        AluOp::Xor => EAlu::Xor,
        AluOp::Lsh => EAlu::Lsh,
        AluOp::Rsh => EAlu::Rsh,
    }
}

/// Where a statement's packet bytes are, once checked or copied.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// Direct: `base + k`.
    Packet { base: Reg },
    /// Copied: the stack at `r10 + off + (k - lo)`.
    Stack { off: i16, lo: u64 },
}

/// The program being written: the graph, the options, the instructions, the exits used.
pub(crate) struct Lowering<'a> {
    cfg: &'a Cfg,
    opts: &'a EbpfOptions,
    steps: Steps,
    pub asm: Asm,
    exits: BTreeMap<Outcome, Label>,
    tail: Option<Label>,
}

impl<'a> Lowering<'a> {
    pub fn new(cfg: &'a Cfg, opts: &'a EbpfOptions, steps: Steps) -> Lowering<'a> {
        Lowering::resume(cfg, opts, steps, Asm::default())
    }

    /// A lowering that goes on writing into `asm` (a filter's body inside a larger program:
    /// see [`Lowering::into_parts`]).
    pub fn resume(cfg: &'a Cfg, opts: &'a EbpfOptions, steps: Steps, asm: Asm) -> Lowering<'a> {
        Lowering { cfg, opts, steps, asm, exits: BTreeMap::new(), tail: None }
    }

    /// The instruction stream and the exits the bodies jumped to, not yet bound: the caller
    /// binds each where the filter's outcome continues (instead of [`Lowering::exits`]).
    pub fn into_parts(self) -> (Asm, BTreeMap<Outcome, Label>) {
        (self.asm, self.exits)
    }

    /// The shared exit of `o` (made on first use).
    pub fn exit(&mut self, o: Outcome) -> Label {
        if let Some(&l) = self.exits.get(&o) {
            return l;
        }
        let l = self.asm.label();
        self.exits.insert(o, l);
        l
    }

    /// Where a failed load (or a division by X = 0) goes: the exit of `ret #0`.
    pub fn fail(&mut self) -> Label {
        self.exit(outcome(self.opts.raw, 0))
    }

    /// The counting tail (made on first use).
    fn tail(&mut self) -> Label {
        match self.tail {
            Some(l) => l,
            None => {
                let l = self.asm.label();
                self.tail = Some(l);
                l
            }
        }
    }

    /// The prologue: the context, the packet pointers, zeroes for what may be read before it
    /// is written.
    pub fn prologue(&mut self, packet: bool, ctx: bool, zero: RegSet) {
        let hook = self.opts.hook;
        if ctx {
            self.asm.emit(mov64_reg(CTX, R1));
        }
        if packet {
            let (data, end) = match hook {
                Hook::Xdp => (sift_ebpf::xdp_md::DATA, sift_ebpf::xdp_md::DATA_END),
                _ => (skb::DATA, skb::DATA_END),
            };
            let base = if ctx { CTX } else { R1 };
            self.asm.emit(ldx(sift_ebpf::Size::W, DATA, base, data));
            self.asm.emit(ldx(sift_ebpf::Size::W, DATA_END, base, end));
        }
        if zero.intersects(RegSet::A) {
            self.asm.emit(mov32(A, 0));
        }
        if zero.intersects(RegSet::X) {
            self.asm.emit(mov32(X, 0));
        }
        for k in 0..Slot::COUNT as u32 {
            let slot = Slot::new(k).expect("below 16");
            if zero.intersects(RegSet::mem(slot)) {
                let off = mem(slot);
                self.asm.emit(Insn::Store {
                    size: sift_ebpf::Size::W,
                    dst: R10,
                    off,
                    src: Operand::Imm(0),
                });
            }
        }
    }

    /// TC: the direct body when the whole skb is linear (`data + len <= data_end`, `len` at
    /// most [`DIRECT_LIMIT`]), else the copying one at the label returned.
    pub fn linear_split(&mut self) -> Label {
        let slow = self.asm.label();
        self.asm.emit(ldx(sift_ebpf::Size::W, R1, CTX, skb::LEN));
        self.asm.jmp(Width::W64, Cond::Gt, R1, Operand::Imm(imm(DIRECT_LIMIT)), slow);
        self.asm.emit(mov64_reg(CHECK, DATA));
        self.asm.emit(alu64(EAlu::Add, CHECK, Operand::Reg(R1)));
        self.asm.jmp(Width::W64, Cond::Gt, CHECK, Operand::Reg(DATA_END), slow);
        slow
    }

    /// One body: the graph's reached blocks in layout order, reading the packet by `access`.
    pub fn body(&mut self, access: Access) {
        let plan = BodyPlan::new(self.cfg, access, self.opts.raw);
        let labels: HashMap<BlockId, Label> =
            plan.order.iter().map(|&b| (b, self.asm.label())).collect();
        match plan.target[self.cfg.entry.index()] {
            Target::Exit(o) => {
                let l = self.exit(o);
                self.asm.ja(l);
            }
            Target::Block(first) => {
                // The entry may be a bare jump resolved to a later block.
                if plan.order.first() != Some(&first) {
                    self.asm.ja(labels[&first]);
                }
            }
        }
        for (i, &b) in plan.order.iter().enumerate() {
            let next = plan.order.get(i + 1).map(|n| labels[n]);
            self.block(b, &plan, &labels, access, next);
        }
    }

    fn target(&mut self, plan: &BodyPlan, labels: &HashMap<BlockId, Label>, b: BlockId) -> Label {
        match plan.target[b.index()] {
            Target::Block(t) => labels[&t],
            Target::Exit(o) => self.exit(o),
        }
    }

    fn block(
        &mut self,
        b: BlockId,
        plan: &BodyPlan,
        labels: &HashMap<BlockId, Label>,
        access: Access,
        next: Option<Label>,
    ) {
        self.asm.bind(labels[&b]);
        let block = self.cfg.block(b);
        let mut ind_checks: BTreeMap<usize, u64> = BTreeMap::new();
        let mut copies: Option<CopyPlan> = None;
        match access {
            Access::Direct { .. } => {
                let end = plan.abs_end[b.index()];
                if end > plan.proven_in[b.index()] {
                    self.check_abs(end);
                }
                for (group, (end, first)) in x_groups(&block.stmts) {
                    if !plan.x_proven[b.index()].contains(&group) {
                        ind_checks.insert(first, end);
                    }
                }
            }
            Access::Copy => copies = Some(copy_plan(&block.stmts, BUF_SIZE)),
        }
        // The most X can be, where the block's own statements say (`ldxb 4*([k]&0xf)`: 60).
        let mut x_max: Option<u64> = None;
        for (i, s) in block.stmts.iter().enumerate() {
            let mut place = Place::Packet { base: DATA };
            match &copies {
                None => {
                    if let Some(&end) = ind_checks.get(&i) {
                        self.check_ind(end, x_max);
                    }
                    if Load::of(s).is_some_and(|l| l.indirect) {
                        place = Place::Packet { base: IND };
                    }
                }
                Some(cp) => {
                    for c in cp.clusters.iter().filter(|c| c.first == i) {
                        let x = if c.group != 0 { Some(x_max) } else { None };
                        self.copy(x, c.lo, c.hi, BUF + c.region as i16);
                    }
                    if let Some(&c) = cp.of_stmt.get(&i) {
                        let c = cp.clusters[c];
                        place = Place::Stack { off: BUF + c.region as i16, lo: c.lo };
                    }
                }
            }
            self.stmt(s, access, place);
            match s {
                Stmt::Ldx(XSrc::Msh(_)) => x_max = Some(60),
                Stmt::Ldx(XSrc::Imm(k)) => x_max = Some(u64::from(*k)),
                _ if s.defs().intersects(RegSet::X) => x_max = None,
                _ => {}
            }
        }
        self.terminator(&block.term, plan, labels, next);
    }

    /// Direct access: `data + end <= data_end`, or the miss.
    fn check_abs(&mut self, end: u64) {
        let fail = self.fail();
        self.asm.emit(mov64_reg(CHECK, DATA));
        self.asm.emit(alu64(EAlu::Add, CHECK, Operand::Imm(imm(end))));
        self.asm.jmp(Width::W64, Cond::Gt, CHECK, Operand::Reg(DATA_END), fail);
    }

    /// Direct access: X small enough for the verifier to bound the pointer (beyond it no
    /// packet reaches; not tested when `x_max` says so), then `IND = data + x` and
    /// `IND + end <= data_end`, or the miss.
    fn check_ind(&mut self, end: u64, x_max: Option<u64>) {
        let fail = self.fail();
        if x_max.is_none_or(|m| m > DIRECT_LIMIT - end) {
            self.asm.jmp(Width::W64, Cond::Gt, X, Operand::Imm(imm(DIRECT_LIMIT - end)), fail);
        }
        self.asm.emit(mov64_reg(IND, DATA));
        self.asm.emit(alu64(EAlu::Add, IND, Operand::Reg(X)));
        self.asm.emit(mov64_reg(CHECK, IND));
        self.asm.emit(alu64(EAlu::Add, CHECK, Operand::Imm(imm(end))));
        self.asm.jmp(Width::W64, Cond::Gt, CHECK, Operand::Reg(DATA_END), fail);
    }

    /// Copy access: `bpf_skb_load_bytes(ctx, base + lo, r10 + to, hi - lo)`, or the miss.
    /// `base` is X for an X group (`x` is `Some` of the most X can be, if known): X small
    /// enough that `x + hi` is a valid offset first (beyond it no packet reaches).
    pub(crate) fn copy(&mut self, x: Option<Option<u64>>, lo: u64, hi: u64, to: i16) {
        let fail = self.fail();
        if let Some(x_max) = x {
            if x_max.is_none_or(|m| m > COPY_LIMIT - hi) {
                self.asm.jmp(Width::W64, Cond::Gt, X, Operand::Imm(imm(COPY_LIMIT - hi)), fail);
            }
            self.asm.emit(mov64_reg(R2, X));
            if lo != 0 {
                self.asm.emit(alu64(EAlu::Add, R2, Operand::Imm(imm(lo))));
            }
        } else {
            self.asm.emit(mov32(R2, lo as u32));
        }
        self.asm.emit(mov64_reg(R1, CTX));
        self.asm.emit(mov64_reg(R3, R10));
        self.asm.emit(alu64(EAlu::Add, R3, Operand::Imm(i32::from(to))));
        self.asm.emit(mov32(R4, (hi - lo) as u32));
        self.asm.emit(Insn::Call(CallTarget::Helper(id::SKB_LOAD_BYTES as i32)));
        self.asm.jmp(Width::W64, Cond::Ne, R0, Operand::Imm(0), fail);
    }

    /// `dst = ntoh(P[k:size])` from a checked or copied place.
    fn load(&mut self, dst: Reg, size: Size, k: u32, place: Place) {
        let size_e = access_size(size);
        match place {
            Place::Packet { base } => {
                let (base, off) = match i16::try_from(k) {
                    Ok(off) => (base, off),
                    Err(_) => {
                        self.asm.emit(mov64_reg(FAR, base));
                        self.asm.emit(alu64(EAlu::Add, FAR, Operand::Imm(imm(u64::from(k)))));
                        (FAR, 0)
                    }
                };
                self.asm.emit(ldx(size_e, dst, base, off));
            }
            Place::Stack { off, lo } => {
                let at = (i64::from(off) + (i64::from(k) - lo as i64)) as i16;
                if at % size_e.bytes() as i16 != 0 {
                    // The verifier refuses misaligned stack accesses: byte by byte, in network
                    // order (no swap then).
                    self.asm.emit(ldx(sift_ebpf::Size::B, dst, R10, at));
                    for i in 1..size_e.bytes() as i16 {
                        self.asm.emit(ldx(sift_ebpf::Size::B, R0, R10, at + i));
                        self.asm.emit(alu32(EAlu::Lsh, dst, 8));
                        self.asm.emit(Insn::Alu {
                            width: Width::W32,
                            op: EAlu::Or,
                            dst,
                            src: Operand::Reg(R0),
                        });
                    }
                    return;
                }
                self.asm.emit(ldx(size_e, dst, R10, at));
            }
        }
        match size {
            Size::H => self.asm.emit(Insn::Endian { order: ByteOrder::Be, bits: 16, dst }),
            Size::W => self.asm.emit(Insn::Endian { order: ByteOrder::Be, bits: 32, dst }),
            Size::B => {}
        }
    }

    /// `dst = len`: `data_end - data` at XDP, `skb->len` otherwise.
    fn len(&mut self, dst: Reg, access: Access) {
        match access {
            Access::Direct { xdp: true } => {
                self.asm.emit(mov64_reg(dst, DATA_END));
                self.asm.emit(alu64(EAlu::Sub, dst, Operand::Reg(DATA)));
            }
            _ => self.asm.emit(ldx(sift_ebpf::Size::W, dst, CTX, skb::LEN)),
        }
    }

    fn stmt(&mut self, s: &Stmt, access: Access, place: Place) {
        let w = sift_ebpf::Size::W;
        match *s {
            Stmt::Ld(Src::Abs(size, k) | Src::Ind(size, k)) => self.load(A, size, k, place),
            Stmt::Ld(Src::Len) => self.len(A, access),
            Stmt::Ld(Src::Imm(k)) => self.asm.emit(mov32(A, k)),
            Stmt::Ld(Src::Mem(m)) => self.asm.emit(ldx(w, A, R10, mem(m))),
            Stmt::Ldx(XSrc::Imm(k)) => self.asm.emit(mov32(X, k)),
            Stmt::Ldx(XSrc::Len) => self.len(X, access),
            Stmt::Ldx(XSrc::Mem(m)) => self.asm.emit(ldx(w, X, R10, mem(m))),
            Stmt::Ldx(XSrc::Msh(k)) => {
                self.load(X, Size::B, k, place);
                self.asm.emit(alu32(EAlu::And, X, 0xf));
                self.asm.emit(alu32(EAlu::Lsh, X, 2));
            }
            Stmt::St(m) => {
                self.asm.emit(Insn::Store { size: w, dst: R10, off: mem(m), src: Operand::Reg(A) })
            }
            Stmt::Stx(m) => {
                self.asm.emit(Insn::Store { size: w, dst: R10, off: mem(m), src: Operand::Reg(X) })
            }
            Stmt::Alu(op, COperand::K(k)) => self.alu_k(op, k),
            Stmt::Alu(op, COperand::X) => self.alu_x(op),
            Stmt::Neg => self.asm.emit(Insn::Neg { width: Width::W32, dst: A }),
            Stmt::Tax => self.asm.emit(mov32_reg(X, A)),
            Stmt::Txa => self.asm.emit(mov32_reg(A, X)),
            Stmt::Walk(ref walk) => self.walk(walk, access),
        }
    }

    /// `A op= k` with classic semantics: division or modulo by 0 and shifts by 32 or more
    /// give 0 (eBPF would refuse the first and mask the second).
    fn alu_k(&mut self, op: AluOp, k: u32) {
        let zero = match op {
            AluOp::Div | AluOp::Mod => k == 0,
            AluOp::Lsh | AluOp::Rsh => k >= 32,
            _ => false,
        };
        if zero {
            self.asm.emit(mov32(A, 0));
        } else {
            self.asm.emit(alu32(alu_op(op), A, k));
        }
    }

    /// `A op= X` with classic semantics: division or modulo by X = 0 ends the program with 0;
    /// shifts by 32 or more give 0 (eBPF masks the count to 5 bits).
    fn alu_x(&mut self, op: AluOp) {
        let e = Insn::Alu { width: Width::W32, op: alu_op(op), dst: A, src: Operand::Reg(X) };
        match op {
            AluOp::Div | AluOp::Mod => {
                let fail = self.fail();
                self.asm.jmp(Width::W32, Cond::Eq, X, Operand::Imm(0), fail);
                self.asm.emit(e);
            }
            AluOp::Lsh | AluOp::Rsh => {
                let done = self.asm.label();
                self.asm.emit(e);
                self.asm.jmp(Width::W32, Cond::Le, X, Operand::Imm(31), done);
                self.asm.emit(mov32(A, 0));
                self.asm.bind(done);
            }
            _ => self.asm.emit(e),
        }
    }

    fn terminator(
        &mut self,
        term: &Terminator,
        plan: &BodyPlan,
        labels: &HashMap<BlockId, Label>,
        next: Option<Label>,
    ) {
        match *term {
            Terminator::Branch { op, operand, jt, jf } => {
                let t = self.target(plan, labels, jt);
                let f = self.target(plan, labels, jf);
                let src = match operand {
                    COperand::K(k) => Operand::Imm(k as i32),
                    COperand::X => Operand::Reg(X),
                };
                let (cond, inverse) = match op {
                    JmpOp::Jeq => (Cond::Eq, Some(Cond::Ne)),
                    JmpOp::Jgt => (Cond::Gt, Some(Cond::Le)),
                    JmpOp::Jge => (Cond::Ge, Some(Cond::Lt)),
                    JmpOp::Jset => (Cond::Set, None),
                };
                if t == f {
                    self.asm.ja(t);
                } else if let (true, Some(inv)) = (next == Some(t), inverse) {
                    self.asm.jmp(Width::W32, inv, A, src, f);
                } else {
                    self.asm.jmp(Width::W32, cond, A, src, t);
                    self.asm.ja(f);
                }
            }
            Terminator::Jump(t) => {
                let t = self.target(plan, labels, t);
                self.asm.ja(t);
            }
            Terminator::Ret(RetVal::K(k)) => {
                let l = self.exit(outcome(self.opts.raw, k));
                self.asm.ja(l);
            }
            Terminator::Ret(RetVal::A) => self.ret_a(),
        }
    }

    /// `ret a`: the value itself (raw), else the match or miss exit by whether it is 0.
    fn ret_a(&mut self) {
        if !self.opts.raw {
            let (m, n) = (self.exit(Outcome::Match), self.exit(Outcome::Miss));
            self.asm.jmp(Width::W32, Cond::Ne, A, Operand::Imm(0), m);
            self.asm.ja(n);
        } else if self.opts.count {
            // The value is already where the tail returns it from.
            let tail = self.tail();
            self.store_key(0);
            self.asm.jmp(Width::W32, Cond::Ne, A, Operand::Imm(0), tail);
            self.store_key(1);
            self.asm.ja(tail);
        } else {
            self.asm.emit(mov32_reg(R0, A));
            self.asm.emit(Insn::Exit);
        }
    }

    fn store_key(&mut self, key: i32) {
        let size = sift_ebpf::Size::W;
        self.asm.emit(Insn::Store { size, dst: R10, off: KEY, src: Operand::Imm(key) });
    }

    /// The exits used, in a fixed order, and the counting tail.
    pub fn exits(&mut self) {
        let exits = std::mem::take(&mut self.exits);
        let opts = self.opts;
        for (&o, &l) in &exits {
            self.asm.bind(l);
            let (value, matched) = match o {
                Outcome::Value(v) => (v, v != 0),
                Outcome::Match => (opts.on_match, true),
                Outcome::Miss => (opts.on_miss, false),
            };
            if opts.xsk && !opts.count {
                if matched {
                    self.redirect_xsk();
                    self.asm.emit(Insn::Exit);
                } else {
                    self.asm.ret(opts.on_miss);
                }
            } else if opts.xsk {
                // The verdict goes to the tail in w7; a match counts as matched only when its
                // redirect was taken (a socket sits at its queue), so the count is exactly the
                // frames handed to user space.
                let tail = self.tail();
                if matched {
                    self.redirect_xsk();
                    self.asm.emit(mov32_reg(A, R0));
                    self.store_key(0);
                    self.asm.jmp(Width::W32, Cond::Eq, R0, Operand::Imm(XDP_REDIRECT), tail);
                } else {
                    self.asm.emit(mov32(A, opts.on_miss));
                }
                self.store_key(1);
                self.asm.ja(tail);
            } else if opts.count {
                // Counting passes everything (raw mode still returns the value, from A), or
                // with AF_XDP sockets keeps the verdicts (the tail reads the key back).
                let tail = self.tail();
                if opts.raw {
                    self.asm.emit(mov32(A, value));
                }
                self.store_key(if matched { 0 } else { 1 });
                self.asm.ja(tail);
            } else {
                self.asm.ret(value);
            }
        }
        if let Some(tail) = self.tail {
            self.count_tail(tail);
        }
    }

    /// `counts[key] += 1` in the per-CPU array (map 0), then return `w7` (raw mode) or the
    /// match verdict.
    fn count_tail(&mut self, tail: Label) {
        let done = self.asm.label();
        self.asm.bind(tail);
        self.asm.emit(mov64_reg(R2, R10));
        self.asm.emit(alu64(EAlu::Add, R2, Operand::Imm(i32::from(KEY))));
        self.asm.emit(Insn::LdImm64 { dst: R1, kind: ImmKind::MapFd, imm: 0 });
        self.asm.emit(Insn::Call(CallTarget::Helper(id::MAP_LOOKUP_ELEM as i32)));
        self.asm.jmp(Width::W64, Cond::Eq, R0, Operand::Imm(0), done);
        let dw = sift_ebpf::Size::DW;
        self.asm.emit(ldx(dw, R1, R0, 0));
        self.asm.emit(alu64(EAlu::Add, R1, Operand::Imm(1)));
        self.asm.emit(Insn::Store { size: dw, dst: R0, off: 0, src: Operand::Reg(R1) });
        self.asm.bind(done);
        if self.opts.raw || self.opts.xsk {
            self.asm.emit(mov32_reg(R0, A));
            self.asm.emit(Insn::Exit);
        } else {
            self.asm.ret(self.opts.on_match);
        }
    }

    /// `r0 = bpf_redirect_map(&xsks, ctx->rx_queue_index, on_miss)`: the frame to the
    /// AF_XDP socket of its receive queue (`XDP_REDIRECT`), or the miss verdict when that queue
    /// has none.
    fn redirect_xsk(&mut self) {
        let map = u64::from(self.opts.count);
        self.asm.emit(ldx(sift_ebpf::Size::W, R2, CTX, sift_ebpf::xdp_md::RX_QUEUE_INDEX));
        self.asm.emit(Insn::LdImm64 { dst: R1, kind: ImmKind::MapFd, imm: map });
        self.asm.emit(mov32(R3, self.opts.on_miss));
        self.asm.emit(Insn::Call(CallTarget::Helper(id::REDIRECT_MAP as i32)));
    }

    pub(crate) fn steps(&self) -> Steps {
        self.steps
    }

    pub(crate) fn walk(&mut self, walk: &Walk, access: Access) {
        super::walk::lower(self, walk, access);
    }
}
