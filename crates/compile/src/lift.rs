//! Lifting: a linear classic BPF program back into a [`Cfg`].
//!
//! **Why it exists.** The optimizer should also run on programs that did not come from the
//! code generator (hand-written filters, `tcpdump -d` listings, libpcap's output), and
//! `lift` + [`crate::emit::emit`] is the round trip that tests the emitter's layout against
//! libpcap's: re-emitting a program libpcap laid out gives it back instruction for
//! instruction.
//!
//! **What it does.** Blocks start at instruction 0, at every jump target and after every
//! jump or return; a block that runs into the next leader ends in
//! [`Terminator::Jump`] to it. A lone `ja` (a block holding nothing else, such as a
//! trampoline) is threaded through: edges to it go to its target instead, because emission
//! re-creates trampolines where they are needed. Block `n` is the `n`-th leader, so the entry
//! is `b0`; threaded-through blocks stay in the arena, unreachable.
//!
//! **Invariant kept.** The result passes [`Cfg::check`]; programs that would not (backward
//! or out-of-range jumps, running off the end) are refused with the instruction index. That
//! includes libpcap's `protochain` loop ([`LiftError::BadJump`] at its `ja` back): sift's own
//! walks never need lifting, since they stay one [`Stmt::Walk`] from the code generator to
//! emission, and a program with a loop is run as it is.

use crate::ir::*;
use sift_insn::Insn;
use sift_insn::code::*;
use std::fmt;

/// Why a program cannot be lifted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LiftError {
    /// The program is empty.
    Empty,
    /// An instruction that is neither a known statement, a jump nor a return.
    Unsupported {
        /// Instruction index.
        index: usize,
    },
    /// A jump backwards or past the end.
    BadJump {
        /// Instruction index.
        index: usize,
    },
    /// The last instruction is not a jump or return, so execution runs off the end.
    FallsOffEnd,
}

impl fmt::Display for LiftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiftError::Empty => write!(f, "the program is empty"),
            LiftError::Unsupported { index } => {
                write!(f, "instruction {index} is not a classic BPF statement, jump or return")
            }
            LiftError::BadJump { index } => {
                write!(f, "instruction {index} jumps backwards or past the end")
            }
            LiftError::FallsOffEnd => write!(f, "the last instruction is not a jump or return"),
        }
    }
}

impl std::error::Error for LiftError {}

/// What ends the instruction at `i`, decoded: `None` for a statement.
enum End {
    Branch(JmpOp, Operand, usize, usize),
    Jump(usize),
    Ret(RetVal),
}

fn decode_end(prog: &[Insn], i: usize) -> Result<Option<End>, LiftError> {
    let insn = &prog[i];
    let bad = LiftError::BadJump { index: i };
    let target = |off: u64| -> Result<usize, LiftError> {
        let t = i as u64 + 1 + off;
        if t < prog.len() as u64 { Ok(t as usize) } else { Err(bad.clone()) }
    };
    Ok(Some(match class(insn.code) {
        BPF_JMP if insn.code == BPF_JMP | BPF_JA => End::Jump(target(u64::from(insn.k))?),
        BPF_JMP => {
            let (op, operand) = branch(insn).ok_or(LiftError::Unsupported { index: i })?;
            let jt = target(u64::from(insn.jt))?;
            let jf = target(u64::from(insn.jf))?;
            End::Branch(op, operand, jt, jf)
        }
        BPF_RET if insn.code == BPF_RET | BPF_K => End::Ret(RetVal::K(insn.k)),
        BPF_RET if insn.code == BPF_RET | BPF_A => End::Ret(RetVal::A),
        BPF_RET => return Err(LiftError::Unsupported { index: i }),
        _ => return Ok(None),
    }))
}

/// The comparison of a conditional jump instruction (canonical encodings only).
pub(crate) fn branch(insn: &Insn) -> Option<(JmpOp, Operand)> {
    let op = match op(insn.code) {
        BPF_JEQ => JmpOp::Jeq,
        BPF_JGT => JmpOp::Jgt,
        BPF_JGE => JmpOp::Jge,
        BPF_JSET => JmpOp::Jset,
        _ => return None,
    };
    let operand = if src(insn.code) == BPF_X { Operand::X } else { Operand::K(insn.k) };
    (insn.code == BPF_JMP | op.code() | src(insn.code)).then_some((op, operand))
}

/// Lifts `prog` into a graph. Linear in the program size.
pub fn lift(prog: &[Insn]) -> Result<Cfg, LiftError> {
    if prog.is_empty() {
        return Err(LiftError::Empty);
    }
    let n = prog.len();
    let mut ends = Vec::with_capacity(n);
    let mut leader = vec![false; n];
    leader[0] = true;
    for i in 0..n {
        let end = decode_end(prog, i)?;
        match &end {
            Some(End::Branch(_, _, jt, jf)) => {
                leader[*jt] = true;
                leader[*jf] = true;
            }
            Some(End::Jump(t)) => leader[*t] = true,
            Some(End::Ret(_)) => {}
            None => {
                if Stmt::from_insn(&prog[i]).is_none() {
                    return Err(LiftError::Unsupported { index: i });
                }
                if i + 1 == n {
                    return Err(LiftError::FallsOffEnd);
                }
            }
        }
        if end.is_some() && i + 1 < n {
            leader[i + 1] = true;
        }
        ends.push(end);
    }
    // Block number of each leader.
    let mut block_of = vec![u32::MAX; n];
    let mut count = 0u32;
    for i in 0..n {
        if leader[i] {
            block_of[i] = count;
            count += 1;
        }
    }
    let id = |i: usize| BlockId(block_of[i]);
    let mut cfg = Cfg::new();
    let mut stmts = Vec::new();
    for i in 0..n {
        let term = match &ends[i] {
            Some(End::Branch(op, operand, jt, jf)) => {
                Some(Terminator::Branch { op: *op, operand: *operand, jt: id(*jt), jf: id(*jf) })
            }
            Some(End::Jump(t)) => Some(Terminator::Jump(id(*t))),
            Some(End::Ret(r)) => Some(Terminator::Ret(*r)),
            None => {
                stmts.push(Stmt::from_insn(&prog[i]).expect("checked above"));
                (i + 1 < n && leader[i + 1]).then(|| Terminator::Jump(id(i + 1)))
            }
        };
        if let Some(term) = term {
            cfg.push(Block { stmts: std::mem::take(&mut stmts), term });
        }
    }
    debug_assert_eq!(cfg.len(), count as usize);
    // Thread edges through lone jumps. Targets lie further on, so resolving from the last
    // block backwards sees every lone jump's own target already resolved.
    let mut resolved: Vec<BlockId> = (0..count).map(BlockId).collect();
    for b in (0..cfg.len()).rev() {
        let block = &cfg.blocks[b];
        if let (true, Terminator::Jump(t)) = (block.stmts.is_empty(), block.term) {
            resolved[b] = resolved[t.index()];
        }
    }
    for block in &mut cfg.blocks {
        for s in block.term.succs_mut() {
            *s = resolved[s.index()];
        }
    }
    cfg.entry = resolved[0];
    Ok(cfg)
}
