//! The abstract state at one point of one path: each frame's registers ([`Reg`]: a type, a
//! fixed offset and a [`Scalar`] for the value or the variable offset) and stack slots
//! ([`Slot`]: spilled registers kept whole, other bytes as written-or-not), and the
//! references the path holds. [`State::subsumes`] is the pruning test: everything `cur` can
//! do, an already verified `old` covered.

use std::collections::HashMap;

use crate::scalar::Scalar;

/// Stack bytes per frame.
pub const STACK_SIZE: usize = 512;
/// 8-byte stack slots per frame.
pub const SLOTS: usize = STACK_SIZE / 8;

/// A register's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Never written.
    NotInit,
    /// A number.
    Scalar,
    /// The context.
    Ctx,
    /// Into frame `n`'s stack (its top plus `off`).
    Stack(u8),
    /// Into the packet.
    Packet,
    /// Into the packet's metadata.
    PacketMeta,
    /// The packet's end.
    PacketEnd,
    /// Map `n` itself.
    MapPtr(u32),
    /// A value of map `n`.
    MapValue(u32),
    /// A value of map `n` or null.
    MapValueOrNull(u32),
    /// A ring buffer reservation of `n` bytes.
    RingbufMem(u32),
    /// A ring buffer reservation of `n` bytes or null.
    RingbufMemOrNull(u32),
}

impl Kind {
    /// The kernel's name for the type (`reg_type_str`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::NotInit => "?",
            Kind::Scalar => "scalar",
            Kind::Ctx => "ctx",
            Kind::Stack(_) => "fp",
            Kind::Packet => "pkt",
            Kind::PacketMeta => "pkt_meta",
            Kind::PacketEnd => "pkt_end",
            Kind::MapPtr(_) => "map_ptr",
            Kind::MapValue(_) => "map_value",
            Kind::MapValueOrNull(_) => "map_value_or_null",
            Kind::RingbufMem(_) => "ringbuf_mem",
            Kind::RingbufMemOrNull(_) => "ringbuf_mem_or_null",
        }
    }

    /// Whether the register holds a pointer.
    pub fn is_pointer(self) -> bool {
        !matches!(self, Kind::NotInit | Kind::Scalar)
    }
}

/// One register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    /// The type.
    pub kind: Kind,
    /// Pointers: the fixed offset.
    pub off: i32,
    /// Scalars: the value; pointers: the variable offset.
    pub var: Scalar,
    /// Scalars: registers with the same id hold the same value; packet pointers: the same
    /// variable offset; pointers that may be null: the same pointer.
    pub id: u32,
    /// Packet pointers: bytes after the pointer's base proven inside the packet.
    pub range: u32,
    /// Ring buffer reservations: the reference the pointer belongs to.
    pub ref_id: u32,
}

impl Reg {
    /// Never written.
    pub const NOT_INIT: Reg =
        Reg { kind: Kind::NotInit, off: 0, var: Scalar::UNKNOWN, id: 0, range: 0, ref_id: 0 };

    /// A scalar with these facts.
    pub fn scalar(var: Scalar) -> Reg {
        Reg { kind: Kind::Scalar, var, ..Reg::NOT_INIT }
    }

    /// A pointer with no variable offset.
    pub fn pointer(kind: Kind, off: i32) -> Reg {
        Reg { kind, off, var: Scalar::konst(0), ..Reg::NOT_INIT }
    }
}

/// What is known of a stack byte that holds no spilled register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Byte {
    /// Never written.
    Invalid,
    /// Written, value unknown.
    Misc,
    /// Written with zero.
    Zero,
}

/// One 8-byte stack slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Bytes written separately (index 0 is the lowest address).
    Bytes([Byte; 8]),
    /// A register stored whole (8 bytes, aligned).
    Spill(Reg),
}

impl Slot {
    /// Nothing written.
    pub const INVALID: Slot = Slot::Bytes([Byte::Invalid; 8]);
}

/// One function's frame.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// `r0`–`r10`.
    pub regs: [Reg; 11],
    /// Slot `k` covers `fp - 8(k+1)` … `fp - 8k - 1`; slots past the end were never written.
    pub stack: Vec<Slot>,
    /// The call instruction that made this frame (`usize::MAX` for the entry function).
    pub callsite: usize,
    /// The function's first instruction.
    pub subprog: usize,
}

impl Frame {
    /// The slot at `k`.
    pub fn slot(&self, k: usize) -> Slot {
        self.stack.get(k).copied().unwrap_or(Slot::INVALID)
    }

    /// The slot at `k`, writable (the stack grows to it).
    pub fn slot_mut(&mut self, k: usize) -> &mut Slot {
        if self.stack.len() <= k {
            self.stack.resize(k + 1, Slot::INVALID);
        }
        &mut self.stack[k]
    }
}

/// A reference the path holds (a ring buffer reservation), to be released before exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ref {
    /// The reference id (the pointer's `ref_id`).
    pub id: u32,
    /// The instruction that acquired it.
    pub insn: usize,
}

/// The state of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Frames, the entry function's first.
    pub frames: Vec<Frame>,
    /// References held.
    pub refs: Vec<Ref>,
}

impl State {
    /// The current (innermost) frame.
    pub fn cur(&self) -> &Frame {
        &self.frames[self.frames.len() - 1]
    }

    /// The current frame, writable.
    pub fn cur_mut(&mut self) -> &mut Frame {
        let n = self.frames.len() - 1;
        &mut self.frames[n]
    }

    /// Roughly the bytes the state takes (for the exploration's memory budget).
    pub fn approx_bytes(&self) -> usize {
        let per_frame = std::mem::size_of::<Frame>();
        self.frames
            .iter()
            .map(|f| per_frame + f.stack.len() * std::mem::size_of::<Slot>())
            .sum::<usize>()
            + self.refs.len() * std::mem::size_of::<Ref>()
    }

    /// Every register and spilled register of every frame, writable.
    pub fn for_each_reg(&mut self, mut f: impl FnMut(&mut Reg)) {
        for frame in &mut self.frames {
            for r in &mut frame.regs {
                f(r);
            }
            for s in &mut frame.stack {
                if let Slot::Spill(r) = s {
                    f(r);
                }
            }
        }
    }

    /// Whether every execution from `cur` is one `self` (a verified state at the same
    /// instruction) already covered: same frames, and each register and slot of `cur` within
    /// what `self` allowed.
    pub fn subsumes(&self, cur: &State) -> bool {
        if self.frames.len() != cur.frames.len() || self.refs.len() != cur.refs.len() {
            return false;
        }
        let mut ids = IdMap::default();
        for (o, c) in self.refs.iter().zip(&cur.refs) {
            if !ids.check(o.id, c.id) {
                return false;
            }
        }
        for (of, cf) in self.frames.iter().zip(&cur.frames) {
            if of.callsite != cf.callsite || of.subprog != cf.subprog {
                return false;
            }
            for (o, c) in of.regs.iter().zip(&cf.regs) {
                if !reg_safe(o, c, &mut ids) {
                    return false;
                }
            }
            let n = of.stack.len().max(cf.stack.len());
            for k in 0..n {
                if !slot_safe(&of.slot(k), &cf.slot(k), &mut ids) {
                    return false;
                }
            }
        }
        true
    }
}

/// A consistent renaming of ids from the old state to the current one.
#[derive(Default)]
struct IdMap {
    map: HashMap<u32, u32>,
    back: HashMap<u32, u32>,
}

impl IdMap {
    fn check(&mut self, old: u32, cur: u32) -> bool {
        if old == 0 && cur == 0 {
            return true;
        }
        if old == 0 || cur == 0 {
            return false;
        }
        let a = *self.map.entry(old).or_insert(cur);
        let b = *self.back.entry(cur).or_insert(old);
        a == cur && b == old
    }
}

fn reg_safe(o: &Reg, c: &Reg, ids: &mut IdMap) -> bool {
    match o.kind {
        // Never read on the verified path before being written.
        Kind::NotInit => true,
        Kind::Scalar => {
            // An old id links registers; the current ones must be linked the same way (a
            // branch on one refines the others).
            c.kind == Kind::Scalar && o.var.contains(&c.var) && (o.id == 0 || ids.check(o.id, c.id))
        }
        _ => {
            o.kind == c.kind
                && o.off == c.off
                && o.var.contains(&c.var)
                && c.range >= o.range
                && ids.check(o.id, c.id)
                && ids.check(o.ref_id, c.ref_id)
        }
    }
}

fn slot_safe(o: &Slot, c: &Slot, ids: &mut IdMap) -> bool {
    match (o, c) {
        (Slot::Spill(a), Slot::Spill(b)) => reg_safe(a, b, ids),
        (Slot::Bytes(a), Slot::Bytes(b)) => a.iter().zip(b).all(|(x, y)| match x {
            Byte::Invalid => true,
            Byte::Misc => matches!(y, Byte::Misc | Byte::Zero),
            Byte::Zero => *y == Byte::Zero,
        }),
        // Old bytes written with unknown data: a spilled scalar reads the same.
        (Slot::Bytes(a), Slot::Spill(b)) => {
            b.kind == Kind::Scalar && a.iter().all(|x| matches!(x, Byte::Invalid | Byte::Misc))
        }
        (Slot::Spill(_), Slot::Bytes(_)) => false,
    }
}
