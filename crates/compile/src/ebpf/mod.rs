//! The native eBPF back end: a compiled filter's graph ([`crate::ir::Cfg`]) as an XDP, TC or
//! socket-filter program, without going through classic BPF.
//!
//! **Why it exists.** The kernel runs classic filters by translating them to eBPF
//! (`sift_ebpf::from_cbpf` does the same in sift): one classic instruction at a time, 32-bit
//! registers, a bounds check per load, and `protochain`'s walk unrolled to thousands of
//! instructions. Generating eBPF from the optimized graph instead keeps the graph's structure:
//! one bounds check per group of loads (hoisted to the block, and skipped when every path into
//! a block has proven it), direct packet access the verifier understands, and the walk as a
//! bounded loop (`ip6 protochain 6` is a few dozen instructions). Deploying filters at XDP and
//! TC (`sift xdp attach`) starts here.
//!
//! **Use.** [`lower`] takes a [`Compiled`] filter (compiled for EN10MB: XDP, TC and `AF_PACKET`
//! sockets see Ethernet frames) and [`EbpfOptions`] (the [`Hook`], the verdicts, raw mode,
//! counting) and returns an [`EbpfFilter`]: the typed instructions ([`EbpfFilter::insns`]),
//! the maps they reference ([`EbpfFilter::maps`]), the program type, a listing.
//!
//! ```
//! use sift_compile::ebpf::{self, EbpfOptions, Hook};
//! use sift_compile::pipeline::{self, LinkType, Options};
//!
//! let resolver = sift_filter::TableResolver::well_known();
//! let compiled = pipeline::compile("ip6 protochain 6", &Options::new(LinkType::EN10MB, &resolver))?;
//! let xdp = ebpf::lower(&compiled, &EbpfOptions::new(Hook::Xdp)).unwrap();
//! assert!(xdp.len() < 100);
//! # Ok::<(), sift_compile::CompileError>(())
//! ```
//!
//! **Semantics.** The program gives the classic program's verdict on every packet, truncated
//! ones included: a load past the packet's end ends the program with the miss verdict (raw
//! mode: 0), and `len` is the packet's wire length (XDP: `data_end - data`; TC and socket
//! filters: `skb->len`). In raw mode ([`EbpfOptions::raw`]) the program returns the classic
//! program's value itself (for differential tests); otherwise a non-zero classic value is the
//! match ([`EbpfOptions::on_match`]) and 0 the miss ([`EbpfOptions::on_miss`]). Counting
//! ([`EbpfOptions::count`]) adds one to element 0 (matched) or 1 (not matched) of a per-CPU
//! array ([`count_map`], referenced as map 0 by a `lddw` with `BPF_PSEUDO_MAP_FD`, as
//! `sift-ebpf-elf` produces it: the loader puts the map's descriptor in its immediate) and
//! then returns the match verdict for every packet.
//!
//! **How packets are read** (the module `lower` says which registers and checks):
//!
//! * XDP: direct packet access. Linear XDP data is shorter than 64 KiB (a frame is a page;
//!   programs are loaded without `BPF_F_XDP_HAS_FRAGS`, so multi-buffer frames never reach them).
//! * TC: direct packet access when the whole skb is linear (`data + skb->len <= data_end`),
//!   which is the common case; otherwise a second body reads through `bpf_skb_load_bytes`, so
//!   bytes in fragments read as classic BPF reads them.
//! * Socket filters have no direct packet access: `bpf_skb_load_bytes`, one call per cluster of
//!   nearby loads of a block. (The legacy `LD_ABS` instructions would end the program with 0
//!   on a short packet, which is neither a counted miss nor [`EbpfOptions::on_miss`].)
//!
//! A program reading `len` at XDP subtracts two packet pointers, which the kernel allows to
//! loaders with `CAP_PERFMON` (root); sift's verifier accepts it with its `privileged` option.
//!
//! **`protochain`** is a bounded loop (module `walk`): as many header steps as the classic
//! program's unrolled walk has ([`WalkForm::Unrolled`]), with the same results; for a program
//! compiled with libpcap's loop ([`WalkForm::Loop`]), at most [`LOOP_WALK_STEPS`] steps, after
//! which the program ends with 0, as libpcap's loop does when its budget runs out.
//!
//! **Refused** with a located [`EbpfGenError`]: link types other than EN10MB, Linux ancillary
//! loads (`inbound`, `ifindex`, `vlan` compiled with Linux extensions), jumps beyond eBPF's
//! 16-bit offsets.

mod asm;
mod error;
mod lower;
mod multi;
mod plan;
mod walk;

pub use error::{At, EbpfGenError, EbpfGenErrorKind};
pub use multi::{EbpfMultiFilter, MultiResult, RESULT_MAP, ResultLayout, lower_multi, result_map};

use sift_ebpf::isa::{ImmKind, Insn};
use sift_ebpf::{EbpfInsn, EbpfProgram, MapSpec, MapType, ProgType};
use sift_wire::LinkType;

use crate::ir::{Src, Stmt, XSrc};
use crate::pipeline::Compiled;
use crate::walk::WalkForm;
use lower::{Lowering, Steps};
use plan::Access;

/// `XDP_DROP`.
pub const XDP_DROP: u32 = 1;
/// `XDP_PASS`.
pub const XDP_PASS: u32 = 2;
/// `TC_ACT_OK`.
pub const TC_ACT_OK: u32 = 0;
/// `TC_ACT_SHOT`.
pub const TC_ACT_SHOT: u32 = 2;
/// The bytes a socket filter keeps of a matching packet by default: tcpdump's snapshot length.
pub const SOCKET_SNAPLEN: u32 = 262_144;

/// The most header steps a walk of a program compiled with libpcap's loop makes
/// ([`WalkForm::Loop`]): the kernel's verifier explores every iteration, and no chain of the
/// test corpora comes near it.
pub const LOOP_WALK_STEPS: usize = 64;

/// `SKF_AD_OFF`: where Linux's ancillary loads start.
const SKF_AD_OFF: u32 = 0xffff_f000;

/// Where the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// XDP (`BPF_PROG_TYPE_XDP`): `xdp_md`, before the stack sees the frame.
    Xdp,
    /// TC (`BPF_PROG_TYPE_SCHED_CLS`): `__sk_buff` at ingress or egress.
    Tc,
    /// A socket filter (`BPF_PROG_TYPE_SOCKET_FILTER`, `SO_ATTACH_BPF` on an `AF_PACKET`
    /// socket): `__sk_buff`, the frame from its Ethernet header.
    SocketFilter,
}

impl Hook {
    /// The kernel's program type.
    pub fn prog_type(self) -> ProgType {
        match self {
            Hook::Xdp => ProgType::Xdp,
            Hook::Tc => ProgType::SchedCls,
            Hook::SocketFilter => ProgType::SocketFilter,
        }
    }

    /// The verdicts for a match and a miss: pass and drop (`XDP_PASS`/`XDP_DROP`,
    /// `TC_ACT_OK`/`TC_ACT_SHOT`), or for a socket filter the bytes to keep
    /// ([`SOCKET_SNAPLEN`]) and 0.
    pub fn verdicts(self) -> (u32, u32) {
        match self {
            Hook::Xdp => (XDP_PASS, XDP_DROP),
            Hook::Tc => (TC_ACT_OK, TC_ACT_SHOT),
            Hook::SocketFilter => (SOCKET_SNAPLEN, 0),
        }
    }
}

/// How to lower a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EbpfOptions {
    /// Where the program runs.
    pub hook: Hook,
    /// What a matching packet returns.
    pub on_match: u32,
    /// What a packet that does not match returns (also one too short for a load).
    pub on_miss: u32,
    /// Return the classic program's value itself instead of the verdicts (differential tests).
    pub raw: bool,
    /// Count matches (element 0) and misses (element 1) in a per-CPU array ([`count_map`]) and
    /// return [`EbpfOptions::on_match`] for every packet (raw mode: still the value; with
    /// [`EbpfOptions::xsk`], the verdicts are kept).
    pub count: bool,
    /// XDP only: redirect a match into the AF_XDP socket of the frame's receive queue
    /// (`bpf_redirect_map` on the [`xsk_map`], the last of [`EbpfFilter::maps`], keyed by
    /// `xdp_md.rx_queue_index`); [`EbpfOptions::on_miss`] is what a miss returns and what a
    /// match returns when the queue has no socket. Counted, element 0 counts the matches
    /// whose redirect was taken (exactly the frames handed to user space) and element 1 the
    /// rest.
    pub xsk: bool,
}

impl EbpfOptions {
    /// Options for `hook`: its verdicts ([`Hook::verdicts`]), not raw, not counting.
    pub fn new(hook: Hook) -> EbpfOptions {
        let (on_match, on_miss) = hook.verdicts();
        EbpfOptions { hook, on_match, on_miss, raw: false, count: false, xsk: false }
    }

    /// The same options in raw mode.
    pub fn raw(self) -> EbpfOptions {
        EbpfOptions { raw: true, ..self }
    }

    /// The same options, counting (and passing everything).
    pub fn counting(self) -> EbpfOptions {
        EbpfOptions { count: true, ..self }
    }

    /// The same options, matches redirected to AF_XDP sockets ([`EbpfOptions::xsk`]).
    pub fn to_xsk(self) -> EbpfOptions {
        EbpfOptions { xsk: true, ..self }
    }

    /// The same options with other verdicts.
    pub fn verdicts(self, on_match: u32, on_miss: u32) -> EbpfOptions {
        EbpfOptions { on_match, on_miss, ..self }
    }
}

/// The counting map ([`EbpfOptions::count`]): a per-CPU array of two `u64`, matched and not
/// matched.
pub fn count_map() -> MapSpec {
    MapSpec {
        name: "sift_counts".into(),
        map_type: MapType::PerCpuArray,
        key_size: 4,
        value_size: 8,
        max_entries: 2,
        flags: 0,
        initial: Vec::new(),
    }
}

/// The name of the map of AF_XDP sockets ([`EbpfOptions::xsk`]).
pub const XSK_MAP: &str = sift_ebpf::xdp_md::XSK_MAP;

/// The AF_XDP sockets a filter redirects to ([`EbpfOptions::xsk`]): an `XSKMAP` by receive
/// queue, 64 queues (a loader may size it to the interface).
pub fn xsk_map() -> MapSpec {
    sift_ebpf::xdp_md::xsk_map_spec(XSK_MAP, 64)
}

/// A lowered filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EbpfFilter {
    /// The instructions (a map reference is a `lddw` with [`ImmKind::MapFd`] and the map's
    /// index in [`EbpfFilter::maps`] as its immediate, until a loader puts the descriptor there).
    pub insns: Vec<Insn>,
    /// The maps the program references: [`count_map`] when counting, then [`xsk_map`] when
    /// redirecting to AF_XDP sockets.
    pub maps: Vec<MapSpec>,
    /// Where it runs.
    pub hook: Hook,
}

impl EbpfFilter {
    /// The instruction slots (8 bytes each as the kernel takes them; a `lddw` takes two).
    pub fn slots(&self) -> Vec<EbpfInsn> {
        sift_ebpf::encode_program(&self.insns)
    }

    /// The program's bytes as `bpf(BPF_PROG_LOAD)` takes them, with map `i`'s reference
    /// holding `fds[i]` (the descriptor of the map created from `maps[i]`; a reference to a map
    /// without one keeps its index).
    pub fn bytes_with_map_fds(&self, fds: &[i32]) -> Vec<u8> {
        let insns: Vec<Insn> = self
            .insns
            .iter()
            .map(|i| match *i {
                Insn::LdImm64 { dst, kind: ImmKind::MapFd, imm } => Insn::LdImm64 {
                    dst,
                    kind: ImmKind::MapFd,
                    imm: fds.get(imm as usize).map_or(imm, |&fd| fd as u64),
                },
                other => other,
            })
            .collect();
        sift_ebpf::encode_program(&insns).iter().flat_map(EbpfInsn::encode).collect()
    }

    /// The slots as an [`EbpfProgram`].
    pub fn program(&self) -> EbpfProgram {
        EbpfProgram { insns: self.slots() }
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.insns.iter().map(Insn::slots).sum()
    }

    /// Whether there are no instructions (never, for a lowered filter).
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// The kernel's program type.
    pub fn prog_type(&self) -> ProgType {
        self.hook.prog_type()
    }

    /// The program one instruction a line, in the notation of the kernel verifier's log
    /// (`r2 += 14`, `if w7 != 0x800 goto +5`), each line with its slot index; a map reference
    /// reads `r1 = map[0] ll`.
    pub fn listing(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let mut slot = 0;
        for insn in &self.insns {
            let text = match *insn {
                Insn::LdImm64 { dst, kind: ImmKind::MapFd, imm } => {
                    format!("r{dst} = map[{imm}] ll")
                }
                _ => {
                    let slots = sift_ebpf::encode_program(std::slice::from_ref(insn));
                    let line = EbpfProgram { insns: slots }.to_string();
                    line.split_once(": ").map_or(line.clone(), |(_, t)| t.trim_end().to_string())
                }
            };
            let _ = writeln!(out, "{slot:4}: {text}");
            slot += insn.slots();
        }
        out
    }
}

/// Lowers a compiled filter to eBPF (see the module documentation).
pub fn lower(compiled: &Compiled, opts: &EbpfOptions) -> Result<EbpfFilter, EbpfGenError> {
    if opts.xsk && (opts.hook != Hook::Xdp || opts.raw) {
        return Err(EbpfGenError::new(EbpfGenErrorKind::XskHook, None));
    }
    let Reads { packet, len } = scan(compiled)?;
    let cfg = &compiled.cfg;
    let zero = plan::read_before_written(cfg);
    let mut l = Lowering::new(cfg, opts, steps(compiled));
    match opts.hook {
        Hook::Xdp => {
            // The redirect reads the receive queue from the context.
            l.prologue(packet || len, opts.xsk, zero);
            l.body(Access::Direct { xdp: true });
        }
        Hook::Tc => {
            l.prologue(packet, packet || len, zero);
            if packet {
                let slow = l.linear_split();
                l.body(Access::Direct { xdp: false });
                l.asm.bind(slow);
                l.body(Access::Copy);
            } else {
                l.body(Access::Direct { xdp: false });
            }
        }
        Hook::SocketFilter => {
            l.prologue(false, packet || len, zero);
            l.body(Access::Copy);
        }
    }
    l.exits();
    let insns = finish(l.asm)?;
    let mut maps = if opts.count { vec![count_map()] } else { Vec::new() };
    if opts.xsk {
        maps.push(xsk_map());
    }
    Ok(EbpfFilter { insns, maps, hook: opts.hook })
}

/// What a filter's graph reads besides its constants.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reads {
    /// Packet bytes.
    pub packet: bool,
    /// The wire length.
    pub len: bool,
}

/// Checks that a compiled filter has an eBPF form (EN10MB, a sound graph, no ancillary
/// loads) and says what it reads.
pub(crate) fn scan(compiled: &Compiled) -> Result<Reads, EbpfGenError> {
    if compiled.link != LinkType::EN10MB {
        return Err(EbpfGenError::new(EbpfGenErrorKind::LinkType(compiled.link), None));
    }
    let cfg = &compiled.cfg;
    cfg.check().map_err(|e| EbpfGenError::new(EbpfGenErrorKind::BadGraph(e.to_string()), None))?;
    let mut packet = false;
    let mut len = false;
    for b in cfg.layout_order() {
        for (i, s) in cfg.block(b).stmts.iter().enumerate() {
            if let Stmt::Ld(Src::Abs(_, k)) = s
                && *k >= SKF_AD_OFF
            {
                let at = At { block: b, stmt: Some(i) };
                let kind = EbpfGenErrorKind::Ancillary { offset: k - SKF_AD_OFF };
                return Err(EbpfGenError::new(kind, Some(at)));
            }
            packet |= s.reads_packet();
            len |= matches!(s, Stmt::Ld(Src::Len) | Stmt::Ldx(XSrc::Len));
        }
    }
    Ok(Reads { packet, len })
}

/// How many steps a filter's `protochain` walks take (see [`WalkForm`]).
pub(crate) fn steps(compiled: &Compiled) -> Steps {
    match compiled.walk_form {
        Some(WalkForm::Unrolled(n)) => Steps::Unrolled(n),
        Some(WalkForm::Loop) | None => Steps::Looped(LOOP_WALK_STEPS),
    }
}

/// The instructions with their jumps resolved, or the jump that does not fit.
pub(crate) fn finish(asm: asm::Asm) -> Result<Vec<Insn>, EbpfGenError> {
    asm.finish().map_err(|e| match e {
        asm::AsmError::TooFar { distance, .. } => {
            EbpfGenError::new(EbpfGenErrorKind::JumpTooFar { distance }, None)
        }
    })
}
