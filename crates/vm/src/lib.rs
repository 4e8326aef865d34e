//! The reference classic BPF interpreter.
//!
//! Every other engine in sift (JITs, compilers' constant folders) is tested against this one,
//! so it favours obviously-right semantics, and it is also the default engine, so it must be
//! at least as fast as libpcap's `bpf_filter`.
//!
//! Semantics ([`Flavor::Libpcap`], the default) are libpcap's userland `bpf_filter`:
//!
//! * A, X and `M[0..16]` start at zero (libpcap ≥ 1.11; Debian's 1.10.3 leaves `M[]`
//!   uninitialised, which only matters to programs that read memory before writing it).
//! * A load past the captured length ends the program with 0; `[x + k]` is checked without
//!   32-bit wrap-around. `len` (`ld #pktlen`) is the wire length.
//! * `div x`/`mod x` with X = 0 end the program with 0. Shifts by 32 or more give 0, both for
//!   `lsh x`/`rsh x` (as libpcap) and for `lsh #k`/`rsh #k` (undefined behaviour in libpcap's C;
//!   on x86 it shifts by `k & 31`; the Linux validator refuses such programs).
//! * `ret` returns k or A. Absolute loads at `SKF_AD_OFF` and above read nothing (return 0),
//!   except byte loads of `vlan_tci`/`vlanp`, which read the [`PacketMeta`] when one is given
//!   (libpcap's `aux_data`).
//!
//! [`Flavor::Linux`] instead follows the kernel wherever the two differ: ancillary loads read
//! [`PacketMeta`] (any load size), `SKF_LL_OFF`/`SKF_NET_OFF` loads read relative to the
//! link-layer/network header, `[x + k]` wraps around in 32 bits, and `lsh x`/`rsh x` shift by
//! `X & 31` (eBPF semantics). Both flavors run any [`Validated`] program.
//!
//! Design:
//!
//! * **Predecoding.** [`Interpreter::new`] turns the validated instructions into a compact
//!   internal enum whose jump targets are absolute indices and whose flavor-specific or rare
//!   cases (ancillary loads, shifts by constants ≥ 32) are resolved once, so the hot loop is a
//!   single `match` with no re-decoding of bit fields and no re-checking of what the validator
//!   guaranteed.
//! * **Termination by construction.** Validated programs only jump forward and end in RET, so
//!   the program counter strictly increases and every run ends within `len` steps. Nothing here
//!   panics: an out-of-range program counter (impossible for validated input) returns 0.
//! * **Counting without cost.** [`Interpreter::run_counted`] is a second monomorphisation of the
//!   same loop with an instruction counter; [`Interpreter::run`] has none.
#![forbid(unsafe_code)]

mod meta;
#[cfg(any(test, feature = "testgen"))]
pub mod testgen;

pub use meta::PacketMeta;
use sift_insn::code::{self, SKF_AD_OFF, SKF_LL_OFF, SKF_NET_OFF};
use sift_insn::{Insn, Opcode};
pub use sift_verify::Validated;

/// Whose semantics to follow where libpcap and the Linux kernel differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// libpcap's userland `bpf_filter` (the default).
    #[default]
    Libpcap,
    /// The Linux kernel's classic BPF (after its conversion to eBPF).
    Linux,
}

/// The result of a counted run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The program's return value (0 = reject).
    pub ret: u32,
    /// How many instructions were executed, including the final one.
    pub executed: u64,
}

/// Load sizes for the rare-path loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    W,
    H,
    B,
}

/// The predecoded instruction set. Jump targets are absolute indices; memory indices are < 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
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

/// A validated program, predecoded for fast repeated runs.
#[derive(Clone, Debug)]
pub struct Interpreter {
    ops: Box<[Op]>,
    /// Return values of `ret #k` instructions that jumps go to directly (see [`RET_TARGET`]).
    rets: Box<[u32]>,
    /// `(mask, k)` pairs of [`Op::JeqMaskAbsW`].
    masks: Box<[(u32, u32)]>,
    flavor: Flavor,
    /// Whether any instruction touches `M[]`; if none does, the run skips zeroing it.
    uses_memory: bool,
}

impl Interpreter {
    /// Prepares `prog` with libpcap's semantics.
    pub fn new(prog: &Validated) -> Self {
        Self::with_flavor(prog, Flavor::Libpcap)
    }

    /// Prepares `prog` with the chosen semantics.
    pub fn with_flavor(prog: &Validated, flavor: Flavor) -> Self {
        let mut ops: Vec<Op> =
            prog.insns().iter().enumerate().map(|(i, insn)| decode(insn, i, flavor)).collect();
        let masks = fuse(&mut ops);
        let rets = shortcut_returns(&mut ops);
        let uses_memory = ops
            .iter()
            .any(|op| matches!(op, Op::LdMem(_) | Op::LdxMem(_) | Op::St(_) | Op::Stx(_)));
        Interpreter { ops: ops.into(), rets: rets.into(), masks: masks.into(), flavor, uses_memory }
    }

    /// The semantics this interpreter follows.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Runs the filter over `pkt` (the captured bytes) with wire length `wire_len`, without
    /// metadata. Returns the filter's value: 0 rejects, anything else accepts (and is the snap
    /// length to keep).
    #[inline]
    pub fn run(&self, pkt: &[u8], wire_len: u32) -> u32 {
        let mut count = 0;
        if self.uses_memory {
            exec::<false, true>(&self.ops, &self.rets, &self.masks, pkt, wire_len, None, &mut count)
        } else {
            exec::<false, false>(
                &self.ops,
                &self.rets,
                &self.masks,
                pkt,
                wire_len,
                None,
                &mut count,
            )
        }
    }

    /// Runs the filter with packet metadata (its `wire_len` is the wire length).
    pub fn run_with_meta(&self, pkt: &[u8], meta: &PacketMeta) -> u32 {
        let mut count = 0;
        exec::<false, true>(
            &self.ops,
            &self.rets,
            &self.masks,
            pkt,
            meta.wire_len,
            Some(meta),
            &mut count,
        )
    }

    /// [`Interpreter::run`], also counting executed instructions.
    pub fn run_counted(&self, pkt: &[u8], wire_len: u32) -> Counted {
        let mut executed = 0;
        let ret = exec::<true, true>(
            &self.ops,
            &self.rets,
            &self.masks,
            pkt,
            wire_len,
            None,
            &mut executed,
        );
        Counted { ret, executed }
    }

    /// [`Interpreter::run_with_meta`], also counting executed instructions.
    pub fn run_with_meta_counted(&self, pkt: &[u8], meta: &PacketMeta) -> Counted {
        let mut executed = 0;
        let ret = exec::<true, true>(
            &self.ops,
            &self.rets,
            &self.masks,
            pkt,
            meta.wire_len,
            Some(meta),
            &mut executed,
        );
        Counted { ret, executed }
    }
}

/// The interpreter loop. `COUNT` adds the instruction counter; `MEMORY = false` (only for
/// programs without memory instructions) lets the compiler drop `M[]` and its zeroing.
#[inline(always)]
fn exec<const COUNT: bool, const MEMORY: bool>(
    ops: &[Op],
    rets: &[u32],
    masks: &[(u32, u32)],
    pkt: &[u8],
    wire_len: u32,
    meta: Option<&PacketMeta>,
    count: &mut u64,
) -> u32 {
    let mut a: u32 = 0;
    let mut x: u32 = 0;
    let mut mem = [0u32; 16];
    let mut pc = 0usize;
    // Continue at a jump target, or return directly when the target is a `ret #k`.
    //
    // Conditional jumps are written `if c { goto!(jt) } else { goto!(jf) }`, never
    // `goto!(if c { jt } else { jf })`: the latter compiles to a `cmov`, which makes the next
    // instruction's address depend on the packet load and comparison, so the CPU cannot
    // fetch ahead. As a real branch it is predicted and the dispatch runs speculatively; on
    // `sift bench` over a realistic capture this made the interpreter 1.4–2.5× faster
    // (e.g. 47 → 25 ns/packet on a 190-instruction filter).
    macro_rules! goto {
        ($target:expr) => {{
            let target: u32 = $target;
            if target >= RET_TARGET {
                if COUNT {
                    *count += 1;
                }
                return rets.get((target - RET_TARGET) as usize).copied().unwrap_or(0);
            }
            pc = target as usize;
        }};
    }
    // A fused load-and-branch: load into A (or end with 0), count the jump, branch.
    macro_rules! fused {
        ($load:expr, |$v:ident| $cond:expr, $jt:expr, $jf:expr) => {
            match $load {
                Some($v) => {
                    a = $v;
                    if COUNT {
                        *count += 1;
                    }
                    if $cond { goto!($jt) } else { goto!($jf) }
                }
                None => return 0,
            }
        };
    }
    // One step: fetch, decode, execute. The loop below expands it twice, so that the
    // indirect jump of the `match` exists at several places: each copy gets its own entry in
    // the CPU's branch target predictor, and a copy tends to see the same few opcodes (those
    // at the same distance from the program's start on common paths), which makes dispatch far
    // better predicted than a single shared jump (the effect "threaded code" has in C). Measured
    // on the engine benchmark: see crates/vm/benches/interp.rs.
    macro_rules! step {
        () => {{
            let Some(&op) = ops.get(pc) else { return 0 };
            if COUNT {
                *count += 1;
            }
            pc += 1;
            match op {
                Op::RetK(k) => return k,
                Op::RetA => return a,
                Op::LdAbsW(k) => match load_w(pkt, k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::LdAbsH(k) => match load_h(pkt, k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::LdAbsB(k) => match pkt.get(k as usize) {
                    Some(&v) => a = u32::from(v),
                    None => return 0,
                },
                Op::LdIndW(k) => match load_w(pkt, x as usize + k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::LdIndH(k) => match load_h(pkt, x as usize + k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::LdIndB(k) => match pkt.get(x as usize + k as usize) {
                    Some(&v) => a = u32::from(v),
                    None => return 0,
                },
                Op::LdImm(k) => a = k,
                Op::LdxImm(k) => x = k,
                Op::LdLen => a = wire_len,
                Op::LdxLen => x = wire_len,
                Op::LdMem(i) if MEMORY => a = mem[usize::from(i) & 15],
                Op::LdxMem(i) if MEMORY => x = mem[usize::from(i) & 15],
                Op::St(i) if MEMORY => mem[usize::from(i) & 15] = a,
                Op::Stx(i) if MEMORY => mem[usize::from(i) & 15] = x,
                Op::LdMem(_) | Op::LdxMem(_) | Op::St(_) | Op::Stx(_) => return 0,
                Op::LdxMsh(k) => match pkt.get(k as usize) {
                    Some(&v) => x = u32::from(v & 0xf) << 2,
                    None => return 0,
                },
                Op::AddK(k) => a = a.wrapping_add(k),
                Op::SubK(k) => a = a.wrapping_sub(k),
                Op::MulK(k) => a = a.wrapping_mul(k),
                // The validator refused k = 0; `checked_*` keeps this panic-free regardless.
                Op::DivK(k) => a = a.checked_div(k).unwrap_or(0),
                Op::ModK(k) => a = a.checked_rem(k).unwrap_or(0),
                Op::AndK(k) => a &= k,
                Op::OrK(k) => a |= k,
                Op::XorK(k) => a ^= k,
                // Predecoding turned shifts by ≥ 32 into `ld #0`, so k < 32 here.
                Op::LshK(k) => a = a.wrapping_shl(k),
                Op::RshK(k) => a = a.wrapping_shr(k),
                Op::AddX => a = a.wrapping_add(x),
                Op::SubX => a = a.wrapping_sub(x),
                Op::MulX => a = a.wrapping_mul(x),
                Op::DivX => match a.checked_div(x) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::ModX => match a.checked_rem(x) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::AndX => a &= x,
                Op::OrX => a |= x,
                Op::XorX => a ^= x,
                Op::LshX => a = a.checked_shl(x).unwrap_or(0),
                Op::RshX => a = a.checked_shr(x).unwrap_or(0),
                Op::Neg => a = a.wrapping_neg(),
                Op::Tax => x = a,
                Op::Txa => a = x,
                Op::Ja(t) => goto!(t),
                Op::JeqK { k, jt, jf } => {
                    if a == k {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JgtK { k, jt, jf } => {
                    if a > k {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JgeK { k, jt, jf } => {
                    if a >= k {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JsetK { k, jt, jf } => {
                    if a & k != 0 {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JeqX { jt, jf } => {
                    if a == x {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JgtX { jt, jf } => {
                    if a > x {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JgeX { jt, jf } => {
                    if a >= x {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JsetX { jt, jf } => {
                    if a & x != 0 {
                        goto!(jt)
                    } else {
                        goto!(jf)
                    }
                }
                Op::JeqAbsW { off, k, jt, jf } => {
                    fused!(load_w(pkt, off as usize), |v| v == k, jt, jf)
                }
                Op::JeqAbsH { off, k, jt, jf } => {
                    fused!(load_h(pkt, off as usize), |v| v == k, jt, jf)
                }
                Op::JeqAbsB { off, k, jt, jf } => {
                    fused!(load_b(pkt, off as usize), |v| v == k, jt, jf)
                }
                Op::JeqIndH { off, k, jt, jf } => {
                    fused!(load_h(pkt, x as usize + off as usize), |v| v == k, jt, jf)
                }
                Op::JgtAbsH { off, k, jt, jf } => {
                    fused!(load_h(pkt, off as usize), |v| v > k, jt, jf)
                }
                // The skipped `jge #0` counts once the load has succeeded.
                Op::JeqMaskAbsW { off, mk, jt, jf } => {
                    let (mask, k) = masks.get(usize::from(mk)).copied().unwrap_or((0, 1));
                    match load_w(pkt, usize::from(off)) {
                        Some(v) => {
                            a = v & mask;
                            if COUNT {
                                *count += 2;
                            }
                            if a == k {
                                goto!(jt)
                            } else {
                                goto!(jf)
                            };
                        }
                        None => return 0,
                    }
                }
                Op::JeqAny { first, n, jt, jf } => {
                    let ks = masks.get(usize::from(first)..usize::from(first) + usize::from(n));
                    let hit = ks.and_then(|ks| ks.iter().position(|&(k, _)| k == a));
                    if COUNT {
                        // The `jeq`s up to the one that matched (or all of them) ran.
                        *count += hit.map_or(u64::from(n), |j| j as u64 + 1) - 1;
                    }
                    if hit.is_some() { goto!(jt) } else { goto!(jf) }
                }
                Op::JgtIndHRange { off, k, jt, jf } => fused!(
                    load_h(pkt, x as usize + off as usize),
                    |v| {
                        if COUNT {
                            *count += 1;
                        }
                        v > k
                    },
                    jt,
                    jf
                ),
                Op::JgtAbsHRange { off, k, jt, jf } => fused!(
                    load_h(pkt, off as usize),
                    |v| {
                        if COUNT {
                            *count += 1;
                        }
                        v > k
                    },
                    jt,
                    jf
                ),
                Op::JgtIndH { off, k, jt, jf } => {
                    fused!(load_h(pkt, x as usize + off as usize), |v| v > k, jt, jf)
                }
                Op::JgeAbsH { off, k, jt, jf } => {
                    fused!(load_h(pkt, off as usize), |v| v >= k, jt, jf)
                }
                Op::JgeIndH { off, k, jt, jf } => {
                    fused!(load_h(pkt, x as usize + off as usize), |v| v >= k, jt, jf)
                }
                Op::JsetAbsH { off, k, jt, jf } => {
                    fused!(load_h(pkt, off as usize), |v| v & k != 0, jt, jf)
                }
                Op::JsetAbsB { off, k, jt, jf } => {
                    fused!(load_b(pkt, off as usize), |v| v & k != 0, jt, jf)
                }
                Op::PcapVlan { present } => match meta {
                    Some(m) if present => a = u32::from(m.vlan_present),
                    Some(m) => a = u32::from(m.vlan_tci),
                    None => return 0,
                },
                Op::LinuxSpecial { k, size } => match linux_special(pkt, k, size, a, x, meta) {
                    Special::Value(v) => a = v,
                    Special::XorX => a ^= x,
                    Special::Reject => return 0,
                },
                Op::LinuxInd { k, size } => match linux_load(pkt, x.wrapping_add(k), size, meta) {
                    Some(v) => a = v,
                    None => return 0,
                },
                Op::LinuxMsh(k) => match linux_load(pkt, k, Size::B, meta) {
                    Some(v) => x = (v & 0xf) << 2,
                    None => return 0,
                },
                Op::LinuxLshX => a = a.wrapping_shl(x),
                Op::LinuxRshX => a = a.wrapping_shr(x),
            }
        }};
    }
    loop {
        step!();
        step!();
    }
}

/// Runs an already validated program once (libpcap semantics, no metadata). For many packets,
/// build an [`Interpreter`] once instead.
pub fn run(prog: &Validated, pkt: &[u8], wire_len: u32) -> u32 {
    Interpreter::new(prog).run(pkt, wire_len)
}

#[inline(always)]
fn load_w(pkt: &[u8], at: usize) -> Option<u32> {
    let b = pkt.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

#[inline(always)]
fn load_h(pkt: &[u8], at: usize) -> Option<u32> {
    let b = pkt.get(at..at.checked_add(2)?)?;
    Some(u32::from(u16::from_be_bytes([b[0], b[1]])))
}

#[inline(always)]
fn load_b(pkt: &[u8], at: usize) -> Option<u32> {
    pkt.get(at).map(|&b| u32::from(b))
}

/// Jump targets at or above this value mean "return `rets[target - RET_TARGET]`": a jump to a
/// `ret #k` returns at once instead of dispatching one more instruction. Every filter path ends
/// in such a jump, so this saves a dispatch per packet.
const RET_TARGET: u32 = 1 << 31;

/// Rewrites jump targets that land on `ret #k` into [`RET_TARGET`] form; returns the table of
/// return values they index.
fn shortcut_returns(ops: &mut [Op]) -> Vec<u32> {
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

fn fuse(ops: &mut [Op]) -> Vec<(u32, u32)> {
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

fn load_sized(pkt: &[u8], at: usize, size: Size) -> Option<u32> {
    match size {
        Size::W => load_w(pkt, at),
        Size::H => load_h(pkt, at),
        Size::B => load_b(pkt, at),
    }
}

fn decode(insn: &Insn, index: usize, flavor: Flavor) -> Op {
    let k = insn.k;
    let next = index as u32 + 1;
    // Validated: targets are forward and in range, so these never wrap.
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
        Opcode::Ja => Op::Ja(next.wrapping_add(k)),
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

enum Special {
    Value(u32),
    XorX,
    Reject,
}

/// Linux: an absolute load at `k ≥ SKF_LL_OFF`.
fn linux_special(
    pkt: &[u8],
    k: u32,
    size: Size,
    a: u32,
    x: u32,
    meta: Option<&PacketMeta>,
) -> Special {
    let Some(off) = code::ancillary_offset(k) else {
        return match linux_load(pkt, k, size, meta) {
            Some(v) => Special::Value(v),
            None => Special::Reject,
        };
    };
    if off == code::SKF_AD_ALU_XOR_X {
        return Special::XorX;
    }
    if off == code::SKF_AD_NLATTR {
        return Special::Value(meta::nlattr(pkt, a, x));
    }
    if off == code::SKF_AD_NLATTR_NEST {
        return Special::Value(meta::nlattr_nest(pkt, a, x));
    }
    let default = PacketMeta::default();
    let m = meta.unwrap_or(&default);
    let v = match off {
        code::SKF_AD_PROTOCOL => u32::from(m.protocol),
        code::SKF_AD_PKTTYPE => u32::from(m.pkttype),
        code::SKF_AD_IFINDEX => match m.ifindex {
            Some(i) => i,
            None => return Special::Reject,
        },
        code::SKF_AD_HATYPE => match m.hatype {
            Some(h) => u32::from(h),
            None => return Special::Reject,
        },
        code::SKF_AD_MARK => m.mark,
        code::SKF_AD_QUEUE => u32::from(m.queue),
        code::SKF_AD_RXHASH => m.rxhash,
        code::SKF_AD_CPU => m.cpu,
        code::SKF_AD_VLAN_TAG => u32::from(m.vlan_tci),
        code::SKF_AD_VLAN_TAG_PRESENT => u32::from(m.vlan_present),
        code::SKF_AD_PAY_OFFSET => m.pay_offset,
        code::SKF_AD_RANDOM => m.random,
        code::SKF_AD_VLAN_TPID => u32::from(m.vlan_tpid),
        _ => 0,
    };
    Special::Value(v)
}

/// Linux: a packet load at a signed 32-bit offset (`bpf_skb_load_helper_*`): non-negative
/// offsets read the packet; `SKF_NET_OFF`/`SKF_LL_OFF` regions read relative to the network or
/// link-layer header; anything else fails.
fn linux_load(pkt: &[u8], offset: u32, size: Size, meta: Option<&PacketMeta>) -> Option<u32> {
    if (offset as i32) >= 0 {
        return load_sized(pkt, offset as usize, size);
    }
    let (base, rel) = if offset >= SKF_NET_OFF {
        (meta?.net_header?, offset - SKF_NET_OFF)
    } else if offset >= SKF_LL_OFF {
        (meta?.mac_header?, offset - SKF_LL_OFF)
    } else {
        return None;
    };
    load_sized(pkt, (base as usize).checked_add(rel as usize)?, size)
}

#[cfg(test)]
mod tests;
