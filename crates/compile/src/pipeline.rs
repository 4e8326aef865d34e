//! Compiling a filter: the one entry every caller uses.
//!
//! **Why it exists.** Turning filter text into a program engines may run takes six steps —
//! parse (with name checks), generate the graph for a link type, optimize, refuse a graph that
//! rejects everything, emit, validate — and a caller that strings them together itself has to
//! know DLT from LINKTYPE numbers, which errors mean what, and which validator to ask. This
//! module does it once:
//!
//! ```text
//! text ─parse─▶ AST ─generate─▶ CFG ─optimize─▶ CFG ─emit─▶ Program ─validate─▶ Validated
//!       sift-filter     gen            opt        (rejects all?)  emit        sift-verify
//! ```
//!
//! [`Options`] take a typed [`LinkType`] (the LINKTYPE number a capture file stores; the one
//! conversion to libpcap's DLT numbering happens inside the generator's link model), the
//! snapshot length, the netmask, Linux extensions, whether to optimize, the validation
//! [`Mode`] and the name [`Resolver`]. [`compile`] returns a [`Compiled`]: the
//! [`Validated`] program, the graph it was emitted from (`sift compile --dump-cfg`) and the
//! optimizer's figures. Every failure is a [`CompileError`] with a span.
//!
//! **The mode decides the `protochain` walks' form** (see [`crate::walk`]). Under
//! [`Mode::LibpcapLoops`] a walk is libpcap's loop, which libpcap's `bpf_filter` and sift's
//! engines run (bounded by `sift_verify::LOOP_BUDGET`): the program sift runs on capture files,
//! and the unoptimized one equals libpcap's. Under [`Mode::Libpcap`] and [`Mode::Linux`] the
//! program must go forward only (the kernel's `SO_ATTACH_FILTER`, the eBPF translation), so
//! each walk is unrolled, as deep as the whole program stays within the kernel's 4,096
//! instructions ([`finish`] searches the depth; at least [`MIN_UNROLLED_STEPS`]).
//!
//! The stages stay public for tests and tools that need one of them: [`generate`] (AST →
//! CFG), [`graph`] (text → optimized CFG, without the rejects-all check), [`finish`] (CFG →
//! validated program), and below them the generator (module `gen`), [`crate::opt`], [`crate::emit`].
//!
//! ```
//! use sift_compile::pipeline::{self, Options};
//! use sift_wire::LinkType;
//!
//! let resolver = sift_filter::TableResolver::well_known();
//! let opts = Options::new(LinkType::EN10MB, &resolver);
//! let out = pipeline::compile("ip and tcp", &opts)?;
//! assert_eq!(out.program.insns().len(), 6);
//!
//! let err = pipeline::compile("port 99999", &opts).unwrap_err();
//! assert_eq!(
//!     err.render("port 99999"),
//!     "error: port 99999 is out of range (0–65535)\n  port 99999\n       ^^^^^\n"
//! );
//! # Ok::<(), sift_compile::CompileError>(())
//! ```

use std::fmt;

use sift_filter::Resolver;
use sift_filter::ast::Expr;
use sift_verify::Reason;
/// The validation rules and the validated program type, from `sift-verify`.
pub use sift_verify::{Mode, Validated};
/// The link type, from `sift-wire` (so that callers need not depend on it to build
/// [`Options`]).
pub use sift_wire::LinkType;

use crate::emit::emit_as;
use crate::error::{CompileError, CompileErrorKind, Resource};
use crate::ir::{BlockId, Cfg, CfgError, Stmt};
use crate::opt::{self, OptStats};
/// How the walks of a compiled program were expanded, from [`crate::walk`].
pub use crate::walk::WalkForm;
use crate::walk::{MAX_UNROLLED_STEPS, MIN_UNROLLED_STEPS};

pub use crate::r#gen::generate;

/// What to compile for, and how.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// The link type of the packets the program will see.
    pub link: LinkType,
    /// The snapshot length: the value `ret` gives for an accepted packet.
    pub snaplen: u32,
    /// The IPv4 netmask (for `ip broadcast`), `None` when not known.
    pub netmask: Option<u32>,
    /// Whether Linux ancillary loads may be used (a live Linux capture): `inbound`/`outbound`
    /// and `ifindex` on link types without the information in the packet, and `vlan` on
    /// Ethernet (the tag may be in the socket's metadata).
    pub linux_ext: bool,
    /// Whether to run the optimizer.
    pub optimize: bool,
    /// The rules the program must pass: libpcap's (`bpf_filter`, sift's VM and JIT; with
    /// [`Mode::LibpcapLoops`], `protochain` walks are libpcap's loop, else they are unrolled for
    /// the kernel) or the kernel's (`SO_ATTACH_FILTER`).
    pub mode: Mode,
    /// Resolves host, network, service, protocol and ether names.
    pub resolver: &'a dyn Resolver,
    /// The byte order of the capture file the packets come from; `None` when they do not come
    /// from one (a live capture, or a program compiled on its own). libpcap's compiler is told
    /// the same by the `pcap_t` of `pcap_open_offline`: a loopback header's address family
    /// (DLT_NULL, DLT_ENC) is in the byte order of the system that wrote the file, and IPv6 is
    /// any BSD's AF_INET6 (24, 28, 30) in a file but this system's (Linux: 10) without one.
    pub savefile: Option<ByteOrder>,
}

/// A byte order: of a capture file's header fields ([`Options::savefile`]), or of this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (what x86-64 and arm64 hosts write).
    Little,
    /// Most significant byte first (network order; SPARC, POWER, older MIPS hosts).
    Big,
}

impl ByteOrder {
    /// This host's byte order.
    pub const fn native() -> ByteOrder {
        if cfg!(target_endian = "big") { ByteOrder::Big } else { ByteOrder::Little }
    }

    /// `Big` when `big_endian`, else `Little`.
    pub const fn from_big_endian(big_endian: bool) -> ByteOrder {
        if big_endian { ByteOrder::Big } else { ByteOrder::Little }
    }
}

impl<'a> Options<'a> {
    /// Options for `link` with `resolver`: tcpdump's defaults (snapshot length 262144, no
    /// netmask, no Linux extensions, optimized) and libpcap's validation rules without loops
    /// ([`Mode::Libpcap`]: a program any engine and the kernel run, `protochain` walks
    /// unrolled; [`Options::mode`] with [`Mode::LibpcapLoops`] gives libpcap's loops).
    pub fn new(link: LinkType, resolver: &'a dyn Resolver) -> Options<'a> {
        Options {
            link,
            snaplen: 262_144,
            netmask: None,
            linux_ext: false,
            optimize: true,
            mode: Mode::Libpcap,
            resolver,
            savefile: None,
        }
    }

    /// The same options for packets from a capture file in byte order `order` (`None`: not
    /// from a file). See [`Options::savefile`].
    pub fn savefile(self, savefile: Option<ByteOrder>) -> Options<'a> {
        Options { savefile, ..self }
    }

    /// The same options with another snapshot length.
    pub fn snaplen(self, snaplen: u32) -> Options<'a> {
        Options { snaplen, ..self }
    }

    /// The same options with a netmask (or none).
    pub fn netmask(self, netmask: Option<u32>) -> Options<'a> {
        Options { netmask, ..self }
    }

    /// The same options with Linux extensions on or off.
    pub fn linux_ext(self, linux_ext: bool) -> Options<'a> {
        Options { linux_ext, ..self }
    }

    /// The same options with the optimizer on or off.
    pub fn optimize(self, optimize: bool) -> Options<'a> {
        Options { optimize, ..self }
    }

    /// The same options with other validation rules.
    pub fn mode(self, mode: Mode) -> Options<'a> {
        Options { mode, ..self }
    }
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("link", &self.link)
            .field("snaplen", &self.snaplen)
            .field("netmask", &self.netmask)
            .field("linux_ext", &self.linux_ext)
            .field("optimize", &self.optimize)
            .field("mode", &self.mode)
            .field("savefile", &self.savefile)
            .finish_non_exhaustive()
    }
}

/// A compiled filter.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The program, validated under [`Options::mode`].
    pub program: Validated,
    /// The graph the program was emitted from (optimized when [`Options::optimize`]).
    pub cfg: Cfg,
    /// What the optimizer did (`None` without optimization).
    pub stats: Option<OptStats>,
    /// How the `protochain` walks were emitted (`None`: the program has none).
    pub walk_form: Option<WalkForm>,
    /// The link type it was compiled for ([`Options::link`]).
    pub link: LinkType,
}

/// A generated graph, optimized when asked ([`graph`]).
#[derive(Clone, Debug)]
pub struct Graph {
    /// The graph.
    pub cfg: Cfg,
    /// What the optimizer did (`None` without optimization).
    pub stats: Option<OptStats>,
}

/// Whether the code generator has a model of `link`'s link-layer header, so that link-layer
/// protocol primitives (`ip`, `arp`, `host`…) compile on it. Primitives that do not depend on
/// the link layer (`len`, `less`, `greater`, `link[…]`) compile on every link type.
pub fn supports(link: LinkType) -> bool {
    crate::r#gen::Link::supports(link)
}

/// Compiles filter text: parse (checking names), generate, optimize when asked, emit and
/// validate. An empty filter (only blanks) accepts every packet.
pub fn compile(src: &str, opts: &Options<'_>) -> Result<Compiled, CompileError> {
    finish(graph(src, opts)?, opts)
}

/// [`compile`] from a parsed expression (`None`: the empty filter).
pub fn compile_expr(expr: Option<&Expr>, opts: &Options<'_>) -> Result<Compiled, CompileError> {
    finish(graph_of(expr, opts)?, opts)
}

/// Text → graph: parse, generate, and optimize when asked. A graph that rejects every packet
/// is returned as it is (a lone `ret #0`); [`finish`] refuses it.
pub fn graph(src: &str, opts: &Options<'_>) -> Result<Graph, CompileError> {
    let expr = sift_filter::parse_with(src, opts.resolver)?;
    graph_of(expr.as_ref(), opts)
}

fn graph_of(expr: Option<&Expr>, opts: &Options<'_>) -> Result<Graph, CompileError> {
    let mut cfg = generate(expr, opts)?;
    let stats = opts.optimize.then(|| opt::optimize(&mut cfg));
    Ok(Graph { cfg, stats })
}

/// Graph → validated program: refuses an optimized graph that rejects every packet
/// (libpcap's "expression rejects all packets"), emits, and validates under
/// [`Options::mode`].
pub fn finish(graph: Graph, opts: &Options<'_>) -> Result<Compiled, CompileError> {
    let Graph { cfg, stats } = graph;
    if opts.optimize && opt::rejects_all(&cfg) {
        return Err(CompileError::new(CompileErrorKind::RejectsAll, None));
    }
    let internal = |e: CfgError| CompileError::new(CompileErrorKind::Internal(e.to_string()), None);
    let walk_form = walk_form(&cfg, opts.mode).map_err(internal)?;
    let prog = emit_as(&cfg, walk_form.unwrap_or(WalkForm::Loop)).map_err(internal)?;
    let program = sift_verify::validate(&prog, opts.mode).map_err(|e| {
        let kind = match e.reason {
            Reason::TooLong { len } => CompileErrorKind::ResourceLimit {
                what: Resource::Instructions { len: len as u64 },
                limit: sift_insn::code::BPF_MAXINSNS as u64,
            },
            _ => CompileErrorKind::Invalid(e),
        };
        CompileError::new(kind, None)
    })?;
    Ok(Compiled { program, cfg, stats, walk_form, link: opts.link })
}

/// How to emit the walks of `cfg` for `mode` (`None`: it has none): libpcap's loop under
/// [`Mode::LibpcapLoops`]; else unrolled, the largest depth (up to
/// [`MAX_UNROLLED_STEPS`]) at which the program stays within the kernel's
/// [`BPF_MAXINSNS`](sift_insn::code::BPF_MAXINSNS), or [`MIN_UNROLLED_STEPS`] when even that
/// does not fit (the kernel then refuses the program; [`Mode::Linux`] says so).
///
/// The program's length grows with the depth (each step adds instructions and can only
/// lengthen jumps), so the search starts from the depth the first step's cost predicts and
/// moves one step at a time: a few emissions of at most 4,096 instructions.
fn walk_form(cfg: &Cfg, mode: Mode) -> Result<Option<WalkForm>, CfgError> {
    let walk = |b: &BlockId| cfg.block(*b).stmts.iter().any(|s| matches!(s, Stmt::Walk(_)));
    let has_walk = cfg.check().is_ok() && cfg.layout_order().iter().any(walk);
    if !has_walk {
        return Ok(None);
    }
    if mode == Mode::LibpcapLoops {
        return Ok(Some(WalkForm::Loop));
    }
    let limit = sift_insn::code::BPF_MAXINSNS;
    let len = |n: usize| emit_as(cfg, WalkForm::Unrolled(n)).map(|p| p.len());
    let first = len(MIN_UNROLLED_STEPS)?;
    if first > limit {
        return Ok(Some(WalkForm::Unrolled(MIN_UNROLLED_STEPS)));
    }
    let per_step = len(MIN_UNROLLED_STEPS + 1)?.saturating_sub(first).max(1);
    let mut n = (MIN_UNROLLED_STEPS + (limit - first) / per_step).min(MAX_UNROLLED_STEPS);
    while n > MIN_UNROLLED_STEPS && len(n)? > limit {
        n -= 1;
    }
    while n < MAX_UNROLLED_STEPS && len(n + 1)? <= limit {
        n += 1;
    }
    Ok(Some(WalkForm::Unrolled(n)))
}
