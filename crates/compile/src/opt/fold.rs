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
//!   path here), and so is a run of statements writing only A that ends with the value A held
//!   before it (`ldb [0]; and #0xf0` after a test of that same value), when every statement in
//!   it that could fail computed part of that value;
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

use super::value::{self, A, Risk, State, Val, Values, Vn, X};
use crate::ir::*;

/// Whether `v` is `of` or one of the values `of` was computed from (so it was computed, without
/// failing, wherever `of` was). Looks at most 64 values deep.
fn within(values: &Values, of: Vn, v: Vn) -> bool {
    let mut stack = vec![of];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        if n == v {
            return true;
        }
        seen += 1;
        if seen > 64 {
            return false;
        }
        match values.get(n) {
            Val::Ind(_, _, x) | Val::AluK(_, x, _) | Val::Neg(x) => stack.push(x),
            Val::AluX(_, a, b) => stack.extend([a, b]),
            _ => {}
        }
    }
    false
}

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
        let mut risks = Vec::with_capacity(block.stmts.len());
        // A run of statements that only write A: where it started in `out`, and A before it.
        let mut run: Option<(usize, Vn)> = None;
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
            if e.stmt.defs() == RegSet::A {
                run.get_or_insert((out.len(), state[A]));
            } else {
                run = None;
            }
            out.push(e.stmt);
            risks.push((e.vn, e.risk));
            e.write(values, &mut state);
            // The run recomputed the value A held before it (`ldb [0]; and #0xf0` again):
            // drop it if none of its statements could fail where the first computation did not.
            if let Some((start, before)) = run
                && state[A] == before
                && risks[start..].iter().all(|&(v, r)| r == Risk::None || within(values, before, v))
            {
                out.truncate(start);
                risks.truncate(start);
                run = None;
                changed = true;
            }
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
