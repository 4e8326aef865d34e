//! A random CSPF program and packet: the interpreter never panics, under either short-circuit
//! reading, with or without the indirect-push extension, with any stack depth; it never counts
//! more instructions than words; a program that finishes normally agrees between the two
//! readings whenever it has no short-circuit operator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_cspf::{End, Machine, ShortCircuit, insn};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (cfg, rest) = data.split_at(2);
    let split = usize::from(cfg[0]) % (rest.len() + 1);
    let (code, pkt) = rest.split_at(split);
    let words: Vec<u16> = code.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let base = Machine {
        indirect: cfg[1] & 1 != 0,
        stack_depth: usize::from(cfg[1] >> 1) + 1,
        max_words: 255,
        short_circuit: ShortCircuit::PushResult,
    };
    let enet = Machine { short_circuit: ShortCircuit::Consume, ..base };
    let a = base.run(&words, pkt);
    let b = enet.run(&words, pkt);
    assert!(a.executed as usize <= words.len() && b.executed as usize <= words.len());
    let has_sc = insn::decode(&words)
        .iter()
        .any(|d| matches!(d, insn::Decoded::Insn(i) if i.op.is_short_circuit()));
    if !has_sc && a.end == End::Finished {
        assert_eq!(a, b);
    }
});
