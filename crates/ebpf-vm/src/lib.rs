//! sift's eBPF virtual machine.
//!
//! It runs eBPF programs offline with the kernel's semantics, to check what sift generates
//! and to test programs without a kernel; it is also the reference the eBPF JIT is compared
//! with. This first part is the core the rest (verifier, ELF loading, maps, program contexts)
//! attaches to:
//!
//! * [`program`]: loading ([`Program::load`]): decoding (through `sift-ebpf`'s typed ISA) and
//!   the structural checks, each refusal located ([`LoadError`]).
//! * [`memory`]: the regions a run sees (stack, input memory or context, packet) at fixed
//!   virtual addresses, every access checked ([`Memory`]).
//! * [`context`]: program contexts (XDP's `xdp_md` over a packet in its frame,
//!   [`Vm::run_xdp_packet`]; TC's and socket filters' `__sk_buff`, [`Vm::run_tc`],
//!   [`Vm::run_socket_filter`]).
//! * [`helpers`]: the helper table the embedder fills ([`Helpers`]) and ubpf's test helpers.
//! * [`maps`]: the kernel's map types with its flags, limits and errors ([`Map::from_spec`]).
//! * [`kernel`]: the kernel's helpers ([`register_kernel_helpers`]), over the helpers'
//!   world [`env`](mod@env) ([`VmEnv`]: virtual clock, seeded random numbers, virtual CPU, trace
//!   output, redirect target), with [`csum`] for the checksum helpers.
//! * [`interp`]: the interpreter ([`Vm`]): bpf-to-bpf calls (8 frames of 512 bytes), helpers,
//!   `callx`, legacy packet loads, the kernel's division and shift results, an instruction
//!   budget; faults are located ([`RunError`]), never panics.
//! * [`engine`]: the hook for compiled code ([`Compiled`], [`Vm::set_compiled`]): the JIT
//!   runs through the same entry points, regions, helpers and maps.
#![forbid(unsafe_code)]

pub mod context;
pub mod csum;
pub mod engine;
pub mod env;
pub mod helpers;
pub mod interp;
pub mod kernel;
pub mod maps;
pub mod memory;
mod printk;
pub mod program;

pub use context::{SkbInfo, XdpPacket};
pub use engine::{Compiled, ExecCx};
pub use env::{ProgKind, Redirect, VmEnv};
pub use helpers::{Args, HelperFn, HelperOutcome, Helpers, test_helpers};
pub use interp::{DEFAULT_BUDGET, Fault, MAX_TAIL_CALL_CNT, RunError, Vm};
pub use kernel::{register_kernel_helpers, register_map_helpers};
pub use maps::{Map, MapDef, MapDefError, MapError, MapKind};
pub use memory::{Memory, Place, RawRegion, RawRegions};
pub use program::{LoadError, MAX_INSNS, Program};
