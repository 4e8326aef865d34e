//! The JIT against the reference interpreter: on any validated program and any packet, both
//! return the same value. Programs come from the raw bytes (coverage-guided) and from the
//! seeded generator of always-valid programs (so most inputs exercise deep code).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_insn::Insn;
use sift_jit::JitFilter;
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;
use sift_vm::testgen::{self, GenConfig, Rng};

fn compare(prog: &[Insn], pkt: &[u8], wire: u32) {
    let Ok(v) = validate(prog, Mode::Libpcap) else { return };
    let jit = JitFilter::compile(&v).expect("the JIT compiles every validated program");
    assert_eq!(jit.run(pkt, wire), Interpreter::new(&v).run(pkt, wire), "{prog:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((prog, pkt, wire)) = sift_vm::testgen::program_from_bytes(data) else { return };
    compare(&prog, pkt, wire);
    // A generated program from the same bytes, run on the same packet.
    let seed = data.iter().take(8).fold(0u64, |s, &b| s.rotate_left(8) ^ u64::from(b));
    let mut rng = Rng::new(seed);
    let generated = testgen::program(&mut rng, &GenConfig::libpcap());
    compare(&generated, pkt, wire);
});
