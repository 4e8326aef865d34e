//! The builder: libpcap's block algebra (`gencode.c`) over the [`crate::ir`] arena.
//!
//! **Why it exists.** The code generator turns each filter primitive into a [`Pred`]: a
//! sub-graph with one entry and *dangling* true and false exits, and combines them with
//! [`Builder::and`], [`Builder::or`] and `!` ([`Pred`]'s `Not`) exactly as gencode combines
//! `struct block`s with `gen_and`, `gen_or` and `gen_not`. Where gencode threads its exit lists
//! through the unused edge slots and a `sense` bit (`backpatch`, `merge`), a [`Pred`] keeps two
//! explicit lists of exits; `not` swaps them and costs no code. [`Builder::finish`] ties the
//! true exits to `ret #accept` and the false exits to `ret #0`, as gencode's `finish_parse`.
//!
//! Arithmetic (`ip[0] + ip[1] > 5`, `tcp[tcpflags] & 2 != 0` with a computed index) goes
//! through [`Value`], libpcap's `struct arth`: statements that leave the value in a scratch
//! word, plus an optional guard predicate (the protocol check that makes the load meaningful).
//! Scratch words are handed out round-robin as libpcap's `alloc_reg` does, so the same
//! sequence of calls gives the same `M[k]` numbers as libpcap.
//!
//! **Invariants.** Every block the builder creates is a branch whose dangling edges belong to
//! exactly one live [`Pred`] (or a return block). A [`Pred`] is linear: it is not `Clone`, and
//! every combinator consumes its operands, so an exit can be patched only once. Blocks of a
//! dropped `Pred` stay in the arena, unreachable. The graph is acyclic by construction: edges
//! only ever point at the entry of a predicate built earlier and not yet linked.
//!
//! Building the same predicates in the same order as gencode yields the same graph, and
//! [`crate::emit`] then lays it out as libpcap's unoptimized (`-O`) listing (checked
//! instruction for instruction in `tests/gen/build.rs` for `ip and tcp and dst port 80`,
//! `ip[0]+ip[1] > 5` and others).
//!
//! | gencode.c | here |
//! |---|---|
//! | `new_block(JMP(op))` + `b->stmts = s` | [`Builder::branch`] |
//! | `gen_cmp`, `gen_ncmp`, `gen_cmp_gt`/`_lt`/`_ne`, `gen_mcmp` | [`Builder::cmp`] with [`Cmp`], [`Load`], a mask |
//! | `gen_load_a(OR_TRAN_IPV4, …)` (`ldxb 4*([k]&0xf)`; `ld [x + off]`) | [`Load::AfterIpv4`] |
//! | `gen_and`, `gen_or`, `gen_not` | [`Builder::and`], [`Builder::or`], `!pred` |
//! | `gen_true`, `gen_false` | [`Builder::always`], [`Builder::never`] |
//! | `finish_parse` (backpatch to `ret #snaplen` / `ret #0`) | [`Builder::finish`] |
//! | `insert_compute_vloffsets` | [`Builder::prepend`] |
//! | `alloc_reg`, `free_reg` | [`Builder::alloc_slot`], [`Builder::free_slot`] |
//! | `gen_loadi`, `gen_loadlen`, `gen_load`, `gen_arth`, `gen_neg`, `gen_relation` | [`Builder::imm`], [`Builder::len`], [`Builder::load`], [`Builder::arith`], [`Builder::neg`], [`Builder::relation`] |
//!
//! `ip[0] + ip[1] > 5`, as gencode builds it:
//!
//! ```
//! use sift_compile::build::{Builder, Cmp, Load};
//! use sift_compile::ir::{AluOp, Size};
//!
//! let mut b = Builder::new();
//! let ip_byte = |b: &mut Builder, k| {
//!     let index = b.imm(k)?;
//!     let is_ip = b.cmp(Load::Abs(Size::H, 12), Cmp::Eq, 0x800, u32::MAX);
//!     b.load(index, &[], 14, Size::B, Some(is_ip))
//! };
//! let a = ip_byte(&mut b, 0)?;
//! let mut c = ip_byte(&mut b, 1)?;
//! drop(c.take_guard()); // gen_arth keeps the left guard only
//! let sum = b.arith(AluOp::Add, a, c)?;
//! let five = b.imm(5)?;
//! let p = b.relation(Cmp::Gt, sum, five);
//! let prog = sift_compile::emit::emit(&b.finish(p, 262144))?;
//! assert_eq!(prog.len(), 23); // as `tcpdump -O -d 'ip[0]+ip[1] > 5'`
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Two gencode quirks are left to the caller: `gen_arth` keeps only the left operand's guard
//! (call [`Value::take_guard`] on the right one to match it; [`Builder::arith`] and-s both),
//! and gencode's `reverse` flag for `<`/`<=` is [`Cmp::Lt`]/[`Cmp::Le`].

use crate::ir::*;
use std::fmt;

/// The placeholder successor of a dangling exit.
const HOLE: BlockId = BlockId(u32::MAX);

/// A compile-time error in code generation (libpcap's `bpf_error` messages).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// All 16 scratch words are in use.
    TooManyRegisters,
    /// Division by the constant zero.
    DivisionByZero,
    /// Modulus by the constant zero.
    ModulusByZero,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BuildError::TooManyRegisters => "too many registers needed to evaluate expression",
            BuildError::DivisionByZero => "division by zero",
            BuildError::ModulusByZero => "modulus by zero",
        })
    }
}

impl std::error::Error for BuildError {}

/// A dangling edge: the true (`jt`) or false (`jf`) edge of a branch block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Exit {
    block: BlockId,
    on_true: bool,
}

/// A predicate under construction: a sub-graph with one entry block and dangling exits taken
/// when the predicate holds (true exits) or not (false exits). Consumed by every combinator.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a predicate does nothing until it is combined or finished"]
pub struct Pred {
    entry: BlockId,
    t: Vec<Exit>,
    f: Vec<Exit>,
}

impl Pred {
    /// The entry block (gencode's `b->head`).
    pub fn entry(&self) -> BlockId {
        self.entry
    }
}

/// `!p`: the negation, the same code with the exits swapped (gencode's `gen_not`).
impl std::ops::Not for Pred {
    type Output = Pred;

    fn not(self) -> Pred {
        Pred { entry: self.entry, t: self.f, f: self.t }
    }
}

/// A comparison for [`Builder::cmp`]. `Ne`, `Lt`, `Le` and `Clear` are the negations of `Eq`,
/// `Ge`, `Gt` and `Set` (gencode's `reverse` flag): same code, exits swapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `==` (`jeq`)
    Eq,
    /// `!=` (`jeq`, negated)
    Ne,
    /// `>` (`jgt`)
    Gt,
    /// `>=` (`jge`)
    Ge,
    /// `<` (`jge`, negated)
    Lt,
    /// `<=` (`jgt`, negated)
    Le,
    /// `& v != 0` (`jset`)
    Set,
    /// `& v == 0` (`jset`, negated)
    Clear,
}

impl Cmp {
    /// The jump emitted and whether the predicate is its negation.
    pub fn jump(self) -> (JmpOp, bool) {
        match self {
            Cmp::Eq => (JmpOp::Jeq, false),
            Cmp::Ne => (JmpOp::Jeq, true),
            Cmp::Gt => (JmpOp::Jgt, false),
            Cmp::Ge => (JmpOp::Jge, false),
            Cmp::Lt => (JmpOp::Jge, true),
            Cmp::Le => (JmpOp::Jgt, true),
            Cmp::Set => (JmpOp::Jset, false),
            Cmp::Clear => (JmpOp::Jset, true),
        }
    }

    /// Evaluates `a cmp v`.
    pub fn eval(self, a: u32, v: u32) -> bool {
        let (op, negated) = self.jump();
        op.eval(a, v) != negated
    }
}

/// Where [`Builder::cmp`] loads A from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Load {
    /// `ld{,h,b} [off]`: a fixed offset (gencode's `OR_PACKET`/`OR_LINKPL` with a constant
    /// link-layer header).
    Abs(Size, u32),
    /// `ld{,h,b} [x + off]`: relative to X, which earlier statements **of the same block**
    /// set (X is not tracked across blocks).
    Ind(Size, u32),
    /// `ldxb 4*([hdr]&0xf); ld{,h,b} [x + off]`: past an IPv4 header whose first byte is at
    /// `hdr` (gencode's `OR_TRAN_IPV4`: `off` = `hdr` + offset in the transport header).
    AfterIpv4(u32, Size, u32),
    /// `ld #pktlen`: the wire length.
    Len,
    /// Arbitrary statements leaving the value in A.
    Stmts(Vec<Stmt>),
}

impl Load {
    /// The statements of the load.
    pub fn stmts(&self) -> Vec<Stmt> {
        match *self {
            Load::Abs(size, off) => vec![Stmt::Ld(Src::Abs(size, off))],
            Load::Ind(size, off) => vec![Stmt::Ld(Src::Ind(size, off))],
            Load::AfterIpv4(hdr, size, off) => {
                vec![Stmt::Ldx(XSrc::Msh(hdr)), Stmt::Ld(Src::Ind(size, off))]
            }
            Load::Len => vec![Stmt::Ld(Src::Len)],
            Load::Stmts(ref s) => s.clone(),
        }
    }
}

/// An arithmetic value under construction (libpcap's `struct arth`): statements that compute
/// it into a scratch word, and the guard that must hold for the value to mean anything (e.g.
/// "the packet is IPv4" for `ip[0]`). Consumed by [`Builder::arith`], [`Builder::relation`]
/// and [`Builder::load`], which free its scratch word.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a value holds a scratch word until it is consumed"]
pub struct Value {
    stmts: Vec<Stmt>,
    slot: Slot,
    guard: Option<Pred>,
}

impl Value {
    /// The scratch word holding the value once its statements ran.
    pub fn slot(&self) -> Slot {
        self.slot
    }

    /// The statements computing the value.
    pub fn stmts(&self) -> &[Stmt] {
        &self.stmts
    }

    /// Takes the guard away (to drop or combine it differently).
    pub fn take_guard(&mut self) -> Option<Pred> {
        self.guard.take()
    }
}

/// Round-robin scratch-word allocation, as libpcap's `alloc_reg`/`free_reg`.
#[derive(Clone, Debug, Default)]
struct Regs {
    used: [bool; Slot::COUNT],
    cur: usize,
}

impl Regs {
    fn alloc(&mut self) -> Result<Slot, BuildError> {
        for _ in 0..Slot::COUNT {
            if self.used[self.cur] {
                self.cur = (self.cur + 1) % Slot::COUNT;
            } else {
                self.used[self.cur] = true;
                return Ok(Slot::new(self.cur as u32).expect("cur < 16"));
            }
        }
        Err(BuildError::TooManyRegisters)
    }

    fn free(&mut self, slot: Slot) {
        self.used[slot.index()] = false;
    }
}

/// Builds a [`Cfg`] from predicates. See the module documentation.
#[derive(Debug, Default)]
pub struct Builder {
    cfg: Cfg,
    regs: Regs,
}

/// Appends the shorter list to the longer one (keeps long `or` chains near-linear).
fn concat(mut a: Vec<Exit>, mut b: Vec<Exit>) -> Vec<Exit> {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    a.extend(b);
    a
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// The graph so far (dangling exits show as `b4294967295`).
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    fn patch(&mut self, exits: &[Exit], target: BlockId) {
        for e in exits {
            match &mut self.cfg.block_mut(e.block).term {
                Terminator::Branch { jt, jf, .. } => {
                    let slot = if e.on_true { jt } else { jf };
                    debug_assert_eq!(*slot, HOLE, "an exit is patched once");
                    *slot = target;
                }
                Terminator::Jump(slot) => {
                    debug_assert_eq!(*slot, HOLE, "an exit is patched once");
                    *slot = target;
                }
                t => unreachable!("exits are branch edges, found {t:?}"),
            }
        }
    }

    /// A branch block `stmts; if A op operand` with both edges dangling (gencode's
    /// `new_block(JMP(op))` with `b->stmts = stmts`).
    pub fn branch(&mut self, stmts: Vec<Stmt>, op: JmpOp, operand: Operand) -> Pred {
        let id = self
            .cfg
            .push(Block { stmts, term: Terminator::Branch { op, operand, jt: HOLE, jf: HOLE } });
        Pred {
            entry: id,
            t: vec![Exit { block: id, on_true: true }],
            f: vec![Exit { block: id, on_true: false }],
        }
    }

    /// `load; [and #mask;] jxx #value` (gencode's `gen_ncmp`; `gen_cmp` is `mask` =
    /// `0xffffffff`, which emits no `and`).
    pub fn cmp(&mut self, load: Load, cmp: Cmp, value: u32, mask: u32) -> Pred {
        let mut stmts = load.stmts();
        if mask != u32::MAX {
            stmts.push(Stmt::Alu(AluOp::And, Operand::K(mask)));
        }
        let (op, negated) = cmp.jump();
        let p = self.branch(stmts, op, Operand::K(value));
        if negated { !p } else { p }
    }

    /// The predicate that always holds: `ld #0; jeq #0x0`, as gencode's `gen_true` (the
    /// optimizer folds it away).
    pub fn always(&mut self) -> Pred {
        self.branch(vec![Stmt::Ld(Src::Imm(0))], JmpOp::Jeq, Operand::K(0))
    }

    /// The predicate that never holds: `ld #1; jeq #0x0`, as gencode's `gen_false`.
    pub fn never(&mut self) -> Pred {
        self.branch(vec![Stmt::Ld(Src::Imm(1))], JmpOp::Jeq, Operand::K(0))
    }

    /// `p && q`: `q` runs when `p` holds (gencode's `gen_and(p, q)`).
    pub fn and(&mut self, p: Pred, q: Pred) -> Pred {
        self.patch(&p.t, q.entry);
        Pred { entry: p.entry, t: q.t, f: concat(p.f, q.f) }
    }

    /// `p || q`: `q` runs when `p` does not hold (gencode's `gen_or(p, q)`).
    pub fn or(&mut self, p: Pred, q: Pred) -> Pred {
        self.patch(&p.f, q.entry);
        Pred { entry: p.entry, t: concat(p.t, q.t), f: q.f }
    }

    /// Folds `preds` with [`Builder::and`] from the left; `None` when empty.
    pub fn and_all(&mut self, preds: impl IntoIterator<Item = Pred>) -> Option<Pred> {
        preds.into_iter().reduce(|p, q| self.and(p, q))
    }

    /// Folds `preds` with [`Builder::or`] from the left; `None` when empty.
    pub fn or_all(&mut self, preds: impl IntoIterator<Item = Pred>) -> Option<Pred> {
        preds.into_iter().reduce(|p, q| self.or(p, q))
    }

    /// A block `stmts; goto next` whose successor is patched later: a "predicate" whose only
    /// exit is a true exit (gencode's statement lists that fall through, as in
    /// `gen_load_802_11_header_len`).
    pub fn straight(&mut self, stmts: Vec<Stmt>) -> Pred {
        let id = self.cfg.push(Block { stmts, term: Terminator::Jump(HOLE) });
        Pred { entry: id, t: vec![Exit { block: id, on_true: true }], f: Vec::new() }
    }

    /// `p` then `q`: every exit of `p`, true or false, leads to `q` (code that computes
    /// something before a predicate, such as variable header offsets).
    pub fn seq(&mut self, p: Pred, q: Pred) -> Pred {
        self.patch(&p.t, q.entry);
        self.patch(&p.f, q.entry);
        Pred { entry: p.entry, t: q.t, f: q.f }
    }

    /// `if c then a else b`: `a` runs when `c` holds, `b` when not; the exits are the union.
    pub fn ite(&mut self, c: Pred, a: Pred, b: Pred) -> Pred {
        self.patch(&c.t, a.entry);
        self.patch(&c.f, b.entry);
        Pred { entry: c.entry, t: concat(a.t, b.t), f: concat(a.f, b.f) }
    }

    /// `p` with all its exits made true exits (for [`Builder::seq`]-style joins).
    pub fn join(&mut self, p: Pred) -> Pred {
        Pred { entry: p.entry, t: concat(p.t, p.f), f: Vec::new() }
    }

    /// Inserts `stmts` at the start of `p`'s entry block (gencode's
    /// `insert_compute_vloffsets`, which loads variable header offsets before everything).
    pub fn prepend(&mut self, p: &Pred, stmts: &[Stmt]) {
        let block = self.cfg.block_mut(p.entry);
        block.stmts.splice(0..0, stmts.iter().copied());
    }

    /// Ties `p`'s true exits to `ret #accept` and its false exits to `ret #0` and returns the
    /// graph (gencode's `finish_parse`; `accept` is the snap length).
    pub fn finish(self, p: Pred, accept: u32) -> Cfg {
        self.finish_with(p, RetVal::K(accept), RetVal::K(0))
    }

    /// [`Builder::finish`] with any return values. The accept block is created first, as in
    /// gencode.
    pub fn finish_with(mut self, p: Pred, accept: RetVal, reject: RetVal) -> Cfg {
        let yes = self.cfg.push(Block { stmts: Vec::new(), term: Terminator::Ret(accept) });
        let no = self.cfg.push(Block { stmts: Vec::new(), term: Terminator::Ret(reject) });
        self.patch(&p.t, yes);
        self.patch(&p.f, no);
        self.cfg.entry = p.entry;
        self.cfg
    }

    /// The graph of a filter that accepts everything: a lone `ret #accept` (libpcap's code
    /// for the empty expression).
    pub fn accept_all(mut self, accept: u32) -> Cfg {
        self.cfg.entry =
            self.cfg.push(Block { stmts: Vec::new(), term: Terminator::Ret(RetVal::K(accept)) });
        self.cfg
    }

    // ---- arithmetic (gencode's `struct arth` helpers) -------------------------------------

    /// A value computed by `stmts`, which leave it in A: appends `st M[r]` for a fresh
    /// scratch word `r`. For loads gencode builds by hand (`gen_loadlen`-like helpers, loads
    /// relative to a variable link-layer header); `guard` is the check that makes it valid.
    pub fn value(
        &mut self,
        mut stmts: Vec<Stmt>,
        guard: Option<Pred>,
    ) -> Result<Value, BuildError> {
        let slot = self.regs.alloc()?;
        stmts.push(Stmt::St(slot));
        Ok(Value { stmts, slot, guard })
    }

    /// Allocates a scratch word outside any [`Value`] (gencode's `alloc_reg`).
    pub fn alloc_slot(&mut self) -> Result<Slot, BuildError> {
        self.regs.alloc()
    }

    /// Returns a scratch word (gencode's `free_reg`).
    pub fn free_slot(&mut self, slot: Slot) {
        self.regs.free(slot);
    }

    /// The constant `k` (gencode's `gen_loadi`: `ld #k; st M[r]`).
    pub fn imm(&mut self, k: u32) -> Result<Value, BuildError> {
        self.value(vec![Stmt::Ld(Src::Imm(k))], None)
    }

    /// The wire length (gencode's `gen_loadlen`: `ld #pktlen; st M[r]`).
    pub fn len(&mut self) -> Result<Value, BuildError> {
        self.value(vec![Stmt::Ld(Src::Len)], None)
    }

    /// `size` bytes at `offset + index`, where `base_x` (if any) are statements loading a
    /// header base into X: `ldx M[i]; ld [x + offset]` without a base, or
    /// `base_x; ld M[i]; add x; tax; ld [x + offset]` with one (gencode's `gen_load`, e.g.
    /// `tcp[i]` with `base_x` = `ldxb 4*([14]&0xf)`). Consumes `index` (keeping its guard) and
    /// adds `guard` after it.
    pub fn load(
        &mut self,
        index: Value,
        base_x: &[Stmt],
        offset: u32,
        size: Size,
        guard: Option<Pred>,
    ) -> Result<Value, BuildError> {
        // gencode allocates the result before freeing the index (so `M[k]` numbers match).
        let result = self.regs.alloc()?;
        let Value { mut stmts, slot, guard: old } = index;
        if base_x.is_empty() {
            stmts.push(Stmt::Ldx(XSrc::Mem(slot)));
        } else {
            stmts.extend_from_slice(base_x);
            stmts.extend([Stmt::Ld(Src::Mem(slot)), Stmt::Alu(AluOp::Add, Operand::X), Stmt::Tax]);
        }
        stmts.extend([Stmt::Ld(Src::Ind(size, offset)), Stmt::St(result)]);
        self.regs.free(slot);
        let guard = self.and_guards(old, guard);
        Ok(Value { stmts, slot: result, guard })
    }

    /// [`Builder::load`] where the header base comes from `base_x`, called after the result
    /// word is allocated and the index word freed (gencode's `gen_load` with a variable
    /// header offset, whose scratch word it allocates at that point). `base_x` returns
    /// statements that load the base into X, or none for an index relative to the packet.
    pub fn load_via(
        &mut self,
        index: Value,
        base_x: impl FnOnce(&mut Builder) -> Vec<Stmt>,
        offset: u32,
        size: Size,
        guard: Option<Pred>,
    ) -> Result<Value, BuildError> {
        let result = self.regs.alloc()?;
        let Value { mut stmts, slot, guard: old } = index;
        self.regs.free(slot);
        let base = base_x(self);
        if base.is_empty() {
            stmts.push(Stmt::Ldx(XSrc::Mem(slot)));
        } else {
            stmts.extend(base);
            stmts.extend([Stmt::Ld(Src::Mem(slot)), Stmt::Alu(AluOp::Add, Operand::X), Stmt::Tax]);
        }
        stmts.extend([Stmt::Ld(Src::Ind(size, offset)), Stmt::St(result)]);
        let guard = self.and_guards(old, guard);
        Ok(Value { stmts, slot: result, guard })
    }

    /// `v` with `g` and-ed after its guard.
    pub fn guarded(&mut self, v: Value, g: Pred) -> Value {
        let Value { stmts, slot, guard } = v;
        let guard = self.and_guards(guard, Some(g));
        Value { stmts, slot, guard }
    }

    /// `a op b` (gencode's `gen_arth`): `a; b; ldx M[b]; ld M[a]; op x; st M[r]`. The guards
    /// are and-ed. Division or modulus by a literal zero is an error, as in gencode.
    pub fn arith(&mut self, op: AluOp, a: Value, b: Value) -> Result<Value, BuildError> {
        if matches!(b.stmts.as_slice(), [Stmt::Ld(Src::Imm(0)), Stmt::St(_)]) {
            match op {
                AluOp::Div => return Err(BuildError::DivisionByZero),
                AluOp::Mod => return Err(BuildError::ModulusByZero),
                _ => {}
            }
        }
        let (sa, sb) = (a.slot, b.slot);
        let guard = self.and_guards(a.guard, b.guard);
        let mut stmts = a.stmts;
        stmts.extend(b.stmts);
        stmts.extend([Stmt::Ldx(XSrc::Mem(sb)), Stmt::Ld(Src::Mem(sa)), Stmt::Alu(op, Operand::X)]);
        self.regs.free(sa);
        self.regs.free(sb);
        self.value(stmts, guard)
    }

    /// `-a` (gencode's `gen_neg`): `a; ld M[a]; neg; st M[a]`.
    pub fn neg(&mut self, a: Value) -> Value {
        let Value { mut stmts, slot, guard } = a;
        stmts.extend([Stmt::Ld(Src::Mem(slot)), Stmt::Neg, Stmt::St(slot)]);
        Value { stmts, slot, guard }
    }

    fn and_guards(&mut self, a: Option<Pred>, b: Option<Pred>) -> Option<Pred> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.and(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// `a cmp b` as a predicate (gencode's `gen_relation`): `a; b; ldx M[b]; ld M[a]` then
    /// `sub x; jeq #0` for (in)equality or `jgt x`/`jge x`, behind the and-ed guards. Both
    /// scratch words are freed. `Set`/`Clear` give `jset x`.
    pub fn relation(&mut self, cmp: Cmp, a: Value, b: Value) -> Pred {
        let (sa, sb) = (a.slot, b.slot);
        let mut stmts = a.stmts;
        stmts.extend(b.stmts);
        stmts.extend([Stmt::Ldx(XSrc::Mem(sb)), Stmt::Ld(Src::Mem(sa))]);
        let (op, negated) = cmp.jump();
        let p = if op == JmpOp::Jeq {
            stmts.push(Stmt::Alu(AluOp::Sub, Operand::X));
            self.branch(stmts, JmpOp::Jeq, Operand::K(0))
        } else {
            self.branch(stmts, op, Operand::X)
        };
        let p = if negated { !p } else { p };
        self.regs.free(sa);
        self.regs.free(sb);
        match self.and_guards(a.guard, b.guard) {
            Some(g) => self.and(g, p),
            None => p,
        }
    }
}
