//! The optimizer: rewrites a [`Cfg`] into a smaller one that returns the same value on every
//! packet, short packets included.
//!
//! **Why it exists.** gencode's output is simple and repetitive (`tcp port 80` is 28
//! instructions unoptimized, 20 after libpcap's optimizer). libpcap's optimizer
//! (`optimize.c`) is the reference for what to remove, and also what not to copy: it iterates
//! without a guaranteed fixed point (a 100-pass escape hatch), keeps O(n²) bit vectors, walks
//! the graph recursively, and drops or reorders loads that could fail, so that its programs
//! accept truncated packets the unoptimized ones reject (issue 430).
//!
//! **Passes**, one module each, run in this order every round:
//!
//! | module | does | libpcap |
//! |---|---|---|
//! | [`value`] | value numbers and the simulation of one statement (shared) | `vstore`, `F` |
//! | [`fold`] | constant propagation and folding, redundant loads and stores, canonical forms | `opt_stmt`, `opt_peep`, `fold_op` |
//! | [`known`] | scoped facts along the dominator tree (shared) | `dom`, `edom`, `closure` |
//! | [`thread`] | branches decided by dominating branches; edges moved past decided blocks | `opt_j` |
//! | [`afacts`] | branches decided by comparisons of A on every path into them (across joins) | — |
//! | [`dce`] | dead statements that cannot fail, or whose failure a later load anticipates | `opt_deadstores` |
//! | [`pullup`] | runs of `or`/`and` tests regrouped by value where no load's failure can change the answer | `or_pullup`, `and_pullup` |
//! | [`simplify`] | reject-only regions, one-target branches, empty jumps, straight lines | `opt_blk`'s block clearing, `opt_root` |
//! | [`merge`] | identical blocks | `intern_blocks` |
//!
//! Once the loop ends, [`returns`] lets blocks ending in `ret` share the return block branches
//! reach (layout only; [`simplify`] would undo it inside the loop). [`bounds`] (packet length
//! known and required at each point) serves [`dce`] and [`pullup`].
//!
//! Linearization is [`crate::emit`] (`icode_to_fcode`): libpcap's block order, with `ja`
//! trampolines for branches beyond 255 instructions.
//!
//! **Fixed point by construction.** Every pass reports a change only when it lowers, in
//! lexicographic order, the measure (paths from entry to a return, total length in blocks of
//! those paths, reachable blocks, edges, statements, statements not yet in canonical form,
//! edges into empty jump blocks) without raising an earlier component (each module's
//! documentation says which component its rewrites lower). The measure is a tuple of
//! naturals, so the loop in [`optimize`] ends, with no pass limit. Each round is near-linear:
//! value numbering and facts use hash tables, the dominator tree comes from
//! [`crate::analysis::Facts`] (O(n log n)), liveness is an 18-bit set per block, the length
//! bounds one number per block (one sweep each way), and nothing recurses over the graph.
//!
//! [`returns`] runs once after the loop and changes no measure the loop sees: the loop starts
//! by undoing it (`returns::unshare`), so optimizing an optimized graph gives it back.
//!
//! **Semantics kept.** The optimized program returns, on every packet, what the original
//! returns: the same value for every accepted or rejected packet, including packets too short
//! for some load (those end the program with 0, so such a load is removed or moved only where
//! it provably cannot fail, or where every continuation rejects anyway or fails on the same
//! packets: [`bounds`]).

pub mod afacts;
pub mod bounds;
pub mod dce;
pub mod fold;
pub mod known;
pub mod merge;
pub mod pullup;
pub mod returns;
pub mod simplify;
pub mod thread;
pub mod value;

/// A fast hasher for the small integer keys of the optimizer's tables (value numbers, block
/// contents): multiply-rotate, as rustc's FxHash. Not DoS-resistant, which a compiler's
/// tables of its own value numbers need not be.
#[derive(Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;
/// A `HashSet` with [`FastHasher`].
pub(crate) type FastSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;

use crate::ir::*;

/// What one [`optimize`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptStats {
    /// Rounds of all passes (the last one changed nothing).
    pub rounds: usize,
    /// Reachable blocks before and after.
    pub blocks: (usize, usize),
    /// Statements in reachable blocks before and after.
    pub stmts: (usize, usize),
}

fn size(cfg: &Cfg) -> (usize, usize) {
    let order = cfg.layout_order();
    (order.len(), order.iter().map(|&b| cfg.block(b).stmts.len()).sum())
}

/// Optimizes `cfg` in place (see the module documentation). A graph that breaks the IR
/// invariants ([`Cfg::check`]) is left as it is.
pub fn optimize(cfg: &mut Cfg) -> OptStats {
    let mut stats = OptStats::default();
    if cfg.check().is_err() {
        return stats;
    }
    returns::unshare(cfg);
    cfg.compact();
    let (b0, s0) = size(cfg);
    loop {
        stats.rounds += 1;
        let mut values = value::Values::new();
        let (states, mut changed) = fold::run(cfg, &mut values);
        let (safe, threaded) = thread::run(cfg, &mut values, &states);
        changed |= threaded;
        changed |= afacts::run(cfg);
        changed |= dce::run(cfg, &safe);
        changed |= simplify::run(cfg);
        changed |= pullup::run(cfg);
        changed |= merge::run(cfg);
        cfg.compact();
        debug_assert!(cfg.check().is_ok(), "{:?}", cfg.check());
        if std::env::var_os("SIFT_OPT_TRACE").is_some() {
            let (b, s) = size(cfg);
            eprintln!("round {}: {b} blocks, {s} statements", stats.rounds);
        }
        if !changed {
            break;
        }
    }
    // Layout only: after the fixed point, since `simplify` would undo it.
    returns::run(cfg);
    let (b1, s1) = size(cfg);
    stats.blocks = (b0, b1);
    stats.stmts = (s0, s1);
    stats
}

/// Whether the graph is a lone `ret #0` (what libpcap calls "rejects all packets").
pub fn rejects_all(cfg: &Cfg) -> bool {
    let b = cfg.block(cfg.entry);
    b.stmts.is_empty() && b.term == Terminator::Ret(RetVal::K(0))
}
