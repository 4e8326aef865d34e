//! Registers, operand sizes and condition codes: the vocabulary every instruction is built from.

use std::fmt;

/// One of the 16 general-purpose registers, named by its 64-bit form.
///
/// The width an instruction uses is given separately as a [`Size`]: `Reg::Rax` at
/// [`Size::Dword`] is `eax`, at [`Size::Byte`] `al`. The high-byte registers `ah`, `ch`, `dh`
/// and `bh` are not offered: at [`Size::Byte`], numbers 4–7 are `spl`, `bpl`, `sil` and `dil`,
/// which need a REX prefix (the assembler adds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[allow(missing_docs)] // The names are the registers'.
pub enum Reg {
    Rax = 0,
    Rcx,
    Rdx,
    Rbx,
    Rsp,
    Rbp,
    Rsi,
    Rdi,
    R8,
    R9,
    R10,
    R11,
    R12,
    R13,
    R14,
    R15,
}

impl Reg {
    /// All 16 registers in encoding order.
    pub const ALL: [Reg; 16] = [
        Reg::Rax,
        Reg::Rcx,
        Reg::Rdx,
        Reg::Rbx,
        Reg::Rsp,
        Reg::Rbp,
        Reg::Rsi,
        Reg::Rdi,
        Reg::R8,
        Reg::R9,
        Reg::R10,
        Reg::R11,
        Reg::R12,
        Reg::R13,
        Reg::R14,
        Reg::R15,
    ];

    /// The register's number, 0–15 (the ModRM/SIB field with the REX extension bit on top).
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The register numbered `n` (taken modulo 16).
    pub const fn from_number(n: u8) -> Reg {
        Reg::ALL[(n & 15) as usize]
    }

    /// The low three bits, which go into ModRM, SIB or the opcode.
    pub(crate) const fn low(self) -> u8 {
        self as u8 & 7
    }

    /// The fourth bit, which goes into REX.R, REX.X or REX.B.
    pub(crate) const fn high(self) -> bool {
        self as u8 & 8 != 0
    }

    /// True for the registers the System V ABI lets a function clobber.
    pub const fn is_caller_saved(self) -> bool {
        !matches!(self, Reg::Rbx | Reg::Rsp | Reg::Rbp | Reg::R12 | Reg::R13 | Reg::R14 | Reg::R15)
    }

    /// The register's assembly name at `size` (`eax`, `r9w`, `sil`, …).
    pub const fn name(self, size: Size) -> &'static str {
        const NAMES: [[&str; 16]; 4] = [
            [
                "al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b",
                "r12b", "r13b", "r14b", "r15b",
            ],
            [
                "ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w",
                "r12w", "r13w", "r14w", "r15w",
            ],
            [
                "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d",
                "r11d", "r12d", "r13d", "r14d", "r15d",
            ],
            [
                "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
                "r12", "r13", "r14", "r15",
            ],
        ];
        NAMES[size as usize][self as usize]
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name(Size::Qword))
    }
}

/// An operand size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Size {
    /// 8 bits.
    Byte = 0,
    /// 16 bits (operand-size prefix `66`).
    Word,
    /// 32 bits (the default; writing a 32-bit register zeroes the upper half).
    Dword,
    /// 64 bits (REX.W).
    Qword,
}

impl Size {
    /// All four sizes, smallest first.
    pub const ALL: [Size; 4] = [Size::Byte, Size::Word, Size::Dword, Size::Qword];

    /// The size in bits.
    pub const fn bits(self) -> u32 {
        8 << self as u32
    }

    /// The size in bytes.
    pub const fn bytes(self) -> usize {
        1 << self as usize
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Size::Byte => "byte",
            Size::Word => "word",
            Size::Dword => "dword",
            Size::Qword => "qword",
        })
    }
}

/// The scale applied to an index register in a memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Scale {
    /// `index*1`
    X1 = 0,
    /// `index*2`
    X2,
    /// `index*4`
    X4,
    /// `index*8`
    X8,
}

impl Scale {
    /// All four scales.
    pub const ALL: [Scale; 4] = [Scale::X1, Scale::X2, Scale::X4, Scale::X8];

    /// The factor: 1, 2, 4 or 8.
    pub const fn factor(self) -> u32 {
        1 << self as u32
    }
}

/// A condition code, as in `Jcc`, `SETcc` and `CMOVcc` (Intel SDM vol. 1, appendix B). The
/// discriminant is the 4-bit `tttn` field of the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Cond {
    /// Overflow (OF = 1).
    O = 0x0,
    /// No overflow (OF = 0).
    No = 0x1,
    /// Below, unsigned `<` (CF = 1); also "carry".
    B = 0x2,
    /// Above or equal, unsigned `>=` (CF = 0); also "no carry".
    Ae = 0x3,
    /// Equal (ZF = 1).
    E = 0x4,
    /// Not equal (ZF = 0).
    Ne = 0x5,
    /// Below or equal, unsigned `<=` (CF = 1 or ZF = 1).
    Be = 0x6,
    /// Above, unsigned `>` (CF = 0 and ZF = 0).
    A = 0x7,
    /// Sign (SF = 1).
    S = 0x8,
    /// No sign (SF = 0).
    Ns = 0x9,
    /// Parity even (PF = 1).
    P = 0xA,
    /// Parity odd (PF = 0).
    Np = 0xB,
    /// Less, signed `<` (SF ≠ OF).
    L = 0xC,
    /// Greater or equal, signed `>=` (SF = OF).
    Ge = 0xD,
    /// Less or equal, signed `<=` (ZF = 1 or SF ≠ OF).
    Le = 0xE,
    /// Greater, signed `>` (ZF = 0 and SF = OF).
    G = 0xF,
}

impl Cond {
    /// All 16 conditions in encoding order.
    pub const ALL: [Cond; 16] = [
        Cond::O,
        Cond::No,
        Cond::B,
        Cond::Ae,
        Cond::E,
        Cond::Ne,
        Cond::Be,
        Cond::A,
        Cond::S,
        Cond::Ns,
        Cond::P,
        Cond::Np,
        Cond::L,
        Cond::Ge,
        Cond::Le,
        Cond::G,
    ];

    /// The opposite condition: true exactly when `self` is false. Flipping the low bit of the
    /// encoding negates every x86 condition.
    pub const fn negate(self) -> Cond {
        Cond::ALL[(self as u8 ^ 1) as usize]
    }

    /// The 4-bit code that goes into the opcode.
    pub const fn code(self) -> u8 {
        self as u8
    }
}
