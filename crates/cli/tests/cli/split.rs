//! `sift -r CAPTURE --split FILTERS -w 'out-%s.pcap'`: each filter's file is, byte for byte,
//! what `sift -r CAPTURE -w FILE EXPR` writes for that filter alone (and what tcpdump writes,
//! where it is installed); `--first` delivers as CSPF did (priorities, `continue`); counts;
//! `-c` counts packets read; located errors (golden `tests/data/split/cases.txt`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SIFT: &str = env!("CARGO_BIN_EXE_sift");

fn sift(args: &[&str]) -> Output {
    Command::new(SIFT).args(args).output().unwrap()
}

fn ok(args: &[&str]) -> Output {
    let o = sift(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn generate(dir: &Path, name: &str, seed: u32, count: u32, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let (seed, count) = (seed.to_string(), count.to_string());
    let mut args = vec!["gen", "-c", &count, "--seed", &seed, "-w", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok(&args);
    path
}

/// `(name, expression)` of a set file's lines (no priorities or flags in these sets).
fn filters(set: &str) -> Vec<(String, String)> {
    set.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| {
            let (n, e) = l.trim().split_once(' ').unwrap_or((l.trim(), ""));
            (n.to_string(), e.trim().to_string())
        })
        .collect()
}

/// A realistic set plus hand-picked filters: every packet, none (the optimizer proves it),
/// VLANs, IPv6, a protochain walk, link-level tests.
fn test_set(n: usize) -> String {
    let o = ok(&["gen", "--filters", &n.to_string(), "--seed", "7"]);
    let mut set = String::from_utf8(o.stdout).unwrap();
    set.push_str(
        "all\nsyn tcp[tcpflags] & tcp-syn != 0\nv6udp ip6 and udp\nvlans vlan\n\
         chain ip6 protochain 58\nbcast ether broadcast\nsmall less 80\n",
    );
    set
}

fn split_then_compare(dir: &Path, inputs: &[&Path], set: &str, extra: &[&str]) -> usize {
    let set_path = dir.join("set.txt");
    std::fs::write(&set_path, set).unwrap();
    let pattern = dir.join("out-%s.pcap");
    let mut args: Vec<&str> = Vec::new();
    for i in inputs {
        args.extend(["-r", i.to_str().unwrap()]);
    }
    let common = args.clone();
    args.extend(["--split", set_path.to_str().unwrap(), "-w", pattern.to_str().unwrap()]);
    args.extend_from_slice(extra);
    ok(&args);
    let mut nonempty = 0;
    for (name, expr) in filters(set) {
        let split = std::fs::read(dir.join(format!("out-{name}.pcap"))).unwrap();
        let alone = dir.join("alone.pcap");
        let mut args = common.clone();
        args.extend(["-w", alone.to_str().unwrap()]);
        args.extend_from_slice(extra);
        args.extend(["--", &expr]);
        ok(&args);
        let want = std::fs::read(&alone).unwrap();
        assert!(split == want, "filter {name} `{expr}`: --split wrote other bytes than alone");
        nonempty += usize::from(has_packets(&alone));
    }
    nonempty
}

fn has_packets(path: &Path) -> bool {
    let mut r = sift_pcap::open(path).unwrap();
    r.next_packet().unwrap().is_some()
}

#[test]
fn each_filters_file_is_what_it_writes_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cap = generate(dir.path(), "cap.pcap", 5, 3000, &[]);
    let set = test_set(60);
    let nonempty = split_then_compare(dir.path(), &[&cap], &set, &[]);
    assert!(nonempty > 10, "filters that match something: {nonempty}");
    let pcapng = split_then_compare(dir.path(), &[&cap], &set, &["--pcapng", "--nano"]);
    assert_eq!(pcapng, nonempty);
}

/// Inputs of two link types merged (pcapng output): the set is compiled for each on first use.
#[test]
fn link_types_met_on_the_way_get_their_own_program() {
    let dir = tempfile::tempdir().unwrap();
    let en = generate(dir.path(), "en.pcapng", 8, 400, &["--pcapng"]);
    let raw = generate(dir.path(), "raw.pcapng", 9, 400, &["--pcapng", "-y", "RAW"]);
    let set = "tcp tcp\nudp53 udp port 53\nv6 ip6\nall\nsmall less 100\n";
    let nonempty = split_then_compare(dir.path(), &[&en, &raw], set, &["--pcapng"]);
    assert!(nonempty >= 4, "{nonempty}");
}

#[test]
fn files_equal_tcpdumps() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cap = generate(dir.path(), "cap.pcap", 6, 2000, &[]);
    let set = "web tcp port 80 or tcp port 443\ndns udp port 53\nv6 ip6 and not icmp6\n\
               net net 10.0.0.0/24\nvl vlan and host 10.0.0.7\n";
    let set_path = dir.path().join("set.txt");
    std::fs::write(&set_path, set).unwrap();
    let pattern = dir.path().join("o-%s.pcap");
    let (c, s, p) = (cap.to_str().unwrap(), set_path.to_str().unwrap(), pattern.to_str().unwrap());
    ok(&["-r", c, "--split", s, "-w", p]);
    for (name, expr) in filters(set) {
        let o = Command::new(&tcpdump).args(["-r", c, "-w", "-", &expr]).output().unwrap();
        assert!(o.status.success(), "tcpdump `{expr}`");
        let ours = std::fs::read(dir.path().join(format!("o-{name}.pcap"))).unwrap();
        assert!(ours == o.stdout, "{name} `{expr}`: not tcpdump's bytes");
    }
}

/// The count of `sift -r CAP --count EXPR`.
fn count(cap: &Path, expr: &str) -> u64 {
    let o = ok(&["-r", cap.to_str().unwrap(), "--count", "--", expr]);
    let text = String::from_utf8(o.stdout).unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// `NAME  COUNT` lines, as a list.
fn counts(out: &Output) -> Vec<(String, u64)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn first_match_honours_priorities_and_continue() {
    let dir = tempfile::tempdir().unwrap();
    let cap = generate(dir.path(), "cap.pcap", 10, 3000, &[]);
    let set_path = dir.path().join("set.txt");
    // Rank order: d (9), a (5, continue), b (5), c (0).
    std::fs::write(
        &set_path,
        "a priority 5 continue tcp\nb priority 5 tcp port 80\nc ip\nd priority 9 udp\n",
    )
    .unwrap();
    let (c, s) = (cap.to_str().unwrap(), set_path.to_str().unwrap());
    let first = counts(&ok(&["-r", c, "--split", s, "--first"]));
    let want = [
        ("d", count(&cap, "udp")),
        ("a", count(&cap, "tcp")),
        ("b", count(&cap, "tcp port 80")),
        ("c", count(&cap, "ip and not udp and not tcp port 80")),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(first, want, "--first");
    assert!(want.iter().all(|(_, n)| *n > 0), "every filter gets packets: {want:?}");
    // Every match: each filter's own count.
    let all = counts(&ok(&["-r", c, "--split", s]));
    let expect_all: Vec<(String, u64)> =
        [("d", "udp"), ("a", "tcp"), ("b", "tcp port 80"), ("c", "ip")]
            .iter()
            .map(|(n, e)| (n.to_string(), count(&cap, e)))
            .collect();
    assert_eq!(all, expect_all, "every match");
    // --count says the same as no -w.
    assert_eq!(counts(&ok(&["-r", c, "--split", s, "--first", "--count"])), first);
}

#[test]
fn c_counts_packets_read() {
    let dir = tempfile::tempdir().unwrap();
    let cap = generate(dir.path(), "cap.pcap", 11, 2000, &[]);
    let set_path = dir.path().join("set.txt");
    std::fs::write(&set_path, "all\nnone tcp and not tcp\nudp udp\n").unwrap();
    let (c, s) = (cap.to_str().unwrap(), set_path.to_str().unwrap());
    let got = counts(&ok(&["-r", c, "--split", s, "-c", "1234"]));
    assert_eq!(got[0], ("all".to_string(), 1234));
    assert_eq!(got[1], ("none".to_string(), 0));
    let pattern = dir.path().join("o-%s.pcap");
    let o = ok(&["-r", c, "--split", s, "-c", "1234", "-w", pattern.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("1234 packets read"), "{stderr}");
    // A filter that matches nothing still gets its (empty) file, as with `sift -r -w`.
    let none = std::fs::read(dir.path().join("o-none.pcap")).unwrap();
    assert_eq!(none.len(), 24, "a pcap file header only");
    let alone = dir.path().join("alone.pcap");
    ok(&["-r", c, "-c", "1234", "-w", alone.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(alone).unwrap(),
        std::fs::read(dir.path().join("o-all.pcap")).unwrap()
    );
}

/// Messages and exit statuses, golden: set files in `tests/data/split/`, `CAP` the shipped
/// `samples/mixed.pcapng`, `DATA` the directory of the set files, `OUT` a scratch directory.
#[test]
fn errors_and_counts_are_located_and_stable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("tests/data/split");
    let cap = root.join("../../samples/mixed.pcapng");
    let out = tempfile::tempdir().unwrap();
    let n = sift_testkit::golden_cases(&data.join("cases.txt"), |_, input| {
        let words: Vec<String> = input
            .split_whitespace()
            .map(|w| {
                w.replace("CAP", cap.to_str().unwrap())
                    .replace("DATA", data.to_str().unwrap())
                    .replace("OUT", out.path().to_str().unwrap())
            })
            .collect();
        let o = Command::new(SIFT).args(&words).output().unwrap();
        let shown = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .replace(cap.to_str().unwrap(), "CAP")
                .replace(data.to_str().unwrap(), "DATA")
                .replace(out.path().to_str().unwrap(), "OUT")
        };
        format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            o.status.code().map_or("signal".into(), |c| c.to_string()),
            shown(&o.stdout),
            shown(&o.stderr)
        )
    });
    assert!(n >= 10);
}
