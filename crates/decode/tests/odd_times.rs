//! Odd timestamps printed as tcpdump 4.99 prints them: pcap records whose fraction of a second
//! is a second or more (kept as recorded), seconds with bit 31 set, pcapng times past 2106 and
//! before 1970, deltas across all of these and across days, in every `-t` format, at micro and
//! nanosecond precision.
//!
//! Cases live in `tests/golden-time/*.txt` (`BLESS=1` rewrites the expectations):
//! `input: FILE [FLAGS…] : TIME…`, where FILE is `le-micro`, `be-micro`, `le-nano`, `be-nano`
//! (a pcap file of that byte order and magic; each TIME is `SECS.FRAC`, the two fields as
//! recorded) or `ng:TSRESOL:TSOFFSET` (a little-endian pcapng interface with that `if_tsresol`
//! byte and `if_tsoffset`; each TIME is a count of its units), and FLAGS are tcpdump's among
//! `-tt -ttt -tttt -ttttt --nano`. The file is built, read with sift-pcap and printed; the
//! oracle test prints the same files with `tcpdump -n` and expects the golden lines.

use std::path::{Path, PathBuf};
use std::process::Command;

use sift_decode::{Options, Printer, TimeFormat};

/// An Ethernet/IPv4/UDP packet both printers print alike.
const PACKET: &str =
    "ffffffffffff001122334455080045000020000100004011f96fc0a80001c0a8000204d2162e000c00006869210a";

struct Case {
    file: Vec<u8>,
    flags: Vec<String>,
    opts: Options,
}

fn packet() -> Vec<u8> {
    (0..PACKET.len() / 2)
        .map(|i| u8::from_str_radix(&PACKET[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn put32(buf: &mut Vec<u8>, v: u32, big: bool) {
    buf.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn pcap(big: bool, nano: bool, times: &[&str]) -> Vec<u8> {
    let data = packet();
    let mut b = Vec::new();
    put32(&mut b, if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }, big);
    b.extend_from_slice(&if big { [0, 2, 0, 4] } else { [2, 0, 4, 0] });
    for v in [0, 0, 262_144, 1] {
        put32(&mut b, v, big);
    }
    for t in times {
        let (secs, frac) = t.split_once('.').expect("SECS.FRAC");
        put32(&mut b, secs.parse().expect("seconds"), big);
        put32(&mut b, frac.parse().expect("fraction"), big);
        put32(&mut b, data.len() as u32, big);
        put32(&mut b, data.len() as u32, big);
        b.extend_from_slice(&data);
    }
    b
}

fn block(b: &mut Vec<u8>, block_type: u32, body: &[u8]) {
    let len = (body.len().next_multiple_of(4) + 12) as u32;
    b.extend_from_slice(&block_type.to_le_bytes());
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(body);
    b.resize(b.len().next_multiple_of(4), 0);
    b.extend_from_slice(&len.to_le_bytes());
}

fn pcapng(tsresol: u8, tsoffset: i64, times: &[&str]) -> Vec<u8> {
    let data = packet();
    let mut b = Vec::new();
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    block(&mut b, 0x0A0D_0D0A, &shb);
    let mut idb = vec![1, 0, 0, 0];
    idb.extend_from_slice(&0u32.to_le_bytes());
    idb.extend_from_slice(&[9, 0, 1, 0, tsresol, 0, 0, 0, 14, 0, 8, 0]);
    idb.extend_from_slice(&tsoffset.to_le_bytes());
    idb.extend_from_slice(&[0; 4]);
    block(&mut b, 1, &idb);
    for t in times {
        let units: u64 = t.parse().expect("a count of units");
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(units as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&data);
        block(&mut b, 6, &epb);
    }
    b
}

fn parse(input: &str) -> Case {
    let (head, times) = input.split_once(" : ").expect("FILE [FLAGS] : TIMES");
    let times: Vec<&str> = times.split_whitespace().collect();
    let mut words = head.split_whitespace();
    let file = match words.next().expect("a file kind") {
        "le-micro" => pcap(false, false, &times),
        "be-micro" => pcap(true, false, &times),
        "le-nano" => pcap(false, true, &times),
        "be-nano" => pcap(true, true, &times),
        ng => {
            let mut parts = ng.strip_prefix("ng:").expect("ng:TSRESOL:TSOFFSET").split(':');
            let tsresol = parts.next().unwrap().parse().unwrap();
            let tsoffset = parts.next().unwrap().parse().unwrap();
            pcapng(tsresol, tsoffset, &times)
        }
    };
    let mut opts = Options::default();
    let mut flags = Vec::new();
    for w in words {
        match w {
            "-tt" => opts.time = TimeFormat::Epoch,
            "-ttt" => opts.time = TimeFormat::DeltaPrevious,
            "-tttt" => opts.time = TimeFormat::DateTime,
            "-ttttt" => opts.time = TimeFormat::DeltaFirst,
            "--nano" => opts.nano = true,
            other => panic!("unknown flag {other}"),
        }
        flags.push(w.to_string());
    }
    Case { file, flags, opts }
}

/// sift's lines for a case: read the built file, print every packet.
fn render(input: &str) -> String {
    let case = parse(input);
    let mut reader = sift_pcap::Reader::from_bytes(case.file).expect("the file opens");
    let mut printer = Printer::new(case.opts);
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet().expect("the file reads") {
        printer.print(&mut out, p.link_type, p.timestamp, p.wire_len, p.data);
    }
    String::from_utf8(out).expect("UTF-8")
}

fn golden_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden-time");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn odd_timestamps_golden() {
    let mut total = 0;
    for f in golden_files() {
        total += sift_testkit::golden_cases(&f, |_, input| render(input));
    }
    assert!(total >= 20, "only {total} cases");
}

/// The golden expectations are tcpdump's output: each case's file printed by `tcpdump -n`.
#[test]
fn odd_timestamps_print_as_tcpdump_prints_them() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("case.cap");
    let mut checked = 0;
    for f in golden_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let Some(name) = line.strip_prefix("=== ") else { continue };
            let input = lines.next().and_then(|l| l.strip_prefix("input: ")).unwrap();
            let case = parse(input);
            std::fs::write(&path, &case.file).unwrap();
            let out = Command::new(&tcpdump)
                .arg("-n")
                .args(&case.flags)
                .arg("-r")
                .arg(&path)
                .env("TZ", "UTC")
                .output()
                .unwrap();
            let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
            assert_eq!(render(input), theirs, "{}: case {name}", f.display());
            checked += 1;
        }
    }
    assert!(checked >= 20);
}
