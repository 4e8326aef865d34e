//! Graph facts the optimizer passes share: layout positions, predecessors and dominators.
//!
//! **Why it exists.** libpcap's optimizer recomputes dominator bit-vectors over all blocks on
//! every pass (`find_dom`, O(n²/32) memory, the reason long host lists blow up). Because the
//! IR is acyclic, one sweep in topological order ([`Cfg::layout_order`]) gives immediate
//! dominators exactly: the immediate dominator of a block is the nearest common ancestor, in
//! the dominator tree built so far, of its predecessors (every predecessor comes first). The
//! common ancestors are found by binary lifting, so the sweep takes O(edges × log blocks)
//! time and O(blocks × log blocks) memory, with no recursion; [`Facts::dominates`] is
//! O(log blocks).
//!
//! **Invariant.** The facts describe the graph they were computed from; recompute after a
//! pass changes edges. Unreachable blocks have no position and no dominator.

use crate::ir::*;

/// Positions, predecessors and immediate dominators of the reachable blocks of a graph.
#[derive(Clone, Debug)]
pub struct Facts {
    order: Vec<BlockId>,
    pos: Vec<u32>,
    preds: Vec<Vec<BlockId>>,
    idom: Vec<Option<BlockId>>,
    depth: Vec<u32>,
    /// `up[j][b]`: the 2^j-th dominator-tree ancestor of `b` (the entry for ancestors past
    /// it).
    up: Vec<Vec<BlockId>>,
}

const NONE: u32 = u32::MAX;

impl Facts {
    /// Computes the facts. `cfg` must satisfy [`Cfg::check`].
    pub fn new(cfg: &Cfg) -> Facts {
        let order = cfg.layout_order();
        let mut pos = vec![NONE; cfg.len()];
        for (i, b) in order.iter().enumerate() {
            pos[b.index()] = i as u32;
        }
        let preds = cfg.preds();
        let levels = (usize::BITS - order.len().leading_zeros()).max(1) as usize;
        let mut facts = Facts {
            pos,
            preds,
            idom: vec![None; cfg.len()],
            depth: vec![0; cfg.len()],
            up: vec![vec![cfg.entry; cfg.len()]; levels],
            order: Vec::new(),
        };
        for &b in order.iter().skip(1) {
            let mut new: Option<BlockId> = None;
            for &p in &facts.preds[b.index()] {
                new = Some(match new {
                    None => p,
                    Some(q) => facts.ancestor(p, q),
                });
            }
            let d = new.expect("a reachable block other than the entry has a predecessor");
            facts.idom[b.index()] = Some(d);
            facts.depth[b.index()] = facts.depth[d.index()] + 1;
            facts.up[0][b.index()] = d;
            for j in 1..levels {
                let mid = facts.up[j - 1][b.index()];
                facts.up[j][b.index()] = facts.up[j - 1][mid.index()];
            }
        }
        facts.order = order;
        facts
    }

    /// The ancestor of `b` at depth `depth` (no deeper than `b`).
    fn lift_to(&self, mut b: BlockId, depth: u32) -> BlockId {
        let mut climb = self.depth[b.index()] - depth;
        let mut j = 0;
        while climb > 0 {
            if climb & 1 == 1 {
                b = self.up[j][b.index()];
            }
            climb >>= 1;
            j += 1;
        }
        b
    }

    /// The nearest common dominator-tree ancestor of two processed blocks.
    fn ancestor(&self, a: BlockId, b: BlockId) -> BlockId {
        let d = self.depth[a.index()].min(self.depth[b.index()]);
        let (mut a, mut b) = (self.lift_to(a, d), self.lift_to(b, d));
        if a == b {
            return a;
        }
        for j in (0..self.up.len()).rev() {
            let (x, y) = (self.up[j][a.index()], self.up[j][b.index()]);
            if x != y {
                a = x;
                b = y;
            }
        }
        self.up[0][a.index()]
    }

    /// The reachable blocks in layout (topological) order; the entry first.
    pub fn order(&self) -> &[BlockId] {
        &self.order
    }

    /// The position of `b` in [`Facts::order`], or `None` when unreachable.
    pub fn pos(&self, b: BlockId) -> Option<usize> {
        let p = self.pos[b.index()];
        (p != NONE).then_some(p as usize)
    }

    /// The predecessors of `b` (a branch with both edges to `b` counts twice).
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        &self.preds[b.index()]
    }

    /// The immediate dominator of `b` (`None` for the entry and unreachable blocks).
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom[b.index()]
    }

    /// The depth of `b` in the dominator tree (the entry is 0).
    pub fn dom_depth(&self, b: BlockId) -> u32 {
        self.depth[b.index()]
    }

    /// Whether every path from the entry to `b` passes through `a` (a block dominates
    /// itself). Unreachable blocks dominate nothing and are dominated by nothing.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        if self.pos(a).is_none() || self.pos(b).is_none() {
            return false;
        }
        let da = self.depth[a.index()];
        da <= self.depth[b.index()] && self.lift_to(b, da) == a
    }
}
