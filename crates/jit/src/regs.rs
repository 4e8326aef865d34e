//! Which machine registers hold the classic machine's state: a parameter of the lowering.
//!
//! The default is the assignment the JIT has always used (A in `eax`, X in `ecx`, the packet
//! pointer and captured length where System V passes them, the wire length moved from `edx`
//! to `r8d` out of `div`'s way, `r9`–`r11` as scratch): every register is caller-saved and
//! the arguments need one move. Any other assignment of distinct registers other than `rsp`
//! works too; the lowering then moves the arguments into place (resolving cycles with
//! `xchg`), saves and restores the callee-saved registers it uses, and works around the
//! registers `div` (`eax`, `edx`) and variable shifts (`cl`) insist on. The tests run random
//! programs under random assignments against the interpreter.
//!
//! The batch entry keeps its loop state (the current descriptor, the end of the descriptors,
//! the current result slot) in three more registers, by default the callee-saved `rbx`, `r14`
//! and `r15` (saved once per batch). They may be any registers but `rsp` and the eight, except
//! `rax`, `rcx` and `rdx`, which `div` and variable shifts borrow.

use sift_x86::Reg;

/// A register assignment for the classic machine. Build with [`Regs::new`] (which checks it)
/// or take the [`Default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Regs {
    a: Reg,
    x: Reg,
    packet: Reg,
    caplen: Reg,
    wirelen: Reg,
    scratch: [Reg; 3],
    /// The batch loop's state: current descriptor, end of the descriptors, result slot.
    batch: [Reg; 3],
}

/// Registers the batch loop may live in, in order of preference: callee-saved first (saved
/// once per batch, never clobbered), then the rest but those the lowering borrows.
const BATCH_CANDIDATES: [Reg; 12] = [
    Reg::Rbx,
    Reg::R14,
    Reg::R15,
    Reg::R12,
    Reg::R13,
    Reg::Rbp,
    Reg::Rdi,
    Reg::Rsi,
    Reg::R8,
    Reg::R9,
    Reg::R10,
    Reg::R11,
];

/// Registers an instruction sequence borrows (`div`: `eax`, `edx`; shifts by X: `cl`), which
/// the batch loop's state must not be in.
const BORROWED: [Reg; 4] = [Reg::Rax, Reg::Rcx, Reg::Rdx, Reg::Rsp];

impl Default for Regs {
    fn default() -> Regs {
        Regs {
            a: Reg::Rax,
            x: Reg::Rcx,
            packet: Reg::Rdi,
            caplen: Reg::Rsi,
            wirelen: Reg::R8,
            scratch: [Reg::R9, Reg::R10, Reg::R11],
            batch: [Reg::Rbx, Reg::R14, Reg::R15],
        }
    }
}

impl Regs {
    /// An assignment of A, X, the packet pointer, the captured length (64-bit), the wire
    /// length and three scratch registers; `None` unless all eight are distinct and none is
    /// `rsp` (which holds the stack frame). The batch loop gets the first three free
    /// registers of a preference list (see [`Regs::with_batch`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn new(
        a: Reg,
        x: Reg,
        packet: Reg,
        caplen: Reg,
        wirelen: Reg,
        scratch: [Reg; 3],
    ) -> Option<Regs> {
        let mut regs = Regs { a, x, packet, caplen, wirelen, scratch, batch: [Reg::Rsp; 3] };
        let all = regs.all();
        let distinct = all.iter().enumerate().all(|(i, r)| !all[..i].contains(r));
        if !distinct || all.contains(&Reg::Rsp) {
            return None;
        }
        // 12 candidates, at most 8 taken: three are always left.
        let mut free = BATCH_CANDIDATES.into_iter().filter(|r| !all.contains(r));
        for slot in &mut regs.batch {
            *slot = free.next()?;
        }
        Some(regs)
    }

    /// The same assignment with the batch loop's state (current descriptor, end of the
    /// descriptors, result slot) in `cursor`, `end` and `out`; `None` unless they are
    /// distinct, none of the eight, and none of `rax`, `rcx`, `rdx`, `rsp`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn with_batch(self, cursor: Reg, end: Reg, out: Reg) -> Option<Regs> {
        let batch = [cursor, end, out];
        let all = self.all();
        let ok = batch
            .iter()
            .enumerate()
            .all(|(i, r)| !batch[..i].contains(r) && !all.contains(r) && !BORROWED.contains(r));
        ok.then_some(Regs { batch, ..self })
    }

    /// The batch loop's current descriptor.
    pub fn cursor(&self) -> Reg {
        self.batch[0]
    }

    /// The end of the batch's descriptors.
    pub fn end(&self) -> Reg {
        self.batch[1]
    }

    /// The batch loop's current result slot.
    pub fn out(&self) -> Reg {
        self.batch[2]
    }

    /// The accumulator A (32 bits used).
    pub fn a(&self) -> Reg {
        self.a
    }

    /// The index register X (32 bits used).
    pub fn x(&self) -> Reg {
        self.x
    }

    /// The packet pointer.
    pub fn packet(&self) -> Reg {
        self.packet
    }

    /// The captured length, as a 64-bit number.
    pub fn caplen(&self) -> Reg {
        self.caplen
    }

    /// The wire length (32 bits used).
    pub fn wirelen(&self) -> Reg {
        self.wirelen
    }

    /// The first scratch register that is none of `avoid` (three scratch registers and at
    /// most two to avoid: there always is one).
    pub fn scratch_except(&self, avoid: &[Reg]) -> Reg {
        self.scratch.iter().copied().find(|r| !avoid.contains(r)).unwrap_or(self.scratch[2])
    }

    /// Scratch register `i` (0–2).
    pub fn scratch(&self, i: usize) -> Reg {
        self.scratch[i % 3]
    }

    /// The registers that hold state across instructions (A excepted): what a sequence that
    /// borrows a fixed register (`div`, shifts by `cl`) must preserve.
    pub fn live_besides_a(&self) -> [Reg; 4] {
        [self.x, self.packet, self.caplen, self.wirelen]
    }

    /// All eight registers of the classic machine (the batch loop's are apart).
    pub fn all(&self) -> [Reg; 8] {
        let [s0, s1, s2] = self.scratch;
        [self.a, self.x, self.packet, self.caplen, self.wirelen, s0, s1, s2]
    }
}

#[cfg(test)]
mod tests {
    //! Random programs under many register assignments, run natively and by the interpreter.

    use sift_verify::{Mode, validate};
    use sift_vm::testgen::{self, GenConfig, Rng};
    use sift_vm::{Interpreter, PacketRef};
    use sift_x86::Reg;

    use super::Regs;
    use crate::JitFilter;

    /// Eight distinct registers other than rsp, drawn with `rng`, and three more for the
    /// batch loop, drawn from those left (half of the time; else the preferred ones).
    fn random_regs(rng: &mut Rng) -> Regs {
        let mut pool: Vec<Reg> = Reg::ALL.into_iter().filter(|&r| r != Reg::Rsp).collect();
        for i in (1..pool.len()).rev() {
            pool.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        let regs =
            Regs::new(pool[0], pool[1], pool[2], pool[3], pool[4], [pool[5], pool[6], pool[7]])
                .expect("distinct, no rsp");
        if rng.next_u64().is_multiple_of(2) {
            return regs;
        }
        let left: Vec<Reg> = pool[8..]
            .iter()
            .copied()
            .filter(|r| ![Reg::Rax, Reg::Rcx, Reg::Rdx].contains(r))
            .collect();
        regs.with_batch(left[0], left[1], left[2]).expect("free registers")
    }

    #[test]
    fn assignments_are_checked() {
        use Reg::*;
        assert!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, R11]).is_some());
        assert_eq!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, R11]), Some(Regs::default()));
        assert!(Regs::new(Rax, Rax, Rdi, Rsi, R8, [R9, R10, R11]).is_none());
        assert!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, Rsp]).is_none());
        let d = Regs::default();
        assert_eq!([d.cursor(), d.end(), d.out()], [Rbx, R14, R15]);
        assert!(d.with_batch(R12, R13, Rbp).is_some());
        assert!(d.with_batch(R12, R12, Rbp).is_none(), "distinct");
        assert!(d.with_batch(R12, R13, Rdi).is_none(), "not one of the eight");
        assert!(d.with_batch(R12, R13, Rdx).is_none(), "not borrowed by div");
        // The eight in callee-saved registers: the batch loop takes caller-saved ones.
        let high = Regs::new(Rbx, R12, R13, R14, R15, [Rbp, Rdi, Rsi]).unwrap();
        assert_eq!([high.cursor(), high.end(), high.out()], [R8, R9, R10]);
    }

    #[test]
    fn every_register_assignment_gives_the_interpreters_results() {
        use Reg::*;
        let mut rng = Rng::new(0x5EED_00A5);
        let mut assignments = vec![
            Regs::default(),
            // The arguments in a cycle (packet ← rsi ← … ← rdi), A in rdx (div's other
            // half), X in rax, the wire length in rcx (the shift count), callee-saved scratch
            // with the r12/r13 encodings.
            Regs::new(Rdx, Rax, Rsi, Rdi, Rcx, [Rbx, R12, R13]).unwrap(),
            // A in rcx, X elsewhere: shifts trade them through rcx.
            Regs::new(Rcx, R15, Rbp, R13, R12, [Rdx, Rax, R14]).unwrap(),
            // The batch loop in registers whose encodings as a base differ (r12: SIB; rbp,
            // r13: displacement).
            Regs::default().with_batch(R12, R13, Rbp).unwrap(),
            // The batch loop's cursor and end in each other's argument registers (a cycle).
            Regs::new(Rbx, R12, R13, R14, R15, [Rbp, Rax, Rcx])
                .and_then(|r| r.with_batch(Rsi, Rdi, R8))
                .unwrap(),
        ];
        assignments.extend((0..150).map(|_| random_regs(&mut rng)));
        let mut pairs = 0u64;
        for regs in &assignments {
            for cfg in [GenConfig::libpcap(), GenConfig::linux()] {
                for _ in 0..200 {
                    let prog = testgen::program(&mut rng, &cfg);
                    let Ok(v) = validate(&prog, Mode::Libpcap) else { continue };
                    let jit = JitFilter::compile_with(&v, regs).expect("compiles");
                    let interp = Interpreter::new(&v);
                    let packets: Vec<(Vec<u8>, u32)> =
                        (0..4).map(|_| testgen::packet(&mut rng)).collect();
                    let mut want = Vec::new();
                    for (pkt, wire) in &packets {
                        want.push(interp.run(pkt, *wire));
                        assert_eq!(
                            jit.run(pkt, *wire),
                            interp.run(pkt, *wire),
                            "{regs:?}\n{}",
                            sift_insn::asm::disassemble(&prog)
                        );
                        pairs += 1;
                    }
                    let batch: Vec<PacketRef<'_>> =
                        packets.iter().map(|(p, w)| PacketRef::new(p, *w)).collect();
                    let mut got = Vec::new();
                    jit.run_batch(&batch, &mut got);
                    assert_eq!(
                        got,
                        want,
                        "batch, {regs:?}\n{}",
                        sift_insn::asm::disassemble(&prog)
                    );
                }
            }
        }
        eprintln!(
            "{} register assignments, {pairs} (program, packet) pairs, 0 mismatches",
            assignments.len()
        );
    }
}
