//! Merging of identical blocks (libpcap's `intern_blocks`, tail sharing).
//!
//! **Why it exists.** gencode emits the same tail many times (`ret #0`, the IPv6 half of
//! every `port`, `jeq #0x8035` after each ARP test), and threading makes more tails alike.
//! Blocks are hashed bottom-up, in reverse topological order, with their successors already
//! replaced by their representatives, so two blocks with the same statements, comparison and
//! (merged) successors become one. One sweep finds every merge: linear time with a hash map,
//! no pairwise comparison, no recursion.
//!
//! **Invariant kept.** Identical statements and terminator, with successors that behave
//! identically, behave identically; redirecting edges between them changes no run. Each merge
//! lowers the number of reachable blocks without changing the number of paths.

use super::FastMap;
use crate::ir::*;

/// Runs the pass.
pub(crate) fn run(cfg: &mut Cfg) -> bool {
    let order = cfg.layout_order();
    let mut canon: Vec<BlockId> = (0..cfg.len() as u32).map(BlockId).collect();
    let mut seen: FastMap<Block, BlockId> = FastMap::default();
    let mut changed = false;
    for &b in order.iter().rev() {
        let mut block = cfg.block(b).clone();
        for s in block.term.succs_mut() {
            *s = canon[s.index()];
        }
        match seen.get(&block) {
            Some(&rep) => {
                canon[b.index()] = rep;
                changed = true;
            }
            None => {
                if block.term != cfg.block(b).term {
                    cfg.block_mut(b).term = block.term;
                }
                seen.insert(block, b);
            }
        }
    }
    cfg.entry = canon[cfg.entry.index()];
    changed
}
