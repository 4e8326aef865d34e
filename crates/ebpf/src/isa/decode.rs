//! Slots to typed instructions: every field checked, each refusal located at its slot.

use super::*;

fn reg_ok(field: &'static str, reg: u8) -> Result<(), DecodeErrorKind> {
    if reg > 10 { Err(DecodeErrorKind::InvalidRegister { field, reg }) } else { Ok(()) }
}

fn zero(code: u8, field: &'static str, value: i64) -> Result<(), DecodeErrorKind> {
    if value != 0 { Err(DecodeErrorKind::Reserved { code, field, value }) } else { Ok(()) }
}

fn width_of(c: u8) -> Width {
    if c == class::ALU || c == class::JMP32 { Width::W32 } else { Width::W64 }
}

/// Decodes the instruction at `slots[index]` (reading the next slot too for `lddw`).
pub fn decode_at(slots: &[EbpfInsn], index: usize) -> Result<Insn, DecodeError> {
    let i = slots[index];
    decode_one(i, slots.get(index + 1).copied()).map_err(|kind| DecodeError { index, kind })
}

pub(super) fn decode_one(i: EbpfInsn, next: Option<EbpfInsn>) -> Result<Insn, DecodeErrorKind> {
    let code = i.code;
    reg_ok("destination", i.dst)?;
    let unknown = Err(DecodeErrorKind::UnknownOpcode(code));
    let c = i.class();
    match c {
        class::ALU | class::ALU64 => {
            let width = width_of(c);
            let op = i.op();
            let x = i.uses_src_reg();
            if op == alu::END {
                zero(code, "src", i.src.into())?;
                zero(code, "offset", i.off.into())?;
                let order = match (c, x) {
                    (class::ALU, false) => ByteOrder::Le,
                    (class::ALU, true) => ByteOrder::Be,
                    (_, false) => ByteOrder::Swap,
                    _ => return unknown,
                };
                let bits = match i.imm {
                    16 | 32 | 64 => i.imm as u8,
                    v => {
                        return Err(DecodeErrorKind::InvalidField {
                            code,
                            field: "endian width",
                            value: v.into(),
                        });
                    }
                };
                return Ok(Insn::Endian { order, bits, dst: i.dst });
            }
            if op == alu::NEG {
                if x {
                    return unknown;
                }
                zero(code, "src", i.src.into())?;
                zero(code, "offset", i.off.into())?;
                zero(code, "imm", i.imm.into())?;
                return Ok(Insn::Neg { width, dst: i.dst });
            }
            let base = match op {
                alu::ADD => AluOp::Add,
                alu::SUB => AluOp::Sub,
                alu::MUL => AluOp::Mul,
                alu::DIV => AluOp::Div,
                alu::OR => AluOp::Or,
                alu::AND => AluOp::And,
                alu::LSH => AluOp::Lsh,
                alu::RSH => AluOp::Rsh,
                alu::MOD => AluOp::Mod,
                alu::XOR => AluOp::Xor,
                alu::MOV => AluOp::Mov,
                alu::ARSH => AluOp::Arsh,
                _ => return unknown,
            };
            let op = match (base, i.off) {
                (_, 0) => base,
                (AluOp::Div, 1) => AluOp::SDiv,
                (AluOp::Mod, 1) => AluOp::SMod,
                (AluOp::Mov, 8 | 16 | 32) if x => {
                    if i.off == 32 && width == Width::W32 {
                        return Err(DecodeErrorKind::InvalidField {
                            code,
                            field: "movsx offset",
                            value: 32,
                        });
                    }
                    reg_ok("source", i.src)?;
                    zero(code, "imm", i.imm.into())?;
                    return Ok(Insn::MovSx { width, bits: i.off as u8, dst: i.dst, src: i.src });
                }
                (_, off) => {
                    return Err(DecodeErrorKind::Reserved {
                        code,
                        field: "offset",
                        value: off.into(),
                    });
                }
            };
            let src = if x {
                reg_ok("source", i.src)?;
                zero(code, "imm", i.imm.into())?;
                Operand::Reg(i.src)
            } else {
                zero(code, "src", i.src.into())?;
                Operand::Imm(i.imm)
            };
            Ok(Insn::Alu { width, op, dst: i.dst, src })
        }
        class::JMP | class::JMP32 => {
            let width = width_of(c);
            let x = i.uses_src_reg();
            match i.op() {
                jmp::JA => {
                    if x {
                        return unknown;
                    }
                    zero(code, "dst", i.dst.into())?;
                    zero(code, "src", i.src.into())?;
                    if width == Width::W64 {
                        zero(code, "imm", i.imm.into())?;
                        Ok(Insn::Ja { off: i.off.into(), long: false })
                    } else {
                        zero(code, "offset", i.off.into())?;
                        Ok(Insn::Ja { off: i.imm, long: true })
                    }
                }
                jmp::CALL if width == Width::W64 => {
                    if x {
                        zero(code, "src", i.src.into())?;
                        zero(code, "offset", i.off.into())?;
                        zero(code, "imm", i.imm.into())?;
                        return Ok(Insn::Callx { dst: i.dst });
                    }
                    zero(code, "dst", i.dst.into())?;
                    let target = match i.src {
                        0 => CallTarget::Helper(i.imm),
                        1 => CallTarget::Local(i.imm),
                        2 => {
                            return Ok(Insn::Call(CallTarget::Kfunc {
                                btf_id: i.imm,
                                module: i.off,
                            }));
                        }
                        s => {
                            return Err(DecodeErrorKind::InvalidField {
                                code,
                                field: "call kind (src)",
                                value: s.into(),
                            });
                        }
                    };
                    zero(code, "offset", i.off.into())?;
                    Ok(Insn::Call(target))
                }
                jmp::EXIT if width == Width::W64 && !x => {
                    zero(code, "dst", i.dst.into())?;
                    zero(code, "src", i.src.into())?;
                    zero(code, "offset", i.off.into())?;
                    zero(code, "imm", i.imm.into())?;
                    Ok(Insn::Exit)
                }
                op => {
                    let Some(cond) = Cond::from_code(op) else { return unknown };
                    let src = if x {
                        reg_ok("source", i.src)?;
                        zero(code, "imm", i.imm.into())?;
                        Operand::Reg(i.src)
                    } else {
                        zero(code, "src", i.src.into())?;
                        Operand::Imm(i.imm)
                    };
                    Ok(Insn::Jmp { width, cond, dst: i.dst, src, off: i.off })
                }
            }
        }
        class::LDX => {
            let size = Size::from_code(code);
            let signed = match code & mode::MASK {
                mode::MEM => false,
                mode::MEMSX if size != Size::DW => true,
                _ => return unknown,
            };
            reg_ok("source", i.src)?;
            zero(code, "imm", i.imm.into())?;
            let (dst, src, off) = (i.dst, i.src, i.off);
            Ok(if signed {
                Insn::LoadSx { size, dst, src, off }
            } else {
                Insn::Load { size, dst, src, off }
            })
        }
        class::ST => {
            if code & mode::MASK != mode::MEM {
                return unknown;
            }
            zero(code, "src", i.src.into())?;
            Ok(Insn::Store {
                size: Size::from_code(code),
                dst: i.dst,
                off: i.off,
                src: Operand::Imm(i.imm),
            })
        }
        class::STX => {
            let size = Size::from_code(code);
            reg_ok("source", i.src)?;
            match code & mode::MASK {
                mode::MEM => {
                    zero(code, "imm", i.imm.into())?;
                    Ok(Insn::Store { size, dst: i.dst, off: i.off, src: Operand::Reg(i.src) })
                }
                mode::ATOMIC if matches!(size, Size::W | Size::DW) => {
                    let Some((op, fetch)) = AtomicOp::from_imm(i.imm) else {
                        return Err(DecodeErrorKind::InvalidField {
                            code,
                            field: "atomic operation",
                            value: i.imm.into(),
                        });
                    };
                    let width = if size == Size::W { Width::W32 } else { Width::W64 };
                    Ok(Insn::Atomic { width, op, fetch, dst: i.dst, src: i.src, off: i.off })
                }
                _ => unknown,
            }
        }
        class::LD => {
            let size = Size::from_code(code);
            match code & mode::MASK {
                mode::IMM if size == Size::DW => {
                    let Some(kind) = ImmKind::from_src(i.src) else {
                        return Err(DecodeErrorKind::InvalidField {
                            code,
                            field: "lddw source (pseudo) register",
                            value: i.src.into(),
                        });
                    };
                    zero(code, "offset", i.off.into())?;
                    let Some(n) = next else { return Err(DecodeErrorKind::IncompleteLdImm64) };
                    if n.code != 0 || n.dst != 0 || n.src != 0 || n.off != 0 {
                        return Err(DecodeErrorKind::BadLdImm64SecondHalf);
                    }
                    let imm = u64::from(i.imm as u32) | (u64::from(n.imm as u32) << 32);
                    Ok(Insn::LdImm64 { dst: i.dst, kind, imm })
                }
                mode::ABS | mode::IND if size != Size::DW => {
                    zero(code, "dst", i.dst.into())?;
                    zero(code, "offset", i.off.into())?;
                    if code & mode::MASK == mode::ABS {
                        zero(code, "src", i.src.into())?;
                        Ok(Insn::LdAbs { size, imm: i.imm })
                    } else {
                        reg_ok("source", i.src)?;
                        Ok(Insn::LdInd { size, src: i.src, imm: i.imm })
                    }
                }
                _ => unknown,
            }
        }
        _ => unknown,
    }
}

/// Decodes every instruction of a program (slots), each with the slot it starts at.
pub fn decode_program(slots: &[EbpfInsn]) -> Result<Vec<Located>, DecodeError> {
    let mut out = Vec::with_capacity(slots.len());
    let mut index = 0;
    while index < slots.len() {
        let insn = decode_at(slots, index)?;
        out.push(Located { index, insn });
        index += insn.slots();
    }
    Ok(out)
}

/// Decodes a byte image (the kernel's encoding, 8 bytes a slot) into slots; trailing bytes
/// that do not make a whole slot are an error located at the slot they would start.
pub fn slots_from_bytes(bytes: &[u8]) -> Result<Vec<EbpfInsn>, DecodeError> {
    let rest = bytes.len() % 8;
    if rest != 0 {
        return Err(DecodeError {
            index: bytes.len() / 8,
            kind: DecodeErrorKind::TrailingBytes(rest),
        });
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| EbpfInsn::decode([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

/// Decodes a byte image into typed instructions.
pub fn decode_bytes(bytes: &[u8]) -> Result<Vec<Located>, DecodeError> {
    decode_program(&slots_from_bytes(bytes)?)
}
