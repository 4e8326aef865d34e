//! `sift -r IN -w OUT` against the real tools: tcpdump writes the same bytes, editcap's pcapng
//! and nanosecond files read back identically, capinfos/tcpdump/tshark read what sift writes,
//! and damaged inputs end with a located error after every intact packet was written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sift() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sift"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

struct Tools {
    tcpdump: PathBuf,
    editcap: PathBuf,
    capinfos: PathBuf,
    mergecap: PathBuf,
}

fn tools() -> Option<Tools> {
    Some(Tools {
        tcpdump: sift_testkit::tool("tcpdump")?,
        editcap: sift_testkit::tool("editcap")?,
        capinfos: sift_testkit::tool("capinfos")?,
        mergecap: sift_testkit::tool("mergecap")?,
    })
}

/// `sift gen` into `dir/name`.
fn generate(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let o = run(sift().arg("gen").arg("-w").arg(&path).args(args));
    assert!(o.status.success(), "sift gen failed: {}", stderr(&o));
    path
}

/// Copies with sift and with tcpdump (same extra flags); asserts identical exit status and
/// identical output files; returns sift's stderr.
fn same_as_tcpdump(t: &Tools, input: &Path, dir: &Path, extra: &[&str]) -> String {
    let ours = dir.join("ours.out");
    let theirs = dir.join("theirs.out");
    let _ = std::fs::remove_file(&ours);
    let _ = std::fs::remove_file(&theirs);
    let a = run(sift().arg("-r").arg(input).arg("-w").arg(&ours).args(extra));
    let b = run(Command::new(&t.tcpdump).arg("-r").arg(input).arg("-w").arg(&theirs).args(extra));
    assert_eq!(
        a.status.code(),
        b.status.code(),
        "{}: exit status; sift said {}, tcpdump said {}",
        input.display(),
        stderr(&a),
        stderr(&b)
    );
    assert!(
        read(&ours) == read(&theirs),
        "{}: sift and tcpdump wrote different files ({} vs {} bytes)",
        input.display(),
        read(&ours).len(),
        read(&theirs).len()
    );
    stderr(&a)
}

#[test]
fn corpus_captures_copy_byte_identical_to_tcpdump() {
    let (Some(t), Some(corpus)) = (tools(), sift_testkit::libpcap_corpus()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(corpus.join("captures")).unwrap() {
        let path = entry.unwrap().path();
        let err = same_as_tcpdump(&t, &path, dir.path(), &[]);
        if err.contains("sift:") && !err.contains("warning") {
            // Every failure names the file and the byte offset.
            assert!(err.contains(&path.display().to_string()) && err.contains("byte "), "{err}");
        }
        checked += 1;
    }
    assert!(checked >= 40);
}

#[test]
fn generated_captures_on_every_link_type_copy_like_tcpdump() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    for link in ["EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "NULL", "LOOP"] {
        let input = generate(
            dir.path(),
            "in.pcap",
            &["-y", link, "-c", "3000", "--truncate", "0.1", "--malformed", "0.01"],
        );
        same_as_tcpdump(&t, &input, dir.path(), &[]);
        same_as_tcpdump(&t, &input, dir.path(), &["--time-stamp-precision=nano"]);
        same_as_tcpdump(&t, &input, dir.path(), &["-c", "17"]);
        let nano = generate(
            dir.path(),
            "nano.pcap",
            &["-y", link, "-c", "500", "--time-stamp-precision", "nano"],
        );
        same_as_tcpdump(&t, &nano, dir.path(), &[]);
        same_as_tcpdump(&t, &nano, dir.path(), &["--time-stamp-precision=nano"]);
    }
}

/// Files written by editcap in other formats read back to the same packets: converting them
/// to nanosecond pcap with sift gives the original file, byte for byte.
#[test]
fn editcap_pcapng_and_nsecpcap_read_back_exactly() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let original = generate(
        dir.path(),
        "orig.pcap",
        &["-c", "4000", "--time-stamp-precision", "nano", "--truncate", "0.05"],
    );
    for format in ["pcapng", "nsecpcap", "pcap"] {
        let converted = dir.path().join(format!("conv.{format}"));
        let o = run(Command::new(&t.editcap).args(["-F", format]).arg(&original).arg(&converted));
        assert!(o.status.success(), "editcap -F {format}: {}", stderr(&o));
        let back = dir.path().join("back.pcap");
        let o = run(sift()
            .arg("-r")
            .arg(&converted)
            .arg("-w")
            .arg(&back)
            .arg("--time-stamp-precision=nano"));
        assert!(o.status.success(), "{}", stderr(&o));
        if format == "pcap" {
            // editcap's µs file lost the nanoseconds; compare with tcpdump's reading instead.
            same_as_tcpdump(&t, &converted, dir.path(), &["--time-stamp-precision=nano"]);
        } else {
            assert!(
                read(&back) == read(&original),
                "editcap -F {format} then sift: packets changed"
            );
        }
    }
}

fn capinfos(t: &Tools, path: &Path) -> String {
    let o = run(Command::new(&t.capinfos).arg(path));
    assert!(o.status.success(), "capinfos cannot read {}: {}", path.display(), stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What sift writes in pcapng is read by capinfos and by tcpdump, with the same packets.
#[test]
fn sift_pcapng_is_read_by_capinfos_and_tcpdump() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), "in.pcap", &["-c", "2500", "--time-stamp-precision", "nano"]);
    for (precision, resolution) in [("nano", "nanoseconds"), ("micro", "microseconds")] {
        let ng = dir.path().join("out.pcapng");
        let o = run(sift()
            .arg("-r")
            .arg(&input)
            .arg("-w")
            .arg(&ng)
            .arg("--pcapng")
            .arg(format!("--time-stamp-precision={precision}")));
        assert!(o.status.success(), "{}", stderr(&o));
        let info = capinfos(&t, &ng);
        assert!(info.contains("Wireshark/... - pcapng"), "{info}");
        assert!(info.contains("Number of packets:   2500"), "{info}");
        assert!(info.contains(resolution), "{info}");
        // tcpdump converts sift's pcapng back to the same pcap it makes from the original.
        let a = dir.path().join("a.pcap");
        let b = dir.path().join("b.pcap");
        let flag = format!("--time-stamp-precision={precision}");
        assert!(
            run(Command::new(&t.tcpdump).arg("-r").arg(&ng).arg("-w").arg(&a).arg(&flag))
                .status
                .success()
        );
        assert!(
            run(Command::new(&t.tcpdump).arg("-r").arg(&input).arg("-w").arg(&b).arg(&flag))
                .status
                .success()
        );
        assert!(
            read(&a) == read(&b),
            "tcpdump reads different packets from sift's pcapng ({precision})"
        );
    }
    // And what sift writes in pcap is read by capinfos.
    let out = dir.path().join("out.pcap");
    assert!(run(sift().arg("-r").arg(&input).arg("-w").arg(&out)).status.success());
    assert!(capinfos(&t, &out).contains("Number of packets:   2500"));
}

/// A pcapng with two link types (made by mergecap) is copied to pcapng with both interfaces;
/// writing it as pcap fails clearly after the packets that fit.
#[test]
fn mixed_link_types_keep_their_interfaces() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let eth = generate(dir.path(), "eth.pcap", &["-c", "300", "-y", "EN10MB"]);
    let raw = generate(dir.path(), "raw.pcap", &["-c", "300", "-y", "RAW", "--seed", "2"]);
    let merged = dir.path().join("merged.pcapng");
    let o = run(Command::new(&t.mergecap).arg("-w").arg(&merged).arg(&eth).arg(&raw));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("out.pcapng");
    let o = run(sift().arg("-r").arg(&merged).arg("-w").arg(&out).arg("--pcapng"));
    assert!(o.status.success(), "{}", stderr(&o));
    let info = capinfos(&t, &out);
    assert!(info.contains("Number of interfaces in file: 2"), "{info}");
    assert!(info.contains("Number of packets:   600"), "{info}");
    // Same packets, interfaces and times as tshark sees in mergecap's file.
    if let Some(tshark) = sift_testkit::tool("tshark") {
        let fields = |p: &Path| {
            let o = run(Command::new(&tshark).arg("-r").arg(p).args([
                "-T",
                "fields",
                "-e",
                "frame.interface_id",
                "-e",
                "frame.time_epoch",
                "-e",
                "frame.len",
                "-e",
                "frame.cap_len",
                "-e",
                "frame.encap_type",
            ]));
            assert!(o.status.success());
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        assert_eq!(fields(&merged), fields(&out));
    }
    // As pcap: a clear error naming the remedy; packets before the first RAW one are written.
    let pcap = dir.path().join("out.pcap");
    let o = run(sift().arg("-r").arg(&merged).arg("-w").arg(&pcap));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("link type RAW") && err.contains("--pcapng"), "{err}");
    let mut r = sift_pcap::open(&pcap).unwrap();
    let mut n = 0;
    while r.next_packet().unwrap().is_some() {
        n += 1;
    }
    assert!(n > 0, "the Ethernet packets before the first RAW one are kept");
}

/// A damaged file: sift reports file and byte offset, exits 1, and has written exactly the
/// intact packets, the same ones tcpdump writes.
#[test]
fn damaged_files_keep_intact_packets_like_tcpdump() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), "in.pcap", &["-c", "200"]);
    let bytes = read(&input);
    for cut in [30, 1000, bytes.len() / 2, bytes.len() - 3] {
        let damaged = dir.path().join(format!("cut{cut}.pcap"));
        std::fs::write(&damaged, &bytes[..cut]).unwrap();
        let err = same_as_tcpdump(&t, &damaged, dir.path(), &[]);
        assert!(
            err.contains(&format!("{}: byte ", damaged.display()))
                && err.contains("truncated packet"),
            "{err}"
        );
    }
    // Garbage after the header: caplen absurd.
    let mut bad = bytes.clone();
    bad[24 + 8..24 + 12].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let damaged = dir.path().join("absurd.pcap");
    std::fs::write(&damaged, &bad).unwrap();
    let o = run(sift().arg("-r").arg(&damaged).arg("-w").arg(dir.path().join("x.pcap")));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("byte 24: invalid captured length 16777215"), "{}", stderr(&o));
    // Not a capture at all.
    let text = dir.path().join("text.pcap");
    std::fs::write(&text, "hello, world\n").unwrap();
    let o = run(sift().arg("-r").arg(&text).arg("-w").arg(dir.path().join("y.pcap")));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("byte 0: not a pcap or pcapng file"), "{}", stderr(&o));
}

#[test]
fn standard_input_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), "in.pcap", &["-c", "1500"]);
    let file = std::fs::File::open(&input).unwrap();
    let o = sift().args(["-r", "-", "-w", "-"]).stdin(Stdio::from(file)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == read(&input), "sift -r - -w - changed the capture");
}

#[test]
fn printing_gives_one_line_per_packet() {
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), "in.pcap", &["-c", "321"]);
    let o = run(sift().arg("-r").arg(&input));
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 321);
    let o = run(sift().arg("-r").arg(&input).args(["-c", "5"]));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 5);
}

#[test]
fn usage_errors_exit_1_with_a_reason() {
    // A bad expression: located diagnostic, exit 1, no output file.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.pcap");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/http.pcap");
    let o = run(sift().args(["-r", sample, "-w"]).arg(&out).args(["tcp", "port", "8o"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown port `8o`") && stderr(&o).contains("^^"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "a bad filter must not create the output file");
    let o = run(&mut sift());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no input"), "{}", stderr(&o));
    let o = run(sift().args(["-r", "/nonexistent/file.pcap"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/file.pcap"), "{}", stderr(&o));
}

/// A little-endian microsecond pcap file: `snaplen` in the header, Ethernet, one 60-byte record
/// per `(seconds, fraction)` pair.
fn pcap_file(snaplen: u32, times: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, snaplen, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for &(secs, frac) in times {
        for v in [secs, frac, 60, 60] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[0x11; 60]);
    }
    out
}

/// A little-endian pcapng file (microsecond interface, Ethernet): one 60-byte enhanced packet
/// block per timestamp, given in microseconds since 1970.
fn pcapng_file(micros: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut block = |kind: u32, body: &[u8]| {
        let len = 12 + body.len() as u32;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(&len.to_le_bytes());
    };
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    block(0x0a0d_0d0a, &shb);
    let mut idb = 1u16.to_le_bytes().to_vec();
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&262_144u32.to_le_bytes());
    block(1, &idb);
    for &t in micros {
        let mut epb = Vec::new();
        for v in [0, (t >> 32) as u32, t as u32, 60, 60] {
            epb.extend_from_slice(&v.to_le_bytes());
        }
        epb.extend_from_slice(&[0x22; 60]);
        block(6, &epb);
    }
    out
}

/// Values a copy changes are copied as tcpdump copies them, and each kind is warned about once,
/// with a count and the first value or place: a bogus snapshot length (read as 262144), times
/// past 2106 from pcapng into pcap (wrapped), and odd fractions of a second into pcapng (carried
/// into the seconds; a pcap copy keeps them as recorded, with no warning).
#[test]
fn changed_values_warn_once_with_a_count() {
    let Some(t) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();

    let bogus = dir.path().join("snaplen0.pcap");
    std::fs::write(&bogus, pcap_file(0, &[(1, 0), (2, 0), (3, 0)])).unwrap();
    let err = same_as_tcpdump(&t, &bogus, dir.path(), &[]);
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(err.contains("1 bogus snapshot length(s) (first 0) read as the link type's largest"));
    assert_eq!(&read(&dir.path().join("ours.out"))[16..20], &262_144u32.to_le_bytes());

    let odd = dir.path().join("odd.pcap");
    std::fs::write(&odd, pcap_file(65_535, &[(1, 1_500_000), (2, 10), (3, 2_000_000)])).unwrap();
    let err = same_as_tcpdump(&t, &odd, dir.path(), &[]);
    assert!(!err.contains("warning"), "a pcap copy keeps the fields: {err}");
    let o = run(sift().arg("-r").arg(&odd).arg("--pcapng").arg("-w").arg(dir.path().join("o.ng")));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains(
            "2 record(s) with a fraction of a second of a second or more (first at byte 24)"
        ),
        "{err}"
    );

    let late = dir.path().join("late.pcapng");
    let past_2106 = (1u64 << 32) * 1_000_000 + 5_000_000;
    std::fs::write(&late, pcapng_file(&[1_000_000, past_2106, past_2106 + 1, 7])).unwrap();
    let err = same_as_tcpdump(&t, &late, dir.path(), &[]);
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains(
            "2 packet(s) with a time a pcap file cannot hold (first 4294967301.000000000 s"
        ),
        "{err}"
    );

    // Nothing changed: no warning.
    let plain = generate(dir.path(), "plain.pcap", &["-c", "20"]);
    let err = same_as_tcpdump(&t, &plain, dir.path(), &[]);
    assert!(!err.contains("warning"), "{err}");
}
