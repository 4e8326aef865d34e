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
//! * **Termination by construction, or by budget.** Programs validated under `Mode::Libpcap`
//!   or `Mode::Linux` only jump forward and end in RET, so the program counter strictly
//!   increases and every run ends within `len` steps. Those validated under
//!   `Mode::LibpcapLoops` may jump back (libpcap's `protochain` loop): each backward `ja`
//!   charges its distance against [`sift_verify::LOOP_BUDGET`] (its own predecoded op, so
//!   forward programs pay nothing), and the jump that would overdraw the budget ends the run
//!   with 0, so every run ends within `len` + the budget steps. Nothing here panics: an
//!   out-of-range program counter (impossible for validated input) returns 0.
//! * **Counting without cost.** [`Interpreter::run_counted`] is a second monomorphisation of the
//!   same loop with an instruction counter; [`Interpreter::run`] has none.
#![forbid(unsafe_code)]

pub mod batch;
mod exec;
mod meta;
mod op;
#[cfg(any(test, feature = "testgen"))]
pub mod testgen;

pub use batch::PacketRef;
use exec::{Code, Tally, exec, exec_batch};
pub use meta::PacketMeta;
use op::{Op, decode, fuse, shortcut_returns};
use sift_verify::LOOP_BUDGET;
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
    /// Whether the run returned 0 because its backward jumps spent the loop budget (a
    /// `protochain` walk around a cycle of AH headers: libpcap's `bpf_filter` never returns
    /// there).
    pub out_of_budget: bool,
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
    /// What backward jumps may charge per run ([`sift_verify::LOOP_BUDGET`] unless set).
    loop_budget: u32,
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
        Interpreter {
            ops: ops.into(),
            rets: rets.into(),
            masks: masks.into(),
            flavor,
            uses_memory,
            loop_budget: LOOP_BUDGET,
        }
    }

    /// The same interpreter with another loop budget than [`sift_verify::LOOP_BUDGET`]: what
    /// a run's backward jumps may charge in all (each its distance) before the run ends with
    /// 0. A smaller one bounds runs more tightly (tests and fuzzers use one, so that looping
    /// programs stay cheap); `sift-jit`'s `compile_with_loop_budget` takes the same.
    pub fn with_loop_budget(mut self, budget: u32) -> Self {
        self.loop_budget = budget;
        self
    }

    /// The program as the loop reads it.
    fn code(&self) -> Code<'_> {
        Code { ops: &self.ops, rets: &self.rets, masks: &self.masks, loop_budget: self.loop_budget }
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
        let mut count = Tally::default();
        if self.uses_memory {
            exec::<false, true>(self.code(), pkt, wire_len, None, &mut count)
        } else {
            exec::<false, false>(self.code(), pkt, wire_len, None, &mut count)
        }
    }

    /// Runs the filter with packet metadata (its `wire_len` is the wire length).
    pub fn run_with_meta(&self, pkt: &[u8], meta: &PacketMeta) -> u32 {
        let mut count = Tally::default();
        exec::<false, true>(self.code(), pkt, meta.wire_len, Some(meta), &mut count)
    }

    /// Runs the filter over every packet of a batch: `verdicts` is cleared and receives one
    /// value per packet, the value [`Interpreter::run`] gives for it; returns how many packets
    /// were accepted (non-zero values).
    ///
    /// One call per batch instead of one per packet: the choice of loop is made once, and the
    /// packets' headers are loaded a group at a time before they are filtered, so that their
    /// cache misses overlap (see `exec_batch`).
    pub fn run_batch(&self, packets: &[PacketRef<'_>], verdicts: &mut Vec<u32>) -> usize {
        self.run_batch_grouped(packets, verdicts, batch::TOUCH_GROUP)
    }

    /// [`Interpreter::run_batch`] with groups of `group` packets (0: no loads ahead) instead
    /// of the tuned size: for measuring it.
    pub fn run_batch_grouped(
        &self,
        packets: &[PacketRef<'_>],
        verdicts: &mut Vec<u32>,
        group: usize,
    ) -> usize {
        verdicts.clear();
        verdicts.resize(packets.len(), 0);
        if self.uses_memory {
            exec_batch::<true>(self.code(), packets, verdicts, group);
        } else {
            exec_batch::<false>(self.code(), packets, verdicts, group);
        }
        verdicts.iter().filter(|&&v| v != 0).count()
    }

    /// [`Interpreter::run`], also counting executed instructions.
    pub fn run_counted(&self, pkt: &[u8], wire_len: u32) -> Counted {
        let mut tally = Tally::default();
        let ret = exec::<true, true>(self.code(), pkt, wire_len, None, &mut tally);
        Counted { ret, executed: tally.executed, out_of_budget: tally.out_of_budget }
    }

    /// [`Interpreter::run_with_meta`], also counting executed instructions.
    pub fn run_with_meta_counted(&self, pkt: &[u8], meta: &PacketMeta) -> Counted {
        let mut tally = Tally::default();
        let ret = exec::<true, true>(self.code(), pkt, meta.wire_len, Some(meta), &mut tally);
        Counted { ret, executed: tally.executed, out_of_budget: tally.out_of_budget }
    }
}

/// Runs an already validated program once (libpcap semantics, no metadata). For many packets,
/// build an [`Interpreter`] once instead.
pub fn run(prog: &Validated, pkt: &[u8], wire_len: u32) -> u32 {
    Interpreter::new(prog).run(pkt, wire_len)
}

#[cfg(test)]
mod tests;
