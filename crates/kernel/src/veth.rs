//! The kernel's socket filter on a real receive path: a classic program attached with
//! `SO_ATTACH_FILTER` to an `AF_PACKET` socket on one end of a veth pair, in a private network
//! namespace, with each capture frame written into the other end.
//!
//! This is what a capture filter does in production (libpcap attaches the same way), so it
//! checks the kernel's classic checker, its cBPF → eBPF conversion and its JIT together, on skbs
//! built by the real receive path.
//!
//! # Namespace and interfaces
//!
//! [`VethSocketFilter::new`] starts a thread that moves itself into a new, anonymous network
//! namespace (`unshare(CLONE_NEWNET)`), disables IPv6 there (so the kernel sends no router
//! solicitations or DAD probes), creates the veth pair with `ip link` (single queue, MTU 65535,
//! up; `ip` runs in the thread's namespace), opens the sockets and ends. The sockets keep the
//! namespace alive; when the engine is dropped they are closed, and the kernel deletes the
//! namespace and both interfaces. Nothing is named in `/var/run/netns`, so there is nothing to
//! clean up by hand, nothing to collide with, and nothing left behind if the process dies.
//!
//! # Per-packet verdicts
//!
//! Two packet sockets are bound to the receiving end `rx`: a *monitor* without a filter and,
//! bound after it, the *filtered* socket. The kernel puts a newly bound tap at the head of the
//! interface's list and hands each packet to all taps in order within one softirq pass, so by
//! the time the monitor has the packet the filtered socket has run its filter on it. For each
//! frame: send it into `tx`, wait (at most a second) for it on the monitor, check that the
//! monitor got what was sent (anything else is an error, never a silent mismatch), then read
//! the filtered socket without blocking: a packet there is the verdict (its length), nothing
//! means the filter returned 0. Both sockets ignore outgoing packets.
//!
//! # What the filter sees
//!
//! Frames must be Ethernet (`DLT_EN10MB`), at least 14 bytes (a shorter frame is refused by
//! `AF_PACKET`) and at most [`MAX_FRAME`] (the largest veth MTU plus the header). The receive path removes the outer 802.1Q/802.1ad tag before any tap sees the
//! frame (`skb_vlan_untag`; a VLAN frame shorter than 20 bytes is dropped there), so the filter
//! runs on the frame *without* that tag: [`kernel_view`] gives those bytes. `len` is the
//! length of that view (only captured bytes are sent: a frame cut short by the capture's
//! snapshot length is a shorter frame on the veth pair). The delivered length is
//! `min(return value, view length)`.
use std::borrow::Cow;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use sift_insn::Insn;
use sift_sys::socket::{self, Wait};
use sift_sys::{iface, netns, packet};

/// Interface names inside the private namespace (nothing else lives there).
const TX: &str = "sift-tx";
const RX: &str = "sift-rx";
/// How long to wait for a frame on the monitor before declaring it lost.
const WAIT: Duration = Duration::from_secs(1);
/// Receive buffer: larger than any frame the veth pair carries (MTU 65535 + header).
const BUF: usize = 70_000;
/// The shortest frame `AF_PACKET` sends on an Ethernet device.
const ETH_HLEN: usize = 14;
/// The longest frame the pair carries (MTU 65535 plus the Ethernet header).
pub const MAX_FRAME: usize = 65535 + ETH_HLEN;

/// Why the veth engine could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum VethError {
    /// Namespaces, veth or packet sockets are not available (not root, no `ip`…).
    #[error("kernel veth engine unavailable: {0}")]
    Unavailable(String),
    /// The kernel refused the classic program (`SO_ATTACH_FILTER`).
    #[error("the kernel rejected the classic program: {0}")]
    Rejected(io::Error),
    /// Something else failed while setting up.
    #[error("setting up the veth engine: {0}")]
    Setup(io::Error),
}

/// A classic program attached to an `AF_PACKET` socket on a veth pair in a private namespace.
#[derive(Debug)]
pub struct VethSocketFilter {
    sender: OwnedFd,
    monitor: OwnedFd,
    filtered: OwnedFd,
    tx_index: u32,
    buf: Vec<u8>,
    filtered_buf: Vec<u8>,
}

struct Sockets {
    sender: OwnedFd,
    monitor: OwnedFd,
    filtered: OwnedFd,
    tx_index: u32,
}

/// The bytes the kernel's socket filter sees for `frame` on the veth receive path: the frame
/// with its outer VLAN tag removed (when its EtherType is 0x8100 or 0x88a8), or `None` when the
/// engine cannot deliver it (shorter than an Ethernet header, longer than [`MAX_FRAME`], or a
/// VLAN frame too short for the kernel to untag).
pub fn kernel_view(frame: &[u8]) -> Option<Cow<'_, [u8]>> {
    if frame.len() < ETH_HLEN || frame.len() > MAX_FRAME {
        return None;
    }
    match [frame[12], frame[13]] {
        [0x81, 0x00] | [0x88, 0xa8] => {
            // skb_vlan_untag pulls the tag and the two bytes after it.
            if frame.len() < ETH_HLEN + 6 {
                return None;
            }
            let mut v = Vec::with_capacity(frame.len() - 4);
            v.extend_from_slice(&frame[..12]);
            v.extend_from_slice(&frame[16..]);
            Some(Cow::Owned(v))
        }
        _ => Some(Cow::Borrowed(frame)),
    }
}

impl VethSocketFilter {
    /// Sets up the namespace, the veth pair and the sockets, and attaches `prog`.
    pub fn new(prog: &[Insn]) -> Result<VethSocketFilter, VethError> {
        let prog = prog.to_vec();
        let s = std::thread::spawn(move || setup(&prog))
            .join()
            .map_err(|_| VethError::Setup(io::Error::other("setup thread panicked")))??;
        let mut engine = VethSocketFilter {
            sender: s.sender,
            monitor: s.monitor,
            filtered: s.filtered,
            tx_index: s.tx_index,
            buf: vec![0; BUF],
            filtered_buf: vec![0; BUF],
        };
        engine.warm_up().map_err(VethError::Setup)?;
        Ok(engine)
    }

    /// Sends probe frames until one arrives (the pair may need a moment after coming up), then
    /// empties the filtered socket.
    fn warm_up(&mut self) -> io::Result<()> {
        // Broadcast, EtherType 0x88b5 (IEEE local experimental).
        let mut probe = [0u8; 60];
        probe[..6].fill(0xff);
        probe[6..12].copy_from_slice(&[0x02, 0, 0x5e, 0x51, 0xf7, 0x01]);
        probe[12..14].copy_from_slice(&[0x88, 0xb5]);
        for _ in 0..5 {
            packet::send_to(&self.sender, self.tx_index, &probe)?;
            if let Some(n) = socket::recv(&self.monitor, &mut self.buf, Wait::UntilTimeout)?
                && self.buf[..n] == probe
            {
                while socket::recv(&self.filtered, &mut self.filtered_buf, Wait::Never)?.is_some() {
                }
                return Ok(());
            }
        }
        Err(io::Error::new(io::ErrorKind::TimedOut, "no probe frame crossed the veth pair"))
    }

    /// Replaces the attached program. On error the previous one stays attached.
    pub fn set_filter(&mut self, prog: &[Insn]) -> io::Result<()> {
        socket::attach_filter(&self.filtered, prog)
    }

    /// Sends one frame and reports what the filter did: `Some(n)` with the number of bytes
    /// delivered (0: the filter dropped it), or `None` when the frame cannot be sent (see
    /// [`kernel_view`]).
    pub fn run(&mut self, frame: &[u8]) -> io::Result<Option<u32>> {
        let Some(view) = kernel_view(frame) else { return Ok(None) };
        let sent = packet::send_to(&self.sender, self.tx_index, frame)?;
        if sent != frame.len() {
            return Err(io::Error::other(format!("short send: {sent} of {}", frame.len())));
        }
        let Some(n) = socket::recv(&self.monitor, &mut self.buf, Wait::UntilTimeout)? else {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("a {}-byte frame never arrived on the receiving end", frame.len()),
            ));
        };
        if self.buf[..n] != view[..] {
            return Err(io::Error::other(format!(
                "the receiving end got a {n}-byte frame that is not the {}-byte frame sent",
                view.len()
            )));
        }
        let got = socket::recv(&self.filtered, &mut self.filtered_buf, Wait::Never)?;
        match got {
            None => Ok(Some(0)),
            Some(m) if self.filtered_buf[..m] == view[..m] => {
                // Exactly one verdict per frame: anything more queued is out of step.
                if socket::recv(&self.filtered, &mut self.filtered_buf, Wait::Never)?.is_some() {
                    return Err(io::Error::other("the filtered socket is out of step"));
                }
                Ok(Some(m as u32))
            }
            Some(m) => Err(io::Error::other(format!(
                "the filtered socket got {m} bytes that are not a prefix of the frame sent"
            ))),
        }
    }

    /// [`VethSocketFilter::run`] over many frames.
    pub fn run_batch<'a>(
        &mut self,
        frames: impl IntoIterator<Item = &'a [u8]>,
    ) -> io::Result<Vec<Option<u32>>> {
        frames.into_iter().map(|f| self.run(f)).collect()
    }
}

/// Where `ip` (iproute2) is: the `PATH`, then the usual system directories (a test
/// harness's `PATH` may lack `/sbin`).
pub(crate) fn ip_tool() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin"), PathBuf::from("/usr/bin")])
        .map(|d| d.join("ip"))
        .find(|p| p.is_file())
}

/// Runs `ip ARGS`; its complaint when it fails.
pub(crate) fn run_ip(tool: &PathBuf, args: &[&str]) -> Result<(), String> {
    let out = Command::new(tool).args(args).output().map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn ip(tool: &PathBuf, args: &[&str]) -> Result<(), VethError> {
    run_ip(tool, args).map_err(VethError::Unavailable)
}

/// Runs on a thread of its own: that thread's namespace becomes the private one.
fn setup(prog: &[Insn]) -> Result<Sockets, VethError> {
    let tool = ip_tool().ok_or_else(|| VethError::Unavailable("`ip` not found".into()))?;
    netns::unshare_net()
        .map_err(|e| VethError::Unavailable(format!("unshare(CLONE_NEWNET): {e}")))?;
    // /proc/sys/net is resolved in the calling thread's namespace.
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        // No IPv6 in the kernel at all is as good as disabled.
        if std::path::Path::new(&path).exists() {
            // Without this the kernel's own IPv6 traffic would mix in: refuse rather than guess.
            std::fs::write(&path, "1")
                .map_err(|e| VethError::Unavailable(format!("writing {path}: {e}")))?;
        }
    }
    let q = ["numtxqueues", "1", "numrxqueues", "1"];
    let mut add = vec!["link", "add", TX];
    add.extend(q);
    add.extend(["type", "veth", "peer", "name", RX]);
    add.extend(q);
    ip(&tool, &add)?;
    for dev in [TX, RX] {
        ip(&tool, &["link", "set", dev, "mtu", "65535", "up"])?;
    }
    let tx_index = iface::index_of(TX).map_err(VethError::Setup)?;
    let rx_index = iface::index_of(RX).map_err(VethError::Setup)?;

    let sender = packet::socket(packet::SockType::Raw, 0)
        .map_err(|e| VethError::Unavailable(e.to_string()))?;
    // Until the link watcher activates the interface's queueing discipline (asynchronously,
    // up to a second after `up`), frames sent through it vanish; going straight to the driver
    // avoids that.
    packet::qdisc_bypass(&sender).map_err(VethError::Setup)?;
    let monitor = packet::socket(packet::SockType::Raw, 0).map_err(VethError::Setup)?;
    packet::ignore_outgoing(&monitor).map_err(VethError::Setup)?;
    socket::set_receive_timeout(&monitor, WAIT).map_err(VethError::Setup)?;
    packet::bind(&monitor, rx_index, packet::ETH_P_ALL).map_err(VethError::Setup)?;
    let filtered = packet::socket(packet::SockType::Raw, 0).map_err(VethError::Setup)?;
    packet::ignore_outgoing(&filtered).map_err(VethError::Setup)?;
    socket::attach_filter(&filtered, prog).map_err(|e| {
        if socket::is_filter_rejection(&e) { VethError::Rejected(e) } else { VethError::Setup(e) }
    })?;
    // Bound last: the newest tap is first in the interface's list (see the module docs).
    packet::bind(&filtered, rx_index, packet::ETH_P_ALL).map_err(VethError::Setup)?;
    Ok(Sockets { sender, monitor, filtered, tx_index })
}
