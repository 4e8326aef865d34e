//! Value numbers: what every register holds, as a hash-consed expression over the packet.
//!
//! **Why it exists.** Every pass of the optimizer asks the same two questions about a
//! statement: which value does it compute, and can it end the program (a load past the
//! captured length, `div x` by zero)? This module answers both once, for all passes: a
//! `Values` table gives each distinct expression (`P[12:2]`, `P[X+14:2]` with X = v7,
//! `v3 & 0x1fff`, a constant…) one number, so equal numbers mean equal values on every packet
//! and within one run, and `eval` simulates one statement on a register `State`.
//!
//! **Invariant kept.** A value number denotes one packet-determined value: two statements
//! with the same number compute the same value *and* fail (end the program with 0) on exactly
//! the same packets. Canonical rewrites (`Eval::stmt`) keep both: `ld [x + k]` with a known
//! X becomes `ld [c + k]` only when `c + k` cannot wrap and stays below Linux's special ranges
//! (`LINUX_SPECIAL`; a load between 2^31 and there fails on every packet in either form),
//! `op x` with a known X becomes `op #c` except for a zero divisor or a shift of 32 or more
//! (whose meaning differs between `#k` and `x` forms and between libpcap and Linux), and
//! nothing is folded whose run-time result is not the same in every engine. A `protochain`
//! walk ([`Stmt::Walk`]) gives fresh unknowns to every register it writes and risks
//! `Risk::Other`: no other statement ever has its value, so none is taken for it.

use super::FastMap;
use crate::ir::*;

/// A value number.
pub(crate) type Vn = u32;

/// Registers as atoms: `M[0..16]` are 0–15, A is 16, X is 17.
pub(crate) const A: usize = 16;
/// The index register's atom.
pub(crate) const X: usize = 17;
/// The number of atoms.
pub(crate) const ATOMS: usize = 18;

/// What each atom holds at a program point.
pub(crate) type State = [Vn; ATOMS];

/// Loads at or above this offset are not plain packet bytes (Linux ancillary data and the
/// negative `SKF_NET_OFF`/`SKF_LL_OFF` bases): never folded into, never used as bounds.
pub(crate) const SPECIAL_OFFSETS: u64 = 0x8000_0000;

/// Below this offset (Linux's `SKF_LL_OFF`), an absolute load and an `[x + k]` load of the same
/// offset behave alike in every engine: plain packet bytes, or (from [`SPECIAL_OFFSETS`] on) a
/// load that fails on every packet. From it on, absolute loads read link-layer, network-layer
/// or ancillary data on Linux, which `[x + k]` loads never do.
pub(crate) const LINUX_SPECIAL: u64 = sift_insn::code::SKF_LL_OFF as u64;

/// A hash-consed expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Val {
    Const(u32),
    Abs(Size, u32),
    /// `P[X+k:size]` with X's value number.
    Ind(Size, u32, Vn),
    Len,
    Msh(u32),
    /// `a op #k` (only for safe constants).
    AluK(AluOp, Vn, u32),
    /// `a op x` with X's value number (unknown, or a constant that must not be folded in).
    AluX(AluOp, Vn, Vn),
    Neg(Vn),
    /// A value nothing is known about (initial registers, disagreeing predecessors).
    Opaque(u32),
}

/// The value-number table of one optimizer round.
#[derive(Debug, Default)]
pub(crate) struct Values {
    map: FastMap<Val, Vn>,
    vals: Vec<Val>,
    opaque: u32,
}

impl Values {
    pub(crate) fn new() -> Values {
        Values::default()
    }

    pub(crate) fn intern(&mut self, v: Val) -> Vn {
        if let Some(&n) = self.map.get(&v) {
            return n;
        }
        let n = self.vals.len() as Vn;
        self.vals.push(v);
        self.map.insert(v, n);
        n
    }

    pub(crate) fn konst(&mut self, c: u32) -> Vn {
        self.intern(Val::Const(c))
    }

    /// The number of constant `c`, if some statement produced it.
    pub(crate) fn konst_lookup(&self, c: u32) -> Option<Vn> {
        self.map.get(&Val::Const(c)).copied()
    }

    /// A fresh unknown value.
    pub(crate) fn opaque(&mut self) -> Vn {
        self.opaque += 1;
        self.intern(Val::Opaque(self.opaque))
    }

    pub(crate) fn get(&self, n: Vn) -> Val {
        self.vals[n as usize]
    }

    pub(crate) fn as_const(&self, n: Vn) -> Option<u32> {
        match self.get(n) {
            Val::Const(c) => Some(c),
            _ => None,
        }
    }

    /// A state of fresh unknowns (the program entry).
    pub(crate) fn unknown_state(&mut self) -> State {
        let mut s = [0; ATOMS];
        for v in &mut s {
            *v = self.opaque();
        }
        s
    }

    /// The meet of predecessor exit states: agreeing atoms keep their number, the others get
    /// a fresh unknown.
    pub(crate) fn merge<'a>(&mut self, mut states: impl Iterator<Item = &'a State>) -> State {
        let Some(first) = states.next() else { return self.unknown_state() };
        let mut out = *first;
        let mut differs = [false; ATOMS];
        for s in states {
            for i in 0..ATOMS {
                differs[i] |= s[i] != out[i];
            }
        }
        for i in 0..ATOMS {
            if differs[i] {
                out[i] = self.opaque();
            }
        }
        out
    }
}

/// How a statement can end the program with 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Risk {
    /// Never.
    None,
    /// Exactly when the captured length is below the bound (absolute loads, `ldxb 4*([k]&0xf)`).
    Bound(u64),
    /// Exactly when `X + bound` exceeds the captured length, X being this IPv4 header length
    /// (a `Msh` value, 0–60, so no wrap-around in any engine).
    IndBound(Vn, u64),
    /// On packets nothing else tells (ancillary loads, other `[x + k]`, `div x`).
    Other,
    /// On every packet (`div x`/`mod x` with X known to be 0).
    Always,
}

/// One simulated statement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Eval {
    /// The atom written.
    pub dest: usize,
    /// The value written.
    pub vn: Vn,
    /// The canonical form of the statement (same value, same failures).
    pub stmt: Stmt,
    /// How it can fail.
    pub risk: Risk,
    /// Atoms it also writes, with values nothing knows (a walk's X and scratch word).
    pub clobbers: RegSet,
}

impl Eval {
    /// Writes the statement's effect into `state`: its value into its atom, fresh unknowns
    /// into the atoms it clobbers.
    pub(crate) fn write(&self, values: &mut Values, state: &mut State) {
        state[self.dest] = self.vn;
        if !self.clobbers.is_empty() {
            for (r, v) in state.iter_mut().enumerate() {
                if r != self.dest && self.clobbers.intersects(atom_set(r)) {
                    *v = values.opaque();
                }
            }
        }
    }
}

/// The register of an atom.
pub(crate) fn atom_set(r: usize) -> RegSet {
    match r {
        A => RegSet::A,
        X => RegSet::X,
        m => RegSet::mem(Slot::new(m as u32).expect("atoms below 16 are scratch words")),
    }
}

fn shift(op: AluOp) -> bool {
    matches!(op, AluOp::Lsh | AluOp::Rsh)
}

fn divide(op: AluOp) -> bool {
    matches!(op, AluOp::Div | AluOp::Mod)
}

/// Whether `op #k` is the same operation in every engine as `op x` with X = k, and may be
/// folded at compile time.
fn safe_constant(op: AluOp, k: u32) -> bool {
    !((divide(op) && k == 0) || (shift(op) && k >= 32))
}

/// `a op #k`, folded and simplified.
fn alu_k(values: &mut Values, op: AluOp, a: Vn, k: u32) -> Vn {
    if let Some(c) = values.as_const(a) {
        return values.konst(op.eval(c, k));
    }
    match (op, k) {
        (AluOp::Add | AluOp::Sub | AluOp::Or | AluOp::Xor | AluOp::Lsh | AluOp::Rsh, 0)
        | (AluOp::Mul | AluOp::Div, 1)
        | (AluOp::And, u32::MAX) => a,
        (AluOp::Mul | AluOp::And, 0) | (AluOp::Mod, 1) => values.konst(0),
        _ => values.intern(Val::AluK(op, a, k)),
    }
}

fn bound(k: u32, size: Size) -> Risk {
    let end = u64::from(k) + u64::from(size.bytes());
    if u64::from(k) >= SPECIAL_OFFSETS || end > SPECIAL_OFFSETS {
        Risk::Other
    } else {
        Risk::Bound(end)
    }
}

/// Simulates `s` on `state` (not modified): the value written, the canonical statement and
/// its risk.
pub(crate) fn eval(values: &mut Values, state: &State, s: Stmt) -> Eval {
    let a = state[A];
    let x = state[X];
    let xc = values.as_const(x);
    let mut out = Eval { dest: A, vn: 0, stmt: s, risk: Risk::None, clobbers: RegSet::EMPTY };
    match s {
        Stmt::Ld(src) => {
            out.vn = match src {
                Src::Abs(size, k) => {
                    out.risk = bound(k, size);
                    values.intern(Val::Abs(size, k))
                }
                Src::Ind(size, k) => {
                    let folded = xc.and_then(|c| {
                        let off = u64::from(c) + u64::from(k);
                        (off + u64::from(size.bytes()) <= LINUX_SPECIAL).then_some(off as u32)
                    });
                    match folded {
                        Some(off) => {
                            out.stmt = Stmt::Ld(Src::Abs(size, off));
                            out.risk = bound(off, size);
                            values.intern(Val::Abs(size, off))
                        }
                        None => {
                            out.risk = match values.get(x) {
                                Val::Msh(_) => {
                                    Risk::IndBound(x, u64::from(k) + u64::from(size.bytes()))
                                }
                                _ => Risk::Other,
                            };
                            values.intern(Val::Ind(size, k, x))
                        }
                    }
                }
                Src::Len => values.intern(Val::Len),
                Src::Imm(k) => values.konst(k),
                Src::Mem(m) => {
                    let v = state[m.index()];
                    if let Some(c) = values.as_const(v) {
                        out.stmt = Stmt::Ld(Src::Imm(c));
                    } else if v == x {
                        out.stmt = Stmt::Txa;
                    }
                    v
                }
            };
        }
        Stmt::Ldx(src) => {
            out.dest = X;
            out.vn = match src {
                XSrc::Imm(k) => values.konst(k),
                XSrc::Len => values.intern(Val::Len),
                XSrc::Mem(m) => {
                    let v = state[m.index()];
                    if let Some(c) = values.as_const(v) {
                        out.stmt = Stmt::Ldx(XSrc::Imm(c));
                    } else if v == a {
                        out.stmt = Stmt::Tax;
                    }
                    v
                }
                XSrc::Msh(k) => {
                    out.risk = bound(k, Size::B);
                    values.intern(Val::Msh(k))
                }
            };
        }
        Stmt::St(m) => {
            out.dest = m.index();
            out.vn = a;
        }
        Stmt::Stx(m) => {
            out.dest = m.index();
            out.vn = x;
        }
        Stmt::Alu(op, Operand::K(k)) => {
            out.vn = if safe_constant(op, k) {
                alu_k(values, op, a, k)
            } else {
                // `div #0` and shifts by 32 or more: kept as written, and not the same value
                // as the `x` form (see `safe_constant`).
                values.intern(Val::AluK(op, a, k))
            };
            if let Some(c) = values.as_const(out.vn) {
                out.stmt = Stmt::Ld(Src::Imm(c));
            }
        }
        Stmt::Alu(op, Operand::X) => {
            match xc {
                Some(c) if safe_constant(op, c) => {
                    out.stmt = Stmt::Alu(op, Operand::K(c));
                    out.vn = alu_k(values, op, a, c);
                }
                _ => {
                    if divide(op) {
                        out.risk = if xc == Some(0) { Risk::Always } else { Risk::Other };
                    }
                    out.vn = match values.as_const(a) {
                        // Commutative and never failing: `#c op x` is `x op #c`.
                        Some(c)
                            if xc.is_none()
                                && matches!(
                                    op,
                                    AluOp::Add | AluOp::Mul | AluOp::And | AluOp::Or | AluOp::Xor
                                ) =>
                        {
                            alu_k(values, op, x, c)
                        }
                        _ => values.intern(Val::AluX(op, a, x)),
                    };
                }
            }
            if out.risk == Risk::None
                && let Some(c) = values.as_const(out.vn)
            {
                out.stmt = Stmt::Ld(Src::Imm(c));
            }
        }
        Stmt::Neg => {
            out.vn = match values.as_const(a) {
                Some(c) => {
                    out.stmt = Stmt::Ld(Src::Imm(c.wrapping_neg()));
                    values.konst(c.wrapping_neg())
                }
                None => values.intern(Val::Neg(a)),
            };
        }
        Stmt::Tax => {
            out.dest = X;
            out.vn = a;
        }
        Stmt::Txa => {
            out.vn = x;
        }
        Stmt::Walk(w) => {
            // Opaque (see `crate::walk`): A, X and its scratch word become unknowns, and it
            // may end the program on packets nothing else predicts.
            out.vn = values.opaque();
            out.risk = Risk::Other;
            out.clobbers = w.defs().minus(RegSet::A);
        }
    }
    out
}

/// The value numbers a branch compares: A and the operand (a constant's number for `#k`).
pub(crate) fn branch_operands(values: &mut Values, state: &State, operand: Operand) -> (Vn, Vn) {
    let b = match operand {
        Operand::K(k) => values.konst(k),
        Operand::X => state[X],
    };
    (state[A], b)
}
