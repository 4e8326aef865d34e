//! Interpreter edge cases: every check the paper lists rejects the packet (never a panic), at
//! the right instruction, and the counts are what Figure 8 needs.

use sift_cspf::text::assemble;
use sift_cspf::{End, Fault, Machine, ShortCircuit};

fn run(m: &Machine, src: &str, pkt: &[u8]) -> sift_cspf::Run {
    m.run(&assemble(src).expect("assembles"), pkt)
}

#[test]
fn empty_program_and_empty_stack_accept() {
    let m = Machine::default();
    let r = run(&m, "", &[]);
    assert_eq!((r.accept, r.executed, r.end), (true, 0, End::Finished));
    // NOPs leave the stack empty: accepted, as the BPF paper describes CSPF.
    assert!(run(&m, "nop\nnop", &[]).accept);
    assert!(!run(&m, "pushzero", &[]).accept);
    assert!(run(&m, "pushffff", &[]).accept);
}

#[test]
fn words_are_big_endian_and_whole() {
    let m = Machine::default();
    let pkt = [0x12, 0x34, 0x56];
    assert!(run(&m, "pushword+0\npushlit|eq 0x1234", &pkt).accept);
    // Word 1 would need byte 3: the last byte of an odd-length packet is out of reach.
    let r = run(&m, "pushword+1", &pkt);
    assert_eq!(r.end, End::Fault(Fault::OutOfPacket { at: 0, word: 1 }));
    assert!(!r.accept);
    assert_eq!(r.executed, 1);
    // On an empty packet even word 0 is out.
    assert!(!run(&m, "pushone\npushword+0|or", &[]).accept);
    assert_eq!(run(&m, "pushword+1007", &[0; 2016]).end, End::Finished);
    assert!(matches!(
        run(&m, "pushword+1007", &[0; 2015]).end,
        End::Fault(Fault::OutOfPacket { .. })
    ));
}

#[test]
fn stack_underflow_and_overflow_reject() {
    let m = Machine::default();
    assert_eq!(run(&m, "eq", &[]).end, End::Fault(Fault::StackUnderflow { at: 0 }));
    assert_eq!(run(&m, "pushone|eq", &[]).end, End::Fault(Fault::StackUnderflow { at: 0 }));
    let r = run(&m, "pushone\npushone\nand\nand", &[]);
    assert_eq!(r.end, End::Fault(Fault::StackUnderflow { at: 3 }));
    assert!(!r.accept);
    // A short-circuit operator needs two operands too, and when it fails nothing returns TRUE.
    assert!(!run(&m, "pushone|cor", &[]).accept);
    let small = Machine { stack_depth: 3, ..m };
    assert_eq!(run(&small, "pushone\npushone\npushone", &[]).end, End::Finished);
    assert_eq!(
        run(&small, "pushone\npushone\npushone\npushone", &[]).end,
        End::Fault(Fault::StackOverflow { at: 3 })
    );
    // 64 pushes fit the default stack, the 65th does not.
    let src = "pushone\n".repeat(64);
    assert_eq!(run(&m, &src, &[]).end, End::Finished);
    let src = "pushone\n".repeat(65);
    assert_eq!(run(&m, &src, &[]).end, End::Fault(Fault::StackOverflow { at: 64 }));
}

#[test]
fn program_length_is_checked_before_running() {
    let m = Machine { max_words: 4, ..Machine::default() };
    assert_eq!(run(&m, "pushlit 1\npushlit|eq 1", &[]).end, End::Finished);
    let r = run(&m, "pushlit 1\npushlit|eq 1\nnop", &[]);
    assert_eq!((r.accept, r.executed, r.end), (false, 0, End::Fault(Fault::TooLong)));
}

#[test]
fn invalid_instructions_reject() {
    let m = Machine::default();
    for bad in [".word 0x0007", ".word 0x000e", ".word 0x4000", ".word 0xfc00", ".word 0x0401"] {
        let r = run(&m, &format!("pushone\n{bad}"), &[0; 64]);
        assert_eq!(r.end, End::Fault(Fault::BadInstruction { at: 1 }), "{bad}");
        assert!(!r.accept);
    }
    // The extension's codes are invalid unless the machine has it.
    for ext in ["pushone\npushind", "pushone\npushone|add", "pushone\npushone|shr"] {
        assert!(matches!(run(&m, ext, &[0; 4]).end, End::Fault(Fault::BadInstruction { .. })));
        assert_eq!(run(&Machine::with_indirect(true), ext, &[0; 4]).end, End::Finished);
    }
}

#[test]
fn indirect_push_and_its_arithmetic() {
    let m = Machine::with_indirect(true);
    // IPv4 at 14 with a 24-byte header (IHL 6): the TCP destination port is at 14 + 24 + 2.
    let mut pkt = vec![0u8; 64];
    pkt[14] = 0x46;
    pkt[40..42].copy_from_slice(&80u16.to_be_bytes());
    let src =
        "pushword+7\npushlit|and 0x0f00\npushlit|shr 7\npushlit|add 8\npushind\npushlit|eq 80";
    let r = run(&m, src, &pkt);
    assert_eq!((r.accept, r.executed), (true, 6));
    pkt.truncate(41);
    assert!(matches!(run(&m, src, &pkt).end, End::Fault(Fault::OutOfPacket { at: 7, word: 20 })));
    assert_eq!(run(&m, "pushind", &[]).end, End::Fault(Fault::StackUnderflow { at: 0 }));
    assert!(!run(&m, "pushlit 0xffff\npushlit|add 1", &[]).accept, "wraps to 0");
    assert!(!run(&m, "pushffff\npushlit|shr 16", &[]).accept, "shifts of 16 or more give 0");
    assert!(run(&m, "pushffff\npushlit|shr 15", &[]).accept);
}

#[test]
fn short_circuit_semantics_differ_only_in_what_they_leave() {
    let paper = Machine::default();
    let enet = Machine { short_circuit: ShortCircuit::Consume, ..paper };
    // COR that does not return: the paper leaves FALSE, enet leaves the stack empty.
    let src = "pushone\npushzero|cor";
    assert!(!run(&paper, src, &[]).accept);
    assert!(run(&enet, src, &[]).accept);
    // CAND that does not return leaves TRUE (paper) or nothing (enet): both accept.
    let src = "pushone\npushone|cand";
    assert!(run(&paper, src, &[]).accept);
    assert!(run(&enet, src, &[]).accept);
    // Returns are counted at the returning instruction.
    let r = run(&paper, "pushone\npushone|cor\npushzero", &[]);
    assert_eq!((r.accept, r.executed, r.end), (true, 2, End::ShortCircuit { at: 1 }));
}

#[test]
fn random_programs_never_panic() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let n = (next() % 40) as usize;
        let words: Vec<u16> = (0..n)
            .map(|_| match next() % 4 {
                0 => (next() % 64) as u16,
                1 => ((next() % 16) << 10 | (next() % 24)) as u16,
                _ => next() as u16,
            })
            .collect();
        let pkt: Vec<u8> = (0..next() % 80).map(|_| next() as u8).collect();
        for m in [Machine::default(), Machine::with_indirect(true)] {
            let r = m.run(&words, &pkt);
            assert!(r.executed as usize <= words.len());
        }
    }
}
