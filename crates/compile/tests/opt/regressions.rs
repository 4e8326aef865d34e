//! Known libpcap optimizer failures, and the optimizer's own edge cases, one test each.

use crate::common::link;
use sift_compile::CompileError;
use sift_compile::pipeline::{self, Options};
use sift_filter::SystemResolver;
use sift_insn::Program;
use sift_verify::{Mode, validate};

fn opts_for<'a>(name: &str, resolver: &'a SystemResolver) -> Options<'a> {
    Options::new(link(name), resolver)
}

/// Compiles through the pipeline (which validates) on EN10MB.
fn compile_in(name: &str, src: &str, optimize: bool) -> Result<Program, CompileError> {
    let r = SystemResolver::new();
    pipeline::compile(src, &opts_for(name, &r).optimize(optimize)).map(|c| c.program.to_program())
}

fn compile(src: &str, optimize: bool) -> Result<Program, CompileError> {
    compile_in("EN10MB", src, optimize)
}

fn run(p: &Program, pkt: &[u8]) -> u32 {
    let v = validate(p, Mode::Libpcap).expect("valid");
    sift_vm::run(&v, pkt, pkt.len() as u32)
}

fn listing(p: &Program) -> String {
    sift_insn::text::listing(p)
}

/// An Ethernet + IPv4 frame of `len` bytes with source and destination addresses.
fn ipv4(len: usize, src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[12] = 0x08;
    f[14] = 0x45;
    f[23] = 6;
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    f.truncate(len);
    f
}

/// libpcap issue 1699: `1/2=1/3&&1>4/5&&1>6/7` is 0=0 and 1>0 and 1>0, always true; libpcap's
/// optimizer folds it to always-false. sift compiles it to a lone accepting `ret`.
#[test]
fn issue_1699_constant_divisions_fold_to_accept() {
    let src = "1/2=1/3&&1>4/5&&1>6/7";
    let unopt = compile(src, false).unwrap();
    let opt = compile(src, true).unwrap();
    assert_eq!(listing(&opt), "(000) ret      #262144\n");
    for pkt in [&[][..], &[0u8; 14][..], &ipv4(60, [1; 4], [2; 4])[..]] {
        assert_eq!(run(&unopt, pkt), 262144);
        assert_eq!(run(&opt, pkt), 262144);
    }
    if let Ok(pcap) = sift_libpcap::Libpcap::load() {
        match pcap.compile(sift_compile::pipeline::LinkType::EN10MB, 262144, src, true, !0) {
            Ok(p) => println!("{} optimized:\n{}", pcap.version(), sift_insn::text::listing(&p)),
            Err(e) => println!("{} optimized: {e}", pcap.version()),
        }
    }
}

/// `jset #0xffffffff` means A != 0 (libpcap treated it as always true until 2026; 1.10 answers
/// "rejects all packets" for `x & 0xffffffff == 0`).
#[test]
fn jset_all_ones_is_a_nonzero_test() {
    for src in [
        "ether[0] & 0xffffffff == 0",
        "ether[0] & 0xffffffff != 0",
        "ether[0] != 0 and ether[0] & 0xffffffff != 0",
        "ether[0] = 0 or ether[0] & 0xffffffff = 0",
        "ether[0] & 0xffffffff != 0 and ether[0] = 0",
    ] {
        let unopt = compile(src, false).unwrap();
        let opt = match compile(src, true) {
            Ok(p) => p,
            Err(e) if e.is_rejects_all() => {
                assert!((0..=255u8).all(|b| run(&unopt, &[b; 20]) == 0), "{src}: wrong reject-all");
                continue;
            }
            Err(e) => panic!("{src}: {e}"),
        };
        for b in 0..=255u8 {
            assert_eq!(run(&unopt, &[b; 20]), run(&opt, &[b; 20]), "{src} on byte {b:#x}");
        }
    }
    // The plain test must not be folded either way.
    let opt = compile("ether[0] & 0xffffffff == 0", true).unwrap();
    assert_eq!(run(&opt, &[0; 20]), 262144);
    assert_eq!(run(&opt, &[1; 20]), 0);
}

/// libpcap issue 430: its optimizer regroups host tests ahead of loads that can fail, so its
/// program accepts a truncated frame the unoptimized program rejects. sift's does not.
#[test]
fn issue_430_truncated_frames_keep_their_answer() {
    let src = "host 1.1.1.1 or host 2.2.2.2 or host 3.3.3.3";
    let unopt = compile(src, false).unwrap();
    let opt = compile(src, true).unwrap();
    // 30 bytes: the source address is there, the destination is not.
    let short = ipv4(30, [2, 2, 2, 2], [9; 4]);
    assert_eq!(run(&unopt, &short), 0);
    assert_eq!(run(&opt, &short), 0);
    let full = ipv4(60, [2, 2, 2, 2], [9; 4]);
    assert_eq!(run(&opt, &full), 262144);
    assert!(opt.len() < unopt.len());
    if let Ok(pcap) = sift_libpcap::Libpcap::load() {
        let theirs =
            pcap.compile(sift_compile::pipeline::LinkType::EN10MB, 262144, src, true, !0).unwrap();
        println!(
            "libpcap optimized ({} insns) on the 30-byte frame: {} (sift: {} insns)",
            theirs.len(),
            pcap.filter(&theirs, &short, 30),
            opt.len()
        );
    }
}

/// A divisor that folds to zero: the unoptimized program ends with 0 on every packet, so the
/// optimized one is "rejects all packets" (libpcap refuses with "division by zero").
#[test]
fn folded_zero_divisor_rejects_all() {
    let src = "ip[0] / (1 - 1) = 0";
    let unopt = compile(src, false).unwrap();
    for pkt in [&ipv4(60, [1; 4], [2; 4])[..], &[0u8; 60][..]] {
        assert_eq!(run(&unopt, pkt), 0);
    }
    assert!(compile(src, true).is_err_and(|e| e.is_rejects_all()));
}

/// Impossible combinations are "rejects all packets" only when optimizing, as in libpcap.
#[test]
fn rejects_all_only_when_optimizing() {
    assert!(compile_in("IPV4", "ip6 and igmp", false).is_ok());
    let e = compile_in("IPV4", "ip6 and igmp", true).unwrap_err();
    assert!(e.is_rejects_all(), "{e}");
    assert!(compile("tcp and udp", true).is_err_and(|e| e.is_rejects_all()));
    assert!(compile("tcp and udp", false).is_ok());
}

/// Filters that accept everything compile to a single `ret`.
#[test]
fn always_accepting_filters_are_one_return() {
    for src in ["", "1 = 1", "len >= 0", "not (2 > 3)"] {
        let opt = compile(src, true).unwrap();
        assert_eq!(listing(&opt), "(000) ret      #262144\n", "{src}");
    }
    // Not so when a load can still fail: `tcp or not tcp` rejects frames shorter than 14
    // bytes, optimized or not.
    let opt = compile("tcp or not tcp", true).unwrap();
    let unopt = compile("tcp or not tcp", false).unwrap();
    for len in [0, 10, 13, 14, 60] {
        let f = ipv4(len, [1; 4], [2; 4]);
        assert_eq!(run(&opt, &f), run(&unopt, &f), "{len} bytes");
    }
    assert_eq!(run(&opt, &[0; 10]), 0);
}

fn hosts(n: usize) -> String {
    let list: Vec<String> = (1..=n)
        .map(|i| format!("host 10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255))
        .collect();
    format!("not ({})", list.join(" or "))
}

/// Long host lists: branches beyond 255 instructions get `ja` trampolines; the optimized
/// program still answers as the unoptimized one, on full and truncated frames.
#[test]
fn long_host_list_with_far_branches() {
    let src = hosts(400);
    let unopt = compile(&src, false).unwrap();
    let opt = compile(&src, true).unwrap();
    assert!(opt.iter().any(|i| i.code == sift_insn::code::BPF_JMP | sift_insn::code::BPF_JA));
    assert!(opt.len() * 2 < unopt.len(), "{} vs {}", opt.len(), unopt.len());
    for (i, len) in [(1u32, 60), (399, 60), (400, 60), (401, 60), (7, 30), (7, 34), (0, 10)] {
        let a = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
        for f in [ipv4(len, a, [9; 4]), ipv4(len, [9; 4], a)] {
            assert_eq!(run(&unopt, &f), run(&opt, &f), "host {i}, {len} bytes");
        }
    }
}

/// 10,000 hosts compile optimized (no stack overflow, no blow-up).
#[test]
fn ten_thousand_hosts_compile() {
    let src = hosts(10_000);
    let opt = compile(&src, true).unwrap();
    assert!(opt.len() < 70_000, "{} instructions", opt.len());
    let f = ipv4(60, [10, 0, 39, 16], [9; 4]); // host 10000
    assert_eq!(run(&opt, &f), 0);
    assert_eq!(run(&opt, &ipv4(60, [10, 0, 39, 17], [9; 4])), 262144);
}

/// Optimizes a hand-written listing (lifted to a graph) and checks that, on frames of every
/// length up to `max_len` filled with each of `fills`, the result returns what the original
/// returns in both interpreter flavors. Returns the optimized listing.
fn optimize_listing(text: &str, max_len: usize, fills: &[u8]) -> String {
    let prog = sift_insn::text::parse(text).unwrap();
    let mut cfg = sift_compile::lift::lift(&prog).unwrap();
    sift_compile::optimize(&mut cfg);
    let opt = sift_compile::emit::emit(&cfg).unwrap();
    let (vp, vo) =
        (validate(&prog, Mode::Libpcap).unwrap(), validate(&opt, Mode::Libpcap).unwrap());
    for flavor in [sift_vm::Flavor::Libpcap, sift_vm::Flavor::Linux] {
        let a = sift_vm::Interpreter::with_flavor(&vp, flavor);
        let b = sift_vm::Interpreter::with_flavor(&vo, flavor);
        for &fill in fills {
            for len in 0..=max_len {
                let pkt = vec![fill; len];
                assert_eq!(
                    a.run(&pkt, len as u32),
                    b.run(&pkt, len as u32),
                    "{flavor:?}, {len} bytes of {fill:#x}\n{text}\noptimized:\n{}",
                    listing(&opt)
                );
            }
        }
    }
    listing(&opt)
}

/// A dead `[x + k]` load may not lean on a later absolute load that reads further: with X an
/// IPv4 header length of up to 60, `ldb [x + 8]` fails on 67-byte packets where `ld [34]` does
/// not (found by `opt_programs` while the length bounds were written).
#[test]
fn dead_indexed_load_is_not_covered_by_an_absolute_one() {
    let text = "(000) ldxb 4*([0]&0xf)\n(001) ldb [x + 8]\n(002) ld [34]\n(003) ret a\n";
    let opt = optimize_listing(text, 80, &[0x0f, 0x45, 0]);
    assert!(opt.contains("[x + 8]"), "{opt}");
}

/// A dead absolute load whose failure every path to a non-zero return anticipates (a later
/// load reads further) goes; one that some accepting path does not anticipate stays.
#[test]
fn dead_absolute_load_goes_only_where_its_failure_is_anticipated() {
    let anticipated = "(000) ld [30]\n(001) ldb [10]\n(002) jeq #1 jt 3 jf 5\n\
                       (003) ldb [40]\n(004) ret a\n(005) ret #0\n";
    let opt = optimize_listing(anticipated, 50, &[1, 0]);
    assert!(!opt.contains("[30]"), "{opt}");
    let not_anticipated = "(000) ld [30]\n(001) ldb [10]\n(002) jeq #1 jt 3 jf 5\n\
                           (003) ldb [40]\n(004) ret a\n(005) ret #5\n";
    let opt = optimize_listing(not_anticipated, 50, &[1, 0]);
    assert!(opt.contains("[30]"), "{opt}");
    // Known long enough on every path (not only a dominating one): the join of two paths that
    // both read past byte 34 makes `ld [30]` unable to fail.
    let joined = "(000) ldb [0]\n(001) jeq #1 jt 2 jf 4\n(002) ld [40]\n(003) ja 5\n\
                  (004) ld [36]\n(005) ld [30]\n(006) ret #7\n";
    let opt = optimize_listing(joined, 50, &[1, 0]);
    assert!(!opt.contains("[30]"), "{opt}");
}

/// `[x + k]` after `add x; tax` folds its constant into the offset only when no engine can
/// wrap the sum: with `X = 4*(IHL) - 32`, a header length of 60 makes the original load read
/// byte 42, which a folded `[x + 0xfffffff2]` would not.
#[test]
fn index_fold_refuses_offsets_that_wrap() {
    let src = "icmp[-32:1] = 0";
    let unopt = compile(src, false).unwrap();
    let opt = compile(src, true).unwrap();
    let mut f = ipv4(80, [1; 4], [2; 4]);
    f[14] = 0x4f; // IHL 15: 60 bytes
    f[23] = 1; // ICMP
    for len in [34, 42, 43, 60, 80] {
        let mut g = f.clone();
        g.truncate(len);
        assert_eq!(run(&unopt, &g), run(&opt, &g), "{len} bytes\n{}", listing(&opt));
    }
    assert_eq!(run(&opt, &f), 262144);
    // A large positive constant folds (the sum cannot wrap): one `[x + k]` load, no `tax`.
    let src = "(link[4:4] * icmp[0xfead241a:2]) != 0xb21b34d5";
    let opt = compile_in("C_HDLC", src, true).unwrap();
    assert!(!listing(&opt).contains("add      x"), "{}", listing(&opt));
}

/// Frames for the pull-up checks: Ethernet + IPv4 (TCP, ports 80/53) and Ethernet + IPv6
/// (TCP, ports 53/80) with the addresses the expressions name, cut at every length.
fn pullup_frames() -> Vec<Vec<u8>> {
    let mut v4 = ipv4(60, [10, 1, 0, 3], [10, 0, 0, 1]);
    v4[34..38].copy_from_slice(&[0, 80, 0, 53]);
    let mut v4b = ipv4(60, [10, 0, 0, 10], [10, 0, 0, 11]);
    v4b[34..38].copy_from_slice(&[0, 53, 0, 80]);
    let mut v6 = vec![0u8; 80];
    v6[12..14].copy_from_slice(&[0x86, 0xdd]);
    v6[20] = 6;
    v6[54..58].copy_from_slice(&[0, 53, 0, 80]);
    let mut out = Vec::new();
    for f in [v4, v4b, v6] {
        for len in 0..=f.len() {
            out.push(f[..len].to_vec());
        }
    }
    out
}

/// The pull-up's new cases keep every answer on truncated frames: tests that leave the run on
/// different outcomes (`ip host a and ip src host b`), runs of two tests using the value A
/// holds on entry (`host a and b`, `tcp port 80 and 53`, a second run after a first), and
/// heads with statements before their test (`ldxb` then the port).
#[test]
fn pullup_keeps_answers_on_truncated_frames() {
    for src in [
        "ip host 10.0.0.1 and ip src host 10.1.0.3",
        "host 10.0.0.11 and 10.0.0.10",
        "tcp port 80 and 53",
        "not tcp port 9 and 53",
        "not host 10.0.0.1 and not 255.255.255.255 and 10.1.0.3",
        "!(tcp port 6081 or 80)",
        "udp port 6081 or 80 or 53",
    ] {
        let unopt = compile(src, false).unwrap();
        let opt = compile(src, true).unwrap();
        for f in pullup_frames() {
            assert_eq!(run(&unopt, &f), run(&opt, &f), "{src} on {} bytes", f.len());
        }
    }
    // The mixed-polarity run loads the source address once.
    let opt = compile("ip host 10.0.0.1 and ip src host 10.1.0.3", true).unwrap();
    assert_eq!(listing(&opt).matches("ld       [26]").count(), 1, "{}", listing(&opt));
}

/// A comparison already made on every path into a block decides a branch there, even when the
/// paths loaded A from different places (value numbers differ, no dominating branch says it).
#[test]
fn comparison_made_on_every_path_decides_the_branch() {
    let text = "(000) ldb [0]\n(001) jeq #1 jt 2 jf 4\n(002) ldb [1]\n(003) jeq #5 jt 8 jf 6\n\
                (004) ldb [2]\n(005) jeq #5 jt 8 jf 6\n(006) jeq #5 jt 7 jf 9\n\
                (007) ret #1\n(008) ret #2\n(009) ret #3\n";
    let opt = optimize_listing(text, 4, &[0, 1, 5]);
    assert!(!opt.contains("ret      #1\n"), "{opt}");
    // The same in gencode's output: the repeated `10.0.0.12` after the IPv4 and ARP tests.
    let src = "!(src or dst host 10.0.0.12 or 224.0.0.1 or 10.0.0.12)";
    let unopt = compile(src, false).unwrap();
    let opt = compile(src, true).unwrap();
    assert_eq!(listing(&opt).matches("#0xa00000c").count(), 4, "{}", listing(&opt));
    let mut arp = vec![0u8; 42];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    arp[28..32].copy_from_slice(&[10, 0, 0, 12]);
    for f in [ipv4(60, [10, 0, 0, 12], [1; 4]), ipv4(60, [1; 4], [10, 0, 0, 12]), arp] {
        for len in 0..=f.len() {
            assert_eq!(run(&unopt, &f[..len]), run(&opt, &f[..len]), "{len} bytes");
        }
    }
}

/// The pull-up may move a test ahead of an absolute load when every continuation after the run
/// fails on the packets that load fails on (here both read past byte 30): a short packet
/// answers 0 either way. Without such a continuation (a constant return), it may not.
#[test]
fn pullup_moves_tests_only_ahead_of_anticipated_failures() {
    let run = |tail: &str| {
        format!(
            "(000) ldb [0]\n(001) jeq #1 jt 6 jf 2\n(002) ldb [20]\n(003) jeq #1 jt 6 jf 4\n\
             (004) ldb [0]\n(005) jeq #2 jt 6 jf 8\n{tail}"
        )
    };
    let anticipated = run("(006) ld [30]\n(007) ret a\n(008) ld [40]\n(009) ret #5\n");
    let not_anticipated = run("(006) ret #7\n(007) ret a\n(008) ld [40]\n(009) ret #5\n");
    for (text, moved) in [(anticipated, true), (not_anticipated, false)] {
        let prog = sift_insn::text::parse(&text).unwrap();
        let mut cfg = sift_compile::lift::lift(&prog).unwrap();
        sift_compile::optimize(&mut cfg);
        let opt = sift_compile::emit::emit(&cfg).unwrap();
        let (vp, vo) =
            (validate(&prog, Mode::Libpcap).unwrap(), validate(&opt, Mode::Libpcap).unwrap());
        for b0 in 0..4u8 {
            for b20 in 0..3u8 {
                for len in 0..=48 {
                    let mut pkt = vec![9u8; 48];
                    pkt[0] = b0;
                    pkt[20] = b20;
                    pkt.truncate(len);
                    assert_eq!(
                        sift_vm::run(&vp, &pkt, len as u32),
                        sift_vm::run(&vo, &pkt, len as u32),
                        "[0]={b0} [20]={b20}, {len} bytes\n{}",
                        listing(&opt)
                    );
                }
            }
        }
        assert_eq!(listing(&opt).matches("ldb      [0]").count() == 1, moved, "{}", listing(&opt));
    }
}
