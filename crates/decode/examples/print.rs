//! Prints a capture like `tcpdump -n -r FILE`: `print FILE [flags…]` with flags e q t tt ttt
//! tttt ttttt x xx X XX v vv nano json.
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut opts = sift_decode::Options::default();
    let mut json = false;
    for f in &args[2..] {
        match f.as_str() {
            "e" => opts.link_header = true,
            "q" => opts.quiet = true,
            "t" => opts.time = sift_decode::TimeFormat::None,
            "tt" => opts.time = sift_decode::TimeFormat::Epoch,
            "ttt" => opts.time = sift_decode::TimeFormat::DeltaPrevious,
            "tttt" => opts.time = sift_decode::TimeFormat::DateTime,
            "ttttt" => opts.time = sift_decode::TimeFormat::DeltaFirst,
            "x" => opts.hex = sift_decode::HexDump::Hex,
            "xx" => opts.hex = sift_decode::HexDump::HexLink,
            "X" => opts.hex = sift_decode::HexDump::HexAscii,
            "XX" => opts.hex = sift_decode::HexDump::HexAsciiLink,
            "v" => opts.verbose = 1,
            "vv" => opts.verbose = 2,
            "nano" => opts.nano = true,
            "json" => json = true,
            other => panic!("unknown flag {other}"),
        }
    }
    let mut reader = sift_pcap::open(std::path::Path::new(&args[1])).unwrap();
    let mut printer = sift_decode::Printer::new(opts);
    let mut jw = sift_decode::JsonWriter::default();
    let mut buf = Vec::with_capacity(1 << 16);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while let Ok(Some(p)) = reader.next_packet() {
        if json {
            jw.write(&mut buf, p.link_type, p.timestamp, p.wire_len, p.data);
        } else {
            printer.print(&mut buf, p.link_type, p.timestamp, p.wire_len, p.data);
        }
        if buf.len() > 1 << 15 {
            if out.write_all(&buf).is_err() {
                return; // Closed pipe (`| head`).
            }
            buf.clear();
        }
    }
    let _ = out.write_all(&buf);
}
