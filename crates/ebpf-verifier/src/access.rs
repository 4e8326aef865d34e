//! Memory: loads, stores and atomics through each pointer type (the kernel's
//! `check_mem_access`: context fields, the stack with spilled registers and initialisation,
//! packet bytes proven against `data_end`, map values and ring buffer memory within their
//! size), and helper calls with their argument checks (`check_helper_call`).

use sift_ebpf::helper_ids::id;
use sift_ebpf::{AtomicOp, MapType, Operand, Size, Width, helper_name};

use crate::context::{self, CtxField};
use crate::error::VerifyErrorKind;
use crate::explore::{MAX_VAR_OFF, Result, Verifier};
use crate::helpers::{self, Arg, Ret};
use crate::scalar::Scalar;
use crate::state::{Byte, Kind, Reg, STACK_SIZE, Slot, State};

/// `BPF_F_RDONLY_PROG`: the program may only read the map.
const BPF_F_RDONLY_PROG: u32 = 1 << 7;

/// What an access does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Atomic,
}

/// The value a store writes.
#[derive(Clone, Copy)]
enum Stored {
    Reg(Reg),
    Imm(i64),
    Unknown,
}

fn upto_bytes(size: u32) -> Scalar {
    if size >= 8 { Scalar::UNKNOWN } else { Scalar::upto((1u64 << (size * 8)) - 1) }
}

impl Verifier<'_> {
    pub(crate) fn load(
        &mut self,
        st: &mut State,
        size: Size,
        dst: u8,
        src: u8,
        off: i16,
        signed: bool,
    ) -> Result<()> {
        let n = size.bytes() as u32;
        let mut v = self.access(st, src, off, n, Access::Read, Stored::Unknown)?;
        if signed && v.kind == Kind::Scalar {
            v = Reg::scalar(v.var.sext(n * 8));
        }
        Self::write(st, dst, v)
    }

    pub(crate) fn store(
        &mut self,
        st: &mut State,
        size: Size,
        dst: u8,
        off: i16,
        src: Operand,
    ) -> Result<()> {
        let value = match src {
            Operand::Reg(r) => {
                let v = Self::read(st, r)?;
                if v.kind.is_pointer() && !self.options.privileged {
                    let base = Self::read(st, dst)?;
                    if !matches!(base.kind, Kind::Stack(_)) {
                        return Err(VerifyErrorKind::LeakInto { reg: r, place: "mem" });
                    }
                }
                Stored::Reg(v)
            }
            Operand::Imm(imm) => Stored::Imm(i64::from(imm)),
        };
        self.access(st, dst, off, size.bytes() as u32, Access::Write, value)?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn atomic(
        &mut self,
        st: &mut State,
        width: Width,
        op: AtomicOp,
        fetch: bool,
        dst: u8,
        src: u8,
        off: i16,
    ) -> Result<()> {
        let v = Self::read(st, src)?;
        if op == AtomicOp::Cmpxchg {
            let r0 = Self::read(st, 0)?;
            if r0.kind.is_pointer() && !self.options.privileged {
                return Err(VerifyErrorKind::LeakInto { reg: 0, place: "mem" });
            }
        }
        if v.kind.is_pointer() && !self.options.privileged {
            return Err(VerifyErrorKind::LeakInto { reg: src, place: "mem" });
        }
        let n = if width == Width::W32 { 4 } else { 8 };
        self.access(st, dst, off, n, Access::Atomic, Stored::Unknown)?;
        if fetch {
            let r = if op == AtomicOp::Cmpxchg { 0 } else { src };
            Self::write(st, r, Reg::scalar(upto_bytes(n)))?;
        }
        Ok(())
    }

    /// A load (giving the value), store or atomic of `size` bytes at `base + off`.
    fn access(
        &mut self,
        st: &mut State,
        base_reg: u8,
        off: i16,
        size: u32,
        how: Access,
        value: Stored,
    ) -> Result<Reg> {
        let base = Self::read(st, base_reg)?;
        if let Some(b) = crate::AccessBase::of(base.kind)
            && let Some(slot) = self.access_bases.get_mut(self.cur_pc)
        {
            *slot = Some(slot.map_or(b, |old| old.join(b)));
        }
        let write = how != Access::Read;
        let off = i64::from(base.off) + i64::from(off);
        match base.kind {
            Kind::Ctx => {
                if how == Access::Atomic {
                    return Err(VerifyErrorKind::AtomicInto { reg: base_reg, ty: "ctx" });
                }
                if base.off != 0 {
                    return Err(VerifyErrorKind::ModifiedCtx { reg: base_reg, off: base.off });
                }
                if base.var.as_const() != Some(0) {
                    return Err(VerifyErrorKind::VariableCtx(base_reg));
                }
                let Some(field) = context::access(self.prog, off, size, write) else {
                    return Err(VerifyErrorKind::Ctx { off, size });
                };
                if let Stored::Reg(v) = value
                    && v.kind.is_pointer()
                    && !self.options.privileged
                {
                    return Err(VerifyErrorKind::LeakInto { reg: base_reg, place: "ctx" });
                }
                Ok(match field {
                    CtxField::Scalar => Reg::scalar(upto_bytes(size)),
                    CtxField::Packet => Reg::pointer(Kind::Packet, 0),
                    CtxField::PacketEnd => Reg::pointer(Kind::PacketEnd, 0),
                    CtxField::PacketMeta => Reg::pointer(Kind::PacketMeta, 0),
                })
            }
            Kind::Stack(frame) => {
                let Some(var) = base.var.as_const() else {
                    return Err(VerifyErrorKind::VariableStack(base_reg));
                };
                let off = off + var as i64;
                let dir = if write { "write to" } else { "read from" };
                self.stack_bounds(st, frame, base_reg, off, u64::from(size), dir)?;
                if off % i64::from(size) != 0 {
                    return Err(VerifyErrorKind::MisalignedStack { off, size });
                }
                if let Stored::Reg(v) = value {
                    if v.kind.is_pointer() && size != 8 {
                        return Err(VerifyErrorKind::SpillSize);
                    }
                    if let Kind::Stack(f) = v.kind
                        && f > frame
                    {
                        return Err(VerifyErrorKind::StackPtrToCaller);
                    }
                }
                let Some(f) = st.frames.get_mut(usize::from(frame)) else {
                    return Err(VerifyErrorKind::InvalidMemAccess { reg: base_reg, ty: "fp" });
                };
                match how {
                    Access::Read => stack_read(f, off, size, self.options.privileged),
                    Access::Write => {
                        stack_write(f, off, size, value);
                        Ok(Reg::NOT_INIT)
                    }
                    Access::Atomic => {
                        stack_read(f, off, size, self.options.privileged)?;
                        stack_write(f, off, size, Stored::Unknown);
                        Ok(Reg::NOT_INIT)
                    }
                }
            }
            Kind::Packet | Kind::PacketMeta => {
                if how == Access::Atomic {
                    return Err(VerifyErrorKind::AtomicInto {
                        reg: base_reg,
                        ty: base.kind.name(),
                    });
                }
                self.packet_bounds(&base, base_reg, off, u64::from(size))?;
                Ok(Reg::scalar(upto_bytes(size)))
            }
            Kind::MapValue(m) => {
                let Some(map) = self.maps.get(m as usize) else {
                    return Err(VerifyErrorKind::BadMap(m));
                };
                if write && map.flags & BPF_F_RDONLY_PROG != 0 {
                    return Err(VerifyErrorKind::ReadonlyMap {
                        value_size: map.value_size,
                        off,
                        size: u64::from(size),
                    });
                }
                self.region_bounds(&base, base_reg, off, u64::from(size), map.value_size, true)?;
                if how == Access::Atomic
                    && (off % i64::from(size) != 0
                        || (base.var.var.value | base.var.var.mask) % u64::from(size) != 0)
                {
                    return Err(VerifyErrorKind::MisalignedValue { off, size });
                }
                Ok(Reg::scalar(upto_bytes(size)))
            }
            Kind::RingbufMem(n) => {
                if how == Access::Atomic {
                    return Err(VerifyErrorKind::AtomicInto { reg: base_reg, ty: "ringbuf_mem" });
                }
                self.region_bounds(&base, base_reg, off, u64::from(size), n, false)?;
                Ok(Reg::scalar(upto_bytes(size)))
            }
            other => Err(VerifyErrorKind::InvalidMemAccess { reg: base_reg, ty: other.name() }),
        }
    }

    fn stack_bounds(
        &mut self,
        st: &State,
        frame: u8,
        reg: u8,
        off: i64,
        size: u64,
        dir: &'static str,
    ) -> Result<()> {
        if off < -(STACK_SIZE as i64) || off + size as i64 > 0 || size == 0 {
            return Err(VerifyErrorKind::StackBounds { dir, reg, off, size });
        }
        let Some(sub) = st.frames.get(usize::from(frame)).map(|f| f.subprog) else {
            return Err(VerifyErrorKind::InvalidMemAccess { reg, ty: "fp" });
        };
        let d = self.stack_depth.entry(sub).or_insert(0);
        *d = (*d).max((-off) as u32);
        Ok(())
    }

    fn packet_bounds(&self, base: &Reg, reg: u8, off: i64, size: u64) -> Result<()> {
        if base.var.smin < 0 {
            return Err(VerifyErrorKind::NegativeMin(reg));
        }
        if off < 0 || off + size as i64 > i64::from(base.range) {
            return Err(VerifyErrorKind::Packet {
                off,
                size: size as u32,
                reg,
                id: base.id,
                reg_off: base.off,
                range: base.range,
            });
        }
        Ok(())
    }

    /// A map value's or ring buffer reservation's bounds, with the variable offset.
    fn region_bounds(
        &self,
        base: &Reg,
        reg: u8,
        off: i64,
        size: u64,
        limit: u32,
        map: bool,
    ) -> Result<()> {
        let err = |off: i64| {
            if map {
                VerifyErrorKind::MapValue { value_size: limit, off, size }
            } else {
                VerifyErrorKind::Mem { mem_size: limit, off, size }
            }
        };
        let v = &base.var;
        if v.smin < 0 && (v.smin <= -MAX_VAR_OFF || v.smin + off < 0) {
            return Err(VerifyErrorKind::NegativeMin(reg));
        }
        let lo = off + v.smin.max(0);
        if lo < 0 || lo + size as i64 > i64::from(limit) {
            return Err(err(lo));
        }
        if v.umax >= MAX_VAR_OFF as u64 {
            return Err(VerifyErrorKind::Unbounded(reg));
        }
        let hi = off + v.umax as i64;
        if hi < 0 || hi + size as i64 > i64::from(limit) {
            return Err(err(hi));
        }
        Ok(())
    }

    /// Memory a helper reads or writes: `size` bytes at the pointer in `reg`.
    fn helper_mem(&mut self, st: &mut State, r: u8, size: u64, write: bool) -> Result<()> {
        let reg = Self::read(st, r)?;
        match reg.kind {
            Kind::Stack(frame) => {
                let Some(var) = reg.var.as_const() else {
                    return Err(VerifyErrorKind::VariableStack(r));
                };
                let off = i64::from(reg.off) + var as i64;
                self.stack_bounds(st, frame, r, off, size, "indirect access to")?;
                let Some(f) = st.frames.get_mut(usize::from(frame)) else {
                    return Err(VerifyErrorKind::InvalidMemAccess { reg: r, ty: "fp" });
                };
                for i in 0..size as i64 {
                    let at = off + i;
                    let (k, b) = slot_of(at);
                    if write {
                        let slot = f.slot_mut(k);
                        if let Slot::Spill(_) = slot {
                            *slot = Slot::Bytes([Byte::Misc; 8]);
                        }
                        if let Slot::Bytes(bytes) = slot {
                            bytes[b] = Byte::Misc;
                        }
                    } else if let Slot::Bytes(bytes) = f.slot(k)
                        && bytes[b] == Byte::Invalid
                        && !self.options.privileged
                    {
                        return Err(VerifyErrorKind::StackUninit { off, at: i as u64, size });
                    }
                }
                Ok(())
            }
            Kind::Packet | Kind::PacketMeta => {
                self.packet_bounds(&reg, r, i64::from(reg.off), size)
            }
            Kind::MapValue(m) => {
                let Some(map) = self.maps.get(m as usize) else {
                    return Err(VerifyErrorKind::BadMap(m));
                };
                if write && map.flags & BPF_F_RDONLY_PROG != 0 {
                    return Err(VerifyErrorKind::ReadonlyMap {
                        value_size: map.value_size,
                        off: i64::from(reg.off),
                        size,
                    });
                }
                self.region_bounds(&reg, r, i64::from(reg.off), size, map.value_size, true)
            }
            Kind::RingbufMem(n) => self.region_bounds(&reg, r, i64::from(reg.off), size, n, false),
            other => Err(VerifyErrorKind::ArgType {
                reg: r,
                found: other.name(),
                expected: "fp, pkt, pkt_meta, map_value, ringbuf_mem",
            }),
        }
    }

    pub(crate) fn helper_call(&mut self, st: &mut State, pc: usize, helper: i32) -> Result<()> {
        let Some(name) = helper_name(i64::from(helper)) else {
            return Err(VerifyErrorKind::UnknownHelper(helper));
        };
        let hid = helper as u32;
        let Some(proto) = helpers::proto(hid) else {
            return Err(VerifyErrorKind::HelperUnsupported { name, id: hid });
        };
        if !helpers::allowed(self.prog, hid) {
            return Err(VerifyErrorKind::HelperNotAllowed { name, id: hid });
        }
        let leaks = self.options.privileged;
        let mut map: Option<u32> = None;
        let mut alloc = 0u32;
        let mut release: Option<u32> = None;
        let mut const_key: Option<u64> = None;
        for (i, &arg) in proto.args.iter().enumerate() {
            let r = i as u8 + 1;
            if arg == Arg::None {
                break;
            }
            let reg = Self::read(st, r)?;
            let mismatch =
                |expected| VerifyErrorKind::ArgType { reg: r, found: reg.kind.name(), expected };
            match arg {
                Arg::None => {}
                Arg::Anything => {
                    if reg.kind.is_pointer() && !leaks {
                        return Err(VerifyErrorKind::LeakInto { reg: r, place: "helper function" });
                    }
                }
                Arg::MapPtr => {
                    let Kind::MapPtr(m) = reg.kind else { return Err(mismatch("map_ptr")) };
                    let Some(t) = self.maps.get(m as usize).map(|x| x.map_type) else {
                        return Err(VerifyErrorKind::BadMap(m));
                    };
                    if !helpers::map_compatible(t, hid) {
                        return Err(VerifyErrorKind::MapFuncCompat {
                            map_type: t as u32,
                            name,
                            id: hid,
                        });
                    }
                    map = Some(m);
                }
                Arg::MapKey | Arg::MapValue | Arg::UninitMapValue => {
                    let Some(m) = map else { return Err(mismatch("map_ptr")) };
                    let Some(spec) = self.maps.get(m as usize) else {
                        return Err(VerifyErrorKind::BadMap(m));
                    };
                    let size = if arg == Arg::MapKey { spec.key_size } else { spec.value_size };
                    self.helper_mem(st, r, u64::from(size), arg == Arg::UninitMapValue)?;
                    if arg == Arg::MapKey {
                        const_key = stack_zero_key(st, &reg, size);
                    }
                }
                Arg::Ctx => {
                    if reg.kind != Kind::Ctx {
                        return Err(mismatch("ctx"));
                    }
                    if reg.off != 0 {
                        return Err(VerifyErrorKind::ModifiedCtx { reg: r, off: reg.off });
                    }
                }
                // Checked with the size that follows.
                Arg::Mem | Arg::MemOrNull | Arg::UninitMem => {}
                Arg::Size | Arg::SizeOrZero => {
                    if reg.kind != Kind::Scalar {
                        return Err(mismatch("scalar"));
                    }
                    if reg.var.smin < 0 {
                        return Err(VerifyErrorKind::NegativeMin(r));
                    }
                    if reg.var.umax >= MAX_VAR_OFF as u64 {
                        return Err(VerifyErrorKind::SizeUnbounded(r));
                    }
                    if reg.var.umin == 0 && arg == Arg::Size {
                        return Err(VerifyErrorKind::ZeroSize(r));
                    }
                    let mem_r = r - 1;
                    let mem = Self::read(st, mem_r)?;
                    let mem_arg = proto.args[i - 1];
                    if mem_arg == Arg::MemOrNull
                        && mem.kind == Kind::Scalar
                        && mem.var.as_const() == Some(0)
                    {
                        if reg.var.umax != 0 {
                            return Err(VerifyErrorKind::ArgType {
                                reg: mem_r,
                                found: "scalar",
                                expected: "fp, pkt, pkt_meta, map_value, ringbuf_mem",
                            });
                        }
                        continue;
                    }
                    if reg.var.umax > 0 {
                        self.helper_mem(st, mem_r, reg.var.umax, mem_arg == Arg::UninitMem)?;
                    } else if !mem.kind.is_pointer() {
                        return Err(VerifyErrorKind::ArgType {
                            reg: mem_r,
                            found: mem.kind.name(),
                            expected: "fp, pkt, pkt_meta, map_value, ringbuf_mem",
                        });
                    }
                }
                Arg::AllocSize => {
                    let Some(c) = reg.var.as_const().filter(|_| reg.kind == Kind::Scalar) else {
                        return Err(VerifyErrorKind::NotConst(r));
                    };
                    alloc = u32::try_from(c).map_err(|_| VerifyErrorKind::NotConst(r))?;
                }
                Arg::RingbufRelease => {
                    let Kind::RingbufMem(_) = reg.kind else { return Err(mismatch("ringbuf_mem")) };
                    if reg.ref_id == 0 || !st.refs.iter().any(|x| x.id == reg.ref_id) {
                        return Err(VerifyErrorKind::NotReferenced(r));
                    }
                    if reg.off != 0 || reg.var.as_const() != Some(0) {
                        return Err(VerifyErrorKind::PtrArith {
                            reg: r,
                            ty: "ringbuf_mem",
                            null: false,
                        });
                    }
                    release = Some(reg.ref_id);
                }
            }
        }
        if hid == id::TAIL_CALL
            && let Some(r) = st.refs.first()
        {
            return Err(VerifyErrorKind::Unreleased { id: r.id, insn: r.insn });
        }
        let invalid = if leaks { Reg::scalar(Scalar::UNKNOWN) } else { Reg::NOT_INIT };
        if let Some(rid) = release {
            st.refs.retain(|x| x.id != rid);
            st.for_each_reg(|x| {
                if x.ref_id == rid {
                    *x = invalid;
                }
            });
        }
        if proto.changes_packet {
            st.for_each_reg(|x| {
                if matches!(x.kind, Kind::Packet | Kind::PacketMeta | Kind::PacketEnd) {
                    *x = invalid;
                }
            });
        }
        let r0 = match proto.ret {
            Ret::Integer => Reg::scalar(Scalar::UNKNOWN),
            Ret::Void => Reg::NOT_INIT,
            Ret::MapValueOrNull => {
                let m = map.unwrap_or(0);
                // An array's element at a constant index below max_entries always exists (the
                // kernel's `can_elide_value_nullness`).
                let present = self.maps.get(m as usize).is_some_and(|spec| {
                    hid == id::MAP_LOOKUP_ELEM
                        && matches!(spec.map_type, MapType::Array | MapType::PerCpuArray)
                        && const_key.is_some_and(|k| k < u64::from(spec.max_entries))
                });
                if present {
                    Reg::pointer(Kind::MapValue(m), 0)
                } else {
                    let mut r = Reg::pointer(Kind::MapValueOrNull(m), 0);
                    r.id = self.new_id();
                    r
                }
            }
            Ret::RingbufMemOrNull => {
                let mut r = Reg::pointer(Kind::RingbufMemOrNull(alloc), 0);
                r.id = self.new_id();
                r.ref_id = r.id;
                st.refs.push(crate::state::Ref { id: r.id, insn: pc });
                r
            }
        };
        let frame = st.cur_mut();
        for r in &mut frame.regs[1..=5] {
            *r = Reg::NOT_INIT;
        }
        frame.regs[0] = r0;
        Ok(())
    }
}

/// The key a stack pointer points at when it is known: bytes written as zero (or a spilled
/// zero) give key 0.
fn stack_zero_key(st: &State, key: &Reg, size: u32) -> Option<u64> {
    let Kind::Stack(frame) = key.kind else { return None };
    let off = i64::from(key.off) + key.var.as_const()? as i64;
    let f = st.frames.get(usize::from(frame))?;
    let zero = (0..i64::from(size)).all(|i| {
        let (k, b) = slot_of(off + i);
        match f.slot(k) {
            Slot::Bytes(bytes) => bytes[b] == Byte::Zero,
            Slot::Spill(r) => r.kind == Kind::Scalar && r.var.as_const() == Some(0),
        }
    });
    zero.then_some(0)
}

/// Slot and byte index of the stack byte at `off` (negative, from the frame's top).
fn slot_of(off: i64) -> (usize, usize) {
    let k = ((-off - 1) / 8) as usize;
    (k, (off + 8 * (k as i64 + 1)) as usize)
}

fn stack_read(f: &crate::state::Frame, off: i64, size: u32, privileged: bool) -> Result<Reg> {
    let (k, b) = slot_of(off);
    match f.slot(k) {
        Slot::Spill(r) => {
            if size == 8 {
                return Ok(r);
            }
            if r.kind != Kind::Scalar {
                return Err(VerifyErrorKind::FillSize);
            }
            // Part of a spilled number: zero if it was zero, otherwise unknown (as the kernel
            // reads it).
            let _ = b;
            Ok(Reg::scalar(if r.var.as_const() == Some(0) {
                Scalar::konst(0)
            } else {
                upto_bytes(size)
            }))
        }
        Slot::Bytes(bytes) => {
            let part = &bytes[b..b + size as usize];
            if let Some(i) = part.iter().position(|&x| x == Byte::Invalid)
                && !privileged
            {
                return Err(VerifyErrorKind::StackUninit {
                    off,
                    at: i as u64,
                    size: u64::from(size),
                });
            }
            Ok(Reg::scalar(if part.iter().all(|&x| x == Byte::Zero) {
                Scalar::konst(0)
            } else {
                upto_bytes(size)
            }))
        }
    }
}

fn stack_write(f: &mut crate::state::Frame, off: i64, size: u32, value: Stored) {
    let (k, b) = slot_of(off);
    let slot = f.slot_mut(k);
    if size == 8 {
        *slot = match value {
            Stored::Reg(r) => Slot::Spill(r),
            Stored::Imm(v) => Slot::Spill(Reg::scalar(Scalar::konst(v as u64))),
            Stored::Unknown => Slot::Bytes([Byte::Misc; 8]),
        };
        return;
    }
    if let Slot::Spill(_) = slot {
        *slot = Slot::Bytes([Byte::Misc; 8]);
    }
    let zero = match value {
        Stored::Reg(r) => {
            r.kind == Kind::Scalar
                && r.var.as_const().map(|c| c & ((1u64 << (size * 8)) - 1)) == Some(0)
        }
        Stored::Imm(v) => v as u64 & ((1u64 << (size * 8)) - 1) == 0,
        Stored::Unknown => false,
    };
    if let Slot::Bytes(bytes) = slot {
        for x in &mut bytes[b..b + size as usize] {
            *x = if zero { Byte::Zero } else { Byte::Misc };
        }
    }
}
