//! `sift compile` against the installed tcpdump.

use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().expect("run sift")
}

/// `tcpdump ARGS` when tcpdump is installed (skips otherwise, fails under
/// `SIFT_REQUIRE_ORACLES=1`).
fn tcpdump(args: &[&str]) -> Option<String> {
    let path = sift_testkit::tool("tcpdump")?;
    let out = Command::new(path).args(args).output().expect("run tcpdump");
    assert!(out.status.success(), "tcpdump {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn listing_equals_tcpdump_byte_for_byte() {
    let cases: &[&[&str]] = &[
        &["tcp port 80"],
        &["-y", "EN10MB", "ip", "and", "udp", "dst", "port", "53"],
        &["-y", "RAW", "host 10.1.2.3 or net 192.168.0.0/16"],
        &["-y", "LINUX_SLL", "-s", "96", "tcp[13] & 2 != 0"],
        &["-y", "EN10MB", "-dd", "ether host 00:11:22:33:44:55"],
        &["-y", "NULL", "-ddd", "ip6 and icmp6"],
        // `protochain`: libpcap's loop, instruction for instruction.
        &["ip6 protochain 6"],
        &["-y", "RAW", "ip protochain 17"],
        &["-y", "LINUX_SLL", "protochain 58 and tcp port 80"],
        &["-y", "EN10MB", "-dd", "not ip6 protochain 44 or udp"],
    ];
    for args in cases {
        let (flags, expr) = args.split_at(args.len() - 1);
        let mut theirs = flags.to_vec();
        if !theirs.iter().any(|a| a.starts_with("-d")) {
            theirs.push("-d");
        }
        if !theirs.contains(&"-y") {
            theirs.extend(["-y", "EN10MB"]);
        }
        theirs.push("-O");
        theirs.push(expr[0]);
        let Some(expected) = tcpdump(&theirs) else { return };
        let mut ours = vec!["compile", "-O"];
        ours.extend_from_slice(args);
        let out = sift(&ours);
        assert!(out.status.success(), "{ours:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{ours:?}");
    }
}

#[test]
fn default_is_en10mb_listing() {
    let out = sift(&["compile", "-O", "tcp port 80"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("(000) ldh      [12]\n(001) jeq      #0x86dd"), "{text}");
    assert!(text.ends_with("ret      #262144\n(021) ret      #0\n"), "{text}");
}

/// Optimized by default, like `tcpdump -d`: for these filters sift's optimizer gives
/// libpcap's optimized listing exactly.
#[test]
fn optimized_listing_equals_tcpdump() {
    for expr in ["tcp port 80", "ip", "host 10.0.0.1", "ip and udp dst port 53", "ip6 and icmp6"] {
        let Some(expected) = tcpdump(&["-y", "EN10MB", "-d", expr]) else { return };
        let out = sift(&["compile", expr]);
        assert!(out.status.success(), "{expr}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{expr}");
    }
}

/// `protochain` is libpcap's loop of 29 instructions (`ip6 protochain 6` optimized is
/// libpcap's 36-instruction program, which libpcap never optimizes); `--kernel` unrolls it,
/// forward jumps only, within the kernel's 4,096 instructions.
#[test]
fn protochain_loops_and_unrolls_for_the_kernel() {
    let lines = |args: &[&str]| {
        let out = sift(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect::<Vec<_>>()
    };
    let looped = lines(&["compile", "ip6 protochain 6"]);
    assert_eq!(looped.len(), 36, "{looped:?}");
    assert!(looped.contains(&"(018) ja       4".to_string()), "{looped:?}");
    if let Some(expected) = tcpdump(&["-y", "EN10MB", "-d", "ip6 protochain 6"]) {
        assert_eq!(looped.join("\n") + "\n", expected);
    }
    for expr in ["ip6 protochain 6", "ip6 protochain 6 and host ::1", "protochain 17"] {
        let unrolled = lines(&["compile", "--kernel", expr]);
        assert!(unrolled.len() > 1000 && unrolled.len() <= 4096, "{expr}: {}", unrolled.len());
        for line in &unrolled {
            // `(NNN) ja       TARGET`: every `ja` goes forward.
            if let Some(target) = line.strip_prefix('(').and_then(|l| l.split_once(") ja ")) {
                let (at, to) = (target.0.parse::<usize>().unwrap(), target.1.trim());
                assert!(to.parse::<usize>().unwrap() > at, "{expr}: {line}");
            }
        }
    }
}

/// libpcap's "expression rejects all packets", only when optimizing.
#[test]
fn rejects_all_packets_only_when_optimizing() {
    let out = sift(&["compile", "tcp and udp"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "error: expression rejects all packets\n");
    assert!(out.stdout.is_empty());
    let out = sift(&["compile", "-O", "tcp and udp"]);
    assert!(out.status.success());
}

/// `--dump-cfg` prints Graphviz dot, optimized unless `-O`; `-F` reads the expression.
#[test]
fn dump_cfg_and_expression_file() {
    let out = sift(&["compile", "--dump-cfg", "ip and tcp"]);
    assert!(out.status.success());
    let dot = String::from_utf8(out.stdout).unwrap();
    assert!(dot.starts_with("digraph cfg {"), "{dot}");
    let unopt = sift(&["compile", "-O", "--dump-cfg", "tcp port 80"]);
    let opt = sift(&["compile", "--dump-cfg", "tcp port 80"]);
    assert!(unopt.stdout.len() > opt.stdout.len());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("filter");
    std::fs::write(&path, "tcp port 80\n").unwrap();
    let from_file = sift(&["compile", "-F", path.to_str().unwrap()]);
    assert!(from_file.status.success());
    assert_eq!(from_file.stdout, sift(&["compile", "tcp port 80"]).stdout);
}

#[test]
fn bad_expression_exits_1_with_a_caret_diagnostic() {
    let out = sift(&["compile", "tcp port 70000"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "error: port 70000 is out of range (0–65535)\n  tcp port 70000\n           ^^^^^\n"
    );
    assert!(out.stdout.is_empty());

    // A code-generation error points at the primitive.
    let out = sift(&["compile", "-y", "RAW", "ether broadcast"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "error: `broadcast` is not available on link type RAW (Raw IP): it has no MAC addresses\n"
        ),
        "{err}"
    );
    assert!(err.contains('^'), "{err}");

    // Beyond what sift supports (more protochain walks than one filter may hold): said so.
    let out = sift(&[
        "compile",
        "protochain 1 or protochain 2 or protochain 3 or protochain 4 or protochain 5",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: too many `protochain` walks in one filter (limit 8)"), "{err}");
}

/// sift's own wording, located: the source line with carets, exit status 1, nothing on stdout.
#[test]
fn out_of_range_and_deep_nesting_are_located_errors() {
    let out = sift(&["compile", "port 99999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: port 99999 is out of range (0–65535)\n  port 99999\n       ^^^^^\n"
    );

    let deep = format!("{}ip{}", "(".repeat(300), ")".repeat(300));
    let out = sift(&["compile", &deep]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "error: expression nested too deeply (limit 256)", "{err}");
    // The line is shown as a window around the error; the caret is under a `(`, the 257th.
    let caret = lines[2].chars().position(|c| c == '^').expect("a caret");
    assert_eq!(lines[2].trim(), "^", "{err}");
    assert_eq!(lines[1].chars().nth(caret), Some('('), "{err}");
    let shown_after = lines[1].chars().skip(caret).take_while(|&c| c == '(').count();
    assert_eq!(shown_after, 300 - 256, "{err}");
}
