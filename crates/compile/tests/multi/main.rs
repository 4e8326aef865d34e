//! Many-filter programs: the decision program's answer equals running every filter alone.
//!
//! Each test compiles a set with `sift_compile::multi`, decides every frame of a packet set with
//! the interpreter as the engine, and compares with each filter's own program run by the
//! interpreter on the same frame: the set of matches (`Decide::All`) and CSPF's first-match
//! delivery (`Decide::First`, priorities and `continue`). Zero mismatches.

mod golden;

use sift_compile::multi::{self, Anchoring, Decide, FilterSet, FilterSpec, MultiProgram};
use sift_compile::pipeline::{LinkType, Options};
use sift_filetests::PacketSet;
use sift_filter::TableResolver;
use sift_verify::Mode;
use sift_vm::Interpreter;

/// Frames as (captured bytes, wire length).
type Frames = Vec<(Vec<u8>, u32)>;

fn frames_of(set: &PacketSet) -> Frames {
    set.frames.iter().map(|f| (f.data.clone(), f.wire_len())).collect()
}

fn compile(set: &FilterSet, link: LinkType) -> MultiProgram {
    let resolver = TableResolver::well_known();
    let opts = Options::new(link, &resolver).mode(Mode::LibpcapLoops);
    multi::compile(set, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// What the check saw.
#[derive(Debug, Default)]
struct Seen {
    frames: usize,
    matches: usize,
    candidates: usize,
    runs: usize,
    runs_alone: usize,
}

/// Decides every frame both ways and panics on the first difference.
fn check(set: &FilterSet, link: LinkType, frames: &Frames) -> Seen {
    let prog = compile(set, link);
    let alone: Vec<Option<Interpreter>> = prog
        .members
        .iter()
        .map(|m| m.compiled.as_ref().map(|c| Interpreter::new(&c.program)))
        .collect();
    // Filters that compile to nothing must still compile alone to "rejects all".
    let resolver = TableResolver::well_known();
    let opts = Options::new(link, &resolver).mode(Mode::LibpcapLoops);
    let mut scratch = prog.scratch();
    let (mut cands, mut all, mut first) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen = Seen::default();
    for (data, wire_len) in frames {
        let expect: Vec<u32> = (0..prog.len() as u32)
            .filter(|&r| alone[r as usize].as_ref().is_some_and(|i| i.run(data, *wire_len) != 0))
            .collect();
        let run = |r: u32| alone[r as usize].as_ref().is_some_and(|i| i.run(data, *wire_len) != 0);
        let mut runs = 0;
        let counted = |r: u32| {
            runs += 1;
            run(r)
        };
        prog.decide(data, *wire_len, Decide::All, &mut scratch, &mut cands, &mut all, counted);
        seen.candidates += cands.len();
        seen.runs += runs;
        if all != expect {
            let names = |v: &[u32]| {
                v.iter().map(|&r| prog.members[r as usize].spec.expr.clone()).collect::<Vec<_>>()
            };
            panic!(
                "frame {:02x?} (wire {wire_len}): decision {:?}, alone {:?}",
                data,
                names(&all),
                names(&expect)
            );
        }
        let mut expect_first = Vec::new();
        for &r in &expect {
            expect_first.push(r);
            if !prog.members[r as usize].spec.cont {
                break;
            }
        }
        prog.decide(data, *wire_len, Decide::First, &mut scratch, &mut cands, &mut first, run);
        assert_eq!(first, expect_first, "first match on {data:02x?}");
        seen.frames += 1;
        seen.matches += all.len();
        seen.runs_alone += prog.len();
    }
    for m in &prog.members {
        if m.compiled.is_none() {
            let e = sift_compile::pipeline::compile(&m.spec.expr, &opts).unwrap_err();
            assert!(e.is_rejects_all(), "{}: {e}", m.spec.expr);
        }
    }
    seen
}

fn ethernet_frames(seed: u64, realistic: usize, random: usize) -> Frames {
    frames_of(&PacketSet::generate(LinkType::EN10MB, seed, realistic, random))
}

fn realistic_set(n: usize, seed: u64) -> FilterSet {
    let text = sift_gen::filters::realistic_file(n, seed);
    FilterSet::parse(text.as_bytes()).unwrap()
}

#[test]
fn realistic_sets_of_1_to_10000_filters() {
    let frames = ethernet_frames(1, 3000, 200);
    for (n, seed) in [(1, 1), (2, 2), (10, 3), (100, 4), (1000, 5), (10_000, 6)] {
        let set = realistic_set(n, seed);
        let seen = check(&set, LinkType::EN10MB, &frames);
        println!(
            "{n} filters: {} frames, {} matches, {:.2} candidates and {:.2} runs a frame ({} runs alone)",
            seen.frames,
            seen.matches,
            seen.candidates as f64 / seen.frames as f64,
            seen.runs as f64 / seen.frames as f64,
            seen.runs_alone
        );
        assert!(n < 10 || seen.matches > 0, "the realistic set should match some traffic");
        // The point of the index: far fewer runs than one per filter.
        if n >= 100 {
            assert!(seen.candidates * 20 < seen.runs_alone, "{seen:?}");
        }
    }
}

#[test]
fn random_expression_sets_on_fixed_link_types() {
    for (i, link) in ["EN10MB", "RAW", "LINUX_SLL", "NULL", "PPP"].iter().enumerate() {
        let lt = LinkType::from_name(link).unwrap();
        let frames = frames_of(&PacketSet::generate(lt, 10 + i as u64, 1500, 150));
        for (j, n) in [1usize, 7, 60, 400].into_iter().enumerate() {
            let mut generator = sift_filetests::ExprGen::new(100 * i as u64 + j as u64, link);
            let resolver = TableResolver::well_known();
            let opts = Options::new(lt, &resolver).mode(Mode::LibpcapLoops);
            // Keep the expressions that compile alone (the generator also makes some that
            // are refused, which a set would refuse as a whole).
            let exprs: Vec<String> = generator
                .take(n * 2)
                .into_iter()
                .filter(|e| match sift_compile::pipeline::compile(e, &opts) {
                    Ok(_) => true,
                    Err(e) => e.is_rejects_all(),
                })
                .take(n)
                .collect();
            let set = with_flags(FilterSet::from_exprs(&exprs), 7 * j as u64 + 1);
            let seen = check(&set, lt, &frames);
            println!("{link}: {} random filters, {} matches", set.len(), seen.matches);
        }
    }
}

/// The same filters with priorities and `continue` flags spread over them.
fn with_flags(set: FilterSet, seed: u64) -> FilterSet {
    let mut rng = sift_gen::Rng::new(seed);
    let specs: Vec<FilterSpec> = set
        .filters()
        .iter()
        .map(|f| FilterSpec {
            priority: rng.below(4) as i32 - 1,
            cont: rng.below(3) == 0,
            ..f.clone()
        })
        .collect();
    FilterSet::new(specs)
}

#[test]
fn libpcap_corpus_expressions_as_one_set() {
    let Some(corpus) = sift_filetests::Corpus::load_default() else {
        sift_testkit::oracle_missing::<()>("libpcap's filter corpus", "not found in ../shared");
        return;
    };
    let resolver = TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::LibpcapLoops);
    let mut exprs: Vec<String> = corpus
        .accept
        .iter()
        .filter(|c| c.link == LinkType::EN10MB && c.skip.is_none() && !c.linuxext)
        .map(|c| c.expr.clone())
        .filter(|e| match sift_compile::pipeline::compile(e, &opts) {
            Ok(_) => true,
            Err(e) => e.is_rejects_all(),
        })
        .collect();
    exprs.sort();
    exprs.dedup();
    assert!(exprs.len() > 200, "{} corpus expressions", exprs.len());
    let mut packets = PacketSet::generate(LinkType::EN10MB, 77, 2500, 200);
    let dir = sift_testkit::shared_dir().join("corpus/libpcap/captures");
    packets.add_captures(&dir);
    let frames = frames_of(&packets);
    let set = with_flags(FilterSet::from_exprs(&exprs), 3);
    let seen = check(&set, LinkType::EN10MB, &frames);
    println!(
        "{} corpus expressions over {} frames: {} matches",
        set.len(),
        seen.frames,
        seen.matches
    );
}

/// The Ethernet packets of tcpdump's 830 test captures (at most `limit`).
fn tcpdump_frames(limit: usize) -> Option<Frames> {
    let dir = sift_testkit::shared_dir().join("corpus/tcpdump/tests");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).ok()?.flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut frames = Frames::new();
    for path in paths {
        if !path.extension().is_some_and(|e| e == "pcap" || e == "pcapng") {
            continue;
        }
        // Damaged captures are part of the corpus: take what reads.
        let Ok(packets) = sift_filetests::packets::read_capture(&path) else { continue };
        let en10mb = u32::from(LinkType::EN10MB.number());
        frames.extend(packets.into_iter().filter(|p| p.0 == en10mb).map(|p| (p.1, p.2)));
        if frames.len() >= limit {
            frames.truncate(limit);
            break;
        }
    }
    Some(frames)
}

#[test]
fn tcpdump_captures_through_realistic_and_corpus_sets() {
    let Some(frames) = tcpdump_frames(30_000) else {
        sift_testkit::oracle_missing::<()>("tcpdump's test captures", "not found in ../shared");
        return;
    };
    assert!(frames.len() > 5_000, "{} frames", frames.len());
    let set = with_flags(realistic_set(1000, 11), 5);
    let seen = check(&set, LinkType::EN10MB, &frames);
    println!(
        "tcpdump captures, 1000 realistic filters: {} frames, {} matches",
        seen.frames, seen.matches
    );
    let mut exprs = sift_filetests::ExprGen::new(31, "EN10MB").take(600);
    exprs.extend(
        [
            "host 10.0.0.1",
            "udp port 53",
            "tcp port 80",
            "icmp",
            "arp",
            "vlan",
            "ip6",
            "tcp[13] & 2 != 0",
        ]
        .map(String::from),
    );
    let resolver = TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::LibpcapLoops);
    exprs.retain(|e| match sift_compile::pipeline::compile(e, &opts) {
        Ok(_) => true,
        Err(e) => e.is_rejects_all(),
    });
    let set = with_flags(FilterSet::from_exprs(&exprs), 9);
    let seen = check(&set, LinkType::EN10MB, &frames);
    println!("tcpdump captures, {} random filters: {} matches", set.len(), seen.matches);
}

#[test]
fn every_kind_of_anchoring_occurs() {
    let set = FilterSet::from_exprs(["host 10.0.0.1", "len > 100", "ip and ip6", ""]);
    let prog = compile(&set, LinkType::EN10MB);
    let kinds: Vec<_> = prog
        .members
        .iter()
        .map(|m| match &m.anchoring {
            Anchoring::Anchors(a) => format!("{} anchors", a.len()),
            Anchoring::Always => "always".into(),
            Anchoring::Never => "never".into(),
        })
        .collect();
    assert_eq!(kinds, ["4 anchors", "always", "never", "always"]);
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Arbitrary bytes (and prefixes of generated frames) through realistic sets.
        #[test]
        fn arbitrary_frames(seed in 0u64..1000, n in 1usize..300, bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let set = with_flags(realistic_set(n, seed), seed);
            let mut frames = ethernet_frames(seed, 40, 5);
            let wire = bytes.len() as u32 + (seed % 3) as u32;
            frames.push((bytes, wire));
            check(&set, LinkType::EN10MB, &frames);
        }
    }
}
