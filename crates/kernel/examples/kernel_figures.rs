//! Prints per-packet costs of the kernel engines next to sift's JIT and interpreter, for a few
//! filters compiled by sift over generated Ethernet traffic (needs root for the kernel rows).
//!
//! `cargo run --release -p sift-kernel --example kernel_figures`
//!
//! * TEST_RUN ns/run: the kernel's own mean (`duration`) with a repeat count, averaged over the
//!   packets; it includes the test-run loop (about 25–30 ns here).
//! * TEST_RUN wall/packet: one `BPF_PROG_TEST_RUN` syscall per packet (repeat 1).
//! * veth wall/packet: send + receive on the veth pair, per frame.
//! * JIT / interpreter ns/packet: wall time over the same packets, many rounds.

use std::time::Instant;

use sift_compile::pipeline::{self, LinkType};
use sift_filter::TableResolver;
use sift_gen::{Config, Generator};
use sift_kernel::{KernelEbpf, MAX_PACKET, VethSocketFilter};
use sift_verify::Mode;
use sift_vm::{Flavor, Interpreter};

fn main() {
    let mut g = Generator::new(42, Config::default());
    let packets: Vec<Vec<u8>> = (0..2000)
        .map(|_| {
            let mut b = Vec::new();
            g.next_frame(&mut b);
            b
        })
        .filter(|p| p.len() <= MAX_PACKET)
        .collect();
    let resolver = TableResolver::well_known();
    let opts =
        pipeline::Options::new(LinkType::EN10MB, &resolver).optimize(false).mode(Mode::Linux);
    println!(
        "{:<40} {:>6} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "filter", "insns", "testrun ns", "testrun wall", "veth wall", "jit ns", "interp ns"
    );
    for expr in
        ["", "tcp", "udp port 53", "tcp port 80 or tcp port 443", "ip6 and udp", "vlan and udp"]
    {
        let valid = pipeline::compile(expr, &opts).expect("compile").program;
        let prog = &valid;
        let jit = sift_jit::JitFilter::compile(&valid).expect("jit");
        let interp = Interpreter::with_flavor(&valid, Flavor::Linux);
        let rounds = 200;
        let t = Instant::now();
        let mut acc = 0u64;
        for _ in 0..rounds {
            for p in &packets {
                acc += u64::from(jit.run(p, p.len() as u32) != 0);
            }
        }
        let jit_ns = t.elapsed().as_nanos() as f64 / (rounds * packets.len()) as f64;
        let t = Instant::now();
        for _ in 0..rounds {
            for p in &packets {
                acc += u64::from(interp.run(p, p.len() as u32) != 0);
            }
        }
        let interp_ns = t.elapsed().as_nanos() as f64 / (rounds * packets.len()) as f64;
        std::hint::black_box(acc);

        let (tr_ns, tr_wall) = match KernelEbpf::new(&valid) {
            Ok(k) => {
                let sample = &packets[..200];
                let mut total = 0u64;
                for p in sample {
                    total += u64::from(k.time(p, p.len() as u32, 10_000).expect("time"));
                }
                let t = Instant::now();
                for p in &packets {
                    k.run(p, p.len() as u32).expect("run");
                }
                let wall = t.elapsed().as_nanos() as f64 / packets.len() as f64;
                (format!("{:.1}", total as f64 / sample.len() as f64), format!("{wall:.0}"))
            }
            Err(e) => (format!("({e})"), String::new()),
        };
        let veth_wall = match VethSocketFilter::new(prog.insns()) {
            Ok(mut v) => {
                let t = Instant::now();
                v.run_batch(packets.iter().map(Vec::as_slice)).expect("veth");
                format!("{:.0}", t.elapsed().as_nanos() as f64 / packets.len() as f64)
            }
            Err(e) => format!("({e})"),
        };
        println!(
            "{:<40} {:>6} {:>10} {:>12} {:>10} {:>8.1} {:>8.1}",
            format!("{expr:?}"),
            prog.insns().len(),
            tr_ns,
            tr_wall,
            veth_wall,
            jit_ns,
            interp_ns
        );
    }
}
