//! Lifting programs into graphs, and the emitter's layout against libpcap's: every program
//! libpcap compiles from its own test corpus (optimized and not), lifted and re-emitted,
//! must come back instruction for instruction.

use sift_compile::emit::{emit, emit_with_stats};
use sift_compile::ir::*;
use sift_compile::lift::{LiftError, lift};
use sift_compile::pipeline::LinkType;
use sift_insn::Insn;
use sift_insn::code::*;
use sift_insn::text::{listing, parse};

#[test]
fn lift_splits_blocks_and_threads_trampolines() {
    let prog = parse(
        "(000) ldh      [12]\n\
         (001) jeq      #0x800           jt 2\tjf 7\n\
         (002) ldb      [23]\n\
         (003) jeq      #0x6             jt 4\tjf 7\n\
         (004) ja       6\n\
         (005) ret      #2\n\
         (006) ret      #1\n\
         (007) ret      #0\n",
    )
    .unwrap();
    let cfg = lift(&prog).unwrap();
    assert_eq!(cfg.check(), Ok(()));
    assert_eq!(
        sift_compile::print::text(&cfg),
        "b0:\n    ldh      [12]\n    jeq      #0x800 -> b1, b5\n\
         b1:\n    ldb      [23]\n    jeq      #0x6 -> b4, b5\n\
         b4:\n    ret      #1\n\
         b5:\n    ret      #0\n"
    );
    // Statements running into a jump target end in a jump that emission drops.
    let prog = parse("(000) ld #1\n(001) jeq #1 jt 3 jf 2\n(002) ld #2\n(003) ret a\n").unwrap();
    let cfg = lift(&prog).unwrap();
    assert_eq!(emit(&cfg).unwrap().insns(), prog.insns());

    assert_eq!(lift(&[]), Err(LiftError::Empty));
    assert_eq!(lift(&[Insn::stmt(BPF_LD | BPF_IMM, 0)]), Err(LiftError::FallsOffEnd));
    assert_eq!(
        lift(&[Insn::stmt(BPF_JMP | BPF_JA, u32::MAX), Insn::stmt(BPF_RET, 0)]),
        Err(LiftError::BadJump { index: 0 })
    );
    assert_eq!(
        lift(&[Insn::stmt(BPF_MISC | 0x40, 0), Insn::stmt(BPF_RET, 0)]),
        Err(LiftError::Unsupported { index: 0 })
    );
    assert_eq!(
        lift(&[Insn::stmt(BPF_LD | BPF_MEM, 16), Insn::stmt(BPF_RET, 0)]),
        Err(LiftError::Unsupported { index: 0 })
    );
}

#[test]
fn stmt_insn_round_trip_and_use_def() {
    for code in 0..=0xffffu16 {
        let insn = Insn::stmt(code, 3);
        if let Some(s) = Stmt::from_insn(&insn) {
            let back = s.to_insn().expect("a statement of one instruction");
            assert_eq!(back.code, code);
            assert_eq!(Stmt::from_insn(&back), Some(s));
        }
    }
    let m3 = RegSet::mem(Slot::new(3).unwrap());
    assert_eq!(Stmt::from_insn(&Insn::stmt(BPF_ST, 3)).unwrap().defs(), m3);
    assert_eq!(Stmt::from_insn(&Insn::stmt(BPF_ST, 3)).unwrap().uses(), RegSet::A);
    assert!(Stmt::Ld(Src::Ind(Size::B, 0)).reads_x());
    assert!(Stmt::Ldx(XSrc::Msh(14)).reads_packet());
    assert_eq!(Stmt::Alu(AluOp::Add, Operand::X).uses(), RegSet::A.union(RegSet::X));
    // A `protochain` walk is many instructions, reads the packet, and reads and writes A, X
    // and its scratch word.
    let walk = Stmt::Walk(Walk { want: 6, nl: 14, ipv6: true, slot: Slot::new(3).unwrap() });
    assert_eq!(walk.to_insn(), None);
    assert!(walk.reads_packet() && walk.reads_x());
    assert_eq!(walk.uses(), RegSet::A.union(RegSet::X).union(m3));
    assert_eq!(walk.defs(), walk.uses());
}

/// The corpus round trip. Prints the figure (how many re-emit identically) and fails on any
/// program that does not.
#[test]
fn libpcap_corpus_programs_re_emit_identically() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(pcap) = sift_testkit::oracle("libpcap", sift_libpcap::Libpcap::load()) else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("libpcap_filter_expressions.txt")).unwrap();
    let (mut compiled, mut same, mut unliftable, mut trampolined) = (0, 0, 0, 0);
    let mut differ = Vec::new();
    let t = std::time::Instant::now();
    // Large programs, where libpcap adds trampolines.
    let big = [
        (1..=200).map(|v| format!("ip proto {v}")).collect::<Vec<_>>().join(" or "),
        (1..=120).map(|v| format!("host 10.0.{}.{}", v / 7, v)).collect::<Vec<_>>().join(" or "),
        (1..=90).map(|v| format!("not port {v}")).collect::<Vec<_>>().join(" and "),
        (1..=60)
            .map(|v| format!("(tcp dst port {v} and ip[2:2] > {})", v * 10))
            .collect::<Vec<_>>()
            .join(" or "),
    ];
    // Every distinct expression on Ethernet, plus each accept case on its own link type.
    let mut jobs: Vec<(LinkType, i32, String)> = text
        .lines()
        .chain(big.iter().map(String::as_str))
        .map(|e| (LinkType::EN10MB, 262144, e.to_string()))
        .collect();
    let cases = std::fs::read_to_string(dir.join("libpcap_filter_cases.tsv")).unwrap();
    for row in cases.lines().skip(1) {
        let f: Vec<&str> = row.split('\t').collect();
        if f.len() < 9 || f[0] != "accept" {
            continue;
        }
        let Some(link) = LinkType::from_name(f[2]) else { continue };
        let snaplen = f[3].parse().unwrap_or(262144);
        if link != LinkType::EN10MB || snaplen != 262144 {
            jobs.push((link, snaplen, f[8].to_string()));
        }
    }
    for (link, snaplen, expr) in &jobs {
        // Names under .libpcap.test need a resolver fixture; skip them rather than ask DNS.
        if expr.to_ascii_lowercase().contains(".test") {
            continue;
        }
        for optimize in [false, true] {
            let Ok(prog) = pcap.compile(*link, *snaplen, expr, optimize, 0xffff_ff00) else {
                continue;
            };
            compiled += 1;
            let cfg = match lift(&prog) {
                Ok(cfg) => cfg,
                Err(LiftError::BadJump { .. }) => {
                    // protochain loops backwards: not a DAG.
                    unliftable += 1;
                    continue;
                }
                Err(e) => panic!("`{expr}`: {e}\n{}", listing(&prog)),
            };
            let dump = sift_compile::print::text(&cfg);
            let reread =
                sift_compile::print::parse(&dump).unwrap_or_else(|e| panic!("{e}\n{dump}"));
            assert_eq!(sift_compile::print::text(&reread), dump);
            let (ours, stats) = emit_with_stats(&cfg).unwrap();
            trampolined += usize::from(stats.trampolines > 0);
            if ours.insns() == prog.as_slice() {
                same += 1;
            } else {
                differ.push(format!(
                    "`{expr}` ({link}, optimize={optimize})\nlibpcap:\n{}ours:\n{}",
                    listing(&prog),
                    listing(&ours)
                ));
            }
        }
    }
    eprintln!(
        "corpus round trip: {compiled} programs, {same} identical, {} different, \
         {unliftable} not acyclic, {trampolined} with trampolines, {:?}",
        differ.len(),
        t.elapsed()
    );
    assert!(compiled > 1000);
    assert!(trampolined >= 4, "the large expressions need trampolines");
    assert!(differ.is_empty(), "{} differ; first:\n{}", differ.len(), differ[0]);
}
