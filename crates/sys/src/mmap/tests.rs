//! A mapping whose file shrinks reads zeros and records the damage; every other `SIGBUS` still
//! does what it did before the handler existed. Cases that must die run in a child process (this
//! test binary again, told which case to run by `SIFT_MMAP_CHILD`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};

use super::*;

/// A file of `len` bytes, byte `i` = `i % 251 + 1` (never zero).
fn pattern_file(path: &Path, len: usize) -> File {
    let bytes: Vec<u8> = (0..len).map(|i| (i % 251 + 1) as u8).collect();
    File::create(path).unwrap().write_all(&bytes).unwrap();
    File::open(path).unwrap()
}

fn truncate(path: &Path, len: u64) {
    OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

/// Runs the test `name` (of this module) in a child process with `SIFT_MMAP_CHILD=name`; its
/// output is shown only if the test fails.
fn run_child(name: &str) -> ExitStatus {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([&format!("mmap::tests::{name}"), "--exact", "--test-threads=1", "--nocapture"])
        .env("SIFT_MMAP_CHILD", name)
        .output()
        .unwrap();
    eprintln!(
        "child {name}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.status
}

fn is_child(name: &str) -> bool {
    std::env::var("SIFT_MMAP_CHILD").is_ok_and(|v| v == name)
}

/// Maps `path` with plain `mmap`, outside the registry, and reads `at` after truncating the file
/// to 0: a fault the handler must not repair.
fn fault_outside_the_registry(path: &Path) {
    let file = pattern_file(path, 3 * 4096);
    // SAFETY: a fresh read-only shared mapping of an open file; never unmapped (the process
    // ends in this function).
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            3 * 4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    assert_ne!(ptr, libc::MAP_FAILED);
    truncate(path, 0);
    // SAFETY: within the mapping; the read faults (the point of the test).
    let byte = unsafe { std::ptr::read_volatile(ptr.cast::<u8>().add(2 * 4096)) };
    println!("read {byte} past the end of a truncated file without a signal");
    std::process::exit(0);
}

#[test]
fn a_truncated_mapping_reads_zeros_and_records_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let len = 16 * 4096 + 100;
    let map = MappedFile::map(&pattern_file(&path, len)).unwrap();
    map.advise(Advice::Sequential).unwrap();
    assert_eq!(map.len(), len);
    let expected: Vec<u8> = (0..len).map(|i| (i % 251 + 1) as u8).collect();
    assert_eq!(map.bytes(), &expected[..]);
    assert_eq!(map.damaged_at(), None);
    assert_eq!(map.check_size(), None);
    truncate(&path, 10_000);
    // The page holding the new end still maps the file (zeros past it); the pages after it
    // fault, and the handler puts zero pages in their place.
    assert_eq!(map.bytes()[9_999], expected[9_999]);
    assert_eq!(map.damaged_at(), None, "no fault yet");
    assert_eq!(map.probe(12 * 4096 + 1), Some(10_000), "the touch faults: damage from the new end");
    assert!(map.bytes()[12 * 4096..].iter().all(|&b| b == 0));
    assert_eq!(&map.bytes()[..10_000], &expected[..10_000], "bytes before the cut are intact");
    assert!(map.bytes()[10_000..].iter().all(|&b| b == 0));
    assert_eq!(map.check_size(), Some(10_000));
    assert_eq!(map.current_size(), Some(10_000));
}

#[test]
fn a_shrink_within_a_page_is_seen_by_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let map = MappedFile::map(&pattern_file(&path, 5 * 4096)).unwrap();
    truncate(&path, 4096 + 10);
    // Nothing faults in the page holding the new end: the bytes past it read as zeros.
    assert_eq!(map.bytes()[4096 + 20], 0);
    assert_eq!(map.damaged_at(), None);
    // A record up to the new end is intact; one past it is not: the probe touches the next
    // page, which faults.
    assert_eq!(map.probe(4096 + 10), Some(4096 + 10));
    assert_eq!(map.probe(4096 + 100), Some(4096 + 10));
}

#[test]
fn a_shrink_within_the_last_page_is_found_by_fstat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let map = MappedFile::map(&pattern_file(&path, 4096 + 500)).unwrap();
    assert_eq!(map.probe(4096 + 500), None);
    truncate(&path, 4096 + 10);
    // No page vanished, nothing faults; the probe asks fstat in the last page.
    assert_eq!(map.bytes()[4096 + 20], 0);
    assert_eq!(map.damaged_at(), None);
    assert_eq!(map.probe(4096 + 500), Some(4096 + 10));
    assert_eq!(map.check_size(), Some(4096 + 10));
}

#[test]
fn threads_faulting_together_all_survive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let map = MappedFile::map(&pattern_file(&path, 256 * 4096)).unwrap();
    truncate(&path, 3 * 4096 + 1);
    std::thread::scope(|s| {
        for t in 0..4 {
            let map = &map;
            s.spawn(move || {
                let mut sum = 0u64;
                for page in (0..256).rev().skip(t) {
                    sum += u64::from(map.bytes()[page * 4096 + 7]);
                }
                std::hint::black_box(sum);
            });
        }
    });
    assert_eq!(map.damaged_at(), Some(3 * 4096 + 1));
}

#[test]
fn slots_are_reused_after_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    pattern_file(&path, 8192);
    for _ in 0..2 * MAX_MAPPINGS {
        let map = MappedFile::map(&File::open(&path).unwrap()).unwrap();
        assert_eq!(map.bytes()[8191], (8191 % 251 + 1) as u8);
        assert_eq!(map.damaged_at(), None, "a reused slot starts intact");
    }
    // Damage in one mapping does not leak into the next one in the same slot.
    let map = MappedFile::map(&File::open(&path).unwrap()).unwrap();
    truncate(&path, 0);
    assert_eq!(map.probe(8192), Some(0));
    drop(map);
    pattern_file(&path, 8192);
    let map = MappedFile::map(&File::open(&path).unwrap()).unwrap();
    assert_eq!(map.probe(8192), None);
}

#[test]
fn too_many_mappings_fail_cleanly() {
    if !is_child("too_many_mappings_fail_cleanly") {
        let status = run_child("too_many_mappings_fail_cleanly");
        assert!(status.success(), "{status}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    pattern_file(&path, 100);
    let maps: Vec<MappedFile> =
        (0..MAX_MAPPINGS).map(|_| MappedFile::map(&File::open(&path).unwrap()).unwrap()).collect();
    let err = MappedFile::map(&File::open(&path).unwrap()).unwrap_err();
    assert!(err.to_string().contains("files mapped at once"), "{err}");
    drop(maps);
    assert!(MappedFile::map(&File::open(&path).unwrap()).is_ok());
}

#[test]
fn empty_files_are_not_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let err = MappedFile::map(&pattern_file(&path, 0)).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn a_fault_outside_registered_mappings_still_kills() {
    let name = "a_fault_outside_registered_mappings_still_kills";
    if !is_child(name) {
        let status = run_child(name);
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Install the handler with a registered mapping, then fault elsewhere.
    let _registered = MappedFile::map(&pattern_file(&dir.path().join("registered"), 8192)).unwrap();
    fault_outside_the_registry(&dir.path().join("other"));
}

#[test]
fn a_sent_sigbus_keeps_the_default_action() {
    let name = "a_sent_sigbus_keeps_the_default_action";
    if !is_child(name) {
        let status = run_child(name);
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status}");
        return;
    }
    // The default disposition (Rust's runtime installs a handler of its own that lets a sent
    // SIGBUS pass; that case is the chaining test below).
    // SAFETY: setting a disposition before any handler of ours exists.
    unsafe { libc::signal(libc::SIGBUS, libc::SIG_DFL) };
    let dir = tempfile::tempdir().unwrap();
    let _registered = MappedFile::map(&pattern_file(&dir.path().join("registered"), 8192)).unwrap();
    // SAFETY: raising a signal at this process.
    unsafe { libc::raise(libc::SIGBUS) };
    std::process::exit(0);
}

#[test]
fn an_ignored_sent_sigbus_stays_ignored() {
    let name = "an_ignored_sent_sigbus_stays_ignored";
    if !is_child(name) {
        let status = run_child(name);
        assert_eq!(status.code(), Some(0), "{status}");
        return;
    }
    // SAFETY: setting a disposition before any handler of ours exists.
    unsafe { libc::signal(libc::SIGBUS, libc::SIG_IGN) };
    let dir = tempfile::tempdir().unwrap();
    let _registered = MappedFile::map(&pattern_file(&dir.path().join("registered"), 8192)).unwrap();
    // SAFETY: raising a signal at this process.
    unsafe { libc::raise(libc::SIGBUS) };
    std::process::exit(0);
}

extern "C" fn exit_42(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(42) };
}

#[test]
fn the_previous_handler_gets_faults_outside_registered_mappings() {
    let name = "the_previous_handler_gets_faults_outside_registered_mappings";
    if !is_child(name) {
        let status = run_child(name);
        assert_eq!(status.code(), Some(42), "{status}");
        return;
    }
    // SAFETY: plain data, all-zero valid.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = exit_42 as extern "C" fn(_, _, _) as usize;
    action.sa_flags = libc::SA_SIGINFO;
    // SAFETY: a valid action whose handler only calls _exit.
    unsafe {
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
    let dir = tempfile::tempdir().unwrap();
    let registered = dir.path().join("registered");
    let map = MappedFile::map(&pattern_file(&registered, 8192)).unwrap();
    // A fault in the registered mapping is still repaired, not handed on...
    truncate(&registered, 0);
    assert_eq!(map.probe(8192), Some(0));
    // ...and one elsewhere reaches the application's handler.
    fault_outside_the_registry(&dir.path().join("other"));
}
