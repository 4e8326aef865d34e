//! The interpreter, with the checks the paper's section 7 lists: "the interpreter verifies that
//! the instruction is valid, that it doesn't overflow or underflow the evaluation stack, and that
//! it doesn't refer to a field outside the current packet". Any failed check rejects the packet.
//!
//! **Semantics** (paper section 3.1 and Figure 9, and the BPF paper's description of CSPF):
//! * Each instruction first does its stack action, then its binary operator (if not `NOP`),
//!   which pops `T1` (top) and `T2` and pushes `R`. Comparisons push 1 or 0.
//! * The program runs to its end; the packet is accepted if the stack is then empty (the BPF
//!   paper: "if the top of stack has a non-zero value or the stack is empty") or its top is
//!   non-zero. The empty program accepts everything.
//! * Short-circuit operators (`COR`, `CAND`, `CNOR`, `CNAND`) compare `T1 == T2` and either
//!   return at once or continue. What they leave when they continue differs between the paper
//!   and its implementations, so it is a [`ShortCircuit`] setting: the paper says they "push the
//!   result R on the stack"; the `enet`/`pfmod` descendants pop both operands and push nothing.
//!   sift's compiler emits code whose verdict is the same under both.
//! * Packet words are 16-bit **big-endian** (network order): word `n` is bytes `2n` and `2n+1`.
//!   The paper's Figure 11 reads them that way (the low-order byte of word 3 is the Pup type,
//!   masked with `PUSH00FF`); the VAX implementation loaded host-order shorts and filter
//!   writers swapped their constants (`htons`). A word is inside the packet only if both of its
//!   bytes are, so, as the BPF paper notes, the last byte of an odd-length packet is out of reach.
//! * The program length is checked against [`Machine::max_words`] before running.

use crate::insn::{ACTION_BITS, ACTION_MASK, Action, Op};

/// What a short-circuit operator leaves on the stack when it does not return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ShortCircuit {
    /// The paper's Figure 9: pops `T1` and `T2`, pushes `R = (T1 == T2)`.
    #[default]
    PushResult,
    /// The `enet`/`pfmod` implementations: pops `T1` and `T2`, pushes nothing.
    Consume,
}

/// The machine a program runs on: its limits and dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Machine {
    /// Short-circuit operator semantics.
    pub short_circuit: ShortCircuit,
    /// Whether the indirect-push extension (`PUSHIND`, `ADD`, `SHR`) is enabled; without it
    /// those codes are invalid instructions.
    pub indirect: bool,
    /// The evaluation stack's depth in words (sift's choice: 64; the paper gives none).
    pub stack_depth: usize,
    /// The longest program in words (sift's choice: 255, what a one-byte length field holds, as
    /// in the descendants' `struct enfilter`; the paper gives none).
    pub max_words: usize,
}

/// The default stack depth.
pub const STACK_DEPTH: usize = 64;
/// The default program length limit in words.
pub const MAX_WORDS: usize = 255;

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            short_circuit: ShortCircuit::PushResult,
            indirect: false,
            stack_depth: STACK_DEPTH,
            max_words: MAX_WORDS,
        }
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The program ran to its end.
    Finished,
    /// A short-circuit operator returned at instruction `at` (word index).
    ShortCircuit {
        /// Word index of the instruction.
        at: usize,
    },
    /// A check failed (the packet is rejected).
    Fault(Fault),
}

/// A failed check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The program is longer than [`Machine::max_words`].
    TooLong,
    /// An invalid instruction word (unused code, extension disabled, or `PUSHLIT` at the end).
    BadInstruction {
        /// Word index.
        at: usize,
    },
    /// A push onto a full stack.
    StackOverflow {
        /// Word index.
        at: usize,
    },
    /// An operator (or `PUSHIND`) without enough operands.
    StackUnderflow {
        /// Word index.
        at: usize,
    },
    /// A packet word past the end of the packet.
    OutOfPacket {
        /// Word index of the instruction.
        at: usize,
        /// The packet word asked for.
        word: usize,
    },
}

/// The result of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Whether the packet is accepted.
    pub accept: bool,
    /// Instructions executed (a `PUSHLIT` and its literal count as one), including the one that
    /// returned or failed.
    pub executed: u32,
    /// Why it stopped.
    pub end: End,
}

fn packet_word(pkt: &[u8], n: usize) -> Option<u16> {
    let i = n.checked_mul(2)?;
    let b = pkt.get(i..i.checked_add(2)?)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

impl Machine {
    /// A machine with the extension enabled or not, otherwise the defaults.
    pub fn with_indirect(indirect: bool) -> Machine {
        Machine { indirect, ..Machine::default() }
    }

    /// Runs `words` over `pkt`. Never panics.
    pub fn run(&self, words: &[u16], pkt: &[u8]) -> Run {
        let fault = |executed, f| Run { accept: false, executed, end: End::Fault(f) };
        if words.len() > self.max_words {
            return fault(0, Fault::TooLong);
        }
        // A fixed-size stack as in the C original; `stack_depth` above 256 is clamped.
        let depth = self.stack_depth.min(256);
        let mut stack = [0u16; 256];
        let mut sp = 0usize;
        let mut pc = 0usize;
        let mut executed = 0u32;
        while pc < words.len() {
            let at = pc;
            let w = words[pc];
            pc += 1;
            executed += 1;
            let (action, op) =
                match (Action::from_code(w & ACTION_MASK), Op::from_code(w >> ACTION_BITS)) {
                    (Some(a), Some(o))
                        if self.indirect || !(a.is_extension() || o.is_extension()) =>
                    {
                        (a, o)
                    }
                    _ => return fault(executed, Fault::BadInstruction { at }),
                };
            let push = match action {
                Action::NoPush => None,
                Action::PushLit => {
                    let Some(&lit) = words.get(pc) else {
                        return fault(executed, Fault::BadInstruction { at });
                    };
                    pc += 1;
                    Some(lit)
                }
                Action::PushZero => Some(0),
                Action::PushOne => Some(1),
                Action::PushFfff => Some(0xffff),
                Action::PushFf00 => Some(0xff00),
                Action::Push00ff => Some(0x00ff),
                Action::PushWord(n) => match packet_word(pkt, usize::from(n)) {
                    Some(v) => Some(v),
                    None => {
                        return fault(executed, Fault::OutOfPacket { at, word: usize::from(n) });
                    }
                },
                Action::PushInd => {
                    if sp == 0 {
                        return fault(executed, Fault::StackUnderflow { at });
                    }
                    let n = usize::from(stack[sp - 1]);
                    match packet_word(pkt, n) {
                        Some(v) => stack[sp - 1] = v,
                        None => return fault(executed, Fault::OutOfPacket { at, word: n }),
                    }
                    None
                }
            };
            if let Some(v) = push {
                if sp >= depth {
                    return fault(executed, Fault::StackOverflow { at });
                }
                stack[sp] = v;
                sp += 1;
            }
            if op == Op::Nop {
                continue;
            }
            if sp < 2 {
                return fault(executed, Fault::StackUnderflow { at });
            }
            let t1 = stack[sp - 1];
            let t2 = stack[sp - 2];
            sp -= 2;
            let r = match op {
                Op::Nop => continue,
                Op::Eq => u16::from(t2 == t1),
                Op::Neq => u16::from(t2 != t1),
                Op::Lt => u16::from(t2 < t1),
                Op::Le => u16::from(t2 <= t1),
                Op::Gt => u16::from(t2 > t1),
                Op::Ge => u16::from(t2 >= t1),
                Op::And => t2 & t1,
                Op::Or => t2 | t1,
                Op::Xor => t2 ^ t1,
                Op::Add => t2.wrapping_add(t1),
                Op::Shr => t2.checked_shr(u32::from(t1)).unwrap_or(0),
                Op::Cor | Op::Cand | Op::Cnor | Op::Cnand => {
                    let equal = t1 == t2;
                    let ret = match op {
                        Op::Cor if equal => Some(true),
                        Op::Cand if !equal => Some(false),
                        Op::Cnor if equal => Some(false),
                        Op::Cnand if !equal => Some(true),
                        _ => None,
                    };
                    if let Some(accept) = ret {
                        return Run { accept, executed, end: End::ShortCircuit { at } };
                    }
                    match self.short_circuit {
                        ShortCircuit::PushResult => u16::from(equal),
                        ShortCircuit::Consume => continue,
                    }
                }
            };
            stack[sp] = r;
            sp += 1;
        }
        Run { accept: sp == 0 || stack[sp - 1] != 0, executed, end: End::Finished }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::{Insn, encode};

    fn run(m: &Machine, insns: &[Insn], pkt: &[u8]) -> Run {
        m.run(&encode(insns), pkt)
    }

    #[test]
    fn figure_11_pup_type_between_1_and_100() {
        // The paper's Figure 11 on a 3 Mb/s Ethernet Pup packet (type 2 in word 1).
        let f = [
            Insn::new(Action::PushWord(1), Op::Nop),
            Insn::lit(Op::Eq, 2),
            Insn::new(Action::PushWord(3), Op::Nop),
            Insn::new(Action::Push00ff, Op::And),
            Insn::new(Action::PushZero, Op::Gt),
            Insn::new(Action::PushWord(3), Op::Nop),
            Insn::new(Action::Push00ff, Op::And),
            Insn::lit(Op::Le, 100),
            Insn::new(Action::NoPush, Op::And),
            Insn::new(Action::NoPush, Op::And),
        ];
        assert_eq!(encode(&f).len(), 12, "the paper's length word says 12");
        let m = Machine::default();
        let mut pkt = [0u8; 8];
        pkt[3] = 2;
        for (ty, want) in [(0u8, false), (1, true), (100, true), (101, false)] {
            pkt[7] = ty;
            assert_eq!(run(&m, &f, &pkt).accept, want, "type {ty}");
            assert_eq!(run(&m, &f, &pkt).executed, 10);
        }
        pkt[3] = 3;
        pkt[7] = 5;
        assert!(!run(&m, &f, &pkt).accept);
    }

    #[test]
    fn figure_12_pup_dst_socket_35() {
        // The paper's Figure 12: DstSocket (words 7 and 8) first, short-circuited.
        let f = [
            Insn::new(Action::PushWord(8), Op::Nop),
            Insn::lit(Op::Cand, 35),
            Insn::new(Action::PushWord(7), Op::Nop),
            Insn::new(Action::PushZero, Op::Cand),
            Insn::new(Action::PushWord(1), Op::Nop),
            Insn::lit(Op::Eq, 2),
        ];
        assert_eq!(encode(&f).len(), 8, "the paper's length word says 8");
        let mut pkt = [0u8; 20];
        pkt[3] = 2;
        pkt[17] = 35;
        for sc in [ShortCircuit::PushResult, ShortCircuit::Consume] {
            let m = Machine { short_circuit: sc, ..Machine::default() };
            assert_eq!((run(&m, &f, &pkt).accept, run(&m, &f, &pkt).executed), (true, 6));
            let mut other = pkt;
            other[17] = 36;
            let r = run(&m, &f, &other);
            // Most packets stop after two instructions: the point of testing DstSocket first.
            assert_eq!((r.accept, r.executed, r.end), (false, 2, End::ShortCircuit { at: 1 }));
            other = pkt;
            other[3] = 3;
            assert!(!run(&m, &f, &other).accept);
        }
    }

    #[test]
    fn short_circuits_return_what_the_table_says() {
        let m = Machine::default();
        let prog = |op| [Insn::new(Action::PushOne, Op::Nop), Insn::new(Action::PushOne, op)];
        let ne = |op| [Insn::new(Action::PushOne, Op::Nop), Insn::new(Action::PushZero, op)];
        let sc = |r: Run| (r.accept, matches!(r.end, End::ShortCircuit { .. }));
        assert_eq!(sc(run(&m, &prog(Op::Cor), &[])), (true, true));
        assert_eq!(sc(run(&m, &ne(Op::Cor), &[])), (false, false));
        assert_eq!(sc(run(&m, &ne(Op::Cand), &[])), (false, true));
        assert_eq!(sc(run(&m, &prog(Op::Cand), &[])), (true, false));
        assert_eq!(sc(run(&m, &prog(Op::Cnor), &[])), (false, true));
        assert_eq!(sc(run(&m, &ne(Op::Cnor), &[])), (false, false));
        assert_eq!(sc(run(&m, &ne(Op::Cnand), &[])), (true, true));
        assert_eq!(sc(run(&m, &prog(Op::Cnand), &[])), (true, false));
        // Under the enet semantics nothing is left, and the empty stack accepts.
        let enet = Machine { short_circuit: ShortCircuit::Consume, ..m };
        assert_eq!(sc(run(&enet, &ne(Op::Cor), &[])), (true, false));
    }
}
