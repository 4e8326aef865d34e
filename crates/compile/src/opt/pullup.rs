//! `or`/`and` pull-up: regrouping runs of tests so that each value is loaded once.
//!
//! **Why it exists.** `host a or host b or host c` tests the source address against `a`, the
//! destination against `a`, the source against `b`…, reloading A before every test. libpcap's
//! `or_pullup`/`and_pullup` (the BPF+ paper's predicate pull-up) moves the tests of one value
//! together, but it also moves them before loads that could fail, so its programs accept
//! truncated packets that the unoptimized ones reject (libpcap issue 430).
//!
//! Here a *run* is a chain of branch blocks that all leave to the same target on the same
//! outcome (an `or` run: all true edges to `T`, each false edge to the next test; an `and` run:
//! all false edges to `F`), each with at most one packet load (absolute, or relative to X when X
//! holds an IPv4 header length, as in `port` tests) and an optional mask (`net` tests), every block after the first
//! reached only from the previous one. Such a run is a disjunction (conjunction) of tests, so
//! its tests may run in any order **once no load in it can fail**, or when the run leaves to
//! `ret #0` (then a failing load and leaving the run both answer 0, so the run means "every
//! load succeeds and no test leaves", in any order). The pass finds the first point of the run
//! after which every load reads no further than loads earlier in the run already did (the
//! second test, for a run that leaves to `ret #0`), and regroups the tests after that point: first those on the value A already
//! holds, then one load per value with its tests. It applies only when it saves loads.
//!
//! **Invariant kept.** The regrouped suffix computes the same disjunction (conjunction) of
//! pure tests and leaves to the same two targets; no load that could fail moves; A, the only
//! register the run writes, is overwritten before use (or not read) at both targets. Each
//! rewrite lowers the statement count and keeps paths, blocks and edges: the driver's measure
//! strictly decreases.

use crate::ir::*;

/// A value a run loads: `(relative to X, size, offset, mask)` (`u32::MAX`: no `and`).
type Key = (bool, Size, u32, u32);

#[derive(Clone, Copy)]
struct Test {
    key: Key,
    op: JmpOp,
    k: u32,
}

/// The value a block tests, if the block is a simple test: no statement, or a packet load
/// (absolute, or relative to X) below the special offsets with an optional `and #mask`; then a
/// branch on a constant.
fn simple(block: &Block) -> Option<(Option<Key>, JmpOp, u32)> {
    let Terminator::Branch { op, operand: Operand::K(k), .. } = block.term else { return None };
    let fits = |size: Size, off: u32| {
        u64::from(off) + u64::from(size.bytes()) < super::value::SPECIAL_OFFSETS
    };
    let (src, mask) = match *block.stmts.as_slice() {
        [] => return Some((None, op, k)),
        [Stmt::Ld(src)] => (src, u32::MAX),
        [Stmt::Ld(src), Stmt::Alu(AluOp::And, Operand::K(m))] if m != u32::MAX => (src, m),
        _ => return None,
    };
    match src {
        Src::Abs(size, off) if fits(size, off) => Some((Some((false, size, off, mask)), op, k)),
        Src::Ind(size, off) if fits(size, off) => Some((Some((true, size, off, mask)), op, k)),
        _ => None,
    }
}

fn load(key: Key) -> Vec<Stmt> {
    let (ind, size, off, mask) = key;
    let mut v = vec![Stmt::Ld(if ind { Src::Ind(size, off) } else { Src::Abs(size, off) })];
    if mask != u32::MAX {
        v.push(Stmt::Alu(AluOp::And, Operand::K(mask)));
    }
    v
}

/// Per block: whether X holds an IPv4 header length (`ldxb 4*([k]&0xf)`, 0 to 60) on entry,
/// on every path. Loads relative to such an X fail exactly when `X + offset + size` exceeds the
/// packet in every engine (no wrap-around), so their bounds compare like absolute ones.
fn x_is_header_length(cfg: &Cfg, order: &[BlockId]) -> Vec<bool> {
    let mut x_in: Vec<Option<bool>> = vec![None; cfg.len()];
    x_in[cfg.entry.index()] = Some(false);
    let mut out = vec![false; cfg.len()];
    for &b in order {
        let mut x = x_in[b.index()].unwrap_or(false);
        for s in &cfg.block(b).stmts {
            if s.defs().intersects(RegSet::X) {
                x = matches!(s, Stmt::Ldx(XSrc::Msh(_)));
            }
        }
        for t in cfg.block(b).term.succs() {
            let slot = &mut x_in[t.index()];
            *slot = Some(slot.unwrap_or(true) && x);
        }
        out[b.index()] = x_in[b.index()].unwrap_or(false);
    }
    out
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

/// Runs the pass.
pub(crate) fn run(cfg: &mut Cfg) -> bool {
    let order = cfg.layout_order();
    let mut npreds = vec![0u32; cfg.len()];
    for &b in &order {
        for s in cfg.block(b).term.succs() {
            npreds[s.index()] += 1;
        }
    }
    let x_msh = x_is_header_length(cfg, &order);
    let mut in_run = vec![false; cfg.len()];
    let mut changed = false;
    for exit_on in [true, false] {
        for &head in &order {
            if in_run[head.index()] || simple(cfg.block(head)).is_none() {
                continue;
            }
            // Collect the run.
            let exit = {
                let (jt, jf) = edges(cfg.block(head));
                if exit_on { jt } else { jf }
            };
            let mut run = vec![head];
            loop {
                let (jt, jf) = edges(cfg.block(*run.last().expect("non-empty")));
                let next = if exit_on { jf } else { jt };
                let nb = cfg.block(next);
                if npreds[next.index()] != 1 || in_run[next.index()] || simple(nb).is_none() {
                    break;
                }
                let (njt, njf) = edges(nb);
                if (if exit_on { njt } else { njf }) != exit || next == exit {
                    break;
                }
                run.push(next);
            }
            for b in &run {
                in_run[b.index()] = true;
            }
            if run.len() < 3 {
                continue;
            }
            changed |= regroup(cfg, &run, exit_on, exit, x_msh[head.index()]);
        }
    }
    changed
}

fn regroup(cfg: &mut Cfg, run: &[BlockId], exit_on: bool, exit: BlockId, x_msh: bool) -> bool {
    let (last_jt, last_jf) = edges(cfg.block(*run.last().expect("non-empty")));
    let cont = if exit_on { last_jf } else { last_jt };
    if !a_dead(cfg.block(exit)) || !a_dead(cfg.block(cont)) {
        return false;
    }
    // Per test: the value compared (None: A from before the run), the bounds before it.
    let mut keys = Vec::with_capacity(run.len());
    let mut bounds = Vec::with_capacity(run.len());
    let mut loads = Vec::with_capacity(run.len());
    let (mut key, mut abs, mut ind) = (None, 0u64, 0u64);
    let end = |(_, size, off, _): Key| u64::from(off) + u64::from(size.bytes());
    for &b in run {
        let (load, _, _) = simple(cfg.block(b)).expect("runs hold simple tests");
        bounds.push((abs, ind));
        if let Some(k) = load {
            key = Some(k);
            if k.0 {
                ind = ind.max(end(k));
            } else {
                abs = abs.max(end(k));
            }
        }
        loads.push(load);
        keys.push(key);
    }
    // When the run leaves to `ret #0`, a failing load answers what leaving would: 0. The run
    // then means "no load fails and no test leaves", whatever the order.
    let rejecting = {
        let e = cfg.block(exit);
        e.stmts.is_empty() && e.term == Terminator::Ret(RetVal::K(0))
    };
    let covered = |k: Key, (abs, ind): (u64, u64)| {
        rejecting || if k.0 { x_msh && end(k) <= ind } else { end(k) <= abs }
    };
    let Some(m) = (1..run.len())
        .find(|&m| (m..run.len()).all(|j| keys[j].is_some_and(|k| covered(k, bounds[m]))))
    else {
        return false;
    };
    let held = keys[m - 1];
    let tests: Vec<Test> = (m..run.len())
        .map(|j| {
            let (_, op, k) = simple(cfg.block(run[j])).expect("simple");
            Test { key: keys[j].expect("checked"), op, k }
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
        let (jt, jf) = if exit_on { (exit, next) } else { (next, exit) };
        let block = cfg.block_mut(b);
        block.stmts = load.map(self::load).unwrap_or_default();
        block.term = Terminator::Branch { op: t.op, operand: Operand::K(t.k), jt, jf };
    }
    true
}
