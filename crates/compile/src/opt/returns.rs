//! Shared returns: a block that ends in `ret #k` after statements jumps instead to the empty
//! `ret #k` block that branches already reach, so that the layout can let one of them fall
//! through into it.
//!
//! **Why it exists.** A dead load kept because a short packet must still be rejected (see
//! [`super::bounds`]) often ends a path as `ld [k]; ret #n`, while branches elsewhere reach a
//! separate `ret #n`. Emitted as they are, that is two `ret #n` instructions; jumping from the
//! load's block to the shared block costs nothing where the layout puts the shared block right
//! after it (the jump disappears) and one `ja` where it does not (as many instructions as the
//! `ret` it replaces).
//!
//! This runs once, after the passes reached their fixed point: [`super::simplify`] undoes it
//! (it copies returns into jumps), which is right while the passes still rewrite the graph;
//! `unshare` undoes it before they start.
//!
//! **Invariant kept.** A jump to a block that only returns `#k` returns `#k`: every run
//! returns what it returned.

use crate::ir::*;

/// Undoes [`run`] (a jump to an empty return block becomes that return), so that optimizing
/// an optimized graph again starts from the graph the passes left: the loop then changes
/// nothing, and [`run`] gives the same program.
pub(crate) fn unshare(cfg: &mut Cfg) {
    for b in cfg.layout_order() {
        if let Terminator::Jump(t) = cfg.block(b).term
            && let Block { stmts, term: Terminator::Ret(v) } = cfg.block(t)
            && stmts.is_empty()
        {
            cfg.block_mut(b).term = Terminator::Ret(*v);
        }
    }
}

/// Runs the rewrite.
pub(crate) fn run(cfg: &mut Cfg) {
    let order = cfg.layout_order();
    // The empty return blocks branches reach, by return value.
    let mut shared: Vec<(RetVal, BlockId)> = Vec::new();
    for &b in &order {
        if let Terminator::Branch { jt, jf, .. } = cfg.block(b).term {
            for t in [jt, jf] {
                let tb = cfg.block(t);
                if let Terminator::Ret(v) = tb.term
                    && tb.stmts.is_empty()
                    && !shared.iter().any(|&(w, _)| w == v)
                {
                    shared.push((v, t));
                }
            }
        }
    }
    for &b in &order {
        let block = cfg.block(b);
        if let Terminator::Ret(v) = block.term
            && !block.stmts.is_empty()
            && let Some(&(_, r)) = shared.iter().find(|&&(w, _)| w == v)
        {
            cfg.block_mut(b).term = Terminator::Jump(r);
        }
    }
}
