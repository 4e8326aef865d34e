//! Signals as a flag: SIGINT and SIGTERM set an atomic that a capture loop polls.
//!
//! A live capture must stop cleanly on Ctrl-C (drain the ring, print the counters) rather than
//! die; the handler only sets a flag, and is installed without `SA_RESTART` so that a blocked
//! `poll` returns at once and the loop sees the flag.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cvt;

/// Set by the handler.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for `signals` (without `SA_RESTART`, so a blocked `poll` returns) and
/// returns the flag it sets. The flag is one for the process: every call returns the same.
pub fn install_stop_handler(signals: &[libc::c_int]) -> io::Result<&'static AtomicBool> {
    for &sig in signals {
        // SAFETY: sigaction is plain data; all-zero is a valid (empty) value.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as usize;
        // SAFETY: `sa.sa_mask` is a live sigset_t.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is a valid sigaction whose handler only stores to an atomic
        // (async-signal-safe).
        cvt(unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) })?;
    }
    Ok(&STOP)
}
