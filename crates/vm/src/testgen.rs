//! A seeded generator of random classic BPF programs and packets, for differential tests.
//!
//! Compiled for sift-vm's own tests and, behind the `testgen` cargo feature, for other crates'
//! tests and fuzz targets (the JITs use it to compare against this interpreter). Everything is
//! deterministic given the seed, so a failing case is reproduced by its seed alone.
//!
//! [`program`] builds programs that pass validation *by construction* (in libpcap mode, and in
//! Linux mode too), covering all 49 opcodes with operands chosen near the interesting edges:
//! offsets near and past the end of typical packets and near 2^32, shifts near 32, dividends
//! and divisors of 0 and `u32::MAX`. Scratch memory is only read where every path has written
//! it first (Debian's libpcap 1.10.3 does not zero `M[]`). With [`GenConfig::loops`], some
//! `ja`s jump back (valid under `Mode::LibpcapLoops` only, and for sift's engines only:
//! libpcap's `bpf_filter` has no loop budget). [`mutate`] breaks programs in the ways validators
//! must notice.

use sift_insn::code::{self, SKF_AD_OFF};
use sift_insn::{Insn, Opcode};

use sift_gen::Prob;
/// The random source: sift-gen's generator (xoshiro256**), so the project has one PRNG.
pub use sift_gen::Rng;
use sift_wire::ethertype;

/// What [`program`] may generate.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Longest program (at least 1).
    pub max_len: usize,
    /// Allow `lsh #k`/`rsh #k` with k ≥ 32 (undefined in libpcap's C; refused by Linux).
    pub big_shifts: bool,
    /// Allow absolute loads at ancillary offsets (`SKF_AD_OFF + …`, all known to Linux).
    pub ancillary: bool,
    /// Allow absolute and `[x + k]` offsets at or above 2^31 (Linux treats them as negative).
    pub huge_offsets: bool,
    /// Allow reading `M[k]` on paths that have not written it (libpcap 1.10.3 disagrees with
    /// itself there; Linux refuses).
    pub uninitialized_reads: bool,
    /// Allow backward `ja`s (loops: valid under `Mode::LibpcapLoops` only; most never end and
    /// run until the engine's loop budget is spent).
    pub loops: bool,
}

impl GenConfig {
    /// Programs to compare with libpcap's `bpf_filter`.
    pub fn libpcap() -> Self {
        GenConfig {
            max_len: 48,
            big_shifts: false,
            ancillary: true,
            huge_offsets: true,
            uninitialized_reads: false,
            loops: false,
        }
    }

    /// Programs with loops for sift's engines: [`GenConfig::libpcap`] with backward `ja`s.
    pub fn loops() -> Self {
        GenConfig { loops: true, ..GenConfig::libpcap() }
    }

    /// Programs the kernel accepts and an `AF_UNIX` socket can run meaningfully.
    pub fn linux() -> Self {
        GenConfig {
            max_len: 48,
            big_shifts: false,
            ancillary: false,
            huge_offsets: false,
            uninitialized_reads: false,
            loops: false,
        }
    }

    /// Anything valid in libpcap mode, for self-tests.
    pub fn anything() -> Self {
        GenConfig {
            max_len: 64,
            big_shifts: true,
            ancillary: true,
            huge_offsets: true,
            uninitialized_reads: true,
            loops: false,
        }
    }
}

/// A packet offset: small, near typical packet ends, or near 2^32.
fn offset(rng: &mut Rng, cfg: &GenConfig) -> u32 {
    match rng.below(10) {
        0..=4 => rng.below(64) as u32,
        5..=6 => rng.below(140) as u32,
        7 if cfg.huge_offsets => u32::MAX - rng.below(8) as u32,
        8 if cfg.huge_offsets => {
            rng.pick(&[0x7fff_ffff, 0x8000_0000, 0xffff_fff0, 0xfff0_0000, 0xffe0_0000])
        }
        9 if cfg.ancillary => SKF_AD_OFF + 4 * rng.below(16) as u32,
        _ => rng.below(1600) as u32,
    }
}

/// EtherTypes filters compare with, as 32-bit constants.
const IPV4: u32 = ethertype::IPV4 as u32;
const IPV6: u32 = ethertype::IPV6 as u32;

/// An ALU/comparison constant.
fn constant(rng: &mut Rng) -> u32 {
    match rng.below(8) {
        0 => 0,
        1 => 1,
        2 => rng.pick(&[0x8000_0000, u32::MAX, 0x7fff_ffff, 0xffff, IPV4, IPV6]),
        3..=4 => rng.below(256) as u32,
        _ => rng.next_u32(),
    }
}

/// A random valid program (see the module documentation).
pub fn program(rng: &mut Rng, cfg: &GenConfig) -> Vec<Insn> {
    let len = 1 + rng.below(cfg.max_len.max(1) as u64) as usize;
    // `written[i]`: scratch words written on every path reaching i (None: not reached yet).
    let mut written: Vec<Option<u16>> = vec![None; len + 1];
    written[0] = Some(0);
    let mut prog = Vec::with_capacity(len);
    for i in 0..len {
        let here = written[i].unwrap_or(0);
        let insn = if i + 1 == len { ret(rng) } else { body_insn(rng, cfg, i, len, here) };
        let op = insn.opcode();
        let after = match op {
            Opcode::St | Opcode::Stx => here | (1 << (insn.k & 15)),
            _ => here,
        };
        let mut flow = |t: usize| {
            if let Some(w) = written.get_mut(t) {
                *w = Some(w.map_or(after, |m| m & after));
            }
        };
        match op {
            Opcode::Ja => flow((i + 1).wrapping_add(insn.k as usize)),
            _ if op.is_conditional_jump() => {
                flow(i + 1 + usize::from(insn.jt));
                flow(i + 1 + usize::from(insn.jf));
            }
            // A RET passes its mask on too: the kernel's check does, and it is conservative.
            _ => flow(i + 1),
        }
        prog.push(insn);
    }
    prog
}

fn ret(rng: &mut Rng) -> Insn {
    match rng.below(4) {
        0 => Insn::stmt(Opcode::RetA.code(), 0),
        1 => Insn::stmt(Opcode::RetK.code(), 0),
        2 => Insn::stmt(Opcode::RetK.code(), rng.pick(&[1, 0xffff, 262144, u32::MAX])),
        _ => Insn::stmt(Opcode::RetK.code(), rng.next_u32()),
    }
}

fn body_insn(rng: &mut Rng, cfg: &GenConfig, i: usize, len: usize, written: u16) -> Insn {
    use Opcode::*;
    let op = Opcode::ALL[rng.below(49) as usize];
    let room = (len - 2 - i) as u64; // the furthest jump offset that stays inside
    let target = |rng: &mut Rng| -> u64 {
        match rng.below(4) {
            0 => 0,
            1 => room,
            _ => rng.below(room.min(255) + 1),
        }
        .min(255)
    };
    let stmt = |k: u32| Insn::stmt(op.code(), k);
    match op {
        RetK | RetA => ret(rng),
        LdAbsW | LdAbsH | LdAbsB | LdIndW | LdIndH | LdIndB | LdxMsh => {
            let mut k = offset(rng, cfg);
            if !cfg.ancillary && k >= SKF_AD_OFF {
                k &= 0xff;
            }
            if matches!(op, LdIndW | LdIndH | LdIndB | LdxMsh)
                && k >= SKF_AD_OFF
                && !cfg.huge_offsets
            {
                k &= 0xff;
            }
            stmt(k)
        }
        LdImm | LdxImm => {
            // X feeds `[x + k]`: make it an offset as often as a constant.
            let k = if rng.chance(Prob::one_in(2)) { offset(rng, cfg) } else { constant(rng) };
            let k =
                if !cfg.huge_offsets && op == LdxImm && k >= 0x8000_0000 { k & 0xfff } else { k };
            stmt(k)
        }
        LdMem | LdxMem => {
            if written == 0 && !cfg.uninitialized_reads {
                return Insn::stmt(
                    if rng.chance(Prob::one_in(2)) { St.code() } else { Stx.code() },
                    rng.below(16) as u32,
                );
            }
            let k = if cfg.uninitialized_reads && rng.chance(Prob::one_in(4)) {
                rng.below(16) as u32
            } else {
                pick_bit(rng, written)
            };
            stmt(k)
        }
        St | Stx => stmt(rng.below(16) as u32),
        DivK | ModK => stmt(match constant(rng) {
            0 => 1 + rng.below(7) as u32,
            k => k,
        }),
        LshK | RshK => {
            let k = if cfg.big_shifts && rng.chance(Prob::one_in(4)) {
                32 + rng.below(40) as u32
            } else {
                rng.below(32) as u32
            };
            stmt(if rng.chance(Prob::one_in(8)) { 31 } else { k })
        }
        AddK | SubK | MulK | AndK | OrK | XorK => stmt(constant(rng)),
        // Back onto this instruction or any before it: `i + 1 + k` wraps around to `i + 1 - d`.
        Ja if cfg.loops && rng.chance(Prob::one_in(3)) => {
            stmt((1 + rng.below(i as u64 + 1) as u32).wrapping_neg())
        }
        Ja => stmt(target(rng) as u32),
        JeqK | JgtK | JgeK | JsetK => {
            Insn::jump(op.code(), constant(rng), target(rng) as u8, target(rng) as u8)
        }
        JeqX | JgtX | JgeX | JsetX => {
            Insn::jump(op.code(), 0, target(rng) as u8, target(rng) as u8)
        }
        _ => stmt(0),
    }
}

fn pick_bit(rng: &mut Rng, mask: u16) -> u32 {
    let bits: Vec<u32> = (0..16).filter(|b| mask & (1 << b) != 0).collect();
    if bits.is_empty() { 0 } else { rng.pick(&bits) }
}

/// A random packet: mostly short (so loads run off the end), sometimes MTU-sized, with bytes
/// that make `4*([k]&0xf)` and comparisons interesting. Returns the bytes and a wire length
/// (≥ the captured length, sometimes larger).
pub fn packet(rng: &mut Rng) -> (Vec<u8>, u32) {
    let len = match rng.below(8) {
        0 => rng.below(8) as usize,
        1..=5 => rng.below(100) as usize,
        6 => 100 + rng.below(100) as usize,
        _ => rng.below(1600) as usize,
    };
    let mut data = vec![0u8; len];
    let fill = rng.below(4);
    for b in &mut data {
        *b = match fill {
            0 => rng.next_u32() as u8,
            1 => rng.pick(&[0u8, 0xff, 0x45, 0x08, 0x06]),
            _ => (rng.next_u32() % 16) as u8,
        };
    }
    let wire =
        if rng.chance(Prob::one_in(4)) { len as u32 + rng.below(2000) as u32 } else { len as u32 };
    (data, wire)
}

/// Breaks (or occasionally keeps valid) a program in one of the ways validators check:
/// unknown or near-miss opcodes, backward and out-of-range jumps, shifts ≥ 32, division by 0,
/// bad memory indices, reads of unwritten memory, unknown ancillary offsets, no final RET,
/// empty or too-long programs.
pub fn mutate(rng: &mut Rng, prog: &[Insn]) -> Vec<Insn> {
    let mut p = prog.to_vec();
    if p.is_empty() {
        return p;
    }
    let n = p.len();
    let i = rng.below(n as u64) as usize;
    match rng.below(13) {
        0 => p[i].code = rng.next_u32() as u16,
        1 => p[i].code = rng.below(256) as u16,
        2 => {
            // Codes libpcap's bpf_validate accepts but bpf_filter aborts on, and other near misses.
            const NEAR: [u16; 16] = [
                0x0e, 0x8c, 0x0d, 0xb0, 0x18, 0x17, 0x1e, 0x8f, 0x41, 0x21, 0xa1, 0x0f, 0x104,
                0x115, 0x8006, 0xb4,
            ];
            p[i].code = rng.pick(&NEAR);
        }
        3 => {
            p[i] = Insn::stmt(
                Opcode::Ja.code(),
                rng.pick(&[u32::MAX, u32::MAX - 1, (n - i) as u32, 0x8000_0000]),
            )
        }
        4 => {
            let code = rng.pick(&[0x15u16, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d]);
            let jt = (n - i - 1 + rng.below(3) as usize).min(255) as u8;
            p[i] = Insn::jump(code, 0, jt, rng.below(4) as u8);
        }
        5 => {
            p[i] = Insn::stmt(
                rng.pick(&[Opcode::LshK.code(), Opcode::RshK.code()]),
                30 + rng.below(40) as u32,
            )
        }
        6 => p[i] = Insn::stmt(rng.pick(&[Opcode::DivK.code(), Opcode::ModK.code()]), 0),
        7 => {
            let code = rng.pick(&[
                Opcode::LdMem.code(),
                Opcode::LdxMem.code(),
                Opcode::St.code(),
                Opcode::Stx.code(),
            ]);
            p[i] = Insn::stmt(code, rng.pick(&[15, 16, 17, 255, u32::MAX]));
        }
        8 => {
            let code = rng.pick(&[Opcode::LdMem.code(), Opcode::LdxMem.code()]);
            p.insert(i, Insn::stmt(code, rng.below(16) as u32));
        }
        9 => {
            let code =
                rng.pick(&[Opcode::LdAbsW.code(), Opcode::LdAbsH.code(), Opcode::LdAbsB.code()]);
            p[i] = Insn::stmt(code, SKF_AD_OFF + rng.below(80) as u32);
        }
        10 => {
            if rng.chance(Prob::one_in(2)) {
                p.pop();
            } else if let Some(last) = p.last_mut() {
                last.code =
                    rng.pick(&[Opcode::LdImm.code(), Opcode::Tax.code(), Opcode::Ja.code()]);
            }
        }
        11 => {
            let pad =
                rng.pick(&[0usize, 1, 2]) + code::BPF_MAXINSNS - 1 - n.min(code::BPF_MAXINSNS - 1);
            let mut long = vec![Insn::stmt(Opcode::LdxImm.code(), 1); pad];
            long.extend_from_slice(&p);
            p = long;
        }
        _ => {
            if rng.chance(Prob::one_in(8)) {
                p.clear();
            } else {
                p[i].k = rng.next_u32();
            }
        }
    }
    p
}

/// Splits fuzzer bytes into a program, a packet and a wire length: the first byte is the
/// instruction count (capped by what the bytes hold), then 8 bytes per instruction
/// (`code` little-endian, `jt`, `jf`, `k` little-endian), and the rest is the packet; the wire
/// length adds the first byte's low 3 bits to the packet's length.
pub fn program_from_bytes(data: &[u8]) -> Option<(Vec<Insn>, &[u8], u32)> {
    let (&first, rest) = data.split_first()?;
    let n = usize::from(first).min(rest.len() / 8);
    let (code, pkt) = rest.split_at(n * 8);
    let prog = code
        .chunks_exact(8)
        .map(|c| {
            Insn::new(
                u16::from_le_bytes([c[0], c[1]]),
                c[2],
                c[3],
                u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            )
        })
        .collect();
    Some((prog, pkt, pkt.len() as u32 + u32::from(first & 7)))
}
