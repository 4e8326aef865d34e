//! The batch entry against per-packet runs: on random validated programs and random batches
//! (empty and truncated packets, sizes around the prefetch distance and 64), the JIT's batch
//! function, the interpreter's batch loop and `Filter::run_batch` give every packet the value
//! the interpreter's `run` gives it, and count the accepted packets.

use sift_insn::asm::assemble;
use sift_jit::{Filter, JitFilter, PacketRef, Prefetch};
use sift_verify::{Mode, Validated, validate};
use sift_vm::Interpreter;
use sift_vm::testgen::{self, GenConfig, Rng};

/// Batch sizes: empty, single, around the prefetch distance and a 64-packet batch, and longer.
const SIZES: [usize; 12] = [0, 1, 2, 7, 8, 9, 63, 64, 65, 127, 128, 300];

/// Packets for a batch of `n`: random ones (many shorter than the loads), with empty ones and
/// copies cut short among them.
fn packets(rng: &mut Rng, n: usize) -> Vec<(Vec<u8>, u32)> {
    (0..n)
        .map(|_| match rng.below(10) {
            0 => (Vec::new(), rng.below(100) as u32),
            1 => {
                let (mut p, wire) = testgen::packet(rng);
                p.truncate(rng.below(p.len() as u64 + 1) as usize);
                (p, wire)
            }
            _ => testgen::packet(rng),
        })
        .collect()
}

fn refs(packets: &[(Vec<u8>, u32)]) -> Vec<PacketRef<'_>> {
    packets.iter().map(|(p, w)| PacketRef::new(p, *w)).collect()
}

/// Every batch engine on `batch`, against `run` per packet.
fn check(v: &Validated, jits: &[JitFilter], batch: &[PacketRef<'_>], what: &dyn Fn() -> String) {
    let interp = Interpreter::new(v);
    let want: Vec<u32> = batch.iter().map(|p| interp.run(p.data(), p.wire_len())).collect();
    let accepted = want.iter().filter(|&&v| v != 0).count();
    // Stale values in the output vector must not survive.
    let mut got = vec![0xdead_beef; 3];
    assert_eq!(interp.run_batch(batch, &mut got), accepted, "interp count; {}", what());
    assert_eq!(got, want, "interp batch; {}", what());
    for group in [0, 1, 3, 64, 1000] {
        got.push(7);
        assert_eq!(interp.run_batch_grouped(batch, &mut got, group), accepted, "{}", what());
        assert_eq!(got, want, "interp batch in groups of {group}; {}", what());
    }
    for jit in jits {
        got.push(7);
        assert_eq!(jit.run_batch(batch, &mut got), accepted, "JIT count; {}", what());
        assert_eq!(got, want, "JIT batch; {}", what());
    }
    for f in [Filter::new(v), Filter::interpreter(v)] {
        assert_eq!(f.run_batch(batch, &mut got), accepted, "{}", what());
        assert_eq!(got, want, "Filter::run_batch ({}); {}", f.engine_name(), what());
    }
}

/// The tuned prefetch and a few others: none, one packet ahead, two lines, beyond any batch.
fn jits(v: &Validated) -> Vec<JitFilter> {
    let mut out = vec![JitFilter::compile(v).expect("compiles")];
    for (distance, lines) in [(0, 0), (1, 1), (4, 2), (5000, 1)] {
        out.push(JitFilter::compile_with_prefetch(v, Prefetch { distance, lines }).unwrap());
    }
    out
}

#[test]
fn random_programs_and_batches_match_runs_per_packet() {
    let mut rng = Rng::new(0xBA7C_0001);
    let mut runs = 0u64;
    for cfg in [GenConfig::libpcap(), GenConfig::linux(), GenConfig::anything()] {
        for _ in 0..600 {
            let prog = testgen::program(&mut rng, &cfg);
            let Ok(v) = validate(&prog, Mode::Libpcap) else { continue };
            let jits = jits(&v);
            for _ in 0..2 {
                let n = if rng.below(3) == 0 {
                    rng.below(200) as usize
                } else {
                    SIZES[rng.below(SIZES.len() as u64) as usize]
                };
                let pkts = packets(&mut rng, n);
                let batch = refs(&pkts);
                check(&v, &jits, &batch, &|| {
                    format!("{n} packets\n{}", sift_insn::asm::disassemble(&prog))
                });
                runs += n as u64;
            }
        }
    }
    eprintln!("{runs} packets in batches, 0 mismatches");
}

#[test]
fn every_batch_size_around_the_edges() {
    let mut rng = Rng::new(0xBA7C_0002);
    let src = "ldh [12]\njeq #0x800, v4, drop\nv4: ldb [23]\njeq #6, tcp, drop\n\
               tcp: ldxb 4*([14]&0xf)\nldh [x+16]\njgt #1023, drop, keep\n\
               keep: ld #len\nret a\ndrop: ret #0\n";
    let v = validate(&assemble(src).unwrap(), Mode::Libpcap).unwrap();
    let jits = jits(&v);
    let mut frame = [0u8; 60];
    frame[12] = 8;
    frame[14] = 0x45;
    frame[23] = 6;
    for n in SIZES.into_iter().chain(0..=70) {
        let mut pkts = packets(&mut rng, n);
        // Every third packet a TCP frame with a low port (accepted), some cut short.
        for (i, (p, w)) in pkts.iter_mut().enumerate().filter(|(i, _)| i % 3 == 0) {
            *p = frame[..60 - (i % 40)].to_vec();
            *w = 60;
        }
        let batch = refs(&pkts);
        check(&v, &jits, &batch, &|| format!("{n} packets"));
    }
}

/// A, X and M[] start at zero for every packet of a batch, not where the last one left them.
#[test]
fn each_packet_starts_from_a_clean_machine() {
    let programs = [
        // M[0] is 0 unless an earlier packet left its length there.
        "ld M[0]\njeq #0, fresh, stale\nfresh: ld #len\nst M[0]\nret #1\nstale: ret #2\n",
        "ldx M[15]\ntxa\njeq #0, fresh, stale\nfresh: ldx #len\nstx M[15]\nret #1\nstale: ret #2\n",
        // X is 0 on entry.
        "txa\njeq #0, fresh, stale\nfresh: ldx #len\nret #1\nstale: ret #2\n",
        // A is 0 on entry.
        "jeq #0, fresh, stale\nfresh: ld #len\nret #1\nstale: ret #2\n",
        "ret a\n",
    ];
    let pkts: Vec<(Vec<u8>, u32)> = (0..20).map(|i| (vec![i as u8; i], 100 + i as u32)).collect();
    let batch = refs(&pkts);
    for src in programs {
        let v = validate(&assemble(src).unwrap(), Mode::Libpcap).unwrap();
        check(&v, &jits(&v), &batch, &|| src.to_owned());
        let mut out = Vec::new();
        JitFilter::compile(&v).unwrap().run_batch(&batch, &mut out);
        assert!(out.iter().all(|&r| r <= 1), "{src}: {out:?}");
    }
}

#[test]
fn the_batch_function_is_emitted_apart_from_the_single_one() {
    let v = validate(&assemble("ldh [12]\nret a\n").unwrap(), Mode::Libpcap).unwrap();
    let jit = JitFilter::compile(&v).unwrap();
    assert!(!jit.code().is_empty() && !jit.batch_code().is_empty());
    assert_ne!(jit.code(), jit.batch_code());
    let bytes = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x86, 0xdd];
    assert_eq!(jit.run(&bytes, 14), 0x86dd);
    let mut out = Vec::new();
    assert_eq!(
        jit.run_batch(&[PacketRef::new(&bytes, 14), PacketRef::new(&bytes[..13], 14)], &mut out),
        1
    );
    assert_eq!(out, [0x86dd, 0]);
}
