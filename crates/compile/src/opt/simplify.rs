//! Structural clean-up: regions that can only reject, branches with one target, empty jumps,
//! straight-line chains.
//!
//! **Why it exists.** Folding and threading leave graph debris behind: branches whose two
//! edges meet, blocks that only jump, jumps into blocks nothing else reaches. This pass
//!
//! * replaces every block from which all paths end in `ret #0` by `ret #0` (a failing load
//!   also returns 0, so even loads that could fail do not matter there; this is what turns
//!   `ip6 and igmp` on DLT_IPV4 into "rejects all packets");
//! * turns a branch whose edges go to the same block into a jump, and `jge #k` followed on its
//!   true edge by a bare `jgt #k` (both leaving to the same block) into `jeq #k`;
//! * sends edges that reach an empty jump block straight to its target;
//! * copies `ret` into a jump to an empty return block that other blocks reach too;
//! * appends a block reached by a single jump to the jumping block.
//!
//! Unreachable blocks are left for [`Cfg::compact`], which the driver runs every round.
//!
//! **Invariant kept.** Every packet takes the same path through the same statements (or,
//! for the first rule, is rejected by both programs). Each rewrite lowers the driver's
//! measure: paths, blocks, edges, statements, or edges into empty jump blocks, without
//! raising an earlier component.

use crate::ir::*;

/// Runs the pass.
pub(crate) fn run(cfg: &mut Cfg) -> bool {
    let mut changed = false;
    let order = cfg.layout_order();
    // All paths end in `ret #0`.
    let mut zero = vec![false; cfg.len()];
    for &b in order.iter().rev() {
        let block = cfg.block(b);
        zero[b.index()] = match block.term {
            Terminator::Ret(RetVal::K(0)) => true,
            Terminator::Ret(_) => false,
            Terminator::Jump(t) => zero[t.index()],
            Terminator::Branch { jt, jf, .. } => zero[jt.index()] && zero[jf.index()],
        };
        let reject = Terminator::Ret(RetVal::K(0));
        if zero[b.index()] && !(block.stmts.is_empty() && block.term == reject) {
            let block = cfg.block_mut(b);
            block.stmts.clear();
            block.term = reject;
            changed = true;
        }
    }
    // Branches with one target; edges through empty jumps.
    let through = |cfg: &Cfg, mut t: BlockId| {
        let mut steps = 0;
        while let Block { stmts, term: Terminator::Jump(u) } = cfg.block(t) {
            if !stmts.is_empty() || steps > cfg.len() {
                break;
            }
            t = *u;
            steps += 1;
        }
        t
    };
    for &b in &order {
        let mut term = cfg.block(b).term;
        if let Terminator::Branch { jt, jf, .. } = term
            && jt == jf
        {
            term = Terminator::Jump(jt);
        }
        // `jge #k` then `jgt #k` on its true edge (a one-port range): `A == k`.
        if let Terminator::Branch { op: JmpOp::Jge, operand: Operand::K(k), jt: c, jf: out } = term
            && let Block {
                stmts,
                term:
                    Terminator::Branch { op: JmpOp::Jgt, operand: Operand::K(k2), jt: out2, jf: inside },
            } = cfg.block(c)
            && stmts.is_empty()
            && *k2 == k
            && *out2 == out
        {
            term =
                Terminator::Branch { op: JmpOp::Jeq, operand: Operand::K(k), jt: *inside, jf: out };
        }
        for s in term.succs_mut() {
            *s = through(cfg, *s);
        }
        if term != cfg.block(b).term {
            cfg.block_mut(b).term = term;
            changed = true;
        }
    }
    let entry = through(cfg, cfg.entry);
    if entry != cfg.entry {
        cfg.entry = entry;
        changed = true;
    }
    // Jumps: copy empty returns reached from elsewhere too, merge single-predecessor targets.
    let order = cfg.layout_order();
    let mut npreds = vec![0u32; cfg.len()];
    for &b in &order {
        for s in cfg.block(b).term.succs() {
            npreds[s.index()] += 1;
        }
    }
    for &b in &order {
        if npreds[b.index()] == 0 && b != cfg.entry {
            continue; // merged into its predecessor already
        }
        while let Terminator::Jump(t) = cfg.block(b).term {
            let target = cfg.block(t);
            if npreds[t.index()] == 1 && t != cfg.entry {
                let Block { stmts, term } = target.clone();
                let block = cfg.block_mut(b);
                block.stmts.extend(stmts);
                block.term = term;
                npreds[t.index()] = 0;
                changed = true;
            } else if target.stmts.is_empty() && matches!(target.term, Terminator::Ret(_)) {
                cfg.block_mut(b).term = target.term;
                npreds[t.index()] -= 1;
                changed = true;
            } else {
                break;
            }
        }
    }
    changed
}
