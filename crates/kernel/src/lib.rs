//! The Linux kernel as a classic-BPF oracle and as engines.
//!
//! The kernel has its own classic-BPF checker (`bpf_check_classic`, `check_load_and_stores`)
//! and its own interpreter/JIT for socket filters. Those are a second opinion, independent of
//! libpcap, on what a program may do and what it returns; they are also what actually runs when
//! a capture filter is attached to a socket. This crate asks the kernel directly:
//!
//! * [`check_classic`]: does `SO_ATTACH_FILTER` accept the program?
//! * [`UnixDgramFilter`]: what does the attached program do to a given datagram? The kernel
//!   runs a socket's filter on every datagram queued to it: 0 drops it, a smaller value
//!   truncates it to that many bytes, anything else lets it through whole. `AF_UNIX` datagram
//!   sockets see exactly the bytes sent, from offset 0, and need no privilege.
//! * [`VethSocketFilter`] (root): the classic program on an `AF_PACKET` socket on a veth pair
//!   in a private network namespace, fed Ethernet frames through the real receive path; it
//!   reports which frames arrive and how much of each ([`kernel_view`] says what the filter
//!   sees: the outer VLAN tag is gone).
//! * [`KernelEbpf`] (root): sift's own classic → eBPF translation ([`ebpf`]) loaded with
//!   `bpf(BPF_PROG_LOAD)` as a `SCHED_CLS` program and run per packet with
//!   `BPF_PROG_TEST_RUN` (return value, or the kernel's ns per run).
//!
//! All system calls live in one module, the only place `unsafe` is allowed.
#![deny(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

pub mod ebpf;
mod testrun;
mod veth;

pub use testrun::{EbpfError, KernelEbpf, MAX_PACKET};
pub use veth::{MAX_FRAME, VethError, VethSocketFilter, kernel_view};

/// One classic BPF instruction: sift-insn's [`Insn`](sift_insn::Insn), which is laid out
/// exactly like C's `struct sock_filter`.
pub use sift_insn::Insn as RawInsn;

/// The kernel's limit on classic program length (`BPF_MAXINSNS`).
pub const BPF_MAXINSNS: usize = 4096;

/// Socket buffer size requested for [`UnixDgramFilter`] (both directions). Large enough for
/// any datagram up to 256 KiB plus overhead.
const BUFFER_BYTES: usize = 4 << 20;

/// Whether the kernel's `SO_ATTACH_FILTER` accepts `prog`.
///
/// The program is attached to a throwaway `AF_UNIX` datagram socket. `Err` carries the errno:
/// `EINVAL` for a program the kernel's checker rejects (including an empty one and one longer
/// than [`BPF_MAXINSNS`]); other errors mean the question could not be asked (e.g. `EMFILE`),
/// and [`is_rejection`] tells the two apart.
pub fn check_classic(prog: &[RawInsn]) -> io::Result<()> {
    let fd = sys::unix_dgram_socket()?;
    sys::attach_filter(&fd, prog)
}

/// Whether an error from [`check_classic`] or [`UnixDgramFilter::new`] is the kernel rejecting
/// the program (`EINVAL`, or `ENOMEM` for a program too large to allocate) rather than a failure
/// to ask.
pub fn is_rejection(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOMEM))
}

/// A connected pair of `AF_UNIX` datagram sockets with a classic program attached
/// (`SO_ATTACH_FILTER`) to the receiving end: [`UnixDgramFilter::deliver`] shows what the
/// kernel's filter does to a datagram.
#[derive(Debug)]
pub struct UnixDgramFilter {
    tx: OwnedFd,
    rx: OwnedFd,
    /// Receive buffer, kept larger than the largest datagram delivered so far.
    buf: Vec<u8>,
}

impl UnixDgramFilter {
    /// Creates the socket pair and attaches `prog` to the receiving end. `EINVAL` means the
    /// kernel rejected the program.
    pub fn new(prog: &[RawInsn]) -> io::Result<Self> {
        let (tx, rx) = sys::unix_dgram_pair()?;
        sys::set_buffer_sizes(&tx, &rx, BUFFER_BYTES);
        sys::attach_filter(&rx, prog)?;
        Ok(UnixDgramFilter { tx, rx, buf: vec![0; 2048] })
    }

    /// Replaces the attached program (the socket pair is reused, which is cheaper than a new
    /// one). On error the previous program stays attached.
    pub fn set_filter(&mut self, prog: &[RawInsn]) -> io::Result<()> {
        sys::attach_filter(&self.rx, prog)
    }

    /// Sends `datagram` and receives it on the other end without blocking.
    ///
    /// Returns `Some(n)`, the number of bytes that arrived (the kernel truncates the datagram
    /// to the filter's return value when that is smaller than its length), or `None` when the
    /// filter dropped it (returned 0). Datagrams are handled one at a time, so nothing is ever
    /// left in flight between calls.
    pub fn deliver(&mut self, datagram: &[u8]) -> io::Result<Option<usize>> {
        if self.buf.len() <= datagram.len() {
            self.buf.resize(datagram.len() + 1, 0);
        }
        let sent = sys::send(&self.tx, datagram)?;
        if sent != datagram.len() {
            return Err(io::Error::other(format!(
                "short send: {sent} of {} bytes",
                datagram.len()
            )));
        }
        // AF_UNIX queues the datagram (or drops it in the filter) inside send(), so a
        // non-blocking receive now sees it or nothing.
        sys::recv_nonblocking(&self.rx, &mut self.buf)
    }
}

#[allow(unsafe_code)]
mod sys {
    //! The system calls: socket creation, `SO_ATTACH_FILTER`, send and receive.

    use super::RawInsn;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// `struct sock_fprog`.
    #[repr(C)]
    struct SockFprog {
        len: libc::c_ushort,
        filter: *const RawInsn,
    }

    fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
    }

    pub(super) fn unix_dgram_socket() -> io::Result<OwnedFd> {
        // SAFETY: plain syscall with constant arguments; no pointers.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    pub(super) fn unix_dgram_pair() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [-1 as libc::c_int; 2];
        // SAFETY: `fds` is a valid array of two ints for socketpair to fill.
        cvt(unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        })?;
        // SAFETY: both descriptors were just created by socketpair and are owned by nobody
        // else.
        Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    }

    fn setsockopt_int(fd: &OwnedFd, opt: libc::c_int, value: libc::c_int) -> io::Result<()> {
        // SAFETY: `value` is a live c_int and the length passed is its size.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    /// Best effort: the `*FORCE` variants (root) ignore the sysctl caps; otherwise the plain
    /// options give whatever the caps allow. AF_UNIX datagram size is bounded by the send
    /// buffer.
    pub(super) fn set_buffer_sizes(tx: &OwnedFd, rx: &OwnedFd, bytes: usize) {
        let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        for (fd, force, plain) in [
            (tx, libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
            (rx, libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        ] {
            if setsockopt_int(fd, force, v).is_err() {
                let _ = setsockopt_int(fd, plain, v);
            }
        }
    }

    pub(super) fn attach_filter(fd: &OwnedFd, prog: &[RawInsn]) -> io::Result<()> {
        // sock_fprog counts instructions in an unsigned short; anything longer is far beyond
        // BPF_MAXINSNS and would be rejected anyway.
        let Ok(len) = libc::c_ushort::try_from(prog.len()) else {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        let fprog = SockFprog { len, filter: prog.as_ptr() };
        // SAFETY: `fprog` points to `len` instructions laid out as struct sock_filter
        // (RawInsn is #[repr(C)] with the same fields); the kernel copies them during the call.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                (&fprog as *const SockFprog).cast(),
                std::mem::size_of::<SockFprog>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    pub(super) fn send(fd: &OwnedFd, data: &[u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `data` is valid for `data.len()` reads for the duration of the call.
            let n = unsafe {
                libc::send(fd.as_raw_fd(), data.as_ptr().cast(), data.len(), libc::MSG_NOSIGNAL)
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// `union bpf_attr` for `BPF_PROG_LOAD` (the fields up to `expected_attach_type`).
    #[repr(C)]
    #[derive(Default)]
    struct ProgLoadAttr {
        prog_type: u32,
        insn_cnt: u32,
        insns: u64,
        license: u64,
        log_level: u32,
        log_size: u32,
        log_buf: u64,
        kern_version: u32,
        prog_flags: u32,
        prog_name: [u8; 16],
        prog_ifindex: u32,
        expected_attach_type: u32,
    }

    /// `union bpf_attr` for `BPF_PROG_TEST_RUN`.
    #[repr(C)]
    #[derive(Default)]
    struct TestRunAttr {
        prog_fd: u32,
        retval: u32,
        data_size_in: u32,
        data_size_out: u32,
        data_in: u64,
        data_out: u64,
        repeat: u32,
        duration: u32,
        ctx_size_in: u32,
        ctx_size_out: u32,
        ctx_in: u64,
        ctx_out: u64,
        flags: u32,
        cpu: u32,
        batch_size: u32,
        _pad: u32,
    }

    const BPF_PROG_LOAD: libc::c_long = 5;
    const BPF_PROG_TEST_RUN: libc::c_long = 10;

    fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
        loop {
            // SAFETY: `attr` is a live, initialised #[repr(C)] prefix of `union bpf_attr` for
            // `cmd`, and its size is passed; every pointer inside it points to memory that
            // outlives the call (the callers keep the buffers borrowed).
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_bpf,
                    cmd,
                    (attr as *mut T).cast::<libc::c_void>(),
                    std::mem::size_of::<T>() as libc::c_uint,
                )
            };
            if rc >= 0 {
                return Ok(rc);
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// `BPF_PROG_LOAD` of `insns` (encoded eBPF, 8 bytes per slot). With `log`, the verifier's
    /// log (level 1) is written into it (NUL-terminated).
    pub(super) fn bpf_prog_load(
        prog_type: u32,
        insns: &[u8],
        log: Option<&mut [u8]>,
    ) -> io::Result<OwnedFd> {
        const LICENSE: &[u8] = b"GPL\0";
        let mut attr = ProgLoadAttr {
            prog_type,
            insn_cnt: u32::try_from(insns.len() / 8).unwrap_or(u32::MAX),
            insns: insns.as_ptr() as u64,
            license: LICENSE.as_ptr() as u64,
            ..ProgLoadAttr::default()
        };
        attr.prog_name[..4].copy_from_slice(b"sift");
        if let Some(log) = log {
            attr.log_level = 1;
            attr.log_size = u32::try_from(log.len()).unwrap_or(u32::MAX);
            attr.log_buf = log.as_mut_ptr() as u64;
        }
        let fd = bpf(BPF_PROG_LOAD, &mut attr)?;
        let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("bad fd"))?;
        // SAFETY: BPF_PROG_LOAD returned a new descriptor that nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// `BPF_PROG_TEST_RUN`: returns (retval, duration in ns per repetition).
    pub(super) fn bpf_test_run(
        prog: &OwnedFd,
        data: &[u8],
        ctx: &[u8],
        repeat: u32,
    ) -> io::Result<(u32, u32)> {
        let mut attr = TestRunAttr {
            prog_fd: prog.as_raw_fd() as u32,
            data_size_in: u32::try_from(data.len()).unwrap_or(u32::MAX),
            data_in: data.as_ptr() as u64,
            repeat,
            ctx_size_in: u32::try_from(ctx.len()).unwrap_or(u32::MAX),
            ctx_in: if ctx.is_empty() { 0 } else { ctx.as_ptr() as u64 },
            ..TestRunAttr::default()
        };
        bpf(BPF_PROG_TEST_RUN, &mut attr)?;
        Ok((attr.retval, attr.duration))
    }

    /// Moves the calling thread into a new, empty network namespace.
    pub(super) fn unshare_net() -> io::Result<()> {
        // SAFETY: plain syscall with a constant flag; only this thread's namespace changes.
        cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(drop)
    }

    /// The index of interface `name` in the calling thread's network namespace.
    pub(super) fn if_index(name: &str) -> io::Result<libc::c_int> {
        let c = std::ffi::CString::new(name).map_err(io::Error::other)?;
        // SAFETY: `c` is a NUL-terminated string that lives through the call.
        let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
        if i == 0 {
            return Err(io::Error::last_os_error());
        }
        libc::c_int::try_from(i).map_err(io::Error::other)
    }

    /// An `AF_PACKET` `SOCK_RAW` socket with protocol 0: it receives nothing until bound.
    pub(super) fn packet_socket() -> io::Result<OwnedFd> {
        // SAFETY: plain syscall with constant arguments; no pointers.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    fn sockaddr_ll(ifindex: libc::c_int, protocol: u16) -> libc::sockaddr_ll {
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = protocol.to_be();
        sll.sll_ifindex = ifindex;
        sll
    }

    /// Binds a packet socket to one interface, receiving every protocol (`ETH_P_ALL`).
    pub(super) fn bind_packet_all(fd: &OwnedFd, ifindex: libc::c_int) -> io::Result<()> {
        let sll = sockaddr_ll(ifindex, libc::ETH_P_ALL as u16);
        // SAFETY: `sll` is a live sockaddr_ll and its size is passed.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    /// `PACKET_IGNORE_OUTGOING`: do not see packets this host sends on the interface.
    pub(super) fn ignore_outgoing(fd: &OwnedFd) -> io::Result<()> {
        const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
        packet_option(fd, PACKET_IGNORE_OUTGOING)
    }

    /// `PACKET_QDISC_BYPASS`: send straight to the driver, past the queueing discipline.
    pub(super) fn qdisc_bypass(fd: &OwnedFd) -> io::Result<()> {
        const PACKET_QDISC_BYPASS: libc::c_int = 20;
        packet_option(fd, PACKET_QDISC_BYPASS)
    }

    fn packet_option(fd: &OwnedFd, option: libc::c_int) -> io::Result<()> {
        let one: libc::c_int = 1;
        // SAFETY: `one` is a live c_int and the length passed is its size.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                option,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    /// `SO_RCVTIMEO`: blocking receives give up after `timeout`.
    pub(super) fn set_receive_timeout(
        fd: &OwnedFd,
        timeout: std::time::Duration,
    ) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        };
        // SAFETY: `tv` is a live timeval and the length passed is its size.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    /// Sends one frame out of interface `ifindex` (a `SOCK_RAW` packet socket: the frame
    /// includes its link-layer header).
    pub(super) fn send_frame(
        fd: &OwnedFd,
        ifindex: libc::c_int,
        frame: &[u8],
    ) -> io::Result<usize> {
        let sll = sockaddr_ll(ifindex, 0);
        loop {
            // SAFETY: `frame` is valid for `frame.len()` reads and `sll` is a live
            // sockaddr_ll whose size is passed.
            let n = unsafe {
                libc::sendto(
                    fd.as_raw_fd(),
                    frame.as_ptr().cast(),
                    frame.len(),
                    0,
                    (&sll as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// A blocking receive (bounded by the socket's `SO_RCVTIMEO`): `None` on timeout.
    pub(super) fn recv_blocking(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            // SAFETY: `buf` is valid for `buf.len()` writes for the duration of the call.
            let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n >= 0 {
                return Ok(Some(n as usize));
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(err),
            }
        }
    }

    pub(super) fn recv_nonblocking(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            // SAFETY: `buf` is valid for `buf.len()` writes for the duration of the call.
            let n = unsafe {
                libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT)
            };
            if n >= 0 {
                return Ok(Some(n as usize));
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(err),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RET_K: u16 = 0x06;
    const LDB_ABS: u16 = 0x30;
    const LD_MEM: u16 = 0x60;
    const ST: u16 = 0x02;
    const JA: u16 = 0x05;
    const RET_A: u16 = 0x16;

    fn ret(k: u32) -> RawInsn {
        RawInsn::new(RET_K, 0, 0, k)
    }

    /// The kernel is always there on Linux, but a sandbox may forbid AF_UNIX sockets or
    /// SO_ATTACH_FILTER; that is a missing oracle, not a bug.
    fn available() -> bool {
        sift_testkit::oracle(
            "kernel SO_ATTACH_FILTER on AF_UNIX",
            UnixDgramFilter::new(&[ret(u32::MAX)]),
        )
        .is_some()
    }

    #[test]
    fn ret_zero_drops() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(0)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), None);
        assert_eq!(f.deliver(&[]).unwrap(), None);
    }

    #[test]
    fn ret_all_delivers_everything() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(u32::MAX)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), Some(12));
        let big = vec![0xa5; 65535];
        assert_eq!(f.deliver(&big).unwrap(), Some(65535));
        let jumbo = vec![0x5a; 262144];
        assert_eq!(f.deliver(&jumbo).unwrap(), Some(262144));
        assert_eq!(f.deliver(b"x").unwrap(), Some(1));
    }

    #[test]
    fn ret_five_truncates() {
        if !available() {
            return;
        }
        let mut f = UnixDgramFilter::new(&[ret(5)]).unwrap();
        assert_eq!(f.deliver(b"hello, world").unwrap(), Some(5));
        assert_eq!(f.deliver(b"hey").unwrap(), Some(3), "shorter than the return value: whole");
    }

    #[test]
    fn load_past_the_end_drops() {
        if !available() {
            return;
        }
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 100), ret(u32::MAX)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        assert_eq!(f.deliver(&[0; 50]).unwrap(), None);
        assert_eq!(f.deliver(&[0; 101]).unwrap(), Some(101));
        assert_eq!(f.deliver(&[0; 100]).unwrap(), None, "offset 100 is the 101st byte");
    }

    #[test]
    fn filter_sees_the_datagram_from_offset_zero() {
        if !available() {
            return;
        }
        // ldb [2]; ret a: returns the third byte.
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 2), RawInsn::new(RET_A, 0, 0, 0)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        assert_eq!(f.deliver(&[9, 9, 7, 9, 9, 9, 9, 9, 9, 9]).unwrap(), Some(7));
        assert_eq!(f.deliver(&[9, 9, 0, 9]).unwrap(), None);
        f.set_filter(&[ret(2)]).unwrap();
        assert_eq!(f.deliver(&[1, 2, 3]).unwrap(), Some(2));
        // A rejected replacement leaves the old program in place.
        assert_eq!(f.set_filter(&[]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
        assert_eq!(f.deliver(&[1, 2, 3]).unwrap(), Some(2));
    }

    #[test]
    fn check_classic_verdicts() {
        if !available() {
            return;
        }
        let einval = |r: io::Result<()>| r.map_err(|e| e.raw_os_error());
        assert_eq!(einval(check_classic(&[ret(0xffff)])), Ok(()));
        let valid = [
            RawInsn::new(ST, 0, 0, 0),
            RawInsn::new(LD_MEM, 0, 0, 0),
            RawInsn::new(RET_A, 0, 0, 0),
        ];
        assert_eq!(einval(check_classic(&valid)), Ok(()));
        assert_eq!(einval(check_classic(&[])), Err(Some(libc::EINVAL)));
        // ja with k = 0xffffffff: "backward" (out of range, jumps are unsigned in the kernel).
        let backward = [ret(0), RawInsn::new(JA, 0, 0, u32::MAX), ret(1)];
        assert_eq!(einval(check_classic(&backward)), Err(Some(libc::EINVAL)));
        let too_long = vec![ret(0); BPF_MAXINSNS + 1];
        assert_eq!(einval(check_classic(&too_long)), Err(Some(libc::EINVAL)));
        assert_eq!(einval(check_classic(&vec![ret(0); BPF_MAXINSNS])), Ok(()));
        let load_before_store = [RawInsn::new(LD_MEM, 0, 0, 0), RawInsn::new(RET_A, 0, 0, 0)];
        assert_eq!(einval(check_classic(&load_before_store)), Err(Some(libc::EINVAL)));
        // Does not end in ret.
        assert_eq!(
            einval(check_classic(&[RawInsn::new(LDB_ABS, 0, 0, 0)])),
            Err(Some(libc::EINVAL))
        );
        // Longer than a sock_fprog can count: refused before the syscall, same errno.
        let huge = vec![ret(0); 70_000];
        let err = check_classic(&huge).unwrap_err();
        assert!(is_rejection(&err));
    }

    #[test]
    fn many_deliveries_stay_in_step() {
        if !available() {
            return;
        }
        // ldb [0]; ret a: the first byte decides, so drops and passes interleave.
        let prog = [RawInsn::new(LDB_ABS, 0, 0, 0), RawInsn::new(RET_A, 0, 0, 0)];
        let mut f = UnixDgramFilter::new(&prog).unwrap();
        let mut pkt = [0u8; 64];
        for i in 0..20_000u32 {
            pkt[0] = (i % 97) as u8;
            let want = if pkt[0] == 0 { None } else { Some(usize::from(pkt[0]).min(64)) };
            assert_eq!(f.deliver(&pkt).unwrap(), want, "datagram {i}");
        }
    }
}
