//! Jump threading: branches decided by what dominating branches already established.
//!
//! **Why it exists.** In `port 80` gencode tests the EtherType, the protocol and the fragment
//! offset again for the destination port after the source port failed; in `host a or host b`
//! each host re-tests the EtherType. Those tests are decided on the edges that reach them.
//! Walking the dominator tree with `super::known::Known` in scope, this pass
//!
//! * turns a branch decided at its own block into a jump, and
//! * moves an edge `p → c` past `c` (and past the blocks after it, up to [`MAX_STEPS`]) when
//!   `c`'s branch is decided on that edge (libpcap's `opt_j`), provided skipping is
//!   invisible: every statement skipped cannot fail there (its value was computed by a
//!   dominator, or a dominating load proves the packet long enough), and every register the
//!   skipped blocks would have changed either keeps its value or is overwritten by the
//!   landing block before any use.
//!
//! It also records, for [`super::dce`], which statements cannot fail where they are.
//!
//! **Invariant kept.** On every packet, a run of the new program visits a subsequence of the
//! blocks the old run visited, with the same register values wherever they are read, and the
//! skipped statements could not have failed; so it returns the same value. (Facts and value
//! numbers come from the graph before the pass; every edge moved keeps the run equivalent, so
//! they stay true for the moved edges too, and several moves in one pass compose.) A folded
//! branch removes paths from entry to exit; a moved edge removes paths or, past a jump,
//! shortens every path through it by at least one block: the driver's measure strictly
//! decreases.

use super::fold::States;
use super::known::{Known, dom_children, walk_dominators};
use super::value::{self, ATOMS, State, Values, atom_set};
use crate::analysis::Facts;
use crate::ir::*;

/// How many blocks one edge may be moved past in one pass (bounds the work per edge; later
/// rounds continue).
pub const MAX_STEPS: usize = 64;

/// Per block, per statement: whether the statement cannot fail where it stands.
pub(crate) type Safe = Vec<Vec<bool>>;

/// Runs the pass on a graph `fold` just numbered.
pub(crate) fn run(cfg: &mut Cfg, values: &mut Values, states: &States) -> (Safe, bool) {
    let facts = Facts::new(cfg);
    let children = dom_children(cfg, &facts);
    let orig: Vec<Terminator> = cfg.blocks.iter().map(|b| b.term).collect();
    let mut safe: Safe = vec![Vec::new(); cfg.len()];
    let mut changed = false;
    let mut known = Known::default();
    walk_dominators(cfg.entry, &children, &mut known, |b, known| {
        // The edge that dominates b, if b has a single incoming edge.
        if let [p] = facts.preds(b)
            && let Terminator::Branch { op, operand, jt, .. } = orig[p.index()]
        {
            let (a, v) = value::branch_operands(values, &states.exit[p.index()], operand);
            known.assume(values, a, op, v, jt == b);
        }
        let mut state = states.entry[b.index()];
        let mut flags = Vec::with_capacity(cfg.block(b).stmts.len());
        for &s in &cfg.block(b).stmts {
            let e = value::eval(values, &state, s);
            flags.push(known.safe(e.vn, e.risk));
            known.computed(e.vn, e.risk);
            e.write(values, &mut state);
        }
        safe[b.index()] = flags;
        let exit = states.exit[b.index()];
        if let Terminator::Branch { op, operand, jt, jf } = cfg.block(b).term {
            let (a, v) = value::branch_operands(values, &exit, operand);
            if let Some(o) = known.decide(values, a, op, v) {
                cfg.block_mut(b).term = Terminator::Jump(if o { jt } else { jf });
                changed = true;
            } else {
                for outcome in [true, false] {
                    let mark = known.mark();
                    known.assume(values, a, op, v, outcome);
                    let target = if outcome { jt } else { jf };
                    let new = thread_from(cfg, values, known, target, &exit);
                    known.rollback(mark);
                    if new != target {
                        changed = true;
                        if let Terminator::Branch { jt, jf, .. } = &mut cfg.block_mut(b).term {
                            *(if outcome { jt } else { jf }) = new;
                        }
                    }
                }
            }
        }
        if let Terminator::Jump(t) = cfg.block(b).term {
            let new = thread_from(cfg, values, known, t, &exit);
            if new != t {
                changed = true;
                cfg.block_mut(b).term = Terminator::Jump(new);
            }
        }
    });
    (safe, changed)
}

/// Where an edge leaving a block with exit state `from` into `start` can land instead.
fn thread_from(
    cfg: &Cfg,
    values: &mut Values,
    known: &Known,
    start: BlockId,
    from: &State,
) -> BlockId {
    let mut best = start;
    let mut cur = start;
    let mut state = *from;
    for _ in 0..MAX_STEPS {
        let c = cfg.block(cur);
        for &s in &c.stmts {
            let e = value::eval(values, &state, s);
            if !known.safe(e.vn, e.risk) {
                return best;
            }
            e.write(values, &mut state);
        }
        let next = match c.term {
            Terminator::Jump(t) => t,
            Terminator::Branch { op, operand, jt, jf } => {
                let (a, v) = value::branch_operands(values, &state, operand);
                match known.decide(values, a, op, v) {
                    Some(true) => jt,
                    Some(false) => jf,
                    None => return best,
                }
            }
            Terminator::Ret(_) => return best,
        };
        let landing = cfg.block(next);
        if (0..ATOMS).all(|r| state[r] == from[r] || overwritten_before_use(landing, r)) {
            best = next;
        }
        cur = next;
    }
    best
}

/// Whether `block` writes atom `r` before reading it, or ends the program without reading it.
/// Looks at this block only, whose statements and returns no pass changes while edges move.
fn overwritten_before_use(block: &Block, r: usize) -> bool {
    let reg = atom_set(r);
    for s in &block.stmts {
        if s.uses().intersects(reg) {
            return false;
        }
        if s.defs().intersects(reg) {
            return true;
        }
    }
    match block.term {
        Terminator::Ret(RetVal::K(_)) => true,
        Terminator::Ret(RetVal::A) => r != value::A,
        _ => false,
    }
}
