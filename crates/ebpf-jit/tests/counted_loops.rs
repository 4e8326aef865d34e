//! Counted loops (the JIT checks their accesses once per entry and runs an unchecked copy)
//! against the interpreter: random loops over the input memory with induction pointers of
//! random strides and offsets — inside, straddling and outside the memory, so that many
//! entry checks fail and the checked copy must fault where the interpreter does — random
//! bounds and comparisons, early exits and budgets that run out inside the loop. The JIT's
//! result and memory equal the interpreter's, and its budget measure (`Vm::executed`)
//! equals that of the code without loop versioning (constant blinding turns it off).
//!
//! `SIFT_JIT_LOOP_PROGRAMS=N` sets how many programs (default 20,000).

use iced_x86::{Decoder, DecoderOptions, OpKind, Register};
use sift_ebpf::EbpfInsn;
use sift_ebpf_jit::{JitOptions, compile, jit};
use sift_ebpf_vm::{Fault, RunError, Vm, test_helpers};
use sift_testkit::Rng;

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> EbpfInsn {
    EbpfInsn { code, dst, src, off, imm }
}

/// A counted loop: `r3` counts from `a` towards `b` (`r4`), `r5` and `r6` walk the memory
/// from `r1` with their own strides, the body loads, stores and may leave early.
fn program(rng: &mut Rng) -> Vec<EbpfInsn> {
    let up = rng.chance(2);
    let (a, b) = (rng.below(24) as i32, rng.below(24) as i32);
    let mut p = vec![
        insn(0xb7, 0, 0, 0, 0),
        insn(0xb7, 3, 0, 0, a),
        insn(0xb7, 4, 0, 0, b),
        insn(0xbf, 5, 1, 0, 0),
        insn(0x07, 5, 0, 0, rng.below(64) as i32 - 4),
        insn(0xbf, 6, 1, 0, 0),
        insn(0x07, 6, 0, 0, rng.below(64) as i32 - 4),
    ];
    let head = p.len();
    let mut body = Vec::new();
    let sizes = [0x00u8, 0x08, 0x10, 0x18];
    for _ in 0..1 + rng.below(4) {
        let size = sizes[rng.below(4) as usize];
        let off = rng.below(24) as i16 - 8;
        match rng.below(5) {
            0 | 1 => body.push(insn(0x61 | size, 7, 5, off, 0)),
            2 => body.push(insn(0x63 | size, 6, 0, off, 0)),
            3 => body.push(insn(0x62 | size, 6, 0, off, rng.next() as i32)),
            _ => {
                body.push(insn(0xbf, 8, 5, 0, 0));
                body.push(insn(0x0f, 8, 3, 0, 0));
                body.push(insn(0x71, 7, 8, off, 0));
            }
        }
        body.push(insn(0x0f, 0, 7, 0, 0));
    }
    if rng.chance(3) {
        // An early exit (forward, past the loop).
        body.push(insn(0x25, 0, 0, 0x7fff, rng.below(2000) as i32));
    }
    let s5 = rng.below(9) as i32 - 4;
    let s6 = rng.below(9) as i32 - 4;
    body.push(insn(0x07, 5, 0, 0, s5));
    body.push(insn(0x07, 6, 0, 0, s6));
    body.push(if up { insn(0x07, 3, 0, 0, 1) } else { insn(0x17, 3, 0, 0, 1) });
    // The back edge: `r3 rel r4` or `r4 rel' r3`, unsigned, continuing towards the bound.
    let ops: &[u8] = if up { &[0xa0, 0xb0, 0x50] } else { &[0x20, 0x30, 0x50] };
    let op = ops[rng.below(ops.len() as u64) as usize];
    let back = p.len() + body.len();
    let off = (head as i64 - back as i64 - 1) as i16;
    let edge = if rng.chance(2) {
        insn(op | 0x0d, 3, 4, off, 0)
    } else {
        let flip = match op {
            0xa0 => 0x20,
            0xb0 => 0x30,
            0x20 => 0xa0,
            0x30 => 0xb0,
            o => o,
        };
        insn(flip | 0x0d, 4, 3, off, 0)
    };
    p.extend(body);
    p.push(edge);
    let out = p.len();
    p.push(insn(0x95, 0, 0, 0, 0));
    // The early exits land on the final exit.
    for (k, i) in p.iter_mut().enumerate() {
        if i.code == 0x25 && i.off == 0x7fff {
            i.off = (out - k - 1) as i16;
        }
    }
    p
}

fn run(vm: &mut Vm, mem: &[u8]) -> (Result<u64, RunError>, Vec<u8>, u64) {
    let mut m = mem.to_vec();
    let r = vm.run(&mut m);
    (r, m, vm.executed())
}

#[test]
fn counted_loops_equal_the_interpreter_and_the_unversioned_code() {
    let n: u64 =
        std::env::var("SIFT_JIT_LOOP_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let mut rng = Rng(0x100b_5eed);
    let (mut faults, mut budget_faults, mut versioned) = (0, 0, 0);
    for case in 0..n {
        let p = program(&mut rng);
        let len = 16 + rng.below(240) as usize;
        let mem: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let budget = if rng.chance(4) { 1 + rng.below(300) } else { 100_000 };
        let vm = |opts: Option<JitOptions>| {
            let mut vm = Vm::load(&p, test_helpers()).expect("loads");
            vm.set_budget(budget);
            if let Some(o) = opts {
                jit(&mut vm, &o).expect("compiles");
            }
            vm
        };
        // Whether the loop has an unchecked copy: accesses indexed by the delta in r10.
        let code = compile(&vm(None), &JitOptions::default()).expect("compiles");
        versioned += usize::from(
            Decoder::with_ip(64, code.bytes(), 0, DecoderOptions::NONE).into_iter().any(|i| {
                (0..i.op_count()).any(|o| i.op_kind(o) == OpKind::Memory)
                    && i.memory_index() == Register::R10
            }),
        );
        let want = run(&mut vm(None), &mem);
        let got = run(&mut vm(Some(JitOptions::default())), &mem);
        let plain =
            run(&mut vm(Some(JitOptions { blinding: true, ..JitOptions::default() })), &mem);
        let listing: String = p.iter().enumerate().map(|(k, i)| format!("{k}: {i:?}\n")).collect();
        let budget_fault =
            |r: &Result<u64, RunError>| matches!(r, Err(RunError { fault: Fault::Budget(_), .. }));
        // The engines measure the budget differently (instructions, loop spans): they
        // agree on every outcome but where one of them ran out.
        if !budget_fault(&want.0) && !budget_fault(&got.0) {
            assert_eq!((&want.0, &want.1), (&got.0, &got.1), "case {case}: mem {mem:?}\n{listing}");
        }
        assert_eq!(got, plain, "case {case}: versioned and plain code differ\n{listing}");
        faults += usize::from(got.0.is_err());
        budget_faults += usize::from(budget_fault(&got.0));
    }
    println!(
        "{n} counted loops ({versioned} with an unchecked copy): {faults} faults \
         ({budget_faults} of the budget)"
    );
    assert!(faults > 0 && budget_faults > 0 && (faults as u64) * 4 < n * 3);
    assert!(versioned as u64 * 2 > n, "too few loops versioned");
}
