//! Any bytes as eBPF assembly (the conformance suite's syntax): the assembler never panics,
//! and whatever assembles prints to text that assembles to the same instructions; their
//! encoding decodes back to them when every register is a real one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_ebpf::asm::{assemble, print, strip};
use sift_ebpf::{decode_program, encode_program};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let Ok(insns) = assemble(src) else { return };
    let text = print(&insns);
    let again =
        assemble(&text).unwrap_or_else(|e| panic!("printed text does not assemble: {e}\n{text}"));
    assert_eq!(again, insns, "{text}");
    let slots = encode_program(&insns);
    if let Ok(decoded) = decode_program(&slots) {
        assert_eq!(strip(&decoded), insns);
    }
    let _ = sift_ebpf::listing::objdump(&slots);
});
