//! Counted loops whose accesses are checked once per loop entry instead of once per
//! iteration: the range analysis of induction variables behind the lowering's loop
//! versioning.
//!
//! A loop here is the simplest kind compilers emit for `for (i = a; i < n; i++)`: slots
//! `head..=back`, `back` a conditional jump to `head`, the body straight-line (its other
//! jumps leave the loop; nothing else jumps into it; no calls, exits, atomics or legacy
//! loads). Every instruction of the body then runs once per completed iteration, so a
//! register written only by one `add`/`sub` of a constant is an *induction variable*
//! (`x = x₀ + s·i` at the start of iteration `i`), one not written is invariant, and a
//! register computed from them by moves and additions is an [`Affine`] form of the entry
//! values and `i`. When the back edge compares an induction variable of step ±1 with an
//! invariant, the entry values bound the iterations (`i ≤ c`, [`Trip`]), and each access
//! whose base is a form reaches, over all iterations, one range of addresses computable at
//! the loop's entry.
//!
//! The lowering checks those ranges at the entry ([`CountedLoop`]) and runs a copy of the
//! loop whose hoisted accesses are unchecked when they hold, the ordinary checked copy when
//! not: a loop whose accesses would fault runs the checked copy and faults where the
//! interpreter does. Both copies charge the budget alike.

use crate::lower::jump_target;
use sift_ebpf::EbpfInsn;

/// A value as a form of the loop's entry: `Σ regs + stride·i + off` (wrapping) in
/// iteration `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Affine {
    /// eBPF registers (`r0`–`r9`), their values at the loop's entry.
    pub regs: Vec<u8>,
    /// Per iteration.
    pub stride: i64,
    /// The constant part.
    pub off: i64,
}

/// The most registers a form adds (the lowering evaluates it with one instruction each).
const MAX_REGS: usize = 3;

/// Strides and offsets stay in `i32` (immediates of the checks).
const MAX_ABS: i64 = i32::MAX as i64;

impl Affine {
    fn reg(r: u8, stride: i64) -> Affine {
        Affine { regs: vec![r], stride, off: 0 }
    }

    fn constant(off: i64) -> Affine {
        Affine { regs: Vec::new(), stride: 0, off }
    }

    fn plus(&self, k: i64) -> Option<Affine> {
        let off = self.off.checked_add(k).filter(|o| o.abs() <= MAX_ABS)?;
        Some(Affine { off, ..self.clone() })
    }

    fn sum(&self, o: &Affine) -> Option<Affine> {
        let mut regs = self.regs.clone();
        regs.extend(&o.regs);
        let stride = self.stride.checked_add(o.stride).filter(|s| s.abs() <= MAX_ABS)?;
        let off = self.off.checked_add(o.off).filter(|s| s.abs() <= MAX_ABS)?;
        (regs.len() <= MAX_REGS).then_some(Affine { regs, stride, off })
    }
}

/// How the back edge continues, for an induction variable `x` and an invariant `y`:
/// while `x < y` (step +1), `x <= y`, `x != y`, or (step −1) `x > y`, `x >= y`, `x != y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rel {
    /// `x < y`.
    Lt,
    /// `x <= y`.
    Le,
    /// `x != y`.
    Ne,
    /// `x > y`.
    Gt,
    /// `x >= y`.
    Ge,
}

/// The bound of a loop's iterations: at the back edge `x` (a form of stride ±1) is
/// compared with `y` (a form of stride 0); the loop runs iterations `0..=c` at most, `c`
/// the number of back edges taken if no other jump leaves it:
///
/// * step +1: `c = y − x₀` when `x₀ < y` (else 0) for `<`; `y − x₀ + 1` when `x₀ ≤ y` for
///   `<=`; `y − x₀` (wrapping) for `!=`;
/// * step −1: the same with `x₀ − y`;
///
/// where `x₀` is `x` at the back edge in iteration 0. `x <= y` with `y` the largest value
/// and `x >= y` with `y` 0 always hold: those loops have no bound (the entry check refuses
/// them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trip {
    /// The induction side at the back edge.
    pub x: Affine,
    /// The invariant side.
    pub y: Affine,
    /// While what the loop continues.
    pub rel: Rel,
}

/// An access of a counted loop whose range the entry checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hoisted {
    /// The slot.
    pub pc: usize,
    /// Its base register's form at the access (the offset is the instruction's).
    pub base: Affine,
}

/// A counted loop (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CountedLoop {
    /// The first slot (the back edge's target).
    pub head: usize,
    /// The back edge.
    pub back: usize,
    /// The bound of its iterations.
    pub trip: Trip,
    /// The accesses to check at the entry (those whose base is a form), in slot order.
    pub hoisted: Vec<Hoisted>,
}

/// Whether slot `i` may be in a counted loop's body (before the back edge).
fn body_insn(i: &EbpfInsn) -> bool {
    match i.code & 7 {
        4 | 7 => true,
        1 => true,
        2 => true,
        3 => i.code & 0xe0 != 0xc0,                     // no atomics
        0 => i.code == 0x18,                            // lddw, not the legacy packet loads
        5 | 6 => !matches!(i.code & 0xf0, 0x80 | 0x90), // no calls, no exit
        _ => false,
    }
}

/// Whether slot `i` writes its `dst` register.
fn writes_dst(i: &EbpfInsn) -> bool {
    matches!(i.code & 7, 4 | 7 | 1) || i.code == 0x18
}

/// The counted loops of a program (`slots`, functions starting at `functions`).
pub(crate) fn find(slots: &[EbpfInsn], functions: &[usize]) -> Vec<CountedLoop> {
    let n = slots.len();
    // Slots some jump lands on, by how many jumps.
    let mut landed = vec![0u32; n + 1];
    for (pc, i) in slots.iter().enumerate() {
        if let Some(t) = jump_target(pc, i)
            && t <= n
        {
            landed[t] += 1;
        }
    }
    let mut out = Vec::new();
    for (back, i) in slots.iter().enumerate() {
        // A 64-bit conditional back edge.
        if i.code & 7 != 5 || matches!(i.code & 0xf0, 0x00 | 0x80 | 0x90) {
            continue;
        }
        let Some(head) = jump_target(back, i).filter(|&h| h <= back) else { continue };
        if let Some(l) = counted(slots, functions, &landed, head, back) {
            out.push(l);
        }
    }
    // Nested or overlapping candidates: keep the first of any overlap (the lowering
    // emits each slot once per copy).
    let mut kept: Vec<CountedLoop> = Vec::new();
    for l in out {
        if kept.iter().all(|k| l.head > k.back || l.back < k.head) {
            kept.push(l);
        }
    }
    kept
}

fn counted(
    slots: &[EbpfInsn],
    functions: &[usize],
    landed: &[u32],
    head: usize,
    back: usize,
) -> Option<CountedLoop> {
    // Nothing jumps into the body but the back edge (to the head, with any entry jumps).
    if (head + 1..=back).any(|p| landed[p] != 0) || back + 1 >= slots.len() {
        return None;
    }
    if functions.iter().any(|&f| f > head && f <= back) {
        return None;
    }
    let body = &slots[head..back];
    // The second halves of lddw are no instructions: walk instruction starts.
    let mut starts = Vec::new();
    let mut p = head;
    while p < back {
        starts.push(p);
        p += if slots[p].code == 0x18 { 2 } else { 1 };
    }
    if p != back || body.is_empty() {
        return None;
    }
    for &p in &starts {
        let i = &slots[p];
        if !body_insn(i) {
            return None;
        }
        // Jumps inside leave the loop.
        if let Some(t) = jump_target(p, i)
            && (head..=back).contains(&t)
        {
            return None;
        }
    }
    // Induction variables: written once, by adding or subtracting a constant.
    let mut writes = [0u32; 11];
    let mut step = [None::<i64>; 11];
    for &p in &starts {
        let i = &slots[p];
        if writes_dst(i) {
            let d = usize::from((i.dst & 0xf).min(10));
            writes[d] += 1;
            step[d] = match i.code {
                0x07 => Some(i64::from(i.imm)),
                0x17 => Some(-i64::from(i.imm)),
                _ => None,
            };
        }
    }
    let mut form: [Option<Affine>; 11] = Default::default();
    for r in 0..10u8 {
        let k = usize::from(r);
        form[k] = match (writes[k], step[k]) {
            (0, _) => Some(Affine::reg(r, 0)),
            (1, Some(s)) => Some(Affine::reg(r, s)),
            _ => None,
        };
    }
    let mut hoisted = Vec::new();
    for &p in &starts {
        let i = &slots[p];
        let d = usize::from((i.dst & 0xf).min(10));
        let s = usize::from((i.src & 0xf).min(10));
        let class = i.code & 7;
        let base = match class {
            1 => Some(s),
            2 | 3 => Some(d),
            _ => None,
        };
        if let Some(b) = base
            && let Some(f) = &form[b]
        {
            hoisted.push(Hoisted { pc: p, base: f.clone() });
        }
        if !writes_dst(i) {
            continue;
        }
        form[d] = match i.code {
            0xbf if i.off == 0 => form[s].clone(),
            0xb7 => Some(Affine::constant(i64::from(i.imm))),
            0x07 => form[d].as_ref().and_then(|f| f.plus(i64::from(i.imm))),
            0x17 => form[d].as_ref().and_then(|f| f.plus(-i64::from(i.imm))),
            0x0f => match (&form[d], &form[s]) {
                (Some(a), Some(b)) => a.sum(b),
                _ => None,
            },
            _ => None,
        };
    }
    let b = &slots[back];
    let lhs = form[usize::from((b.dst & 0xf).min(10))].clone()?;
    let rhs = if b.code & 0x08 != 0 {
        form[usize::from((b.src & 0xf).min(10))].clone()?
    } else {
        Affine::constant(i64::from(b.imm))
    };
    let op = b.code & 0xf0;
    // `dst op src`, as `x rel y` with x the induction side.
    let (x, y, rel) = match (lhs.stride, rhs.stride) {
        (1 | -1, 0) => {
            let rel = match op {
                0x20 => Rel::Gt,
                0x30 => Rel::Ge,
                0xa0 => Rel::Lt,
                0xb0 => Rel::Le,
                0x50 => Rel::Ne,
                _ => return None,
            };
            (lhs, rhs, rel)
        }
        (0, 1 | -1) => {
            let rel = match op {
                0x20 => Rel::Lt,
                0x30 => Rel::Le,
                0xa0 => Rel::Gt,
                0xb0 => Rel::Ge,
                0x50 => Rel::Ne,
                _ => return None,
            };
            (rhs, lhs, rel)
        }
        _ => return None,
    };
    // A counter counting away from its bound runs until it wraps: not counted.
    let fits = matches!(
        (x.stride, rel),
        (1, Rel::Lt | Rel::Le | Rel::Ne) | (-1, Rel::Gt | Rel::Ge | Rel::Ne)
    );
    if !fits || hoisted.is_empty() {
        return None;
    }
    Some(CountedLoop { head, back, trip: Trip { x, y, rel }, hoisted })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> EbpfInsn {
        EbpfInsn { code, dst, src, off, imm }
    }

    /// clang's memcpy loop (benches/kernels/memcpy.c).
    fn memcpy() -> Vec<EbpfInsn> {
        vec![
            insn(0xb7, 5, 0, 0, 0),  // 0: r5 = 0
            insn(0xbf, 0, 1, 0, 0),  // 1: r0 = r1
            insn(0x0f, 0, 4, 0, 0),  // 2: r0 += r4
            insn(0x79, 6, 1, 0, 0),  // 3: r6 = *(u64 *)(r1 + 0)
            insn(0x7b, 0, 6, 0, 0),  // 4: *(u64 *)(r0 + 0) = r6
            insn(0x07, 1, 0, 0, 8),  // 5: r1 += 8
            insn(0x07, 5, 0, 0, 1),  // 6: r5 += 1
            insn(0x2d, 2, 5, -7, 0), // 7: if r2 > r5 goto 1
            insn(0x95, 0, 0, 0, 0),
        ]
    }

    #[test]
    fn memcpy_is_counted_with_both_accesses_hoisted() {
        let l = find(&memcpy(), &[0]);
        assert_eq!(l.len(), 1);
        let l = &l[0];
        assert_eq!((l.head, l.back), (1, 7));
        assert_eq!(l.trip.rel, Rel::Lt);
        assert_eq!(l.trip.x, Affine { regs: vec![5], stride: 1, off: 1 });
        assert_eq!(l.trip.y, Affine { regs: vec![2], stride: 0, off: 0 });
        assert_eq!(l.hoisted[0], Hoisted { pc: 3, base: Affine::reg(1, 8) });
        assert_eq!(
            l.hoisted[1],
            Hoisted { pc: 4, base: Affine { regs: vec![1, 4], stride: 8, off: 0 } }
        );
    }

    #[test]
    fn loops_that_are_not_counted() {
        // A second write of the counter.
        let mut p = memcpy();
        p[2] = insn(0x0f, 5, 4, 0, 0);
        assert!(find(&p, &[0]).is_empty());
        // A jump into the body.
        let mut p = memcpy();
        p[0] = insn(0x05, 0, 0, 2, 0);
        assert!(find(&p, &[0]).is_empty());
        // Counting away from the bound.
        let mut p = memcpy();
        p[6] = insn(0x17, 5, 0, 0, 1);
        assert!(find(&p, &[0]).is_empty());
        // A helper call in the body.
        let mut p = memcpy();
        p[2] = insn(0x85, 0, 0, 0, 1);
        assert!(find(&p, &[0]).is_empty());
    }
}
