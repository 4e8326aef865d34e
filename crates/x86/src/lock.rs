//! The `lock` prefix, offered only where the SDM allows it: the read-modify-write
//! instructions with a memory destination (vol. 2, "LOCK"). Anything else would raise #UD,
//! so the type does not let it be written.

use crate::asm::Assembler;
use crate::error::{AsmError, OperandError};
use crate::insn::AluOp;
use crate::operand::{Mem, Operand};
use crate::reg::{Reg, Size};

impl Assembler {
    /// The `lock` prefix, for one of the instructions that take it (all with a memory
    /// destination): `asm.lock().xadd(Size::Qword, mem, Reg::Rax)`.
    pub fn lock(&mut self) -> Locked<'_> {
        Locked { asm: self }
    }
}

/// The `lock` prefix applied to the next instruction: only the instructions the SDM allows it
/// on, and only with a memory destination, can be written through this (see
/// [`Assembler::lock`]).
#[derive(Debug)]
pub struct Locked<'a> {
    asm: &'a mut Assembler,
}

impl Locked<'_> {
    fn with(self, f: impl FnOnce(&mut Assembler) -> Result<(), AsmError>) -> Result<(), AsmError> {
        self.asm.lock_next = true;
        let result = f(self.asm);
        self.asm.lock_next = false;
        result
    }

    /// `lock op [dst], src` for the ALU instructions other than `cmp`.
    pub fn alu(
        self,
        op: AluOp,
        size: Size,
        dst: Mem,
        src: impl Into<Operand>,
    ) -> Result<(), AsmError> {
        if op == AluOp::Cmp {
            let problem = OperandError::Kinds("a lock prefix (cmp does not write memory)");
            return Err(AsmError::Operands { index: self.asm.count, mnemonic: "cmp", problem });
        }
        let src = src.into();
        self.with(|a| a.alu(op, size, dst, src))
    }

    /// `lock add [dst], src`
    pub fn add(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Add, size, dst, src)
    }

    /// `lock adc [dst], src`
    pub fn adc(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Adc, size, dst, src)
    }

    /// `lock sbb [dst], src`
    pub fn sbb(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Sbb, size, dst, src)
    }

    /// `lock or [dst], src`
    pub fn or(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Or, size, dst, src)
    }

    /// `lock and [dst], src`
    pub fn and(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::And, size, dst, src)
    }

    /// `lock xor [dst], src`
    pub fn xor(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Xor, size, dst, src)
    }

    /// `lock sub [dst], src`
    pub fn sub(self, size: Size, dst: Mem, src: impl Into<Operand>) -> Result<(), AsmError> {
        self.alu(AluOp::Sub, size, dst, src)
    }

    /// `lock not [dst]`
    pub fn not(self, size: Size, dst: Mem) -> Result<(), AsmError> {
        self.with(|a| a.not(size, dst))
    }

    /// `lock neg [dst]`
    pub fn neg(self, size: Size, dst: Mem) -> Result<(), AsmError> {
        self.with(|a| a.neg(size, dst))
    }

    /// `lock inc [dst]`
    pub fn inc(self, size: Size, dst: Mem) -> Result<(), AsmError> {
        self.with(|a| a.inc(size, dst))
    }

    /// `lock dec [dst]`
    pub fn dec(self, size: Size, dst: Mem) -> Result<(), AsmError> {
        self.with(|a| a.dec(size, dst))
    }

    /// `lock xchg [dst], src` (the prefix is implied; this spells it out).
    pub fn xchg(self, size: Size, dst: Mem, src: Reg) -> Result<(), AsmError> {
        self.with(|a| a.xchg(size, dst, src))
    }

    /// `lock cmpxchg [dst], src`
    pub fn cmpxchg(self, size: Size, dst: Mem, src: Reg) -> Result<(), AsmError> {
        self.with(|a| a.cmpxchg(size, dst, src))
    }

    /// `lock xadd [dst], src`
    pub fn xadd(self, size: Size, dst: Mem, src: Reg) -> Result<(), AsmError> {
        self.with(|a| a.xadd(size, dst, src))
    }
}
