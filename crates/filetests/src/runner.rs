//! The runners: a candidate compiler against the corpus, against captures, and against libpcap.
//!
//! A compiler plugs in through [`Candidate`]. Programs are never compared by text alone: both
//! the candidate's program and the expected one are validated with `sift-verify` and run through
//! `sift-vm` on every frame of a [`PacketSet`], and must return the same value on each; identical
//! listings are counted as a figure of merit only. Each runner returns a [`Report`] with counts,
//! failures grouped into categories, and the first few failures in detail, so a test can assert
//! on figures and print something a person can act on.

use std::collections::BTreeMap;
use std::fmt;

use sift_insn::Insn;
use sift_libpcap::Libpcap;
use sift_verify::Mode;
use sift_vm::{Flavor, Interpreter};

use crate::LinkType;
use crate::corpus::{AcceptCase, ApplyCase, NETMASK_UNKNOWN, RejectCase, Skip};
use crate::packets::{self, PacketSet};

/// What a candidate is asked to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileRequest<'a> {
    /// The filter expression.
    pub expr: &'a str,
    /// The link type.
    pub link: LinkType,
    /// The snapshot length (the value `ret` gives for an accepted packet).
    pub snaplen: i32,
    /// The IPv4 netmask for `ip broadcast` ([`NETMASK_UNKNOWN`] when none).
    pub netmask: u32,
    /// Whether to optimize.
    pub optimize: bool,
    /// Whether Linux ancillary loads may be used (a live Linux capture).
    pub linuxext: bool,
}

/// A filter compiler under test.
pub trait Candidate {
    /// A short name for reports.
    fn name(&self) -> String;
    /// Compiles `req`; `Err` holds the error message.
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<Insn>, String>;
    /// Whether [`CompileRequest::optimize`] is honoured (the runners then also check optimized
    /// programs).
    fn optimizes(&self) -> bool {
        false
    }
    /// Whether the candidate resolves the corpus's `*.libpcap.test` name fixtures (cases that
    /// need them are skipped otherwise).
    fn resolves_name_fixtures(&self) -> bool {
        false
    }
    /// Whether [`CompileRequest::linuxext`] is honoured (cases that need Linux extensions are
    /// skipped otherwise).
    fn supports_linuxext(&self) -> bool {
        true
    }
}

/// A candidate made of a name and a closure.
pub struct FnCandidate<F> {
    name: String,
    f: F,
}

impl<F> FnCandidate<F>
where
    F: Fn(&CompileRequest<'_>) -> Result<Vec<Insn>, String>,
{
    /// A candidate that calls `f` (unoptimized only, no name fixtures).
    pub fn new(name: impl Into<String>, f: F) -> Self {
        FnCandidate { name: name.into(), f }
    }
}

impl<F> Candidate for FnCandidate<F>
where
    F: Fn(&CompileRequest<'_>) -> Result<Vec<Insn>, String>,
{
    fn name(&self) -> String {
        self.name.clone()
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<Insn>, String> {
        (self.f)(req)
    }
}

/// The system libpcap's `pcap_compile` as a candidate (the harness's calibration) or as the
/// reference in [`check_differential`].
///
/// `pcap_open_dead` handles are not live captures, so libpcap cannot emit Linux ancillary
/// loads: [`Candidate::supports_linuxext`] is false.
#[derive(Clone, Copy, Debug)]
pub struct LibpcapCandidate<'a> {
    /// The loaded library.
    pub pcap: &'a Libpcap,
    /// Whether to honour [`CompileRequest::optimize`]; when false every compile is unoptimized.
    pub optimize: bool,
}

impl Candidate for LibpcapCandidate<'_> {
    fn name(&self) -> String {
        format!("system {}", self.pcap.version())
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<Insn>, String> {
        self.pcap.compile(
            req.link,
            req.snaplen,
            req.expr,
            req.optimize && self.optimize,
            req.netmask,
        )
    }
    fn optimizes(&self) -> bool {
        self.optimize
    }
    fn supports_linuxext(&self) -> bool {
        false
    }
}

/// One failure, with enough detail to reproduce it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The corpus case name (or `gen#N` for a generated expression).
    pub case: String,
    /// The expression.
    pub expr: String,
    /// The link type name.
    pub link: &'static str,
    /// The category (see [`Category`]).
    pub category: Category,
    /// What went wrong, for people.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:?}] {} ({}): {:?}: {}",
            self.category, self.case, self.link, self.expr, self.detail
        )
    }
}

/// What kind of failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// The candidate refused an expression it should compile.
    CompileError,
    /// The candidate's program does not pass `sift-verify` in libpcap mode.
    Invalid,
    /// The expected program (from the corpus or the reference) does not parse or validate.
    ExpectedUnusable,
    /// Both programs run, and return different values on some packet.
    Mismatch,
    /// The candidate compiled an expression it should refuse.
    Accepted,
    /// Reference and candidate disagree on whether the expression compiles (differential).
    AcceptDiffers,
    /// A capture could not be read (apply).
    Capture,
}

/// A runner's result.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Which runner and candidate.
    pub title: String,
    /// Cases considered (including skipped ones).
    pub total: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Cases not run, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Failures by category.
    pub categories: BTreeMap<Category, usize>,
    /// The first failures in detail (at most the runner's `max_failures`).
    pub failures: Vec<Failure>,
    /// Every failure (details cut to 300 bytes), for classification by callers.
    pub all_failures: Vec<Failure>,
    /// Further figures (identical listings, error-message matches, packets run…).
    pub figures: BTreeMap<&'static str, usize>,
    /// Wall-clock time spent.
    pub elapsed: std::time::Duration,
}

impl Report {
    fn new(title: String) -> Report {
        Report { title, ..Report::default() }
    }

    /// How many cases failed.
    pub fn failed(&self) -> usize {
        self.categories.values().sum()
    }

    fn skip(&mut self, why: impl Into<String>) {
        *self.skipped.entry(why.into()).or_default() += 1;
    }

    fn figure(&mut self, name: &'static str, n: usize) {
        *self.figures.entry(name).or_default() += n;
    }

    fn fail(&mut self, max: usize, failure: Failure) {
        *self.categories.entry(failure.category).or_default() += 1;
        let mut brief = failure.clone();
        if brief.detail.len() > 300 {
            let mut cut = 300;
            while !brief.detail.is_char_boundary(cut) {
                cut -= 1;
            }
            brief.detail.truncate(cut);
        }
        self.all_failures.push(brief);
        if self.failures.len() < max {
            self.failures.push(failure);
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} cases, {} passed, {} failed, {} skipped ({:.2?})",
            self.title,
            self.total,
            self.passed,
            self.failed(),
            self.skipped.values().sum::<usize>(),
            self.elapsed
        )?;
        for (why, n) in &self.skipped {
            writeln!(f, "  skipped {n:>6}: {why}")?;
        }
        for (c, n) in &self.categories {
            writeln!(f, "  failed  {n:>6}: {c:?}")?;
        }
        for (name, n) in &self.figures {
            writeln!(f, "  figure  {n:>6}: {name}")?;
        }
        for x in &self.failures {
            writeln!(f, "  - {x}")?;
        }
        Ok(())
    }
}

/// Options shared by the runners.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// How many failures to keep in detail.
    pub max_failures: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_failures: 20 }
    }
}

/// Packet sets by link-type name, built on demand and kept.
#[derive(Debug, Default)]
pub struct PacketSets {
    /// By name (the order they are printed in), then number (unnamed link types).
    sets: BTreeMap<(&'static str, u16), PacketSet>,
    seed: u64,
    realistic: usize,
    random: usize,
    captures: Option<std::path::PathBuf>,
}

impl PacketSets {
    /// Sets of `realistic` generated plus `random` random frames (see
    /// [`PacketSet::generate`]), adding corpus captures from `captures` when given.
    pub fn new(
        seed: u64,
        realistic: usize,
        random: usize,
        captures: Option<std::path::PathBuf>,
    ) -> PacketSets {
        PacketSets { sets: BTreeMap::new(), seed, realistic, random, captures }
    }

    /// The set for `link`, built on first use.
    pub fn get(&mut self, link: LinkType) -> &PacketSet {
        let (seed, realistic, random) = (self.seed, self.realistic, self.random);
        let captures = self.captures.clone();
        let key = (link.name().unwrap_or_default(), link.number());
        self.sets.entry(key).or_insert_with(|| {
            let mut set =
                PacketSet::generate(link, seed ^ u64::from(link.number()), realistic, random);
            if let Some(dir) = captures {
                set.add_captures(&dir);
            }
            set
        })
    }

    /// The sets built so far.
    pub fn built(&self) -> impl Iterator<Item = &PacketSet> {
        self.sets.values()
    }
}

/// How many frames aimed at a program's constants ([`packets::directed`]) are added to the set
/// for each comparison.
pub const DIRECTED_FRAMES: usize = 48;

/// Validates `prog` (backward jumps allowed, as libpcap's `bpf_validate` allows them for
/// `protochain`; `sift-vm` runs them within its loop budget) and picks the flavor its compile
/// context implies.
fn prepare(prog: &[Insn], linuxext: bool) -> Result<Interpreter, String> {
    let v = sift_verify::validate(prog, Mode::LibpcapLoops).map_err(|e| e.to_string())?;
    let flavor = if linuxext { Flavor::Linux } else { Flavor::Libpcap };
    Ok(Interpreter::with_flavor(&v, flavor))
}

fn run_one(i: &Interpreter, f: &packets::Frame, linuxext: bool) -> u32 {
    if linuxext { i.run_with_meta(&f.data, &f.meta) } else { i.run(&f.data, f.wire_len()) }
}

/// Runs both programs on every frame; `Err` describes the first packet where they differ.
fn compare_on(
    expected: &Interpreter,
    actual: &Interpreter,
    set: &PacketSet,
    linuxext: bool,
) -> Result<Agreement, String> {
    let mut accepted = 0;
    for (n, f) in set.frames.iter().enumerate() {
        let e = run_one(expected, f, linuxext);
        let a = run_one(actual, f, linuxext);
        accepted += usize::from(e != 0);
        if e != a {
            return Err(format!(
                "packet {n} (caplen {}, wire {}): expected {e}, got {a}; bytes {}",
                f.data.len(),
                f.wire_len(),
                hex(&f.data[..f.data.len().min(48)])
            ));
        }
    }
    Ok(Agreement { runs: set.frames.len(), accepted })
}

/// Two programs agreed on a whole set.
#[derive(Clone, Copy, Debug)]
struct Agreement {
    /// Frames run.
    runs: usize,
    /// Frames the expected program accepted.
    accepted: usize,
}

impl Agreement {
    /// Whether the set told anything apart: the program accepted some frames and rejected
    /// others (otherwise a constant program would have agreed too).
    fn discriminating(&self) -> bool {
        self.accepted > 0 && self.accepted < self.runs
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The listing text with indentation, `; 0x..` comments and trailing spaces removed, and no
/// blank lines (the corpus indents its listings and comments each line with the opcode).
pub fn normalize_listing(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.find(';') {
            Some(i) => &line[..i],
            None => line,
        };
        let line = line.trim();
        if !line.is_empty() {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Why a case marked `skip` cannot run for this candidate, if it cannot.
fn skip_reason(skip: Option<&Skip>, cand: &dyn Candidate) -> Option<String> {
    match skip {
        Some(Skip::NameFixtures(s)) if !cand.resolves_name_fixtures() => {
            Some(format!("needs name fixtures ({s})"))
        }
        Some(Skip::Platform(s)) => Some(format!("libpcap skips it here ({s})")),
        _ => None,
    }
}

/// Why an accept case is skipped for this candidate, if it is.
fn accept_skip(c: &AcceptCase, cand: &dyn Candidate) -> Option<String> {
    skip_reason(c.skip.as_ref(), cand).or_else(|| {
        (c.linuxext && !cand.supports_linuxext())
            .then(|| "needs Linux extensions (a live capture)".into())
    })
}

/// Accept cases: the candidate must compile each (unoptimized), and its program must return
/// the same value as the corpus's `unopt` program on every frame of the link type's set.
/// Optimized programs are checked the same way (against `opt`, or for "rejects all packets")
/// when the candidate optimizes. Figures: identical programs and identical listings.
pub fn check_accept(
    cand: &dyn Candidate,
    cases: &[AcceptCase],
    sets: &mut PacketSets,
    opts: Options,
) -> Report {
    let start = std::time::Instant::now();
    let mut r = Report::new(format!("accept cases, candidate {}", cand.name()));
    for c in cases {
        r.total += 1;
        if let Some(why) = accept_skip(c, cand) {
            r.skip(why);
            continue;
        }
        let fail = |r: &mut Report, category, detail: String| {
            r.fail(
                opts.max_failures,
                Failure {
                    case: c.name.clone(),
                    expr: c.expr.clone(),
                    link: c.link.name().unwrap_or_default(),
                    category,
                    detail,
                },
            )
        };
        let req = CompileRequest {
            expr: &c.expr,
            link: c.link,
            snaplen: c.snaplen,
            netmask: c.netmask,
            optimize: false,
            linuxext: c.linuxext,
        };
        let prog = match cand.compile(&req) {
            Ok(p) => p,
            Err(e) => {
                fail(&mut r, Category::CompileError, e);
                continue;
            }
        };
        let expected = match sift_insn::text::parse(&c.unopt) {
            Ok(p) => p.0,
            Err(e) => {
                fail(&mut r, Category::ExpectedUnusable, format!("unopt listing: {e}"));
                continue;
            }
        };
        if prog == expected {
            r.figure("identical programs (unopt)", 1);
        }
        if normalize_listing(&sift_insn::text::listing(&prog)) == normalize_listing(&c.unopt) {
            r.figure("identical listings, ignoring comments and trailing space (unopt)", 1);
        }
        let set = sets.get(c.link);
        let ok = match check_same(&expected, &prog, set, c.linuxext) {
            Ok(ag) => {
                r.figure("packet runs", 2 * ag.runs);
                if ag.discriminating() {
                    r.figure("cases the set discriminates (program accepts some, rejects some)", 1);
                }
                true
            }
            Err((cat, d)) => {
                fail(&mut r, cat, format!("unopt: {d}"));
                false
            }
        };
        if !ok {
            continue;
        }
        if cand.optimizes() {
            let req = CompileRequest { optimize: true, ..req };
            match (cand.compile(&req), &c.opt, c.opt_rejected) {
                (Err(e), _, true) if e.contains("rejects all packets") => {
                    r.figure("optimizer rejects all, as expected", 1);
                }
                (Err(e), _, _) => {
                    fail(&mut r, Category::CompileError, format!("opt: {e}"));
                    continue;
                }
                (Ok(p), Some(opt), _) => {
                    let Ok(exp) = sift_insn::text::parse(opt) else {
                        fail(&mut r, Category::ExpectedUnusable, "opt listing".into());
                        continue;
                    };
                    if p == exp.0 {
                        r.figure("identical programs (opt)", 1);
                    }
                    let set = sets.get(c.link);
                    if let Err((cat, d)) = check_same(&exp.0, &p, set, c.linuxext) {
                        fail(&mut r, cat, format!("opt: {d}"));
                        continue;
                    }
                }
                (Ok(_), None, _) => {
                    fail(&mut r, Category::Accepted, "opt: expected 'rejects all packets'".into());
                    continue;
                }
            }
        }
        r.passed += 1;
    }
    r.elapsed = start.elapsed();
    r
}

fn check_same(
    expected: &[Insn],
    actual: &[Insn],
    set: &PacketSet,
    linuxext: bool,
) -> Result<Agreement, (Category, String)> {
    let e = prepare(expected, linuxext).map_err(|e| (Category::ExpectedUnusable, e))?;
    let a = prepare(actual, linuxext).map_err(|e| (Category::Invalid, e))?;
    let mut ag = compare_on(&e, &a, set, linuxext).map_err(|d| (Category::Mismatch, d))?;
    // Then frames aimed at the constants both programs test.
    let seed = expected.len() as u64
        ^ (u64::from(expected.iter().map(|i| i.k).fold(0, u32::wrapping_add)) << 16);
    let aimed = PacketSet {
        link: set.link,
        frames: packets::directed(&[expected, actual], set, seed, DIRECTED_FRAMES),
        origins: packets::Origins::default(),
    };
    let more = compare_on(&e, &a, &aimed, linuxext)
        .map_err(|d| (Category::Mismatch, format!("directed {d}")))?;
    ag.runs += more.runs;
    ag.accepted += more.accepted;
    Ok(ag)
}

/// Records and reports a case the candidate cannot run here (it needs the name fixtures, or
/// libpcap skips it on this platform).
fn skipped(r: &mut Report, skip: Option<&Skip>, cand: &dyn Candidate) -> bool {
    let reason = skip_reason(skip, cand);
    if let Some(why) = &reason {
        r.skip(why.clone());
    }
    reason.is_some()
}

/// Reject cases: the candidate must refuse each. Figure: how often its message contains the
/// corpus's `errstr`.
pub fn check_reject(cand: &dyn Candidate, cases: &[RejectCase], opts: Options) -> Report {
    let start = std::time::Instant::now();
    let mut r = Report::new(format!("reject cases, candidate {}", cand.name()));
    for c in cases {
        r.total += 1;
        if skipped(&mut r, c.skip.as_ref(), cand) {
            continue;
        }
        let req = CompileRequest {
            expr: &c.expr,
            link: c.link,
            snaplen: crate::corpus::DEFAULT_SNAPLEN,
            netmask: c.netmask,
            optimize: cand.optimizes(),
            linuxext: false,
        };
        match cand.compile(&req) {
            Err(e) => {
                r.passed += 1;
                if e.contains(&c.errstr) {
                    r.figure("message contains errstr", 1);
                }
            }
            Ok(p) => r.fail(
                opts.max_failures,
                Failure {
                    case: c.name.clone(),
                    expr: c.expr.clone(),
                    link: c.link.name().unwrap_or_default(),
                    category: Category::Accepted,
                    detail: format!(
                        "compiled to {} instructions; expected {:?}",
                        p.len(),
                        c.errstr
                    ),
                },
            ),
        }
    }
    r.elapsed = start.elapsed();
    r
}

/// Apply cases: compile for the capture's link type and snapshot length (unoptimized, and
/// optimized when the candidate optimizes), run over the capture's packets with `sift-vm`, and
/// compare with the expected per-packet values.
pub fn check_apply(cand: &dyn Candidate, cases: &[ApplyCase], opts: Options) -> Report {
    let start = std::time::Instant::now();
    let mut r = Report::new(format!("apply cases, candidate {}", cand.name()));
    let mut captures: BTreeMap<std::path::PathBuf, Result<Capture, String>> = BTreeMap::new();
    for c in cases {
        r.total += 1;
        if skipped(&mut r, c.skip.as_ref(), cand) {
            continue;
        }
        let cap = captures.entry(c.savefile.clone()).or_insert_with(|| load_capture(&c.savefile));
        let (linktype, snaplen, frames) = match cap {
            Ok(x) => (x.0, x.1, &x.2),
            Err(e) => {
                let e = e.clone();
                r.fail(
                    opts.max_failures,
                    Failure {
                        case: c.name.clone(),
                        expr: c.expr.clone(),
                        link: "?",
                        category: Category::Capture,
                        detail: e,
                    },
                );
                continue;
            }
        };
        let known = u16::try_from(linktype).ok().map(LinkType::new).filter(|l| l.name().is_some());
        let Some(link) = known else {
            r.skip(format!("LINKTYPE {linktype} not in the table"));
            continue;
        };
        let mut ok = true;
        let modes: &[bool] = if cand.optimizes() { &[false, true] } else { &[false] };
        for &optimize in modes {
            let req = CompileRequest {
                expr: &c.expr,
                link,
                snaplen: snaplen as i32,
                netmask: c.netmask,
                optimize,
                linuxext: false,
            };
            let failure = |category, detail: String| Failure {
                case: c.name.clone(),
                expr: c.expr.clone(),
                link: link.name().unwrap_or_default(),
                category,
                detail: format!("{}: {detail}", if optimize { "opt" } else { "unopt" }),
            };
            let prog = match cand.compile(&req).and_then(|p| prepare(&p, false)) {
                Ok(p) => p,
                Err(e) => {
                    r.fail(opts.max_failures, failure(Category::CompileError, e));
                    ok = false;
                    break;
                }
            };
            let got: Vec<u32> = frames.iter().map(|f| run_one(&prog, f, false)).collect();
            if got != c.results {
                r.fail(
                    opts.max_failures,
                    failure(Category::Mismatch, format!("expected {:?}, got {got:?}", c.results)),
                );
                ok = false;
                break;
            }
        }
        if ok {
            r.passed += 1;
        }
    }
    r.elapsed = start.elapsed();
    r
}

/// A capture read for [`check_apply`]: LINKTYPE, snapshot length, packets.
type Capture = (u32, u32, Vec<packets::Frame>);

fn load_capture(path: &std::path::Path) -> Result<Capture, String> {
    let mut reader = sift_pcap::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut frames = Vec::new();
    let mut linktype = None;
    while let Some(p) = reader.next_packet().map_err(|e| format!("{}: {e}", path.display()))? {
        linktype.get_or_insert(u32::from(p.link_type.number()));
        frames.push(packets::Frame {
            data: p.data.to_vec(),
            meta: sift_vm::PacketMeta::new(p.wire_len),
        });
    }
    // pcapng interfaces are known only once their blocks have been read.
    let iface = reader.interfaces().first();
    let linktype = linktype.or(iface.map(|i| u32::from(i.link_type.number()))).unwrap_or(u32::MAX);
    let snaplen = iface.map_or(262_144, |i| i.snaplen);
    Ok((linktype, snaplen, frames))
}

/// The three corpus runners' reports.
#[derive(Clone, Debug)]
pub struct CorpusReports {
    /// [`check_accept`] over every accept case.
    pub accept: Report,
    /// [`check_reject`] over every reject case.
    pub reject: Report,
    /// [`check_apply`] over every apply case.
    pub apply: Report,
}

/// Runs [`check_accept`], [`check_reject`] and [`check_apply`] over the whole corpus with the
/// packet sets the calibration uses (per link type: 1,500 generated frames, 500 scrambled
/// copies, 195 short prefixes, 300 random frames and the corpus captures of that type).
pub fn check_corpus(cand: &dyn Candidate, corpus: &crate::Corpus) -> CorpusReports {
    let captures = sift_testkit::shared_dir().join("corpus").join("libpcap").join("captures");
    let mut sets = PacketSets::new(0x51f7, 1500, 300, Some(captures));
    CorpusReports {
        accept: check_accept(cand, &corpus.accept, &mut sets, Options::default()),
        reject: check_reject(cand, &corpus.reject, Options::default()),
        apply: check_apply(cand, &corpus.apply, Options::default()),
    }
}

/// Differential check: for each expression, the reference and the candidate must both refuse
/// it, or both compile it (unoptimized) to programs with the same value on every frame of
/// `set`. Figure: how many both compiled.
pub fn check_differential(
    cand: &dyn Candidate,
    reference: &dyn Candidate,
    exprs: &[String],
    set: &PacketSet,
    opts: Options,
) -> Report {
    let start = std::time::Instant::now();
    let mut r = Report::new(format!(
        "differential on {}, candidate {} vs {}",
        set.link,
        cand.name(),
        reference.name()
    ));
    for (n, expr) in exprs.iter().enumerate() {
        r.total += 1;
        let req = CompileRequest {
            expr,
            link: set.link,
            snaplen: crate::corpus::DEFAULT_SNAPLEN,
            netmask: NETMASK_UNKNOWN,
            optimize: false,
            linuxext: false,
        };
        let failure = |category, detail: String| Failure {
            case: format!("gen#{n}"),
            expr: expr.clone(),
            link: set.link.name().unwrap_or_default(),
            category,
            detail,
        };
        match (reference.compile(&req), cand.compile(&req)) {
            (Err(_), Err(_)) => {
                r.passed += 1;
                r.figure("both refused", 1);
            }
            (Ok(_), Err(e)) => r.fail(
                opts.max_failures,
                failure(Category::AcceptDiffers, format!("candidate refused: {e}")),
            ),
            (Err(e), Ok(_)) => r.fail(
                opts.max_failures,
                failure(
                    Category::AcceptDiffers,
                    format!("reference refused ({e}), candidate compiled"),
                ),
            ),
            (Ok(e), Ok(a)) => {
                r.figure("both compiled", 1);
                if e == a {
                    r.figure("identical programs", 1);
                }
                match check_same(&e, &a, set, false) {
                    Ok(ag) => {
                        r.passed += 1;
                        r.figure("packet runs", 2 * ag.runs);
                        if ag.discriminating() {
                            r.figure("expressions the set discriminates", 1);
                        }
                    }
                    Err((cat, d)) => r.fail(opts.max_failures, failure(cat, d)),
                }
            }
        }
    }
    r.elapsed = start.elapsed();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_normalize_alike() {
        let corpus = "\n(000) ldh      [12]                               ; 0x0028\n\
                      (001) jeq      #0x800           jt 2\tjf 3       ; 0x0015\n\
                      (002) ret      #262144                            ; 0x0006\n\
                      (003) ret      #0                                 ; 0x0006\n";
        let prog = sift_insn::text::parse(corpus).unwrap().0;
        assert_eq!(normalize_listing(&sift_insn::text::listing(&prog)), normalize_listing(corpus));
    }
}
