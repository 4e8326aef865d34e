//! A live capture: an `AF_PACKET` socket with a `TPACKET_V3` ring, the filter in the kernel.
//!
//! The socket is created with protocol 0 (it receives nothing), then gets its ring, its
//! filter and only then is bound to the interface with `ETH_P_ALL`: no packet can reach the
//! ring before the filter, so the kernel's counters and the ring agree from the first packet.
//!
//! Stopping cleanly ([`Capture::drain`]) replaces the filter by one that rejects everything,
//! reads the final counters, and takes packets from the ring until it has taken every packet
//! the kernel reports as queued (received minus dropped). Counted packets are therefore never
//! lost at the end of a capture.

use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use sift_insn::Insn;
use sift_insn::code::{BPF_K, BPF_RET};
use sift_sys::ring::{self, RingPacket, RxRing, TP_STATUS_VLAN_TPID_VALID, TP_STATUS_VLAN_VALID};
use sift_sys::{iface, packet, socket};

use crate::cooked::{self, Cooked, LinkAddr};
use crate::{CaptureError, ErrorKind};

/// Which packets to keep by direction (`-Q`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Both (the default).
    #[default]
    InOut,
    /// Received packets only.
    In,
    /// Sent packets only.
    Out,
}

/// How to open a capture.
#[derive(Clone, Debug)]
pub struct Config {
    /// Interface name, or `any` for all interfaces (cooked headers).
    pub interface: String,
    /// Bytes kept per packet (the filter's accept value); 0 means the maximum, 262144.
    pub snaplen: u32,
    /// Ring size in bytes (libpcap's default is 2 MiB).
    pub buffer_bytes: usize,
    /// How long the kernel keeps a partly filled block before handing it over, in ms.
    pub block_timeout_ms: u32,
    /// Put the interface in promiscuous mode (not for `any`).
    pub promiscuous: bool,
    /// Direction filter.
    pub direction: Direction,
    /// Cooked header for `any` (`LINUX_SLL2` by default, as libpcap).
    pub any_cooked: Cooked,
    /// Join this `PACKET_FANOUT` group (hash mode), so several sockets share the traffic.
    pub fanout_group: Option<u16>,
}

impl Config {
    /// libpcap's defaults for `interface`.
    pub fn new(interface: &str) -> Self {
        Config {
            interface: interface.to_string(),
            snaplen: MAX_SNAPLEN,
            buffer_bytes: 2 << 20,
            block_timeout_ms: 100,
            promiscuous: true,
            direction: Direction::InOut,
            any_cooked: Cooked::Sll2,
            fanout_group: None,
        }
    }
}

/// libpcap's `MAXIMUM_SNAPLEN`.
pub const MAX_SNAPLEN: u32 = 262_144;

/// The kernel's counters with libpcap's meaning, accumulated over the capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `ps_recv`: packets that passed the kernel filter (including the dropped ones).
    pub received: u64,
    /// `ps_drop`: packets that passed the filter but found no room in the ring.
    pub dropped: u64,
    /// Packets taken out of the ring so far.
    pub taken: u64,
}

/// Where the filter runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Attached to the socket: rejected packets are never copied.
    Kernel,
    /// The kernel could not run it; the caller's user-space filter runs on every packet.
    UserSpace {
        /// Why.
        reason: String,
    },
}

/// What the kernel tells about a packet besides its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameMeta {
    /// `sockaddr_ll` fields (interface, packet type, protocol, hardware type and address).
    pub link: LinkAddr,
    /// The stripped VLAN tag (TPID, TCI), if the kernel stripped one.
    pub vlan: Option<(u16, u16)>,
    /// The flow hash.
    pub rxhash: u32,
}

/// One captured packet, as libpcap delivers it (cooked header built, VLAN tag reinserted,
/// cut to the snapshot length).
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Seconds since the epoch.
    pub secs: u64,
    /// Nanoseconds.
    pub nanos: u32,
    /// Length on the wire.
    pub wire_len: u32,
    /// The captured bytes.
    pub data: &'a [u8],
    /// Metadata.
    pub meta: &'a FrameMeta,
}

/// A user-space filter: `(bytes, wire length, metadata) -> keep?`, run where libpcap runs its
/// own (cooked header built, VLAN tag not yet reinserted).
pub type UserFilter = Box<dyn FnMut(&[u8], u32, &FrameMeta) -> bool + Send>;

/// An open live capture.
pub struct Capture {
    fd: OwnedFd,
    ring: RxRing,
    next_block: usize,
    name: String,
    link_type: u16,
    cooked: Option<Cooked>,
    snaplen: u32,
    direction: Direction,
    lo_ifindex: Option<u32>,
    block_timeout_ms: u32,
    totals: Stats,
    user_filter: Option<UserFilter>,
    /// Packets rejected in user space (by the user filter or the direction check).
    rejected_in_user_space: u64,
    scratch: Vec<u8>,
    ifindex: u32,
    fanout: Option<u16>,
    bound: bool,
}

/// `CAP_NET_RAW`.
const CAP_NET_RAW: u32 = 13;

/// Checks up front that this process may open packet sockets, with a message that says what
/// is needed.
pub fn check_privileges() -> Result<(), CaptureError> {
    if has_capability(CAP_NET_RAW) {
        return Ok(());
    }
    Err(CaptureError {
        interface: String::new(),
        kind: ErrorKind::Permission,
        what: "you don't have permission to capture or inject packets: run as root or grant \
               CAP_NET_RAW (e.g. `setcap cap_net_raw,cap_net_admin=eip $(which sift)`)"
            .into(),
        source: io::Error::from_raw_os_error(libc::EPERM),
    })
}

/// `true` when the effective capability set holds `cap` (read from `/proc/self/status`).
fn has_capability(cap: u32) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|bits| bits & (1 << cap) != 0)
}

/// What the interface ioctls say about `name`, or the error capture and injection report: no
/// such device (`ENODEV`), or any other failure.
pub(crate) fn interface_info(name: &str) -> Result<iface::IfInfo, CaptureError> {
    iface::info(name).map_err(|source| CaptureError {
        interface: name.to_string(),
        kind: if source.raw_os_error() == Some(libc::ENODEV) {
            ErrorKind::NoSuchDevice
        } else {
            ErrorKind::Io
        },
        what: "no such device (try `sift -D`)".into(),
        source,
    })
}

/// A packet socket for `name`, or the error capture and injection report: not allowed
/// (`EPERM`, `EACCES`), or any other failure.
pub(crate) fn open_packet_socket(
    name: &str,
    kind: packet::SockType,
) -> Result<OwnedFd, CaptureError> {
    packet::socket(kind, 0).map_err(|source| CaptureError {
        interface: name.to_string(),
        kind: if matches!(source.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
            ErrorKind::Permission
        } else {
            ErrorKind::Io
        },
        what: "cannot open a packet socket (needs root or CAP_NET_RAW)".into(),
        source,
    })
}

/// The pcap link type for an ARPHRD type captured with `SOCK_RAW`, or `None` when libpcap
/// would fall back to cooked mode.
pub fn link_type_for_hatype(hatype: u16) -> Option<u16> {
    match hatype {
        // ARPHRD_ETHER, ARPHRD_LOOPBACK: Ethernet headers.
        1 | 772 => Some(1),
        // ARPHRD_NONE (tun and similar): raw IP.
        0xfffe => Some(101),
        _ => None,
    }
}

impl Capture {
    /// Opens a capture on `cfg.interface`. The socket receives nothing until
    /// [`set_filter`](Self::set_filter) (or [`start`](Self::start)) binds it.
    pub fn open(cfg: &Config) -> Result<Capture, CaptureError> {
        let name = cfg.interface.clone();
        let err = |kind, what: &str| {
            let name = name.clone();
            let what = what.to_string();
            move |source| CaptureError { interface: name, kind, what, source }
        };
        let is_any = name == "any";
        let (ifindex, cooked, link_type) = if is_any {
            (0, Some(cfg.any_cooked), cfg.any_cooked.link_type())
        } else {
            let info = interface_info(&name)?;
            if info.flags & libc::IFF_UP as u32 == 0 {
                return Err(err(ErrorKind::Io, "the interface is down")(
                    io::Error::from_raw_os_error(libc::ENETDOWN),
                ));
            }
            match link_type_for_hatype(info.hatype) {
                Some(lt) => (info.ifindex, None, lt),
                None => (info.ifindex, Some(Cooked::Sll), Cooked::Sll.link_type()),
            }
        };
        let kind = if cooked.is_some() { packet::SockType::Dgram } else { packet::SockType::Raw };
        let fd = open_packet_socket(&name, kind)?;
        ring::set_version_v3(&fd).map_err(err(ErrorKind::Io, "TPACKET_V3 is not supported"))?;
        let snaplen = if cfg.snaplen == 0 { MAX_SNAPLEN } else { cfg.snaplen.min(MAX_SNAPLEN) };
        // Room for the largest packet and a cooked header.
        let geometry =
            ring::Geometry::new(snaplen as usize + cooked::SLL2_HDR_LEN, cfg.buffer_bytes);
        ring::request(&fd, &geometry, cfg.block_timeout_ms.max(1))
            .map_err(err(ErrorKind::Io, "cannot set up the receive ring (PACKET_RX_RING)"))?;
        let ring = RxRing::map(&fd, &geometry)
            .map_err(err(ErrorKind::Io, "cannot map the receive ring"))?;
        if cfg.direction == Direction::In {
            // Saves copying sent packets at all (Linux 4.20+); the check below stays for older
            // kernels.
            let _ = packet::ignore_outgoing(&fd);
        }
        if cfg.promiscuous && !is_any {
            packet::add_promisc(&fd, ifindex)
                .map_err(err(ErrorKind::Permission, "cannot enter promiscuous mode"))?;
        }
        let lo_ifindex = iface::info("lo").ok().map(|i| i.ifindex);
        let mut cap = Capture {
            fd,
            ring,
            next_block: 0,
            name: name.clone(),
            link_type,
            cooked,
            snaplen,
            direction: cfg.direction,
            lo_ifindex,
            block_timeout_ms: cfg.block_timeout_ms.max(1),
            totals: Stats::default(),
            user_filter: None,
            rejected_in_user_space: 0,
            scratch: Vec::with_capacity(snaplen as usize + 64),
            ifindex,
            fanout: cfg.fanout_group,
            bound: false,
        };
        // Until a filter is set, keep `snaplen` bytes of everything.
        cap.attach(&[Insn::stmt(BPF_RET | BPF_K, snaplen)])
            .map_err(err(ErrorKind::Io, "cannot attach the snapshot-length filter"))?;
        Ok(cap)
    }

    fn attach(&mut self, prog: &[Insn]) -> io::Result<()> {
        socket::attach_filter(&self.fd, prog)
    }

    /// The interface name given.
    pub fn interface(&self) -> &str {
        &self.name
    }

    /// The pcap link type of the frames delivered.
    pub fn link_type(&self) -> u16 {
        self.link_type
    }

    /// The snapshot length.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// The interface index (0 for `any`).
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Sets the filter, compiled for [`link_type`](Self::link_type) with the snapshot length as
    /// its accept value. It goes into the kernel (after libpcap's cooked-header rewriting) when
    /// the kernel takes it; otherwise `user` runs on every packet and the result says why.
    pub fn set_filter(
        &mut self,
        prog: &[Insn],
        user: impl FnOnce() -> UserFilter,
    ) -> Result<Placement, CaptureError> {
        let kernel_prog = match self.cooked {
            Some(c) => cooked::fix_program(prog, c).map_err(|e| e.to_string()),
            None => Ok(prog.to_vec()),
        };
        let refused = match kernel_prog {
            Ok(p) => match self.attach(&p) {
                Ok(()) => None,
                Err(e) if socket::is_filter_rejection(&e) => {
                    Some(format!("the kernel refused the program ({e})"))
                }
                Err(e) => {
                    return Err(CaptureError {
                        interface: self.name.clone(),
                        kind: ErrorKind::Io,
                        what: "cannot attach the filter (SO_ATTACH_FILTER)".into(),
                        source: e,
                    });
                }
            },
            Err(reason) => Some(reason),
        };
        match refused {
            None => {
                self.user_filter = None;
                Ok(Placement::Kernel)
            }
            Some(reason) => {
                // The kernel still cuts packets to the snapshot length.
                let _ = self.attach(&[Insn::stmt(BPF_RET | BPF_K, self.snaplen)]);
                self.user_filter = Some(user());
                Ok(Placement::UserSpace { reason })
            }
        }
    }

    /// Binds the socket to the interface: packets start flowing into the ring.
    pub fn start(&mut self) -> Result<(), CaptureError> {
        if self.bound {
            return Ok(());
        }
        packet::bind(&self.fd, self.ifindex, packet::ETH_P_ALL).map_err(|e| CaptureError {
            interface: self.name.clone(),
            kind: ErrorKind::Io,
            what: "cannot bind the packet socket".into(),
            source: e,
        })?;
        if let Some(group) = self.fanout {
            packet::join_fanout_hash(&self.fd, group).map_err(|e| CaptureError {
                interface: self.name.clone(),
                kind: ErrorKind::Io,
                what: "cannot join the PACKET_FANOUT group".into(),
                source: e,
            })?;
        }
        self.bound = true;
        Ok(())
    }

    /// The counters so far (the kernel's are read, and reset, on each call; this keeps the
    /// totals, as libpcap does).
    pub fn stats(&mut self) -> io::Result<Stats> {
        let st = packet::stats(&self.fd)?;
        // The kernel adds the drops into tp_packets before returning them.
        self.totals.received += u64::from(st.packets);
        self.totals.dropped += u64::from(st.drops);
        Ok(self.totals)
    }

    /// Packets the kernel passed that were then rejected in user space (user filter or
    /// direction).
    pub fn rejected_in_user_space(&self) -> u64 {
        self.rejected_in_user_space
    }

    /// Waits up to `timeout` for a block, then hands every packet of every ready block to `f`
    /// until `f` returns `false`. Returns how many packets were taken from the ring.
    pub fn dispatch(
        &mut self,
        timeout: Duration,
        f: &mut dyn FnMut(&Frame<'_>) -> bool,
    ) -> io::Result<u64> {
        if !self.ring.ready(self.next_block) {
            let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
            if !socket::poll_readable(&self.fd, ms)? {
                return Ok(0);
            }
        }
        let mut taken = 0;
        let mut go_on = true;
        while go_on && self.ring.ready(self.next_block) {
            let b = self.next_block;
            let (n, complete) = self.walk_block(b, f);
            taken += n;
            if complete {
                self.ring.release(b);
                self.next_block = (b + 1) % self.ring.blocks();
            } else {
                go_on = false;
            }
        }
        self.totals.taken += taken;
        Ok(taken)
    }

    /// Stops the flow and takes every packet the kernel has counted as queued: attaches a
    /// filter that rejects everything, reads the final counters, then hands the remaining
    /// packets to `f` (which may stop early by returning `false`). Returns the final counters.
    pub fn drain(&mut self, f: &mut dyn FnMut(&Frame<'_>) -> bool) -> io::Result<Stats> {
        self.attach(&[Insn::stmt(BPF_RET | BPF_K, 0)])?;
        let stats = self.stats()?;
        let queued = stats.received - stats.dropped;
        // The block being filled is handed over when its timeout expires.
        let deadline =
            Instant::now() + Duration::from_millis(u64::from(self.block_timeout_ms) * 3 + 1000);
        let stopped = std::cell::Cell::new(false);
        let mut wrapped = |fr: &Frame<'_>| {
            let go = f(fr);
            if !go {
                stopped.set(true);
            }
            go
        };
        while self.totals.taken < queued && Instant::now() < deadline {
            self.dispatch(Duration::from_millis(u64::from(self.block_timeout_ms)), &mut wrapped)?;
            if stopped.get() {
                break;
            }
        }
        Ok(self.totals)
    }

    /// Walks the packets of ready block `b`; returns (packets taken, whether the block was
    /// finished).
    fn walk_block(&mut self, b: usize, f: &mut dyn FnMut(&Frame<'_>) -> bool) -> (u64, bool) {
        let Capture {
            ring,
            scratch,
            user_filter,
            cooked,
            link_type,
            snaplen,
            direction,
            lo_ifindex,
            rejected_in_user_space,
            ..
        } = self;
        let mut ctx = Delivery {
            scratch,
            user_filter: user_filter.as_mut(),
            cooked: *cooked,
            vlan_offset: cooked::vlan_offset(*link_type),
            snaplen: *snaplen as usize,
            direction: *direction,
            lo_ifindex: *lo_ifindex,
            rejected: rejected_in_user_space,
        };
        let mut taken = 0;
        for p in ring::packets(ring.block(b)) {
            taken += 1;
            if !ctx.deliver(&p, f) {
                return (taken, false);
            }
        }
        (taken, true)
    }
}

/// What delivering one packet needs, borrowed from the capture apart from its ring.
struct Delivery<'c> {
    scratch: &'c mut Vec<u8>,
    user_filter: Option<&'c mut UserFilter>,
    cooked: Option<Cooked>,
    vlan_offset: Option<usize>,
    snaplen: usize,
    direction: Direction,
    lo_ifindex: Option<u32>,
    rejected: &'c mut u64,
}

impl Delivery<'_> {
    /// libpcap's `pcap_handle_packet_mmap`: cooked header, user filter, direction, VLAN tag,
    /// snapshot length. Returns what `f` returns (`true` for packets not delivered).
    fn deliver(&mut self, p: &RingPacket<'_>, f: &mut dyn FnMut(&Frame<'_>) -> bool) -> bool {
        let hdr = &p.header;
        let Some(data) = p.data else {
            *self.rejected += 1;
            return true;
        };
        let vlan = (hdr.status & TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid =
                if hdr.status & TP_STATUS_VLAN_TPID_VALID != 0 { hdr.vlan_tpid } else { 0x8100 };
            (tpid, hdr.vlan_tci as u16)
        });
        let link = hdr.addr;
        let meta = FrameMeta { link, vlan, rxhash: hdr.rxhash };
        // Outgoing packets on the loopback device are seen again as incoming ones.
        let keep_direction = if link.pkttype == packet::PACKET_OUTGOING {
            Some(link.ifindex) != self.lo_ifindex && self.direction != Direction::In
        } else {
            self.direction != Direction::Out
        };
        let mut wire_len = hdr.len;
        let copy = self.cooked.is_some() || (vlan.is_some() && self.vlan_offset.is_some());
        let bytes: &[u8] = if copy {
            self.scratch.clear();
            match self.cooked {
                Some(Cooked::Sll) => {
                    self.scratch.extend_from_slice(&cooked::sll_header(&meta.link))
                }
                Some(Cooked::Sll2) => {
                    self.scratch.extend_from_slice(&cooked::sll2_header(&meta.link))
                }
                None => {}
            }
            wire_len += self.scratch.len() as u32;
            self.scratch.extend_from_slice(data);
            self.scratch
        } else {
            data
        };
        if let Some(filter) = self.user_filter.as_mut()
            && !filter(bytes, wire_len, &meta)
        {
            *self.rejected += 1;
            return true;
        }
        if !keep_direction {
            *self.rejected += 1;
            return true;
        }
        let data: &[u8] = if copy {
            if let (Some((tpid, tci)), Some(at)) = (vlan, self.vlan_offset)
                && cooked::insert_vlan(self.scratch, at, tpid, tci)
            {
                wire_len += 4;
            }
            self.scratch.truncate(self.snaplen);
            self.scratch
        } else {
            &data[..data.len().min(self.snaplen)]
        };
        f(&Frame { secs: u64::from(hdr.sec), nanos: hdr.nsec, wire_len, data, meta: &meta })
    }
}
