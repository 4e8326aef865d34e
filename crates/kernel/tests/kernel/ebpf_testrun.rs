//! sift's classic → eBPF translation run by the kernel (`BPF_PROG_TEST_RUN`) against sift's
//! interpreter in its Linux flavor, on random validated programs and packets.

use sift_ebpf::{NET_HEADER, TranslateReason, translate_local_exits};
use sift_insn::{Insn, Opcode};
use sift_kernel::{EbpfError, KernelEbpf};
use sift_verify::{Mode, validate};
use sift_vm::testgen::{self, GenConfig, Rng};
use sift_vm::{Flavor, Interpreter, PacketMeta};

/// What the test run's skb looks like to an `SKF_LL_OFF`/`SKF_NET_OFF` load.
fn meta(wire_len: u32) -> PacketMeta {
    PacketMeta {
        wire_len,
        mac_header: Some(0),
        net_header: Some(NET_HEADER),
        ..PacketMeta::default()
    }
}

/// The engine, or `None` (skip, or fail under SIFT_REQUIRE_ORACLES=1) when the kernel can't
/// be asked.
fn engine_available() -> bool {
    let prog = validate(&[Insn::stmt(Opcode::RetK.code(), 1)], Mode::Linux).unwrap();
    match KernelEbpf::new(&prog) {
        Ok(_) => true,
        Err(EbpfError::Unavailable(e)) => {
            sift_testkit::oracle_missing::<()>("kernel bpf(2) BPF_PROG_TEST_RUN", e);
            false
        }
        Err(e) => panic!("a trivial program failed to load: {e}"),
    }
}

fn check(prog: &[Insn], packets: &[(Vec<u8>, u32)], what: &str) -> usize {
    check_mode(prog, Mode::Linux, packets, what)
}

fn check_mode(prog: &[Insn], mode: Mode, packets: &[(Vec<u8>, u32)], what: &str) -> usize {
    check_engine(prog, mode, packets, what, false)
}

fn check_engine(
    prog: &[Insn],
    mode: Mode,
    packets: &[(Vec<u8>, u32)],
    what: &str,
    local_exits: bool,
) -> usize {
    let Ok(valid) = validate(prog, mode) else { return 0 };
    let interp = Interpreter::with_flavor(&valid, Flavor::Linux);
    let loaded = if local_exits {
        translate_local_exits(valid.insns()).map_err(EbpfError::from).and_then(KernelEbpf::load)
    } else {
        KernelEbpf::new(&valid)
    };
    let engine = match loaded {
        Ok(e) => e,
        Err(EbpfError::Translate(e)) if matches!(e.reason, TranslateReason::Ancillary(_)) => {
            return 0;
        }
        Err(e) => panic!("{what}: {e}\nclassic:\n{prog:?}"),
    };
    for (i, (pkt, wire)) in packets.iter().enumerate() {
        let want = interp.run_with_meta(pkt, &meta(*wire));
        let got = engine.run(pkt, *wire).unwrap_or_else(|e| {
            panic!("{what}: packet {i} ({} bytes, wire {wire}): {e}", pkt.len())
        });
        assert_eq!(
            got,
            want,
            "{what}: packet {i} ({} bytes, wire {wire}): {pkt:02x?}\nclassic: {prog:?}\neBPF:\n{}",
            pkt.len(),
            engine.program()
        );
    }
    packets.len()
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    if !engine_available() {
        return;
    }
    let mut rng = Rng::new(0x5eed_ebbf);
    let cfg = GenConfig::linux();
    let mut pairs = 0;
    let mut programs = 0;
    while pairs < 24_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let packets: Vec<_> = (0..12).map(|_| testgen::packet(&mut rng)).collect();
        let n = check(&prog, &packets, &format!("program {programs}"));
        if n > 0 {
            programs += 1;
        }
        pairs += n;
    }
    eprintln!("eBPF test run: {pairs} (program, packet) pairs over {programs} programs agree");
}

/// The fallback form with an exit after every failure check (used for very long programs).
#[test]
fn local_exit_translations_agree_with_the_interpreter() {
    if !engine_available() {
        return;
    }
    let mut rng = Rng::new(0x10ca1);
    let cfg = GenConfig::linux();
    let mut pairs = 0;
    while pairs < 6_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let packets: Vec<_> = (0..12).map(|_| testgen::packet(&mut rng)).collect();
        pairs += check_engine(&prog, Mode::Linux, &packets, "local exits", true);
    }
    // A program long enough to need them.
    let mut long = vec![Insn::stmt(Opcode::LdxImm.code(), 2)];
    long.extend(std::iter::repeat_n(Insn::stmt(Opcode::LdIndH.code(), 10), 3000));
    long.push(Insn::stmt(Opcode::RetA.code(), 0));
    let packets: Vec<_> = (0..50).map(|_| testgen::packet(&mut rng)).collect();
    check(&long, &packets, "3000 loads");
}

/// Programs only libpcap's validator accepts (shifts by constants ≥ 32, reads of unwritten
/// scratch memory, offsets near 2^32) still translate and agree with the interpreter.
#[test]
fn libpcap_mode_programs_agree_with_the_interpreter() {
    if !engine_available() {
        return;
    }
    let mut rng = Rng::new(0x11b_9cab);
    let cfg = GenConfig::anything();
    let mut pairs = 0;
    let mut programs = 0;
    while programs < 400 {
        let prog = testgen::program(&mut rng, &cfg);
        let packets: Vec<_> = (0..16).map(|_| testgen::packet(&mut rng)).collect();
        let n = check_mode(&prog, Mode::Libpcap, &packets, &format!("program {programs}"));
        if n > 0 {
            pairs += n;
        }
        programs += 1;
    }
    eprintln!("eBPF test run (libpcap-mode programs): {pairs} pairs agree");
    assert!(pairs > 2000, "{pairs}");
}

#[test]
fn header_relative_and_wrapping_loads_agree() {
    if !engine_available() {
        return;
    }
    use sift_insn::code::{SKF_LL_OFF, SKF_NET_OFF};
    let ld = |op: Opcode, k: u32| Insn::stmt(op.code(), k);
    let ret_a = Insn::stmt(Opcode::RetA.code(), 0);
    let mut rng = Rng::new(7);
    let packets: Vec<_> = (0..200).map(|_| testgen::packet(&mut rng)).collect();
    let mut cases = vec![];
    for k in [SKF_LL_OFF, SKF_LL_OFF + 12, SKF_NET_OFF, SKF_NET_OFF + 9, SKF_LL_OFF - 1, 0xfff0] {
        for op in [Opcode::LdAbsW, Opcode::LdAbsH, Opcode::LdAbsB] {
            cases.push(vec![ld(op, k), ret_a]);
        }
        cases.push(vec![ld(Opcode::LdxMsh, k), Insn::stmt(Opcode::Txa.code(), 0), ret_a]);
    }
    for x in [0u32, 3, 0x7fff_ffff, 0x8000_0000, SKF_LL_OFF, SKF_NET_OFF + 2, u32::MAX] {
        for k in [0u32, 1, 12, SKF_NET_OFF, 0x8000_0001, u32::MAX - 1] {
            for op in [Opcode::LdIndW, Opcode::LdIndH, Opcode::LdIndB] {
                cases.push(vec![ld(Opcode::LdxImm, x), ld(op, k), ret_a]);
            }
        }
    }
    // Shifts by X (masked to 5 bits), division and modulo by X = 0, len.
    for x in [0u32, 1, 31, 32, 33, 255] {
        for op in [Opcode::LshX, Opcode::RshX, Opcode::DivX, Opcode::ModX] {
            cases.push(vec![
                ld(Opcode::LdImm, 0x8765_4321),
                ld(Opcode::LdxImm, x),
                Insn::stmt(op.code(), 0),
                ret_a,
            ]);
        }
    }
    cases.push(vec![Insn::stmt(Opcode::LdLen.code(), 0), ret_a]);
    cases.push(vec![
        Insn::stmt(Opcode::LdxLen.code(), 0),
        Insn::stmt(Opcode::Txa.code(), 0),
        ret_a,
    ]);
    let mut wires: Vec<(Vec<u8>, u32)> = packets.clone();
    wires.push((vec![1, 2, 3], 2)); // wire below caplen
    wires.push((vec![0; 20], 100_000)); // wire above 64 KiB
    wires.push((vec![], 0));
    wires.push((vec![0x45; sift_kernel::MAX_PACKET], 9000));
    for (i, prog) in cases.iter().enumerate() {
        check(prog, &wires, &format!("case {i}"));
    }
}

#[test]
fn long_packets_are_refused_not_cut() {
    if !engine_available() {
        return;
    }
    let prog = validate(&[Insn::stmt(Opcode::RetK.code(), u32::MAX)], Mode::Linux).unwrap();
    let e = KernelEbpf::new(&prog).unwrap();
    let err = e.run(&vec![0; sift_kernel::MAX_PACKET + 1], 5000).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(e.run(&vec![0; sift_kernel::MAX_PACKET], 5000).unwrap(), u32::MAX);
}

#[test]
fn time_reports_nanoseconds_per_run() {
    if !engine_available() {
        return;
    }
    let prog = validate(&[Insn::stmt(Opcode::RetK.code(), 1)], Mode::Linux).unwrap();
    let e = KernelEbpf::new(&prog).unwrap();
    let ns = e.time(&[0; 64], 64, 10_000).unwrap();
    assert!(ns > 0 && ns < 100_000, "{ns} ns per run");
}

#[test]
fn verifier_refusals_carry_the_log() {
    if !engine_available() {
        return;
    }
    use sift_ebpf::{EbpfInsn, EbpfProgram};
    // r2 = data; r0 = *(u8 *)(r2 + 0); exit: a packet read without a bounds check.
    let bad = EbpfProgram {
        insns: vec![
            EbpfInsn::load(0x00, 2, 1, sift_ebpf::skb::DATA),
            EbpfInsn::load(0x10, 0, 2, 0),
            EbpfInsn::exit(),
        ],
    };
    match KernelEbpf::load(bad) {
        Err(EbpfError::Rejected { errno, log }) => {
            assert_eq!(errno.raw_os_error(), Some(libc::EACCES), "{log}");
            assert!(log.contains("invalid access to packet"), "{log}");
        }
        other => panic!("{other:?}"),
    }
}

/// Filters compiled by sift on generated Ethernet traffic, some frames cut short by the
/// capture (wire length above the captured length, which `len` must see).
#[test]
fn compiled_filters_on_generated_traffic_agree() {
    if !engine_available() {
        return;
    }
    use sift_compile::pipeline::{self, LinkType};
    use sift_filter::TableResolver;
    use sift_gen::{Config, Generator};
    let cfg = Config { truncate: 0.2, malformed: 0.05, encapsulation: 0.2, ..Config::default() };
    let mut g = Generator::new(0xfeed, cfg);
    let packets: Vec<(Vec<u8>, u32)> = (0..1500)
        .map(|_| {
            let mut buf = Vec::new();
            let m = g.next_frame(&mut buf);
            (buf, m.wire_len)
        })
        .filter(|(p, _)| p.len() <= sift_kernel::MAX_PACKET)
        .collect();
    assert!(packets.iter().any(|(p, w)| *w > p.len() as u32));
    let resolver = TableResolver::well_known();
    let opts = pipeline::Options::new(LinkType::EN10MB, &resolver).optimize(false);
    let mut pairs = 0;
    for expr in [
        "",
        "tcp",
        "udp port 53",
        "ip and tcp[tcpflags] & tcp-syn != 0",
        "vlan and udp",
        "len > 200 and len < 1000",
        "greater 600",
        "ip6 and tcp port 443",
        "ip[6:2] & 0x1fff != 0",
        "icmp or arp or pppoes",
        "mpls",
    ] {
        let prog = pipeline::compile(expr, &opts).unwrap().program;
        pairs += check(prog.insns(), &packets, expr);
    }
    eprintln!("eBPF test run: {pairs} (compiled filter, generated frame) pairs agree");
}
