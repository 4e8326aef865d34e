//! Verified mode on the C corpus (`crates/ebpf-elf/tests/c/*.c`, compiled with clang at test
//! time into a temporary directory): every program of every object sift's verifier accepts
//! (all but the `bad_*.c` ones) is compiled with `compile_verified` and run on generated
//! packets against the interpreter, with the same maps filled the same way: the same result,
//! the same output packet and, at the end, the same map contents.
//!
//! Oracle: clang; missing, the test prints SKIP (a failure under `SIFT_REQUIRE_ORACLES=1`).

use sift_ebpf_elf::{ObjProgram, Object, ProgType};
use sift_ebpf_jit::{JitOptions, jit_verified};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};

#[path = "../../ebpf-elf/tests/support/c_corpus.rs"]
mod support;
use support::{compile, corpus_dir, fills, packets};

fn vm(name: &str, object: &Object, p: &ObjProgram) -> Vm {
    let mut maps: Vec<Map> = object.maps.iter().map(|m| Map::from_spec(m).unwrap()).collect();
    for (map, k, v) in fills(name) {
        if let Some(i) = object.maps.iter().position(|m| m.name == map) {
            maps[i].update(&k, &v, 0).unwrap();
        }
    }
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let mut vm = Vm::load_with_maps(&p.insns, helpers, maps).unwrap();
    vm.env_mut().set_trace_output(std::io::sink());
    vm
}

fn run(vm: &mut Vm, prog: ProgType, pkt: &[u8]) -> (u64, Vec<u8>) {
    let mut out = pkt.to_vec();
    let r = match prog {
        ProgType::Xdp => vm.run_xdp(&mut out, 1),
        ProgType::SchedCls => vm.run_tc(&mut out, &SkbInfo::default()),
        _ => vm.run_socket_filter(&mut out, &SkbInfo::default()),
    };
    (r.unwrap_or_else(|e| panic!("{e}")), out)
}

#[test]
fn verified_mode_runs_the_c_corpus_like_the_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".c").map(str::to_string))
        .filter(|n| !n.starts_with("bad_"))
        .collect();
    names.sort();
    let packets = packets(1000);
    // As the kernel loads them (root: pointer arithmetic between pointers is allowed).
    let verifier = sift_ebpf_verifier::Options { privileged: true };
    let mut verified = Vec::new();
    for name in &names {
        let Some(elf) = compile(name, dir.path()) else { return };
        let object = Object::parse(&elf).unwrap_or_else(|e| panic!("{name}.o: {e}"));
        for p in &object.programs {
            let mut interp = vm(name, &object, p);
            let mut jit = vm(name, &object, p);
            jit_verified(&mut jit, p.prog_type, &verifier, &JitOptions::default())
                .unwrap_or_else(|e| panic!("{name}/{}: {e}", p.name));
            for (i, pkt) in packets.iter().enumerate() {
                let want = run(&mut interp, p.prog_type, pkt);
                let got = run(&mut jit, p.prog_type, pkt);
                assert_eq!(want, got, "{name}/{}: packet {i}", p.name);
            }
            for (m, (a, b)) in interp.maps().iter().zip(jit.maps()).enumerate() {
                assert_eq!(a.entries(), b.entries(), "{name}/{}: map {m}", p.name);
            }
            verified.push(format!("{name}/{}", p.name));
        }
    }
    println!("{} packets each, verified JIT = interpreter: {verified:?}", packets.len());
    assert!(verified.len() >= 6, "{verified:?}");
}
