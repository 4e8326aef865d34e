//! Differential tests against the system libpcap: the interpreter against `bpf_filter`, the
//! libpcap-mode validator against `bpf_validate`.
//!
//! Programs and packets come from `sift_vm::testgen` with fixed seeds, so a failure is
//! reproducible; the first mismatches are printed as assembler source.

use sift_insn::{Insn, Opcode, asm};
use sift_libpcap::{Libpcap, RawInsn};
use sift_verify::{Mode, Reason, validate};
use sift_vm::Interpreter;
use sift_vm::testgen::{self, GenConfig, Rng};
use std::collections::BTreeMap;

fn raw(prog: &[Insn]) -> Vec<RawInsn> {
    prog.iter().map(|i| RawInsn::new(i.code, i.jt, i.jf, i.k)).collect()
}

/// 10^6 (program, packet) pairs: our return value equals `bpf_filter`'s for every one.
///
/// The generator writes each scratch word before reading it (Debian's libpcap 1.10.3 leaves
/// `M[]` uninitialised), keeps constant shifts below 32 (undefined behaviour in libpcap's C)
/// and emits only opcodes `bpf_filter` implements; everything else is fair game, including
/// ancillary offsets and offsets near 2^32.
#[test]
fn interpreter_matches_bpf_filter() {
    let Some(lib) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    const PAIRS: u64 = 1_000_000;
    const PACKETS_PER_PROGRAM: u64 = 10;
    let mut rng = Rng::new(0x5eed_0003);
    let cfg = GenConfig::libpcap();
    let mut coverage: BTreeMap<u16, u64> = BTreeMap::new();
    let (mut pairs, mut mismatches, mut accepted, mut programs) = (0u64, 0u64, 0u64, 0u64);
    while pairs < PAIRS {
        let prog = testgen::program(&mut rng, &cfg);
        let v = validate(&prog, Mode::Libpcap).expect("generated programs are valid");
        let ours = Interpreter::new(&v);
        let raw = raw(&prog);
        let theirs = lib.prepare(&raw).expect("libpcap can run generated programs");
        programs += 1;
        for insn in &prog {
            *coverage.entry(insn.code).or_default() += 1;
        }
        for _ in 0..PACKETS_PER_PROGRAM {
            let (pkt, wire) = testgen::packet(&mut rng);
            let a = ours.run(&pkt, wire);
            let b = theirs.run(&pkt, wire);
            if a != b {
                mismatches += 1;
                if mismatches <= 5 {
                    eprintln!(
                        "MISMATCH ours {a} libpcap {b}, caplen {} wire {wire}, packet {:02x?}\n{}",
                        pkt.len(),
                        &pkt[..pkt.len().min(64)],
                        asm::disassemble(&prog)
                    );
                }
            }
            accepted += u64::from(a != 0);
            pairs += 1;
        }
    }
    eprintln!(
        "{pairs} pairs over {programs} programs, {accepted} accepted, {mismatches} mismatches"
    );
    assert_eq!(mismatches, 0);
    for op in Opcode::ALL {
        assert!(
            coverage.get(&op.code()).copied().unwrap_or(0) > 100,
            "opcode {op:?} barely covered"
        );
    }
    assert!(accepted > PAIRS / 50, "too few accepting runs ({accepted}) to be meaningful");
}

/// Hand-picked edges, each run on packets of every length 0..=20 and against libpcap.
#[test]
fn edge_programs_match_bpf_filter() {
    let Some(lib) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let programs = [
        "ld [16]\nret a",
        "ldh [18]\nret a",
        "ldb [19]\nret a",
        "ld [4294967292]\nret a",
        "ld [4294967295]\nret #1",
        "ldx #4294967295\nld [x + 1]\nret #1",
        "ldx #4294967292\nldb [x + 4]\nret #1",
        "ldx #16\nld [x + 0]\nret a",
        "ldx #1\nldh [x + 4294967295]\nret a",
        "ldxb 4*([19]&0xf)\ntxa\nret a",
        "ldxb 4*([0]&0xf)\nldb [x + 0]\nret a",
        "ld #len\nret a",
        "ldx #len\ntxa\nret a",
        "ld #0x80000000\nldx #0xffffffff\ndiv x\nret a",
        "ld #0xffffffff\nldx #0\nmod x\nret #7",
        "ld #3\nldx #31\nlsh x\nret a",
        "ld #3\nldx #32\nrsh x\nret #9",
        "ld #0\nneg\nret a",
        "ld #5\nneg\nret a",
        "ldb vlan_tci\nret #1",
        "ldb vlan_pr\nret #1",
        "ld proto\nret #1",
        "ret #0",
        "ret a",
    ];
    for src in programs {
        let prog = asm::assemble(src).unwrap();
        let v = validate(&prog, Mode::Libpcap).unwrap();
        let ours = Interpreter::new(&v);
        let raw = raw(&prog);
        for len in 0..=20u8 {
            let pkt: Vec<u8> = (0..len).map(|b| b.wrapping_mul(37) ^ 0x45).collect();
            for wire in [u32::from(len), 1500] {
                assert_eq!(
                    ours.run(&pkt, wire),
                    lib.filter(&raw, &pkt, wire),
                    "{src} on {len} bytes, wire {wire}"
                );
            }
        }
    }
}

/// Our libpcap-mode validator agrees with `bpf_validate` except in the documented refusals:
/// opcodes `bpf_filter` would abort on, and backward `ja`.
#[test]
fn libpcap_validator_matches_bpf_validate() {
    let Some(lib) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let mut rng = Rng::new(0x5eed_0004);
    let configs = [GenConfig::libpcap(), GenConfig::linux(), GenConfig::anything()];
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    for n in 0..60_000u32 {
        let cfg = &configs[n as usize % configs.len()];
        let mut prog = testgen::program(&mut rng, cfg);
        for _ in 0..rng.below(3) {
            prog = testgen::mutate(&mut rng, &prog);
        }
        let theirs = lib.validate(&raw(&prog));
        let ours = validate(&prog, Mode::Libpcap);
        let class = match (&ours, theirs) {
            (Ok(_), true) => "both accept",
            (Err(_), false) => "both reject",
            (Err(e), true) => match e.reason {
                Reason::UnknownOpcode(_) => "refused: opcode bpf_filter aborts on",
                Reason::JumpBackward => "refused: backward ja",
                _ => panic!(
                    "undocumented disagreement: we say {e}, bpf_validate accepts\n{}",
                    asm::disassemble(&prog)
                ),
            },
            (Ok(_), false) => {
                panic!("we accept what bpf_validate rejects:\n{}", asm::disassemble(&prog))
            }
        };
        *outcomes.entry(class).or_default() += 1;
    }
    eprintln!("{outcomes:#?}");
    for class in [
        "both accept",
        "both reject",
        "refused: opcode bpf_filter aborts on",
        "refused: backward ja",
    ] {
        assert!(
            outcomes.get(class).copied().unwrap_or(0) > 100,
            "class {class:?} barely exercised: {outcomes:?}"
        );
    }
}

/// Longer programs (up to 600 instructions, jumps up to 255 ahead) on the same terms.
#[test]
fn long_programs_match_bpf_filter() {
    let Some(lib) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let mut rng = Rng::new(0x5eed_0007);
    let cfg = GenConfig { max_len: 600, ..GenConfig::libpcap() };
    for _ in 0..2_000 {
        let prog = testgen::program(&mut rng, &cfg);
        let ours = Interpreter::new(&validate(&prog, Mode::Libpcap).unwrap());
        let raw = raw(&prog);
        for _ in 0..5 {
            let (pkt, wire) = testgen::packet(&mut rng);
            assert_eq!(
                ours.run(&pkt, wire),
                lib.filter(&raw, &pkt, wire),
                "\n{}",
                asm::disassemble(&prog)
            );
        }
    }
}
