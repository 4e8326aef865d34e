//! Bytes → program + packet: both validators and both interpreter flavors never panic, never
//! loop, and agree with themselves (counted and plain runs return the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_verify::{Mode, validate};
use sift_vm::{Flavor, Interpreter, PacketMeta};

fuzz_target!(|data: &[u8]| {
    let Some((prog, pkt, wire)) = sift_vm::testgen::program_from_bytes(data) else { return };
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
