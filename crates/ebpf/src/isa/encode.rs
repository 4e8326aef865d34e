//! Typed instructions back to slots.

use super::*;
use crate::insn::opcode::source;

fn w(width: Width, c32: u8, c64: u8) -> u8 {
    if width == Width::W32 { c32 } else { c64 }
}

impl Insn {
    /// The number of 8-byte slots: 2 for `lddw`, 1 otherwise.
    pub const fn slots(&self) -> usize {
        if matches!(self, Insn::LdImm64 { .. }) { 2 } else { 1 }
    }

    /// Appends the instruction's slots to `out`.
    pub fn encode_into(&self, out: &mut Vec<EbpfInsn>) {
        let n = EbpfInsn::new;
        let slot = match *self {
            Insn::Alu { width, op, dst, src } => {
                let (bits, off) = op.code_and_offset();
                let c = w(width, class::ALU, class::ALU64) | bits;
                match src {
                    Operand::Reg(s) => n(c | source::X, dst, s, off, 0),
                    Operand::Imm(imm) => n(c | source::K, dst, 0, off, imm),
                }
            }
            Insn::MovSx { width, bits, dst, src } => n(
                w(width, class::ALU, class::ALU64) | alu::MOV | source::X,
                dst,
                src,
                bits.into(),
                0,
            ),
            Insn::Neg { width, dst } => {
                n(w(width, class::ALU, class::ALU64) | alu::NEG, dst, 0, 0, 0)
            }
            Insn::Endian { order, bits, dst } => {
                let c = match order {
                    ByteOrder::Le => class::ALU | alu::END | source::K,
                    ByteOrder::Be => class::ALU | alu::END | source::X,
                    ByteOrder::Swap => class::ALU64 | alu::END | source::K,
                };
                n(c, dst, 0, 0, bits.into())
            }
            Insn::Load { size, dst, src, off } => {
                n(class::LDX | mode::MEM | size.code(), dst, src, off, 0)
            }
            Insn::LoadSx { size, dst, src, off } => {
                n(class::LDX | mode::MEMSX | size.code(), dst, src, off, 0)
            }
            Insn::Store { size, dst, off, src: Operand::Imm(imm) } => {
                n(class::ST | mode::MEM | size.code(), dst, 0, off, imm)
            }
            Insn::Store { size, dst, off, src: Operand::Reg(s) } => {
                n(class::STX | mode::MEM | size.code(), dst, s, off, 0)
            }
            Insn::Atomic { width, op, fetch, dst, src, off } => {
                let sz = if width == Width::W32 { size::W } else { size::DW };
                n(class::STX | mode::ATOMIC | sz, dst, src, off, op.imm(fetch))
            }
            Insn::LdImm64 { dst, kind, imm } => {
                out.push(n(
                    class::LD | mode::IMM | size::DW,
                    dst,
                    kind.src(),
                    0,
                    imm as u32 as i32,
                ));
                n(0, 0, 0, 0, (imm >> 32) as u32 as i32)
            }
            Insn::LdAbs { size, imm } => n(class::LD | mode::ABS | size.code(), 0, 0, 0, imm),
            Insn::LdInd { size, src, imm } => {
                n(class::LD | mode::IND | size.code(), 0, src, 0, imm)
            }
            Insn::Ja { off, long: false } => n(class::JMP | jmp::JA, 0, 0, off as i16, 0),
            Insn::Ja { off, long: true } => n(class::JMP32 | jmp::JA, 0, 0, 0, off),
            Insn::Jmp { width, cond, dst, src, off } => {
                let c = w(width, class::JMP32, class::JMP) | cond.code();
                match src {
                    Operand::Reg(s) => n(c | source::X, dst, s, off, 0),
                    Operand::Imm(imm) => n(c | source::K, dst, 0, off, imm),
                }
            }
            Insn::Call(CallTarget::Helper(imm)) => n(class::JMP | jmp::CALL, 0, 0, 0, imm),
            Insn::Call(CallTarget::Local(imm)) => n(class::JMP | jmp::CALL, 0, 1, 0, imm),
            Insn::Call(CallTarget::Kfunc { btf_id, module }) => {
                n(class::JMP | jmp::CALL, 0, 2, module, btf_id)
            }
            Insn::Callx { dst } => n(class::JMP | jmp::CALL | source::X, dst, 0, 0, 0),
            Insn::Exit => EbpfInsn::exit(),
        };
        out.push(slot);
    }

    /// The instruction's slots.
    pub fn encode(&self) -> Vec<EbpfInsn> {
        let mut v = Vec::with_capacity(2);
        self.encode_into(&mut v);
        v
    }

    /// The relative target of a jump or local call (slots after the next instruction), if this
    /// is one.
    pub const fn branch_offset(&self) -> Option<i64> {
        match *self {
            Insn::Ja { off, .. } => Some(off as i64),
            Insn::Jmp { off, .. } => Some(off as i64),
            Insn::Call(CallTarget::Local(imm)) => Some(imm as i64),
            _ => None,
        }
    }
}

/// Encodes typed instructions into slots.
pub fn encode_program(insns: &[Insn]) -> Vec<EbpfInsn> {
    let mut out = Vec::with_capacity(insns.len() + 4);
    for i in insns {
        i.encode_into(&mut out);
    }
    out
}
