//! Network namespaces: a private network stack (interfaces, routes, `/proc/sys/net`) for the
//! calling thread.
//!
//! The kernel oracles build veth pairs where nothing else runs and nothing is left behind: a
//! thread moves itself into a new, anonymous namespace, sets it up and opens its sockets; the
//! namespace lives as long as they do. Tests of XDP/TC attachment use two namespaces joined
//! by a veth pair, with threads moving into either ([`current`], [`enter`]).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::cvt;

/// Moves the calling thread into a new, empty network namespace (`unshare(CLONE_NEWNET)`;
/// needs `CAP_SYS_ADMIN`). Only this thread changes; threads and processes it starts
/// afterwards are born in the new namespace.
pub fn unshare_net() -> io::Result<()> {
    // SAFETY: plain syscall with a constant flag; only this thread's namespace changes.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(drop)
}

/// A descriptor of the calling thread's network namespace (`/proc/thread-self/ns/net`): it
/// keeps the namespace alive, and [`enter`] moves another thread into it.
pub fn current() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/proc/thread-self/ns/net")?.into())
}

/// Moves the calling thread into the network namespace `ns` (a descriptor from [`current`];
/// `setns(CLONE_NEWNET)`, needs `CAP_SYS_ADMIN`). Only this thread changes.
pub fn enter(ns: impl AsFd) -> io::Result<()> {
    // SAFETY: plain syscall on a descriptor we borrow for the call; only this thread's
    // namespace changes.
    cvt(unsafe { libc::setns(ns.as_fd().as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
}
