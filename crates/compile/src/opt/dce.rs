//! Dead-statement elimination: statements whose result no path reads.
//!
//! **Why it exists.** After folding and threading, loads whose values are never compared,
//! stores to scratch words never read again and `tax` before an `ldx` remain. One backward
//! sweep in reverse topological order computes liveness of A, X and `M[0..16]` (an 18-bit
//! [`RegSet`] per block, so linear time and memory) and deletes each statement that writes
//! only dead registers, libpcap's `opt_deadstores`.
//!
//! Unlike libpcap, a dead *load* is deleted only where that cannot change a verdict on a short
//! packet (a load past the end of the packet ends the program with 0; removing it would let
//! the optimized program accept what the unoptimized one rejects, libpcap issue 430):
//!
//! * where it cannot fail: the flag computed by [`super::thread`] (a dominating statement
//!   computed the same value, or loaded further into the packet), or the forward bound of
//!   [`super::bounds`] (every path here read at least as far);
//! * where its failure is anticipated: it fails exactly below some length (an absolute load,
//!   `ldxb`; never an `[x + k]` load, which also fails on longer packets when X is large), and
//!   on every path from it to a non-zero return a *kept* load fails on every packet that
//!   short. The sweep goes backwards, so the loads it counts are final: it never leans on a
//!   load that is itself deleted for leaning on another.
//!
//! Where the successors do not read A, the statement before a `jeq` is fused into the
//! comparison when it is a bijection or a mask (`fuse_compare`).
//!
//! **Invariant kept.** Every register read keeps its value, and every statement that could
//! fail still runs: the program returns the same value on every packet. Each deletion lowers
//! the statement count, so the driver's measure strictly decreases.

use super::bounds::{self, Forward};
use super::thread::Safe;
use super::value::{self, Val, Values};
use crate::ir::*;

/// libpcap's `opt_peep` index fold: `…; add x; tax; ld [x + k]` with A = X + c (X the IPv4
/// header length) becomes `…; add x; ld [x + k + c]`, leaving X as it was, when nothing else
/// reads the sum from X. The new offset is the same sum as before, `X + c + k`, computed in
/// another order; with `c + k + size + 60` below 2^32 neither order wraps, so every engine
/// (libpcap's checks, Linux's signed offsets) sees the same offset. Keeps `flags` in step with
/// the statements. Returns whether the block changed.
fn fold_index(block: &mut Block, live_out: RegSet, flags: &mut Vec<bool>) -> bool {
    let mut values = Values::new();
    let mut st = values.unknown_state();
    let n = block.stmts.len();
    for i in 0..n {
        let s = block.stmts[i];
        if s == Stmt::Tax
            && let Val::Msh(_) = values.get(st[value::X])
            && let Val::AluK(AluOp::Add, base, c) = values.get(st[value::A])
            && base == st[value::X]
        {
            let mut uses = Vec::new();
            let mut ok = true;
            let mut redefined = false;
            for j in i + 1..n {
                let t = block.stmts[j];
                match t {
                    Stmt::Ld(Src::Ind(size, k))
                        if u64::from(k) + u64::from(c) + u64::from(size.bytes()) + 60
                            <= u64::from(u32::MAX) =>
                    {
                        uses.push(j);
                        continue;
                    }
                    _ if t.uses().intersects(RegSet::X) => {
                        ok = false;
                        break;
                    }
                    _ if t.defs().intersects(RegSet::X) => {
                        redefined = true;
                        break;
                    }
                    _ => {}
                }
            }
            let x_after = live_out.union(block.term.uses()).intersects(RegSet::X);
            if ok && !uses.is_empty() && (redefined || !x_after) {
                for &j in &uses {
                    if let Stmt::Ld(Src::Ind(size, k)) = block.stmts[j] {
                        block.stmts[j] = Stmt::Ld(Src::Ind(size, k + c));
                    }
                }
                block.stmts.remove(i);
                if i < flags.len() {
                    flags.remove(i);
                }
                return true;
            }
        }
        let e = value::eval(&mut values, &st, s);
        e.write(&mut values, &mut st);
    }
    false
}

/// libpcap's `opt_peep` compare fusions, for a block whose successors do not read A:
/// `sub #k; jeq #0` is `jeq #k`, `sub x; jeq #0` is `jeq x`, and `and #m; jeq #0` is `jset #m`
/// with the edges swapped; and, `A op #k == c` having one solution, `add #k; jeq #c` is
/// `jeq #(c - k)`, `sub #k; jeq #c` is `jeq #(c + k)`, `xor #k; jeq #c` is `jeq #(c ^ k)` and
/// `neg; jeq #c` is `jeq #-c` (all wrapping). Returns whether the block changed.
fn fuse_compare(block: &mut Block) -> bool {
    let Terminator::Branch { op: JmpOp::Jeq, operand: Operand::K(c), jt, jf } = block.term else {
        return false;
    };
    let jeq = |k: u32| Terminator::Branch { op: JmpOp::Jeq, operand: Operand::K(k), jt, jf };
    let term = match (block.stmts.last(), c) {
        (Some(&Stmt::Alu(AluOp::Sub, operand)), 0) => {
            Terminator::Branch { op: JmpOp::Jeq, operand, jt, jf }
        }
        (Some(&Stmt::Alu(AluOp::And, Operand::K(m))), 0) => {
            Terminator::Branch { op: JmpOp::Jset, operand: Operand::K(m), jt: jf, jf: jt }
        }
        (Some(&Stmt::Alu(AluOp::Sub, Operand::K(k))), _) => jeq(c.wrapping_add(k)),
        (Some(&Stmt::Alu(AluOp::Add, Operand::K(k))), _) => jeq(c.wrapping_sub(k)),
        (Some(&Stmt::Alu(AluOp::Xor, Operand::K(k))), _) => jeq(c ^ k),
        (Some(&Stmt::Neg), _) => jeq(c.wrapping_neg()),
        _ => return false,
    };
    block.stmts.pop();
    block.term = term;
    true
}

/// Runs the pass with the flags of [`super::thread::run`] (for the same statements).
pub(crate) fn run(cfg: &mut Cfg, safe: &Safe) -> bool {
    let order = cfg.layout_order();
    let fwd = Forward::new(cfg, &order);
    let mut live_in = vec![RegSet::EMPTY; cfg.len()];
    let mut cover_in = vec![bounds::ANY; cfg.len()];
    let mut changed = false;
    for &b in order.iter().rev() {
        let mut succ_live = RegSet::EMPTY;
        for s in cfg.block(b).term.succs() {
            succ_live = succ_live.union(live_in[s.index()]);
        }
        if !succ_live.intersects(RegSet::A) && fuse_compare(cfg.block_mut(b)) {
            changed = true;
        }
        let mut flags = safe[b.index()].clone();
        while fold_index(cfg.block_mut(b), succ_live, &mut flags) {
            changed = true;
        }
        let block = cfg.block(b);
        // Per statement: the captured length it needs, and the length known before it.
        let mut ends = Vec::with_capacity(block.stmts.len());
        let mut before = Vec::with_capacity(block.stmts.len());
        let (len, x) = (fwd.len_at_least[b.index()], fwd.x_msh[b.index()]);
        bounds::walk(&block.stmts, len, x, |e, known| {
            ends.push(e);
            before.push(known);
        });
        let mut live = block.term.uses().union(succ_live);
        let mut cover = bounds::cover_out(&block.term, &cover_in);
        let mut keep = vec![true; block.stmts.len()];
        for (i, s) in block.stmts.iter().enumerate().rev() {
            let dead = !s.defs().intersects(live);
            // A dead load may go when it cannot fail here (a dominator computed it, or every
            // path here read at least as far), or when every continuation to a non-zero
            // return runs a kept load that fails whenever it fails.
            let invisible = flags.get(i).copied().unwrap_or(false)
                || bounds::exact_end(s).is_some_and(|e| e <= before[i] || e <= cover);
            if dead && invisible {
                keep[i] = false;
                changed = true;
            } else {
                live = live.minus(s.defs()).union(s.uses());
                if let Some(e) = ends[i] {
                    cover = cover.max(e);
                }
            }
        }
        live_in[b.index()] = live;
        cover_in[b.index()] = cover;
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
