//! The one place instruction bytes are put together: legacy prefixes, REX, opcode, ModRM, SIB,
//! displacement and immediate (Intel SDM vol. 2, chapter 2, "Instruction format").
//!
//! Every instruction method in [`crate::insn`] describes its encoding as an [`Inst`] and hands
//! it to [`Assembler::emit`]; nothing else writes instruction bytes (the jumps that
//! relaxation sizes are written by [`crate::layout`]).

use crate::asm::{Assembler, Fixup};
use crate::error::{AsmError, OperandError};
use crate::operand::{Base, Label, Mem};
use crate::reg::{Reg, Size};

/// A register or memory operand: what a ModRM byte's r/m half can name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rm {
    Reg(Reg),
    Mem(Mem),
}

/// An immediate field, already truncated to its width.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Imm {
    None,
    B(u8),
    W(u16),
    D(u32),
    Q(u64),
}

/// Where an instruction's operands go.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Form {
    /// The opcode alone.
    Plain,
    /// A register in the low three bits of the last opcode byte (`B8+r`, `50+r`, `0F C8+r`).
    OpReg(Reg),
    /// A ModRM byte: `reg` is a register number (0–15) or an opcode extension `/digit`.
    ModRm { reg: u8, rm: Rm },
}

/// One instruction's encoding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inst {
    /// The `66` operand-size prefix (16-bit operands).
    pub o16: bool,
    /// REX.W (64-bit operands).
    pub w: bool,
    /// A REX prefix even when no bit is set: the instruction names `spl`, `bpl`, `sil` or `dil`.
    pub byte_regs: bool,
    /// Up to three opcode bytes; `len` says how many.
    pub opcode: [u8; 3],
    pub len: u8,
    pub form: Form,
    pub imm: Imm,
}

impl Inst {
    /// An instruction with `opcode` (1–3 bytes) and nothing else yet.
    pub fn new(opcode: &[u8], form: Form) -> Inst {
        let mut op = [0u8; 3];
        let len = opcode.len().min(3);
        op[..len].copy_from_slice(&opcode[..len]);
        Inst {
            o16: false,
            w: false,
            byte_regs: false,
            opcode: op,
            len: len as u8,
            form,
            imm: Imm::None,
        }
    }

    /// Sets the operand-size prefixes for `size` (`66` for words, REX.W for quadwords).
    pub fn size(mut self, size: Size) -> Inst {
        self.o16 = size == Size::Word;
        self.w = size == Size::Qword;
        self
    }

    /// Marks that byte registers `regs` are operands (each that is `spl`–`dil` needs a REX).
    pub fn bytes_of(mut self, regs: &[Reg]) -> Inst {
        self.byte_regs |= regs.iter().any(|r| (4..8).contains(&r.number()));
        self
    }

    pub fn imm(mut self, imm: Imm) -> Inst {
        self.imm = imm;
        self
    }
}

/// A memory operand's ModRM, SIB and displacement.
struct MemEncoding {
    modrm: u8,
    sib: Option<u8>,
    disp: Disp,
    rex_x: bool,
    rex_b: bool,
    label: Option<Label>,
}

#[derive(Clone, Copy)]
enum Disp {
    None,
    D8(i8),
    D32(i32),
}

/// The ModRM `mod` field's values.
const MOD_INDIRECT: u8 = 0b00;
const MOD_DISP8: u8 = 0b01;
const MOD_DISP32: u8 = 0b10;
const MOD_REG: u8 = 0b11;
/// r/m = 100: a SIB byte follows; SIB index = 100 (without REX.X): no index.
const RM_SIB: u8 = 0b100;
/// r/m = 101 with mod = 00: RIP-relative; SIB base = 101 with mod = 00: no base, disp32.
const RM_DISP32: u8 = 0b101;

fn modrm(md: u8, reg: u8, rm: u8) -> u8 {
    (md << 6) | ((reg & 7) << 3) | (rm & 7)
}

fn encode_mem(reg: u8, m: &Mem) -> Result<MemEncoding, OperandError> {
    if let Some((Reg::Rsp, _)) = m.index {
        return Err(OperandError::IndexRsp);
    }
    let (index_bits, rex_x) = match m.index {
        Some((r, s)) => (((s as u8) << 6) | (r.low() << 3), r.high()),
        None => (RM_SIB << 3, false),
    };
    Ok(match m.base {
        Base::Rip | Base::Label(_) => {
            if m.index.is_some() {
                return Err(OperandError::RipIndex);
            }
            MemEncoding {
                modrm: modrm(MOD_INDIRECT, reg, RM_DISP32),
                sib: None,
                disp: Disp::D32(m.disp),
                rex_x: false,
                rex_b: false,
                label: m.target_label(),
            }
        }
        Base::None => MemEncoding {
            modrm: modrm(MOD_INDIRECT, reg, RM_SIB),
            sib: Some(index_bits | RM_DISP32),
            disp: Disp::D32(m.disp),
            rex_x,
            rex_b: false,
            label: None,
        },
        Base::Reg(b) => {
            // rbp and r13 (low bits 101) have no mod = 00 form: that code means RIP-relative
            // (or no base, in a SIB). They take a zero disp8 instead.
            let (md, disp) = if m.disp == 0 && b.low() != RM_DISP32 {
                (MOD_INDIRECT, Disp::None)
            } else if let Ok(d) = i8::try_from(m.disp) {
                (MOD_DISP8, Disp::D8(d))
            } else {
                (MOD_DISP32, Disp::D32(m.disp))
            };
            // rsp and r12 (low bits 100) as a base always need a SIB byte.
            let (rm, sib) = if m.index.is_some() || b.low() == RM_SIB {
                (RM_SIB, Some(index_bits | b.low()))
            } else {
                (b.low(), None)
            };
            MemEncoding {
                modrm: modrm(md, reg, rm),
                sib,
                disp,
                rex_x,
                rex_b: b.high(),
                label: None,
            }
        }
    })
}

impl Assembler {
    /// Appends one instruction (`mnemonic` names it in errors), or nothing and the reason.
    pub(crate) fn emit(
        &mut self,
        mnemonic: &'static str,
        inst: Result<Inst, OperandError>,
    ) -> Result<(), AsmError> {
        let lock = std::mem::take(&mut self.lock_next);
        let problem = |problem| AsmError::Operands { index: self.count, mnemonic, problem };
        let inst = inst.map_err(problem)?;
        let mem = match &inst.form {
            Form::ModRm { reg, rm: Rm::Mem(m) } => Some(encode_mem(*reg, m).map_err(problem)?),
            _ => None,
        };
        if let Some(label) = mem.as_ref().and_then(|m| m.label) {
            self.check_label(label)?;
        }
        let (rex_r, rex_x, rex_b) = match (&inst.form, &mem) {
            (Form::ModRm { reg, .. }, Some(m)) => (reg & 8 != 0, m.rex_x, m.rex_b),
            (Form::ModRm { reg, rm: Rm::Reg(r) }, None) => (reg & 8 != 0, false, r.high()),
            (Form::OpReg(r), _) => (false, false, r.high()),
            _ => (false, false, false),
        };
        let code = &mut self.code;
        if lock {
            code.push(0xF0);
        }
        if inst.o16 {
            code.push(0x66);
        }
        let rex = 0x40
            | (u8::from(inst.w) << 3)
            | (u8::from(rex_r) << 2)
            | (u8::from(rex_x) << 1)
            | u8::from(rex_b);
        if rex != 0x40 || inst.byte_regs {
            code.push(rex);
        }
        let opcode = &inst.opcode[..usize::from(inst.len)];
        match inst.form {
            Form::OpReg(r) => {
                let (last, first) = opcode.split_last().unwrap_or((&0, &[]));
                code.extend_from_slice(first);
                code.push(last | r.low());
            }
            _ => code.extend_from_slice(opcode),
        }
        let mut disp_at = None;
        match (inst.form, &mem) {
            (Form::ModRm { reg, rm: Rm::Reg(r) }, _) => code.push(modrm(MOD_REG, reg, r.low())),
            (_, Some(m)) => {
                code.push(m.modrm);
                if let Some(sib) = m.sib {
                    code.push(sib);
                }
                match m.disp {
                    Disp::None => {}
                    Disp::D8(d) => code.push(d as u8),
                    Disp::D32(d) => {
                        disp_at = Some(code.len());
                        code.extend_from_slice(&d.to_le_bytes());
                    }
                }
            }
            _ => {}
        }
        match inst.imm {
            Imm::None => {}
            Imm::B(v) => code.push(v),
            Imm::W(v) => code.extend_from_slice(&v.to_le_bytes()),
            Imm::D(v) => code.extend_from_slice(&v.to_le_bytes()),
            Imm::Q(v) => code.extend_from_slice(&v.to_le_bytes()),
        }
        if let (Some(label), Some(field)) = (mem.as_ref().and_then(|m| m.label), disp_at) {
            let end = code.len();
            self.fixups.push(Fixup {
                field,
                end,
                label: label.index,
                jumps_before: self.jumps.len(),
            });
        }
        self.count += 1;
        Ok(())
    }
}
