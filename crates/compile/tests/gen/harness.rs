//! The code generator as the harness's candidate: the libpcap corpus's accept cases on the
//! supported link types, and a differential run against the system libpcap on generated
//! expressions. Wrong answers (a program that returns another value on some packet, or
//! compiling what libpcap refuses) must be zero; refusals of what sift does not support yet
//! ([`sift_compile::CompileError::is_unsupported`]) are counted apart. Errors reach the harness
//! in libpcap's wording ([`sift_compile::CompileError::libpcap_message`]), which the reject
//! cases compare with the corpus. Run with `--nocapture` for the figures.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::common::unoptimized;
use sift_compile::pipeline;
use sift_filetests::{
    Candidate, Category, CompileRequest, Corpus, ExprGen, Failure, LibpcapCandidate, LinkType,
    Options, PacketSets, Report, check_accept, check_apply, check_differential, check_reject,
    known,
};
use sift_filter::{Layered, Resolver, SystemResolver, TableResolver};
use sift_libpcap::Libpcap;

/// The link types of the corpus's accept cases (every one the generator models).
const LINKS: &[&str] = &[
    "EN10MB",
    "RAW",
    "IPV4",
    "IPV6",
    "LINUX_SLL",
    "LINUX_SLL2",
    "NULL",
    "LOOP",
    "PPP",
    "C_HDLC",
    "FDDI",
    "IEEE802",
    "SLIP",
    "ENC",
    "PFLOG",
    "IEEE802_11",
    "IEEE802_11_RADIO",
    "IEEE802_11_RADIO_AVS",
    "PRISM_HEADER",
    "PPI",
    "PPP_SERIAL",
    "PPP_PPPD",
    "PPP_ETHER",
    "IP_OVER_FC",
    "NETANALYZER",
    "NETANALYZER_TRANSPARENT",
    "DSA_TAG_BRCM",
    "DSA_TAG_DSA",
    "ARCNET",
    "ARCNET_LINUX",
    "FRELAY",
    "SUNATM",
    "ATM_RFC1483",
    "ATM_CLIP",
    "IPNET",
    "LTALK",
    "PPP_BSDOS",
    "SLIP_BSDOS",
    "SYMANTEC_FIREWALL",
    "APPLE_IP_OVER_IEEE1394",
    "JUNIPER_MFR",
    "BACNET_MS_TP",
    "MTP2",
];

struct Sift {
    resolver: Box<dyn Resolver>,
    fixtures: bool,
    /// `(expression, link type)` of every refusal of something sift does not support yet.
    unsupported: RefCell<BTreeSet<(String, &'static str)>>,
}

impl Sift {
    fn new(resolver: Box<dyn Resolver>, fixtures: bool) -> Sift {
        Sift { resolver, fixtures, unsupported: RefCell::default() }
    }

    /// Whether the failure is a refusal of something sift does not support yet.
    fn unsupported(&self, f: &Failure) -> bool {
        self.unsupported.borrow().contains(&(f.expr.clone(), f.link))
    }
}

impl Candidate for Sift {
    fn name(&self) -> String {
        "sift-compile".into()
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Vec<sift_insn::Insn>, String> {
        let opts = unoptimized(req.link, &*self.resolver)
            .snaplen(req.snaplen as u32)
            .netmask((req.netmask != 0xffff_ffff).then_some(req.netmask))
            .linux_ext(req.linuxext);
        pipeline::compile(req.expr, &opts).map(|c| c.program.insns().to_vec()).map_err(|e| {
            if e.is_unsupported() {
                self.unsupported
                    .borrow_mut()
                    .insert((req.expr.to_string(), req.link.name().unwrap()));
            }
            e.libpcap_message()
        })
    }
    fn supports_linuxext(&self) -> bool {
        true
    }
    fn resolves_name_fixtures(&self) -> bool {
        self.fixtures
    }
}

fn opts() -> Options {
    let n = std::env::var("SIFT_FILETESTS_FAILURES").ok().and_then(|v| v.parse().ok());
    Options { max_failures: n.unwrap_or(20) }
}

/// `(unsupported refusals, other refusals, wrong answers)` of a report; wrong answers are
/// listed in the third element.
fn tally(cand: &Sift, r: &Report, explained: bool) -> (usize, Vec<String>, Vec<String>) {
    let (mut unsupported, mut refused, mut wrong) = (0, Vec::new(), Vec::new());
    for f in &r.all_failures {
        let refusal = f.category == Category::CompileError
            || (f.category == Category::AcceptDiffers && f.detail.starts_with("candidate refused"));
        if refusal && cand.unsupported(f) {
            unsupported += 1;
        } else if refusal && explained && known::classify(f).is_some() {
            // What libpcap 1.10 (tcpdump's library) refuses too, and 1.11 compiles: counted
            // with the known differences.
        } else if refusal {
            refused.push(f.to_string());
        } else if !(explained && known::classify(f).is_some()) {
            // In a differential run only disagreements about compiling at all can be version
            // differences (libpcap 1.11 features sift follows); a program difference is wrong.
            let version = f.category == Category::AcceptDiffers && known::classify(f).is_some();
            if !version {
                wrong.push(f.to_string());
            }
        }
    }
    (unsupported, refused, wrong)
}

#[test]
fn corpus_accept_cases_on_supported_link_types() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let mut fixtures = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        fixtures.load_mixed(&text);
    }
    let cand = Sift::new(Box::new(Layered(fixtures, SystemResolver::new())), true);
    let mut sets = PacketSets::new(0x51f7, 1000, 200, Some(dir.join("captures")));
    let (mut passed, mut all_wrong, mut all_refused) = (0, Vec::new(), Vec::new());
    for link in LINKS {
        let cases: Vec<_> =
            corpus.accept.iter().filter(|c| c.link.name().unwrap() == *link).cloned().collect();
        let r = check_accept(&cand, &cases, &mut sets, opts());
        let (unsupported, refused, wrong) = tally(&cand, &r, true);
        let explained = r.failed() - unsupported - refused.len() - wrong.len();
        println!(
            "accept {link:>10}: {:>4} cases, {:>4} passed, {:>3} unsupported, {:>3} refused, \
             {:>3} wrong, {:>3} known 1.10/1.11 differences, {:>3} skipped, {} identical listings",
            r.total,
            r.passed,
            unsupported,
            refused.len(),
            wrong.len(),
            explained,
            r.skipped.values().sum::<usize>(),
            r.figures.get("identical programs (unopt)").copied().unwrap_or(0),
        );
        if std::env::var("SIFT_SHOW_UNSUPPORTED").is_ok() {
            let mut by: BTreeMap<String, usize> = BTreeMap::new();
            for f in r.all_failures.iter().filter(|f| cand.unsupported(f)) {
                *by.entry(f.detail.clone()).or_default() += 1;
            }
            println!("{by:#?}");
        }
        passed += r.passed;
        all_wrong.extend(wrong);
        all_refused.extend(refused);
    }
    println!("accept total passed: {passed}");
    for f in &all_refused {
        println!("  refused: {f}");
    }
    assert!(all_wrong.is_empty(), "{} wrong answers:\n{}", all_wrong.len(), all_wrong.join("\n"));
    assert!(passed >= 2103, "only {passed} accept cases passed (pinned: 2103)");
}

fn fixture_candidate(dir: &std::path::Path) -> Sift {
    let mut fixtures = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        fixtures.load_mixed(&text);
    }
    Sift::new(Box::new(Layered(fixtures, SystemResolver::new())), true)
}

/// Reject cases: sift must refuse every one. TESTrun compiles them optimized, so the cases
/// whose error is the optimizer's "expression rejects all packets" cannot be refused by an
/// unoptimized compile: for those, sift's program must return 0 on every frame of the link
/// type's packet set instead (counted apart).
#[test]
fn corpus_reject_cases() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let cand = fixture_candidate(&dir);
    let (optimizer, rest): (Vec<_>, Vec<_>) =
        corpus.reject.iter().cloned().partition(|c| c.errstr == "expression rejects all packets");
    let r = check_reject(&cand, &rest, opts());
    let unsupported = r.all_failures.len();
    let mut by_link: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in &rest {
        by_link.entry(c.link.name().unwrap()).or_default().0 += 1;
    }
    for f in &r.all_failures {
        by_link.entry(f.link).or_default().1 += 1;
    }
    // Refusals: with libpcap's message, or sift's "not supported" (the link type or feature).
    let mut sets = PacketSets::new(0x7e1, 600, 100, Some(dir.join("captures")));
    let mut all_zero = 0;
    let mut wrong_zero = Vec::new();
    for c in &optimizer {
        let req = CompileRequest {
            expr: &c.expr,
            link: c.link,
            snaplen: 262_144,
            netmask: c.netmask,
            optimize: false,
            linuxext: false,
        };
        match cand.compile(&req) {
            Err(_) => all_zero += 1,
            Ok(p) => {
                let Ok(v) = sift_verify::validate(&p, sift_verify::Mode::LibpcapLoops) else {
                    wrong_zero.push(format!("{}: invalid program", c.name));
                    continue;
                };
                let vm = sift_vm::Interpreter::new(&v);
                let set = sets.get(c.link);
                match set.frames.iter().position(|f| vm.run(&f.data, f.wire_len()) != 0) {
                    None => all_zero += 1,
                    Some(n) => {
                        wrong_zero.push(format!("{} {:?}: accepts frame {n}", c.name, c.expr))
                    }
                }
            }
        }
    }
    println!(
        "reject: {} cases ({} skipped), {} refused ({} with libpcap's message), {} compiled; \
         {} more are the optimizer's 'rejects all packets': {all_zero} refused or rejecting \
         every frame",
        r.total,
        r.skipped.values().sum::<usize>(),
        r.passed,
        r.figures.get("message contains errstr").copied().unwrap_or(0),
        unsupported,
        optimizer.len(),
    );
    if std::env::var("SIFT_SHOW_REJECT").is_ok() {
        for (link, (n, bad)) in &by_link {
            println!("  {link:>24}: {n:>5} cases, {bad} compiled");
        }
    }
    // What libpcap 1.11 (the corpus) refuses and 1.10 (tcpdump's library, which sift follows)
    // compiles, as `known` explains (BACnet MS/TP's `link proto`, range checks…).
    let (known, compiled): (Vec<&Failure>, Vec<&Failure>) =
        r.all_failures.iter().partition(|f| known::classify(f).is_some());
    println!("reject: {} compiled as libpcap 1.10 compiles them (known differences)", known.len());
    let compiled: Vec<String> = compiled.iter().map(|f| f.to_string()).collect();
    assert!(
        compiled.is_empty(),
        "{} reject cases compiled:\n{}",
        compiled.len(),
        compiled.join("\n")
    );
    assert!(wrong_zero.is_empty(), "{}", wrong_zero.join("\n"));
}

/// Apply cases: the listed per-packet results on the corpus captures (unoptimized). Cases on
/// link types or primitives sift does not support yet are counted apart.
#[test]
fn corpus_apply_cases() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let cand = fixture_candidate(&dir);
    let r = check_apply(&cand, &corpus.apply, opts());
    let (unsupported, refused, wrong) = tally(&cand, &r, true);
    let explained = r.failed() - unsupported - refused.len() - wrong.len();
    println!(
        "apply: {} cases, {} passed, {unsupported} unsupported, {} refused, {} wrong, \
         {explained} known 1.10/1.11 differences, {} skipped",
        r.total,
        r.passed,
        refused.len(),
        wrong.len(),
        r.skipped.values().sum::<usize>()
    );
    for f in refused.iter().chain(&wrong) {
        println!("  {f}");
    }
    if std::env::var("SIFT_SHOW_UNSUPPORTED").is_ok() {
        for f in r.all_failures.iter().filter(|f| cand.unsupported(f)) {
            println!("  unsupported: {f}");
        }
    }
    assert!(wrong.is_empty(), "{} wrong answers:\n{}", wrong.len(), wrong.join("\n"));
    assert!(refused.is_empty(), "{} refused:\n{}", refused.len(), refused.join("\n"));
    assert!(unsupported == 0, "{unsupported} cases on primitives sift does not support");
    assert!(r.passed >= 170, "only {} apply cases passed (pinned: 170)", r.passed);
}

#[test]
fn differential_against_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let reference = LibpcapCandidate { pcap: &pcap, optimize: false };
    let cand = Sift::new(Box::new(SystemResolver::new()), false);
    let mut totals = BTreeMap::new();
    let mut all_wrong = Vec::new();
    for (i, name) in ["EN10MB", "RAW", "LINUX_SLL"].into_iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let mut sets = PacketSets::new(0xd1ff + i as u64, 800, 150, None);
        let set = sets.get(link).clone();
        let exprs = ExprGen::new(0xe4 + i as u64, name).take(1000);
        let r = check_differential(&cand, &reference, &exprs, &set, opts());
        let (unsupported, refused, wrong) = tally(&cand, &r, false);
        let compiled = r.figures.get("both compiled").copied().unwrap_or(0);
        let identical = r.figures.get("identical programs").copied().unwrap_or(0);
        println!(
            "differential {name:>9}: {} exprs, {} passed ({compiled} both compiled, {identical} \
             byte-identical), {unsupported} unsupported, {} other refusals, {} wrong",
            r.total,
            r.passed,
            refused.len(),
            wrong.len()
        );
        for f in refused.iter().take(10) {
            println!("  refused: {f}");
        }
        if std::env::var("SIFT_SHOW_UNSUPPORTED").is_ok() {
            let mut by: BTreeMap<String, usize> = BTreeMap::new();
            for f in r.all_failures.iter().filter(|f| cand.unsupported(f)) {
                *by.entry(f.detail.clone()).or_default() += 1;
            }
            println!("{by:#?}");
        }
        totals.insert(name, r.passed);
        all_wrong.extend(wrong);
    }
    assert!(all_wrong.is_empty(), "{} wrong answers:\n{}", all_wrong.len(), all_wrong.join("\n"));
    // Pinned lower bounds (passes include expressions both refuse).
    for (name, passed) in totals {
        let bound = match name {
            "EN10MB" => 990,
            "RAW" => 990,
            _ => 975,
        };
        assert!(passed >= bound, "{name}: only {passed} passed (pinned: {bound})");
    }
}

/// The corpus's expressions (its 4,187-line expression list, deduplicated, without the
/// fixture host names) against the system
/// libpcap on EN10MB, LINUX_SLL and RAW: both refuse, or both compile to programs with the
/// same value on every frame.
#[test]
fn differential_on_corpus_expressions() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let Some(text) = sift_testkit::oracle(
        "corpus expression list",
        std::fs::read_to_string(dir.join("libpcap_filter_expressions.txt")),
    ) else {
        return;
    };
    let mut exprs: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        // The corpus's fixture host names are not in the system's files: libpcap would ask
        // DNS for each (5 s timeouts here) and then refuse, as sift does.
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            !(l.contains(".libpcap.test") || l.contains(".invalid"))
        })
        .map(String::from)
        .collect();
    exprs.sort();
    exprs.dedup();
    let reference = LibpcapCandidate { pcap: &pcap, optimize: false };
    let cand = Sift::new(Box::new(SystemResolver::new()), false);
    let mut all_wrong = Vec::new();
    for (i, name) in ["EN10MB", "LINUX_SLL", "RAW"].into_iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let mut sets = PacketSets::new(0xc0 + i as u64, 400, 100, Some(dir.join("captures")));
        let set = sets.get(link).clone();
        let r = check_differential(&cand, &reference, &exprs, &set, opts());
        let (unsupported, refused, wrong) = tally(&cand, &r, true);
        println!(
            "corpus differential {name:>9}: {} exprs, {} passed ({} both compiled, {} \
             byte-identical, {} both refused), {unsupported} unsupported, {} other refusals, \
             {} wrong",
            r.total,
            r.passed,
            r.figures.get("both compiled").copied().unwrap_or(0),
            r.figures.get("identical programs").copied().unwrap_or(0),
            r.figures.get("both refused").copied().unwrap_or(0),
            refused.len(),
            wrong.len()
        );
        let shown = if std::env::var("SIFT_SHOW_REFUSED").is_ok() { usize::MAX } else { 10 };
        for f in refused.iter().take(shown) {
            println!("  refused: {f}");
        }
        // The refusals are libpcap 1.11's range checks (the corpus's reject cases).
        assert!(refused.len() <= 30, "{name}: {} refusals", refused.len());
        all_wrong.extend(wrong);
    }
    assert!(all_wrong.is_empty(), "{} wrong answers:\n{}", all_wrong.len(), all_wrong.join("\n"));
}

/// More link types, fewer expressions: zero wrong answers.
#[test]
fn differential_more_link_types() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let reference = LibpcapCandidate { pcap: &pcap, optimize: false };
    let cand = Sift::new(Box::new(SystemResolver::new()), false);
    let mut all_wrong = Vec::new();
    for (i, name) in [
        "LINUX_SLL2",
        "NULL",
        "PPP",
        "FDDI",
        "IPV4",
        "IEEE802_11",
        "IEEE802_11_RADIO",
        "PRISM_HEADER",
        "PPI",
        "PFLOG",
        "ENC",
        "IP_OVER_FC",
    ]
    .into_iter()
    .enumerate()
    {
        let link = LinkType::from_name(name).unwrap();
        let mut sets = PacketSets::new(0x3a + i as u64, 600, 100, None);
        let set = sets.get(link).clone();
        let exprs = ExprGen::new(0x3a + i as u64, name).take(400);
        let r = check_differential(&cand, &reference, &exprs, &set, opts());
        let (unsupported, refused, wrong) = tally(&cand, &r, false);
        println!(
            "differential {name:>10}: {} exprs, {} passed ({} both compiled), {unsupported} \
             unsupported, {} other refusals, {} wrong",
            r.total,
            r.passed,
            r.figures.get("both compiled").copied().unwrap_or(0),
            refused.len(),
            wrong.len()
        );
        for f in refused.iter().take(10) {
            println!("  refused: {f}");
        }
        assert!(r.passed >= 390, "{name}: only {} passed", r.passed);
        all_wrong.extend(wrong);
    }
    assert!(all_wrong.is_empty(), "{} wrong answers:\n{}", all_wrong.len(), all_wrong.join("\n"));
}
