//! The C corpus's shared test support (`#[path]`-included by `sift-ebpf-elf`'s corpus test and
//! `sift-ebpf-jit`'s verified-mode test): compiling `tests/c/NAME.c` with clang, the packets
//! that reach the corpus's branches, and the entries its maps start with.
#![allow(dead_code)] // Each test uses part of it.

use std::path::{Path, PathBuf};

use sift_testkit::Rng;

/// `crates/ebpf-elf/tests/c`.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ebpf-elf/tests/c")
}

/// The directory holding `asm/types.h` for this machine (`/usr/include/x86_64-linux-gnu`):
/// `linux/types.h` includes it, and `-target bpf` does not know the host's multiarch path.
pub fn multiarch_include() -> Option<PathBuf> {
    std::fs::read_dir("/usr/include")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("asm/types.h").is_file())
}

/// Compiles `tests/c/NAME.c` into `dir`; `None` (SKIP) without clang.
pub fn compile(name: &str, dir: &Path) -> Option<Vec<u8>> {
    let clang = sift_testkit::tool("clang")?;
    let out = dir.join(format!("{name}.o"));
    let mut cmd = std::process::Command::new(clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-c"]).arg(corpus_dir().join(format!("{name}.c")));
    if let Some(inc) = multiarch_include() {
        cmd.arg("-I").arg(inc);
    }
    let status = cmd.arg("-o").arg(&out).status().expect("run clang");
    assert!(status.success(), "clang failed on {name}.c");
    Some(std::fs::read(&out).unwrap())
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Packets of every kind the corpus tells apart: IPv4 TCP/UDP/ICMP (to a few addresses the
/// maps name), IPv6, VLAN-tagged IPv4, ARP, Ethernet with a truncated IP header, long ones.
pub fn packets(n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    (0..n)
        .map(|_| {
            let mut p = vec![0x02, 0, 0, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0xbb];
            let kind = rng.below(10);
            let ipv4 = |rng: &mut Rng, p: &mut Vec<u8>| {
                let proto = [6u8, 17, 1, 47][rng.below(4) as usize];
                let payload =
                    if rng.below(8) == 0 { 1000 + rng.below(500) } else { rng.below(120) };
                let total = 20 + payload as usize;
                let src = [[192, 168, 1, rng.below(4) as u8], [172, 16, 0, 5], [10, 9, 9, 9]]
                    [rng.below(3) as usize];
                let dst = [10, 0, 0, 1 + rng.below(4) as u8];
                let mut h =
                    vec![0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0, 64, proto, 0, 0];
                h.extend_from_slice(&src);
                h.extend_from_slice(&dst);
                let c = ipv4_checksum(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
                p.extend_from_slice(&h);
                p.extend((0..payload).map(|_| rng.next() as u8));
            };
            match kind {
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

/// Entries each object's maps start with: (map name, key, value).
pub fn fills(name: &str) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
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
    match name {
        "xdp_lb" => vec![
            ("backends", vec![10, 0, 0, 1], backend([10, 1, 0, 1], 1, 0)),
            ("backends", vec![10, 0, 0, 2], backend([10, 1, 0, 2], 2, 1)),
        ],
        "tc_counters" => vec![("tc_blocked", vec![10, 0, 0, 3], vec![1, 0, 0, 0])],
        "xdp_firewall" => vec![
            ("blocked", lpm(24, [192, 168, 1, 0]), vec![1, 0, 0, 0]),
            ("blocked", lpm(32, [172, 16, 0, 5]), vec![2, 0, 0, 0]),
        ],
        _ => Vec::new(),
    }
}
