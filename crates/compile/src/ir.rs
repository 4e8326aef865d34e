//! The control-flow-graph IR: basic blocks of classic BPF statements in an arena.
//!
//! **Why it exists.** The code generator ([`crate::build`]) produces this graph, the optimizer
//! passes (issue 5) rewrite it and [`crate::emit`] linearizes it. It is libpcap's
//! `struct block` graph without the pointers: blocks live in one `Vec` and refer to each other
//! by [`BlockId`], so passes can keep side tables indexed by block (dominators, value numbers,
//! use/def sets) and walk the graph with explicit work lists instead of recursion.
//!
//! **Invariants** (checked by [`Cfg::check`], relied on by [`crate::emit`]):
//!
//! * every successor named by a terminator is a block of the arena;
//! * the graph reachable from [`Cfg::entry`] is acyclic (classic BPF only jumps forward);
//! * statements are straight-line: only the [`Terminator`] transfers control. The one
//!   statement with control flow inside, [`Stmt::Walk`] (`protochain`'s walk, a loop in
//!   libpcap), is opaque here: it has one way in and one way out (or it ends the program with
//!   0, as a failing load does), and [`crate::walk`] expands it only at emission.
//!
//! Blocks that become unreachable (after a pass re-routes edges) may stay in the arena; every
//! walk starts from the entry, and emission ignores them. [`Cfg::compact`] drops them.

pub use crate::walk::Walk;
use sift_insn::Insn;
use sift_insn::code::*;
use std::fmt;

/// The index of a block in its [`Cfg`]'s arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockId(pub u32);

impl BlockId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}

/// A scratch memory word `M[0..16]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot(u8);

impl Slot {
    /// The number of scratch words classic BPF has (`BPF_MEMWORDS`).
    pub const COUNT: usize = BPF_MEMWORDS as usize;

    /// Slot `n`, if `n < 16`.
    pub fn new(n: u32) -> Option<Slot> {
        (n < BPF_MEMWORDS).then_some(Slot(n as u8))
    }

    /// The slot number, `0..16`.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The width of a packet load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Size {
    /// 32 bits (`ld`).
    W,
    /// 16 bits (`ldh`).
    H,
    /// 8 bits (`ldb`).
    B,
}

impl Size {
    /// The `BPF_W`/`BPF_H`/`BPF_B` bits.
    pub fn code(self) -> u16 {
        match self {
            Size::W => BPF_W,
            Size::H => BPF_H,
            Size::B => BPF_B,
        }
    }

    /// The width in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Size::W => 4,
            Size::H => 2,
            Size::B => 1,
        }
    }
}

/// What a load into the accumulator reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Src {
    /// `P[k:size]`: packet bytes at an absolute offset (`ld [k]`).
    Abs(Size, u32),
    /// `P[X+k:size]`: packet bytes at an offset relative to X (`ld [x + k]`).
    Ind(Size, u32),
    /// The wire length (`ld #pktlen`).
    Len,
    /// A constant (`ld #k`).
    Imm(u32),
    /// A scratch word (`ld M[k]`).
    Mem(Slot),
}

/// What a load into the index register reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XSrc {
    /// A constant (`ldx #k`).
    Imm(u32),
    /// The wire length (`ldx #pktlen`; Linux only accepts it, libpcap 1.10 does not print it).
    Len,
    /// A scratch word (`ldx M[k]`).
    Mem(Slot),
    /// `4*(P[k:1]&0xf)`: the IPv4 header length (`ldxb 4*([k]&0xf)`).
    Msh(u32),
}

/// The second operand of an ALU operation or a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A constant.
    K(u32),
    /// The index register.
    X,
}

impl Operand {
    fn bits(self) -> (u16, u32) {
        match self {
            Operand::K(k) => (BPF_K, k),
            Operand::X => (BPF_X, 0),
        }
    }
}

/// A binary ALU operation `A = A op operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `mul`
    Mul,
    /// `div` (X = 0 at run time returns 0; K = 0 is a compile-time error)
    Div,
    /// `mod`
    Mod,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `lsh`
    Lsh,
    /// `rsh`
    Rsh,
}

impl AluOp {
    /// The `BPF_ADD`… op bits.
    pub fn code(self) -> u16 {
        match self {
            AluOp::Add => BPF_ADD,
            AluOp::Sub => BPF_SUB,
            AluOp::Mul => BPF_MUL,
            AluOp::Div => BPF_DIV,
            AluOp::Mod => BPF_MOD,
            AluOp::And => BPF_AND,
            AluOp::Or => BPF_OR,
            AluOp::Xor => BPF_XOR,
            AluOp::Lsh => BPF_LSH,
            AluOp::Rsh => BPF_RSH,
        }
    }

    /// Evaluates the operation with libpcap's run-time semantics (division by zero and
    /// shifts of 32 or more give 0).
    pub fn eval(self, a: u32, b: u32) -> u32 {
        match self {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::Mul => a.wrapping_mul(b),
            AluOp::Div => a.checked_div(b).unwrap_or(0),
            AluOp::Mod => a.checked_rem(b).unwrap_or(0),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Lsh => a.checked_shl(b).unwrap_or(0),
            AluOp::Rsh => a.checked_shr(b).unwrap_or(0),
        }
    }
}

/// A straight-line statement: every classic BPF instruction except jumps and returns, and
/// `protochain`'s walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `A = src`
    Ld(Src),
    /// `X = src`
    Ldx(XSrc),
    /// `M[slot] = A`
    St(Slot),
    /// `M[slot] = X`
    Stx(Slot),
    /// `A = A op operand`
    Alu(AluOp, Operand),
    /// `A = -A`
    Neg,
    /// `X = A`
    Tax,
    /// `A = X`
    Txa,
    /// `protochain`'s walk along the header chain from A (the first next header) and X (where
    /// it starts): A and X become the header it stops at and where that starts. One opaque
    /// statement with libpcap's loop inside; see [`crate::walk`].
    Walk(Walk),
}

impl Stmt {
    /// The classic BPF instruction; `None` for a [`Stmt::Walk`], which is many (see
    /// [`crate::walk`]).
    pub fn to_insn(self) -> Option<Insn> {
        Some(match self {
            Stmt::Ld(src) => match src {
                Src::Abs(s, k) => Insn::stmt(BPF_LD | BPF_ABS | s.code(), k),
                Src::Ind(s, k) => Insn::stmt(BPF_LD | BPF_IND | s.code(), k),
                Src::Len => Insn::stmt(BPF_LD | BPF_LEN | BPF_W, 0),
                Src::Imm(k) => Insn::stmt(BPF_LD | BPF_IMM, k),
                Src::Mem(m) => Insn::stmt(BPF_LD | BPF_MEM, m.index() as u32),
            },
            Stmt::Ldx(src) => match src {
                XSrc::Imm(k) => Insn::stmt(BPF_LDX | BPF_IMM, k),
                XSrc::Len => Insn::stmt(BPF_LDX | BPF_LEN | BPF_W, 0),
                XSrc::Mem(m) => Insn::stmt(BPF_LDX | BPF_MEM, m.index() as u32),
                XSrc::Msh(k) => Insn::stmt(BPF_LDX | BPF_MSH | BPF_B, k),
            },
            Stmt::St(m) => Insn::stmt(BPF_ST, m.index() as u32),
            Stmt::Stx(m) => Insn::stmt(BPF_STX, m.index() as u32),
            Stmt::Alu(op, operand) => {
                let (src, k) = operand.bits();
                Insn::stmt(BPF_ALU | op.code() | src, k)
            }
            Stmt::Neg => Insn::stmt(BPF_ALU | BPF_NEG, 0),
            Stmt::Tax => Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Stmt::Txa => Insn::stmt(BPF_MISC | BPF_TXA, 0),
            Stmt::Walk(_) => return None,
        })
    }

    /// The statement of a classic BPF instruction, if it is one: not a jump or return, an
    /// opcode libpcap's interpreter runs (canonical encoding), a scratch index below 16.
    /// Operands the instruction ignores (`k` of `neg`, `tax`, `add x`…) are dropped.
    pub fn from_insn(insn: &Insn) -> Option<Stmt> {
        let k = insn.k;
        let size = match size(insn.code) {
            BPF_W => Some(Size::W),
            BPF_H => Some(Size::H),
            BPF_B => Some(Size::B),
            _ => None,
        };
        let alu = |op| match op {
            BPF_ADD => Some(AluOp::Add),
            BPF_SUB => Some(AluOp::Sub),
            BPF_MUL => Some(AluOp::Mul),
            BPF_DIV => Some(AluOp::Div),
            BPF_MOD => Some(AluOp::Mod),
            BPF_AND => Some(AluOp::And),
            BPF_OR => Some(AluOp::Or),
            BPF_XOR => Some(AluOp::Xor),
            BPF_LSH => Some(AluOp::Lsh),
            BPF_RSH => Some(AluOp::Rsh),
            _ => None,
        };
        let stmt = match class(insn.code) {
            BPF_LD => Stmt::Ld(match mode(insn.code) {
                BPF_ABS => Src::Abs(size?, k),
                BPF_IND => Src::Ind(size?, k),
                BPF_LEN => Src::Len,
                BPF_IMM => Src::Imm(k),
                BPF_MEM => Src::Mem(Slot::new(k)?),
                _ => return None,
            }),
            BPF_LDX => Stmt::Ldx(match mode(insn.code) {
                BPF_IMM => XSrc::Imm(k),
                BPF_LEN => XSrc::Len,
                BPF_MEM => XSrc::Mem(Slot::new(k)?),
                BPF_MSH => XSrc::Msh(k),
                _ => return None,
            }),
            BPF_ST => Stmt::St(Slot::new(k)?),
            BPF_STX => Stmt::Stx(Slot::new(k)?),
            BPF_ALU if op(insn.code) == BPF_NEG => Stmt::Neg,
            BPF_ALU => {
                let operand = if src(insn.code) == BPF_X { Operand::X } else { Operand::K(k) };
                Stmt::Alu(alu(op(insn.code))?, operand)
            }
            BPF_MISC if miscop(insn.code) == BPF_TAX => Stmt::Tax,
            BPF_MISC if miscop(insn.code) == BPF_TXA => Stmt::Txa,
            _ => return None,
        };
        // Only canonical encodings (no stray bits).
        (stmt.to_insn()?.code == insn.code).then_some(stmt)
    }

    /// Whether the statement reads the index register.
    pub fn reads_x(self) -> bool {
        self.uses().intersects(RegSet::X)
    }

    /// Whether the statement reads packet bytes (and so may end the program with 0 when the
    /// packet is too short).
    pub fn reads_packet(self) -> bool {
        matches!(
            self,
            Stmt::Ld(Src::Abs(..) | Src::Ind(..)) | Stmt::Ldx(XSrc::Msh(_)) | Stmt::Walk(_)
        )
    }

    /// The registers the statement reads.
    pub fn uses(self) -> RegSet {
        match self {
            Stmt::Ld(Src::Ind(..)) => RegSet::X,
            Stmt::Ld(Src::Mem(m)) | Stmt::Ldx(XSrc::Mem(m)) => RegSet::mem(m),
            Stmt::Ld(_) | Stmt::Ldx(_) => RegSet::EMPTY,
            Stmt::St(_) | Stmt::Neg | Stmt::Tax | Stmt::Alu(_, Operand::K(_)) => RegSet::A,
            Stmt::Stx(_) | Stmt::Txa => RegSet::X,
            Stmt::Alu(_, Operand::X) => RegSet::A.union(RegSet::X),
            Stmt::Walk(w) => w.uses(),
        }
    }

    /// The registers the statement writes.
    pub fn defs(self) -> RegSet {
        match self {
            Stmt::Ld(_) | Stmt::Alu(..) | Stmt::Neg | Stmt::Txa => RegSet::A,
            Stmt::Ldx(_) | Stmt::Tax => RegSet::X,
            Stmt::St(m) | Stmt::Stx(m) => RegSet::mem(m),
            Stmt::Walk(w) => w.defs(),
        }
    }
}

/// A set of machine registers (A, X, `M[0..16]`) as a bit set, for use/def analyses (the
/// optimizer's `find_ud`, dead stores). Bit `k` is `M[k]`, bit 16 A, bit 17 X.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RegSet(pub u32);

impl RegSet {
    /// No register.
    pub const EMPTY: RegSet = RegSet(0);
    /// The accumulator.
    pub const A: RegSet = RegSet(1 << 16);
    /// The index register.
    pub const X: RegSet = RegSet(1 << 17);
    /// Every register.
    pub const ALL: RegSet = RegSet(0x3_ffff);

    /// The scratch word `m`.
    pub const fn mem(m: Slot) -> RegSet {
        RegSet(1 << m.0)
    }

    /// Both sets.
    pub const fn union(self, other: RegSet) -> RegSet {
        RegSet(self.0 | other.0)
    }

    /// The registers of `self` not in `other`.
    pub const fn minus(self, other: RegSet) -> RegSet {
        RegSet(self.0 & !other.0)
    }

    /// Whether every register of `other` is in `self`.
    pub const fn contains(self, other: RegSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the sets share a register.
    pub const fn intersects(self, other: RegSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A conditional jump's comparison of A with its operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JmpOp {
    /// `A == v`
    Jeq,
    /// `A > v` (unsigned)
    Jgt,
    /// `A >= v` (unsigned)
    Jge,
    /// `A & v != 0`
    Jset,
}

impl JmpOp {
    /// The `BPF_JEQ`… op bits.
    pub fn code(self) -> u16 {
        match self {
            JmpOp::Jeq => BPF_JEQ,
            JmpOp::Jgt => BPF_JGT,
            JmpOp::Jge => BPF_JGE,
            JmpOp::Jset => BPF_JSET,
        }
    }

    /// Evaluates the comparison.
    pub fn eval(self, a: u32, v: u32) -> bool {
        match self {
            JmpOp::Jeq => a == v,
            JmpOp::Jgt => a > v,
            JmpOp::Jge => a >= v,
            JmpOp::Jset => a & v != 0,
        }
    }
}

/// What a `ret` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetVal {
    /// A constant (`ret #k`).
    K(u32),
    /// The accumulator (`ret a`).
    A,
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Terminator {
    /// `if A op operand goto jt else goto jf`.
    Branch {
        /// The comparison.
        op: JmpOp,
        /// What A is compared with.
        operand: Operand,
        /// Successor when the comparison holds.
        jt: BlockId,
        /// Successor when it does not.
        jf: BlockId,
    },
    /// `goto target` (`ja`, or nothing when the target is laid out next).
    Jump(BlockId),
    /// `ret`: ends the program.
    Ret(RetVal),
}

impl Terminator {
    /// The successors: `[jt, jf]` for a branch (jt first), one for a jump, none for a return.
    pub fn succs(&self) -> impl Iterator<Item = BlockId> + '_ {
        let (a, b) = match *self {
            Terminator::Branch { jt, jf, .. } => (Some(jt), Some(jf)),
            Terminator::Jump(t) => (Some(t), None),
            Terminator::Ret(_) => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// The registers the terminator reads.
    pub fn uses(&self) -> RegSet {
        match self {
            Terminator::Branch { operand: Operand::X, .. } => RegSet::A.union(RegSet::X),
            Terminator::Branch { .. } | Terminator::Ret(RetVal::A) => RegSet::A,
            Terminator::Jump(_) | Terminator::Ret(RetVal::K(_)) => RegSet::EMPTY,
        }
    }

    /// Mutable references to the successors, for passes that re-route edges.
    pub fn succs_mut(&mut self) -> impl Iterator<Item = &mut BlockId> + '_ {
        let (a, b) = match self {
            Terminator::Branch { jt, jf, .. } => (Some(jt), Some(jf)),
            Terminator::Jump(t) => (Some(t), None),
            Terminator::Ret(_) => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// A basic block: statements run in order, then the terminator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// The straight-line statements.
    pub stmts: Vec<Stmt>,
    /// How the block ends.
    pub term: Terminator,
}

/// Why a graph breaks the IR invariants.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CfgError {
    /// A terminator names a block outside the arena (e.g. an unpatched builder exit).
    Dangling {
        /// The block whose terminator is wrong.
        from: BlockId,
        /// The missing successor.
        to: BlockId,
    },
    /// The entry is outside the arena.
    NoEntry,
    /// An edge closes a cycle (classic BPF cannot jump backwards).
    Cycle {
        /// Source of the backward edge.
        from: BlockId,
        /// Its target.
        to: BlockId,
    },
}

impl fmt::Display for CfgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CfgError::Dangling { from, to } => {
                write!(f, "block {from} jumps to {to}, which does not exist")
            }
            CfgError::NoEntry => write!(f, "the entry block does not exist"),
            CfgError::Cycle { from, to } => {
                write!(f, "the edge {from} -> {to} closes a cycle")
            }
        }
    }
}

impl std::error::Error for CfgError {}

/// A control-flow graph: an arena of blocks and the entry block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cfg {
    /// The arena; [`BlockId`] `n` is `blocks[n]`.
    pub blocks: Vec<Block>,
    /// Where execution starts.
    pub entry: BlockId,
}

impl Cfg {
    /// A graph with no blocks yet; push blocks and set `entry` before use.
    pub fn new() -> Cfg {
        Cfg { blocks: Vec::new(), entry: BlockId(0) }
    }

    /// Adds a block and returns its id.
    pub fn push(&mut self, block: Block) -> BlockId {
        let id = BlockId(u32::try_from(self.blocks.len()).expect("fewer than 2^32 blocks"));
        self.blocks.push(block);
        id
    }

    /// The block `id`.
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.index()]
    }

    /// The block `id`, mutably.
    pub fn block_mut(&mut self, id: BlockId) -> &mut Block {
        &mut self.blocks[id.index()]
    }

    /// The number of blocks in the arena (reachable or not).
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The blocks reachable from the entry in *layout order*: the reverse post-order of a
    /// depth-first walk that follows the false edge before the true edge. That is the order in
    /// which libpcap's `icode_to_fcode` (`convert_code_r`) lays blocks out, and in an acyclic
    /// graph every edge goes forward in it. Iterative, O(blocks).
    ///
    /// Panics if a successor is outside the arena (see [`Cfg::check`]).
    pub fn layout_order(&self) -> Vec<BlockId> {
        let mut seen = vec![false; self.blocks.len()];
        let mut post = Vec::new();
        // (block, how many successors have been pushed): successors in order jf, then jt.
        let mut stack: Vec<(BlockId, u8)> = Vec::new();
        if self.entry.index() < self.blocks.len() {
            seen[self.entry.index()] = true;
            stack.push((self.entry, 0));
        }
        while let Some(top) = stack.last_mut() {
            let (b, state) = *top;
            let next = match (self.block(b).term, state) {
                (Terminator::Branch { jf, .. }, 0) => Some(jf),
                (Terminator::Branch { jt, .. }, 1) => Some(jt),
                (Terminator::Jump(t), 0) => Some(t),
                _ => None,
            };
            match next {
                Some(s) => {
                    top.1 += 1;
                    if !seen[s.index()] {
                        seen[s.index()] = true;
                        stack.push((s, 0));
                    }
                }
                None => {
                    post.push(b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        post
    }

    /// The predecessors of every block (indexed by [`BlockId::index`]), counting only edges
    /// from blocks reachable from the entry. A branch whose two edges go to the same block
    /// appears twice.
    pub fn preds(&self) -> Vec<Vec<BlockId>> {
        let mut preds = vec![Vec::new(); self.blocks.len()];
        for b in self.layout_order() {
            for s in self.block(b).term.succs() {
                preds[s.index()].push(b);
            }
        }
        preds
    }

    /// Checks the invariants listed in the module documentation, for the blocks reachable
    /// from the entry (leftovers in the arena may hold anything).
    pub fn check(&self) -> Result<(), CfgError> {
        let n = self.blocks.len();
        if self.entry.index() >= n {
            return Err(CfgError::NoEntry);
        }
        let mut seen = vec![false; n];
        let mut work = vec![self.entry];
        seen[self.entry.index()] = true;
        while let Some(b) = work.pop() {
            for s in self.block(b).term.succs() {
                if s.index() >= n {
                    return Err(CfgError::Dangling { from: b, to: s });
                }
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    work.push(s);
                }
            }
        }
        let order = self.layout_order();
        let mut pos = vec![usize::MAX; n];
        for (i, b) in order.iter().enumerate() {
            pos[b.index()] = i;
        }
        for &b in &order {
            for s in self.block(b).term.succs() {
                if pos[s.index()] <= pos[b.index()] {
                    return Err(CfgError::Cycle { from: b, to: s });
                }
            }
        }
        Ok(())
    }

    /// Drops blocks unreachable from the entry and renumbers the rest in layout order (the
    /// entry becomes `b0`). Returns the old-to-new map (`None` for dropped blocks).
    pub fn compact(&mut self) -> Vec<Option<BlockId>> {
        let order = self.layout_order();
        let mut map = vec![None; self.blocks.len()];
        for (i, b) in order.iter().enumerate() {
            map[b.index()] = Some(BlockId(i as u32));
        }
        let mut old: Vec<Option<Block>> =
            std::mem::take(&mut self.blocks).into_iter().map(Some).collect();
        for b in &order {
            let mut block = old[b.index()].take().expect("each block appears once in the order");
            for s in block.term.succs_mut() {
                *s = map[s.index()].expect("successors of reachable blocks are reachable");
            }
            self.blocks.push(block);
        }
        self.entry = BlockId(0);
        map
    }
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg::new()
    }
}
