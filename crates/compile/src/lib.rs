//! sift's filter compiler: filter text → classic BPF, through a control-flow-graph IR, a
//! builder with libpcap's block algebra, an optimizer and emission.
//!
//! **Callers use [`pipeline`]**: [`pipeline::compile`] takes the text and
//! [`pipeline::Options`] (a typed `sift_wire::LinkType`, snapshot length, netmask, Linux
//! extensions, optimize or not, the validation mode, a resolver) and returns a validated
//! program, or a [`CompileError`] (typed, located; [`error`]). The stages below stay public for
//! tests and tools.
//!
//! The path through this crate:
//!
//! 1. The code generator (AST → IR) calls [`build::Builder`]: it makes one [`build::Pred`]
//!    per primitive (`cmp`, `relation` over [`build::Value`]s, `always`/`never`), combines
//!    them with `and`, `or` and `!` (negation swaps exits and costs no code), and calls
//!    [`build::Builder::finish`], which ties the exits to `ret #snaplen` and `ret #0`. This
//!    mirrors libpcap's `gencode.c`: a generator that follows gencode's call order gets
//!    gencode's graph, and [`emit`] then prints libpcap's unoptimized listing.
//! 2. Optimizer passes (issue 5) rewrite the [`ir::Cfg`]: an arena of blocks addressed by
//!    [`ir::BlockId`], with explicit successors and use/def sets ([`ir::RegSet`]), walked
//!    iteratively (no recursion anywhere in this crate). [`analysis::Facts`] gives them
//!    layout positions, predecessors and dominators in one sweep.
//! 3. [`emit::emit`] lays the graph out in libpcap's order (`icode_to_fcode`) and resolves
//!    jumps, adding `ja` trampolines for branches beyond 255 instructions.
//! 4. Or [`ebpf::lower`] writes the same graph as native eBPF for XDP, TC or a socket filter
//!    (bounds checks per group of loads, the walk below as a bounded loop).
//!
//! `protochain`'s walk along the IPv6 header chain is a loop in libpcap; here it is one opaque
//! statement ([`ir::Stmt::Walk`], module [`walk`]) from the generator through the optimizer,
//! and emission writes it as libpcap's loop or, for the kernel, unrolled.
//!
//! [`lift::lift`] turns an existing program back into a graph (to optimize hand-written or
//! libpcap programs; `lift` then `emit` gives every acyclic libpcap program back unchanged).
//! [`print`](mod@print) dumps a graph as text (golden tests; [`print::parse`] reads it back)
//! or Graphviz (`--dump-cfg`).
//!
//! ```
//! use sift_compile::build::{Builder, Cmp, Load};
//! use sift_compile::ir::Size;
//!
//! let mut b = Builder::new();
//! let ip = b.cmp(Load::Abs(Size::H, 12), Cmp::Eq, 0x800, u32::MAX);
//! let tcp = b.cmp(Load::Abs(Size::B, 23), Cmp::Eq, 6, u32::MAX);
//! let p = b.and(ip, tcp);
//! let cfg = b.finish(p, 262144);
//! let prog = sift_compile::emit::emit(&cfg).unwrap();
//! assert_eq!(
//!     sift_insn::text::listing_with(&prog, sift_insn::text::ListingStyle::Libpcap111),
//!     "(000) ldh      [12]\n\
//!      (001) jeq      #0x800           jt 2\tjf 5\n\
//!      (002) ldb      [23]\n\
//!      (003) jeq      #0x6             jt 4\tjf 5\n\
//!      (004) ret      #262144\n\
//!      (005) ret      #0\n"
//! );
//! ```
#![forbid(unsafe_code)]

pub mod analysis;
pub mod build;
pub mod ebpf;
pub mod emit;
pub mod error;
pub mod r#gen;
pub mod ir;
pub mod lift;
pub mod multi;
pub mod opt;
pub mod pipeline;
pub mod print;
pub mod walk;

pub use error::{CompileError, CompileErrorKind, UNSUPPORTED};

pub use opt::optimize;
