//! The benchmark kernels (`benches/kernels/*.c`) give the same result on every engine: native
//! C, sift's interpreter and JIT, rbpf's interpreter and JIT, on the same input — `r0` and the
//! bytes a kernel writes — and the results known independently (primes below 10^4, a copy
//! equal to its source, where two strings differ). What the bench measures is thereby checked
//! to compute the same thing everywhere. Needs clang (SKIP without it; a failure under
//! `SIFT_REQUIRE_ORACLES=1`).

#[path = "../benches/kernels/harness.rs"]
mod harness;

use harness::{Engine, Engines, Kernel};

/// The result known without running any engine, where there is one.
fn known_r0(kernel: &Kernel) -> Option<u64> {
    match kernel.name {
        "prime" => Some(1229), // π(10^4)
        "strcmp" => {
            // The strings differ at their last byte, by one.
            let n = u64::from_le_bytes(kernel.input[..8].try_into().unwrap());
            Some(((-1i64 as u64) << 32) ^ (n - 1))
        }
        "return0" => Some(0),
        _ => None,
    }
}

#[test]
fn every_engine_agrees_on_every_kernel() {
    let Some(kernels) = harness::build_all() else { return };
    let mut disagreements = Vec::new();
    for kernel in &kernels {
        let mut engines = Engines::new(kernel).unwrap_or_else(|e| panic!("{e}"));
        let mut mem = kernel.input.clone();
        let reference = engines.run(Engine::Native, &mut mem);
        let written = mem[kernel.output.clone()].to_vec();
        if let Some(known) = known_r0(kernel) {
            assert_eq!(reference, known, "{}: native r0", kernel.name);
        }
        if kernel.name == "memcpy" {
            let n = kernel.output.len();
            assert_eq!(written, kernel.input[8..8 + n], "memcpy: native copy");
        }
        for engine in Engine::ALL {
            if let Err(why) = engines.available(engine) {
                eprintln!("{}: {} not run: {why}", kernel.name, engine.name());
                continue;
            }
            let mut mem = kernel.input.clone();
            let r0 = engines.run(engine, &mut mem);
            if r0 != reference {
                disagreements.push(format!(
                    "{}: {} r0 = {r0:#x}, native {reference:#x}",
                    kernel.name,
                    engine.name()
                ));
            }
            if mem[kernel.output.clone()] != written[..] {
                disagreements.push(format!(
                    "{}: {} writes other bytes than native",
                    kernel.name,
                    engine.name()
                ));
            }
        }
        println!("{}: r0 = {reference:#x} on every engine", kernel.name);
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
