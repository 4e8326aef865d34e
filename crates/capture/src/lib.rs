//! Live capture and injection on Linux.
//!
//! The 1987 packet filter delivered packets to user processes in batches, with timestamps and
//! drop counts, and let them transmit; BPF (1993) filtered in place in the kernel so rejected
//! packets were never copied, and buffered packets for batched reads. On Linux today that is an
//! `AF_PACKET` socket with a memory-mapped `TPACKET_V3` ring and a classic BPF program attached
//! with `SO_ATTACH_FILTER`, which is what this crate drives:
//!
//! * [`Capture`]: open an interface (or `any`, with libpcap's cooked headers), set the filter
//!   (in the kernel when it takes it, after libpcap's cooked-header rewriting in [`cooked`];
//!   otherwise the caller's user-space filter runs), take packets block by block, read the
//!   counters with libpcap's meaning ([`Stats`]), and [drain](Capture::drain) the ring at the
//!   end so that every packet counted is delivered.
//! * [`Injector`]: send frames on an interface.
//! * [`iface::list`]: the interfaces (`sift -D`); [`stop_on_signals`]: SIGINT/SIGTERM as a flag.
//!
//! The system calls are `sift-sys`'s safe wrappers; this crate has no `unsafe` code.
#![forbid(unsafe_code)]

mod capture;
pub mod cooked;
pub mod iface;
mod inject;

use std::io;
use std::sync::atomic::AtomicBool;

pub use capture::{
    Capture, Config, Direction, Frame, FrameMeta, MAX_SNAPLEN, Placement, Stats, UserFilter,
    check_privileges, link_type_for_hatype,
};
pub use inject::Injector;

/// What kind of failure a [`CaptureError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not allowed (no root / `CAP_NET_RAW` / `CAP_NET_ADMIN`).
    Permission,
    /// The interface does not exist.
    NoSuchDevice,
    /// Anything else.
    Io,
}

/// A capture or injection failure: the interface, what was being done, and the OS error.
#[derive(Debug, thiserror::Error)]
#[error("{}{what} ({source})", if interface.is_empty() { String::new() } else { format!("{interface}: ") })]
pub struct CaptureError {
    /// The interface concerned (empty when none).
    pub interface: String,
    /// The kind of failure.
    pub kind: ErrorKind,
    /// What failed, in words.
    pub what: String,
    /// The OS error.
    #[source]
    pub source: io::Error,
}

/// Installs a SIGINT/SIGTERM handler that sets the returned flag (and interrupts blocking
/// waits, so a capture loop notices it within one poll).
pub fn stop_on_signals() -> io::Result<&'static AtomicBool> {
    sift_sys::signal::install_stop_handler(&[libc::SIGINT, libc::SIGTERM])
}

/// Formats `secs` (Unix time) in the local time zone with `strftime`, as tcpdump names the
/// files of `-G`.
pub fn strftime_local(pattern: &str, secs: i64) -> io::Result<String> {
    sift_sys::time::strftime_local(pattern, secs)
}
