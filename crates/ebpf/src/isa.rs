//! Typed eBPF instructions through ISA version 4 (RFC 9669), decoded from slots with located
//! errors and encoded back.
//!
//! [`crate::insn`] is the raw 8-byte slot; this module says what a slot (or the two slots of a
//! 64-bit immediate load) *means*, and refuses the ones that mean nothing: unknown opcodes,
//! reserved fields that are not zero, registers past `r10`, a `lddw` without its second half.
//! Every engine (the assembler and printers beside it, the VM, a verifier, a JIT) works on
//! [`Insn`] so that these checks exist once.

use thiserror::Error;

use crate::insn::opcode::{alu, class, jmp, mode, size};
use crate::insn::{EbpfInsn, Reg};

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub use decode::{decode_at, decode_bytes, decode_program, slots_from_bytes};
pub use encode::encode_program;

/// The width of an arithmetic, jump or atomic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// 32 bits (`ALU`, `JMP32`, `W`-sized atomics): results are zero-extended.
    W32,
    /// 64 bits.
    W64,
}

/// The second operand of an arithmetic or jump instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register.
    Reg(Reg),
    /// The sign-extended 32-bit immediate.
    Imm(i32),
}

/// Two-operand arithmetic operations (`mov` with a sign-extending offset is [`Insn::MovSx`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// Unsigned `/` (by zero: 0).
    Div,
    /// Signed `/` (offset 1; by zero: 0; `MIN / -1` = `MIN`).
    SDiv,
    /// `|`.
    Or,
    /// `&`.
    And,
    /// `<<` (count masked to the width).
    Lsh,
    /// Logical `>>`.
    Rsh,
    /// Unsigned `%` (by zero: the dividend).
    Mod,
    /// Signed `%` (offset 1; by zero: the dividend; `MIN % -1` = 0).
    SMod,
    /// `^`.
    Xor,
    /// `=`.
    Mov,
    /// Arithmetic `>>`.
    Arsh,
}

impl AluOp {
    /// The opcode's operation bits and the offset field that select this operation.
    pub const fn code_and_offset(self) -> (u8, i16) {
        match self {
            AluOp::Add => (alu::ADD, 0),
            AluOp::Sub => (alu::SUB, 0),
            AluOp::Mul => (alu::MUL, 0),
            AluOp::Div => (alu::DIV, 0),
            AluOp::SDiv => (alu::DIV, 1),
            AluOp::Or => (alu::OR, 0),
            AluOp::And => (alu::AND, 0),
            AluOp::Lsh => (alu::LSH, 0),
            AluOp::Rsh => (alu::RSH, 0),
            AluOp::Mod => (alu::MOD, 0),
            AluOp::SMod => (alu::MOD, 1),
            AluOp::Xor => (alu::XOR, 0),
            AluOp::Mov => (alu::MOV, 0),
            AluOp::Arsh => (alu::ARSH, 0),
        }
    }
}

/// Memory access sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 1 byte.
    B,
    /// 2 bytes.
    H,
    /// 4 bytes.
    W,
    /// 8 bytes.
    DW,
}

impl Size {
    /// The number of bytes.
    pub const fn bytes(self) -> usize {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::DW => 8,
        }
    }

    /// The opcode's size bits.
    pub const fn code(self) -> u8 {
        match self {
            Size::B => size::B,
            Size::H => size::H,
            Size::W => size::W,
            Size::DW => size::DW,
        }
    }

    const fn from_code(code: u8) -> Size {
        match code & size::MASK {
            size::B => Size::B,
            size::H => Size::H,
            size::W => Size::W,
            _ => Size::DW,
        }
    }
}

/// What a byte-swap instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `le16/32/64`: to little-endian (on a little-endian host: truncate to the width).
    Le,
    /// `be16/32/64`: to big-endian (swap on a little-endian host).
    Be,
    /// `bswap16/32/64` (v4, `ALU64 | END`): swap unconditionally.
    Swap,
}

/// Jump conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// `==`.
    Eq,
    /// Unsigned `>`.
    Gt,
    /// Unsigned `>=`.
    Ge,
    /// `&` is non-zero.
    Set,
    /// `!=`.
    Ne,
    /// Signed `>`.
    Sgt,
    /// Signed `>=`.
    Sge,
    /// Unsigned `<`.
    Lt,
    /// Unsigned `<=`.
    Le,
    /// Signed `<`.
    Slt,
    /// Signed `<=`.
    Sle,
}

impl Cond {
    /// Every condition, in opcode order.
    pub const ALL: [Cond; 11] = [
        Cond::Eq,
        Cond::Gt,
        Cond::Ge,
        Cond::Set,
        Cond::Ne,
        Cond::Sgt,
        Cond::Sge,
        Cond::Lt,
        Cond::Le,
        Cond::Slt,
        Cond::Sle,
    ];

    /// The opcode's operation bits.
    pub const fn code(self) -> u8 {
        match self {
            Cond::Eq => jmp::JEQ,
            Cond::Gt => jmp::JGT,
            Cond::Ge => jmp::JGE,
            Cond::Set => jmp::JSET,
            Cond::Ne => jmp::JNE,
            Cond::Sgt => jmp::JSGT,
            Cond::Sge => jmp::JSGE,
            Cond::Lt => jmp::JLT,
            Cond::Le => jmp::JLE,
            Cond::Slt => jmp::JSLT,
            Cond::Sle => jmp::JSLE,
        }
    }

    fn from_code(op: u8) -> Option<Cond> {
        Cond::ALL.into_iter().find(|c| c.code() == op)
    }
}

/// Atomic read-modify-write operations (`STX | ATOMIC`, sizes `W` and `DW`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `+=`.
    Add,
    /// `|=`.
    Or,
    /// `&=`.
    And,
    /// `^=`.
    Xor,
    /// Exchange (always fetches the old value into `src`).
    Xchg,
    /// Compare `r0` with memory and store `src` if equal; the old value goes to `r0`.
    Cmpxchg,
}

/// The `FETCH` flag of an atomic instruction's immediate.
pub const ATOMIC_FETCH: i32 = 0x01;
/// `imm` of an atomic exchange.
pub const ATOMIC_XCHG: i32 = 0xe0 | ATOMIC_FETCH;
/// `imm` of an atomic compare-and-exchange.
pub const ATOMIC_CMPXCHG: i32 = 0xf0 | ATOMIC_FETCH;

impl AtomicOp {
    /// The instruction's immediate for this operation (with `fetch` for the four arithmetic ones).
    pub const fn imm(self, fetch: bool) -> i32 {
        let f = if fetch { ATOMIC_FETCH } else { 0 };
        match self {
            AtomicOp::Add => alu::ADD as i32 | f,
            AtomicOp::Or => alu::OR as i32 | f,
            AtomicOp::And => alu::AND as i32 | f,
            AtomicOp::Xor => alu::XOR as i32 | f,
            AtomicOp::Xchg => ATOMIC_XCHG,
            AtomicOp::Cmpxchg => ATOMIC_CMPXCHG,
        }
    }

    fn from_imm(imm: i32) -> Option<(AtomicOp, bool)> {
        Some(match imm {
            ATOMIC_XCHG => (AtomicOp::Xchg, true),
            ATOMIC_CMPXCHG => (AtomicOp::Cmpxchg, true),
            _ => {
                let fetch = imm & ATOMIC_FETCH != 0;
                let op = match imm & !ATOMIC_FETCH {
                    x if x == alu::ADD as i32 => AtomicOp::Add,
                    x if x == alu::OR as i32 => AtomicOp::Or,
                    x if x == alu::AND as i32 => AtomicOp::And,
                    x if x == alu::XOR as i32 => AtomicOp::Xor,
                    _ => return None,
                };
                (op, fetch)
            }
        })
    }
}

/// What the 64-bit immediate of a `lddw` is (its source register field, the kernel's
/// `BPF_PSEUDO_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmKind {
    /// 0: the value itself.
    Imm,
    /// 1 (`BPF_PSEUDO_MAP_FD`): a map by file descriptor (low 32 bits).
    MapFd,
    /// 2 (`BPF_PSEUDO_MAP_VALUE`): the address of a map's value: fd (low), offset (high).
    MapValue,
    /// 3 (`BPF_PSEUDO_BTF_ID`): a kernel variable by BTF id.
    BtfId,
    /// 4 (`BPF_PSEUDO_FUNC`): the address of a bpf-to-bpf function (low: relative slot offset).
    Func,
    /// 5 (`BPF_PSEUDO_MAP_IDX`): a map by index into the program's map array.
    MapIdx,
    /// 6 (`BPF_PSEUDO_MAP_IDX_VALUE`): a map value's address, map by index.
    MapIdxValue,
}

impl ImmKind {
    /// The source register field that selects this kind.
    pub const fn src(self) -> Reg {
        self as Reg
    }

    /// The kind a source register field selects.
    pub const fn from_src(src: Reg) -> Option<ImmKind> {
        Some(match src {
            0 => ImmKind::Imm,
            1 => ImmKind::MapFd,
            2 => ImmKind::MapValue,
            3 => ImmKind::BtfId,
            4 => ImmKind::Func,
            5 => ImmKind::MapIdx,
            6 => ImmKind::MapIdxValue,
            _ => return None,
        })
    }
}

/// What a `call` (`JMP | CALL | K`) calls, by its source register field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallTarget {
    /// src 0: a helper by number.
    Helper(i32),
    /// src 1 (`BPF_PSEUDO_CALL`): a bpf-to-bpf call, `imm` slots after the next instruction.
    Local(i32),
    /// src 2 (`BPF_PSEUDO_KFUNC_CALL`): a kernel function by BTF id; `module` is the offset
    /// field (an index into the program's BTF file descriptors, 0 for vmlinux).
    Kfunc {
        /// The function's BTF id.
        btf_id: i32,
        /// The BTF object (the offset field).
        module: i16,
    },
}

/// One eBPF instruction, typed. A [`Insn::LdImm64`] takes two slots, everything else one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Insn {
    /// `dst op= src` (`ALU`/`ALU64`).
    Alu {
        /// 32 or 64 bits.
        width: Width,
        /// The operation.
        op: AluOp,
        /// Destination (and first operand).
        dst: Reg,
        /// Second operand.
        src: Operand,
    },
    /// `dst = (s8/s16/s32) src` (v4 `movsx`, offset 8, 16 or 32; 32 only on 64 bits).
    MovSx {
        /// 32 or 64 bits.
        width: Width,
        /// The width sign-extended from: 8, 16 or 32.
        bits: u8,
        /// Destination.
        dst: Reg,
        /// Source register.
        src: Reg,
    },
    /// `dst = -dst`.
    Neg {
        /// 32 or 64 bits.
        width: Width,
        /// The register.
        dst: Reg,
    },
    /// Byte swaps (`le`, `be`, `bswap`), 16, 32 or 64 bits, zero-extending.
    Endian {
        /// Which swap.
        order: ByteOrder,
        /// 16, 32 or 64.
        bits: u8,
        /// The register.
        dst: Reg,
    },
    /// `dst = *(size *)(src + off)`, zero-extended.
    Load {
        /// Access size.
        size: Size,
        /// Destination.
        dst: Reg,
        /// Base register.
        src: Reg,
        /// Offset.
        off: i16,
    },
    /// `dst = *(s8/s16/s32 *)(src + off)`, sign-extended (v4 `MEMSX`; not `DW`).
    LoadSx {
        /// Access size (B, H or W).
        size: Size,
        /// Destination.
        dst: Reg,
        /// Base register.
        src: Reg,
        /// Offset.
        off: i16,
    },
    /// `*(size *)(dst + off) = src` (`ST` with an immediate, `STX` with a register).
    Store {
        /// Access size.
        size: Size,
        /// Base register.
        dst: Reg,
        /// Offset.
        off: i16,
        /// The value stored.
        src: Operand,
    },
    /// Atomic read-modify-write on `*(dst + off)`.
    Atomic {
        /// `W` (32) or `DW` (64).
        width: Width,
        /// The operation.
        op: AtomicOp,
        /// Whether the old value is returned (in `src`, or `r0` for `cmpxchg`).
        fetch: bool,
        /// Base register.
        dst: Reg,
        /// The operand register.
        src: Reg,
        /// Offset.
        off: i16,
    },
    /// `dst = imm64` (two slots); `kind` says what the value stands for.
    LdImm64 {
        /// Destination.
        dst: Reg,
        /// Plain value or a pseudo form.
        kind: ImmKind,
        /// Low 32 bits from the first slot, high 32 from the second.
        imm: u64,
    },
    /// Legacy `r0 = ntoh(*(size *)(packet + imm))` (`LD | ABS`).
    LdAbs {
        /// B, H or W.
        size: Size,
        /// Packet offset.
        imm: i32,
    },
    /// Legacy `r0 = ntoh(*(size *)(packet + src + imm))` (`LD | IND`).
    LdInd {
        /// B, H or W.
        size: Size,
        /// Register added to the offset.
        src: Reg,
        /// Packet offset.
        imm: i32,
    },
    /// `goto +off` (`JMP | JA` uses the 16-bit offset; v4 `JMP32 | JA`, "gotol", the 32-bit
    /// immediate).
    Ja {
        /// Slots after the next instruction.
        off: i32,
        /// Whether this is the `JMP32` form with the offset in `imm`.
        long: bool,
    },
    /// `if dst cond src goto +off`.
    Jmp {
        /// `JMP` (64) or `JMP32` (32).
        width: Width,
        /// The comparison.
        cond: Cond,
        /// First operand.
        dst: Reg,
        /// Second operand.
        src: Operand,
        /// Slots after the next instruction.
        off: i16,
    },
    /// `call` a helper, a local function or a kernel function.
    Call(CallTarget),
    /// `callx dst` (call the helper or function whose number or address is in `dst`).
    Callx {
        /// The register holding the target.
        dst: Reg,
    },
    /// Return `r0` (from a function: to its caller).
    Exit,
}

/// Why a slot does not decode.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// The opcode byte names no instruction.
    #[error("unknown opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// A register field past `r10`.
    #[error("invalid {field} register r{reg}")]
    InvalidRegister {
        /// `"destination"` or `"source"`.
        field: &'static str,
        /// The number found.
        reg: u8,
    },
    /// A field this instruction does not use is not zero.
    #[error("opcode {code:#04x}: reserved {field} field is {value}, not 0")]
    Reserved {
        /// The opcode.
        code: u8,
        /// `"src"`, `"dst"`, `"offset"` or `"imm"`.
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// A field has a value this instruction does not define.
    #[error("opcode {code:#04x}: invalid {field} {value}")]
    InvalidField {
        /// The opcode.
        code: u8,
        /// Which field (`"endian width"`, `"movsx offset"`, `"atomic operation"`, …).
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// A `lddw` is the last slot.
    #[error("lddw without its second half")]
    IncompleteLdImm64,
    /// The second slot of a `lddw` has fields other than `imm` set.
    #[error("invalid lddw second half (code, registers and offset must be 0)")]
    BadLdImm64SecondHalf,
    /// The byte image is not a whole number of slots.
    #[error("{0} trailing bytes after the last whole instruction")]
    TrailingBytes(usize),
}

/// A located decode error: the slot index and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("instruction {index}: {kind}")]
pub struct DecodeError {
    /// The slot index (in 8-byte units).
    pub index: usize,
    /// What is wrong.
    pub kind: DecodeErrorKind,
}

/// One decoded instruction and the slot it starts at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// The slot index.
    pub index: usize,
    /// The instruction.
    pub insn: Insn,
}

/// The versions of the instruction set (`-mcpu=v1`…`v4` in clang): what a program may use
/// when a target supports only an older one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IsaVersion {
    /// The original instruction set (with `lock xadd`: atomic add without fetch).
    V1 = 1,
    /// Adds `jlt`, `jle`, `jslt`, `jsle`.
    V2 = 2,
    /// Adds the `JMP32` class and the other atomics (fetch forms, `or`/`and`/`xor`, `xchg`,
    /// `cmpxchg`).
    V3 = 3,
    /// Adds signed division and modulo, sign-extending moves and loads, `bswap`, `gotol` (and
    /// `callx`, which only userspace engines run).
    V4 = 4,
}

impl Insn {
    /// The first instruction-set version that has this instruction.
    pub fn isa_version(&self) -> IsaVersion {
        match *self {
            Insn::Alu { op: AluOp::SDiv | AluOp::SMod, .. }
            | Insn::MovSx { .. }
            | Insn::LoadSx { .. }
            | Insn::Endian { order: ByteOrder::Swap, .. }
            | Insn::Ja { long: true, .. }
            | Insn::Callx { .. } => IsaVersion::V4,
            Insn::Jmp { width: Width::W32, .. } => IsaVersion::V3,
            Insn::Atomic { op: AtomicOp::Add, fetch: false, .. } => IsaVersion::V1,
            Insn::Atomic { .. } => IsaVersion::V3,
            Insn::Jmp { cond: Cond::Lt | Cond::Le | Cond::Slt | Cond::Sle, .. } => IsaVersion::V2,
            _ => IsaVersion::V1,
        }
    }
}
