//! An input file that changes under sift: truncated while being read (log rotation, a capture
//! ring), or named as the output too. sift ends with a located error and exit status 1, never
//! a signal, on the sequential and the parallel path, whether it writes a file or prints.
//!
//! A read is held in the middle by the output pipe: sift writes into a pipe the test reads
//! only part of, then the test truncates the input and reads the rest.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A capture of about 85 MB: big enough for the parallel path, and more than its workers read
/// ahead of the output (three 8 MiB chunks a thread), so that the cut lands in what is still
/// to be read. (What was read before the cut is real data and is delivered.)
fn big_capture(dir: &Path) -> PathBuf {
    let path = dir.join("big.pcap");
    let o = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["gen", "-c", "150000", "--seed", "5", "-w", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    path
}

/// Runs sift with `args` on `threads` threads, reads 1 MiB of its standard output, cuts the
/// input to `keep` bytes, reads the rest; returns the exit status and standard error.
fn truncate_during(threads: usize, input: &Path, keep: u64, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sift"))
        .env("SIFT_THREADS", threads.to_string())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = vec![0u8; 1 << 20];
    out.read_exact(&mut first).expect("sift writes at least 1 MiB before the cut");
    std::fs::OpenOptions::new().write(true).open(input).unwrap().set_len(keep).unwrap();
    let mut rest = Vec::new();
    out.read_to_end(&mut rest).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), None, "sift died of signal {:?}: {err}", status.signal());
    (status.code().unwrap(), err)
}

#[test]
fn a_file_truncated_during_the_read_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let original = big_capture(dir.path());
    let size = std::fs::metadata(&original).unwrap().len();
    for threads in [1, 2] {
        for args in [&["-w", "-"][..], &["-n"][..]] {
            let input = dir.path().join("input.pcap");
            std::fs::copy(&original, &input).unwrap();
            let mut all = vec!["-r", input.to_str().unwrap()];
            all.extend_from_slice(args);
            let (code, err) = truncate_during(threads, &input, size / 4, &all);
            assert_eq!(code, 1, "{threads} thread(s), {args:?}: {err}");
            assert!(
                err.contains("truncated while being read") && err.contains("input.pcap"),
                "{threads} thread(s), {args:?}: {err}"
            );
        }
    }
}

#[test]
fn the_input_as_the_output_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = big_capture(dir.path());
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("link.pcap");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    for out in [&input, &link] {
        let o = Command::new(env!("CARGO_BIN_EXE_sift"))
            .args(["-r", input.to_str().unwrap(), "-w", out.to_str().unwrap(), "tcp"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("the output is the input file"), "{err}");
        assert!(std::fs::read(&input).unwrap() == before, "the input changed");
    }
}
