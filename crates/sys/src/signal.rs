//! Signals as flags and counters that a capture loop polls.
//!
//! A live capture must stop cleanly on Ctrl-C (drain the ring, print the counters) rather than
//! die, and, as tcpdump, go on after SIGUSR1 (print the counters) and SIGUSR2 (flush the
//! output). The handlers only store to atomics (async-signal-safe), and are installed without
//! `SA_RESTART` so that a blocked `poll` returns at once and the loop sees what changed.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::cvt;

/// Set by the stop handler.
static STOP: AtomicBool = AtomicBool::new(false);

/// Deliveries per signal number, for the counting handler (Linux numbers signals below 65).
static COUNTS: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_counted_signal(sig: libc::c_int) {
    if let Some(count) = usize::try_from(sig).ok().and_then(|s| COUNTS.get(s)) {
        count.fetch_add(1, Ordering::SeqCst);
    }
}

/// Installs `handler` for `sig`, without `SA_RESTART`.
fn install(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) -> io::Result<()> {
    // SAFETY: sigaction is plain data; all-zero is a valid (empty) value.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as usize;
    // SAFETY: `sa.sa_mask` is a live sigset_t.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: `sa` is a valid sigaction whose handler only stores to atomics
    // (async-signal-safe).
    cvt(unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) })?;
    Ok(())
}

/// Installs the handler for `signals` (without `SA_RESTART`, so a blocked `poll` returns) and
/// returns the flag it sets. The flag is one for the process: every call returns the same.
pub fn install_stop_handler(signals: &[libc::c_int]) -> io::Result<&'static AtomicBool> {
    for &sig in signals {
        install(sig, on_stop_signal)?;
    }
    Ok(&STOP)
}

/// Installs a handler for `sig` that counts its deliveries, and returns the counter (one per
/// signal for the process: every call for `sig` returns the same).
pub fn install_count_handler(sig: libc::c_int) -> io::Result<&'static AtomicU64> {
    let Some(count) = usize::try_from(sig).ok().and_then(|s| COUNTS.get(s)) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    install(sig, on_counted_signal)?;
    Ok(count)
}

/// Whether `sig` is ignored (`SIG_IGN`) now, as `nohup` leaves SIGHUP for the programs it
/// starts: tcpdump then leaves it ignored.
pub fn is_ignored(sig: libc::c_int) -> io::Result<bool> {
    // SAFETY: sigaction is plain data; all-zero is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`, which is live.
    cvt(unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) })?;
    Ok(old.sa_sigaction == libc::SIG_IGN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_signals_are_counted_and_the_process_goes_on() {
        let count = install_count_handler(libc::SIGUSR2).unwrap();
        let before = count.load(Ordering::SeqCst);
        // SAFETY: raise only delivers a signal whose handler was installed above.
        assert_eq!(unsafe { libc::raise(libc::SIGUSR2) }, 0);
        assert_eq!(count.load(Ordering::SeqCst), before + 1);
        assert!(!is_ignored(libc::SIGUSR2).unwrap());
        assert!(install_count_handler(1000).is_err());
    }
}
