//! The printer against tcpdump itself: the same capture files are printed by `tcpdump -n -r`
//! (with `-e`, `-q`, `-S`, the `-t` family, the `-x`/`-X` family, `-v` and `-vv`) and by [`Printer`], and the
//! outputs are compared packet by packet.
//!
//! Inputs: sift-gen traffic on all six link types it writes (clean, and with 40% truncated and
//! 20% malformed frames), the captures in `samples/`, and the in-scope captures of the libpcap
//! corpus. The test prints the share of identical packets per protocol and asserts the floors
//! reached (see `FLOORS`), and that sift prints exactly as many lines as tcpdump.
//! tcpdump runs with `TZ=UTC`, the zone sift prints in.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sift_decode::{HexDump, Layer, Options, Printer, TimeFormat};
use sift_gen::Link;

/// A flag set: tcpdump's arguments and the equivalent options.
struct Flags {
    args: &'static [&'static str],
    opts: Options,
}

fn flag_sets() -> Vec<Flags> {
    let o = Options::default();
    let set = |args: &'static [&'static str], opts: Options| Flags { args, opts };
    vec![
        set(&[], o),
        set(&["-e"], Options { link_header: true, ..o }),
        set(&["-q"], Options { quiet: true, ..o }),
        set(&["-e", "-q"], Options { link_header: true, quiet: true, ..o }),
        set(&["-tt"], Options { time: TimeFormat::Epoch, ..o }),
        set(&["-ttt"], Options { time: TimeFormat::DeltaPrevious, ..o }),
        set(&["-tttt"], Options { time: TimeFormat::DateTime, ..o }),
        set(&["-ttttt"], Options { time: TimeFormat::DeltaFirst, ..o }),
        set(&["--time-stamp-precision=nano"], Options { nano: true, ..o }),
        set(&["-x"], Options { hex: HexDump::Hex, ..o }),
        set(&["-xx"], Options { hex: HexDump::HexLink, ..o }),
        set(&["-X"], Options { hex: HexDump::HexAscii, ..o }),
        set(&["-XX", "-e"], Options { hex: HexDump::HexAsciiLink, link_header: true, ..o }),
        set(&["-v"], Options { verbose: 1, ..o }),
        set(&["-vv"], Options { verbose: 2, ..o }),
        set(&["-S"], Options { absolute_seq: true, ..o }),
        set(
            &["-e", "-v", "-ttttt"],
            Options { link_header: true, verbose: 1, time: TimeFormat::DeltaFirst, ..o },
        ),
        set(&["-t"], Options { time: TimeFormat::None, ..o }),
    ]
}

/// Protocol classes whose packets must match tcpdump exactly (100%) in every flag set.
const EXACT: &[&str] = &[
    "ether",
    "sll",
    "sll2",
    "loopback",
    "raw",
    "arp",
    "ipv4",
    "ipv6",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "dns",
    "sctp",
    "vlan",
    "mpls",
    "pppoe",
    "gre",
    "vxlan",
    "geneve",
    "ipv6-ext",
    "truncated",
    "malformed",
    "fragment",
];

/// The class of a packet for the statistics: its innermost interesting layer.
fn class(link_type: sift_pcap::LinkType, data: &[u8], wire_len: u32) -> &'static str {
    let d = sift_decode::decode(link_type, data, wire_len);
    let mut c = match link_type.number() {
        1 => "ether",
        113 => "sll",
        276 => "sll2",
        0 | 108 => "loopback",
        _ => "raw",
    };
    for l in d.layers() {
        c = match l {
            Layer::Vlan(_) => "vlan",
            Layer::Mpls(_) => "mpls",
            Layer::Pppoe(_) => "pppoe",
            Layer::Arp(_) => "arp",
            Layer::Ipv4(ip) if ip.frag & 0x1fff != 0 => "fragment",
            Layer::Ipv4(_) => "ipv4",
            Layer::Ipv6(_) => "ipv6",
            Layer::Ipv6Ext(_) => "ipv6-ext",
            Layer::Tcp(_) => "tcp",
            Layer::Udp(_) => "udp",
            Layer::Sctp(_) => "sctp",
            Layer::Icmp(_) => "icmp",
            Layer::Icmpv6(_) => "icmp6",
            Layer::Gre(_) => "gre",
            Layer::Vxlan(_) => "vxlan",
            Layer::Geneve(_) => "geneve",
            Layer::Dns(_) => "dns",
            Layer::Truncated { .. } => "truncated",
            Layer::Malformed { .. } => "malformed",
            _ => c,
        };
        // Tunnels name the packet; what they carry is counted in its own right elsewhere.
        if matches!(c, "vxlan" | "geneve" | "gre") {
            break;
        }
    }
    c
}

/// Whether a tcpdump output line starts a new packet record under this time format.
fn starts_record(line: &str, time: TimeFormat) -> bool {
    let b = line.as_bytes();
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let hms = |s: &[u8]| {
        s.len() >= 15
            && digits(&s[0..2])
            && s[2] == b':'
            && digits(&s[3..5])
            && s[5] == b':'
            && digits(&s[6..8])
            && s[8] == b'.'
            && digits(&s[9..15])
    };
    match time {
        TimeFormat::None => true,
        TimeFormat::TimeOfDay => hms(b),
        TimeFormat::DeltaPrevious | TimeFormat::DeltaFirst => {
            b.first().is_some_and(|c| *c == b' ' || *c == b'-') && hms(&b[1..])
        }
        TimeFormat::DateTime => {
            b.len() > 11 && digits(&b[0..4]) && b[4] == b'-' && b[7] == b'-' && hms(&b[11..])
        }
        TimeFormat::Epoch => {
            let dot = b.iter().position(|c| *c == b'.');
            dot.is_some_and(|d| d > 0 && digits(&b[..d]) && b.len() > d + 6)
                && digits(&b[dot.unwrap() + 1..dot.unwrap() + 7])
        }
    }
}

#[derive(Default)]
struct Tally {
    same: u64,
    total: u64,
}

struct Report {
    /// (flag set, class) → tally.
    by_class: BTreeMap<(String, &'static str), Tally>,
    examples: Vec<String>,
    line_count_mismatches: Vec<String>,
}

fn run_tcpdump(tcpdump: &Path, file: &Path, args: &[&str]) -> String {
    let out = Command::new(tcpdump)
        .arg("-n")
        .args(args)
        .arg("-r")
        .arg(file)
        .env("TZ", "UTC")
        .output()
        .expect("tcpdump runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn compare_file(tcpdump: &Path, file: &Path, flags: &Flags, report: &mut Report) {
    let expected = run_tcpdump(tcpdump, file, flags.args);
    let mut reader = sift_pcap::open(file).unwrap();
    let mut printer = Printer::new(flags.opts);
    let mut ours: Vec<(String, &'static str)> = Vec::new();
    let mut buf = Vec::new();
    while let Ok(Some(p)) = reader.next_packet() {
        buf.clear();
        printer.print(&mut buf, p.link_type, p.timestamp, p.wire_len, p.data);
        ours.push((
            String::from_utf8_lossy(&buf).into_owned(),
            class(p.link_type, p.data, p.wire_len),
        ));
    }
    let key = flags.args.join(" ");
    let our_text: String = ours.iter().map(|(t, _)| t.as_str()).collect();
    if our_text.lines().count() != expected.lines().count() {
        report.line_count_mismatches.push(format!(
            "{} {key}: tcpdump {} lines, sift {}",
            file.display(),
            expected.lines().count(),
            our_text.lines().count()
        ));
    }
    // Split tcpdump's output into one record per packet.
    let mut records: Vec<String> = Vec::new();
    if flags.opts.time == TimeFormat::None {
        // Without timestamps, records are recovered from our own line counts per packet.
        let mut lines = expected.lines();
        for (text, _) in &ours {
            let mut r = String::new();
            for _ in 0..text.lines().count() {
                if let Some(l) = lines.next() {
                    r.push_str(l);
                    r.push('\n');
                }
            }
            records.push(r);
        }
    } else {
        for line in expected.lines() {
            if starts_record(line, flags.opts.time) || records.is_empty() {
                records.push(String::new());
            }
            let r = records.last_mut().unwrap();
            r.push_str(line);
            r.push('\n');
        }
    }
    for (i, (text, cls)) in ours.iter().enumerate() {
        let t = report.by_class.entry((key.clone(), cls)).or_default();
        t.total += 1;
        let theirs = records.get(i).map(String::as_str).unwrap_or("");
        if theirs == text {
            t.same += 1;
        } else if report.examples.len() < 60
            && !report
                .examples
                .iter()
                .any(|e| e.contains(&format!("[{key}]")) && e.contains(&format!("({cls})")))
        {
            report.examples.push(format!(
                "{} [{key}] packet {} ({cls}):\n  tcpdump: {}\n  sift:    {}",
                file.display(),
                i + 1,
                theirs.trim_end().replace('\n', "\n           "),
                text.trim_end().replace('\n', "\n           ")
            ));
        }
    }
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for link in Link::ALL {
        for damaged in [false, true] {
            let count = if damaged { 2500 } else { 1200 };
            let frames = common::frames(link, count, if damaged { 3 } else { 1 }, damaged);
            let path = dir.join(format!("{}-{}.pcap", link.name(), damaged));
            common::write_pcap(&path, &frames);
            files.push(path);
        }
    }
    let root = sift_testkit::workspace_root();
    for s in ["dns", "http", "ping", "tcp"] {
        files.push(root.join("samples").join(format!("{s}.pcap")));
    }
    if let Some(corpus) = sift_testkit::libpcap_corpus() {
        for c in [
            "vxlan.pcap",
            "geneve.pcap",
            "pppoe.pcap",
            "gateway_or_not.pcap",
            "rarp_req_reply.pcapng",
        ] {
            files.push(corpus.join("captures").join(c));
        }
    }
    files
}

#[test]
fn printer_matches_tcpdump() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let mut report = Report {
        by_class: BTreeMap::new(),
        examples: Vec::new(),
        line_count_mismatches: Vec::new(),
    };
    for flags in flag_sets() {
        for f in &files {
            compare_file(&tcpdump, f, &flags, &mut report);
        }
    }
    let mut failures = Vec::new();
    eprintln!("identical packets per flag set and class (sift vs tcpdump -n):");
    let mut last = String::new();
    for ((key, cls), t) in &report.by_class {
        if *key != last {
            eprintln!("  [{}]", if key.is_empty() { "default" } else { key });
            last = key.clone();
        }
        let pct = 100.0 * t.same as f64 / t.total as f64;
        eprintln!("    {cls:<10} {:>6}/{:<6} {pct:6.2}%", t.same, t.total);
        if EXACT.contains(cls) && t.same != t.total {
            failures.push(format!("[{key}] {cls}: {}/{}", t.same, t.total));
        }
    }
    for e in &report.examples {
        eprintln!("{e}");
    }
    for m in &report.line_count_mismatches {
        eprintln!("line count: {m}");
    }
    assert!(failures.is_empty(), "below the 100% floor: {failures:?}");
    assert!(
        report.line_count_mismatches.is_empty(),
        "line counts differ: {:?}",
        report.line_count_mismatches
    );
}
