//! `or`/`and` pull-up: regrouping runs of tests so that each value is loaded once.
//!
//! **Why it exists.** `host a or host b or host c` tests the source address against `a`, the
//! destination against `a`, the source against `b`…, reloading A before every test. libpcap's
//! `or_pullup`/`and_pullup` (the BPF+ paper's predicate pull-up) moves the tests of one value
//! together, but it also moves them before loads that could fail, so its programs accept
//! truncated packets that the unoptimized ones reject (libpcap issue 430).
//!
//! Here a *run* is a chain of branch blocks that each leave to the same target `E` on one
//! outcome (`or`: true, `and`: false, or a mix: `ip host a and ip src host b` leaves on
//! `src = a` and on `dst != a`) and go on to the next test on the other, each with at most one
//! packet load (absolute, or relative to X when X holds an IPv4 header length, as in `port`
//! tests) and an optional mask (`net` tests), every block after the first reached only from
//! the previous one; the first block may compute other things before its test (`ldxb` before
//! a port). Such a run leaves iff some test comes out its leaving way, so its tests may run in
//! any order **once no load in it can change the answer by failing**: a load that cannot
//! fail (the packet is known to be long enough: loads earlier in the run, the forward bound
//! of [`super::bounds`], the load of the value A holds on entry), a run that leaves to
//! `ret #0` (a failing load answers what leaving does), or an absolute load whose failure
//! every continuation after the run anticipates (the backward bound: any path to a non-zero
//! return fails on such a packet anyway). The pass finds the first test from which on every
//! load is such, and regroups the tests from there: first those on the value A already holds
//! (the value of the previous test, or, for the first test, the value its single predecessor
//! tested), then one load per value with its tests. It applies only when it saves loads.
//!
//! **Invariant kept.** The regrouped suffix computes the same disjunction (conjunction) of
//! pure tests and leaves to the same two targets; a load moves only where its failing cannot
//! change the answer (see above); A, the only
//! register the run writes, is overwritten before use (or not read) at both targets. Each
//! rewrite lowers the statement count and keeps paths, blocks and edges: the driver's measure
//! strictly decreases.

use super::bounds::{self, Forward};
use crate::ir::*;

/// How many statement-less tests [`a_on_entry`] looks back through.
const MAX_EMPTY_TESTS: usize = 64;

/// A value a run loads: `(relative to X, size, offset, mask)` (`u32::MAX`: no `and`).
type Key = (bool, Size, u32, u32);

#[derive(Clone, Copy)]
struct Test {
    key: Key,
    op: JmpOp,
    k: u32,
    /// The outcome on which the test leaves the run.
    exit_on: bool,
}

/// The test of a block: statements before it (`prefix`, kept in place), the value tested (a
/// packet load, absolute or relative to X, below the special offsets with an optional `and
/// #mask`; `None`: A as it is), the branch on a constant.
struct Simple {
    prefix: usize,
    key: Option<Key>,
    op: JmpOp,
    k: u32,
}

fn key_of(stmts: &[Stmt]) -> Option<Key> {
    let fits = |size: Size, off: u32| {
        u64::from(off) + u64::from(size.bytes()) < super::value::SPECIAL_OFFSETS
    };
    let (src, mask) = match *stmts {
        [Stmt::Ld(src)] => (src, u32::MAX),
        [Stmt::Ld(src), Stmt::Alu(AluOp::And, Operand::K(m))] if m != u32::MAX => (src, m),
        _ => return None,
    };
    match src {
        Src::Abs(size, off) if fits(size, off) => Some((false, size, off, mask)),
        Src::Ind(size, off) if fits(size, off) => Some((true, size, off, mask)),
        _ => None,
    }
}

/// The block as a test, if it is one. With `prefix` set, statements before the load are
/// allowed (the head of a run keeps them).
fn simple_with(block: &Block, prefix: bool) -> Option<Simple> {
    let Terminator::Branch { op, operand: Operand::K(k), .. } = block.term else { return None };
    let n = block.stmts.len();
    if n == 0 {
        return Some(Simple { prefix: 0, key: None, op, k });
    }
    for tail in [2, 1] {
        if tail <= n
            && (prefix || tail == n)
            && let Some(key) = key_of(&block.stmts[n - tail..])
        {
            return Some(Simple { prefix: n - tail, key: Some(key), op, k });
        }
    }
    None
}

fn simple(block: &Block) -> Option<Simple> {
    simple_with(block, false)
}

fn load(key: Key) -> Vec<Stmt> {
    let (ind, size, off, mask) = key;
    let mut v = vec![Stmt::Ld(if ind { Src::Ind(size, off) } else { Src::Abs(size, off) })];
    if mask != u32::MAX {
        v.push(Stmt::Alu(AluOp::And, Operand::K(mask)));
    }
    v
}

fn edges(block: &Block) -> (BlockId, BlockId) {
    match block.term {
        Terminator::Branch { jt, jf, .. } => (jt, jf),
        _ => unreachable!("runs hold branches only"),
    }
}

fn a_dead(block: &Block) -> bool {
    for s in &block.stmts {
        if s.uses().intersects(RegSet::A) {
            return false;
        }
        if s.defs().intersects(RegSet::A) {
            return true;
        }
    }
    matches!(block.term, Terminator::Ret(RetVal::K(_)))
}

/// The value A holds when `b`'s own statements start, if `b` has a single predecessor that
/// tests a loaded value (so A holds that value on the edge into `b`), possibly through a
/// chain of at most [`MAX_EMPTY_TESTS`] single-predecessor tests with no statements (which leave
/// A as it is; the cap keeps the pass linear).
fn a_on_entry(preds: &[Vec<BlockId>], cfg: &Cfg, b: BlockId) -> Option<Key> {
    let mut b = b;
    for _ in 0..=MAX_EMPTY_TESTS {
        let [p] = preds[b.index()].as_slice() else { return None };
        let s = simple_with(cfg.block(*p), true)?;
        match s.key {
            Some(k) => return Some(k),
            None => b = *p,
        }
    }
    None
}

/// Runs the pass.
pub(crate) fn run(cfg: &mut Cfg) -> bool {
    let order = cfg.layout_order();
    let preds = cfg.preds();
    let fwd = Forward::new(cfg, &order);
    let cover = bounds::cover_in(cfg, &order, &fwd);
    let mut in_run = vec![false; cfg.len()];
    let mut changed = false;
    for &head in &order {
        if in_run[head.index()] {
            continue;
        }
        let Some(h) = simple_with(cfg.block(head), true) else { continue };
        let (hjt, hjf) = edges(cfg.block(head));
        // Either edge of the head may be the run's exit; take the longer run.
        let mut best: Option<(BlockId, Vec<BlockId>)> = None;
        for exit in [hjt, hjf] {
            if hjt == hjf {
                break;
            }
            let mut run = vec![head];
            loop {
                let (jt, jf) = edges(cfg.block(*run.last().expect("non-empty")));
                let next = if jt == exit { jf } else { jt };
                if next == exit || preds[next.index()].len() != 1 || in_run[next.index()] {
                    break;
                }
                let nb = cfg.block(next);
                if simple(nb).is_none() {
                    break;
                }
                let (njt, njf) = edges(nb);
                if njt != exit && njf != exit {
                    break;
                }
                run.push(next);
            }
            if best.as_ref().is_none_or(|(_, r)| r.len() < run.len()) {
                best = Some((exit, run));
            }
        }
        let Some((exit, run)) = best else { continue };
        if run.len() < 2 {
            continue;
        }
        for b in &run {
            in_run[b.index()] = true;
        }
        // A at the head's test: what the edge into it carries, unless statements before the
        // test write A.
        let prefix = &cfg.block(head).stmts[..h.prefix];
        let held0 = if prefix.iter().any(|s| s.defs().intersects(RegSet::A)) {
            None
        } else {
            a_on_entry(&preds, cfg, head)
        };
        // Bounds and X as they are at the head's test, after its prefix.
        let (len, x) = (fwd.len_at_least[head.index()], fwd.x_msh[head.index()]);
        let (len, x) = bounds::walk(prefix, len, x, |_, _| {});
        changed |= regroup(cfg, &run, exit, held0, len, x, &cover);
    }
    changed
}

fn regroup(
    cfg: &mut Cfg,
    run: &[BlockId],
    exit: BlockId,
    held0: Option<Key>,
    len_at_least: u64,
    x_msh: bool,
    cover: &[u64],
) -> bool {
    let last = cfg.block(*run.last().expect("non-empty"));
    let (last_jt, last_jf) = edges(last);
    let cont = if last_jt == exit { last_jf } else { last_jt };
    if !a_dead(cfg.block(exit)) || !a_dead(cfg.block(cont)) {
        return false;
    }
    let head_prefix = simple_with(cfg.block(run[0]), true).expect("runs start with a test").prefix;
    // Per test: the value compared (None: unknown A), the bounds before it.
    let mut keys = Vec::with_capacity(run.len());
    let mut bounds = Vec::with_capacity(run.len());
    let mut loads = Vec::with_capacity(run.len());
    let mut tests = Vec::with_capacity(run.len());
    let (mut key, mut abs, mut ind) = (held0, len_at_least, 0u64);
    let end = |(_, size, off, _): Key| u64::from(off) + u64::from(size.bytes());
    // The load of the value A holds on entry succeeded, with the same X when no statement
    // of the head runs before the run (checked where `m == 0` is chosen).
    if let Some(k) = held0
        && head_prefix == 0
    {
        if k.0 {
            ind = end(k);
        } else {
            abs = abs.max(end(k));
        }
    }
    for (j, &b) in run.iter().enumerate() {
        let t = simple_with(cfg.block(b), j == 0).expect("runs hold simple tests");
        bounds.push((abs, ind));
        if let Some(k) = t.key {
            key = Some(k);
            if k.0 {
                ind = ind.max(end(k));
            } else {
                abs = abs.max(end(k));
            }
        }
        let (jt, _) = edges(cfg.block(b));
        loads.push(t.key);
        keys.push(key);
        tests.push((t.op, t.k, jt == exit));
    }
    // When the run leaves to `ret #0`, a failing load answers what leaving would: 0. The run
    // then means "no load fails and no test leaves", whatever the order.
    let rejecting = {
        let e = cfg.block(exit);
        e.stmts.is_empty() && e.term == Terminator::Ret(RetVal::K(0))
    };
    // Every path from the run's exit or continuation to a non-zero return runs a load that
    // fails on packets shorter than this: an absolute load reading no further fails only
    // where the program returns 0 anyway, wherever it runs in the run.
    let anticipated = cover[exit.index()].min(cover[cont.index()]);
    let covered = |k: Key, (abs, ind): (u64, u64)| {
        rejecting
            || if k.0 { x_msh && end(k) <= ind } else { end(k) <= abs || end(k) <= anticipated }
    };
    // The first test from which on the tests may be reordered: every later load is covered,
    // and A holds a known value before it (for the first test: A on entry, with no statement
    // before the test that could fail).
    let Some(m) = (0..run.len()).find(|&m| {
        (m > 0 || (held0.is_some() && head_prefix == 0))
            && (m..run.len()).all(|j| keys[j].is_some_and(|k| covered(k, bounds[m])))
    }) else {
        return false;
    };
    let held = if m == 0 { held0 } else { keys[m - 1] };
    let tests: Vec<Test> = (m..run.len())
        .map(|j| {
            let (op, k, exit_on) = tests[j];
            Test { key: keys[j].expect("checked"), op, k, exit_on }
        })
        .collect();
    // New order: tests on the value A holds, then one group per value.
    let mut groups: Vec<(Key, Vec<Test>)> = Vec::new();
    let mut first = Vec::new();
    for t in &tests {
        if Some(t.key) == held {
            first.push(*t);
        } else if let Some(g) = groups.iter_mut().find(|g| g.0 == t.key) {
            g.1.push(*t);
        } else {
            groups.push((t.key, vec![*t]));
        }
    }
    let stmts = |k: &Option<Key>| k.map_or(0, |k| load(k).len());
    let old: usize = loads[m..].iter().map(stmts).sum();
    let new: usize = groups.iter().map(|g| stmts(&Some(g.0))).sum();
    if new >= old {
        return false;
    }
    let mut seq: Vec<(Option<Key>, Test)> = first.into_iter().map(|t| (None, t)).collect();
    for (key, ts) in groups {
        for (i, t) in ts.into_iter().enumerate() {
            seq.push(((i == 0).then_some(key), t));
        }
    }
    for (j, (load, t)) in seq.into_iter().enumerate() {
        let b = run[m + j];
        let next = run.get(m + j + 1).copied().unwrap_or(cont);
        let (jt, jf) = if t.exit_on { (exit, next) } else { (next, exit) };
        let block = cfg.block_mut(b);
        block.stmts.truncate(if m + j == 0 { head_prefix } else { 0 });
        block.stmts.extend(load.map(self::load).unwrap_or_default());
        block.term = Terminator::Branch { op: t.op, operand: Operand::K(t.k), jt, jf };
    }
    true
}
