//! Sockets of any family: `AF_UNIX` datagram sockets, socket options, the classic BPF filter
//! attached to a socket, send, receive and poll.
//!
//! The classic filter is the same system call for every socket type (`SO_ATTACH_FILTER` with a
//! `struct sock_fprog`): live capture attaches it to `AF_PACKET` sockets, the kernel oracles to
//! `AF_UNIX` pairs and veth taps. It lives here once, with the one reading of its errors
//! ([`is_filter_rejection`]).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use sift_insn::Insn;

use crate::{Plain, cvt, cvt_size_retry, owned_fd};

/// An unconnected `AF_UNIX` datagram socket (close-on-exec). Needs no privilege: a filter can
/// be attached to it to ask the kernel's checker about a program.
pub fn unix_dgram() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant arguments; the descriptor it returns is new and ours.
    unsafe { owned_fd(libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)) }
}

/// A connected pair of `AF_UNIX` datagram sockets (close-on-exec): what is sent on one is
/// received, whole, on the other.
pub fn unix_dgram_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for socketpair to fill.
    cvt(unsafe {
        libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
    })?;
    // SAFETY: socketpair succeeded, so both are new descriptors that nobody else owns.
    unsafe { Ok((owned_fd(fds[0])?, owned_fd(fds[1])?)) }
}

/// `setsockopt` with a plain-data value.
pub(crate) fn setsockopt<T: Plain>(
    fd: impl AsFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: `value` is a live T (plain data, see `Plain`) and the length passed is its size;
    // the kernel only reads it during the call.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `getsockopt` into a plain-data value.
pub(crate) fn getsockopt<T: Plain>(
    fd: impl AsFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<T> {
    let mut value = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes, any bit pattern is a valid T (plain data),
    // and `len` is a live socklen_t.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&mut value as *mut T).cast(),
            &mut len,
        )
    })?;
    Ok(value)
}

/// The socket's send buffer, `bytes` (capped at `c_int::MAX`): `SO_SNDBUFFORCE` (root, ignores
/// the `wmem_max` sysctl), or else `SO_SNDBUF` (capped by it). The error is the plain option's.
/// For `AF_UNIX` datagram sockets this bounds the largest datagram.
pub fn set_send_buffer(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    set_buffer(fd, bytes, libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)
}

/// The socket's receive buffer, as [`set_send_buffer`] (`SO_RCVBUFFORCE`, else `SO_RCVBUF`).
pub fn set_receive_buffer(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    set_buffer(fd, bytes, libc::SO_RCVBUFFORCE, libc::SO_RCVBUF)
}

fn set_buffer(
    fd: impl AsFd,
    bytes: usize,
    force: libc::c_int,
    plain: libc::c_int,
) -> io::Result<()> {
    let fd = fd.as_fd();
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    setsockopt(fd, libc::SOL_SOCKET, force, &v)
        .or_else(|_| setsockopt(fd, libc::SOL_SOCKET, plain, &v))
}

/// `SO_RCVTIMEO`: blocking receives give up after `timeout` (see [`Wait::UntilTimeout`]).
pub fn set_receive_timeout(fd: impl AsFd, timeout: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: `tv` is a live timeval and the length passed is its size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const Insn,
}

/// `SO_ATTACH_FILTER`: runs `prog` on every packet or datagram queued to the socket (0 drops
/// it, a smaller value than its length truncates it), replacing the filter attached before.
/// On error the previous filter stays. [`is_filter_rejection`] tells the kernel refusing the
/// program from a failure to ask.
pub fn attach_filter(fd: impl AsFd, prog: &[Insn]) -> io::Result<()> {
    // sock_fprog counts instructions in an unsigned short; anything longer is far beyond
    // BPF_MAXINSNS and would be rejected anyway.
    let Ok(len) = libc::c_ushort::try_from(prog.len()) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let fprog = SockFprog { len, filter: prog.as_ptr() };
    // SAFETY: `fprog` points to `len` instructions laid out as struct sock_filter (Insn is
    // #[repr(C)] with the same fields); the kernel copies them during the call.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            (&fprog as *const SockFprog).cast(),
            std::mem::size_of::<SockFprog>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `SO_DETACH_FILTER`: removes the attached filter (`ENOENT` when there is none).
pub fn detach_filter(fd: impl AsFd) -> io::Result<()> {
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_DETACH_FILTER, &0 as &libc::c_int)
}

/// Whether an error from [`attach_filter`] is the kernel refusing the program (`EINVAL` from
/// its checker, also for an empty program or one longer than `BPF_MAXINSNS`; `ENOMEM` for one
/// too large to allocate) rather than a failure to ask (`EBADF`, `EMFILE`, `EPERM`…).
pub fn is_filter_rejection(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOMEM))
}

/// `send` (without `SIGPIPE`), retried when a signal interrupts it; returns the bytes sent.
pub fn send(fd: impl AsFd, data: &[u8]) -> io::Result<usize> {
    let fd = fd.as_fd().as_raw_fd();
    cvt_size_retry(|| {
        // SAFETY: `data` is valid for `data.len()` reads for the duration of the call.
        unsafe { libc::send(fd, data.as_ptr().cast(), data.len(), libc::MSG_NOSIGNAL) }
    })
}

/// Whether [`recv`] waits for something to arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Block until something arrives or the socket's receive timeout passes
    /// ([`set_receive_timeout`]; without one, forever).
    UntilTimeout,
    /// Return at once (`MSG_DONTWAIT`).
    Never,
}

/// One `recv` into `buf`: `Some(n)` bytes received (a datagram longer than `buf` is cut), or
/// `None` when nothing arrived (`EAGAIN`: the timeout passed, or nothing was queued). Retried
/// when a signal interrupts it.
pub fn recv(fd: impl AsFd, buf: &mut [u8], wait: Wait) -> io::Result<Option<usize>> {
    let fd = fd.as_fd().as_raw_fd();
    let flags = match wait {
        Wait::UntilTimeout => 0,
        Wait::Never => libc::MSG_DONTWAIT,
    };
    let got = cvt_size_retry(|| {
        // SAFETY: `buf` is valid for `buf.len()` writes for the duration of the call.
        unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) }
    });
    match got {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

fn poll(fd: impl AsFd, events: libc::c_short, timeout_ms: i32) -> (libc::c_int, libc::pollfd) {
    let mut pfd = libc::pollfd { fd: fd.as_fd().as_raw_fd(), events, revents: 0 };
    // SAFETY: one live pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    (rc, pfd)
}

/// Waits until the socket is readable or `timeout_ms` passes; `Ok(false)` on timeout or when a
/// signal interrupted the wait. A pending socket error (`POLLERR`: on a packet socket, the
/// device went away, `ENETDOWN`) is returned as the error.
pub fn poll_readable(fd: impl AsFd, timeout_ms: i32) -> io::Result<bool> {
    let fd = fd.as_fd();
    let (rc, pfd) = poll(fd, libc::POLLIN, timeout_ms);
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    if pfd.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
        // The pending error is read (and cleared) with SO_ERROR; when that fails there is
        // nothing to report.
        let err = getsockopt::<libc::c_int>(fd, libc::SOL_SOCKET, libc::SO_ERROR).unwrap_or(0);
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
}

/// Waits until the socket may be written or `timeout_ms` passes (whichever; errors are left to
/// the next send).
pub fn poll_writable(fd: impl AsFd, timeout_ms: i32) {
    let _ = poll(fd, libc::POLLOUT, timeout_ms);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ret(k: u32) -> Insn {
        Insn::stmt(0x06, k)
    }

    #[test]
    fn filter_rejection_is_einval_or_enomem() {
        let e = io::Error::from_raw_os_error;
        assert!(is_filter_rejection(&e(libc::EINVAL)));
        assert!(is_filter_rejection(&e(libc::ENOMEM)));
        for other in [libc::EPERM, libc::EBADF, libc::EMFILE, libc::EACCES, libc::ENOENT] {
            assert!(!is_filter_rejection(&e(other)), "errno {other}");
        }
        assert!(!is_filter_rejection(&io::Error::other("not an errno")));
    }

    #[test]
    fn a_program_too_long_for_sock_fprog_is_einval_before_the_call() {
        // 65537 instructions would wrap to a count of 1 in sock_fprog (and attach `ret #0`):
        // refused before the system call, with the kernel's errno for a long program.
        let (tx, _rx) = unix_dgram_pair().unwrap();
        let err = attach_filter(&tx, &vec![ret(0); 65_537]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        assert!(is_filter_rejection(&err));
        let err = attach_filter(&tx, &vec![ret(0); 65_535]).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(libc::EINVAL),
            "past BPF_MAXINSNS: the kernel's EINVAL"
        );
    }

    #[test]
    fn attach_detach_and_receive() {
        let (tx, rx) = unix_dgram_pair().unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(recv(&rx, &mut buf, Wait::Never).unwrap(), None, "nothing queued yet");
        assert!(!poll_readable(&rx, 0).unwrap());
        attach_filter(&rx, &[ret(3)]).unwrap();
        assert_eq!(send(&tx, b"hello").unwrap(), 5);
        assert!(poll_readable(&rx, 1000).unwrap());
        assert_eq!(recv(&rx, &mut buf, Wait::Never).unwrap(), Some(3), "cut by the filter");
        assert_eq!(&buf[..3], b"hel");
        detach_filter(&rx).unwrap();
        assert_eq!(detach_filter(&rx).unwrap_err().raw_os_error(), Some(libc::ENOENT));
        send(&tx, b"hello").unwrap();
        assert_eq!(recv(&rx, &mut buf, Wait::UntilTimeout).unwrap(), Some(5));
        set_receive_timeout(&rx, Duration::from_millis(10)).unwrap();
        assert_eq!(recv(&rx, &mut buf, Wait::UntilTimeout).unwrap(), None, "timed out");
    }

    #[test]
    fn buffers_can_be_set() {
        let (tx, rx) = unix_dgram_pair().unwrap();
        let sndbuf = |fd| getsockopt::<libc::c_int>(fd, libc::SOL_SOCKET, libc::SO_SNDBUF).unwrap();
        let before = sndbuf(&tx);
        // With or without privilege (the forced option, or the plain one up to the sysctl cap).
        set_send_buffer(&tx, 4 << 20).unwrap();
        set_receive_buffer(&rx, usize::MAX).unwrap();
        assert!(sndbuf(&tx) > before, "{before} -> {}", sndbuf(&tx));
    }
}
