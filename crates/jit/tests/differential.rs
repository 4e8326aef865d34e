//! The JIT against the reference interpreter: the same return value on every (program, packet)
//! pair, for random validated programs covering every opcode and edge operand, and for
//! hand-written programs around the bounds and arithmetic edge cases.

use sift_insn::Insn;
use sift_insn::code::*;
use sift_jit::{Filter, JitFilter, PacketRef};
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;
use sift_vm::testgen::{self, GenConfig, Rng};

/// At least 10^6 random pairs: 100,000 programs × 10 packets.
#[test]
fn random_programs_match_the_interpreter() {
    let mut rng = Rng::new(0x5EED_0001);
    let mut pairs = 0u64;
    let mut accepted = 0u64;
    for cfg in [GenConfig::libpcap(), GenConfig::linux()] {
        for _ in 0..50_000 {
            let prog = testgen::program(&mut rng, &cfg);
            let Ok(v) = validate(&prog, Mode::Libpcap) else { continue };
            let interp = Interpreter::new(&v);
            let jit = JitFilter::compile(&v).expect("compiles");
            for _ in 0..10 {
                let (pkt, wire) = testgen::packet(&mut rng);
                let want = interp.run(&pkt, wire);
                let got = jit.run(&pkt, wire);
                assert_eq!(
                    got,
                    want,
                    "program:\n{}\npacket len {} wire {wire}",
                    sift_insn::asm::disassemble(&prog),
                    pkt.len()
                );
                pairs += 1;
                accepted += u64::from(want != 0);
            }
        }
    }
    assert!(pairs >= 1_000_000, "only {pairs} pairs");
    eprintln!("{pairs} (program, packet) pairs, {accepted} accepting, 0 mismatches");
}

fn check(prog: &[Insn], packets: &[(&[u8], u32)]) {
    let v = validate(prog, Mode::Libpcap).expect("valid");
    let interp = Interpreter::new(&v);
    let jit = JitFilter::compile(&v).expect("compiles");
    for (pkt, wire) in packets {
        assert_eq!(jit.run(pkt, *wire), interp.run(pkt, *wire), "{prog:?} on {} bytes", pkt.len());
    }
}

#[test]
fn edges_of_loads_and_arithmetic() {
    let data: Vec<u8> = (0..=255u8).collect();
    let packets: Vec<(&[u8], u32)> = (0..=70).map(|n| (&data[..n], n as u32 + 3)).collect();
    let ld = |code: u16, k: u32| Insn::stmt(code, k);
    let ret_a = Insn::stmt(BPF_RET | BPF_A, 0);
    let mut cases: Vec<Vec<Insn>> = Vec::new();
    for k in [
        0u32,
        1,
        2,
        3,
        60,
        63,
        64,
        65,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_f02c,
        0xffff_fffe,
        u32::MAX,
    ] {
        for size in [BPF_W, BPF_H, BPF_B] {
            cases.push(vec![ld(BPF_LD | size | BPF_ABS, k), ret_a]);
            for x in [0u32, 1, 60, 0xffff_ffff, 0x8000_0000] {
                cases.push(vec![ld(BPF_LDX | BPF_IMM, x), ld(BPF_LD | size | BPF_IND, k), ret_a]);
            }
        }
        cases.push(vec![
            ld(BPF_LDX | BPF_B | BPF_MSH, k),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            ret_a,
        ]);
    }
    for a in [0u32, 1, 7, 0x8000_0000, u32::MAX] {
        for x in [0u32, 1, 3, 31, 32, 33, u32::MAX] {
            for op in [
                BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD, BPF_AND, BPF_OR, BPF_XOR, BPF_LSH,
                BPF_RSH,
            ] {
                cases.push(vec![
                    ld(BPF_LD | BPF_IMM, a),
                    ld(BPF_LDX | BPF_IMM, x),
                    Insn::stmt(BPF_ALU | op | BPF_X, 0),
                    ret_a,
                ]);
                if !(x == 0 && (op == BPF_DIV || op == BPF_MOD)) {
                    cases.push(vec![
                        ld(BPF_LD | BPF_IMM, a),
                        Insn::stmt(BPF_ALU | op | BPF_K, x),
                        ret_a,
                    ]);
                }
            }
            for op in [BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET] {
                let t = Insn::stmt(BPF_RET | BPF_K, 1);
                let f = Insn::stmt(BPF_RET | BPF_K, 2);
                cases.push(vec![
                    ld(BPF_LD | BPF_IMM, a),
                    Insn::jump(BPF_JMP | op | BPF_K, x, 0, 1),
                    t,
                    f,
                ]);
                cases.push(vec![
                    ld(BPF_LD | BPF_IMM, a),
                    ld(BPF_LDX | BPF_IMM, x),
                    Insn::jump(BPF_JMP | op | BPF_X, 0, 1, 0),
                    t,
                    f,
                ]);
            }
        }
    }
    // Memory: starts zeroed, keeps values, and `len` is the wire length.
    cases.push(vec![Insn::stmt(BPF_LD | BPF_MEM, 5), ret_a]);
    cases.push(vec![
        Insn::stmt(BPF_LD | BPF_W | BPF_LEN, 0),
        Insn::stmt(BPF_ST, 15),
        Insn::stmt(BPF_LDX | BPF_W | BPF_LEN, 0),
        Insn::stmt(BPF_STX, 0),
        Insn::stmt(BPF_LD | BPF_IMM, 9),
        Insn::stmt(BPF_LDX | BPF_MEM, 15),
        Insn::stmt(BPF_ALU | BPF_ADD | BPF_X, 0),
        Insn::stmt(BPF_LDX | BPF_MEM, 0),
        Insn::stmt(BPF_ALU | BPF_ADD | BPF_X, 0),
        Insn::stmt(BPF_ALU | BPF_NEG, 0),
        ret_a,
    ]);
    for prog in &cases {
        check(prog, &packets);
    }
}

/// Branch distances beyond a rel8 jump: long jumps and long forward chains.
#[test]
fn long_programs_use_near_jumps_correctly() {
    for n in [10usize, 40, 100, 200, 1000, 4000] {
        // ldb [i % 64]; jeq #i  jt → accept at the very end, jf next; … ; ret #0; ret #7
        let mut prog = Vec::new();
        for i in 0..n {
            prog.push(Insn::stmt(BPF_LD | BPF_B | BPF_ABS, (i % 64) as u32));
            let remaining = (n - i - 1) * 2;
            let jt = (remaining + 1).min(255) as u8;
            prog.push(Insn::jump(
                BPF_JMP | BPF_JEQ | BPF_K,
                (i % 256) as u32,
                if remaining < 255 { jt } else { 0 },
                0,
            ));
        }
        prog.push(Insn::stmt(BPF_RET | BPF_K, 0));
        prog.push(Insn::stmt(BPF_RET | BPF_K, 7));
        let data: Vec<u8> = (0..64u8).collect();
        let mut other = data.clone();
        other[5] = 200;
        check(&prog, &[(&data, 64), (&other, 64), (&data[..10], 64)]);
    }
}

#[test]
fn fallback_keeps_the_reason_and_batches_agree() {
    let prog = vec![Insn::stmt(BPF_LD | BPF_H | BPF_ABS, 12), Insn::stmt(BPF_RET | BPF_A, 0)];
    let v = validate(&prog, Mode::Linux).unwrap();
    let f = Filter::new(&v);
    assert!(f.fallback_reason().is_none(), "x86-64 runs the JIT");
    let a = [0u8; 14];
    let mut b = [0u8; 14];
    b[12] = 0x86;
    b[13] = 0xdd;
    let mut out = Vec::new();
    let batch = [PacketRef::new(&a, 14), PacketRef::new(&b, 14), PacketRef::new(&b[..13], 14)];
    assert_eq!(f.run_batch(&batch, &mut out), 1);
    assert_eq!(out, vec![0, 0x86dd, 0]);
}

/// Programs with loops (`Mode::LibpcapLoops`): random programs whose `ja`s sometimes jump
/// back, under random small loop budgets (most of these loops never end on their own, so the
/// budget decides), one packet at a time and in batches; the JIT must end every run exactly
/// where the interpreter does.
#[test]
fn random_loops_match_the_interpreter_at_every_budget() {
    let mut rng = Rng::new(0x5EED_100B);
    let (mut programs, mut pairs, mut accepted) = (0, 0u64, 0u64);
    while programs < 3000 {
        let prog = testgen::program(&mut rng, &GenConfig::loops());
        let Ok(v) = validate(&prog, Mode::LibpcapLoops) else { continue };
        if v.is_acyclic() {
            continue;
        }
        programs += 1;
        let budget = match rng.below(4) {
            0 => rng.below(4) as u32,
            1 => rng.below(64) as u32,
            _ => rng.below(5000) as u32,
        };
        let interp = Interpreter::new(&v).with_loop_budget(budget);
        let jit = JitFilter::compile_with_loop_budget(&v, budget).expect("compiles");
        let packets: Vec<(Vec<u8>, u32)> = (0..6).map(|_| testgen::packet(&mut rng)).collect();
        let batch: Vec<PacketRef<'_>> =
            packets.iter().map(|(p, w)| PacketRef::new(p, *w)).collect();
        let want: Vec<u32> = batch.iter().map(|p| interp.run(p.data(), p.wire_len())).collect();
        for (p, &w) in batch.iter().zip(&want) {
            let got = jit.run(p.data(), p.wire_len());
            assert_eq!(
                got,
                w,
                "budget {budget}, program:\n{}\npacket len {}",
                sift_insn::asm::disassemble(&prog),
                p.data().len()
            );
            pairs += 1;
            accepted += u64::from(w != 0);
        }
        let mut got = Vec::new();
        jit.run_batch(&batch, &mut got);
        assert_eq!(
            got,
            want,
            "JIT batch, budget {budget}:\n{}",
            sift_insn::asm::disassemble(&prog)
        );
        interp.run_batch(&batch, &mut got);
        assert_eq!(got, want, "interpreter batch, budget {budget}");
    }
    eprintln!("{programs} looping programs, {pairs} pairs, {accepted} accepting, 0 mismatches");
    assert!(accepted > 100, "the loops must also accept packets");
}

/// A counting loop (`M[0] += 1` until it is `n`, then `ret a`; eight instructions jumped back
/// over per round) around the default budget, which it spends exactly after 2^22 rounds.
#[test]
fn the_default_budget_ends_loops_where_the_interpreter_does() {
    let counting = |n: u32| {
        let prog = [
            Insn::stmt(BPF_LDX | BPF_IMM, 0),
            Insn::stmt(BPF_LDX | BPF_IMM, 0),
            Insn::stmt(BPF_LDX | BPF_IMM, 0),
            Insn::stmt(BPF_LD | BPF_MEM, 0),
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1),
            Insn::stmt(BPF_ST, 0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, n, 1, 0),
            Insn::stmt(BPF_JMP | BPF_JA, u32::MAX - 7),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ];
        validate(&prog, Mode::LibpcapLoops).unwrap()
    };
    let rounds = sift_verify::LOOP_BUDGET / 8;
    for (n, want) in [(1, 1), (rounds, rounds), (rounds + 1, rounds + 1), (rounds + 2, 0)] {
        let v = counting(n);
        let jit = JitFilter::compile(&v).unwrap();
        assert_eq!(jit.run(&[], 0), want, "{n} rounds");
        assert_eq!(Interpreter::new(&v).run(&[], 0), want, "{n} rounds");
        let mut got = Vec::new();
        jit.run_batch(&[PacketRef::new(&[], 0), PacketRef::new(&[1], 1)], &mut got);
        assert_eq!(got, vec![want, want], "the budget is reset for every packet of a batch");
    }
    // A loop without end, with M[] unused: the budget needs a frame of its own.
    let forever = [Insn::stmt(BPF_JMP | BPF_JA, u32::MAX), Insn::stmt(BPF_RET | BPF_K, 1)];
    let v = validate(&forever, Mode::LibpcapLoops).unwrap();
    assert_eq!(JitFilter::compile(&v).unwrap().run(&[], 0), 0);
}

/// Bounds checks hoisted across loops: the head of a loop must assume nothing about the
/// length, since the jump back into it may come from a path that checked less than the paths
/// that reach it going forward.
#[test]
fn hoisted_checks_stay_sound_across_loops() {
    // Forward, the head (3) is reached only after `ld [20]` checked 24 bytes; the jump back
    // comes from a path that checked one.
    let prog = [
        Insn::stmt(BPF_LD | BPF_B | BPF_ABS, 0),        // 0: ldb [0]
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 4, 0), // 1: jeq #1, 6, 2
        Insn::stmt(BPF_LD | BPF_W | BPF_ABS, 20),       // 2: ld [20]
        Insn::stmt(BPF_LD | BPF_W | BPF_ABS, 20),       // 3: ld [20] (the head)
        Insn::stmt(BPF_RET | BPF_A, 0),                 // 4: ret a
        Insn::stmt(BPF_RET | BPF_K, 0),                 // 5
        Insn::stmt(BPF_JMP | BPF_JA, u32::MAX - 3),     // 6: ja 3
        Insn::stmt(BPF_RET | BPF_K, 0),                 // 7
    ];
    let v = validate(&prog, Mode::LibpcapLoops).unwrap();
    let (interp, jit) = (Interpreter::new(&v), JitFilter::compile(&v).unwrap());
    let data = [1u8; 64];
    for len in 0..=30 {
        let want = interp.run(&data[..len], len as u32);
        assert_eq!(want, if len >= 24 { 0x0101_0101 } else { 0 });
        assert_eq!(jit.run(&data[..len], len as u32), want, "{len} bytes");
    }
    // A loop that walks `[x + 0]` forward one byte per round until a 0, then `ldb [40]`.
    // 0: ldb [0]; 1: ldb [x + 0] (the head); 2: jeq #0, 7, 3; 3: txa; 4: add #1; 5: tax;
    // 6: ja 1; 7: ldb [40]; 8: ret a
    let prog = [
        Insn::stmt(BPF_LD | BPF_B | BPF_ABS, 0),
        Insn::stmt(BPF_LD | BPF_B | BPF_IND, 0),
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 4, 0),
        Insn::stmt(BPF_MISC | BPF_TXA, 0),
        Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1),
        Insn::stmt(BPF_MISC | BPF_TAX, 0),
        Insn::stmt(BPF_JMP | BPF_JA, u32::MAX - 5),
        Insn::stmt(BPF_LD | BPF_B | BPF_ABS, 40),
        Insn::stmt(BPF_RET | BPF_A, 0),
    ];
    let v = validate(&prog, Mode::LibpcapLoops).unwrap();
    let interp = Interpreter::new(&v);
    let jit = JitFilter::compile(&v).unwrap();
    for len in 0..=64usize {
        for zero_at in [0usize, 3, 39, 41, 63] {
            let mut pkt: Vec<u8> = (1..=len as u8).collect();
            if zero_at < len {
                pkt[zero_at] = 0;
            }
            pkt.iter_mut().skip(40).for_each(|b| *b = b.wrapping_add(7));
            let want = interp.run(&pkt, len as u32);
            assert_eq!(jit.run(&pkt, len as u32), want, "{len} bytes, zero at {zero_at}");
        }
    }
}
