//! Small sets of filters from bytes and a frame: `lower_multi` never panics, and when it lowers
//! and sift's verifier accepts the program, the set and first-match index it writes on sift's
//! eBPF VM equal `MultiProgram::decide` with each filter on sift's classic VM.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_compile::ebpf::{self, EbpfOptions, Hook, MultiResult};
use sift_compile::multi::{self, Decide, FilterSet, FilterSpec};
use sift_compile::pipeline::{LinkType, Options};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};
use sift_filter::TableResolver;

const MAX_PACKET: usize = 1600;
const MAX_FILTERS: usize = 8;

fuzz_target!(|data: &[u8]| {
    // First byte: hook (bits 0-1), mode (bit 2); then expressions separated by NUL (a leading
    // `+` sets `continue`, a leading digit the priority), then after a 0xff byte the packet.
    let Some((&pick, rest)) = data.split_first() else { return };
    let split = rest.iter().position(|&b| b == 0xff).unwrap_or(rest.len());
    let (text, packet) = rest.split_at(split);
    let packet = packet.get(1..).unwrap_or_default();
    let packet = &packet[..packet.len().min(MAX_PACKET)];
    let hook = match pick & 3 {
        0 | 3 => Hook::Xdp,
        1 => Hook::Tc,
        _ => Hook::SocketFilter,
    };
    let mode = if pick & 4 == 0 { Decide::All } else { Decide::First };
    let mut specs = Vec::new();
    for (i, part) in text.split(|&b| b == 0).take(MAX_FILTERS).enumerate() {
        let mut e = String::from_utf8_lossy(part).into_owned();
        let cont = e.starts_with('+');
        if cont {
            e.remove(0);
        }
        let priority = e.chars().next().and_then(|c| c.to_digit(10)).unwrap_or(0) as i32;
        specs.push(FilterSpec {
            name: format!("f{i}"),
            priority,
            cont,
            expr: e.trim_start_matches(|c: char| c.is_ascii_digit()).to_string(),
            line: 0,
            expr_column: 1,
        });
    }
    if specs.is_empty() {
        return;
    }
    let set = FilterSet::new(specs);
    let resolver = TableResolver::well_known();
    let Ok(m) = multi::compile(&set, &Options::new(LinkType::EN10MB, &resolver)) else { return };
    let Ok(lowered) = ebpf::lower_multi(&m, &EbpfOptions::new(hook).raw(), mode) else { return };
    let f = &lowered.filter;
    let slots = f.slots();
    if slots.len() > sift_ebpf_vm::program::MAX_INSNS {
        return;
    }
    let plain = sift_ebpf_verifier::verify(&slots, f.prog_type(), &f.maps);
    if plain.is_err() {
        let privileged = sift_ebpf_verifier::Options { privileged: true };
        if sift_ebpf_verifier::verify_with(&slots, f.prog_type(), &f.maps, privileged).is_err() {
            return;
        }
    }
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let maps = f.maps.iter().map(|s| Map::from_spec(s).expect("the result map")).collect();
    let mut vm = Vm::load_with_maps(&slots, helpers, maps).expect("sift's VM loads it");
    let mut p = packet.to_vec();
    let info = SkbInfo::default();
    let ret = match hook {
        Hook::Xdp => vm.run_xdp(&mut p, 1),
        Hook::Tc => vm.run_tc(&mut p, &info),
        Hook::SocketFilter => vm.run_socket_filter(&mut p, &info),
    };
    let Ok(ret) = ret else { return };
    let value = vm.maps()[0].lookup(&0u32.to_le_bytes()).expect("element 0");
    let got = lowered.layout.decode(value).expect("a readable value");
    let vms: Vec<_> = m
        .members
        .iter()
        .map(|mm| mm.compiled.as_ref().map(|c| sift_vm::Interpreter::new(&c.program)))
        .collect();
    let (mut scratch, mut cand, mut matched) = (m.scratch(), Vec::new(), Vec::new());
    let len = packet.len() as u32;
    m.decide(packet, len, mode, &mut scratch, &mut cand, &mut matched, |r| {
        vms[r as usize].as_ref().is_some_and(|vm| vm.run(packet, len) != 0)
    });
    let first = matched.iter().copied().find(|&r| !m.members[r as usize].spec.cont);
    let want = MultiResult { first, ranks: matched };
    assert_eq!(got, want, "{:?} {hook:?} {mode:?} on {packet:02x?}", set.filters());
    assert_eq!(ret, want.first.map_or(0, |f| u64::from(f) + 1));
});
