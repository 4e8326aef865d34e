//! sift's eBPF verifier: decides, before a program runs, that every run of it is memory-safe
//! and ends, the way the Linux kernel's verifier (`kernel/bpf/verifier.c`) decides it, so that
//! programs it accepts can run without per-access checks and programs the kernel refuses are
//! refused here with the kernel's reasons.
//!
//! The model is the kernel's, sound first:
//!
//! * [`cfg`](mod@cfg): control flow before any path: functions, jumps inside their function, no fall
//!   off the end, no unreachable instruction, prune points.
//! * [`scalar`]: numbers as known bits ([`scalar::Tnum`]) and signed/unsigned 64/32-bit ranges,
//!   with sound arithmetic and branch refinement.
//! * [`state`]: register types (scalar, ctx, stack, packet/meta/end, map pointer, map value
//!   or null, ring buffer memory), stack slots with spilled registers, references; the
//!   pruning test.
//! * [`context`]: the context fields per program type; [`helpers`]: helper prototypes.
//! * `explore` (with `alu` and `access`): every path explored with an explicit stack (no
//!   recursion), states stored at prune points and later paths pruned against verified ones,
//!   bounded loops accepted when their exploration ends, a budget of 1,000,000 processed
//!   instructions ("BPF program is too large").
//!
//! [`verify`] gives a [`Report`] or a located [`VerifyError`] (`instruction 5: invalid access
//! to packet, off=14 size=2, R2(id=0,off=14,r=0)`).
#![forbid(unsafe_code)]

mod access;
mod alu;
pub mod cfg;
pub mod context;
mod error;
mod explore;
pub mod helpers;
pub mod scalar;
pub mod state;

use sift_ebpf::{EbpfInsn, Insn, MapSpec};

pub use error::{VerifyError, VerifyErrorKind};

/// The most slots a program may have (the kernel's `BPF_COMPLEXITY_LIMIT_INSNS`, which is also
/// its privileged program size limit).
pub const MAX_INSNS: usize = 1_000_000;
/// Instructions the exploration may process before giving up.
pub const PROCESSED_LIMIT: u64 = 1_000_000;
/// Paths that may be pending at once (the kernel's `BPF_COMPLEXITY_LIMIT_JMP_SEQ`).
pub const PENDING_LIMIT: usize = 8192;

/// The program type: a context's rules come from it. [`ProgType::Unspec`] is refused (there
/// is no context to check against).
pub use sift_ebpf::ProgType;

/// How the verifier judges what is not a memory-safety question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// A privileged loader (`CAP_PERFMON`, the kernel's `allow_ptr_leaks` and
    /// `allow_uninit_stack`): pointers may be returned, compared, stored into maps and
    /// partially copied, and stack bytes never written read as unknown numbers. Off by
    /// default: sift refuses programs that could reveal addresses or read stale stack, as the
    /// kernel does for unprivileged loaders. Neither is a memory-safety question.
    pub privileged: bool,
}

/// What the verification of an accepted program cost, and what it proved about each memory
/// access.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Instructions processed over every explored path.
    pub processed: u64,
    /// The most states stored at one instruction.
    pub max_states_per_insn: usize,
    /// States stored in all.
    pub total_states: usize,
    /// By slot: for each load, store or atomic, the kind of its base pointer on every path
    /// that reaches it (`None` for other slots). The access was proven inside that region
    /// (a JIT may translate it without a check, `sift-ebpf-jit`'s verified mode).
    pub access_bases: Vec<Option<AccessBase>>,
}

/// What a memory access's base register points into, on every path that reaches the access
/// ([`Report::access_bases`]). Pruning keeps this complete: a path is pruned only against a
/// verified state whose pointer registers have the same kinds (`State::subsumes`), so the
/// access was recorded with the pruned path's kind too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessBase {
    /// A stack frame (any frame's).
    Stack,
    /// The context.
    Ctx,
    /// The packet (`data` to `data_end`).
    Packet,
    /// The packet's metadata (`data_meta` to `data`).
    PacketMeta,
    /// A value of map `n`.
    MapValue(u32),
    /// A ring buffer record.
    RingbufRecord,
    /// Different kinds on different paths.
    Mixed,
}

impl AccessBase {
    /// The base of a register of kind `kind`, if it is a pointer to memory.
    pub fn of(kind: state::Kind) -> Option<AccessBase> {
        use state::Kind;
        Some(match kind {
            Kind::Stack(_) => AccessBase::Stack,
            Kind::Ctx => AccessBase::Ctx,
            Kind::Packet => AccessBase::Packet,
            Kind::PacketMeta => AccessBase::PacketMeta,
            Kind::MapValue(n) => AccessBase::MapValue(n),
            Kind::RingbufMem(_) => AccessBase::RingbufRecord,
            _ => return None,
        })
    }

    /// The base of an access seen as `self` on some paths and `other` on others.
    pub fn join(self, other: AccessBase) -> AccessBase {
        if self == other { self } else { AccessBase::Mixed }
    }
}

/// Verifies a program (slots, 8 bytes each as the kernel takes them) of type `prog` that
/// references `maps` (`lddw map_fd(i)` / `map_value(i, off)` name `maps[i]`).
pub fn verify(slots: &[EbpfInsn], prog: ProgType, maps: &[MapSpec]) -> Result<Report, VerifyError> {
    verify_with(slots, prog, maps, Options::default())
}

/// [`verify`] with options.
pub fn verify_with(
    slots: &[EbpfInsn],
    prog: ProgType,
    maps: &[MapSpec],
    options: Options,
) -> Result<Report, VerifyError> {
    if slots.is_empty() {
        return Err(VerifyError { insn: 0, kind: VerifyErrorKind::Empty });
    }
    if slots.len() > MAX_INSNS {
        return Err(VerifyError { insn: 0, kind: VerifyErrorKind::TooLong(slots.len()) });
    }
    if prog == ProgType::Unspec {
        return Err(VerifyError { insn: 0, kind: VerifyErrorKind::NoProgType });
    }
    let located = sift_ebpf::decode_program(slots)
        .map_err(|e| VerifyError { insn: e.index, kind: VerifyErrorKind::Decode(e.kind) })?;
    let located: Vec<(usize, Insn)> = located.iter().map(|l| (l.index, l.insn)).collect();
    let cfg = cfg::Cfg::build(&located, slots.len())?;
    explore::Verifier::new(cfg, prog, maps, options).run()
}

/// [`verify`] for typed instructions (encoded to slots first; errors name slot indices).
pub fn verify_insns(
    insns: &[Insn],
    prog: ProgType,
    maps: &[MapSpec],
) -> Result<Report, VerifyError> {
    verify(&sift_ebpf::encode_program(insns), prog, maps)
}
