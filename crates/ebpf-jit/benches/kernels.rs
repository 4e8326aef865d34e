//! Issue 18's benchmark: the C kernels of `benches/kernels/` (log2, prime, memcpy, switch,
//! strcmp, parse, in the style of eunomia-bpf/bpf-benchmark) on every engine, same input, same
//! run: native `clang -O2`, sift's interpreter and JIT, rbpf's interpreter and JIT. Plus `per-call` (the `return0` kernel: the fixed cost of one
//! call) and `compile` (JIT compile time of generated straight-line programs of 100 and 65,536
//! instructions).
//!
//! Criterion groups are `kernel-<name>`, `per-call` and `compile-<n>`, functions the engine
//! names, so medians are in `target/criterion/<group>/<engine>/new/estimates.json`;
//! `benches/ebpf-kernels.sh` runs this and prints the medians and the ratios. Every
//! engine's result was checked equal by `tests/kernels.rs`; here each engine's `r0` is checked
//! once more before it is measured.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

#[path = "kernels/harness.rs"]
mod harness;

use std::time::Duration;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use harness::{Engine, Engines, Kernel};
use sift_ebpf::asm::assemble;
use sift_ebpf::encode_program;
use sift_ebpf_vm::{Helpers, Vm};

/// Sizes of the generated programs of the `compile` groups (the bounds: ≤ 50 µs for
/// 100 instructions, ≤ 20 ms for 65,536).
const COMPILE_SIZES: [usize; 2] = [100, 65_536];

/// Measures `kernel` on every available engine in `group`.
fn bench_engines(group: &mut BenchmarkGroup<'_, WallTime>, kernel: &Kernel) {
    let mut engines = Engines::new(kernel).unwrap_or_else(|e| panic!("{e}"));
    let mut mem = kernel.input.clone();
    let expected = engines.run(Engine::Native, &mut mem);
    for engine in Engine::ALL {
        if let Err(why) = engines.available(engine) {
            println!("{}: {} not measured: {why}", kernel.name, engine.name());
            continue;
        }
        let r0 = engines.run(engine, &mut mem);
        assert_eq!(r0, expected, "{}: {} disagrees with native", kernel.name, engine.name());
        group.bench_function(engine.name(), |b| b.iter(|| engines.run(engine, &mut mem)));
    }
}

fn kernels(c: &mut Criterion) {
    let Some(kernels) = harness::build_all() else { return };
    for kernel in &kernels {
        let name = if kernel.name == "return0" {
            "per-call".to_string()
        } else {
            format!("kernel-{}", kernel.name)
        };
        let mut group = c.benchmark_group(name);
        bench_engines(&mut group, kernel);
        group.finish();
    }
}

/// A straight-line program of `n` slots (the last one `exit`): a rotation of ALU operations
/// over r0–r5, as a large generated filter would be.
fn straight_line(n: usize) -> Vec<u8> {
    let ops =
        ["add %r1, 7", "xor %r2, %r1", "mul %r3, 3", "lsh %r4, 1", "or %r5, %r2", "sub %r0, %r5"];
    let mut text =
        String::from("mov %r0, 0\nmov %r1, 1\nmov %r2, 2\nmov %r3, 3\nmov %r4, 4\nmov %r5, 5\n");
    for i in 6..n - 1 {
        text.push_str(ops[i % ops.len()]);
        text.push('\n');
    }
    text.push_str("exit\n");
    let program = encode_program(&assemble(&text).unwrap());
    assert_eq!(program.len(), n);
    program.iter().flat_map(|slot| slot.encode()).collect()
}

fn compile(c: &mut Criterion) {
    for n in COMPILE_SIZES {
        let program = straight_line(n);
        let mut group = c.benchmark_group(format!("compile-{n}"));
        // sift's load (decoding and structural checks) and compile, and for reference the
        // load alone.
        group.bench_function("sift-jit", |b| {
            b.iter(|| {
                let mut vm = Vm::from_bytes(&program, Helpers::new()).unwrap();
                sift_ebpf_jit::jit(&mut vm, &sift_ebpf_jit::JitOptions::default()).unwrap();
                vm
            })
        });
        group.bench_function("sift-load", |b| {
            b.iter(|| Vm::from_bytes(&program, Helpers::new()).unwrap())
        });
        match harness::rbpf_jit(&program) {
            Ok(_) => {
                // rbpf's load (its verifier) and compile, as sift's will be measured.
                group.bench_function("rbpf-jit", |b| {
                    b.iter(|| {
                        let mut vm = rbpf::EbpfVmRaw::new(Some(&program)).unwrap();
                        vm.jit_compile().unwrap();
                        vm
                    })
                });
            }
            Err(why) => println!("compile-{n}: rbpf-jit not measured: {why}"),
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = kernels, compile
}
criterion_main!(benches);
