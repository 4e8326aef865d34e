//! A progress line on standard error while a large capture is read.
//!
//! Shown only when standard error is a terminal and the input is at least 64 MiB, redrawn at
//! most five times a second, and erased at the end, so that scripts and small files see
//! exactly tcpdump's output. Never while packets are printed on the terminal the line would
//! be drawn on (standard output and standard error on the same terminal): the line would land
//! in the middle of the packets' lines.

use std::io::{IsTerminal, Write};
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

/// Inputs smaller than this finish too soon to need a progress line.
const MIN_SIZE: u64 = 64 << 20;

/// The progress display (inactive when not wanted).
pub struct Progress {
    total: u64,
    active: bool,
    started: Instant,
    last: Instant,
    drawn: bool,
}

impl Progress {
    /// A display for `total` input bytes (0 when unknown: inactive); `printing`: packets are
    /// printed on standard output.
    pub fn new(total: u64, printing: bool) -> Progress {
        let now = Instant::now();
        Progress {
            total,
            active: wanted(
                total,
                std::io::stderr().is_terminal(),
                printing && std::io::stdout().is_terminal() && same_terminal(),
            ),
            started: now,
            last: now,
            drawn: false,
        }
    }

    /// Redraws the line if it is due: `done` bytes read, `matched` packets kept.
    pub fn update(&mut self, done: u64, matched: u64) {
        if !self.active || self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = Instant::now();
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let line = format!(
            "\r{:5.1}%  {} / {} MiB  {:.0} MiB/s  {matched} matched ",
            done as f64 * 100.0 / self.total as f64,
            done >> 20,
            self.total >> 20,
            done as f64 / secs / f64::from(1 << 20)
        );
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the line, if one was drawn.
    pub fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

/// Whether to draw: a large input, standard error a terminal, and no packets printed on it.
fn wanted(total: u64, stderr_terminal: bool, printing_there: bool) -> bool {
    total >= MIN_SIZE && stderr_terminal && !printing_there
}

/// Whether standard output and standard error are the same terminal (the same device; when
/// that cannot be told, assumed).
fn same_terminal() -> bool {
    let device = |fd: u32| std::fs::metadata(format!("/proc/self/fd/{fd}")).map(|m| m.rdev());
    match (device(1), device(2)) {
        (Ok(a), Ok(b)) => a == b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_only_on_a_terminal_free_of_packets() {
        assert!(wanted(MIN_SIZE, true, false));
        assert!(!wanted(MIN_SIZE, true, true), "packets are printed on that terminal");
        assert!(!wanted(MIN_SIZE, false, false), "not a terminal");
        assert!(!wanted(MIN_SIZE - 1, true, false), "small input");
    }
}
