//! Soundness: random XDP programs (context loads, packet accesses behind random guards,
//! stack stores and loads at random offsets, map lookups with or without null checks, scalar
//! arithmetic, forward branches) are verified, and every program the verifier accepts runs
//! under the checked VM on packets of several lengths without a memory fault.
//!
//! `SIFT_SOUNDNESS_PROGRAMS=N` changes the number of programs (default 300,000),
//! `SIFT_SOUNDNESS_SEED=S` the generator's seed.

mod common;

use common::generator::{Rng, VALUE_SIZE, map_spec, program};
use sift_ebpf_verifier::{Options, ProgType, verify_with};
use sift_ebpf_vm::{Helpers, Map, MapDef, MapKind, Vm, register_map_helpers};

/// Runs the generator; returns (accepted, faults found).
fn run(count: u64, seed: u64) -> (u64, Vec<String>) {
    let mut r = Rng(seed | 1);
    let maps = [map_spec()];
    let mut accepted = 0;
    let mut faults = Vec::new();
    for k in 0..count {
        let insns = program(&mut r);
        let slots = sift_ebpf::encode_program(&insns);
        let options = Options { privileged: k % 2 == 1 };
        if verify_with(&slots, ProgType::Xdp, &maps, options).is_err() {
            continue;
        }
        accepted += 1;
        let mut helpers = Helpers::new();
        register_map_helpers(&mut helpers);
        let def =
            MapDef { kind: MapKind::Array, key_size: 4, value_size: VALUE_SIZE, max_entries: 4 };
        let mut vm = match Vm::load_with_maps(&slots, helpers, vec![Map::new(def).unwrap()]) {
            Ok(vm) => vm,
            Err(e) => {
                faults.push(format!("load: {e}\n{}", sift_ebpf::asm::print(&insns)));
                continue;
            }
        };
        for len in [0usize, 1, 13, 14, 15, 20, 33, 60] {
            let mut packet: Vec<u8> = (0..len).map(|i| i as u8).collect();
            if let Err(e) = vm.run_xdp(&mut packet, 1) {
                faults.push(format!("{e} (packet of {len})\n{}", sift_ebpf::asm::print(&insns)));
                break;
            }
        }
        if faults.len() > 3 {
            break;
        }
    }
    (accepted, faults)
}

#[test]
fn accepted_programs_never_fault() {
    let count = std::env::var("SIFT_SOUNDNESS_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let seed = std::env::var("SIFT_SOUNDNESS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x005e_ed0f_5af3);
    let (accepted, faults) = run(count, seed);
    eprintln!("soundness: {count} programs, {accepted} accepted, {} faults", faults.len());
    assert!(faults.is_empty(), "accepted programs that fault:\n{}", faults.join("\n---\n"));
    // The generator must exercise the verifier's acceptance, not only its refusals.
    assert!(accepted * 20 > count, "only {accepted} of {count} accepted");
}
