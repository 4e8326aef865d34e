//! The VM's kernel cases (`sift-ebpf-vm`'s `tests/kernel/*.case`: maps of every type, the
//! kernel's helpers, tail calls, redirects, `bpf_xdp_adjust_head/meta/tail` moving the
//! packet, TC's writable `__sk_buff`) compiled: `r0`, the packets and the maps after every
//! run must be the interpreter's golden listing (`*.out`) line for line.

#[path = "../../ebpf-vm/tests/support/kernel_cases.rs"]
#[allow(dead_code)]
mod kernel_cases;

use sift_ebpf_jit::{JitOptions, jit};
use sift_ebpf_vm::Vm;

fn check(prepare: fn(&mut Vm)) {
    let cases = kernel_cases::cases();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    for path in cases {
        let case = kernel_cases::parse(&path);
        let got = kernel_cases::run_vm(&case, prepare);
        let want = std::fs::read_to_string(path.with_extension("out")).unwrap();
        let first = want.lines().zip(got.lines()).find(|(w, g)| w != g);
        assert!(want == got, "{}: first difference {first:?}\n{got}", path.display());
    }
}

#[test]
fn kernel_cases_give_the_interpreters_results() {
    check(|vm| {
        jit(vm, &JitOptions::default()).unwrap();
        assert!(vm.is_compiled());
    });
}

#[test]
fn kernel_cases_give_the_interpreters_results_blinded() {
    check(|vm| jit(vm, &JitOptions { blinding: true, ..JitOptions::default() }).unwrap());
}
