//! Random bytes as an eBPF program for the verifier: it never panics and ends within its
//! budget, and a program it accepts runs under the checked VM (as XDP, over a packet from the
//! input) without a memory fault.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf::{MapSpec, MapType};
use sift_ebpf_verifier::{Options, ProgType, verify_with};
use sift_ebpf_vm::{Helpers, Map, MapDef, MapKind, Vm, register_map_helpers};

fuzz_target!(|data: &[u8]| {
    // First byte: packet length (0–63) and whether the loader is privileged; the rest is the
    // program.
    let Some((&flags, rest)) = data.split_first() else { return };
    let Ok(slots) = sift_ebpf::isa::slots_from_bytes(&rest[..rest.len() / 8 * 8]) else { return };
    let maps = [MapSpec {
        name: "values".into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 16,
        max_entries: 4,
        flags: 0,
        initial: Vec::new(),
    }];
    let options = Options { privileged: flags & 0x80 != 0 };
    if verify_with(&slots, ProgType::Xdp, &maps, options).is_err() {
        return;
    }
    let mut helpers = Helpers::new();
    register_map_helpers(&mut helpers);
    let def = MapDef { kind: MapKind::Array, key_size: 4, value_size: 16, max_entries: 4 };
    let Ok(mut vm) = Vm::load_with_maps(&slots, helpers, vec![Map::new(def).unwrap()]) else {
        // The VM has fewer helpers than the verifier knows; such programs are not run.
        return;
    };
    vm.set_budget(1_000_000);
    let mut packet: Vec<u8> = (0..usize::from(flags & 0x3f)).map(|i| i as u8).collect();
    if let Err(e) = vm.run_xdp(&mut packet, 1) {
        assert!(matches!(e.fault, sift_ebpf_vm::Fault::Budget(_)), "verified program faulted: {e}");
    }
});
