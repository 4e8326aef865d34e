//! Time: local time as text (the C library's `strftime` and time zone rules), the kernel's
//! monotonic clock, and the CPU time of the calling thread.
//!
//! tcpdump names the files of `-w … -G` by passing the pattern to `strftime` in local time;
//! doing the same (rather than reimplementing the conversions and the zone database) gives the
//! same names for every pattern.

use std::io;

/// `strftime(pattern, localtime(secs))`.
pub fn strftime_local(pattern: &str, secs: i64) -> io::Result<String> {
    let Ok(fmt) = std::ffi::CString::new(pattern) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: tm is plain data; all-zero is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: `t` and `tm` are live; localtime_r is the thread-safe variant.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return Err(io::Error::other("localtime_r failed"));
    }
    let mut buf = vec![0u8; 4096 + pattern.len() * 8];
    // SAFETY: `buf` is writable for its length, `fmt` is NUL-terminated and `tm` was filled by
    // localtime_r.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), &tm) };
    if n == 0 && !pattern.is_empty() {
        return Err(io::Error::other("strftime produced nothing"));
    }
    buf.truncate(n);
    String::from_utf8(buf).map_err(|_| io::Error::other("strftime produced invalid UTF-8"))
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of the kernel's `bpf_ktime_get_ns`, which eBPF
/// programs stamp their map entries with (pf's states in the kernel).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_THREAD_CPUTIME_ID` in nanoseconds: the CPU time the calling thread has used (user
/// and system), what a datapath thread's cost per packet is measured with.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, writable timespec; the thread CPU clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}
