//! The back end's promises beyond the differential runs: `ip6 protochain 6` stays small, the
//! verdicts and counting mode (in sift's VM and in the kernel), the walk of a program with
//! libpcap's loop, and the refusals with their locations.

use std::os::fd::AsFd;

use crate::vm::{load, run, verify};
use crate::{chain, chains, compile, resolver};
use sift_compile::ebpf::{self, At, EbpfGenErrorKind, EbpfOptions, Hook, LOOP_WALK_STEPS};
use sift_compile::ir::BlockId;
use sift_compile::pipeline::{self, LinkType, Mode, Options, WalkForm};

/// The acceptance figure: the walk is a loop, not thousands of unrolled instructions.
#[test]
fn ip6_protochain_6_is_under_100_instructions() {
    let resolver = resolver();
    let f = compile(&resolver, "ip6 protochain 6", None).unwrap();
    assert!(f.compiled.program.insns().len() > 4000, "the classic program is unrolled");
    let mut sizes = Vec::new();
    for hook in [Hook::Xdp, Hook::SocketFilter, Hook::Tc] {
        let l = ebpf::lower(&f.compiled, &EbpfOptions::new(hook)).unwrap();
        sizes.push((hook, l.len()));
        assert!(verify(&l).0.is_ok(), "{hook:?}");
    }
    println!("ip6 protochain 6: {sizes:?} eBPF slots");
    // XDP and socket filters: one body. TC has two (direct access, and bpf_skb_load_bytes for
    // skbs with fragments), each under 100.
    assert!(sizes[0].1 < 100 && sizes[1].1 < 100, "{sizes:?}");
    assert!(sizes[2].1 < 2 * 100 - 10, "{sizes:?}");
}

/// Each hook's verdicts, and verdicts of one's own.
#[test]
fn verdicts_follow_the_hook_and_the_options() {
    let resolver = resolver();
    let f = compile(&resolver, "ip6 protochain 6 or udp", None).unwrap();
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    let frames = crate::base_frames(0xabc, 60);
    let custom = EbpfOptions::new(Hook::Xdp).verdicts(3, 0);
    let cases = [
        (EbpfOptions::new(Hook::Xdp), ebpf::XDP_PASS, ebpf::XDP_DROP),
        (EbpfOptions::new(Hook::Tc), ebpf::TC_ACT_OK, ebpf::TC_ACT_SHOT),
        (EbpfOptions::new(Hook::SocketFilter), ebpf::SOCKET_SNAPLEN, 0),
        (custom, 3, 0),
    ];
    let (mut matched, mut missed) = (0, 0);
    for (opts, on_match, on_miss) in cases {
        let l = ebpf::lower(&f.compiled, &opts).unwrap();
        let mut vm = load(&l);
        for p in &frames {
            let m = crate::classic(&reference, p) != 0;
            let want = if m { on_match } else { on_miss };
            assert_eq!(run(&mut vm, opts.hook, p), u64::from(want), "{opts:?} {p:02x?}");
            if m { matched += 1 } else { missed += 1 }
        }
    }
    assert!(matched > 20 && missed > 20, "{matched} {missed}");
}

/// The counts of matched and unmatched packets, element by element (per-CPU values summed).
fn percpu_sums(values: &[u8]) -> u64 {
    values.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).sum()
}

/// The counting map's two elements in the kernel (per-CPU values summed).
fn kernel_counts(k: &crate::kernel::Loaded) -> Vec<u64> {
    (0u32..2)
        .map(|key| {
            // One value per possible CPU; more than are online is harmless.
            let mut value = vec![0u8; 8 * 256];
            sift_sys::bpf::map_lookup_elem(k.maps[0].as_fd(), &key.to_le_bytes(), &mut value)
                .unwrap();
            percpu_sums(&value)
        })
        .collect()
}

/// Counting mode: every packet passes, and the per-CPU array counts matches (0) and misses (1),
/// short packets among the misses; in raw mode the value is still returned.
#[test]
fn counting_mode_counts_and_passes() {
    let resolver = resolver();
    let f = compile(&resolver, "tcp port 80 or ip6 protochain 17", None).unwrap();
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    let frames = crate::packets_for(&f, &crate::base_frames(0xc0, 80), 5, 40);
    let want_match = frames.iter().filter(|p| crate::classic(&reference, p) != 0).count() as u64;
    let want_miss = frames.len() as u64 - want_match;
    assert!(want_match > 10 && want_miss > 10, "{want_match} {want_miss}");
    for hook in [Hook::Xdp, Hook::Tc, Hook::SocketFilter] {
        for raw in [false, true] {
            let mut opts = EbpfOptions::new(hook).counting();
            if raw {
                opts = opts.raw();
            }
            let l = ebpf::lower(&f.compiled, &opts).unwrap();
            assert_eq!(l.maps, vec![ebpf::count_map()]);
            assert!(verify(&l).0.is_ok(), "{hook:?}");
            let mut vm = load(&l);
            for p in &frames {
                let want = if raw { crate::classic(&reference, p) } else { opts.on_match };
                assert_eq!(run(&mut vm, hook, p), u64::from(want), "{hook:?} raw {raw}");
            }
            let counts: Vec<u64> = (0u32..2)
                .map(|k| {
                    let v = vm.maps()[0].lookup_percpu(&k.to_le_bytes()).unwrap();
                    v.iter().map(|c| percpu_sums(c)).sum()
                })
                .collect();
            assert_eq!(counts, vec![want_match, want_miss], "{hook:?} raw {raw}");
        }
    }
}

/// The same in the kernel: the map created, its descriptor put in the `lddw`, the counts read
/// back after XDP test runs.
#[test]
fn counting_mode_counts_in_the_kernel() {
    if !crate::kernel::available() {
        return;
    }
    let resolver = resolver();
    let f = compile(&resolver, "tcp port 80 or ip6 protochain 17", None).unwrap();
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    let frames = crate::packets_for(&f, &crate::base_frames(0xc1, 80), 6, 40);
    let want_match = frames.iter().filter(|p| crate::classic(&reference, p) != 0).count() as u64;
    let l = ebpf::lower(&f.compiled, &EbpfOptions::new(Hook::Xdp).counting()).unwrap();
    let k = crate::kernel::load(&l).unwrap_or_else(|e| panic!("{e}\n{}", l.listing()));
    for p in &frames {
        assert_eq!(crate::kernel::run(&k, p), Some(ebpf::XDP_PASS));
    }
    assert_eq!(kernel_counts(&k), vec![want_match, frames.len() as u64 - want_match]);
}

/// Redirecting matches to AF_XDP sockets, in the kernel: the verifier takes the `XSKMAP`, and
/// with no socket in the map a match falls back to the miss verdict; counted, a match whose
/// redirect was not taken counts as not matched (so the count is what reached user space:
/// `sift-xdp`'s capture tests check it with sockets). Other hooks and raw mode are refused.
#[test]
fn xsk_mode_redirects_matches_in_the_kernel() {
    let resolver = resolver();
    let f = compile(&resolver, "udp or ip6 protochain 6", None).unwrap();
    for opts in [EbpfOptions::new(Hook::Tc).to_xsk(), EbpfOptions::new(Hook::Xdp).raw().to_xsk()] {
        let e = ebpf::lower(&f.compiled, &opts).unwrap_err();
        assert_eq!(e.kind, EbpfGenErrorKind::XskHook, "{opts:?}");
    }
    let plain = ebpf::lower(&f.compiled, &EbpfOptions::new(Hook::Xdp).to_xsk()).unwrap();
    assert_eq!(plain.maps, vec![ebpf::xsk_map()]);
    assert!(verify(&plain).0.is_ok(), "sift's verifier: {:?}", verify(&plain).0);
    if !crate::kernel::available() {
        return;
    }
    let reference = sift_vm::Interpreter::new(&f.compiled.program);
    let frames = crate::packets_for(&f, &crate::base_frames(0xc2, 80), 6, 40);
    let want_match = frames.iter().filter(|p| crate::classic(&reference, p) != 0).count() as u64;
    assert!(want_match > 10 && want_match < frames.len() as u64 - 10, "{want_match}");
    let k = crate::kernel::load(&plain).unwrap_or_else(|e| panic!("{e}\n{}", plain.listing()));
    for p in &frames {
        assert_eq!(crate::kernel::run(&k, p), Some(ebpf::XDP_DROP));
    }
    let opts = EbpfOptions::new(Hook::Xdp).verdicts(ebpf::XDP_PASS, ebpf::XDP_PASS);
    let l = ebpf::lower(&f.compiled, &opts.counting().to_xsk()).unwrap();
    assert_eq!(l.maps, vec![ebpf::count_map(), ebpf::xsk_map()]);
    let k = crate::kernel::load(&l).unwrap_or_else(|e| panic!("{e}\n{}", l.listing()));
    for p in &frames {
        assert_eq!(crate::kernel::run(&k, p), Some(ebpf::XDP_PASS));
    }
    assert_eq!(kernel_counts(&k), vec![0, frames.len() as u64]);
}

/// A program compiled with libpcap's loop: the eBPF loop stops after `LOOP_WALK_STEPS` steps
/// and ends the program with 0, as libpcap's loop does when its budget runs out, so on chains
/// shorter than that, and on chains that loop for ever, it returns what the classic loop does.
#[test]
fn a_walk_with_libpcaps_loop_stops_as_its_budget_does() {
    let resolver = resolver();
    let (mut runs, mut looping) = (0, 0);
    for expr in ["ip6 protochain 6", "protochain 17", "not ip protochain 58"] {
        let opts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::LibpcapLoops);
        let c = pipeline::compile(expr, &opts).unwrap();
        assert_eq!(c.walk_form, Some(WalkForm::Loop));
        let reference = sift_vm::Interpreter::new(&c.program);
        let mut packets = chains();
        for n in [LOOP_WALK_STEPS - 1, LOOP_WALK_STEPS, LOOP_WALK_STEPS + 1] {
            packets.push(chain(true, &vec![60; n], 6));
        }
        // Runs that spend the loop budget take a while: once per packet.
        let want: Vec<_> =
            packets.iter().map(|p| reference.run_counted(p, p.len() as u32)).collect();
        for hook in [Hook::Xdp, Hook::SocketFilter] {
            let l = ebpf::lower(&c, &EbpfOptions::new(hook).raw()).unwrap();
            assert!(verify(&l).0.is_ok(), "{expr} {hook:?}");
            let mut vm = load(&l);
            for (p, counted) in packets.iter().zip(&want) {
                let got = run(&mut vm, hook, p);
                let headers = (p.len() - 14) / 8;
                if counted.out_of_budget {
                    looping += 1;
                } else if headers > LOOP_WALK_STEPS {
                    // Longer than the bound without looping: the documented difference.
                    continue;
                }
                runs += 1;
                assert_eq!(got, u64::from(counted.ret), "`{expr}` {hook:?} on {p:02x?}");
            }
        }
    }
    assert!(runs > 100 && looping > 0, "{runs} runs, {looping} looping");
}

#[test]
fn other_link_types_are_refused_by_name() {
    let resolver = resolver();
    let c = pipeline::compile("ip", &Options::new(LinkType::RAW, &resolver)).unwrap();
    let e = ebpf::lower(&c, &EbpfOptions::new(Hook::Xdp)).unwrap_err();
    assert_eq!(e.kind, EbpfGenErrorKind::LinkType(LinkType::RAW));
    assert_eq!(e.at, None);
    assert!(e.to_string().contains("link type RAW"), "{e}");
}

#[test]
fn ancillary_loads_are_refused_where_they_are() {
    let resolver = resolver();
    let opts = Options::new(LinkType::EN10MB, &resolver).linux_ext(true);
    let c = pipeline::compile("tcp or ifindex 3", &opts).unwrap();
    let e = ebpf::lower(&c, &EbpfOptions::new(Hook::Tc)).unwrap_err();
    assert_eq!(e.kind, EbpfGenErrorKind::Ancillary { offset: 8 });
    let at = e.at.expect("located");
    let block = &c.cfg.block(at.block).stmts;
    assert!(matches!(
        block[at.stmt.unwrap()],
        sift_compile::ir::Stmt::Ld(sift_compile::ir::Src::Abs(_, 0xffff_f008))
    ));
    assert_eq!(
        ebpf::EbpfGenError {
            kind: e.kind.clone(),
            at: Some(At { block: BlockId(3), stmt: Some(1) })
        }
        .to_string(),
        "block b3, statement 1: the Linux ancillary load SKF_AD_OFF+8 (socket metadata: \
         `inbound`, `ifindex`, `vlan` with Linux extensions) has no eBPF form: compile without \
         Linux extensions"
    );
}

/// Copied loads whose stack address cannot be aligned with their cluster's others are read
/// byte by byte (the verifier refuses misaligned stack accesses): same values as classic.
#[test]
fn misaligned_copies_read_bytes_in_network_order() {
    let resolver = resolver();
    let frames = crate::base_frames(0x3a1, 80);
    let mut t = crate::vm::Tally::default();
    for expr in [
        "ether[1:2] + ether[2:2] + ether[4:4] = 5",
        "ether[0:4] = ether[1:4] or ether[3:2] > ether[6:2]",
        "ip and ip[1:2] != ip[2:2] and ip[5:4] > 7",
        "tcp and tcp[1:4] > tcp[2:4] and tcp[3:2] < tcp[5:2]",
    ] {
        let f = compile(&resolver, expr, None).unwrap();
        let socket = ebpf::lower(&f.compiled, &EbpfOptions::new(Hook::SocketFilter)).unwrap();
        assert!(
            socket.listing().contains("<<= 8\n"),
            "`{expr}` reads bytes:\n{}",
            socket.listing()
        );
        crate::vm::check(&f, &crate::packets_for(&f, &frames, 9, 40), &mut t);
    }
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n\n"));
}
