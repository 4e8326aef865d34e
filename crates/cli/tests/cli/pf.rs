//! `sift pfctl` and `sift pf check`: pfctl's output and exit statuses, standard input, macros
//! from the command line, and sift's caret rendering of mistakes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn sift(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(args)
        .current_dir(sift_testkit::workspace_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sift");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().expect("sift output")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn corpus(name: &str) -> Option<PathBuf> {
    let p = sift_testkit::shared_dir().join("corpus/pf/pfctl").join(name);
    if p.is_file() { Some(p) } else { sift_testkit::oracle_missing("pf corpus", p.display()) }
}

#[test]
fn pfctl_prints_the_canonical_form_of_a_file() {
    let Some(input) = corpus("pf4.in") else { return };
    let Some(ok) = corpus("pf4.ok") else { return };
    let out = sift(&["pfctl", "--host", "openbsd", "-nvf", input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), std::fs::read_to_string(ok).unwrap());
    assert!(out.stderr.is_empty());
}

#[test]
fn pfctl_reads_standard_input_and_names_it_stdin() {
    let out = sift(&["pfctl", "-nvf", "-"], Some("pass in proto tcp to port 22\nblock\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "pass in proto tcp from any to any port = 22 flags S/SA\nblock drop all\n"
    );
    let out = sift(&["pfctl", "-o", "none", "-nvf", "-"], Some("pass in inet6 proto icmp\n"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "stdin:1: proto icmp doesn't match address family inet6\n\
         stdin:1: skipping rule due to errors\n\
         stdin:1: rule expands to no valid combination\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn pfctl_n_without_v_prints_nothing_on_success() {
    let out = sift(&["pfctl", "-nf", "samples/pf.conf"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let out = sift(&["pfctl", "-nf", "-"], Some("pass from 10.0.0.0.1\n"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "no IP address found for 10.0.0.0.1\nstdin:1: could not parse host specification\n"
    );
}

#[test]
fn pfctl_defines_macros_and_loads_into_anchors() {
    let src = "ext = \"em0\"\npass in on $ext\n";
    let out = sift(&["pfctl", "-D", "ext=lo1", "-nvf", "-"], Some(src));
    assert_eq!(text(&out.stdout), "ext = \"em0\"\npass in on lo1 all flags S/SA\n");
    let out = sift(&["pfctl", "-a", "regress", "-nvf", "-"], Some("pass\n"));
    assert_eq!(text(&out.stdout), "pass all flags S/SA\n");
}

#[test]
fn pfctl_refuses_what_it_cannot_do() {
    let out = sift(&["pfctl", "-vf", "samples/pf.conf"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("use -n"));
    let out = sift(&["pfctl", "-o", "basic", "-nvf", "samples/pf.conf"], None);
    assert_eq!(out.status.code(), Some(1));
    let out = sift(&["pfctl", "-nvf", "/nonexistent/pf.conf"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "pfctl: cannot open the main config file!: No such file or directory\n"
    );
}

#[test]
fn pf_check_shows_carets_and_exits_1() {
    let out = sift(&["pf", "check", "-"], Some("pass in\npass out proto tcp to port 99999\n"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: stdin:2:28: illegal port value 99999\n  pass out proto tcp to port 99999\n                             ^^^^^\n"
    );
    let out = sift(&["pf", "check", "samples/pf.conf"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "samples/pf.conf: 12 rules, 2 tables\n");
}

fn rules_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sift-pf-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn pf_run_passes_a_whole_tcp_conversation_through_keep_state() {
    // `block all` and only the client's SYN passes by rule: every other packet of the two
    // connections passes by their states (replies inferred outbound).
    let rules = rules_file("web.conf", "block all\npass in proto tcp to port 80 keep state\n");
    let out = sift(
        &[
            "pf",
            "run",
            "--host",
            "openbsd",
            "-f",
            rules.to_str().unwrap(),
            "-r",
            "samples/http.pcap",
            "--verdicts",
            "--states",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("1 pass @1 match\n2 pass state match\n"), "{stdout}");
    assert!(!stdout.contains("block"), "{stdout}");
    assert!(stdout.contains("all tcp 192.0.2.2:80 <- 192.0.2.1:43724       FIN_WAIT_2:FIN_WAIT_2"));
    assert!(text(&out.stderr).contains("24 packets: 24 passed (22 by state, 0 not IP), 0 blocked"));
    // `sift pf -f RULES -r CAPTURE` without `run` is the same command.
    let bare = sift(
        &["pf", "--host", "openbsd", "-f", rules.to_str().unwrap(), "-r", "samples/http.pcap"],
        None,
    );
    let bare_stdout = text(&bare.stdout);
    assert_eq!((bare.status.code(), bare_stdout.as_str()), (Some(0), ""), "{}", text(&bare.stderr));
    assert_eq!(text(&bare.stderr), text(&out.stderr));
}

#[test]
fn pf_run_blocks_by_rule_and_logs_to_pflog_that_tcpdump_reads() {
    let rules = rules_file("block.conf", "block log all\n");
    let log = rules.with_file_name("block.pflog");
    let out = sift(
        &[
            "pf",
            "run",
            "--host",
            "openbsd",
            "-f",
            rules.to_str().unwrap(),
            "-r",
            "samples/http.pcap",
            "--in",
            "em0",
            "--log",
            log.to_str().unwrap(),
            "--verdicts",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("1 block @0 match\n"));
    let Ok(td) = Command::new("tcpdump").args(["-e", "-n", "-r"]).arg(&log).output() else {
        sift_testkit::oracle_missing::<()>("tcpdump", "tcpdump");
        return;
    };
    let printed = text(&td.stdout);
    assert!(
        printed.contains("rule 0/0(match): block in on em0: 192.0.2.1.43724 > 192.0.2.2.80"),
        "{printed}"
    );
}

#[test]
fn pf_run_reports_a_missing_capture() {
    let rules = rules_file("pass.conf", "pass all\n");
    let out = sift(&["pf", "run", "-f", rules.to_str().unwrap(), "-r", "no/such.pcap"], None);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("no/such.pcap"));
}

/// Replays every capture of the samples and of tcpdump's test corpus (830 captures of every
/// link type) through stateful rule sets (`pass all`, which keeps state as pf's pass rules do,
/// so TCP connections seen from their SYN are tracked with their window scale; and `block all` +
/// `pass in all flags any keep state (sloppy)`, where every later packet of a flow, either way,
/// must find its state — `flags any` because many captures start in the middle of a
/// connection, which pf's default `flags S/SA` would leave to `block all`, and `sloppy` because
/// pf's full tracker, picking a connection up without its SYNs' window scale, blocks it as
/// `state-mismatch` too): TCP tracking blocks
/// no packet as `state-mismatch`, and whatever is blocked is blocked for a reason pf gives
/// bytes it cannot judge (`short`, `bad-offset`, `normalize`: frames cut by the capture's
/// snapshot length or damaged on purpose by tcpdump's tests), never by a rule of these sets.
#[test]
fn pf_run_replays_real_captures_without_blocking_tracked_traffic() {
    let Some(tcpdump) = sift_testkit::corpus("tcpdump") else { return };
    let mut captures: Vec<PathBuf> = std::fs::read_dir(tcpdump.join("tests"))
        .unwrap()
        .chain(std::fs::read_dir(sift_testkit::workspace_root().join("samples")).unwrap())
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".pcap") || name.ends_with(".pcapng")
        })
        .collect();
    captures.sort();
    assert!(captures.len() >= 830, "{} captures", captures.len());
    let sets = [
        rules_file("pass-all.conf", "pass all\n"),
        rules_file("replies.conf", "block all\npass in all flags any keep state (sloppy)\n"),
    ];
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    let (mut by_state, mut judged) = (0usize, 0usize);
    for rules in &sets {
        for cap in &captures {
            let out = sift(
                &["pf", "-f", rules.to_str().unwrap(), "-r", cap.to_str().unwrap(), "--verdicts"],
                None,
            );
            if out.status.code() != Some(0) {
                // A capture sift cannot read as a whole (damaged on purpose) still had its
                // readable packets judged; the error is on standard error.
                assert!(!text(&out.stderr).is_empty(), "{}", cap.display());
            }
            for line in text(&out.stdout).lines() {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [_, verdict, by, reason] = fields[..] else { continue };
                judged += 1;
                by_state += usize::from(by == "state");
                if verdict == "block" {
                    assert_ne!(reason, "state-mismatch", "{}: {line}", cap.display());
                    assert_eq!(by, "@-1", "{}: blocked by a rule: {line}", cap.display());
                    *reasons.entry(reason.to_string()).or_default() += 1;
                }
            }
        }
    }
    println!(
        "{} captures × {} rule sets: {judged} packets judged, {by_state} passed by state, \
         blocked before any rule: {reasons:?}",
        captures.len(),
        sets.len()
    );
    assert!(by_state > 1000, "too few packets passed by state: {by_state}");
    // Before any rule pf refuses what it cannot read, what pf_normalize_tcp refuses, and
    // fragments its reassembly refuses (overlaps and the like, in crafted captures).
    for reason in reasons.keys() {
        assert!(
            ["short", "bad-offset", "normalize", "fragment"].contains(&reason.as_str()),
            "{reason}"
        );
    }
}
