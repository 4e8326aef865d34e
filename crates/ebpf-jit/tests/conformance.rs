//! The eBPF conformance suite and ubpf's tests under the JIT: the interpreter's runner
//! (`sift-ebpf-vm`'s `tests/support/conformance_runner.rs`) with every VM compiled before
//! its run, and the interpreter's expected listings: every `r0`, refusal and fault (message
//! and location) must be the interpreter's.

#[path = "../../ebpf-vm/tests/support/conformance_runner.rs"]
mod runner;

use runner::Engine;
use sift_ebpf_jit::{JitOptions, jit};

fn compiled(vm: &mut sift_ebpf_vm::Vm) {
    jit(vm, &JitOptions::default()).expect("the JIT compiles every loaded program");
    assert!(vm.is_compiled());
}

fn blinded(vm: &mut sift_ebpf_vm::Vm) {
    jit(vm, &JitOptions { blinding: true, ..JitOptions::default() }).expect("compiles");
}

const JIT: Engine = Engine {
    prepare: compiled,
    golden_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../ebpf-vm/tests/golden"),
    bless: false,
};

const BLINDED: Engine = Engine { prepare: blinded, ..JIT };

#[test]
fn conformance_suite_passes() {
    runner::conformance_suite_passes(&JIT);
}

#[test]
fn conformance_negative_tests_are_caught() {
    runner::conformance_negative_tests_are_caught(&JIT);
}

#[test]
fn ubpf_tests_pass() {
    runner::ubpf_tests_pass(&JIT);
}

#[test]
fn conformance_suite_passes_with_constant_blinding() {
    runner::conformance_suite_passes(&BLINDED);
    runner::ubpf_tests_pass(&BLINDED);
}
