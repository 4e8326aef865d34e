//! A capture file that shrinks while sift reads it (log rotation, a `-C/-W` ring, another
//! program rewriting it): the read ends with an error located at the truncation, never with a
//! signal, and every packet delivered before it is the file's real data. Covers the sequential
//! reader (pcap and pcapng), the chunked reader of [`sift_pcap::split`] and the one-copy writer
//! path (`write_pieces_from`), plus `same_file` (`-r X -w X`).

mod common;

use std::fs::{File, OpenOptions};
use std::path::Path;

use common::*;
use sift_pcap::{ErrorKind, PcapWriter, Precision, WriteError};

/// Writes `bytes` to `dir/name` and returns the path.
fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Cuts the file at `path` to `len` bytes through a handle of its own, as another program would.
fn truncate(path: &Path, len: u64) {
    OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

/// The end offset of each record of a classic pcap file made by `pcap_file`.
fn record_ends(pkts: &[Pkt]) -> Vec<u64> {
    let mut at = 24u64;
    pkts.iter()
        .map(|p| {
            at += 16 + p.data.len() as u64;
            at
        })
        .collect()
}

/// Reads `first` packets, truncates the file to `cut`, reads on: the reader must end with the
/// located truncation error, after delivering only real packets. Returns the packets delivered
/// in all and the error.
fn read_through_truncation(
    path: &Path,
    first: usize,
    cut: u64,
) -> (Vec<Pkt>, Option<sift_pcap::Error>) {
    let mut reader = sift_pcap::open(path).unwrap();
    let mut got = Vec::new();
    for _ in 0..first {
        let p = reader.next_packet().unwrap().expect("a packet before the cut");
        got.push(Pkt {
            secs: p.timestamp.secs,
            nanos: p.timestamp.nanos,
            wire_len: p.wire_len,
            data: p.data.to_vec(),
            interface: p.interface,
        });
    }
    truncate(path, cut);
    let (rest, err) = read_all(&mut reader);
    got.extend(rest);
    (got, err)
}

#[test]
fn pcap_truncated_during_a_read_ends_with_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let pkts = packets(3000, 21);
    let bytes = pcap_file(false, true, 1, 65535, &pkts);
    let ends = record_ends(&pkts);
    // Cuts inside a record, at a page boundary, at a record boundary, inside the next page.
    for cut in [bytes.len() as u64 / 2 + 7, 1 << 20, ends[1500], ends[200] + 4096 + 3] {
        let path = write_file(dir.path(), "t.pcap", &bytes);
        let (got, err) = read_through_truncation(&path, 100, cut);
        let err = err.unwrap_or_else(|| panic!("cut {cut}: the read must not end cleanly"));
        assert!(
            matches!(err.kind, ErrorKind::TruncatedWhileReading { size } if size == cut),
            "cut {cut}: {err}"
        );
        assert_eq!(err.offset, cut, "cut {cut}: located at the new end");
        assert_eq!(
            err.to_string(),
            format!(
                "byte {cut}: the file was truncated while being read (it now holds {cut} bytes)"
            )
        );
        // Exactly the packets wholly before the cut, each the real one.
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(got.len(), complete, "cut {cut}");
        assert!(got == pkts[..complete], "cut {cut}: the packets delivered are the file's");
    }
}

#[test]
fn pcapng_truncated_during_a_read_ends_with_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let pkts = packets(3000, 22);
    let mut e = Enc::new(false);
    shb(&mut e);
    idb(&mut e, 1, 0, "eth0", 9);
    let mut ends = Vec::new();
    for p in &pkts {
        epb(&mut e, 0, 9, p);
        ends.push(e.buf.len() as u64);
    }
    let cut = e.buf.len() as u64 / 3 + 5;
    let path = write_file(dir.path(), "t.pcapng", &e.buf);
    let (got, err) = read_through_truncation(&path, 50, cut);
    let err = err.expect("the read must not end cleanly");
    assert!(matches!(err.kind, ErrorKind::TruncatedWhileReading { size } if size == cut), "{err}");
    assert_eq!(err.offset, cut);
    let complete = ends.iter().filter(|&&x| x <= cut).count();
    assert!(got == pkts[..complete], "{} packets delivered, {complete} before the cut", got.len());
}

#[test]
fn truncation_to_a_page_boundary_loses_no_packet() {
    // A cut at a page boundary leaves no partially-zeroed page: every packet wholly before the
    // cut is delivered, exactly, and none after.
    let dir = tempfile::tempdir().unwrap();
    let pkts = packets(2000, 23);
    let bytes = pcap_file(true, false, 1, 65535, &pkts);
    let ends = record_ends(&pkts);
    let cut = 64 * 4096;
    let path = write_file(dir.path(), "t.pcap", &bytes);
    let (got, err) = read_through_truncation(&path, 10, cut);
    let err = err.expect("located error");
    let complete = ends.iter().filter(|&&e| e <= cut).count();
    assert_eq!(got, to_micro(&pkts[..complete]));
    assert_eq!(err.offset, cut, "{err}");
}

#[test]
fn truncation_to_zero_and_regrowth_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let pkts = packets(1000, 24);
    let bytes = pcap_file(false, false, 1, 65535, &pkts);
    let path = write_file(dir.path(), "t.pcap", &bytes);
    let (got, err) = read_through_truncation(&path, 5, 0);
    assert!(got.len() >= 5);
    assert_eq!(got[..5], to_micro(&pkts[..5]));
    let err = err.expect("located error");
    assert!(matches!(err.kind, ErrorKind::TruncatedWhileReading { size: 0 }), "{err}");
    assert!(err.offset < 4096, "{err}");
}

/// When the one-copy run below truncates its input.
#[derive(Clone, Copy, Debug)]
enum When {
    /// After the first chunk was written: the next chunk's reader meets the damage.
    BetweenChunks,
    /// After the second chunk was read, before it is written: the writer's first check.
    BeforeWrite,
    /// Inside the writer, just before its `n`th `writev`: the kernel meets the damage.
    DuringWritev(usize),
}

/// An output that truncates the input just before its `n`th vectored write.
struct TruncatingOutput {
    out: File,
    writes: usize,
    truncate_before: usize,
    input: std::path::PathBuf,
    cut: u64,
}

impl std::io::Write for TruncatingOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        self.writes += 1;
        if self.writes == self.truncate_before {
            truncate(&self.input, self.cut);
        }
        self.out.write_vectored(bufs)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A filtered copy as the parallel runner makes it (chunks read with `records`, records taken
/// verbatim from the mapping or, when `encode_every` picks them, encoded by the caller, written
/// with `write_pieces_from`), with the input cut to `cut` at `when`. Returns the packets of the
/// output after cutting it back to the writer's `complete` length, and the error.
fn copy_through_truncation(
    pkts: &[Pkt],
    cut: u64,
    when: When,
    encode_every: usize,
) -> (Vec<Pkt>, sift_pcap::Error) {
    let dir = tempfile::tempdir().unwrap();
    let bytes = pcap_file(false, true, 1, 65535, pkts);
    let path = write_file(dir.path(), "in.pcap", &bytes);
    let out_path = dir.path().join("out.pcap");
    let reader = sift_pcap::open(&path).unwrap();
    let file = reader.pcap_bytes().expect("a mapped classic pcap");
    let output = TruncatingOutput {
        out: File::create(&out_path).unwrap(),
        writes: 0,
        truncate_before: match when {
            When::DuringWritev(n) => n,
            _ => usize::MAX,
        },
        input: path.clone(),
        cut,
    };
    let mut writer =
        PcapWriter::new(output, sift_pcap::LinkType::new(1), 0, 65535, Precision::Nano).unwrap();
    let bounds: Vec<u64> = (0..=4).map(|i| 24 + (bytes.len() as u64 - 24) * i / 4).collect();
    let mut start = 24;
    let mut failure = None;
    for i in 0..4 {
        let mut records = file.records(start, bounds[i + 1].max(start));
        // The chunk's output: encoded bytes in `buf`, file ranges inserted where `buf` had
        // the given length (as the runner's `Encoded`).
        let mut buf = Vec::new();
        let mut runs: Vec<(usize, std::ops::Range<u64>)> = Vec::new();
        let mut error = None;
        for (n, p) in records.by_ref().enumerate() {
            let p = match p {
                Ok(p) => p,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            };
            if encode_every != 0 && n % encode_every == 0 {
                buf.extend_from_slice(
                    &PcapWriter::<std::io::Sink>::record_header(
                        Precision::Nano,
                        p.timestamp,
                        p.wire_len,
                        p.data.len(),
                    )
                    .unwrap(),
                );
                buf.extend_from_slice(p.data);
            } else {
                runs.push((buf.len(), file.verbatim(&p, Precision::Nano).expect("verbatim")));
            }
        }
        let stop = records.stop();
        if i == 1 && matches!(when, When::BeforeWrite) {
            truncate(&path, cut);
        }
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut from = 0;
        for (at, r) in &runs {
            pieces.push(&buf[from..*at]);
            pieces.push(&file.bytes()[r.start as usize..r.end as usize]);
            from = *at;
        }
        pieces.push(&buf[from..]);
        pieces.retain(|p| !p.is_empty());
        if let Err(e) = writer.write_pieces_from(&file, stop, pieces) {
            failure = Some(e);
            break;
        }
        if let Some(e) = error {
            failure = Some(WriteError::Input { error: e, complete: writer.written() });
            break;
        }
        if i == 0 && matches!(when, When::BetweenChunks) {
            truncate(&path, cut);
        }
        start = stop;
    }
    let failure = failure.unwrap_or_else(|| panic!("{when:?}: the truncation must end the run"));
    let (error, complete) = match failure {
        WriteError::Input { error, complete } => (error, complete),
        other => panic!("{when:?}: expected the input's truncation, got {other}"),
    };
    let out = writer.finish().unwrap().out;
    out.set_len(complete).unwrap();
    drop(out);
    drop(reader);
    let (got, err) = read_bytes(&std::fs::read(&out_path).unwrap()).unwrap();
    assert!(err.is_none(), "{when:?}: the output ends with complete records: {err:?}");
    (got, error)
}

/// The chunked reader as the parallel runner uses it, and the one-copy writer: the output
/// ends with complete records, all the input's real ones, and the error is the located
/// truncation, wherever the truncation strikes.
#[test]
fn split_and_write_pieces_stop_at_a_truncation() {
    let pkts = packets(4000, 25);
    let ends = record_ends(&pkts);
    let total = *ends.last().unwrap();
    for encode_every in [0, 3] {
        for (when, cut) in [
            (When::BetweenChunks, total * 2 / 3 + 11),
            (When::BeforeWrite, total * 3 / 8 + 5),
            (When::BeforeWrite, ends[1300]),
            // The first chunk's writes are 128 KiB each: the fourth falls inside it.
            (When::DuringWritev(4), total / 5 + 1),
            (When::DuringWritev(4), 24),
        ] {
            let what = format!("{when:?}, cut {cut}, every {encode_every}th record encoded");
            let (got, err) = copy_through_truncation(&pkts, cut, when, encode_every);
            assert!(
                matches!(err.kind, ErrorKind::TruncatedWhileReading { size } if size == cut),
                "{what}: {err}"
            );
            assert_eq!(err.offset, cut, "{what}");
            // A prefix of the input's packets, all wholly before the cut; with every record
            // copied verbatim, all of those.
            let complete = ends.iter().filter(|&&e| e <= cut).count();
            assert!(
                got.len() <= complete,
                "{what}: {} packets, {complete} before the cut",
                got.len()
            );
            assert!(got == pkts[..got.len()], "{what}: the output holds the input's real packets");
            if encode_every == 0 {
                assert_eq!(got.len(), complete, "{what}");
            }
        }
    }
}

#[test]
fn same_file_sees_through_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_file(dir.path(), "a.pcap", b"x");
    let b = write_file(dir.path(), "b.pcap", b"x");
    assert!(sift_pcap::same_file(&a, &a).unwrap());
    assert!(!sift_pcap::same_file(&a, &b).unwrap());
    // Another name for the same file: a hard link, a symbolic link, a path with `..`.
    let hard = dir.path().join("hard.pcap");
    std::fs::hard_link(&a, &hard).unwrap();
    assert!(sift_pcap::same_file(&a, &hard).unwrap());
    let soft = dir.path().join("soft.pcap");
    std::os::unix::fs::symlink(&a, &soft).unwrap();
    assert!(sift_pcap::same_file(&a, &soft).unwrap());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert!(sift_pcap::same_file(&a, &dir.path().join("sub/../a.pcap")).unwrap());
    // An output that does not exist yet is not the input.
    assert!(!sift_pcap::same_file(&a, &dir.path().join("new.pcap")).unwrap());
    // Devices are never "the same file" (`-r /dev/stdin -w /dev/stdout` on one terminal).
    assert!(!sift_pcap::same_file(Path::new("/dev/null"), Path::new("/dev/null")).unwrap());
}
