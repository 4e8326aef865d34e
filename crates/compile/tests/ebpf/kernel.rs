//! The lowered programs in the kernel: loaded with `BPF_PROG_LOAD` (the kernel's verifier
//! accepts every one, at every hook) and run with `BPF_PROG_TEST_RUN` (XDP and TC, repeat 1:
//! an XDP test run repeated costs 16 ms a call), against the classic program on sift's classic
//! VM, packet by packet. Skips when the kernel cannot be asked (not root), fails instead under
//! `SIFT_REQUIRE_ORACLES=1`.

use std::os::fd::{AsRawFd, OwnedFd};

use crate::{Filter, base_frames, classic, corpus_filters, generated_count, generated_filters};
use sift_compile::ebpf::{self, EbpfFilter, EbpfOptions, Hook};

/// Whether `bpf(2)` can be used here (else SKIP, or a failure under `SIFT_REQUIRE_ORACLES=1`).
pub fn available() -> bool {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing("kernel bpf(2)", "not root").unwrap_or(false);
    }
    match sift_sys::bpf::map_create(sift_ebpf::MapType::Array as u32, 4, 4, 1, 0) {
        Ok(_) => true,
        Err(e) if sift_sys::bpf::is_unavailable(&e) => {
            sift_testkit::oracle_missing("kernel bpf(2)", e).unwrap_or(false)
        }
        Err(e) => panic!("BPF_MAP_CREATE: {e}"),
    }
}

/// A lowered filter in the kernel, with its maps.
pub struct Loaded {
    /// The program.
    pub prog: OwnedFd,
    /// Its maps, in [`EbpfFilter::maps`]' order.
    pub maps: Vec<OwnedFd>,
}

/// Creates `f`'s maps, puts their descriptors in its map references and loads it; a refusal
/// comes with the verifier log's tail.
pub fn load(f: &EbpfFilter) -> Result<Loaded, String> {
    let mut maps = Vec::new();
    for m in &f.maps {
        let fd = sift_sys::bpf::map_create(
            m.map_type as u32,
            m.key_size,
            m.value_size,
            m.max_entries,
            m.flags,
        )
        .map_err(|e| format!("map {}: {e}", m.name))?;
        maps.push(fd);
    }
    let fds: Vec<i32> = maps.iter().map(|m| m.as_raw_fd()).collect();
    let bytes = f.bytes_with_map_fds(&fds);
    let ty = f.prog_type().number();
    match sift_sys::bpf::prog_load(ty, &bytes, None) {
        Ok(prog) => Ok(Loaded { prog, maps }),
        Err(e) => {
            let mut log = vec![0u8; 1 << 20];
            let _ = sift_sys::bpf::prog_load(ty, &bytes, Some(&mut log));
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let log = String::from_utf8_lossy(&log[..end]);
            let tail: Vec<&str> = log.lines().rev().take(6).collect();
            Err(format!("{e}: {}", tail.join(" / ")))
        }
    }
}

/// One test run of `pkt` (repeat 1); `None` when the test run refuses the packet (`EINVAL`:
/// an skb test run wants whole IPv4/IPv6 headers).
pub fn run(l: &Loaded, pkt: &[u8]) -> Option<u32> {
    match sift_sys::bpf::prog_test_run(&l.prog, pkt, &[], 1) {
        Ok(r) => Some(r.retval),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => None,
        Err(e) => panic!("BPF_PROG_TEST_RUN: {e}"),
    }
}

#[derive(Default)]
struct Tally {
    filters: usize,
    packets: usize,
    runs: [usize; 2],
    refused: usize,
    loaded: [usize; 3],
    mismatches: Vec<String>,
}

fn check(f: &Filter, packets: &[Vec<u8>], t: &mut Tally) {
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    t.filters += 1;
    t.packets += packets.len();
    for (h, hook) in [Hook::Xdp, Hook::Tc, Hook::SocketFilter].into_iter().enumerate() {
        let lowered = ebpf::lower(&f.compiled, &EbpfOptions::new(hook).raw())
            .unwrap_or_else(|e| panic!("`{}` {hook:?}: {e}", f.expr));
        let loaded = match load(&lowered) {
            Ok(l) => l,
            Err(e) => {
                t.mismatches.push(format!(
                    "`{}` {hook:?}: the kernel refuses: {e}\n{}",
                    f.expr,
                    lowered.listing()
                ));
                continue;
            }
        };
        t.loaded[h] += 1;
        // A socket filter's test run starts at the network header: loaded only.
        if hook == Hook::SocketFilter {
            continue;
        }
        for p in packets {
            let Some(got) = run(&loaded, p) else {
                t.refused += 1;
                continue;
            };
            t.runs[h] += 1;
            let want = classic(&reference, p);
            if got != want && t.mismatches.len() < 20 {
                t.mismatches.push(format!(
                    "`{}` {hook:?}: the kernel returns {got} where classic gives {want} on \
                     {p:02x?}\n{}",
                    f.expr,
                    lowered.listing()
                ));
            }
        }
    }
}

fn report(what: &str, t: &Tally, refused_exprs: usize) {
    println!(
        "kernel, {what}: {} filters ({refused_exprs} expressions did not compile), loaded \
         {} XDP, {} TC, {} socket-filter programs; {} packets; {} XDP and {} TC test runs \
         ({} packets a TC test run refuses); {} mismatches",
        t.filters,
        t.loaded[0],
        t.loaded[1],
        t.loaded[2],
        t.packets,
        t.runs[0],
        t.runs[1],
        t.refused,
        t.mismatches.len()
    );
}

#[test]
fn corpus_filters_run_in_the_kernel_as_classic() {
    if !available() {
        return;
    }
    let resolver = crate::resolver();
    let Some((filters, refused)) = corpus_filters(&resolver) else { return };
    let frames = base_frames(0x5eed, 150);
    let mut t = Tally::default();
    for (i, f) in filters.iter().enumerate() {
        check(f, &crate::packets_for(f, &frames, i as u64 + 3, 24), &mut t);
    }
    report("corpus", &t, refused);
    assert!(t.filters >= 480 && t.runs[0] > 500_000, "{} filters", t.filters);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}

#[test]
fn generated_filters_run_in_the_kernel_as_classic() {
    if !available() {
        return;
    }
    let resolver = crate::resolver();
    let (filters, refused) = generated_filters(&resolver, 0x6e4e, generated_count(2500));
    let frames = base_frames(0xf4a3, 100);
    let mut t = Tally::default();
    for (i, f) in filters.iter().enumerate() {
        check(f, &crate::packets_for(f, &frames, i as u64 + 11, 16), &mut t);
    }
    report("generated", &t, refused);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}
