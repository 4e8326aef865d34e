//! Lowering eBPF to x86-64: every program of a VM into one piece of code, with one entry
//! stub and the shared routines (the calls into Rust, the unwinding exit).
//!
//! **Registers** are the kernel JIT's: `r0`=`rax`, `r1`=`rdi`, `r2`=`rsi`, `r3`=`rdx`,
//! `r4`=`rcx`, `r5`=`r8` (helper arguments are already where System V wants them),
//! `r6`=`rbx`, `r7`=`r13`, `r8`=`r14`, `r9`=`r15` (callee-saved, as eBPF's); `rbp` is the
//! *host* address of the current frame's top, and `r10`'s virtual value is
//! `rbp - stack_delta` wherever it is read as a value; `r12` points at the run context
//! ([`RunCx`](crate::runtime::RunCx)); `r9` holds the budget; `r10`, `r11` are scratch.
//!
//! **Memory.** `[r10 + off]` wholly inside the current frame is `[rbp + off]`, unchecked.
//! Every other access computes its virtual address in `r11` and checks it against the one
//! region the provenance guess ([`crate::prov`]) names — the stack, the context or input
//! memory, the packet window, or the values of the map the last slow access reached — inline:
//!
//! ```text
//! lea  r11, [base + off]
//! sub  r11, [r12 + region.base]
//! cmp  r11, [r12 + region.ok[size]]     ; ok_write for stores
//! jae  slow                             ; out of line: the Rust lookup of every region
//! add  r11, [r12 + region.host]
//! back:
//! mov  dst, [r11]
//! ```
//!
//! The stack's and the memory's virtual bases are constants, folded into the `lea`. A
//! counted loop checks its accesses once per entry instead ([`counted`]).
//!
//! **Frames.** Each function's prologue pushes `rbp` and those of `rbx`, `r13`, `r14`, `r15`
//! some program uses (`r6`–`r9`: the others are never written) and moves `rbp` down 512
//! bytes; `exit` pops them and returns. Program 0's first frame is entered from the entry
//! stub with the same pushes of the host's registers, so each is saved once per run. The
//! native stack stays 16-byte aligned in function bodies, so calls into Rust need no fix-up.
//! Faults and helper exits unwind to the entry stub through the `rsp` it saved.
//!
//! **Budget.** Checked code keeps what is left of the run's budget in `r9` and charges back
//! edges and calls with `sub r9, cost; jb fault`; every call into Rust stores it in the run
//! context first (where a fault or an exit leaves it), and the entry stub stores it at `exit`.

use sift_ebpf::EbpfInsn;
use sift_x86::{AluOp, Assembler, Cond, Label, Mem, Operand, Reg, Scale, ShiftOp, Size};

use crate::loops::{self, CountedLoop};
use crate::prov::{self, Prov};

mod arith;
mod counted;
use crate::runtime::{MAP, MEM, PACKET, STACK, action, asm_fault, delta, info, off};
use crate::{JitError, JitOptions};
use counted::{ExitCharge, region_delta};
use sift_ebpf_verifier::AccessBase;
use sift_ebpf_vm::memory::{MEM_BASE, STACK_BASE};

/// eBPF `r0`–`r9` in machine registers.
pub const REGS: [Reg; 10] = [
    Reg::Rax,
    Reg::Rdi,
    Reg::Rsi,
    Reg::Rdx,
    Reg::Rcx,
    Reg::R8,
    Reg::Rbx,
    Reg::R13,
    Reg::R14,
    Reg::R15,
];

/// The run context's register.
const CX: Reg = Reg::R12;
/// What is left of the run's budget (checked mode charges back edges and calls to it); in
/// the run context's `budget_left` while Rust runs.
const BUDGET: Reg = Reg::R9;
/// The callee-saved machine registers of eBPF `r6`–`r9`.
const CALLEE_SAVED: [Reg; 4] = [Reg::Rbx, Reg::R13, Reg::R14, Reg::R15];
/// The frame pointer (host address of the current frame's top).
const FP: Reg = Reg::Rbp;

/// The lowered code: bytes, the entry stub's offset and each program's body (tail-call
/// target) offset.
pub(crate) struct Lowered {
    pub code: Vec<u8>,
    pub entry: usize,
    pub bodies: Vec<usize>,
}

/// A program to lower: its slots, the first slot of each function, and for a verified
/// program the verifier's access bases (`Report::access_bases`).
pub(crate) struct Source<'a> {
    pub slots: &'a [EbpfInsn],
    pub functions: &'a [usize],
    pub bases: Option<&'a [Option<AccessBase>]>,
}

/// The labels of the slots jumps land on (and slot 0).
#[derive(Default)]
struct SlotLabels(std::collections::HashMap<usize, Label>);

impl SlotLabels {
    fn at(&self, pc: usize, t: usize, code: u8) -> Result<Label, JitError> {
        self.0.get(&t).copied().ok_or(JitError::Unsupported { pc, code })
    }
}

/// Where the jump at `pc` lands (not calls, not exits).
pub(crate) fn jump_target(pc: usize, i: &EbpfInsn) -> Option<usize> {
    let class = i.code & 7;
    if !(class == 5 || class == 6) || matches!(i.code & 0xf0, 0x80 | 0x90) {
        return None;
    }
    let off = if i.code == 0x06 { i64::from(i.imm) } else { i64::from(i.off) };
    usize::try_from(pc as i64 + 1 + off).ok()
}

/// Code placed after all programs.
enum Stub {
    /// The slow path of a checked access: recompute the address, ask Rust, go back.
    Slow { label: Label, back: Label, base: u8, off: i16, bits: u32 },
    /// A fault the code raises.
    Fault { label: Label, pc: usize, kind: u64 },
}

fn ctx(disp: i32) -> Mem {
    Mem::base(CX).disp(disp)
}

fn size_of_log(k: u32) -> Size {
    [Size::Byte, Size::Word, Size::Dword, Size::Qword][k as usize]
}

struct Lower<'o> {
    asm: Assembler,
    opts: &'o JitOptions,
    stubs: Vec<Stub>,
    unwind: Label,
    raise: Label,
    rt_common: Label,
    helper_common: Label,
    key: u64,
    /// The verifier's base of the access being lowered (verified programs).
    base: Option<AccessBase>,
    /// Whether back edges and calls are charged to the budget (checked mode, unverified
    /// programs).
    charging: bool,
    /// The callee-saved registers of `r6`–`r9` that some program uses: the only ones a frame
    /// saves (the others keep the host's values throughout).
    saved: Vec<Reg>,
    /// While a counted loop's copy is lowered: its head slot and the copy's head label
    /// (the back edge's target).
    head: Option<(usize, Label)>,
    /// While a counted loop's unchecked copy is lowered: the accesses its entry checked,
    /// with their regions.
    hoisted: Vec<(usize, usize)>,
    /// Whether `r10` holds the hoisted accesses' delta through the unchecked copy (one
    /// region, and nothing in the loop uses `r10`).
    delta_in_r10: bool,
    /// The no-ops before each unchecked loop copy ([`LOOP_ALIGN`]), and where they start.
    pads: Vec<usize>,
    pad_points: Vec<Label>,
    /// While an unchecked loop copy that charges its iterations when it ends is lowered
    /// (see [`ExitCharge`]): how, and the exits taken so far (label, slot, target).
    exit_charge: Option<ExitCharge>,
    exits: Vec<(Label, usize, Label)>,
}

type R = Result<(), JitError>;

/// Unchecked loop copies start at this alignment (their speed depends on where they sit).
const LOOP_ALIGN: usize = 64;

pub(crate) fn lower(programs: &[Source<'_>], opts: &JitOptions) -> Result<Lowered, JitError> {
    // Jumps are sized when the code is finished, so the no-ops that align the unchecked
    // loop copies come from the previous pass's layout: a few passes, only for programs
    // with such loops (usually two).
    let mut pads = Vec::new();
    for _ in 0..4 {
        let (lowered, pad_at) = lower_pass(programs, opts, &pads)?;
        let want: Vec<usize> = pad_at
            .iter()
            .zip(pads.iter().chain(std::iter::repeat(&0)))
            .map(|(&at, _)| (LOOP_ALIGN - at % LOOP_ALIGN) % LOOP_ALIGN)
            .collect();
        if want == pads || pad_at.is_empty() {
            return Ok(lowered);
        }
        pads = want;
    }
    Ok(lower_pass(programs, opts, &pads)?.0)
}

/// One lowering, with `pads[k]` bytes of no-ops before the `k`th unchecked loop copy; also
/// returns where each copy's no-ops start.
fn lower_pass(
    programs: &[Source<'_>],
    opts: &JitOptions,
    pads: &[usize],
) -> Result<(Lowered, Vec<usize>), JitError> {
    let total: usize = programs.iter().map(|p| p.slots.len()).sum();
    let mut asm = Assembler::with_capacity(total * 16 + 512);
    let unwind = asm.new_label();
    let raise = asm.new_label();
    let rt_common = asm.new_label();
    let helper_common = asm.new_label();
    let key = if opts.blinding { random_seed() } else { 0 };
    let mut l = Lower {
        asm,
        opts,
        stubs: Vec::new(),
        unwind,
        raise,
        rt_common,
        helper_common,
        key,
        base: None,
        charging: opts.checked,
        saved: used_callee_saved(programs),
        head: None,
        hoisted: Vec::new(),
        delta_in_r10: false,
        pads: pads.to_vec(),
        pad_points: Vec::new(),
        exit_charge: None,
        exits: Vec::new(),
    };
    // Labels: each program's function prologues and slots.
    let mut func_labels = Vec::new();
    let mut slot_labels = Vec::new();
    // Counted loops (checked code; with blinding the entry checks would show immediates).
    let counted: Vec<Vec<CountedLoop>> = programs
        .iter()
        .map(|p| {
            if opts.checked && !opts.blinding && p.bases.is_none() {
                loops::find(p.slots, p.functions)
            } else {
                Vec::new()
            }
        })
        .collect();
    for (p, counted) in programs.iter().zip(&counted) {
        func_labels.push(p.functions.iter().map(|_| l.asm.new_label()).collect::<Vec<_>>());
        // Labels only where jumps land (and at each program's body, the tail-call target).
        let mut targets = SlotLabels::default();
        targets.0.insert(0, l.asm.new_label());
        for (pc, i) in p.slots.iter().enumerate() {
            if let Some(t) = jump_target(pc, i) {
                targets.0.entry(t).or_insert_with(|| l.asm.new_label());
            }
        }
        // The unchecked copy of a counted loop leaves it by a jump past the back edge.
        for c in counted {
            targets.0.entry(c.back + 1).or_insert_with(|| l.asm.new_label());
        }
        slot_labels.push(targets);
    }
    let main_body = slot_labels[0].0[&0];
    l.entry(main_body)?;
    l.shared()?;
    for (k, p) in programs.iter().enumerate() {
        let guesses = prov::analyze(p.slots, p.functions);
        // The verifier bounds a verified program's loops: nothing to charge.
        l.charging = opts.checked && p.bases.is_none();
        let fl = &func_labels[k];
        let sl = &slot_labels[k];
        let mut pc = 0;
        while pc < p.slots.len() {
            if let Ok(f) = p.functions.binary_search(&pc) {
                l.asm.bind(fl[f])?;
                l.prologue()?;
            }
            if let Some(&label) = sl.0.get(&pc) {
                l.asm.bind(label)?;
            }
            if let Some(c) = counted[k].iter().find(|c| c.head == pc) {
                l.counted_loop(c, p, &guesses, sl, fl)?;
                pc = c.back + 1;
                continue;
            }
            pc = l.slot(pc, p, &guesses, sl, fl)?;
        }
    }
    l.emit_stubs()?;
    let body_labels: Vec<Label> = slot_labels.iter().map(|s| s.0[&0]).collect();
    let pad_points = std::mem::take(&mut l.pad_points);
    let done = l.asm.finish()?;
    let bodies = body_labels.iter().map(|&b| done.label_offset(b).unwrap_or(0)).collect();
    if done.code.len() > opts.max_code_bytes {
        return Err(JitError::TooComplex { limit: opts.max_code_bytes });
    }
    let pad_at = pad_points.iter().map(|&p| done.label_offset(p).unwrap_or(0)).collect();
    Ok((Lowered { code: done.code, entry: 0, bodies }, pad_at))
}

/// The machine registers of `r6`–`r9` that any instruction of any program names (as either
/// register field: a superset of those written), in [`CALLEE_SAVED`] order. A frame saves
/// only these: tail-called programs run in their caller's frame, so the set is the same for
/// every program.
fn used_callee_saved(programs: &[Source<'_>]) -> Vec<Reg> {
    let mut used = [false; 4];
    for p in programs {
        for i in p.slots {
            for r in [i.dst & 0xf, i.src & 0xf] {
                // Register fields past r9 are clamped to r9 where a register is written.
                match r {
                    6..=9 => used[usize::from(r - 6)] = true,
                    10.. => used[3] = true,
                    _ => {}
                }
            }
        }
    }
    CALLEE_SAVED.iter().zip(used).filter(|(_, u)| *u).map(|(r, _)| *r).collect()
}

/// A random 64-bit seed for constant blinding (the standard library's hasher keys).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x5eed);
    h.finish() | 1
}

impl Lower<'_> {
    /// The entry stub: `(ctx, r1, r2, host top)`. It saves `r12` and calls
    /// program 0's entry frame, which saves `rbp` and the used callee-saved registers
    /// ([`Lower::saved`]) as any function's prologue does, with the host's values, then sets
    /// the frame pointer, zeroes the eBPF registers the interpreter zeroes and runs the body:
    /// each register is saved once. `exit` returns here through the ordinary epilogue; an
    /// unwind (fault, helper exit) restores the entry frame's saves from their slots.
    fn entry(&mut self, main_body: Label) -> R {
        let saved = self.saved.clone();
        let pad = self.pad();
        let main_entry = self.asm.new_label();
        let a = &mut self.asm;
        a.push(CX)?;
        a.mov(Size::Qword, CX, Reg::Rdi)?;
        // Stored only when it changed (it rarely does: a run's fixed cost is mostly stores).
        let same_rsp = a.new_label();
        a.cmp(Size::Qword, ctx(off::SAVED_RSP), Reg::Rsp)?;
        a.jcc(Cond::E, same_rsp)?;
        a.mov(Size::Qword, ctx(off::SAVED_RSP), Reg::Rsp)?;
        a.bind(same_rsp)?;
        a.mov(Size::Qword, BUDGET, ctx(off::BUDGET_START))?;
        a.mov(Size::Qword, Reg::Rdi, Reg::Rsi)?;
        a.mov(Size::Qword, Reg::Rsi, Reg::Rdx)?;
        a.call(main_entry)?;
        // `exit`: r0 in rax, what is left of the budget in rdx.
        a.mov(Size::Qword, Reg::Rdx, BUDGET)?;
        a.pop(CX)?;
        a.ret();
        // Unwinding: the budget is in the context already (stored before every call into
        // Rust and by `raise`).
        a.bind(self.unwind)?;
        a.mov(Size::Qword, Reg::Rax, ctx(off::RET))?;
        a.mov(Size::Qword, Reg::Rsp, ctx(off::SAVED_RSP))?;
        // The entry frame's saves are below the return address into the stub.
        let slots = 2 + saved.len() + usize::from(pad);
        a.sub(Size::Qword, Reg::Rsp, (8 * slots) as i32)?;
        self.restore_frame()?;
        let a = &mut self.asm;
        a.add(Size::Qword, Reg::Rsp, 8)?;
        a.pop(CX)?;
        a.ret();
        a.bind(main_entry)?;
        self.save_frame()?;
        let a = &mut self.asm;
        a.mov(Size::Qword, FP, Reg::Rcx)?;
        for r in [Reg::Rax, Reg::Rdx, Reg::Rcx, Reg::R8].iter().chain(&saved) {
            a.xor(Size::Dword, *r, *r)?;
        }
        a.jmp(main_body)?;
        Ok(())
    }

    /// Whether a frame pads its saves to keep `rsp` 16-byte aligned in function bodies
    /// (the return address, `rbp` and the saved registers: an even count needs no pad).
    fn pad(&self) -> bool {
        self.saved.len() % 2 == 1
    }

    /// A function's saves: `rbp`, the used callee-saved registers, the pad.
    fn save_frame(&mut self) -> R {
        self.asm.push(FP)?;
        for &r in &self.saved {
            self.asm.push(r)?;
        }
        if self.pad() {
            self.asm.lea(Size::Qword, Reg::Rsp, Mem::base(Reg::Rsp).disp(-8))?;
        }
        Ok(())
    }

    /// Undoes [`Lower::save_frame`] (not the return).
    fn restore_frame(&mut self) -> R {
        if self.pad() {
            self.asm.lea(Size::Qword, Reg::Rsp, Mem::base(Reg::Rsp).disp(8))?;
        }
        for &r in self.saved.iter().rev() {
            self.asm.pop(r)?;
        }
        self.asm.pop(FP)?;
        Ok(())
    }

    /// Lowers slot `pc` of `p`; returns the next slot.
    fn slot(
        &mut self,
        pc: usize,
        p: &Source<'_>,
        guesses: &[Option<Prov>],
        sl: &SlotLabels,
        fl: &[Label],
    ) -> Result<usize, JitError> {
        let i = p.slots[pc];
        let next = p.slots.get(pc + 1).copied();
        // `dst = a; dst += b` (a pointer plus an index, as clang computes addresses) is one
        // `lea` when nothing lands between the two.
        if let Some(n) = next
            && i.code == 0xbf
            && i.off == 0
            && n.code == 0x0f
            && n.dst == i.dst
            && i.dst < 10
            && i.src < 10
            && n.src < 10
            && i.src != i.dst
            && !sl.0.contains_key(&(pc + 1))
            && p.functions.binary_search(&(pc + 1)).is_err()
        {
            let b = if n.src == i.dst { i.src } else { n.src };
            let (dst, a, b) =
                (REGS[usize::from(i.dst)], REGS[usize::from(i.src)], REGS[usize::from(b)]);
            self.asm.lea(Size::Qword, dst, Mem::base(a).index(b, Scale::X1))?;
            return Ok(pc + 2);
        }
        self.base = p.bases.and_then(|b| b.get(pc).copied().flatten());
        self.insn(pc, i, next, guesses[pc], sl, fl, p.functions)?;
        if self.asm.instructions() > self.opts.max_machine_insns {
            return Err(JitError::TooComplex { limit: self.opts.max_machine_insns });
        }
        // The second half of lddw is no instruction (nothing jumps there: load checks).
        Ok(pc + if i.code == 0x18 { 2 } else { 1 })
    }

    /// The shared routines: raising a fault, calling Rust for an access or a legacy load,
    /// calling a helper.
    fn shared(&mut self) -> R {
        let a = &mut self.asm;
        // raise: r11 = slot, r10 = kind.
        a.bind(self.raise)?;
        a.mov(Size::Qword, ctx(off::BUDGET), BUDGET)?;
        a.mov(Size::Qword, ctx(off::PC), Reg::R11)?;
        a.mov(Size::Qword, ctx(off::ASM_FAULT), Reg::R10)?;
        a.mov(Size::Qword, ctx(off::ACTION), action::ASM_FAULT as i32)?;
        a.jmp(self.unwind)?;
        // rt_common: r11 = argument, r10 = info bits; returns r11 = result. Saves the eBPF
        // registers Rust may clobber.
        a.bind(self.rt_common)?;
        // Seven pushes keep the call aligned; the budget goes to the context too (an
        // unwind reads it there).
        let saved = [Reg::Rax, Reg::Rdi, Reg::Rsi, Reg::Rdx, Reg::Rcx, Reg::R8, BUDGET];
        for r in saved {
            a.push(r)?;
        }
        a.mov(Size::Qword, ctx(off::BUDGET), BUDGET)?;
        a.mov(Size::Qword, Reg::Rdi, CX)?;
        a.mov(Size::Qword, Reg::Rsi, Reg::R11)?;
        a.mov(Size::Qword, Reg::Rdx, Reg::R10)?;
        a.call_indirect(ctx(off::RT_FN))?;
        a.mov(Size::Qword, Reg::R11, Reg::Rax)?;
        for r in saved.iter().rev() {
            a.pop(*r)?;
        }
        a.cmp(Size::Qword, ctx(off::ACTION), 0)?;
        a.jcc(Cond::Ne, self.unwind)?;
        a.ret();
        // helper_common: r10 = target, r11 = slot; r1-r5 are the arguments and survive.
        a.bind(self.helper_common)?;
        a.mov(Size::Qword, ctx(off::HELPER_TARGET), Reg::R10)?;
        a.mov(Size::Qword, ctx(off::PC), Reg::R11)?;
        a.mov(Size::Qword, ctx(off::SAVED_R0), Reg::Rax)?;
        a.mov(Size::Qword, ctx(off::BUDGET), BUDGET)?;
        let args = [Reg::Rdi, Reg::Rsi, Reg::Rdx, Reg::Rcx, Reg::R8];
        for r in args {
            a.push(r)?;
        }
        a.mov(Size::Qword, Reg::R9, CX)?;
        a.call_indirect(ctx(off::HELPER_FN))?;
        for r in args.iter().rev() {
            a.pop(*r)?;
        }
        a.mov(Size::Qword, BUDGET, ctx(off::BUDGET))?;
        a.mov(Size::Qword, Reg::R11, ctx(off::ACTION))?;
        a.test(Size::Qword, Reg::R11, Reg::R11)?;
        let act = a.new_label();
        a.jcc(Cond::Ne, act)?;
        a.ret();
        a.bind(act)?;
        a.cmp(Size::Qword, Reg::R11, action::TAIL as i32)?;
        a.jcc(Cond::Ne, self.unwind)?;
        // A tail call: the target program's body runs in the caller's frame.
        a.mov(Size::Qword, ctx(off::ACTION), action::CONTINUE as i32)?;
        a.add(Size::Qword, Reg::Rsp, 8)?;
        a.jmp_indirect(ctx(off::TAIL_TARGET))?;
        Ok(())
    }

    fn prologue(&mut self) -> R {
        self.save_frame()?;
        self.asm.sub(Size::Qword, FP, 512)?;
        Ok(())
    }

    fn epilogue(&mut self) -> R {
        self.restore_frame()?;
        self.asm.ret();
        Ok(())
    }

    /// `r10`'s virtual value into `scratch`.
    fn frame_value(&mut self, scratch: Reg) -> R {
        self.asm.mov(Size::Qword, scratch, FP)?;
        self.asm.sub(Size::Qword, scratch, ctx(off::STACK_DELTA))?;
        Ok(())
    }

    /// eBPF register `r` as a source: its machine register, or `r10`'s value in `scratch`.
    fn src(&mut self, r: u8, scratch: Reg) -> Result<Reg, JitError> {
        if r >= 10 {
            self.frame_value(scratch)?;
            Ok(scratch)
        } else {
            Ok(REGS[r as usize])
        }
    }

    /// An immediate operand: itself, or blinded into `scratch` (`(imm ^ k) ^ k`).
    fn imm(&mut self, v: i32, size: Size, scratch: Reg) -> Result<Operand, JitError> {
        if !self.opts.blinding {
            return Ok(Operand::Imm(i64::from(v)));
        }
        let k = self.next_key() as i32;
        let op = if size == Size::Qword { Size::Qword } else { Size::Dword };
        self.asm.mov(op, scratch, i64::from(v ^ k))?;
        self.asm.xor(op, scratch, i64::from(k))?;
        Ok(Operand::Reg(scratch))
    }

    fn next_key(&mut self) -> u64 {
        // xorshift64*
        self.key ^= self.key >> 12;
        self.key ^= self.key << 25;
        self.key ^= self.key >> 27;
        self.key.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The virtual address `base + off` into `r11`.
    fn vaddr(&mut self, base: u8, disp: i16) -> R {
        if base >= 10 {
            self.asm.lea(Size::Qword, Reg::R11, Mem::base(FP).disp(i32::from(disp)))?;
            self.asm.sub(Size::Qword, Reg::R11, ctx(off::STACK_DELTA))?;
        } else if disp == 0 {
            self.asm.mov(Size::Qword, Reg::R11, REGS[base as usize])?;
        } else {
            let b = REGS[base as usize];
            self.asm.lea(Size::Qword, Reg::R11, Mem::base(b).disp(i32::from(disp)))?;
        }
        Ok(())
    }

    /// The memory operand of an access of `1 << k` bytes at `base + disp` (checked), at
    /// slot `pc`: `[rbp + disp]` inside the current frame, else `[r11]` after the check.
    fn access(
        &mut self,
        pc: usize,
        base: u8,
        disp: i16,
        k: u32,
        write: bool,
        guess: Option<Prov>,
    ) -> Result<Mem, JitError> {
        self.access_rmw(pc, base, disp, k, write, false, guess)
    }

    /// [`Lower::access`], for an atomic when `atomic` (read, then written).
    #[allow(clippy::too_many_arguments)]
    fn access_rmw(
        &mut self,
        pc: usize,
        base: u8,
        disp: i16,
        k: u32,
        write: bool,
        atomic: bool,
        guess: Option<Prov>,
    ) -> Result<Mem, JitError> {
        let size = 1i32 << k;
        let d = i32::from(disp);
        if base >= 10 && d >= -512 && d + size <= 0 {
            return Ok(Mem::base(FP).disp(d));
        }
        // In a counted loop's unchecked copy: the loop's entry checked this access's range.
        if let Some(&(_, region)) = self.hoisted.iter().find(|(at, _)| *at == pc) {
            if self.delta_in_r10 {
                return Ok(Mem::base(REGS[base as usize]).index(Reg::R10, Scale::X1).disp(d));
            }
            self.asm.mov(Size::Qword, Reg::R11, ctx(off::delta(region_delta(region))))?;
            return Ok(Mem::base(REGS[base as usize]).index(Reg::R11, Scale::X1).disp(d));
        }
        // Verified: the verifier proved the access inside the region its base points into,
        // whose host address is the virtual one plus the region's delta. (Context stores
        // stay checked: the VM's XDP context is read-only.)
        let verified = match self.base {
            Some(AccessBase::Stack) => Some(delta::STACK),
            Some(AccessBase::Ctx) if !write => Some(delta::CTX),
            Some(AccessBase::Packet | AccessBase::PacketMeta) => Some(delta::PACKET),
            Some(AccessBase::MapValue(i)) if (i as usize) < delta::MAX_MAPS => {
                Some(delta::MAPS + i as usize)
            }
            _ => None,
        };
        if let Some(r) = verified
            && base < 10
        {
            self.asm.mov(Size::Qword, Reg::R11, ctx(off::delta(r)))?;
            if atomic {
                // The atomics' loops may write the base register: the address goes in r11.
                self.asm.add(Size::Qword, Reg::R11, REGS[base as usize])?;
                return Ok(Mem::base(Reg::R11).disp(d));
            }
            return Ok(Mem::base(REGS[base as usize]).index(Reg::R11, Scale::X1).disp(d));
        }
        let bits = ((pc as u32) << info::PC_SHIFT)
            | (k << info::SIZE_SHIFT)
            | if write { info::WRITE } else { 0 }
            | if atomic { info::ATOMIC } else { 0 };
        let region = match guess.unwrap_or(Prov::Unknown) {
            _ if base >= 10 => STACK,
            Prov::Stack => STACK,
            Prov::Mem | Prov::Unknown => MEM,
            Prov::Packet => PACKET,
            Prov::Map => MAP,
        };
        let ok = if write { off::OK_WRITE } else { off::OK };
        let rb = off::region(region);
        let slow = self.asm.new_label();
        let back = self.asm.new_label();
        // The offset into the region: the stack's and the memory's virtual bases are
        // constants, folded into the address computation.
        let fixed = match region {
            STACK => Some(STACK_BASE),
            MEM => Some(MEM_BASE),
            _ => None,
        };
        match fixed {
            Some(b) if base < 10 => {
                let d = i64::from(disp) - b as i64;
                self.asm.lea(
                    Size::Qword,
                    Reg::R11,
                    Mem::base(REGS[base as usize]).disp(d as i32),
                )?;
            }
            _ => {
                self.vaddr(base, disp)?;
                self.asm.sub(Size::Qword, Reg::R11, ctx(rb + off::BASE))?;
            }
        }
        self.asm.cmp(Size::Qword, Reg::R11, ctx(rb + ok + 8 * k as i32))?;
        self.asm.jcc(Cond::Ae, slow)?;
        self.asm.add(Size::Qword, Reg::R11, ctx(rb + off::HOST))?;
        self.asm.bind(back)?;
        self.stubs.push(Stub::Slow { label: slow, back, base, off: disp, bits });
        Ok(Mem::base(Reg::R11))
    }

    fn fault_stub(&mut self, pc: usize, kind: u64) -> Label {
        let label = self.asm.new_label();
        self.stubs.push(Stub::Fault { label, pc, kind });
        label
    }

    /// Charges `cost` to the budget (checked mode), faulting at `pc` when it runs out.
    fn charge(&mut self, pc: usize, cost: u64) -> R {
        if !self.charging {
            return Ok(());
        }
        let stub = self.fault_stub(pc, asm_fault::BUDGET);
        self.asm.sub(Size::Qword, BUDGET, cost.min(i32::MAX as u64) as i32)?;
        self.asm.jcc(Cond::B, stub)?;
        Ok(())
    }

    fn emit_stubs(&mut self) -> R {
        for stub in std::mem::take(&mut self.stubs) {
            match stub {
                Stub::Slow { label, back, base, off, bits } => {
                    self.asm.bind(label)?;
                    self.vaddr(base, off)?;
                    self.asm.mov(Size::Dword, Reg::R10, bits)?;
                    self.asm.call(self.rt_common)?;
                    self.asm.jmp(back)?;
                }
                Stub::Fault { label, pc, kind } => {
                    self.asm.bind(label)?;
                    self.asm.mov(Size::Dword, Reg::R11, pc as u32)?;
                    self.asm.mov(Size::Dword, Reg::R10, kind as u32)?;
                    self.asm.jmp(self.raise)?;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn insn(
        &mut self,
        pc: usize,
        i: EbpfInsn,
        next: Option<EbpfInsn>,
        guess: Option<Prov>,
        slots: &SlotLabels,
        funcs: &[Label],
        starts: &[usize],
    ) -> R {
        let d = i.dst & 0xf;
        let s = i.src & 0xf;
        let class = i.code & 7;
        match class {
            4 | 7 => self.alu(i, if class == 7 { Size::Qword } else { Size::Dword }),
            // ldx, ldxs
            1 => {
                let k = u32::from((i.code >> 3) & 3);
                let k = [2, 1, 0, 3][k as usize];
                let m = self.access(pc, s, i.off, k, false, guess)?;
                let dst = REGS[usize::from(d)];
                let sx = i.code & 0xe0 == 0x80;
                match (k, sx) {
                    (0, false) => self.asm.movzx(Size::Dword, dst, Size::Byte, m)?,
                    (1, false) => self.asm.movzx(Size::Dword, dst, Size::Word, m)?,
                    (2, false) => self.asm.mov(Size::Dword, dst, m)?,
                    (3, _) => self.asm.mov(Size::Qword, dst, m)?,
                    (0, true) => self.asm.movsx(Size::Qword, dst, Size::Byte, m)?,
                    (1, true) => self.asm.movsx(Size::Qword, dst, Size::Word, m)?,
                    (_, true) => self.asm.movsxd(dst, m)?,
                    _ => return Err(JitError::Unsupported { pc, code: i.code }),
                }
                Ok(())
            }
            // st, stx, atomics
            2 | 3 => {
                let k = [2, 1, 0, 3][usize::from((i.code >> 3) & 3)];
                let size = size_of_log(k);
                let atomic = i.code & 0xe0 == 0xc0;
                let m = self.access_rmw(pc, d, i.off, k, true, atomic, guess)?;
                match i.code & 0xe0 {
                    0x60 if class == 2 => {
                        // The stored bytes are the immediate's low ones.
                        let v = match size {
                            Size::Byte => i32::from(i.imm as i8),
                            Size::Word => i32::from(i.imm as i16),
                            _ => i.imm,
                        };
                        let v = self.imm(v, size, Reg::R10)?;
                        self.asm.mov(size, m, v)?;
                    }
                    0x60 => {
                        let v = self.src(s, Reg::R10)?;
                        self.asm.mov(size, m, v)?;
                    }
                    0xc0 if class == 3 && k >= 2 => self.atomic(i, size, m)?,
                    _ => return Err(JitError::Unsupported { pc, code: i.code }),
                }
                Ok(())
            }
            0 if matches!(i.code, 0x20 | 0x28 | 0x30 | 0x40 | 0x48 | 0x50) => self.legacy(pc, i),
            0 => {
                // lddw (and its pseudo forms, with the interpreter's values).
                if i.code != 0x18 {
                    return Err(JitError::Unsupported { pc, code: i.code });
                }
                let hi = u64::from(next.map_or(0, |n| n.imm as u32));
                let lo = u64::from(i.imm as u32);
                let v = match i.src {
                    0 => lo | (hi << 32),
                    1 | 5 => sift_ebpf_vm::maps::MAP_HANDLE_BASE + lo,
                    _ => sift_ebpf_vm::maps::MAP_BASE + (lo << 32) + hi,
                };
                let dst = REGS[usize::from(d)];
                if self.opts.blinding {
                    let k = self.next_key();
                    self.asm.mov(Size::Qword, dst, (v ^ k) as i64)?;
                    self.asm.mov(Size::Qword, Reg::R11, k as i64)?;
                    self.asm.xor(Size::Qword, dst, Reg::R11)?;
                } else {
                    self.asm.mov(Size::Qword, dst, v as i64)?;
                }
                Ok(())
            }
            _ => self.jmp(pc, i, slots, funcs, starts),
        }
    }

    fn jmp(
        &mut self,
        pc: usize,
        i: EbpfInsn,
        slots: &SlotLabels,
        funcs: &[Label],
        starts: &[usize],
    ) -> R {
        let d = i.dst & 0xf;
        let s = i.src & 0xf;
        let size = if i.code & 7 == 6 { Size::Dword } else { Size::Qword };
        let target_of = |off: i64| (pc as i64 + 1 + off) as usize;
        match i.code {
            0x05 | 0x06 => {
                let off = if i.code == 0x06 { i64::from(i.imm) } else { i64::from(i.off) };
                let t = target_of(off);
                if t <= pc {
                    self.charge(pc, (pc - t + 1) as u64)?;
                }
                let target = self.target(slots, pc, t, i.code)?;
                self.asm.jmp(target)?;
                return Ok(());
            }
            0x95 => return self.epilogue(),
            0x85 if i.src == 1 => {
                let t = target_of(i64::from(i.imm));
                let f = starts
                    .binary_search(&t)
                    .map_err(|_| JitError::Unsupported { pc, code: i.code })?;
                let deep = self.fault_stub(pc, asm_fault::CALL_DEPTH);
                self.asm.cmp(Size::Qword, FP, ctx(off::MIN_FP))?;
                self.asm.jcc(Cond::B, deep)?;
                self.charge(pc, 1)?;
                self.asm.call(funcs[f])?;
                return Ok(());
            }
            0x85 | 0x8d => {
                if i.code == 0x85 {
                    self.asm.mov(Size::Qword, Reg::R10, i64::from(i.imm as u32))?;
                } else if d >= 10 {
                    self.frame_value(Reg::R10)?;
                } else {
                    self.asm.mov(Size::Qword, Reg::R10, REGS[usize::from(d)])?;
                }
                self.asm.mov(Size::Dword, Reg::R11, pc as u32)?;
                self.asm.call(self.helper_common)?;
                return Ok(());
            }
            _ => {}
        }
        let op = i.code & 0xf0;
        let cond = match op {
            0x10 => Cond::E,
            0x20 => Cond::A,
            0x30 => Cond::Ae,
            0x40 | 0x50 => Cond::Ne,
            0x60 => Cond::G,
            0x70 => Cond::Ge,
            0xa0 => Cond::B,
            0xb0 => Cond::Be,
            0xc0 => Cond::L,
            0xd0 => Cond::Le,
            _ => return Err(JitError::Unsupported { pc, code: i.code }),
        };
        let lhs = self.src(d, Reg::R11)?;
        let rhs = if i.code & 0x08 != 0 {
            Operand::Reg(self.src(s, Reg::R10)?)
        } else {
            self.imm(i.imm, size, Reg::R10)?
        };
        let t = target_of(i64::from(i.off));
        let target = self.target(slots, pc, t, i.code)?;
        // The unchecked copy's back edge: its entry checked that the budget covers every
        // iteration, so the span is charged before the test without a check and given back
        // when the loop ends here (what is left is as if charged when taken).
        let fast_back = t <= pc
            && self.charging
            && !self.hoisted.is_empty()
            && self.head.is_some_and(|(h, _)| h == t);
        let span = (pc.saturating_sub(t) + 1).min(i32::MAX as usize) as i32;
        if fast_back && self.exit_charge.is_some() {
            // Nothing charged here: the exits charge the iterations.
            if op == 0x40 {
                self.asm.test(size, lhs, rhs)?;
            } else {
                self.asm.cmp(size, lhs, rhs)?;
            }
            self.asm.jcc(cond, target)?;
            return self.charge_iterations(pc);
        }
        if fast_back {
            self.asm.sub(Size::Qword, BUDGET, span)?;
        }
        if op == 0x40 {
            self.asm.test(size, lhs, rhs)?;
        } else {
            self.asm.cmp(size, lhs, rhs)?;
        }
        if fast_back {
            self.asm.jcc(cond, target)?;
            self.asm.add(Size::Qword, BUDGET, span)?;
            return Ok(());
        }
        if t <= pc && self.charging {
            // Taken: charge the loop's span, and jump back unless the budget ran out.
            let skip = self.asm.new_label();
            self.asm.jcc(cond.negate(), skip)?;
            let stub = self.fault_stub(pc, asm_fault::BUDGET);
            self.asm.sub(Size::Qword, BUDGET, (pc - t + 1).min(i32::MAX as usize) as i32)?;
            self.asm.jcc(Cond::Ae, target)?;
            self.asm.jmp(stub)?;
            self.asm.bind(skip)?;
        } else {
            self.asm.jcc(cond, target)?;
        }
        Ok(())
    }

    /// The label of slot `t`: the current loop copy's head for its head; an exit that
    /// charges the iterations first for the exits of an [`ExitCharge`] copy.
    fn target(
        &mut self,
        slots: &SlotLabels,
        pc: usize,
        t: usize,
        code: u8,
    ) -> Result<Label, JitError> {
        match self.head {
            Some((head, label)) if head == t => Ok(label),
            _ => {
                let label = slots.at(pc, t, code)?;
                match self.exit_charge {
                    Some(e) if t > e.back => {
                        let exit = self.asm.new_label();
                        self.exits.push((exit, pc, label));
                        Ok(exit)
                    }
                    _ => Ok(label),
                }
            }
        }
    }

    /// Legacy packet loads (`ld_abs`, `ld_ind`): the offset in `r11`, the load in Rust.
    fn legacy(&mut self, pc: usize, i: EbpfInsn) -> R {
        let k = match i.code & 0x18 {
            0x00 => 2,
            0x08 => 1,
            _ => 0,
        };
        if i.code & 0xe0 == 0x40 {
            let s = self.src(i.src & 0xf, Reg::R11)?;
            self.asm.mov(Size::Dword, Reg::R11, s)?;
            self.asm.add(Size::Qword, Reg::R11, i64::from(i.imm))?;
        } else {
            self.asm.mov(Size::Qword, Reg::R11, i64::from(i.imm))?;
        }
        let bits = ((pc as u32) << info::PC_SHIFT) | (k << info::SIZE_SHIFT) | info::LEGACY;
        self.asm.mov(Size::Dword, Reg::R10, bits)?;
        self.asm.call(self.rt_common)?;
        self.asm.mov(Size::Qword, Reg::Rax, Reg::R11)?;
        Ok(())
    }
}
