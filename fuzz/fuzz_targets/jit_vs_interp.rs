//! The JIT against the reference interpreter: on any validated program and any packet, both
//! return the same value, one packet at a time and in batches (the JIT's batch function and
//! the interpreter's batch loop, over the packet, its prefixes and empty packets). Programs
//! come from the raw bytes (coverage-guided) and from the seeded generator of always-valid
//! programs (so most inputs exercise deep code).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_insn::Insn;
use sift_jit::{JitFilter, PacketRef};
use sift_verify::{Mode, validate};
use sift_vm::Interpreter;
use sift_vm::testgen::{self, GenConfig, Rng};

fn compare(prog: &[Insn], pkt: &[u8], wire: u32) {
    let Ok(v) = validate(prog, Mode::Libpcap) else { return };
    let jit = JitFilter::compile(&v).expect("the JIT compiles every validated program");
    let interp = Interpreter::new(&v);
    assert_eq!(jit.run(pkt, wire), interp.run(pkt, wire), "{prog:?}");
    // A batch of the packet cut at every length the packet's first byte selects, with empty
    // packets among them and the wire lengths varied.
    let step = usize::from(pkt.first().copied().unwrap_or(1)).max(1);
    let batch: Vec<PacketRef<'_>> = (0..=pkt.len())
        .step_by(step)
        .flat_map(|n| [PacketRef::new(&pkt[..n], wire), PacketRef::new(&[], n as u32)])
        .chain([PacketRef::new(pkt, wire.wrapping_add(1))])
        .collect();
    let want: Vec<u32> = batch.iter().map(|p| interp.run(p.data(), p.wire_len())).collect();
    let accepted = want.iter().filter(|&&r| r != 0).count();
    let mut got = Vec::new();
    assert_eq!(jit.run_batch(&batch, &mut got), accepted, "{prog:?}");
    assert_eq!(got, want, "JIT batch, {prog:?}");
    assert_eq!(interp.run_batch(&batch, &mut got), accepted, "{prog:?}");
    assert_eq!(got, want, "interpreter batch, {prog:?}");
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
