//! The interpreter loop and its packet loads: the hot path.

use crate::PacketMeta;
use crate::batch::PacketRef;
use crate::meta;
use crate::op::{Op, RET_TARGET, Size};
use sift_insn::code::{self, SKF_LL_OFF, SKF_NET_OFF};

/// A predecoded program as the loop reads it.
#[derive(Clone, Copy)]
pub(crate) struct Code<'a> {
    pub ops: &'a [Op],
    /// Return values of `ret #k` instructions that jumps go to directly (see [`RET_TARGET`]).
    pub rets: &'a [u32],
    /// `(mask, k)` pairs of [`Op::JeqMaskAbsW`] and the constants of [`Op::JeqAny`].
    pub masks: &'a [(u32, u32)],
    /// What backward jumps may charge per run (see `sift_verify::LOOP_BUDGET`).
    pub loop_budget: u32,
}

/// What a counting run ([`exec`] with `COUNT`) records besides its value.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Instructions executed, including the final one.
    pub executed: u64,
    /// Whether the run ended because a backward jump would have overdrawn the loop budget.
    pub out_of_budget: bool,
}

/// The interpreter loop. `COUNT` adds the instruction counter; `MEMORY = false` (only for
/// programs without memory instructions) lets the compiler drop `M[]` and its zeroing.
#[inline(always)]
pub(crate) fn exec<const COUNT: bool, const MEMORY: bool>(
    code: Code<'_>,
    pkt: &[u8],
    wire_len: u32,
    meta: Option<&PacketMeta>,
    count: &mut Tally,
) -> u32 {
    let Code { ops, rets, masks, loop_budget } = code;
    // What backward jumps may still charge in this run.
    let mut budget = loop_budget;
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
                    count.executed += 1;
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
                        count.executed += 1;
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
                count.executed += 1;
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
                Op::JaBack { t, d } => {
                    if budget < d {
                        if COUNT {
                            count.out_of_budget = true;
                        }
                        return 0;
                    }
                    budget -= d;
                    goto!(t)
                }
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
                                count.executed += 2;
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
                        count.executed += hit.map_or(u64::from(n), |j| j as u64 + 1) - 1;
                    }
                    if hit.is_some() { goto!(jt) } else { goto!(jf) }
                }
                Op::JgtIndHRange { off, k, jt, jf } => fused!(
                    load_h(pkt, x as usize + off as usize),
                    |v| {
                        if COUNT {
                            count.executed += 1;
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
                            count.executed += 1;
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

fn load_sized(pkt: &[u8], at: usize, size: Size) -> Option<u32> {
    match size {
        Size::W => load_w(pkt, at),
        Size::H => load_h(pkt, at),
        Size::B => load_b(pkt, at),
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

/// The batch loop: every packet of `packets` through [`exec`], its value into the same place
/// of `verdicts` (only whole pairs run: the two have the same length).
///
/// Packets go in groups of `group` (0: no grouping): first a load of the first byte and of
/// byte 63 of every packet of the group, then the filter over each. The loads of the first
/// loop do not depend on each other and their loop has no data-dependent branch, so the CPU
/// keeps many cache misses in flight at once, as it cannot while filtering (a filter's
/// branches depend on the bytes it waits for); the filter then finds the headers in cache.
/// Safe code has no prefetch instruction, and a plain load ahead inside the filtering loop
/// holds up retirement until it arrives, which leaves little overlap.
#[inline(never)]
pub(crate) fn exec_batch<const MEMORY: bool>(
    code: Code<'_>,
    packets: &[PacketRef<'_>],
    verdicts: &mut [u32],
    group: usize,
) {
    let mut count = Tally::default();
    let (touch, group) = if group == 0 { (false, packets.len().max(1)) } else { (true, group) };
    for (ps, vs) in packets.chunks(group).zip(verdicts.chunks_mut(group)) {
        if touch {
            crate::batch::touch(ps);
        }
        for (verdict, p) in vs.iter_mut().zip(ps) {
            *verdict = exec::<false, MEMORY>(code, p.data(), p.wire_len(), None, &mut count);
        }
    }
}
