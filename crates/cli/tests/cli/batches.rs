//! The sequential path reads and filters packets a batch at a time, and must still behave as
//! one packet at a time: `-c N` delivers N packets and stops without meeting damage further
//! on (as tcpdump), and without `-c` every packet before the damage is delivered, then the
//! located error, wherever the damage falls in a batch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each packet's offset, and whether `expr` keeps it, reading one packet at a time.
fn verdicts(path: &Path, expr: &str) -> Vec<(u64, bool)> {
    let mut source = sift::input::Source::open(&[path]).unwrap();
    let mut filter = sift::Filter::new(expr);
    let mut out = Vec::new();
    while let Some((p, ifaces)) = source.next_packet().unwrap() {
        out.push((p.offset, filter.accepts(&p, &ifaces[p.interface as usize]).unwrap()));
    }
    out
}

/// `bytes` with the record at `offset` claiming a captured length past the end of the file.
fn damaged_at(dir: &Path, bytes: &[u8], offset: u64) -> PathBuf {
    let mut bytes = bytes.to_vec();
    let at = offset as usize + 8;
    bytes[at..at + 4].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let path = dir.join("damaged.pcap");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_count_stops_at_its_last_packet_and_damage_ends_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    let input_s = input.to_str().unwrap();
    let o = sift(&["gen", "-c", "6000", "--seed", "9", "-w", input_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&input).unwrap();
    let all = verdicts(&input, "tcp");
    let kept: Vec<usize> = (0..all.len()).filter(|&i| all[i].1).collect();
    assert!(kept.len() > 2_100, "{}", kept.len());
    let tcpdump = sift_testkit::tool("tcpdump");
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for n in [1, 700, 1_024, 1_500, 2_000] {
        // The record after the (n + 5)-th TCP packet is damaged.
        let damage = all[kept[n + 4] + 1].0;
        let cut = damaged_at(dir.path(), &bytes, damage);
        let cut_s = cut.to_str().unwrap();
        let count = n.to_string();
        // -c n: n packets, and no error (the damage is further on).
        let o = sift(&["-r", cut_s, "-w", &out("c.pcap"), "-c", &count, "tcp"]);
        assert!(o.status.success(), "-c {n}: {}", stderr(&o));
        let read = kept[n - 1] + 1;
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        let summary = format!("{read} packet{} read, {n} written", plural(read));
        assert!(stderr(&o).contains(&summary), "-c {n}: {}", stderr(&o));
        let o = sift(&["-r", cut_s, "--count", "-c", &count, "tcp"]);
        assert!(o.status.success(), "--count -c {n}: {}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{n} packet{}\n", plural(n)));
        let o = sift(&["-r", cut_s, "-c", &count, "tcp"]);
        assert!(o.status.success(), "printing -c {n}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        let lines = text.lines().filter(|l| l.as_bytes().get(2) == Some(&b':')).count();
        assert_eq!(lines, n, "printing -c {n}");
        let o = sift(&["-r", input_s, "-w", &out("ref.pcap"), "-c", &count, "tcp"]);
        assert!(o.status.success());
        let copied = std::fs::read(out("c.pcap")).unwrap();
        assert!(copied == std::fs::read(out("ref.pcap")).unwrap(), "-c {n}: other packets");
        // Without a count: the n + 5 packets before the damage, then the damage, located.
        let o = sift(&["-r", cut_s, "-w", &out("all.pcap"), "tcp"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("byte {damage}")), "{}", stderr(&o));
        let more = (n + 5).to_string();
        let o = sift(&["-r", input_s, "-w", &out("ref.pcap"), "-c", &more, "tcp"]);
        assert!(o.status.success());
        let before = std::fs::read(out("all.pcap")).unwrap();
        assert!(before == std::fs::read(out("ref.pcap")).unwrap(), "{n}: not all before damage");
        if let Some(t) = &tcpdump {
            let o = Command::new(t)
                .args(["-r", cut_s, "-w", &out("t.pcap"), "-c", &count, "tcp"])
                .output()
                .unwrap();
            assert!(o.status.success(), "tcpdump -c {n}");
            assert!(std::fs::read(out("t.pcap")).unwrap() == copied, "-c {n}: tcpdump differs");
        }
    }
}
