//! The builder and emitter end to end: hand-built gencode graphs, checked against libpcap's
//! unoptimized programs (listing and verdicts), long chains and trampolines, IR invariants,
//! and golden dumps.

use crate::common::*;
use sift_compile::build::{BuildError, Builder, Cmp, Load};
use sift_compile::emit::{emit, emit_with_stats};
use sift_compile::ir::*;
use sift_compile::print;
use sift_insn::Insn;
use sift_insn::code::*;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn libpcap() -> Option<sift_libpcap::Libpcap> {
    sift_testkit::oracle("libpcap", sift_libpcap::Libpcap::load())
}

/// Compares our program with libpcap's unoptimized one for `expr`: byte-identical
/// instructions, and identical verdicts on `pkts` in sift-vm and in libpcap's `bpf_filter`.
fn against_libpcap(expr: &str, ours: &[Insn], pkts: &[Vec<u8>]) {
    let Some(pcap) = libpcap() else { return };
    let theirs = pcap
        .compile(sift_compile::pipeline::LinkType::EN10MB, SNAPLEN as i32, expr, false, 0)
        .expect("libpcap compiles");
    assert_eq!(
        listing(ours),
        listing(&theirs),
        "`{expr}`: our unoptimized layout differs from libpcap's"
    );
    let v_ours = sift_verify::validate(ours, sift_verify::Mode::Libpcap).unwrap();
    let v_theirs = sift_verify::validate(&theirs, sift_verify::Mode::Libpcap).unwrap();
    let (a, b) = (sift_vm::Interpreter::new(&v_ours), sift_vm::Interpreter::new(&v_theirs));
    for p in pkts {
        let wire = p.len() as u32;
        let r = a.run(p, wire);
        assert_eq!(r, b.run(p, wire), "`{expr}` on {p:02x?}");
        assert_eq!(r, pcap.filter(ours, p, wire), "libpcap runs ours: `{expr}` on {p:02x?}");
    }
}

#[test]
fn ip_tcp_dst_port_80_runs_and_matches_libpcap_unopt() {
    let cfg = ip_tcp_dst_port_80();
    let (prog, vm) = compile(&cfg, true);
    let pkts = port_packets();
    let accepted: Vec<usize> =
        (0..16).filter(|&i| vm.run(&pkts[i], pkts[i].len() as u32) != 0).collect();
    assert_eq!(accepted, [0, 5, 6, 7]);
    assert_eq!(vm.run(&pkts[0], 60), SNAPLEN);
    against_libpcap("ip and tcp and dst port 80", &prog, &pkts);
    sift_testkit::golden(&data("ip_tcp_dst_port_80.txt"), &print::text(&cfg));
}

#[test]
fn small_predicates_match_libpcap_unopt() {
    let pkts = port_packets();
    let mut b = Builder::new();
    let p = proto_any(&mut b, TCP);
    against_libpcap("tcp", &emit(&b.finish(p, SNAPLEN)).unwrap(), &pkts);

    let mut b = Builder::new();
    let p = port(&mut b, 80);
    let q = port6(&mut b, 80);
    let p = b.or(q, p);
    let p = !p;
    against_libpcap("not dst port 80", &emit(&b.finish(p, SNAPLEN)).unwrap(), &pkts);

    // `ip proto 1 or ip proto 2`
    let mut b = Builder::new();
    let p = proto_ip(&mut b, 1);
    let q = proto_ip(&mut b, 2);
    let p = b.or(p, q);
    against_libpcap("ip proto 1 or ip proto 2", &emit(&b.finish(p, SNAPLEN)).unwrap(), &pkts);
}

/// `ip[k]` as gencode's `gen_load(Q_IP, gen_loadi(k), 1)`.
fn ip_byte(b: &mut Builder, k: u32) -> sift_compile::build::Value {
    let idx = b.imm(k).unwrap();
    let guard = linktype(b, ETH_IP);
    b.load(idx, &[], 14, Size::B, Some(guard)).unwrap()
}

#[test]
fn arithmetic_matches_libpcap_unopt() {
    let pkts = port_packets();
    // ip[0] + ip[1] > 5: gencode's gen_arth keeps only the left operand's guard.
    let mut b = Builder::new();
    let a = ip_byte(&mut b, 0);
    let mut c = ip_byte(&mut b, 1);
    drop(c.take_guard());
    let sum = b.arith(AluOp::Add, a, c).unwrap();
    let five = b.imm(5).unwrap();
    let p = b.relation(Cmp::Gt, sum, five);
    let cfg = b.finish(p, SNAPLEN);
    sift_testkit::golden(&data("arith.txt"), &print::text(&cfg));
    let (prog, _) = compile(&cfg, true);
    against_libpcap("ip[0]+ip[1] > 5", &prog, &pkts);

    // ip[0] = ip[1]: gen_relation keeps both guards.
    let mut b = Builder::new();
    let a = ip_byte(&mut b, 0);
    let c = ip_byte(&mut b, 1);
    let p = b.relation(Cmp::Eq, a, c);
    against_libpcap("ip[0] = ip[1]", &compile(&b.finish(p, SNAPLEN), true).0, &pkts);

    // ip[0] != 3
    let mut b = Builder::new();
    let a = ip_byte(&mut b, 0);
    let three = b.imm(3).unwrap();
    let p = b.relation(Cmp::Ne, a, three);
    against_libpcap("ip[0] != 3", &compile(&b.finish(p, SNAPLEN), true).0, &pkts);
}

#[test]
fn tcp_byte_with_variable_header_base() {
    // tcp[13] & 2 != 0 style load: index 13 past the IPv4 header (base in X), guarded by tcp.
    let mut b = Builder::new();
    let idx = b.imm(13).unwrap();
    let guard = proto_ip(&mut b, TCP);
    let v = b.load(idx, &[Stmt::Ldx(XSrc::Msh(14))], 14, Size::B, Some(guard)).unwrap();
    let two = b.imm(2).unwrap();
    let masked = b.arith(AluOp::And, v, two).unwrap();
    let zero = b.imm(0).unwrap();
    let p = b.relation(Cmp::Ne, masked, zero);
    let (_, vm) = compile(&b.finish(p, SNAPLEN), true);
    let mut syn = l4(1, 2);
    syn[13] = 0x02;
    for (ihl, want) in [(5, SNAPLEN), (7, SNAPLEN)] {
        assert_eq!(vm.run(&ipv4(6, ihl, 0, &syn), 100), want);
    }
    assert_eq!(vm.run(&ipv4(6, 5, 0, &l4(1, 2)), 100), 0);
    assert_eq!(vm.run(&ipv4(17, 5, 0, &syn), 100), 0);
}

#[test]
fn not_swaps_exits_without_code() {
    let mut b = Builder::new();
    let p = proto_ip(&mut b, TCP);
    let yes = emit(&b.finish(p, 1)).unwrap();
    let mut b = Builder::new();
    let p = !proto_ip(&mut b, TCP);
    let no = emit(&b.finish(p, 1)).unwrap();
    assert_eq!(yes.len(), no.len());
    for p in port_packets() {
        let run = |prog: &[Insn]| {
            sift_vm::run(
                &sift_verify::validate(prog, sift_verify::Mode::Linux).unwrap(),
                &p,
                p.len() as u32,
            )
        };
        // Out-of-bounds loads return 0 in both; otherwise exactly one accepts.
        let (a, c) = (run(&yes), run(&no));
        assert!(a + c <= 1);
        if p.len() >= 24 {
            assert_eq!(a + c, 1, "{p:02x?}");
        }
    }
}

#[test]
fn nested_and_or_not() {
    // (ip and not tcp) or (ip6 and (udp or tcp)) or never
    let mut b = Builder::new();
    let ip = linktype(&mut b, ETH_IP);
    let tcp = b.cmp(Load::Abs(Size::B, 23), Cmp::Eq, TCP, u32::MAX);
    let left = b.and(ip, !tcp);
    let ip6 = linktype(&mut b, ETH_IP6);
    let udp6 = b.cmp(Load::Abs(Size::B, 20), Cmp::Eq, UDP, u32::MAX);
    let tcp6 = b.cmp(Load::Abs(Size::B, 20), Cmp::Eq, TCP, u32::MAX);
    let l4 = b.or(udp6, tcp6);
    let right = b.and(ip6, l4);
    let never = b.never();
    let p = b.or_all([left, right, never]).unwrap();
    let (_, vm) = compile(&b.finish(p, 7), true);
    let cases = [
        (ipv4(6, 5, 0, &crate::common::l4(1, 2)), 0),
        (ipv4(17, 5, 0, &crate::common::l4(1, 2)), 7),
        (ipv6(17, false, &crate::common::l4(1, 2)), 7),
        (ipv6(6, false, &crate::common::l4(1, 2)), 7),
        (ipv6(1, false, &crate::common::l4(1, 2)), 0),
        (eth(0x806, &[0; 28]), 0),
    ];
    for (p, want) in cases {
        assert_eq!(vm.run(&p, p.len() as u32), want, "{p:02x?}");
    }
    // A variable link-layer offset loaded into X before everything (insert_compute_vloffsets).
    let mut b = Builder::new();
    let ip = b.cmp(Load::Ind(Size::H, 12), Cmp::Eq, ETH_IP, u32::MAX);
    let tcp = b.cmp(Load::Ind(Size::B, 23), Cmp::Eq, TCP, u32::MAX);
    let p = b.and(ip, tcp);
    b.prepend(&p, &[Stmt::Ldx(XSrc::Imm(4))]);
    let (prog, vm) = compile(&b.finish(p, 3), true);
    assert_eq!(prog[0], Insn::stmt(BPF_LDX | BPF_IMM, 4));
    let mut tagged = ipv4(6, 5, 0, &crate::common::l4(1, 2));
    tagged.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
    assert_eq!(vm.run(&tagged, tagged.len() as u32), 3);
    assert_eq!(vm.run(&ipv4(6, 5, 0, &crate::common::l4(1, 2)), 60), 0);

    let mut b = Builder::new();
    let t = b.always();
    let (_, vm) = compile(&b.finish(t, 9), true);
    assert_eq!(vm.run(&[], 0), 9);
    let b = Builder::new();
    let (prog, _) = compile(&b.accept_all(5), true);
    assert_eq!(prog.insns(), [Insn::stmt(BPF_RET | BPF_K, 5)]);
}

/// `ld [0]; jeq #i` or-ed `n` times.
fn or_chain(n: u32) -> Cfg {
    let mut b = Builder::new();
    let terms: Vec<_> =
        (0..n).map(|i| b.cmp(Load::Abs(Size::W, 0), Cmp::Eq, i, u32::MAX)).collect();
    let p = b.or_all(terms).unwrap();
    b.finish(p, 1)
}

#[test]
fn ten_thousand_term_chains_emit_with_trampolines() {
    let n = 10_000;
    let t = std::time::Instant::now();
    let cfg = or_chain(n);
    let built = t.elapsed();
    let t = std::time::Instant::now();
    let (prog, stats) = emit_with_stats(&cfg).unwrap();
    let took = t.elapsed();
    eprintln!(
        "10,000-term or chain: {} insns, {stats:?}, built in {built:?}, emitted in {took:?}",
        prog.len()
    );
    // Every term but the last ~128 jumps to `ret #1` at the end through a trampoline.
    assert!(stats.trampolines > 9_000, "{stats:?}");
    let v = sift_verify::validate(&prog, sift_verify::Mode::Libpcap).unwrap();
    let vm = sift_vm::Interpreter::new(&v);
    for (k, want) in
        [(0u32, 1), (1, 1), (5000, 1), (9872, 1), (9999, 1), (10_000, 0), (u32::MAX, 0)]
    {
        assert_eq!(vm.run(&k.to_be_bytes(), 4), want, "key {k}");
    }
    assert!(prog.insns().iter().any(|i| i.code == BPF_JMP | BPF_JA && i.k > 255));
    let t = std::time::Instant::now();
    let facts = sift_compile::analysis::Facts::new(&cfg);
    eprintln!("10,000-term or chain: dominators in {:?}", t.elapsed());
    let accept = facts.order()[facts.order().len() - 2];
    assert_eq!(facts.idom(accept), Some(cfg.entry));
    assert!(facts.dominates(cfg.entry, accept));

    // An and-chain: every false edge is far.
    let mut b = Builder::new();
    let terms: Vec<_> =
        (0..n).map(|i| b.cmp(Load::Abs(Size::W, 0), Cmp::Ne, i, u32::MAX)).collect();
    let p = b.and_all(terms).unwrap();
    let cfg = b.finish(p, 1);
    let prog = emit(&cfg).unwrap();
    let v = sift_verify::validate(&prog, sift_verify::Mode::Libpcap).unwrap();
    let vm = sift_vm::Interpreter::new(&v);
    assert_eq!(vm.run(&7u32.to_be_bytes(), 4), 0);
    assert_eq!(vm.run(&10_007u32.to_be_bytes(), 4), 1);

    // Deep nesting the other way round: p or (q or (r or …)), built right to left.
    let mut b = Builder::new();
    let mut acc = b.cmp(Load::Abs(Size::W, 0), Cmp::Eq, n, u32::MAX);
    for i in (0..n).rev() {
        let t = b.cmp(Load::Abs(Size::W, 0), Cmp::Eq, i, u32::MAX);
        acc = if i % 2 == 0 { b.or(t, acc) } else { b.or(!!t, acc) };
    }
    let cfg = b.finish(acc, 1);
    let prog = emit(&cfg).unwrap();
    let v = sift_verify::validate(&prog, sift_verify::Mode::Libpcap).unwrap();
    let vm = sift_vm::Interpreter::new(&v);
    assert_eq!(vm.run(&n.to_be_bytes(), 4), 1);
    assert_eq!(vm.run(&(n + 1).to_be_bytes(), 4), 0);
    assert!(!print::text(&cfg).is_empty());
}

#[test]
fn long_chain_fits_linux_and_matches_libpcap_trampolines() {
    // 1000 terms: about 2000 + trampolines < 4096 instructions, so Linux accepts it.
    let (prog, vm) = compile(&or_chain(1000), true);
    assert!(prog.len() < 4096);
    assert_eq!(vm.run(&999u32.to_be_bytes(), 4), 1);

    // libpcap's own trampolines: `ip proto 1 or … or ip proto 200` is 800 instructions.
    let mut b = Builder::new();
    let terms: Vec<_> = (1..=200).map(|v| proto_ip(&mut b, v)).collect();
    let p = b.or_all(terms).unwrap();
    let (prog, stats) = emit_with_stats(&b.finish(p, SNAPLEN)).unwrap();
    assert!(stats.trampolines > 0);
    let expr = (1..=200).map(|v| format!("ip proto {v}")).collect::<Vec<_>>().join(" or ");
    let pkts: Vec<Vec<u8>> =
        [0u8, 1, 2, 100, 199, 200, 201, 255].iter().map(|&p| ipv4(p, 5, 0, &l4(1, 2))).collect();
    against_libpcap(&expr, &prog, &pkts);
}

/// A: `ld [0]; jeq #5` → jt R (far), jf B; B: `n` × `ld #1`, falls through to R: `ret a`.
fn gap(n: usize) -> Cfg {
    let mut cfg = Cfg::new();
    let r = BlockId(2);
    let bb = BlockId(1);
    cfg.push(Block {
        stmts: vec![Stmt::Ld(Src::Abs(Size::W, 0))],
        term: Terminator::Branch { op: JmpOp::Jeq, operand: Operand::K(5), jt: r, jf: bb },
    });
    cfg.push(Block { stmts: vec![Stmt::Ld(Src::Imm(1)); n], term: Terminator::Jump(r) });
    cfg.push(Block { stmts: vec![], term: Terminator::Ret(RetVal::A) });
    cfg
}

#[test]
fn trampoline_boundary_and_fallthrough() {
    let (prog, stats) = emit_with_stats(&gap(255)).unwrap();
    assert_eq!((stats.trampolines, stats.fallthroughs), (0, 1));
    assert_eq!(prog[1], Insn::jump(BPF_JMP | BPF_JEQ, 5, 255, 0));
    assert_eq!(prog.len(), 2 + 255 + 1);

    let (prog, stats) = emit_with_stats(&gap(256)).unwrap();
    assert_eq!((stats.trampolines, stats.passes), (1, 2));
    assert_eq!(prog[1], Insn::jump(BPF_JMP | BPF_JEQ, 5, 0, 1));
    assert_eq!(prog[2], Insn::stmt(BPF_JMP | BPF_JA, 256));
    let v = sift_verify::validate(&prog, sift_verify::Mode::Linux).unwrap();
    assert_eq!(sift_vm::run(&v, &5u32.to_be_bytes(), 4), 5);
    assert_eq!(sift_vm::run(&v, &6u32.to_be_bytes(), 4), 1);

    // A jump that is not to the next block stays as `ja`.
    let mut cfg = gap(3);
    cfg.block_mut(BlockId(0)).term = Terminator::Branch {
        op: JmpOp::Jeq,
        operand: Operand::K(5),
        jt: BlockId(3),
        jf: BlockId(1),
    };
    cfg.block_mut(BlockId(1)).term = Terminator::Jump(BlockId(2));
    cfg.push(Block { stmts: vec![], term: Terminator::Ret(RetVal::K(9)) });
    cfg.block_mut(BlockId(3)).term = Terminator::Jump(BlockId(2));
    cfg.block_mut(BlockId(3)).stmts = vec![Stmt::Ld(Src::Imm(4))];
    let prog = emit(&cfg).unwrap();
    let v = sift_verify::validate(&prog, sift_verify::Mode::Linux).unwrap();
    assert_eq!(sift_vm::run(&v, &5u32.to_be_bytes(), 4), 4);
    assert_eq!(sift_vm::run(&v, &6u32.to_be_bytes(), 4), 1);
    assert!(prog.insns().iter().any(|i| i.code == BPF_JMP | BPF_JA));
}

#[test]
fn invariants_are_checked() {
    let mut cfg = gap(1);
    cfg.block_mut(BlockId(2)).term = Terminator::Jump(BlockId(0));
    assert!(matches!(emit(&cfg), Err(CfgError::Cycle { .. })));
    let mut cfg = gap(1);
    cfg.block_mut(BlockId(1)).term = Terminator::Jump(BlockId(7));
    assert_eq!(emit(&cfg), Err(CfgError::Dangling { from: BlockId(1), to: BlockId(7) }));
    assert_eq!(emit(&Cfg::new()), Err(CfgError::NoEntry));

    // A dropped predicate leaves unreachable blocks with holes; that is fine.
    let mut b = Builder::new();
    let _ = b.cmp(Load::Len, Cmp::Gt, 3, u32::MAX);
    let p = b.cmp(Load::Len, Cmp::Le, 3, u32::MAX);
    let mut cfg = b.finish(p, 1);
    assert_eq!(cfg.check(), Ok(()));
    let map = cfg.compact();
    assert_eq!(map[0], None);
    assert_eq!(cfg.len(), 3);
    assert_eq!(cfg.entry, BlockId(0));
    assert_eq!(
        print::text(&cfg),
        "b0:\n    ld       #pktlen\n    jgt      #0x3 -> b1, b2\nb1:\n    ret      #0\nb2:\n    ret      #1\n"
    );
    let preds = cfg.preds();
    assert_eq!(preds[1], [BlockId(0)]);
}

#[test]
fn scratch_and_division_errors() {
    let mut b = Builder::new();
    let held: Vec<_> = (0..16).map(|i| b.imm(i).unwrap()).collect();
    let e = b.imm(16).unwrap_err();
    assert_eq!(e, BuildError::TooManyRegisters);
    assert_eq!(e.to_string(), "too many registers needed to evaluate expression");
    drop(held);

    let mut b = Builder::new();
    let a = b.len().unwrap();
    let z = b.imm(0).unwrap();
    assert_eq!(b.arith(AluOp::Div, a, z).unwrap_err().to_string(), "division by zero");
    let mut b = Builder::new();
    let a = b.len().unwrap();
    let z = b.imm(0).unwrap();
    assert_eq!(b.arith(AluOp::Mod, a, z).unwrap_err().to_string(), "modulus by zero");

    // Freed words are reused round-robin, as libpcap does: len * 3 - 1 == len + len.
    let mut b = Builder::new();
    let mut acc = b.len().unwrap();
    for _ in 0..40 {
        let three = b.imm(3).unwrap();
        acc = b.arith(AluOp::Mul, acc, three).unwrap();
        let l = b.len().unwrap();
        acc = b.arith(AluOp::Sub, acc, l).unwrap();
        let l = b.len().unwrap();
        acc = b.arith(AluOp::Sub, acc, l).unwrap();
        acc = b.neg(acc);
        acc = b.neg(acc);
    }
    let l = b.len().unwrap();
    let p = b.relation(Cmp::Eq, acc, l);
    let (_, vm) = compile(&b.finish(p, 1), true);
    assert_eq!(vm.run(&[], 1234), 1);
}

#[test]
fn dot_dump_golden() {
    let mut b = Builder::new();
    let p = proto_ip(&mut b, TCP);
    let q = b.cmp(Load::AfterIpv4(14, Size::H, 16), Cmp::Lt, 1024, u32::MAX);
    let p = b.and(p, !q);
    let cfg = b.finish(p, SNAPLEN);
    sift_testkit::golden(&data("ip_tcp_dst_ge_1024.dot"), &print::dot(&cfg));
    sift_testkit::golden(&data("ip_tcp_dst_ge_1024.txt"), &print::text(&cfg));
}

#[test]
fn text_dumps_parse_back() {
    for name in ["ip_tcp_dst_port_80.txt", "arith.txt", "ip_tcp_dst_ge_1024.txt"] {
        let text = std::fs::read_to_string(data(name)).unwrap();
        let cfg = print::parse(&text).unwrap();
        assert_eq!(print::text(&cfg), text, "{name}");
        assert_eq!(cfg.check(), Ok(()));
    }
    let cfg = ip_tcp_dst_port_80();
    assert_eq!(emit(&print::parse(&print::text(&cfg)).unwrap()), emit(&cfg));

    let hand = "; a comment\nb3:\n    ldx      M[2]\n    ld       [x + 4]\n    jset     x -> b1, b7 ; why not\nb7:\n    ja       b1\nb1:\n    ret a\n";
    let cfg = print::parse(hand).unwrap();
    assert_eq!(cfg.entry, BlockId(3));
    assert_eq!(cfg.len(), 8);
    assert_eq!(
        print::text(&cfg),
        "b3:\n    ldx      M[2]\n    ld       [x + 4]\n    jset     x -> b1, b7\nb7:\n    ja       b1\nb1:\n    ret\n"
    );
    for (bad, line) in [
        ("b0:\n    ldh [12]\n", 1),
        ("    ret #0\n", 1),
        ("b0:\n    ret #0\nb0:\n    ret #1\n", 3),
        ("b0:\n    jeq #1 -> b1\n", 2),
        ("b0:\n    ja b9\nb1:\n    ret #0\n", 1),
        ("b0:\n    frob #1\n", 2),
        ("", 1),
    ] {
        let e = print::parse(bad).unwrap_err();
        assert_eq!(e.line, line, "{bad:?}: {e}");
    }
}

#[test]
fn dominators_match_the_definition() {
    check_dominators(&ip_tcp_dst_port_80());
    check_dominators(&or_chain(40));
    let mut b = Builder::new();
    let a = ip_byte(&mut b, 0);
    let c = ip_byte(&mut b, 1);
    let p = b.relation(Cmp::Le, a, c);
    let q = proto_any(&mut b, UDP);
    let p = b.or(!p, q);
    let r = port6(&mut b, 53);
    let p = b.and(p, r);
    check_dominators(&b.finish(p, 1));
    let mut cfg = gap(3);
    cfg.push(Block { stmts: vec![], term: Terminator::Ret(RetVal::K(1)) });
    let facts = sift_compile::analysis::Facts::new(&cfg);
    assert_eq!(facts.pos(BlockId(3)), None);
    assert!(!facts.dominates(BlockId(3), BlockId(3)));
}
