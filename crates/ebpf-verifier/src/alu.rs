//! Arithmetic: scalars through [`Scalar`]'s sound operations, pointers by the kernel's rules
//! (`adjust_ptr_min_max_vals`): only `+` and `-` of a scalar, never on `pkt_end`, a map
//! pointer or a pointer that may be null, nothing from the stack pointer subtracted, no
//! 32-bit pointer arithmetic; packet pointers with a new variable part get a new id and no
//! proven range.

use sift_ebpf::{AluOp, ByteOrder, Operand, Width};

use crate::error::VerifyErrorKind;
use crate::explore::{MAX_VAR_OFF, Result, Verifier};
use crate::scalar::Scalar;
use crate::state::{Kind, Reg, State};

fn op_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Add => "+=",
        AluOp::Sub => "-=",
        AluOp::Mul => "*=",
        AluOp::Div | AluOp::SDiv => "/=",
        AluOp::Or => "|=",
        AluOp::And => "&=",
        AluOp::Lsh => "<<=",
        AluOp::Rsh => ">>=",
        AluOp::Mod | AluOp::SMod => "%=",
        AluOp::Xor => "^=",
        AluOp::Mov => "=",
        AluOp::Arsh => "s>>=",
    }
}

/// A scalar operation on 64 bits, or on the low 32 bits zero-extended.
fn scalar_op(op: AluOp, width: Width, a: &Scalar, b: &Scalar) -> Scalar {
    let w32 = width == Width::W32;
    // What the kernel (through 6.18) does not track gives any 64-bit value, even for 32-bit
    // operations (its `is_safe_to_compute_dst_reg_range`): division, modulo, and shifts by a
    // register that is not a constant below the width.
    let bits: u32 = if w32 { 32 } else { 64 };
    let untracked = match op {
        AluOp::Div | AluOp::Mod | AluOp::SDiv | AluOp::SMod => true,
        AluOp::Lsh | AluOp::Rsh | AluOp::Arsh => b.as_const().is_none_or(|c| c >= u64::from(bits)),
        _ => false,
    };
    if untracked {
        return Scalar::UNKNOWN;
    }
    let (x, y) = if w32 { (a.zext32(), b.zext32()) } else { (*a, *b) };
    let r = match op {
        AluOp::Add => x.add(&y),
        AluOp::Sub => x.sub(&y),
        AluOp::Mul => x.mul(&y),
        AluOp::Div | AluOp::Mod | AluOp::SDiv | AluOp::SMod => Scalar::UNKNOWN,
        AluOp::Or => x.or(&y),
        AluOp::And => x.and(&y),
        AluOp::Xor => x.xor(&y),
        AluOp::Lsh => x.shl(&y, bits),
        AluOp::Rsh => x.shr(&y, bits),
        AluOp::Arsh => {
            if w32 {
                match y.as_const() {
                    Some(c) => a.sext32().sar(&Scalar::konst(c & 31)),
                    None => Scalar::UNKNOWN,
                }
            } else {
                x.sar(&y)
            }
        }
        AluOp::Mov => y,
    };
    if w32 { r.trunc32() } else { r }
}

/// The kernel's `check_reg_sane_offset`: offsets a pointer may carry (below 2^29 either way).
fn sane_offset(v: &Scalar, fixed: i64, ty: &'static str) -> Result<()> {
    if let Some(c) = v.as_const() {
        let c = c as i64;
        if c >= MAX_VAR_OFF || c <= -MAX_VAR_OFF {
            return Err(VerifyErrorKind::PtrMathConst { value: c, ty });
        }
    }
    if fixed >= MAX_VAR_OFF || fixed <= -MAX_VAR_OFF {
        return Err(VerifyErrorKind::PtrOffset { off: fixed, ty });
    }
    if v.smin == i64::MIN {
        return Err(VerifyErrorKind::UnboundedPtrMath { ty });
    }
    if v.smin >= MAX_VAR_OFF || v.smin <= -MAX_VAR_OFF {
        return Err(VerifyErrorKind::PtrOutOfBounds { value: v.smin, ty });
    }
    Ok(())
}

impl Verifier<'_> {
    pub(crate) fn alu(
        &mut self,
        st: &mut State,
        width: Width,
        op: AluOp,
        dst: u8,
        src: Operand,
    ) -> Result<()> {
        let w32 = width == Width::W32;
        let b = match src {
            Operand::Reg(r) => Self::read(st, r)?,
            Operand::Imm(imm) => {
                if matches!(op, AluOp::Lsh | AluOp::Rsh | AluOp::Arsh)
                    && (imm < 0 || imm >= if w32 { 32 } else { 64 })
                {
                    return Err(VerifyErrorKind::InvalidShift(imm));
                }
                if matches!(op, AluOp::Div | AluOp::SDiv | AluOp::Mod | AluOp::SMod) && imm == 0 {
                    return Err(VerifyErrorKind::DivByZero);
                }
                Reg::scalar(Scalar::konst(imm as i64 as u64))
            }
        };
        if dst == 10 {
            return Err(VerifyErrorKind::FramePointer);
        }
        if op == AluOp::Mov {
            let reg = if !w32 {
                let mut b = b;
                if b.kind == Kind::Scalar
                    && let Operand::Reg(s) = src
                {
                    // Linked copies: a branch on one refines the other.
                    if b.id == 0 {
                        b.id = self.new_id();
                        st.cur_mut().regs[usize::from(s)].id = b.id;
                    }
                }
                b
            } else if b.kind.is_pointer() {
                if !self.options.privileged {
                    return Err(VerifyErrorKind::PartialCopy(match src {
                        Operand::Reg(s) => s,
                        Operand::Imm(_) => dst,
                    }));
                }
                Reg::scalar(Scalar::upto(u64::from(u32::MAX)))
            } else {
                Reg::scalar(b.var.trunc32())
            };
            return Self::write(st, dst, reg);
        }
        let a = Self::read(st, dst)?;
        if a.kind.is_pointer() || b.kind.is_pointer() {
            let r = self.ptr_alu(width, op, dst, a, b)?;
            return Self::write(st, dst, r);
        }
        let var = scalar_op(op, width, &a.var, &b.var);
        Self::write(st, dst, Reg::scalar(var))
    }

    fn ptr_alu(&mut self, width: Width, op: AluOp, dst: u8, a: Reg, b: Reg) -> Result<Reg> {
        let leaks = self.options.privileged;
        if a.kind.is_pointer() && b.kind.is_pointer() {
            if op == AluOp::Sub && leaks {
                return Ok(Reg::scalar(Scalar::UNKNOWN));
            }
            return Err(VerifyErrorKind::PtrPtr { reg: dst, op: op_name(op) });
        }
        if width == Width::W32 {
            if op == AluOp::Sub && leaks {
                return Ok(Reg::scalar(Scalar::upto(u64::from(u32::MAX))));
            }
            return Err(VerifyErrorKind::PtrArith32(dst));
        }
        let dst_is_ptr = a.kind.is_pointer();
        let (ptr, off) = if dst_is_ptr { (a, b.var) } else { (b, a.var) };
        let known = off.as_const().map(|c| c as i64);
        match ptr.kind {
            Kind::MapValueOrNull(_) | Kind::RingbufMemOrNull(_) => {
                return Err(VerifyErrorKind::PtrArith {
                    reg: dst,
                    ty: ptr.kind.name(),
                    null: true,
                });
            }
            Kind::MapPtr(_) if known == Some(0) && op == AluOp::Add => return Ok(ptr),
            Kind::MapPtr(_) | Kind::PacketEnd => {
                return Err(VerifyErrorKind::PtrArith {
                    reg: dst,
                    ty: ptr.kind.name(),
                    null: false,
                });
            }
            _ => {}
        }
        match op {
            AluOp::Add => {}
            AluOp::Sub => {
                if !dst_is_ptr {
                    return Err(VerifyErrorKind::SubPtrFromScalar(dst));
                }
                if matches!(ptr.kind, Kind::Stack(_)) {
                    return Err(VerifyErrorKind::SubFromStack(dst));
                }
            }
            AluOp::And | AluOp::Or | AluOp::Xor => {
                return Err(VerifyErrorKind::PtrBitwise { reg: dst, op: op_name(op) });
            }
            _ => return Err(VerifyErrorKind::PtrOp { reg: dst, op: op_name(op) }),
        }
        let ty = ptr.kind.name();
        sane_offset(&off, 0, ty)?;
        sane_offset(&ptr.var, i64::from(ptr.off), ty)?;
        let mut r = ptr;
        match known {
            Some(c) => {
                let new =
                    if op == AluOp::Add { i64::from(ptr.off) + c } else { i64::from(ptr.off) - c };
                r.off = new.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
                if new >= MAX_VAR_OFF || new <= -MAX_VAR_OFF {
                    return Err(VerifyErrorKind::PtrOffset { off: new, ty });
                }
            }
            None => {
                r.var = if op == AluOp::Add { ptr.var.add(&off) } else { ptr.var.sub(&off) };
                if matches!(ptr.kind, Kind::Packet | Kind::PacketMeta) {
                    r.id = self.new_id();
                    r.range = 0;
                }
            }
        }
        sane_offset(&r.var, i64::from(r.off), ty)?;
        Ok(r)
    }

    pub(crate) fn neg(&mut self, st: &mut State, width: Width, dst: u8) -> Result<()> {
        let a = Self::read(st, dst)?;
        if a.kind.is_pointer() {
            return Err(VerifyErrorKind::PtrOp { reg: dst, op: "neg" });
        }
        let zero = Scalar::konst(0);
        Self::write(st, dst, Reg::scalar(scalar_op(AluOp::Sub, width, &zero, &a.var)))
    }

    pub(crate) fn movsx(
        &mut self,
        st: &mut State,
        width: Width,
        bits: u8,
        dst: u8,
        src: u8,
    ) -> Result<()> {
        let b = Self::read(st, src)?;
        if b.kind.is_pointer() {
            return Err(VerifyErrorKind::PartialCopy(src));
        }
        let v = b.var.sext(u32::from(bits));
        let v = if width == Width::W32 { v.trunc32() } else { v };
        Self::write(st, dst, Reg::scalar(v))
    }

    pub(crate) fn endian(
        &mut self,
        st: &mut State,
        order: ByteOrder,
        bits: u8,
        dst: u8,
    ) -> Result<()> {
        let a = Self::read(st, dst)?;
        if a.kind.is_pointer() {
            return Err(VerifyErrorKind::PtrOp { reg: dst, op: "endian" });
        }
        let swap = order != ByteOrder::Le;
        Self::write(st, dst, Reg::scalar(a.var.endian(u32::from(bits), swap)))
    }
}
