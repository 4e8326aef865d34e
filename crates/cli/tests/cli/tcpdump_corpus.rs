//! Issue 15's acceptance over tcpdump's own test captures (`../shared/corpus/tcpdump/tests`, 830
//! pcap and pcapng files on 100+ link types): for every capture,
//!
//! - `sift -r C -w A` writes the bytes `tcpdump -r C -w B` writes, and
//! - for each expression of [`EXPRESSIONS`], `sift -r C -w A EXPR` writes the bytes
//!   `tcpdump -O -r C -w B EXPR` writes, whenever both accept the pair (`-O`: libpcap's
//!   optimizer changes verdicts on truncated packets, libpcap issue 430; sift's never does), and
//! - sift refuses no pair that tcpdump accepts. sift optimizes as tcpdump does by default, so
//!   where sift says "expression rejects all packets", tcpdump without `-O` must say it too.
//!
//! Documented exceptions: none. Run with `--nocapture` for the counts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The expressions: protocols, ports, hosts and networks, lengths, link-layer and payload
/// bytes, encapsulations, and their combinations.
const EXPRESSIONS: &[&str] = &[
    "ip",
    "ip6",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "arp",
    "sctp",
    "port 53",
    "port 80",
    "tcp port 443",
    "udp port 53",
    "portrange 1-1024",
    "host 10.0.0.1",
    "net 192.168.0.0/16",
    "src net 10.0.0.0/8",
    "dst host 192.168.1.1",
    "greater 1000",
    "less 64",
    "len > 100",
    "len <= 60",
    "vlan",
    "mpls",
    "pppoes",
    "ether broadcast",
    "ether multicast",
    "ip multicast",
    "tcp[tcpflags] & tcp-syn != 0",
    "ip[8] < 64",
    "ip6 protochain 6",
    "ip proto 47",
    "ether proto 0x88cc",
    "link[0] = 0xff",
    "ip and tcp",
    "not ip",
    "udp and not port 53",
    "icmp[icmptype] == icmp-echo",
    "ip6 and tcp",
    "ip or ip6",
    "tcp or udp or icmp",
    "vxlan",
    "llc",
    "stp",
    "iso",
];

#[derive(Default)]
struct Tally {
    /// (capture, expression) pairs both accept, with identical output.
    same: u64,
    /// Pairs both refuse.
    both_refuse: u64,
    /// Pairs sift refuses as tcpdump refuses them by default ("rejects all packets").
    refused_as_tcpdump: u64,
    /// Pairs sift accepts and tcpdump refuses.
    sift_only: u64,
    /// Plain copies with identical output.
    copies_same: u64,
    /// Failures: the pair and what happened.
    failures: Vec<String>,
}

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program).args(args).output().unwrap()
}

fn check_capture(sift: &Path, tcpdump: &Path, capture: &Path, dir: &Path, tally: &Mutex<Tally>) {
    let c = capture.to_str().unwrap();
    let name = capture.file_name().unwrap().to_string_lossy().into_owned();
    let a = dir.join(format!("{name}.sift"));
    let b = dir.join(format!("{name}.tcpdump"));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let mut local = Tally::default();
    for expr in std::iter::once(None).chain(EXPRESSIONS.iter().map(Some)) {
        let _ = std::fs::remove_file(&a);
        let _ = std::fs::remove_file(&b);
        let (ours, theirs) = match expr {
            None => (run(sift, &["-r", c, "-w", a_s]), run(tcpdump, &["-r", c, "-w", b_s])),
            Some(e) => (
                run(sift, &["-r", c, "-w", a_s, "--", e]),
                run(tcpdump, &["-O", "-r", c, "-w", b_s, "--", e]),
            ),
        };
        let shown = format!("{name} `{}`", expr.unwrap_or(&"(copy)"));
        let err = String::from_utf8_lossy(&ours.stderr).trim().to_owned();
        match (ours.status.success(), theirs.status.success()) {
            (true, true) => {
                if std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap() {
                    if expr.is_none() {
                        local.copies_same += 1;
                    } else {
                        local.same += 1;
                    }
                } else {
                    local.failures.push(format!("{shown}: outputs differ ({err})"));
                }
            }
            (false, false) => local.both_refuse += 1,
            (true, false) => local.sift_only += 1,
            (false, true) => {
                let default = expr.map(|e| run(tcpdump, &["-r", c, "-w", "/dev/null", "--", e]));
                let as_tcpdump = err.contains("rejects all packets")
                    && default.is_some_and(|d| {
                        !d.status.success()
                            && String::from_utf8_lossy(&d.stderr).contains("rejects all packets")
                    });
                if as_tcpdump {
                    local.refused_as_tcpdump += 1;
                } else {
                    local
                        .failures
                        .push(format!("{shown}: sift refused what tcpdump accepts: {err}"));
                }
            }
        }
    }
    let mut t = tally.lock().unwrap();
    t.same += local.same;
    t.both_refuse += local.both_refuse;
    t.refused_as_tcpdump += local.refused_as_tcpdump;
    t.sift_only += local.sift_only;
    t.copies_same += local.copies_same;
    t.failures.extend(local.failures);
}

#[test]
fn tcpdump_test_captures_are_copied_and_filtered_as_tcpdump_does() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = sift_testkit::shared_dir().join("corpus").join("tcpdump").join("tests");
    if !dir.is_dir() {
        sift_testkit::oracle_missing::<()>("tcpdump's test captures", dir.display());
        return;
    }
    let mut captures: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    captures.sort();
    assert!(captures.len() >= 800, "{} captures", captures.len());
    let sift = PathBuf::from(env!("CARGO_BIN_EXE_sift"));
    let scratch = tempfile::tempdir().unwrap();
    let tally = Mutex::new(Tally::default());
    let next = Mutex::new(captures.iter());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(capture) = {
                    let mut it = next.lock().unwrap();
                    it.next()
                } {
                    check_capture(&sift, &tcpdump, capture, scratch.path(), &tally);
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    println!(
        "{} captures × {} expressions: {} pairs identical, {} both refuse, {} refused as tcpdump \
         refuses them without -O, {} accepted by sift only; copies identical: {} of {}; \
         failures: {}",
        captures.len(),
        EXPRESSIONS.len(),
        t.same,
        t.both_refuse,
        t.refused_as_tcpdump,
        t.sift_only,
        t.copies_same,
        captures.len(),
        t.failures.len()
    );
    assert!(t.failures.is_empty(), "{} failures:\n{}", t.failures.len(), t.failures.join("\n"));
}
