//! The optimizer on arbitrary programs, not only gencode's: random valid classic BPF programs
//! (`sift_vm::testgen`, all 49 opcodes, offsets near packet ends and 2^31, shifts near 32,
//! zero divisors, ancillary loads) are lifted, optimized and emitted; the result must return
//! the same value as the original on random packets (mostly short) in both interpreter
//! flavors (libpcap's, and Linux's with packet metadata), and pass validation.

use sift_compile::lift::lift;
use sift_verify::{Mode, validate};
use sift_vm::testgen::{GenConfig, Rng, packet, program};
use sift_vm::{Flavor, Interpreter, PacketMeta};

fn check(seed: u64, cfg: &GenConfig, packets: usize) -> Result<bool, String> {
    let mut rng = Rng::new(seed);
    let prog = program(&mut rng, cfg);
    let Ok(mut graph) = lift(&prog) else { return Ok(false) };
    if graph.check().is_err() {
        return Ok(false);
    }
    sift_compile::optimize(&mut graph);
    let opt = sift_compile::emit::emit(&graph).map_err(|e| format!("seed {seed}: emit: {e}"))?;
    let vo = validate(&opt, Mode::Libpcap).map_err(|e| format!("seed {seed}: invalid: {e}"))?;
    let vp = validate(&prog, Mode::Libpcap).expect("testgen programs are valid");
    for flavor in [Flavor::Libpcap, Flavor::Linux] {
        let (a, b) = (Interpreter::with_flavor(&vp, flavor), Interpreter::with_flavor(&vo, flavor));
        for _ in 0..packets {
            let (pkt, wire) = packet(&mut rng);
            let meta = PacketMeta {
                ifindex: Some(rng.below(4) as u32),
                vlan_tci: rng.below(3) as u16,
                vlan_present: rng.below(2) == 1,
                mark: rng.below(3) as u32,
                ..PacketMeta::new(wire)
            };
            let (x, y) = (a.run_with_meta(&pkt, &meta), b.run_with_meta(&pkt, &meta));
            if x != y {
                return Err(format!(
                    "seed {seed} {flavor:?}: original {x}, optimized {y} on {} bytes (wire \
                     {wire})\noriginal:\n{}\noptimized:\n{}",
                    pkt.len(),
                    sift_insn::text::listing(&prog),
                    sift_insn::text::listing(&opt)
                ));
            }
        }
    }
    Ok(true)
}

#[test]
fn random_programs_keep_their_meaning() {
    let mut lifted = 0;
    let mut failures = Vec::new();
    for (cfg, base) in [(GenConfig::anything(), 0u64), (GenConfig::linux(), 1 << 32)] {
        for seed in 0..6000 {
            match check(base + seed, &cfg, 60) {
                Ok(l) => lifted += usize::from(l),
                Err(e) => failures.push(e),
            }
        }
    }
    println!("{lifted} programs lifted and optimized, {} failures", failures.len());
    assert!(
        failures.is_empty(),
        "{}",
        failures.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n")
    );
    assert!(lifted >= 6000, "only {lifted} programs lifted");
}
