//! What can go wrong while assembling: an instruction whose operands x86-64 cannot encode, or
//! a label used wrongly. Nothing in this crate panics on bad input; every such case is one of
//! these errors.

use crate::reg::{Reg, Size};

/// Why one instruction's operands cannot be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OperandError {
    /// The instruction has no form at this operand size (`imul` of bytes, `bswap` of words…).
    #[error("no {0} form")]
    Size(Size),
    /// `rsp` as the index of a memory operand: its SIB code means "no index".
    #[error("rsp cannot be an index register")]
    IndexRsp,
    /// A RIP-relative address with an index register.
    #[error("a RIP-relative address cannot have an index")]
    RipIndex,
    /// An immediate that does not fit the instruction's immediate field.
    #[error("immediate {value:#x} does not fit {bits} bits")]
    Immediate {
        /// The value given.
        value: i64,
        /// The field's width.
        bits: u32,
    },
    /// A shift count that is neither an immediate 0–255 nor `cl` (`Reg::Rcx`).
    #[error("a shift count is an immediate 0-255 or cl")]
    ShiftCount,
    /// Operand kinds the instruction has no form for (two memory operands, an immediate
    /// destination, a memory operand where only a register goes…).
    #[error("no form takes {0}")]
    Kinds(&'static str),
    /// `movzx`/`movsx` whose source is not narrower than the destination, or is not a byte or
    /// a word.
    #[error("cannot extend {from} to {to}")]
    Extend {
        /// The source size.
        from: Size,
        /// The destination size.
        to: Size,
    },
    /// A register that the instruction cannot name here.
    #[error("{0} cannot be used here")]
    Register(Reg),
}

/// An assembly error, with where it happened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AsmError {
    /// Instruction number `index` (counting from 0 in the order instructions were given) could
    /// not be encoded. Nothing was emitted for it.
    #[error("instruction {index} ({mnemonic}): {problem}")]
    Operands {
        /// The instruction's number.
        index: usize,
        /// Its mnemonic.
        mnemonic: &'static str,
        /// What is wrong.
        problem: OperandError,
    },
    /// A label was jumped to or addressed but never bound.
    #[error("label {label} is used but never bound")]
    UnboundLabel {
        /// The label's index.
        label: usize,
    },
    /// A label was bound a second time.
    #[error("label {label} is already bound")]
    LabelBoundTwice {
        /// The label's index.
        label: usize,
    },
    /// A label made by another assembler.
    #[error("label {label} belongs to another assembler")]
    ForeignLabel {
        /// The label's index (in the other assembler).
        label: usize,
    },
    /// `[rip + label + displacement]` is more than ±2 GiB from the instruction.
    #[error("label {label} plus {displacement} is out of rel32 reach")]
    LabelDisplacement {
        /// The label's index.
        label: usize,
        /// The displacement added to it.
        displacement: i64,
    },
    /// The code is too large for 32-bit displacements to span it.
    #[error("{len} bytes of code is more than rel32 displacements can span")]
    TooLarge {
        /// The code's size.
        len: usize,
    },
}
