//! sift's own classic → eBPF translation, for `BPF_PROG_TEST_RUN`.
//!
//! The kernel converts every classic program it is given into eBPF (`bpf_convert_filter` in
//! `net/core/filter.c`). This module does the same job in the same style, in safe Rust, so that
//! the kernel's verifier and JIT can run *our* translation of a classic program with a packet as
//! input (`sift_kernel::KernelEbpf`): a second, independent check of classic semantics.
//!
//! # Program type: `BPF_PROG_TYPE_SCHED_CLS`
//!
//! Classic filters address the packet from the link-layer header. `BPF_PROG_TEST_RUN` on a
//! `SOCKET_FILTER` program pulls the Ethernet header first (`eth_type_trans`), so offset 0 is
//! the network header there and `skb->len` is 14 short; on `SCHED_CLS` the header is pushed back
//! and offset 0 is the first byte given. `SCHED_CLS` also has direct packet access (`data`,
//! `data_end`), lets a test run set the wire length (`__sk_buff.wire_len`) and the control block
//! (`cb[]`) from the context passed in, and reads both. So the translation targets `SCHED_CLS`
//! and uses no helper calls at all:
//!
//! * **Registers.** As in the kernel's conversion, A is `r0` and X is `r7`, used as 32-bit
//!   sub-registers `w0`/`w7` (so every ALU result is the classic 32-bit value, zero-extended),
//!   the context is kept in `r6` and `data` in `r8`; `r9` holds `data_end` (the kernel caches
//!   the linear length there), `r5` the captured length and `r4` the wire length; `r1`–`r3` are
//!   scratch. No helper is called, so nothing is clobbered.
//!   `M[k]` is the 32-bit stack slot at `r10 - 4(k+1)`; slots that are read are zeroed in the
//!   prologue (the kernel's verifier refuses uninitialised stack reads, and sift's interpreter
//!   starts with `M[]` = 0).
//! * **Packet loads.** Each load checks `offset + size <= caplen` (classic semantics: a load
//!   past the captured bytes ends the program with 0), then `data + offset + size <= data_end`
//!   (the check the verifier needs to allow the access; it never fails after the first one),
//!   then loads and byte-swaps (`be16`/`be32`). `[x + k]` wraps around in 32 bits, as in the
//!   kernel; a negative result reads relative to the link-layer header (`SKF_LL_OFF`, offset 0)
//!   or the network header (`SKF_NET_OFF`, offset [`NET_HEADER`]) exactly as
//!   `bpf_internal_load_pointer_neg_helper` does, and fails below `SKF_LL_OFF`.
//! * **Arithmetic.** 32-bit ALU instructions. `div x`/`mod x` check X = 0 and return 0 from the
//!   whole program (eBPF's own division by zero would give 0 and carry on). `lsh x`/`rsh x` are
//!   eBPF's 32-bit register shifts, which use `X & 31` (as the kernel's conversion does);
//!   `lsh #k`/`rsh #k` with k ≥ 32 (refused by the Linux validator, allowed by libpcap's) give 0.
//! * **Jumps.** 32-bit compares (`JMP32`), so a constant needs no zero-extension trick. A
//!   `jt`/`jf` pair becomes one conditional jump when one side falls through (inverted when the
//!   true side does, except `jset`), otherwise a conditional jump and a `ja`.
//! * **Return.** `ret #k` sets `w0` and exits; `ret a` exits. A failed load or a division by zero
//!   jumps to a shared `w0 = 0; exit` at the end. An instruction that always fails (a load at an
//!   offset no packet reaches, a division by the constant 0) becomes `w0 = 0; exit` itself.
//!   Classic instructions no path reaches are left out: the verifier refuses unreachable code.
//! * **Lengths.** `len` is `__sk_buff.wire_len` (`qdisc_skb_cb(skb)->pkt_len`, which a test run
//!   sets from the context it is given), the captured length is `__sk_buff.len`. A test run
//!   refuses some packets (shorter than an Ethernet header; an IPv4 or IPv6 EtherType without
//!   room for that header) and some wire lengths (below the captured length, above 64 KiB); for
//!   those, `sift_kernel::KernelEbpf` pads the packet with zeros and passes the real lengths in the
//!   control block: `cb[0]` = captured length + 1 (0: not used), `cb[1]` = wire length, which
//!   the prologue prefers when `cb[0]` is not 0.
//!
//! Not translated: ancillary loads (`ld [SKF_AD_OFF + …]`): their values come from `sk_buff`
//! fields a test run fills in its own way, so they are reported as
//! [`TranslateReason::Ancillary`]; and loops (a backward `ja`, which libpcap's `bpf_validate`
//! and sift's `Mode::LibpcapLoops` accept for libpcap's `protochain` walk), reported as
//! [`TranslateReason::Loop`]. The kernel's verifier accepts bounded loops since 5.3, but only
//! by walking every iteration: a walk of up to 1,024 headers (a test-run packet is a page) with
//! two ways round per header and the offset's range different on each is beyond its
//! instruction budget, and the per-iteration counter such a loop needs has no free register
//! here. Programs meant for the kernel are compiled with the walk unrolled instead (sift's
//! compiler does so for `Mode::Libpcap` and `Mode::Linux`; `sift_verify::Acyclic` is a program
//! without loops). eBPF jump offsets are 16-bit: when the shared exit is out
//! of reach, the program is translated again with a `w0 = 0; exit` after each failure check
//! (as the kernel's conversion does after each load); a classic jump whose translation spans
//! more than 32767 slots is refused ([`TranslateReason::JumpTooFar`]; the kernel's conversion
//! refuses those too). Realistic filters are far below that (a `[x + k]` load is 17 slots, a
//! constant-offset load 5–6).

use sift_insn::code::{SKF_AD_OFF, SKF_LL_OFF, SKF_NET_OFF};
use sift_insn::{Insn, Opcode};

use crate::insn::opcode::alu::*;
use crate::insn::opcode::class::*;
use crate::insn::opcode::jmp::*;
use crate::insn::opcode::size::*;
use crate::insn::reg::*;
use crate::insn::{EbpfInsn, EbpfProgram, Reg};
use crate::skb;

/// Where the network header starts for `SKF_NET_OFF` loads: `BPF_PROG_TEST_RUN` on a
/// `SCHED_CLS` program resets the network header right after the 14-byte Ethernet header.
pub const NET_HEADER: u32 = 14;

/// The largest packet offset a load may reach (a little below the verifier's `MAX_PACKET_OFF`,
/// 0xffff, so that offset + variable part + size stays under it); loads beyond
/// always fail (a test-run packet is at most a page).
const MAX_OFFSET: u32 = 0xfff0;

/// Classic A.
const REG_A: Reg = R0;
/// Classic X.
const REG_X: Reg = R7;
const REG_CTX: Reg = R6;
const REG_DATA: Reg = R8;
const REG_DATA_END: Reg = R9;
const REG_CAPLEN: Reg = R5;
const REG_WIRELEN: Reg = R4;

/// Why a classic program could not be translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TranslateReason {
    /// An ancillary load (`ld [SKF_AD_OFF + off]`): not translated (see the module docs).
    #[error("ancillary load at SKF_AD_OFF+{0} is not translated")]
    Ancillary(u32),
    /// An opcode the classic instruction set does not have (never in a validated program).
    #[error("unknown opcode {0:#06x}")]
    UnknownOpcode(u16),
    /// A jump whose eBPF distance does not fit the 16-bit offset field.
    #[error("jump too far for eBPF's 16-bit offset")]
    JumpTooFar,
    /// A jump to a place outside the program (never in a validated program).
    #[error("jump target outside the program")]
    BadTarget,
    /// A `ja` back to an earlier instruction (a loop: libpcap's `protochain` walk, valid for
    /// libpcap and sift's own engines). Not translated: see the module documentation.
    #[error("backward jump to instruction {target}: loops are not translated to eBPF")]
    Loop {
        /// Where the jump lands.
        target: usize,
    },
}

/// A translation error at a classic instruction.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("instruction {index}: {reason}")]
pub struct TranslateError {
    /// Index of the classic instruction.
    pub index: usize,
    /// What went wrong.
    pub reason: TranslateReason,
}

#[derive(Clone, Copy, Debug)]
enum Target {
    Classic(usize),
    Fail,
}

struct Asm {
    out: Vec<EbpfInsn>,
    /// (slot, target, classic index for errors)
    fixups: Vec<(usize, Target, usize)>,
    cur: usize,
    /// Each failure check exits on the spot (`w0 = 0; exit` after it) instead of jumping to
    /// the shared exit at the end: for programs too long for 16-bit jumps to reach the end.
    local_exits: bool,
}

impl Asm {
    fn emit(&mut self, i: EbpfInsn) {
        self.out.push(i);
    }
    fn jump(&mut self, i: EbpfInsn, t: Target) {
        self.fixups.push((self.out.len(), t, self.cur));
        self.out.push(i);
    }
    fn fail_if_imm(&mut self, class: u8, op: u8, dst: Reg, imm: i32) {
        if self.local_exits {
            self.emit(EbpfInsn::jmp_imm(class, inverse(op), dst, imm, 2));
            self.local_exit();
        } else {
            self.jump(EbpfInsn::jmp_imm(class, op, dst, imm, 0), Target::Fail);
        }
    }
    fn fail_if_reg(&mut self, class: u8, op: u8, dst: Reg, src: Reg) {
        if self.local_exits {
            self.emit(EbpfInsn::jmp_reg(class, inverse(op), dst, src, 2));
            self.local_exit();
        } else {
            self.jump(EbpfInsn::jmp_reg(class, op, dst, src, 0), Target::Fail);
        }
    }
    fn local_exit(&mut self) {
        self.emit(EbpfInsn::mov32_imm(REG_A, 0));
        self.emit(EbpfInsn::exit());
    }
    /// How many slots a `fail_if_*` takes.
    fn fail_len(&self) -> i16 {
        if self.local_exits { 3 } else { 1 }
    }
}

/// The negation of a comparison used by the failure checks.
fn inverse(op: u8) -> u8 {
    match op {
        JEQ => JNE,
        JNE => JEQ,
        JGT => JLE,
        JLE => JGT,
        JGE => JLT,
        JLT => JGE,
        JSGE => JSLT,
        JSLT => JSGE,
        JSGT => JSLE,
        _ => JSGT,
    }
}

fn size_bytes(size: u8) -> u32 {
    match size {
        B => 1,
        H => 2,
        _ => 4,
    }
}

/// Loads `size` bytes at the constant packet offset `off` (already resolved to the packet
/// start) into `dst`, byte-swapped to host order.
fn load_const(a: &mut Asm, dst: Reg, size: u8, off: u32) {
    let n = size_bytes(size);
    // Offsets that can never be in a packet were handled by `always_fails`.
    let end = off.saturating_add(n).min(MAX_OFFSET);
    // Classic semantics: past the captured bytes, the program returns 0.
    a.fail_if_imm(JMP, JLT, REG_CAPLEN, end as i32);
    if end <= i16::MAX as u32 {
        // The verifier's check: data + end <= data_end.
        a.emit(EbpfInsn::mov64_reg(R2, REG_DATA));
        a.emit(EbpfInsn::alu64_imm(ADD, R2, end as i32));
        a.fail_if_reg(JMP, JGT, R2, REG_DATA_END);
        a.emit(EbpfInsn::load(size, dst, REG_DATA, off as i16));
    } else {
        a.emit(EbpfInsn::mov64_reg(R2, REG_DATA));
        a.emit(EbpfInsn::alu64_imm(ADD, R2, off as i32));
        a.emit(EbpfInsn::mov64_reg(R3, R2));
        a.emit(EbpfInsn::alu64_imm(ADD, R3, n as i32));
        a.fail_if_reg(JMP, JGT, R3, REG_DATA_END);
        a.emit(EbpfInsn::load(size, dst, R2, 0));
    }
    swap(a, dst, size);
}

fn swap(a: &mut Asm, dst: Reg, size: u8) {
    match size {
        H => a.emit(EbpfInsn::to_be(dst, 16)),
        W => a.emit(EbpfInsn::to_be(dst, 32)),
        _ => {}
    }
}

/// Resolves a constant classic offset the way `bpf_skb_load_helper_*` reads it: non-negative
/// offsets from the packet start, `SKF_NET_OFF`/`SKF_LL_OFF` regions from the network/link-layer
/// header. `None`: the load always fails.
fn resolve_const(k: u32) -> Option<u32> {
    if (k as i32) >= 0 {
        Some(k)
    } else if k >= SKF_NET_OFF {
        Some(NET_HEADER + (k - SKF_NET_OFF))
    } else if k >= SKF_LL_OFF {
        Some(k - SKF_LL_OFF)
    } else {
        None
    }
}

/// `A = [x + k]` of `size` bytes: the offset wraps in 32 bits and is then resolved at run time
/// as [`resolve_const`] does.
fn load_ind(a: &mut Asm, size: u8, k: u32) {
    let n = size_bytes(size) as i32;
    a.emit(EbpfInsn::mov32_reg(R1, REG_X));
    if k != 0 {
        a.emit(EbpfInsn::alu32_imm(ADD, R1, k as i32));
    }
    // Negative offsets (rare) are remapped by a short sequence skipped for positive ones.
    let f = a.fail_len();
    a.emit(EbpfInsn::jmp_imm(JMP32, JSGE, R1, 0, 4 + f));
    a.emit(EbpfInsn::jmp_imm(JMP32, JGE, R1, SKF_NET_OFF as i32, 2 + f));
    a.fail_if_imm(JMP32, JLT, R1, SKF_LL_OFF as i32);
    a.emit(EbpfInsn::alu32_imm(ADD, R1, SKF_LL_OFF.wrapping_neg() as i32));
    a.emit(EbpfInsn::ja(1));
    a.emit(EbpfInsn::alu32_imm(ADD, R1, (SKF_NET_OFF.wrapping_neg() + NET_HEADER) as i32));
    // r1: the offset from the packet start, zero-extended. Bound it for the verifier, then
    // check it against the captured length (classic semantics), then against data_end.
    a.fail_if_imm(JMP, JGT, R1, MAX_OFFSET as i32);
    a.emit(EbpfInsn::mov64_reg(R2, R1));
    a.emit(EbpfInsn::alu64_imm(ADD, R2, n));
    a.fail_if_reg(JMP, JGT, R2, REG_CAPLEN);
    a.emit(EbpfInsn::mov64_reg(R2, REG_DATA));
    a.emit(EbpfInsn::alu64_reg(ADD, R2, R1));
    a.emit(EbpfInsn::mov64_reg(R3, R2));
    a.emit(EbpfInsn::alu64_imm(ADD, R3, n));
    a.fail_if_reg(JMP, JGT, R3, REG_DATA_END);
    a.emit(EbpfInsn::load(size, REG_A, R2, 0));
    swap(a, REG_A, size);
}

/// Whether a classic instruction always ends the program with 0 (a load that can never be in
/// the packet, a division by the constant 0): it is translated as `return 0`, and what follows
/// it is not reached through it.
fn always_fails(insn: &Insn) -> bool {
    use Opcode::*;
    let op = insn.opcode();
    match op {
        LdAbsW | LdAbsH | LdAbsB | LdxMsh => {
            if op != LdxMsh && insn.k >= SKF_AD_OFF {
                return false; // ancillary: refused elsewhere
            }
            let n = match op {
                LdAbsW => 4,
                LdAbsH => 2,
                _ => 1,
            };
            resolve_const(insn.k)
                .and_then(|off| off.checked_add(n))
                .is_none_or(|end| end > MAX_OFFSET)
        }
        DivK | ModK => insn.k == 0,
        _ => false,
    }
}

/// Which classic instructions some path from the first one reaches.
fn reachable(prog: &[Insn]) -> Vec<bool> {
    let mut seen = vec![false; prog.len()];
    if let Some(first) = seen.first_mut() {
        *first = true;
    }
    for i in 0..prog.len() {
        if !seen[i] {
            continue;
        }
        let insn = prog[i];
        let op = insn.opcode();
        let mut mark = |t: usize| {
            if let Some(s) = seen.get_mut(t) {
                *s = true;
            }
        };
        match op {
            _ if always_fails(&insn) => {}
            Opcode::RetK | Opcode::RetA => {}
            Opcode::Ja => mark((i + 1).saturating_add(insn.k as usize)),
            _ if op.is_conditional_jump() => {
                mark(i + 1 + usize::from(insn.jt));
                mark(i + 1 + usize::from(insn.jf));
            }
            _ => mark(i + 1),
        }
    }
    seen
}

fn mem_off(k: u32) -> i16 {
    -4 * ((k & 15) as i16 + 1)
}

/// Translates a classic program (normally the instructions of a program `sift_verify` has validated) into
/// an eBPF `SCHED_CLS` program with classic semantics (see the module documentation).
pub fn translate(prog: &[Insn]) -> Result<EbpfProgram, TranslateError> {
    match translate_with(prog, false) {
        Err(TranslateError { reason: TranslateReason::JumpTooFar, .. }) => {
            translate_with(prog, true)
        }
        done => done,
    }
}

/// [`translate`]'s fallback form, with a `w0 = 0; exit` after every failure check instead of
/// one shared exit (what [`translate`] produces when the shared exit is out of a jump's reach).
pub fn translate_local_exits(prog: &[Insn]) -> Result<EbpfProgram, TranslateError> {
    translate_with(prog, true)
}

fn translate_with(prog: &[Insn], local_exits: bool) -> Result<EbpfProgram, TranslateError> {
    use Opcode::*;
    let loads_packet = prog.iter().any(|i| {
        matches!(
            i.opcode(),
            LdAbsW | LdAbsH | LdAbsB | LdIndW | LdIndH | LdIndB | LdxMsh | LdLen | LdxLen
        )
    });
    let mut a = Asm {
        out: Vec::with_capacity(prog.len() * 4 + 16),
        fixups: Vec::new(),
        cur: 0,
        local_exits,
    };
    // Prologue.
    a.emit(EbpfInsn::mov64_reg(REG_CTX, R1));
    if loads_packet {
        a.emit(EbpfInsn::load(W, REG_DATA, REG_CTX, skb::DATA));
        a.emit(EbpfInsn::load(W, REG_DATA_END, REG_CTX, skb::DATA_END));
        a.emit(EbpfInsn::load(W, REG_CAPLEN, REG_CTX, skb::LEN));
        a.emit(EbpfInsn::load(W, REG_WIRELEN, REG_CTX, skb::WIRE_LEN));
        // cb[0] != 0: a padded packet; cb[0] - 1 and cb[1] are its real lengths.
        a.emit(EbpfInsn::load(W, R1, REG_CTX, skb::CB0));
        a.emit(EbpfInsn::jmp_imm(JMP32, JEQ, R1, 0, 3));
        a.emit(EbpfInsn::mov32_reg(REG_CAPLEN, R1));
        a.emit(EbpfInsn::alu32_imm(SUB, REG_CAPLEN, 1));
        a.emit(EbpfInsn::load(W, REG_WIRELEN, REG_CTX, skb::CB1));
    }
    a.emit(EbpfInsn::mov32_imm(REG_A, 0));
    a.emit(EbpfInsn::mov32_imm(REG_X, 0));
    let mut read = 0u16;
    for i in prog {
        if matches!(i.opcode(), LdMem | LdxMem) {
            read |= 1 << (i.k & 15);
        }
    }
    for k in 0..16 {
        if read & (1 << k) != 0 {
            a.emit(EbpfInsn::store_imm(W, R10, mem_off(k), 0));
        }
    }

    // The verifier refuses unreachable code, which classic programs may have: skip it.
    let reachable = reachable(prog);
    let mut starts = Vec::with_capacity(prog.len() + 1);
    for (idx, insn) in prog.iter().enumerate() {
        a.cur = idx;
        starts.push(a.out.len());
        if !reachable[idx] {
            continue;
        }
        let k = insn.k;
        let next = idx + 1;
        let op = insn.opcode();
        if always_fails(insn) {
            a.emit(EbpfInsn::mov32_imm(REG_A, 0));
            a.emit(EbpfInsn::exit());
            continue;
        }
        match op {
            RetK => {
                a.emit(EbpfInsn::mov32_imm(REG_A, k as i32));
                a.emit(EbpfInsn::exit());
            }
            RetA => a.emit(EbpfInsn::exit()),
            LdAbsW | LdAbsH | LdAbsB | LdxMsh => {
                let size = match op {
                    LdAbsW => W,
                    LdAbsH => H,
                    _ => B,
                };
                if op != LdxMsh && k >= SKF_AD_OFF {
                    return Err(TranslateError {
                        index: idx,
                        reason: TranslateReason::Ancillary(k - SKF_AD_OFF),
                    });
                }
                let dst = if op == LdxMsh { REG_X } else { REG_A };
                load_const(&mut a, dst, size, resolve_const(k).unwrap_or(0));
                if op == LdxMsh {
                    a.emit(EbpfInsn::alu32_imm(AND, REG_X, 0xf));
                    a.emit(EbpfInsn::alu32_imm(LSH, REG_X, 2));
                }
            }
            LdIndW => load_ind(&mut a, W, k),
            LdIndH => load_ind(&mut a, H, k),
            LdIndB => load_ind(&mut a, B, k),
            LdImm => a.emit(EbpfInsn::mov32_imm(REG_A, k as i32)),
            LdxImm => a.emit(EbpfInsn::mov32_imm(REG_X, k as i32)),
            LdLen => a.emit(EbpfInsn::mov32_reg(REG_A, REG_WIRELEN)),
            LdxLen => a.emit(EbpfInsn::mov32_reg(REG_X, REG_WIRELEN)),
            LdMem => a.emit(EbpfInsn::load(W, REG_A, R10, mem_off(k))),
            LdxMem => a.emit(EbpfInsn::load(W, REG_X, R10, mem_off(k))),
            St => a.emit(EbpfInsn::store_reg(W, R10, REG_A, mem_off(k))),
            Stx => a.emit(EbpfInsn::store_reg(W, R10, REG_X, mem_off(k))),
            AddK | SubK | MulK | AndK | OrK | XorK => {
                let o = match op {
                    AddK => ADD,
                    SubK => SUB,
                    MulK => MUL,
                    AndK => AND,
                    OrK => OR,
                    _ => XOR,
                };
                a.emit(EbpfInsn::alu32_imm(o, REG_A, k as i32));
            }
            DivK | ModK => {
                let o = if op == DivK { DIV } else { MOD };
                a.emit(EbpfInsn::alu32_imm(o, REG_A, k as i32));
            }
            LshK | RshK => {
                if k >= 32 {
                    a.emit(EbpfInsn::mov32_imm(REG_A, 0));
                } else {
                    let o = if op == LshK { LSH } else { RSH };
                    a.emit(EbpfInsn::alu32_imm(o, REG_A, k as i32));
                }
            }
            AddX | SubX | MulX | AndX | OrX | XorX | LshX | RshX => {
                let o = match op {
                    AddX => ADD,
                    SubX => SUB,
                    MulX => MUL,
                    AndX => AND,
                    OrX => OR,
                    XorX => XOR,
                    LshX => LSH,
                    _ => RSH,
                };
                a.emit(EbpfInsn::alu32_reg(o, REG_A, REG_X));
            }
            DivX | ModX => {
                a.fail_if_imm(JMP32, JEQ, REG_X, 0);
                let o = if op == DivX { DIV } else { MOD };
                a.emit(EbpfInsn::alu32_reg(o, REG_A, REG_X));
            }
            Neg => a.emit(EbpfInsn::alu32_imm(NEG, REG_A, 0)),
            Tax => a.emit(EbpfInsn::mov32_reg(REG_X, REG_A)),
            Txa => a.emit(EbpfInsn::mov32_reg(REG_A, REG_X)),
            Ja => {
                // libpcap's arithmetic: a target that wraps around lands before the jump.
                let back = u32::try_from(next).ok().map(|n| n.wrapping_add(k) as usize);
                if let Some(target) = back.filter(|&t| t < next) {
                    return Err(TranslateError {
                        index: idx,
                        reason: TranslateReason::Loop { target },
                    });
                }
                let t = next
                    .checked_add(k as usize)
                    .filter(|&t| t < prog.len())
                    .ok_or(TranslateError { index: idx, reason: TranslateReason::BadTarget })?;
                if t != next {
                    a.jump(EbpfInsn::ja(0), Target::Classic(t));
                }
            }
            JeqK | JgtK | JgeK | JsetK | JeqX | JgtX | JgeX | JsetX => {
                let jt = next + usize::from(insn.jt);
                let jf = next + usize::from(insn.jf);
                if jt >= prog.len() || jf >= prog.len() {
                    return Err(TranslateError { index: idx, reason: TranslateReason::BadTarget });
                }
                let (cond, inverse) = match op {
                    JeqK | JeqX => (JEQ, Some(JNE)),
                    JgtK | JgtX => (JGT, Some(JLE)),
                    JgeK | JgeX => (JGE, Some(JLT)),
                    _ => (JSET, None),
                };
                let is_x = matches!(op, JeqX | JgtX | JgeX | JsetX);
                let cmp = |o: u8| {
                    if is_x {
                        EbpfInsn::jmp_reg(JMP32, o, REG_A, REG_X, 0)
                    } else {
                        EbpfInsn::jmp_imm(JMP32, o, REG_A, k as i32, 0)
                    }
                };
                if jt == jf {
                    if jt != next {
                        a.jump(EbpfInsn::ja(0), Target::Classic(jt));
                    }
                } else if jf == next {
                    a.jump(cmp(cond), Target::Classic(jt));
                } else if let (true, Some(inv)) = (jt == next, inverse) {
                    a.jump(cmp(inv), Target::Classic(jf));
                } else {
                    a.jump(cmp(cond), Target::Classic(jt));
                    a.jump(EbpfInsn::ja(0), Target::Classic(jf));
                }
            }
            Opcode::Unknown(c) => {
                return Err(TranslateError {
                    index: idx,
                    reason: TranslateReason::UnknownOpcode(c),
                });
            }
        }
    }
    let fail_at = a.out.len();
    let needs_fail = a.fixups.iter().any(|f| matches!(f.1, Target::Fail));
    if needs_fail {
        a.emit(EbpfInsn::mov32_imm(REG_A, 0));
        a.emit(EbpfInsn::exit());
    }
    for &(slot, target, index) in &a.fixups {
        let to = match target {
            Target::Classic(t) => starts[t],
            Target::Fail => fail_at,
        };
        let rel = to as i64 - (slot as i64 + 1);
        a.out[slot].off = i16::try_from(rel)
            .map_err(|_| TranslateError { index, reason: TranslateReason::JumpTooFar })?;
    }
    Ok(EbpfProgram { insns: a.out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_shared_exit_falls_back_to_local_exits() {
        // 3000 `[x + k]` loads (17 slots each) before a ret: the first load's failure jump
        // cannot reach a shared exit at the end.
        let mut prog = vec![Insn::stmt(Opcode::LdIndW.code(), 0); 3000];
        prog.push(Insn::stmt(Opcode::RetA.code(), 0));
        let p = translate(&prog).map_err(|e| e.to_string()).unwrap();
        assert!(translate_with(&prog, false).is_err());
        // Every failure check is followed by its own exit; no jump goes further than 7 slots.
        assert!(p.insns.iter().all(|i| i.off.abs() <= 7 || i.code & 7 == LDX || i.code & 7 == STX));
        let small = [Insn::stmt(Opcode::LdIndB.code(), 3), Insn::stmt(Opcode::RetA.code(), 0)];
        let local = translate_with(&small, true).unwrap().to_string();
        assert!(local.contains("if r2 <= r5 goto +2"), "{local}");
    }

    #[test]
    fn ancillary_loads_are_refused_with_their_index() {
        let prog = [
            Insn::stmt(Opcode::LdImm.code(), 1),
            Insn::stmt(Opcode::LdAbsW.code(), SKF_AD_OFF + 4),
            Insn::stmt(Opcode::RetA.code(), 0),
        ];
        assert_eq!(
            translate(&prog),
            Err(TranslateError { index: 1, reason: TranslateReason::Ancillary(4) })
        );
    }

    #[test]
    fn loops_are_refused_with_their_index() {
        // libpcap's `protochain` shape: a backward `ja` to the walk's first test.
        let prog = [
            Insn::stmt(Opcode::LdAbsB.code(), 0),
            Insn::jump(Opcode::JeqK.code(), 6, 1, 0),
            Insn::stmt(Opcode::Ja.code(), u32::MAX - 1),
            Insn::stmt(Opcode::RetA.code(), 0),
        ];
        assert_eq!(
            translate(&prog),
            Err(TranslateError { index: 2, reason: TranslateReason::Loop { target: 1 } })
        );
        assert_eq!(
            translate(&prog).unwrap_err().to_string(),
            "instruction 2: backward jump to instruction 1: loops are not translated to eBPF"
        );
    }

    #[test]
    fn long_jumps_are_refused_not_wrapped() {
        // ja over 4000 reachable `[x + k]` loads of 17 slots each: beyond 32767 slots.
        let mut prog = vec![
            Insn::stmt(Opcode::LdAbsB.code(), 0),
            Insn::jump(Opcode::JeqK.code(), 5, 0, 1),
            Insn::stmt(Opcode::Ja.code(), 4000),
        ];
        prog.extend(std::iter::repeat_n(Insn::stmt(Opcode::LdIndW.code(), 0), 4000));
        prog.push(Insn::stmt(Opcode::RetA.code(), 0));
        // With local exits the loads no longer need the far shared exit, but the `ja` over them
        // stays out of reach.
        let err = translate(&prog).map(|p| p.len());
        assert_eq!(err, Err(TranslateError { index: 2, reason: TranslateReason::JumpTooFar }));
    }
}
