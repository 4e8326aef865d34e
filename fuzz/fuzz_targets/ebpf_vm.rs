//! Random bytes as an eBPF program and its memory: loading never panics, and a loaded program
//! always ends (with `r0` or a located fault) within the instruction budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf_vm::{Vm, test_helpers};

const BUDGET: u64 = 100_000;

fuzz_target!(|data: &[u8]| {
    // First byte: how much of the rest is memory (0–255 bytes); the remainder is the program.
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n).min(rest.len());
    let (mem, prog) = rest.split_at(n);
    let usable = prog.len() / 8 * 8;
    let Ok(mut vm) = Vm::from_bytes(&prog[..usable], test_helpers()) else { return };
    vm.set_budget(BUDGET);
    let mut mem = mem.to_vec();
    let _ = vm.run(&mut mem);
    assert!(vm.executed() <= BUDGET);
    let mut packet = mem.clone();
    let _ = vm.run_with_packet(&mut mem, &mut packet);
    assert!(vm.executed() <= BUDGET);
});
