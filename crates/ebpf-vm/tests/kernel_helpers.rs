//! Maps and helpers against the Linux kernel: hand-written programs (`tests/kernel/*.case`:
//! a header declaring the program type and the maps, then one or more programs in the
//! conformance assembly syntax) run on generated packets by this VM and, with real maps, by
//! `BPF_PROG_TEST_RUN`: the same `r0`, the same output packet and the same map contents
//! afterwards. The VM's results are also golden files (`*.out` beside each case; `BLESS=1`
//! rewrites them), checked without root.
//!
//! The cases, their format and the VM's run are in `support/kernel_cases.rs` (shared with
//! the JIT's tests).
//!
//! Compared: `r0` (32 bits: the kernel's `retval`), the packet, every map's elements (per-CPU
//! maps: the sum of 8-byte words over CPUs, since a test run may move between CPUs; queues
//! and stacks: popped in order), except what cannot be the same (documented exceptions):
//! prog arrays' values (the kernel gives program ids; keys are compared), ring buffers (no
//! syscall reads them: programs compare them through `bpf_ringbuf_query`), and helpers whose
//! value is the machine's — `ktime_get_ns`, `get_prandom_u32`, `get_smp_processor_id` — which
//! no case lets reach `r0`, the packet or a map. An LRU hash is only compared below its size
//! (the kernel's eviction order is approximate).

#[path = "support/kernel_cases.rs"]
mod kernel_cases;

use std::os::fd::{AsFd, OwnedFd};

use kernel_cases::{
    Case, Kind, cases, hex, is_percpu, packet, parse, render_entries, run_vm, sum_words,
};
use sift_ebpf::{EbpfInsn, MapType};
use sift_sys::bpf;

fn possible_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    s.trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1,
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// The program's bytes with `lddw map_fd(i)` / `map_value(i, off)` given the kernel's fds.
fn patched(slots: &[EbpfInsn], fds: &[OwnedFd]) -> Vec<u8> {
    use std::os::fd::AsRawFd;
    let mut out = Vec::new();
    for (k, s) in slots.iter().enumerate() {
        let mut s = *s;
        let first_half = k == 0 || slots[k - 1].code != 0x18;
        if s.code == 0x18 && first_half && (s.src == 1 || s.src == 2) {
            s.imm = fds[s.imm as usize].as_raw_fd();
        }
        out.extend_from_slice(&s.encode());
    }
    out
}

/// The case run by the kernel, in the same format; `None` when the kernel cannot be asked.
fn run_kernel(case: &Case, name: &str) -> Option<String> {
    let mut fds = Vec::new();
    for s in &case.maps {
        match bpf::map_create(s.map_type as u32, s.key_size, s.value_size, s.max_entries, s.flags) {
            Ok(fd) => fds.push(fd),
            Err(e) if bpf::is_unavailable(&e) => {
                return sift_testkit::oracle_missing("kernel bpf(2) BPF_MAP_CREATE", e);
            }
            Err(e) => panic!("{name}: map {}: {e}", s.name),
        }
    }
    let prog_type = match case.kind {
        Kind::Xdp => bpf::BPF_PROG_TYPE_XDP,
        Kind::Tc => bpf::BPF_PROG_TYPE_SCHED_CLS,
    };
    let mut progs = Vec::new();
    for (k, p) in case.progs.iter().enumerate() {
        let bytes = patched(p, &fds);
        match bpf::prog_load(prog_type, &bytes, None) {
            Ok(fd) => progs.push(fd),
            Err(e) => {
                let mut log = vec![0u8; 1 << 20];
                let _ = bpf::prog_load(prog_type, &bytes, Some(&mut log));
                let end = log.iter().position(|&b| b == 0).unwrap_or(0);
                panic!("{name}: prog {k} refused: {e}\n{}", String::from_utf8_lossy(&log[..end]));
            }
        }
    }
    for (spec, fd) in case.maps.iter().zip(&fds) {
        if spec.map_type == MapType::ProgArray {
            use std::os::fd::AsRawFd;
            for k in 0..(progs.len() as u32).min(spec.max_entries) {
                let pfd = progs[k as usize].as_raw_fd() as u32;
                bpf::map_update_elem(fd, &k.to_le_bytes(), &pfd.to_le_bytes(), 0).unwrap();
            }
        }
    }
    for (i, k, v) in &case.init {
        bpf::map_update_elem(&fds[*i], k, v, 0).unwrap();
    }
    let mut out = String::new();
    for i in 0..case.packets {
        let input = packet(i);
        let r = bpf::prog_test_run_data(&progs[0], &input, &[], 4096)
            .unwrap_or_else(|e| panic!("{name}: packet {i}: {e}"));
        let changed = if r.data == input { "unchanged".to_string() } else { hex(&r.data) };
        out.push_str(&format!("{i} r0={:#x} packet={changed}\n", r.retval));
    }
    let cpus = possible_cpus();
    for (spec, fd) in case.maps.iter().zip(&fds) {
        let (ks, vs) = (spec.key_size as usize, spec.value_size as usize);
        let entries: Vec<(Vec<u8>, Vec<u8>)> = match spec.map_type {
            MapType::Ringbuf => continue,
            MapType::Queue | MapType::Stack => std::iter::from_fn(|| {
                let mut v = vec![0u8; vs];
                bpf::map_pop_elem(fd, &mut v).ok().map(|()| (Vec::new(), v))
            })
            .collect(),
            t => {
                let mut keys = Vec::new();
                let mut key: Option<Vec<u8>> = None;
                loop {
                    let mut next = vec![0u8; ks];
                    if bpf::map_get_next_key(fd, key.as_deref(), &mut next).is_err() {
                        break;
                    }
                    keys.push(next.clone());
                    key = Some(next);
                }
                let stride = vs.div_ceil(8) * 8;
                keys.into_iter()
                    .filter_map(|k| {
                        if t == MapType::ProgArray {
                            // Present when a lookup (of the program's id) succeeds.
                            let mut id = [0u8; 4];
                            bpf::map_lookup_elem(fd.as_fd(), &k, &mut id).ok()?;
                            return Some((k, Vec::new()));
                        }
                        let mut v = vec![0u8; if is_percpu(t) { stride * cpus } else { vs }];
                        bpf::map_lookup_elem(fd.as_fd(), &k, &mut v).ok()?;
                        let v = if is_percpu(t) { sum_words(&v, vs, stride, cpus) } else { v };
                        Some((k, v))
                    })
                    .collect()
            }
        };
        render_entries(spec, entries, &mut out);
    }
    Some(out)
}
/// Drops the lines only the VM can give (ring buffer records) from a VM result.
fn comparable(vm: &str) -> String {
    vm.lines().filter(|l| !l.contains("(VM only)")).map(|l| format!("{l}\n")).collect()
}

#[test]
fn golden_vm_results() {
    let cases = cases();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    for path in cases {
        let case = parse(&path);
        sift_testkit::golden(&path.with_extension("out"), &run_vm(&case, |_| {}));
    }
}

#[test]
fn the_kernel_agrees() {
    let mut agreed = 0;
    let mut total = 0;
    let mut failures = Vec::new();
    for path in cases() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let case = parse(&path);
        let Some(kernel) = run_kernel(&case, &name) else { return };
        let vm = comparable(&run_vm(&case, |_| {}));
        total += 1;
        if vm == kernel {
            agreed += 1;
        } else {
            let diff: String = vm
                .lines()
                .zip(kernel.lines())
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("  VM:     {a}\n  kernel: {b}\n"))
                .collect();
            failures.push(format!("{name}: differs\n{diff}--- VM\n{vm}--- kernel\n{kernel}"));
        }
    }
    eprintln!("kernel agreement: {agreed}/{total} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
