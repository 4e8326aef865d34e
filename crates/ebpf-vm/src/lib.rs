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
//! * [`context`]: program contexts (XDP's `xdp_md` over a packet, [`Vm::run_xdp`]).
//! * [`helpers`]: the helper table the embedder fills ([`Helpers`]) and ubpf's test helpers.
//! * [`maps`]: array and hash maps with the kernel's flags and errors, and the map helpers.
//! * [`interp`]: the interpreter ([`Vm`]): bpf-to-bpf calls (8 frames of 512 bytes), helpers,
//!   `callx`, legacy packet loads, the kernel's division and shift results, an instruction
//!   budget; faults are located ([`RunError`]), never panics.
#![forbid(unsafe_code)]

pub mod context;
pub mod helpers;
pub mod interp;
pub mod maps;
pub mod memory;
pub mod program;

pub use helpers::{Args, HelperFn, HelperOutcome, Helpers, test_helpers};
pub use interp::{DEFAULT_BUDGET, Fault, RunError, Vm};
pub use maps::{Map, MapDef, MapKind, register_map_helpers};
pub use memory::Memory;
pub use program::{LoadError, MAX_INSNS, Program};
