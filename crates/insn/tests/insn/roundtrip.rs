//! Property tests: every text form reads back what it printed, and the assembler and
//! disassembler are inverses on every program.

use proptest::prelude::*;
use sift_insn::text::{self, ListingStyle};
use sift_insn::{Insn, Opcode, Program, asm, code};

fn arb_k() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => 0u32..64,
        2 => any::<u32>(),
        1 => (0u32..16).prop_map(|i| code::SKF_AD_OFF + 4 * i),
        1 => Just(u32::MAX),
        1 => (0u32..8).prop_map(|i| i.wrapping_neg()),
    ]
}

fn arb_code() -> impl Strategy<Value = u16> {
    prop_oneof![
        8 => (0usize..49).prop_map(|i| Opcode::ALL[i].code()),
        1 => 0u16..256,
        1 => any::<u16>(),
    ]
}

fn arb_insn() -> impl Strategy<Value = Insn> {
    (
        arb_code(),
        prop_oneof![3 => Just(0u8), 2 => 0u8..8, 1 => any::<u8>()],
        prop_oneof![3 => Just(0u8), 2 => 0u8..8, 1 => any::<u8>()],
        arb_k(),
    )
        .prop_map(|(code, jt, jf, k)| Insn::new(code, jt, jf, k))
}

/// Programs whose instructions are "canonical": fields an opcode ignores are zero, so even the
/// `-d` listing shows everything.
fn arb_canonical_insn() -> impl Strategy<Value = Insn> {
    ((0usize..49).prop_map(|i| Opcode::ALL[i]), any::<u8>(), any::<u8>(), arb_k()).prop_map(
        |(op, jt, jf, k)| {
            let (jt, jf) = if op.is_conditional_jump() { (jt, jf) } else { (0, 0) };
            Insn::new(op.code(), jt, jf, if op.uses_k() { k } else { 0 })
        },
    )
}

fn arb_program() -> impl Strategy<Value = Program> {
    prop::collection::vec(arb_insn(), 0..40).prop_map(Program)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Assemble ∘ disassemble is the identity on programs, and disassemble ∘ assemble is the
    /// identity on the disassembler's text.
    #[test]
    fn asm_round_trip(p in arb_program()) {
        let text1 = asm::disassemble(&p);
        let p1 = asm::assemble(&text1).map_err(|e| TestCaseError::fail(format!("{e}\n{text1}")))?;
        prop_assert_eq!(&p1, &p);
        let text2 = asm::disassemble(&p1);
        prop_assert_eq!(&text2, &text1);
        prop_assert_eq!(text::parse(&text1).unwrap(), p);
    }

    /// `-dd` and `-ddd` carry every field.
    #[test]
    fn numeric_forms_round_trip(p in arb_program()) {
        prop_assert_eq!(text::parse(&text::c_array(&p)).unwrap(), p.clone());
        prop_assert_eq!(text::parse(&text::decimal(&p)).unwrap(), p);
    }

    /// A listing reads back to a program with the same listing, in both styles; canonical
    /// programs read back exactly (in 1.11 style, which names every opcode).
    #[test]
    fn listing_round_trip(p in arb_program(), c in prop::collection::vec(arb_canonical_insn(), 1..40)) {
        for style in [ListingStyle::Libpcap110, ListingStyle::Libpcap111] {
            let d = text::listing_with(&p, style);
            if p.is_empty() { continue; }
            let back = text::parse(&d).map_err(|e| TestCaseError::fail(format!("{e}\n{d}")))?;
            prop_assert_eq!(text::listing_with(&back, style), d);
        }
        let c = Program(c);
        let d = text::listing_with(&c, ListingStyle::Libpcap111);
        prop_assert_eq!(text::parse(&d).unwrap(), c);
    }

    /// No text makes a parser panic.
    #[test]
    fn parsers_never_panic(s in "[ -~\t\n]{0,200}") {
        let _ = text::parse(&s);
        let _ = asm::assemble(&s);
        let _ = text::parse_listing(&s);
        let _ = text::parse_c_array(&s);
        let _ = text::parse_decimal(&s);
    }

    /// Text built from the assembler's own vocabulary: whatever assembles survives
    /// disassemble → assemble unchanged.
    #[test]
    fn assembled_text_is_stable(lines in prop::collection::vec(asm_line(), 1..20)) {
        let src = lines.join("\n");
        if let Ok(p) = asm::assemble(&src) {
            let again = asm::assemble(&asm::disassemble(&p)).unwrap();
            prop_assert_eq!(again, p);
        }
    }
}

fn asm_line() -> impl Strategy<Value = String> {
    let mnemonic = prop::sample::select(vec![
        "ld", "ldh", "ldb", "ldx", "ldxb", "st", "stx", "add", "sub", "jeq", "jne", "jlt", "jle",
        "jgt", "jset", "ja", "ret", "tax", "txa", "neg", "ldi", "mod", "xor", "lsh",
    ]);
    let operand = prop::sample::select(vec![
        "#1",
        "#0x800",
        "x",
        "a",
        "[12]",
        "[x + 14]",
        "M[3]",
        "#len",
        "4*([14]&0xf)",
        "vlan_tci",
        "#proto",
        "",
        "#-1",
        "#1, l1",
        "#1, l1, l2",
        "x, l2",
        "l1",
        "l2",
    ]);
    let label = prop::sample::select(vec!["", "l1: ", "l2: "]);
    (label, mnemonic, operand).prop_map(|(l, m, o)| format!("{l}{m} {o}"))
}
