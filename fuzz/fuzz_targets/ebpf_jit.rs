//! Random bytes as an eBPF program and its memory, on the interpreter and on the JIT (checked;
//! with constant blinding when the first byte's bit 6 is set): the same `r0` or the same
//! located fault, the same memory, packets and maps. Half the inputs run with ubpf's test
//! helpers over plain memory; the other half with the kernel helpers, a map of every type the
//! VM has, the program as its own tail call target, over XDP, TC and socket-filter contexts in
//! turn. A budget fault ends the comparison (the engines charge the budget differently: the
//! interpreter per instruction, the JIT per backward jump and call), and both must stop.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf::{MapSpec, MapType};
use sift_ebpf_jit::{JitOptions, jit};
use sift_ebpf_vm::{
    Fault, Helpers, Map, RunError, SkbInfo, Vm, XdpPacket, register_kernel_helpers, test_helpers,
};

include!("ebpf_maps.rs");

const BUDGET: u64 = 100_000;

fn budget(r: &Result<u64, RunError>) -> bool {
    matches!(r, Err(RunError { fault: Fault::Budget(_), .. }))
}

/// Both runs' results agree, or both ran out of budget (`false`: stop comparing).
fn agree(a: &Result<u64, RunError>, b: &Result<u64, RunError>) -> bool {
    match (budget(a), budget(b)) {
        (false, false) => {
            assert_eq!(a, b, "interpreter and JIT differ");
            true
        }
        _ => false,
    }
}

fn maps_of(vm: &mut Vm) -> Vec<(Vec<(Vec<u8>, Vec<u8>)>, Vec<Vec<u8>>)> {
    vm.maps_mut().iter_mut().map(|m| (m.entries(), m.ringbuf_drain())).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let n = usize::from(first & 0x3f).min(rest.len());
    let (mem, prog) = rest.split_at(n);
    let usable = prog.len() / 8 * 8;
    let opts = JitOptions { blinding: first & 0x40 != 0, ..JitOptions::default() };
    if first & 0x80 == 0 {
        let vm = || {
            let mut vm = Vm::from_bytes(&prog[..usable], test_helpers()).ok()?;
            vm.set_budget(BUDGET);
            Some(vm)
        };
        let Some(mut interp) = vm() else { return };
        let mut jitted = vm().expect("loaded once, loads again");
        jit(&mut jitted, &opts).expect("the JIT compiles every loaded program");
        let (mut a, mut b) = (mem.to_vec(), mem.to_vec());
        if agree(&interp.run(&mut a), &jitted.run(&mut b)) {
            assert_eq!(a, b, "memory differs");
        }
        return;
    }
    let Ok(slots) = sift_ebpf::isa::slots_from_bytes(&prog[..usable]) else { return };
    let vm = || {
        let mut helpers = Helpers::new();
        register_kernel_helpers(&mut helpers);
        let mut vm = Vm::load_with_maps(&slots, helpers, maps()).ok()?;
        vm.set_budget(BUDGET);
        let target = vm.add_program(&slots).expect("loaded once, loads again");
        vm.maps_mut()[6].update(&0u32.to_le_bytes(), &0u32.to_le_bytes(), 0).expect("prog 0");
        vm.maps_mut()[6].update(&1u32.to_le_bytes(), &target.to_le_bytes(), 0).expect("prog 1");
        vm.env_mut().set_trace_output(std::io::sink());
        Some(vm)
    };
    let Some(mut interp) = vm() else { return };
    let mut jitted = vm().expect("loaded once, loads again");
    jit(&mut jitted, &opts).expect("the JIT compiles every loaded program");
    let (mut pa, mut pb) = (XdpPacket::new(mem), XdpPacket::new(mem));
    if !agree(&interp.run_xdp_packet(&mut pa, 1, 0), &jitted.run_xdp_packet(&mut pb, 1, 0)) {
        return;
    }
    assert_eq!((pa.data(), pa.meta()), (pb.data(), pb.meta()), "XDP packets differ");
    assert_eq!(interp.env().redirect, jitted.env().redirect, "redirects differ");
    let (mut a, mut b) = (mem.to_vec(), mem.to_vec());
    if !agree(
        &interp.run_tc(&mut a, &SkbInfo::default()),
        &jitted.run_tc(&mut b, &SkbInfo::default()),
    ) {
        return;
    }
    assert_eq!(a, b, "TC packets differ");
    let info = SkbInfo::default();
    if !agree(&interp.run_socket_filter(&mut a, &info), &jitted.run_socket_filter(&mut b, &info)) {
        return;
    }
    assert_eq!(a, b, "socket-filter packets differ");
    assert_eq!(maps_of(&mut interp), maps_of(&mut jitted), "maps differ");
});
