//! Batch against per-packet filtering on a capture larger than the CPU caches (issue 15), next
//! to libpcap's `bpf_filter`, in one run.
//!
//! ```text
//! sift gen -c 200000 -w /tmp/big.pcap          # 114 MB; keep it in the page cache
//! cargo run --release -p sift-jit --example batch_figures -- /tmp/big.pcap [ROUNDS] [BATCH]
//! cargo run --release -p sift-jit --example batch_figures -- /tmp/big.pcap --tune [ROUNDS]
//! ```
//!
//! The packets are copied back to back into one buffer, as `sift bench` does, so each pass
//! streams through memory as filtering a mapped capture does. One pass of one engine over all
//! packets is one sample; the engines take turns within each round, and the figure is the
//! median over the rounds, in ns/packet. Engines:
//!
//! * `floor`: no filter, a load of each packet's first byte (its first cache line);
//! * `floor-pf`: the same load through the JIT's batch function (`ldb [0]; ret a`), with its
//!   prefetch;
//! * `interp`, `jit`, `libpcap`: one call per packet, as `sift bench` times them
//!   (`libpcap` is the system libpcap's `bpf_filter`, through dlopen);
//! * `i-batch`, `j-batch`: `run_batch` over consecutive batches of BATCH packets (default 256);
//! * `l-group`: libpcap per packet, with the interpreter's batch trick done by the calling
//!   loop: the headers of 64 packets loaded, then those packets filtered (what a caller alone
//!   can add to libpcap; it shows how much of the batch gain is the engine's).
//!
//! The six filters are those of `benches/engines.sh`, in its two tables: the same program
//! for every engine (libpcap's optimized `pcap_compile` output, as `tcpdump -d` prints it), and
//! each engine's own compilation of the expression (sift's compiler for sift's engines).
//! Every engine's verdicts are checked against the interpreter's before timing.
//!
//! `--tune` sweeps the JIT's prefetch distance and line count, the interpreter's group size,
//! and the batch size, on the first three filters. `--only=ENGINE:FILTER` runs one engine on
//! one filter (for `perf stat`); `SIFT_MIN=1` takes the minimum instead of the median (for
//! tuning on a busy machine); `SIFT_HUGE=1` puts the packets on transparent huge pages.
//!
//! What it showed when the constants were tuned (2-core AMD EPYC VM, 4 KB pages, three runs
//! of 15 rounds, batches of 1024): floor 12–13 ns/packet; libpcap 50–130; the interpreter per
//! packet as libpcap, in batches 2.0–2.9× libpcap; the JIT per packet 2×, in batches
//! 3.1–5.8× (15–28 ns). The JIT's batches are the floor plus its own work, most of which is
//! mispredicted branches on mixed traffic (on a 20,000-packet capture that fits the L3 cache
//! it takes 2.5–11 ns a packet, on 2,000 packets 1.4–2.8); prefetching 16 to 32 packets ahead
//! does equally well, fewer than 8 not; batches under 256 pay for starting the prefetch.

use std::hint::black_box;
use std::time::Instant;

use sift_insn::Insn;
use sift_jit::{JitFilter, PacketRef, Prefetch};
use sift_libpcap::Libpcap;
use sift_verify::{Mode, Validated, validate};
use sift_vm::Interpreter;

const FILTERS: [&str; 6] = [
    "(tcp and portrange 0-1024) or (udp and portrange 1025-2048)",
    "src net 10.0.0.0/8 or (dst net 128.3.0.0/16 and port 22) or src net 2001:470::/28",
    "tcp port 80 and (tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420)",
    "tcp port 443 or udp port 53",
    "icmp6 or (ip6 and udp port 53)",
    "vlan and ip and host 10.1.2.3",
];

/// The group size of `l-group` (the interpreter's).
const GROUP: usize = 64;

/// The capture's packets back to back in one buffer (as `sift bench` holds them).
struct Packets {
    link: sift_pcap::LinkType,
    snaplen: u32,
    bytes: Buffer,
    /// `(start, end, wire length)` of each packet in `bytes`.
    spans: Vec<(usize, usize, u32)>,
}

/// Where the packets are: a vector, as `sift bench` keeps them, or (`SIFT_HUGE=1`, to see
/// what TLB misses cost) an anonymous mapping advised to use transparent huge pages.
enum Buffer {
    Vec(Vec<u8>),
    Huge(memmap2::MmapMut),
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buffer::Vec(v) => v,
            Buffer::Huge(m) => m,
        }
    }
}

impl Packets {
    fn load(path: &str) -> Packets {
        let mut reader = sift_pcap::open(path.as_ref()).expect("a readable capture");
        let mut bytes = Vec::new();
        let mut out = Packets {
            link: sift_pcap::LinkType::EN10MB,
            snaplen: 0,
            bytes: Buffer::Vec(Vec::new()),
            spans: Vec::new(),
        };
        while let Some((p, ifaces)) = reader.next_with_interfaces().expect("a valid capture") {
            if out.spans.is_empty() {
                let iface = &ifaces[p.interface as usize];
                out.link = iface.link_type;
                out.snaplen = if iface.snaplen == 0 { 262_144 } else { iface.snaplen };
            }
            let start = bytes.len();
            bytes.extend_from_slice(p.data);
            out.spans.push((start, bytes.len(), p.wire_len));
        }
        out.bytes = if std::env::var_os("SIFT_HUGE").is_some() {
            let mut map = memmap2::MmapMut::map_anon(bytes.len().max(1)).expect("memory");
            map.advise(memmap2::Advice::HugePage).expect("madvise");
            map[..bytes.len()].copy_from_slice(&bytes);
            Buffer::Huge(map)
        } else {
            Buffer::Vec(bytes)
        };
        out
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.spans.iter().map(|&(s, e, w)| (&self.bytes[s..e], w))
    }

    fn refs(&self) -> Vec<PacketRef<'_>> {
        self.iter().map(|(p, w)| PacketRef::new(p, w)).collect()
    }
}

/// One filter's programs, ready to run.
struct Engines<'a> {
    interp: Interpreter,
    jit: JitFilter,
    libpcap: sift_libpcap::PreparedFilter<'a>,
}

/// A pass over all packets, returning a value kept from the optimizer.
type Pass<'a> = Box<dyn FnMut() -> u64 + 'a>;

/// Runs the passes `rounds` times, in turns; the median ns/packet of each (the minimum with
/// `SIFT_MIN=1`, for tuning on a busy machine).
fn measure(passes: &mut [Pass<'_>], packets: usize, rounds: usize) -> Vec<f64> {
    let min = std::env::var_os("SIFT_MIN").is_some();
    let mut samples = vec![Vec::with_capacity(rounds); passes.len()];
    for _ in 0..rounds {
        for (i, pass) in passes.iter_mut().enumerate() {
            let start = Instant::now();
            black_box(pass());
            samples[i].push(start.elapsed().as_nanos() as f64 / packets as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            if min { s[0] } else { s[s.len() / 2] }
        })
        .collect()
}

fn floor(pk: &Packets) -> u64 {
    let mut sum = 0u64;
    for &(s, e, _) in &pk.spans {
        if s < e {
            sum += u64::from(pk.bytes[s]);
        }
    }
    sum
}

fn per_packet(pk: &Packets, run: impl Fn(&[u8], u32) -> u32) -> u64 {
    pk.iter().map(|(p, w)| u64::from(run(black_box(p), w) != 0)).sum()
}

fn batched(
    refs: &[PacketRef<'_>],
    batch: usize,
    out: &mut Vec<u32>,
    run: impl Fn(&[PacketRef<'_>], &mut Vec<u32>) -> usize,
) -> u64 {
    refs.chunks(batch).map(|c| run(c, out) as u64).sum()
}

/// Per packet, in groups of `GROUP`: first a load of bytes 0 and 63 of every packet of the
/// group, then the filter over each (the interpreter's batch loop, done by the caller).
fn per_packet_grouped(pk: &Packets, run: impl Fn(&[u8], u32) -> u32) -> u64 {
    let mut n = 0u64;
    for group in pk.spans.chunks(GROUP) {
        let mut touched = 0u8;
        for &(s, e, _) in group {
            let p = &pk.bytes[s..e];
            touched ^= p.first().copied().unwrap_or(0) ^ p.get(63).copied().unwrap_or(0);
        }
        black_box(touched);
        for &(s, e, w) in group {
            n += u64::from(run(black_box(&pk.bytes[s..e]), w) != 0);
        }
    }
    n
}

/// The programs of `expr` for each table: (libpcap's for all, sift's for sift's engines).
fn programs(lib: &Libpcap, pk: &Packets, expr: &str) -> (Vec<Insn>, Vec<Insn>) {
    let raw = lib
        .compile(pk.link, pk.snaplen.min(i32::MAX as u32) as i32, expr, true, 0)
        .unwrap_or_else(|e| panic!("libpcap cannot compile {expr}: {e}"));
    let resolver = sift_filter::SystemResolver::new();
    let opts = sift_compile::pipeline::Options::new(pk.link, &resolver)
        .snaplen(pk.snaplen)
        .netmask(Some(0));
    let own = sift_compile::pipeline::compile(expr, &opts)
        .unwrap_or_else(|e| panic!("sift cannot compile {expr}: {}", e.render(expr)));
    (raw, own.program.insns().to_vec())
}

fn validated(prog: &[Insn]) -> Validated {
    validate(prog, Mode::Libpcap).expect("a valid program")
}

/// Checks every engine's verdicts against the interpreter's (exactly, or accept/reject only
/// when libpcap runs a program of its own).
fn check(e: &Engines<'_>, pk: &Packets, refs: &[PacketRef<'_>], same_program: bool) -> usize {
    let want: Vec<u32> = pk.iter().map(|(p, w)| e.interp.run(p, w)).collect();
    let mut got = Vec::new();
    let accepted = e.jit.run_batch(refs, &mut got);
    assert_eq!(got, want, "JIT batch");
    e.interp.run_batch(refs, &mut got);
    assert_eq!(got, want, "interpreter batch");
    for (i, (p, w)) in pk.iter().enumerate() {
        assert_eq!(e.jit.run(p, w), want[i], "JIT on packet {i}");
        let l = e.libpcap.run(p, w);
        if same_program {
            assert_eq!(l, want[i], "libpcap on packet {i}");
        } else {
            assert_eq!(l != 0, want[i] != 0, "libpcap on packet {i}");
        }
    }
    accepted
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().map_or("/tmp/big.pcap", String::as_str);
    let tune = args.iter().any(|a| a == "--tune");
    let nums: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    let rounds = nums.first().copied().unwrap_or(11).max(1);
    let batch = nums.get(1).copied().unwrap_or(256).max(1);

    let pk = Packets::load(path);
    let refs = pk.refs();
    let n = pk.spans.len();
    let lib = Libpcap::load().expect("the system libpcap");
    println!(
        "{n} packets, {:.1} MB, from {path}; {} rounds, median; batches of {batch}; {}",
        pk.bytes.len() as f64 / 1e6,
        rounds,
        lib.version()
    );
    if tune {
        return tune_all(&lib, &pk, &refs, rounds);
    }
    if let Some(only) = args.iter().find_map(|a| a.strip_prefix("--only=")) {
        return only_one(&lib, &pk, &refs, only, rounds, batch);
    }
    // The prefetched floor: the JIT's batch function over a program that loads byte 0.
    let touch =
        JitFilter::compile(&validated(&sift_insn::asm::assemble("ldb [0]\nret a").unwrap()))
            .expect("x86-64");
    for (table, same) in [("same program (libpcap's)", true), ("each engine's own program", false)]
    {
        println!("\n{table}");
        println!(
            "{:<82} {:>6} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6}",
            "filter",
            "floor",
            "floor-pf",
            "interp",
            "i-batch",
            "jit",
            "j-batch",
            "libpcap",
            "l-group",
            "l/i",
            "l/ib",
            "l/j",
            "l/jb"
        );
        for expr in FILTERS {
            let (pcap_prog, sift_prog) = programs(&lib, &pk, expr);
            let ours = validated(if same { &pcap_prog } else { &sift_prog });
            let e = Engines {
                interp: Interpreter::new(&ours),
                jit: JitFilter::compile(&ours).expect("x86-64"),
                libpcap: lib.prepare(&pcap_prog).expect("runnable"),
            };
            let accepted = check(&e, &pk, &refs, same);
            let mut out = Vec::with_capacity(batch);
            let out = std::cell::RefCell::new(&mut out);
            let mut passes: Vec<Pass<'_>> = vec![
                Box::new(|| floor(&pk)),
                Box::new(|| per_packet(&pk, |p, w| e.interp.run(p, w))),
                Box::new(|| {
                    batched(&refs, batch, &mut out.borrow_mut(), |c, o| e.interp.run_batch(c, o))
                }),
                Box::new(|| per_packet(&pk, |p, w| e.jit.run(p, w))),
                Box::new(|| {
                    batched(&refs, batch, &mut out.borrow_mut(), |c, o| e.jit.run_batch(c, o))
                }),
                Box::new(|| per_packet(&pk, |p, w| e.libpcap.run(p, w))),
                Box::new(|| per_packet_grouped(&pk, |p, w| e.libpcap.run(p, w))),
                Box::new(|| {
                    batched(&refs, batch, &mut out.borrow_mut(), |c, o| touch.run_batch(c, o))
                }),
            ];
            let m = measure(&mut passes, n, rounds);
            let label = format!("{expr} [{} insns, {accepted} acc.]", ours.insns().len());
            println!(
                "{label:<82} {:6.2} {:8.2} {:7.2} {:7.2} {:7.2} {:7.2} {:7.2} {:7.2} {:5.2}x {:5.2}x {:5.2}x {:5.2}x",
                m[0],
                m[7],
                m[1],
                m[2],
                m[3],
                m[4],
                m[5],
                m[6],
                m[5] / m[1],
                m[5] / m[2],
                m[5] / m[3],
                m[5] / m[4]
            );
        }
    }
}

/// Sweeps the batch parameters on the first three filters (libpcap's programs).
fn tune_all(lib: &Libpcap, pk: &Packets, refs: &[PacketRef<'_>], rounds: usize) {
    let n = pk.spans.len();
    for expr in &FILTERS[..3] {
        let (prog, _) = programs(lib, pk, expr);
        let v = validated(&prog);
        let interp = Interpreter::new(&v);
        println!("\n{expr}");
        let mut out = Vec::new();
        let out = std::cell::RefCell::new(&mut out);
        let mut passes: Vec<Pass<'_>> = vec![Box::new(|| floor(pk))];
        let mut names = vec!["floor".to_owned()];
        for (src, lines) in [("ret #1", 1), ("ldb [0]\nret a", 1), ("ldb [0]\nret a", 2)] {
            let v = validated(&sift_insn::asm::assemble(src).unwrap());
            let jit =
                JitFilter::compile_with_prefetch(&v, Prefetch { distance: 24, lines }).unwrap();
            names.push(format!(
                "jit floor `{}`, prefetch 24 ahead x{lines}",
                src.replace('\n', "; ")
            ));
            let out = &out;
            passes.push(Box::new(move || {
                batched(refs, 256, &mut out.borrow_mut(), |c, o| jit.run_batch(c, o))
            }));
        }
        for (distance, lines) in [
            (0, 0),
            (4, 1),
            (8, 1),
            (16, 1),
            (24, 1),
            (32, 1),
            (48, 1),
            (8, 2),
            (16, 2),
            (24, 2),
            (32, 2),
            (24, 3),
        ] {
            let jit = JitFilter::compile_with_prefetch(&v, Prefetch { distance, lines }).unwrap();
            names.push(format!("jit batch 256, prefetch {distance} ahead x{lines} lines"));
            let out = &out;
            passes.push(Box::new(move || {
                batched(refs, 256, &mut out.borrow_mut(), |c, o| jit.run_batch(c, o))
            }));
        }
        for size in [16, 64, 1024, 8192, n] {
            let jit = JitFilter::compile(&v).unwrap();
            names.push(format!("jit batch {size}, tuned prefetch"));
            let out = &out;
            passes.push(Box::new(move || {
                batched(refs, size, &mut out.borrow_mut(), |c, o| jit.run_batch(c, o))
            }));
        }
        for group in [0, 8, 16, 32, 64, 128] {
            names.push(format!("interp batch 256, touch groups of {group}"));
            let (interp, out) = (&interp, &out);
            passes.push(Box::new(move || {
                batched(refs, 256, &mut out.borrow_mut(), |c, o| {
                    interp.run_batch_grouped(c, o, group)
                })
            }));
        }
        for size in [16, 64, 1024, n] {
            names.push(format!("interp batch {size}, tuned touch"));
            let (interp, out) = (&interp, &out);
            passes.push(Box::new(move || {
                batched(refs, size, &mut out.borrow_mut(), |c, o| interp.run_batch(c, o))
            }));
        }
        let m = measure(&mut passes, n, rounds);
        for (name, ns) in names.iter().zip(m) {
            println!("  {name:<50} {ns:7.2} ns/packet");
        }
    }
}

/// `--only=ENGINE:FILTER` (FILTER an index into the list): that engine alone, `rounds` passes,
/// for `perf stat`.
fn only_one(
    lib: &Libpcap,
    pk: &Packets,
    refs: &[PacketRef<'_>],
    only: &str,
    rounds: usize,
    batch: usize,
) {
    let (engine, index) = only.split_once(':').unwrap_or((only, "0"));
    let (prog, _) = programs(lib, pk, FILTERS[index.parse::<usize>().unwrap_or(0) % FILTERS.len()]);
    let v = validated(&prog);
    let interp = Interpreter::new(&v);
    let jit = JitFilter::compile(&v).unwrap();
    let f = lib.prepare(&prog).unwrap();
    let mut out = Vec::new();
    let start = Instant::now();
    let mut sum = 0;
    for _ in 0..rounds {
        sum += match engine {
            "floor" => floor(pk),
            "interp" => per_packet(pk, |p, w| interp.run(p, w)),
            "i-batch" => batched(refs, batch, &mut out, |c, o| interp.run_batch(c, o)),
            "jit" => per_packet(pk, |p, w| jit.run(p, w)),
            "j-batch" => batched(refs, batch, &mut out, |c, o| jit.run_batch(c, o)),
            "libpcap" => per_packet(pk, |p, w| f.run(p, w)),
            _ => panic!("engines: floor interp i-batch jit j-batch libpcap"),
        };
    }
    let ns = start.elapsed().as_nanos() as f64 / (rounds * pk.spans.len()) as f64;
    println!("{engine}: {ns:.2} ns/packet ({sum})");
}
