//! Typed eBPF instructions with symbolic jump targets, resolved to slot offsets at the end.
//!
//! **Why it exists.** The lowering ([`super::lower`]) jumps to blocks, exits and the failure
//! path before it knows where they will be; this module holds the instructions with labels,
//! drops jumps that would land on the next instruction anyway (a block laid out right after
//! the one jumping to it), and turns labels into eBPF's 16-bit slot offsets (a `lddw` takes two
//! slots), refusing a jump that does not fit.

use sift_ebpf::isa::{CallTarget, Cond, Insn, Operand, Width};
use sift_ebpf::reg::R0;

/// A place in the program, bound once with [`Asm::bind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Label(u32);

/// One entry of the instruction stream.
#[derive(Clone, Copy, Debug)]
enum Item {
    /// An instruction; `Some(label)` for a jump whose offset is the label's.
    Insn(Insn, Option<Label>),
    /// Where a label is bound.
    Bind(Label),
}

/// Why the instruction stream could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsmError {
    /// A jump's distance does not fit eBPF's 16-bit offset.
    TooFar {
        /// The instruction's slot.
        slot: usize,
        /// The distance in slots.
        distance: i64,
    },
}

/// The instruction stream being built.
#[derive(Debug, Default)]
pub(crate) struct Asm {
    items: Vec<Item>,
    labels: u32,
    /// Slots of the instructions in `items`.
    slots: usize,
}

impl Asm {
    /// A fresh label, not yet bound.
    pub fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels - 1)
    }

    /// Binds `label` here: the next instruction is its target.
    pub fn bind(&mut self, label: Label) {
        self.items.push(Item::Bind(label));
    }

    /// Appends an instruction that is not a jump.
    pub fn emit(&mut self, insn: Insn) {
        self.slots += insn.slots();
        self.items.push(Item::Insn(insn, None));
    }

    /// `goto label`.
    pub fn ja(&mut self, to: Label) {
        self.slots += 1;
        self.items.push(Item::Insn(Insn::Ja { off: 0, long: false }, Some(to)));
    }

    /// `gotol label` (ISA v4, kernel 6.6: a 32-bit offset).
    pub fn ja_long(&mut self, to: Label) {
        self.slots += 1;
        self.items.push(Item::Insn(Insn::Ja { off: 0, long: true }, Some(to)));
    }

    /// A bpf-to-bpf call of the function at `to`.
    pub fn call(&mut self, to: Label) {
        self.slots += 1;
        self.items.push(Item::Insn(Insn::Call(CallTarget::Local(0)), Some(to)));
    }

    /// `if dst cond src goto label` on `width` bits.
    pub fn jmp(&mut self, width: Width, cond: Cond, dst: u8, src: Operand, to: Label) {
        self.slots += 1;
        self.items.push(Item::Insn(Insn::Jmp { width, cond, dst, src, off: 0 }, Some(to)));
    }

    /// `w0 = value; exit`.
    pub fn ret(&mut self, value: u32) {
        self.emit(super::lower::mov32(R0, value));
        self.emit(Insn::Exit);
    }

    /// The slots written so far: at least the distance, once resolved, from any earlier
    /// instruction to the next one written (resolving only drops jumps).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Whether `to` is bound right after item `i` (only label bindings between).
    fn lands_next(&self, i: usize, to: Label) -> bool {
        self.items[i + 1..]
            .iter()
            .take_while(|it| matches!(it, Item::Bind(_)))
            .any(|it| matches!(it, Item::Bind(l) if *l == to))
    }

    /// `if c goto L1; goto L2; L1:` becomes `if !c goto L2; L1:` (`jset` has no inverse).
    fn invert_over_jumps(&mut self) -> bool {
        let mut changed = false;
        for i in 0..self.items.len().saturating_sub(1) {
            let (
                Item::Insn(Insn::Jmp { width, cond, dst, src, off }, Some(l1)),
                Item::Insn(Insn::Ja { .. }, Some(l2)),
            ) = (self.items[i], self.items[i + 1])
            else {
                continue;
            };
            let Some(inv) = inverse(cond) else { continue };
            if l1 != l2 && self.lands_next(i + 1, l1) {
                self.items[i] = Item::Insn(Insn::Jmp { width, cond: inv, dst, src, off }, Some(l2));
                // The `ja` now goes to the next instruction: dropped below.
                self.items[i + 1] = Item::Insn(Insn::Ja { off: 0, long: false }, Some(l1));
                changed = true;
            }
        }
        changed
    }

    /// Drops jumps to the next instruction (only label bindings between them), until none is
    /// left: a conditional jump there does nothing either way.
    fn drop_jumps_to_next(&mut self) {
        loop {
            let inverted = self.invert_over_jumps();
            let mut keep = vec![true; self.items.len()];
            let mut dropped = false;
            for (i, item) in self.items.iter().enumerate() {
                let Item::Insn(insn, Some(to)) = *item else { continue };
                if matches!(insn, Insn::Call(_)) {
                    continue;
                }
                if self.lands_next(i, to) {
                    keep[i] = false;
                    dropped = true;
                }
            }
            if !dropped && !inverted {
                return;
            }
            let mut k = keep.into_iter();
            self.items.retain(|_| k.next().unwrap_or(true));
        }
    }

    /// The instructions with every jump resolved. Panics on a label never bound (a bug of
    /// the lowering, never of its input).
    pub fn finish(mut self) -> Result<Vec<Insn>, AsmError> {
        self.drop_jumps_to_next();
        // Slot of every label and instruction.
        let mut at = vec![usize::MAX; self.labels as usize];
        let mut slot = 0usize;
        for item in &self.items {
            match *item {
                Item::Bind(l) => at[l.0 as usize] = slot,
                Item::Insn(insn, _) => slot += insn.slots(),
            }
        }
        let mut out = Vec::with_capacity(self.items.len());
        let mut slot = 0usize;
        for item in self.items {
            let Item::Insn(mut insn, target) = item else { continue };
            if let Some(l) = target {
                let to = at[l.0 as usize];
                assert!(to != usize::MAX, "label {l:?} is never bound");
                let distance = to as i64 - (slot as i64 + 1);
                if let Insn::Call(CallTarget::Local(imm)) | Insn::Ja { off: imm, long: true } =
                    &mut insn
                {
                    *imm =
                        i32::try_from(distance).map_err(|_| AsmError::TooFar { slot, distance })?;
                    slot += 1;
                    out.push(insn);
                    continue;
                }
                let off =
                    i16::try_from(distance).map_err(|_| AsmError::TooFar { slot, distance })?;
                match &mut insn {
                    Insn::Ja { off: o, .. } => *o = i32::from(off),
                    Insn::Jmp { off: o, .. } => *o = off,
                    _ => unreachable!("only jumps carry labels"),
                }
            }
            slot += insn.slots();
            out.push(insn);
        }
        Ok(out)
    }
}

/// The condition true exactly when `c` is false (`jset` has none).
fn inverse(c: Cond) -> Option<Cond> {
    Some(match c {
        Cond::Eq => Cond::Ne,
        Cond::Ne => Cond::Eq,
        Cond::Gt => Cond::Le,
        Cond::Le => Cond::Gt,
        Cond::Ge => Cond::Lt,
        Cond::Lt => Cond::Ge,
        Cond::Sgt => Cond::Sle,
        Cond::Sle => Cond::Sgt,
        Cond::Sge => Cond::Slt,
        Cond::Slt => Cond::Sge,
        Cond::Set => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_resolve_to_slots_and_jumps_to_next_go() {
        let mut a = Asm::default();
        let (l1, l2, l3) = (a.label(), a.label(), a.label());
        a.jmp(Width::W32, Cond::Eq, 7, Operand::Imm(1), l2);
        a.ja(l1); // to the next instruction: dropped
        a.bind(l1);
        a.emit(Insn::LdImm64 { dst: 1, kind: sift_ebpf::ImmKind::Imm, imm: 5 });
        a.ja(l3);
        a.bind(l2);
        a.ret(1);
        a.bind(l3);
        a.ret(0);
        let out = a.finish().unwrap();
        assert_eq!(out.len(), 7);
        // jeq over lddw (2 slots) and ja: +3.
        assert!(matches!(out[0], Insn::Jmp { off: 3, .. }), "{out:?}");
        assert!(matches!(out[2], Insn::Ja { off: 2, .. }), "{out:?}");
    }

    #[test]
    fn far_jumps_are_refused() {
        let mut a = Asm::default();
        let l = a.label();
        a.ja(l);
        for _ in 0..40_000 {
            a.emit(Insn::Exit);
        }
        a.bind(l);
        a.emit(Insn::Exit);
        assert_eq!(a.finish(), Err(AsmError::TooFar { slot: 0, distance: 40_000 }));
    }

    #[test]
    fn a_jump_over_a_jump_is_inverted() {
        let mut a = Asm::default();
        let (yes, no) = (a.label(), a.label());
        a.jmp(Width::W32, Cond::Eq, 7, Operand::Imm(1), yes);
        a.ja(no);
        a.bind(yes);
        a.ret(2);
        a.bind(no);
        a.ret(1);
        let out = a.finish().unwrap();
        assert_eq!(out.len(), 5);
        assert!(matches!(out[0], Insn::Jmp { cond: Cond::Ne, off: 2, .. }), "{out:?}");
        // `jset` has no inverse: kept as it is.
        let mut a = Asm::default();
        let (yes, no) = (a.label(), a.label());
        a.jmp(Width::W32, Cond::Set, 7, Operand::Imm(1), yes);
        a.ja(no);
        a.bind(yes);
        a.ret(2);
        a.bind(no);
        a.ret(1);
        assert_eq!(a.finish().unwrap().len(), 6);
    }
}
