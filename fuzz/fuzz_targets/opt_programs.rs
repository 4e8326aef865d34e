//! Bytes → program + packet: a program that lifts to an acyclic graph keeps its meaning
//! through sift's optimizer (same return value on the packet in both interpreter flavors,
//! output valid), and optimizing never panics. Also compiles the bytes as filter text with and
//! without optimization: both succeed or fail alike (except "rejects all packets"), and agree
//! on the packet, with `protochain` walks unrolled (the default mode) and as libpcap's loop
//! (`Mode::LibpcapLoops`; run with a small loop budget, so that a cycling walk stays cheap).
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
        let meta = PacketMeta {
            ifindex: Some(1),
            vlan_tci: 5,
            vlan_present: true,
            ..PacketMeta::new(wire)
        };
        for flavor in [Flavor::Libpcap, Flavor::Linux] {
            let (a, b) =
                (Interpreter::with_flavor(&orig, flavor), Interpreter::with_flavor(&opt, flavor));
            assert_eq!(a.run_with_meta(pkt, &meta), b.run_with_meta(pkt, &meta), "{flavor:?}");
        }
    }
    let src = String::from_utf8_lossy(data);
    let r = TableResolver::well_known();
    let run = |p: &sift_verify::Validated| {
        Interpreter::new(p).with_loop_budget(1 << 16).run(data, data.len() as u32)
    };
    for mode in [Mode::Libpcap, Mode::LibpcapLoops] {
        let opts = Options::new(LinkType::EN10MB, &r).mode(mode);
        match (pipeline::compile(&src, &opts.optimize(false)), pipeline::compile(&src, &opts)) {
            (Ok(u), Ok(o)) => assert_eq!(run(&u.program), run(&o.program), "{mode:?}"),
            (Ok(u), Err(e)) => {
                assert!(e.is_rejects_all(), "{e}");
                assert_eq!(run(&u.program), 0);
            }
            (Err(_), Ok(_)) => panic!("compiles only when optimized"),
            (Err(a), Err(b)) => assert_eq!(a, b),
        }
    }
});
