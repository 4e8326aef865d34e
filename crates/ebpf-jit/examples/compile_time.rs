//! How long compiling takes: a 100-instruction and a 65,536-instruction program (a mix of
//! ALU operations, stack and memory accesses and forward jumps), the median of several
//! compiles each. Run with `cargo run --release -p sift-ebpf-jit --example compile_time`.

use std::time::{Duration, Instant};

use sift_ebpf::EbpfInsn;
use sift_ebpf_jit::{JitOptions, compile};
use sift_ebpf_vm::{Vm, test_helpers};

fn program(n: usize) -> Vec<EbpfInsn> {
    let mut p = Vec::with_capacity(n);
    let mut x = 0x1234_5678u64;
    while p.len() < n - 1 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let d = (x % 6) as u8;
        let s = ((x >> 8) % 6) as u8;
        let insn = match (x >> 16) % 8 {
            0 => EbpfInsn { code: 0x0f, dst: d, src: s, off: 0, imm: 0 },
            1 => EbpfInsn { code: 0x07, dst: d, src: 0, off: 0, imm: (x >> 24) as i32 },
            2 => EbpfInsn { code: 0xbc, dst: d, src: s, off: 0, imm: 0 },
            3 => EbpfInsn {
                code: 0x79,
                dst: d,
                src: 10,
                off: -8 * (1 + (x >> 30) as i16 % 60),
                imm: 0,
            },
            4 => EbpfInsn {
                code: 0x7b,
                dst: 10,
                src: s,
                off: -8 * (1 + (x >> 30) as i16 % 60),
                imm: 0,
            },
            5 => EbpfInsn { code: 0x61, dst: d, src: 1, off: ((x >> 30) % 60) as i16, imm: 0 },
            6 if p.len() + 4 < n - 1 => EbpfInsn { code: 0x2d, dst: d, src: s, off: 2, imm: 0 },
            _ => EbpfInsn { code: 0xa4, dst: d, src: 0, off: 0, imm: 0x55 },
        };
        p.push(insn);
    }
    p.push(EbpfInsn { code: 0x95, dst: 0, src: 0, off: 0, imm: 0 });
    p
}

fn median(n: usize, runs: usize) -> (Duration, usize) {
    let vm = Vm::load(&program(n), test_helpers()).expect("loads");
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let code = compile(&vm, &JitOptions::default()).expect("compiles");
        times.push(t.elapsed());
        bytes = code.bytes().len();
    }
    times.sort();
    (times[runs / 2], bytes)
}

fn main() {
    let only_big = std::env::var("BIG").is_ok();
    for (n, runs) in [(100, 2001), (65_536, 21)] {
        if only_big && n == 100 {
            continue;
        }
        let (t, bytes) = median(n, runs);
        println!("{n} instructions: median compile {t:?} ({bytes} bytes of code)");
    }
}
