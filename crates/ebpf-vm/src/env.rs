//! What the kernel helpers see of the world outside the program: a virtual clock, a seeded
//! random generator, the virtual CPU, where `trace_printk` writes, and what the run decided
//! (`redirect` targets). The embedder owns it through [`Vm::env_mut`](crate::Vm::env_mut);
//! every value is deterministic so that runs can be repeated and compared.

use std::io::Write;

/// The program type a run has, where helpers differ by it (`redirect`'s return value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgKind {
    /// Plain runs (conformance tests, `Vm::run`).
    #[default]
    Other,
    /// XDP.
    Xdp,
    /// TC classifier (`SCHED_CLS`).
    Tc,
    /// Socket filter.
    SocketFilter,
}

/// Where a run asked its packet to go (`bpf_redirect`, `bpf_redirect_map`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// `bpf_redirect(ifindex, flags)`.
    Ifindex {
        /// The interface.
        ifindex: u32,
        /// The flags (`BPF_F_INGRESS` for TC).
        flags: u64,
    },
    /// `bpf_redirect_map(map, key, flags)` with an element there.
    Map {
        /// The map's index in the VM.
        map: usize,
        /// The key.
        key: u32,
        /// The element's value's first 4 bytes (the interface of a device map).
        target: u32,
    },
}

/// The helpers' world.
pub struct VmEnv {
    /// `bpf_ktime_get_ns`: the virtual clock, set by the embedder (e.g. to each packet's
    /// capture time); it does not move during a run.
    pub clock_ns: u64,
    /// `bpf_get_smp_processor_id`: the virtual CPU (per-CPU maps' values are chosen by it;
    /// it must be below their `num_cpus`, else the last CPU's value is used).
    pub cpu: u32,
    /// The program type of the current run.
    pub kind: ProgKind,
    /// The last redirect the run asked for (cleared when a run starts).
    pub redirect: Option<Redirect>,
    rng: u64,
    /// Where `trace_printk` writes (`None`: standard error; no allocation for the default,
    /// which a run's set-up makes).
    trace: Option<Box<dyn Write>>,
}

impl std::fmt::Debug for VmEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmEnv")
            .field("clock_ns", &self.clock_ns)
            .field("cpu", &self.cpu)
            .field("kind", &self.kind)
            .field("redirect", &self.redirect)
            .finish_non_exhaustive()
    }
}

/// The default seed of `bpf_get_prandom_u32`.
pub const DEFAULT_SEED: u64 = 0x5eed_5eed_5eed_5eed;

impl Default for VmEnv {
    fn default() -> VmEnv {
        VmEnv {
            clock_ns: 0,
            cpu: 0,
            kind: ProgKind::Other,
            redirect: None,
            rng: DEFAULT_SEED,
            trace: None,
        }
    }
}

impl VmEnv {
    /// Restarts `bpf_get_prandom_u32`'s sequence from `seed`.
    pub fn seed(&mut self, seed: u64) {
        self.rng = seed;
    }

    /// The next `bpf_get_prandom_u32` (SplitMix64's high half: deterministic per seed).
    pub fn next_random(&mut self) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 32) as u32
    }

    /// Where `bpf_trace_printk` writes its lines (standard error unless set).
    pub fn set_trace_output(&mut self, out: impl Write + 'static) {
        self.trace = Some(Box::new(out));
    }

    /// Writes one `trace_printk` line.
    pub(crate) fn trace(&mut self, line: &[u8]) {
        // The kernel's trace buffer drops what it cannot take; so does this.
        match &mut self.trace {
            Some(out) => {
                let _ = out.write_all(line);
                let _ = out.write_all(b"\n");
            }
            None => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(line);
                let _ = err.write_all(b"\n");
            }
        }
    }
}
