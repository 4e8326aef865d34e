//! Lowering of the arithmetic instructions: ALU and ALU64 (with the kernel's results for
//! division and modulo by zero and `MIN / -1`, masked shifts, byte swaps, sign extension) and
//! the atomics. Apart from `lower.rs` so that each file reads as one subject.

use sift_ebpf::EbpfInsn;
use sift_x86::Size;

use super::*;

impl Lower<'_> {
    pub(super) fn alu(&mut self, i: EbpfInsn, size: Size) -> R {
        let dst = REGS[usize::from((i.dst & 0xf).min(9))];
        let s = i.src & 0xf;
        let x = i.code & 0x08 != 0;
        let op = i.code & 0xf0;
        let simple = match op {
            0x00 => Some(AluOp::Add),
            0x10 => Some(AluOp::Sub),
            0x40 => Some(AluOp::Or),
            0x50 => Some(AluOp::And),
            0xa0 => Some(AluOp::Xor),
            _ => None,
        };
        if let Some(alu) = simple {
            let v = if x {
                Operand::Reg(self.src(s, Reg::R11)?)
            } else {
                self.imm(i.imm, size, Reg::R11)?
            };
            self.asm.alu(alu, size, dst, v)?;
            return Ok(());
        }
        match op {
            0x20 => {
                if x {
                    let v = self.src(s, Reg::R11)?;
                    self.asm.imul(size, dst, v)?;
                } else if self.opts.blinding {
                    let v = self.imm(i.imm, size, Reg::R11)?;
                    self.asm.imul(size, dst, v)?;
                } else {
                    self.asm.imul_imm(size, dst, dst, i64::from(i.imm))?;
                }
            }
            0x30 | 0x90 => self.divmod(i, size, dst)?,
            0x60 | 0x70 | 0xc0 => {
                let sh = match op {
                    0x60 => ShiftOp::Shl,
                    0x70 => ShiftOp::Shr,
                    _ => ShiftOp::Sar,
                };
                if x {
                    self.shift_reg(sh, size, dst, s)?;
                } else {
                    let mask = if size == Size::Qword { 63 } else { 31 };
                    let n = i.imm & mask;
                    if n == 0 {
                        if size == Size::Dword {
                            self.asm.mov(Size::Dword, dst, dst)?;
                        }
                    } else {
                        self.asm.shift(sh, size, dst, i64::from(n))?;
                    }
                }
            }
            0x80 => self.asm.neg(size, dst)?,
            0xb0 => {
                if x {
                    let src = self.src(s, Reg::R11)?;
                    match (i.off, size) {
                        (8, _) => self.asm.movsx(size, dst, Size::Byte, src)?,
                        (16, _) => self.asm.movsx(size, dst, Size::Word, src)?,
                        (32, Size::Qword) => self.asm.movsxd(dst, src)?,
                        (_, Size::Qword) if dst == src => {}
                        _ => self.asm.mov(size, dst, src)?,
                    }
                } else if self.opts.blinding {
                    let v = self.imm(i.imm, size, Reg::R11)?;
                    self.asm.mov(size, dst, v)?;
                } else if size == Size::Dword {
                    self.asm.mov(Size::Dword, dst, i64::from(i.imm as u32))?;
                } else {
                    self.asm.mov(Size::Qword, dst, i64::from(i.imm))?;
                }
            }
            0xd0 => {
                // 0xd4: to little-endian (truncate); 0xdc and ALU64 0xd7: byte swap.
                let swap = i.code != 0xd4;
                match (i.imm, swap) {
                    (16, false) => self.asm.movzx(Size::Dword, dst, Size::Word, dst)?,
                    (32, false) => self.asm.mov(Size::Dword, dst, dst)?,
                    (16, true) => {
                        self.asm.rol(Size::Word, dst, 8)?;
                        self.asm.movzx(Size::Dword, dst, Size::Word, dst)?;
                    }
                    (32, true) => self.asm.bswap(Size::Dword, dst)?,
                    (_, true) => self.asm.bswap(Size::Qword, dst)?,
                    _ => {}
                }
            }
            _ => return Err(JitError::Unsupported { pc: 0, code: i.code }),
        }
        Ok(())
    }

    /// Division and modulo with the kernel's results: `x / 0 = 0`, `x % 0 = x`, and (signed)
    /// `x / -1 = -x`, `x % -1 = 0` without `idiv` (which traps on `MIN / -1`).
    fn divmod(&mut self, i: EbpfInsn, size: Size, dst: Reg) -> R {
        let is_mod = i.code & 0xf0 == 0x90;
        let signed = i.off != 0;
        let x = i.code & 0x08 != 0;
        let a = &mut self.asm;
        let done = a.new_label();
        let zero = a.new_label();
        let minus1 = a.new_label();
        if x {
            let s = i.src & 0xf;
            if s >= 10 {
                a.mov(Size::Qword, Reg::R11, FP)?;
                a.sub(Size::Qword, Reg::R11, ctx(off::STACK_DELTA))?;
            } else {
                a.mov(Size::Qword, Reg::R11, REGS[usize::from(s)])?;
            }
            a.test(size, Reg::R11, Reg::R11)?;
            a.jcc(Cond::E, zero)?;
            if signed {
                a.cmp(size, Reg::R11, -1)?;
                a.jcc(Cond::E, minus1)?;
            }
        } else {
            if i.imm == 0 {
                return self.div_by_zero(is_mod, size, dst);
            }
            if signed && i.imm == -1 {
                return self.div_by_minus1(is_mod, size, dst);
            }
            let v = if size == Size::Qword { i64::from(i.imm) } else { i64::from(i.imm as u32) };
            if self.opts.blinding {
                let k = self.next_key() as i32 as i64;
                let a = &mut self.asm;
                a.mov(Size::Qword, Reg::R11, v ^ k)?;
                a.xor(Size::Qword, Reg::R11, k)?;
            } else {
                self.asm.mov(Size::Qword, Reg::R11, v)?;
            }
        }
        let a = &mut self.asm;
        a.mov(Size::Qword, Reg::R10, Reg::Rax)?;
        a.push(Reg::Rdx)?;
        if dst != Reg::Rax {
            a.mov(Size::Qword, Reg::Rax, dst)?;
        }
        if signed {
            if size == Size::Qword {
                a.cqo();
            } else {
                a.cdq();
            }
            a.idiv(size, Reg::R11)?;
        } else {
            a.xor(Size::Dword, Reg::Rdx, Reg::Rdx)?;
            a.div(size, Reg::R11)?;
        }
        a.mov(Size::Qword, Reg::R11, if is_mod { Reg::Rdx } else { Reg::Rax })?;
        if dst != Reg::Rax {
            a.mov(Size::Qword, Reg::Rax, Reg::R10)?;
        }
        a.pop(Reg::Rdx)?;
        a.mov(Size::Qword, dst, Reg::R11)?;
        if x {
            self.asm.jmp(done)?;
            self.asm.bind(zero)?;
            self.div_by_zero(is_mod, size, dst)?;
            if signed {
                self.asm.jmp(done)?;
                self.asm.bind(minus1)?;
                self.div_by_minus1(is_mod, size, dst)?;
            }
            self.asm.bind(done)?;
        }
        Ok(())
    }

    fn div_by_zero(&mut self, is_mod: bool, size: Size, dst: Reg) -> R {
        if !is_mod {
            self.asm.xor(Size::Dword, dst, dst)?;
        } else if size == Size::Dword {
            self.asm.mov(Size::Dword, dst, dst)?;
        }
        Ok(())
    }

    fn div_by_minus1(&mut self, is_mod: bool, size: Size, dst: Reg) -> R {
        if is_mod {
            self.asm.xor(Size::Dword, dst, dst)?;
        } else {
            self.asm.neg(size, dst)?;
        }
        Ok(())
    }

    /// A shift by a register: the count must be in `cl` (eBPF `r4`).
    fn shift_reg(&mut self, sh: ShiftOp, size: Size, dst: Reg, s: u8) -> R {
        let src = self.src(s, Reg::R10)?;
        let a = &mut self.asm;
        if src == Reg::Rcx {
            a.shift(sh, size, dst, Reg::Rcx)?;
            return Ok(());
        }
        a.mov(Size::Qword, Reg::R11, Reg::Rcx)?;
        a.mov(Size::Qword, Reg::Rcx, src)?;
        if dst == Reg::Rcx {
            a.shift(sh, size, Reg::R11, Reg::Rcx)?;
        } else {
            a.shift(sh, size, dst, Reg::Rcx)?;
        }
        a.mov(Size::Qword, Reg::Rcx, Reg::R11)?;
        Ok(())
    }

    pub(super) fn atomic(&mut self, i: EbpfInsn, size: Size, m: Mem) -> R {
        let s = i.src & 0xf;
        let a = &mut self.asm;
        match i.imm {
            0xe1 => {
                let r = REGS[usize::from(s.min(9))];
                a.xchg(size, m, r)?;
            }
            0xf1 => {
                let r = self.src(s, Reg::R10)?;
                let a = &mut self.asm;
                a.lock().cmpxchg(size, m, r)?;
                if size == Size::Dword {
                    a.mov(Size::Dword, Reg::Rax, Reg::Rax)?;
                }
            }
            0x00 | 0x40 | 0x50 | 0xa0 => {
                let r = self.src(s, Reg::R10)?;
                let l = self.asm.lock();
                match i.imm {
                    0x00 => l.add(size, m, r)?,
                    0x40 => l.or(size, m, r)?,
                    0x50 => l.and(size, m, r)?,
                    _ => l.xor(size, m, r)?,
                }
            }
            0x01 => {
                let r = REGS[usize::from(s.min(9))];
                a.lock().xadd(size, m, r)?;
            }
            0x41 | 0x51 | 0xa1 => {
                let op = match i.imm {
                    0x41 => AluOp::Or,
                    0x51 => AluOp::And,
                    _ => AluOp::Xor,
                };
                let r = REGS[usize::from(s.min(9))];
                // r9 (the budget) is the loop's scratch register: kept on the stack.
                a.push(Reg::R9)?;
                a.mov(Size::Qword, Reg::R10, Reg::Rax)?;
                let v = if r == Reg::Rax { Reg::R10 } else { r };
                a.mov(size, Reg::Rax, m)?;
                let again = a.new_label();
                a.bind(again)?;
                a.mov(Size::Qword, Reg::R9, Reg::Rax)?;
                a.alu(op, size, Reg::R9, v)?;
                a.lock().cmpxchg(size, m, Reg::R9)?;
                a.jcc(Cond::Ne, again)?;
                if r == Reg::Rax {
                    if size == Size::Dword {
                        a.mov(Size::Dword, Reg::Rax, Reg::Rax)?;
                    }
                } else {
                    a.mov(size, r, Reg::Rax)?;
                    a.mov(Size::Qword, Reg::Rax, Reg::R10)?;
                }
                a.pop(Reg::R9)?;
            }
            _ => return Err(JitError::Unsupported { pc: 0, code: i.code }),
        }
        Ok(())
    }
}
