//! Network namespaces: a private network stack (interfaces, routes, `/proc/sys/net`) for the
//! calling thread.
//!
//! The kernel oracles build veth pairs where nothing else runs and nothing is left behind: a
//! thread moves itself into a new, anonymous namespace, sets it up and opens its sockets; the
//! namespace lives as long as they do. Tests of XDP/TC attachment will do the same.

use std::io;

use crate::cvt;

/// Moves the calling thread into a new, empty network namespace (`unshare(CLONE_NEWNET)`;
/// needs `CAP_SYS_ADMIN`). Only this thread changes; threads and processes it starts
/// afterwards are born in the new namespace.
pub fn unshare_net() -> io::Result<()> {
    // SAFETY: plain syscall with a constant flag; only this thread's namespace changes.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(drop)
}
