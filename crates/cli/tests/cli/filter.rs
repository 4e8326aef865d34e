//! `sift -r X -w A EXPR` against tcpdump: the same packets, byte for byte, for hand-picked and
//! generated expressions over the shipped samples and generated captures of several link types.
//! Expressions tcpdump refuses must be refused too; expressions sift does not support yet are
//! counted, never silently accepted.
//!
//! sift optimizes by default, as tcpdump does, and its optimizer never changes a verdict; so the
//! packets must be those of libpcap's *unoptimized* program (`tcpdump -O`), and `sift -O` must
//! give the same file. libpcap's own optimizer changes verdicts on some truncated packets
//! (loads reordered past a failing bounds check, libpcap #430): those pairs are counted as a
//! figure. When one optimizer proves "expression rejects all packets" and the other does not,
//! the other's output must hold no packet.

use sift_compile::{CompileErrorKind, pipeline};
use std::path::Path;
use std::process::{Command, Output};

fn sift(capture: &Path, out: &Path, expr: &str, optimize: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sift"));
    if !optimize {
        c.arg("-O");
    }
    c.arg("-r").arg(capture).arg("-w").arg(out).arg("--").arg(expr).output().unwrap()
}

fn tcpdump(tcpdump: &Path, capture: &Path, out: &Path, expr: &str, optimize: bool) -> Output {
    let mut c = Command::new(tcpdump);
    if !optimize {
        c.arg("-O");
    }
    c.arg("-r").arg(capture).arg("-w").arg(out).arg("--").arg(expr).output().unwrap()
}

/// Whether libpcap's program for `expr` reads a scratch word before writing it on some path
/// (libpcap's `geneve` code does on fixed-header link types). libpcap's `bpf_filter` then reads
/// whatever its stack held, so its verdicts are not defined; sift's memory starts zeroed, as
/// the kernel's does (and the kernel refuses such programs).
fn reads_unwritten_memory(capture: &Path, expr: &str) -> bool {
    let mut reader = sift_pcap::open(capture).unwrap();
    let Ok(Some(first)) = reader.next_packet() else { return false };
    let resolver = sift_filter::SystemResolver::new();
    let opts = pipeline::Options::new(first.link_type, &resolver)
        .netmask(Some(0))
        .optimize(false)
        .mode(sift_verify::Mode::Linux);
    matches!(
        pipeline::compile(expr, &opts),
        Err(e) if matches!(&e.kind, CompileErrorKind::Invalid(v) if v.to_string().contains("before it is written"))
    )
}

/// A pcap file with no packet: only the 24-byte file header.
fn empty(file: &[u8]) -> bool {
    file.len() == 24
}

fn run_both(td: &Path, capture: &Path, expr: &str, dir: &Path) -> Outcome {
    let [ours, ours_unopt, theirs, theirs_opt] =
        ["ours.pcap", "ours-O.pcap", "theirs-O.pcap", "theirs.pcap"].map(|n| dir.join(n));
    for f in [&ours, &ours_unopt, &theirs, &theirs_opt] {
        let _ = std::fs::remove_file(f);
    }
    let a = sift(capture, &ours, expr, true);
    let a_unopt = sift(capture, &ours_unopt, expr, false);
    let b = tcpdump(td, capture, &theirs, expr, false);
    let b_opt = tcpdump(td, capture, &theirs_opt, expr, true);
    let err = String::from_utf8_lossy(&a.stderr).into_owned();
    let err_unopt = String::from_utf8_lossy(&a_unopt.stderr).into_owned();
    let read = |p: &Path| std::fs::read(p).unwrap();
    let rejects_all = |e: &str| e.contains("rejects all packets");
    match (a_unopt.status.success(), b.status.success()) {
        (true, true) => {
            let reference = read(&theirs);
            if read(&ours_unopt) != reference && reads_unwritten_memory(capture, expr) {
                return Outcome::UninitializedMemory;
            }
            assert!(
                read(&ours_unopt) == reference,
                "{}: `{expr}`: sift -O and tcpdump -O kept different packets",
                capture.display()
            );
            if a.status.success() {
                assert!(
                    read(&ours) == reference,
                    "{}: `{expr}`: sift's optimizer changed the packets kept",
                    capture.display()
                );
            } else {
                assert!(rejects_all(&err), "{}: `{expr}`: {err}", capture.display());
                assert!(
                    empty(&reference),
                    "{}: `{expr}`: sift says no packet can pass",
                    capture.display()
                );
            }
            let optimizer_differs = if b_opt.status.success() {
                read(&theirs_opt) != reference
            } else {
                // libpcap's optimizer says "rejects all packets": then none may pass.
                assert!(empty(&reference), "{}: `{expr}`: libpcap's optimizer", capture.display());
                false
            };
            Outcome::Same { written: reference.len(), optimizer_differs }
        }
        (false, false) => Outcome::BothRefuse,
        (false, true) if err_unopt.contains(sift_compile::UNSUPPORTED) => Outcome::Unsupported,
        (false, true) => {
            panic!(
                "{}: `{expr}`: sift refused what tcpdump accepts: {err_unopt}",
                capture.display()
            )
        }
        // What libpcap 1.11 (which sift follows) compiles and the installed 1.10 refuses:
        // filtering on DSA tags, 802.11 primitives on PPI.
        (true, false)
            if ["filtering not implemented", "supported only on 802.11"]
                .iter()
                .any(|m| String::from_utf8_lossy(&b.stderr).contains(m)) =>
        {
            Outcome::NewerLinkType
        }
        (true, false) => panic!(
            "{}: `{expr}`: sift accepted what tcpdump refuses: {}",
            capture.display(),
            String::from_utf8_lossy(&b.stderr)
        ),
    }
}

enum Outcome {
    Same { written: usize, optimizer_differs: bool },
    BothRefuse,
    Unsupported,
    NewerLinkType,
    UninitializedMemory,
}

const EXPRESSIONS: &[&str] = &[
    "",
    "tcp",
    "udp",
    "icmp",
    "ip6",
    "arp",
    "tcp port 80",
    "port 53",
    "udp port domain",
    "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
    "host 192.0.2.1",
    "net 198.51.100.0/24",
    "not ip6 and (tcp or udp)",
    "portrange 1-1024",
    "greater 200",
    "less 100",
    "ip[8] < 64",
    "icmp[icmptype] = icmp-echo",
    "ether broadcast",
    "ether multicast",
    "vlan",
    "vlan and tcp",
    "mpls",
    "pppoes",
    "ip proto 17 or ip6 proto 58",
    "src net 10.0.0.0/8 or (dst net 128.3.0.0/16 and port 22) or src net 2001:470::/28",
    "tcp port 80 and (((ip[2:2] - ((ip[0]&0xf)<<2)) - ((tcp[12]&0xf0)>>2)) != 0)",
    "len > 1000 and udp",
    "tcp port 8o",
    "host",
];

#[test]
fn filtered_copies_equal_tcpdumps() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let mut captures: Vec<std::path::PathBuf> = ["http.pcap", "dns.pcap", "ping.pcap", "tcp.pcap"]
        .iter()
        .map(|n| samples.join(n))
        .collect();
    let links = [
        ("EN10MB", "1"),
        ("RAW", "2"),
        ("LINUX_SLL", "3"),
        ("LINUX_SLL2", "4"),
        ("NULL", "5"),
        ("LOOP", "6"),
    ];
    for (link, seed) in links {
        let path = dir.path().join(format!("gen-{link}.pcap"));
        let o = Command::new(env!("CARGO_BIN_EXE_sift"))
            .args(["gen", "-c", "1500", "--truncate", "0.05", "-y", link, "--seed", seed, "-w"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(o.status.success());
        captures.push(path);
    }
    // libpcap's own captures, of every link type: those both tools can read.
    let corpus = sift_testkit::libpcap_corpus().map(|d| d.join("captures"));
    let mut corpus_files: Vec<std::path::PathBuf> = corpus
        .and_then(|d| std::fs::read_dir(d).ok())
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    corpus_files.sort();
    let first_corpus = captures.len();
    captures.extend(corpus_files);
    let (mut same, mut refused, mut unsupported, mut nonempty, mut libpcap_opt) = (0, 0, 0, 0, 0);
    let (mut newer, mut uninit) = (0, 0);
    let mut links = std::collections::BTreeSet::new();
    for (i, capture) in captures.iter().enumerate() {
        let Ok(mut reader) = sift_pcap::open(capture) else { continue };
        let Ok(Some(first)) = reader.next_packet().map(|p| p.map(|p| p.link_type)) else {
            continue;
        };
        let link = first.to_string();
        let (fixed, generated) = if i >= first_corpus { (16, 6) } else { (EXPRESSIONS.len(), 25) };
        let mut exprs: Vec<String> =
            EXPRESSIONS.iter().take(fixed).map(|s| s.to_string()).collect();
        exprs.extend(sift_filetests::exprgen::ExprGen::new(7, &link).take(generated));
        for expr in &exprs {
            match run_both(&tcpdump, capture, expr, dir.path()) {
                Outcome::Same { written, optimizer_differs } => {
                    same += 1;
                    links.insert(link.clone());
                    nonempty += usize::from(written > 24);
                    libpcap_opt += usize::from(optimizer_differs);
                }
                Outcome::BothRefuse => refused += 1,
                Outcome::Unsupported => unsupported += 1,
                Outcome::NewerLinkType => newer += 1,
                Outcome::UninitializedMemory => uninit += 1,
            }
        }
    }
    eprintln!(
        "{same} identical outputs ({nonempty} with packets) over {} captures of link types {links:?}, \
         {refused} refused by both, {unsupported} not supported by sift yet, {newer} that only \
         libpcap 1.11 compiles, {uninit} where libpcap reads uninitialized scratch \
         memory; optimized tcpdump differed from its own -O output {libpcap_opt} times",
        captures.len()
    );
    assert!(same >= 350, "only {same} comparisons");
    assert!(nonempty >= 150, "too few filters matched anything ({nonempty})");
}

/// Every link type sift compiles for, on generated frames (sift-gen's traffic re-encapsulated
/// for the link type, plus scrambled and short frames, from sift-filetests): `sift -r X -w A`
/// keeps the packets `tcpdump -O -r X -w B` keeps, for fixed and generated expressions.
#[test]
fn every_supported_link_type_on_generated_frames() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut same, mut refused, mut unsupported, mut newer, mut links) = (0, 0, 0, 0, Vec::new());
    let mut uninit = 0;
    for link in sift_filetests::LinkType::all() {
        // NULL, LOOP and ENC included: sift compiles for the file, as tcpdump does (address
        // families in the file's byte order, AF_INET6 as 24, 28 and 30).
        if !pipeline::supports(link) {
            continue;
        }
        let set = sift_filetests::PacketSet::generate(link, 0x11, 300, 40);
        let path = dir.path().join(format!("{}.pcap", link.name().unwrap()));
        {
            let file = std::fs::File::create(&path).unwrap();
            let mut w =
                sift_pcap::PcapWriter::new(file, link, 0, 262_144, sift_pcap::Precision::Micro)
                    .unwrap();
            for (i, f) in set.frames.iter().enumerate() {
                let ts = sift_pcap::Timestamp::new(1_700_000_000 + i as u64, 0);
                w.write(ts, f.wire_len().max(f.data.len() as u32), &f.data).unwrap();
            }
            w.finish().unwrap();
        }
        let mut exprs: Vec<String> = EXPRESSIONS.iter().take(12).map(|s| s.to_string()).collect();
        exprs.extend(sift_filetests::exprgen::ExprGen::new(11, link.name().unwrap()).take(12));
        let before = same;
        for expr in &exprs {
            match run_both(&tcpdump, &path, expr, dir.path()) {
                Outcome::Same { .. } => same += 1,
                Outcome::BothRefuse => refused += 1,
                Outcome::Unsupported => unsupported += 1,
                Outcome::NewerLinkType => newer += 1,
                Outcome::UninitializedMemory => uninit += 1,
            }
        }
        if same > before {
            links.push(link.name().unwrap());
        }
    }
    eprintln!(
        "{same} identical outputs on {} link types {links:?}; {refused} refused by both, \
         {unsupported} not supported by sift yet, {newer} that only libpcap 1.11 \
         compiles, {uninit} where libpcap reads uninitialized scratch memory",
        links.len()
    );
    assert!(links.len() >= 20, "only {} link types compared", links.len());
}
