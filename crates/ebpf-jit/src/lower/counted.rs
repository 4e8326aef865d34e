//! Lowering a counted loop ([`crate::loops`]): the entry check of its accesses' ranges
//! and of the budget, the unchecked copy (accesses at the region's delta, the budget
//! charged at the exits, the head aligned) and the ordinary checked copy.

use sift_ebpf::EbpfInsn;
use sift_x86::{Label, Reg, Size};

use super::*;
use crate::loops::{self, Affine, CountedLoop, Rel};

/// An unchecked loop copy that charges the budget when it ends rather than at each back
/// edge: its entry checked that the budget covers every iteration, nothing in it can fault
/// (every access hoisted or in the frame) and its exits are forward jumps or the back
/// edge's fall-through, so charging `i · span` there, `i` the back edges taken, leaves the
/// budget exactly as the checked copy does. `i` comes from the counter `reg` of step `step`
/// (±1), saved at the entry: `reg = entry + step · i`, plus `step` past its update.
#[derive(Clone, Copy)]
pub(super) struct ExitCharge {
    reg: u8,
    step: i64,
    update: usize,
    span: i32,
    pub(super) back: usize,
}

/// The [`ExitCharge`] of counted loop `c`, if its back edge's counter is one register of
/// step ±1 and every jump in it leaves forward.
fn exit_charge(slots: &[EbpfInsn], c: &CountedLoop) -> Option<ExitCharge> {
    let x = &c.trip.x;
    let [reg] = x.regs[..] else { return None };
    let step = x.stride;
    // The counter's update: its one write in the body (an induction variable's).
    let update = (c.head..c.back).find(|&p| {
        let i = &slots[p];
        matches!(i.code, 0x07 | 0x17) && i.dst == reg
    })?;
    let forward = (c.head..c.back).all(|p| jump_target(p, &slots[p]).is_none_or(|t| t > c.back));
    let span = i32::try_from(c.back - c.head + 1).ok()?;
    (forward && x.off == step).then_some(ExitCharge { reg, step, update, span, back: c.back })
}

/// The run context's delta ([`delta`]) of a region of the inline checks.
pub(super) fn region_delta(region: usize) -> usize {
    match region {
        STACK => delta::STACK,
        MEM => delta::CTX,
        _ => delta::PACKET,
    }
}

/// Whether nothing in counted loop `c`'s body (unblinded) uses `r10`: every access is in
/// the frame or `hoisted` (no slow path, whose call into Rust clobbers it), no division
/// (which saves `rax` there), and no instruction reads eBPF `r10` as a value (which is
/// computed there).
fn r10_free(slots: &[EbpfInsn], c: &CountedLoop, hoisted: &[usize]) -> bool {
    (c.head..=c.back).all(|pc| {
        let i = &slots[pc];
        let (class, x, src) = (i.code & 7, i.code & 0x08 != 0, i.src & 0xf);
        let in_frame = |base: u8| {
            let size = 1i32 << [2, 1, 0, 3][usize::from((i.code >> 3) & 3)];
            base >= 10 && i32::from(i.off) >= -512 && i32::from(i.off) + size <= 0
        };
        match class {
            4 | 7 => !(matches!(i.code & 0xf0, 0x30 | 0x90) || (x && src >= 10)),
            1 => hoisted.contains(&pc) || in_frame(src),
            2 => hoisted.contains(&pc) || in_frame(i.dst & 0xf),
            3 => (hoisted.contains(&pc) || in_frame(i.dst & 0xf)) && src < 10,
            5 | 6 => !(x && src >= 10),
            _ => true,
        }
    })
}

impl Lower<'_> {
    /// A counted loop ([`crate::loops`]), entered at its head's label: the entry check of
    /// every hoisted access's range over all iterations, then the copy whose hoisted
    /// accesses are unchecked (`mov r11, [r12 + delta]; op [base + r11 + off]`, as verified
    /// code's), leaving by a jump past the back edge; the ordinary checked copy after it,
    /// where a failed check goes.
    pub(super) fn counted_loop(
        &mut self,
        c: &CountedLoop,
        p: &Source<'_>,
        guesses: &[Option<Prov>],
        sl: &SlotLabels,
        fl: &[Label],
    ) -> R {
        let checked = self.asm.new_label();
        let fast = self.asm.new_label();
        // Each hoisted access with its region (from the provenance guess), offset, size and
        // direction; a region without a fixed delta (map values) keeps its inline check.
        let mut hoisted = Vec::new();
        for h in &c.hoisted {
            let i = p.slots[h.pc];
            let region = match guesses[h.pc].unwrap_or(Prov::Unknown) {
                Prov::Stack => STACK,
                Prov::Mem | Prov::Unknown => MEM,
                Prov::Packet => PACKET,
                Prov::Map => continue,
            };
            let k = [2u32, 1, 0, 3][usize::from((i.code >> 3) & 3)];
            hoisted.push((h, region, i.off, k, i.code & 7 != 1));
        }
        if !hoisted.is_empty() && self.loop_entry(c, &hoisted, checked)? {
            let regions: Vec<usize> = hoisted.iter().map(|(_, r, ..)| *r).collect();
            self.delta_in_r10 = regions.iter().all(|&r| r == regions[0])
                && r10_free(p.slots, c, &hoisted.iter().map(|(h, ..)| h.pc).collect::<Vec<_>>());
            if self.delta_in_r10 {
                self.asm.mov(Size::Qword, Reg::R10, ctx(off::delta(region_delta(regions[0]))))?;
                self.exit_charge = exit_charge(p.slots, c).filter(|_| self.charging);
                if let Some(e) = self.exit_charge {
                    self.asm.mov(Size::Qword, ctx(off::LOOP_X), REGS[usize::from(e.reg)])?;
                }
            }
            let at = self.asm.new_label();
            self.asm.bind(at)?;
            self.asm.nops(self.pads.get(self.pad_points.len()).copied().unwrap_or(0));
            self.pad_points.push(at);
            self.asm.bind(fast)?;
            self.head = Some((c.head, fast));
            self.hoisted = hoisted.iter().map(|(h, r, ..)| (h.pc, *r)).collect();
            let mut pc = c.head;
            while pc <= c.back {
                pc = self.slot(pc, p, guesses, sl, fl)?;
            }
            self.hoisted.clear();
            self.delta_in_r10 = false;
            let after = sl.at(c.back, c.back + 1, p.slots[c.back].code)?;
            self.asm.jmp(after)?;
            for (label, pc, target) in std::mem::take(&mut self.exits) {
                self.asm.bind(label)?;
                self.charge_iterations(pc)?;
                self.asm.jmp(target)?;
            }
            self.exit_charge = None;
        }
        self.asm.bind(checked)?;
        self.head = Some((c.head, checked));
        let mut pc = c.head;
        while pc <= c.back {
            pc = self.slot(pc, p, guesses, sl, fl)?;
        }
        self.head = None;
        Ok(())
    }

    /// [`ExitCharge`]: charges the back edges the unchecked copy took when it leaves at
    /// slot `pc`.
    pub(super) fn charge_iterations(&mut self, pc: usize) -> R {
        let Some(e) = self.exit_charge else { return Ok(()) };
        let a = &mut self.asm;
        a.mov(Size::Qword, Reg::R11, REGS[usize::from(e.reg)])?;
        a.sub(Size::Qword, Reg::R11, ctx(off::LOOP_X))?;
        if pc > e.update {
            a.sub(Size::Qword, Reg::R11, e.step as i32)?;
        }
        if e.step < 0 {
            a.neg(Size::Qword, Reg::R11)?;
        }
        a.imul_imm(Size::Qword, Reg::R11, Reg::R11, i64::from(e.span))?;
        a.sub(Size::Qword, BUDGET, Reg::R11)?;
        Ok(())
    }

    /// `Σ regs + extra` of a form's entry values into `dst` (`false` when the constant
    /// does not fit an immediate).
    fn eval(&mut self, f: &Affine, extra: i64, dst: Reg) -> Result<bool, JitError> {
        let Ok(k) = i32::try_from(f.off + extra) else { return Ok(false) };
        match f.regs.split_first() {
            None => self.asm.mov(Size::Qword, dst, i64::from(k))?,
            Some((&first, rest)) => {
                self.asm.mov(Size::Qword, dst, REGS[usize::from(first)])?;
                for &r in rest {
                    self.asm.add(Size::Qword, dst, REGS[usize::from(r)])?;
                }
                if k != 0 {
                    self.asm.add(Size::Qword, dst, i64::from(k))?;
                }
            }
        }
        Ok(true)
    }

    /// The entry check of a counted loop: the bound `c` of its iterations into the run
    /// context, then for each hoisted access that its first and last iteration's
    /// addresses are inside its region (all between are: the address moves by a constant
    /// stride). Any failure, or `c` past 2³¹, goes to `checked`. `false` (and nothing
    /// emitted) when a constant does not fit an immediate.
    #[allow(clippy::type_complexity)]
    fn loop_entry(
        &mut self,
        c: &CountedLoop,
        hoisted: &[(&loops::Hoisted, usize, i16, u32, bool)],
        checked: Label,
    ) -> Result<bool, JitError> {
        let fits = |f: &Affine, extra: i64| i32::try_from(f.off + extra).is_ok();
        let base_of = |region: usize| match region {
            STACK => Some(STACK_BASE as i64),
            MEM => Some(MEM_BASE as i64),
            _ => None,
        };
        if !fits(&c.trip.x, 0)
            || !fits(&c.trip.y, 0)
            || hoisted
                .iter()
                .any(|(h, r, d, ..)| !fits(&h.base, i64::from(*d) - base_of(*r).unwrap_or(0)))
        {
            return Ok(false);
        }
        const LIMIT: i32 = i32::MAX;
        // c = the bound of the back edges taken, in r10.
        self.eval(&c.trip.x, 0, Reg::R11)?;
        self.eval(&c.trip.y, 0, Reg::R10)?;
        let a = &mut self.asm;
        let done = a.new_label();
        let zero = a.new_label();
        // `x <= MAX` and `x >= 0` hold whatever x is: such a loop ends only when its counter
        // wraps (or the budget runs out), past any bound c.
        match c.trip.rel {
            Rel::Le => {
                a.cmp(Size::Qword, Reg::R10, -1)?;
                a.jcc(Cond::E, checked)?;
            }
            Rel::Ge => {
                a.test(Size::Qword, Reg::R10, Reg::R10)?;
                a.jcc(Cond::E, checked)?;
            }
            _ => {}
        }
        match (c.trip.x.stride, c.trip.rel) {
            (1, Rel::Ne) => a.sub(Size::Qword, Reg::R10, Reg::R11)?,
            (-1, Rel::Ne) => {
                a.sub(Size::Qword, Reg::R11, Reg::R10)?;
                a.mov(Size::Qword, Reg::R10, Reg::R11)?;
            }
            (1, rel) => {
                // y - x0, 0 when x0 is past y (+1 for <=).
                a.sub(Size::Qword, Reg::R10, Reg::R11)?;
                a.jcc(Cond::B, zero)?;
                if rel == Rel::Le {
                    a.cmp(Size::Qword, Reg::R10, LIMIT)?;
                    a.jcc(Cond::A, checked)?;
                    a.add(Size::Qword, Reg::R10, 1)?;
                }
                a.jmp(done)?;
            }
            (_, rel) => {
                // x0 - y, 0 when x0 is below y (+1 for >=).
                a.sub(Size::Qword, Reg::R11, Reg::R10)?;
                a.jcc(Cond::B, zero)?;
                a.mov(Size::Qword, Reg::R10, Reg::R11)?;
                if rel == Rel::Ge {
                    a.cmp(Size::Qword, Reg::R10, LIMIT)?;
                    a.jcc(Cond::A, checked)?;
                    a.add(Size::Qword, Reg::R10, 1)?;
                }
                a.jmp(done)?;
            }
        }
        a.bind(zero)?;
        if c.trip.rel != Rel::Ne {
            a.xor(Size::Dword, Reg::R10, Reg::R10)?;
        }
        a.bind(done)?;
        a.cmp(Size::Qword, Reg::R10, LIMIT)?;
        a.jcc(Cond::A, checked)?;
        a.mov(Size::Qword, ctx(off::LOOP_N), Reg::R10)?;
        if self.charging {
            // The budget covers the span at each of the c + 1 arrivals at the back edge.
            let span = c.back - c.head + 1;
            let Ok(span) = i32::try_from(span) else { return Ok(false) };
            a.add(Size::Qword, Reg::R10, 1)?;
            a.imul_imm(Size::Qword, Reg::R10, Reg::R10, i64::from(span))?;
            a.cmp(Size::Qword, BUDGET, Reg::R10)?;
            a.jcc(Cond::B, checked)?;
        }
        for &(h, region, disp, k, write) in hoisted {
            let rb = off::region(region);
            let ok = ctx(rb + if write { off::OK_WRITE } else { off::OK } + 8 * k as i32);
            // The first iteration's offset into the region in r11.
            match base_of(region) {
                Some(b) => {
                    self.eval(&h.base, i64::from(disp) - b, Reg::R11)?;
                }
                None => {
                    self.eval(&h.base, i64::from(disp), Reg::R11)?;
                    self.asm.sub(Size::Qword, Reg::R11, ctx(rb + off::BASE))?;
                }
            }
            let a = &mut self.asm;
            a.cmp(Size::Qword, Reg::R11, ok)?;
            a.jcc(Cond::Ae, checked)?;
            // The last iteration's: stride · c further (|stride|, c < 2^31: no overflow).
            let s = h.base.stride;
            if s != 0 {
                a.mov(Size::Qword, Reg::R10, ctx(off::LOOP_N))?;
                a.imul_imm(Size::Qword, Reg::R10, Reg::R10, s.abs())?;
                if s > 0 {
                    a.add(Size::Qword, Reg::R10, Reg::R11)?;
                    a.cmp(Size::Qword, Reg::R10, ok)?;
                    a.jcc(Cond::Ae, checked)?;
                } else {
                    a.cmp(Size::Qword, Reg::R11, Reg::R10)?;
                    a.jcc(Cond::B, checked)?;
                }
            }
        }
        Ok(true)
    }
}
