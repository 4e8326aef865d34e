//! `AF_PACKET` sockets: link-layer frames to and from one interface (or all of them).
//!
//! Live capture reads them through a ring ([`crate::ring`]) with a classic filter attached
//! ([`crate::socket::attach_filter`]); injection and the veth oracle send frames on them. This
//! module has the calls specific to the family: creation, bind, send to an interface index, and
//! the `SOL_PACKET` options in use.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::socket::{getsockopt, setsockopt};
use crate::{Plain, cvt, cvt_size_retry, owned_fd};

/// `ETH_P_ALL`: every protocol (for [`bind`]).
pub const ETH_P_ALL: u16 = 0x0003;
/// `sll_pkttype` of a packet this host sent (`PACKET_OUTGOING`).
pub const PACKET_OUTGOING: u8 = 4;

pub(crate) const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
pub(crate) const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
pub(crate) const PACKET_VERSION: libc::c_int = 10;
const PACKET_FANOUT: libc::c_int = 18;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_MR_PROMISC: libc::c_ushort = 1;

/// What a packet socket hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockType {
    /// `SOCK_RAW`: whole frames, link-layer header included.
    Raw,
    /// `SOCK_DGRAM`: from the network header on; the link layer is described by the
    /// `sockaddr_ll` (libpcap's cooked mode).
    Dgram,
}

/// `socket(AF_PACKET, kind, htons(protocol))` (close-on-exec). Protocol 0 receives nothing
/// until [`bind`] gives one, which lets the ring and the filter be set up before the first
/// packet arrives. Needs `CAP_NET_RAW` (`EPERM` otherwise).
pub fn socket(kind: SockType, protocol: u16) -> io::Result<OwnedFd> {
    let kind = match kind {
        SockType::Raw => libc::SOCK_RAW,
        SockType::Dgram => libc::SOCK_DGRAM,
    };
    // SAFETY: plain syscall with integer arguments; the descriptor it returns is new and ours.
    unsafe {
        owned_fd(libc::socket(
            libc::AF_PACKET,
            kind | libc::SOCK_CLOEXEC,
            i32::from(protocol.to_be()),
        ))
    }
}

fn sockaddr_ll(ifindex: u32, protocol: u16) -> libc::sockaddr_ll {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    sll
}

/// `bind` to an interface (0: all interfaces) and a protocol ([`ETH_P_ALL`]: every one).
pub fn bind(fd: impl AsFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    let sll = sockaddr_ll(ifindex, protocol);
    // SAFETY: `sll` is a live sockaddr_ll and the length passed is its size.
    cvt(unsafe {
        libc::bind(
            fd.as_fd().as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Sends one frame out of interface `ifindex` (a [`SockType::Raw`] socket: the frame includes
/// its link-layer header), retried when a signal interrupts it; returns the bytes sent.
pub fn send_to(fd: impl AsFd, ifindex: u32, frame: &[u8]) -> io::Result<usize> {
    let fd = fd.as_fd().as_raw_fd();
    let sll = sockaddr_ll(ifindex, 0);
    cvt_size_retry(|| {
        // SAFETY: `frame` is valid for `frame.len()` reads and `sll` is a live sockaddr_ll
        // whose size is passed.
        unsafe {
            libc::sendto(
                fd,
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        }
    })
}

/// `PACKET_IGNORE_OUTGOING` (Linux 4.20+): do not see the packets this host sends.
pub fn ignore_outgoing(fd: impl AsFd) -> io::Result<()> {
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1 as &libc::c_int)
}

/// `PACKET_QDISC_BYPASS`: send straight to the driver, past the queueing discipline (as pktgen
/// and trafgen do).
pub fn qdisc_bypass(fd: impl AsFd) -> io::Result<()> {
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &1 as &libc::c_int)
}

/// `struct packet_mreq`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

// SAFETY: #[repr(C)], integers and an array of bytes only.
unsafe impl Plain for PacketMreq {}

/// Promiscuous mode on `ifindex` for as long as the socket lives (`PACKET_ADD_MEMBERSHIP`).
pub fn add_promisc(fd: impl AsFd, ifindex: u32) -> io::Result<()> {
    let mreq = PacketMreq {
        mr_ifindex: ifindex as libc::c_int,
        mr_type: PACKET_MR_PROMISC,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)
}

/// Joins `PACKET_FANOUT` group `group` in hash mode: the sockets of the group share the
/// interface's traffic, each flow going to one of them. The socket must be bound.
pub fn join_fanout_hash(fd: impl AsFd, group: u16) -> io::Result<()> {
    let arg: u32 = u32::from(group) | (libc::PACKET_FANOUT_HASH << 16);
    setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg)
}

/// `struct tpacket_stats_v3`: the socket's counters since they were last read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets that passed the filter, including the dropped ones (`tp_packets`).
    pub packets: u32,
    /// Packets that passed the filter but found no room (`tp_drops`).
    pub drops: u32,
    /// Times the ring was found full (`tp_freeze_q_cnt`).
    pub freeze_q_cnt: u32,
}

// SAFETY: #[repr(C)], integers only.
unsafe impl Plain for Stats {}

/// `PACKET_STATISTICS` of a socket with a `TPACKET_V3` ring. Reading resets the kernel's
/// counters.
pub fn stats(fd: impl AsFd) -> io::Result<Stats> {
    getsockopt(fd, SOL_PACKET, PACKET_STATISTICS)
}
