//! Verified code runs only as what it was verified for: through another entry point than its
//! program type's, or after its maps were replaced by maps of another shape, a run ends with
//! an internal fault before the program starts (its unchecked accesses assume the verified
//! context size and value layout).

use sift_ebpf::{EbpfInsn, MapSpec, MapType, ProgType};
use sift_ebpf_jit::{JitOptions, jit_verified};
use sift_ebpf_vm::{Fault, Helpers, Map, SkbInfo, Vm, register_map_helpers};

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> EbpfInsn {
    EbpfInsn { code, dst, src, off, imm }
}

fn spec(value_size: u32) -> MapSpec {
    MapSpec {
        name: "m".into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size,
        max_entries: 1,
        flags: 0,
        initial: Vec::new(),
    }
}

#[test]
fn verified_code_refuses_other_entry_points_and_other_maps() {
    // r0 = ingress_ifindex + *(u32 *)(map_value(0) + 4)
    let p = [
        insn(0x61, 0, 1, 12, 0),
        insn(0x18, 6, 2, 0, 0),
        insn(0, 0, 0, 0, 0),
        insn(0x61, 7, 6, 4, 0),
        insn(0x0f, 0, 7, 0, 0),
        insn(0x95, 0, 0, 0, 0),
    ];
    let mut helpers = Helpers::new();
    register_map_helpers(&mut helpers);
    let mut vm = Vm::load_with_maps(&p, helpers, vec![Map::from_spec(&spec(8)).unwrap()]).unwrap();
    vm.maps_mut()[0].update(&0u32.to_le_bytes(), &[0, 0, 0, 0, 5, 0, 0, 0], 0).unwrap();
    let verifier = sift_ebpf_verifier::Options { privileged: true };
    jit_verified(&mut vm, ProgType::Xdp, &verifier, &JitOptions::default()).unwrap();
    let mut pkt = [0u8; 60];
    assert_eq!(vm.run_xdp(&mut pkt, 7), Ok(12));
    let internal = |r: Result<u64, sift_ebpf_vm::RunError>| matches!(r, Err(e) if e.pc == 0 && matches!(e.fault, Fault::Internal(_)));
    assert!(internal(vm.run(&mut [0u8; 64])));
    assert!(internal(vm.run_tc(&mut pkt, &SkbInfo::default())));
    assert!(internal(vm.run_socket_filter(&mut pkt, &SkbInfo::default())));
    // A map of another value size in place of the verified one.
    vm.maps_mut()[0] = Map::from_spec(&spec(2)).unwrap();
    assert!(internal(vm.run_xdp(&mut pkt, 7)));
    // A program type the VM has no entry point for is refused at compile time.
    let e =
        sift_ebpf_jit::compile_verified(&vm, ProgType::Unspec, &verifier, &JitOptions::default());
    assert!(matches!(e, Err(sift_ebpf_jit::JitError::ProgType(ProgType::Unspec))));
}
