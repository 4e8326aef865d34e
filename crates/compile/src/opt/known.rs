//! What dominating code has already established: branch outcomes on value numbers, values
//! known to have been computed, and how long the packet is known to be.
//!
//! **Why it exists.** Jump threading needs "what do the branches that dominate this edge
//! already say about A?", and dead-statement removal needs "can this load still fail here?".
//! libpcap answers the first with edge-dominator bit vectors (O(n²) bits, recomputed every
//! pass). Here the facts live in hash tables with an undo log, filled and rolled back while
//! walking the dominator tree depth-first (`walk_dominators`): a block sees exactly the
//! facts of its dominators and of the edges that dominate it, each lookup is O(1), and the
//! whole walk is linear in the size of the graph.
//!
//! **Invariant kept.** Every fact in scope at a block holds on every run that reaches the
//! block: branch outcomes come from a dominating block's single edge into the dominated
//! region, and "computed" values and length bounds from statements of dominating blocks,
//! which ran without failing on every such run.

use super::value::{Risk, Values, Vn};
use super::{FastMap as HashMap, FastSet as HashSet};
use crate::analysis::Facts;
use crate::ir::*;

/// A branch outcome key: (A's value, the comparison, the operand's value).
type Key = (Vn, JmpOp, Vn);

enum Undo {
    Exact(Key, Option<bool>),
    Range(Vn, Option<(u32, u32)>),
    Zeros(Vn, Option<u32>),
    Ones(Vn, Option<u32>),
    Avail(Vn),
    Bound(u64),
    IndBound(Vn, Option<u64>),
}

/// The scoped facts. See the module documentation.
#[derive(Default)]
pub(crate) struct Known {
    exact: HashMap<Key, bool>,
    range: HashMap<Vn, (u32, u32)>,
    zeros: HashMap<Vn, u32>,
    ones: HashMap<Vn, u32>,
    avail: HashSet<Vn>,
    bound: u64,
    ind_bound: HashMap<Vn, u64>,
    log: Vec<Undo>,
}

impl Known {
    /// A mark to roll back to.
    pub(crate) fn mark(&self) -> usize {
        self.log.len()
    }

    /// Forgets every fact added since `mark`.
    pub(crate) fn rollback(&mut self, mark: usize) {
        while self.log.len() > mark {
            match self.log.pop().expect("log longer than mark") {
                Undo::Exact(k, old) => restore(&mut self.exact, k, old),
                Undo::Range(k, old) => restore(&mut self.range, k, old),
                Undo::Zeros(k, old) => restore(&mut self.zeros, k, old),
                Undo::Ones(k, old) => restore(&mut self.ones, k, old),
                Undo::Avail(v) => {
                    self.avail.remove(&v);
                }
                Undo::Bound(old) => self.bound = old,
                Undo::IndBound(k, old) => restore(&mut self.ind_bound, k, old),
            }
        }
    }

    /// Records that a statement with value `vn` and risk `risk` ran without failing.
    pub(crate) fn computed(&mut self, vn: Vn, risk: Risk) {
        if self.avail.insert(vn) {
            self.log.push(Undo::Avail(vn));
        }
        match risk {
            Risk::Bound(b) if b > self.bound => {
                self.log.push(Undo::Bound(self.bound));
                self.bound = b;
            }
            Risk::IndBound(x, b) => {
                let old = self.ind_bound.get(&x).copied();
                if old.is_none_or(|o| o < b) {
                    self.ind_bound.insert(x, b);
                    self.log.push(Undo::IndBound(x, old));
                }
            }
            _ => {}
        }
    }

    /// Whether a statement with value `vn` and risk `risk` cannot fail here.
    pub(crate) fn safe(&self, vn: Vn, risk: Risk) -> bool {
        match risk {
            Risk::None => true,
            Risk::Always => false,
            Risk::Bound(b) => b <= self.bound || self.avail.contains(&vn),
            Risk::IndBound(x, b) => {
                self.ind_bound.get(&x).is_some_and(|&k| b <= k) || self.avail.contains(&vn)
            }
            Risk::Other => self.avail.contains(&vn),
        }
    }

    fn set_exact(&mut self, k: Key, v: bool) {
        let old = self.exact.insert(k, v);
        self.log.push(Undo::Exact(k, old));
    }

    fn set_range(&mut self, a: Vn, lo: u32, hi: u32) {
        let old = self.range.get(&a).copied();
        let (olo, ohi) = old.unwrap_or((0, u32::MAX));
        let new = (olo.max(lo), ohi.min(hi));
        if Some(new) != old && new != (0, u32::MAX) {
            self.range.insert(a, new);
            self.log.push(Undo::Range(a, old));
        }
    }

    fn set_bits(&mut self, a: Vn, bits: u32, ones: bool) {
        let map = if ones { &mut self.ones } else { &mut self.zeros };
        let old = map.get(&a).copied();
        let new = old.unwrap_or(0) | bits;
        if Some(new) != old {
            map.insert(a, new);
            self.log.push(if ones { Undo::Ones(a, old) } else { Undo::Zeros(a, old) });
        }
    }

    /// Records that `a op b` came out `outcome`.
    pub(crate) fn assume(&mut self, values: &Values, a: Vn, op: JmpOp, b: Vn, outcome: bool) {
        self.set_exact((a, op, b), outcome);
        let Some(k) = values.as_const(b) else { return };
        match (op, outcome) {
            (JmpOp::Jeq, true) => {
                self.set_range(a, k, k);
                self.set_bits(a, !k, false);
                self.set_bits(a, k, true);
            }
            (JmpOp::Jeq, false) => {}
            (JmpOp::Jgt, true) => self.set_range(a, k.saturating_add(1), u32::MAX),
            (JmpOp::Jgt, false) => self.set_range(a, 0, k),
            (JmpOp::Jge, true) => self.set_range(a, k, u32::MAX),
            (JmpOp::Jge, false) => self.set_range(a, 0, k.saturating_sub(1)),
            (JmpOp::Jset, false) => self.set_bits(a, k, false),
            (JmpOp::Jset, true) => {
                if k.is_power_of_two() {
                    self.set_bits(a, k, true);
                }
                if k == u32::MAX {
                    self.set_range(a, 1, u32::MAX);
                }
            }
        }
    }

    /// The outcome of `a op b` if the facts decide it.
    pub(crate) fn decide(&self, values: &Values, a: Vn, op: JmpOp, b: Vn) -> Option<bool> {
        if let Some(&o) = self.exact.get(&(a, op, b)) {
            return Some(o);
        }
        let ka = values.as_const(a);
        let kb = values.as_const(b);
        if let (Some(x), Some(y)) = (ka, kb) {
            return Some(op.eval(x, y));
        }
        if a == b {
            match op {
                JmpOp::Jeq | JmpOp::Jge => return Some(true),
                JmpOp::Jgt => return Some(false),
                JmpOp::Jset => {}
            }
        }
        let k = kb?;
        let (lo, hi) = self.range.get(&a).copied().unwrap_or((0, u32::MAX));
        if lo == hi {
            return Some(op.eval(lo, k));
        }
        let zeros = self.zeros.get(&a).copied().unwrap_or(0);
        let ones = self.ones.get(&a).copied().unwrap_or(0);
        let zero = values.konst_lookup(0);
        match op {
            JmpOp::Jeq => {
                if k < lo || k > hi || k & zeros != 0 || ones & !k != 0 {
                    return Some(false);
                }
            }
            JmpOp::Jgt => {
                if lo > k {
                    return Some(true);
                }
                if hi <= k {
                    return Some(false);
                }
            }
            JmpOp::Jge => {
                if lo >= k {
                    return Some(true);
                }
                if hi < k {
                    return Some(false);
                }
            }
            JmpOp::Jset => {
                if k & !zeros == 0 || (k != 0 && hi < 1 << k.trailing_zeros()) {
                    return Some(false);
                }
                if k & ones != 0 || (k == u32::MAX && lo > 0) {
                    return Some(true);
                }
                if k == u32::MAX
                    && let Some(z) = zero
                    && let Some(&o) = self.exact.get(&(a, JmpOp::Jeq, z))
                {
                    return Some(!o);
                }
            }
        }
        if op == JmpOp::Jeq
            && k == 0
            && let Some(all) = values.konst_lookup(u32::MAX)
            && let Some(&o) = self.exact.get(&(a, JmpOp::Jset, all))
        {
            return Some(!o);
        }
        None
    }
}

fn restore<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, k: K, old: Option<V>) {
    match old {
        Some(v) => {
            map.insert(k, v);
        }
        None => {
            map.remove(&k);
        }
    }
}

/// The dominator-tree children of every reachable block.
pub(crate) fn dom_children(cfg: &Cfg, facts: &Facts) -> Vec<Vec<BlockId>> {
    let mut children = vec![Vec::new(); cfg.len()];
    for &b in facts.order() {
        if let Some(d) = facts.idom(b) {
            children[d.index()].push(b);
        }
    }
    children
}

/// Walks the dominator tree (`children`, from [`dom_children`]) depth-first without
/// recursion. `enter` runs when a block is reached (its dominators' facts in scope; what it
/// adds stays in scope for the blocks it dominates), and everything it added is rolled back
/// when the walk leaves the block.
pub(crate) fn walk_dominators(
    entry: BlockId,
    children: &[Vec<BlockId>],
    known: &mut Known,
    mut enter: impl FnMut(BlockId, &mut Known),
) {
    // (block, mark before entering, next child index)
    let mut stack: Vec<(BlockId, usize, usize)> = Vec::new();
    let mark = known.mark();
    enter(entry, known);
    stack.push((entry, mark, 0));
    while let Some(top) = stack.last_mut() {
        let (b, mark, next) = *top;
        if let Some(&c) = children[b.index()].get(next) {
            top.2 += 1;
            let m = known.mark();
            enter(c, known);
            stack.push((c, m, 0));
        } else {
            known.rollback(mark);
            stack.pop();
        }
    }
}
