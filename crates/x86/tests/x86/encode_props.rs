//! sift-x86 against iced-x86's decoder: over a million random instructions (every mnemonic,
//! register, size, immediate width, addressing form and condition, in sequences with labels
//! and jumps both ways), each decoded back to exactly its bytes and compared operand by
//! operand with what the model in `support/` says it must be. Instructions x86-64 cannot
//! encode must be refused with a typed error, and every near jump must be one a short jump
//! could not replace.

use crate::support::check::{self, Stats};
use crate::support::generate::{self, Rng};

/// Instructions per sequence: enough for jumps to cross the rel8 limit and come back.
const SEQUENCE: usize = 64;

#[test]
fn a_million_random_instructions_decode_to_what_was_asked() {
    let mut rng = Rng(0x5EED_0086);
    let mut stats = Stats::default();
    let mut sequences = 0u64;
    while stats.checked < 1_000_000 {
        let (items, labels) = generate::sequence(&mut rng, SEQUENCE, sequences % 64 == 63);
        if let Err(e) = check::run(&items, labels, &mut stats) {
            panic!("sequence {sequences}: {e}");
        }
        sequences += 1;
    }
    eprintln!(
        "{} instructions checked against iced-x86 ({} bytes, {} sequences, {} distinct \
         encodings), {} refused as unencodable, {} short and {} near label jumps, {} unbound \
         labels reported",
        stats.checked,
        stats.bytes,
        sequences,
        stats.forms.len(),
        stats.refused,
        stats.short_jumps,
        stats.near_jumps,
        stats.unbound
    );
    if std::env::var_os("SIFT_X86_FORMS").is_some() {
        let mut forms: Vec<String> = stats.forms.iter().map(|c| format!("{c:?}")).collect();
        forms.sort();
        eprintln!("{}", forms.join(" "));
    }
    // Every form the assembler emits (iced `Code`s: 19 for add, 16 for mov, 12 for shl…).
    assert!(stats.forms.len() >= 429, "only {} forms", stats.forms.len());
    assert!(stats.refused > 1000, "the generator should reach the refusals too");
    assert!(stats.near_jumps > 1000 && stats.short_jumps > 1000);
    assert!(stats.unbound > 10);
}
