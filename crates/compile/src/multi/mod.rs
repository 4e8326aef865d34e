//! Many filters, one pass: N pcap-filter expressions compiled into one decision program.
//!
//! **Why it exists.** Users who split traffic by customer, VLAN, subnet or service run one
//! tcpdump per filter, and the kernel runs each socket's filter in turn: N filters cost N runs
//! per packet. The 1987 packet filter paper (CSPF) ran its filters in priority order and noted
//! that a decision table compiled from all of them would do better. This module builds that
//! table:
//!
//! 1. every filter is compiled and optimized alone ([`crate::pipeline`]), so each keeps its
//!    exact verdicts, and its graph is analysed ([`anchor`]): which `field == value` tests does
//!    every packet it accepts pass;
//! 2. those tests, over all filters, are merged by field into hash tables ([`index`]), each
//!    behind the protocol tests its filters have in common;
//! 3. a packet is decided once ([`MultiProgram::decide`]): each indexed field is loaded once and
//!    looked up once, giving the few candidate filters, which run in priority order — all of
//!    them (the set of matches), or until the first that accepts without CSPF's `continue`.
//!
//! The candidates are a superset of the matches (the anchors' soundness argument is in
//! [`anchor`]); the candidates' own programs decide, so the result equals running every filter
//! alone, which the differential tests check over the corpora and random sets.
//!
//! Engines plug in as the closure that runs one filter's program: the interpreter or the JIT
//! in the `sift` facade ([`MultiProgram::decide`]), eBPF in [`crate::ebpf`].

pub mod anchor;
pub mod field;
pub mod index;
pub mod set;

pub use anchor::{Anchor, Anchoring};
pub use index::{Index, Scratch};
pub use set::{FilterSet, FilterSpec, SetError, SetErrorKind};

use crate::pipeline::{self, Compiled, Options};
use crate::{CompileError, CompileErrorKind};
use std::collections::HashMap;

/// One filter of a [`MultiProgram`].
#[derive(Clone, Debug)]
pub struct Member {
    /// What the set said.
    pub spec: FilterSpec,
    /// Its program (`None`: the optimizer proved it accepts nothing on this link type).
    pub compiled: Option<Compiled>,
    /// How the index reaches it.
    pub anchoring: Anchoring,
}

/// N filters compiled into one decision program.
#[derive(Clone, Debug)]
pub struct MultiProgram {
    /// The filters by rank: decreasing priority, then the set's order.
    pub members: Vec<Member>,
    /// The merged anchors.
    pub index: Index,
}

/// A filter of the set did not compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("filter `{name}` (line {line}): {error}")]
pub struct MultiError {
    /// The filter's name.
    pub name: String,
    /// Its line in the set (0: not read from text).
    pub line: u32,
    /// The column its expression starts at; a span in `error` is relative to it.
    pub expr_column: u32,
    /// Why.
    pub error: Box<CompileError>,
}

/// How a packet is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decide {
    /// Every filter that accepts it.
    All,
    /// Filters in priority order up to the first that accepts it without `continue` (CSPF's
    /// delivery: that one, and the `continue` filters before it).
    First,
}

/// Compiles a set for one link type (`opts`, whose optimizer setting is used for every
/// filter). Filters the optimizer proves accept nothing are kept (they never match).
pub fn compile(set: &FilterSet, opts: &Options<'_>) -> Result<MultiProgram, MultiError> {
    let (compiled, prepared) = compile_members(set, opts)?;
    // How many filters test each (field, value): a value many filters share lets many through.
    let mut share: HashMap<(field::Field, u32), u64> = HashMap::new();
    for p in prepared.iter().flatten() {
        let mut mine: Vec<_> = p.edges.iter().map(|e| (e.field, e.value)).collect();
        mine.sort_unstable();
        mine.dedup();
        for k in mine {
            *share.entry(k).or_default() += 1;
        }
    }
    let weight = |e: &anchor::EqEdge| {
        // Expected packets through: the filters sharing the test, times the chance a value of
        // the field's width matches (narrow fields — protocol numbers — match often).
        let narrow = 1u64 << ((32 - e.field.bits().min(32)) / 2);
        share.get(&(e.field, e.value)).copied().unwrap_or(1) * narrow
    };
    let mut members = Vec::with_capacity(set.len());
    for ((spec, c), p) in set.filters().iter().zip(compiled).zip(&prepared) {
        let anchoring = match p {
            None => Anchoring::Never,
            Some(p) => anchor::choose(p, weight),
        };
        members.push(Member { spec: spec.clone(), compiled: c, anchoring });
    }
    let anchorings: Vec<Anchoring> = members.iter().map(|m| m.anchoring.clone()).collect();
    let index = Index::build(&anchorings);
    Ok(MultiProgram { members, index })
}

/// A member's program and its analysis (`None`: it accepts nothing).
type Built = Option<(Compiled, anchor::Prepared)>;

/// Compiles every distinct expression of the set once: parsing and code generation (which
/// resolve names, through a resolver that need not be shared between threads) here, the
/// optimizer, emission and the anchor analysis (most of the time) on every core.
#[allow(clippy::type_complexity)]
fn compile_members(
    set: &FilterSet,
    opts: &Options<'_>,
) -> Result<(Vec<Option<Compiled>>, Vec<Option<anchor::Prepared>>), MultiError> {
    let fail = |spec: &FilterSpec, error| MultiError {
        name: spec.name.clone(),
        line: spec.line,
        expr_column: spec.expr_column,
        error: Box::new(error),
    };
    // Distinct expressions, and each member's.
    let mut distinct: Vec<(usize, pipeline::Graph)> = Vec::new();
    let mut which: Vec<usize> = Vec::with_capacity(set.len());
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let unoptimized = opts.optimize(false);
    for (i, spec) in set.filters().iter().enumerate() {
        let d = match seen.get(spec.expr.as_str()) {
            Some(&d) => d,
            None => {
                let graph = pipeline::graph(&spec.expr, &unoptimized).map_err(|e| fail(spec, e))?;
                distinct.push((i, graph));
                seen.insert(&spec.expr, distinct.len() - 1);
                distinct.len() - 1
            }
        };
        which.push(d);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = distinct.len().div_ceil(threads).max(64);
    let fields = (
        opts.link,
        opts.snaplen,
        opts.netmask,
        opts.linux_ext,
        opts.optimize,
        opts.mode,
        opts.savefile,
    );
    let finish_all =
        |graphs: &mut [(usize, pipeline::Graph)]| -> Vec<(usize, Result<Built, CompileError>)> {
            let empty = sift_filter::TableResolver::empty();
            let (link, snaplen, netmask, linux_ext, optimize, mode, savefile) = fields;
            let o = Options::new(link, &empty)
                .snaplen(snaplen)
                .netmask(netmask)
                .linux_ext(linux_ext)
                .optimize(optimize)
                .mode(mode)
                .savefile(savefile);
            graphs
                .iter_mut()
                .map(|(i, graph)| {
                    let mut cfg = std::mem::take(&mut graph.cfg);
                    let stats = optimize.then(|| crate::opt::optimize(&mut cfg));
                    let r = match pipeline::finish(pipeline::Graph { cfg, stats }, &o) {
                        Ok(c) => {
                            let p = anchor::prepare(&c.cfg);
                            Ok(Some((c, p)))
                        }
                        Err(CompileError { kind: CompileErrorKind::RejectsAll, .. }) => Ok(None),
                        Err(e) => Err(e),
                    };
                    (*i, r)
                })
                .collect()
        };
    let results: Vec<(usize, Result<Built, CompileError>)> = if distinct.len() <= chunk {
        finish_all(&mut distinct)
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                distinct.chunks_mut(chunk).map(|part| scope.spawn(|| finish_all(part))).collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let mut built: Vec<Built> = Vec::with_capacity(results.len());
    for (i, r) in results {
        built.push(r.map_err(|e| fail(&set.filters()[i], e))?);
    }
    let compiled = which.iter().map(|&d| built[d].as_ref().map(|b| b.0.clone())).collect();
    let prepared = which.iter().map(|&d| built[d].as_ref().map(|b| b.1.clone())).collect();
    Ok((compiled, prepared))
}

impl MultiProgram {
    /// A scratch area for [`MultiProgram::decide`] (one per thread).
    pub fn scratch(&self) -> Scratch {
        self.index.scratch()
    }

    /// Decides a packet: `matched` gets the ranks of the filters it goes to, ascending.
    /// `run(rank)` runs one filter's program on the packet (the engine's part); it is called
    /// only for candidates a hit did not decide, in rank order. `candidates` is working space.
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &self,
        pkt: &[u8],
        wire_len: u32,
        mode: Decide,
        scratch: &mut Scratch,
        candidates: &mut Vec<(u32, bool)>,
        matched: &mut Vec<u32>,
        mut run: impl FnMut(u32) -> bool,
    ) {
        matched.clear();
        self.index.candidates(pkt, wire_len, scratch, candidates);
        for &(r, decided) in candidates.iter() {
            if decided || run(r) {
                matched.push(r);
                if mode == Decide::First && !self.members[r as usize].spec.cont {
                    break;
                }
            }
        }
    }

    /// How many filters.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// A summary for `-d`-style listings and benchmarks: filters by how the index reaches
    /// them, tables and their sizes.
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        let (mut anchored, mut always, mut never) = (0, 0, 0);
        for m in &self.members {
            match m.anchoring {
                Anchoring::Anchors(_) => anchored += 1,
                Anchoring::Always => always += 1,
                Anchoring::Never => never += 1,
            }
        }
        let mut s = format!(
            "{} filters: {anchored} indexed, {always} run on every packet, {never} match nothing\n",
            self.len()
        );
        let sw = &self.index.switch;
        let _ = writeln!(
            s,
            "switch on {}: {} cases, plans of {:?} steps",
            sw.field.map_or("nothing".to_string(), |f| self.index.fields[f as usize].to_string()),
            sw.cases.len(),
            sw.plans.iter().map(|p| p.steps.len()).collect::<Vec<_>>()
        );
        for t in &self.index.tables {
            let f = self.index.fields[t.field as usize];
            let _ = writeln!(
                s,
                "table {f}: {} values, context of {} conditions",
                t.map.len(),
                self.index.guards[t.guard as usize].len()
            );
        }
        s
    }
}
