//! `sift ebpf run PROG.o` over the samples: programs of `sift-ebpf-elf`'s C corpus
//! (`crates/ebpf-elf/tests/c`), compiled with clang into a temporary directory (no object is
//! committed; without clang the tests print SKIP).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SIFT: &str = env!("CARGO_BIN_EXE_sift");

fn sample(name: &str) -> String {
    format!("{}/../../samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `clang -O2 -g -target bpf -c crates/ebpf-elf/tests/c/NAME.c` into `dir`.
fn compile(name: &str, dir: &Path) -> Option<PathBuf> {
    let clang = sift_testkit::tool("clang")?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../ebpf-elf/tests/c/{name}.c"));
    let out = dir.join(format!("{name}.o"));
    let mut cmd = Command::new(clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-c"]).arg(src).arg("-o").arg(&out);
    // linux/types.h includes asm/types.h, which lives in the multiarch directory.
    if let Some(inc) = std::fs::read_dir("/usr/include")
        .ok()
        .and_then(|d| d.flatten().map(|e| e.path()).find(|p| p.join("asm/types.h").is_file()))
    {
        cmd.arg("-I").arg(inc);
    }
    assert!(cmd.status().expect("run clang").success(), "clang failed on {name}.c");
    Some(out)
}

fn sift(args: &[&str]) -> Output {
    Command::new(SIFT).args(args).output().expect("run sift")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn xdp_object_counts_protocols_in_its_map() {
    let dir = tempfile::tempdir().unwrap();
    let Some(obj) = compile("xdp_count", dir.path()) else { return };
    let o = sift(&["ebpf", "run", obj.to_str().unwrap(), "-r", &sample("mixed.pcapng"), "--maps"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["0 XDP_PASS", "1 XDP_PASS"]);
    assert_eq!(lines.iter().filter(|l| l.ends_with(" XDP_PASS")).count(), 35);
    // tcpdump counts ICMP 2, TCP 12 + 17 (IPv4 + IPv6), UDP 2 (IPv6), ICMPv6 2.
    let counted: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("map ") && !l.ends_with("=> 0000000000000000"))
        .collect();
    assert_eq!(
        counted,
        [
            "map 0 (proto_count): 01000000 => 0200000000000000",
            "map 0 (proto_count): 06000000 => 1d00000000000000",
            "map 0 (proto_count): 11000000 => 0200000000000000",
            "map 0 (proto_count): 3a000000 => 0200000000000000",
        ]
    );
    assert_eq!(lines.len(), 35 + 258);
    assert_eq!(text(&o.stderr), "35 packets: XDP_PASS 35\n");
}

#[test]
fn tc_and_socket_programs_and_sections() {
    let dir = tempfile::tempdir().unwrap();
    let Some(tc) = compile("tc_counters", dir.path()) else { return };
    let o = sift(&["ebpf", "run", tc.to_str().unwrap(), "-r", &sample("dns.pcap"), "--maps"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().filter(|l| l.ends_with(" TC_ACT_OK")).count(), 12);
    // Six IPv6 packets (key 0) and six IPv4 UDP ones (key 17), packets and bytes.
    assert!(
        out.contains("map 0 (tc_proto): 00000000 => 0600000000000000ce01000000000000\n"),
        "{out}"
    );
    assert!(
        out.contains("map 0 (tc_proto): 11000000 => 0600000000000000fe01000000000000\n"),
        "{out}"
    );
    assert_eq!(text(&o.stderr), "12 packets: TC_ACT_OK 12\n");

    let Some(calls) = compile("calls_global", dir.path()) else { return };
    let calls = calls.to_str().unwrap();
    // Two programs: the section must be chosen.
    let o = sift(&["ebpf", "run", calls, "-r", &sample("http.pcap")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).ends_with("several programs; choose one with its section: xdp (xdp_calls), socket (socket_calls)\n"),
        "{}",
        text(&o.stderr)
    );
    let o = sift(&[
        "ebpf",
        "run",
        calls,
        "--section",
        "socket",
        "-r",
        &sample("http.pcap"),
        "-c",
        "3",
        "--maps",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Every packet is kept, 64 bytes at most; .bss counts the packets, .data and .rodata keep
    // their initial values.
    assert_eq!(
        text(&o.stdout),
        "0 KEEP 64\n1 KEEP 64\n2 KEEP 64\n\
         map 0 (.data): 00000000 => e8030000\n\
         map 1 (.rodata): 00000000 => 0301040105090206\n\
         map 2 (.bss): 00000000 => 0300000000000000\n"
    );
    assert_eq!(text(&o.stderr), "3 packets: KEEP 3\n");
    let o = sift(&["ebpf", "run", calls, "--section", "nope", "-r", &sample("http.pcap")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr)
            .contains("no program nope (the object has: xdp (xdp_calls), socket (socket_calls))")
    );
}

#[test]
fn write_keeps_packets_as_the_program_left_them() {
    let dir = tempfile::tempdir().unwrap();
    let Some(obj) = compile("calls_global", dir.path()) else { return };
    let out = dir.path().join("out.pcap");
    let cap = sample("http.pcap");
    let o = sift(&[
        "ebpf",
        "run",
        obj.to_str().unwrap(),
        "--section",
        "xdp",
        "-r",
        &cap,
        "-w",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let read = |p: &str| {
        let mut r = sift_pcap::open(Path::new(p)).unwrap();
        let mut v = Vec::new();
        while let Some(p) = r.next_packet().unwrap() {
            v.push(p.data.to_vec());
        }
        v
    };
    let (before, after) = (read(&cap), read(out.to_str().unwrap()));
    assert_eq!(before.len(), after.len());
    // The program writes table[sum of the first 16 bytes & 7] into the first byte.
    let table = [3u8, 1, 4, 1, 5, 9, 2, 6];
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b[1..], a[1..]);
        let sum: u32 = b[..16].iter().map(|&x| u32::from(x)).sum();
        assert_eq!(a[0], table[(sum & 7) as usize]);
    }
}

#[test]
fn maps_the_vm_lacks_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let Some(obj) = compile("xdp_firewall", dir.path()) else { return };
    // The firewall's LPM trie runs; nothing in dns.pcap is blocked.
    let o = sift(&["ebpf", "run", obj.to_str().unwrap(), "-r", &sample("dns.pcap")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "12 packets: XDP_PASS 12\n");
    // With 198.51.100.0/24 in the trie, the six IPv4 packets from it are dropped and counted.
    let o = sift(&[
        "ebpf",
        "run",
        obj.to_str().unwrap(),
        "-r",
        &sample("dns.pcap"),
        "--map-update",
        "blocked:18000000c6336400:01000000",
        "--maps",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "12 packets: XDP_DROP 6, XDP_PASS 6\n");
    assert!(text(&o.stdout).contains("map 1 (drops): 01000000 => 0600000000000000\n"));
    let o = sift(&[
        "ebpf",
        "run",
        obj.to_str().unwrap(),
        "-r",
        &sample("dns.pcap"),
        "--map-update",
        "blocked:1800:01000000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "sift: --map-update blocked:1800:01000000: map `blocked` has 8-byte keys and 4-byte values\n"
    );
    let prog = dir.path().join("pass.asm");
    std::fs::write(&prog, "mov %r0, 2\nexit\n").unwrap();
    let run_with = |map: &str| {
        sift(&["ebpf", "run", prog.to_str().unwrap(), "-r", &sample("dns.pcap"), "--map", map])
    };
    let o = run_with("cpumap:4:4:4");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "sift: --map cpumap:4:4:4: map `map 0`: type CPUMAP is not supported by sift's VM\n"
    );
    let o = run_with("lpm_trie:8:4:16:1");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // --map is for programs without their own maps.
    let o = sift(&[
        "ebpf",
        "run",
        obj.to_str().unwrap(),
        "-r",
        &sample("dns.pcap"),
        "--map",
        "hash:4:4:4",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("an ELF object declares its maps"));
}

/// `--engine jit` (the default) and `--engine interp` print the same lines, leave the same
/// packets (`-w`) and the same maps, for every program of the C corpus over a capture of
/// every kind of traffic the samples have.
#[test]
fn jit_and_interpreter_agree_on_the_c_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let programs = [
        ("xdp_count", None),
        ("xdp_lb", None),
        ("xdp_firewall", None),
        ("tc_counters", None),
        ("ringbuf_log", None),
        ("calls_global", Some("xdp")),
        ("calls_global", Some("socket")),
    ];
    for (name, section) in programs {
        let Some(obj) = compile(name, dir.path()) else { return };
        for cap in ["mixed.pcapng", "dns.pcap", "http.pcap"] {
            let outcome = |engine: &str| {
                let out = dir.path().join(format!("{name}-{engine}.pcap"));
                let mut args = vec!["ebpf", "run", obj.to_str().unwrap(), "--maps"];
                args.extend(["--engine", engine, "-w", out.to_str().unwrap()]);
                let cap = sample(cap);
                args.extend(["-r", &cap]);
                if let Some(s) = section {
                    args.extend(["--section", s]);
                }
                let o = sift(&args);
                assert_eq!(o.status.code(), Some(0), "{name} {engine}: {}", text(&o.stderr));
                (text(&o.stdout), text(&o.stderr), std::fs::read(&out).unwrap())
            };
            assert_eq!(outcome("jit"), outcome("interp"), "{name} ({section:?}) over {cap}");
        }
    }
}
