//! `AF_XDP` sockets (XSK): frames handed between an XDP program and user space through rings
//! in shared memory, without a system call or a socket buffer per frame.
//!
//! Why it exists: `AF_PACKET` builds a socket buffer for every frame and copies it once more
//! into its ring; an XDP program that redirects a frame into an `AF_XDP` socket skips both
//! (copy mode: one copy into user memory; zero-copy mode: none). sift's AF_XDP datapath
//! (`sift-xdp`) is built on this module, which holds every `unsafe` line of it. The kernel's
//! interface (`linux/if_xdp.h`, `Documentation/networking/af_xdp.rst`):
//!
//! * a **UMEM** ([`Umem`]): user memory cut into equal frames (chunks), registered with a
//!   socket ([`register_umem`]); frames are named by their byte offset in it (an *address*);
//! * four single-producer single-consumer **rings** of entries, each sized by a socket option
//!   ([`set_ring_size`]) and mapped from the socket at a fixed page offset ([`mmap_offsets`]
//!   says where producer, consumer, flags and entries lie in each mapping):
//!   * FILL ([`FillRing`]): user space gives the kernel empty frames to receive into;
//!   * RX ([`RxRing`]): the kernel hands back received frames ([`Desc`]: address and length);
//!   * TX ([`TxRing`]): user space gives the kernel frames to send;
//!   * COMPLETION ([`CompRing`]): the kernel hands back frames it has sent;
//! * [`bind`] to an interface's queue (copy or zero-copy, need-wakeup, a UMEM shared with
//!   another socket); an XDP program then redirects frames into the socket through an
//!   `XSKMAP`;
//! * [`kick_tx`] (`sendto`) makes the kernel send what is on the TX ring (in copy mode it
//!   sends only then), [`wake_rx`] and [`poll`] wake a driver that sleeps when need-wakeup is
//!   on; [`statistics`] and [`options`] read the socket's drop counters and whether it is in
//!   zero-copy mode.
//!
//! The rings' producer and consumer indices are free-running `u32`s shared with the kernel:
//! the producer writes entries, then publishes the new producer index with a release store;
//! the consumer loads it with acquire ordering before reading entries, and publishes its own
//! index (release) once it no longer needs them. Each side keeps a cached copy of the other's
//! index and reloads it only when the cache says there is not enough room or data, so a batch
//! costs one shared load and one shared store ([`ProdRing`], [`ConsRing`]).
//!
//! The UMEM is ordinary anonymous memory that the kernel also reads and writes: it writes the
//! frames given to it on FILL and reads those given to it on TX until they come back on RX and
//! COMPLETION. Which frame belongs to whom is the caller's bookkeeping (`sift-xdp`'s frame
//! pools); a frame read while the kernel owns it reads whatever bytes are there, as with any
//! memory shared with a device.

mod ring;
#[cfg(test)]
mod tests;

pub use ring::{CompRing, ConsRing, FillRing, ProdRing, RingItem, RxRing, TxRing};

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;

use crate::socket::{getsockopt, setsockopt};
use crate::{Plain, cvt, owned_fd};

/// `AF_XDP`.
pub const AF_XDP: libc::c_int = libc::AF_XDP;
/// `SOL_XDP`: the level of the socket options.
const SOL_XDP: libc::c_int = libc::SOL_XDP;

/// `XDP_PACKET_HEADROOM`: the bytes the kernel leaves in front of a received frame's data
/// inside its chunk (after the UMEM's own headroom): room to push headers.
pub const XDP_PACKET_HEADROOM: u32 = 256;

/// `XDP_SHARED_UMEM`: [`bind`] with the UMEM of the socket [`Bind::shared_umem`] names.
pub const XDP_SHARED_UMEM: u16 = libc::XDP_SHARED_UMEM;
/// `XDP_COPY`: force copy mode.
pub const XDP_COPY: u16 = libc::XDP_COPY;
/// `XDP_ZEROCOPY`: force zero-copy mode (`EOPNOTSUPP` when the driver cannot).
pub const XDP_ZEROCOPY: u16 = libc::XDP_ZEROCOPY;
/// `XDP_USE_NEED_WAKEUP`: the kernel sets [`XDP_RING_NEED_WAKEUP`] in the FILL and TX rings'
/// flags when it needs a system call to go on, and otherwise needs none.
pub const XDP_USE_NEED_WAKEUP: u16 = libc::XDP_USE_NEED_WAKEUP;
/// `XDP_RING_NEED_WAKEUP`: the flag in a ring's flags word.
pub const XDP_RING_NEED_WAKEUP: u32 = libc::XDP_RING_NEED_WAKEUP;
/// `XDP_OPTIONS_ZEROCOPY`: the socket is bound in zero-copy mode ([`options`]).
pub const XDP_OPTIONS_ZEROCOPY: u32 = libc::XDP_OPTIONS_ZEROCOPY;

/// The smallest chunk the kernel accepts (`XDP_UMEM_MIN_CHUNK_SIZE`).
pub const MIN_FRAME_SIZE: u32 = 2048;

/// An `AF_XDP` socket (`socket(AF_XDP, SOCK_RAW)`, close-on-exec). `EAFNOSUPPORT` when the
/// kernel has no `AF_XDP`; `EPERM` without `CAP_NET_RAW`.
pub fn socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant arguments; the descriptor it returns is new and ours.
    unsafe { owned_fd(libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0)) }
}

fn page_size() -> usize {
    // SAFETY: plain call without pointers.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

/// A UMEM area: `frames` chunks of `frame_size` bytes in one anonymous, page-aligned, private
/// mapping (unmapped on drop), with checked access to a frame by address.
#[derive(Debug)]
pub struct Umem {
    base: NonNull<u8>,
    len: usize,
    frame_size: u32,
    frames: u32,
}

// SAFETY: the mapping belongs to this value alone; moving it to another thread moves the
// only handle on it.
unsafe impl Send for Umem {}

impl Umem {
    /// Maps `frames` frames of `frame_size` bytes (populated up front, so the first packets
    /// take no page faults). `InvalidInput` unless `frame_size` is a power of two of at least
    /// [`MIN_FRAME_SIZE`] and at most a page (what the kernel's aligned mode accepts) and
    /// `frames` is not zero; `ENOMEM` when the memory is not there.
    pub fn new(frames: u32, frame_size: u32) -> io::Result<Umem> {
        let page = page_size();
        if !frame_size.is_power_of_two()
            || frame_size < MIN_FRAME_SIZE
            || frame_size as usize > page
            || frames == 0
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "UMEM of {frames} frames of {frame_size} bytes: frames must be a power of \
                     two from {MIN_FRAME_SIZE} to {page} bytes, at least one"
                ),
            ));
        }
        let Some(len) = (frames as usize).checked_mul(frame_size as usize) else {
            return Err(io::Error::from_raw_os_error(libc::ENOMEM));
        };
        // SAFETY: a new private anonymous mapping chosen by the kernel (no address given), so
        // nothing existing is replaced; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Umem { base, len, frame_size, frames })
    }

    /// The size of a frame.
    pub fn frame_size(&self) -> u32 {
        self.frame_size
    }

    /// The number of frames.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// The area's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the area is empty (never: [`Umem::new`] refuses zero frames).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the frame that holds address `addr` (its first byte).
    pub fn frame_base(&self, addr: u64) -> u64 {
        addr & !u64::from(self.frame_size - 1)
    }

    /// The whole frame holding address `addr`; `None` past the end of the area.
    pub fn frame(&self, addr: u64) -> Option<&[u8]> {
        let base = self.frame_base(addr);
        self.bytes(base, self.frame_size as usize)
    }

    /// The whole frame holding address `addr`, writable; `None` past the end of the area.
    pub fn frame_mut(&mut self, addr: u64) -> Option<&mut [u8]> {
        let base = self.frame_base(addr);
        self.bytes_mut(base, self.frame_size as usize)
    }

    /// `len` bytes from address `addr`, when they lie inside one frame.
    pub fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let start = self.check(addr, len)?;
        // SAFETY: `check` keeps `start..start + len` inside the mapping, which lives as long as
        // `self`; the shared borrow of `self` keeps `bytes_mut` from handing out the same bytes
        // writable meanwhile.
        Some(unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(start), len) })
    }

    /// `len` bytes from address `addr`, writable, when they lie inside one frame.
    pub fn bytes_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let start = self.check(addr, len)?;
        // SAFETY: as in `bytes`; the exclusive borrow of `self` makes this the only slice of
        // the area handed out until it ends.
        Some(unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(start), len) })
    }

    /// The offset of `addr` when `addr..addr + len` stays inside the area and inside the frame
    /// that holds `addr`.
    fn check(&self, addr: u64, len: usize) -> Option<usize> {
        let start = usize::try_from(addr).ok()?;
        let end = start.checked_add(len)?;
        let frame_end = (self.frame_base(addr) as usize).checked_add(self.frame_size as usize)?;
        (end <= self.len && end <= frame_end).then_some(start)
    }

    fn addr(&self) -> u64 {
        self.base.as_ptr() as u64
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `new`; no borrow of it outlives self.
        // A socket the area was registered with keeps the pages pinned on its side, so the
        // kernel never writes into memory that is ours again.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}

/// `struct xdp_umem_reg` (with `tx_metadata_len`, zero: the padding the kernel would read as
/// it otherwise).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

// SAFETY: integers only.
unsafe impl Plain for UmemReg {}

/// `XDP_UMEM_REG`: registers `umem` with the socket, frames of its frame size, each received
/// frame's data starting `headroom` bytes (plus [`XDP_PACKET_HEADROOM`]) into its chunk.
/// `EBUSY` when the socket has a UMEM already; `EINVAL` for a headroom that leaves no room
/// for a frame.
pub fn register_umem(fd: impl AsFd, umem: &Umem, headroom: u32) -> io::Result<()> {
    let reg = UmemReg {
        addr: umem.addr(),
        len: umem.len as u64,
        chunk_size: umem.frame_size,
        headroom,
        ..UmemReg::default()
    };
    setsockopt(fd, SOL_XDP, libc::XDP_UMEM_REG, &reg)
}

/// One of a socket's four rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingKind {
    /// Received frames.
    Rx,
    /// Frames to send.
    Tx,
    /// Empty frames for the kernel to receive into.
    Fill,
    /// Sent frames coming back.
    Completion,
}

impl RingKind {
    fn option(self) -> libc::c_int {
        match self {
            RingKind::Rx => libc::XDP_RX_RING,
            RingKind::Tx => libc::XDP_TX_RING,
            RingKind::Fill => libc::XDP_UMEM_FILL_RING,
            RingKind::Completion => libc::XDP_UMEM_COMPLETION_RING,
        }
    }

    /// The page offset the ring is mapped at (`XDP_PGOFF_*`).
    fn page_offset(self) -> u64 {
        match self {
            RingKind::Rx => libc::XDP_PGOFF_RX_RING as u64,
            RingKind::Tx => libc::XDP_PGOFF_TX_RING as u64,
            RingKind::Fill => libc::XDP_UMEM_PGOFF_FILL_RING,
            RingKind::Completion => libc::XDP_UMEM_PGOFF_COMPLETION_RING,
        }
    }

    /// The ring's name as the kernel's documentation writes it.
    pub fn name(self) -> &'static str {
        match self {
            RingKind::Rx => "RX",
            RingKind::Tx => "TX",
            RingKind::Fill => "FILL",
            RingKind::Completion => "COMPLETION",
        }
    }
}

/// Sets the number of entries of one of the socket's rings (a power of two; `EINVAL`
/// otherwise, `EBUSY` once set). FILL and COMPLETION need a registered UMEM.
pub fn set_ring_size(fd: impl AsFd, ring: RingKind, entries: u32) -> io::Result<()> {
    let entries = entries as libc::c_int;
    setsockopt(fd, SOL_XDP, ring.option(), &entries)
}

/// Where a ring's parts lie in its mapping (`struct xdp_ring_offset`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingOffsets {
    /// The producer index (`u32`).
    pub producer: u64,
    /// The consumer index (`u32`).
    pub consumer: u64,
    /// The first entry.
    pub desc: u64,
    /// The flags word (`u32`: [`XDP_RING_NEED_WAKEUP`]).
    pub flags: u64,
}

/// `struct xdp_mmap_offsets`: the four rings' layouts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapOffsets {
    /// RX.
    pub rx: RingOffsets,
    /// TX.
    pub tx: RingOffsets,
    /// FILL.
    pub fill: RingOffsets,
    /// COMPLETION.
    pub completion: RingOffsets,
}

// SAFETY: integers only.
unsafe impl Plain for MmapOffsets {}

impl MmapOffsets {
    /// The layout of one ring.
    pub fn of(&self, ring: RingKind) -> RingOffsets {
        match ring {
            RingKind::Rx => self.rx,
            RingKind::Tx => self.tx,
            RingKind::Fill => self.fill,
            RingKind::Completion => self.completion,
        }
    }
}

/// `XDP_MMAP_OFFSETS`: where each ring's indices, flags and entries lie in its mapping.
pub fn mmap_offsets(fd: impl AsFd) -> io::Result<MmapOffsets> {
    getsockopt(fd, SOL_XDP, libc::XDP_MMAP_OFFSETS)
}

/// An RX or TX ring entry (`struct xdp_desc`): a frame's address (of its first byte of data)
/// and length.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Desc {
    /// The address of the data in the UMEM.
    pub addr: u64,
    /// The length of the data.
    pub len: u32,
    /// `XDP_PKT_CONTD` and friends (0: a whole frame).
    pub options: u32,
}

/// Where [`bind`] binds a socket.
#[derive(Clone, Copy, Debug)]
pub struct Bind<'a> {
    /// The interface.
    pub ifindex: u32,
    /// The receive queue (below the interface's number of queues; `EINVAL` otherwise).
    pub queue: u32,
    /// [`XDP_COPY`], [`XDP_ZEROCOPY`] (neither: zero-copy when the driver has it),
    /// [`XDP_USE_NEED_WAKEUP`]; [`XDP_SHARED_UMEM`] is set from `shared_umem`.
    pub flags: u16,
    /// The socket whose UMEM this one shares (no UMEM registered on this one; with another
    /// queue or interface, this socket needs FILL and COMPLETION rings of its own).
    pub shared_umem: Option<BorrowedFd<'a>>,
}

/// `bind(sockaddr_xdp)`: the socket receives what XDP redirects to it on that queue and sends
/// there. Errors the caller may want to tell apart: `EOPNOTSUPP` (zero-copy asked, the driver
/// has none), `EINVAL` (queue out of range, rings or UMEM missing), `ENODEV` (no such
/// interface), `EBUSY` (the queue has a zero-copy socket already).
pub fn bind(fd: impl AsFd, at: &Bind<'_>) -> io::Result<()> {
    let mut addr = libc::sockaddr_xdp {
        sxdp_family: AF_XDP as u16,
        sxdp_flags: at.flags & !XDP_SHARED_UMEM,
        sxdp_ifindex: at.ifindex,
        sxdp_queue_id: at.queue,
        sxdp_shared_umem_fd: 0,
    };
    if let Some(shared) = at.shared_umem {
        addr.sxdp_flags |= XDP_SHARED_UMEM;
        addr.sxdp_shared_umem_fd = shared.as_raw_fd() as u32;
    }
    // SAFETY: `addr` is a live sockaddr_xdp and the length passed is its size.
    cvt(unsafe {
        libc::bind(
            fd.as_fd().as_raw_fd(),
            (&addr as *const libc::sockaddr_xdp).cast(),
            std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Whether an error of a wake-up call only says "not now": `EAGAIN` (in copy mode the kernel
/// sends a limited batch per call and leaves the rest for the next), `EBUSY` (the driver is
/// busy), `ENOBUFS` (no socket buffer for a copy), `ENETDOWN` (the interface went down).
fn is_transient(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) | Some(libc::ENETDOWN)
    )
}

/// Makes the kernel send what is on the TX ring: `sendto(fd, NULL, 0, MSG_DONTWAIT)`.
/// `Ok(true)` when the call went through, `Ok(false)` when the kernel said "not now" (`EAGAIN`:
/// in copy mode it sent a batch and more is waiting; `EBUSY`, `ENOBUFS`, `ENETDOWN`): call
/// again later. A signal before anything happened is retried.
pub fn kick_tx(fd: impl AsFd) -> io::Result<bool> {
    let fd = fd.as_fd().as_raw_fd();
    loop {
        // SAFETY: no buffer and no address: the call only looks at the socket's TX ring.
        let rc = unsafe {
            libc::sendto(fd, std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0)
        };
        if rc >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            _ if is_transient(&e) => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Wakes a driver that waits for FILL entries (need-wakeup): `recvfrom(fd, NULL, 0,
/// MSG_DONTWAIT)`. The "not now" errors of [`kick_tx`] count as done.
pub fn wake_rx(fd: impl AsFd) -> io::Result<()> {
    let fd = fd.as_fd().as_raw_fd();
    loop {
        // SAFETY: no buffer and no address: the call only wakes the socket's queue.
        let rc = unsafe {
            libc::recvfrom(
                fd,
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if rc >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            _ if is_transient(&e) => return Ok(()),
            _ => return Err(e),
        }
    }
}

/// `poll` on several sockets for `POLLIN` (with `POLLOUT` too when `writable`), waiting at most
/// `timeout_ms` (negative: forever). Also wakes drivers that sleep under need-wakeup. Returns
/// how many sockets are ready; a signal ends the wait with 0.
pub fn poll<F: AsFd>(fds: &[F], writable: bool, timeout_ms: i32) -> io::Result<usize> {
    let events = if writable { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
    let entry = |fd: &F| libc::pollfd { fd: fd.as_fd().as_raw_fd(), events, revents: 0 };
    // Up to 16 sockets on the stack: the non-poll-mode datapath polls before every batch.
    let mut small = [libc::pollfd { fd: -1, events: 0, revents: 0 }; 16];
    let mut large = Vec::new();
    let pfds: &mut [libc::pollfd] = if fds.len() <= small.len() {
        for (slot, fd) in small.iter_mut().zip(fds) {
            *slot = entry(fd);
        }
        &mut small[..fds.len()]
    } else {
        large.extend(fds.iter().map(entry));
        &mut large
    };
    // SAFETY: `pfds` is a live, writable array of `pfds.len()` pollfds.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(0) } else { Err(e) };
    }
    Ok(rc as usize)
}

/// `struct xdp_statistics`: frames the socket lost, by cause (counted since it was bound).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    /// Received frames dropped for other reasons (no room, frame too large for a chunk).
    pub rx_dropped: u64,
    /// Received frames dropped for an invalid FILL entry.
    pub rx_invalid_descs: u64,
    /// TX entries refused as invalid (address outside the UMEM, length past the chunk).
    pub tx_invalid_descs: u64,
    /// Received frames dropped because the RX ring was full.
    pub rx_ring_full: u64,
    /// Times the kernel found the FILL ring empty (a frame was dropped each time).
    pub rx_fill_ring_empty_descs: u64,
    /// Times the kernel found the TX ring empty when asked to send.
    pub tx_ring_empty_descs: u64,
}

// SAFETY: integers only.
unsafe impl Plain for Statistics {}

/// `XDP_STATISTICS`.
pub fn statistics(fd: impl AsFd) -> io::Result<Statistics> {
    getsockopt(fd, SOL_XDP, libc::XDP_STATISTICS)
}

/// `XDP_OPTIONS`: the socket's option flags ([`XDP_OPTIONS_ZEROCOPY`]).
pub fn options(fd: impl AsFd) -> io::Result<u32> {
    getsockopt(fd, SOL_XDP, libc::XDP_OPTIONS)
}

/// Whether the socket is bound in zero-copy mode ([`options`]).
pub fn is_zero_copy(fd: impl AsFd) -> io::Result<bool> {
    Ok(options(fd)? & XDP_OPTIONS_ZEROCOPY != 0)
}

// The kernel's layouts (`linux/if_xdp.h`).
const _: () = assert!(std::mem::size_of::<UmemReg>() == 32);
const _: () = assert!(std::mem::size_of::<RingOffsets>() == 32);
const _: () = assert!(std::mem::size_of::<MmapOffsets>() == 128);
const _: () = assert!(std::mem::size_of::<Statistics>() == 48);
const _: () = assert!(std::mem::size_of::<Desc>() == 16);
const _: () = assert!(std::mem::size_of::<libc::sockaddr_xdp>() == 16);
