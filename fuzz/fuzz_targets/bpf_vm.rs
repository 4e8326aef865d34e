//! Bytes → program + packet: both validators and both interpreter flavors never panic, never
//! loop, and agree with themselves (counted and plain runs return the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_insn::Insn;
use sift_verify::{Mode, validate};
use sift_vm::{Flavor, Interpreter, PacketMeta};

fuzz_target!(|data: &[u8]| {
    // First byte: instruction count (0..=255); then 8 bytes per instruction; the rest is the
    // packet.
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n).min(rest.len() / 8);
    let (code, pkt) = rest.split_at(n * 8);
    let prog: Vec<Insn> = code
        .chunks_exact(8)
        .map(|c| {
            Insn::new(
                u16::from_le_bytes([c[0], c[1]]),
                c[2],
                c[3],
                u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            )
        })
        .collect();
    let wire = pkt.len() as u32 + u32::from(data[0] & 7);
    let meta =
        PacketMeta { ifindex: Some(1), vlan_tci: 5, vlan_present: true, ..PacketMeta::new(wire) };
    for mode in [Mode::Libpcap, Mode::Linux] {
        let Ok(v) = validate(&prog, mode) else { continue };
        for flavor in [Flavor::Libpcap, Flavor::Linux] {
            let i = Interpreter::with_flavor(&v, flavor);
            let plain = i.run(pkt, wire);
            let counted = i.run_counted(pkt, wire);
            assert_eq!(plain, counted.ret);
            assert!(counted.executed as usize <= prog.len());
            let _ = i.run_with_meta(pkt, &meta);
        }
    }
});
