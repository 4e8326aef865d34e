//! Predecoding: validated instructions → the compact [`Op`] form the interpreter loop runs.
//!
//! Jump targets become absolute indices, flavor-specific and rare cases are resolved once,
//! jumps to `ret #k` return at once ([`RET_TARGET`]), and chains of `jeq` on the same A are
//! fused ([`fuse`]), so the loop in [`crate::exec`] re-decodes nothing.

use crate::Flavor;
use sift_insn::code::{self, SKF_AD_OFF, SKF_LL_OFF};
use sift_insn::{Insn, Opcode};

/// Load sizes for the rare-path loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Size {
    W,
    H,
    B,
}

/// The predecoded instruction set. Jump targets are absolute indices; memory indices are < 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    RetK(u32),
    RetA,
    LdAbsW(u32),
    LdAbsH(u32),
    LdAbsB(u32),
    LdIndW(u32),
    LdIndH(u32),
    LdIndB(u32),
    LdImm(u32),
    LdxImm(u32),
    LdLen,
    LdxLen,
    LdMem(u8),
    LdxMem(u8),
    St(u8),
    Stx(u8),
    LdxMsh(u32),
    AddK(u32),
    SubK(u32),
    MulK(u32),
    DivK(u32),
    ModK(u32),
    AndK(u32),
    OrK(u32),
    XorK(u32),
    LshK(u32),
    RshK(u32),
    AddX,
    SubX,
    MulX,
    DivX,
    ModX,
    AndX,
    OrX,
    XorX,
    LshX,
    RshX,
    Neg,
    Tax,
    Txa,
    Ja(u32),
    /// A `ja` back to `t` (programs validated under `Mode::LibpcapLoops`), charging `d`, the
    /// distance `i + 1 - t`, against the run's [`sift_verify::LOOP_BUDGET`].
    JaBack {
        t: u32,
        d: u32,
    },
    JeqK {
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgtK {
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgeK {
        k: u32,
        jt: u32,
        jf: u32,
    },
    JsetK {
        k: u32,
        jt: u32,
        jf: u32,
    },
    JeqX {
        jt: u32,
        jf: u32,
    },
    JgtX {
        jt: u32,
        jf: u32,
    },
    JgeX {
        jt: u32,
        jf: u32,
    },
    JsetX {
        jt: u32,
        jf: u32,
    },
    // Superinstructions: a packet load followed by a conditional jump on A with a constant,
    // the pair that dominates compiled filters. The jump at the next index stays in place for
    // anything that jumps to it directly.
    JeqAbsW {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JeqAbsH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JeqAbsB {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JeqIndH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgtAbsH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgtIndH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgeAbsH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JgeIndH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JsetAbsH {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    JsetAbsB {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    /// `ld [off]; and #mask; jeq #k`, the network match of `net` primitives; `mask` and `k` are
    /// `masks[mk]`, kept aside so that every `Op` stays 16 bytes.
    JeqMaskAbsW {
        off: u16,
        mk: u16,
        jt: u32,
        jf: u32,
    },
    /// A chain of `jeq #k1 jt T jf next; jeq #k2 jt T jf next; …; jeq #kn jt T jf F` on the same
    /// A (the EtherTypes of `vlan`, lists of protocols): `n` constants at `masks[first..]` (as
    /// `(k, 0)`), one dispatch instead of `n` (counts as the instructions it stands for).
    JeqAny {
        first: u16,
        n: u16,
        jt: u32,
        jf: u32,
    },
    /// `ldh [x + off]; jge #0` (always true, to the next-but-one instruction); `jgt #k`: the
    /// lower-bound-free range test of `portrange` (counts as three instructions).
    JgtIndHRange {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    /// `ldh [off]; jge #0; jgt #k`, the same with an absolute offset.
    JgtAbsHRange {
        off: u16,
        k: u32,
        jt: u32,
        jf: u32,
    },
    // Linux-flavor and metadata cases, kept off the common arms.
    /// libpcap: a byte load of `vlan_tci` (`present == false`) or `vlanp` from the aux data.
    PcapVlan {
        present: bool,
    },
    /// Linux: an absolute load at `SKF_LL_OFF` or above (ancillary or header-relative).
    LinuxSpecial {
        k: u32,
        size: Size,
    },
    /// Linux: `[x + k]`, with 32-bit wrap-around and negative offsets.
    LinuxInd {
        k: u32,
        size: Size,
    },
    /// Linux: `ldxb 4*([k]&0xf)` at `SKF_LL_OFF` or above.
    LinuxMsh(u32),
    /// Linux: shifts by X, masked to 5 bits.
    LinuxLshX,
    LinuxRshX,
}

/// Jump targets at or above this value mean "return `rets[target - RET_TARGET]`": a jump to a
/// `ret #k` returns at once instead of dispatching one more instruction. Every filter path ends
/// in such a jump, so this saves a dispatch per packet.
pub(crate) const RET_TARGET: u32 = 1 << 31;

/// Rewrites jump targets that land on `ret #k` into [`RET_TARGET`] form; returns the table of
/// return values they index.
pub(crate) fn shortcut_returns(ops: &mut [Op]) -> Vec<u32> {
    let mut rets: Vec<u32> = Vec::new();
    let returns: Vec<Option<u32>> =
        ops.iter().map(|op| if let Op::RetK(k) = op { Some(*k) } else { None }).collect();
    let mut map = |t: &mut u32| {
        if let Some(Some(k)) = returns.get(*t as usize) {
            let slot = rets.iter().position(|r| r == k).unwrap_or_else(|| {
                rets.push(*k);
                rets.len() - 1
            });
            *t = RET_TARGET + slot as u32;
        }
    };
    for op in ops.iter_mut() {
        match op {
            Op::Ja(t) => map(t),
            Op::JeqK { jt, jf, .. }
            | Op::JgtK { jt, jf, .. }
            | Op::JgeK { jt, jf, .. }
            | Op::JsetK { jt, jf, .. }
            | Op::JeqX { jt, jf }
            | Op::JgtX { jt, jf }
            | Op::JgeX { jt, jf }
            | Op::JsetX { jt, jf }
            | Op::JeqAbsW { jt, jf, .. }
            | Op::JeqAbsH { jt, jf, .. }
            | Op::JeqAbsB { jt, jf, .. }
            | Op::JeqIndH { jt, jf, .. }
            | Op::JgtAbsH { jt, jf, .. }
            | Op::JgtIndH { jt, jf, .. }
            | Op::JgeAbsH { jt, jf, .. }
            | Op::JgeIndH { jt, jf, .. }
            | Op::JsetAbsH { jt, jf, .. }
            | Op::JsetAbsB { jt, jf, .. }
            | Op::JeqMaskAbsW { jt, jf, .. }
            | Op::JeqAny { jt, jf, .. }
            | Op::JgtIndHRange { jt, jf, .. }
            | Op::JgtAbsHRange { jt, jf, .. } => {
                map(jt);
                map(jf);
            }
            _ => {}
        }
    }
    rets
}

/// Replaces each packet load that is followed by a conditional jump on a constant with one
/// fused instruction (see [`Op::JeqAbsW`]).
/// Fused instructions keep their packet offset in 16 bits, so that every [`Op`] fits in 16
/// bytes; a load at a larger offset is simply not fused.
const SHORT: u32 = u16::MAX as u32;

pub(crate) fn fuse(ops: &mut [Op]) -> Vec<(u32, u32)> {
    let mut masks: Vec<(u32, u32)> = Vec::new();
    for i in 0..ops.len().saturating_sub(2) {
        let next_but_one = (i + 2) as u32;
        ops[i] = match (ops[i], ops[i + 1], ops[i + 2]) {
            (Op::LdAbsW(off), Op::AndK(mask), Op::JeqK { k, jt, jf })
                if off <= SHORT && masks.len() <= usize::from(u16::MAX) =>
            {
                masks.push((mask, k));
                Op::JeqMaskAbsW { off: off as u16, mk: (masks.len() - 1) as u16, jt, jf }
            }
            // `jge #0` is always true; fuse only when it goes straight to the `jgt`.
            (Op::LdIndH(off), Op::JgeK { k: 0, jt: t, .. }, Op::JgtK { k, jt, jf })
                if t == next_but_one && off <= SHORT =>
            {
                Op::JgtIndHRange { off: off as u16, k, jt, jf }
            }
            (Op::LdAbsH(off), Op::JgeK { k: 0, jt: t, .. }, Op::JgtK { k, jt, jf })
                if t == next_but_one && off <= SHORT =>
            {
                Op::JgtAbsHRange { off: off as u16, k, jt, jf }
            }
            (op, _, _) => op,
        };
    }
    for i in 0..ops.len().saturating_sub(1) {
        let (load, jump) = (ops[i], ops[i + 1]);
        // Only loads whose offset fits in 16 bits are fused (already-fused triples are not
        // plain loads, so they stay as they are).
        let off = match load {
            Op::LdAbsW(o) | Op::LdAbsH(o) | Op::LdAbsB(o) | Op::LdIndH(o) => u16::try_from(o).ok(),
            _ => None,
        };
        let Some(off) = off else { continue };
        ops[i] = match (load, jump) {
            (Op::LdAbsW(_), Op::JeqK { k, jt, jf }) => Op::JeqAbsW { off, k, jt, jf },
            (Op::LdAbsH(_), Op::JeqK { k, jt, jf }) => Op::JeqAbsH { off, k, jt, jf },
            (Op::LdAbsB(_), Op::JeqK { k, jt, jf }) => Op::JeqAbsB { off, k, jt, jf },
            (Op::LdIndH(_), Op::JeqK { k, jt, jf }) => Op::JeqIndH { off, k, jt, jf },
            (Op::LdAbsH(_), Op::JgtK { k, jt, jf }) => Op::JgtAbsH { off, k, jt, jf },
            (Op::LdIndH(_), Op::JgtK { k, jt, jf }) => Op::JgtIndH { off, k, jt, jf },
            (Op::LdAbsH(_), Op::JgeK { k, jt, jf }) => Op::JgeAbsH { off, k, jt, jf },
            (Op::LdIndH(_), Op::JgeK { k, jt, jf }) => Op::JgeIndH { off, k, jt, jf },
            (Op::LdAbsH(_), Op::JsetK { k, jt, jf }) => Op::JsetAbsH { off, k, jt, jf },
            (Op::LdAbsB(_), Op::JsetK { k, jt, jf }) => Op::JsetAbsB { off, k, jt, jf },
            _ => load,
        };
    }
    // Chains of `jeq` on the same A with the same true target, falling through on false.
    for i in 0..ops.len() {
        let Op::JeqK { k, jt, jf } = ops[i] else { continue };
        let (mut ks, mut last_jf, mut at) = (vec![k], jf, i);
        while ks.len() < 4 && last_jf == (at + 1) as u32 {
            match ops.get(at + 1) {
                Some(&Op::JeqK { k, jt: t, jf }) if t == jt => {
                    ks.push(k);
                    last_jf = jf;
                    at += 1;
                }
                _ => break,
            }
        }
        if ks.len() >= 2 && masks.len() + ks.len() <= usize::from(u16::MAX) {
            let first = masks.len() as u16;
            masks.extend(ks.iter().map(|&k| (k, 0)));
            ops[i] = Op::JeqAny { first, n: ks.len() as u16, jt, jf: last_jf };
        }
    }
    masks
}

pub(crate) fn decode(insn: &Insn, index: usize, flavor: Flavor) -> Op {
    let k = insn.k;
    let next = index as u32 + 1;
    // Validated: conditional targets are forward and in range, so these never wrap.
    let jt = next.wrapping_add(u32::from(insn.jt));
    let jf = next.wrapping_add(u32::from(insn.jf));
    let mem = (k & 15) as u8;
    let linux = flavor == Flavor::Linux;
    let size_of = |i: &Insn| match code::size(i.code) {
        code::BPF_H => Size::H,
        code::BPF_B => Size::B,
        _ => Size::W,
    };
    match insn.opcode() {
        Opcode::RetK => Op::RetK(k),
        Opcode::RetA => Op::RetA,
        Opcode::LdAbsW | Opcode::LdAbsH | Opcode::LdAbsB if linux && k >= SKF_LL_OFF => {
            Op::LinuxSpecial { k, size: size_of(insn) }
        }
        Opcode::LdAbsB if k == SKF_AD_OFF + code::SKF_AD_VLAN_TAG => {
            Op::PcapVlan { present: false }
        }
        Opcode::LdAbsB if k == SKF_AD_OFF + code::SKF_AD_VLAN_TAG_PRESENT => {
            Op::PcapVlan { present: true }
        }
        Opcode::LdAbsW => Op::LdAbsW(k),
        Opcode::LdAbsH => Op::LdAbsH(k),
        Opcode::LdAbsB => Op::LdAbsB(k),
        Opcode::LdIndW | Opcode::LdIndH | Opcode::LdIndB if linux => {
            Op::LinuxInd { k, size: size_of(insn) }
        }
        Opcode::LdIndW => Op::LdIndW(k),
        Opcode::LdIndH => Op::LdIndH(k),
        Opcode::LdIndB => Op::LdIndB(k),
        Opcode::LdImm => Op::LdImm(k),
        Opcode::LdxImm => Op::LdxImm(k),
        Opcode::LdLen => Op::LdLen,
        Opcode::LdxLen => Op::LdxLen,
        Opcode::LdMem => Op::LdMem(mem),
        Opcode::LdxMem => Op::LdxMem(mem),
        Opcode::St => Op::St(mem),
        Opcode::Stx => Op::Stx(mem),
        Opcode::LdxMsh if linux && k >= SKF_LL_OFF => Op::LinuxMsh(k),
        Opcode::LdxMsh => Op::LdxMsh(k),
        Opcode::AddK => Op::AddK(k),
        Opcode::SubK => Op::SubK(k),
        Opcode::MulK => Op::MulK(k),
        Opcode::DivK => Op::DivK(k),
        Opcode::ModK => Op::ModK(k),
        Opcode::AndK => Op::AndK(k),
        Opcode::OrK => Op::OrK(k),
        Opcode::XorK => Op::XorK(k),
        Opcode::LshK | Opcode::RshK if k >= 32 => Op::LdImm(0),
        Opcode::LshK => Op::LshK(k),
        Opcode::RshK => Op::RshK(k),
        Opcode::AddX => Op::AddX,
        Opcode::SubX => Op::SubX,
        Opcode::MulX => Op::MulX,
        Opcode::DivX => Op::DivX,
        Opcode::ModX => Op::ModX,
        Opcode::AndX => Op::AndX,
        Opcode::OrX => Op::OrX,
        Opcode::XorX => Op::XorX,
        Opcode::LshX if linux => Op::LinuxLshX,
        Opcode::RshX if linux => Op::LinuxRshX,
        Opcode::LshX => Op::LshX,
        Opcode::RshX => Op::RshX,
        Opcode::Neg => Op::Neg,
        Opcode::Tax => Op::Tax,
        Opcode::Txa => Op::Txa,
        Opcode::Ja => match next.wrapping_add(k) {
            // Validated under `Mode::LibpcapLoops`: a backward jump inside the program.
            t if t < next => Op::JaBack { t, d: next - t },
            t => Op::Ja(t),
        },
        Opcode::JeqK => Op::JeqK { k, jt, jf },
        Opcode::JgtK => Op::JgtK { k, jt, jf },
        Opcode::JgeK => Op::JgeK { k, jt, jf },
        Opcode::JsetK => Op::JsetK { k, jt, jf },
        Opcode::JeqX => Op::JeqX { jt, jf },
        Opcode::JgtX => Op::JgtX { jt, jf },
        Opcode::JgeX => Op::JgeX { jt, jf },
        Opcode::JsetX => Op::JsetX { jt, jf },
        // Validated programs hold no unknown opcodes; reject rather than panic.
        Opcode::Unknown(_) => Op::RetK(0),
    }
}
