//! Why a datapath could not be set up or run: one typed error naming the interface, the queue
//! and the cause.

use std::io;

use sift_kernel::object::ObjectError;

/// Why a port, its program or the datapath could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No interface of that name in the calling thread's namespace.
    #[error("{iface}: no such interface")]
    UnknownInterface {
        /// The name asked for.
        iface: String,
    },
    /// A queue the interface does not have.
    #[error("{iface}: queue {queue} out of range (the interface has {queues} receive queues)")]
    QueueOutOfRange {
        /// The interface.
        iface: String,
        /// The queue asked for.
        queue: u32,
        /// How many it has.
        queues: u32,
    },
    /// A ring size the kernel would refuse.
    #[error(
        "{iface}: {ring} ring of {size} entries: the size must be a power of two from 1 to {max}"
    )]
    RingSize {
        /// The interface.
        iface: String,
        /// `RX`, `TX`, `FILL` or `COMPLETION`.
        ring: &'static str,
        /// The size asked for.
        size: u32,
        /// The largest accepted.
        max: u32,
    },
    /// Zero-copy was required and the driver has none (veth, loopback: `EOPNOTSUPP`).
    #[error("{iface} queue {queue}: the driver does not support zero-copy AF_XDP (use copy mode)")]
    ZeroCopyUnsupported {
        /// The interface.
        iface: String,
        /// The queue.
        queue: u32,
    },
    /// A setting out of range (batch size, frame size, number of frames, ports).
    #[error("{what}")]
    Config {
        /// What is wrong, and what is allowed.
        what: String,
    },
    /// A system call on a port's socket failed (`what` names the step).
    #[error("{iface} queue {queue}: {what}: {source}")]
    Socket {
        /// The interface.
        iface: String,
        /// The queue.
        queue: u32,
        /// The step: `socket`, `UMEM`, `XDP_UMEM_REG`, `ring sizes`, `mmap`, `bind`.
        what: &'static str,
        /// The kernel's error.
        source: io::Error,
    },
    /// The XDP program or its maps could not be loaded (the verifier's log when refused).
    #[error("{iface}: XDP program: {source}")]
    Program {
        /// The interface.
        iface: String,
        /// What the loader said.
        source: ObjectError,
    },
    /// A caller-supplied program has no usable `XSKMAP` of the name given.
    #[error("{iface}: XDP program: {what}")]
    XskMap {
        /// The interface.
        iface: String,
        /// What is wrong with the map.
        what: String,
    },
    /// The program could not be attached (`EBUSY`: another XDP program is attached; `EEXIST`:
    /// one is attached in the other mode).
    #[error("{iface}: attaching the XDP program: {source}{hint}")]
    Attach {
        /// The interface.
        iface: String,
        /// The kernel's error.
        source: io::Error,
        /// What the error usually means.
        hint: &'static str,
    },
    /// A datapath thread could not be started.
    #[error("starting the thread of queue {queue}: {source}")]
    Thread {
        /// The queue it would have polled.
        queue: u32,
        /// The error.
        source: io::Error,
    },
}

impl Error {
    /// Whether the error says AF_XDP or eBPF cannot be used here at all (not root, no
    /// `AF_XDP` in the kernel) rather than something wrong with the request.
    pub fn is_unavailable(&self) -> bool {
        let unavailable = |e: &io::Error| {
            matches!(e.raw_os_error(), Some(libc::EPERM | libc::EAFNOSUPPORT | libc::ENOSYS))
        };
        match self {
            Error::Socket { source, .. } | Error::Attach { source, .. } => unavailable(source),
            Error::Program { source: ObjectError::Unavailable { .. }, .. } => true,
            _ => false,
        }
    }
}
