//! Every Linux system call sift makes, as safe, typed wrappers.
//!
//! Capture, injection and the kernel oracles all talk to the kernel through sockets, socket
//! options, a memory-mapped ring and `bpf(2)`; deploying eBPF adds netlink (XDP/TC
//! attachment), the BPF file system, eBPF ring buffers and network namespaces. This crate is the one place where
//! that happens and where `unsafe` is allowed for it (besides `sift-libpcap`'s FFI and the
//! JIT's call into generated code): every other crate that uses it is
//! `#![forbid(unsafe_code)]`. Each `unsafe` block says why it is sound (`// SAFETY:`).
//!
//! The wrappers return [`std::io::Result`] with the OS error untouched, descriptors as
//! [`OwnedFd`] (closed on drop), and take descriptors as
//! [`AsFd`](std::os::fd::AsFd). Where an errno has a meaning callers decide on, a function
//! here names it ([`socket::is_filter_rejection`], [`bpf::is_unavailable`]). Modules by topic:
//!
//! * [`socket`]: `AF_UNIX` datagram sockets, socket options, the classic filter
//!   (`SO_ATTACH_FILTER`, once for everybody), send, receive, poll.
//! * [`packet`]: `AF_PACKET` sockets: bind, send to an interface, `PACKET_*` options, fanout,
//!   promiscuous mode, statistics.
//! * [`ring`]: the `TPACKET_V3` receive ring: geometry, setup, the mapped memory, and the
//!   kernel's layout of blocks and packet headers in it.
//! * [`bpf`]: `bpf(2)`: `BPF_PROG_LOAD` (with the verifier log), `BPF_PROG_TEST_RUN`, maps,
//!   links (XDP and TCX attachment, atomic replacement), pins in the BPF file system, object
//!   info by descriptor and descriptors by id.
//! * [`ringbuf`]: the consumer of a `BPF_MAP_TYPE_RINGBUF` map (records from eBPF programs).
//! * [`netns`]: private network namespaces.
//! * [`iface`]: interface names, indexes, flags, hardware types, MTUs.
//! * [`mmap`]: read-only file mappings that record, instead of dying of `SIGBUS`, a file
//!   shrinking under the reader (one process-wide `SIGBUS` handler).
//! * [`netlink`]: `NETLINK_ROUTE`: XDP attachment with `IFLA_XDP`, the `clsact` qdisc and
//!   `cls_bpf` filters, what is attached, interface counters.
//! * [`xsk`]: `AF_XDP` sockets: the UMEM, the FILL/RX/TX/COMPLETION rings as safe producer
//!   and consumer types, binding (copy, zero-copy, need-wakeup, shared UMEM), wake-ups,
//!   statistics.
//! * [`signal`]: signals as flags and counters. [`time`]: local time formatting (`strftime`),
//!   the monotonic clock, a thread's CPU time. [`user`]: running as another user (`-Z`).

pub mod bpf;
pub mod iface;
pub mod mmap;
pub mod netlink;
pub mod netns;
pub mod packet;
pub mod ring;
pub mod ringbuf;
pub mod signal;
pub mod socket;
pub mod time;
pub mod user;
pub mod xsk;

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// A `-1`-on-error return value as an `io::Result` (the error from `errno`).
fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
}

/// A byte-count return value (`send`, `recv`…), retried while the call was interrupted by a
/// signal before it did anything (`EINTR`).
fn cvt_size_retry(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let n = call();
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Takes ownership of a descriptor a system call just returned (`-1`: the error from `errno`).
///
/// # Safety
///
/// `rc` is the return value of a call that creates a descriptor (`socket()`,
/// `bpf(BPF_PROG_LOAD)`…), or one of the descriptors `socketpair()` filled in, and nothing else
/// takes ownership of it.
unsafe fn owned_fd(rc: libc::c_int) -> io::Result<OwnedFd> {
    let fd = cvt(rc)?;
    // SAFETY: not an error, so a fresh descriptor that nobody else owns (the caller's promise).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Plain data the kernel reads or writes as a socket option value.
///
/// # Safety
///
/// Implemented only for integers and `#[repr(C)]` structs of integers: no pointers (the
/// kernel would follow them), and every bit pattern is a valid value (the kernel may write any).
unsafe trait Plain: Copy + Default {}

// SAFETY: an integer.
unsafe impl Plain for libc::c_int {}
// SAFETY: an integer.
unsafe impl Plain for u32 {}
