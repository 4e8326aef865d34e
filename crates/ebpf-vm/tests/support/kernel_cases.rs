//! The kernel cases of `tests/kernel/*.case` on this VM: parsing a case, the packets it runs
//! on, running it and rendering `r0`, the packets and the maps as the golden `*.out` files
//! list them. Shared by `kernel_helpers.rs` (which also runs the cases in the kernel) and
//! `sift-ebpf-jit`'s tests (which include this file with `#[path]` and run the cases
//! compiled: the listing must be the interpreter's golden one).
//!
//! Case header lines: `type xdp|tc`, `map NAME TYPE KEY_SIZE VALUE_SIZE MAX_ENTRIES
//! [FLAGS]` (TYPE as the kernel names it, lower case: `hash`, `lpm_trie`…), `packets N`;
//! `prog` starts a program (the first is the one run; each is also the tail call target of
//! its index in every prog array). `lddw map_fd(i)` names map `i`.

use std::path::{Path, PathBuf};

use sift_ebpf::asm::assemble;
use sift_ebpf::{EbpfInsn, MapSpec, MapType, encode_program};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, XdpPacket, csum, register_kernel_helpers};

/// Packets a case runs on unless it says otherwise.
pub const PACKETS: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Xdp,
    Tc,
}

pub struct Case {
    pub kind: Kind,
    pub maps: Vec<MapSpec>,
    pub packets: usize,
    pub progs: Vec<Vec<EbpfInsn>>,
    /// Elements both sides get before the first run: map index, key, value.
    pub init: Vec<(usize, Vec<u8>, Vec<u8>)>,
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|k| u8::from_str_radix(&s[2 * k..2 * k + 2], 16).unwrap()).collect()
}

pub fn parse(path: &Path) -> Case {
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
pub fn packet(i: usize) -> Vec<u8> {
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

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// A map's comparable contents as lines.
pub fn render_entries(spec: &MapSpec, entries: Vec<(Vec<u8>, Vec<u8>)>, out: &mut String) {
    let mut entries = entries;
    if !matches!(spec.map_type, MapType::Queue | MapType::Stack) {
        entries.sort();
    }
    for (k, v) in entries {
        let v = if spec.map_type == MapType::ProgArray { "(program)".into() } else { hex(&v) };
        out.push_str(&format!("map {}: {} => {}\n", spec.name, hex(&k), v));
    }
}

pub fn is_percpu(t: MapType) -> bool {
    matches!(t, MapType::PerCpuArray | MapType::PerCpuHash | MapType::LruPerCpuHash)
}

/// Per-CPU values summed as 8-byte words over `cpus` values of `stride` bytes.
pub fn sum_words(v: &[u8], value_size: usize, stride: usize, cpus: usize) -> Vec<u8> {
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

pub fn vm_map_lines(specs: &[MapSpec], maps: &mut [Map]) -> String {
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

/// The case run by this VM (`prepare`d before the first packet): one line per packet, then
/// the maps.
pub fn run_vm(case: &Case, prepare: fn(&mut Vm)) -> String {
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
    prepare(&mut vm);
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

pub fn cases() -> Vec<PathBuf> {
    // From this crate's or the JIT's manifest directory alike.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ebpf-vm/tests/kernel");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    v.sort();
    v
}
