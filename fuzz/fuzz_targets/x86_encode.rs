//! The x86-64 assembler against iced-x86's decoder, from arbitrary bytes: the bytes choose a
//! sequence of instructions (mnemonics, registers, sizes, immediates, memory operands,
//! conditions, labels bound or not), sift-x86 assembles it, iced-x86 decodes it, and every
//! instruction must decode to exactly its bytes and to what the model says; what x86-64 cannot
//! encode must be refused with a typed error. Nothing may panic. The model, generator and
//! checker are the property test's (`crates/x86/tests/x86/support`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/x86/tests/x86/support/mod.rs"]
mod support;

use support::check::{self, Stats};
use support::generate::{self, Bytes, Source};

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let len = bytes.below(64) as usize + 1;
    let (items, labels) = generate::sequence(&mut bytes, len, true);
    if let Err(e) = check::run(&items, labels, &mut Stats::default()) {
        panic!("{e}");
    }
});
