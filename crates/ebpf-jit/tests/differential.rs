//! The JIT against the interpreter on random programs, two families, each case from its own
//! seed, on every core:
//!
//! * **Whole-ISA programs** (`support/random_programs.rs`), no verifier: `Vm::run` on random
//!   input memory, the JIT checked and with constant blinding: the same `r0` or the same
//!   located fault, and the same memory afterwards.
//! * **Verifier-clean programs** from `sift_testkit::ebpf_random`, the generator of the kernel
//!   differential (every instruction class, bpf-to-bpf calls, map helper calls on an array and
//!   a hash map, XDP packet accesses), run as XDP on a random packet: the same `r0`, the packet
//!   as the program left it (its epilogue stores every scalar register there) and both maps'
//!   entries — on the checked JIT and on verified mode (`compile_verified`: each program must
//!   be accepted by sift's verifier, and its proven accesses run unchecked).
//!
//! `SIFT_JIT_DIFF_PROGRAMS=N` sets how many programs of each family (default 100,000, what CI
//! runs); issue 18's ten million:
//! `SIFT_JIT_DIFF_PROGRAMS=10000000 cargo test --release -p sift-ebpf-jit --test differential`.
//! `SIFT_JIT_DIFF_DUMP=DIR` writes a failing whole-ISA program to `DIR/fail.txt`.

#[path = "support/random_programs.rs"]
mod random_programs;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sift_ebpf::EbpfInsn;
use sift_ebpf::ProgType;
use sift_ebpf_jit::{JitOptions, jit, jit_verified};
use sift_ebpf_vm::{Fault, Helpers, Map, RunError, Vm, register_map_helpers, test_helpers};
use sift_testkit::Rng;
use sift_testkit::ebpf_random::{self, map_specs};

/// The budget of both engines. The JIT charges a loop's span at each back edge and nothing
/// elsewhere, the interpreter each instruction: with loops of a few iterations far below it,
/// a run ends under both or exhausts it under both.
const BUDGET: u64 = 100_000;

fn count() -> u64 {
    std::env::var("SIFT_JIT_DIFF_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000)
}

/// Runs `case(rng, index)` for `n` cases on every core, case `i` from a seed of its own (so a
/// failure names a case that reruns alone); panics with the first failure.
fn parallel(n: u64, salt: u64, case: impl Fn(&mut Rng, u64) -> Result<(), String> + Sync) {
    let next = AtomicU64::new(0);
    let failure = Mutex::new(None::<String>);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || failure.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                        break;
                    }
                    let mut rng = Rng((salt ^ (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
                    if let Err(e) = case(&mut rng, i) {
                        failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        panic!("{e}");
    }
}

fn run(vm: &mut Vm, mem: &[u8]) -> (Result<u64, RunError>, Vec<u8>) {
    let mut m = mem.to_vec();
    let r = vm.run(&mut m);
    (r, m)
}

fn same(a: &Result<u64, RunError>, b: &Result<u64, RunError>) -> bool {
    match (a, b) {
        (Err(x), Err(y)) if matches!(x.fault, Fault::Budget(_)) => {
            matches!(y.fault, Fault::Budget(_))
        }
        _ => a == b,
    }
}

fn listing(p: &[EbpfInsn]) -> String {
    p.iter().enumerate().map(|(k, i)| format!("{k}: {i:?}\n")).collect()
}

#[test]
fn jit_equals_interpreter_on_random_programs() {
    let n = count();
    let loaded = AtomicU64::new(0);
    let outcomes = Mutex::new(std::collections::BTreeMap::new());
    parallel(n, 0x6a17_d1ff, |rng, case| {
        let p = random_programs::program(rng);
        let mut mem = vec![0u8; 64];
        mem.iter_mut().for_each(|b| *b = rng.next() as u8);
        let Ok(mut interp) = Vm::load(&p, test_helpers()) else {
            return Ok(());
        };
        loaded.fetch_add(1, Ordering::Relaxed);
        interp.set_budget(BUDGET);
        let (want, want_mem) = run(&mut interp, &mem);
        let kind = match &want {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("{:?}", std::mem::discriminant(&e.fault)),
        };
        *outcomes.lock().unwrap().entry(kind).or_insert(0u64) += 1;
        for opts in [JitOptions::default(), JitOptions { blinding: true, ..JitOptions::default() }]
        {
            let mut vm = Vm::load(&p, test_helpers()).map_err(|e| e.to_string())?;
            vm.set_budget(BUDGET);
            jit(&mut vm, &opts).map_err(|e| format!("case {case}: JIT refused: {e}"))?;
            let (got, got_mem) = run(&mut vm, &mem);
            let budget = matches!(&want, Err(e) if matches!(e.fault, Fault::Budget(_)));
            if !same(&want, &got) || (!budget && want_mem != got_mem) {
                if let Ok(dir) = std::env::var("SIFT_JIT_DIFF_DUMP") {
                    let text: String = p
                        .iter()
                        .map(|i| format!("{} {} {} {} {}\n", i.code, i.dst, i.src, i.off, i.imm))
                        .collect();
                    std::fs::write(format!("{dir}/fail.txt"), text).map_err(|e| e.to_string())?;
                }
                return Err(format!(
                    "case {case} ({opts:?}): interpreter {want:?}, JIT {got:?}\nmemory {}\nprogram:\n{}",
                    if want_mem == got_mem { "same" } else { "differs" },
                    listing(&p)
                ));
            }
        }
        Ok(())
    });
    let (loaded, outcomes) = (loaded.into_inner(), outcomes.into_inner().unwrap());
    println!("{loaded} programs; outcomes {outcomes:?}");
    assert!(outcomes.get("ok").is_some_and(|&k| k * 3 > loaded), "too few programs exit");
    assert!(loaded * 10 > n * 9, "only {loaded} of {n} programs loaded");
}

/// Which engine runs a verifier-clean program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Interpreter,
    Checked,
    Verified,
}

/// A VM with the generator's maps and the map helpers, on `engine`.
fn map_vm(prog: &[EbpfInsn], engine: Engine) -> Result<Vm, String> {
    let maps: Result<Vec<Map>, String> =
        map_specs().iter().map(|m| Map::from_spec(m).map_err(|e| e.to_string())).collect();
    let mut helpers = Helpers::new();
    register_map_helpers(&mut helpers);
    let mut vm = Vm::load_with_maps(prog, helpers, maps?).map_err(|e| e.to_string())?;
    match engine {
        Engine::Interpreter => {}
        Engine::Checked => {
            jit(&mut vm, &JitOptions::default()).map_err(|e| format!("JIT refused: {e}"))?
        }
        Engine::Verified => {
            let verifier = sift_ebpf_verifier::Options { privileged: true };
            jit_verified(&mut vm, ProgType::Xdp, &verifier, &JitOptions::default())
                .map_err(|e| format!("verified mode refused: {e}"))?
        }
    }
    Ok(vm)
}

/// What an XDP run leaves: the result, the packet, each map's entries.
type XdpOutcome = (Result<u64, RunError>, Vec<u8>, Vec<Vec<(Vec<u8>, Vec<u8>)>>);

#[test]
fn jit_equals_interpreter_on_verifier_clean_programs_with_maps() {
    let n = count();
    let calls = AtomicU64::new(0);
    parallel(n, 0x18_6d_a9, |rng, case| {
        let p = ebpf_random::program(rng);
        let len = ebpf_random::PROVEN as usize + rng.below(64) as usize;
        let packet: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let outcome = |engine: Engine| -> Result<XdpOutcome, String> {
            let mut vm = map_vm(&p, engine)?;
            let mut bytes = packet.clone();
            let result = vm.run_xdp(&mut bytes, 1);
            // `entries` lists keys in ascending order.
            let maps = vm.maps().iter().map(Map::entries).collect();
            Ok((result, bytes, maps))
        };
        let want = outcome(Engine::Interpreter)?;
        if want.0.is_err() {
            return Err(format!(
                "case {case}: the interpreter faulted: {:?}\n{}",
                want.0,
                listing(&p)
            ));
        }
        if p.iter().any(|i| i.code == 0x85) {
            calls.fetch_add(1, Ordering::Relaxed);
        }
        for engine in [Engine::Checked, Engine::Verified] {
            let got = outcome(engine).map_err(|e| format!("case {case}: {e}\n{}", listing(&p)))?;
            if want != got {
                return Err(format!(
                    "case {case}: interpreter {want:?}\n{engine:?} JIT {got:?}\nprogram:\n{}",
                    listing(&p)
                ));
            }
        }
        Ok(())
    });
    println!(
        "{n} verifier-clean programs ({} with calls): checked and verified JIT = interpreter",
        calls.into_inner()
    );
}
