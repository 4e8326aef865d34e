//! Bytes → program + packet: a program that lifts to an acyclic graph keeps its meaning
//! through sift's optimizer (same return value on the packet in both interpreter flavors,
//! output valid), and optimizing never panics. Also compiles the bytes as filter text with and
//! without optimization: both succeed or fail alike (except "rejects all packets"), and agree
//! on the packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_compile::pipeline::{self, LinkType, Options};
use sift_filter::TableResolver;
use sift_verify::{Mode, validate};
use sift_vm::{Flavor, Interpreter, PacketMeta};

fuzz_target!(|data: &[u8]| {
    if let Some((prog, pkt, wire)) = sift_vm::testgen::program_from_bytes(data)
        && let Ok(orig) = validate(&prog, Mode::Libpcap)
        && let Ok(mut cfg) = sift_compile::lift::lift(&prog)
        && cfg.check().is_ok()
    {
        sift_compile::optimize(&mut cfg);
        let opt = sift_compile::emit::emit(&cfg).expect("optimized graphs emit");
        let opt = validate(&opt, Mode::Libpcap).expect("optimized programs are valid");
        let meta = PacketMeta { ifindex: Some(1), vlan_tci: 5, vlan_present: true, ..PacketMeta::new(wire) };
        for flavor in [Flavor::Libpcap, Flavor::Linux] {
            let (a, b) = (Interpreter::with_flavor(&orig, flavor), Interpreter::with_flavor(&opt, flavor));
            assert_eq!(a.run_with_meta(pkt, &meta), b.run_with_meta(pkt, &meta), "{flavor:?}");
        }
    }
    let src = String::from_utf8_lossy(data);
    let r = TableResolver::well_known();
    let opts = Options::new(LinkType::EN10MB, &r);
    match (pipeline::compile(&src, &opts.optimize(false)), pipeline::compile(&src, &opts)) {
        (Ok(u), Ok(o)) => {
            let pkt = data;
            assert_eq!(
                sift_vm::run(&u.program, pkt, pkt.len() as u32),
                sift_vm::run(&o.program, pkt, pkt.len() as u32)
            );
        }
        (Ok(u), Err(e)) => {
            assert!(e.is_rejects_all(), "{e}");
            assert_eq!(sift_vm::run(&u.program, data, data.len() as u32), 0);
        }
        (Err(_), Ok(_)) => panic!("compiles only when optimized"),
        (Err(a), Err(b)) => assert_eq!(a, b),
    }
});
