//! Lowering a validated program to machine code, and laying out its jumps.
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
//! Each classic instruction becomes straight-line code plus symbolic jumps (to another
//! instruction or to the shared "return 0" exit). Layout then picks the short (rel8) or near
//! (rel32) form of every jump: it starts with all jumps short and lengthens any whose target is
//! out of reach, repeating until nothing changes. Lengthening only moves code apart, so each
//! pass can only lengthen more jumps and the loop ends after at most one pass per jump (in
//! practice two or three passes): it is a fixed point by construction.

use sift_insn::{Insn, Opcode, code};
use sift_verify::Validated;

use crate::x64::{Addr, AluOp, Asm, cc};

/// A jump destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The code of classic instruction `n`.
    Insn(usize),
    /// The shared `return 0` exit.
    Reject,
}

/// A piece of the output: bytes, or a jump still to be sized.
enum Piece {
    Code(Vec<u8>),
    /// `cond` is a condition code, or `None` for an unconditional `jmp`.
    Jump {
        cond: Option<u8>,
        target: Target,
    },
    Label(Target),
}

/// What lowering found out about the program, for the caller's reports.
pub(crate) struct Lowered {
    pub code: Vec<u8>,
}

/// A length no packet has: "every path from here returns 0".
const NEVER: u64 = u64::MAX;

/// For each instruction, a captured length below which every path from it returns 0
/// ([`NEVER`] when every path returns 0 whatever the length). Backward over the DAG of a
/// validated program (jumps only go forward).
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
            Opcode::Ja => at(&need, next + insn.k as usize),
            op if op.is_conditional_jump() => {
                at(&need, next + usize::from(insn.jt)).min(at(&need, next + usize::from(insn.jf)))
            }
            _ => at(&need, next),
        };
    }
    need
}

/// Where to put length checks: `Some(L)` at instruction `i` means "check `caplen >= L` on
/// entry to `i`"; [`NEVER`] means "return 0 at once".
fn plan_checks(insns: &[Insn]) -> Vec<Option<u64>> {
    let need = required_lengths(insns);
    let n = insns.len();
    // The length already checked on every path into each instruction (only forward edges).
    let mut checked_in = vec![NEVER; n + 1];
    if n > 0 {
        checked_in[0] = 0;
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

/// Lowers `prog`. Every classic opcode is supported; the result is position-independent.
pub(crate) fn lower(prog: &Validated) -> Lowered {
    let insns = prog.insns();
    let plan = plan_checks(insns);
    let frame = insns
        .iter()
        .any(|i| matches!(i.opcode(), Opcode::LdMem | Opcode::LdxMem | Opcode::St | Opcode::Stx));
    let mut pieces = Vec::with_capacity(insns.len() * 3);
    let mut asm = Asm::default();
    asm.zero_a();
    asm.zero_x();
    asm.save_wire_len();
    if frame {
        asm.enter_frame();
    }
    flush(&mut pieces, &mut asm);
    for (i, insn) in insns.iter().enumerate() {
        pieces.push(Piece::Label(Target::Insn(i)));
        match plan[i] {
            Some(NEVER) => {
                jump(&mut pieces, &mut asm, None, Target::Reject);
                continue;
            }
            Some(len) => {
                asm.cmp_caplen(len);
                jump(&mut pieces, &mut asm, Some(cc::B), Target::Reject);
            }
            None => {}
        }
        lower_one(insn, i, frame, &mut asm, &mut pieces);
        flush(&mut pieces, &mut asm);
    }
    pieces.push(Piece::Label(Target::Reject));
    asm.zero_a();
    asm.leave(frame);
    flush(&mut pieces, &mut asm);
    Lowered { code: layout(&pieces, insns.len()) }
}

fn flush(pieces: &mut Vec<Piece>, asm: &mut Asm) {
    if !asm.bytes.is_empty() {
        pieces.push(Piece::Code(std::mem::take(&mut asm.bytes)));
    }
}

fn jump(pieces: &mut Vec<Piece>, asm: &mut Asm, cond: Option<u8>, target: Target) {
    flush(pieces, asm);
    pieces.push(Piece::Jump { cond, target });
}

/// Where an absolute load reads. Its bounds check was hoisted (see the module documentation):
/// every path reaching it has checked at least `k + size` bytes.
fn abs_addr(k: u32, asm: &mut Asm) -> Addr {
    if k <= i32::MAX as u32 {
        Addr::Disp(k)
    } else {
        asm.mov_r9_imm(k);
        Addr::R9
    }
}

fn lower_one(insn: &Insn, i: usize, frame: bool, asm: &mut Asm, pieces: &mut Vec<Piece>) {
    let k = insn.k;
    let next = i + 1;
    let to = |off: u32| Target::Insn(next + off as usize);
    let mem = (k & 15) as u8;
    match insn.opcode() {
        Opcode::RetK => {
            asm.mov_a_imm(k);
            asm.leave(frame);
        }
        Opcode::RetA => asm.leave(frame),
        Opcode::LdImm => asm.mov_a_imm(k),
        Opcode::LdxImm => asm.mov_x_imm(k),
        Opcode::LdLen => asm.mov_a_len(),
        Opcode::LdxLen => asm.mov_x_len(),
        Opcode::LdMem => asm.ld_mem(mem),
        Opcode::LdxMem => asm.ldx_mem(mem),
        Opcode::St => asm.st(mem),
        Opcode::Stx => asm.stx(mem),
        Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB => {
            let size = size_of(insn.code);
            let at = abs_addr(k, asm);
            asm.load_a(at, size);
        }
        Opcode::LdIndW | Opcode::LdIndH | Opcode::LdIndB => {
            let size = size_of(insn.code);
            asm.ind_address_and_check(k, size);
            jump(pieces, asm, Some(cc::B), Target::Reject);
            asm.load_a(Addr::R9, size);
        }
        Opcode::LdxMsh => {
            let at = abs_addr(k, asm);
            asm.msh(at);
        }
        Opcode::AddK => asm.alu_k(AluOp::Add, k),
        Opcode::SubK => asm.alu_k(AluOp::Sub, k),
        Opcode::MulK => asm.alu_k(AluOp::Mul, k),
        Opcode::AndK => asm.alu_k(AluOp::And, k),
        Opcode::OrK => asm.alu_k(AluOp::Or, k),
        Opcode::XorK => asm.alu_k(AluOp::Xor, k),
        Opcode::AddX => asm.alu_x(AluOp::Add),
        Opcode::SubX => asm.alu_x(AluOp::Sub),
        Opcode::MulX => asm.alu_x(AluOp::Mul),
        Opcode::AndX => asm.alu_x(AluOp::And),
        Opcode::OrX => asm.alu_x(AluOp::Or),
        Opcode::XorX => asm.alu_x(AluOp::Xor),
        // Both validators refuse a constant divisor of 0; stay total anyway.
        Opcode::DivK | Opcode::ModK if k == 0 => jump(pieces, asm, None, Target::Reject),
        Opcode::DivK => asm.div_k(k, false),
        Opcode::ModK => asm.div_k(k, true),
        Opcode::DivX | Opcode::ModX => {
            asm.test_x();
            jump(pieces, asm, Some(cc::E), Target::Reject);
            asm.div_x(insn.opcode() == Opcode::ModX);
        }
        Opcode::LshK | Opcode::RshK if k >= 32 => asm.zero_a(),
        Opcode::LshK => asm.shift_k(true, k as u8),
        Opcode::RshK => asm.shift_k(false, k as u8),
        Opcode::LshX => asm.shift_x(true),
        Opcode::RshX => asm.shift_x(false),
        Opcode::Neg => asm.neg(),
        Opcode::Tax => asm.tax(),
        Opcode::Txa => asm.txa(),
        Opcode::Ja => {
            let t = to(k);
            if t != Target::Insn(next) {
                jump(pieces, asm, None, t);
            }
        }
        op @ (Opcode::JeqK
        | Opcode::JgtK
        | Opcode::JgeK
        | Opcode::JsetK
        | Opcode::JeqX
        | Opcode::JgtX
        | Opcode::JgeX
        | Opcode::JsetX) => {
            let (cond, test, with_x) = match op {
                Opcode::JeqK => (cc::E, false, false),
                Opcode::JgtK => (cc::A, false, false),
                Opcode::JgeK => (cc::AE, false, false),
                Opcode::JsetK => (cc::NE, true, false),
                Opcode::JeqX => (cc::E, false, true),
                Opcode::JgtX => (cc::A, false, true),
                Opcode::JgeX => (cc::AE, false, true),
                _ => (cc::NE, true, true),
            };
            let (t, f) = (to(u32::from(insn.jt)), to(u32::from(insn.jf)));
            let fall = Target::Insn(next);
            if t == f {
                if t != fall {
                    jump(pieces, asm, None, t);
                }
                return;
            }
            if with_x {
                asm.cmp_a_x(test);
            } else {
                asm.cmp_a_k(k, test);
            }
            if f == fall {
                jump(pieces, asm, Some(cond), t);
            } else if t == fall {
                jump(pieces, asm, Some(cond ^ 1), f);
            } else {
                jump(pieces, asm, Some(cond), t);
                jump(pieces, asm, None, f);
            }
        }
        // Validated programs contain no unknown opcodes; reject if one slips through.
        Opcode::Unknown(_) => jump(pieces, asm, None, Target::Reject),
    }
}

fn size_of(code: u16) -> u8 {
    match code & 0x18 {
        code::BPF_W => 4,
        code::BPF_H => 2,
        _ => 1,
    }
}

/// Sizes the jumps (short where they reach) and writes the final bytes.
fn layout(pieces: &[Piece], ninsns: usize) -> Vec<u8> {
    let njumps = pieces.iter().filter(|p| matches!(p, Piece::Jump { .. })).count();
    let mut long = vec![false; njumps];
    let label_index = |t: Target| match t {
        Target::Insn(n) => n,
        Target::Reject => ninsns,
    };
    let mut labels = vec![0usize; ninsns + 1];
    loop {
        // Positions with the current jump sizes.
        let mut pos = 0usize;
        let mut j = 0;
        for p in pieces {
            match p {
                Piece::Code(b) => pos += b.len(),
                Piece::Label(t) => labels[label_index(*t)] = pos,
                Piece::Jump { cond, .. } => {
                    pos += jump_len(*cond, long[j]);
                    j += 1;
                }
            }
        }
        // Lengthen every short jump that does not reach.
        let mut changed = false;
        let mut pos = 0usize;
        let mut j = 0;
        for p in pieces {
            match p {
                Piece::Code(b) => pos += b.len(),
                Piece::Label(_) => {}
                Piece::Jump { cond, target } => {
                    let end = pos + jump_len(*cond, long[j]);
                    let rel = labels[label_index(*target)] as i64 - end as i64;
                    if !long[j] && i8::try_from(rel).is_err() {
                        long[j] = true;
                        changed = true;
                    }
                    pos = end;
                    j += 1;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::new();
    let mut j = 0;
    for p in pieces {
        match p {
            Piece::Code(b) => out.extend_from_slice(b),
            Piece::Label(_) => {}
            Piece::Jump { cond, target } => {
                let end = out.len() + jump_len(*cond, long[j]);
                let rel = labels[label_index(*target)] as i64 - end as i64;
                match (cond, long[j]) {
                    (None, false) => out.extend_from_slice(&[0xEB, rel as i8 as u8]),
                    (None, true) => {
                        out.push(0xE9);
                        out.extend_from_slice(&(rel as i32).to_le_bytes());
                    }
                    (Some(c), false) => out.extend_from_slice(&[0x70 | c, rel as i8 as u8]),
                    (Some(c), true) => {
                        out.extend_from_slice(&[0x0F, 0x80 | c]);
                        out.extend_from_slice(&(rel as i32).to_le_bytes());
                    }
                }
                j += 1;
            }
        }
    }
    out
}

fn jump_len(cond: Option<u8>, long: bool) -> usize {
    match (cond, long) {
        (_, false) => 2,
        (None, true) => 5,
        (Some(_), true) => 6,
    }
}
