//! `protochain`'s walk as a bounded loop (the kernel's verifier accepts those since 5.3).
//!
//! **Why it exists.** Classic BPF has no bounded loop, so a program for the kernel carries the
//! walk unrolled, a few hundred instructions per header step's worth of depth; eBPF can loop,
//! so the walk is one step's code and a counter. The verifier walks every iteration (the
//! counter is a known constant), so the bound is what it was: the unrolled depth of the
//! classic program ([`Steps::Unrolled`]), or, for a program with libpcap's loop, a fixed bound
//! after which the walk ends the program with 0 as libpcap's loop does when its budget runs out
//! ([`Steps::Looped`]).
//!
//! One step, from the header value in A and its offset in X (see [`crate::walk`] for the
//! classic code it reproduces, result for result, `M[slot]` included):
//!
//! ```text
//! head:  A == v or A == 59 (no next header)      → out
//!        IPv6: A in {0, 60, 43, 44} (options, routing, fragment), or A == 51 (AH) → advance
//!        IPv4: A == 51                           → advance
//!        else                                    → out
//! advance: b0, b1 = P[x + nl], P[x + nl + 1]     (one bounds check or copy for both)
//!        X = AH ? (b1 + 2) * 4 : X + (b1 + 1) * 8
//!        A = M[slot] = b0
//!        X through the stack (see below)
//!        if --counter != 0 goto head
//! exhausted: Unrolled: A = (A == v) ? v : !v     Looped: head's tests, advancing → return 0
//! out:
//! ```
//!
//! **The verifier's cost.** The kernel's verifier explores each iteration, and it prunes a
//! state only against one whose ranges contain it. X's range after a step depends on the
//! headers before (an AH step resets X, an extension step adds to it), so with X kept in a
//! register every history of AH positions is a state of its own: O(n²) states, beyond the
//! verifier's million instructions at the depths classic programs unroll to. Passing X through
//! a stack word the verifier does not track (not 8-byte aligned: bytes of unknown value, not a
//! spilled register) makes it an unknown 32-bit number at every head; the step's bounds check
//! bounds it again. Each iteration is then one state: `ip6 protochain 6` at XDP (145 steps)
//! verifies in 11,085 instructions processed by the kernel and 29,761 by sift's verifier
//! (which has no liveness analysis, hence also the zeroed counter after the walk).

use sift_ebpf::Reg;
use sift_ebpf::isa::{AluOp as EAlu, Cond, ImmKind, Insn, Operand, Width};
use sift_ebpf::reg::{R0, R2, R4, R9, R10};

use super::asm::Label;
use super::lower::{A, DATA, DATA_END, IND, Lowering, Steps, WALK_BUF, WALK_X, X, mem, mov32};
use super::plan::Access;
use crate::r#gen::ipproto as proto;
use crate::walk::Walk;

fn jeq(l: &mut Lowering<'_>, k: u32, to: Label) {
    l.asm.jmp(Width::W32, Cond::Eq, A, Operand::Imm(k as i32), to);
}

/// The headers an IPv6 walk advances over, as bits of a 64-bit mask (all below 64).
const ADVANCE_MASK: u64 = 1 << proto::HOPOPTS
    | 1 << proto::DSTOPTS
    | 1 << proto::ROUTING
    | 1 << proto::FRAGMENT
    | 1 << proto::AH;

/// The step's tests: falls through when the walk advances, else goes to `out`. IPv6 tests the
/// five headers at once (`ADVANCE_MASK >> A & 1`), so A stays one unknown value for the
/// verifier rather than five constants, each a path of its own.
fn tests(l: &mut Lowering<'_>, walk: &Walk, out: Label) {
    jeq(l, walk.want, out);
    if walk.ipv6 {
        l.asm.jmp(Width::W32, Cond::Gt, A, Operand::Imm(63), out);
        l.asm.emit(Insn::LdImm64 { dst: R0, kind: ImmKind::Imm, imm: ADVANCE_MASK });
        l.asm.emit(Insn::Alu { width: Width::W64, op: EAlu::Rsh, dst: R0, src: Operand::Reg(A) });
        l.asm.emit(Insn::Alu { width: Width::W32, op: EAlu::And, dst: R0, src: Operand::Imm(1) });
        l.asm.jmp(Width::W32, Cond::Eq, R0, Operand::Imm(0), out);
    } else {
        l.asm.jmp(Width::W32, Cond::Ne, A, Operand::Imm(proto::AH as i32), out);
    }
}

/// Lowers one walk (see the module documentation).
pub(crate) fn lower(l: &mut Lowering<'_>, walk: &Walk, access: Access) {
    let (steps, looped) = match l.steps() {
        Steps::Unrolled(n) => (n, false),
        Steps::Looped(n) => (n, true),
    };
    let out = l.asm.label();
    let fail = l.fail();
    // The step reads the header's first two bytes.
    let end = u64::from(walk.nl) + 2;
    let can_advance = end <= access.limit();
    let counter: Reg = match access {
        Access::Direct { .. } => R4,
        Access::Copy => R9,
    };
    if steps > 0 {
        let head = l.asm.label();
        l.asm.emit(Insn::Alu {
            width: Width::W64,
            op: EAlu::Mov,
            dst: counter,
            src: Operand::Imm(i32::try_from(steps).unwrap_or(i32::MAX)),
        });
        l.asm.bind(head);
        tests(l, walk, out);
        if !can_advance {
            // No packet reaches the header's bytes: every advance fails, the loop never
            // comes round.
            l.asm.ja(fail);
            l.asm.bind(out);
            return;
        }
        step(l, walk, access, end);
        // X through the stack: the verifier sees an unknown 32-bit value at every head, whatever
        // the headers before, so the iterations' states prune one another.
        let w = sift_ebpf::Size::W;
        l.asm.emit(Insn::Store { size: w, dst: R10, off: WALK_X, src: Operand::Reg(X) });
        l.asm.emit(Insn::Load { size: w, dst: X, src: R10, off: WALK_X });
        l.asm.emit(Insn::Alu {
            width: Width::W64,
            op: EAlu::Sub,
            dst: counter,
            src: Operand::Imm(1),
        });
        l.asm.jmp(Width::W64, Cond::Ne, counter, Operand::Imm(0), head);
    }
    if looped {
        // libpcap's loop would go on past the bound: its budget ends the program with 0.
        tests(l, walk, out);
        l.asm.ja(fail);
    } else {
        jeq(l, walk.want, out);
        l.asm.emit(mov32(A, !walk.want));
    }
    l.asm.bind(out);
    if steps > 0 && can_advance {
        // The counter and the mask test's scratch differ from one iteration's exit to the
        // next, and nothing reads them after the walk: zeroed, they let a verifier without
        // liveness analysis (sift's) prune what follows the walk instead of exploring it once
        // per iteration.
        l.asm.emit(mov32(counter, 0));
        l.asm.emit(mov32(R0, 0));
    }
}

/// One advance, from A (the header) and X (where it starts); `end` = `nl + 2`. A is
/// scratch until b0 is loaded last, so no other register carries a value from one step to the
/// next (the verifier's states at the head stay alike).
fn step(l: &mut Lowering<'_>, walk: &Walk, access: Access, end: u64) {
    let b = sift_ebpf::Size::B;
    let nl = u64::from(walk.nl);
    // Where b0 and b1 are: a base register and b0's displacement.
    let (base, off): (Reg, i64) = match access {
        Access::Direct { .. } => {
            let fail = l.fail();
            let limit = access.limit() - end;
            let mov = |dst, src| Insn::Alu { width: Width::W64, op: EAlu::Mov, dst, src };
            let add = |dst, src| Insn::Alu { width: Width::W64, op: EAlu::Add, dst, src };
            l.asm.jmp(Width::W64, Cond::Gt, X, Operand::Imm(limit as i32), fail);
            l.asm.emit(mov(IND, Operand::Reg(DATA)));
            l.asm.emit(add(IND, Operand::Reg(X)));
            l.asm.emit(mov(R2, Operand::Reg(IND)));
            l.asm.emit(add(R2, Operand::Imm(end as i32)));
            l.asm.jmp(Width::W64, Cond::Gt, R2, Operand::Reg(DATA_END), fail);
            if nl < i16::MAX as u64 {
                (IND, nl as i64)
            } else {
                l.asm.emit(add(IND, Operand::Imm(nl as i32)));
                (IND, 0)
            }
        }
        Access::Copy => {
            l.copy(Some(None), nl, end, WALK_BUF);
            (R10, i64::from(WALK_BUF))
        }
    };
    let at = |d: i64| (off + d) as i16;
    let alu = |op, dst, k| Insn::Alu { width: Width::W32, op, dst, src: Operand::Imm(k) };
    if walk.ipv6 {
        let ah = l.asm.label();
        let join = l.asm.label();
        jeq(l, proto::AH, ah);
        // An extension header: X += (b1 + 1) * 8.
        l.asm.emit(Insn::Load { size: b, dst: A, src: base, off: at(1) });
        l.asm.emit(alu(EAlu::Add, A, 1));
        l.asm.emit(alu(EAlu::Lsh, A, 3));
        l.asm.emit(Insn::Alu { width: Width::W32, op: EAlu::Add, dst: X, src: Operand::Reg(A) });
        l.asm.ja(join);
        l.asm.bind(ah);
        ah_length(l, base, at(1));
        l.asm.bind(join);
    } else {
        ah_length(l, base, at(1));
    }
    // A = M[slot] = b0.
    l.asm.emit(Insn::Load { size: b, dst: A, src: base, off: at(0) });
    l.asm.emit(Insn::Store {
        size: sift_ebpf::Size::W,
        dst: R10,
        off: mem(walk.slot),
        src: Operand::Reg(A),
    });
}

/// After AH, libpcap's walk takes the AH length alone as the next offset: X = (b1 + 2) * 4.
fn ah_length(l: &mut Lowering<'_>, base: Reg, b1: i16) {
    let alu = |op, k| Insn::Alu { width: Width::W32, op, dst: X, src: Operand::Imm(k) };
    l.asm.emit(Insn::Load { size: sift_ebpf::Size::B, dst: X, src: base, off: b1 });
    l.asm.emit(alu(EAlu::Add, 2));
    l.asm.emit(alu(EAlu::Lsh, 2));
}
