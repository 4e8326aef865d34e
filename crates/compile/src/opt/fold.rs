//! Value numbering with constant propagation and folding, and redundant-statement removal.
//!
//! **Why it exists.** gencode repeats itself: every `port` re-loads the EtherType and the IPv4
//! header length, arithmetic goes through scratch words (`ld #1; st M[0]; … ldx M[1]; ld
//! M[0]; div x`), constants are compared with constants (`gen_true` is `ld #0; jeq #0`). One
//! forward sweep in topological order gives every register a value number at every point
//! (predecessors that disagree give an unknown, as libpcap's `opt_blk`), and then:
//!
//! * a statement that writes a register with the value it already holds is deleted (a
//!   redundant load, store or move: the same value was computed, without failing, on every
//!   path here);
//! * statements take their canonical form (`super::value::eval`): constants from scratch
//!   words (or `tax`/`txa` when the other register holds the same value), `op #k` for `op x` with a known X, absolute loads for `[x + k]` with a known X,
//!   `ld #c` for ALU results known at compile time;
//! * `div x`/`mod x` by a known zero ends the block with `ret #0` (the program's run-time
//!   answer, where libpcap's optimizer refuses the filter);
//! * a branch on two constants becomes a jump.
//!
//! **Invariant kept.** Every statement computes, at every point, the same value number as
//! before, and fails on the same packets; only statements whose effect is already in place
//! disappear. The pass reports a change only for a deletion, a canonical rewrite (each of
//! which moves a statement down a finite ranking) or a folded branch, so the driver's loop
//! measure strictly decreases.

use super::value::{self, Risk, State, Values, X};
use crate::ir::*;

/// Entry and exit states of every block (indexed by block; unreachable blocks hold zeros).
pub(crate) struct States {
    pub entry: Vec<State>,
    pub exit: Vec<State>,
}

/// Runs the pass; returns the states (valid for the graph after the pass) and whether it
/// changed anything.
pub(crate) fn run(cfg: &mut Cfg, values: &mut Values) -> (States, bool) {
    let order = cfg.layout_order();
    let preds = cfg.preds();
    let mut states = States { entry: vec![[0; 18]; cfg.len()], exit: vec![[0; 18]; cfg.len()] };
    let mut changed = false;
    for &b in &order {
        let mut state = if b == cfg.entry {
            values.unknown_state()
        } else {
            let exits = &states.exit;
            values.merge(preds[b.index()].iter().map(|p| &exits[p.index()]))
        };
        states.entry[b.index()] = state;
        let block = cfg.block_mut(b);
        let mut out = Vec::with_capacity(block.stmts.len());
        let mut fails = false;
        for &s in &block.stmts {
            let e = value::eval(values, &state, s);
            if e.risk == Risk::Always {
                fails = true;
                break;
            }
            if state[e.dest] == e.vn {
                changed = true;
                continue;
            }
            changed |= e.stmt != s;
            out.push(e.stmt);
            state[e.dest] = e.vn;
        }
        block.stmts = out;
        if fails {
            // Everything after a certain failure is dead; the failure itself is `ret #0`.
            block.term = Terminator::Ret(RetVal::K(0));
            changed = true;
        }
        if let Terminator::Branch { op, operand, jt, jf } = block.term {
            if operand == Operand::X
                && let Some(c) = values.as_const(state[X])
            {
                block.term = Terminator::Branch { op, operand: Operand::K(c), jt, jf };
                changed = true;
            }
            if let Terminator::Branch { operand, .. } = block.term {
                let (a, b) = value::branch_operands(values, &state, operand);
                if let (Some(x), Some(y)) = (values.as_const(a), values.as_const(b)) {
                    block.term = Terminator::Jump(if op.eval(x, y) { jt } else { jf });
                    changed = true;
                }
            }
        }
        states.exit[b.index()] = state;
    }
    (states, changed)
}
