//! Every system call of the crate, and the only module where `unsafe` is allowed.
//!
//! The rest of the crate sees safe wrappers: sockets as [`OwnedFd`], the memory-mapped
//! `TPACKET_V3` ring as [`RingMap`] (block status read and written with acquire/release
//! ordering, a ready block as a byte slice), interface queries by name, and the stop flag set
//! by SIGINT/SIGTERM.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use sift_insn::Insn;

pub(crate) const SOL_PACKET: libc::c_int = 263;
pub(crate) const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
pub(crate) const PACKET_RX_RING: libc::c_int = 5;
pub(crate) const PACKET_STATISTICS: libc::c_int = 6;
pub(crate) const PACKET_VERSION: libc::c_int = 10;
pub(crate) const PACKET_FANOUT: libc::c_int = 18;
pub(crate) const PACKET_QDISC_BYPASS: libc::c_int = 20;
pub(crate) const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
pub(crate) const TPACKET_V3: libc::c_int = 2;
pub(crate) const PACKET_MR_PROMISC: libc::c_ushort = 1;
pub(crate) const ETH_P_ALL: u16 = 0x0003;

/// `struct tpacket_req3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TpacketReq3 {
    pub block_size: u32,
    pub block_nr: u32,
    pub frame_size: u32,
    pub frame_nr: u32,
    pub retire_blk_tov: u32,
    pub sizeof_priv: u32,
    pub feature_req_word: u32,
}

/// `struct tpacket_stats_v3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TpacketStatsV3 {
    pub packets: u32,
    pub drops: u32,
    pub freeze_q_cnt: u32,
}

#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const Insn,
}

#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
}

/// `socket(AF_PACKET, kind, htons(protocol))`; protocol 0 receives nothing until bound with a
/// protocol, which lets the ring and the filter be set up before the first packet arrives.
pub(crate) fn packet_socket(dgram: bool, protocol: u16) -> io::Result<OwnedFd> {
    let kind = if dgram { libc::SOCK_DGRAM } else { libc::SOCK_RAW };
    // SAFETY: plain syscall with integer arguments.
    let fd = cvt(unsafe {
        libc::socket(libc::AF_PACKET, kind | libc::SOCK_CLOEXEC, i32::from(protocol.to_be()))
    })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt` with a plain-old-data value.
pub(crate) fn setsockopt<T: Copy>(
    fd: &OwnedFd,
    level: libc::c_int,
    opt: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: `value` is a live T (plain data: integers or #[repr(C)] structs of integers) and
    // the length passed is its size; the kernel only reads it during the call.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `PACKET_STATISTICS` (reading resets the kernel's counters).
pub(crate) fn packet_stats(fd: &OwnedFd) -> io::Result<TpacketStatsV3> {
    let mut st = TpacketStatsV3::default();
    let mut len = std::mem::size_of::<TpacketStatsV3>() as libc::socklen_t;
    // SAFETY: `st` is writable for `len` bytes and `len` is a live socklen_t.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_STATISTICS,
            (&mut st as *mut TpacketStatsV3).cast(),
            &mut len,
        )
    })?;
    Ok(st)
}

/// `SO_ATTACH_FILTER`.
pub(crate) fn attach_filter(fd: &OwnedFd, prog: &[Insn]) -> io::Result<()> {
    let Ok(len) = libc::c_ushort::try_from(prog.len()) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let fprog = SockFprog { len, filter: prog.as_ptr() };
    // SAFETY: `fprog` points to `len` instructions laid out as struct sock_filter (Insn is
    // #[repr(C)] with the same fields); the kernel copies them during the call.
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

/// Promiscuous mode for as long as the socket lives (`PACKET_ADD_MEMBERSHIP`).
pub(crate) fn add_promisc(fd: &OwnedFd, ifindex: u32) -> io::Result<()> {
    let mreq = PacketMreq {
        mr_ifindex: ifindex as libc::c_int,
        mr_type: PACKET_MR_PROMISC,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    // SAFETY: `mreq` is a live struct packet_mreq.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_ADD_MEMBERSHIP,
            (&mreq as *const PacketMreq).cast(),
            std::mem::size_of::<PacketMreq>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `bind` to an interface (0: all interfaces) and protocol.
pub(crate) fn bind(fd: &OwnedFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a live sockaddr_ll and the length passed is its size.
    cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Waits until the socket is readable or `timeout_ms` passes; `Ok(false)` on timeout or when a
/// signal interrupted the wait.
pub(crate) fn poll_readable(fd: &OwnedFd, timeout_ms: i32) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one live pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    if pfd.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
        // POLLERR on a packet socket means the device went away (ENETDOWN) or similar; the
        // pending error is read with SO_ERROR.
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `err` is writable for `len` bytes.
        let _ = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut err as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
}

/// Waits until the socket may be written or `timeout_ms` passes.
pub(crate) fn poll_writable(fd: &OwnedFd, timeout_ms: i32) {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: one live pollfd.
    let _ = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
}

/// `send` on a bound packet socket.
pub(crate) fn send(fd: &OwnedFd, data: &[u8]) -> io::Result<usize> {
    // SAFETY: `data` is valid for `data.len()` reads for the duration of the call.
    let n = unsafe { libc::send(fd.as_raw_fd(), data.as_ptr().cast(), data.len(), 0) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// The kernel's `TPACKET_V3` receive ring, mapped into our address space.
pub(crate) struct RingMap {
    base: *mut u8,
    len: usize,
    block_size: usize,
    blocks: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another thread is fine.
unsafe impl Send for RingMap {}

/// Offset of `block_status` in `struct tpacket_block_desc` (version, offset_to_priv, then the
/// `tpacket_hdr_v1` whose first field it is).
const BLOCK_STATUS: usize = 8;

impl RingMap {
    /// Maps the ring set up with `PACKET_RX_RING` on `fd`.
    pub(crate) fn map(fd: &OwnedFd, block_size: usize, blocks: usize) -> io::Result<RingMap> {
        let len = block_size * blocks;
        // SAFETY: a fresh shared mapping of the socket's ring; the kernel validates the length
        // against the ring it allocated. Nothing else refers to the returned region.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                fd.as_raw_fd(),
                0,
            )
        };
        let base = if base == libc::MAP_FAILED {
            // MAP_LOCKED fails without CAP_IPC_LOCK or over RLIMIT_MEMLOCK; retry without it.
            // SAFETY: as above.
            let again = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd.as_raw_fd(),
                    0,
                )
            };
            if again == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            again
        } else {
            base
        };
        Ok(RingMap { base: base.cast(), len, block_size, blocks })
    }

    pub(crate) fn blocks(&self) -> usize {
        self.blocks
    }

    fn status(&self, block: usize) -> &AtomicU32 {
        assert!(block < self.blocks);
        // SAFETY: the block descriptor lies at the start of the block, inside the mapping;
        // `block_status` is a 4-byte-aligned u32 (blocks are page-aligned) that the kernel and
        // we hand back and forth, so it is accessed atomically only.
        unsafe { AtomicU32::from_ptr(self.base.add(block * self.block_size + BLOCK_STATUS).cast()) }
    }

    /// Whether the kernel has handed `block` to user space (`TP_STATUS_USER`).
    pub(crate) fn ready(&self, block: usize) -> bool {
        self.status(block).load(Ordering::Acquire) & 1 != 0
    }

    /// The bytes of a block the kernel has handed over. The kernel does not touch the block
    /// again until [`release`](Self::release).
    pub(crate) fn block(&self, block: usize) -> &[u8] {
        assert!(block < self.blocks);
        // SAFETY: the block lies inside the mapping; while its status is TP_STATUS_USER (the
        // caller checked `ready`, with acquire ordering) the kernel does not write to it, and
        // the returned borrow ends before `release` (which takes `&mut self`).
        unsafe {
            std::slice::from_raw_parts(self.base.add(block * self.block_size), self.block_size)
        }
    }

    /// Gives `block` back to the kernel (`TP_STATUS_KERNEL`).
    pub(crate) fn release(&mut self, block: usize) {
        self.status(block).store(0, Ordering::Release);
    }
}

impl Drop for RingMap {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map`; no borrows of it outlive self.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

/// A throwaway datagram socket for interface ioctls.
fn ioctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with integer arguments.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    Ok(req)
}

/// What an `ioctl` on an interface name gives: ifindex, flags, hardware type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IfInfo {
    pub ifindex: u32,
    pub flags: u32,
    pub hatype: u16,
    pub mtu: u32,
}

/// `SIOCGIFINDEX`, `SIOCGIFFLAGS`, `SIOCGIFHWADDR`, `SIOCGIFMTU` for `name`.
pub(crate) fn if_info(name: &str) -> io::Result<IfInfo> {
    let sock = ioctl_socket()?;
    let mut req = ifreq_for(name)?;
    // SAFETY: `req` is a live ifreq with a NUL-terminated name; the kernel fills the union.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFINDEX, &mut req) })?;
    // SAFETY: SIOCGIFINDEX filled the ifindex member of the union.
    let ifindex = unsafe { req.ifr_ifru.ifru_ifindex } as u32;
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) })?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    let flags = unsafe { req.ifr_ifru.ifru_flags } as u16 as u32;
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) })?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr member; sa_family is the ARPHRD type.
    let hatype = unsafe { req.ifr_ifru.ifru_hwaddr.sa_family };
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) })?;
    // SAFETY: SIOCGIFMTU filled the mtu member.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu } as u32;
    Ok(IfInfo { ifindex, flags, hatype, mtu })
}

/// The interfaces of the current network namespace, as `(ifindex, name)`, in ifindex order.
pub(crate) fn interface_names() -> io::Result<Vec<(u32, String)>> {
    // SAFETY: if_nameindex returns a heap array terminated by an entry with index 0, or NULL.
    let list = unsafe { libc::if_nameindex() };
    if list.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut at = list;
    loop {
        // SAFETY: `at` points into the array, which ends with an entry whose index is 0.
        let entry = unsafe { &*at };
        if entry.if_index == 0 {
            break;
        }
        // SAFETY: if_name is a NUL-terminated string owned by the array.
        let name = unsafe { std::ffi::CStr::from_ptr(entry.if_name) };
        out.push((entry.if_index, name.to_string_lossy().into_owned()));
        // SAFETY: not past the terminating entry (checked above).
        at = unsafe { at.add(1) };
    }
    // SAFETY: `list` came from if_nameindex and is freed once.
    unsafe { libc::if_freenameindex(list) };
    out.sort();
    Ok(out)
}

/// The interface name of an ifindex (`if_indextoname`).
pub(crate) fn interface_name(ifindex: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IFNAMSIZ];
    // SAFETY: `buf` holds IFNAMSIZ bytes as if_indextoname requires.
    let p = unsafe { libc::if_indextoname(ifindex, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success `buf` holds a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// `true` when the effective capability set holds `cap` (read from `/proc/self/status`).
pub(crate) fn has_capability(cap: u32) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|bits| bits & (1 << cap) != 0)
}

/// Set by the SIGINT/SIGTERM handler.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for `signals` (without `SA_RESTART`, so a blocked `poll` returns).
pub(crate) fn install_stop_handler(signals: &[libc::c_int]) -> io::Result<&'static AtomicBool> {
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

/// `strftime(pattern, localtime(secs))`, as tcpdump names `-G` files.
pub(crate) fn strftime_local(pattern: &str, secs: i64) -> io::Result<String> {
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
