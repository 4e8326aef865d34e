//! Verified mode on the C corpus (`crates/ebpf-elf/tests/c/*.c`, compiled with clang at test
//! time into a temporary directory): every program of every object sift's verifier accepts
//! (all but the `bad_*.c` ones) is compiled with `compile_verified` and run on generated
//! packets against the interpreter, with the same maps filled the same way: the same result,
//! the same output packet and, at the end, the same map contents.
//!
//! Oracle: clang; missing, the test prints SKIP (a failure under `SIFT_REQUIRE_ORACLES=1`).

use std::path::{Path, PathBuf};

use sift_ebpf_elf::{ObjProgram, Object, ProgType};
use sift_ebpf_jit::{JitOptions, jit_verified};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};
use sift_testkit::Rng;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ebpf-elf/tests/c")
}

/// Compiles `NAME.c` of the corpus into `dir` (with the host's multiarch include directory,
/// which `-target bpf` does not know).
fn compile(clang: &Path, name: &str, dir: &Path) -> Object {
    let out = dir.join(format!("{name}.o"));
    let mut cmd = std::process::Command::new(clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-c"]).arg(corpus_dir().join(format!("{name}.c")));
    let multiarch = std::fs::read_dir("/usr/include")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("asm/types.h").is_file());
    if let Some(inc) = multiarch {
        cmd.arg("-I").arg(inc);
    }
    let status = cmd.arg("-o").arg(&out).status().expect("run clang");
    assert!(status.success(), "clang failed on {name}.c");
    Object::parse(&std::fs::read(&out).unwrap()).unwrap_or_else(|e| panic!("{name}.o: {e}"))
}

/// Packets that reach the corpus's branches: IPv4 TCP/UDP/ICMP/GRE from and to the addresses
/// the maps name, VLAN-tagged IPv4, IPv6, ARP, truncated IPv4, long payloads.
fn packets(n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x5eed_0fc0_de01);
    (0..n)
        .map(|_| {
            let mut p = vec![0x02, 0, 0, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0xbb];
            let ipv4 = |rng: &mut Rng, p: &mut Vec<u8>| {
                let proto = [6u8, 17, 1, 47][rng.below(4) as usize];
                let payload =
                    if rng.below(8) == 0 { 1000 + rng.below(500) } else { rng.below(120) };
                let total = 20 + payload as usize;
                let src = [[192, 168, 1, rng.below(4) as u8], [172, 16, 0, 5], [10, 9, 9, 9]]
                    [rng.below(3) as usize];
                let dst = [10, 0, 0, 1 + rng.below(4) as u8];
                p.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0]);
                p.extend_from_slice(&[64, proto, 0, 0]);
                p.extend_from_slice(&src);
                p.extend_from_slice(&dst);
                p.extend((0..payload).map(|_| rng.next() as u8));
            };
            match rng.below(10) {
                0..=5 => {
                    p.extend_from_slice(&[0x08, 0x00]);
                    ipv4(&mut rng, &mut p);
                }
                6 => {
                    p.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
                    ipv4(&mut rng, &mut p);
                }
                7 => {
                    p.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 8, 17, 64]);
                    p.extend((0..40).map(|_| rng.next() as u8));
                }
                8 => {
                    p.extend_from_slice(&[0x08, 0x06]);
                    p.extend((0..28).map(|_| rng.next() as u8));
                }
                _ => {
                    p.extend_from_slice(&[0x08, 0x00]);
                    p.extend((0..rng.below(19)).map(|_| 0x45));
                }
            }
            p
        })
        .collect()
}

/// Entries some maps start with, so that lookups find something: (map name, key, value).
fn fills() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let backend = |addr: [u8; 4], mac_last: u8, index: u16| {
        let mut v = addr.to_vec();
        v.extend_from_slice(&[0x02, 0, 0, 0, 0, mac_last]);
        v.extend_from_slice(&index.to_le_bytes());
        v
    };
    let lpm = |len: u32, addr: [u8; 4]| {
        let mut k = len.to_le_bytes().to_vec();
        k.extend_from_slice(&addr);
        k
    };
    vec![
        ("backends", vec![10, 0, 0, 1], backend([10, 1, 0, 1], 1, 0)),
        ("backends", vec![10, 0, 0, 2], backend([10, 1, 0, 2], 2, 1)),
        ("tc_blocked", vec![10, 0, 0, 3], vec![1, 0, 0, 0]),
        ("blocked", lpm(24, [192, 168, 1, 0]), vec![1, 0, 0, 0]),
        ("blocked", lpm(32, [172, 16, 0, 5]), vec![2, 0, 0, 0]),
    ]
}

fn vm(object: &Object, p: &ObjProgram) -> Vm {
    let mut maps: Vec<Map> = object.maps.iter().map(|m| Map::from_spec(m).unwrap()).collect();
    for (name, k, v) in fills() {
        if let Some(i) = object.maps.iter().position(|m| m.name == name) {
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
    let Some(clang) = sift_testkit::tool("clang") else { return };
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
        let object = compile(&clang, name, dir.path());
        for p in &object.programs {
            let mut interp = vm(&object, p);
            let mut jit = vm(&object, p);
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
