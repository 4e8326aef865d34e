//! The C corpus (`tests/c/*.c`): XDP, TC and socket-filter programs written for sift, compiled
//! with `clang -O2 -g -target bpf -c` at test time into a temporary directory (no object is
//! committed), loaded with `sift-ebpf-elf`.
//!
//! * Every object parses to the programs and maps its source declares ([`EXPECTED`]).
//! * Every program runs in the VM and in the kernel (`BPF_PROG_TEST_RUN`) on the same
//!   generated packets, maps created and filled the same way: the same action, the same output
//!   packet and, at the end, the same map contents (a ring buffer's records are not compared:
//!   no system call reads them).
//! * sift's verifier accepts the programs the kernel accepts and refuses the `bad_*.c` ones it
//!   refuses.
//!
//! Oracles: clang compiles the corpus, the kernel runs it; either missing prints SKIP
//! (a failure under `SIFT_REQUIRE_ORACLES=1`).

use std::os::fd::OwnedFd;
use std::path::Path;

use sift_ebpf::{EbpfInsn, MapSpec, MapType};
use sift_ebpf_elf::{BPF_F_RDONLY_PROG, ObjProgram, Object, ProgType};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};

#[path = "support/c_corpus.rs"]
mod support;
use sift_testkit::Rng;
use support::{compile, corpus_dir, fills, multiarch_include, packets};

/// A program: section, function name, type.
type Prog = (&'static str, &'static str, ProgType);
/// A map: name, type, key size, value size, max entries, flags, initial bytes.
type MapRow = (&'static str, MapType, u32, u32, u32, u32, &'static [u8]);

/// What each source declares, and whether the VM can run it today.
const EXPECTED: &[(&str, &[Prog], &[MapRow], bool)] = &[
    (
        "xdp_count",
        &[("xdp", "xdp_count", ProgType::Xdp)],
        &[("proto_count", MapType::Array, 4, 8, 258, 0, b"")],
        true,
    ),
    (
        "xdp_lb",
        &[("xdp/lb", "xdp_lb", ProgType::Xdp)],
        &[
            ("backends", MapType::Hash, 4, 12, 64, 0, b""),
            ("hits", MapType::Array, 4, 8, 16, 0, b""),
        ],
        true,
    ),
    (
        "xdp_firewall",
        &[("xdp", "xdp_firewall", ProgType::Xdp)],
        &[
            ("blocked", MapType::LpmTrie, 8, 4, 1024, 1, b""),
            ("drops", MapType::Array, 4, 8, 32, 0, b""),
        ],
        true,
    ),
    (
        "tc_counters",
        &[("tc", "tc_count", ProgType::SchedCls)],
        &[
            ("tc_proto", MapType::Array, 4, 16, 256, 0, b""),
            ("tc_blocked", MapType::Hash, 4, 4, 128, 0, b""),
        ],
        true,
    ),
    (
        "ringbuf_log",
        &[("xdp", "xdp_log", ProgType::Xdp)],
        &[
            ("events", MapType::Ringbuf, 0, 0, 4096, 0, b""),
            (".rodata.str1.1", MapType::Array, 4, 5, 1, BPF_F_RDONLY_PROG, b"?ITU\0"),
        ],
        true,
    ),
    (
        "calls_global",
        &[("xdp", "xdp_calls", ProgType::Xdp), ("socket", "socket_calls", ProgType::SocketFilter)],
        &[
            (".data", MapType::Array, 4, 4, 1, 0, &[0xe8, 0x03, 0, 0]),
            (".rodata", MapType::Array, 4, 8, 1, BPF_F_RDONLY_PROG, &[3, 1, 4, 1, 5, 9, 2, 6]),
            (".bss", MapType::Array, 4, 8, 1, 0, b""),
        ],
        true,
    ),
];

fn load(name: &str, dir: &Path) -> Option<Object> {
    let bytes = compile(name, dir)?;
    Some(Object::parse(&bytes).unwrap_or_else(|e| panic!("{name}.o: {e}")))
}

#[test]
fn corpus_objects_parse_as_declared() {
    let mut sources: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".c").map(str::to_string))
        .collect();
    sources.sort();
    let mut listed: Vec<String> =
        EXPECTED.iter().map(|e| e.0).chain(REFUSED.iter().copied()).map(str::to_string).collect();
    listed.sort();
    assert_eq!(sources, listed, "every C source has its expectation (or is a refused one)");
    let dir = tempfile::tempdir().unwrap();
    for &(name, progs, maps, _) in EXPECTED {
        let Some(object) = load(name, dir.path()) else { return };
        let got: Vec<Prog> = object
            .programs
            .iter()
            .map(|p| {
                let e =
                    progs.iter().find(|e| e.1 == p.name).unwrap_or(&("?", "?", ProgType::Unspec));
                assert_eq!((p.section.as_str(), p.prog_type), (e.0, e.2), "{name}: {}", p.name);
                *e
            })
            .collect();
        assert_eq!(got, progs, "{name}: programs");
        let want: Vec<MapSpec> = maps
            .iter()
            .map(|&(n, map_type, key_size, value_size, max_entries, flags, initial)| MapSpec {
                name: n.to_string(),
                map_type,
                key_size,
                value_size,
                max_entries,
                flags,
                initial: initial.to_vec(),
            })
            .collect();
        assert_eq!(object.maps, want, "{name}: maps");
        assert!(object.license.contains("GPL"), "{name}: license {}", object.license);
        for p in &object.programs {
            // Linked programs decode, and every map reference names a map.
            sift_ebpf::decode_program(&p.insns).unwrap_or_else(|e| panic!("{name}: {e}"));
            for (_, m) in p.map_references() {
                assert!(m < object.maps.len(), "{name}: map {m}");
            }
        }
    }
}

#[test]
fn subprograms_are_linked_after_each_program() {
    let dir = tempfile::tempdir().unwrap();
    let Some(object) = load("calls_global", dir.path()) else { return };
    // xdp_calls calls too_long and sum_bytes; socket_calls calls too_long: each program carries
    // its callees after its own code, every call lands on a function's first instruction.
    for p in &object.programs {
        let defs: Vec<_> = object.maps.iter().map(|m| Map::from_spec(m).unwrap().def()).collect();
        let program = sift_ebpf_vm::Program::load_with_maps(&p.insns, |id| id < 4, &defs)
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let expected_functions = if p.name == "xdp_calls" { 3 } else { 2 };
        assert_eq!(program.functions().len(), expected_functions, "{}", p.name);
    }
}

/// The kernel side: maps created and filled, the program's `lddw`s patched with their fds.
struct Kernel {
    maps: Vec<(OwnedFd, MapSpec)>,
    prog: OwnedFd,
}

/// The object's maps created in the kernel (with their initial contents), and `p`'s code with
/// its map references pointing at them.
fn kernel_maps(object: &Object, p: &ObjProgram) -> (Vec<(OwnedFd, MapSpec)>, Vec<u8>) {
    use std::os::fd::AsRawFd;
    let mut maps = Vec::new();
    for m in &object.maps {
        let fd = sift_sys::bpf::map_create(
            m.map_type as u32,
            m.key_size,
            m.value_size,
            m.max_entries,
            m.flags,
        )
        .unwrap_or_else(|e| panic!("map {}: {e}", m.name));
        if !m.initial.is_empty() {
            sift_sys::bpf::map_update_elem(&fd, &0u32.to_le_bytes(), &m.initial, 0).unwrap();
        }
        maps.push((fd, m.clone()));
    }
    let mut insns: Vec<EbpfInsn> = p.insns.clone();
    for (slot, m) in p.map_references() {
        insns[slot].imm = maps[m].0.as_raw_fd();
    }
    (maps, insns.iter().flat_map(EbpfInsn::encode).collect())
}

fn kernel_load(object: &Object, p: &ObjProgram, fills: &[(&str, Vec<u8>, Vec<u8>)]) -> Kernel {
    let (maps, bytes) = kernel_maps(object, p);
    for (name, k, v) in fills {
        let (fd, _) = maps.iter().find(|(_, m)| m.name == *name).unwrap();
        sift_sys::bpf::map_update_elem(fd, k, v, 0).unwrap();
    }
    let prog = sift_sys::bpf::prog_load_licensed(p.prog_type.number(), &bytes, &object.license)
        .unwrap_or_else(|e| panic!("{}: kernel refused: {e}", p.name));
    Kernel { maps, prog }
}

/// Every (key, value) of a kernel map, keys ascending (arrays: every index).
fn kernel_entries(fd: &OwnedFd, m: &MapSpec) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut key: Option<Vec<u8>> = None;
    loop {
        let mut k = vec![0u8; m.key_size as usize];
        if sift_sys::bpf::map_get_next_key(fd, key.as_deref(), &mut k).is_err() {
            break;
        }
        let mut v = vec![0u8; m.value_size as usize];
        sift_sys::bpf::map_lookup_elem(fd, &k, &mut v).unwrap();
        out.push((k.clone(), v));
        key = Some(k);
    }
    out.sort();
    out
}

/// The VM side: maps from the object's specs, filled the same way.
fn vm_load(object: &Object, p: &ObjProgram, fills: &[(&str, Vec<u8>, Vec<u8>)]) -> Vm {
    let mut maps: Vec<Map> = object
        .maps
        .iter()
        .map(|m| Map::from_spec(m).unwrap_or_else(|e| panic!("map {}: {e}", m.name)))
        .collect();
    for (name, k, v) in fills {
        let i = object.maps.iter().position(|m| m.name == *name).unwrap();
        maps[i].update(k, v, 0).unwrap();
    }
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let mut vm =
        Vm::load_with_maps(&p.insns, helpers, maps).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    vm.env_mut().set_trace_output(std::io::sink());
    vm
}

fn kernel_available() -> bool {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing("kernel bpf(2)", "not root").unwrap_or(false);
    }
    match sift_sys::bpf::map_create(MapType::Array as u32, 4, 4, 1, 0) {
        Ok(_) => true,
        Err(e) if sift_sys::bpf::is_unavailable(&e) => {
            sift_testkit::oracle_missing("kernel bpf(2)", e).unwrap_or(false)
        }
        Err(e) => panic!("BPF_MAP_CREATE: {e}"),
    }
}

#[test]
fn corpus_runs_like_the_kernel() {
    if !kernel_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let packets = packets(2000);
    let mut summary = Vec::new();
    for &(name, _, _, vm_runs) in EXPECTED {
        let Some(object) = load(name, dir.path()) else { return };
        let fills = fills(name);
        for p in &object.programs {
            let kernel = kernel_load(&object, p, &fills);
            let in_vm = vm_runs;
            let mut vm = in_vm.then(|| vm_load(&object, p, &fills));
            let mut actions = std::collections::BTreeMap::new();
            let mut refused = 0;
            for (i, pkt) in packets.iter().enumerate() {
                let k_run =
                    sift_sys::bpf::prog_test_run_data(&kernel.prog, pkt, &[], pkt.len() + 256);
                let (k_ret, k_out) = match k_run {
                    Ok(r) => (r.retval, r.data),
                    // A test run of an skb refuses an IPv4 packet shorter than its header.
                    Err(e) if e.raw_os_error() == Some(22) && p.prog_type != ProgType::Xdp => {
                        refused += 1;
                        continue;
                    }
                    Err(e) => panic!("{name}/{}: packet {i}: {e}", p.name),
                };
                *actions.entry(k_ret).or_insert(0) += 1;
                let Some(vm) = vm.as_mut() else { continue };
                let mut v_out = pkt.clone();
                let v_ret = match p.prog_type {
                    ProgType::Xdp => vm.run_xdp(&mut v_out, 1),
                    ProgType::SchedCls => vm.run_tc(&mut v_out, &SkbInfo::default()),
                    // A kernel test run gives a socket filter the packet from its network
                    // header, and returns the link-layer header it pulled rewritten (not
                    // compared: the program cannot touch it).
                    _ => vm.run_socket_filter(&mut v_out[14..], &SkbInfo::default()),
                }
                .unwrap_or_else(|e| panic!("{name}/{}: packet {i}: {e}", p.name));
                assert_eq!(v_ret, u64::from(k_ret), "{name}/{}: packet {i}: action", p.name);
                let from = if p.prog_type == ProgType::SocketFilter { 14 } else { 0 };
                assert_eq!(
                    v_out[from..],
                    k_out[from..],
                    "{name}/{}: packet {i}: output packet",
                    p.name
                );
            }
            if let Some(vm) = &vm {
                for (m, (fd, spec)) in kernel.maps.iter().enumerate() {
                    assert_eq!(
                        vm.maps()[m].entries(),
                        kernel_entries(fd, spec),
                        "{name}/{}: map {}",
                        p.name,
                        spec.name
                    );
                }
            }
            let how = if in_vm { "VM = kernel" } else { "kernel only for now" };
            let actions = if actions.len() > 6 {
                format!("{} distinct return values", actions.len())
            } else {
                format!("{actions:?}")
            };
            summary.push(format!(
                "{name}/{}: {how}, actions {actions}, {refused} packets the kernel's test run refuses",
                p.name
            ));
        }
    }
    println!("{} packets each:\n{}", packets.len(), summary.join("\n"));
    // Every program does something else than passing on some packet, or counts: the packets
    // reach their branches.
    assert!(summary.iter().any(|s| s.contains("xdp_lb") && s.contains("3: ")), "{summary:?}");
    assert!(summary.iter().any(|s| s.contains("xdp_firewall") && s.contains("1: ")), "{summary:?}");
    assert!(summary.iter().any(|s| s.contains("tc_count") && s.contains("2: ")), "{summary:?}");
}

/// Compiles C source text (with the corpus's header) into `dir`.
fn compile_text(name: &str, source: &str, dir: &Path) -> Option<Vec<u8>> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, format!("#include \"{}/sift_bpf.h\"\n{source}", corpus_dir().display()))
        .unwrap();
    let clang = sift_testkit::tool("clang")?;
    let out = dir.join(format!("{name}.o"));
    let mut cmd = std::process::Command::new(clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-c"]).arg(&c);
    if let Some(inc) = multiarch_include() {
        cmd.arg("-I").arg(inc);
    }
    assert!(cmd.arg("-o").arg(&out).status().unwrap().success(), "clang failed on {name}");
    Some(std::fs::read(&out).unwrap())
}

#[test]
fn unsupported_objects_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "kprobe",
            "SEC(\"kprobe/do_sys_open\") int probe(void *ctx) { return 0; }",
            "section kprobe/do_sys_open: unknown program type (sift knows xdp, xdp/…, tc, tc/…, classifier, socket, socket/…)",
        ),
        (
            "core",
            "struct pair { int a; int b; } __attribute__((preserve_access_index));\n\
             SEC(\"xdp\") int f(struct xdp_md *ctx) {\n\
               struct pair *p = (void *)(long)ctx->data;\n\
               return p->b;\n\
             }",
            "CO-RE relocation not supported yet: section xdp, instruction 1: field byte offset of pair (access 0:1)",
        ),
        (
            "ksym",
            "extern int LINUX_KERNEL_VERSION __attribute__((section(\".kconfig\")));\n\
             SEC(\"xdp\") int f(struct xdp_md *ctx) { return LINUX_KERNEL_VERSION; }",
            "section xdp, instruction 0: extern LINUX_KERNEL_VERSION (kconfig, ksym) not supported yet",
        ),
        (
            "fnptr",
            "static __noinline int g(int x) { return x + 1; }\n\
             SEC(\"xdp\") int f(struct xdp_md *ctx) { int (*volatile p)(int) = g; return (long)p; }",
            "address of function",
        ),
    ];
    for (name, source, expected) in cases {
        let Some(bytes) = compile_text(name, source, dir.path()) else { return };
        let e = Object::parse(&bytes).unwrap_err().to_string();
        assert!(e.contains(expected), "{name}: {e}");
    }
}

#[test]
fn pseudo_lddw_without_relocation_is_refused() {
    // Found by the fuzz target: an `lddw` whose src_reg says "map" with no relocation to say
    // which map named an index past the object's maps.
    let dir = tempfile::tempdir().unwrap();
    let source = "SEC(\"xdp\") int f(struct xdp_md *c) {\n\
                  volatile long x = 0x1122334455667788; return x != 0; }";
    let Some(mut bytes) = compile_text("lddw", source, dir.path()) else { return };
    assert!(Object::parse(&bytes).is_ok());
    let at = bytes
        .windows(8)
        .position(|w| w[0] == 0x18 && w[4..] == [0x88, 0x77, 0x66, 0x55])
        .expect("the lddw");
    bytes[at + 1] |= 0x10;
    assert_eq!(
        Object::parse(&bytes).unwrap_err().to_string(),
        "section xdp, instruction 0: lddw with src_reg 1 and no relocation"
    );
}

#[test]
fn damaged_objects_are_refused_without_panics() {
    // Every prefix of a corpus object, and the object with bytes overwritten one at a time:
    // each parses or is refused (the fuzz target `ebpf_elf` explores further).
    let dir = tempfile::tempdir().unwrap();
    let Some(bytes) = compile("calls_global", dir.path()) else { return };
    let mut refused = 0;
    for len in 0..bytes.len() {
        refused += usize::from(Object::parse(&bytes[..len]).is_err());
    }
    assert!(refused > bytes.len() / 2, "{refused} of {} prefixes refused", bytes.len());
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(b.len() as u64) as usize;
            b[at] = rng.next() as u8;
        }
        let _ = Object::parse(&b);
    }
}

/// C programs the kernel's verifier refuses (`tests/c/bad_*.c`), each for one rule.
const REFUSED: &[&str] =
    &["bad_no_bounds", "bad_off_by_one", "bad_null_value", "bad_ctx_write", "bad_socket_direct"];

/// The kernel's verdict on a program (maps created, `lddw`s patched): `Err` with the last line
/// of the verifier's log on a refusal.
fn kernel_verdict(object: &Object, p: &ObjProgram) -> Result<(), String> {
    let (_maps, bytes) = kernel_maps(object, p);
    let mut log = vec![0u8; 1 << 20];
    match sift_sys::bpf::prog_load(p.prog_type.number(), &bytes, Some(&mut log)) {
        Ok(_) => Ok(()),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let log = String::from_utf8_lossy(&log[..end]);
            let why = log.lines().rev().find(|l| !l.starts_with("processed ")).unwrap_or("");
            Err(format!("{e}: {why}"))
        }
    }
}

/// sift's verifier (as for root, as the kernel here) accepts the corpus programs the kernel
/// accepts and refuses the ones it refuses.
#[test]
fn verifier_agrees_with_the_kernel_on_the_corpus() {
    use sift_ebpf_verifier::{Options, verify_with};
    if !kernel_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let names = EXPECTED.iter().map(|e| e.0).chain(REFUSED.iter().copied());
    let (mut accepted, mut refused) = (0, 0);
    let mut report = Vec::new();
    for name in names {
        let Some(object) = load(name, dir.path()) else { return };
        for p in &object.programs {
            let kernel = kernel_verdict(&object, p);
            let ours =
                verify_with(&p.insns, p.prog_type, &object.maps, Options { privileged: true });
            match (&kernel, &ours) {
                (Ok(()), Ok(_)) => accepted += 1,
                (Err(k), Err(s)) => {
                    refused += 1;
                    report.push(format!("{name}/{}: kernel {k}; sift {s}", p.name));
                }
                _ => panic!("{name}/{}: kernel {kernel:?}, sift {ours:?}", p.name),
            }
            assert_eq!(name.starts_with("bad_"), kernel.is_err(), "{name}: {kernel:?}");
        }
    }
    println!("{accepted} accepted by both, {refused} refused by both:\n{}", report.join("\n"));
    assert_eq!(refused, REFUSED.len());
}
