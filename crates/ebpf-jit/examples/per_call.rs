//! The fixed cost of one run: a `return 0` program through `Vm::run`, `Vm::run_xdp_packet`
//! and `Vm::run_tc`, on the interpreter and on the JIT (checked; verified mode through its
//! XDP entry point), the median and the fastest of several timed loops. Run with
//! `cargo run --release -p sift-ebpf-jit --example per_call [interp|jit|verified [run]]`.

use std::hint::black_box;
use std::time::Instant;

use sift_ebpf::EbpfInsn;
use sift_ebpf::ProgType;
use sift_ebpf_jit::{JitOptions, jit, jit_verified};
use sift_ebpf_vm::{SkbInfo, Vm, XdpPacket, test_helpers};

const CALLS: u32 = 100_000;
const ROUNDS: usize = 41;

fn return0() -> Vm {
    let p = [
        EbpfInsn { code: 0xb7, dst: 0, src: 0, off: 0, imm: 0 },
        EbpfInsn { code: 0x95, dst: 0, src: 0, off: 0, imm: 0 },
    ];
    Vm::load(&p, test_helpers()).expect("loads")
}

/// Nanoseconds per call of `f`: the median and the fastest round (the machine's noise
/// only adds).
fn per_call(mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(CALLS)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[ROUNDS / 2], t[0])
}

fn measure(name: &str, mut vm: Vm) {
    let mut mem = [0u8; 16];
    let run = per_call(|| {
        black_box(vm.run(black_box(&mut mem)).expect("runs"));
    });
    if std::env::args().nth(2).is_some_and(|a| a == "run") {
        println!("{name:<15} run {:5.1} ns", run.0);
        return;
    }
    let mut frame = XdpPacket::new(&[0u8; 64]);
    let xdp = per_call(|| {
        black_box(vm.run_xdp_packet(&mut frame, 1, 0).expect("runs"));
    });
    let mut pkt = [0u8; 64];
    let info = SkbInfo::default();
    let tc = per_call(|| {
        black_box(vm.run_tc(black_box(&mut pkt), &info).expect("runs"));
    });
    let show = |(med, min): (f64, f64)| format!("{med:5.1} ns (min {min:5.1})");
    println!("{name:<15} run {}   run_xdp_packet {}   run_tc {}", show(run), show(xdp), show(tc));
}

fn main() {
    // `per_call jit` (or `interp`) measures one engine only (for profiling).
    let only = std::env::args().nth(1);
    let wants = |e: &str| only.as_deref().is_none_or(|o| o == e);
    if wants("interp") {
        measure("interpreter", return0());
    }
    if wants("jit") {
        let mut vm = return0();
        jit(&mut vm, &JitOptions::default()).expect("compiles");
        measure("jit (checked)", vm);
    }
    if wants("verified") {
        // Verified as XDP, so it runs only through the XDP entry point.
        let mut vm = return0();
        let verifier = sift_ebpf_verifier::Options::default();
        jit_verified(&mut vm, ProgType::Xdp, &verifier, &JitOptions::default()).expect("verifies");
        let mut frame = XdpPacket::new(&[0u8; 64]);
        let xdp = per_call(|| {
            black_box(vm.run_xdp_packet(&mut frame, 1, 0).expect("runs"));
        });
        println!("jit (verified) run_xdp_packet {:5.1} ns (min {:5.1})", xdp.0, xdp.1);
    }
}
