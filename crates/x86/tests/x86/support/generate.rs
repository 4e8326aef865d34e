//! Random instruction sequences from any source of numbers: a seeded PRNG for the property
//! test, the fuzzer's bytes for the fuzz target. Operands lean towards the edges that matter
//! to encodings (rsp/rbp/r12/r13, the byte registers that need a REX, immediates and
//! displacements around the 8/16/32-bit limits) and include some that must be refused.

use sift_x86::{AluOp, Cond, Mem, Prefetch, Reg, Scale, ShiftOp, Size};

use super::model::{Insn, Item, LockOp, MemSpec, Opnd, Unary};

/// A source of random numbers.
pub trait Source {
    fn next_u64(&mut self) -> u64;

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// One of `xs` (not empty).
pub fn pick<T: Copy>(s: &mut dyn Source, xs: &[T]) -> T {
    xs[s.below(xs.len() as u64) as usize]
}

/// SplitMix64: small, fast and good enough to drive a generator.
pub struct Rng(pub u64);

impl Source for Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Numbers read from bytes (a fuzzer's input), then zeros once they run out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Source for Bytes<'_> {
    fn next_u64(&mut self) -> u64 {
        // One byte per draw keeps small inputs meaningful; wide values take several draws.
        let Some((&b, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        u64::from(b)
    }
}

impl Bytes<'_> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn wide(s: &mut dyn Source) -> u64 {
    (0..8).fold(0u64, |v, _| (v << 8) | (s.next_u64() & 0xFF)) ^ s.next_u64().rotate_left(17)
}

const EDGES: [i64; 26] = [
    0,
    1,
    -1,
    2,
    127,
    128,
    -128,
    -129,
    255,
    256,
    0x7FFF,
    0x8000,
    -0x8000,
    -0x8001,
    0xFFFF,
    0x1_0000,
    i32::MAX as i64,
    i32::MIN as i64,
    i32::MAX as i64 + 1,
    i32::MIN as i64 - 1,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MIN,
    i64::MAX,
    -2,
    0x7F,
];

fn imm(s: &mut dyn Source) -> i64 {
    match s.below(8) {
        0 | 1 => s.below(256) as i64 - 128,
        2 => pick(s, &EDGES),
        3 => wide(s) as i32 as i64,
        4 => wide(s) as u32 as i64,
        5 => wide(s) as i64,
        6 => wide(s) as i16 as i64,
        _ => s.below(256) as i64,
    }
}

fn disp(s: &mut dyn Source) -> i32 {
    match s.below(6) {
        0 | 1 => 0,
        2 => s.below(256) as i32 - 128,
        3 => pick(s, &[127, 128, -128, -129, i32::MAX, i32::MIN]),
        _ => wide(s) as i32,
    }
}

fn reg(s: &mut dyn Source) -> Reg {
    Reg::from_number(s.below(16) as u8)
}

fn size(s: &mut dyn Source) -> Size {
    pick(s, &Size::ALL)
}

fn mem(s: &mut dyn Source, labels: usize) -> MemSpec {
    let scale = pick(s, &Scale::ALL);
    match s.below(24) {
        // Small enough that `label + disp` stays in rel32 reach (golden tests cover the rest).
        0 => MemSpec::Label(s.below(labels as u64) as usize, disp(s) as i16 as i32),
        1 => MemSpec::Plain(Mem::rip(disp(s))),
        // Must be refused: RIP-relative with an index.
        2 => MemSpec::Plain(Mem::rip(disp(s)).index(reg(s), scale)),
        3 => MemSpec::Plain(Mem::abs(disp(s))),
        4 => MemSpec::Plain(Mem::index_only(reg(s), scale).disp(disp(s))),
        k => {
            let m = Mem::base(reg(s)).disp(disp(s));
            MemSpec::Plain(if k % 2 == 0 { m.index(reg(s), scale) } else { m })
        }
    }
}

/// A register or memory operand, rarely an immediate (which must be refused).
fn rm(s: &mut dyn Source, labels: usize) -> Opnd {
    match s.below(32) {
        0 => Opnd::Imm(imm(s)),
        1..=20 => Opnd::Reg(reg(s)),
        _ => Opnd::Mem(mem(s, labels)),
    }
}

/// A register, memory or immediate operand.
fn any(s: &mut dyn Source, labels: usize) -> Opnd {
    match s.below(4) {
        0 => Opnd::Imm(imm(s)),
        1 => Opnd::Mem(mem(s, labels)),
        _ => Opnd::Reg(reg(s)),
    }
}

fn cond(s: &mut dyn Source) -> Cond {
    pick(s, &Cond::ALL)
}

/// One random instruction referring to labels `0..labels`.
pub fn insn(s: &mut dyn Source, labels: usize) -> Insn {
    let label = |s: &mut dyn Source| s.below(labels as u64) as usize;
    match s.below(44) {
        0..=2 => Insn::Mov(size(s), rm(s, labels), any(s, labels)),
        3..=6 => Insn::Alu(pick(s, &AluOp::ALL), size(s), rm(s, labels), any(s, labels)),
        7 => Insn::Test(size(s), rm(s, labels), any(s, labels)),
        8 => Insn::Unary(pick(s, &Unary::ALL), size(s), rm(s, labels)),
        9 => Insn::Imul(size(s), reg(s), rm(s, labels)),
        10 => Insn::ImulImm(size(s), reg(s), rm(s, labels), imm(s)),
        11 | 12 => {
            let count = match s.below(10) {
                0..=3 => Opnd::Imm(s.below(256) as i64),
                4 => Opnd::Imm(1),
                5..=7 => Opnd::Reg(Reg::Rcx),
                8 => Opnd::Reg(reg(s)),
                _ => Opnd::Imm(imm(s)),
            };
            Insn::Shift(pick(s, &ShiftOp::ALL), size(s), rm(s, labels), count)
        }
        13 => Insn::Movzx(size(s), reg(s), size(s), rm(s, labels)),
        14 => Insn::Movsx(size(s), reg(s), size(s), rm(s, labels)),
        15 => Insn::Movsxd(reg(s), rm(s, labels)),
        16 => Insn::Lea(size(s), reg(s), mem(s, labels)),
        17 => Insn::Bswap(size(s), reg(s)),
        18 => Insn::Xchg(size(s), rm(s, labels), reg(s)),
        19 => Insn::Cmpxchg(size(s), rm(s, labels), reg(s)),
        20 => Insn::Xadd(size(s), rm(s, labels), reg(s)),
        21 => {
            let op = match s.below(10) {
                0..=4 => LockOp::Alu(pick(s, &AluOp::ALL)),
                5 | 6 => LockOp::Unary(pick(s, &[Unary::Not, Unary::Neg, Unary::Inc, Unary::Dec])),
                7 => LockOp::Xchg,
                8 => LockOp::Cmpxchg,
                _ => LockOp::Xadd,
            };
            let src = if matches!(op, LockOp::Alu(_)) { any(s, labels) } else { Opnd::Reg(reg(s)) };
            Insn::Locked(op, size(s), mem(s, labels), src)
        }
        22 => pick(s, &[Insn::Cdq, Insn::Cqo, Insn::Cdqe]),
        23 => Insn::Setcc(cond(s), rm(s, labels)),
        24 => Insn::Cmovcc(cond(s), size(s), reg(s), rm(s, labels)),
        25 => Insn::Push(any(s, labels)),
        26 => Insn::Pop(rm(s, labels)),
        27 => Insn::Call(label(s)),
        28 => Insn::CallIndirect(rm(s, labels)),
        29 | 30 => Insn::Jmp(label(s)),
        31..=35 => Insn::Jcc(cond(s), label(s)),
        36 => Insn::JmpIndirect(rm(s, labels)),
        37 => pick(s, &[Insn::Ret, Insn::Nop, Insn::Ud2, Insn::Int3]),
        38 => Insn::Nops(s.below(20) as usize),
        // Long stretches, so that jumps cross the rel8 limit both ways.
        39 => Insn::Nops(60 + s.below(80) as usize),
        40 => Insn::Prefetch(pick(s, &Prefetch::ALL), mem(s, labels)),
        _ => Insn::Alu(pick(s, &AluOp::ALL), size(s), Opnd::Reg(reg(s)), Opnd::Imm(imm(s))),
    }
}

/// A sequence of about `len` instructions over up to 8 labels, each label bound once at a
/// random place (or, with `unbound`, sometimes never).
pub fn sequence(s: &mut dyn Source, len: usize, unbound: bool) -> (Vec<Item>, usize) {
    let labels = 1 + s.below(8) as usize;
    let mut items: Vec<Item> = (0..len).map(|_| Item::Insn(insn(s, labels))).collect();
    for l in 0..labels {
        if unbound && s.below(16) == 0 {
            continue;
        }
        let at = s.below(items.len() as u64 + 1) as usize;
        items.insert(at, Item::Bind(l));
    }
    (items, labels)
}
