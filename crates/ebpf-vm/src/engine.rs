//! The hook for compiled code: another engine (the eBPF JIT, `sift-ebpf-jit`) that runs a
//! [`Vm`](crate::Vm)'s programs in place of the interpreter.
//!
//! The VM keeps everything a run shares — the entry points (`run`, `run_with_packet`,
//! `run_xdp_packet`, `run_tc`, `run_socket_filter`) and the regions, contexts, helpers, maps
//! and tail-call targets they set up — and hands the prepared run to the compiled code
//! ([`Compiled::exec`]) instead of the interpreter loop when one is installed
//! ([`Vm::set_compiled`](crate::Vm::set_compiled)). The compiled code keeps the same virtual
//! addresses in its registers as the interpreter does, so values that leave the program
//! (pointers in contexts, in maps, passed to helpers) are the same under both engines.

use crate::env::ProgKind;
use crate::helpers::Helpers;
use crate::interp::RunError;
use crate::memory::Memory;

/// One prepared run, as the interpreter would start it (the run's [`Memory`] and the VM's
/// [`Helpers`] come beside it as [`Compiled::exec`]'s arguments: pointers in registers, so
/// that a run's set-up makes no copies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecCx {
    /// `r1` on entry.
    pub r1: u64,
    /// `r2` on entry.
    pub r2: u64,
    /// Whether legacy packet loads read the input memory (`Vm::run`) rather than the packet.
    pub mem_is_packet: bool,
    /// The entry point's program type (`ProgKind::Other` for `Vm::run` and
    /// `Vm::run_with_packet`): code compiled for one type's context can refuse the others.
    pub kind: ProgKind,
    /// The run's budget ([`Vm::set_budget`](crate::Vm::set_budget)).
    pub budget: u64,
    /// How many programs the VM has (its own, 0, and the added tail-call targets 1, 2, …).
    pub programs: usize,
}

/// Compiled code for every program of one VM (slot `k` of [`Vm::program_slots`](crate::Vm::program_slots)).
pub trait Compiled: Send {
    /// Runs the VM's program 0 on a prepared run over `memory` (the run's regions: stack,
    /// input memory or context, packet window, maps) with the VM's `helpers`: `r0` at
    /// `exit`, or the located fault, as the interpreter reports them. How much of the budget
    /// the run used (the engine's own measure; the interpreter counts instructions) goes to
    /// `executed` ([`Vm::executed`](crate::Vm::executed)).
    fn exec(
        &mut self,
        memory: &mut Memory<'_>,
        helpers: &mut Helpers,
        cx: &ExecCx,
        executed: &mut u64,
    ) -> Result<u64, RunError>;
}
