//! The instructions, one method each, named after the Intel SDM mnemonics.
//!
//! Each method picks the shortest encoding of what it was asked for, never a different
//! instruction: a sign-extended imm8 (`83 /0 ib`) when the immediate allows, the accumulator
//! forms (`05 id`, `A9 id`) for `rax`, `D1 /4` for a shift by one, no displacement or a disp8
//! when the address allows, `B8+r id` for `mov r32, imm32`. The operand size is always the one
//! given: `mov` of a quadword immediate that fits 32 bits is `REX.W C7 /0 id`, not the shorter
//! zero-extending `mov r32, imm32` (which the caller can ask for with [`Size::Dword`]).

use crate::asm::{Assembler, Fixup};
use crate::encode::{Form, Imm, Inst, Rm};
use crate::error::{AsmError, OperandError};
use crate::operand::{Label, Mem, Operand};
use crate::reg::{Cond, Reg, Size};

/// The eight classic two-operand ALU instructions; the discriminant is both the `/digit` of
/// the immediate forms (`80`/`81`/`83 /op`) and the row of the register forms (`op*8 + 0..5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AluOp {
    /// `add`
    Add = 0,
    /// `or`
    Or,
    /// `adc` (add with carry)
    Adc,
    /// `sbb` (subtract with borrow)
    Sbb,
    /// `and`
    And,
    /// `sub`
    Sub,
    /// `xor`
    Xor,
    /// `cmp` (subtract, keep only the flags)
    Cmp,
}

impl AluOp {
    /// All eight, in encoding order.
    pub const ALL: [AluOp; 8] = [
        AluOp::Add,
        AluOp::Or,
        AluOp::Adc,
        AluOp::Sbb,
        AluOp::And,
        AluOp::Sub,
        AluOp::Xor,
        AluOp::Cmp,
    ];

    /// The mnemonic.
    pub const fn mnemonic(self) -> &'static str {
        ["add", "or", "adc", "sbb", "and", "sub", "xor", "cmp"][self as usize]
    }
}

/// The shifts and rotates of the `C0`/`C1`/`D0`–`D3` group; the discriminant is the `/digit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ShiftOp {
    /// `rol`
    Rol = 0,
    /// `ror`
    Ror = 1,
    /// `shl` (= `sal`)
    Shl = 4,
    /// `shr` (logical)
    Shr = 5,
    /// `sar` (arithmetic)
    Sar = 7,
}

impl ShiftOp {
    /// All five.
    pub const ALL: [ShiftOp; 5] =
        [ShiftOp::Rol, ShiftOp::Ror, ShiftOp::Shl, ShiftOp::Shr, ShiftOp::Sar];

    /// The mnemonic.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            ShiftOp::Rol => "rol",
            ShiftOp::Ror => "ror",
            ShiftOp::Shl => "shl",
            ShiftOp::Shr => "shr",
            ShiftOp::Sar => "sar",
        }
    }
}

/// The prefetch hints of `0F 18 /hint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Prefetch {
    /// `prefetchnta`: non-temporal, close to the processor, past the caches' normal order.
    Nta = 0,
    /// `prefetcht0`: into every cache level.
    T0 = 1,
    /// `prefetcht1`: into level 2 and above.
    T1 = 2,
    /// `prefetcht2`: into level 3 and above.
    T2 = 3,
}

impl Prefetch {
    /// All four.
    pub const ALL: [Prefetch; 4] = [Prefetch::Nta, Prefetch::T0, Prefetch::T1, Prefetch::T2];

    /// The mnemonic.
    pub const fn mnemonic(self) -> &'static str {
        ["prefetchnta", "prefetcht0", "prefetcht1", "prefetcht2"][self as usize]
    }
}

/// The opcode's `w` bit: 0 for byte operands, 1 otherwise.
const fn w(size: Size) -> u8 {
    !matches!(size, Size::Byte) as u8
}

/// The immediate field of an instruction of `size` (imm8, imm16, imm32; a sign-extended imm32
/// for quadwords), or why `value` does not fit it.
fn imm_field(value: i64, size: Size) -> Result<Imm, OperandError> {
    let fits = |bits: u32| value >= -(1i64 << (bits - 1)) && value < (1i64 << bits);
    match size {
        Size::Byte if fits(8) => Ok(Imm::B(value as u8)),
        Size::Word if fits(16) => Ok(Imm::W(value as u16)),
        Size::Dword if fits(32) => Ok(Imm::D(value as u32)),
        Size::Qword if i32::try_from(value).is_ok() => Ok(Imm::D(value as u32)),
        _ => Err(OperandError::Immediate {
            value,
            bits: if size == Size::Qword { 32 } else { size.bits() },
        }),
    }
}

/// The imm8 whose sign extension to `size` is the same operand as `value` (already checked
/// with [`imm_field`]), if there is one.
fn simm8(value: i64, size: Size) -> Option<u8> {
    let as_operand = match size {
        Size::Byte => return None,
        Size::Word => i64::from(value as u16 as i16),
        Size::Dword => i64::from(value as u32 as i32),
        Size::Qword => value,
    };
    i8::try_from(as_operand).ok().map(|v| v as u8)
}

/// A register or memory operand, or `Kinds(what)`.
fn rm(op: Operand, what: &'static str) -> Result<Rm, OperandError> {
    match op {
        Operand::Reg(r) => Ok(Rm::Reg(r)),
        Operand::Mem(m) => Ok(Rm::Mem(m)),
        Operand::Imm(_) => Err(OperandError::Kinds(what)),
    }
}

/// `/digit` forms: opcode, extension and one r/m operand of `size`.
fn group(opcode: u8, digit: u8, size: Size, dst: Rm) -> Inst {
    let inst = Inst::new(&[opcode], Form::ModRm { reg: digit, rm: dst }).size(size);
    byte_rm(inst, size, dst)
}

/// Marks a byte-sized register r/m operand (which may need a REX).
fn byte_rm(inst: Inst, size: Size, rm: Rm) -> Inst {
    match (size, rm) {
        (Size::Byte, Rm::Reg(r)) => inst.bytes_of(&[r]),
        _ => inst,
    }
}

/// `opcode reg, r/m` with `reg` and `rm` both of `size`.
fn reg_rm(opcode: &[u8], size: Size, reg: Reg, rm: Rm) -> Inst {
    let inst = Inst::new(opcode, Form::ModRm { reg: reg.number(), rm }).size(size);
    if size == Size::Byte { byte_rm(inst.bytes_of(&[reg]), size, rm) } else { inst }
}

fn not_byte(size: Size) -> Result<(), OperandError> {
    if size == Size::Byte { Err(OperandError::Size(size)) } else { Ok(()) }
}

impl Assembler {
    /// Appends an instruction that has no operands.
    fn plain(&mut self, bytes: &[u8]) {
        self.code.extend_from_slice(bytes);
        self.count += 1;
    }

    /// `opcode rel32` to `label` (`call`).
    fn rel32(&mut self, opcode: u8, label: Label) -> Result<(), AsmError> {
        self.check_label(label)?;
        self.code.push(opcode);
        let field = self.code.len();
        self.code.extend_from_slice(&0i32.to_le_bytes());
        let end = self.code.len();
        self.fixups.push(Fixup { field, end, label: label.index, jumps_before: self.jumps.len() });
        self.count += 1;
        Ok(())
    }

    /// `mov dst, src`: register, memory or immediate to register; register or immediate to
    /// memory. A quadword immediate outside the `i32` range is `mov r64, imm64` (`movabs`).
    pub fn mov(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        let inst = match (dst.into(), src.into()) {
            (Operand::Reg(d), Operand::Reg(s)) => {
                Ok(reg_rm(&[0x88 | w(size)], size, s, Rm::Reg(d)))
            }
            (Operand::Mem(m), Operand::Reg(s)) => {
                Ok(reg_rm(&[0x88 | w(size)], size, s, Rm::Mem(m)))
            }
            (Operand::Reg(d), Operand::Mem(m)) => {
                Ok(reg_rm(&[0x8A | w(size)], size, d, Rm::Mem(m)))
            }
            (Operand::Reg(d), Operand::Imm(v)) => match size {
                Size::Qword if i32::try_from(v).is_err() => {
                    Ok(Inst::new(&[0xB8], Form::OpReg(d)).size(size).imm(Imm::Q(v as u64)))
                }
                Size::Qword => {
                    imm_field(v, size).map(|imm| group(0xC7, 0, size, Rm::Reg(d)).imm(imm))
                }
                Size::Byte => imm_field(v, size)
                    .map(|imm| Inst::new(&[0xB0], Form::OpReg(d)).bytes_of(&[d]).imm(imm)),
                _ => imm_field(v, size)
                    .map(|imm| Inst::new(&[0xB8], Form::OpReg(d)).size(size).imm(imm)),
            },
            (Operand::Mem(m), Operand::Imm(v)) => {
                imm_field(v, size).map(|imm| group(0xC6 | w(size), 0, size, Rm::Mem(m)).imm(imm))
            }
            (Operand::Mem(_), Operand::Mem(_)) => Err(OperandError::Kinds("two memory operands")),
            (Operand::Imm(_), _) => Err(OperandError::Kinds("an immediate destination")),
        };
        self.emit("mov", inst)
    }

    /// `op dst, src` for the eight classic ALU instructions ([`AluOp`]): register or immediate
    /// into register or memory, memory into register. Immediates that fit a sign-extended byte
    /// use `83 /op ib`; others into `rax` use the accumulator form.
    pub fn alu(
        &mut self,
        op: AluOp,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        let row = (op as u8) << 3;
        let inst = match (dst.into(), src.into()) {
            (Operand::Reg(d), Operand::Reg(s)) => Ok(reg_rm(&[row | w(size)], size, s, Rm::Reg(d))),
            (Operand::Mem(m), Operand::Reg(s)) => Ok(reg_rm(&[row | w(size)], size, s, Rm::Mem(m))),
            (Operand::Reg(d), Operand::Mem(m)) => {
                Ok(reg_rm(&[row | 2 | w(size)], size, d, Rm::Mem(m)))
            }
            (dst @ (Operand::Reg(_) | Operand::Mem(_)), Operand::Imm(v)) => {
                rm(dst, "").and_then(|dst| {
                    imm_field(v, size).map(|imm| match (simm8(v, size), dst) {
                        (Some(b), _) => group(0x83, op as u8, size, dst).imm(Imm::B(b)),
                        (None, Rm::Reg(Reg::Rax)) => {
                            Inst::new(&[row | 4 | w(size)], Form::Plain).size(size).imm(imm)
                        }
                        (None, _) => group(0x80 | w(size), op as u8, size, dst).imm(imm),
                    })
                })
            }
            (Operand::Mem(_), Operand::Mem(_)) => Err(OperandError::Kinds("two memory operands")),
            (Operand::Imm(_), _) => Err(OperandError::Kinds("an immediate destination")),
        };
        self.emit(op.mnemonic(), inst)
    }

    /// `add dst, src`
    pub fn add(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Add, size, dst, src)
    }

    /// `or dst, src`
    pub fn or(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Or, size, dst, src)
    }

    /// `adc dst, src`
    pub fn adc(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Adc, size, dst, src)
    }

    /// `sbb dst, src`
    pub fn sbb(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Sbb, size, dst, src)
    }

    /// `and dst, src`
    pub fn and(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::And, size, dst, src)
    }

    /// `sub dst, src`
    pub fn sub(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Sub, size, dst, src)
    }

    /// `xor dst, src`
    pub fn xor(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Xor, size, dst, src)
    }

    /// `cmp dst, src`
    pub fn cmp(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.alu(AluOp::Cmp, size, dst, src)
    }

    /// `test dst, src`: `dst` a register or memory, `src` a register or an immediate (there is
    /// no sign-extended imm8 form; `rax` has the accumulator form).
    pub fn test(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        let inst = match (dst.into(), src.into()) {
            (Operand::Reg(d), Operand::Reg(s)) => {
                Ok(reg_rm(&[0x84 | w(size)], size, s, Rm::Reg(d)))
            }
            (Operand::Mem(m), Operand::Reg(s)) => {
                Ok(reg_rm(&[0x84 | w(size)], size, s, Rm::Mem(m)))
            }
            (Operand::Reg(Reg::Rax), Operand::Imm(v)) => imm_field(v, size)
                .map(|imm| Inst::new(&[0xA8 | w(size)], Form::Plain).size(size).imm(imm)),
            (dst @ (Operand::Reg(_) | Operand::Mem(_)), Operand::Imm(v)) => {
                rm(dst, "").and_then(|dst| {
                    imm_field(v, size).map(|imm| group(0xF6 | w(size), 0, size, dst).imm(imm))
                })
            }
            (Operand::Reg(_), Operand::Mem(_)) => {
                Err(OperandError::Kinds("a memory source (write test mem, reg)"))
            }
            (Operand::Mem(_), Operand::Mem(_)) => Err(OperandError::Kinds("two memory operands")),
            (Operand::Imm(_), _) => Err(OperandError::Kinds("an immediate destination")),
        };
        self.emit("test", inst)
    }

    /// The `F6`/`F7 /digit` group with one register or memory operand.
    fn unary(
        &mut self,
        mnemonic: &'static str,
        opcode: u8,
        digit: u8,
        size: Size,
        dst: Operand,
    ) -> Result<(), AsmError> {
        let inst =
            rm(dst, "an immediate operand").map(|dst| group(opcode | w(size), digit, size, dst));
        self.emit(mnemonic, inst)
    }

    /// `not dst` (one's complement).
    pub fn not(&mut self, size: Size, dst: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("not", 0xF6, 2, size, dst.into())
    }

    /// `neg dst` (two's complement).
    pub fn neg(&mut self, size: Size, dst: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("neg", 0xF6, 3, size, dst.into())
    }

    /// `mul src`: unsigned `rdx:rax = rax * src` (at `size`; `ax = al * src` for bytes).
    pub fn mul(&mut self, size: Size, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("mul", 0xF6, 4, size, src.into())
    }

    /// `div src`: unsigned `rdx:rax / src`, quotient in `rax`, remainder in `rdx` (at `size`).
    pub fn div(&mut self, size: Size, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("div", 0xF6, 6, size, src.into())
    }

    /// `idiv src`: signed `rdx:rax / src`.
    pub fn idiv(&mut self, size: Size, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("idiv", 0xF6, 7, size, src.into())
    }

    /// `inc dst`
    pub fn inc(&mut self, size: Size, dst: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("inc", 0xFE, 0, size, dst.into())
    }

    /// `dec dst`
    pub fn dec(&mut self, size: Size, dst: impl Into<Operand>) -> Result<(), AsmError> {
        self.unary("dec", 0xFE, 1, size, dst.into())
    }

    /// `imul dst, src`: `dst = dst * src`, truncated (16, 32 or 64 bits).
    pub fn imul(&mut self, size: Size, dst: Reg, src: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = not_byte(size)
            .and_then(|()| rm(src.into(), "an immediate source (use imul_imm)"))
            .map(|src| reg_rm(&[0x0F, 0xAF], size, dst, src));
        self.emit("imul", inst)
    }

    /// `imul dst, src, imm`: `dst = src * imm`, truncated (16, 32 or 64 bits).
    pub fn imul_imm(
        &mut self,
        size: Size,
        dst: Reg,
        src: impl Into<Operand>,
        imm: i64,
    ) -> Result<(), AsmError> {
        let inst =
            not_byte(size).and_then(|()| rm(src.into(), "an immediate source")).and_then(|src| {
                imm_field(imm, size).map(|field| match simm8(imm, size) {
                    Some(b) => reg_rm(&[0x6B], size, dst, src).imm(Imm::B(b)),
                    None => reg_rm(&[0x69], size, dst, src).imm(field),
                })
            });
        self.emit("imul", inst)
    }

    /// `op dst, count` for a shift or rotate ([`ShiftOp`]): `count` is an immediate 0–255
    /// (`D0`/`D1` for 1, else `C0`/`C1 ib`) or `Reg::Rcx`, meaning `cl` (`D2`/`D3`).
    pub fn shift(
        &mut self,
        op: ShiftOp,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        let inst = rm(dst.into(), "an immediate destination").and_then(|dst| match count.into() {
            Operand::Imm(1) => Ok(group(0xD0 | w(size), op as u8, size, dst)),
            Operand::Imm(n @ 0..=255) => {
                Ok(group(0xC0 | w(size), op as u8, size, dst).imm(Imm::B(n as u8)))
            }
            Operand::Reg(Reg::Rcx) => Ok(group(0xD2 | w(size), op as u8, size, dst)),
            _ => Err(OperandError::ShiftCount),
        });
        self.emit(op.mnemonic(), inst)
    }

    /// `shl dst, count`
    pub fn shl(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.shift(ShiftOp::Shl, size, dst, count)
    }

    /// `shr dst, count`
    pub fn shr(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.shift(ShiftOp::Shr, size, dst, count)
    }

    /// `sar dst, count`
    pub fn sar(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.shift(ShiftOp::Sar, size, dst, count)
    }

    /// `rol dst, count`
    pub fn rol(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.shift(ShiftOp::Rol, size, dst, count)
    }

    /// `ror dst, count`
    pub fn ror(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        count: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.shift(ShiftOp::Ror, size, dst, count)
    }

    /// `movzx`/`movsx`: `0F B6`/`B7` or `0F BE`/`BF` from a byte or word to a wider register.
    fn extend(
        &mut self,
        mnemonic: &'static str,
        base: u8,
        dst_size: Size,
        dst: Reg,
        src_size: Size,
        src: Operand,
    ) -> Result<(), AsmError> {
        let inst = rm(src, "an immediate source").and_then(|src| {
            if src_size >= dst_size || src_size > Size::Word {
                return Err(OperandError::Extend { from: src_size, to: dst_size });
            }
            let inst =
                Inst::new(&[0x0F, base | w(src_size)], Form::ModRm { reg: dst.number(), rm: src })
                    .size(dst_size);
            Ok(byte_rm(inst, src_size, src))
        });
        self.emit(mnemonic, inst)
    }

    /// `movzx dst, src`: zero-extends a byte or word to `dst_size`.
    pub fn movzx(
        &mut self,
        dst_size: Size,
        dst: Reg,
        src_size: Size,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.extend("movzx", 0xB6, dst_size, dst, src_size, src.into())
    }

    /// `movsx dst, src`: sign-extends a byte or word to `dst_size`.
    pub fn movsx(
        &mut self,
        dst_size: Size,
        dst: Reg,
        src_size: Size,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        self.extend("movsx", 0xBE, dst_size, dst, src_size, src.into())
    }

    /// `movsxd dst, src`: sign-extends a doubleword to 64 bits (`REX.W 63 /r`).
    pub fn movsxd(&mut self, dst: Reg, src: impl Into<Operand>) -> Result<(), AsmError> {
        let inst =
            rm(src.into(), "an immediate source").map(|src| reg_rm(&[0x63], Size::Qword, dst, src));
        self.emit("movsxd", inst)
    }

    /// `lea dst, [address]` (16, 32 or 64 bits; the address itself is always 64-bit).
    pub fn lea(&mut self, size: Size, dst: Reg, src: Mem) -> Result<(), AsmError> {
        let inst = not_byte(size).map(|()| reg_rm(&[0x8D], size, dst, Rm::Mem(src)));
        self.emit("lea", inst)
    }

    /// `bswap reg` (32 or 64 bits).
    pub fn bswap(&mut self, size: Size, reg: Reg) -> Result<(), AsmError> {
        let inst = match size {
            Size::Dword | Size::Qword => Ok(Inst::new(&[0x0F, 0xC8], Form::OpReg(reg)).size(size)),
            _ => Err(OperandError::Size(size)),
        };
        self.emit("bswap", inst)
    }

    /// `xchg a, b` (`90+r` when one is `rax` and the other is not). With a memory operand
    /// the processor locks the bus whether or not a `lock` prefix is given.
    pub fn xchg(&mut self, size: Size, a: impl Into<Operand>, b: Reg) -> Result<(), AsmError> {
        let inst = rm(a.into(), "an immediate operand").map(|a| match (a, b) {
            (Rm::Reg(Reg::Rax), r) | (Rm::Reg(r), Reg::Rax)
                if size != Size::Byte && r != Reg::Rax =>
            {
                Inst::new(&[0x90], Form::OpReg(r)).size(size)
            }
            _ => reg_rm(&[0x86 | w(size)], size, b, a),
        });
        self.emit("xchg", inst)
    }

    /// `cmpxchg dst, src`: if `rax == dst` (at `size`) then `dst = src`, else `rax = dst`.
    pub fn cmpxchg(
        &mut self,
        size: Size,
        dst: impl Into<Operand>,
        src: Reg,
    ) -> Result<(), AsmError> {
        let inst = rm(dst.into(), "an immediate destination")
            .map(|dst| reg_rm(&[0x0F, 0xB0 | w(size)], size, src, dst));
        self.emit("cmpxchg", inst)
    }

    /// `xadd dst, src`: `(dst, src) = (dst + src, dst)`.
    pub fn xadd(&mut self, size: Size, dst: impl Into<Operand>, src: Reg) -> Result<(), AsmError> {
        let inst = rm(dst.into(), "an immediate destination")
            .map(|dst| reg_rm(&[0x0F, 0xC0 | w(size)], size, src, dst));
        self.emit("xadd", inst)
    }

    /// `cdq`: sign-extends `eax` into `edx:eax`.
    pub fn cdq(&mut self) {
        self.plain(&[0x99]);
    }

    /// `cqo`: sign-extends `rax` into `rdx:rax`.
    pub fn cqo(&mut self) {
        self.plain(&[0x48, 0x99]);
    }

    /// `cdqe`: sign-extends `eax` into `rax`.
    pub fn cdqe(&mut self) {
        self.plain(&[0x48, 0x98]);
    }

    /// `setcc dst`: the byte `dst` = 1 if `cond` holds, else 0.
    pub fn setcc(&mut self, cond: Cond, dst: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = rm(dst.into(), "an immediate destination").map(|dst| {
            byte_rm(
                Inst::new(&[0x0F, 0x90 | cond.code()], Form::ModRm { reg: 0, rm: dst }),
                Size::Byte,
                dst,
            )
        });
        self.emit("setcc", inst)
    }

    /// `cmovcc dst, src`: `dst = src` if `cond` holds (16, 32 or 64 bits; a 32-bit `cmov`
    /// zeroes the upper half of `dst` either way).
    pub fn cmovcc(
        &mut self,
        cond: Cond,
        size: Size,
        dst: Reg,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        let inst = not_byte(size)
            .and_then(|()| rm(src.into(), "an immediate source"))
            .map(|src| reg_rm(&[0x0F, 0x40 | cond.code()], size, dst, src));
        self.emit("cmovcc", inst)
    }

    /// `push src`: a 64-bit register, memory quadword, or sign-extended 32-bit immediate.
    pub fn push(&mut self, src: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = match src.into() {
            Operand::Reg(r) => Ok(Inst::new(&[0x50], Form::OpReg(r))),
            Operand::Mem(m) => Ok(Inst::new(&[0xFF], Form::ModRm { reg: 6, rm: Rm::Mem(m) })),
            Operand::Imm(v) => imm_field(v, Size::Qword).map(|imm| match simm8(v, Size::Qword) {
                Some(b) => Inst::new(&[0x6A], Form::Plain).imm(Imm::B(b)),
                None => Inst::new(&[0x68], Form::Plain).imm(imm),
            }),
        };
        self.emit("push", inst)
    }

    /// `pop dst`: a 64-bit register or memory quadword.
    pub fn pop(&mut self, dst: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = match dst.into() {
            Operand::Reg(r) => Ok(Inst::new(&[0x58], Form::OpReg(r))),
            Operand::Mem(m) => Ok(Inst::new(&[0x8F], Form::ModRm { reg: 0, rm: Rm::Mem(m) })),
            Operand::Imm(_) => Err(OperandError::Kinds("an immediate destination")),
        };
        self.emit("pop", inst)
    }

    /// `call label` (`E8 rel32`).
    pub fn call(&mut self, label: Label) -> Result<(), AsmError> {
        self.rel32(0xE8, label)
    }

    /// `call target`: through a 64-bit register or memory quadword (`FF /2`).
    pub fn call_indirect(&mut self, target: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = rm(target.into(), "an immediate target (use call with a label)")
            .map(|t| Inst::new(&[0xFF], Form::ModRm { reg: 2, rm: t }));
        self.emit("call", inst)
    }

    /// `jmp label`: rel8 where the label is in reach, else rel32 (decided at `finish`).
    pub fn jmp(&mut self, label: Label) -> Result<(), AsmError> {
        self.jump(None, label)
    }

    /// `jcc label`: rel8 where the label is in reach, else rel32 (decided at `finish`).
    pub fn jcc(&mut self, cond: Cond, label: Label) -> Result<(), AsmError> {
        self.jump(Some(cond), label)
    }

    /// `jmp target`: through a 64-bit register or memory quadword (`FF /4`).
    pub fn jmp_indirect(&mut self, target: impl Into<Operand>) -> Result<(), AsmError> {
        let inst = rm(target.into(), "an immediate target (use jmp with a label)")
            .map(|t| Inst::new(&[0xFF], Form::ModRm { reg: 4, rm: t }));
        self.emit("jmp", inst)
    }

    /// `ret`
    pub fn ret(&mut self) {
        self.plain(&[0xC3]);
    }

    /// `nop` (one byte).
    pub fn nop(&mut self) {
        self.plain(&[0x90]);
    }

    /// `len` bytes of no-ops in as few instructions as possible: the multi-byte `nop` forms
    /// the Intel SDM recommends (`NOP`, table 4-12), 9 bytes at most each.
    pub fn nops(&mut self, len: usize) {
        const NOPS: [&[u8]; 9] = [
            &[0x90],
            &[0x66, 0x90],
            &[0x0F, 0x1F, 0x00],
            &[0x0F, 0x1F, 0x40, 0x00],
            &[0x0F, 0x1F, 0x44, 0x00, 0x00],
            &[0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00],
            &[0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00],
            &[0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
            &[0x66, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
        ];
        let mut left = len;
        while left > 0 {
            let n = left.min(NOPS.len());
            self.plain(NOPS[n - 1]);
            left -= n;
        }
    }

    /// `ud2`: raises an invalid-opcode exception.
    pub fn ud2(&mut self) {
        self.plain(&[0x0F, 0x0B]);
    }

    /// `int3`: the breakpoint trap.
    pub fn int3(&mut self) {
        self.plain(&[0xCC]);
    }

    /// `prefetchnta`/`prefetcht0`/`t1`/`t2 [address]` (`0F 18 /hint`).
    pub fn prefetch(&mut self, hint: Prefetch, address: Mem) -> Result<(), AsmError> {
        let inst =
            Ok(Inst::new(&[0x0F, 0x18], Form::ModRm { reg: hint as u8, rm: Rm::Mem(address) }));
        self.emit(hint.mnemonic(), inst)
    }

    /// `prefetcht0 [address]`
    pub fn prefetcht0(&mut self, address: Mem) -> Result<(), AsmError> {
        self.prefetch(Prefetch::T0, address)
    }

    /// `prefetchnta [address]`
    pub fn prefetchnta(&mut self, address: Mem) -> Result<(), AsmError> {
        self.prefetch(Prefetch::Nta, address)
    }
}
