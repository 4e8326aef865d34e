//! Many filters in one pass: a filter set compiled into one decision program, on sift's
//! engines.
//!
//! **Why it exists.** `sift --split`, `sift bench --filters`, the bindings and live capture
//! decide each packet against many named filters. The decision program comes from
//! [`sift_compile::multi`] (shared loads, merged hash tables, candidates in priority order);
//! this module compiles it for a capture's link type as [`crate::filter`] compiles one
//! expression (tcpdump's options for a file or an interface) and runs the candidates on the
//! JIT or the interpreter.

use crate::filter::{Engine, Target};
use sift_compile::multi::{self, Decide, FilterSet, MultiError, MultiProgram, Scratch};
use sift_filter::Resolver;
use sift_vm::PacketRef;

/// Why a filter set gives no decision program.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MultiFilterError {
    /// The set's text is not a filter set.
    #[error("{origin}:{}:{}: {}", .error.line, .error.column, .error.kind)]
    Set {
        /// Where the set came from (a file name).
        origin: String,
        /// What is wrong, where.
        error: multi::SetError,
    },
    /// A filter does not compile; shown as `FILE:LINE:COLUMN` (where the offending text is
    /// in the file) with a caret under it.
    #[error("{}", compile_message(.origin, .expr, .error))]
    Compile {
        /// Where the set came from.
        origin: String,
        /// The filter's expression.
        expr: String,
        /// What is wrong.
        error: Box<MultiError>,
    },
}

/// `FILE:LINE:COLUMN: filter `NAME`: …`, the column that of the error's span in the file.
fn compile_message(origin: &str, expr: &str, e: &MultiError) -> String {
    let start = e.error.span.map_or(0, |s| s.start as usize).min(expr.len());
    let before = expr.get(..start).map_or(start, |s| s.chars().count());
    let column = e.expr_column as usize + before;
    let rendered = e.error.render(expr);
    let rendered = rendered.trim_end();
    let body = rendered.strip_prefix("error: ").unwrap_or(rendered);
    format!("{origin}:{}:{column}: filter `{}`: {body}", e.line, e.name)
}

/// Reads a filter-set file's text (`origin` names it in errors).
pub fn parse_set(text: &[u8], origin: &str) -> Result<FilterSet, MultiFilterError> {
    FilterSet::parse(text).map_err(|error| MultiFilterError::Set { origin: origin.into(), error })
}

/// Compiles `set` for `target` as [`crate::filter::compile`] compiles one expression.
pub fn compile(
    set: &FilterSet,
    target: &Target,
    optimize: bool,
    resolver: &dyn Resolver,
    origin: &str,
) -> Result<MultiProgram, MultiFilterError> {
    let opts = target.options(optimize, resolver);
    multi::compile(set, &opts).map_err(|error| {
        let expr = set
            .filters()
            .iter()
            .find(|f| f.name == error.name)
            .map(|f| f.expr.clone())
            .unwrap_or_default();
        MultiFilterError::Compile { origin: origin.into(), expr, error: Box::new(error) }
    })
}

/// A decision program ready to run: each member's program on an engine, compiled for the
/// engine on first use (members whose every anchor is exact never run: most of a realistic
/// set, so most are never compiled to machine code).
pub struct MultiFilter {
    program: MultiProgram,
    engine: Engine,
    /// By rank.
    engines: Vec<std::sync::OnceLock<sift_jit::Filter>>,
}

impl std::fmt::Debug for MultiFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiFilter").field("filters", &self.program.len()).finish_non_exhaustive()
    }
}

/// Per-thread working space of [`MultiFilter::decide`], and its answer.
#[derive(Clone, Debug)]
pub struct Decision {
    scratch: Scratch,
    candidates: Vec<(u32, bool)>,
    matched: Vec<u32>,
}

impl Decision {
    /// The ranks of the filters the last packet goes to, ascending.
    pub fn matched(&self) -> &[u32] {
        &self.matched
    }

    /// How many candidates the index gave for the last packet (decided by a hit, or run).
    pub fn candidates(&self) -> usize {
        self.candidates.len()
    }
}

impl MultiFilter {
    /// `program`'s members on `engine`.
    pub fn new(program: MultiProgram, engine: Engine) -> MultiFilter {
        let engines = program.members.iter().map(|_| std::sync::OnceLock::new()).collect();
        MultiFilter { program, engine, engines }
    }

    /// The decision program.
    pub fn program(&self) -> &MultiProgram {
        &self.program
    }

    /// The name of the filter ranked `rank`.
    pub fn name(&self, rank: u32) -> &str {
        &self.program.members[rank as usize].spec.name
    }

    /// Working space for [`MultiFilter::decide`].
    pub fn decision(&self) -> Decision {
        Decision { scratch: self.program.scratch(), candidates: Vec::new(), matched: Vec::new() }
    }

    /// Decides a packet; the answer is [`Decision::matched`].
    #[inline]
    pub fn decide<'d>(
        &self,
        pkt: &[u8],
        wire_len: u32,
        mode: Decide,
        d: &'d mut Decision,
    ) -> &'d [u32] {
        self.program.decide(
            pkt,
            wire_len,
            mode,
            &mut d.scratch,
            &mut d.candidates,
            &mut d.matched,
            |r| self.member_engine(r).is_some_and(|f| f.run(pkt, wire_len) != 0),
        );
        &d.matched
    }

    /// Decides every packet of a batch: `out(i, ranks)` for each packet `i` that goes to at
    /// least one filter. Returns how many did.
    pub fn decide_batch(
        &self,
        packets: &[PacketRef<'_>],
        mode: Decide,
        d: &mut Decision,
        mut out: impl FnMut(usize, &[u32]),
    ) -> usize {
        let mut n = 0;
        for (g, group) in packets.chunks(sift_vm::batch::TOUCH_GROUP).enumerate() {
            sift_vm::batch::touch(group);
            for (i, p) in group.iter().enumerate() {
                let m = self.decide(p.data(), p.wire_len(), mode, d);
                if !m.is_empty() {
                    n += 1;
                    out(g * sift_vm::batch::TOUCH_GROUP + i, m);
                }
            }
        }
        n
    }

    /// The engine of the filter ranked `rank` alone (`None`: it matches nothing), for
    /// comparisons with running the filters separately.
    pub fn member_engine(&self, rank: u32) -> Option<&sift_jit::Filter> {
        let c = self.program.members.get(rank as usize)?.compiled.as_ref()?;
        Some(self.engines[rank as usize].get_or_init(|| match self.engine {
            Engine::Jit => sift_jit::Filter::new(&c.program),
            Engine::Interp => sift_jit::Filter::interpreter(&c.program),
        }))
    }

    /// Compiles every member for the engine now (benchmarks, to keep compilation out of the
    /// timed runs).
    pub fn compile_all(&self) {
        for r in 0..self.program.len() as u32 {
            self.member_engine(r);
        }
    }
}
