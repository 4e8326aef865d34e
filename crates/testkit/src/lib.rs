//! Test support shared by sift's crates.
//!
//! Two policies live here so that every test applies them the same way:
//!
//! * **Oracles.** Differential tests compare sift with the real thing (tcpdump, editcap, the system
//!   libpcap, the kernel). On a developer machine an oracle may be missing; the test then prints
//!   why it skipped. CI sets `SIFT_REQUIRE_ORACLES=1`, and a missing oracle becomes a failure, so
//!   a differential test can never pass vacuously there.
//! * **Golden files.** Expected output is kept in text files beside the input. A mismatch fails
//!   with both texts; `BLESS=1` rewrites the expectation instead.
//!
//! And one generator, [`Rng`], for tests that draw programs, packets and operations: the same
//! seed gives the same cases everywhere; [`ebpf_random`] draws eBPF programs the kernel accepts
//! with it.
#![forbid(unsafe_code)]

pub mod ebpf_random;

use std::path::{Path, PathBuf};

/// Whether missing oracles are failures (`SIFT_REQUIRE_ORACLES=1`, set by `.ci/run`).
pub fn oracles_required() -> bool {
    std::env::var("SIFT_REQUIRE_ORACLES").is_ok_and(|v| v == "1")
}

/// Reports that an oracle is missing: panics when oracles are required, otherwise prints the
/// reason and returns `None` so the caller can skip.
pub fn oracle_missing<T>(what: &str, reason: impl std::fmt::Display) -> Option<T> {
    if oracles_required() {
        panic!("oracle {what} is required (SIFT_REQUIRE_ORACLES=1) but unavailable: {reason}");
    }
    eprintln!("SKIP: oracle {what} unavailable: {reason}");
    None
}

/// Unwraps an oracle that may fail to load, applying the skip/require policy.
pub fn oracle<T, E: std::fmt::Display>(what: &str, loaded: Result<T, E>) -> Option<T> {
    match loaded {
        Ok(v) => Some(v),
        Err(e) => oracle_missing(what, e),
    }
}

/// Finds an external program (tcpdump, editcap, capinfos, tshark…) on `PATH`, applying the
/// skip/require policy when it is missing.
pub fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in
        std::env::split_paths(&path).chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
    {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    oracle_missing(name, "not found on PATH")
}

/// Whether this process runs as root (needed for namespaces, `bpf(2)` and raw sockets).
pub fn is_root() -> bool {
    // /proc/self/status has "Uid:\treal\teffective…"; avoids a libc dependency here.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The workspace root (the directory holding the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).expect("crates/testkit sits two levels below the root").to_path_buf()
}

/// `../shared` beside the checkout, where the libpcap corpus and notes live.
pub fn shared_dir() -> PathBuf {
    workspace_root().join("..").join("shared")
}

/// A reference corpus directory, `../shared/corpus/NAME` (`libpcap`, `tcpdump`, `pf/pfctl`,
/// `ebpf`, …), applying the skip/require policy when it is missing.
pub fn corpus(name: &str) -> Option<PathBuf> {
    let dir = shared_dir().join("corpus").join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        oracle_missing(&format!("{name} corpus"), format!("{} is missing", dir.display()))
    }
}

/// The libpcap corpus directory (`../shared/corpus/libpcap`): [`corpus`]`("libpcap")`.
pub fn libpcap_corpus() -> Option<PathBuf> {
    corpus("libpcap")
}

/// Compares `actual` with the golden file at `path`; with `BLESS=1` rewrites the file instead.
///
/// Panics with both texts when they differ, naming `BLESS=1` as the way to accept the change.
pub fn golden(path: &Path, actual: &str) {
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, actual)
            .unwrap_or_else(|e| panic!("cannot bless {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected != actual {
        let mut report = String::new();
        for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
            if e != a {
                report = format!(
                    "first difference at line {}:\n  expected: {e}\n  actual:   {a}\n",
                    i + 1
                );
                break;
            }
        }
        panic!(
            "golden mismatch for {}\n{report}--- expected ({} lines)\n{expected}\n--- actual ({} lines)\n{actual}\n\
             re-run with BLESS=1 to accept the actual output",
            path.display(),
            expected.lines().count(),
            actual.lines().count()
        );
    }
}

/// Runs a case file of the form `=== NAME`, `input: TEXT`, followed by expected output lines:
/// for each case, `render(name, input)` produces the expected lines, and the whole file is
/// checked (or with `BLESS=1` rewritten) by [`golden`]. Returns the number of cases.
pub fn golden_cases(path: &Path, mut render: impl FnMut(&str, &str) -> String) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    let mut n = 0;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("=== ") else { continue };
        let input = lines
            .next()
            .and_then(|l| l.strip_prefix("input:"))
            .unwrap_or_else(|| panic!("{}: case {name} has no `input:` line", path.display()));
        let input = input.strip_prefix(' ').unwrap_or(input);
        while lines.peek().is_some_and(|l| !l.starts_with("=== ")) {
            lines.next();
        }
        out.push_str(&format!("=== {name}\ninput: {input}\n"));
        out.push_str(&render(name, input));
        n += 1;
    }
    golden(path, &out);
    n
}

/// A small deterministic generator (xorshift64*) for generated test cases. The seed must not
/// be 0.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    // A generator that never ends, not an iterator: `next` as the tests have always called it.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// One of `xs` (not empty).
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}
