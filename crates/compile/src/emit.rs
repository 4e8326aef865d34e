//! Linearization: a [`Cfg`] becomes a classic BPF [`Program`].
//!
//! **Why it exists.** Classic BPF has no blocks, only forward jumps with 8-bit conditional
//! offsets. This module picks the layout, resolves offsets and repairs branches that cannot
//! reach, as libpcap's `icode_to_fcode`/`convert_code_r` does.
//!
//! **Layout.** Blocks go in [`Cfg::layout_order`]: the reverse post-order of a depth-first walk
//! that takes the false edge first, which is the order `convert_code_r` produces by filling the
//! program from its end. On a graph built as gencode builds it (see [`crate::build`]), the
//! listing is the one `pcap_compile` gives without optimization.
//!
//! **Jumps.** A conditional branch whose target lies 256 or more instructions ahead gets a
//! trampoline: its offset becomes 0 or 1 and an unconditional `ja` follows it (true edge's
//! `ja` first), exactly libpcap's `longjt`/`longjf` scheme. Where libpcap restarts the whole
//! conversion for each branch found too short, this module marks every short branch of a pass
//! at once and recomputes offsets until none is found (each pass is linear; trampolines only
//! lengthen distances, so marks only grow and the loop ends). An unconditional
//! [`Terminator::Jump`] becomes `ja`, or nothing when its target is laid out next.
//!
//! **Walks.** A `protochain` walk ([`Stmt::Walk`]) becomes its run of instructions in the
//! [`WalkForm`] asked for ([`emit_as`]; [`emit`] gives libpcap's loop): the run is
//! self-contained, so the block holding it is laid out as any other, the walk counting
//! [`crate::walk::Walk::len`] instructions.
//!
//! **Invariant kept.** The output passes `sift-verify` in libpcap mode (and in Linux mode when
//! it is at most 4096 instructions and loads scratch words only after storing them): every
//! jump goes forward and lands inside the program, and the last instruction is a `ret`. The
//! one exception is a walk in [`WalkForm::Loop`], whose `ja`s back make the program pass only
//! `Mode::LibpcapLoops`. No recursion: the work is near-linear in the size of the graph.

use crate::ir::*;
pub use crate::walk::WalkForm;
use sift_insn::code::*;
use sift_insn::{Insn, Program};

/// Offset passes before emission gives up on minimal trampolines (see [`emit_with_stats`]).
const MAX_PASSES: usize = 32;

/// Numbers about one emission, for benchmarks and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmitStats {
    /// Blocks laid out (the reachable ones).
    pub blocks: usize,
    /// Offset-resolution passes (1 when no branch needed a trampoline).
    pub passes: usize,
    /// `ja` trampolines added for far conditional branches.
    pub trampolines: usize,
    /// Unconditional jumps dropped because their target comes next.
    pub fallthroughs: usize,
}

/// Emits `cfg` as a program, its walks as libpcap's loop ([`WalkForm::Loop`]). Fails only
/// when `cfg` breaks the IR invariants.
pub fn emit(cfg: &Cfg) -> Result<Program, CfgError> {
    emit_as(cfg, WalkForm::Loop)
}

/// [`emit`] with the walks in `form`.
pub fn emit_as(cfg: &Cfg, form: WalkForm) -> Result<Program, CfgError> {
    emit_bounded(cfg, form, MAX_PASSES).map(|(p, _)| p)
}

/// [`emit`], also returning [`EmitStats`].
///
/// Offsets are resolved in passes; each marks every branch found too short. In practice two
/// or three passes suffice; should a cascade last 32 passes, every branch gets trampolines
/// and the next pass ends it, which bounds the work at O(33 × size).
pub fn emit_with_stats(cfg: &Cfg) -> Result<(Program, EmitStats), CfgError> {
    emit_bounded(cfg, WalkForm::Loop, MAX_PASSES)
}

/// How many instructions `stmts` take with their walks in `form`.
fn stmts_len(stmts: &[Stmt], form: WalkForm) -> usize {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::Walk(w) => w.len(form),
            _ => 1,
        })
        .sum()
}

fn emit_bounded(
    cfg: &Cfg,
    form: WalkForm,
    max_passes: usize,
) -> Result<(Program, EmitStats), CfgError> {
    cfg.check()?;
    let order = cfg.layout_order();
    let n = order.len();
    let mut pos = vec![usize::MAX; cfg.len()];
    for (i, b) in order.iter().enumerate() {
        pos[b.index()] = i;
    }
    let mut stats = EmitStats { blocks: n, ..EmitStats::default() };
    // Per laid-out block: whether the true/false edge needs a trampoline.
    let mut long_jt = vec![false; n];
    let mut long_jf = vec![false; n];
    // Start offset of each laid-out block, plus the total length at index n.
    let mut start = vec![0usize; n + 1];
    loop {
        stats.passes += 1;
        for (i, &b) in order.iter().enumerate() {
            let block = cfg.block(b);
            let term = match block.term {
                Terminator::Branch { .. } => 1 + usize::from(long_jt[i]) + usize::from(long_jf[i]),
                Terminator::Jump(t) if pos[t.index()] == i + 1 => 0,
                Terminator::Jump(_) | Terminator::Ret(_) => 1,
            };
            start[i + 1] = start[i] + stmts_len(&block.stmts, form) + term;
        }
        if stats.passes == max_passes {
            // A pathological cascade: give every edge a trampoline; the next pass ends.
            for (i, &b) in order.iter().enumerate() {
                if let Terminator::Branch { .. } = cfg.block(b).term {
                    long_jt[i] = true;
                    long_jf[i] = true;
                }
            }
            continue;
        }
        let mut changed = false;
        for (i, &b) in order.iter().enumerate() {
            let block = cfg.block(b);
            if let Terminator::Branch { jt, jf, .. } = block.term {
                let pc = start[i] + stmts_len(&block.stmts, form);
                if !long_jt[i] && start[pos[jt.index()]] - pc - 1 > 255 {
                    long_jt[i] = true;
                    changed = true;
                }
                if !long_jf[i] && start[pos[jf.index()]] - pc - 1 > 255 {
                    long_jf[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::with_capacity(start[n]);
    for (i, &b) in order.iter().enumerate() {
        let block = cfg.block(b);
        debug_assert_eq!(out.len(), start[i]);
        for s in &block.stmts {
            match s {
                Stmt::Walk(w) => out.extend(w.insns(form)),
                s => out.push(s.to_insn().expect("every statement but a walk is one instruction")),
            }
        }
        let pc = out.len();
        match block.term {
            Terminator::Branch { op, operand, jt, jf } => {
                let (src, k) = match operand {
                    Operand::K(k) => (BPF_K, k),
                    Operand::X => (BPF_X, 0),
                };
                let mut insn = Insn::jump(BPF_JMP | op.code() | src, k, 0, 0);
                let mut extra = Vec::new();
                for (target, long, field) in [(jt, long_jt[i], 0), (jf, long_jf[i], 1)] {
                    let off = start[pos[target.index()]] - pc - 1;
                    let short = if long {
                        let here = extra.len() as u8;
                        extra.push(off);
                        here
                    } else {
                        u8::try_from(off).expect("short branches fit in 8 bits")
                    };
                    if field == 0 {
                        insn.jt = short;
                    } else {
                        insn.jf = short;
                    }
                }
                out.push(insn);
                for (j, off) in extra.iter().enumerate() {
                    // The `ja` sits j + 1 after the branch; it lands where the branch meant to.
                    let k = u32::try_from(off - (j + 1)).expect("programs under 2^32 insns");
                    out.push(Insn::stmt(BPF_JMP | BPF_JA, k));
                    stats.trampolines += 1;
                }
            }
            Terminator::Jump(t) => {
                if pos[t.index()] == i + 1 {
                    stats.fallthroughs += 1;
                } else {
                    let off = start[pos[t.index()]] - pc - 1;
                    let k = u32::try_from(off).expect("programs under 2^32 insns");
                    out.push(Insn::stmt(BPF_JMP | BPF_JA, k));
                }
            }
            Terminator::Ret(RetVal::K(k)) => out.push(Insn::stmt(BPF_RET | BPF_K, k)),
            Terminator::Ret(RetVal::A) => out.push(Insn::stmt(BPF_RET | BPF_A, 0)),
        }
    }
    debug_assert_eq!(out.len(), start[n]);
    Ok((Program(out), stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cascade fallback: with the pass budget spent at once, every branch gets
    /// trampolines, and the program still runs the same.
    #[test]
    fn pass_budget_fallback_gives_every_branch_trampolines() {
        let mut b = crate::build::Builder::new();
        let terms: Vec<_> = (0..300)
            .map(|i| b.cmp(crate::build::Load::Abs(Size::W, 0), crate::build::Cmp::Eq, i, !0))
            .collect();
        let p = b.or_all(terms).unwrap();
        let cfg = b.finish(p, 1);
        let (normal, _) = emit_with_stats(&cfg).unwrap();
        let (all_long, stats) = emit_bounded(&cfg, WalkForm::Loop, 1).unwrap();
        assert_eq!((stats.passes, stats.trampolines), (2, 600));
        assert_eq!(
            all_long.len(),
            normal.len() + 600 - normal.iter().filter(|i| i.code == BPF_JMP | BPF_JA).count()
        );
        for prog in [&normal, &all_long] {
            let v = sift_verify::validate(prog, sift_verify::Mode::Linux).unwrap();
            for (k, want) in [(0u32, 1), (150, 1), (299, 1), (300, 0)] {
                assert_eq!(sift_vm::run(&v, &k.to_be_bytes(), 4), want);
            }
        }
    }
}
