//! Netlink (`AF_NETLINK`, `NETLINK_ROUTE`): attaching eBPF programs to interfaces the way `ip`
//! and `tc` do, and reading what is attached.
//!
//! Two of the kernel's hooks predate `bpf_link` and are still how most tools attach:
//!
//! * XDP with `IFLA_XDP` on `RTM_SETLINK` ([`Rtnetlink::xdp_set`]): native (`DRV`) or generic
//!   (`SKB`) mode, [`XDP_FLAGS_UPDATE_IF_NOEXIST`] to refuse taking another's place, and
//!   [`XDP_FLAGS_REPLACE`] with `IFLA_XDP_EXPECTED_FD` for an atomic replacement that happens
//!   only if the expected program is the one attached. [`Rtnetlink::xdp_query`] reads the
//!   attached programs' ids from `RTM_GETLINK`.
//! * TC with a `clsact` qdisc ([`Rtnetlink::clsact_add`]) and a `cls_bpf` filter in
//!   direct-action mode on its ingress or egress ([`Rtnetlink::tc_bpf_attach`]): the fallback
//!   where TCX links (Linux 6.6) are missing. Replacing a filter in place (same priority and
//!   handle) swaps the program atomically.
//!
//! A netlink attachment belongs to the interface, not to a process: it stays until it is
//! removed or the interface goes. The kernel's refusals come back as an errno with, usually, an
//! extended-ack message ("Active program does not match expected"), which [`Error`] carries.
//! [`Rtnetlink::link_stats`] reads an interface's counters (`IFLA_STATS64`), which, unlike
//! `/sys/class/net`, are those of the calling thread's network namespace.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use crate::{cvt, cvt_size_retry, owned_fd, socket};

/// `XDP_FLAGS_UPDATE_IF_NOEXIST`: fail (`EBUSY`) when a program is attached already.
pub const XDP_FLAGS_UPDATE_IF_NOEXIST: u32 = 1 << 0;
/// `XDP_FLAGS_SKB_MODE`: generic XDP, run on the skb after the driver (any interface).
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: native XDP, run by the driver before any skb exists.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// `XDP_FLAGS_HW_MODE`: offloaded to the NIC.
pub const XDP_FLAGS_HW_MODE: u32 = 1 << 3;
/// `XDP_FLAGS_REPLACE`: replace only the program `IFLA_XDP_EXPECTED_FD` names (`EEXIST`
/// otherwise).
pub const XDP_FLAGS_REPLACE: u32 = 1 << 4;

/// `ETH_P_ALL`: a TC filter for every protocol.
const ETH_P_ALL: u16 = 0x0003;

const NLMSG_HDRLEN: usize = 16;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;

const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_DUMP: u16 = 0x300;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
/// In an ack: the request's payload is not echoed (`NETLINK_CAP_ACK`).
const NLM_F_CAPPED: u16 = 0x100;
/// In an ack: extended-ack attributes follow.
const NLM_F_ACK_TLVS: u16 = 0x200;

const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_SETLINK: u16 = 19;
const RTM_NEWQDISC: u16 = 36;
const RTM_DELQDISC: u16 = 37;
const RTM_NEWTFILTER: u16 = 44;
const RTM_DELTFILTER: u16 = 45;
const RTM_GETTFILTER: u16 = 46;

const SOL_NETLINK: libc::c_int = 270;
const NETLINK_CAP_ACK: libc::c_int = 10;
const NETLINK_EXT_ACK: libc::c_int = 11;

const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;

const NLA_F_NESTED: u16 = 0x8000;
const NLA_TYPE_MASK: u16 = 0x3fff;

const IFLA_STATS64: u16 = 23;
const IFLA_XDP: u16 = 43;
const IFLA_XDP_FD: u16 = 1;
const IFLA_XDP_ATTACHED: u16 = 2;
const IFLA_XDP_FLAGS: u16 = 3;
const IFLA_XDP_PROG_ID: u16 = 4;
const IFLA_XDP_DRV_PROG_ID: u16 = 5;
const IFLA_XDP_SKB_PROG_ID: u16 = 6;
const IFLA_XDP_HW_PROG_ID: u16 = 7;
const IFLA_XDP_EXPECTED_FD: u16 = 8;

const TCA_KIND: u16 = 1;
const TCA_OPTIONS: u16 = 2;
const TCA_BPF_FD: u16 = 6;
const TCA_BPF_NAME: u16 = 7;
const TCA_BPF_FLAGS: u16 = 8;
const TCA_BPF_ID: u16 = 11;
const TCA_BPF_FLAG_ACT_DIRECT: u32 = 1;

/// `TC_H_CLSACT` (= `TC_H_INGRESS`): the clsact qdisc's parent.
const TC_H_CLSACT: u32 = 0xffff_fff1;
const TC_H_MIN_INGRESS: u32 = 0xfff2;
const TC_H_MIN_EGRESS: u32 = 0xfff3;

/// How long a request may wait for the kernel's answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A netlink request the kernel refused or could not be made: the errno, and the kernel's
/// extended-ack message when it gave one.
#[derive(Debug)]
pub struct Error {
    errno: io::Error,
    message: Option<String>,
}

impl Error {
    /// The errno (`EBUSY`, `EEXIST`, `ENODEV`, `EPERM`…), when there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.errno.raw_os_error()
    }

    /// The kernel's extended-ack message, e.g. "XDP program already attached".
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The error as an `io::Error` (the errno, without the message).
    pub fn io(&self) -> &io::Error {
        &self.errno
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{} ({m})", self.errno),
            None => write!(f, "{}", self.errno),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.errno)
    }
}

impl From<io::Error> for Error {
    fn from(errno: io::Error) -> Error {
        Error { errno, message: None }
    }
}

/// A request being built: the header, the family header, attributes (nested ones too).
struct Request {
    buf: Vec<u8>,
}

impl Request {
    fn new(msg_type: u16, flags: u16) -> Request {
        let mut buf = vec![0u8; NLMSG_HDRLEN];
        buf[4..6].copy_from_slice(&msg_type.to_ne_bytes());
        buf[6..8].copy_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
        Request { buf }
    }

    fn align(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    /// The family header (`ifinfomsg`, `tcmsg`).
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.align();
    }

    fn attr(&mut self, attr_type: u16, data: &[u8]) {
        let len = (4 + data.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&attr_type.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.align();
    }

    fn attr_u32(&mut self, attr_type: u16, v: u32) {
        self.attr(attr_type, &v.to_ne_bytes());
    }

    fn attr_str(&mut self, attr_type: u16, s: &str) {
        let mut data = s.as_bytes().to_vec();
        data.push(0);
        self.attr(attr_type, &data);
    }

    /// Opens a nested attribute; [`Request::end_nest`] closes it.
    fn begin_nest(&mut self, attr_type: u16) -> usize {
        let at = self.buf.len();
        self.attr(attr_type | NLA_F_NESTED, &[]);
        at
    }

    fn end_nest(&mut self, at: usize) {
        let len = (self.buf.len() - at) as u16;
        self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
    }

    fn finish(mut self, seq: u32) -> Vec<u8> {
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf[8..12].copy_from_slice(&seq.to_ne_bytes());
        self.buf
    }
}

/// One message of a reply.
struct Message {
    msg_type: u16,
    flags: u16,
    seq: u32,
    payload: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The messages in one datagram (a truncated or malformed tail is dropped).
fn split_messages(mut b: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    while b.len() >= NLMSG_HDRLEN {
        let len = u32_at(b, 0).unwrap_or(0) as usize;
        if len < NLMSG_HDRLEN || len > b.len() {
            break;
        }
        out.push(Message {
            msg_type: u16_at(b, 4).unwrap_or(0),
            flags: u16_at(b, 6).unwrap_or(0),
            seq: u32_at(b, 8).unwrap_or(0),
            payload: b[NLMSG_HDRLEN..len].to_vec(),
        });
        b = &b[len.next_multiple_of(4).min(b.len())..];
    }
    out
}

/// The attributes in `b` as `(type without flags, data)` (a malformed tail is dropped).
fn attrs(mut b: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while b.len() >= 4 {
        let len = u16_at(b, 0).unwrap_or(0) as usize;
        if len < 4 || len > b.len() {
            break;
        }
        out.push((u16_at(b, 2).unwrap_or(0) & NLA_TYPE_MASK, &b[4..len]));
        b = &b[len.next_multiple_of(4).min(b.len())..];
    }
    out
}

fn attr_u32(data: &[u8]) -> u32 {
    u32_at(data, 0).unwrap_or(0)
}

fn attr_string(data: &[u8]) -> String {
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    String::from_utf8_lossy(&data[..end]).into_owned()
}

/// The error of an `NLMSG_ERROR` (or a dump's `NLMSG_DONE`) payload, `None` for an ack.
fn error_of(m: &Message) -> Option<Error> {
    let code = u32_at(&m.payload, 0).unwrap_or(0) as i32;
    if code >= 0 {
        return None;
    }
    let mut message = None;
    if m.flags & NLM_F_ACK_TLVS != 0 {
        // The request's header is echoed after the code, and its payload too unless capped.
        let tlv_at = if m.msg_type == NLMSG_DONE {
            4
        } else if m.flags & NLM_F_CAPPED != 0 {
            4 + NLMSG_HDRLEN
        } else {
            4 + u32_at(&m.payload, 4).unwrap_or(0) as usize
        };
        let tlvs = m.payload.get(tlv_at.next_multiple_of(4)..).unwrap_or(&[]);
        let mut offset = None;
        for (t, data) in attrs(tlvs) {
            match t {
                NLMSGERR_ATTR_MSG => message = Some(attr_string(data)),
                NLMSGERR_ATTR_OFFS => offset = Some(attr_u32(data)),
                _ => {}
            }
        }
        if let (Some(m), Some(off)) = (&mut message, offset) {
            m.push_str(&format!(" at byte {off} of the request"));
        }
    }
    Some(Error { errno: io::Error::from_raw_os_error(-code), message })
}

/// The counters of an interface (`struct rtnl_link_stats64`'s first eight).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Receive errors.
    pub rx_errors: u64,
    /// Send errors.
    pub tx_errors: u64,
    /// Packets dropped on receive (veth: XDP drops, a full ring).
    pub rx_dropped: u64,
    /// Packets dropped on send.
    pub tx_dropped: u64,
}

/// Which XDP programs an interface runs ([`Rtnetlink::xdp_query`]); ids are 0 for none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpState {
    /// `IFLA_XDP_ATTACHED`: 0 none, 1 native (`DRV`), 2 generic (`SKB`), 3 offloaded, 4 more
    /// than one mode.
    pub attached: u8,
    /// The program in the one attached mode (0 with none or several).
    pub prog_id: u32,
    /// The native program.
    pub drv_prog_id: u32,
    /// The generic program.
    pub skb_prog_id: u32,
    /// The offloaded program.
    pub hw_prog_id: u32,
}

/// Which side of the `clsact` qdisc a TC filter is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcDirection {
    /// Packets received by the interface.
    Ingress,
    /// Packets the interface sends.
    Egress,
}

impl TcDirection {
    fn parent(self) -> u32 {
        (TC_H_CLSACT & 0xffff_0000)
            | match self {
                TcDirection::Ingress => TC_H_MIN_INGRESS,
                TcDirection::Egress => TC_H_MIN_EGRESS,
            }
    }
}

/// Where a `cls_bpf` filter sits: the `clsact` side, its priority (`tc`'s `pref`) and its
/// handle; its protocol is always `all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcFilter {
    /// Ingress or egress.
    pub direction: TcDirection,
    /// Priority, 1 and up (lower runs first).
    pub priority: u16,
    /// The filter's handle within its priority, 1 and up.
    pub handle: u32,
}

/// A `cls_bpf` filter as the kernel lists it ([`Rtnetlink::tc_bpf_list`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcBpfFilter {
    /// Its place.
    pub filter: TcFilter,
    /// The EtherType it applies to (`ETH_P_ALL` = 3 for all).
    pub protocol: u16,
    /// The program's id.
    pub prog_id: u32,
    /// The name given when it was attached (`TCA_BPF_NAME`).
    pub name: String,
    /// Whether the program's return value is the action (direct-action mode).
    pub direct_action: bool,
}

/// A `NETLINK_ROUTE` socket of the calling thread's network namespace.
#[derive(Debug)]
pub struct Rtnetlink {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

impl Rtnetlink {
    /// Opens and binds the socket, asking for extended acks with the request not echoed
    /// (`NETLINK_EXT_ACK`, `NETLINK_CAP_ACK`).
    pub fn open() -> io::Result<Rtnetlink> {
        // SAFETY: plain syscall with integer arguments; the descriptor it returns is new and ours.
        let fd = unsafe {
            owned_fd(libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            ))
        }?;
        // Best effort: without them errors just carry no message.
        let _ = socket::setsockopt(&fd, SOL_NETLINK, NETLINK_EXT_ACK, &1 as &libc::c_int);
        let _ = socket::setsockopt(&fd, SOL_NETLINK, NETLINK_CAP_ACK, &1 as &libc::c_int);
        socket::set_receive_timeout(&fd, TIMEOUT)?;
        // SAFETY: sockaddr_nl is plain data; all-zero is a valid value.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `addr` is a live sockaddr_nl and its size is passed.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })?;
        Ok(Rtnetlink { fd, seq: 0, buf: vec![0; 1 << 16] })
    }

    /// Sends `req` and gathers the replies: up to the ack (or the error) for a request with
    /// `NLM_F_ACK`, up to `NLMSG_DONE` for a dump.
    fn transact(&mut self, req: Request) -> Result<Vec<Message>, Error> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let bytes = req.finish(seq);
        // SAFETY: sockaddr_nl is plain data; all-zero (the kernel, pid 0) is a valid value.
        let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let fd = self.fd.as_raw_fd();
        let sent = cvt_size_retry(|| {
            // SAFETY: `bytes` and `to` are live for the call and their sizes are passed.
            unsafe {
                libc::sendto(
                    fd,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    0,
                    (&to as *const libc::sockaddr_nl).cast(),
                    std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
                )
            }
        })?;
        if sent != bytes.len() {
            return Err(io::Error::other("short netlink send").into());
        }
        let mut out = Vec::new();
        loop {
            for m in self.recv()? {
                if m.seq != seq {
                    continue; // the answer to an earlier request that timed out
                }
                match m.msg_type {
                    NLMSG_ERROR | NLMSG_DONE => {
                        return match error_of(&m) {
                            Some(e) => Err(e),
                            None => Ok(out),
                        };
                    }
                    // A dump's part (NLM_F_MULTI), or the answer to a get, whose ack follows.
                    _ => out.push(m),
                }
            }
        }
    }

    /// One datagram's messages (the buffer grows to the datagram's size).
    fn recv(&mut self) -> Result<Vec<Message>, Error> {
        let fd = self.fd.as_raw_fd();
        loop {
            let buf = &mut self.buf;
            let n = cvt_size_retry(|| {
                // SAFETY: `buf` is writable for its length; MSG_PEEK|MSG_TRUNC leaves the
                // datagram queued and returns its real length.
                unsafe {
                    libc::recv(
                        fd,
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        libc::MSG_PEEK | libc::MSG_TRUNC,
                    )
                }
            })
            .map_err(|e| {
                if e.kind() == io::ErrorKind::WouldBlock {
                    io::Error::new(io::ErrorKind::TimedOut, "no answer from the kernel (netlink)")
                } else {
                    e
                }
            })?;
            if n > self.buf.len() {
                self.buf.resize(n, 0);
                continue;
            }
            let buf = &mut self.buf;
            let n = cvt_size_retry(|| {
                // SAFETY: as above; this takes the datagram.
                unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) }
            })?;
            return Ok(split_messages(&self.buf[..n]));
        }
    }

    /// `RTM_GETLINK` of `ifindex`: the attributes of the reply.
    fn get_link(&mut self, ifindex: u32) -> Result<Vec<u8>, Error> {
        let mut req = Request::new(RTM_GETLINK, NLM_F_ACK);
        req.put(&ifinfomsg(ifindex));
        let replies = self.transact(req)?;
        let m = replies
            .into_iter()
            .find(|m| m.msg_type == RTM_NEWLINK)
            .ok_or_else(|| io::Error::other("RTM_GETLINK without an answer"))?;
        Ok(m.payload.get(IFINFOMSG_LEN..).unwrap_or(&[]).to_vec())
    }

    /// Which XDP programs interface `ifindex` runs.
    pub fn xdp_query(&mut self, ifindex: u32) -> Result<XdpState, Error> {
        let link = self.get_link(ifindex)?;
        let mut state = XdpState::default();
        for (t, data) in attrs(&link) {
            if t != IFLA_XDP {
                continue;
            }
            for (t, data) in attrs(data) {
                match t {
                    IFLA_XDP_ATTACHED => state.attached = data.first().copied().unwrap_or(0),
                    IFLA_XDP_PROG_ID => state.prog_id = attr_u32(data),
                    IFLA_XDP_DRV_PROG_ID => state.drv_prog_id = attr_u32(data),
                    IFLA_XDP_SKB_PROG_ID => state.skb_prog_id = attr_u32(data),
                    IFLA_XDP_HW_PROG_ID => state.hw_prog_id = attr_u32(data),
                    _ => {}
                }
            }
        }
        Ok(state)
    }

    /// The counters of interface `ifindex` (`IFLA_STATS64`).
    pub fn link_stats(&mut self, ifindex: u32) -> Result<LinkStats, Error> {
        let link = self.get_link(ifindex)?;
        let (_, s) = attrs(&link)
            .into_iter()
            .find(|(t, _)| *t == IFLA_STATS64)
            .ok_or_else(|| io::Error::other("no IFLA_STATS64 in the answer"))?;
        let at = |i: usize| u64_at(s, i * 8).unwrap_or(0);
        Ok(LinkStats {
            rx_packets: at(0),
            tx_packets: at(1),
            rx_bytes: at(2),
            tx_bytes: at(3),
            rx_errors: at(4),
            tx_errors: at(5),
            rx_dropped: at(6),
            tx_dropped: at(7),
        })
    }

    /// `IFLA_XDP` on interface `ifindex`: attaches `prog` (`None` detaches) with `flags`
    /// ([`XDP_FLAGS_SKB_MODE`] or [`XDP_FLAGS_DRV_MODE`], [`XDP_FLAGS_UPDATE_IF_NOEXIST`]).
    /// With `expected`, the change happens only if that program is the one attached now
    /// ([`XDP_FLAGS_REPLACE`], atomically; `EEXIST` otherwise). The mode flag of a detach must
    /// be the attachment's. `EBUSY`: a link holds the hook, or `UPDATE_IF_NOEXIST` found a
    /// program.
    pub fn xdp_set(
        &mut self,
        ifindex: u32,
        prog: Option<BorrowedFd<'_>>,
        flags: u32,
        expected: Option<BorrowedFd<'_>>,
    ) -> Result<(), Error> {
        let mut req = Request::new(RTM_SETLINK, NLM_F_ACK);
        req.put(&ifinfomsg(ifindex));
        let nest = req.begin_nest(IFLA_XDP);
        req.attr(IFLA_XDP_FD, &prog.map_or(-1, |p| p.as_raw_fd()).to_ne_bytes());
        let flags = if expected.is_some() { flags | XDP_FLAGS_REPLACE } else { flags };
        if flags != 0 {
            req.attr_u32(IFLA_XDP_FLAGS, flags);
        }
        if let Some(e) = expected {
            req.attr(IFLA_XDP_EXPECTED_FD, &e.as_raw_fd().to_ne_bytes());
        }
        req.end_nest(nest);
        self.transact(req).map(drop)
    }

    /// Adds the `clsact` qdisc to interface `ifindex`; `Ok(false)` when it has one already.
    pub fn clsact_add(&mut self, ifindex: u32) -> Result<bool, Error> {
        let mut req = Request::new(RTM_NEWQDISC, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
        req.put(&tcmsg(ifindex, 0xffff_0000, TC_H_CLSACT, 0));
        req.attr_str(TCA_KIND, "clsact");
        match self.transact(req) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes interface `ifindex`'s `clsact` qdisc, and every filter on it (`ENOENT`,
    /// or `EINVAL` on some kernels, when there is none).
    pub fn clsact_delete(&mut self, ifindex: u32) -> Result<(), Error> {
        let mut req = Request::new(RTM_DELQDISC, NLM_F_ACK);
        req.put(&tcmsg(ifindex, 0xffff_0000, TC_H_CLSACT, 0));
        req.attr_str(TCA_KIND, "clsact");
        self.transact(req).map(drop)
    }

    /// A `cls_bpf` filter in direct-action mode running `prog` at `at` on interface `ifindex`
    /// (whose `clsact` qdisc must exist), named `name` in listings. Without `replace`, a new
    /// filter (`EEXIST` when the place is taken); with it, the program of the filter there is
    /// swapped in place, atomically (`ENOENT` when there is none).
    pub fn tc_bpf_attach(
        &mut self,
        ifindex: u32,
        at: &TcFilter,
        prog: BorrowedFd<'_>,
        name: &str,
        replace: bool,
    ) -> Result<(), Error> {
        let flags = if replace { NLM_F_ACK } else { NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL };
        let mut req = Request::new(RTM_NEWTFILTER, flags);
        req.put(&tcmsg(ifindex, at.handle, at.direction.parent(), filter_info(at.priority)));
        req.attr_str(TCA_KIND, "bpf");
        let nest = req.begin_nest(TCA_OPTIONS);
        req.attr_u32(TCA_BPF_FD, prog.as_raw_fd() as u32);
        req.attr_str(TCA_BPF_NAME, name);
        req.attr_u32(TCA_BPF_FLAGS, TCA_BPF_FLAG_ACT_DIRECT);
        req.end_nest(nest);
        self.transact(req).map(drop)
    }

    /// Removes the `cls_bpf` filter at `at` from interface `ifindex` (`ENOENT`: none there).
    pub fn tc_bpf_detach(&mut self, ifindex: u32, at: &TcFilter) -> Result<(), Error> {
        let mut req = Request::new(RTM_DELTFILTER, NLM_F_ACK);
        req.put(&tcmsg(ifindex, at.handle, at.direction.parent(), filter_info(at.priority)));
        req.attr_str(TCA_KIND, "bpf");
        self.transact(req).map(drop)
    }

    /// The `cls_bpf` filters on one side of interface `ifindex`'s `clsact` qdisc (none, not an
    /// error, when it has no such qdisc).
    pub fn tc_bpf_list(
        &mut self,
        ifindex: u32,
        direction: TcDirection,
    ) -> Result<Vec<TcBpfFilter>, Error> {
        let mut req = Request::new(RTM_GETTFILTER, NLM_F_DUMP);
        req.put(&tcmsg(ifindex, 0, direction.parent(), 0));
        let replies = match self.transact(req) {
            Ok(r) => r,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOENT)) => {
                return Ok(Vec::new());
            }
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for m in replies.iter().filter(|m| m.msg_type == RTM_NEWTFILTER) {
            let p = &m.payload;
            let (handle, info) = (u32_at(p, 8).unwrap_or(0), u32_at(p, 16).unwrap_or(0));
            let mut kind = String::new();
            let mut f = TcBpfFilter {
                filter: TcFilter { direction, priority: (info >> 16) as u16, handle },
                protocol: u16::from_be(info as u16),
                prog_id: 0,
                name: String::new(),
                direct_action: false,
            };
            for (t, data) in attrs(p.get(TCMSG_LEN..).unwrap_or(&[])) {
                match t {
                    TCA_KIND => kind = attr_string(data),
                    TCA_OPTIONS => {
                        for (t, data) in attrs(data) {
                            match t {
                                TCA_BPF_ID => f.prog_id = attr_u32(data),
                                TCA_BPF_NAME => f.name = attr_string(data),
                                TCA_BPF_FLAGS => {
                                    f.direct_action = attr_u32(data) & TCA_BPF_FLAG_ACT_DIRECT != 0
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            // The dump lists each priority's classifier itself too (handle 0, no options).
            if kind == "bpf" && handle != 0 {
                out.push(f);
            }
        }
        Ok(out)
    }
}

/// `sizeof(struct ifinfomsg)`.
const IFINFOMSG_LEN: usize = 16;
/// `sizeof(struct tcmsg)`.
const TCMSG_LEN: usize = 20;

/// `struct ifinfomsg` for interface `ifindex` (family `AF_UNSPEC`, no flag changes).
fn ifinfomsg(ifindex: u32) -> [u8; IFINFOMSG_LEN] {
    let mut m = [0u8; IFINFOMSG_LEN];
    m[4..8].copy_from_slice(&ifindex.to_ne_bytes());
    m
}

/// `struct tcmsg`.
fn tcmsg(ifindex: u32, handle: u32, parent: u32, info: u32) -> [u8; TCMSG_LEN] {
    let mut m = [0u8; TCMSG_LEN];
    m[4..8].copy_from_slice(&ifindex.to_ne_bytes());
    m[8..12].copy_from_slice(&handle.to_ne_bytes());
    m[12..16].copy_from_slice(&parent.to_ne_bytes());
    m[16..20].copy_from_slice(&info.to_ne_bytes());
    m
}

/// A filter's `tcm_info`: its priority and its protocol (all, in network byte order).
fn filter_info(priority: u16) -> u32 {
    (u32::from(priority) << 16) | u32::from(ETH_P_ALL.to_be())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_laid_out_as_the_kernel_reads_them() {
        let mut req = Request::new(RTM_SETLINK, NLM_F_ACK);
        req.put(&ifinfomsg(7));
        let nest = req.begin_nest(IFLA_XDP);
        req.attr(IFLA_XDP_FD, &(-1i32).to_ne_bytes());
        req.attr_u32(IFLA_XDP_FLAGS, XDP_FLAGS_SKB_MODE);
        req.end_nest(nest);
        req.attr_str(TCA_KIND, "bpf");
        let b = req.finish(42);
        assert_eq!(u32_at(&b, 0), Some(b.len() as u32));
        assert_eq!(u16_at(&b, 4), Some(RTM_SETLINK));
        assert_eq!(u16_at(&b, 6), Some(NLM_F_ACK | NLM_F_REQUEST));
        assert_eq!(u32_at(&b, 8), Some(42));
        assert_eq!(u32_at(&b, 20), Some(7), "ifi_index");
        let top = attrs(&b[NLMSG_HDRLEN + IFINFOMSG_LEN..]);
        assert_eq!(top.len(), 2);
        assert_eq!(top[0].0, IFLA_XDP, "the nested flag is masked off");
        assert_eq!(u16_at(&b, 34).map(|t| t & NLA_F_NESTED), Some(NLA_F_NESTED));
        let inner = attrs(top[0].1);
        assert_eq!(
            inner,
            vec![
                (IFLA_XDP_FD, &(-1i32).to_ne_bytes()[..]),
                (IFLA_XDP_FLAGS, &XDP_FLAGS_SKB_MODE.to_ne_bytes()[..])
            ]
        );
        // "bpf\0" is 4 bytes: no padding; the message ends with it.
        assert_eq!(top[1], (TCA_KIND, &b"bpf\0"[..]));
        assert!(b.len().is_multiple_of(4));
    }

    #[test]
    fn errors_carry_the_extended_ack() {
        // NLMSG_ERROR, capped, with TLVs: -EEXIST, the request's header, then MSG and OFFS.
        let mut payload = (-libc::EEXIST).to_ne_bytes().to_vec();
        payload.extend_from_slice(&[0u8; NLMSG_HDRLEN]);
        let msg = b"Active program does not match expected\0";
        payload.extend_from_slice(&((4 + msg.len()) as u16).to_ne_bytes());
        payload.extend_from_slice(&NLMSGERR_ATTR_MSG.to_ne_bytes());
        payload.extend_from_slice(msg);
        while !payload.len().is_multiple_of(4) {
            payload.push(0);
        }
        payload.extend_from_slice(&8u16.to_ne_bytes());
        payload.extend_from_slice(&NLMSGERR_ATTR_OFFS.to_ne_bytes());
        payload.extend_from_slice(&36u32.to_ne_bytes());
        let m = Message {
            msg_type: NLMSG_ERROR,
            flags: NLM_F_CAPPED | NLM_F_ACK_TLVS,
            seq: 1,
            payload,
        };
        let e = error_of(&m).unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        assert_eq!(
            e.message(),
            Some("Active program does not match expected at byte 36 of the request")
        );
        // An ack (code 0) is no error.
        let ack = Message { msg_type: NLMSG_ERROR, flags: 0, seq: 1, payload: vec![0; 20] };
        assert!(error_of(&ack).is_none());
    }

    #[test]
    fn malformed_replies_are_cut_not_overread() {
        // A header claiming more than there is, an attribute longer than its buffer.
        let mut b = vec![0u8; 20];
        b[0..4].copy_from_slice(&200u32.to_ne_bytes());
        assert!(split_messages(&b).is_empty());
        assert!(attrs(&[9, 0, 1, 0, 0]).is_empty());
        assert!(attrs(&[2, 0, 1, 0]).is_empty(), "shorter than its own header");
    }

    #[test]
    fn filter_info_is_priority_and_network_order_protocol() {
        let info = filter_info(3);
        assert_eq!(info >> 16, 3);
        assert_eq!(u16::from_be(info as u16), ETH_P_ALL);
        assert_eq!(TcDirection::Ingress.parent(), 0xffff_fff2);
        assert_eq!(TcDirection::Egress.parent(), 0xffff_fff3);
    }

    /// `lo` has no XDP program and counters that move; a bad interface is `ENODEV`.
    #[test]
    fn link_queries_on_loopback() {
        let mut rt = Rtnetlink::open().unwrap();
        let lo = crate::iface::index_of("lo").unwrap();
        assert_eq!(rt.xdp_query(lo).unwrap().attached, 0);
        rt.link_stats(lo).unwrap();
        let e = rt.xdp_query(0x7fff_fff0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV), "{e}");
    }

    /// `r0 = ret; exit` loaded as `prog_type`.
    fn ret_prog(prog_type: u32, ret: u8, name: &str) -> std::io::Result<OwnedFd> {
        let insns = [0xb7, 0, 0, 0, ret, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0];
        let attach =
            if prog_type == crate::bpf::BPF_PROG_TYPE_XDP { crate::bpf::BPF_XDP } else { 0 };
        crate::bpf::prog_load_with(
            &insns,
            crate::bpf::ProgLoad {
                expected_attach_type: attach,
                name,
                ..crate::bpf::ProgLoad::new(prog_type)
            },
        )
    }

    /// XDP and TC attachment by netlink on `lo` in a private namespace (a thread of its own):
    /// attach, refuse a second, replace only the expected program, detach; the same for a
    /// `cls_bpf` filter on a `clsact` qdisc.
    #[test]
    fn xdp_and_tc_on_loopback_in_a_private_namespace() {
        use crate::bpf::{BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP, prog_info};
        use std::os::fd::AsFd;
        let run = std::thread::spawn(|| -> Result<(), String> {
            crate::netns::unshare_net().map_err(|e| format!("unshare: {e}"))?;
            let a = ret_prog(BPF_PROG_TYPE_XDP, 2, "sift_a").map_err(|e| format!("load: {e}"))?;
            let b = ret_prog(BPF_PROG_TYPE_XDP, 2, "sift_b").unwrap();
            let (ida, idb) = (prog_info(&a).unwrap().id, prog_info(&b).unwrap().id);
            let mut rt = Rtnetlink::open().unwrap();
            let lo = crate::iface::index_of("lo").unwrap();
            let skb = XDP_FLAGS_SKB_MODE;
            rt.xdp_set(lo, Some(a.as_fd()), skb | XDP_FLAGS_UPDATE_IF_NOEXIST, None).unwrap();
            let st = rt.xdp_query(lo).unwrap();
            assert_eq!((st.attached, st.prog_id, st.skb_prog_id), (2, ida, ida));
            let e = rt.xdp_set(lo, Some(b.as_fd()), skb | XDP_FLAGS_UPDATE_IF_NOEXIST, None);
            let e = e.unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EBUSY), "{e}");
            assert!(e.message().is_some(), "the kernel says why: {e}");
            // Replace expecting the wrong program: refused; expecting the right one: done.
            let e = rt.xdp_set(lo, Some(b.as_fd()), skb, Some(b.as_fd())).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EEXIST), "{e}");
            rt.xdp_set(lo, Some(b.as_fd()), skb, Some(a.as_fd())).unwrap();
            assert_eq!(rt.xdp_query(lo).unwrap().prog_id, idb);
            rt.xdp_set(lo, None, skb, None).unwrap();
            assert_eq!(rt.xdp_query(lo).unwrap(), XdpState::default());

            let p = ret_prog(BPF_PROG_TYPE_SCHED_CLS, 0, "sift_tc").unwrap();
            let q = ret_prog(BPF_PROG_TYPE_SCHED_CLS, 0, "sift_tc2").unwrap();
            let (idp, idq) = (prog_info(&p).unwrap().id, prog_info(&q).unwrap().id);
            assert!(rt.tc_bpf_list(lo, TcDirection::Ingress).unwrap().is_empty(), "no qdisc");
            assert!(rt.clsact_add(lo).unwrap());
            assert!(!rt.clsact_add(lo).unwrap(), "there already");
            let at = TcFilter { direction: TcDirection::Egress, priority: 7, handle: 1 };
            let e = rt.tc_bpf_attach(lo, &at, q.as_fd(), "sift", true).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "replace needs one: {e}");
            rt.tc_bpf_attach(lo, &at, p.as_fd(), "sift_tc", false).unwrap();
            let e = rt.tc_bpf_attach(lo, &at, q.as_fd(), "sift", false).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EEXIST), "{e}");
            let list = rt.tc_bpf_list(lo, TcDirection::Egress).unwrap();
            let want = TcBpfFilter {
                filter: at,
                protocol: ETH_P_ALL,
                prog_id: idp,
                name: "sift_tc".into(),
                direct_action: true,
            };
            assert_eq!(list, vec![want]);
            assert!(rt.tc_bpf_list(lo, TcDirection::Ingress).unwrap().is_empty());
            rt.tc_bpf_attach(lo, &at, q.as_fd(), "sift_tc2", true).unwrap();
            assert_eq!(rt.tc_bpf_list(lo, TcDirection::Egress).unwrap()[0].prog_id, idq);
            rt.tc_bpf_detach(lo, &at).unwrap();
            assert!(rt.tc_bpf_list(lo, TcDirection::Egress).unwrap().is_empty());
            let e = rt.tc_bpf_detach(lo, &at).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
            rt.clsact_delete(lo).unwrap();
            assert!(rt.clsact_delete(lo).is_err());
            Ok(())
        });
        if let Err(why) = run.join().unwrap() {
            sift_testkit::oracle_missing::<()>("private network namespace and bpf(2)", why);
        }
    }
}
