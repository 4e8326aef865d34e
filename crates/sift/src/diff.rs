//! Every engine on the same expression and the same packets, verdict by verdict (`sift diff`).
//!
//! The engine shoot-out in `shared/seeds/003_…` caught an engine that was wrong on 1% of
//! packets only by comparing verdicts packet by packet; [`Engines::compare`] makes that check
//! one call. The expression is compiled once by sift; the interpreter's return values over the
//! packets are the reference, and every other engine that can run here must reproduce them
//! (see [`Run`] for what each one runs and what it is compared with). Engines that cannot run
//! (no root, no libpcap, an inexpressible expression) are listed with the reason.

use sift_filter::SystemResolver;
use sift_verify::{Mode, Validated};

use crate::bench::Packets;
use crate::filter::FilterError;

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// sift compiled a program its validator refuses (a bug in sift).
    #[error(transparent)]
    Filter(FilterError),
    /// Running a packet through the veth pair failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// An engine's run, with what describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Run {
    /// sift's interpreter on sift's program: the reference.
    Interp,
    /// sift's x86-64 JIT on the same program.
    Jit {
        /// Bytes of machine code.
        code_bytes: usize,
    },
    /// The interpreter on sift's optimized program.
    Optimized {
        /// Its instructions; `None` when the optimizer proved that the expression rejects all
        /// packets (then the reference must reject every packet).
        instructions: Option<usize>,
    },
    /// The JIT on sift's optimized program.
    JitOptimized {
        /// Bytes of machine code.
        code_bytes: usize,
    },
    /// The system libpcap compiling the expression itself for the capture file, as tcpdump
    /// does (`pcap_compile` on a savefile handle in the file's byte order, without its
    /// optimizer, as `tcpdump -O`) and running `bpf_filter`.
    Libpcap {
        /// Its program's instructions.
        instructions: usize,
        /// Packets not judged: a `protochain` walk around a cycle of AH headers, on which
        /// `bpf_filter` would never return.
        cycles: usize,
    },
    /// The program translated to eBPF, loaded with `bpf(2)` and run by `BPF_PROG_TEST_RUN`.
    KernelEbpf {
        /// Packets too long for `BPF_PROG_TEST_RUN`, not judged.
        too_long: usize,
    },
    /// The program attached with `SO_ATTACH_FILTER` to an `AF_PACKET` socket on a veth pair in
    /// a private network namespace (Ethernet only). The kernel strips an outer VLAN tag before
    /// any socket filter runs, so the reference is the interpreter on the untagged frame, and
    /// the value is the number of bytes delivered.
    KernelSocket {
        /// VLAN-tagged frames the filter saw untagged.
        untagged: usize,
    },
    /// The 1987 stack machine compiled from the same expression; accept/reject only, and
    /// packets it cannot judge exactly (odd-length tails) are not judged.
    Cspf {
        /// 16-bit words in its program.
        words: usize,
        /// Whether it had the indirect-push extension.
        indirect: bool,
    },
}

impl Run {
    /// The engine's name: `interp`, `jit`, `optimized`, `jit-optimized`, `libpcap`,
    /// `kernel-ebpf`, `kernel-socket` or `cspf`.
    pub fn name(&self) -> &'static str {
        match self {
            Run::Interp => "interp",
            Run::Jit { .. } => "jit",
            Run::Optimized { .. } => "optimized",
            Run::JitOptimized { .. } => "jit-optimized",
            Run::Libpcap { .. } => "libpcap",
            Run::KernelEbpf { .. } => "kernel-ebpf",
            Run::KernelSocket { .. } => "kernel-socket",
            Run::Cspf { .. } => "cspf",
        }
    }
}

/// One engine's answers: per packet `Some((value, expected))`, or `None` when it did not judge
/// that packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers {
    /// The engine and its run.
    pub run: Run,
    /// Per packet, the engine's value and the expected one.
    pub per_packet: Vec<Option<(u32, u32)>>,
}

impl Answers {
    /// The engine's name.
    pub fn name(&self) -> &'static str {
        self.run.name()
    }

    /// Packets it accepted.
    pub fn accepted(&self) -> usize {
        self.per_packet.iter().flatten().filter(|(v, _)| *v != 0).count()
    }

    /// Packets it did not judge.
    pub fn skipped(&self) -> usize {
        self.per_packet.iter().filter(|a| a.is_none()).count()
    }

    /// Whether it differs from the expected value on packet `i`.
    pub fn differs(&self, i: usize) -> bool {
        matches!(self.per_packet[i], Some((v, e)) if v != e)
    }

    /// Packets on which it differs.
    pub fn differences(&self) -> usize {
        (0..self.per_packet.len()).filter(|&i| self.differs(i)).count()
    }
}

/// What comparing one expression found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// sift refuses the expression (the rendered message).
    Refused(String),
    /// The engines' answers.
    Compared {
        /// The engines that ran, the reference first.
        engines: Vec<Answers>,
        /// The engines that could not, and why.
        unavailable: Vec<(&'static str, String)>,
        /// Instructions in sift's (unoptimized) program.
        size: usize,
    },
}

/// Whether any engine differs on any of `packets` packets.
pub fn any_differs(engines: &[Answers], packets: usize) -> bool {
    (0..packets).any(|i| engines.iter().any(|e| e.differs(i)))
}

/// The engines, set up once and reused across expressions.
pub struct Engines {
    resolver: SystemResolver,
    libpcap: Result<sift_libpcap::Libpcap, String>,
    /// The veth engine, created with the first program (`None` until then), or why not.
    veth: Option<Result<sift_kernel::VethSocketFilter, String>>,
    cspf_indirect: bool,
}

impl std::fmt::Debug for Engines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engines")
            .field("cspf_indirect", &self.cspf_indirect)
            .finish_non_exhaustive()
    }
}

impl Engines {
    /// Loads the system libpcap (or notes why not); CSPF gets the BPF paper's indirect-push
    /// extension when `cspf_indirect`.
    pub fn new(cspf_indirect: bool) -> Engines {
        Engines {
            resolver: SystemResolver::new(),
            libpcap: sift_libpcap::Libpcap::load().map_err(|e| e.to_string()),
            veth: None,
            cspf_indirect,
        }
    }

    /// Compiles `expr` for `packets` and runs every engine over them.
    pub fn compare(&mut self, expr: &str, packets: &Packets) -> Result<Comparison, DiffError> {
        let target = packets.target();
        let validated = match crate::filter::compile(expr, &target, false, &self.resolver) {
            Ok(v) => v,
            Err(e) if e.is_internal() => return Err(DiffError::Filter(e)),
            Err(e) => return Ok(Comparison::Refused(e.to_string())),
        };
        let interp = sift_vm::Interpreter::new(&validated);
        let reference: Vec<u32> = packets.iter().map(|(p, w)| interp.run(p, w)).collect();
        let same = |values: Vec<u32>| -> Vec<Option<(u32, u32)>> {
            values.into_iter().zip(&reference).map(|(v, &r)| Some((v, r))).collect()
        };
        let mut engines = vec![Answers {
            run: Run::Interp,
            per_packet: reference.iter().map(|&r| Some((r, r))).collect(),
        }];
        let mut unavailable: Vec<(&'static str, String)> = Vec::new();

        match sift_jit::JitFilter::compile(&validated) {
            Ok(j) => engines.push(Answers {
                run: Run::Jit { code_bytes: j.code().len() },
                per_packet: same(packets.iter().map(|(p, w)| j.run(p, w)).collect()),
            }),
            Err(e) => unavailable.push(("jit", e.to_string())),
        }

        // sift's optimized program, in the interpreter and the JIT. "Rejects all packets" is
        // an answer too: then the reference must reject every packet.
        match crate::filter::compile(expr, &target, true, &self.resolver) {
            Ok(v) => {
                let i = sift_vm::Interpreter::new(&v);
                let values = packets.iter().map(|(p, w)| i.run(p, w)).collect();
                let run = Run::Optimized { instructions: Some(v.insns().len()) };
                engines.push(Answers { run, per_packet: same(values) });
                if let Ok(j) = sift_jit::JitFilter::compile(&v) {
                    let values = packets.iter().map(|(p, w)| j.run(p, w)).collect();
                    let run = Run::JitOptimized { code_bytes: j.code().len() };
                    engines.push(Answers { run, per_packet: same(values) });
                }
            }
            Err(e) if e.rejects_all() => engines.push(Answers {
                run: Run::Optimized { instructions: None },
                per_packet: same(vec![0; packets.len()]),
            }),
            Err(e) if e.is_internal() => return Err(DiffError::Filter(e)),
            Err(e) => unavailable.push(("optimized", e.to_string())),
        }

        match &self.libpcap {
            Ok(lib) => {
                // As tcpdump compiles for the file: on a savefile's handle, in its byte order.
                let (link, snaplen) = (packets.link_type, packets.snaplen);
                match lib.compile_savefile(link, snaplen, packets.big_endian, expr, false, 0) {
                    Ok(own) => match lib.prepare(&own) {
                        Ok(f) => {
                            // libpcap's `protochain` loop never returns on a chain of AH
                            // headers that cycles: such packets (those on which sift's
                            // interpreter spends its loop budget running libpcap's own program)
                            // are not given to `bpf_filter`, and not judged.
                            let guard = sift_verify::validate(&own, Mode::LibpcapLoops)
                                .ok()
                                .filter(|v| !v.is_acyclic())
                                .map(|v| sift_vm::Interpreter::new(&v));
                            let mut cycles = 0;
                            let per_packet = packets
                                .iter()
                                .zip(&reference)
                                .map(|((p, w), &r)| {
                                    if guard
                                        .as_ref()
                                        .is_some_and(|g| g.run_counted(p, w).out_of_budget)
                                    {
                                        cycles += 1;
                                        return None;
                                    }
                                    Some((f.run(p, w), r))
                                })
                                .collect();
                            engines.push(Answers {
                                run: Run::Libpcap { instructions: own.len(), cycles },
                                per_packet,
                            });
                        }
                        Err(e) => {
                            unavailable.push(("libpcap", format!("cannot run its program: {e}")))
                        }
                    },
                    Err(m) => {
                        unavailable.push(("libpcap", format!("pcap_compile refuses it: {m}")))
                    }
                }
            }
            Err(e) => unavailable.push(("libpcap", e.clone())),
        }

        // The kernel runs forward code only: its engines get the program with the `protochain`
        // walks unrolled (the same program when there is no walk).
        let kernel = if validated.is_acyclic() {
            Ok(validated.clone())
        } else {
            crate::filter::compile(expr, &target.for_kernel(), false, &self.resolver)
                .map_err(|e| format!("no program for the kernel: {e}"))
        };
        match &kernel {
            Ok(kernel) => match sift_kernel::KernelEbpf::new(kernel) {
                Ok(k) => {
                    let mut per_packet = Vec::with_capacity(packets.len());
                    let mut too_long = 0;
                    for ((p, w), &r) in packets.iter().zip(&reference) {
                        match k.run(p, w) {
                            Ok(v) => per_packet.push(Some((v, r))),
                            // Packets TEST_RUN cannot take (longer than MAX_PACKET) are not
                            // judged.
                            Err(_) => {
                                too_long += 1;
                                per_packet.push(None);
                            }
                        }
                    }
                    engines.push(Answers { run: Run::KernelEbpf { too_long }, per_packet });
                }
                Err(e) => unavailable.push(("kernel-ebpf", e.to_string())),
            },
            Err(why) => unavailable.push(("kernel-ebpf", why.clone())),
        }

        match &kernel {
            Ok(kernel) if packets.link_type == sift_pcap::LinkType::EN10MB => {
                self.veth(kernel, &interp, packets, &mut engines, &mut unavailable)?;
            }
            Ok(_) => unavailable.push(("kernel-socket", "Ethernet captures only (veth)".into())),
            Err(why) => unavailable.push(("kernel-socket", why.clone())),
        }

        let cspf_options = sift_cspf::Options::new(&self.resolver)
            .with_indirect(self.cspf_indirect)
            .with_savefile(target.savefile);
        match sift_cspf::compile_text(expr, packets.link_type, &cspf_options) {
            Ok(c) => {
                let per_packet = packets
                    .iter()
                    .zip(&reference)
                    .map(|((p, _), &r)| {
                        c.exact_for(p).then(|| (u32::from(c.run(p).0), u32::from(r != 0)))
                    })
                    .collect();
                let run = Run::Cspf { words: c.words().len(), indirect: self.cspf_indirect };
                engines.push(Answers { run, per_packet });
            }
            Err(e) => unavailable.push(("cspf", e.to_string())),
        }
        Ok(Comparison::Compared { engines, unavailable, size: validated.insns().len() })
    }

    /// The socket filter on the veth pair (made with the first program, then given each
    /// program in turn).
    fn veth(
        &mut self,
        validated: &Validated,
        interp: &sift_vm::Interpreter,
        packets: &Packets,
        engines: &mut Vec<Answers>,
        unavailable: &mut Vec<(&'static str, String)>,
    ) -> Result<(), DiffError> {
        let prog = validated.insns();
        let mut v = match self.veth.take() {
            None => match sift_kernel::VethSocketFilter::new(prog) {
                Ok(v) => v,
                Err(e) => {
                    let why = e.to_string();
                    unavailable.push(("kernel-socket", why.clone()));
                    self.veth = Some(Err(why));
                    return Ok(());
                }
            },
            Some(Ok(mut v)) => match v.set_filter(prog) {
                Ok(()) => v,
                Err(e) => {
                    unavailable.push(("kernel-socket", format!("the kernel refuses it: {e}")));
                    self.veth = Some(Ok(v));
                    return Ok(());
                }
            },
            Some(Err(why)) => {
                unavailable.push(("kernel-socket", why.clone()));
                self.veth = Some(Err(why));
                return Ok(());
            }
        };
        let mut per_packet = Vec::with_capacity(packets.len());
        let mut untagged = 0;
        for (p, _) in packets.iter() {
            let Some(view) = sift_kernel::kernel_view(p) else {
                per_packet.push(None);
                continue;
            };
            if view.len() != p.len() {
                untagged += 1;
            }
            // What the socket should get: the filter's value on the kernel's view, capped at
            // the frame's length (the kernel's `len` is the view's length).
            let expected = interp.run(&view, view.len() as u32).min(view.len() as u32);
            match v.run(p) {
                Ok(got) => per_packet.push(got.map(|got| (got, expected))),
                Err(e) => {
                    self.veth = Some(Ok(v));
                    return Err(e.into());
                }
            }
        }
        engines.push(Answers { run: Run::KernelSocket { untagged }, per_packet });
        self.veth = Some(Ok(v));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Packets;

    /// A classic pcap file of link type NULL in the given byte order, one record per address
    /// family, each followed by an IPv6 header.
    fn null_file(big_endian: bool, families: &[u32]) -> Vec<u8> {
        let w = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let records: Vec<Vec<u8>> = families
            .iter()
            .map(|&af| {
                let mut record = w(af).to_vec();
                record.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, 59, 64]);
                record.extend_from_slice(&[0; 32]);
                record
            })
            .collect();
        null_records(big_endian, &records)
    }

    /// A DLT_NULL pcap file of whole records (each with its address family word).
    fn null_records(big_endian: bool, records: &[Vec<u8>]) -> Vec<u8> {
        let w = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = w(0xa1b2_c3d4).to_vec();
        f.extend_from_slice(if big_endian { &[0, 2, 0, 4] } else { &[2, 0, 4, 0] });
        for v in [0, 0, 65_535, 0] {
            f.extend_from_slice(&w(v));
        }
        for record in records {
            for v in [1_700_000_000, 0, record.len() as u32, record.len() as u32] {
                f.extend_from_slice(&w(v));
            }
            f.extend_from_slice(record);
        }
        f
    }

    /// libpcap's `protochain` loop never returns on a chain of AH headers that cycles (after
    /// an AH header it takes the AH length alone as the next offset): such a packet is not
    /// given to `bpf_filter` (the comparison would hang), and is counted; the others are
    /// compared as usual.
    #[test]
    fn protochain_cycles_are_not_given_to_libpcap() {
        let ipv6 = |next: u8, payload: &[u8]| {
            let mut r = 24u32.to_le_bytes().to_vec();
            r.extend_from_slice(&[0x60, 0, 0, 0, 0, payload.len() as u8, next, 64]);
            r.extend_from_slice(&[0; 32]);
            r.extend_from_slice(payload);
            r
        };
        // AH at offset 40 of the network header, length (8 + 2) * 4 = 40: back to itself.
        let mut ah = vec![0u8; 40];
        ah[..2].copy_from_slice(&[51, 8]);
        let records = [ipv6(6, &[0; 20]), ipv6(51, &ah), ipv6(17, &[0; 8])];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cycle.pcap");
        std::fs::write(&path, null_records(false, &records)).unwrap();
        let packets = Packets::load(&path).unwrap();
        let mut engines = Engines::new(false);
        let Comparison::Compared { engines, .. } =
            engines.compare("ip6 protochain 6", &packets).unwrap()
        else {
            panic!("protochain compiles");
        };
        assert_eq!(engines[0].accepted(), 1, "the TCP packet only; the cycle ends with 0");
        for e in &engines {
            let differs: Vec<usize> = (0..packets.len()).filter(|&i| e.differs(i)).collect();
            assert!(differs.is_empty(), "{}: {:?} on {differs:?}", e.name(), e.per_packet);
        }
        if let Some(libpcap) = engines.iter().find(|e| e.name() == "libpcap") {
            assert!(matches!(libpcap.run, Run::Libpcap { cycles: 1, .. }), "{:?}", libpcap.run);
            assert_eq!(libpcap.per_packet[1], None, "not judged");
        }
    }

    /// The libpcap engine compiles for the file as tcpdump does: on DLT_NULL, IPv6 is any
    /// BSD's AF_INET6 in the file's byte order, not Linux's 10, and sift agrees.
    #[test]
    fn libpcap_compiles_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut engines = Engines::new(false);
        for big_endian in [false, true] {
            let path = dir.path().join(format!("null-{big_endian}.pcap"));
            std::fs::write(&path, null_file(big_endian, &[30, 24, 28, 10, 2])).unwrap();
            let packets = Packets::load(&path).unwrap();
            assert_eq!(packets.big_endian, big_endian);
            let Comparison::Compared { engines, .. } = engines.compare("ip6", &packets).unwrap()
            else {
                panic!("ip6 compiles");
            };
            for e in &engines {
                let differs: Vec<usize> = (0..packets.len()).filter(|&i| e.differs(i)).collect();
                assert!(differs.is_empty(), "{}: {:?} on {differs:?}", e.name(), e.per_packet);
            }
            assert_eq!(engines[0].accepted(), 3, "AF_INET6 30, 24 and 28, not 10");
            if let Some(libpcap) = engines.iter().find(|e| e.name() == "libpcap") {
                assert_eq!(libpcap.accepted(), 3);
            }
        }
    }
}
