//! The parallel path (large classic pcap files, several threads) gives byte for byte the
//! output of the sequential path and of tcpdump: written files, counts and printed lines, also
//! when the file is damaged part-way (same packets before the damage, same error).

use std::path::Path;
use std::process::{Command, Output};

fn sift(threads: usize, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift"))
        .env("SIFT_THREADS", threads.to_string())
        .args(args)
        .output()
        .unwrap()
}

/// A capture of about 24 MB: three chunks of the parallel path.
fn big_capture(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("big.pcap");
    let o = sift(1, &["gen", "-c", "45000", "--seed", "21", "-w", path.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(std::fs::metadata(&path).unwrap().len() > 2 * (8 << 20), "too small to split");
    path
}

#[test]
fn threads_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cap = big_capture(dir.path());
    let cap_s = cap.to_str().unwrap();
    let tcpdump = sift_testkit::tool("tcpdump");
    for expr in ["", "tcp", "udp and port 53", "ip6"] {
        let mut files = Vec::new();
        for threads in [1, 2, 3] {
            let out = dir.path().join(format!("out{threads}.pcap"));
            let o = sift(threads, &["-r", cap_s, "-w", out.to_str().unwrap(), "--", expr]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            files.push(std::fs::read(&out).unwrap());
            let count = sift(threads, &["--count", "-r", cap_s, "--", expr]);
            let printed = sift(threads, &["-r", cap_s, "--", expr]);
            // One line per packet, starting with its time; a VXLAN packet continues on a second
            // line with the inner packet, as in tcpdump.
            let text = String::from_utf8_lossy(&printed.stdout);
            let lines = text.lines().filter(|l| l.as_bytes().get(2) == Some(&b':')).count();
            assert_eq!(String::from_utf8_lossy(&count.stdout), format!("{lines} packets\n"));
            if threads > 1 {
                let one = sift(1, &["-r", cap_s, "--", expr]);
                assert!(one.stdout == printed.stdout, "`{expr}`: printed lines differ");
            }
        }
        assert!(files[0] == files[1] && files[1] == files[2], "`{expr}`: thread counts differ");
        if let Some(t) = &tcpdump {
            let reference = dir.path().join("tcpdump.pcap");
            let o = Command::new(t)
                .args(["-r", cap_s, "-w", reference.to_str().unwrap(), "--", expr])
                .output()
                .unwrap();
            assert!(o.status.success());
            assert!(std::fs::read(&reference).unwrap() == files[0], "`{expr}`: tcpdump differs");
        }
    }
}

#[test]
fn damage_part_way_is_handled_as_sequentially() {
    let dir = tempfile::tempdir().unwrap();
    let cap = big_capture(dir.path());
    let mut bytes = std::fs::read(&cap).unwrap();
    // A record header in the middle chunk claims an impossible length.
    let mut pos = 24usize;
    while pos < bytes.len() / 2 {
        let caplen = u32::from_le_bytes(bytes[pos + 8..pos + 12].try_into().unwrap());
        pos += 16 + caplen as usize;
    }
    bytes[pos + 8..pos + 12].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let damaged = dir.path().join("damaged.pcap");
    std::fs::write(&damaged, &bytes).unwrap();
    let mut results = Vec::new();
    for threads in [1, 2] {
        let out = dir.path().join(format!("d{threads}.pcap"));
        let o = sift(threads, &["-r", damaged.to_str().unwrap(), "-w", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(err.contains(&format!("byte {pos}")) || err.contains(&pos.to_string()), "{err}");
        results.push((std::fs::read(&out).unwrap(), err.lines().last().unwrap().to_owned()));
    }
    assert!(results[0].0 == results[1].0, "different packets before the damage");
    assert_eq!(results[0].1, results[1].1, "different errors");
    assert!(results[0].0.len() > 24 + bytes.len() / 3, "the packets before the damage are kept");
}

/// Rewrites a little-endian microsecond capture: to big-endian, to nanoseconds, or with a
/// file snapshot length that clips longer records.
fn variant(bytes: &[u8], big_endian: bool, nano: bool, snaplen: Option<u32>) -> Vec<u8> {
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let put = |out: &mut Vec<u8>, v: u32| {
        out.extend_from_slice(&if big_endian { v.to_be_bytes() } else { v.to_le_bytes() })
    };
    let mut out = Vec::with_capacity(bytes.len());
    put(&mut out, if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    let (major, minor) = (2u16, 4u16);
    for v in [major, minor] {
        out.extend_from_slice(&if big_endian { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    put(&mut out, 0);
    put(&mut out, 0);
    put(&mut out, snaplen.unwrap_or(u32_at(bytes, 16)));
    put(&mut out, u32_at(bytes, 20));
    let mut pos = 24;
    while pos + 16 <= bytes.len() {
        let caplen = u32_at(bytes, pos + 8) as usize;
        let frac = u32_at(bytes, pos + 4);
        put(&mut out, u32_at(bytes, pos));
        put(&mut out, if nano { frac * 1000 + 7 } else { frac });
        put(&mut out, caplen as u32);
        put(&mut out, u32_at(bytes, pos + 12));
        out.extend_from_slice(&bytes[pos + 16..pos + 16 + caplen]);
        pos += 16 + caplen;
    }
    out
}

/// Records that cannot be copied as they are (another byte order, another precision, clipped
/// to the snapshot length) are encoded: the output is still that of one thread and tcpdump.
#[test]
fn records_not_copied_verbatim_are_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(big_capture(dir.path())).unwrap();
    let tcpdump = sift_testkit::tool("tcpdump");
    for (name, big_endian, nano, snaplen) in [
        ("big-endian", true, false, None),
        ("nanosecond", false, true, None),
        ("clipped", false, false, Some(200)),
    ] {
        let cap = dir.path().join(format!("{name}.pcap"));
        std::fs::write(&cap, variant(&bytes, big_endian, nano, snaplen)).unwrap();
        let cap_s = cap.to_str().unwrap();
        let mut files = Vec::new();
        for threads in [1, 2] {
            let out = dir.path().join(format!("{name}-{threads}.pcap"));
            let o = sift(threads, &["-r", cap_s, "-w", out.to_str().unwrap(), "tcp"]);
            assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
            files.push(std::fs::read(&out).unwrap());
        }
        assert!(files[0] == files[1], "{name}: thread counts differ");
        assert!(files[0].len() > 1 << 20, "{name}: packets were kept");
        if let Some(t) = &tcpdump {
            let reference = dir.path().join(format!("{name}-tcpdump.pcap"));
            let o = Command::new(t)
                .args(["-r", cap_s, "-w", reference.to_str().unwrap(), "tcp"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(std::fs::read(&reference).unwrap() == files[0], "{name}: tcpdump differs");
        }
    }
}
