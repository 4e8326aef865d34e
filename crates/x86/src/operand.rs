//! Operands: registers, immediates, memory addresses and labels.

use crate::reg::{Reg, Scale};

/// A position in the code, bound with [`Assembler::bind`](crate::Assembler::bind) and
/// jumped to, called, or addressed RIP-relative. Labels belong to the assembler that made them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// The assembler that made the label (see `Assembler::new`).
    pub(crate) owner: u32,
    pub(crate) index: u32,
}

impl Label {
    /// The label's number within its assembler: 0 for the first `new_label`, then 1, 2, ….
    pub const fn index(self) -> usize {
        self.index as usize
    }
}

/// What a memory operand's address is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Base {
    /// No base register: `[index*scale + disp32]` or the absolute `[disp32]`.
    None,
    /// A base register.
    Reg(Reg),
    /// `[rip + disp32]`: relative to the end of the instruction.
    Rip,
    /// `[rip + label + disp]`: the assembler fills in the distance to the label.
    Label(Label),
}

/// A memory operand `[base + index*scale + disp]` with 64-bit addressing.
///
/// Built from a base and refined: `Mem::base(Reg::Rdi).index(Reg::R9, Scale::X1).disp(8)`.
/// The shortest displacement (none, 8 or 32 bits) is chosen when the instruction is encoded.
/// `rsp` cannot be an index (its SIB code means "no index"); encoding such an operand is an
/// [`OperandError::IndexRsp`](crate::OperandError::IndexRsp), as is an index on a
/// RIP-relative address ([`OperandError::RipIndex`](crate::OperandError::RipIndex)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mem {
    pub(crate) base: Base,
    pub(crate) index: Option<(Reg, Scale)>,
    pub(crate) disp: i32,
}

impl Mem {
    /// `[reg]`
    pub const fn base(reg: Reg) -> Mem {
        Mem { base: Base::Reg(reg), index: None, disp: 0 }
    }

    /// `[disp32]`: an absolute address (sign-extended to 64 bits).
    pub const fn abs(disp: i32) -> Mem {
        Mem { base: Base::None, index: None, disp }
    }

    /// `[rip + disp32]`: relative to the end of the instruction that uses it.
    pub const fn rip(disp: i32) -> Mem {
        Mem { base: Base::Rip, index: None, disp }
    }

    /// `[rip + label]`: the address of a label in the same code (plus `disp`, if set).
    pub const fn label(label: Label) -> Mem {
        Mem { base: Base::Label(label), index: None, disp: 0 }
    }

    /// `[index*scale + disp32]` with no base register.
    pub const fn index_only(index: Reg, scale: Scale) -> Mem {
        Mem { base: Base::None, index: Some((index, scale)), disp: 0 }
    }

    /// The same address plus `index*scale` (replacing any index).
    #[must_use]
    pub const fn index(self, index: Reg, scale: Scale) -> Mem {
        Mem { index: Some((index, scale)), ..self }
    }

    /// The same address with displacement `disp` (replacing any displacement).
    #[must_use]
    pub const fn disp(self, disp: i32) -> Mem {
        Mem { disp, ..self }
    }

    /// The base register, if there is one.
    pub const fn base_reg(&self) -> Option<Reg> {
        match self.base {
            Base::Reg(r) => Some(r),
            _ => None,
        }
    }

    /// The index register and its scale, if there is one.
    pub const fn index_reg(&self) -> Option<(Reg, Scale)> {
        self.index
    }

    /// The displacement.
    pub const fn displacement(&self) -> i32 {
        self.disp
    }

    /// True for `[rip + …]` addresses, given as a displacement or a label.
    pub const fn is_rip_relative(&self) -> bool {
        matches!(self.base, Base::Rip | Base::Label(_))
    }

    /// The label a RIP-relative address points at, if it was given one.
    pub const fn target_label(&self) -> Option<Label> {
        match self.base {
            Base::Label(l) => Some(l),
            _ => None,
        }
    }
}

/// An instruction operand.
///
/// Immediates are given as `i64` and checked against the instruction's operand size: a value
/// fits `n` bits when it is a signed or an unsigned `n`-bit number (`-128..=255` for a byte),
/// and is encoded as its low `n` bits. A 64-bit instruction takes a sign-extended 32-bit
/// immediate (`i32` range), except `mov r64, imm64`, which takes any value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register, at the instruction's operand size.
    Reg(Reg),
    /// An immediate value.
    Imm(i64),
    /// A memory operand.
    Mem(Mem),
}

impl From<Reg> for Operand {
    fn from(r: Reg) -> Operand {
        Operand::Reg(r)
    }
}

impl From<Mem> for Operand {
    fn from(m: Mem) -> Operand {
        Operand::Mem(m)
    }
}

impl From<i32> for Operand {
    fn from(v: i32) -> Operand {
        Operand::Imm(i64::from(v))
    }
}

impl From<u32> for Operand {
    fn from(v: u32) -> Operand {
        Operand::Imm(i64::from(v))
    }
}

impl From<i64> for Operand {
    fn from(v: i64) -> Operand {
        Operand::Imm(v)
    }
}

impl From<u64> for Operand {
    /// The bit pattern of `v` (for `mov r64, imm64`).
    fn from(v: u64) -> Operand {
        Operand::Imm(v as i64)
    }
}

impl From<u8> for Operand {
    fn from(v: u8) -> Operand {
        Operand::Imm(i64::from(v))
    }
}
