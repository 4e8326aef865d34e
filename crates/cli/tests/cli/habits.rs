//! What a tcpdump user types, against tcpdump itself: options as getopt takes them, tcpdump's
//! flags (`-A`, `-#`, `-T`, `-K`, `-d`…), local time, exit statuses and messages; and what no
//! user should meet: panics on output errors, unbounded reads, errors said twice, filter files
//! refused for a byte in a comment.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap()
}

fn tcpdump(args: &[&str]) -> Option<Output> {
    let path = sift_testkit::tool("tcpdump")?;
    Some(Command::new(path).args(args).output().unwrap())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples").join(name).display().to_string()
}

fn corpus(name: &str) -> Option<String> {
    let path = sift_testkit::shared_dir().join("corpus/tcpdump/tests").join(name);
    if path.exists() {
        Some(path.display().to_string())
    } else {
        sift_testkit::oracle_missing("tcpdump's test captures", path.display())
    }
}

/// sift and tcpdump print the same bytes on standard output and exit alike.
#[track_caller]
fn same_as_tcpdump(args: &[&str]) {
    let ours = sift(args);
    let Some(theirs) = tcpdump(args) else { return };
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "{args:?}: exit status\nsift: {}\ntcpdump: {}",
        text(&ours.stderr),
        text(&theirs.stderr)
    );
    assert!(
        ours.stdout == theirs.stdout,
        "{args:?}: standard output differs\n--- sift\n{}\n--- tcpdump\n{}",
        text(&ours.stdout),
        text(&theirs.stdout)
    );
}

/// sift and tcpdump exit alike (and, failing, say the same on their last line).
#[track_caller]
fn same_status_as_tcpdump(args: &[&str]) {
    let ours = sift(args);
    let Some(theirs) = tcpdump(args) else { return };
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "{args:?}: exit status\nsift: {}\ntcpdump: {}",
        text(&ours.stderr),
        text(&theirs.stderr)
    );
    // The program's own message (a diagnostic may follow it with the expression).
    let last = |o: &Output| {
        let t = text(&o.stderr);
        let mut said = t.lines().filter(|l| l.starts_with("sift: ") || l.starts_with("tcpdump: "));
        said.next_back().and_then(|l| l.split_once(": ")).map(|(_, m)| m.to_owned())
    };
    // sift's own located wording for filter errors ("error: …" with a caret) says it
    // differently on purpose; other messages are tcpdump's.
    if !theirs.status.success() && !last(&ours).unwrap_or_default().starts_with("error: ") {
        let (ours, theirs) = (last(&ours).unwrap_or_default(), last(&theirs).unwrap_or_default());
        assert!(ours.ends_with(&theirs), "{args:?}: {ours} / {theirs}");
    }
}

#[test]
fn options_are_read_as_getopt_reads_them() {
    let http = sample("http.pcap");
    let h = http.as_str();
    let path = format!("-r{h}");
    let cases: &[&[&str]] = &[
        &["-n", "-c2", "-r", h],
        &["-nc2", "-r", h],
        &["-n", &path, "-c", "3"],
        &["-n", "-s0", "-r", h, "-c1"],
        // Options after the expression, and between its words.
        &["-n", "-r", h, "tcp", "-c", "2"],
        &["-n", "-r", h, "tcp", "-c", "2", "and", "port", "80"],
        &["-r", h, "port 80", "-n", "-c1"],
        // `--` ends the options: what follows is the expression (a syntax error here).
        &["-n", "-r", h, "--", "-c", "1"],
        // Long options, abbreviated as getopt_long allows.
        &["-n", "-r", h, "--num", "-c", "2"],
        &["-n", "-r", h, "--snapshot-length=0", "-c", "1"],
        // Bad counts and snapshot lengths: refused with status 1.
        &["-n", "-r", h, "-c", "0"],
        &["-n", "-r", h, "-cx"],
        &["-n", "-r", h, "-s", "-1"],
        &["-n", "-r", h, "-s", "262145"],
    ];
    for args in cases {
        same_as_tcpdump(args);
    }
    // `-w-` is standard output: the bytes tcpdump writes.
    let Some(theirs) = tcpdump(&["-r", h, "-w-", "tcp"]) else { return };
    let ours = sift(&["-r", h, "-w-", "tcp"]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(ours.stdout, theirs.stdout);
}

#[test]
fn later_options_apply_after_a_filter_file() {
    let dir = tempfile::tempdir().unwrap();
    let filter = dir.path().join("f");
    std::fs::write(&filter, "tcp # the web\n and port 80\n").unwrap();
    let f = filter.to_str().unwrap();
    let http = sample("http.pcap");
    same_as_tcpdump(&["-n", "-r", &http, "-F", f, "-c", "3"]);
    // An operand, then an option: the option still applies (the words are ignored, -F).
    same_as_tcpdump(&["-n", "-F", f, "-r", &http, "ignored", "-c", "2", "words"]);
}

#[test]
fn unknown_options_are_named_and_exit_1() {
    for (args, says) in [
        (&["-k"][..], "invalid option -- 'k'"),
        (&["-nk", "-r", "x"][..], "invalid option -- 'k'"),
        (&["--bogus"][..], "unrecognized option '--bogus'"),
        (&["-c"][..], "option requires an argument -- 'c'"),
        (&["--n"][..], "option '--n' is ambiguous"),
        (&["-E", "esp:secret", "-r", "x"][..], "option -E is not supported by sift"),
        (&["-r", "x", "-T", "foo"][..], "unknown packet type `foo'"),
        (&["-r", "x", "-y", "FOO"][..], "invalid data link type FOO"),
    ] {
        let o = sift(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.starts_with("sift: ") && err.contains(says), "{args:?}: {err}");
        if let Some(t) = tcpdump(args) {
            assert_eq!(t.status.code(), Some(1), "tcpdump {args:?}");
            // tcpdump's words, where sift has the option too.
            if !says.contains("sift") {
                assert!(text(&t.stderr).contains(says), "tcpdump {args:?}: {}", text(&t.stderr));
            }
        }
    }
    // Subcommands still take their own options.
    let o = sift(&["compile", "-s", "96", "-d", "tcp"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn printing_flags_match_tcpdump() {
    let mut captures = vec![sample("http.pcap"), sample("dns.pcap"), sample("ping.pcap")];
    // VXLAN, raw IPv4.
    captures.extend(
        ["gso-ipv4-vxlan-ipv4.pcap", "LINKTYPE_IPV4.pcap"].iter().filter_map(|n| corpus(n)),
    );
    let option_sets: &[&[&str]] = &[
        &["-A"],
        &["-AA"],
        &["-#"],
        &["--number", "-A", "-tt"],
        &["-x", "-A"],
        &["-l"],
        &["-N", "-a"],
        &["-v", "-K"],
        &["-vv", "-K"],
        &["--nano"],
        &["--micro", "-tt"],
    ];
    for cap in &captures {
        for opts in option_sets {
            let mut args = vec!["-n", "-r", cap.as_str()];
            args.extend_from_slice(opts);
            same_as_tcpdump(&args);
        }
    }
    // -T: every UDP payload as VXLAN, or as DNS (here on port 8053). Over TCP tcpdump checks
    // DNS's length prefix, which sift's DNS printer does not do yet: not compared.
    for cap in [sample("dns.pcap"), sample("http.pcap"), sample("ping.pcap")]
        .into_iter()
        .chain(corpus("gso-ipv4-vxlan-ipv4.pcap"))
    {
        same_as_tcpdump(&["-n", "-r", &cap, "-T", "vxlan"]);
    }
    for cap in [Some(sample("dns.pcap")), corpus("dns_udp_8053.pcap")].into_iter().flatten() {
        same_as_tcpdump(&["-n", "-r", &cap, "-T", "domain"]);
        same_as_tcpdump(&["-n", "-r", &cap, "-T", "DOMAIN", "-v"]);
    }
}

#[test]
fn print_writes_and_prints() {
    let dir = tempfile::tempdir().unwrap();
    let http = sample("http.pcap");
    let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
    let ours = sift(&["-n", "-r", &http, "-w", a.to_str().unwrap(), "--print", "-U", "tcp"]);
    let Some(theirs) =
        tcpdump(&["-n", "-r", &http, "-w", b.to_str().unwrap(), "--print", "-U", "tcp"])
    else {
        return;
    };
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn y_is_checked_then_ignored_on_files() {
    let http = sample("http.pcap");
    same_as_tcpdump(&["-n", "-r", &http, "-y", "RAW", "-c", "2"]);
    same_as_tcpdump(&["-n", "-r", &http, "-y", "FOO"]);
}

#[test]
fn d_prints_the_program_for_the_file_or_y_and_exits() {
    let http = sample("http.pcap");
    let ipv4 = corpus("LINKTYPE_IPV4.pcap");
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["-O", "-d", "-r", &http, "tcp port 80"],
        vec!["-O", "-dd", "-r", &http, "udp"],
        vec!["-O", "-ddd", "-r", &http, "ip6"],
        vec!["-O", "-d", "-y", "RAW", "tcp"],
        vec!["-O", "-d", "-y", "LINUX_SLL", "-s", "96", "host 10.1.2.3"],
        vec!["-O", "-d", "tcp"],
        vec!["-O", "-d", "-s", "0", "tcp"],
        vec!["-O", "-d", "-r", &http, "-y", "RAW", "tcp"],
        vec!["-d", "-r", &http, "tcp and not tcp"],
    ];
    if let Some(f) = &ipv4 {
        cases.push(vec!["-O", "-d", "-r", f, "ip"]);
    }
    for args in &cases {
        same_as_tcpdump(args);
    }
    // Without -r or -y, tcpdump's warning.
    let o = sift(&["-d", "tcp"]);
    assert!(text(&o.stderr).contains("Warning: assuming Ethernet"));
}

#[test]
fn snaplen_0_means_262144() {
    for args in
        [&["compile", "-s", "0", "tcp"][..], &["-d", "-s", "0", "tcp"][..], &["-d", "-s0", "tcp"]]
    {
        let o = sift(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("ret      #262144"), "{args:?}: {}", text(&o.stdout));
    }
}

#[test]
fn what_libpcap_never_proves_empty_runs_and_keeps_nothing() {
    let Some(ipv4) = corpus("LINKTYPE_IPV4.pcap") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
    // libpcap runs no optimizer on protochain's loop: tcpdump keeps nothing, exit 0.
    let ours = sift(&["-r", &ipv4, "-w", a.to_str().unwrap(), "ip6 protochain 6"]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert!(text(&ours.stderr).contains("0 written"), "{}", text(&ours.stderr));
    same_as_tcpdump(&["-n", "-r", &ipv4, "ip6 protochain 6"]);
    if let Some(t) = tcpdump(&["-r", &ipv4, "-w", b.to_str().unwrap(), "ip6 protochain 6"]) {
        assert!(t.status.success());
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
    // What libpcap's optimizer proves, tcpdump refuses, and so does sift.
    same_as_tcpdump(&["-n", "-r", &ipv4, "ip6"]);
    // The 802.11 link types: libpcap optimizes only programs that stay in the link layer.
    for link in ["IEEE802_11", "IEEE802_11_RADIO", "IEEE802_11_RADIO_AVS", "PRISM_HEADER", "PPI"] {
        for expr in [
            "ip and not ip",
            "link[0] = 1 and link[0] = 2",
            "wlan[1] = 1 and wlan[1] = 2",
            "arp and not arp",
            "ip6 protochain 6 and not ip6",
        ] {
            same_status_as_tcpdump(&["-d", "-y", link, expr]);
        }
    }
    for expr in ["ip6 protochain 6 and not ip6", "tcp and not tcp", "ip protochain 17 and ip6"] {
        same_status_as_tcpdump(&["-d", "-y", "EN10MB", expr]);
    }
}

#[test]
fn timestamps_are_local_as_tcpdumps() {
    // A July and a February capture, in zones with summer time on either side, and one east.
    let captures: Vec<String> = ["PIM-SM_join_prune.pcap", "igmpv3-queries.pcap"]
        .iter()
        .filter_map(|n| corpus(n))
        .collect();
    let Some(td) = sift_testkit::tool("tcpdump") else { return };
    for tz in ["America/New_York", "Australia/Sydney", "Asia/Kolkata", "UTC"] {
        for cap in captures.iter().map(String::as_str).chain([sample("http.pcap").as_str()]) {
            for opts in [&[][..], &["-tttt"], &["-tttt", "--nano"]] {
                let mut args = vec!["-n", "-r", cap];
                args.extend_from_slice(opts);
                let run = |program: &Path| {
                    Command::new(program).env("TZ", tz).args(&args).output().unwrap().stdout
                };
                let (ours, theirs) = (run(Path::new(env!("CARGO_BIN_EXE_sift"))), run(&td));
                // The times only: how each protocol prints is the decoder's tests' business.
                let fields = if opts.is_empty() { 1 } else { 2 };
                let times = |out: &[u8]| -> Vec<String> {
                    text(out)
                        .lines()
                        .filter(|l| !l.starts_with(char::is_whitespace))
                        .map(|l| l.split(' ').take(fields).collect::<Vec<_>>().join(" "))
                        .collect()
                };
                let (ours, theirs) = (times(&ours), times(&theirs));
                assert!(!ours.is_empty());
                assert_eq!(ours, theirs, "TZ={tz} {args:?}");
            }
        }
    }
}

#[test]
fn os_errors_are_said_once_and_name_the_file() {
    let http = sample("http.pcap");
    for (args, expected) in [
        (
            &["-r", "/nonexistent/in.pcap"][..],
            "sift: /nonexistent/in.pcap: No such file or directory\n",
        ),
        (
            &["-r", &http, "-F", "/nonexistent/f"][..],
            "sift: /nonexistent/f: No such file or directory\n",
        ),
        (
            &["-r", &http, "-w", "/nonexistent/out.pcap"][..],
            "sift: /nonexistent/out.pcap: cannot create: No such file or directory\n",
        ),
        (&["-r", &http, "-w", "/dev/full"][..], "sift: /dev/full: No space left on device\n"),
        (
            &["bpf", "check", "/nonexistent/p"][..],
            "sift: /nonexistent/p: No such file or directory\n",
        ),
    ] {
        let o = sift(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        let last = err.lines().last().map(|l| format!("{l}\n")).unwrap_or_default();
        assert_eq!(last, expected, "{args:?}");
    }
}

/// A command whose standard output (or error) is `target`.
fn run_into(args: &[&str], stdout: Stdio, stderr: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(args)
        .stdout(stdout)
        .stderr(stderr)
        .output()
        .unwrap()
}

fn full() -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
}

#[test]
fn write_errors_end_with_a_message_never_a_panic() {
    let http = sample("http.pcap");
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("p");
    std::fs::write(&prog, "ret #1\n").unwrap();
    let prog = prog.to_str().unwrap();
    for args in [
        &["-r", &http, "--count"][..],
        &["-r", &http],
        &["-r", &http, "-w", "-"],
        &["-d", "tcp"],
        &["-D"],
        &["gen", "-c", "10", "-w", "-"],
        &["bpf", "disasm", prog],
        &["diff", "-r", &http, "tcp"],
    ] {
        let o = run_into(args, full(), Stdio::piped());
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} > /dev/full: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // Standard error full: nothing to say it on, but no panic either.
    let o = run_into(&["-r", &http, "-c", "1"], Stdio::null(), full());
    assert_eq!(o.status.code(), Some(0));
    let o = run_into(&["-r", "/nonexistent"], Stdio::null(), full());
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.pcap");
    let o = sift(&["gen", "-c", "20000", "-w", big.to_str().unwrap()]);
    assert!(o.status.success());
    let big = big.to_str().unwrap();
    for args in [
        &["-r", big][..],
        &["-r", big, "-w", "-"],
        &["gen", "-c", "20000", "-w", "-"],
        &["-r", big, "-A"],
        &["-d", "tcp or udp or icmp"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sift"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -c 10`: read a little, then close.
        let mut head = [0u8; 10];
        let _ = child.stdout.as_mut().unwrap().read(&mut head);
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("sift:"), "{args:?}: {err}");
    }
}

#[test]
fn text_inputs_are_bounded() {
    let http = sample("http.pcap");
    for args in [
        &["-r", &http, "-F", "/dev/zero"][..],
        &["compile", "-F", "/dev/zero"],
        &["bpf", "check", "/dev/zero"],
        &["diff", "-r", &http, "--expressions", "/dev/zero"],
    ] {
        let o = sift(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("/dev/zero: more than 16777216 bytes, the limit for a"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn filter_files_may_hold_any_byte_in_comments() {
    let dir = tempfile::tempdir().unwrap();
    let http = sample("http.pcap");
    let write = |name: &str, bytes: &[u8]| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let comment = write("comment", b"tcp # caf\xe9 \xff\xfe\n and port 80 #\x80\n");
    let c = comment.to_str().unwrap();
    same_as_tcpdump(&["-n", "-r", &http, "-F", c]);
    let o = sift(&["compile", "-F", c]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Outside a comment: refused (tcpdump: a syntax error), here with where it is.
    let bad = write("bad", b"tcp and\n port \xe9\n");
    let o = sift(&["-r", &http, "-F", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("line 2, column 7: byte 0xe9 is not UTF-8 text"),
        "{}",
        text(&o.stderr)
    );
    if let Some(t) = tcpdump(&["-r", &http, "-F", bad.to_str().unwrap()]) {
        assert_eq!(t.status.code(), Some(1));
    }
    // The same byte in an expression argument: a located error, exit 1, as tcpdump's.
    use std::os::unix::ffi::OsStrExt;
    let arg = std::ffi::OsStr::from_bytes(b"tcp and port \xe9");
    let o = Command::new(env!("CARGO_BIN_EXE_sift")).args(["-r", &http]).arg(arg).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("tcp and port \u{fffd}\n"), "{}", text(&o.stderr));
}

#[test]
fn help_says_nothing_stale() {
    let o = sift(&["--help"]);
    assert!(o.status.success());
    let help = text(&o.stdout);
    assert!(!help.contains("for now"), "{help}");
    for flag in ["-A", "-#", "-T <TYPE>", "-K", "-d", "--print", "-J"] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn z_gives_root_up_before_the_output_is_created() {
    if !sift_testkit::is_root() {
        let _: Option<()> = sift_testkit::oracle_missing("root (-Z)", "not running as root");
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let http = sample("http.pcap");
    let out = dir.path().join("z.pcap");
    let o = sift(&["-Z", "nobody", "-r", &http, "-w", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let nobody = Command::new("id").args(["-u", "nobody"]).output().unwrap();
    let uid: u32 = text(&nobody.stdout).trim().parse().unwrap();
    assert_eq!(std::fs::metadata(&out).unwrap().uid(), uid, "created as nobody");
    let o = sift(&["-Z", "no-such-user-sift", "-r", &http, "-c", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).ends_with("sift: Couldn't find user 'no-such-user-sift'\n"));
}

/// On a terminal that shows the packets (standard output and error the same terminal, as in
/// an interactive shell), no progress line is drawn among them.
#[test]
fn the_progress_line_stays_off_a_terminal_that_shows_packets() {
    let Some(script) = sift_testkit::tool("script") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Past the 64 MiB from which the line is drawn.
    let big = dir.path().join("big.pcap");
    let o = sift(&["gen", "-c", "130000", "-w", big.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(std::fs::metadata(&big).unwrap().len() > 64 << 20);
    let command = format!("{} -r {}", env!("CARGO_BIN_EXE_sift"), big.display());
    let o = Command::new(script).args(["-qec", &command, "/dev/null"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let shown = text(&o.stdout);
    assert!(shown.lines().count() > 130_000, "the packets were printed");
    assert!(!shown.contains("MiB/s"), "a progress line among the packets");
}

/// `sift compile` printing into a full disk or a closed pipe. Needs `compile_cmd.rs` to print
/// through `console::print` (its two `print!`), which another change makes.
#[test]
fn compile_output_errors_end_with_a_message() {
    let o = run_into(&["compile", "tcp"], full(), Stdio::piped());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("standard output: No space left on device"));
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    let terms: Vec<String> =
        (0..3000).map(|i| format!("host 10.0.{}.{}", i / 250, i % 250)).collect();
    std::fs::write(&big, terms.join(" or ")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["compile", "-F", big.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = [0u8; 16];
    let _ = child.stdout.as_mut().unwrap().read(&mut line);
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "| head -1: {err}");
    assert!(err.is_empty(), "{err}");
}
