//! How long the captured packet must be: a lower bound known on every path to a point
//! (forward), and a length every continuation to an accepting return demands (backward).
//!
//! **Why it exists.** A load past the end of the captured packet ends the program with 0, so
//! a load whose value nobody reads still decides the verdict on short packets and may be
//! deleted only where that cannot show (libpcap deletes it anyway: its issue 430). Two facts
//! make such a load invisible:
//!
//! * **it cannot fail**: on every path to it, a load reading at least as far already ran
//!   without failing (the forward bound, met over *all* predecessors, where the dominator
//!   facts of [`super::known`] see only dominating loads);
//! * **its failure is anticipated**: on every path from it to a return of anything but
//!   `#0`, a load that fails whenever it fails runs later (the backward bound, `Cover`).
//!   Then on a packet where it fails, the program without it still ends with 0.
//!
//! Only loads whose failure is exactly "the captured length is below `end`" count: absolute
//! loads and `ldxb 4*([k]&0xf)` below the special offsets, and `[x + k]` loads while X holds
//! an IPv4 header length (0 to 60, set by `ldxb` on every path, so `X + k + size` cannot wrap
//! in any engine; for another X, Linux wraps `X + k` into its negative, ancillary ranges,
//! where a load can succeed on a short packet). `ld #pktlen` says nothing: it is the wire
//! length, not the captured one.
//!
//! **Invariant kept.** The forward bound at a point holds on every run that reaches it
//! without having failed; the backward bound at a point is, over every path from it to a
//! non-zero return, at most the furthest end of a counted load on that path. Both are
//! computed on the graph as it is when asked; a pass that deletes statements must only lean
//! on the backward bound of statements it keeps (see [`super::dce`]).

use super::value::SPECIAL_OFFSETS;
use crate::ir::*;

/// A bound meaning "no constraint": every path from here returns `#0`.
pub(crate) const ANY: u64 = u64::MAX;

/// The captured length a statement needs: it fails on every packet shorter than this, and
/// once it ran, the packet is at least this long. `x_msh` says whether X holds an IPv4
/// header length where the statement runs. (An `[x + k]` load also fails on some longer
/// packets: see [`exact_end`].)
fn load_end(s: &Stmt, x_msh: bool) -> Option<u64> {
    let (k, size) = match *s {
        Stmt::Ld(Src::Abs(size, k)) => (k, size.bytes()),
        Stmt::Ldx(XSrc::Msh(k)) => (k, 1),
        Stmt::Ld(Src::Ind(size, k)) if x_msh => (k, size.bytes()),
        _ => return None,
    };
    let end = u64::from(k) + u64::from(size);
    (u64::from(k) < SPECIAL_OFFSETS && end <= SPECIAL_OFFSETS).then_some(end)
}

/// The captured length below which a statement fails, when it fails on no other packet
/// (absolute loads and `ldxb`, not `[x + k]`): such a statement cannot fail where the packet
/// is known to be that long, and fails only where a load with a larger [`load_end`] fails.
pub(crate) fn exact_end(s: &Stmt) -> Option<u64> {
    match s {
        Stmt::Ld(Src::Abs(..)) | Stmt::Ldx(XSrc::Msh(_)) => load_end(s, false),
        _ => None,
    }
}

/// Whether X holds an IPv4 header length after `s`, given whether it did before.
fn x_msh_after(s: &Stmt, before: bool) -> bool {
    if s.defs().intersects(RegSet::X) { matches!(s, Stmt::Ldx(XSrc::Msh(_))) } else { before }
}

/// Walks `stmts` forward from the facts at their start (the packet is at least `len` bytes
/// long; `x` says whether X holds an IPv4 header length), calling `each` with every
/// statement's [`load_end`] and the length known before it; returns the facts after the last.
pub(crate) fn walk(
    stmts: &[Stmt],
    mut len: u64,
    mut x: bool,
    mut each: impl FnMut(Option<u64>, u64),
) -> (u64, bool) {
    for s in stmts {
        let e = load_end(s, x);
        each(e, len);
        if let Some(e) = e {
            len = len.max(e);
        }
        x = x_msh_after(s, x);
    }
    (len, x)
}

/// Forward facts at every block's entry (indexed by block; unreachable blocks hold 0/false).
pub(crate) struct Forward {
    /// The captured length is at least this on every run reaching the block.
    pub len_at_least: Vec<u64>,
    /// X holds an IPv4 header length (`ldxb 4*([k]&0xf)`) on every path to the block.
    pub x_msh: Vec<bool>,
}

impl Forward {
    /// Computes the facts in one sweep in topological order (`order` from
    /// [`Cfg::layout_order`]).
    pub(crate) fn new(cfg: &Cfg, order: &[BlockId]) -> Forward {
        let mut lb: Vec<Option<u64>> = vec![None; cfg.len()];
        let mut xm: Vec<Option<bool>> = vec![None; cfg.len()];
        lb[cfg.entry.index()] = Some(0);
        xm[cfg.entry.index()] = Some(false);
        let mut out = Forward { len_at_least: vec![0; cfg.len()], x_msh: vec![false; cfg.len()] };
        for &b in order {
            let (len, x) = (lb[b.index()].unwrap_or(0), xm[b.index()].unwrap_or(false));
            out.len_at_least[b.index()] = len;
            out.x_msh[b.index()] = x;
            let (len, x) = walk(&cfg.block(b).stmts, len, x, |_, _| {});
            for t in cfg.block(b).term.succs() {
                let l = &mut lb[t.index()];
                *l = Some(l.map_or(len, |o| o.min(len)));
                let m = &mut xm[t.index()];
                *m = Some(m.unwrap_or(true) && x);
            }
        }
        out
    }
}

/// The backward bound at the end of a block, from its successors' bounds at their entries.
pub(crate) fn cover_out(term: &Terminator, cover_in: &[u64]) -> u64 {
    match *term {
        Terminator::Ret(RetVal::K(0)) => ANY,
        Terminator::Ret(_) => 0,
        Terminator::Jump(t) => cover_in[t.index()],
        Terminator::Branch { jt, jf, .. } => cover_in[jt.index()].min(cover_in[jf.index()]),
    }
}

/// Backward bounds at every block's entry, for a graph no statement of which is about to be
/// deleted (passes that move code rather than delete it).
pub(crate) fn cover_in(cfg: &Cfg, order: &[BlockId], fwd: &Forward) -> Vec<u64> {
    let mut cover = vec![ANY; cfg.len()];
    for &b in order.iter().rev() {
        let block = cfg.block(b);
        // The furthest end of a load in the block, or the successors' bound if further.
        let mut c = cover_out(&block.term, &cover);
        let (len, x) = (fwd.len_at_least[b.index()], fwd.x_msh[b.index()]);
        walk(&block.stmts, len, x, |e, _| c = c.max(e.unwrap_or(0)));
        cover[b.index()] = c;
    }
    cover
}
