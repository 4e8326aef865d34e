//! Golden cases: one packet per case, printed as text (with the case's tcpdump flags) and as
//! JSON. Files in `tests/golden/*.txt`; `BLESS=1` rewrites the expectations.
//!
//! `input: LINKTYPE [len=WIRE] [FLAGS…] HEX` — LINKTYPE as libpcap names it (EN10MB, RAW…) or a
//! number, WIRE the length on the wire when the capture is shorter, FLAGS among `-e -q -v -vv
//! -x -xx -X -XX`, HEX the captured bytes (`-` for none). The cases cover every decoded protocol
//! on every generated link type, truncation at many offsets and malformed headers; they were
//! checked against tcpdump 4.99.3 when written (see the crate's oracle test for the ongoing
//! comparison).

use sift_decode::{HexDump, JsonWriter, Options, Printer, TimeFormat};
use sift_pcap::Timestamp;

fn render(input: &str) -> String {
    let mut words = input.split_whitespace();
    let lt_word = words.next().expect("link type");
    let link_type = sift_pcap::LinkType::from_name(lt_word)
        .or_else(|| lt_word.parse().ok().map(sift_pcap::LinkType::new))
        .expect("a link type name or LINKTYPE number");
    let mut opts = Options { time: TimeFormat::None, ..Options::default() };
    let mut wire = None;
    let mut hex = "";
    for w in words {
        match w {
            "-e" => opts.link_header = true,
            "-q" => opts.quiet = true,
            "-v" => opts.verbose = 1,
            "-vv" => opts.verbose = 2,
            "-x" => opts.hex = HexDump::Hex,
            "-xx" => opts.hex = HexDump::HexLink,
            "-X" => opts.hex = HexDump::HexAscii,
            "-XX" => opts.hex = HexDump::HexAsciiLink,
            w if w.starts_with("len=") => wire = Some(w[4..].parse::<u32>().expect("len=N")),
            w => hex = w,
        }
    }
    let data: Vec<u8> = if hex == "-" {
        Vec::new()
    } else {
        (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
            .collect()
    };
    let wire = wire.unwrap_or(data.len() as u32);
    let ts = Timestamp::new(1_700_000_000, 123_456_789);
    let mut out = Vec::new();
    Printer::new(opts).print(&mut out, link_type, ts, wire, &data);
    out.extend_from_slice(b"json: ");
    JsonWriter::new().write(&mut out, link_type, ts, wire, &data);
    String::from_utf8(out).expect("UTF-8 output")
}

#[test]
fn golden_cases() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut total = 0;
    for f in &files {
        total += sift_testkit::golden_cases(f, |_, input| render(input));
    }
    assert!(total > 400, "only {total} golden cases");
}
