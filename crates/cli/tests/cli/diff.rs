//! `sift diff` over the libpcap corpus: every Ethernet expression of its accept cases, on a
//! generated Ethernet capture with truncated frames, must get the same verdicts from every
//! engine that can run it (interpreter, JIT, libpcap, the kernel's eBPF test run and socket
//! filter, CSPF). As root (CI) the kernel engines must have run on every expression.

use std::process::Command;

use sift_filetests::Corpus;

fn sift(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap()
}

#[test]
fn corpus_expressions_agree_on_every_engine() {
    let Some(corpus) = Corpus::load_default() else {
        sift_testkit::oracle_missing::<()>("the libpcap corpus", "../shared not found");
        return;
    };
    let mut exprs: Vec<&str> = corpus
        .accept
        .iter()
        .filter(|c| c.link.name().unwrap() == "EN10MB" && !c.linuxext && c.skip.is_none())
        .map(|c| c.expr.as_str())
        .filter(|e| !e.contains('\n'))
        .collect();
    exprs.sort_unstable();
    exprs.dedup();
    assert!(exprs.len() > 300, "only {} expressions", exprs.len());
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("exprs.txt");
    std::fs::write(&list, exprs.join("\n")).unwrap();
    let cap = dir.path().join("mix.pcap");
    let cap_s = cap.to_str().unwrap();
    let o = sift(&["gen", "-c", "400", "--seed", "8", "--truncate", "0.1", "-w", cap_s]);
    assert!(o.status.success());
    let o = sift(&["diff", "-r", cap_s, "--expressions", list.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    let summary = out.lines().last().unwrap_or("");
    println!("{summary}");
    assert!(o.status.success(), "engines disagree:\n{}", {
        let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("agree")).take(60).collect();
        lines.join("\n")
    });
    let compared: usize = summary.split_whitespace().next().unwrap().parse().unwrap();
    assert!(compared > 250, "{summary}");
    let runs = |engine: &str| -> usize {
        summary
            .split(&format!("{engine} "))
            .nth(1)
            .and_then(|s| s.split([',', ' ']).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(runs("jit"), compared, "{summary}");
    assert!(runs("cspf") > 50, "CSPF should express many corpus expressions: {summary}");
    let libpcap = sift_testkit::oracle("system libpcap", sift_libpcap::Libpcap::load());
    if libpcap.is_some() {
        // libpcap 1.10 does not know the EtherType names `lldp` and `slow` nor `vxlan` (all
        // added in 1.11).
        let newer = exprs
            .iter()
            .filter(|e| e.contains("lldp") || e.contains("slow") || e.contains("vxlan"))
            .count();
        assert!(runs("libpcap") + newer >= compared, "{summary}");
    }
    // The kernel engines need root.
    let root = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.contains("\t0\t")));
    if !root {
        sift_testkit::oracle_missing::<()>("the kernel engines", "not root");
        return;
    }
    assert_eq!(runs("kernel-ebpf"), compared, "{summary}");
    assert_eq!(runs("kernel-socket"), compared, "{summary}");
}

#[test]
fn a_single_expression_prints_every_engine() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/http.pcap");
    let o = sift(&["diff", "-r", sample, "tcp port 80"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    for engine in ["interp", "jit", "libpcap", "kernel-ebpf", "kernel-socket", "cspf"] {
        assert!(out.lines().any(|l| l.starts_with(engine)), "{engine} missing:\n{out}");
    }
    assert!(out.contains("agree on every packet"), "{out}");
    let o = sift(&["diff", "-r", sample, "tcp port"]);
    assert_eq!(o.status.code(), Some(1));
}
