//! The encodings that are easy to get wrong, byte for byte (from the Intel SDM, vol. 2,
//! chapter 2), and the errors for what x86-64 cannot encode.

use sift_x86::{AluOp, AsmError, Assembler, Cond, Mem, OperandError, Reg, Scale, Size};

/// The bytes of what `f` assembles.
fn asm(f: impl FnOnce(&mut Assembler) -> Result<(), AsmError>) -> Vec<u8> {
    let mut a = Assembler::new();
    f(&mut a).expect("assembles");
    a.finish().expect("finishes").code
}

/// The bytes of what `f` assembles with instructions that cannot fail.
fn plain(f: impl FnOnce(&mut Assembler)) -> Vec<u8> {
    asm(|a| {
        f(a);
        Ok(())
    })
}

/// The operand error `f` gets.
fn refused(f: impl FnOnce(&mut Assembler) -> Result<(), AsmError>) -> OperandError {
    let mut a = Assembler::new();
    match f(&mut a) {
        Err(AsmError::Operands { problem, .. }) => {
            assert_eq!(a.finish().expect("nothing was emitted").code, Vec::<u8>::new());
            problem
        }
        other => panic!("expected an operand error, got {other:?}"),
    }
}

#[test]
fn rsp_and_r12_bases_take_a_sib_and_rbp_r13_a_displacement() {
    let load = |m: Mem| asm(|a| a.mov(Size::Dword, Reg::Rax, m));
    assert_eq!(load(Mem::base(Reg::Rax)), [0x8B, 0x00]);
    assert_eq!(load(Mem::base(Reg::Rsp)), [0x8B, 0x04, 0x24]);
    assert_eq!(load(Mem::base(Reg::R12)), [0x41, 0x8B, 0x04, 0x24]);
    assert_eq!(load(Mem::base(Reg::Rbp)), [0x8B, 0x45, 0x00]);
    assert_eq!(load(Mem::base(Reg::R13)), [0x41, 0x8B, 0x45, 0x00]);
    assert_eq!(load(Mem::base(Reg::R13).disp(8)), [0x41, 0x8B, 0x45, 0x08]);
    assert_eq!(load(Mem::base(Reg::Rsp).disp(8)), [0x8B, 0x44, 0x24, 0x08]);
    // r12 is a valid index (REX.X turns SIB index 100 into r12); r13 as a base with an index
    // still needs its displacement.
    assert_eq!(load(Mem::base(Reg::Rax).index(Reg::R12, Scale::X1)), [0x42, 0x8B, 0x04, 0x20]);
    assert_eq!(
        asm(|a| a.mov(Size::Qword, Reg::Rax, Mem::base(Reg::R13).index(Reg::R12, Scale::X8))),
        [0x4B, 0x8B, 0x44, 0xE5, 0x00]
    );
    // No base: SIB base 101 with mod 00 means disp32.
    assert_eq!(load(Mem::abs(0x1234)), [0x8B, 0x04, 0x25, 0x34, 0x12, 0x00, 0x00]);
    assert_eq!(
        load(Mem::index_only(Reg::Rbp, Scale::X4)),
        [0x8B, 0x04, 0xAD, 0x00, 0x00, 0x00, 0x00]
    );
    // RIP-relative: mod 00, r/m 101.
    assert_eq!(load(Mem::rip(0x10)), [0x8B, 0x05, 0x10, 0x00, 0x00, 0x00]);
}

#[test]
fn rsp_cannot_be_an_index() {
    assert_eq!(
        refused(|a| a.mov(Size::Dword, Reg::Rax, Mem::base(Reg::Rax).index(Reg::Rsp, Scale::X1))),
        OperandError::IndexRsp
    );
    assert_eq!(
        refused(|a| a.lea(Size::Qword, Reg::Rax, Mem::index_only(Reg::Rsp, Scale::X2))),
        OperandError::IndexRsp
    );
    assert_eq!(
        refused(|a| a.mov(Size::Dword, Reg::Rax, Mem::rip(0).index(Reg::Rax, Scale::X1))),
        OperandError::RipIndex
    );
    // The error says which instruction.
    let mut a = Assembler::new();
    a.ret();
    let err = a.add(Size::Dword, Reg::Rax, Mem::base(Reg::Rdi).index(Reg::Rsp, Scale::X4));
    assert_eq!(
        err,
        Err(AsmError::Operands { index: 1, mnemonic: "add", problem: OperandError::IndexRsp })
    );
}

#[test]
fn byte_registers_spl_to_dil_need_a_rex() {
    assert_eq!(asm(|a| a.mov(Size::Byte, Reg::Rax, Reg::Rcx)), [0x88, 0xC8]);
    assert_eq!(asm(|a| a.mov(Size::Byte, Reg::Rsi, Reg::Rax)), [0x40, 0x88, 0xC6]);
    assert_eq!(asm(|a| a.mov(Size::Byte, Mem::base(Reg::Rax), Reg::Rsp)), [0x40, 0x88, 0x20]);
    assert_eq!(asm(|a| a.setcc(Cond::E, Reg::Rdi)), [0x40, 0x0F, 0x94, 0xC7]);
    assert_eq!(asm(|a| a.setcc(Cond::E, Reg::Rbx)), [0x0F, 0x94, 0xC3]);
    assert_eq!(
        asm(|a| a.movzx(Size::Dword, Reg::Rax, Size::Byte, Reg::Rsi)),
        [0x40, 0x0F, 0xB6, 0xC6]
    );
    // The destination of movzx is not a byte register: no REX for esi.
    assert_eq!(asm(|a| a.movzx(Size::Dword, Reg::Rsi, Size::Byte, Reg::Rax)), [0x0F, 0xB6, 0xF0]);
    assert_eq!(asm(|a| a.mov(Size::Byte, Reg::Rbp, 1)), [0x40, 0xB5, 0x01]);
    assert_eq!(asm(|a| a.mov(Size::Byte, Reg::R8, 1)), [0x41, 0xB0, 0x01]);
}

#[test]
fn immediates_take_the_short_form_when_it_means_the_same() {
    assert_eq!(asm(|a| a.add(Size::Dword, Reg::Rax, 127)), [0x83, 0xC0, 0x7F]);
    assert_eq!(asm(|a| a.add(Size::Dword, Reg::Rax, 128)), [0x05, 0x80, 0x00, 0x00, 0x00]);
    assert_eq!(asm(|a| a.add(Size::Dword, Reg::Rcx, 128)), [0x81, 0xC1, 0x80, 0x00, 0x00, 0x00]);
    assert_eq!(asm(|a| a.add(Size::Dword, Reg::Rax, -128)), [0x83, 0xC0, 0x80]);
    assert_eq!(asm(|a| a.sub(Size::Dword, Reg::Rax, -129)), [0x2D, 0x7F, 0xFF, 0xFF, 0xFF]);
    // 0xFFFF_FFFF as a doubleword is -1.
    assert_eq!(asm(|a| a.and(Size::Dword, Reg::Rdx, 0xFFFF_FFFFu32)), [0x83, 0xE2, 0xFF]);
    assert_eq!(asm(|a| a.cmp(Size::Word, Reg::Rax, 0xFFFF)), [0x66, 0x83, 0xF8, 0xFF]);
    assert_eq!(asm(|a| a.cmp(Size::Qword, Reg::Rsi, 14)), [0x48, 0x83, 0xFE, 0x0E]);
    assert_eq!(asm(|a| a.cmp(Size::Byte, Reg::Rax, 200)), [0x3C, 0xC8]);
    assert_eq!(asm(|a| a.cmp(Size::Byte, Reg::Rcx, 200)), [0x80, 0xF9, 0xC8]);
    assert_eq!(asm(|a| a.imul_imm(Size::Dword, Reg::Rax, Reg::Rcx, 3)), [0x6B, 0xC1, 0x03]);
    assert_eq!(
        asm(|a| a.imul_imm(Size::Dword, Reg::Rax, Reg::Rax, 300)),
        [0x69, 0xC0, 0x2C, 0x01, 0x00, 0x00]
    );
    assert_eq!(asm(|a| a.test(Size::Dword, Reg::Rax, 1)), [0xA9, 0x01, 0x00, 0x00, 0x00]);
    assert_eq!(asm(|a| a.push(-1)), [0x6A, 0xFF]);
    assert_eq!(asm(|a| a.push(0x80)), [0x68, 0x80, 0x00, 0x00, 0x00]);
    // Quadword immediates are sign-extended 32-bit values; mov alone has imm64.
    assert_eq!(
        refused(|a| a.add(Size::Qword, Reg::Rax, 0xFFFF_FFFFu32)),
        OperandError::Immediate { value: 0xFFFF_FFFF, bits: 32 }
    );
    assert_eq!(
        refused(|a| a.add(Size::Byte, Reg::Rax, 256)),
        OperandError::Immediate { value: 256, bits: 8 }
    );
    assert_eq!(
        asm(|a| a.mov(Size::Qword, Reg::Rax, -1)),
        [0x48, 0xC7, 0xC0, 0xFF, 0xFF, 0xFF, 0xFF]
    );
    assert_eq!(
        asm(|a| a.mov(Size::Qword, Reg::R9, 0x8000_0000u32)),
        [0x49, 0xB9, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00]
    );
    assert_eq!(asm(|a| a.mov(Size::Dword, Reg::R9, 5)), [0x41, 0xB9, 0x05, 0x00, 0x00, 0x00]);
    assert_eq!(
        asm(|a| a.mov(Size::Word, Mem::base(Reg::Rdi), 0x1234)),
        [0x66, 0xC7, 0x07, 0x34, 0x12]
    );
}

#[test]
fn shifts_pick_the_by_one_form_and_take_cl() {
    assert_eq!(asm(|a| a.shl(Size::Dword, Reg::Rax, 1)), [0xD1, 0xE0]);
    assert_eq!(asm(|a| a.shl(Size::Dword, Reg::Rax, 2)), [0xC1, 0xE0, 0x02]);
    assert_eq!(asm(|a| a.shr(Size::Dword, Reg::Rax, Reg::Rcx)), [0xD3, 0xE8]);
    assert_eq!(asm(|a| a.sar(Size::Qword, Reg::R11, Reg::Rcx)), [0x49, 0xD3, 0xFB]);
    assert_eq!(asm(|a| a.rol(Size::Word, Reg::Rax, 8)), [0x66, 0xC1, 0xC0, 0x08]);
    assert_eq!(refused(|a| a.shl(Size::Dword, Reg::Rax, Reg::Rdx)), OperandError::ShiftCount);
    assert_eq!(refused(|a| a.shl(Size::Dword, Reg::Rax, 256)), OperandError::ShiftCount);
}

#[test]
fn sizes_without_a_form_are_refused() {
    assert_eq!(refused(|a| a.bswap(Size::Word, Reg::Rax)), OperandError::Size(Size::Word));
    assert_eq!(refused(|a| a.imul(Size::Byte, Reg::Rax, Reg::Rcx)), OperandError::Size(Size::Byte));
    assert_eq!(
        refused(|a| a.lea(Size::Byte, Reg::Rax, Mem::base(Reg::Rax))),
        OperandError::Size(Size::Byte)
    );
    assert_eq!(
        refused(|a| a.movzx(Size::Word, Reg::Rax, Size::Word, Reg::Rcx)),
        OperandError::Extend { from: Size::Word, to: Size::Word }
    );
    assert!(matches!(
        refused(|a| a.mov(Size::Dword, Mem::base(Reg::Rax), Mem::base(Reg::Rcx))),
        OperandError::Kinds(_)
    ));
    assert!(matches!(
        refused(|a| a.lock().alu(AluOp::Cmp, Size::Dword, Mem::base(Reg::Rax), 1)),
        OperandError::Kinds(_)
    ));
    assert_eq!(asm(|a| a.bswap(Size::Dword, Reg::Rax)), [0x0F, 0xC8]);
    assert_eq!(asm(|a| a.bswap(Size::Qword, Reg::R9)), [0x49, 0x0F, 0xC9]);
}

#[test]
fn atomics_and_exchanges() {
    assert_eq!(
        asm(|a| a.lock().xadd(Size::Qword, Mem::base(Reg::Rdi), Reg::Rax)),
        [0xF0, 0x48, 0x0F, 0xC1, 0x07]
    );
    assert_eq!(
        asm(|a| a.lock().cmpxchg(Size::Dword, Mem::base(Reg::R12).disp(4), Reg::R9)),
        [0xF0, 0x45, 0x0F, 0xB1, 0x4C, 0x24, 0x04]
    );
    assert_eq!(
        asm(|a| a.lock().alu(AluOp::Add, Size::Dword, Mem::base(Reg::Rdi), 1)),
        [0xF0, 0x83, 0x07, 0x01]
    );
    // The prefix applies to one instruction only.
    assert_eq!(
        asm(|a| {
            a.lock().inc(Size::Qword, Mem::base(Reg::Rax))?;
            a.inc(Size::Qword, Mem::base(Reg::Rax))
        }),
        [0xF0, 0x48, 0xFF, 0x00, 0x48, 0xFF, 0x00]
    );
    assert_eq!(asm(|a| a.xchg(Size::Dword, Reg::Rax, Reg::Rcx)), [0x91]);
    assert_eq!(asm(|a| a.xchg(Size::Qword, Reg::R8, Reg::Rax)), [0x49, 0x90]);
    // xchg eax, eax is not `90`, which is nop (and would not zero the upper half).
    assert_eq!(asm(|a| a.xchg(Size::Dword, Reg::Rax, Reg::Rax)), [0x87, 0xC0]);
    let widen = asm(|a| {
        a.cdq();
        a.cqo();
        a.cdqe();
        Ok(())
    });
    assert_eq!(widen, [0x99, 0x48, 0x99, 0x48, 0x98]);
}

#[test]
fn conditions_negate_by_their_low_bit() {
    for c in Cond::ALL {
        assert_eq!(c.negate().negate(), c);
        assert_eq!(c.negate().code(), c.code() ^ 1);
    }
    assert_eq!(Cond::B.negate(), Cond::Ae);
    assert_eq!(Cond::E.negate(), Cond::Ne);
    assert_eq!(Cond::L.negate(), Cond::Ge);
}

/// `jump` to a label `gap` bytes of nops away (forward, or backward when `back`).
fn jump_over(gap: usize, back: bool, cond: Option<Cond>) -> Vec<u8> {
    asm(|a| {
        let l = a.new_label();
        if back {
            a.bind(l)?;
            a.nops(gap);
        }
        match cond {
            Some(c) => a.jcc(c, l)?,
            None => a.jmp(l)?,
        }
        if !back {
            a.nops(gap);
            a.bind(l)?;
        }
        Ok(())
    })
}

#[test]
fn jumps_are_short_up_to_127_forward_and_128_back() {
    assert_eq!(jump_over(127, false, None)[..2], [0xEB, 0x7F]);
    assert_eq!(jump_over(128, false, None)[..5], [0xE9, 0x80, 0x00, 0x00, 0x00]);
    assert_eq!(jump_over(127, false, Some(Cond::B))[..2], [0x72, 0x7F]);
    assert_eq!(jump_over(128, false, Some(Cond::B))[..6], [0x0F, 0x82, 0x80, 0x00, 0x00, 0x00]);
    // Backward the displacement counts the jump itself: 126 bytes + 2 = -128.
    assert_eq!(jump_over(126, true, None)[126..], [0xEB, 0x80]);
    assert_eq!(jump_over(127, true, None)[127..], [0xE9, 0x7C, 0xFF, 0xFF, 0xFF]);
    assert_eq!(jump_over(126, true, Some(Cond::G))[126..], [0x7F, 0x80]);
    assert_eq!(jump_over(127, true, Some(Cond::G))[127..], [0x0F, 0x8F, 0x7B, 0xFF, 0xFF, 0xFF]);
    // A jump to the next instruction, and to itself.
    assert_eq!(jump_over(0, false, None), [0xEB, 0x00]);
    assert_eq!(jump_over(0, true, None), [0xEB, 0xFE]);
}

/// `jcc L0; nops(60); jmp L1; nops(65); L0: nops(tail); L1:` — the jcc reaches L0 only while
/// the jmp is short, and the jmp stays short only while `tail` ≤ 62.
fn cascade(tail: usize) -> Vec<u8> {
    asm(|a| {
        let (l0, l1) = (a.new_label(), a.new_label());
        a.jcc(Cond::E, l0)?;
        a.nops(60);
        a.jmp(l1)?;
        a.nops(65);
        a.bind(l0)?;
        a.nops(tail);
        a.bind(l1)
    })
}

#[test]
fn lengthening_one_jump_lengthens_the_ones_it_pushes_out_of_reach() {
    let short = cascade(62);
    assert_eq!((short[0], short[1]), (0x74, 127));
    assert_eq!((short[62], short[63]), (0xEB, 127));
    let long = cascade(63);
    assert_eq!(long[..2], [0x0F, 0x84]);
    assert_eq!(i32::from_le_bytes(long[2..6].try_into().unwrap()), 60 + 5 + 65);
    assert_eq!(long[66], 0xE9);
    assert_eq!(i32::from_le_bytes(long[67..71].try_into().unwrap()), 65 + 63);
}

#[test]
fn labels_resolve_calls_and_rip_relative_addresses() {
    let mut a = Assembler::new();
    let (start, after) = (a.new_label(), a.new_label());
    a.bind(start).unwrap();
    a.lea(Size::Qword, Reg::Rax, Mem::label(start)).unwrap();
    a.call(after).unwrap();
    a.bind(after).unwrap();
    a.mov(Size::Dword, Mem::label(start).disp(4), 7).unwrap();
    let code = a.finish().unwrap();
    assert_eq!(code.label_offset(after), Some(12));
    assert_eq!(
        code.code,
        [
            0x48, 0x8D, 0x05, 0xF9, 0xFF, 0xFF, 0xFF, // lea rax, [rip - 7]
            0xE8, 0x00, 0x00, 0x00, 0x00, // call next
            0xC7, 0x05, 0xEE, 0xFF, 0xFF, 0xFF, 0x07, 0x00, 0x00,
            0x00, // mov [rip - 22 + 4], 7
        ]
    );
}

#[test]
fn label_misuse_is_a_typed_error() {
    let mut a = Assembler::new();
    let l = a.new_label();
    a.jmp(l).unwrap();
    assert_eq!(a.finish(), Err(AsmError::UnboundLabel { label: 0 }));

    let mut a = Assembler::new();
    let l = a.new_label();
    a.bind(l).unwrap();
    assert_eq!(a.bind(l), Err(AsmError::LabelBoundTwice { label: 0 }));

    let mut other = Assembler::new();
    let foreign = other.new_label();
    let mut a = Assembler::new();
    a.new_label();
    assert_eq!(a.jmp(foreign), Err(AsmError::ForeignLabel { label: 0 }));
    assert_eq!(a.bind(foreign), Err(AsmError::ForeignLabel { label: 0 }));
    assert_eq!(
        a.mov(Size::Dword, Reg::Rax, Mem::label(foreign)),
        Err(AsmError::ForeignLabel { label: 0 })
    );

    let mut a = Assembler::new();
    let l = a.new_label();
    a.bind(l).unwrap();
    a.lea(Size::Qword, Reg::Rax, Mem::label(l).disp(i32::MIN)).unwrap();
    assert_eq!(
        a.finish(),
        Err(AsmError::LabelDisplacement { label: 0, displacement: i64::from(i32::MIN) })
    );
}

#[test]
fn nops_are_the_recommended_forms() {
    for n in 0..=20 {
        assert_eq!(plain(|a| a.nops(n)).len(), n);
    }
    assert_eq!(plain(|a| a.nops(3)), [0x0F, 0x1F, 0x00]);
    assert_eq!(plain(|a| a.nops(11)), [0x66, 0x0F, 0x1F, 0x84, 0, 0, 0, 0, 0, 0x66, 0x90]);
    assert_eq!(plain(|a| a.ud2()), [0x0F, 0x0B]);
    assert_eq!(plain(|a| a.int3()), [0xCC]);
    assert_eq!(asm(|a| a.prefetcht0(Mem::base(Reg::Rdi).disp(64))), [0x0F, 0x18, 0x4F, 0x40]);
    assert_eq!(asm(|a| a.prefetchnta(Mem::base(Reg::Rdi))), [0x0F, 0x18, 0x07]);
}
