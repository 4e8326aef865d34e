//! Random bytes as an eBPF program and its memory: loading never panics, and a loaded program
//! always ends (with `r0` or a located fault) within the instruction budget. Half the inputs
//! run with ubpf's test helpers over plain memory; the other half with the kernel helpers, one
//! map of every type the VM has (`lddw map_fd(0..10)`), the program as its own tail call
//! target, over XDP (resizable frame), TC and socket-filter contexts — and the maps stay
//! readable afterwards.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf::{MapSpec, MapType};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, XdpPacket, register_kernel_helpers, test_helpers};

const BUDGET: u64 = 100_000;

include!("ebpf_maps.rs");

fuzz_target!(|data: &[u8]| {
    // First byte: the mode (low bit) and how much of the rest is memory (0–127 bytes); the
    // remainder is the program.
    let Some((&first, rest)) = data.split_first() else { return };
    let n = usize::from(first >> 1).min(rest.len());
    let (mem, prog) = rest.split_at(n);
    let usable = prog.len() / 8 * 8;
    let mut mem = mem.to_vec();
    if first & 1 == 0 {
        let Ok(mut vm) = Vm::from_bytes(&prog[..usable], test_helpers()) else { return };
        vm.set_budget(BUDGET);
        let _ = vm.run(&mut mem);
        assert!(vm.executed() <= BUDGET);
        let mut packet = mem.clone();
        let _ = vm.run_with_packet(&mut mem, &mut packet);
        assert!(vm.executed() <= BUDGET);
        return;
    }
    let Ok(slots) = sift_ebpf::isa::slots_from_bytes(&prog[..usable]) else { return };
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let Ok(mut vm) = Vm::load_with_maps(&slots, helpers, maps()) else { return };
    vm.set_budget(BUDGET);
    let target = vm.add_program(&slots).expect("loaded once, loads again");
    vm.maps_mut()[6].update(&0u32.to_le_bytes(), &0u32.to_le_bytes(), 0).expect("prog 0");
    vm.maps_mut()[6].update(&1u32.to_le_bytes(), &target.to_le_bytes(), 0).expect("prog 1");
    vm.env_mut().set_trace_output(std::io::sink());
    vm.env_mut().cpu = u32::from(first >> 7);
    let mut p = XdpPacket::new(&mem);
    let _ = vm.run_xdp_packet(&mut p, 1, 0);
    assert!(vm.executed() <= BUDGET);
    assert!(p.bounds().meta <= p.bounds().data && p.bounds().data <= p.bounds().end);
    let mut packet = mem.clone();
    let _ = vm.run_tc(&mut packet, &SkbInfo::default());
    assert_eq!(packet.len(), mem.len());
    let _ = vm.run_socket_filter(&mut packet, &SkbInfo::default());
    assert!(vm.executed() <= BUDGET);
    for m in vm.maps_mut() {
        let _ = m.entries();
        let _ = m.ringbuf_drain();
    }
});
