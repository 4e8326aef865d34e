//! What the verifier knows about a number: known bits (a [`Tnum`], "tristate number") and
//! unsigned/signed ranges in 64 and 32 bits ([`Scalar`]), with the arithmetic and the branch
//! refinements the kernel's verifier does on them (`tnum.c`, `adjust_scalar_min_max_vals`,
//! `reg_set_min_max`), written for soundness: every operation's result contains every value
//! the operation can produce from values in its operands.
//!
//! 32-bit operations are done as 64-bit ones on zero-extended operands and truncated, which
//! gives the same low 32 bits for every operation but signed ones (done apart).

/// Known bits: bit `i` is `value`'s bit `i` where `mask`'s bit `i` is 0, unknown where it is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tnum {
    /// The known bits (0 where unknown).
    pub value: u64,
    /// The unknown bits.
    pub mask: u64,
}

impl Tnum {
    /// Nothing known.
    pub const UNKNOWN: Tnum = Tnum { value: 0, mask: u64::MAX };

    /// Exactly `v`.
    pub const fn konst(v: u64) -> Tnum {
        Tnum { value: v, mask: 0 }
    }

    /// Whether every bit is known.
    pub const fn is_const(self) -> bool {
        self.mask == 0
    }

    /// The smallest tnum holding every value in `min..=max`.
    pub fn range(min: u64, max: u64) -> Tnum {
        let chi = min ^ max;
        let bits = 64 - chi.leading_zeros();
        if bits > 63 {
            return Tnum::UNKNOWN;
        }
        let delta = (1u64 << bits) - 1;
        Tnum { value: min & !delta, mask: delta }
    }

    /// `a + b`.
    pub fn plus(self, b: Tnum) -> Tnum {
        let sm = self.mask.wrapping_add(b.mask);
        let sv = self.value.wrapping_add(b.value);
        let sigma = sm.wrapping_add(sv);
        let chi = sigma ^ sv;
        let mu = chi | self.mask | b.mask;
        Tnum { value: sv & !mu, mask: mu }
    }

    /// `a - b`.
    pub fn minus(self, b: Tnum) -> Tnum {
        let dv = self.value.wrapping_sub(b.value);
        let alpha = dv.wrapping_add(self.mask);
        let beta = dv.wrapping_sub(b.mask);
        let chi = alpha ^ beta;
        let mu = chi | self.mask | b.mask;
        Tnum { value: dv & !mu, mask: mu }
    }

    /// `a & b`.
    pub fn and(self, b: Tnum) -> Tnum {
        let alpha = self.value | self.mask;
        let beta = b.value | b.mask;
        let v = self.value & b.value;
        Tnum { value: v, mask: alpha & beta & !v }
    }

    /// `a | b`.
    pub fn or(self, b: Tnum) -> Tnum {
        let v = self.value | b.value;
        let mu = self.mask | b.mask;
        Tnum { value: v, mask: mu & !v }
    }

    /// `a ^ b`.
    pub fn xor(self, b: Tnum) -> Tnum {
        let v = self.value ^ b.value;
        let mu = self.mask | b.mask;
        Tnum { value: v & !mu, mask: mu }
    }

    /// `a * b` (exact for constants; otherwise the known trailing zeros).
    pub fn times(self, b: Tnum) -> Tnum {
        if self.is_const() && b.is_const() {
            return Tnum::konst(self.value.wrapping_mul(b.value));
        }
        // The product has at least as many trailing zeros as the operands' together.
        let tz = |t: Tnum| (t.value | t.mask).trailing_zeros();
        let z = (tz(self) + tz(b)).min(64);
        if z >= 64 { Tnum::konst(0) } else { Tnum { value: 0, mask: u64::MAX << z } }
    }

    /// `a << s` (`s` < 64).
    pub fn lshift(self, s: u32) -> Tnum {
        Tnum { value: self.value << s, mask: self.mask << s }
    }

    /// Logical `a >> s` (`s` < 64).
    pub fn rshift(self, s: u32) -> Tnum {
        Tnum { value: self.value >> s, mask: self.mask >> s }
    }

    /// Arithmetic `a >> s` (`s` < 64).
    pub fn sar(self, s: u32) -> Tnum {
        Tnum { value: ((self.value as i64) >> s) as u64, mask: ((self.mask as i64) >> s) as u64 }
    }

    /// Both facts at once.
    pub fn intersect(self, b: Tnum) -> Tnum {
        let v = self.value | b.value;
        let mu = self.mask & b.mask;
        Tnum { value: v & !mu, mask: mu }
    }

    /// Whether the two agree on the bits both know (some value satisfies both).
    pub fn compatible(self, b: Tnum) -> bool {
        (self.value ^ b.value) & !(self.mask | b.mask) == 0
    }

    /// The low `bytes` bytes (zero-extended).
    pub fn cast(self, bytes: u32) -> Tnum {
        let m = if bytes >= 8 { u64::MAX } else { (1u64 << (bytes * 8)) - 1 };
        Tnum { value: self.value & m, mask: self.mask & m }
    }

    /// Whether every value `b` allows, `self` allows.
    pub fn contains(self, b: Tnum) -> bool {
        if b.mask & !self.mask != 0 {
            return false;
        }
        b.value & !self.mask == self.value
    }

    /// Replaces the low 32 bits with `low`'s.
    fn with_subreg(self, low: Tnum) -> Tnum {
        let hi = Tnum { value: self.value & !0xffff_ffff, mask: self.mask & !0xffff_ffff };
        hi.or(low.cast(4))
    }
}

/// A number's known bits and ranges (`struct bpf_reg_state`'s scalar part).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scalar {
    /// Known bits.
    pub var: Tnum,
    /// Unsigned 64-bit minimum.
    pub umin: u64,
    /// Unsigned 64-bit maximum.
    pub umax: u64,
    /// Signed 64-bit minimum.
    pub smin: i64,
    /// Signed 64-bit maximum.
    pub smax: i64,
    /// Unsigned minimum of the low 32 bits.
    pub u32min: u32,
    /// Unsigned maximum of the low 32 bits.
    pub u32max: u32,
    /// Signed minimum of the low 32 bits.
    pub s32min: i32,
    /// Signed maximum of the low 32 bits.
    pub s32max: i32,
}

impl Scalar {
    /// Any 64-bit value.
    pub const UNKNOWN: Scalar = Scalar {
        var: Tnum::UNKNOWN,
        umin: 0,
        umax: u64::MAX,
        smin: i64::MIN,
        smax: i64::MAX,
        u32min: 0,
        u32max: u32::MAX,
        s32min: i32::MIN,
        s32max: i32::MAX,
    };

    /// Exactly `v`.
    pub fn konst(v: u64) -> Scalar {
        Scalar {
            var: Tnum::konst(v),
            umin: v,
            umax: v,
            smin: v as i64,
            smax: v as i64,
            u32min: v as u32,
            u32max: v as u32,
            s32min: v as i32,
            s32max: v as i32,
        }
    }

    /// Any value in `0..=max`.
    pub fn upto(max: u64) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.umax = max;
        s.sync();
        s
    }

    /// The value, if it is known.
    pub fn as_const(&self) -> Option<u64> {
        self.var.is_const().then_some(self.var.value)
    }

    /// Whether no value satisfies every fact (a branch that cannot be taken).
    pub fn is_empty(&self) -> bool {
        self.umin > self.umax
            || self.smin > self.smax
            || self.u32min > self.u32max
            || self.s32min > self.s32max
            || self.var.value & self.var.mask != 0
            || self.umin > self.var.value | self.var.mask
            || self.umax < self.var.value
    }

    /// Derives every fact from the others until they agree (the kernel's `reg_bounds_sync`).
    pub fn sync(&mut self) {
        for _ in 0..2 {
            self.bounds_from_tnum();
            self.deduce();
            self.tnum_from_bounds();
        }
        self.bounds_from_tnum();
    }

    fn bounds_from_tnum(&mut self) {
        let v = self.var;
        let sign = 1u64 << 63;
        self.smin = self.smin.max((v.value | (v.mask & sign)) as i64);
        self.smax = self.smax.min((v.value | (v.mask & !sign)) as i64);
        self.umin = self.umin.max(v.value);
        self.umax = self.umax.min(v.value | v.mask);
        let (lv, lm) = (v.value as u32, v.mask as u32);
        let sign32 = 1u32 << 31;
        self.s32min = self.s32min.max((lv | (lm & sign32)) as i32);
        self.s32max = self.s32max.min((lv | (lm & !sign32)) as i32);
        self.u32min = self.u32min.max(lv);
        self.u32max = self.u32max.min(lv | lm);
    }

    fn deduce(&mut self) {
        // 32 bits: signed <-> unsigned when the range does not cross the sign boundary.
        if self.s32min >= 0 || self.s32max < 0 {
            self.u32min = self.u32min.max(self.s32min as u32);
            self.u32max = self.u32max.min(self.s32max as u32);
        }
        if (self.u32min as i32) <= (self.u32max as i32) {
            self.s32min = self.s32min.max(self.u32min as i32);
            self.s32max = self.s32max.min(self.u32max as i32);
        }
        // 64 bits likewise.
        if self.smin >= 0 || self.smax < 0 {
            self.umin = self.umin.max(self.smin as u64);
            self.umax = self.umax.min(self.smax as u64);
        }
        if (self.umin as i64) <= (self.umax as i64) {
            self.smin = self.smin.max(self.umin as i64);
            self.smax = self.smax.min(self.umax as i64);
        }
        // 64 -> 32: the low halves when the upper halves are equal.
        if self.umin >> 32 == self.umax >> 32 {
            self.u32min = self.u32min.max(self.umin as u32);
            self.u32max = self.u32max.min(self.umax as u32);
            if (self.umin as i32) <= (self.umax as i32) {
                self.s32min = self.s32min.max(self.umin as i32);
                self.s32max = self.s32max.min(self.umax as i32);
            }
        }
        if self.smin >> 32 == self.smax >> 32 && (self.smin as i32) <= (self.smax as i32) {
            self.s32min = self.s32min.max(self.smin as i32);
            self.s32max = self.s32max.min(self.smax as i32);
        }
        // 32 -> 64: with equal upper halves, the low half's range bounds the whole.
        if self.umin >> 32 == self.umax >> 32 && self.u32min <= self.u32max {
            let hi = self.umin & !0xffff_ffff;
            self.umin = self.umin.max(hi | u64::from(self.u32min));
            self.umax = self.umax.min(hi | u64::from(self.u32max));
        }
    }

    fn tnum_from_bounds(&mut self) {
        if self.umin <= self.umax {
            self.var = self.var.intersect(Tnum::range(self.umin, self.umax));
        }
        if self.u32min <= self.u32max {
            let low = self
                .var
                .cast(4)
                .intersect(Tnum::range(u64::from(self.u32min), u64::from(self.u32max)));
            self.var = self.var.with_subreg(low);
        }
    }

    /// Every fact about `self` holds for `cur` too (`cur`'s values are a subset).
    pub fn contains(&self, cur: &Scalar) -> bool {
        self.umin <= cur.umin
            && self.umax >= cur.umax
            && self.smin <= cur.smin
            && self.smax >= cur.smax
            && self.u32min <= cur.u32min
            && self.u32max >= cur.u32max
            && self.s32min <= cur.s32min
            && self.s32max >= cur.s32max
            && self.var.contains(cur.var)
    }

    fn from_var(var: Tnum) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = var;
        s.sync();
        s
    }

    /// The low 32 bits, zero-extended (the operand of a 32-bit operation).
    pub fn zext32(&self) -> Scalar {
        let mut s = Scalar::from_var(self.var.cast(4));
        s.umin = u64::from(self.u32min);
        s.umax = u64::from(self.u32max);
        s.smin = s.umin as i64;
        s.smax = s.umax as i64;
        s.u32min = self.u32min;
        s.u32max = self.u32max;
        s.s32min = self.s32min;
        s.s32max = self.s32max;
        s.sync();
        s
    }

    /// The low 32 bits sign-extended to 64.
    pub fn sext32(&self) -> Scalar {
        self.sext(32)
    }

    /// The low `bits` bits sign-extended to 64 (`movsx`, sign-extending loads).
    pub fn sext(&self, bits: u32) -> Scalar {
        if let Some(c) = self.as_const() {
            let sh = 64 - bits;
            return Scalar::konst((((c << sh) as i64) >> sh) as u64);
        }
        let lo = -(1i64 << (bits - 1));
        let hi = (1i64 << (bits - 1)) - 1;
        let mut s = Scalar::UNKNOWN;
        if self.umax <= hi as u64 {
            // Non-negative in the narrow width: unchanged.
            s.umin = self.umin;
            s.umax = self.umax;
        } else {
            s.smin = lo;
            s.smax = hi;
        }
        s.sync();
        s
    }

    /// The low 32 bits zero-extended: the result of a 32-bit operation.
    pub fn trunc32(&self) -> Scalar {
        let mut s = Scalar::from_var(self.var.cast(4));
        if self.umin >> 32 == self.umax >> 32 {
            s.umin = s.umin.max(self.umin & 0xffff_ffff);
            s.umax = s.umax.min(self.umax & 0xffff_ffff);
        }
        s.sync();
        s
    }

    /// `a + b`.
    pub fn add(&self, b: &Scalar) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.plus(b.var);
        if let (Some(lo), Some(hi)) = (self.umin.checked_add(b.umin), self.umax.checked_add(b.umax))
        {
            s.umin = lo;
            s.umax = hi;
        }
        if let (Some(lo), Some(hi)) = (self.smin.checked_add(b.smin), self.smax.checked_add(b.smax))
        {
            s.smin = lo;
            s.smax = hi;
        }
        s.sync();
        s
    }

    /// `a - b`.
    pub fn sub(&self, b: &Scalar) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.minus(b.var);
        if let (Some(lo), Some(hi)) = (self.umin.checked_sub(b.umax), self.umax.checked_sub(b.umin))
        {
            s.umin = lo;
            s.umax = hi;
        }
        if let (Some(lo), Some(hi)) = (self.smin.checked_sub(b.smax), self.smax.checked_sub(b.smin))
        {
            s.smin = lo;
            s.smax = hi;
        }
        s.sync();
        s
    }

    /// `a * b`.
    pub fn mul(&self, b: &Scalar) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.times(b.var);
        if let (Some(hi), lo) = (self.umax.checked_mul(b.umax), self.umin.wrapping_mul(b.umin)) {
            s.umin = lo;
            s.umax = hi;
        }
        s.sync();
        s
    }

    /// `a & b`.
    pub fn and(&self, b: &Scalar) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.and(b.var);
        s.umax = self.umax.min(b.umax);
        s.sync();
        s
    }

    /// `a | b`.
    pub fn or(&self, b: &Scalar) -> Scalar {
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.or(b.var);
        s.umin = self.umin.max(b.umin);
        s.sync();
        s
    }

    /// `a ^ b`.
    pub fn xor(&self, b: &Scalar) -> Scalar {
        Scalar::from_var(self.var.xor(b.var))
    }

    /// `a << b` with the count masked to `bits - 1`.
    pub fn shl(&self, b: &Scalar, bits: u32) -> Scalar {
        let Some(c) = b.as_const() else { return Scalar::UNKNOWN };
        let c = (c & u64::from(bits - 1)) as u32;
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.lshift(c);
        if c == 0 || self.umax >> (64 - c) == 0 {
            s.umin = self.umin << c;
            s.umax = self.umax << c;
        }
        s.sync();
        s
    }

    /// Logical `a >> b` with the count masked to `bits - 1`.
    pub fn shr(&self, b: &Scalar, bits: u32) -> Scalar {
        let Some(c) = b.as_const() else { return Scalar::upto(self.umax) };
        let c = (c & u64::from(bits - 1)) as u32;
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.rshift(c);
        s.umin = self.umin >> c;
        s.umax = self.umax >> c;
        s.sync();
        s
    }

    /// Arithmetic `a >> b` (64-bit) with the count masked to 63.
    pub fn sar(&self, b: &Scalar) -> Scalar {
        let Some(c) = b.as_const() else { return Scalar::UNKNOWN };
        let c = (c & 63) as u32;
        let mut s = Scalar::UNKNOWN;
        s.var = self.var.sar(c);
        s.smin = self.smin >> c;
        s.smax = self.smax >> c;
        s.sync();
        s
    }

    /// Unsigned `a / b` (by zero: 0).
    pub fn udiv(&self, b: &Scalar) -> Scalar {
        if let (Some(x), Some(y)) = (self.as_const(), b.as_const()) {
            return Scalar::konst(x.checked_div(y).unwrap_or(0));
        }
        if let Some(hi) = self.umax.checked_div(b.umin) {
            let mut s = Scalar::UNKNOWN;
            s.umin = self.umin / b.umax;
            s.umax = hi;
            s.sync();
            return s;
        }
        Scalar::upto(self.umax)
    }

    /// Unsigned `a % b` (by zero: `a`).
    pub fn umod(&self, b: &Scalar) -> Scalar {
        if let (Some(x), Some(y)) = (self.as_const(), b.as_const()) {
            return Scalar::konst(if y == 0 { x } else { x % y });
        }
        if b.umin > 0 {
            return Scalar::upto(self.umax.min(b.umax - 1));
        }
        Scalar::upto(self.umax)
    }

    /// Byte swaps and truncations (`le`/`be`/`bswap` of `bits`); `swap` says whether bytes
    /// move.
    pub fn endian(&self, bits: u32, swap: bool) -> Scalar {
        if !swap {
            return match bits {
                16 => Scalar::from_var(self.var.cast(2)),
                32 => self.trunc32(),
                _ => *self,
            };
        }
        if let Some(c) = self.as_const() {
            return Scalar::konst(match bits {
                16 => u64::from((c as u16).swap_bytes()),
                32 => u64::from((c as u32).swap_bytes()),
                _ => c.swap_bytes(),
            });
        }
        match bits {
            16 => Scalar::upto(0xffff),
            32 => Scalar::upto(0xffff_ffff),
            _ => Scalar::UNKNOWN,
        }
    }
}

/// A comparison the verifier can refine on (the jump conditions, `Set` negated as `NotSet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// Unsigned `>`.
    Gt,
    /// Unsigned `>=`.
    Ge,
    /// Unsigned `<`.
    Lt,
    /// Unsigned `<=`.
    Le,
    /// Signed `>`.
    Sgt,
    /// Signed `>=`.
    Sge,
    /// Signed `<`.
    Slt,
    /// Signed `<=`.
    Sle,
    /// `a & b != 0`.
    Set,
    /// `a & b == 0`.
    NotSet,
}

impl Rel {
    /// The relation that holds when this one does not.
    pub fn negate(self) -> Rel {
        match self {
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Sgt => Rel::Sle,
            Rel::Sge => Rel::Slt,
            Rel::Slt => Rel::Sge,
            Rel::Sle => Rel::Sgt,
            Rel::Set => Rel::NotSet,
            Rel::NotSet => Rel::Set,
        }
    }

    /// `b rel' a` equivalent to `a rel b`.
    pub fn swap(self) -> Rel {
        match self {
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Sgt => Rel::Slt,
            Rel::Sge => Rel::Sle,
            Rel::Slt => Rel::Sgt,
            Rel::Sle => Rel::Sge,
            other => other,
        }
    }
}

/// Restricts `a` and `b` to the values for which `a rel b` holds in 64 bits; `false` when
/// none do (the branch is dead).
pub fn refine64(a: &mut Scalar, b: &mut Scalar, rel: Rel) -> bool {
    match rel {
        Rel::Eq => {
            if !a.var.compatible(b.var) {
                return false;
            }
            let mut m = *a;
            m.var = a.var.intersect(b.var);
            m.umin = a.umin.max(b.umin);
            m.umax = a.umax.min(b.umax);
            m.smin = a.smin.max(b.smin);
            m.smax = a.smax.min(b.smax);
            m.u32min = a.u32min.max(b.u32min);
            m.u32max = a.u32max.min(b.u32max);
            m.s32min = a.s32min.max(b.s32min);
            m.s32max = a.s32max.min(b.s32max);
            *a = m;
            *b = m;
        }
        Rel::Ne => {
            if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
                return x != y;
            }
            let (ca, cb) = (a.as_const(), b.as_const());
            for (x, c) in [(&mut *a, cb), (&mut *b, ca)] {
                if let Some(c) = c {
                    if x.umin == c {
                        x.umin = x.umin.wrapping_add(1);
                        if x.umin == 0 {
                            return false;
                        }
                    }
                    if x.umax == c {
                        if x.umax == 0 {
                            return false;
                        }
                        x.umax -= 1;
                    }
                    if x.smin == c as i64 {
                        if x.smin == i64::MAX {
                            return false;
                        }
                        x.smin += 1;
                    }
                    if x.smax == c as i64 {
                        if x.smax == i64::MIN {
                            return false;
                        }
                        x.smax -= 1;
                    }
                }
            }
        }
        Rel::Gt | Rel::Ge => {
            let strict = u64::from(rel == Rel::Gt);
            let Some(lo) = b.umin.checked_add(strict) else { return false };
            let Some(hi) = a.umax.checked_sub(strict) else { return false };
            a.umin = a.umin.max(lo);
            b.umax = b.umax.min(hi);
        }
        Rel::Lt | Rel::Le => return refine64(b, a, rel.swap()),
        Rel::Sgt | Rel::Sge => {
            let strict = i64::from(rel == Rel::Sgt);
            let Some(lo) = b.smin.checked_add(strict) else { return false };
            let Some(hi) = a.smax.checked_sub(strict) else { return false };
            a.smin = a.smin.max(lo);
            b.smax = b.smax.min(hi);
        }
        Rel::Slt | Rel::Sle => return refine64(b, a, rel.swap()),
        Rel::Set => {
            if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
                return x & y != 0;
            }
            if a.var.value & b.var.value != 0 {
                return true;
            }
            if (a.var.value | a.var.mask) & (b.var.value | b.var.mask) == 0 {
                return false;
            }
        }
        Rel::NotSet => {
            if let Some(c) = b.as_const() {
                if a.var.value & c != 0 {
                    return false;
                }
                a.var.mask &= !c;
            } else if let Some(c) = a.as_const() {
                if b.var.value & c != 0 {
                    return false;
                }
                b.var.mask &= !c;
            }
        }
    }
    a.sync();
    b.sync();
    !a.is_empty() && !b.is_empty()
}

/// [`refine64`] for a 32-bit comparison (the low halves).
pub fn refine32(a: &mut Scalar, b: &mut Scalar, rel: Rel) -> bool {
    match rel {
        Rel::Eq => {
            if !a.var.cast(4).compatible(b.var.cast(4)) {
                return false;
            }
            let (alo, blo) = (a.var.cast(4), b.var.cast(4));
            let low = alo.intersect(blo);
            a.var = a.var.with_subreg(low);
            b.var = b.var.with_subreg(low);
            let (umin, umax) = (a.u32min.max(b.u32min), a.u32max.min(b.u32max));
            let (smin, smax) = (a.s32min.max(b.s32min), a.s32max.min(b.s32max));
            for x in [&mut *a, &mut *b] {
                x.u32min = umin;
                x.u32max = umax;
                x.s32min = smin;
                x.s32max = smax;
            }
        }
        Rel::Ne => {
            let (ca, cb) = (a.zext32().as_const(), b.zext32().as_const());
            if let (Some(x), Some(y)) = (ca, cb) {
                return x != y;
            }
            for (x, c) in [(&mut *a, cb), (&mut *b, ca)] {
                if let Some(c) = c {
                    let c = c as u32;
                    if x.u32min == c {
                        if c == u32::MAX {
                            return false;
                        }
                        x.u32min += 1;
                    }
                    if x.u32max == c {
                        if c == 0 {
                            return false;
                        }
                        x.u32max -= 1;
                    }
                    if x.s32min == c as i32 {
                        if x.s32min == i32::MAX {
                            return false;
                        }
                        x.s32min += 1;
                    }
                    if x.s32max == c as i32 {
                        if x.s32max == i32::MIN {
                            return false;
                        }
                        x.s32max -= 1;
                    }
                }
            }
        }
        Rel::Gt | Rel::Ge => {
            let strict = u32::from(rel == Rel::Gt);
            let Some(lo) = b.u32min.checked_add(strict) else { return false };
            let Some(hi) = a.u32max.checked_sub(strict) else { return false };
            a.u32min = a.u32min.max(lo);
            b.u32max = b.u32max.min(hi);
        }
        Rel::Lt | Rel::Le => return refine32(b, a, rel.swap()),
        Rel::Sgt | Rel::Sge => {
            let strict = i32::from(rel == Rel::Sgt);
            let Some(lo) = b.s32min.checked_add(strict) else { return false };
            let Some(hi) = a.s32max.checked_sub(strict) else { return false };
            a.s32min = a.s32min.max(lo);
            b.s32max = b.s32max.min(hi);
        }
        Rel::Slt | Rel::Sle => return refine32(b, a, rel.swap()),
        Rel::Set => {
            let (x, y) = (a.var.cast(4), b.var.cast(4));
            if x.value & y.value != 0 {
                return true;
            }
            if (x.value | x.mask) & (y.value | y.mask) == 0 {
                return false;
            }
        }
        Rel::NotSet => {
            if let Some(c) = b.zext32().as_const() {
                if a.var.value & c != 0 {
                    return false;
                }
                a.var.mask &= !c;
            } else if let Some(c) = a.zext32().as_const() {
                if b.var.value & c != 0 {
                    return false;
                }
                b.var.mask &= !c;
            }
        }
    }
    a.sync();
    b.sync();
    !a.is_empty() && !b.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(s: &Scalar, v: u64) -> bool {
        v >= s.umin
            && v <= s.umax
            && (v as i64) >= s.smin
            && (v as i64) <= s.smax
            && (v as u32) >= s.u32min
            && (v as u32) <= s.u32max
            && (v as i32) >= s.s32min
            && (v as i32) <= s.s32max
            && (v & !s.var.mask) == s.var.value
    }

    /// Small exhaustive check: every operation's result contains every concrete result.
    #[test]
    fn operations_are_sound_on_small_ranges() {
        let vals: Vec<u64> = vec![
            0,
            1,
            2,
            3,
            7,
            8,
            255,
            0xffff_ffff,
            0x1_0000_0000,
            u64::MAX,
            u64::MAX - 3,
            1 << 63,
        ];
        let ranges: Vec<Scalar> = {
            let mut r: Vec<Scalar> = vals.iter().map(|&v| Scalar::konst(v)).collect();
            r.push(Scalar::upto(7));
            r.push(Scalar::upto(0xffff_ffff));
            r.push(Scalar::UNKNOWN);
            r
        };
        for a in &ranges {
            for b in &ranges {
                for &x in vals.iter().filter(|&&x| members(a, x)) {
                    for &y in vals.iter().filter(|&&y| members(b, y)) {
                        assert!(members(&a.add(b), x.wrapping_add(y)));
                        assert!(members(&a.sub(b), x.wrapping_sub(y)));
                        assert!(members(&a.mul(b), x.wrapping_mul(y)));
                        assert!(members(&a.and(b), x & y));
                        assert!(members(&a.or(b), x | y));
                        assert!(members(&a.xor(b), x ^ y));
                        assert!(members(&a.udiv(b), x.checked_div(y).unwrap_or(0)));
                        assert!(members(&a.umod(b), if y == 0 { x } else { x % y }));
                        assert!(members(&a.shl(b, 64), x << (y & 63)));
                        assert!(members(&a.shr(b, 64), x >> (y & 63)));
                        assert!(members(&a.sar(b), ((x as i64) >> (y & 63)) as u64));
                        let (x32, y32) = (x & 0xffff_ffff, y & 0xffff_ffff);
                        assert!(members(
                            &a.zext32().add(&b.zext32()).trunc32(),
                            (x32 + y32) & 0xffff_ffff
                        ));
                        for rel in [
                            Rel::Eq,
                            Rel::Ne,
                            Rel::Gt,
                            Rel::Ge,
                            Rel::Lt,
                            Rel::Le,
                            Rel::Sgt,
                            Rel::Sge,
                            Rel::Slt,
                            Rel::Sle,
                            Rel::Set,
                            Rel::NotSet,
                        ] {
                            let holds = match rel {
                                Rel::Eq => x == y,
                                Rel::Ne => x != y,
                                Rel::Gt => x > y,
                                Rel::Ge => x >= y,
                                Rel::Lt => x < y,
                                Rel::Le => x <= y,
                                Rel::Sgt => (x as i64) > (y as i64),
                                Rel::Sge => (x as i64) >= (y as i64),
                                Rel::Slt => (x as i64) < (y as i64),
                                Rel::Sle => (x as i64) <= (y as i64),
                                Rel::Set => x & y != 0,
                                Rel::NotSet => x & y == 0,
                            };
                            let (mut ra, mut rb) = (*a, *b);
                            if holds {
                                assert!(refine64(&mut ra, &mut rb, rel), "{rel:?} {x} {y}");
                                assert!(members(&ra, x) && members(&rb, y), "{rel:?} {x} {y}");
                            }
                        }
                    }
                }
            }
        }
    }
}
