//! Typed eBPF instructions through ISA version 4 (RFC 9669), decoded from slots with located
//! errors and encoded back.
//!
//! [`crate::insn`] is the raw 8-byte slot; this module says what a slot (or the two slots of a
//! 64-bit immediate load) *means*, and refuses the ones that mean nothing: unknown opcodes,
//! reserved fields that are not zero, registers past `r10`, a `lddw` without its second half.
//! Every engine (the assembler and printers beside it, the VM, a verifier, a JIT) works on
//! [`Insn`] so that these checks exist once.

use thiserror::Error;

use crate::insn::opcode::{alu, class, jmp, mode, size, source};
use crate::insn::{EbpfInsn, Reg};

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

fn decode_one(i: EbpfInsn, next: Option<EbpfInsn>) -> Result<Insn, DecodeErrorKind> {
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

#[cfg(test)]
mod tests {
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
        assert_eq!(
            e.to_string(),
            "instruction 1: 1 trailing bytes after the last whole instruction"
        );
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
}
