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
}

impl Default for Regs {
    fn default() -> Regs {
        Regs {
            a: Reg::Rax,
            x: Reg::Rcx,
            packet: Reg::Rdi,
            caplen: Reg::Rsi,
            wirelen: Reg::R8,
            scratch: [Reg::R9, Reg::R10, Reg::R11],
        }
    }
}

impl Regs {
    /// An assignment of A, X, the packet pointer, the captured length (64-bit), the wire
    /// length and three scratch registers; `None` unless all eight are distinct and none is
    /// `rsp` (which holds the stack frame).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn new(
        a: Reg,
        x: Reg,
        packet: Reg,
        caplen: Reg,
        wirelen: Reg,
        scratch: [Reg; 3],
    ) -> Option<Regs> {
        let regs = Regs { a, x, packet, caplen, wirelen, scratch };
        let all = regs.all();
        let distinct = all.iter().enumerate().all(|(i, r)| !all[..i].contains(r));
        (distinct && !all.contains(&Reg::Rsp)).then_some(regs)
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

    /// All eight registers.
    pub fn all(&self) -> [Reg; 8] {
        let [s0, s1, s2] = self.scratch;
        [self.a, self.x, self.packet, self.caplen, self.wirelen, s0, s1, s2]
    }
}

#[cfg(test)]
mod tests {
    //! Random programs under many register assignments, run natively and by the interpreter.

    use sift_verify::{Mode, validate};
    use sift_vm::Interpreter;
    use sift_vm::testgen::{self, GenConfig, Rng};
    use sift_x86::Reg;

    use super::Regs;
    use crate::JitFilter;

    /// Eight distinct registers other than rsp, drawn with `rng`.
    fn random_regs(rng: &mut Rng) -> Regs {
        let mut pool: Vec<Reg> = Reg::ALL.into_iter().filter(|&r| r != Reg::Rsp).collect();
        for i in (1..pool.len()).rev() {
            pool.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        Regs::new(pool[0], pool[1], pool[2], pool[3], pool[4], [pool[5], pool[6], pool[7]])
            .expect("distinct, no rsp")
    }

    #[test]
    fn assignments_are_checked() {
        use Reg::*;
        assert!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, R11]).is_some());
        assert_eq!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, R11]), Some(Regs::default()));
        assert!(Regs::new(Rax, Rax, Rdi, Rsi, R8, [R9, R10, R11]).is_none());
        assert!(Regs::new(Rax, Rcx, Rdi, Rsi, R8, [R9, R10, Rsp]).is_none());
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
                    for _ in 0..4 {
                        let (pkt, wire) = testgen::packet(&mut rng);
                        assert_eq!(
                            jit.run(&pkt, wire),
                            interp.run(&pkt, wire),
                            "{regs:?}\n{}",
                            sift_insn::asm::disassemble(&prog)
                        );
                        pairs += 1;
                    }
                }
            }
        }
        eprintln!(
            "{} register assignments, {pairs} (program, packet) pairs, 0 mismatches",
            assignments.len()
        );
    }
}
