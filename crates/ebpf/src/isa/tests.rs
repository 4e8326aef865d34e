use super::decode::decode_one;
use super::*;

fn one(bytes: [u8; 8]) -> Result<Insn, DecodeErrorKind> {
    decode_one(EbpfInsn::decode(bytes), None)
}

#[test]
fn every_opcode_byte_decodes_or_is_refused_and_round_trips() {
    // For each opcode byte and a spread of field values: decoding either fails or gives an
    // instruction whose encoding is the same slots.
    let mut accepted = 0;
    for code in 0..=255u8 {
        for (regs, off, imm) in [
            (0x00u8, 0i16, 0i32),
            (0x21, 0, 0),
            (0x21, 1, 0),
            (0x21, 8, 0),
            (0x01, 0, 16),
            (0x01, 0, 0x41),
            (0x00, 3, 0),
            (0x00, 0, 7),
        ] {
            let slots = [
                EbpfInsn::decode([
                    code,
                    regs,
                    off as u8,
                    (off >> 8) as u8,
                    imm as u8,
                    (imm >> 8) as u8,
                    0,
                    0,
                ]),
                EbpfInsn::new(0, 0, 0, 0, 9),
            ];
            if let Ok(insn) = decode_at(&slots, 0) {
                accepted += 1;
                assert_eq!(insn.encode(), slots[..insn.slots()].to_vec(), "{insn:?}");
            }
        }
    }
    assert!(accepted > 300, "{accepted}");
}

#[test]
fn v4_forms_decode() {
    // sdiv r0, r1 (ALU64 DIV X, off 1); smod32 w0, 3
    assert_eq!(
        one([0x3f, 0x10, 1, 0, 0, 0, 0, 0]),
        Ok(Insn::Alu { width: Width::W64, op: AluOp::SDiv, dst: 0, src: Operand::Reg(1) })
    );
    assert_eq!(
        one([0x94, 0x00, 1, 0, 3, 0, 0, 0]),
        Ok(Insn::Alu { width: Width::W32, op: AluOp::SMod, dst: 0, src: Operand::Imm(3) })
    );
    // movsx r0, (s32) r1; movsx w0 with offset 32 is refused
    assert_eq!(
        one([0xbf, 0x10, 32, 0, 0, 0, 0, 0]),
        Ok(Insn::MovSx { width: Width::W64, bits: 32, dst: 0, src: 1 })
    );
    assert!(matches!(
        one([0xbc, 0x10, 32, 0, 0, 0, 0, 0]),
        Err(DecodeErrorKind::InvalidField { .. })
    ));
    // bswap64 r0 (ALU64 END K), and ALU64 END X is unknown
    assert_eq!(
        one([0xd7, 0, 0, 0, 64, 0, 0, 0]),
        Ok(Insn::Endian { order: ByteOrder::Swap, bits: 64, dst: 0 })
    );
    assert_eq!(one([0xdf, 0, 0, 0, 64, 0, 0, 0]), Err(DecodeErrorKind::UnknownOpcode(0xdf)));
    // gotol +5 (JMP32 JA with the offset in imm)
    assert_eq!(one([0x06, 0, 0, 0, 5, 0, 0, 0]), Ok(Insn::Ja { off: 5, long: true }));
    // ldxsh r0, [r1+2]
    assert_eq!(
        one([0x89, 0x10, 2, 0, 0, 0, 0, 0]),
        Ok(Insn::LoadSx { size: Size::H, dst: 0, src: 1, off: 2 })
    );
    // lock cmpxchg [r10-8], r1; fetch-or32
    assert_eq!(
        one([0xdb, 0x1a, 0xf8, 0xff, 0xf1, 0, 0, 0]),
        Ok(Insn::Atomic {
            width: Width::W64,
            op: AtomicOp::Cmpxchg,
            fetch: true,
            dst: 10,
            src: 1,
            off: -8
        })
    );
    assert_eq!(
        one([0xc3, 0x1a, 0xf8, 0xff, 0x41, 0, 0, 0]),
        Ok(Insn::Atomic {
            width: Width::W32,
            op: AtomicOp::Or,
            fetch: true,
            dst: 10,
            src: 1,
            off: -8
        })
    );
    // callx r2; call local +3; kfunc
    assert_eq!(one([0x8d, 0x02, 0, 0, 0, 0, 0, 0]), Ok(Insn::Callx { dst: 2 }));
    assert_eq!(one([0x85, 0x10, 0, 0, 3, 0, 0, 0]), Ok(Insn::Call(CallTarget::Local(3))));
    assert_eq!(
        one([0x85, 0x20, 1, 0, 7, 0, 0, 0]),
        Ok(Insn::Call(CallTarget::Kfunc { btf_id: 7, module: 1 }))
    );
}

#[test]
fn errors_are_located_and_say_what_is_wrong() {
    let lddw = EbpfInsn::ld_imm64(1, 5);
    let e = decode_program(&[EbpfInsn::exit(), lddw[0]]).unwrap_err();
    assert_eq!(e.to_string(), "instruction 1: lddw without its second half");
    let e = decode_program(&[lddw[0], EbpfInsn::new(0, 1, 0, 0, 0)]).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::BadLdImm64SecondHalf);
    let e = decode_bytes(&[0x07, 0, 1, 0, 1, 0, 0, 0]).unwrap_err();
    assert_eq!(e.to_string(), "instruction 0: opcode 0x07: reserved offset field is 1, not 0");
    let e = decode_bytes(&[0x95, 0, 0, 0, 0, 0, 0, 0, 0x06]).unwrap_err();
    assert_eq!(e.to_string(), "instruction 1: 1 trailing bytes after the last whole instruction");
    assert_eq!(
        one([0xb7, 0x0b, 0, 0, 0, 0, 0, 0]),
        Err(DecodeErrorKind::InvalidRegister { field: "destination", reg: 11 })
    );
    assert_eq!(one([0x0e, 0, 0, 0, 0, 0, 0, 0]), Err(DecodeErrorKind::UnknownOpcode(0x0e)));
    // pseudo lddw forms are typed; src 7 is not one
    let slots = [EbpfInsn::new(0x18, 1, 2, 0, 3), EbpfInsn::new(0, 0, 0, 0, 16)];
    assert_eq!(
        decode_at(&slots, 0),
        Ok(Insn::LdImm64 { dst: 1, kind: ImmKind::MapValue, imm: (16 << 32) | 3 })
    );
    let slots = [EbpfInsn::new(0x18, 1, 7, 0, 3), EbpfInsn::new(0, 0, 0, 0, 16)];
    assert!(decode_at(&slots, 0).is_err());
}

#[test]
fn isa_versions() {
    let v = |text: &str| crate::asm::assemble(text).unwrap()[0].isa_version();
    assert_eq!(v("add r1, 2"), IsaVersion::V1);
    assert_eq!(v("jlt r1, 2, +0"), IsaVersion::V2);
    assert_eq!(v("jeq32 r1, 2, +0"), IsaVersion::V3);
    assert_eq!(v("sdiv r1, 2"), IsaVersion::V4);
    assert_eq!(v("bswap16 r1"), IsaVersion::V4);
}
