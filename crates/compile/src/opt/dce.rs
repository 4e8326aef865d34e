//! Dead-statement elimination: statements whose result no path reads.
//!
//! **Why it exists.** After folding and threading, loads whose values are never compared,
//! stores to scratch words never read again and `tax` before an `ldx` remain. One backward
//! sweep in reverse topological order computes liveness of A, X and `M[0..16]` (an 18-bit
//! [`RegSet`] per block, so linear time and memory) and deletes each statement that writes
//! only dead registers, libpcap's `opt_deadstores`.
//!
//! Unlike libpcap, a dead *load* is deleted only where it cannot fail (the flag computed by
//! [`super::thread`]: a dominating statement computed the same value, or loaded further into
//! the packet): a load past the end of a short packet ends the program with 0, and removing it
//! would let the optimized program accept what the unoptimized one rejects (libpcap issue
//! 430).
//!
//! Where the successors do not read A, a subtraction or mask just before `jeq #0` is fused into
//! the comparison ([`fuse_compare`]).
//!
//! **Invariant kept.** Every register read keeps its value, and every statement that could
//! fail still runs: the program returns the same value on every packet. Each deletion lowers
//! the statement count, so the driver's measure strictly decreases.

use super::thread::Safe;
use crate::ir::*;

/// libpcap's `opt_peep` compare fusions, for a block whose successors do not read A:
/// `sub #k; jeq #0` is `jeq #k`, `sub x; jeq #0` is `jeq x`, and `and #m; jeq #0` is `jset #m`
/// with the edges swapped. Returns whether the block changed.
fn fuse_compare(block: &mut Block) -> bool {
    let Terminator::Branch { op: JmpOp::Jeq, operand: Operand::K(0), jt, jf } = block.term else {
        return false;
    };
    let term = match block.stmts.last() {
        Some(&Stmt::Alu(AluOp::Sub, operand)) => {
            Terminator::Branch { op: JmpOp::Jeq, operand, jt, jf }
        }
        Some(&Stmt::Alu(AluOp::And, Operand::K(m))) => {
            Terminator::Branch { op: JmpOp::Jset, operand: Operand::K(m), jt: jf, jf: jt }
        }
        _ => return false,
    };
    block.stmts.pop();
    block.term = term;
    true
}

/// Runs the pass with the flags of [`super::thread::run`] (for the same statements).
pub(crate) fn run(cfg: &mut Cfg, safe: &Safe) -> bool {
    let order = cfg.layout_order();
    let mut live_in = vec![RegSet::EMPTY; cfg.len()];
    let mut changed = false;
    for &b in order.iter().rev() {
        let mut succ_live = RegSet::EMPTY;
        for s in cfg.block(b).term.succs() {
            succ_live = succ_live.union(live_in[s.index()]);
        }
        if !succ_live.intersects(RegSet::A) && fuse_compare(cfg.block_mut(b)) {
            changed = true;
        }
        let block = cfg.block(b);
        let mut live = block.term.uses().union(succ_live);
        let flags = &safe[b.index()];
        let mut keep = vec![true; block.stmts.len()];
        for (i, s) in block.stmts.iter().enumerate().rev() {
            if !s.defs().intersects(live) && flags.get(i).copied().unwrap_or(false) {
                keep[i] = false;
                changed = true;
            } else {
                live = live.minus(s.defs()).union(s.uses());
            }
        }
        live_in[b.index()] = live;
        if keep.contains(&false) {
            let block = cfg.block_mut(b);
            let mut i = 0;
            block.stmts.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
    }
    changed
}
