//! What the lowering decides before it writes an instruction: which blocks stand for an exit
//! or always fail, which are reached, which registers need a zero at entry, where each block's
//! packet loads are checked (direct access) or copied (`bpf_skb_load_bytes`).
//!
//! **Why it exists.** The kernel's verifier refuses unreachable instructions and reads of
//! registers or stack never written, and every packet access must be proven in bounds. These
//! facts come from the graph as a whole (reachability, must-defined registers, the packet
//! range every path into a block has already proven), so they are computed here, once per
//! body, and [`super::lower`] only follows them.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{BlockId, Cfg, RegSet, Size, Src, Stmt, Terminator, XSrc};

/// The outcome of an exit the lowering shares between every return of the same value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Outcome {
    /// Raw mode: the classic return value.
    Value(u32),
    /// The filter matched.
    Match,
    /// The filter did not match (or a load failed).
    Miss,
}

/// Where a jump to a block really goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The block's own code.
    Block(BlockId),
    /// A shared exit: the block only returns a constant, or always fails.
    Exit(Outcome),
}

/// How a body reads the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Direct packet access (`data`, `data_end`), one bounds check per group of loads; `xdp`
    /// says where `len` comes from (`data_end - data`, or `skb->len`).
    Direct {
        /// XDP (`len` = `data_end - data`) or TC (`len` = `skb->len`).
        xdp: bool,
    },
    /// `bpf_skb_load_bytes` into the stack, one call per cluster of loads (socket filters,
    /// which have no direct access, and TC packets whose bytes are not all linear).
    Copy,
}

/// The largest end offset (exclusive) a direct access may prove: the verifier's
/// `MAX_PACKET_OFF`. Linear packet data is shorter than that (an XDP frame is at most a page;
/// TC takes the direct path only when the whole skb is linear and at most this long), so a load
/// ending past it always fails, as in classic BPF.
pub(crate) const DIRECT_LIMIT: u64 = 0xffff;

/// The largest end offset `bpf_skb_load_bytes` reaches (its offset is refused above
/// `INT_MAX`): no packet is that long, so a load ending past it always fails.
pub(crate) const COPY_LIMIT: u64 = i32::MAX as u64;

impl Access {
    /// The end offset past which a load always fails.
    pub fn limit(self) -> u64 {
        match self {
            Access::Direct { .. } => DIRECT_LIMIT,
            Access::Copy => COPY_LIMIT,
        }
    }
}

/// A packet load of a statement: its base (absolute, or relative to X) and the bytes it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Load {
    /// `[x + k]` rather than `[k]`.
    pub indirect: bool,
    /// `k`.
    pub k: u32,
    /// Bytes read.
    pub size: u32,
}

impl Load {
    /// The packet load a statement makes, if any (a walk's loads are its own business).
    pub fn of(stmt: &Stmt) -> Option<Load> {
        match *stmt {
            Stmt::Ld(Src::Abs(s, k)) => Some(Load { indirect: false, k, size: s.bytes() }),
            Stmt::Ld(Src::Ind(s, k)) => Some(Load { indirect: true, k, size: s.bytes() }),
            Stmt::Ldx(XSrc::Msh(k)) => Some(Load { indirect: false, k, size: 1 }),
            _ => None,
        }
    }

    /// The end offset when X is 0 (the least it can be).
    pub fn end(self) -> u64 {
        u64::from(self.k) + u64::from(self.size)
    }
}

/// Whether the statement redefines X (which starts a new group of `[x + k]` loads).
pub(crate) fn defines_x(stmt: &Stmt) -> bool {
    stmt.defs().intersects(RegSet::X)
}

/// The lowering's view of a graph for one body: targets, reached blocks in layout order, and
/// the packet range each block's entry has already proven (direct access).
pub(crate) struct BodyPlan {
    /// Where a jump to each block goes (indexed by block).
    pub target: Vec<Target>,
    /// The blocks with code of their own, in layout order.
    pub order: Vec<BlockId>,
    /// Direct access: the absolute end already proven on every path into the block.
    pub proven_in: Vec<u64>,
    /// Direct access: the absolute end a block with absolute loads checks at its start (0:
    /// none): what its loads need, or more when every path on needs more (see `need` in
    /// [`BodyPlan::new`]).
    pub abs_end: Vec<u64>,
    /// Direct access: the X groups of each block whose check every path into the block has
    /// already made (for the same value of X, up to at least the group's end), so that
    /// `IND` = `data + x` is proven far enough.
    pub x_proven: Vec<BTreeSet<usize>>,
}

/// Which value X holds: the one a statement defined, or the one it had at a block's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XValue {
    Def(BlockId, usize),
    EntryOf(BlockId),
}

/// `IND` = `data + x` for X = the value, proven up to the end.
type XProof = Option<(XValue, u64)>;

/// What two paths into a block have both proven.
fn meet(a: XProof, b: XProof) -> XProof {
    match (a, b) {
        (Some((va, ea)), Some((vb, eb))) if va == vb => Some((va, ea.min(eb))),
        _ => None,
    }
}

/// The exit outcome of `ret #k`, and of a failed load (`k` = 0).
pub(crate) fn outcome(raw: bool, k: u32) -> Outcome {
    match (raw, k) {
        (true, k) => Outcome::Value(k),
        (false, 0) => Outcome::Miss,
        (false, _) => Outcome::Match,
    }
}

impl BodyPlan {
    /// Plans a body of `cfg` reading the packet by `access`.
    pub fn new(cfg: &Cfg, access: Access, raw: bool) -> BodyPlan {
        let n = cfg.len();
        let layout = cfg.layout_order();
        let limit = access.limit();
        // Successors first: a block's target may be its successor's.
        let mut target: Vec<Target> = (0..n as u32).map(|b| Target::Block(BlockId(b))).collect();
        for &b in layout.iter().rev() {
            let block = cfg.block(b);
            // Only failures can come before a failing load, so the block fails as a whole.
            let fails = block.stmts.iter().filter_map(Load::of).any(|l| l.end() > limit);
            target[b.index()] = if fails {
                Target::Exit(outcome(raw, 0))
            } else if !block.stmts.is_empty() {
                Target::Block(b)
            } else {
                match block.term {
                    Terminator::Ret(crate::ir::RetVal::K(k)) => Target::Exit(outcome(raw, k)),
                    Terminator::Jump(t) => target[t.index()],
                    _ => Target::Block(b),
                }
            };
        }
        // Blocks reached through the targets.
        let mut reached = vec![false; n];
        if let Target::Block(e) = target[cfg.entry.index()] {
            reached[e.index()] = true;
        }
        let succs = |b: BlockId, target: &[Target]| -> Vec<BlockId> {
            cfg.block(b)
                .term
                .succs()
                .filter_map(|s| match target[s.index()] {
                    Target::Block(t) => Some(t),
                    Target::Exit(_) => None,
                })
                .collect()
        };
        let order: Vec<BlockId> = layout
            .iter()
            .copied()
            .filter(|&b| {
                if !reached[b.index()] || target[b.index()] != Target::Block(b) {
                    return false;
                }
                for s in succs(b, &target) {
                    reached[s.index()] = true;
                }
                true
            })
            .collect();
        // What each block's absolute loads need, and what every path from it needs: a packet
        // shorter than `need[b]` gets 0 from the classic program whatever it holds, once it
        // reaches b (its own loads fail, or every way on returns 0 or fails). So a block that
        // checks its loads may check up to that at no cost in exactness, which spares checks
        // further on (`u64::MAX`: every way on returns 0).
        let loads_end = |b: usize, indirect: bool| {
            let stmts = &cfg.blocks[b].stmts;
            let ends = stmts.iter().filter_map(Load::of).filter(|l| indirect || !l.indirect);
            ends.map(Load::end).max().unwrap_or(0)
        };
        let mut need = vec![0u64; n];
        for &b in layout.iter().rev() {
            let on = |s: BlockId, need: &[u64]| match target[s.index()] {
                Target::Exit(o) if o == outcome(raw, 0) => u64::MAX,
                Target::Exit(_) => 0,
                Target::Block(t) => need[t.index()],
            };
            let next = match cfg.block(b).term {
                Terminator::Ret(crate::ir::RetVal::K(0)) => u64::MAX,
                Terminator::Ret(_) => 0,
                ref t => t.succs().map(|s| on(s, &need)).min().unwrap_or(0),
            };
            need[b.index()] = next.max(loads_end(b.index(), true));
        }
        let abs_end: Vec<u64> = (0..n)
            .map(|b| match loads_end(b, false) {
                0 => 0,
                own if need[b] == u64::MAX => own,
                own => own.max(need[b].min(DIRECT_LIMIT)),
            })
            .collect();
        let mut proven_in: Vec<Option<u64>> = vec![None; n];
        if let Some(&first) = order.first() {
            proven_in[first.index()] = Some(0);
        }
        for &b in &order {
            let p_in = proven_in[b.index()].unwrap_or(0);
            let p_out = p_in.max(abs_end[b.index()]);
            for s in succs(b, &target) {
                let p = &mut proven_in[s.index()];
                *p = Some(p.map_or(p_out, |q| q.min(p_out)));
            }
        }
        let proven_in = proven_in.into_iter().map(|p| p.unwrap_or(0)).collect();
        // The same for X groups: a group whose X is the one an earlier check proved far enough
        // on every path needs no check of its own.
        let mut x_in: Vec<Option<XProof>> = vec![None; n];
        let mut x_proven = vec![BTreeSet::new(); n];
        for &b in &order {
            let mut proof = x_in[b.index()].flatten();
            let mut x = proof.map_or(XValue::EntryOf(b), |(v, _)| v);
            let stmts = &cfg.block(b).stmts;
            let groups = x_groups(stmts);
            let mut group = 1;
            for (i, s) in stmts.iter().enumerate() {
                if let Some(&(end, _)) = groups.get(&group).filter(|(_, first)| *first == i) {
                    match proof {
                        Some((v, e)) if v == x && e >= end => {
                            x_proven[b.index()].insert(group);
                        }
                        _ => proof = Some((x, end)),
                    }
                }
                if defines_x(s) {
                    x = XValue::Def(b, i);
                    proof = None;
                    group += 1;
                }
            }
            for s in succs(b, &target) {
                let p = &mut x_in[s.index()];
                *p = Some(p.map_or(proof, |q| meet(q, proof)));
            }
        }
        BodyPlan { target, order, proven_in, abs_end, x_proven }
    }
}

/// The registers some path may read before writing: A, X and the scratch words, as the
/// lowering reads them (a walk reads A and X only; its scratch word is written before it is
/// read). Those are zeroed at entry, as classic BPF starts with them 0 (and the verifier
/// refuses reads of registers or stack never written).
pub(crate) fn read_before_written(cfg: &Cfg) -> RegSet {
    let order = cfg.layout_order();
    let n = cfg.len();
    // Must-defined at entry of each block: the intersection over its predecessors.
    let mut defined_in: Vec<Option<RegSet>> = vec![None; n];
    if let Some(&first) = order.first() {
        defined_in[first.index()] = Some(RegSet::EMPTY);
    }
    let mut need = RegSet::EMPTY;
    for &b in &order {
        let mut defined = defined_in[b.index()].unwrap_or(RegSet::EMPTY);
        let block = cfg.block(b);
        for s in &block.stmts {
            let uses = match s {
                Stmt::Walk(_) => RegSet::A.union(RegSet::X),
                _ => s.uses(),
            };
            need = need.union(uses.minus(defined));
            let defs = match s {
                Stmt::Walk(_) => RegSet::A.union(RegSet::X),
                _ => s.defs(),
            };
            defined = defined.union(defs);
        }
        need = need.union(block.term.uses().minus(defined));
        for s in block.term.succs() {
            let d = &mut defined_in[s.index()];
            *d = Some(d.map_or(defined, |e| RegSet(e.0 & defined.0)));
        }
    }
    need
}

/// The groups of a block's packet loads: absolute loads form group 0, and the `[x + k]` loads
/// between two definitions of X one group each (numbered 1, 2, … in order).
pub(crate) fn load_groups(stmts: &[Stmt]) -> BTreeMap<usize, (usize, Load)> {
    let mut out = BTreeMap::new();
    let mut epoch = 1;
    for (i, s) in stmts.iter().enumerate() {
        if let Some(l) = Load::of(s) {
            out.insert(i, (if l.indirect { epoch } else { 0 }, l));
        }
        if defines_x(s) {
            epoch += 1;
        }
    }
    out
}

/// Bytes of stack a copied cluster of loads may span (`bpf_skb_load_bytes` once for all).
pub(crate) const CLUSTER_SPAN: u64 = 64;

/// One `bpf_skb_load_bytes` call: the bytes `[lo, hi)` from the group's base, into the buffer
/// at `region`, before statement `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cluster {
    /// The group (0: absolute; else an X group).
    pub group: usize,
    /// The first byte copied (from the group's base).
    pub lo: u64,
    /// One past the last.
    pub hi: u64,
    /// The statement before which the copy is made (the cluster's first load).
    pub first: usize,
    /// Where in the copy buffer.
    pub region: u64,
}

/// The copy plan of a block: its clusters, and the cluster of each loading statement.
pub(crate) struct CopyPlan {
    /// The clusters.
    pub clusters: Vec<Cluster>,
    /// Statement index → cluster index.
    pub of_stmt: BTreeMap<usize, usize>,
}

/// Clusters a block's loads for the copy access: per group, loads sorted by offset join a
/// cluster while it spans at most [`CLUSTER_SPAN`] bytes. Each cluster gets a region of a
/// buffer of `buf` bytes (8-byte aligned, itself 8-byte aligned) starting 0–7 bytes in, the
/// shift that aligns most of its loads (the kernel's verifier refuses misaligned stack
/// accesses; the others are read byte by byte). When they do not fit, each load gets its own
/// copy right before it, at region 0 (aligned).
pub(crate) fn copy_plan(stmts: &[Stmt], buf: u64) -> CopyPlan {
    let groups = load_groups(stmts);
    let mut by_group: BTreeMap<usize, Vec<(usize, Load)>> = BTreeMap::new();
    for (&i, &(g, l)) in &groups {
        by_group.entry(g).or_default().push((i, l));
    }
    // Clusters with their loads.
    let mut clusters: Vec<(Cluster, Vec<Load>)> = Vec::new();
    let mut of_stmt = BTreeMap::new();
    for (g, mut loads) in by_group {
        loads.sort_by_key(|&(i, l)| (l.k, i));
        let first_of_group = clusters.len();
        for (i, l) in loads {
            let joins = clusters.len() > first_of_group
                && clusters.last().is_some_and(|(c, _)| l.end().max(c.hi) - c.lo <= CLUSTER_SPAN);
            if joins {
                if let Some((c, ls)) = clusters.last_mut() {
                    c.hi = c.hi.max(l.end());
                    c.first = c.first.min(i);
                    ls.push(l);
                }
            } else {
                let c = Cluster { group: g, lo: u64::from(l.k), hi: l.end(), first: i, region: 0 };
                clusters.push((c, vec![l]));
            }
            of_stmt.insert(i, clusters.len() - 1);
        }
    }
    let mut region: u64 = 0;
    for (c, loads) in &mut clusters {
        let aligned = |s: u64| {
            let ok = |l: &&Load| (s + u64::from(l.k) - c.lo).is_multiple_of(u64::from(l.size));
            loads.iter().filter(ok).count()
        };
        let shift = (0..8).max_by_key(|&s| (aligned(s), std::cmp::Reverse(s))).unwrap_or(0);
        c.region = region.next_multiple_of(8) + shift;
        region = c.region + (c.hi - c.lo);
    }
    if region > buf {
        // One copy per load, into region 0 just before it.
        let mut clusters = Vec::new();
        of_stmt.clear();
        for (&i, &(g, l)) in &groups {
            clusters.push(Cluster {
                group: g,
                lo: u64::from(l.k),
                hi: l.end(),
                first: i,
                region: 0,
            });
            of_stmt.insert(i, clusters.len() - 1);
        }
        return CopyPlan { clusters, of_stmt };
    }
    CopyPlan { clusters: clusters.into_iter().map(|(c, _)| c).collect(), of_stmt }
}

/// The end offset each X group needs (its `[x + k]` loads' largest `k + size`), and the
/// statement of its first load.
pub(crate) fn x_groups(stmts: &[Stmt]) -> BTreeMap<usize, (u64, usize)> {
    let mut out: BTreeMap<usize, (u64, usize)> = BTreeMap::new();
    for (i, (g, l)) in load_groups(stmts) {
        if g == 0 {
            continue;
        }
        let e = out.entry(g).or_insert((0, i));
        e.0 = e.0.max(l.end());
    }
    out
}

/// The size of a classic load in bytes, as an eBPF access size.
pub(crate) fn access_size(size: Size) -> sift_ebpf::Size {
    match size {
        Size::B => sift_ebpf::Size::B,
        Size::H => sift_ebpf::Size::H,
        Size::W => sift_ebpf::Size::W,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Slot;

    #[test]
    fn clusters_share_copies_and_fall_back_to_one_per_load() {
        let stmts = [
            Stmt::Ld(Src::Abs(Size::H, 12)),
            Stmt::Ld(Src::Abs(Size::B, 23)),
            Stmt::Ldx(XSrc::Msh(14)),
            Stmt::Ld(Src::Ind(Size::H, 16)),
            Stmt::St(Slot::new(0).unwrap()),
            Stmt::Ld(Src::Ind(Size::H, 14)),
            Stmt::Ld(Src::Abs(Size::W, 200)),
        ];
        let p = copy_plan(&stmts, 256);
        let c: Vec<_> =
            p.clusters.iter().map(|c| (c.group, c.lo, c.hi, c.first, c.region)).collect();
        // [12, 24) and [14, 15) absolute; [200, 204) apart; the X group [14, 18). Every region
        // starts 8-byte aligned: each cluster's loads are aligned at shift 0.
        assert_eq!(c, vec![(0, 12, 24, 0, 0), (0, 200, 204, 6, 16), (2, 14, 18, 3, 24)]);
        assert_eq!(p.of_stmt[&5], 2);
        let tight = copy_plan(&stmts, 16);
        assert_eq!(tight.clusters.len(), 6);
        assert!(tight.clusters.iter().all(|c| c.region == 0));
        // `[12:2]` and `[26:4]`: shifted by 2, both are aligned.
        let ip = [Stmt::Ld(Src::Abs(Size::H, 12)), Stmt::Ld(Src::Abs(Size::W, 26))];
        assert_eq!(copy_plan(&ip, 256).clusters[0].region, 2);
        let x = x_groups(&stmts);
        assert_eq!(x.into_iter().collect::<Vec<_>>(), vec![(2, (18, 3))]);
    }
}
