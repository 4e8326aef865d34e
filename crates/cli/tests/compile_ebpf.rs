//! `sift compile --target ebpf|xdp|tc`: the native eBPF program, one instruction a line, as
//! `sift_compile::ebpf` lowers it (the semantics are tested there, against the classic program
//! on sift's VMs and in the kernel).

use std::process::{Command, Output};

use sift_compile::ebpf::{self, EbpfOptions, Hook};
use sift_compile::pipeline::{self, LinkType, Mode, Options};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().expect("run sift")
}

fn stdout(args: &[&str]) -> String {
    let out = sift(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// What the library gives for `expr` at `hook` (walks as deep as the kernel's classic program
/// unrolls them, as the command compiles).
fn library(expr: &str, opts: EbpfOptions) -> String {
    let resolver = sift_filter::TableResolver::well_known();
    let popts = Options::new(LinkType::EN10MB, &resolver).mode(Mode::Libpcap);
    let compiled = pipeline::compile(expr, &popts).unwrap();
    ebpf::lower(&compiled, &opts).unwrap().listing()
}

#[test]
fn each_target_prints_the_lowered_program() {
    for (target, hook) in [("xdp", Hook::Xdp), ("tc", Hook::Tc), ("ebpf", Hook::SocketFilter)] {
        for expr in ["tcp port 80", "ip6 protochain 6", "len > 100 and not arp"] {
            let text = stdout(&["compile", "--target", target, expr]);
            assert_eq!(text, library(expr, EbpfOptions::new(hook)), "{target} {expr}");
            // One instruction a line, numbered by slot, ending in `exit`.
            assert!(text.lines().all(|l| l.split_once(": ").is_some()), "{text}");
            assert!(text.ends_with(": exit\n"), "{text}");
        }
    }
    // The walk is a loop.
    let xdp = stdout(&["compile", "--target", "xdp", "ip6 protochain 6"]);
    assert!(xdp.lines().count() < 100, "{xdp}");
    assert!(xdp.contains("goto -"), "a backward jump: {xdp}");
}

#[test]
fn a_socket_filter_keeps_the_snapshot_length() {
    let text = stdout(&["compile", "--target", "ebpf", "-s", "96", "udp"]);
    let opts = EbpfOptions::new(Hook::SocketFilter).verdicts(96, 0);
    assert_eq!(text, library("udp", opts));
    assert!(text.contains("w0 = 96\n"), "{text}");
}

#[test]
fn what_ebpf_cannot_take_is_refused() {
    // Not Ethernet.
    let out = sift(&["compile", "--target", "xdp", "-y", "RAW", "ip"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("link type RAW") && err.contains("EN10MB"), "{err}");
    // Classic BPF's other output forms.
    let out = sift(&["compile", "--target", "tc", "-dd", "ip"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-dd and -ddd"));
    // A bad expression: the usual diagnostic.
    let out = sift(&["compile", "--target", "xdp", "port 99999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("^^^^^"));
    // The default target is still classic BPF.
    assert!(stdout(&["compile", "ip"]).starts_with("(000) ldh      [12]\n"));
}
