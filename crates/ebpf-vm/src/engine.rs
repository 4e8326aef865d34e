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

use crate::helpers::Helpers;
use crate::interp::RunError;
use crate::memory::Memory;

/// One prepared run, as the interpreter would start it.
pub struct ExecCx<'m, 'a> {
    /// The run's regions (stack, input memory or context, packet window, maps).
    pub memory: &'m mut Memory<'a>,
    /// The VM's helpers.
    pub helpers: &'m mut Helpers,
    /// `r1` on entry.
    pub r1: u64,
    /// `r2` on entry.
    pub r2: u64,
    /// Whether legacy packet loads read the input memory (`Vm::run`) rather than the packet.
    pub mem_is_packet: bool,
    /// The run's budget ([`Vm::set_budget`](crate::Vm::set_budget)).
    pub budget: u64,
    /// How many programs the VM has (its own, 0, and the added tail-call targets 1, 2, …).
    pub programs: usize,
}

/// Compiled code for every program of one VM (slot `k` of [`Vm::program_slots`](crate::Vm::program_slots)).
pub trait Compiled: Send {
    /// Runs the VM's program 0 on a prepared run: `r0` at `exit`, or the located fault, as
    /// the interpreter reports them. Returns how much of the budget the run used with the
    /// result (the engine's own measure; the interpreter counts instructions).
    fn exec(&mut self, cx: ExecCx<'_, '_>) -> (Result<u64, RunError>, u64);
}
