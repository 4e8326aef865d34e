//! Maps and helpers against the Linux kernel: hand-written programs (`tests/kernel/*.case`:
//! a header declaring the program type and the maps, then one or more programs in the
//! conformance assembly syntax) run on generated packets by this VM and, with real maps, by
//! `BPF_PROG_TEST_RUN`: the same `r0`, the same output packet and the same map contents
//! afterwards. The VM's results are also golden files (`*.out` beside each case; `BLESS=1`
//! rewrites them), checked without root.
//!
//! Case header lines: `type xdp|tc`, `map NAME TYPE KEY_SIZE VALUE_SIZE MAX_ENTRIES
//! [FLAGS]` (TYPE as the kernel names it, lower case: `hash`, `lpm_trie`…), `packets N`;
//! `prog` starts a program (the first is the one run; each is also the tail call target of
//! its index in every prog array). `lddw map_fd(i)` names map `i`.
//!
//! Compared: `r0` (32 bits: the kernel's `retval`), the packet, every map's elements (per-CPU
//! maps: the sum of 8-byte words over CPUs, since a test run may move between CPUs; queues
//! and stacks: popped in order), except what cannot be the same (documented exceptions):
//! prog arrays' values (the kernel gives program ids; keys are compared), ring buffers (no
//! syscall reads them: programs compare them through `bpf_ringbuf_query`), and helpers whose
//! value is the machine's — `ktime_get_ns`, `get_prandom_u32`, `get_smp_processor_id` — which
//! no case lets reach `r0`, the packet or a map. An LRU hash is only compared below its size
//! (the kernel's eviction order is approximate).

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use sift_ebpf::asm::assemble;
use sift_ebpf::{EbpfInsn, MapSpec, MapType, encode_program};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, XdpPacket, csum, register_kernel_helpers};
use sift_sys::bpf;

/// Packets a case runs on unless it says otherwise.
const PACKETS: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Xdp,
    Tc,
}

struct Case {
    kind: Kind,
    maps: Vec<MapSpec>,
    packets: usize,
    progs: Vec<Vec<EbpfInsn>>,
    /// Elements both sides get before the first run: map index, key, value.
    init: Vec<(usize, Vec<u8>, Vec<u8>)>,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|k| u8::from_str_radix(&s[2 * k..2 * k + 2], 16).unwrap()).collect()
}

fn parse(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let mut case = Case {
        kind: Kind::Xdp,
        maps: Vec::new(),
        packets: PACKETS,
        progs: Vec::new(),
        init: Vec::new(),
    };
    let mut progs: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(p) = progs.last_mut()
            && line.trim() != "prog"
        {
            p.push_str(line);
            p.push('\n');
            continue;
        }
        let words: Vec<&str> = line.split('#').next().unwrap().split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["type", "xdp"] => case.kind = Kind::Xdp,
            ["type", "tc"] => case.kind = Kind::Tc,
            ["packets", n] => case.packets = n.parse().unwrap(),
            ["prog"] => progs.push(String::new()),
            ["init", name, k, v] => {
                let i = case.maps.iter().position(|m| m.name == *name).unwrap();
                case.init.push((i, unhex(k), unhex(v)));
            }
            ["map", name, t, k, v, n, rest @ ..] => {
                let map_type = *MapType::ALL
                    .iter()
                    .find(|m| m.name().eq_ignore_ascii_case(t))
                    .unwrap_or_else(|| panic!("{}: map type {t}", path.display()));
                let num = |s: &str| {
                    s.strip_prefix("0x")
                        .map_or_else(|| s.parse(), |h| u32::from_str_radix(h, 16))
                        .unwrap()
                };
                case.maps.push(MapSpec {
                    name: name.to_string(),
                    map_type,
                    key_size: num(k),
                    value_size: num(v),
                    max_entries: num(n),
                    flags: rest.first().map_or(0, |f| num(f)),
                    initial: Vec::new(),
                });
            }
            other => panic!("{}: bad header line {other:?}", path.display()),
        }
    }
    for p in &progs {
        let insns = assemble(p).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        case.progs.push(encode_program(&insns));
    }
    assert!(!case.progs.is_empty(), "{}: no prog", path.display());
    case
}

/// Packet `i`: Ethernet (destinations: this host, broadcast, multicast, another host), IPv4,
/// UDP or TCP with valid checksums (UDP checksum 0 every 5th packet), a payload of varying
/// length.
fn packet(i: usize) -> Vec<u8> {
    let dst: [u8; 6] = match i % 4 {
        0 => [0; 6],
        1 => [0xff; 6],
        2 => [0x01, 0x00, 0x5e, 0, 0, i as u8],
        _ => [0x02, 0, 0, 0, 0, 1],
    };
    let mut p = dst.to_vec();
    p.extend_from_slice(&[0x02, 0x11, 0x22, 0x33, 0x44, i as u8, 0x08, 0x00]);
    let udp = i.is_multiple_of(2);
    let payload: Vec<u8> = (0..8 + (i * 7) % 40).map(|k| (k * 13 + i) as u8).collect();
    let l4_len = if udp { 8 } else { 20 } + payload.len();
    let total = 20 + l4_len;
    let src = [10, 0, (i % 3) as u8, i as u8];
    let dsta = [192, 168, (i % 5) as u8, 1];
    let mut ip = vec![0x45, 0, (total >> 8) as u8, total as u8, 0, i as u8, 0x40, 0, 64];
    ip.push(if udp { 17 } else { 6 });
    ip.extend_from_slice(&[0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dsta);
    let c = csum::fold(csum::csum_partial(&ip, 0));
    ip[10..12].copy_from_slice(&c.to_le_bytes());
    let mut l4 = Vec::new();
    let (sport, dport): (u16, u16) = (1000 + i as u16, if udp { 53 } else { 80 });
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    if udp {
        l4.extend_from_slice(&(l4_len as u16).to_be_bytes());
        l4.extend_from_slice(&[0, 0]);
    } else {
        l4.extend_from_slice(&(0x1000_0000u32 + i as u32).to_be_bytes());
        l4.extend_from_slice(&[0, 0, 0, 0, 0x50, 0x18, 0x10, 0, 0, 0, 0, 0]);
    }
    l4.extend_from_slice(&payload);
    let mut pseudo = [&src[..], &dsta[..], &[0, ip[9]], &(l4_len as u16).to_be_bytes()].concat();
    pseudo.extend_from_slice(&l4);
    let at = if udp { 6 } else { 16 };
    if !(udp && i.is_multiple_of(5)) {
        let c = csum::fold(csum::csum_partial(&pseudo, 0));
        l4[at..at + 2].copy_from_slice(&c.to_le_bytes());
    }
    p.extend_from_slice(&ip);
    p.extend_from_slice(&l4);
    p
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// A map's comparable contents as lines.
fn render_entries(spec: &MapSpec, entries: Vec<(Vec<u8>, Vec<u8>)>, out: &mut String) {
    let mut entries = entries;
    if !matches!(spec.map_type, MapType::Queue | MapType::Stack) {
        entries.sort();
    }
    for (k, v) in entries {
        let v = if spec.map_type == MapType::ProgArray { "(program)".into() } else { hex(&v) };
        out.push_str(&format!("map {}: {} => {}\n", spec.name, hex(&k), v));
    }
}

fn is_percpu(t: MapType) -> bool {
    matches!(t, MapType::PerCpuArray | MapType::PerCpuHash | MapType::LruPerCpuHash)
}

/// Per-CPU values summed as 8-byte words over `cpus` values of `stride` bytes.
fn sum_words(v: &[u8], value_size: usize, stride: usize, cpus: usize) -> Vec<u8> {
    let mut out = vec![0u8; value_size];
    for w in (0..value_size).step_by(8) {
        let s = (0..cpus).fold(0u64, |acc, c| {
            let at = c * stride + w;
            acc.wrapping_add(u64::from_le_bytes(v[at..at + 8].try_into().unwrap()))
        });
        out[w..w + 8].copy_from_slice(&s.to_le_bytes());
    }
    out
}

fn vm_map_lines(specs: &[MapSpec], maps: &mut [Map]) -> String {
    let mut out = String::new();
    for (spec, m) in specs.iter().zip(maps) {
        let entries = match spec.map_type {
            MapType::Ringbuf => {
                for r in m.ringbuf_drain() {
                    out.push_str(&format!("ringbuf {} (VM only): {}\n", spec.name, hex(&r)));
                }
                continue;
            }
            MapType::Queue | MapType::Stack => {
                std::iter::from_fn(|| m.pop().ok()).map(|v| (Vec::new(), v)).collect()
            }
            t if is_percpu(t) => {
                let vs = spec.value_size as usize;
                m.entries()
                    .into_iter()
                    .map(|(k, v)| (k, sum_words(&v, vs, vs, m.num_cpus() as usize)))
                    .collect()
            }
            _ => m.entries(),
        };
        render_entries(spec, entries, &mut out);
    }
    out
}

/// The case run by this VM: one line per packet, then the maps.
fn run_vm(case: &Case) -> String {
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let maps: Vec<Map> = case.maps.iter().map(|s| Map::from_spec(s).unwrap()).collect();
    let mut vm = Vm::load_with_maps(&case.progs[0], helpers, maps).unwrap();
    for p in &case.progs[1..] {
        vm.add_program(p).unwrap();
    }
    for (spec, m) in case.maps.iter().zip(vm.maps_mut()) {
        if spec.map_type == MapType::ProgArray {
            for k in 0..(case.progs.len() as u32).min(spec.max_entries) {
                m.update(&k.to_le_bytes(), &k.to_le_bytes(), 0).unwrap();
            }
        }
    }
    for (i, k, v) in &case.init {
        vm.maps_mut()[*i].update(k, v, 0).unwrap();
    }
    let mut out = String::new();
    for i in 0..case.packets {
        let input = packet(i);
        let (r0, data) = match case.kind {
            Kind::Xdp => {
                let mut p = XdpPacket::new(&input);
                let r =
                    vm.run_xdp_packet(&mut p, 1, 0).unwrap_or_else(|e| panic!("packet {i}: {e}"));
                // The kernel's data_out starts at data_meta.
                (r, [p.meta(), p.data()].concat())
            }
            Kind::Tc => {
                let mut d = input.clone();
                let r = vm.run_tc(&mut d, &SkbInfo::default()).unwrap_or_else(|e| panic!("{e}"));
                (r, d)
            }
        };
        let changed = if data == input { "unchanged".to_string() } else { hex(&data) };
        out.push_str(&format!("{i} r0={:#x} packet={changed}\n", r0 as u32));
    }
    out + &vm_map_lines(&case.maps, vm.maps_mut())
}

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

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernel");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    v.sort();
    v
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
        sift_testkit::golden(&path.with_extension("out"), &run_vm(&case));
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
        let vm = comparable(&run_vm(&case));
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
