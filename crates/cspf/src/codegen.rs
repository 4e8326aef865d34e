//! Predicate tree → CSPF code that gives the same verdict as the classic BPF program.
//!
//! **The problem.** A BPF program rejects a packet as soon as it loads a field past the end,
//! but only loads what its short-circuit evaluation reaches. CSPF has no branches: every word a
//! program pushes is read unless a short-circuit operator has already returned, and a word past
//! the end rejects. Evaluating the whole expression would reject short packets that BPF accepts
//! (`arp or ip host 1.2.3.4` on a 42-byte ARP packet is fine for BPF, but the IPv4 address
//! words lie past its end).
//!
//! **Stages.** Each leaf (field test) has a *level*: the packet length (rounded up to whole
//! words) from which CSPF can read it. Levels are sorted; the program has one stage per level.
//! Stage `j` treats leaves above its level as unreadable and computes, three-valued, what BPF
//! would do: finish TRUE (`t`), finish FALSE (`f`), or reach an unreadable leaf (neither). The
//! stage returns FALSE where `f` holds and TRUE where `t` holds (with `COR`/`CAND`/`CNOR`/
//! `CNAND`) and otherwise falls through to the next stage; after the last, the packet is
//! rejected. Formulas are simplified with what earlier returns proved (a packet that reached
//! stage 2 of `ip host X` is IPv4), so the usual programs stay short.
//!
//! **Why the verdicts agree.** `t` is built *path by path*: each of its disjuncts is one way
//! through BPF's short-circuit evaluation and tests every leaf on it, so a TRUE return has read
//! every word BPF loads on that path; BPF then takes the same path and accepts too. (Where the
//! simplifier finds an `or` operand that always holds, it keeps that operand's reads.) A FALSE
//! return is always right: the BPF program either finishes FALSE or loads past the end, and
//! both reject. A packet reaches the end only if no path accepted it. The stage order matters
//! only for packets BPF accepts: the reads of earlier stages must not run past such a packet's
//! end, which holds because they are at lower levels than the fields its path needs.
//!
//! **Indirect fields** (after a variable-length IPv4 header, extension only) get the level they
//! would have after a 20-byte header. Packets with IPv4 options (or, for non-IPv4 packets, a
//! low nibble above 5 in the byte where the IPv4 header would start) that end before the
//! deepest such field may then be rejected where BPF accepts; so may packets of odd length that
//! end in the middle of a word a field needs. [`crate::CspfProgram::exact_for`] names both.

use sift_compile::error::{Need, Resource};
use sift_compile::{CompileError, CompileErrorKind};

use crate::Exactness;
use crate::insn::{Action, Insn, MAX_PUSHWORD, Op};
use crate::tree::{Base, Cmp, Leaf, Tree};

/// A packet word: fixed, or relative to the end of an IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum WRef {
    /// Word `n`.
    Fixed(u16),
    /// Word `nlw + 2 * IHL + rel`, where the IHL is the low nibble of word `nlw`'s high byte.
    Ind { nlw: u16, rel: u16 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum AOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl AOp {
    fn negate(self) -> AOp {
        match self {
            AOp::Eq => AOp::Ne,
            AOp::Ne => AOp::Eq,
            AOp::Lt => AOp::Ge,
            AOp::Ge => AOp::Lt,
            AOp::Gt => AOp::Le,
            AOp::Le => AOp::Gt,
        }
    }

    fn eval(self, x: u16, k: u16) -> bool {
        match self {
            AOp::Eq => x == k,
            AOp::Ne => x != k,
            AOp::Lt => x < k,
            AOp::Le => x <= k,
            AOp::Gt => x > k,
            AOp::Ge => x >= k,
        }
    }

    fn op(self) -> Op {
        match self {
            AOp::Eq => Op::Eq,
            AOp::Ne => Op::Neq,
            AOp::Lt => Op::Lt,
            AOp::Le => Op::Le,
            AOp::Gt => Op::Gt,
            AOp::Ge => Op::Ge,
        }
    }
}

/// `(word & mask) op k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Atom {
    w: WRef,
    mask: u16,
    op: AOp,
    k: u16,
}

impl Atom {
    fn negate(self) -> Atom {
        Atom { op: self.op.negate(), ..self }
    }
}

/// A formula in negation normal form over atoms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum F {
    True,
    False,
    Atom(Atom),
    And(Vec<F>),
    Or(Vec<F>),
}

fn neg(f: &F) -> F {
    match f {
        F::True => F::False,
        F::False => F::True,
        F::Atom(a) => F::Atom(a.negate()),
        F::And(xs) => F::Or(xs.iter().map(neg).collect()),
        F::Or(xs) => F::And(xs.iter().map(neg).collect()),
    }
}

fn mk_and(xs: Vec<F>) -> F {
    let mut out: Vec<F> = Vec::new();
    for x in xs {
        match x {
            F::True => {}
            F::False => return F::False,
            F::And(ys) => {
                for y in ys {
                    if !out.contains(&y) {
                        out.push(y);
                    }
                }
            }
            x => {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
    }
    match out.len() {
        0 => F::True,
        1 => out.pop().unwrap_or(F::True),
        _ => F::And(out),
    }
}

fn mk_or(xs: Vec<F>) -> F {
    let mut out: Vec<F> = Vec::new();
    for x in xs {
        match x {
            F::False => {}
            F::True => return F::True,
            F::Or(ys) => {
                for y in ys {
                    if !out.contains(&y) {
                        out.push(y);
                    }
                }
            }
            x => {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
    }
    match out.len() {
        0 => F::False,
        1 => out.pop().unwrap_or(F::False),
        _ => F::Or(out),
    }
}

/// Reads of every word `f` tests, and nothing else: what an `or` operand that always holds is
/// replaced by. Dropping it would drop the loads BPF makes on the way to the same verdict, and a
/// packet too short for them would be accepted where BPF rejects it.
fn reads_of(f: &F) -> F {
    fn words(f: &F, out: &mut Vec<WRef>) {
        match f {
            F::Atom(a) => {
                if !out.contains(&a.w) {
                    out.push(a.w);
                }
            }
            F::And(xs) | F::Or(xs) => xs.iter().for_each(|x| words(x, out)),
            F::True | F::False => {}
        }
    }
    let mut ws = Vec::new();
    words(f, &mut ws);
    mk_and(ws.into_iter().map(|w| F::Atom(Atom { w, mask: 0, op: AOp::Eq, k: 0 })).collect())
}

fn size(f: &F) -> usize {
    match f {
        F::And(xs) | F::Or(xs) => 1 + xs.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// A leaf's level: fixed fields first (by the packet length, in whole words, that holds them),
/// then fields after the IPv4 header (by their end relative to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Level {
    /// Nothing readable (a packet shorter than every field).
    Zero,
    /// Readable from this packet length on.
    Len(u32),
}

fn round2(x: u32) -> u32 {
    x.saturating_add(1) & !1
}

fn level(l: &Leaf) -> Level {
    let end = round2(l.field.end());
    match l.field.base {
        Base::Fixed => Level::Len(end),
        // Ordered as if the IPv4 header had no options (see the module documentation).
        Base::AfterIpv4 { nl } => Level::Len(round2(nl.saturating_add(20).saturating_add(end))),
    }
}

/// What has been proved false (by returns not taken) so far.
#[derive(Default)]
struct Facts {
    atoms: Vec<(Atom, bool)>,
    false_formulas: Vec<F>,
    /// Words already read by code that ran (a test of no bits of them is then decided).
    read: Vec<WRef>,
}

impl Facts {
    fn atom(&self, a: &Atom) -> Option<bool> {
        if a.mask == 0 && self.read.contains(&a.w) {
            return Some(a.op.eval(0, a.k));
        }
        for (b, v) in self.atoms.iter().rev() {
            if b == a {
                return Some(*v);
            }
            if b.negate() == *a {
                return Some(!v);
            }
            if b.w == a.w && a.mask & !b.mask == 0 {
                // `(w & b.mask) == b.k` is known: the word's bits under b.mask are known.
                let known = match (b.op, v) {
                    (AOp::Eq, true) | (AOp::Ne, false) => Some(b.k),
                    _ => None,
                };
                if let Some(x) = known {
                    return Some(a.op.eval(x & a.mask, a.k));
                }
            }
        }
        None
    }

    /// Whether `g` is known not to hold: it is a formula an earlier return did not take, or one
    /// whose other conjuncts are known to hold here.
    fn known_false(&self, g: &F) -> bool {
        self.false_formulas.iter().any(|k| {
            if k == g {
                return true;
            }
            let F::And(ks) = k else { return false };
            let rest: Vec<F> = ks
                .iter()
                .filter(|c| !matches!(c, F::Atom(a) if self.atom(a) == Some(true)))
                .cloned()
                .collect();
            rest.len() < ks.len() && mk_and(rest) == *g
        })
    }

    /// Runs `f` with only what was known before position `mark` of the assumptions (that is,
    /// outside the `and`/`or` being simplified).
    fn outside<T>(&mut self, mark: usize, f: impl FnOnce(&mut Facts) -> T) -> T {
        let local = self.atoms.split_off(mark);
        let r = f(self);
        self.atoms.extend(local);
        r
    }

    /// Records that code testing `f` ran and `f` did not hold.
    fn add_false(&mut self, f: &F) {
        if let F::And(ws) = reads_of(f) {
            for w in ws {
                if let F::Atom(a) = w
                    && !self.read.contains(&a.w)
                {
                    self.read.push(a.w);
                }
            }
        } else if let F::Atom(a) = reads_of(f)
            && !self.read.contains(&a.w)
        {
            self.read.push(a.w);
        }
        self.add_false_formula(f);
    }

    fn add_false_formula(&mut self, f: &F) {
        match f {
            F::Atom(a) => self.atoms.push((*a, false)),
            F::Or(xs) => xs.iter().for_each(|x| self.add_false_formula(x)),
            F::True | F::False => {}
            f => self.false_formulas.push(f.clone()),
        }
    }

    fn simp(&mut self, f: &F) -> F {
        match f {
            F::True | F::False => f.clone(),
            F::Atom(a) => match self.atom(a) {
                Some(true) => F::True,
                Some(false) => F::False,
                None if self.known_false(f) => F::False,
                None if self.known_false(&F::Atom(a.negate())) => F::True,
                None => f.clone(),
            },
            F::And(xs) | F::Or(xs) => {
                let is_and = matches!(f, F::And(_));
                if self.known_false(f) {
                    return F::False;
                }
                if self.known_false(&neg(f)) {
                    return F::True;
                }
                let mark = self.atoms.len();
                // Atoms first: each is assumed (true under `and`, false under `or`) for the
                // others; then every operand in the source order.
                // An atom implied by the kept atoms before it and all atoms after it is dropped.
                let atoms: Vec<(usize, Atom)> = xs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, x)| if let F::Atom(a) = x { Some((i, *a)) } else { None })
                    .collect();
                let mut keep = vec![true; xs.len()];
                for (j, &(i, a)) in atoms.iter().enumerate() {
                    let before = self.atoms.len();
                    for &(_, b) in &atoms[j + 1..] {
                        self.atoms.push((b, is_and));
                    }
                    let v = self.atom(&a);
                    self.atoms.truncate(before);
                    match v {
                        Some(v) if v == is_and => keep[i] = false,
                        Some(_) if is_and => {
                            self.atoms.truncate(mark);
                            return F::False;
                        }
                        // True under the other operands' being false: the `or` holds, but only
                        // after reading what BPF reads on the way (see `reads_of`), unless it is
                        // true by what is known outside this `or`.
                        Some(_) => {
                            if self.outside(mark, |f| f.atom(&a)) == Some(true) {
                                self.atoms.truncate(mark);
                                return F::True;
                            }
                        }
                        None => self.atoms.push((a, is_and)),
                    }
                }
                let mut ordered = Vec::new();
                for (x, keep) in xs.iter().zip(keep) {
                    if !keep {
                        continue;
                    }
                    if matches!(x, F::Atom(_)) {
                        ordered.push(x.clone());
                        continue;
                    }
                    let s = self.simp(x);
                    match (&s, is_and) {
                        (F::False, true) => {
                            self.atoms.truncate(mark);
                            return F::False;
                        }
                        (F::True, false) => {
                            if self.outside(mark, |f| f.simp(x)) == F::True {
                                self.atoms.truncate(mark);
                                return F::True;
                            }
                            ordered.push(reads_of(x));
                        }
                        _ => ordered.push(s),
                    }
                }
                self.atoms.truncate(mark);
                let r = if is_and { mk_and(ordered) } else { mk_or(ordered) };
                if self.known_false(&r) {
                    F::False
                } else if matches!(r, F::And(_) | F::Or(_)) && self.known_false(&neg(&r)) {
                    F::True
                } else {
                    r
                }
            }
        }
    }
}

type Code = Vec<Insn>;

/// The generator's limits.
pub(crate) struct Limits {
    pub max_words: usize,
    pub stack_depth: usize,
}

/// A budget on formula size, so that pathological expressions fail instead of exploding.
const MAX_FORMULA: usize = 200_000;

struct Gen {
    code: Code,
    facts: Facts,
    budget: usize,
    /// The program has ended (a return that always happens was emitted).
    done: bool,
}

fn too_complex() -> CompileError {
    let what = Resource::TargetComplexity { target: "CSPF" };
    CompileError::new(CompileErrorKind::ResourceLimit { what, limit: MAX_FORMULA as u64 }, None)
}

/// A leaf as `(holds, does not hold)`, each reading every word BPF's load of the field needs
/// (at least the field's last word), so that a return on either reads what BPF would.
fn expand(l: &Leaf) -> Result<(F, F), CompileError> {
    let (core, last_w) = expand_core(l)?;
    let read_last = F::Atom(Atom { w: last_w, mask: 0, op: AOp::Eq, k: 0 });
    let whole = |f: F| match f {
        F::Atom(a) if a.w == last_w => F::Atom(a),
        f => mk_and(vec![read_last.clone(), f]),
    };
    let n = neg(&core);
    Ok((whole(core), whole(n)))
}

fn expand_core(l: &Leaf) -> Result<(F, WRef), CompileError> {
    let size = l.field.size;
    let fieldmask: u32 = if size >= 4 { u32::MAX } else { (1u32 << (8 * size)) - 1 };
    // Chunks per word, most significant first: (word, positioned mask bits, positioned value).
    let mut chunks: Vec<(WRef, u16, u16, u16)> = Vec::new(); // (w, field bits in word, mask, value)
    for i in 0..size {
        let addr = l.field.off.checked_add(i).ok_or_else(too_far)?;
        let word = addr / 2;
        let pos = if addr % 2 == 0 { 8 } else { 0 };
        let fb = 8 * (size - 1 - i);
        let w = match l.field.base {
            Base::Fixed => {
                if word > u32::from(MAX_PUSHWORD) {
                    return Err(too_far());
                }
                WRef::Fixed(word as u16)
            }
            Base::AfterIpv4 { nl } => {
                let nlw = nl / 2;
                if nlw + word > 0xffff - 30 {
                    return Err(too_far());
                }
                WRef::Ind { nlw: nlw as u16, rel: word as u16 }
            }
        };
        let byte = |x: u32| (((x >> fb) & 0xff) as u16) << pos;
        let bits = 0xffu16 << pos;
        match chunks.last_mut() {
            Some(c) if c.0 == w => {
                c.1 |= bits;
                c.2 |= byte(l.mask);
                c.3 |= byte(l.value);
            }
            _ => chunks.push((w, bits, byte(l.mask), byte(l.value))),
        }
    }
    let last_w = chunks.last().map(|c| c.0).ok_or_else(too_complex)?;
    let read_const = |v: bool| F::Atom(Atom { w: last_w, mask: 0, op: AOp::Eq, k: u16::from(!v) });
    let mv = l.mask & fieldmask;
    let f = match l.cmp {
        Cmp::Eq => {
            if l.value & !mv != 0 {
                return Ok((read_const(false), last_w));
            }
            let n = chunks.len();
            mk_and(
                chunks
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| c.2 != 0 || *i == n - 1)
                    .map(|(_, c)| F::Atom(Atom { w: c.0, mask: c.2, op: AOp::Eq, k: c.3 }))
                    .collect(),
            )
        }
        Cmp::Gt | Cmp::Ge => {
            if l.value > mv || (l.cmp == Cmp::Gt && l.value == mv) {
                return Ok((read_const(false), last_w));
            }
            if l.cmp == Cmp::Ge && l.value == 0 {
                return Ok((read_const(true), last_w));
            }
            // Lexicographic over the chunks, most significant first.
            let last = if l.cmp == Cmp::Gt { AOp::Gt } else { AOp::Ge };
            let mut acc: Option<F> = None;
            for (i, c) in chunks.iter().enumerate().rev() {
                let a = |op| F::Atom(Atom { w: c.0, mask: c.2, op, k: c.3 });
                acc = Some(match acc {
                    None => a(if i == chunks.len() - 1 { last } else { AOp::Gt }),
                    Some(rest) => mk_or(vec![a(AOp::Gt), mk_and(vec![a(AOp::Eq), rest])]),
                });
            }
            acc.ok_or_else(too_complex)?
        }
        Cmp::Set => {
            let parts: Vec<F> = chunks
                .iter()
                .filter(|c| c.2 & c.3 != 0)
                .map(|c| F::Atom(Atom { w: c.0, mask: c.2 & c.3, op: AOp::Ne, k: 0 }))
                .collect();
            if parts.is_empty() {
                return Ok((read_const(false), last_w));
            }
            mk_or(parts)
        }
    };
    Ok((f, last_w))
}

/// What PUSHWORD+n reaches (checked against [`MAX_PUSHWORD`] in the tests).
pub(crate) const REACH: &str = "PUSHWORD+n addresses words 0 to 1007 (bytes 0 to 2015)";

fn too_far() -> CompileError {
    CompileError::new(
        CompileErrorKind::TargetLimit {
            target: "CSPF",
            need: Need::FarOffset,
            because: REACH,
            option: None,
        },
        None,
    )
}

fn push_const(k: u16, op: Op) -> Insn {
    match k {
        0 => Insn::new(Action::PushZero, op),
        1 => Insn::new(Action::PushOne, op),
        0xffff => Insn::new(Action::PushFfff, op),
        0xff00 => Insn::new(Action::PushFf00, op),
        0x00ff => Insn::new(Action::Push00ff, op),
        k => Insn::lit(op, k),
    }
}

impl Gen {
    fn charge(&mut self, f: &F) -> Result<(), CompileError> {
        self.budget = self.budget.saturating_add(size(f));
        if self.budget > MAX_FORMULA { Err(too_complex()) } else { Ok(()) }
    }

    /// `(t, f)` of `tree` with leaves above `lv` unreadable.
    fn tf(&mut self, tree: &Tree, lv: Level) -> Result<(F, F), CompileError> {
        let r = match tree {
            Tree::Const(b) => {
                if *b {
                    (F::True, F::False)
                } else {
                    (F::False, F::True)
                }
            }
            Tree::Leaf(l) if level(l) <= lv => expand(l)?,
            Tree::Leaf(_) => (F::False, F::False),
            Tree::Not(x) => {
                let (t, f) = self.tf(x, lv)?;
                (f, t)
            }
            Tree::And(xs) => {
                let mut prefix = Vec::new();
                let mut fs = Vec::new();
                for x in xs {
                    let (t, f) = self.tf(x, lv)?;
                    let mut p = prefix.clone();
                    p.push(f);
                    fs.push(mk_and(p));
                    prefix.push(t);
                    if matches!(prefix.last(), Some(F::False)) {
                        break;
                    }
                }
                (mk_and(prefix), mk_or(fs))
            }
            Tree::Or(xs) => {
                let mut prefix = Vec::new();
                let mut ts = Vec::new();
                for x in xs {
                    let (t, f) = self.tf(x, lv)?;
                    let mut p = prefix.clone();
                    p.push(t);
                    ts.push(mk_and(p));
                    prefix.push(f);
                    if matches!(prefix.last(), Some(F::False)) {
                        break;
                    }
                }
                (mk_or(ts), mk_and(prefix))
            }
        };
        self.charge(&r.0)?;
        self.charge(&r.1)?;
        Ok(r)
    }

    fn full(&mut self, tree: &Tree) -> Result<F, CompileError> {
        let f = match tree {
            Tree::Const(b) => {
                if *b {
                    F::True
                } else {
                    F::False
                }
            }
            Tree::Leaf(l) => expand(l)?.0,
            Tree::Not(x) => neg(&self.full(x)?),
            Tree::And(xs) => mk_and(xs.iter().map(|x| self.full(x)).collect::<Result<_, _>>()?),
            Tree::Or(xs) => mk_or(xs.iter().map(|x| self.full(x)).collect::<Result<_, _>>()?),
        };
        self.charge(&f)?;
        Ok(f)
    }

    // ---- emission -----------------------------------------------------------------------

    fn read(&self, w: WRef, op: Op, code: &mut Code) {
        match w {
            WRef::Fixed(n) => code.push(Insn::new(Action::PushWord(n), op)),
            WRef::Ind { nlw, rel } => {
                code.push(Insn::new(Action::PushWord(nlw), Op::Nop));
                code.push(Insn::lit(Op::And, 0x0f00));
                code.push(Insn::lit(Op::Shr, 7));
                code.push(push_const(nlw + rel, Op::Add));
                code.push(Insn::new(Action::PushInd, op));
            }
        }
    }

    /// Pushes `(w & mask)`, then `k` with operator `op`.
    fn atom(&self, a: &Atom, op: Op, code: &mut Code) {
        self.read(a.w, Op::Nop, code);
        if a.mask != 0xffff {
            code.push(push_const(a.mask, Op::And));
        }
        code.push(push_const(a.k, op));
    }

    /// Pushes the formula's value, 0 or 1.
    fn value(&self, f: &F, code: &mut Code) {
        match f {
            F::True => code.push(Insn::new(Action::PushOne, Op::Nop)),
            F::False => code.push(Insn::new(Action::PushZero, Op::Nop)),
            F::Atom(a) => self.atom(a, a.op.op(), code),
            F::And(xs) | F::Or(xs) => {
                let op = if matches!(f, F::And(_)) { Op::And } else { Op::Or };
                for (i, x) in xs.iter().enumerate() {
                    self.value(x, code);
                    if i > 0 {
                        code.push(Insn::new(Action::NoPush, op));
                    }
                }
            }
        }
    }

    /// Emits a segment of code (one return, or the final value).
    fn segment(&mut self, seg: Code) {
        self.code.extend(seg);
    }

    /// Returns TRUE where `f` holds (each disjunct its own return).
    fn exit_true(&mut self, f: &F) {
        if self.done {
            return;
        }
        let f = self.facts.simp(f);
        if f == F::True {
            return self.end_with(true);
        }
        if let F::Or(xs) = &f {
            for x in xs {
                self.exit_true(x);
            }
            return;
        }
        let mut seg = Code::new();
        match &f {
            F::False => return,
            F::Atom(a) if a.op == AOp::Eq => self.atom(a, Op::Cor, &mut seg),
            F::Atom(a) if a.op == AOp::Ne => self.atom(a, Op::Cnand, &mut seg),
            f => {
                self.value(f, &mut seg);
                seg.push(Insn::new(Action::PushOne, Op::Cor));
            }
        }
        self.segment(seg);
        self.facts.add_false(&f);
    }

    /// Returns FALSE where `f` holds.
    fn exit_false(&mut self, f: &F, required: bool) {
        if self.done {
            return;
        }
        let f = self.facts.simp(f);
        if f == F::True {
            return self.end_with(false);
        }
        if let F::Or(xs) = &f {
            for x in xs {
                self.exit_false(x, required);
            }
            return;
        }
        let mut seg = Code::new();
        match &f {
            F::False => return,
            F::Atom(a) if a.op == AOp::Eq => self.atom(a, Op::Cnor, &mut seg),
            F::Atom(a) if a.op == AOp::Ne => self.atom(a, Op::Cand, &mut seg),
            // A FALSE return is never needed for the verdict (later stages reject too); only
            // small tests (`not (ip or arp or rarp)`) are worth their words.
            f if !required && size(f) > 4 => return,
            f => {
                self.value(f, &mut seg);
                seg.push(Insn::new(Action::PushZero, Op::Cand));
            }
        }
        self.segment(seg);
        self.facts.add_false(&f);
    }

    /// The last stage: returns early along the top-level `and`/`or` spine, then leaves the
    /// value on the stack.
    fn finish(&mut self, f: &F) {
        if self.done {
            return;
        }
        let f = self.facts.simp(f);
        match &f {
            F::And(xs) if !xs.is_empty() => {
                for x in &xs[..xs.len() - 1] {
                    self.exit_false(&neg(x), true);
                }
                self.finish(&xs[xs.len() - 1]);
            }
            F::Or(xs) if !xs.is_empty() => {
                for x in &xs[..xs.len() - 1] {
                    self.exit_true(x);
                }
                self.finish(&xs[xs.len() - 1]);
            }
            f => {
                let mut seg = Code::new();
                self.value(f, &mut seg);
                self.segment(seg);
                self.done = true;
            }
        }
    }

    /// Ends the program with a constant verdict.
    fn end_with(&mut self, v: bool) {
        let a = if v { Action::PushOne } else { Action::PushZero };
        self.segment(vec![Insn::new(a, Op::Nop)]);
        self.done = true;
    }
}

/// Generates the program for `tree`. Returns the instructions and what
/// [`crate::CspfProgram::exact_for`] needs.
pub(crate) fn generate(
    tree: &Tree,
    limits: &Limits,
) -> Result<(Vec<Insn>, Exactness), CompileError> {
    let mut levels = Vec::new();
    let mut ex = Exactness::default();
    let mut leaves = 0usize;
    tree.for_each_leaf(&mut |l| {
        leaves += 1;
        let lv = level(l);
        if !levels.contains(&lv) {
            levels.push(lv);
        }
        let end = l.field.end();
        match l.field.base {
            Base::Fixed => {
                if end % 2 == 1 && !ex.odd_fixed_ends.contains(&end) {
                    ex.odd_fixed_ends.push(end);
                }
            }
            Base::AfterIpv4 { nl: n } => {
                ex.ipv4_nl = Some(n);
                ex.max_ind_end = ex.max_ind_end.max(round2(end));
                if end % 2 == 1 && !ex.odd_ind_ends.contains(&end) {
                    ex.odd_ind_ends.push(end);
                }
            }
        }
    });
    if let Some(n) = ex.ipv4_nl
        && !ex.odd_fixed_ends.contains(&(n + 1))
    {
        ex.odd_fixed_ends.push(n + 1);
    }
    if leaves > limits.max_words {
        return Err(too_long(leaves * 2, limits.max_words));
    }
    levels.sort();
    let mut g = Gen { code: Code::new(), facts: Facts::default(), budget: 0, done: false };
    if levels.is_empty() {
        let v = matches!(tree, Tree::Const(true)) || g.full(tree)? == F::True;
        let a = if v { Action::PushOne } else { Action::PushZero };
        return Ok((vec![Insn::new(a, Op::Nop)], ex));
    }
    // Decided before any read (`1 = 1 or …`): BPF loads nothing either.
    let (t0, f0) = g.tf(tree, Level::Zero)?;
    for (f, v) in [(t0, true), (f0, false)] {
        if f == F::True {
            let a = if v { Action::PushOne } else { Action::PushZero };
            return Ok((vec![Insn::new(a, Op::Nop)], ex));
        }
    }
    for (j, &lv) in levels.iter().enumerate() {
        let (t, f) = g.tf(tree, lv)?;
        if j + 1 == levels.len() {
            g.finish(&t);
        } else {
            g.exit_false(&f, false);
            g.exit_true(&t);
        }
        if g.code.len() > limits.max_words * 4 {
            break;
        }
    }
    let insns = peephole(g.code);
    let words: usize = insns.iter().map(|i| i.words()).sum();
    if words > limits.max_words {
        return Err(too_long(words, limits.max_words));
    }
    let depth = max_depth(&insns);
    if depth > limits.stack_depth {
        let what = Resource::TargetStack { target: "CSPF", depth: depth as u64 };
        let limit = limits.stack_depth as u64;
        return Err(CompileError::new(CompileErrorKind::ResourceLimit { what, limit }, None));
    }
    Ok((insns, ex))
}

/// Folds a return followed by the constant the program then ends with into one comparison:
/// `…|cand k; pushone` is `…|eq k`, and so on. The reads are unchanged.
fn peephole(mut insns: Vec<Insn>) -> Vec<Insn> {
    loop {
        let n = insns.len();
        if n < 2 {
            return insns;
        }
        let (prev, last) = (insns[n - 2], insns[n - 1]);
        let one = last == Insn::new(Action::PushOne, Op::Nop);
        let zero = last == Insn::new(Action::PushZero, Op::Nop);
        if !(one || zero) {
            return insns;
        }
        let op = match (prev.op, one) {
            (Op::Cand, true) | (Op::Cor, false) => Op::Eq,
            (Op::Cnor, true) | (Op::Cnand, false) => Op::Neq,
            _ => return insns,
        };
        insns.truncate(n - 1);
        insns[n - 2].op = op;
    }
}

fn too_long(words: usize, max: usize) -> CompileError {
    let what = Resource::TargetWords { target: "CSPF", words: words as u64 };
    CompileError::new(CompileErrorKind::ResourceLimit { what, limit: max as u64 }, None)
}

/// The deepest the stack gets (in the paper's short-circuit semantics, which leave more).
pub(crate) fn max_depth(insns: &[Insn]) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for i in insns {
        if !matches!(i.action, Action::NoPush | Action::PushInd) {
            d += 1;
        }
        max = max.max(d);
        if i.op != Op::Nop {
            // Every operator pushes one result (short-circuit ones too, in the paper's reading).
            d = d.saturating_sub(2) + 1;
        }
        max = max.max(d);
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_names_the_last_word() {
        let last = MAX_PUSHWORD;
        let want = format!("words 0 to {last} (bytes 0 to {})", 2 * u32::from(last) + 1);
        assert!(REACH.ends_with(&want), "{REACH}");
    }
}
