//! Calibration: every runner with the system libpcap (1.10) as the candidate.
//!
//! If libpcap's own compiler passes the harness, except for the documented differences between
//! 1.10 and the 1.11 that wrote the corpus (`sift_filetests::known`), then the harness can be
//! trusted to judge sift's compiler. The tests skip without libpcap or the corpus, and fail
//! under `SIFT_REQUIRE_ORACLES=1`.

use std::collections::BTreeMap;

use sift_filetests::{
    Category, CompileRequest, Corpus, ExprGen, FnCandidate, LibpcapCandidate, LinkType, Options,
    PacketSets, check_accept, check_apply, check_differential, check_reject, known,
};
use sift_libpcap::Libpcap;

/// Runner options; `SIFT_FILETESTS_FAILURES=N` shows N failures in detail (default 20).
fn opts() -> Options {
    let n = std::env::var("SIFT_FILETESTS_FAILURES").ok().and_then(|v| v.parse().ok());
    Options { max_failures: n.unwrap_or(20) }
}

fn pcap() -> Option<Libpcap> {
    sift_testkit::oracle("system libpcap", Libpcap::load())
}

fn corpus_and_pcap() -> Option<(Corpus, Libpcap, std::path::PathBuf)> {
    let dir = sift_testkit::libpcap_corpus()?;
    let corpus = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir))?;
    Some((corpus, pcap()?, dir.join("captures")))
}

/// Accept cases: libpcap 1.10's unoptimized programs against 1.11's listings, on every frame.
#[test]
fn accept_cases_with_libpcap_as_candidate() {
    let Some((corpus, pcap, captures)) = corpus_and_pcap() else { return };
    let cand = LibpcapCandidate { pcap: &pcap, optimize: false };
    let mut sets = PacketSets::new(0x51f7, 1500, 300, Some(captures));
    let report = check_accept(&cand, &corpus.accept, &mut sets, opts());
    println!("{report}");
    for set in sets.built() {
        println!(
            "  packets {:>24}: {:>5} {:?}",
            set.link.name().unwrap(),
            set.frames.len(),
            set.origins
        );
    }
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for f in &report.all_failures {
        match known::classify(f) {
            Some(k) => *by_category.entry(k).or_default() += 1,
            None => unexplained.push(f.to_string()),
        }
    }
    println!("known 1.10-vs-1.11 differences: {by_category:#?}");
    assert!(report.total > 2000, "corpus too small: {}", report.total);
    assert!(report.passed > 1500, "too few accept cases passed: {}", report.passed);
    assert!(
        unexplained.is_empty(),
        "{} unexplained accept failures:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(report.failed() <= known::ACCEPT_FAILURE_BOUND, "{} failures", report.failed());
}

/// Reject cases: how many libpcap 1.10 also refuses.
#[test]
fn reject_cases_with_libpcap_as_candidate() {
    let Some((corpus, pcap, _)) = corpus_and_pcap() else { return };
    // TESTrun compiles reject cases optimized: "expression rejects all packets" is the
    // optimizer's verdict.
    let cand = LibpcapCandidate { pcap: &pcap, optimize: true };
    let report = check_reject(&cand, &corpus.reject, opts());
    println!("{report}");
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.all_failures {
        *by_category.entry(known::classify(f).unwrap_or("unexplained")).or_default() += 1;
    }
    println!("reject failures by category: {by_category:#?}");
    assert!(report.passed > 9_900, "too few rejects: {}", report.passed);
    assert!(!by_category.contains_key("unexplained"), "{report}\n{by_category:#?}");
    assert!(report.failed() <= known::REJECT_FAILURE_BOUND, "{} failures", report.failed());
}

/// Apply cases: optimized and unoptimized, against the recorded per-packet results.
#[test]
fn apply_cases_with_libpcap_as_candidate() {
    let Some((corpus, pcap, _)) = corpus_and_pcap() else { return };
    let cand = LibpcapCandidate { pcap: &pcap, optimize: true };
    let report = check_apply(&cand, &corpus.apply, opts());
    println!("{report}");
    let unexplained: Vec<_> =
        report.all_failures.iter().filter(|f| known::classify(f).is_none()).collect();
    assert!(report.passed >= 130, "only {} apply cases passed", report.passed);
    assert!(unexplained.is_empty(), "{unexplained:#?}");
    assert!(report.failed() <= known::APPLY_FAILURE_BOUND, "{} failures", report.failed());
}

/// Differential: libpcap against itself through the harness must agree on everything (checks
/// the generator's expressions, the packet sets and the runner), and most expressions compile.
#[test]
fn differential_libpcap_against_itself() {
    let Some(pcap) = pcap() else { return };
    let a = LibpcapCandidate { pcap: &pcap, optimize: false };
    let b = LibpcapCandidate { pcap: &pcap, optimize: false };
    for (i, name) in ["EN10MB", "LINUX_SLL", "RAW"].into_iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let mut sets = PacketSets::new(0xd1ff + i as u64, 800, 150, None);
        let set = sets.get(link).clone();
        let exprs = ExprGen::new(0xe4 + i as u64, name).take(1500);
        let report = check_differential(&a, &b, &exprs, &set, opts());
        println!("{report}");
        assert_eq!(report.failed(), 0, "{report}");
        let compiled = report.figures.get("both compiled").copied().unwrap_or(0);
        assert!(
            compiled * 10 >= exprs.len() * 7,
            "{name}: only {compiled} of {} compiled",
            exprs.len()
        );
    }
}

/// The expression generator and the wrapped packet sets on more link types: libpcap against
/// itself must agree, and most generated expressions must compile for each link type.
#[test]
fn differential_more_link_types() {
    let Some(pcap) = pcap() else { return };
    let a = LibpcapCandidate { pcap: &pcap, optimize: false };
    for (i, name) in ["IEEE802_11", "IEEE802_11_RADIO", "LINUX_SLL2", "NULL", "PPP", "FDDI", "IPV4"]
        .into_iter()
        .enumerate()
    {
        let link = LinkType::from_name(name).unwrap();
        let mut sets = PacketSets::new(0x3a + i as u64, 600, 100, None);
        let set = sets.get(link).clone();
        let exprs = ExprGen::new(0x3a + i as u64, name).take(400);
        let report = check_differential(&a, &a, &exprs, &set, opts());
        println!("{report}");
        assert_eq!(report.failed(), 0, "{report}");
        let compiled = report.figures.get("both compiled").copied().unwrap_or(0);
        assert!(
            compiled * 10 >= exprs.len() * 6,
            "{name}: only {compiled} of {} compiled",
            exprs.len()
        );
    }
}

/// The optimizer of libpcap against the unoptimized program: the differential runner with a
/// different reference (exercises `optimize` in the request and catches harness bugs that
/// self-comparison cannot).
#[test]
fn differential_optimized_against_unoptimized() {
    let Some(pcap) = pcap() else { return };
    let unopt = LibpcapCandidate { pcap: &pcap, optimize: false };
    let opt = sift_filetests::FnCandidate::new(
        "libpcap -O",
        |req: &sift_filetests::CompileRequest<'_>| {
            pcap.compile(req.link, req.snaplen, req.expr, true, req.netmask)
        },
    );
    let link = LinkType::from_name("EN10MB").unwrap();
    let mut sets = PacketSets::new(0x0b7, 800, 150, None);
    let set = sets.get(link).clone();
    let exprs = ExprGen::new(0x0b7, "EN10MB").take(1000);
    let report = check_differential(&opt, &unopt, &exprs, &set, opts());
    println!("{report}");
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.all_failures {
        *by.entry(known::classify(f).unwrap_or("unexplained")).or_default() += 1;
    }
    println!("{by:#?}");
    assert!(!by.contains_key("unexplained"), "{report}");
    assert!(report.failed() <= known::OPT_DIFFERENCE_BOUND, "{} differences", report.failed());
}

/// The corpus's own listings as the candidate: every runnable accept case must pass, including
/// the Linux-extension cases libpcap cannot compile offline (checks the runner's ancillary-data
/// path and that every expected listing parses and runs).
#[test]
fn accept_cases_with_the_corpus_as_candidate() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    // One candidate per case (the corpus has cases with the same compile context and different
    // programs, e.g. for swapped and unswapped savefiles), merged into one tally.
    let mut sets = PacketSets::new(0x51f7, 300, 100, None);
    let (mut passed, mut failed, mut linuxext) = (0, Vec::new(), 0);
    for case in corpus.accept.iter().filter(|c| c.skip.is_none()) {
        let cand = FnCandidate::new("corpus listing", |_: &CompileRequest<'_>| {
            sift_insn::text::parse(&case.unopt).map(|p| p.0).map_err(|e| e.to_string())
        });
        let report = check_accept(&cand, std::slice::from_ref(case), &mut sets, opts());
        passed += report.passed;
        linuxext += usize::from(case.linuxext && report.passed == 1);
        failed.extend(report.failures.iter().map(|f| f.to_string()));
    }
    println!("corpus as candidate: {passed} passed ({linuxext} with Linux extensions)");
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(passed > 1800 && linuxext == 12, "{passed} passed, {linuxext} with Linux extensions");
}

/// Deliberately wrong candidates (libpcap's program with one jump changed) must be caught:
/// this measures how well the packet sets tell programs apart. Mutating the first `jeq #k`
/// (almost always the link-type test) must be caught nearly always; swapping the branches of a
/// conditional jump in the middle of the program is reported as a figure.
#[test]
fn mutants_are_caught() {
    let Some((corpus, pcap, _)) = corpus_and_pcap() else { return };
    let cases: Vec<_> = corpus
        .accept
        .iter()
        .filter(|c| matches!(c.link.name().unwrap(), "EN10MB" | "RAW" | "IEEE802_11" | "LINUX_SLL"))
        .cloned()
        .collect();
    let mut sets = PacketSets::new(0x51f7, 1500, 300, None);
    type Mutation = fn(&mut [sift_insn::Insn]) -> bool;
    let first_jeq: Mutation = |p| match p.iter().position(|i| i.code == 0x15 && i.k != 0) {
        Some(i) => {
            p[i].k ^= 1;
            true
        }
        None => false,
    };
    let swap_branches: Mutation = |p| {
        let jumps: Vec<usize> =
            (0..p.len()).filter(|&i| p[i].code & 0x07 == 0x05 && p[i].code != 0x05).collect();
        match jumps.get(jumps.len() / 2) {
            Some(&i) if p[i].jt != p[i].jf => {
                let (t, f) = (p[i].jt, p[i].jf);
                p[i].jt = f;
                p[i].jf = t;
                true
            }
            _ => false,
        }
    };
    for (name, mutation, min_percent) in [
        ("first jeq #k changed", first_jeq, 80),
        ("middle jump's branches swapped", swap_branches, 75),
    ] {
        let mutated = std::cell::Cell::new(0usize);
        let cand = FnCandidate::new(name, |req: &CompileRequest<'_>| {
            let mut p = pcap.compile(req.link, req.snaplen, req.expr, false, req.netmask)?;
            if mutation(&mut p) {
                mutated.set(mutated.get() + 1);
            } else {
                // Nothing to mutate: make it obviously the same so it is not counted.
                return Err("not mutated".into());
            }
            Ok(p)
        });
        let report = check_accept(&cand, &cases, &mut sets, Options { max_failures: 0 });
        let caught = report.categories.get(&Category::Mismatch).copied().unwrap_or(0);
        println!("mutants ({name}): {} made, {caught} caught", mutated.get());
        assert!(
            caught * 100 >= mutated.get() * min_percent,
            "{name}: caught {caught} of {} mutants",
            mutated.get()
        );
    }
}

/// Accept cases through the optimizer: libpcap 1.10's optimized programs against 1.11's `opt`
/// listings (and "rejects all packets" verdicts). Failures are those of the unoptimized run
/// plus one 1.10 optimizer bug.
#[test]
fn accept_cases_optimized_with_libpcap_as_candidate() {
    let Some((corpus, pcap, captures)) = corpus_and_pcap() else { return };
    let cand = LibpcapCandidate { pcap: &pcap, optimize: true };
    let mut sets = PacketSets::new(0x51f7, 1500, 300, Some(captures));
    let report = check_accept(&cand, &corpus.accept, &mut sets, opts());
    println!("{report}");
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.all_failures {
        *by_category.entry(known::classify(f).unwrap_or("unexplained")).or_default() += 1;
    }
    println!("{by_category:#?}");
    assert!(!by_category.contains_key("unexplained"), "{report}\n{by_category:#?}");
    assert!(report.failed() <= known::ACCEPT_FAILURE_BOUND, "{} failures", report.failed());
    assert!(report.figures.get("identical programs (opt)").copied().unwrap_or(0) > 1400);
}
