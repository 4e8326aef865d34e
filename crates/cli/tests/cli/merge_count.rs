//! Several inputs merged by time (`-r a -r b`, or a quoted pattern) against mergecap followed
//! by tcpdump, and `--count` against `tcpdump --count`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap()
}

fn generate(dir: &Path, name: &str, seed: u32, count: u32, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let (seed, count) = (seed.to_string(), count.to_string());
    let mut args = vec!["gen", "-c", &count, "--seed", &seed, "-w", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = sift(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    path
}

/// Generated captures overlap in time (same clock model, different seeds), so the merge
/// interleaves them; mergecap's output is the reference, then tcpdump filters it.
#[test]
fn merging_matches_mergecap_then_tcpdump() {
    let (Some(mergecap), Some(tcpdump)) =
        (sift_testkit::tool("mergecap"), sift_testkit::tool("tcpdump"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = generate(dir.path(), "day1.pcap", 11, 300, &[]);
    let b = generate(dir.path(), "day2.pcap", 12, 400, &[]);
    let c = generate(dir.path(), "day3.pcap", 13, 50, &["--time-stamp-precision", "nano"]);
    let merged = dir.path().join("merged.pcap");
    let o = Command::new(mergecap)
        .args(["-F", "pcap", "-w"])
        .arg(&merged)
        .args([&a, &b, &c])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pattern = dir.path().join("day*.pcap");
    for expr in ["", "tcp", "udp port 53 or icmp", "ip6 and not tcp"] {
        let reference = dir.path().join("reference.pcap");
        let t = Command::new(&tcpdump)
            .arg("-r")
            .arg(&merged)
            .arg("-w")
            .arg(&reference)
            .arg("--")
            .arg(expr)
            .output()
            .unwrap();
        assert!(t.status.success());
        let want = std::fs::read(&reference).unwrap();
        let out = dir.path().join("ours.pcap");
        let (a, b, c, out_s) =
            (a.to_str().unwrap(), b.to_str().unwrap(), c.to_str().unwrap(), out.to_str().unwrap());
        // mergecap writes microseconds when the first input has them; so do we by default.
        let o = sift(&["-r", a, "-r", b, "-r", c, "-w", out_s, "--", expr]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::read(&out).unwrap() == want, "`{expr}`: -r a -r b -r c differs");
        let o = sift(&["-r", pattern.to_str().unwrap(), "-w", out_s, "--", expr]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::read(&out).unwrap() == want, "`{expr}`: the pattern differs");
    }
}

#[test]
fn count_matches_tcpdump() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cap = generate(dir.path(), "c.pcap", 5, 500, &[]);
    for expr in ["", "tcp", "port 53", "icmp6", "vlan and tcp", "ether host 1:2:3:4:5:6"] {
        let t = Command::new(&tcpdump)
            .arg("--count")
            .arg("-r")
            .arg(&cap)
            .arg("--")
            .arg(expr)
            .output()
            .unwrap();
        let o = sift(&["--count", "-r", cap.to_str().unwrap(), "--", expr]);
        assert!(o.status.success());
        assert_eq!(o.stdout, t.stdout, "`{expr}`");
    }
    let o = sift(&["--count", "-r", cap.to_str().unwrap(), "-w", "/dev/null"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn bad_patterns_and_mixed_stdin_are_errors() {
    let o = sift(&["-r", "/nonexistent-dir/*.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no file matches"));
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/http.pcap");
    let o = sift(&["-r", "-", "-r", sample]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("standard input"));
}
