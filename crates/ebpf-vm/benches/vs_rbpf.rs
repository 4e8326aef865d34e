//! The interpreter against rbpf's interpreter (`rbpf::EbpfVmRaw`) on the same programs and
//! memory, in the same run: a loop of divisions (prime test), an ALU-heavy loop (xorshift),
//! memory (sum of a 1 KiB buffer and a stack copy), and a short packet parse (ubpf's
//! tcp-port-80 filter). Each program is checked to give the same `r0` on both first.
//!
//! `cargo bench -p sift-ebpf-vm --bench vs_rbpf`; the ratio of medians is
//! `target/criterion/<program>/{sift,rbpf}/new/estimates.json`'s `median`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sift_ebpf::asm::assemble;
use sift_ebpf::encode_program;
use sift_ebpf_vm::{Helpers, Vm};

/// (name, program, memory). Programs use only `r1` (rbpf does not pass the length in `r2`).
fn programs() -> Vec<(&'static str, String, Vec<u8>)> {
    let prime = "mov %r1, 10007\nmov %r0, 1\nmov %r2, 2\njgt %r1, 2, L3\nja exit\nL2:\nadd %r2, 1\n\
                 mov %r0, 1\njge %r2, %r1, exit\nL3:\nmov %r3, %r1\ndiv %r3, %r2\nmul %r3, %r2\n\
                 mov %r4, %r1\nsub %r4, %r3\nmov %r0, 0\njne %r4, 0, L2\nexit\n";
    let xorshift = "lddw %r0, 0x9e3779b97f4a7c15\nmov %r2, 20000\nloop:\nmov %r3, %r0\nlsh %r3, 13\n\
                    xor %r0, %r3\nmov %r3, %r0\nrsh %r3, 7\nxor %r0, %r3\nmov %r3, %r0\nlsh %r3, 17\n\
                    xor %r0, %r3\nadd32 %r4, %r0\nsub %r2, 1\njne %r2, 0, loop\nexit\n";
    let memory = "mov %r0, 0\nmov %r2, 0\nsum:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3]\n\
                  add %r0, %r4\nadd %r2, 1\njlt %r2, 1024, sum\nmov %r2, 0\ncopy:\nmov %r3, %r1\n\
                  add %r3, %r2\nldxdw %r4, [%r3]\nmov %r5, %r10\nsub %r5, 512\nadd %r5, %r2\n\
                  stxdw [%r5], %r4\nldxdw %r4, [%r5]\nadd %r0, %r4\nadd %r2, 8\njlt %r2, 512, copy\nexit\n";
    let tcp80 = std::fs::read_to_string(
        sift_testkit::shared_dir().join("corpus/ebpf/ubpf/tcp-port-80/tcp-port-80.asm"),
    )
    .unwrap_or_else(|_| "mov %r0, 1\nexit\n".to_string());
    let mut packet = vec![0u8; 86];
    packet[12] = 8; // IPv4
    packet[14] = 0x45;
    packet[23] = 6; // TCP
    packet[36] = 0;
    packet[37] = 80; // destination port 80
    let mem: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 3) as u8).collect();
    vec![
        ("prime", prime.to_string(), Vec::new()),
        ("xorshift", xorshift.to_string(), Vec::new()),
        ("memory", memory.to_string(), mem),
        ("tcp-port-80", tcp80, packet),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, text, mem) in programs() {
        let bytes: Vec<u8> =
            encode_program(&assemble(&text).unwrap()).iter().flat_map(|s| s.encode()).collect();
        let mut sift = Vm::from_bytes(&bytes, Helpers::new()).unwrap();
        sift.set_budget(u64::MAX);
        let rbpf = rbpf::EbpfVmRaw::new(Some(&bytes)).unwrap();
        let mut m1 = mem.clone();
        let mut m2 = mem.clone();
        let ours = sift.run(&mut m1).unwrap();
        let theirs = rbpf.execute_program(&mut m2).unwrap();
        assert_eq!(ours, theirs, "{name}: sift and rbpf disagree");
        println!("{name}: r0 = {ours:#x}, {} instructions", sift.executed());
        let mut g = c.benchmark_group(name);
        g.bench_function("sift", |b| b.iter(|| sift.run(&mut m1).unwrap()));
        g.bench_function("rbpf", |b| b.iter(|| rbpf.execute_program(&mut m2).unwrap()));
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500)).sample_size(30);
    targets = bench
}
criterion_main!(benches);
