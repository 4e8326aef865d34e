//! Anchors: for one filter, a few `field == value` tests that every accepted packet passes.
//!
//! **Why it exists.** Running N filters on every packet costs N runs. But a filter such as
//! `host 10.0.0.1` accepts only packets on which `ld [26] == 0x0a000001` or `ld [30] ==
//! 0x0a000001` (or the ARP fields) — a *cut* of equality edges through its graph: every path
//! from the entry to an accepting return takes one of them. Index those (field, value) pairs
//! over all filters, and one lookup per field finds the few filters worth running on a packet.
//!
//! [`prepare`] propagates what each register holds ([`Sym`]) and which conditions hold on every
//! path into each block (the guards), and lists the branches that compare a field with a
//! constant. [`choose`] then finds the cheapest cut of such edges with a maximum flow (each
//! edge weighs the packets it is expected to let through; edges that are not equality tests
//! cannot be cut). A filter without such a cut (`tcp`, `len > 100`, `not host x`) runs on every
//! packet.
//!
//! Soundness, which the differential tests hold to account: if the filter accepts a packet,
//! its run took an accepting path, which crosses some cut edge `b → jt` of a branch `A == v`;
//! at `b`, A held the field's value on every path ([`Sym::Field`]), every load on the path was
//! in bounds, and every guard of `b` held. So evaluating the field and the guards on the packet
//! alone gives the same answers, and the lookup finds the filter.

use super::field::{Base, Cond, Field, Regs, Sym};
use crate::analysis::Facts;
use crate::ir::{Cfg, JmpOp, Operand, RetVal, Stmt, Terminator, XSrc};

/// The most guard conditions kept per block.
const MAX_GUARDS: usize = 8;

/// A filter's graph, analysed.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Equality branches: (block, the field compared, the value) for edges `block → jt`.
    pub edges: Vec<EqEdge>,
    /// Whether any accepting return is reachable.
    pub accepts_some: bool,
    /// Blocks in topological order, with their successors and whether they accept.
    nodes: Vec<Node>,
}

/// An edge that holds only when `field == value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EqEdge {
    /// Index into the topological order of the branching block.
    from: usize,
    /// The field.
    pub field: Field,
    /// The value.
    pub value: u32,
    /// Conditions that hold on every path into the branching block.
    pub guard: Vec<Cond>,
    /// Whether the edge decides the filter (see [`Anchor::exact`]).
    pub exact: bool,
}

#[derive(Clone, Debug)]
struct Node {
    /// Successors (indices into the order) and the equality edge index on each, if any.
    succs: Vec<(usize, Option<usize>)>,
    accepts: bool,
}

/// An anchor: the filter can accept a packet only if, for one of its anchors, every guard
/// holds and the field has the value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Anchor {
    /// The field.
    pub field: Field,
    /// The value.
    pub value: u32,
    /// Conditions that hold whenever the edge is taken.
    pub guard: Vec<Cond>,
    /// Whether the guard and the test are also *enough*: the edge is reached by one path whose
    /// every branch is a guard condition and whose every packet load is a guard's or the
    /// test's field, and it leads straight to an accepting `ret #k`. Then a hit decides the
    /// filter without running it.
    pub exact: bool,
}

impl std::fmt::Display for Anchor {
    /// `FIELD == VALUE`, then ` if GUARD and GUARD…`, and `(exact)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} == {:#x}", self.field, self.value)?;
        for (i, g) in self.guard.iter().enumerate() {
            write!(f, "{}{g}", if i == 0 { " if " } else { " and " })?;
        }
        if self.exact {
            write!(f, " (exact)")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Anchoring {
    /// One anchor a line, or `always` / `never`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Anchoring::Always => writeln!(f, "always"),
            Anchoring::Never => writeln!(f, "never"),
            Anchoring::Anchors(a) => a.iter().try_for_each(|a| writeln!(f, "{a}")),
        }
    }
}

/// How a filter is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Anchoring {
    /// Only through these anchors.
    Anchors(Vec<Anchor>),
    /// On every packet (no cut of equality tests).
    Always,
    /// Never: no accepting return can be reached.
    Never,
}

/// Analyses a filter's graph (see the module doc).
pub fn prepare(cfg: &Cfg) -> Prepared {
    let facts = Facts::new(cfg);
    let order = facts.order();
    let pos = |b| facts.pos(b);
    let n = order.len();
    // Edge conditions arriving at each block, gathered from its predecessors.
    let mut incoming: Vec<Vec<Vec<Cond>>> = vec![Vec::new(); n];
    let mut regs_in: Vec<Option<Regs>> = vec![None; n];
    // Whether the block is reached by one path, every branch of which is in its guard and every
    // load of which a guard's field evaluation repeats.
    let mut exact_in: Vec<Option<bool>> = vec![None; n];
    if n > 0 {
        exact_in[0] = Some(true);
    }
    let mut edges = Vec::new();
    let mut nodes = Vec::with_capacity(n);
    for (i, &b) in order.iter().enumerate() {
        let mut regs = if i == 0 { Regs::entry() } else { regs_in[i].unwrap_or_else(Regs::entry) };
        let guard = if i == 0 {
            Vec::new()
        } else {
            let mut sets = incoming[i].iter();
            let mut g = sets.next().cloned().unwrap_or_default();
            for s in sets {
                g.retain(|c| s.contains(c));
            }
            g
        };
        let block = cfg.block(b);
        // The packet loads of the block: `Ok(base)` for a load into A, `Err(k)` for `ldxb
        // 4*([k]&0xf)`, `None` for anything else that reads the packet.
        let mut loads = Vec::new();
        for s in &block.stmts {
            regs.step(s);
            if s.reads_packet() {
                loads.push(match (*s, regs.a) {
                    (Stmt::Ldx(XSrc::Msh(k)), _) => Some(Err(k)),
                    (Stmt::Ld(_), Sym::Field(f)) => Some(Ok(f.base)),
                    _ => None,
                });
            }
        }
        let here_exact = exact_in[i].unwrap_or(false) && guard.len() < MAX_GUARDS;
        let mut node = Node { succs: Vec::new(), accepts: false };
        let mut send =
            |to: usize, cond: Option<Cond>, eq: Option<usize>, node: &mut Node, exact: bool| {
                let mut g = guard.clone();
                if let Some(c) = cond
                    && g.len() < MAX_GUARDS
                    && !g.contains(&c)
                {
                    g.push(c);
                }
                // A second way in: no longer one path.
                exact_in[to] = Some(exact_in[to].is_none() && exact);
                incoming[to].push(g);
                regs_in[to] = Some(match regs_in[to] {
                    Some(r) => r.meet(&regs),
                    None => regs,
                });
                node.succs.push((to, eq));
            };
        match block.term {
            Terminator::Ret(RetVal::K(k)) => node.accepts = k != 0,
            Terminator::Ret(RetVal::A) => node.accepts = regs.a != Sym::Const(0),
            Terminator::Jump(t) => {
                if let Some(t) = pos(t) {
                    send(t, None, None, &mut node, here_exact && loads.is_empty());
                }
            }
            Terminator::Branch { op, operand, jt, jf } => {
                let (Some(t), Some(f)) = (pos(jt), pos(jf)) else {
                    nodes.push(node);
                    continue;
                };
                let field = match (regs.a, operand) {
                    (Sym::Field(fd), Operand::K(k)) if t != f => Some((fd, k)),
                    _ => None,
                };
                let (ct, cf) = match (op, field) {
                    (JmpOp::Jeq, Some((fd, k))) => (
                        Some(Cond { field: fd, eq: true, value: k }),
                        Some(Cond { field: fd, eq: false, value: k }),
                    ),
                    (JmpOp::Jset, Some((fd, k))) => {
                        let m = Field { mask: fd.mask & k, ..fd };
                        (
                            Some(Cond { field: m, eq: false, value: 0 }),
                            Some(Cond { field: m, eq: true, value: 0 }),
                        )
                    }
                    _ => (None, None),
                };
                // Every load of the block is the branch's field (or its header-length byte), so
                // the field's evaluation succeeding means the block's loads did.
                let covered = field.is_some_and(|(fd, _)| {
                    loads.iter().all(|l| match (*l, fd.base) {
                        (Some(Ok(base)), b) => base == b,
                        (Some(Err(k)), Base::Ind { msh, .. }) => k == msh,
                        _ => false,
                    })
                });
                let ok = here_exact && covered && ct.is_some();
                let eq = match (op, field) {
                    (JmpOp::Jeq, Some((fd, k))) if k & !fd.mask == 0 => {
                        let target = cfg.block(jt);
                        let accepts = matches!(target.term, Terminator::Ret(RetVal::K(k)) if k != 0)
                            && !target.stmts.iter().any(|s| s.reads_packet());
                        let exact = ok && accepts;
                        edges.push(EqEdge {
                            from: i,
                            field: fd,
                            value: k,
                            guard: guard.clone(),
                            exact,
                        });
                        Some(edges.len() - 1)
                    }
                    _ => None,
                };
                send(t, ct, eq, &mut node, ok);
                send(f, cf, None, &mut node, ok);
            }
        }
        nodes.push(node);
    }
    let accepts_some = nodes.iter().any(|n| n.accepts);
    Prepared { edges, accepts_some, nodes }
}

/// Residual capacities on an adjacency list: (to, capacity, index of the reverse edge, the
/// equality edge it is).
type Residual = Vec<Vec<(usize, u64, usize, Option<usize>)>>;

/// An edge no cut may take.
const INFINITE: u64 = 1 << 62;

/// Picks the cheapest cut of equality edges; `weight(edge)` is an edge's expected cost
/// (clamped to `1..=2^40`).
pub fn choose(p: &Prepared, weight: impl Fn(&EqEdge) -> u64) -> Anchoring {
    if !p.accepts_some {
        return Anchoring::Never;
    }
    let n = p.nodes.len();
    let sink = n;
    // Residual capacities on an adjacency list: (to, capacity, reverse index, edge).
    let mut adj: Residual = vec![Vec::new(); n + 1];
    let add = |adj: &mut Residual, u: usize, v: usize, c: u64, e| {
        let ru = adj[v].len();
        let rv = adj[u].len();
        adj[u].push((v, c, ru, e));
        adj[v].push((u, 0, rv, None));
    };
    for (u, node) in p.nodes.iter().enumerate() {
        for &(v, eq) in &node.succs {
            let c = eq.map_or(INFINITE, |e| weight(&p.edges[e]).clamp(1, 1 << 40));
            add(&mut adj, u, v, c, eq);
        }
        if node.accepts {
            add(&mut adj, u, sink, INFINITE, None);
        }
    }
    // Edmonds–Karp: the graphs have tens of nodes.
    loop {
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; n + 1];
        let mut queue = std::collections::VecDeque::from([0usize]);
        let mut seen = vec![false; n + 1];
        seen[0] = true;
        while let Some(u) = queue.pop_front() {
            for (j, &(v, c, _, _)) in adj[u].iter().enumerate() {
                if c > 0 && !seen[v] {
                    seen[v] = true;
                    prev[v] = Some((u, j));
                    queue.push_back(v);
                }
            }
        }
        if !seen[sink] {
            // The cut: edges from the reachable side to the other.
            let mut anchors = Vec::new();
            for (u, node) in p.nodes.iter().enumerate() {
                if !seen[u] {
                    continue;
                }
                for &(v, eq) in &node.succs {
                    if !seen[v] {
                        // Only finite (equality) edges can cross a cut of finite flow.
                        let Some(e) = eq else { return Anchoring::Always };
                        let e = &p.edges[e];
                        anchors.push(Anchor {
                            field: e.field,
                            value: e.value,
                            guard: e.guard.clone(),
                            exact: e.exact,
                        });
                    }
                }
            }
            anchors.sort();
            anchors.dedup();
            return Anchoring::Anchors(anchors);
        }
        let mut bottleneck = INFINITE;
        let mut v = sink;
        while let Some((u, j)) = prev[v] {
            bottleneck = bottleneck.min(adj[u][j].1);
            v = u;
        }
        // A path of edges that cannot be cut (their capacity only ever shrinks by finite
        // amounts, so it stays above half of it).
        if bottleneck >= INFINITE / 2 {
            return Anchoring::Always;
        }
        let mut v = sink;
        while let Some((u, j)) = prev[v] {
            adj[u][j].1 -= bottleneck;
            let (_, _, r, _) = adj[u][j];
            adj[v][r].1 += bottleneck;
            v = u;
        }
    }
}
