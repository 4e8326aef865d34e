//! The instructions as data, how to give each to the assembler, and what iced-x86 must decode
//! it to. The rules for what is encodable are the SDM's (and the assembler's documented
//! immediate ranges), restated here rather than taken from the assembler.

use iced_x86::{Mnemonic, Register};
use sift_x86::{
    AluOp, AsmError, Assembler, Cond, Label, Mem, Operand, Prefetch, Reg, ShiftOp, Size,
};

/// One-operand instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Not,
    Neg,
    Mul,
    Div,
    Idiv,
    Inc,
    Dec,
}

impl Unary {
    pub const ALL: [Unary; 7] =
        [Unary::Not, Unary::Neg, Unary::Mul, Unary::Div, Unary::Idiv, Unary::Inc, Unary::Dec];
}

/// Instructions that can carry `lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockOp {
    Alu(AluOp),
    Unary(Unary),
    Xchg,
    Cmpxchg,
    Xadd,
}

/// A memory operand, with a RIP-relative label given by its number in the sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemSpec {
    Plain(Mem),
    /// `[rip + label + disp]`
    Label(usize, i32),
}

/// An operand, with memory as a [`MemSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opnd {
    Reg(Reg),
    Imm(i64),
    Mem(MemSpec),
}

/// One generated instruction (labels are numbers 0..n in the sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insn {
    Mov(Size, Opnd, Opnd),
    Alu(AluOp, Size, Opnd, Opnd),
    Test(Size, Opnd, Opnd),
    Unary(Unary, Size, Opnd),
    Imul(Size, Reg, Opnd),
    ImulImm(Size, Reg, Opnd, i64),
    Shift(ShiftOp, Size, Opnd, Opnd),
    Movzx(Size, Reg, Size, Opnd),
    Movsx(Size, Reg, Size, Opnd),
    Movsxd(Reg, Opnd),
    Lea(Size, Reg, MemSpec),
    Bswap(Size, Reg),
    Xchg(Size, Opnd, Reg),
    Cmpxchg(Size, Opnd, Reg),
    Xadd(Size, Opnd, Reg),
    Locked(LockOp, Size, MemSpec, Opnd),
    Cdq,
    Cqo,
    Cdqe,
    Setcc(Cond, Opnd),
    Cmovcc(Cond, Size, Reg, Opnd),
    Push(Opnd),
    Pop(Opnd),
    Call(usize),
    CallIndirect(Opnd),
    Jmp(usize),
    Jcc(Cond, usize),
    JmpIndirect(Opnd),
    Ret,
    Nop,
    Nops(usize),
    Ud2,
    Int3,
    Prefetch(Prefetch, MemSpec),
}

/// An element of a generated sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Insn(Insn),
    Bind(usize),
}

fn mem(m: MemSpec, labels: &[Label]) -> Mem {
    match m {
        MemSpec::Plain(m) => m,
        MemSpec::Label(l, disp) => Mem::label(labels[l]).disp(disp),
    }
}

fn op(o: Opnd, labels: &[Label]) -> Operand {
    match o {
        Opnd::Reg(r) => Operand::Reg(r),
        Opnd::Imm(v) => Operand::Imm(v),
        Opnd::Mem(m) => Operand::Mem(mem(m, labels)),
    }
}

fn unary(asm: &mut Assembler, u: Unary, size: Size, dst: Operand) -> Result<(), AsmError> {
    match u {
        Unary::Not => asm.not(size, dst),
        Unary::Neg => asm.neg(size, dst),
        Unary::Mul => asm.mul(size, dst),
        Unary::Div => asm.div(size, dst),
        Unary::Idiv => asm.idiv(size, dst),
        Unary::Inc => asm.inc(size, dst),
        Unary::Dec => asm.dec(size, dst),
    }
}

/// Gives `insn` to the assembler.
pub fn emit(asm: &mut Assembler, insn: &Insn, labels: &[Label]) -> Result<(), AsmError> {
    let o = |x: Opnd| op(x, labels);
    let m = |x: MemSpec| mem(x, labels);
    match *insn {
        Insn::Mov(s, d, x) => asm.mov(s, o(d), o(x)),
        Insn::Alu(a, s, d, x) => asm.alu(a, s, o(d), o(x)),
        Insn::Test(s, d, x) => asm.test(s, o(d), o(x)),
        Insn::Unary(u, s, d) => unary(asm, u, s, o(d)),
        Insn::Imul(s, d, x) => asm.imul(s, d, o(x)),
        Insn::ImulImm(s, d, x, i) => asm.imul_imm(s, d, o(x), i),
        Insn::Shift(k, s, d, c) => asm.shift(k, s, o(d), o(c)),
        Insn::Movzx(ds, d, ss, x) => asm.movzx(ds, d, ss, o(x)),
        Insn::Movsx(ds, d, ss, x) => asm.movsx(ds, d, ss, o(x)),
        Insn::Movsxd(d, x) => asm.movsxd(d, o(x)),
        Insn::Lea(s, d, x) => asm.lea(s, d, m(x)),
        Insn::Bswap(s, r) => asm.bswap(s, r),
        Insn::Xchg(s, a, b) => asm.xchg(s, o(a), b),
        Insn::Cmpxchg(s, a, b) => asm.cmpxchg(s, o(a), b),
        Insn::Xadd(s, a, b) => asm.xadd(s, o(a), b),
        Insn::Locked(k, s, d, x) => {
            let d = m(d);
            // xchg, cmpxchg and xadd take a register source; others stand for rax.
            let r = if let Opnd::Reg(r) = x { r } else { Reg::Rax };
            match k {
                LockOp::Alu(a) => asm.lock().alu(a, s, d, o(x)),
                LockOp::Unary(Unary::Not) => asm.lock().not(s, d),
                LockOp::Unary(Unary::Neg) => asm.lock().neg(s, d),
                LockOp::Unary(Unary::Inc) => asm.lock().inc(s, d),
                LockOp::Unary(_) => asm.lock().dec(s, d),
                LockOp::Xchg => asm.lock().xchg(s, d, r),
                LockOp::Cmpxchg => asm.lock().cmpxchg(s, d, r),
                LockOp::Xadd => asm.lock().xadd(s, d, r),
            }
        }
        Insn::Cdq => {
            asm.cdq();
            Ok(())
        }
        Insn::Cqo => {
            asm.cqo();
            Ok(())
        }
        Insn::Cdqe => {
            asm.cdqe();
            Ok(())
        }
        Insn::Setcc(c, d) => asm.setcc(c, o(d)),
        Insn::Cmovcc(c, s, d, x) => asm.cmovcc(c, s, d, o(x)),
        Insn::Push(x) => asm.push(o(x)),
        Insn::Pop(x) => asm.pop(o(x)),
        Insn::Call(l) => asm.call(labels[l]),
        Insn::CallIndirect(x) => asm.call_indirect(o(x)),
        Insn::Jmp(l) => asm.jmp(labels[l]),
        Insn::Jcc(c, l) => asm.jcc(c, labels[l]),
        Insn::JmpIndirect(x) => asm.jmp_indirect(o(x)),
        Insn::Ret => {
            asm.ret();
            Ok(())
        }
        Insn::Nop => {
            asm.nop();
            Ok(())
        }
        Insn::Nops(n) => {
            asm.nops(n);
            Ok(())
        }
        Insn::Ud2 => {
            asm.ud2();
            Ok(())
        }
        Insn::Int3 => {
            asm.int3();
            Ok(())
        }
        Insn::Prefetch(h, x) => asm.prefetch(h, m(x)),
    }
}

/// An operand as the decoder must report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    Reg(Register),
    /// An immediate, compared on its low `bits` bits (64: the whole sign-extended value).
    Imm(u64, u32),
    /// A memory operand of `size` bytes (0: not compared).
    Mem(MemSpec, usize),
    /// A branch to a label.
    Branch(usize),
}

/// What a valid instruction must decode to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    One {
        mnemonic: Mnemonic,
        ops: Vec<Want>,
        lock: bool,
        commutative: bool,
    },
    /// `len` bytes of `nop` instructions.
    Nops(usize),
}

const REGS: [[Register; 16]; 4] = {
    use Register::*;
    [
        [AL, CL, DL, BL, SPL, BPL, SIL, DIL, R8L, R9L, R10L, R11L, R12L, R13L, R14L, R15L],
        [AX, CX, DX, BX, SP, BP, SI, DI, R8W, R9W, R10W, R11W, R12W, R13W, R14W, R15W],
        [EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI, R8D, R9D, R10D, R11D, R12D, R13D, R14D, R15D],
        [RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15],
    ]
};

/// iced's name for `r` at `size`.
pub fn register(r: Reg, size: Size) -> Register {
    REGS[size as usize][r.number() as usize]
}

pub const JCC: [Mnemonic; 16] = {
    use Mnemonic::*;
    [Jo, Jno, Jb, Jae, Je, Jne, Jbe, Ja, Js, Jns, Jp, Jnp, Jl, Jge, Jle, Jg]
};
const SETCC: [Mnemonic; 16] = {
    use Mnemonic::*;
    [
        Seto, Setno, Setb, Setae, Sete, Setne, Setbe, Seta, Sets, Setns, Setp, Setnp, Setl, Setge,
        Setle, Setg,
    ]
};
const CMOVCC: [Mnemonic; 16] = {
    use Mnemonic::*;
    [
        Cmovo, Cmovno, Cmovb, Cmovae, Cmove, Cmovne, Cmovbe, Cmova, Cmovs, Cmovns, Cmovp, Cmovnp,
        Cmovl, Cmovge, Cmovle, Cmovg,
    ]
};

fn alu_mnemonic(a: AluOp) -> Mnemonic {
    use Mnemonic::*;
    [Add, Or, Adc, Sbb, And, Sub, Xor, Cmp][a as usize]
}

fn unary_mnemonic(u: Unary) -> Mnemonic {
    use Mnemonic::*;
    match u {
        Unary::Not => Not,
        Unary::Neg => Neg,
        Unary::Mul => Mul,
        Unary::Div => Div,
        Unary::Idiv => Idiv,
        Unary::Inc => Inc,
        Unary::Dec => Dec,
    }
}

fn shift_mnemonic(s: ShiftOp) -> Mnemonic {
    match s {
        ShiftOp::Rol => Mnemonic::Rol,
        ShiftOp::Ror => Mnemonic::Ror,
        ShiftOp::Shl => Mnemonic::Shl,
        ShiftOp::Shr => Mnemonic::Shr,
        ShiftOp::Sar => Mnemonic::Sar,
    }
}

/// A memory operand is encodable unless `rsp` is its index or it is RIP-relative with one.
fn mem_ok(m: MemSpec) -> bool {
    match m {
        MemSpec::Label(..) => true,
        MemSpec::Plain(m) => match m.index_reg() {
            Some((Reg::Rsp, _)) => false,
            Some(_) => !m.is_rip_relative(),
            None => true,
        },
    }
}

/// `value` as an immediate of an instruction of `size`: any signed or unsigned value of the
/// size's width; for quadwords, a sign-extended 32-bit value.
fn imm_fits(value: i64, size: Size) -> bool {
    match size {
        Size::Qword => i32::try_from(value).is_ok(),
        s => {
            let bits = s.bits();
            value >= -(1i64 << (bits - 1)) && value < (1i64 << bits)
        }
    }
}

/// An operand of `size` as decoded (register or memory; immediates are the caller's).
fn want_rm(o: Opnd, size: Size) -> Option<Want> {
    match o {
        Opnd::Reg(r) => Some(Want::Reg(register(r, size))),
        Opnd::Mem(m) if mem_ok(m) => Some(Want::Mem(m, size.bytes())),
        _ => None,
    }
}

fn imm(value: i64, size: Size) -> Want {
    Want::Imm(value as u64, size.bits())
}

fn one(mnemonic: Mnemonic, ops: Vec<Want>) -> Option<Expect> {
    Some(Expect::One { mnemonic, ops, lock: false, commutative: false })
}

/// What `insn` must decode to, or `None` if the assembler must refuse it.
pub fn expect(insn: &Insn) -> Option<Expect> {
    use Opnd::{Imm, Mem as M, Reg as R};
    match *insn {
        Insn::Mov(s, d, x) => {
            let ops = match (d, x) {
                (R(_) | M(_), R(_)) | (R(_), M(_)) => vec![want_rm(d, s)?, want_rm(x, s)?],
                (R(_), Imm(v)) if s == Size::Qword => vec![want_rm(d, s)?, Want::Imm(v as u64, 64)],
                (R(_) | M(_), Imm(v)) if imm_fits(v, s) => vec![want_rm(d, s)?, imm(v, s)],
                _ => return None,
            };
            one(Mnemonic::Mov, ops)
        }
        Insn::Alu(a, s, d, x) => {
            let ops = match (d, x) {
                (R(_) | M(_), R(_)) | (R(_), M(_)) => vec![want_rm(d, s)?, want_rm(x, s)?],
                (R(_) | M(_), Imm(v)) if imm_fits(v, s) => vec![want_rm(d, s)?, imm(v, s)],
                _ => return None,
            };
            one(alu_mnemonic(a), ops)
        }
        Insn::Test(s, d, x) => {
            let ops = match (d, x) {
                (R(_) | M(_), R(_)) => vec![want_rm(d, s)?, want_rm(x, s)?],
                (R(_) | M(_), Imm(v)) if imm_fits(v, s) => vec![want_rm(d, s)?, imm(v, s)],
                _ => return None,
            };
            one(Mnemonic::Test, ops)
        }
        Insn::Unary(u, s, d) => one(unary_mnemonic(u), vec![want_rm(d, s)?]),
        Insn::Imul(s, d, x) if s != Size::Byte && !matches!(x, Imm(_)) => {
            one(Mnemonic::Imul, vec![Want::Reg(register(d, s)), want_rm(x, s)?])
        }
        Insn::ImulImm(s, d, x, i) if s != Size::Byte && !matches!(x, Imm(_)) && imm_fits(i, s) => {
            one(Mnemonic::Imul, vec![Want::Reg(register(d, s)), want_rm(x, s)?, imm(i, s)])
        }
        Insn::Shift(k, s, d, c) => {
            let count = match c {
                Imm(n @ 0..=255) => Want::Imm(n as u64, 8),
                R(Reg::Rcx) => Want::Reg(Register::CL),
                _ => return None,
            };
            one(shift_mnemonic(k), vec![want_rm(d, s)?, count])
        }
        Insn::Movzx(ds, d, ss, x) | Insn::Movsx(ds, d, ss, x) if ss < ds && ss <= Size::Word => {
            let m = if matches!(insn, Insn::Movzx(..)) { Mnemonic::Movzx } else { Mnemonic::Movsx };
            one(m, vec![Want::Reg(register(d, ds)), want_rm(x, ss)?])
        }
        Insn::Movsxd(d, x) => one(
            Mnemonic::Movsxd,
            vec![Want::Reg(register(d, Size::Qword)), want_rm(x, Size::Dword)?],
        ),
        Insn::Lea(s, d, m) if s != Size::Byte && mem_ok(m) => {
            one(Mnemonic::Lea, vec![Want::Reg(register(d, s)), Want::Mem(m, 0)])
        }
        Insn::Bswap(s @ (Size::Dword | Size::Qword), r) => {
            one(Mnemonic::Bswap, vec![Want::Reg(register(r, s))])
        }
        Insn::Xchg(s, a, b) => Some(Expect::One {
            mnemonic: Mnemonic::Xchg,
            ops: vec![want_rm(a, s)?, Want::Reg(register(b, s))],
            lock: false,
            commutative: true,
        }),
        Insn::Cmpxchg(s, a, b) => {
            one(Mnemonic::Cmpxchg, vec![want_rm(a, s)?, Want::Reg(register(b, s))])
        }
        Insn::Xadd(s, a, b) => one(Mnemonic::Xadd, vec![want_rm(a, s)?, Want::Reg(register(b, s))]),
        Insn::Locked(k, s, d, x) => {
            let plain = match k {
                LockOp::Alu(AluOp::Cmp) => return None,
                LockOp::Alu(a) if matches!(x, R(_) | Imm(_)) => Insn::Alu(a, s, M(d), x),
                LockOp::Alu(_) => return None,
                LockOp::Unary(u @ (Unary::Not | Unary::Neg | Unary::Inc | Unary::Dec)) => {
                    Insn::Unary(u, s, M(d))
                }
                LockOp::Unary(_) => Insn::Unary(Unary::Dec, s, M(d)),
                LockOp::Xchg | LockOp::Cmpxchg | LockOp::Xadd => {
                    let r = if let R(r) = x { r } else { Reg::Rax };
                    match k {
                        LockOp::Xchg => Insn::Xchg(s, M(d), r),
                        LockOp::Cmpxchg => Insn::Cmpxchg(s, M(d), r),
                        _ => Insn::Xadd(s, M(d), r),
                    }
                }
            };
            match expect(&plain)? {
                Expect::One { mnemonic, ops, commutative, .. } => {
                    Some(Expect::One { mnemonic, ops, lock: true, commutative })
                }
                nops => Some(nops),
            }
        }
        Insn::Cdq => one(Mnemonic::Cdq, vec![]),
        Insn::Cqo => one(Mnemonic::Cqo, vec![]),
        Insn::Cdqe => one(Mnemonic::Cdqe, vec![]),
        Insn::Setcc(c, d) => one(SETCC[c as usize], vec![want_rm(d, Size::Byte)?]),
        Insn::Cmovcc(c, s, d, x) if s != Size::Byte => {
            one(CMOVCC[c as usize], vec![Want::Reg(register(d, s)), want_rm(x, s)?])
        }
        Insn::Push(Imm(v)) if imm_fits(v, Size::Qword) => {
            one(Mnemonic::Push, vec![Want::Imm(v as u64, 64)])
        }
        Insn::Push(x @ (R(_) | M(_))) | Insn::Pop(x @ (R(_) | M(_))) => {
            let m = if matches!(insn, Insn::Push(_)) { Mnemonic::Push } else { Mnemonic::Pop };
            one(m, vec![want_rm(x, Size::Qword)?])
        }
        Insn::Call(l) => one(Mnemonic::Call, vec![Want::Branch(l)]),
        Insn::CallIndirect(x) => one(Mnemonic::Call, vec![want_rm(x, Size::Qword)?]),
        Insn::Jmp(l) => one(Mnemonic::Jmp, vec![Want::Branch(l)]),
        Insn::Jcc(c, l) => one(JCC[c as usize], vec![Want::Branch(l)]),
        Insn::JmpIndirect(x) => one(Mnemonic::Jmp, vec![want_rm(x, Size::Qword)?]),
        Insn::Ret => one(Mnemonic::Ret, vec![]),
        Insn::Nop => Some(Expect::Nops(1)),
        Insn::Nops(n) => Some(Expect::Nops(n)),
        Insn::Ud2 => one(Mnemonic::Ud2, vec![]),
        Insn::Int3 => one(Mnemonic::Int3, vec![]),
        Insn::Prefetch(h, m) if mem_ok(m) => {
            let mn = [
                Mnemonic::Prefetchnta,
                Mnemonic::Prefetcht0,
                Mnemonic::Prefetcht1,
                Mnemonic::Prefetcht2,
            ][h as usize];
            one(mn, vec![Want::Mem(m, 0)])
        }
        _ => None,
    }
}

/// The labels `insn` refers to (by jump, call or RIP-relative address).
pub fn labels_used(insn: &Insn) -> Vec<usize> {
    let from_op = |o: &Opnd| match o {
        Opnd::Mem(MemSpec::Label(l, _)) => Some(*l),
        _ => None,
    };
    let from_mem = |m: &MemSpec| match m {
        MemSpec::Label(l, _) => Some(*l),
        _ => None,
    };
    match insn {
        Insn::Call(l) | Insn::Jmp(l) | Insn::Jcc(_, l) => vec![*l],
        Insn::Lea(_, _, m) | Insn::Prefetch(_, m) => from_mem(m).into_iter().collect(),
        Insn::Locked(_, _, m, x) => from_mem(m).into_iter().chain(from_op(x)).collect(),
        Insn::Mov(_, a, b)
        | Insn::Alu(_, _, a, b)
        | Insn::Test(_, a, b)
        | Insn::Shift(_, _, a, b) => from_op(a).into_iter().chain(from_op(b)).collect(),
        Insn::Unary(_, _, a)
        | Insn::Imul(_, _, a)
        | Insn::ImulImm(_, _, a, _)
        | Insn::Movzx(_, _, _, a)
        | Insn::Movsx(_, _, _, a)
        | Insn::Movsxd(_, a)
        | Insn::Xchg(_, a, _)
        | Insn::Cmpxchg(_, a, _)
        | Insn::Xadd(_, a, _)
        | Insn::Setcc(_, a)
        | Insn::Cmovcc(_, _, _, a)
        | Insn::Push(a)
        | Insn::Pop(a)
        | Insn::CallIndirect(a)
        | Insn::JmpIndirect(a) => from_op(a).into_iter().collect(),
        _ => vec![],
    }
}
