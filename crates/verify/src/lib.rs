//! Classic BPF validators: which programs may run, and if not, which instruction is wrong.
//!
//! Two rule sets exist in the wild and sift needs both:
//!
//! * [`Mode::Libpcap`] accepts what libpcap's `bpf_validate` accepts (any length ≥ 1, last
//!   instruction RET, memory indices < 16, no division by constant 0, jumps in range), **minus
//!   what would make libpcap's interpreter abort or loop**:
//!   - opcodes outside the 49 known ones ([`Reason::UnknownOpcode`]). `bpf_validate` checks only
//!     the class and the op/mode bits, so codes such as `0x0e` (`ret x`), `0x8c` (`neg|x`),
//!     `0x0d` (`ja|x`), `0xb0` (`ld` with MSH mode), `0x18` (`ld` with H size and IMM mode), unknown
//!     RET/MISC variants and any code with bits 8..15 set pass it and then reach `abort()` in
//!     `bpf_filter`;
//!   - backward `ja` ([`Reason::JumpBackward`]): `bpf_validate` computes `i + 1 + k` in 32-bit
//!     unsigned arithmetic, so a `k` that wraps around passes and `ja -1` loops forever.
//!
//!   These are the only differences; the test suite checks it against the system libpcap.
//! * [`Mode::LibpcapLoops`] is `bpf_validate` itself for jumps: like [`Mode::Libpcap`], but a
//!   `ja` may also jump backward (its offset wraps around in 32 bits, as `bpf_validate` computes
//!   it) as long as it lands inside the program. libpcap's own `protochain` is such a loop, and
//!   sift's compiler emits it for its own engines. Whether such a program ends is not decidable
//!   here, so the guarantee moves to the engines: `sift-vm` and `sift-jit` charge every backward
//!   jump its distance against a per-packet [`LOOP_BUDGET`] and end the run with 0 when it is
//!   spent. Conditional jumps stay forward (their offsets are 8-bit and unsigned anyway).
//! * [`Mode::Linux`] accepts exactly what the kernel's `bpf_check_classic` accepts through
//!   `SO_ATTACH_FILTER`: 1..=4096 instructions, the 49-opcode whitelist, jumps forward and in
//!   range, the last instruction a RET, shifts by constants < 32, no division or modulo by
//!   constant 0, `M[k]` with k < 16, absolute loads at or above `SKF_AD_OFF` only at known
//!   ancillary offsets, and no read of `M[k]` on a path that has not written it (the kernel's
//!   `check_load_and_stores`, reproduced including its quirks). Tested against the running kernel.
//!
//! A successful check returns [`Validated`], which only this crate can construct: engines
//! (`sift-vm`, the JITs) take a `&Validated` and may rely on its guarantees (known opcodes,
//! in-range jumps, RET last, memory indices < 16, no constant division by zero) without
//! re-checking. A program validated under [`Mode::LibpcapLoops`] may hold backward `ja`s
//! ([`Validated::is_acyclic`] says whether it does), which only engines that bound loops may
//! run; what cannot loop — the kernel's `SO_ATTACH_FILTER`, the eBPF translation — takes an
//! [`Acyclic`] program, a [`Validated`] one whose every jump goes forward, which only
//! [`Validated::into_acyclic`] makes. Errors carry the instruction index and a typed [`Reason`].
//!
//! **The loop budget.** A backward `ja` from instruction `i` to `t` charges `i + 1 - t` (at
//! least 1) against [`LOOP_BUDGET`]; the jump that would overdraw it ends the run with 0
//! instead. Every instruction that is not a backward jump moves the program counter forward,
//! so a run executes at most the program's length plus the budget instructions in all: a
//! hostile program cannot hang an engine, and a long one costs at most some 30 ms.
#![forbid(unsafe_code)]

use sift_insn::code::{self, BPF_MAXINSNS, BPF_MEMWORDS, SKF_AD_OFF};
use sift_insn::{Insn, Opcode, Program};
use std::fmt;

/// How much backward jumping one run of a program may do, in instructions jumped back over:
/// a backward `ja` from instruction `i` to `t` charges `i + 1 - t`, and the jump that would
/// take the total past this budget ends the run with 0 instead (see the crate documentation).
/// Engines that run [`Mode::LibpcapLoops`] programs (`sift-vm`, `sift-jit`) enforce it
/// identically.
///
/// **Why 2^25.** The only loops sift emits are libpcap's `protochain` walks: one backward
/// jump per header, of 15 instructions (an IPv6 extension header) or 28 (an AH header). A
/// walk that ends never visits the same offset twice (the next state is a function of the
/// offset), every offset it visits is a multiple of 4 (IPv6 starts at 40; extension headers
/// advance by multiples of 8, libpcap's AH step lands on `(len + 2) * 4`; IPv4 starts at its
/// header length), and each must leave two bytes to load: so at most 65,536 rounds on a
/// 256 KiB packet, 1.8 M instructions jumped back over at 28 each, 14.7 M for the 8 walks a
/// filter may hold. 2^25 (33.5 M) is more than twice that, while a run of any program ends
/// after its length plus 2^25 instructions (some 30 ms in the interpreter).
pub const LOOP_BUDGET: u32 = 1 << 25;

/// Which rule set to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// libpcap's `bpf_validate`, minus codes that abort and backward jumps.
    Libpcap,
    /// libpcap's `bpf_validate`, minus codes that abort: backward `ja` allowed (libpcap's
    /// `protochain` loop). Engines bound every run with [`LOOP_BUDGET`].
    LibpcapLoops,
    /// The Linux kernel's `bpf_check_classic` (what `SO_ATTACH_FILTER` accepts).
    Linux,
}

/// Why a program was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// The program has no instructions.
    Empty,
    /// Longer than the kernel's 4096 instructions (Linux mode only).
    TooLong {
        /// The program's length.
        len: usize,
    },
    /// An opcode outside the 49 known ones.
    UnknownOpcode(u16),
    /// A `ja` whose target lies before the next instruction (its offset wraps around): refused
    /// by every mode but [`Mode::LibpcapLoops`].
    JumpBackward,
    /// A jump target at or past the end of the program.
    JumpOutOfRange {
        /// The target index (may be far past the end).
        target: u64,
    },
    /// `M[k]` with k ≥ 16.
    MemoryIndex(u32),
    /// `div #0` or `mod #0`.
    DivisionByZero,
    /// `lsh #k`/`rsh #k` with k ≥ 32 (Linux mode only).
    ShiftTooLarge(u32),
    /// An absolute load at `SKF_AD_OFF + off` where `off` is not a known ancillary offset
    /// (Linux mode only; `k` is the load's operand).
    UnknownAncillary(u32),
    /// A read of `M[k]` that some path reaches before any store to `M[k]` (Linux mode only).
    UninitializedMemory(u32),
    /// The last instruction is not a RET.
    LastNotRet,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reason::Empty => write!(f, "the program is empty"),
            Reason::TooLong { len } => {
                write!(f, "{len} instructions; Linux allows at most {BPF_MAXINSNS}")
            }
            Reason::UnknownOpcode(c) => write!(f, "unknown opcode 0x{c:x}"),
            Reason::JumpBackward => write!(f, "jump goes backward"),
            Reason::JumpOutOfRange { target } => {
                write!(f, "jump target {target} is past the end of the program")
            }
            Reason::MemoryIndex(k) => {
                write!(f, "scratch memory index {k} is not below {BPF_MEMWORDS}")
            }
            Reason::DivisionByZero => write!(f, "division by constant zero"),
            Reason::ShiftTooLarge(k) => write!(f, "shift by constant {k} is not below 32"),
            Reason::UnknownAncillary(k) => write!(f, "unknown ancillary offset {k:#x}"),
            Reason::UninitializedMemory(k) => write!(f, "M[{k}] may be read before it is written"),
            Reason::LastNotRet => write!(f, "the last instruction is not a return"),
        }
    }
}

/// A refused program: which instruction, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValidationError {
    /// The index of the offending instruction (0 for an empty program; 4096 for one too long).
    pub index: usize,
    /// What is wrong with it.
    pub reason: Reason,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "instruction {}: {}", self.index, self.reason)
    }
}

impl std::error::Error for ValidationError {}

/// A program that passed validation in some [`Mode`]. Only [`validate`] creates one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validated {
    insns: Box<[Insn]>,
    mode: Mode,
    /// Whether some `ja` jumps backward (only under [`Mode::LibpcapLoops`]).
    loops: bool,
}

impl Validated {
    /// The instructions. Guaranteed: non-empty, every opcode known, every jump inside the
    /// program and forward except backward `ja`s under [`Mode::LibpcapLoops`], the last
    /// instruction a RET, memory indices < 16, no `div #0`/`mod #0`.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// The rules it passed.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether every jump goes forward (always, unless validated under
    /// [`Mode::LibpcapLoops`]): the program ends within its length on every packet.
    pub fn is_acyclic(&self) -> bool {
        !self.loops
    }

    /// The same program as an [`Acyclic`] one, or back as it is when some jump goes backward.
    pub fn into_acyclic(self) -> Result<Acyclic, Validated> {
        if self.loops { Err(self) } else { Ok(Acyclic(self)) }
    }

    /// The program, back as a plain [`Program`].
    pub fn to_program(&self) -> Program {
        Program(self.insns.to_vec())
    }
}

/// A [`Validated`] program whose every jump goes forward: what may go where loops cannot (the
/// kernel's `SO_ATTACH_FILTER`, the eBPF translation). Only [`Validated::into_acyclic`] makes
/// one; it derefs to the [`Validated`] program for the engines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acyclic(Validated);

impl Acyclic {
    /// The program as a [`Validated`] one.
    pub fn validated(&self) -> &Validated {
        &self.0
    }

    /// The program as a [`Validated`] one, by value.
    pub fn into_validated(self) -> Validated {
        self.0
    }
}

impl std::ops::Deref for Acyclic {
    type Target = Validated;

    fn deref(&self) -> &Validated {
        &self.0
    }
}

impl From<Acyclic> for Validated {
    fn from(a: Acyclic) -> Validated {
        a.0
    }
}

/// Validates `prog` under `mode`.
pub fn validate(prog: &[Insn], mode: Mode) -> Result<Validated, ValidationError> {
    let loops = match mode {
        Mode::Libpcap => check_libpcap(prog, false)?,
        Mode::LibpcapLoops => check_libpcap(prog, true)?,
        Mode::Linux => check_linux(prog)?,
    };
    Ok(Validated { insns: prog.into(), mode, loops })
}

fn fail<T>(index: usize, reason: Reason) -> Result<T, ValidationError> {
    Err(ValidationError { index, reason })
}

/// Checks shared by every mode for one known instruction at `i` of a `len`-long program:
/// memory index, constant division, jump targets (in range; forward unless `loops`). Returns
/// whether the instruction is a backward jump (only ever `true` with `loops`).
fn check_common(
    insn: &Insn,
    op: Opcode,
    i: usize,
    len: usize,
    loops: bool,
) -> Result<bool, ValidationError> {
    let next = i as u64 + 1;
    match op {
        Opcode::LdMem | Opcode::LdxMem | Opcode::St | Opcode::Stx if insn.k >= BPF_MEMWORDS => {
            fail(i, Reason::MemoryIndex(insn.k))
        }
        Opcode::DivK | Opcode::ModK if insn.k == 0 => fail(i, Reason::DivisionByZero),
        Opcode::Ja => {
            let target = next + u64::from(insn.k);
            if target >= len as u64 {
                // With 32-bit wrap-around (what libpcap computes) this may land inside the
                // program, before the jump: a loop, which only `loops` lets through. Programs
                // longer than 2^32 instructions cannot wrap back into themselves this way.
                let wrapped = u64::from((next as u32).wrapping_add(insn.k));
                if wrapped < next && next <= u64::from(u32::MAX) {
                    return if loops { Ok(true) } else { fail(i, Reason::JumpBackward) };
                }
                return fail(i, Reason::JumpOutOfRange { target });
            }
            Ok(false)
        }
        _ if op.is_conditional_jump() => {
            for off in [insn.jt, insn.jf] {
                let target = next + u64::from(off);
                if target >= len as u64 {
                    return fail(i, Reason::JumpOutOfRange { target });
                }
            }
            Ok(false)
        }
        _ => Ok(false),
    }
}

/// libpcap's rules, with backward `ja`s when `loops`; returns whether there is one.
fn check_libpcap(prog: &[Insn], loops: bool) -> Result<bool, ValidationError> {
    if prog.is_empty() {
        return fail(0, Reason::Empty);
    }
    let mut backward = false;
    for (i, insn) in prog.iter().enumerate() {
        let op = insn.opcode();
        if !op.is_known() {
            return fail(i, Reason::UnknownOpcode(insn.code));
        }
        backward |= check_common(insn, op, i, prog.len(), loops)?;
    }
    if !prog[prog.len() - 1].opcode().is_ret() {
        return fail(prog.len() - 1, Reason::LastNotRet);
    }
    Ok(backward)
}

/// The kernel's rules (never a backward jump: returns `false`).
fn check_linux(prog: &[Insn]) -> Result<bool, ValidationError> {
    if prog.is_empty() {
        return fail(0, Reason::Empty);
    }
    if prog.len() > BPF_MAXINSNS {
        return fail(BPF_MAXINSNS, Reason::TooLong { len: prog.len() });
    }
    for (i, insn) in prog.iter().enumerate() {
        let op = insn.opcode();
        if !op.is_known() {
            return fail(i, Reason::UnknownOpcode(insn.code));
        }
        check_common(insn, op, i, prog.len(), false)?;
        match op {
            Opcode::LshK | Opcode::RshK if insn.k >= 32 => {
                return fail(i, Reason::ShiftTooLarge(insn.k));
            }
            Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB
                if insn.k >= SKF_AD_OFF && code::ancillary_offset(insn.k).is_none() =>
            {
                return fail(i, Reason::UnknownAncillary(insn.k));
            }
            _ => {}
        }
    }
    if !prog[prog.len() - 1].opcode().is_ret() {
        return fail(prog.len() - 1, Reason::LastNotRet);
    }
    check_load_and_stores(prog)?;
    Ok(false)
}

/// The kernel's `check_load_and_stores`: a single forward pass with a 16-bit "written" mask.
///
/// Reproduced as the kernel does it, quirks included: a jump intersects the mask into its
/// targets' entries and then resets the running mask to "all written" (so code after an
/// unconditional jump, reachable only by later jumps, is judged by their masks alone), while a
/// RET does *not* reset it (code after a RET that no jump reaches inherits the RET's mask).
fn check_load_and_stores(prog: &[Insn]) -> Result<(), ValidationError> {
    let mut masks = vec![u16::MAX; prog.len()];
    let mut valid: u16 = 0;
    for (pc, insn) in prog.iter().enumerate() {
        valid &= masks[pc];
        // Indices and targets were checked above, so the shifts and indexing stay in range; use
        // `get_mut` anyway so that this function alone can never panic.
        let bit = 1u16.checked_shl(insn.k).unwrap_or(0);
        match insn.opcode() {
            Opcode::St | Opcode::Stx => valid |= bit,
            Opcode::LdMem | Opcode::LdxMem if valid & bit == 0 => {
                return fail(pc, Reason::UninitializedMemory(insn.k));
            }
            Opcode::Ja => {
                if let Some(m) = masks.get_mut(pc + 1 + insn.k as usize) {
                    *m &= valid;
                }
                valid = u16::MAX;
            }
            op if op.is_conditional_jump() => {
                for off in [insn.jt, insn.jf] {
                    if let Some(m) = masks.get_mut(pc + 1 + usize::from(off)) {
                        *m &= valid;
                    }
                }
                valid = u16::MAX;
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(insns: &[(u16, u8, u8, u32)]) -> Vec<Insn> {
        insns.iter().map(|&(c, jt, jf, k)| Insn::new(c, jt, jf, k)).collect()
    }

    fn reason(prog: &[Insn], mode: Mode) -> Option<(usize, Reason)> {
        validate(prog, mode).err().map(|e| (e.index, e.reason))
    }

    #[test]
    fn both_modes_basic() {
        let ok = p(&[(0x28, 0, 0, 12), (0x15, 0, 1, 0x800), (0x06, 0, 0, 65535), (0x06, 0, 0, 0)]);
        assert!(validate(&ok, Mode::Libpcap).is_ok());
        assert!(validate(&ok, Mode::Linux).is_ok());
        for mode in [Mode::Libpcap, Mode::Linux] {
            assert_eq!(reason(&[], mode), Some((0, Reason::Empty)));
            assert_eq!(reason(&p(&[(0x28, 0, 0, 12)]), mode), Some((0, Reason::LastNotRet)));
            assert_eq!(
                reason(&p(&[(0x0e, 0, 0, 0)]), mode),
                Some((0, Reason::UnknownOpcode(0x0e)))
            );
            assert_eq!(
                reason(&p(&[(0x34, 0, 0, 0), (0x16, 0, 0, 0)]), mode),
                Some((0, Reason::DivisionByZero))
            );
            assert_eq!(
                reason(&p(&[(0x02, 0, 0, 16), (0x16, 0, 0, 0)]), mode),
                Some((0, Reason::MemoryIndex(16)))
            );
            assert_eq!(
                reason(&p(&[(0x05, 0, 0, u32::MAX), (0x16, 0, 0, 0)]), mode),
                Some((0, Reason::JumpBackward))
            );
            assert_eq!(
                reason(&p(&[(0x15, 1, 0, 0), (0x16, 0, 0, 0)]), mode),
                Some((0, Reason::JumpOutOfRange { target: 2 }))
            );
        }
    }

    #[test]
    fn loops_only_in_libpcap_loops_mode() {
        // `ld #0; ja -2 (back to 0); ret #0`: a backward `ja` landing inside the program.
        let back = p(&[(0x00, 0, 0, 0), (0x05, 0, 0, u32::MAX - 1), (0x06, 0, 0, 0)]);
        for mode in [Mode::Libpcap, Mode::Linux] {
            assert_eq!(reason(&back, mode), Some((1, Reason::JumpBackward)));
        }
        let v = validate(&back, Mode::LibpcapLoops).unwrap();
        assert!(!v.is_acyclic());
        assert_eq!(v.mode(), Mode::LibpcapLoops);
        let v = v.into_acyclic().expect_err("a loop is not acyclic");
        assert_eq!(v.insns(), &back[..]);
        // Onto itself (`ja -1`), and onto the first instruction from far away.
        let onto_itself = p(&[(0x05, 0, 0, u32::MAX), (0x06, 0, 0, 0)]);
        assert!(!validate(&onto_itself, Mode::LibpcapLoops).unwrap().is_acyclic());
        // Wrapping around to before the start of the program is out of range in every mode.
        let before_start = p(&[(0x00, 0, 0, 0), (0x05, 0, 0, u32::MAX - 2), (0x06, 0, 0, 0)]);
        assert_eq!(
            reason(&before_start, Mode::LibpcapLoops),
            Some((1, Reason::JumpOutOfRange { target: 2 + u64::from(u32::MAX - 2) }))
        );
        // Everything else is Mode::Libpcap's: a forward program is acyclic in every mode.
        let ok = p(&[(0x28, 0, 0, 12), (0x15, 0, 1, 0x800), (0x06, 0, 0, 65535), (0x06, 0, 0, 0)]);
        for mode in [Mode::Libpcap, Mode::LibpcapLoops, Mode::Linux] {
            let a = validate(&ok, mode).unwrap().into_acyclic().expect("forward only");
            assert_eq!(a.insns(), &ok[..]);
            assert_eq!(a.validated().mode(), mode);
        }
        assert_eq!(
            reason(&p(&[(0x28, 0, 0, 12)]), Mode::LibpcapLoops),
            Some((0, Reason::LastNotRet))
        );
        let shift = p(&[(0x64, 0, 0, 32), (0x16, 0, 0, 0)]);
        assert!(validate(&shift, Mode::LibpcapLoops).is_ok());
    }

    #[test]
    fn linux_only_rules() {
        let shift = p(&[(0x64, 0, 0, 32), (0x16, 0, 0, 0)]);
        assert!(validate(&shift, Mode::Libpcap).is_ok());
        assert_eq!(reason(&shift, Mode::Linux), Some((0, Reason::ShiftTooLarge(32))));
        let anc = p(&[(0x20, 0, 0, SKF_AD_OFF + 64), (0x16, 0, 0, 0)]);
        assert!(validate(&anc, Mode::Libpcap).is_ok());
        assert_eq!(reason(&anc, Mode::Linux), Some((0, Reason::UnknownAncillary(SKF_AD_OFF + 64))));
        let known =
            p(&[(0x30, 0, 0, SKF_AD_OFF + 44), (0x40, 0, 0, SKF_AD_OFF + 64), (0x16, 0, 0, 0)]);
        assert!(validate(&known, Mode::Linux).is_ok(), "indirect loads are not checked");
        let long = vec![Insn::stmt(0x06, 0); 4097];
        assert!(validate(&long, Mode::Libpcap).is_ok());
        assert_eq!(reason(&long, Mode::Linux), Some((4096, Reason::TooLong { len: 4097 })));
        assert!(validate(&long[..4096], Mode::Linux).is_ok());
    }

    #[test]
    fn uninitialized_memory() {
        // Read before any write.
        let bad = p(&[(0x60, 0, 0, 3), (0x16, 0, 0, 0)]);
        assert!(validate(&bad, Mode::Libpcap).is_ok());
        assert_eq!(reason(&bad, Mode::Linux), Some((0, Reason::UninitializedMemory(3))));
        // Written on one branch only.
        let one_path = p(&[(0x15, 0, 1, 0), (0x02, 0, 0, 3), (0x60, 0, 0, 3), (0x16, 0, 0, 0)]);
        assert_eq!(reason(&one_path, Mode::Linux), Some((2, Reason::UninitializedMemory(3))));
        // Written on both.
        let both = p(&[
            (0x02, 0, 0, 3),
            (0x15, 0, 1, 0),
            (0x03, 0, 0, 4),
            (0x60, 0, 0, 3),
            (0x16, 0, 0, 0),
        ]);
        assert!(validate(&both, Mode::Linux).is_ok());
        // The kernel's quirk: a RET does not reset the mask, so dead code after it inherits it.
        let after_ret = p(&[(0x02, 0, 0, 1), (0x06, 0, 0, 0), (0x60, 0, 0, 1), (0x16, 0, 0, 0)]);
        assert!(validate(&after_ret, Mode::Linux).is_ok());
        let after_ret_bad = p(&[(0x06, 0, 0, 0), (0x60, 0, 0, 1), (0x16, 0, 0, 0)]);
        assert!(validate(&after_ret_bad, Mode::Linux).is_err());
        // ... while dead code after a jump is judged by the jumps into it (none: all valid).
        let after_ja = p(&[(0x05, 0, 0, 1), (0x60, 0, 0, 1), (0x16, 0, 0, 0)]);
        assert!(validate(&after_ja, Mode::Linux).is_ok());
    }

    #[test]
    fn display_names_the_instruction() {
        let e = validate(&p(&[(0x06, 0, 0, 0), (0x60, 0, 0, 20)]), Mode::Linux).unwrap_err();
        assert_eq!(e.to_string(), "instruction 1: scratch memory index 20 is not below 16");
    }
}
