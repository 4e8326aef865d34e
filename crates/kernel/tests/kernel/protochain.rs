//! `protochain` for the kernel: the walk unrolled (forward jumps only) as deep as the whole
//! program fits the kernel's 4,096 instructions, with other terms beside it. The kernel's
//! `SO_ATTACH_FILTER` takes every such program, and what it delivers through an `AF_UNIX`
//! datagram socket is what sift's loop form (libpcap's program) gives, on chains of extension
//! headers shorter than the unrolled depth; on longer ones the lone term is false.

use sift_compile::pipeline::{self, LinkType, Mode, WalkForm};
use sift_compile::walk::MIN_UNROLLED_STEPS;
use sift_filter::TableResolver;
use sift_kernel::{UnixDgramFilter, check_classic};
use sift_vm::Interpreter;

/// An Ethernet frame: IPv6 from `::1` to `::2`, then `n` extension headers (hop-by-hop,
/// destination options, routing and fragment in turn), then `last` and 8 bytes of it.
fn chain(n: usize, last: u8) -> Vec<u8> {
    const EXT: [u8; 4] = [0, 60, 43, 44];
    let kinds: Vec<u8> = (0..n).map(|i| EXT[i % 4]).collect();
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 0]);
    f.push(kinds.first().copied().unwrap_or(last));
    f.push(64);
    f.extend_from_slice(&[0; 15]);
    f.push(1);
    f.extend_from_slice(&[0; 15]);
    f.push(2);
    for i in 0..n {
        let next = kinds.get(i + 1).copied().unwrap_or(last);
        f.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 0]);
    }
    f.extend_from_slice(&[0; 8]);
    f
}

#[test]
fn the_kernel_takes_the_unrolled_walk_with_other_terms() {
    if let Err(e) = check_classic(&[sift_kernel::RawInsn::new(0x06, 0, 0, 1)]) {
        sift_testkit::oracle_missing::<()>("Linux SO_ATTACH_FILTER", e);
        return;
    }
    let resolver = TableResolver::well_known();
    let hosts: Vec<String> = (1..=40).map(|i| format!("host ::{i:x}")).collect();
    let long = format!("ip6 protochain 6 and ({})", hosts.join(" or "));
    // Each with whether a walk cut short makes the whole filter false.
    let exprs = [
        ("ip6 protochain 6 and host ::1", true),
        (long.as_str(), true),
        ("protochain 17 or tcp port 80", false),
        ("not ip6 protochain 58", false),
        ("ip6 protochain 44 and ip6 protochain 6", true),
    ];
    let (mut runs, mut beyond) = (0, 0);
    for (expr, false_past_depth) in exprs {
        for optimize in [false, true] {
            let opts = pipeline::Options::new(LinkType::EN10MB, &resolver).optimize(optimize);
            let kernel = pipeline::compile(expr, &opts.mode(Mode::Linux))
                .unwrap_or_else(|e| panic!("`{expr}`: {e}"));
            let Some(WalkForm::Unrolled(depth)) = kernel.walk_form else {
                panic!("`{expr}`: {:?}", kernel.walk_form)
            };
            let len = kernel.program.insns().len();
            assert!(len <= sift_insn::code::BPF_MAXINSNS && depth >= MIN_UNROLLED_STEPS);
            let mut sock = UnixDgramFilter::new(kernel.program.insns())
                .unwrap_or_else(|e| panic!("`{expr}` ({len} instructions): the kernel: {e}"));
            let looped = pipeline::compile(expr, &opts.mode(Mode::LibpcapLoops)).unwrap();
            let reference = Interpreter::new(&looped.program);
            for n in [0, 1, 2, 3, 7, 30, depth - 1, depth + 1, depth + 9] {
                for last in [6, 17, 58, 59] {
                    let pkt = chain(n, last);
                    let len = pkt.len() as u32;
                    let got = sock.deliver(&pkt).expect("deliver");
                    let want = if n < depth {
                        reference.run(&pkt, len)
                    } else if false_past_depth {
                        beyond += 1;
                        0
                    } else {
                        continue;
                    };
                    let want = (want != 0).then_some(want.min(len) as usize);
                    assert_eq!(
                        got, want,
                        "`{expr}` (optimize {optimize}, {depth} steps), {n} headers, then {last}"
                    );
                    runs += 1;
                }
            }
        }
    }
    println!("protochain in the kernel: {runs} datagrams as expected, {beyond} past the depth");
    assert!(runs > 250 && beyond > 40, "{runs} runs, {beyond} past the depth");
}
