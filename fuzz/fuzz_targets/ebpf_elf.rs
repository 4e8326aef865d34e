//! Any bytes as an eBPF ELF object: `sift-ebpf-elf` refuses it or loads it, never panics, and
//! what it loads is consistent (every program's `lddw` map references name a map of the
//! object). Seed it with objects of the C corpus (`crates/ebpf-elf/tests/c`, compiled with
//! `clang -O2 -g -target bpf -c`) in `fuzz/corpus/ebpf_elf/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf_elf::Object;

fuzz_target!(|data: &[u8]| {
    let Ok(object) = Object::parse(data) else { return };
    for p in &object.programs {
        for (slot, map) in p.map_references() {
            assert!(map < object.maps.len(), "{}: slot {slot} names map {map}", p.name);
        }
        let _ = sift_ebpf::decode_program(&p.insns);
        let _ = object.program(Some(&p.section));
    }
    let _ = object.program(None);
});
