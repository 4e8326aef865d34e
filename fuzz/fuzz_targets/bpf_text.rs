//! Any bytes as program text: the parsers and the assembler never panic, and whatever parses
//! survives a round trip through every printer unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_insn::text::{self, ListingStyle};
use sift_insn::{Program, asm};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let _ = text::parse_listing(src);
    let _ = text::parse_c_array(src);
    let _ = text::parse_decimal(src);
    if let Ok(p) = asm::assemble(src) {
        round_trip(&p);
    }
    if let Ok(p) = text::parse(src) {
        round_trip(&p);
    }
});

fn round_trip(p: &Program) {
    let again = asm::assemble(&asm::disassemble(p)).expect("disassembly assembles");
    assert_eq!(&again, p);
    assert_eq!(&text::parse(&text::c_array(p)).expect("-dd parses"), p);
    assert_eq!(&text::parse(&text::decimal(p)).expect("-ddd parses"), p);
    if !p.is_empty() {
        for style in [ListingStyle::Libpcap110, ListingStyle::Libpcap111] {
            let d = text::listing_with(p, style);
            let back = text::parse(&d).expect("-d parses");
            assert_eq!(text::listing_with(&back, style), d);
        }
    }
}
