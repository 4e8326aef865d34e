//! Any text as a filter for EN10MB and any bytes as a packet: whatever compiles lowers to eBPF
//! (`sift_compile::ebpf`) at XDP, TC or as a socket filter (the first byte picks), sift's
//! verifier accepts the program, and on sift's eBPF VM it returns what the classic program
//! returns on sift's classic VM (raw mode), or the verdict that value stands for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_compile::ebpf::{self, EbpfGenErrorKind, EbpfOptions, Hook};
use sift_compile::pipeline::{self, LinkType, Options};
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};
use sift_filter::TableResolver;

/// Longer packets add nothing (every offset a filter reaches is tried on shorter ones).
const MAX_PACKET: usize = 1600;

fuzz_target!(|data: &[u8]| {
    // First byte: the hook (low two bits), raw or verdicts, counting, optimized or not. Then
    // the expression up to a NUL, then the packet.
    let Some((&pick, rest)) = data.split_first() else { return };
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (text, packet) = rest.split_at(split);
    let packet = packet.get(1..).unwrap_or_default();
    let packet = &packet[..packet.len().min(MAX_PACKET)];
    let hook = match pick & 3 {
        0 | 3 => Hook::Xdp,
        1 => Hook::Tc,
        _ => Hook::SocketFilter,
    };
    let resolver = TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &resolver).optimize(pick & 0x10 == 0);
    let src = String::from_utf8_lossy(text);
    let Ok(compiled) = pipeline::compile(&src, &opts) else { return };
    let mut eopts = EbpfOptions::new(hook);
    if pick & 4 != 0 {
        eopts = eopts.raw();
    }
    if pick & 8 != 0 {
        eopts = eopts.counting();
    }
    let lowered = match ebpf::lower(&compiled, &eopts) {
        Ok(l) => l,
        // Nothing else is refused for an EN10MB filter compiled without Linux extensions.
        Err(e) if matches!(e.kind, EbpfGenErrorKind::JumpTooFar { .. }) => return,
        Err(e) => panic!("{src:?}: {e}"),
    };
    let slots = lowered.slots();
    let verified = sift_ebpf_verifier::verify(&slots, lowered.prog_type(), &lowered.maps);
    if let Err(e) = verified {
        // A program reading `len` at XDP subtracts packet pointers: a privileged loader's.
        let privileged = sift_ebpf_verifier::Options { privileged: true };
        let again =
            sift_ebpf_verifier::verify_with(&slots, lowered.prog_type(), &lowered.maps, privileged);
        assert!(hook == Hook::Xdp && again.is_ok(), "{src:?} {hook:?}: {e}\n{}", lowered.listing());
    }
    let mut helpers = Helpers::new();
    register_kernel_helpers(&mut helpers);
    let maps = lowered.maps.iter().map(|m| Map::from_spec(m).expect("the count map")).collect();
    let mut vm = Vm::load_with_maps(&slots, helpers, maps).expect("sift's VM loads it");
    let mut p = packet.to_vec();
    let info = SkbInfo::default();
    let got = match hook {
        Hook::Xdp => vm.run_xdp(&mut p, 1),
        Hook::Tc => vm.run_tc(&mut p, &info),
        Hook::SocketFilter => vm.run_socket_filter(&mut p, &info),
    }
    .unwrap_or_else(|e| panic!("{src:?} {hook:?}: {e}"));
    let classic = sift_vm::Interpreter::new(&compiled.program).run(packet, packet.len() as u32);
    let want = match (eopts.raw, eopts.count, classic != 0) {
        (true, _, _) => classic,
        (false, true, _) | (false, false, true) => eopts.on_match,
        (false, false, false) => eopts.on_miss,
    };
    assert_eq!(got, u64::from(want), "{src:?} {hook:?} on {packet:02x?}\n{}", lowered.listing());
});
