//! Any bytes as CSPF assembler text: the assembler never panics, and whatever assembles
//! survives disassembly and reassembly unchanged (as does any word sequence).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_cspf::text::{assemble, disassemble};

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data)
        && let Ok(words) = assemble(src)
    {
        assert_eq!(assemble(&disassemble(&words)).as_ref(), Ok(&words));
    }
    let words: Vec<u16> = data.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let text = disassemble(&words);
    assert_eq!(assemble(&text).as_ref(), Ok(&words));
    assert_eq!(disassemble(&assemble(&text).unwrap_or_default()), text);
});
