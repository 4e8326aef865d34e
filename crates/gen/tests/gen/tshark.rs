//! Oracle test: generated frames, written to pcap files by hand, decoded by tshark (and counted
//! by tcpdump). Every frame must decode as the protocols the independent parser in
//! tests/common found, with every checksum verified by tshark too and no malformed or
//! error-level expert markers. Skips (or fails under `SIFT_REQUIRE_ORACLES=1`) without tshark.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use sift_gen::{Config, FrameMeta, Generator, Link};

const PI_WARN: u32 = 6_291_456;
const PI_ERROR: u32 = 8_388_608;
/// Warnings that are facts about the traffic, not decoding problems.
const EXPECTED_WARNINGS: [&str; 1] = ["Connection reset (RST)"];

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("sift-gen-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("keeping {} for inspection", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

struct Line {
    protocols: Vec<String>,
    malformed: bool,
    /// (severity, message) pairs.
    expert: Vec<(u32, String)>,
}

fn tshark(tshark: &Path, file: &Path) -> Vec<Line> {
    let out = Command::new(tshark)
        .args(["-n", "-r"])
        .arg(file)
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ])
        .args([
            "-o",
            "sctp.checksum:crc-32c",
            "-T",
            "fields",
            "-E",
            "separator=/t",
            "-E",
            "occurrence=a",
        ])
        .args([
            "-e",
            "frame.protocols",
            "-e",
            "_ws.malformed",
            "-e",
            "_ws.expert.severity",
            "-e",
            "_ws.expert.message",
        ])
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let field = |i: usize| f.get(i).copied().unwrap_or("");
            let sev: Vec<u32> = field(2).split(',').filter_map(|s| s.parse().ok()).collect();
            let msg: Vec<&str> = field(3).split(',').collect();
            Line {
                protocols: field(0).split(':').map(str::to_owned).collect(),
                malformed: !field(1).is_empty(),
                expert: sev
                    .into_iter()
                    .zip(msg.into_iter().chain(std::iter::repeat("")))
                    .map(|(s, m)| (s, m.to_owned()))
                    .collect(),
            }
        })
        .collect()
}

fn write(dir: &Path, name: &str, link: Link, frames: &[(FrameMeta, Vec<u8>)]) -> PathBuf {
    let path = dir.join(format!("{name}.pcap"));
    std::fs::write(&path, common::pcap_bytes(link.linktype(), 262_144, frames))
        .expect("write pcap");
    path
}

fn tcpdump_count(file: &Path) -> Option<usize> {
    let tcpdump = sift_testkit::tool("tcpdump")?;
    let out = Command::new(tcpdump).arg("-nr").arg(file).output().expect("tcpdump runs");
    assert!(out.status.success(), "tcpdump failed: {}", String::from_utf8_lossy(&out.stderr));
    // One line per packet, starting with its timestamp; some decoders add indented lines.
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count(),
    )
}

/// Is `want` a subsequence of `have`?
fn subsequence(want: &[&str], have: &[String]) -> bool {
    let mut it = have.iter();
    want.iter().all(|w| it.any(|h| h == w))
}

#[test]
fn tshark_decodes_every_link_type_cleanly() {
    let Some(tshark_bin) = sift_testkit::tool("tshark") else { return };
    let dir = TempDir::new("clean");
    let mut everything = BTreeSet::new();
    for link in Link::ALL {
        let frames = common::frames(&mut Generator::new(77, Config::with_link(link)), 2000);
        let file = write(&dir.0, link.name(), link, &frames);
        let lines = tshark(&tshark_bin, &file);
        assert_eq!(lines.len(), frames.len(), "{link:?}: tshark saw a different number of frames");
        if let Some(n) = tcpdump_count(&file) {
            assert_eq!(n, frames.len(), "{link:?}: tcpdump saw a different number of frames");
        }
        let mut seen = BTreeSet::new();
        for (i, ((_, data), line)) in frames.iter().zip(&lines).enumerate() {
            let ctx = || {
                format!(
                    "{link:?} frame {} (file {}): {}",
                    i + 1,
                    file.display(),
                    line.protocols.join(":")
                )
            };
            assert!(!line.malformed, "{}: malformed", ctx());
            for (sev, msg) in &line.expert {
                assert!(*sev < PI_ERROR, "{}: expert error {msg:?}", ctx());
                assert!(
                    *sev < PI_WARN || EXPECTED_WARNINGS.contains(&msg.as_str()),
                    "{}: warning {msg:?}",
                    ctx()
                );
            }
            let ours = common::parse(link, data);
            assert!(ours.errors.is_empty(), "{}: {:?}", ctx(), ours.errors);
            assert!(
                subsequence(&ours.protos, &line.protocols),
                "{}: we built {:?}",
                ctx(),
                ours.protos
            );
            seen.extend(line.protocols.iter().cloned());
        }
        for want in
            ["ip", "ipv6", "tcp", "udp", "dns", "http", "tls", "syslog", "icmp", "icmpv6", "sctp"]
        {
            assert!(
                seen.contains(want),
                "{link:?}: tshark saw no {want} in 2,000 frames: {seen:?}"
            );
        }
        everything.extend(seen);
    }
    for want in [
        "eth",
        "sll",
        "raw",
        "null",
        "arp",
        "vlan",
        "ieee8021ad",
        "mpls",
        "pppoes",
        "gre",
        "vxlan",
        "geneve",
        "ipv6.hopopts",
        "ipv6.dstopts",
        "ipv6.routing",
        "ipv6.fraghdr",
    ] {
        assert!(everything.contains(want), "no {want} on any link type: {everything:?}");
    }
}

#[test]
fn tshark_notices_every_malformed_frame() {
    let Some(tshark_bin) = sift_testkit::tool("tshark") else { return };
    let dir = TempDir::new("malformed");
    for link in [Link::Ethernet, Link::Raw, Link::LinuxSll2] {
        let cfg = Config { malformed: 1.0, ..Config::with_link(link) };
        let frames = common::frames(&mut Generator::new(78, cfg), 500);
        let file = write(&dir.0, link.name(), link, &frames);
        let lines = tshark(&tshark_bin, &file);
        assert_eq!(lines.len(), frames.len());
        for (i, line) in lines.iter().enumerate() {
            let noticed = line.malformed
                || line.expert.iter().any(|(s, _)| *s >= PI_WARN)
                || !line.protocols.iter().any(|p| p == "ip" || p == "ipv6");
            assert!(
                noticed,
                "{link:?} frame {}: tshark finds nothing wrong with {:?}",
                i + 1,
                line.protocols
            );
        }
    }
}

#[test]
fn truncated_frames_still_form_a_valid_capture() {
    let Some(tshark_bin) = sift_testkit::tool("tshark") else { return };
    let dir = TempDir::new("truncated");
    let cfg = Config { truncate: 1.0, snaplen: 200, ..Config::default() };
    let frames = common::frames(&mut Generator::new(79, cfg), 1000);
    assert!(frames.iter().all(|(m, d)| d.len() < m.wire_len as usize && d.len() < 200));
    let file = write(&dir.0, "truncated", Link::Ethernet, &frames);
    let lines = tshark(&tshark_bin, &file);
    assert_eq!(lines.len(), frames.len());
    if let Some(n) = tcpdump_count(&file) {
        assert_eq!(n, frames.len());
    }
}
