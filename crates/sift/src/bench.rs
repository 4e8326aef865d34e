//! Timing filter engines on the same program and the same packets (`sift bench`).
//!
//! The capture is loaded into memory first ([`Packets`]), so the figures are the engines' own
//! cost. Each engine first runs over every packet once and must agree with the first engine
//! timed on every verdict (a disagreement is an error, not a figure), then runs over all
//! packets repeatedly for at least the minimum time. Each engine is timed through its own
//! monomorphised loop, so none pays for an extra indirect call.
//!
//! sift's interpreter and JIT are timed as the offline paths run them, on batches of
//! [`BATCH_PACKETS`] packets (`interp`, `jit`: one call per batch, the packets ahead loaded
//! while the current one is filtered), and also one call per packet (`interp-single`,
//! `jit-single`); libpcap's `bpf_filter` has no batch form. [`Bench::floor`] is what no filter
//! can beat: a load of each packet's first byte (its first cache line), nothing else.
//!
//! What the engines run is a [`Subject`]: a classic BPF program (every engine runs the same
//! instructions) or a pcap-filter expression. An expression is compiled for the capture's link
//! type by sift for sift's engines, by the system libpcap's `pcap_compile` (optimizing, as
//! tcpdump does) for the `libpcap` engine, and by the CSPF compiler for `cspf`: each engine
//! runs the program its users would get, and only accept/reject must agree.

use std::path::Path;
use std::time::{Duration, Instant};

use sift_filter::SystemResolver;
use sift_insn::{Insn, Program};
use sift_libpcap::Libpcap;
use sift_pcap::LinkType;
use sift_verify::{Mode, Validated, ValidationError};

use sift_jit::PacketRef;

use crate::filter::{BATCH_PACKETS, FilterError, Target};

/// Why packets cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The capture cannot be read.
    #[error("{path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong, and where.
        error: sift_pcap::Error,
    },
    /// The capture mixes link types; the engines need one program, hence one link type.
    #[error("{path}: packets of several link types ({first} and {other})")]
    MixedLinkTypes {
        /// The file.
        path: String,
        /// The first packet's link type.
        first: LinkType,
        /// Another packet's.
        other: LinkType,
    },
}

/// A capture's packets stored back to back in one buffer, as in a mapped file: engines stream
/// through memory the way they do when filtering a capture.
#[derive(Debug)]
pub struct Packets {
    /// The first interface's link type.
    pub link_type: LinkType,
    /// The first interface's snapshot length (0 read as the largest).
    pub snaplen: u32,
    /// Whether the first interface's file (pcapng: section) is big-endian.
    pub big_endian: bool,
    bytes: Vec<u8>,
    /// `(start, end, wire length)` of each packet in `bytes`.
    spans: Vec<(usize, usize, u32)>,
}

impl Packets {
    /// Loads every packet of the capture at `path` (one link type only).
    pub fn load(path: &Path) -> Result<Packets, LoadError> {
        let shown = || path.display().to_string();
        let mut reader =
            sift_pcap::open(path).map_err(|error| LoadError::Read { path: shown(), error })?;
        let mut packets = Packets {
            link_type: LinkType::EN10MB,
            snaplen: 0,
            big_endian: false,
            bytes: Vec::new(),
            spans: Vec::new(),
        };
        while let Some((p, interfaces)) = reader
            .next_with_interfaces()
            .map_err(|error| LoadError::Read { path: shown(), error })?
        {
            if packets.spans.is_empty() {
                let iface = &interfaces[p.interface as usize];
                packets.link_type = iface.link_type;
                packets.snaplen = crate::filter::snaplen_or_max(iface.snaplen);
                packets.big_endian = iface.big_endian;
            } else if p.link_type != packets.link_type {
                return Err(LoadError::MixedLinkTypes {
                    path: shown(),
                    first: packets.link_type,
                    other: p.link_type,
                });
            }
            let start = packets.bytes.len();
            packets.bytes.extend_from_slice(p.data);
            packets.spans.push((start, packets.bytes.len(), p.wire_len));
        }
        Ok(packets)
    }

    /// No packets yet, of `link_type` with snapshot length `snaplen` (0: the largest), as
    /// from a little-endian file; [`push`](Self::push) adds them (generated ones, say).
    pub fn new(link_type: LinkType, snaplen: u32) -> Packets {
        Packets {
            link_type,
            snaplen: crate::filter::snaplen_or_max(snaplen),
            big_endian: false,
            bytes: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Adds a packet: its captured bytes and its length on the wire.
    pub fn push(&mut self, data: &[u8], wire_len: u32) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.spans.push((start, self.bytes.len(), wire_len));
    }

    /// How many packets there are.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The captured bytes of all packets together.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Each packet's captured bytes and wire length, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.spans.iter().map(|&(s, e, w)| (&self.bytes[s..e], w))
    }

    /// Every packet's descriptor, for the engines' batch entries.
    pub fn refs(&self) -> Vec<PacketRef<'_>> {
        self.iter().map(|(p, w)| PacketRef::new(p, w)).collect()
    }

    /// What sift compiles expressions for these packets for.
    pub fn target(&self) -> Target {
        Target::file(self.link_type, self.snaplen)
            .byte_order(crate::filter::ByteOrder::from_big_endian(self.big_endian))
    }
}

/// What the engines run.
#[derive(Clone, Debug)]
pub enum Subject {
    /// One classic BPF program for every engine.
    Program(Program),
    /// An expression each engine compiles its own way.
    Expression(String),
}

/// Why a subject cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The program breaks libpcap's rules.
    #[error("{0}")]
    Invalid(ValidationError),
    /// The expression gives no filter.
    #[error(transparent)]
    Filter(#[from] FilterError),
}

/// A subject ready for the engines.
#[derive(Debug)]
pub struct Prepared {
    /// What the engines run.
    pub subject: Subject,
    /// sift's program: the program itself, or the expression compiled (optimized).
    pub program: Validated,
    /// How long sift took to compile the expression (`None` for a program).
    pub compile_time: Option<Duration>,
    /// The verdicts of the first engine run, which the others must reproduce.
    reference: Option<Vec<u32>>,
}

/// An engine `bench` can time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The reference interpreter, on batches of [`BATCH_PACKETS`] packets (as the offline paths
    /// run it).
    Interp,
    /// The x86-64 JIT, on batches of [`BATCH_PACKETS`] packets (as the offline paths run it).
    Jit,
    /// The reference interpreter, one call per packet.
    InterpSingle,
    /// The x86-64 JIT, one call per packet.
    JitSingle,
    /// The system libpcap's `bpf_filter` (dlopen).
    Libpcap,
    /// The Linux kernel: the program translated to eBPF, timed by `BPF_PROG_TEST_RUN`.
    Kernel,
    /// The 1987 CSPF stack machine, compiled from the expression where it can express it.
    Cspf,
    /// sift's eBPF virtual machine running the program translated to eBPF (as for the kernel:
    /// `SCHED_CLS` with direct packet access), one call per packet.
    Ebpf,
    /// The same on sift's eBPF JIT.
    EbpfJit,
}

impl Engine {
    /// Every engine, in the order `bench` runs them.
    pub const ALL: [Engine; 9] = [
        Engine::Interp,
        Engine::Jit,
        Engine::InterpSingle,
        Engine::JitSingle,
        Engine::Libpcap,
        Engine::Kernel,
        Engine::Cspf,
        Engine::Ebpf,
        Engine::EbpfJit,
    ];

    /// The engine's name (`interp`, `jit`, `interp-single`, `jit-single`, `libpcap`,
    /// `kernel`, `cspf`, `ebpf`, `ebpf-jit`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::InterpSingle => "interp-single",
            Engine::JitSingle => "jit-single",
            Engine::Libpcap => "libpcap",
            Engine::Kernel => "kernel",
            Engine::Cspf => "cspf",
            Engine::Ebpf => "ebpf",
            Engine::EbpfJit => "ebpf-jit",
        }
    }
}

/// What preparing an engine cost and what it ran.
#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    /// The interpreter.
    Interp {
        /// Setting it up and counting the instructions executed.
        prepare: Duration,
        /// Instructions in the program.
        instructions: usize,
        /// Instructions executed per packet, on average.
        executed_per_packet: f64,
        /// Packets per call: [`BATCH_PACKETS`], or 1.
        batch: usize,
    },
    /// The JIT.
    Jit {
        /// Compiling to machine code (for batches: both functions, the batch function being
        /// generated on the first batch).
        compile: Duration,
        /// Bytes of machine code (of the function that runs: the batch or the single-packet
        /// one).
        code_bytes: usize,
        /// Packets per call: [`BATCH_PACKETS`], or 1.
        batch: usize,
    },
    /// libpcap.
    Libpcap {
        /// libpcap's version string.
        version: String,
        /// For an expression: `pcap_compile`'s time and the program's length.
        compiled: Option<(Duration, usize)>,
    },
    /// The kernel.
    Kernel {
        /// Loading and verifying the eBPF program.
        load: Duration,
        /// eBPF instructions.
        instructions: usize,
        /// How often each packet ran per `BPF_PROG_TEST_RUN` call.
        repeat: u32,
        /// Packets too long for `BPF_PROG_TEST_RUN`, left out.
        left_out: usize,
    },
    /// sift's eBPF engines.
    Ebpf {
        /// Translating the program to eBPF and loading it (and compiling it, for the JIT).
        load: Duration,
        /// eBPF instructions.
        instructions: usize,
    },
    /// CSPF.
    Cspf {
        /// Compiling the expression.
        compile: Duration,
        /// 16-bit words in the program.
        words: usize,
        /// Instructions executed per packet, on average.
        executed_per_packet: f64,
    },
}

/// One engine's figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The engine.
    pub engine: Engine,
    /// Nanoseconds per packet (for the kernel: as the kernel measured it).
    pub ns_per_packet: f64,
    /// Packets accepted.
    pub accepted: usize,
    /// What preparing it cost.
    pub detail: Detail,
}

/// What timing one engine gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Its figure.
    Timed(Figure),
    /// It cannot run here, and why.
    Unavailable(String),
}

/// Why an engine could not be timed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// An engine returned another value than the first engine on a packet.
    #[error("{engine} returns {value} on packet {packet}, the first engine {reference}")]
    Disagree {
        /// The engine's name.
        engine: &'static str,
        /// The packet's index.
        packet: usize,
        /// What it returned.
        value: u32,
        /// What the first engine returned.
        reference: u32,
    },
    /// CSPF's accept/reject differs from the first engine's on a packet it judges exactly.
    #[error("cspf {accepted} packet {packet}, the first engine returns {reference}")]
    CspfDisagrees {
        /// The packet's index.
        packet: usize,
        /// CSPF's verdict.
        accepted: bool,
        /// What the first engine returned.
        reference: u32,
    },
    /// The JIT cannot compile the program.
    #[error("JIT")]
    Jit(#[source] sift_jit::JitError),
    /// libpcap cannot compile the expression.
    #[error("libpcap cannot compile it: {0}")]
    LibpcapCompile(String),
    /// libpcap cannot run the program.
    #[error("libpcap cannot run the program: {0}")]
    LibpcapRun(String),
    /// A `BPF_PROG_TEST_RUN` call failed.
    #[error("BPF_PROG_TEST_RUN")]
    TestRun(#[source] std::io::Error),
}

/// The engines, the packets and the timing loop.
pub struct Bench<'a> {
    packets: &'a Packets,
    min_time: Duration,
    libpcap: Result<Libpcap, sift_libpcap::Error>,
    resolver: SystemResolver,
    cspf_indirect: bool,
}

impl std::fmt::Debug for Bench<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("packets", &self.packets.len())
            .field("min_time", &self.min_time)
            .finish_non_exhaustive()
    }
}

impl<'a> Bench<'a> {
    /// Times engines over `packets` for at least `min_time` each. Loads the system libpcap
    /// (or notes why it cannot) and the system's name tables; CSPF gets the BPF paper's
    /// indirect-push extension when `cspf_indirect`.
    pub fn new(packets: &'a Packets, min_time: Duration, cspf_indirect: bool) -> Bench<'a> {
        Bench {
            packets,
            min_time,
            libpcap: Libpcap::load(),
            resolver: SystemResolver::new(),
            cspf_indirect,
        }
    }

    /// Validates the program, or compiles the expression (optimized) for the packets.
    pub fn prepare(&self, subject: Subject) -> Result<Prepared, PrepareError> {
        let (program, compile_time) = match &subject {
            Subject::Program(p) => {
                (sift_verify::validate(p, Mode::Libpcap).map_err(PrepareError::Invalid)?, None)
            }
            Subject::Expression(e) => {
                let started = Instant::now();
                let target = self.packets.target();
                let program = crate::filter::compile(e, &target, true, &self.resolver)?;
                (program, Some(started.elapsed()))
            }
        };
        Ok(Prepared { subject, program, compile_time, reference: None })
    }

    /// Checks `engine`'s verdicts on `prepared` against those of the first engine run on it,
    /// then times it.
    pub fn run(&self, engine: Engine, prepared: &mut Prepared) -> Result<Outcome, BenchError> {
        let Prepared { subject, program, reference, .. } = prepared;
        let (subject, program) = (&*subject, &*program);
        let packets = self.packets;
        let started = Instant::now();
        let figure = match engine {
            Engine::Interp | Engine::InterpSingle => {
                let i = sift_vm::Interpreter::new(program);
                let executed: u64 = packets.iter().map(|(p, w)| i.run_counted(p, w).executed).sum();
                let batch = if engine == Engine::Interp { BATCH_PACKETS } else { 1 };
                let detail = Detail::Interp {
                    prepare: started.elapsed(),
                    instructions: program.insns().len(),
                    executed_per_packet: executed as f64 / packets.len() as f64,
                    batch,
                };
                if engine == Engine::Interp {
                    self.time_batches(reference, engine, detail, |b, v| i.run_batch(b, v))?
                } else {
                    self.time(reference, engine, detail, |p, w| i.run(p, w))?
                }
            }
            Engine::Jit => {
                let j = sift_jit::JitFilter::compile(program).map_err(BenchError::Jit)?;
                // The batch function is generated on the first batch: part of the compile.
                let code_bytes = j.batch_code().len();
                let compile = started.elapsed();
                let detail = Detail::Jit { compile, code_bytes, batch: BATCH_PACKETS };
                self.time_batches(reference, engine, detail, |b, v| j.run_batch(b, v))?
            }
            Engine::JitSingle => {
                let j = sift_jit::JitFilter::compile(program).map_err(BenchError::Jit)?;
                let detail = Detail::Jit {
                    compile: started.elapsed(),
                    code_bytes: j.code().len(),
                    batch: 1,
                };
                self.time(reference, engine, detail, |p, w| j.run(p, w))?
            }
            Engine::Libpcap => {
                let lib = match &self.libpcap {
                    Ok(l) => l,
                    Err(e) => return Ok(Outcome::Unavailable(e.to_string())),
                };
                let (own, compiled) = match subject {
                    Subject::Program(_) => (None, None),
                    Subject::Expression(e) => {
                        let started = Instant::now();
                        let snaplen = packets.snaplen.min(i32::MAX as u32) as i32;
                        let p = lib
                            .compile(packets.link_type, snaplen, e, true, 0)
                            .map_err(BenchError::LibpcapCompile)?;
                        let compiled = Some((started.elapsed(), p.len()));
                        (Some(p), compiled)
                    }
                };
                let insns = own.as_deref().unwrap_or(program.insns());
                let f = lib.prepare(insns).map_err(|e| BenchError::LibpcapRun(e.to_string()))?;
                let detail = Detail::Libpcap { version: lib.version(), compiled };
                self.time(reference, engine, detail, |p, w| f.run(p, w))?
            }
            Engine::Kernel | Engine::Ebpf | Engine::EbpfJit => {
                // eBPF runs forward code only: an expression's `protochain` walks are unrolled
                // for it (a program given as such that loops is refused by the translation).
                let unrolled;
                let program = match subject {
                    Subject::Expression(e) if !program.is_acyclic() => {
                        let target = packets.target().for_kernel();
                        match crate::filter::compile(e, &target, true, &self.resolver) {
                            Ok(p) => {
                                unrolled = p;
                                &unrolled
                            }
                            Err(err) => return Ok(Outcome::Unavailable(err.to_string())),
                        }
                    }
                    _ => program,
                };
                return match engine {
                    Engine::Kernel => self.kernel(reference.as_deref(), program),
                    _ => self.ebpf(reference, program, engine),
                };
            }
            Engine::Cspf => {
                let Subject::Expression(e) = subject else {
                    return Ok(Outcome::Unavailable("CSPF is compiled from an expression".into()));
                };
                let opts =
                    sift_cspf::Options::new(&self.resolver).with_indirect(self.cspf_indirect);
                match sift_cspf::compile_text(e, packets.link_type, &opts) {
                    Ok(c) => self.cspf(reference.as_deref(), &c, started.elapsed())?,
                    Err(err) => return Ok(Outcome::Unavailable(err.to_string())),
                }
            }
        };
        Ok(Outcome::Timed(figure))
    }

    /// Checks the engine's verdicts (one call per packet) against the first engine's, then
    /// times it.
    fn time(
        &self,
        reference: &mut Option<Vec<u32>>,
        engine: Engine,
        detail: Detail,
        run: impl Fn(&[u8], u32) -> u32,
    ) -> Result<Figure, BenchError> {
        let verdicts: Vec<u32> = self.packets.iter().map(|(p, w)| run(p, w)).collect();
        let accepted = check(reference, engine, verdicts)?;
        let ns = self.time_passes(|| {
            let mut sink = 0u32;
            for (p, w) in self.packets.iter() {
                sink = sink.wrapping_add(run(std::hint::black_box(p), w));
            }
            sink
        });
        Ok(Figure { engine, ns_per_packet: ns, accepted, detail })
    }

    /// [`time`](Self::time) for an engine's batch entry, on consecutive batches of
    /// [`BATCH_PACKETS`] packets.
    fn time_batches(
        &self,
        reference: &mut Option<Vec<u32>>,
        engine: Engine,
        detail: Detail,
        run: impl Fn(&[PacketRef<'_>], &mut Vec<u32>) -> usize,
    ) -> Result<Figure, BenchError> {
        let refs = self.packets.refs();
        let mut out = Vec::with_capacity(BATCH_PACKETS);
        let mut verdicts = Vec::with_capacity(refs.len());
        for batch in refs.chunks(BATCH_PACKETS) {
            run(batch, &mut out);
            verdicts.extend_from_slice(&out);
        }
        let accepted = check(reference, engine, verdicts)?;
        let ns = self.time_passes(|| {
            let mut sink = 0usize;
            for batch in refs.chunks(BATCH_PACKETS) {
                sink = sink.wrapping_add(run(std::hint::black_box(batch), &mut out));
            }
            sink as u32
        });
        Ok(Figure { engine, ns_per_packet: ns, accepted, detail })
    }

    /// Runs `pass` (one pass over every packet) repeatedly for at least the minimum time;
    /// nanoseconds per packet.
    fn time_passes(&self, mut pass: impl FnMut() -> u32) -> f64 {
        let (mut rounds, start) = (0u64, Instant::now());
        let mut sink = 0u32;
        while start.elapsed() < self.min_time {
            sink = sink.wrapping_add(pass());
            rounds += 1;
        }
        std::hint::black_box(sink);
        start.elapsed().as_nanos() as f64 / (rounds as f64 * self.packets.len() as f64)
    }

    /// The floor, in nanoseconds per packet: a pass over the packets that loads each one's
    /// first byte (its first cache line) and runs no filter, one packet after the other, timed
    /// as the engines are. What filtering costs at least when the packets are taken in turn
    /// (an engine that loads packets ahead, as the JIT's batches do, can go below it: see
    /// [`floor_prefetched`](Self::floor_prefetched)).
    pub fn floor(&self) -> f64 {
        let spans = &self.packets.spans;
        let bytes = &self.packets.bytes;
        self.time_passes(|| {
            let mut sum = 0u32;
            for &(s, e, _) in std::hint::black_box(spans) {
                if s < e {
                    sum = sum.wrapping_add(u32::from(bytes[s]));
                }
            }
            sum
        })
    }

    /// The floor of the JIT's batches, in nanoseconds per packet: its batch loop, prefetching
    /// the packets ahead as it does for any program, over a program that only loads each
    /// packet's first byte (`ldb [0]; ret a`), on batches of [`BATCH_PACKETS`]. What no
    /// filter run that way can beat on these packets in this memory.
    pub fn floor_prefetched(&self) -> Result<f64, BenchError> {
        use sift_insn::code::{BPF_A, BPF_ABS, BPF_B, BPF_LD, BPF_RET};
        let touch = [Insn::stmt(BPF_LD | BPF_B | BPF_ABS, 0), Insn::stmt(BPF_RET | BPF_A, 0)];
        let program = sift_verify::validate(&touch, Mode::Libpcap)
            .expect("a load and a return are a valid program");
        let jit = sift_jit::JitFilter::compile(&program).map_err(BenchError::Jit)?;
        let refs = self.packets.refs();
        let mut out = Vec::with_capacity(BATCH_PACKETS);
        Ok(self.time_passes(|| {
            let mut sink = 0usize;
            for batch in refs.chunks(BATCH_PACKETS) {
                sink = sink.wrapping_add(jit.run_batch(std::hint::black_box(batch), &mut out));
            }
            sink as u32
        }))
    }

    /// The kernel engine: verdicts with one `BPF_PROG_TEST_RUN` per packet, then the kernel's
    /// own ns/run over repeated runs of every packet.
    fn kernel(
        &self,
        reference: Option<&[u32]>,
        validated: &Validated,
    ) -> Result<Outcome, BenchError> {
        let started = Instant::now();
        let k = match sift_kernel::KernelEbpf::new(validated) {
            Ok(k) => k,
            Err(e) => return Ok(Outcome::Unavailable(e.to_string())),
        };
        let load = started.elapsed();
        // Packets longer than TEST_RUN takes are left out (and counted).
        let fits = |p: &[u8]| p.len() <= sift_kernel::MAX_PACKET;
        let mut accepted = 0;
        for (i, (p, w)) in self.packets.iter().enumerate().filter(|(_, (p, _))| fits(p)) {
            let v = k.run(p, w).map_err(BenchError::TestRun)?;
            accepted += usize::from(v != 0);
            if let Some(r) = reference
                && r[i] != v
            {
                return Err(BenchError::Disagree {
                    engine: "kernel",
                    packet: i,
                    value: v,
                    reference: r[i],
                });
            }
        }
        // Repeat so that each packet runs about as long as the other engines in all.
        let n = self.packets.iter().filter(|(p, _)| fits(p)).count().max(1) as f64;
        let repeat = (self.min_time.as_secs_f64() * 1e9 / 40.0 / n).clamp(1.0, 1e5);
        let mut total = 0f64;
        for (p, w) in self.packets.iter().filter(|(p, _)| fits(p)) {
            total += f64::from(k.time(p, w, repeat as u32).map_err(BenchError::TestRun)?);
        }
        let detail = Detail::Kernel {
            load,
            instructions: k.program().len(),
            repeat: repeat as u32,
            left_out: self.packets.len() - n as usize,
        };
        let figure = Figure { engine: Engine::Kernel, ns_per_packet: total / n, accepted, detail };
        Ok(Outcome::Timed(figure))
    }

    /// sift's eBPF engines: the program translated as for the kernel and run as a TC
    /// classifier, each packet copied into the buffer the program may write, the lengths in
    /// the control block as [`sift_kernel::KernelEbpf`] passes them for packets a test run
    /// refuses; on the interpreter ([`Engine::Ebpf`]) or the JIT ([`Engine::EbpfJit`]).
    fn ebpf(
        &self,
        reference: &mut Option<Vec<u32>>,
        validated: &Validated,
        engine: Engine,
    ) -> Result<Outcome, BenchError> {
        let started = Instant::now();
        let program = match sift_ebpf::translate(validated.insns()) {
            Ok(p) => p,
            Err(e) => return Ok(Outcome::Unavailable(e.to_string())),
        };
        let mut vm = match sift_ebpf_vm::Vm::load(&program.insns, sift_ebpf_vm::Helpers::new()) {
            Ok(vm) => vm,
            Err(e) => return Ok(Outcome::Unavailable(e.to_string())),
        };
        if engine == Engine::EbpfJit
            && let Err(e) = sift_ebpf_jit::jit(&mut vm, &sift_ebpf_jit::JitOptions::default())
        {
            return Ok(Outcome::Unavailable(e.to_string()));
        }
        let detail = Detail::Ebpf { load: started.elapsed(), instructions: program.insns.len() };
        let vm = std::cell::RefCell::new(&mut vm);
        let scratch = std::cell::RefCell::new(Vec::with_capacity(65_536));
        let run = |p: &[u8], wire: u32| -> u32 {
            let mut buf = scratch.borrow_mut();
            buf.clear();
            buf.extend_from_slice(p);
            let info = sift_ebpf_vm::SkbInfo {
                cb: [p.len() as u32 + 1, wire, 0, 0, 0],
                wire_len: wire,
                ..sift_ebpf_vm::SkbInfo::default()
            };
            // A fault cannot happen in a translated program (its loads are checked); should
            // one, the packet is rejected and the verdicts' check reports the difference.
            vm.borrow_mut().run_tc(&mut buf, &info).map_or(0, |v| v as u32)
        };
        Ok(Outcome::Timed(self.time(reference, engine, detail, run)?))
    }

    /// The CSPF engine: accept/reject must match the reference where CSPF judges exactly.
    fn cspf(
        &self,
        reference: Option<&[u32]>,
        c: &sift_cspf::CspfProgram,
        compile: Duration,
    ) -> Result<Figure, BenchError> {
        let mut executed = 0u64;
        let mut accepted = 0;
        for (i, (p, _)) in self.packets.iter().enumerate() {
            let (ok, n) = c.run(p);
            executed += u64::from(n);
            accepted += usize::from(ok);
            if let Some(r) = reference
                && c.exact_for(p)
                && ok != (r[i] != 0)
            {
                return Err(BenchError::CspfDisagrees { packet: i, accepted: ok, reference: r[i] });
            }
        }
        let ns = self.time_passes(|| {
            let mut sink = 0u32;
            for (p, _) in self.packets.iter() {
                sink = sink.wrapping_add(u32::from(c.run(std::hint::black_box(p)).0));
            }
            sink
        });
        let n = self.packets.len() as f64;
        let detail = Detail::Cspf {
            compile,
            words: c.words().len(),
            executed_per_packet: executed as f64 / n,
        };
        Ok(Figure { engine: Engine::Cspf, ns_per_packet: ns, accepted, detail })
    }
}

/// Checks an engine's `verdicts` against the first engine's (or makes them the reference);
/// how many packets were accepted.
fn check(
    reference: &mut Option<Vec<u32>>,
    engine: Engine,
    verdicts: Vec<u32>,
) -> Result<usize, BenchError> {
    let accepted = verdicts.iter().filter(|&&v| v != 0).count();
    match reference {
        // Programs compiled by different compilers agree on accept/reject and on the accept
        // value (the snaplen); the same program must agree exactly anyway.
        Some(r) => match r.iter().zip(&verdicts).position(|(a, b)| a != b) {
            Some(i) => Err(BenchError::Disagree {
                engine: engine.name(),
                packet: i,
                value: verdicts[i],
                reference: r[i],
            }),
            None => Ok(accepted),
        },
        None => {
            *reference = Some(verdicts);
            Ok(accepted)
        }
    }
}
