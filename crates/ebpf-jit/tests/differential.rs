//! A random differential test: programs over the whole ISA (`support/random_programs.rs`)
//! run on the interpreter and on the JIT (checked, and with constant blinding): the same
//! `r0` or the same located fault, and the same memory afterwards.
//!
//! `SIFT_JIT_DIFF_PROGRAMS` sets how many programs (default 3,000).

#[path = "support/random_programs.rs"]
mod random_programs;

use random_programs::program;
use sift_ebpf_jit::{JitOptions, jit};
use sift_ebpf_vm::{Fault, Vm, test_helpers};
use sift_testkit::Rng;

/// The budget of both engines. The JIT charges a loop's span at each back edge and nothing
/// elsewhere, the interpreter each instruction: with loops of a few iterations far below it,
/// a run ends under both or exhausts it under both.
const BUDGET: u64 = 100_000;

fn run(vm: &mut Vm, mem: &[u8]) -> (Result<u64, sift_ebpf_vm::RunError>, Vec<u8>) {
    let mut m = mem.to_vec();
    let r = vm.run(&mut m);
    (r, m)
}

fn same(a: &Result<u64, sift_ebpf_vm::RunError>, b: &Result<u64, sift_ebpf_vm::RunError>) -> bool {
    match (a, b) {
        (Err(x), Err(y)) if matches!(x.fault, Fault::Budget(_)) => {
            matches!(y.fault, Fault::Budget(_))
        }
        _ => a == b,
    }
}

#[test]
fn jit_equals_interpreter_on_random_programs() {
    let n: u64 =
        std::env::var("SIFT_JIT_DIFF_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let mut rng = Rng(0x6a17_d1ff);
    let mut loaded = 0;
    let mut outcomes = std::collections::BTreeMap::new();
    for case in 0..n {
        let p = program(&mut rng);
        let mut mem = vec![0u8; 64];
        mem.iter_mut().for_each(|b| *b = rng.next() as u8);
        let mut interp = match Vm::load(&p, test_helpers()) {
            Ok(vm) => vm,
            Err(_) => continue,
        };
        loaded += 1;
        interp.set_budget(BUDGET);
        let (want, want_mem) = run(&mut interp, &mem);
        let kind = match &want {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("{:?}", std::mem::discriminant(&e.fault)),
        };
        *outcomes.entry(kind).or_insert(0u64) += 1;
        for opts in [JitOptions::default(), JitOptions { blinding: true, ..JitOptions::default() }]
        {
            let mut vm = Vm::load(&p, test_helpers()).unwrap();
            vm.set_budget(BUDGET);
            jit(&mut vm, &opts).unwrap();
            let (got, got_mem) = run(&mut vm, &mem);
            let budget = matches!(&want, Err(e) if matches!(e.fault, Fault::Budget(_)));
            if !same(&want, &got) || (!budget && want_mem != got_mem) {
                if let Ok(dir) = std::env::var("SIFT_JIT_DIFF_DUMP") {
                    let text: String = p
                        .iter()
                        .map(|i| format!("{} {} {} {} {}\n", i.code, i.dst, i.src, i.off, i.imm))
                        .collect();
                    std::fs::write(format!("{dir}/fail.txt"), text).unwrap();
                }
                let listing: Vec<String> =
                    p.iter().enumerate().map(|(k, i)| format!("{k}: {i:?}")).collect();
                panic!(
                    "case {case} ({opts:?}): interpreter {want:?}, JIT {got:?}\nmemory {}\nprogram:\n{}",
                    if want_mem == got_mem { "same" } else { "differs" },
                    listing.join("\n")
                );
            }
        }
    }
    println!("{loaded} programs; outcomes {outcomes:?}");
    assert!(outcomes.get("ok").is_some_and(|&k| k * 3 > loaded), "too few programs exit");
    assert!(loaded * 10 > n * 9, "only {loaded} of {n} programs loaded");
}
