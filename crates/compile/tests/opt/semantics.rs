//! The optimizer's gate: optimized and unoptimized programs return the same value on every
//! packet (generated, scrambled, truncated, random frames, the corpus captures, and frames
//! aimed at the programs' constants), for the libpcap corpus's accept cases, for generated
//! expressions on every supported link type, and for random well-typed expression trees
//! (`proptest`). "Rejects all packets" must only be said of programs that reject every frame.
//! Run with `--nocapture` for the figures.

use crate::common::unoptimized;
use proptest::prelude::*;
use sift_compile::CompileErrorKind;
use sift_compile::build::{Builder, Cmp, Load, Pred, Value};
use sift_compile::ir::{AluOp, Size};
use sift_compile::pipeline::{self, Options as Pipeline};
use sift_filetests::packets::{Frame, directed};
use sift_filetests::{
    Candidate, Category, CompileRequest, Corpus, ExprGen, LinkType, Options, PacketSet, PacketSets,
    check_apply,
};
use sift_filter::{Layered, SystemResolver, TableResolver};
use sift_insn::{Insn, Program};
use sift_vm::{Flavor, Interpreter};

fn interpreter(prog: &[Insn], linuxext: bool) -> Interpreter {
    let v = sift_verify::validate(prog, sift_verify::Mode::LibpcapLoops).expect("valid program");
    Interpreter::with_flavor(&v, if linuxext { Flavor::Linux } else { Flavor::Libpcap })
}

fn run(i: &Interpreter, f: &Frame, linuxext: bool) -> u32 {
    if linuxext { i.run_with_meta(&f.data, &f.meta) } else { i.run(&f.data, f.wire_len()) }
}

/// Compares two programs on the set and on frames aimed at their constants.
fn same(unopt: &[Insn], opt: &[Insn], set: &PacketSet, linuxext: bool) -> Result<(), String> {
    let (u, o) = (interpreter(unopt, linuxext), interpreter(opt, linuxext));
    let aimed = directed(&[unopt, opt], set, unopt.len() as u64, 48);
    for (n, f) in set.frames.iter().chain(&aimed).enumerate() {
        let (a, b) = (run(&u, f, linuxext), run(&o, f, linuxext));
        if a != b {
            return Err(format!(
                "frame {n} (caplen {}, wire {}): unoptimized {a}, optimized {b}",
                f.data.len(),
                f.wire_len()
            ));
        }
    }
    Ok(())
}

/// Rejects every frame of the set and the aimed frames.
fn rejects_everything(unopt: &[Insn], set: &PacketSet, linuxext: bool) -> bool {
    let u = interpreter(unopt, linuxext);
    let aimed = directed(&[unopt], set, 7, 48);
    set.frames.iter().chain(&aimed).all(|f| run(&u, f, linuxext) == 0)
}

#[derive(Default, Debug)]
struct Tally {
    compared: usize,
    rejects_all: usize,
    refused: usize,
    wrong: Vec<String>,
}

fn check(
    t: &mut Tally,
    name: &str,
    src: &str,
    opts: &Pipeline<'_>,
    set: &PacketSet,
) -> Option<(Program, Program)> {
    let unopt = match pipeline::compile(src, &opts.optimize(false)) {
        Ok(c) => c.program.to_program(),
        // The pipeline validates: an invalid program is a bug, not a refusal.
        Err(e)
            if matches!(e.kind, CompileErrorKind::Invalid(_) | CompileErrorKind::Internal(_)) =>
        {
            t.wrong.push(format!("{name} `{src}`: {e}"));
            return None;
        }
        Err(_) => {
            t.refused += 1;
            return None;
        }
    };
    match pipeline::compile(src, &opts.optimize(true)) {
        Ok(opt) => {
            let opt = opt.program.to_program();
            t.compared += 1;
            if let Err(e) = same(&unopt.0, &opt.0, set, opts.linux_ext) {
                t.wrong.push(format!("{name} `{src}`: {e}"));
            }
            Some((unopt, opt))
        }
        Err(e) if e.is_rejects_all() => {
            t.rejects_all += 1;
            if !rejects_everything(&unopt.0, set, opts.linux_ext) {
                t.wrong.push(format!("{name} `{src}`: 'rejects all' but some frame is accepted"));
            }
            None
        }
        Err(e) => {
            t.wrong.push(format!("{name} `{src}`: optimized compile failed: {e}"));
            None
        }
    }
}

#[test]
fn corpus_optimized_equals_unoptimized() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let mut fixtures = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        fixtures.load_mixed(&text);
    }
    let resolver = Layered(fixtures, SystemResolver::new());
    let mut sets = PacketSets::new(0x0971, 600, 150, Some(dir.join("captures")));
    let mut t = Tally::default();
    let mut rejects_agree = (0, 0);
    for c in corpus
        .accept
        .iter()
        .filter(|c| crate::common::FIXED_LINKS.contains(&c.link.name().unwrap()))
    {
        let opts = unoptimized(c.link, &resolver)
            .snaplen(c.snaplen as u32)
            .netmask((c.netmask != 0xffff_ffff).then_some(c.netmask))
            .linux_ext(c.linuxext);
        let before = t.rejects_all;
        let set = sets.get(c.link);
        check(&mut t, &c.name, &c.expr, &opts, set);
        if t.rejects_all > before {
            rejects_agree.1 += 1;
            rejects_agree.0 += usize::from(c.opt_rejected);
        }
    }
    println!(
        "corpus: {} compared, {} rejects-all ({} of them also in libpcap), {} refused by the \
         generator, {} wrong",
        t.compared,
        t.rejects_all,
        rejects_agree.0,
        t.refused,
        t.wrong.len()
    );
    assert!(t.wrong.is_empty(), "{} wrong:\n{}", t.wrong.len(), t.wrong.join("\n"));
    assert!(t.compared >= 900, "only {} compared", t.compared);
}

#[test]
fn generated_expressions_optimized_equals_unoptimized() {
    let resolver = SystemResolver::new();
    let mut t = Tally::default();
    for (i, name) in crate::common::FIXED_LINKS.iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let set = PacketSet::generate(link, 0x0e + i as u64, 500, 120);
        let opts = unoptimized(link, &resolver);
        let n = if *name == "EN10MB" { 1500 } else { 300 };
        for (k, src) in ExprGen::new(0x5eed + i as u64, name).take(n).iter().enumerate() {
            check(&mut t, &format!("{name}#{k}"), src, &opts, &set);
        }
    }
    println!(
        "generated: {} compared, {} rejects-all, {} refused by the generator, {} wrong",
        t.compared,
        t.rejects_all,
        t.refused,
        t.wrong.len()
    );
    assert!(t.wrong.is_empty(), "{} wrong:\n{}", t.wrong.len(), t.wrong.join("\n"));
    assert!(t.compared >= 3000, "only {} compared", t.compared);
}

/// sift with the optimizer, as the harness's candidate.
struct Optimizing {
    resolver: Layered<TableResolver, SystemResolver>,
    /// `(expression, link type)` of every refusal of something sift does not support yet.
    unsupported: std::cell::RefCell<std::collections::BTreeSet<(String, &'static str)>>,
}

impl Optimizing {
    /// Whether the failure is a refusal of something sift does not support yet.
    fn unsupported(&self, f: &sift_filetests::Failure) -> bool {
        f.category == Category::CompileError
            && self.unsupported.borrow().contains(&(f.expr.clone(), f.link))
    }
}

impl Candidate for Optimizing {
    fn name(&self) -> String {
        "sift-compile (optimizing)".into()
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<Insn>, String> {
        let opts = unoptimized(req.link, &self.resolver)
            .snaplen(req.snaplen as u32)
            .netmask((req.netmask != 0xffff_ffff).then_some(req.netmask))
            .linux_ext(req.linuxext)
            .optimize(req.optimize);
        pipeline::compile(req.expr, &opts).map(|c| c.program.insns().to_vec()).map_err(|e| {
            if e.is_unsupported() {
                self.unsupported
                    .borrow_mut()
                    .insert((req.expr.to_string(), req.link.name().unwrap()));
            }
            e.libpcap_message()
        })
    }
    fn optimizes(&self) -> bool {
        true
    }
    fn supports_linuxext(&self) -> bool {
        true
    }
    fn resolves_name_fixtures(&self) -> bool {
        true
    }
}

/// The corpus's apply cases (filters run over capture files with expected per-packet
/// results), compiled unoptimized and optimized: every case sift supports passes both ways.
#[test]
fn apply_cases_pass_optimized() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let mut fixtures = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        fixtures.load_mixed(&text);
    }
    let cand = Optimizing {
        resolver: Layered(fixtures, SystemResolver::new()),
        unsupported: Default::default(),
    };
    let r = check_apply(&cand, &corpus.apply, Options { max_failures: 50 });
    let unsupported = r.all_failures.iter().filter(|f| cand.unsupported(f)).count();
    // Failures of the unoptimized program that the harness explains as libpcap 1.10-vs-1.11
    // differences are the code generator's business, not the optimizer's.
    let explained = r
        .all_failures
        .iter()
        .filter(|f| !cand.unsupported(f))
        .filter(|f| f.detail.starts_with("unopt:") && sift_filetests::known::classify(f).is_some())
        .count();
    let wrong: Vec<String> = r
        .all_failures
        .iter()
        .filter(|f| {
            let unsupported = cand.unsupported(f);
            let explained =
                f.detail.starts_with("unopt:") && sift_filetests::known::classify(f).is_some();
            !(unsupported || explained)
        })
        .map(|f| f.to_string())
        .collect();
    println!(
        "apply: {} cases, {} passed (unoptimized and optimized), {unsupported} not supported by sift yet, {} skipped, {explained} known 1.10/1.11 differences (unoptimized too), {} other failures",
        r.total,
        r.passed,
        r.skipped.values().sum::<usize>(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(r.passed >= 1, "no apply case passed");
}

// ---- random well-typed trees through the builder ------------------------------------------

#[derive(Clone, Debug)]
enum Arith {
    Imm(u32),
    Len,
    Pkt(Box<Arith>, Size),
    Op(AluOp, Box<Arith>, Box<Arith>),
    Neg(Box<Arith>),
}

#[derive(Clone, Debug)]
enum Tree {
    Cmp { size: Size, off: u32, cmp: Cmp, value: u32, mask: u32 },
    Ind { off: u32, cmp: Cmp, value: u32 },
    Rel(Cmp, Arith, Arith),
    True,
    False,
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

fn size() -> impl Strategy<Value = Size> {
    prop_oneof![Just(Size::B), Just(Size::H), Just(Size::W)]
}

fn cmp() -> impl Strategy<Value = Cmp> {
    prop_oneof![
        Just(Cmp::Eq),
        Just(Cmp::Ne),
        Just(Cmp::Gt),
        Just(Cmp::Ge),
        Just(Cmp::Lt),
        Just(Cmp::Le),
        Just(Cmp::Set),
        Just(Cmp::Clear)
    ]
}

/// Small values, so that comparisons on packet bytes go both ways.
fn small() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..4, Just(0xff), Just(0xffff_ffff), Just(0x8000_0000), any::<u32>()]
}

fn arith() -> impl Strategy<Value = Arith> {
    let leaf = prop_oneof![small().prop_map(Arith::Imm), Just(Arith::Len)];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let op = prop_oneof![
            Just(AluOp::Add),
            Just(AluOp::Sub),
            Just(AluOp::Mul),
            Just(AluOp::Div),
            Just(AluOp::Mod),
            Just(AluOp::And),
            Just(AluOp::Or),
            Just(AluOp::Xor),
            Just(AluOp::Lsh),
            Just(AluOp::Rsh)
        ];
        prop_oneof![
            (inner.clone(), size()).prop_map(|(a, s)| Arith::Pkt(Box::new(a), s)),
            (op, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Arith::Op(
                o,
                Box::new(a),
                Box::new(b)
            )),
            inner.prop_map(|a| Arith::Neg(Box::new(a))),
        ]
    })
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        4 => (size(), 0u32..24, cmp(), small(), prop_oneof![Just(u32::MAX), small()])
            .prop_map(|(size, off, cmp, value, mask)| Tree::Cmp { size, off, cmp, value, mask }),
        1 => (0u32..8, cmp(), small()).prop_map(|(off, cmp, value)| Tree::Ind { off, cmp, value }),
        1 => (cmp(), arith(), arith()).prop_map(|(c, a, b)| Tree::Rel(c, a, b)),
        1 => Just(Tree::True),
        1 => Just(Tree::False),
    ];
    leaf.prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Tree::Not(Box::new(t))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Tree::Or(Box::new(a), Box::new(b))),
        ]
    })
}

fn value(b: &mut Builder, a: &Arith) -> Option<Value> {
    Some(match a {
        Arith::Imm(k) => b.imm(*k).ok()?,
        Arith::Len => b.len().ok()?,
        Arith::Pkt(i, size) => {
            let i = value(b, i)?;
            b.load(i, &[], 0, *size, None).ok()?
        }
        Arith::Op(op, x, y) => {
            let x = value(b, x)?;
            let y = value(b, y)?;
            b.arith(*op, x, y).ok()?
        }
        Arith::Neg(x) => {
            let x = value(b, x)?;
            b.neg(x)
        }
    })
}

fn build(b: &mut Builder, t: &Tree) -> Option<Pred> {
    Some(match t {
        Tree::Cmp { size, off, cmp, value, mask } => {
            b.cmp(Load::Abs(*size, *off), *cmp, *value, *mask)
        }
        Tree::Ind { off, cmp, value } => b.cmp(Load::AfterIpv4(0, Size::B, *off), *cmp, *value, !0),
        Tree::Rel(c, x, y) => {
            let x = value(b, x)?;
            let y = value(b, y)?;
            b.relation(*c, x, y)
        }
        Tree::True => b.always(),
        Tree::False => b.never(),
        Tree::Not(t) => !build(b, t)?,
        Tree::And(x, y) => {
            let x = build(b, x)?;
            let y = build(b, y)?;
            b.and(x, y)
        }
        Tree::Or(x, y) => {
            let x = build(b, x)?;
            let y = build(b, y)?;
            b.or(x, y)
        }
    })
}

fn frames() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let byte = prop_oneof![0u8..4, Just(0xff), Just(0x45), any::<u8>()];
    prop::collection::vec(prop::collection::vec(byte, 0..40), 24..48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Random trees: the optimized program returns what the unoptimized one returns on random
    /// short packets (many of them too short for some load).
    #[test]
    fn random_trees_optimized_equals_unoptimized(t in tree(), pkts in frames()) {
        let mut b = Builder::new();
        let Some(p) = build(&mut b, &t) else { return Ok(()) };
        let cfg = b.finish(p, 0x40000);
        let unopt = sift_compile::emit::emit(&cfg).unwrap();
        let mut opt_cfg = cfg.clone();
        sift_compile::optimize(&mut opt_cfg);
        let opt = sift_compile::emit::emit(&opt_cfg).unwrap();
        let (u, o) = (interpreter(&unopt.0, false), interpreter(&opt.0, false));
        for pkt in &pkts {
            for wire in [pkt.len() as u32, pkt.len() as u32 + 100] {
                prop_assert_eq!(u.run(pkt, wire), o.run(pkt, wire), "{:?}\nunopt:\n{}\nopt:\n{}",
                    pkt, sift_insn::text::listing(&unopt.0), sift_insn::text::listing(&opt.0));
            }
        }
        // Optimizing again changes nothing (fixed point).
        let mut again = opt_cfg.clone();
        sift_compile::optimize(&mut again);
        prop_assert_eq!(sift_compile::emit::emit(&again).unwrap(), opt);
    }
}
