//! Branches decided by what every path has already learned about the accumulator.
//!
//! **Why it exists.** [`super::thread`] decides a branch from the branches that *dominate* it,
//! on value numbers. Where paths that loaded different values meet, their numbers differ and
//! the facts are lost, although the same comparison may already have failed on each path:
//! `src or dst host a or b or a` tests the source address (IPv4) or the sender address (ARP)
//! against `a`, then, after both, the same `a` again on a block the two address families
//! share. This pass keeps, per block, what is known about A's *current content* on every path
//! into the block (up to [`MAX_FACTS`] comparisons with constants and their outcomes, met by
//! intersection, forgotten when a statement writes A) and turns a branch those facts decide
//! into a jump.
//!
//! **Invariant kept.** A fact in a block's set holds on every run entering the block: it was
//! the outcome of a comparison of A with a constant on every path, and no statement wrote A
//! since. A decided branch goes where it always went. Each fold removes the edge never taken
//! (and the paths through it), so the driver's measure strictly decreases. One sweep in
//! topological order, at most [`MAX_FACTS`]² work per edge: linear.

use crate::ir::*;

/// How many comparisons are remembered per block (the newest are kept).
pub const MAX_FACTS: usize = 16;

/// `A op k` came out `outcome`.
type Fact = (JmpOp, u32, bool);

fn decide(facts: &[Fact], op: JmpOp, k: u32) -> Option<bool> {
    if let Some(&(_, _, o)) = facts.iter().find(|&&(fo, fk, _)| fo == op && fk == k) {
        return Some(o);
    }
    // A known exactly.
    let (_, v, _) = facts.iter().find(|&&(fo, _, o)| fo == JmpOp::Jeq && o)?;
    Some(op.eval(*v, k))
}

fn meet(slot: &mut Option<Vec<Fact>>, facts: &[Fact]) {
    match slot {
        None => *slot = Some(facts.to_vec()),
        Some(have) => have.retain(|f| facts.contains(f)),
    }
}

/// Runs the pass.
pub(crate) fn run(cfg: &mut Cfg) -> bool {
    let order = cfg.layout_order();
    let mut facts_in: Vec<Option<Vec<Fact>>> = vec![None; cfg.len()];
    facts_in[cfg.entry.index()] = Some(Vec::new());
    let mut changed = false;
    for &b in &order {
        let mut facts = facts_in[b.index()].take().unwrap_or_default();
        let block = cfg.block(b);
        if block.stmts.iter().any(|s| s.defs().intersects(RegSet::A)) {
            facts.clear();
        }
        match block.term {
            Terminator::Branch { op, operand: Operand::K(k), jt, jf } => {
                if let Some(o) = decide(&facts, op, k) {
                    let t = if o { jt } else { jf };
                    cfg.block_mut(b).term = Terminator::Jump(t);
                    changed = true;
                    meet(&mut facts_in[t.index()], &facts);
                } else {
                    for (t, outcome) in [(jt, true), (jf, false)] {
                        let mut f = facts.clone();
                        if f.len() == MAX_FACTS {
                            f.remove(0);
                        }
                        f.push((op, k, outcome));
                        meet(&mut facts_in[t.index()], &f);
                    }
                }
            }
            Terminator::Branch { operand: Operand::X, jt, jf, .. } => {
                meet(&mut facts_in[jt.index()], &facts);
                meet(&mut facts_in[jf.index()], &facts);
            }
            Terminator::Jump(t) => meet(&mut facts_in[t.index()], &facts),
            Terminator::Ret(_) => {}
        }
    }
    changed
}
