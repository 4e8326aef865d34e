//! Per-packet cost of a multi-filter eBPF program in the kernel (`BPF_PROG_TEST_RUN`, XDP,
//! repeated) for 1, 100 and 1,000 realistic filters, against the first filter alone. Not a
//! test: run as root, `cargo run --release -p sift-compile --example ebpf_multi_cost`.

use std::os::fd::{AsRawFd, OwnedFd};

use sift_compile::ebpf::{self, EbpfFilter, EbpfOptions, Hook};
use sift_compile::multi::{self, Decide, FilterSet};
use sift_compile::pipeline::{LinkType, Options};

fn load(f: &EbpfFilter) -> (OwnedFd, Vec<OwnedFd>) {
    let maps: Vec<OwnedFd> = f
        .maps
        .iter()
        .map(|m| {
            sift_sys::bpf::map_create(m.map_type as u32, m.key_size, m.value_size, m.max_entries, 0)
                .expect("map")
        })
        .collect();
    let fds: Vec<i32> = maps.iter().map(|m| m.as_raw_fd()).collect();
    let bytes = f.bytes_with_map_fds(&fds);
    let prog = sift_sys::bpf::prog_load(f.prog_type().number(), &bytes, None).expect("load");
    (prog, maps)
}

/// `n` realistic filters: hosts, subnets, ports, VLANs (as the tests' sets, without filters
/// that run on every packet).
fn exprs(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 6 {
            0 => format!("host 10.0.{}.{}", i / 250, 1 + i % 250),
            1 => format!("net 10.{}.0.0/16", 10 + i % 200),
            2 => format!("tcp port {}", 1000 + i),
            3 => format!("vlan {} and host 10.0.0.{}", 1 + i % 4000, 1 + i % 250),
            4 => format!("udp port {} and net 10.0.0.0/24", 2000 + i),
            _ => format!("tcp dst port {} and src host 10.0.0.{}", 3000 + i, 1 + i % 250),
        })
        .collect()
}

fn cost(prog: &OwnedFd, frames: &[Vec<u8>]) -> f64 {
    let repeat = 200_000;
    let total: f64 = frames
        .iter()
        .map(|f| {
            f64::from(sift_sys::bpf::prog_test_run(prog, f, &[], repeat).expect("run").duration_ns)
        })
        .sum();
    total / frames.len() as f64
}

fn main() {
    let resolver = sift_filter::TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &resolver);
    let mut g = sift_gen::Generator::new(7, sift_gen::Config::default());
    let mut frames = Vec::new();
    let mut buf = Vec::new();
    while frames.len() < 20 {
        g.next_frame(&mut buf);
        if buf.len() >= 14 && buf.len() <= 3000 {
            frames.push(buf.clone());
        }
    }
    let one = sift_compile::pipeline::compile(&exprs(1)[0], &opts).expect("compiles");
    let (alone, _maps) = load(&ebpf::lower(&one, &EbpfOptions::new(Hook::Xdp)).expect("lowers"));
    let base = cost(&alone, &frames);
    println!("one filter alone (`{}`): {base:.1} ns/packet", exprs(1)[0]);
    for n in [1, 100, 1000] {
        let set = FilterSet::from_exprs(exprs(n));
        let m = multi::compile(&set, &opts).expect("compiles");
        for mode in [Decide::All, Decide::First] {
            let f = ebpf::lower_multi(&m, &EbpfOptions::new(Hook::Xdp), mode).expect("lowers");
            let (prog, _maps) = load(&f.filter);
            let c = cost(&prog, &frames);
            println!(
                "{n:5} filters {mode:?}: {} slots, {c:.1} ns/packet ({:.2}x one filter)",
                f.filter.len(),
                c / base
            );
        }
    }
}
