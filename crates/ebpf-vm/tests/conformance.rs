//! The eBPF conformance suite and ubpf's tests (`../shared/corpus/ebpf`) on the interpreter;
//! the runner (shared with the JIT's tests) is `support/conformance_runner.rs`, the expected
//! listings `golden/*.txt` (`BLESS=1` rewrites them).

#[path = "support/conformance_runner.rs"]
mod runner;

use runner::Engine;

const INTERPRETER: Engine = Engine {
    prepare: |_| {},
    golden_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"),
    bless: true,
};

#[test]
fn conformance_suite_passes() {
    runner::conformance_suite_passes(&INTERPRETER);
}

#[test]
fn conformance_negative_tests_are_caught() {
    runner::conformance_negative_tests_are_caught(&INTERPRETER);
}

#[test]
fn ubpf_tests_pass() {
    runner::ubpf_tests_pass(&INTERPRETER);
}
