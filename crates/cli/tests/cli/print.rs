//! `sift -r X [options] EXPR` prints what `tcpdump -n -r X [options] EXPR` prints, line for
//! line, over the samples and generated captures (also one large enough for the parallel
//! path); `--json` prints one object per matching packet (the decoder's own tests check the
//! objects against the schema in crates/decode/schema).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap()
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let mut out: Vec<PathBuf> = ["http.pcap", "dns.pcap", "ping.pcap", "tcp.pcap"]
        .iter()
        .map(|n| samples.join(n))
        .collect();
    for (link, seed, extra) in [
        ("EN10MB", 1, "0"),
        ("LINUX_SLL", 2, "0.2"),
        ("LINUX_SLL2", 3, "0"),
        ("RAW", 4, "0.2"),
        ("NULL", 5, "0"),
    ] {
        let path = dir.join(format!("{link}.pcap"));
        let (seed, p) = (seed.to_string(), path.to_str().unwrap().to_owned());
        let o =
            sift(&["gen", "-c", "600", "-y", link, "--seed", &seed, "--truncate", extra, "-w", &p]);
        assert!(o.status.success());
        out.push(path);
    }
    out
}

#[test]
fn printing_matches_tcpdump() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let option_sets: &[&[&str]] =
        &[&[], &["-e"], &["-q"], &["-tt"], &["-ttt"], &["-tttt", "-X"], &["-v"], &["-S", "-xx"]];
    let mut compared = 0;
    for cap in captures(dir.path()) {
        let cap_s = cap.to_str().unwrap();
        // On BSD loopback, which IPv6 address-family values `tcp` matches changed between
        // libpcap 1.10 (installed here) and 1.11 (which sift follows): print unfiltered.
        let exprs: &[&str] =
            if cap_s.ends_with("NULL.pcap") { &[""] } else { &["", "tcp", "udp or icmp or icmp6"] };
        for &expr in exprs {
            for opts in option_sets {
                let mut ours = vec!["-n"];
                ours.extend_from_slice(opts);
                ours.extend(["-r", cap_s, "--", expr]);
                let a = sift(&ours);
                let b = Command::new(&tcpdump).args(&ours).output().unwrap();
                assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
                assert!(
                    a.stdout == b.stdout,
                    "{cap_s} {opts:?} `{expr}`: sift and tcpdump print differently"
                );
                compared += 1;
            }
            // --json: one line per matching packet.
            let json = sift(&["--json", "-r", cap_s, "--", expr]);
            let count = sift(&["--count", "-r", cap_s, "--", expr]);
            let lines = String::from_utf8_lossy(&json.stdout).lines().count();
            assert_eq!(String::from_utf8_lossy(&count.stdout), format!("{lines} packets\n"));
            assert!(String::from_utf8_lossy(&json.stdout).lines().all(|l| l.starts_with('{')));
        }
    }
    println!("{compared} (capture, expression, options) outputs identical to tcpdump -n");
}

/// The parallel path prints in order, with tcpdump's state across packets (relative TCP
/// sequence numbers, deltas), exactly as one thread does.
#[test]
fn parallel_printing_is_sequential_printing() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("big.pcap");
    let cap_s = cap.to_str().unwrap();
    let o = sift(&["gen", "-c", "45000", "--seed", "31", "-w", cap_s]);
    assert!(o.status.success());
    for opts in [&["-n", "tcp"][..], &["-n", "-ttt", "-e"], &["--json", "udp"]] {
        let run = |threads: &str| {
            let mut args = vec!["-r", cap_s];
            args.extend_from_slice(opts);
            Command::new(env!("CARGO_BIN_EXE_sift"))
                .env("SIFT_THREADS", threads)
                .args(&args)
                .output()
                .unwrap()
        };
        let (one, two) = (run("1"), run("2"));
        assert!(one.status.success() && two.status.success());
        assert!(one.stdout == two.stdout, "{opts:?}: threads change the output");
        if let (Some(tcpdump), false) = (sift_testkit::tool("tcpdump"), opts[0] == "--json") {
            let mut args = vec!["-r", cap_s];
            args.extend_from_slice(opts);
            let t = Command::new(tcpdump).args(&args).output().unwrap();
            assert!(t.stdout == two.stdout, "{opts:?}: tcpdump prints differently");
        }
    }
}
