//! A veth pair in a private network namespace that tells, frame by frame, what programs
//! attached to one end did: the real receive and transmit paths (native XDP, TC ingress, TC
//! egress) rather than `BPF_PROG_TEST_RUN`.
//!
//! Why it exists: a program that agrees with a model under `BPF_PROG_TEST_RUN` may still
//! behave otherwise when attached (what the driver hands XDP, what TC sees after the receive
//! path removed a VLAN tag, how the qdisc path builds the socket buffer). [`VethPair`] sends
//! each frame through an interface and reports whether it came out the other side.
//!
//! # Namespace and interfaces
//!
//! [`VethPair::new`] starts a thread that moves itself into a new, anonymous network
//! namespace, turns IPv6 off there, creates the pair `sift-tx` / `sift-rx` (one queue each,
//! MTU [`MTU`], GRO off, up, no addresses: the stack never answers), opens the sockets and
//! ends; a descriptor of the namespace is kept. Programs are attached to `rx` by name from
//! inside the namespace: [`VethPair::run_in`] runs a closure on a thread there (an
//! [`Attacher`](crate::attach::Attacher) resolves names in the calling thread's namespace).
//! Dropping the pair closes every descriptor, and the kernel deletes the namespace and both
//! interfaces; nothing is named in `/var/run/netns`.
//!
//! GRO is off on both ends: with it, a TCP segment may be held for coalescing while a later
//! frame is delivered, which would reorder a frame and its sentinel. Native XDP gives `rx` its
//! NAPI receive path by itself.
//!
//! # Directions
//!
//! * [`Way::In`]: the frame is sent into `tx` (straight to the driver), and arrives at `rx`,
//!   where XDP and TC ingress run.
//! * [`Way::Out`]: the frame is sent out of `rx` through the queueing discipline path, so TC
//!   egress runs, and arrives at `tx`. A frame TC egress drops makes the send fail with
//!   `ENOBUFS` (`NET_XMIT_DROP`), which is taken for what it is: the frame did not leave.
//!
//! # Verdicts without timeouts
//!
//! After each frame a *sentinel* follows on the same path: a broadcast frame of the IEEE
//! local-experimental EtherType 0x88b5 carrying a sequence number, which every program must
//! pass. The receiving end has a packet socket bound to the sentinel's EtherType and, opened
//! on demand, one bound to each EtherType the frames arrive with. Such sockets get packets
//! after TC ingress (unlike `ETH_P_ALL` taps, which run before it). The receive path handles
//! one frame at a time on one queue, and a frame's last delivery happens before the next
//! frame's (batched list receive included), so once the sentinel is on its socket the frame
//! is on its own socket or was dropped: the frame passed iff it is there. A sentinel that does
//! not arrive within [`WAIT`] is an error, never a verdict.
//!
//! # What arrives
//!
//! As in [`VethSocketFilter`](crate::VethSocketFilter), the receive path removes the outer
//! 802.1Q/802.1ad tag before the sockets see the frame (and before TC ingress; XDP sees the
//! frame as sent): a frame is compared with its [`kernel_view`]. Frames that cannot be
//! carried are refused with `None`: shorter than an Ethernet header, longer than [`MTU`] plus
//! the header, a tagged frame too short to untag, and a priority-tagged (VLAN 0) frame around
//! another tag (the kernel untags it twice and runs its hooks again).
use crate::veth::ip_tool;
use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use sift_sys::socket::{self, Wait};
use sift_sys::{iface, netns, packet};

use crate::kernel_view;

/// The end frames are sent into.
pub const TX: &str = "sift-tx";
/// The end programs are attached to.
pub const RX: &str = "sift-rx";
/// Both ends' MTU: small enough for native XDP on veth without multi-buffer programs (a page
/// less XDP's headroom and the shared info, less the Ethernet header).
pub const MTU: usize = 3000;
/// The sentinel's EtherType (IEEE 802 local experimental 1).
pub const SENTINEL_TYPE: u16 = 0x88b5;
/// How long a sentinel may take before the pair is declared broken.
pub const WAIT: Duration = Duration::from_secs(5);

const ETH_HLEN: usize = 14;
const BUF: usize = MTU + 64;
/// What a sentinel says after its header, before its sequence number.
const MAGIC: &[u8; 8] = b"siftsent";

/// Where a frame goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Way {
    /// Into `tx`, out of `rx`'s receive path (XDP, TC ingress).
    In,
    /// Out of `rx` through the queueing discipline path (TC egress), into `tx`.
    Out,
}

/// What became of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    /// It arrived on the other side.
    Passed,
    /// A program dropped it.
    Dropped,
}

/// Why the pair could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum PairError {
    /// Namespaces, veth or packet sockets are not available (not root, no `ip`…).
    #[error("veth pair unavailable: {0}")]
    Unavailable(String),
    /// Something else failed while setting up.
    #[error("setting up the veth pair: {0}")]
    Setup(io::Error),
}

/// The packet sockets of one receiving end.
#[derive(Debug)]
struct Receiver {
    ifindex: u32,
    /// Bound to [`SENTINEL_TYPE`].
    sentinel: OwnedFd,
    /// Bound to one EtherType each (`skb->protocol` as the receive path sets it).
    by_type: HashMap<u16, OwnedFd>,
}

/// A veth pair in a private namespace with verdicts per frame (see the module docs).
#[derive(Debug)]
pub struct VethPair {
    ns: OwnedFd,
    tx_index: u32,
    rx_index: u32,
    /// Sends into `tx`, past the qdisc.
    into_tx: OwnedFd,
    /// Sends out of `rx` through the qdisc (TC egress).
    out_of_rx: OwnedFd,
    at_rx: Receiver,
    at_tx: Receiver,
    seq: u64,
    buf: Vec<u8>,
}

/// The EtherType a frame arrives with on the receive path (`skb->protocol` after
/// `eth_type_trans` and the removal of the outer VLAN tag: 802.3 frames are `ETH_P_802_3` (1)
/// when their payload starts with `ffff`, `ETH_P_802_2` (4) otherwise), or `None` when the
/// pair cannot carry the frame (see the module docs).
pub fn arrival_type(frame: &[u8]) -> Option<u16> {
    if frame.len() > MTU + ETH_HLEN {
        return None;
    }
    let view = kernel_view(frame)?;
    let ty = u16::from_be_bytes([view[12], view[13]]);
    let tagged = view.len() != frame.len();
    let is_vlan = |t: u16| t == 0x8100 || t == 0x88a8;
    if tagged && is_vlan(ty) && u16::from_be_bytes([frame[14], frame[15]]) & 0x0fff == 0 {
        return None;
    }
    if ty >= 0x0600 {
        Some(ty)
    } else if view.get(14..16) == Some(&[0xff, 0xff]) {
        Some(0x0001)
    } else {
        Some(0x0004)
    }
}

fn sentinel(seq: u64) -> [u8; 60] {
    let mut f = [0u8; 60];
    f[..6].fill(0xff);
    f[6..12].copy_from_slice(&[0x02, 0, 0x5e, 0x51, 0xf7, 0x01]);
    f[12..14].copy_from_slice(&SENTINEL_TYPE.to_be_bytes());
    f[14..22].copy_from_slice(MAGIC);
    f[22..30].copy_from_slice(&seq.to_be_bytes());
    f
}

/// The sequence number of a sentinel.
fn sentinel_seq(frame: &[u8]) -> Option<u64> {
    (frame.len() == 60 && frame[12..14] == SENTINEL_TYPE.to_be_bytes() && &frame[14..22] == MAGIC)
        .then(|| u64::from_be_bytes(frame[22..30].try_into().unwrap_or_default()))
}

impl VethPair {
    /// Creates the namespace, the pair and the sockets, and waits until sentinels cross in
    /// both directions.
    pub fn new() -> Result<VethPair, PairError> {
        let (ns, tx_index, rx_index) = std::thread::spawn(setup)
            .join()
            .map_err(|_| PairError::Setup(io::Error::other("setup thread panicked")))??;
        let sockets = run_in(&ns, || -> io::Result<_> {
            let into_tx = packet::socket(packet::SockType::Raw, 0)?;
            packet::qdisc_bypass(&into_tx)?;
            let out_of_rx = packet::socket(packet::SockType::Raw, 0)?;
            Ok((into_tx, out_of_rx, receiver(rx_index)?, receiver(tx_index)?))
        })
        .map_err(|e| PairError::Unavailable(format!("packet sockets: {e}")))?;
        let (into_tx, out_of_rx, at_rx, at_tx) = sockets.map_err(PairError::Setup)?;
        let mut pair = VethPair {
            ns,
            tx_index,
            rx_index,
            into_tx,
            out_of_rx,
            at_rx,
            at_tx,
            seq: 0,
            buf: vec![0; BUF],
        };
        pair.warm_up().map_err(PairError::Setup)?;
        Ok(pair)
    }

    /// Sends sentinels each way until one arrives (the pair carries nothing until the link
    /// watcher has activated the queueing disciplines, some time after `up`).
    fn warm_up(&mut self) -> io::Result<()> {
        for way in [Way::In, Way::Out] {
            let mut crossed = false;
            for _ in 0..20 {
                self.seq += 1;
                let (from, to, via) = self.path(way);
                packet::send_to(from, via, &sentinel(self.seq))?;
                if socket::poll_readable(&to.sentinel, 250)? {
                    crossed = true;
                    break;
                }
            }
            if !crossed {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no sentinel crossed the veth pair going {way:?}"),
                ));
            }
            // Let the last probes in flight land, then forget them.
            std::thread::sleep(Duration::from_millis(50));
            let to = match way {
                Way::In => &self.at_rx,
                Way::Out => &self.at_tx,
            };
            while socket::recv(&to.sentinel, &mut self.buf, Wait::Never)?.is_some() {}
        }
        Ok(())
    }

    /// The sending socket, the receiving end and the interface sent through.
    fn path(&self, way: Way) -> (&OwnedFd, &Receiver, u32) {
        match way {
            Way::In => (&self.into_tx, &self.at_rx, self.tx_index),
            Way::Out => (&self.out_of_rx, &self.at_tx, self.rx_index),
        }
    }

    /// The interface index of `rx` (in the pair's namespace).
    pub fn rx_index(&self) -> u32 {
        self.rx_index
    }

    /// The interface index of `tx` (in the pair's namespace).
    pub fn tx_index(&self) -> u32 {
        self.tx_index
    }

    /// Runs `f` on a thread inside the pair's namespace (to attach programs to [`RX`] by name,
    /// or to open sockets there) and returns what it returns; a panic in `f` is resumed here.
    /// `Err` only when the thread could not enter the namespace.
    pub fn run_in<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        run_in(&self.ns, f)
    }

    /// Sends `frame` the `way` given, then its sentinel, and says whether the frame arrived;
    /// `None` when the pair cannot carry it ([`arrival_type`]). An error when the sentinel
    /// does not arrive (a program dropped it, or the pair is broken) or anything arrives that
    /// was not sent.
    pub fn send(&mut self, way: Way, frame: &[u8]) -> io::Result<Option<Fate>> {
        let Some(ty) = arrival_type(frame) else { return Ok(None) };
        let Some(view) = kernel_view(frame) else { return Ok(None) };
        if !self.receiver(way).by_type.contains_key(&ty) && ty != SENTINEL_TYPE {
            let ifindex = self.receiver(way).ifindex;
            let fd = self.run_in(|| bound(ifindex, ty))??;
            self.receiver_mut(way).by_type.insert(ty, fd);
        }
        self.seq += 1;
        let seq = self.seq;
        let (from, _, via) = self.path(way);
        match packet::send_to(from, via, frame) {
            Ok(sent) if sent == frame.len() => {}
            Ok(sent) => {
                return Err(io::Error::other(format!("short send: {sent} of {}", frame.len())));
            }
            // The queueing discipline path reports a drop at TC egress (`NET_XMIT_DROP`) as
            // ENOBUFS; the sentinel still has to cross.
            Err(e) if way == Way::Out && e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) => return Err(e),
        }
        packet::send_to(from, via, &sentinel(seq))?;
        let mut seen = false;
        let rx = match way {
            Way::In => &self.at_rx,
            Way::Out => &self.at_tx,
        };
        loop {
            let Some(n) = socket::recv(&rx.sentinel, &mut self.buf, Wait::UntilTimeout)? else {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "sentinel {seq} did not arrive going {way:?} within {WAIT:?} (a program \
                         dropped it, or the pair is broken)"
                    ),
                ));
            };
            let got = &self.buf[..n];
            match sentinel_seq(got) {
                Some(s) if s == seq => break,
                Some(s) if s < seq => continue,
                _ if ty == SENTINEL_TYPE && !seen && got == &view[..] => seen = true,
                _ => {
                    return Err(io::Error::other(format!(
                        "going {way:?}: a {n}-byte frame arrived that is neither the frame sent \
                         nor its sentinel"
                    )));
                }
            }
        }
        if ty != SENTINEL_TYPE {
            let fd = &rx.by_type[&ty];
            if let Some(n) = socket::recv(fd, &mut self.buf, Wait::Never)? {
                if self.buf[..n] != view[..] {
                    return Err(io::Error::other(format!(
                        "going {way:?}: a {n}-byte frame arrived that is not the {}-byte frame \
                         sent",
                        view.len()
                    )));
                }
                if socket::recv(fd, &mut self.buf, Wait::Never)?.is_some() {
                    return Err(io::Error::other(format!("going {way:?}: a frame arrived twice")));
                }
                seen = true;
            }
        }
        Ok(Some(if seen { Fate::Passed } else { Fate::Dropped }))
    }

    fn receiver(&self, way: Way) -> &Receiver {
        self.path(way).1
    }

    fn receiver_mut(&mut self, way: Way) -> &mut Receiver {
        match way {
            Way::In => &mut self.at_rx,
            Way::Out => &mut self.at_tx,
        }
    }
}

fn run_in<T: Send>(ns: &OwnedFd, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            netns::enter(ns)?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// A packet socket on `ifindex` for frames arriving with EtherType `ty` (made in the pair's
/// namespace).
fn bound(ifindex: u32, ty: u16) -> io::Result<OwnedFd> {
    let fd = packet::socket(packet::SockType::Raw, 0)?;
    packet::ignore_outgoing(&fd)?;
    socket::set_receive_buffer(&fd, 1 << 20)?;
    packet::bind(&fd, ifindex, ty)?;
    Ok(fd)
}

fn receiver(ifindex: u32) -> io::Result<Receiver> {
    let sentinel = bound(ifindex, SENTINEL_TYPE)?;
    socket::set_receive_timeout(&sentinel, WAIT)?;
    Ok(Receiver { ifindex, sentinel, by_type: HashMap::new() })
}

fn ip(tool: &PathBuf, args: &[&str]) -> Result<(), PairError> {
    crate::veth::run_ip(tool, args).map_err(PairError::Unavailable)
}

/// Runs on a thread of its own, which moves into the new namespace: returns the namespace and
/// the interfaces' indexes.
fn setup() -> Result<(OwnedFd, u32, u32), PairError> {
    let tool = ip_tool().ok_or_else(|| PairError::Unavailable("`ip` not found".into()))?;
    netns::unshare_net()
        .map_err(|e| PairError::Unavailable(format!("unshare(CLONE_NEWNET): {e}")))?;
    let ns = netns::current().map_err(PairError::Setup)?;
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, "1")
                .map_err(|e| PairError::Unavailable(format!("writing {path}: {e}")))?;
        }
    }
    let q = ["numtxqueues", "1", "numrxqueues", "1"];
    let mut add = vec!["link", "add", TX];
    add.extend(q);
    add.extend(["type", "veth", "peer", "name", RX]);
    add.extend(q);
    ip(&tool, &add)?;
    let mtu = MTU.to_string();
    for dev in [TX, RX] {
        iface::set_gro(dev, false).map_err(PairError::Setup)?;
        ip(&tool, &["link", "set", dev, "mtu", &mtu, "up"])?;
    }
    let tx = iface::index_of(TX).map_err(PairError::Setup)?;
    let rx = iface::index_of(RX).map_err(PairError::Setup)?;
    Ok((ns, tx, rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_types() {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(arrival_type(&f), Some(0x0800));
        f[12..14].copy_from_slice(&[0x00, 0x40]);
        assert_eq!(arrival_type(&f), Some(0x0004), "802.3 with LLC");
        f[14..16].copy_from_slice(&[0xff, 0xff]);
        assert_eq!(arrival_type(&f), Some(0x0001), "raw 802.3");
        // 802.1Q, VLAN 10, around IPv6.
        f[12..18].copy_from_slice(&[0x81, 0x00, 0, 10, 0x86, 0xdd]);
        assert_eq!(arrival_type(&f), Some(0x86dd));
        // 802.1ad around 802.1Q: the outer tag goes, the inner one stays.
        f[12..18].copy_from_slice(&[0x88, 0xa8, 0, 20, 0x81, 0x00]);
        assert_eq!(arrival_type(&f), Some(0x8100));
        // VLAN 0 around a tag: untagged twice by the kernel, refused.
        f[12..18].copy_from_slice(&[0x88, 0xa8, 0, 0, 0x81, 0x00]);
        assert_eq!(arrival_type(&f), None);
        assert_eq!(arrival_type(&f[..13]), None);
        assert_eq!(arrival_type(&vec![0; MTU + ETH_HLEN + 1]), None);
        assert_eq!(sentinel_seq(&sentinel(77)), Some(77));
        assert_eq!(arrival_type(&sentinel(1)), Some(SENTINEL_TYPE));
    }
}

/// The pair with programs attached (root: SKIP otherwise).
#[cfg(test)]
mod attached {
    use std::os::fd::OwnedFd;
    use std::path::PathBuf;

    use sift_ebpf::{EbpfProgram, asm, encode_program};

    use super::*;
    use crate::attach::{Attacher, Hook, XdpMode, load};

    const NATIVE: Hook = Hook::Xdp { mode: XdpMode::Native };

    /// A program for `hook` that passes sentinels and returns `ret` for everything else.
    fn prog(hook: Hook, ret: i32) -> OwnedFd {
        let (data, data_end, pass) = match hook {
            Hook::Xdp { .. } => (0, 4, 2),
            Hook::TcIngress | Hook::TcEgress => (76, 80, 0),
        };
        // The EtherType read little-endian: 0x88b5 is 0xb588.
        let text = format!(
            "
            ldxw %r2, [%r1+{data}]
            ldxw %r3, [%r1+{data_end}]
            mov %r4, %r2
            add %r4, 14
            jgt %r4, %r3, other
            ldxh %r4, [%r2+12]
            jeq %r4, {sentinel}, sentinel
            other:
            mov %r0, {ret}
            exit
            sentinel:
            mov %r0, {pass}
            exit
            ",
            sentinel = SENTINEL_TYPE.swap_bytes()
        );
        let insns = asm::assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        load(&EbpfProgram { insns: encode_program(&insns) }, hook, "sift_pair_test").unwrap()
    }

    /// Frames of every shape the pair carries: IPv4, IPv6, ARP, 802.3 with LLC and raw,
    /// 802.1Q, 802.1ad around 802.1Q, the longest, the shortest.
    fn frames() -> Vec<Vec<u8>> {
        let frame = |ty: &[u8], len: usize| {
            let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
            f.extend_from_slice(ty);
            f.resize(len, 0x5a);
            f
        };
        vec![
            frame(&[0x08, 0x00, 0x45], 60),
            frame(&[0x86, 0xdd, 0x60], 94),
            frame(&[0x08, 0x06], 42),
            frame(&[0x00, 0x30, 0x42, 0x42, 0x03], 62),
            frame(&[0x00, 0x30, 0xff, 0xff], 62),
            frame(&[0x81, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x45], 64),
            frame(&[0x88, 0xa8, 0x00, 0x14, 0x81, 0x00, 0x00, 0x0a, 0x08, 0x00], 68),
            frame(&[0x08, 0x00, 0x45], MTU + ETH_HLEN),
            frame(&[0x08, 0x00], 14),
        ]
    }

    static NEXT_ROOT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    struct Root(PathBuf);

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn pair() -> Option<(VethPair, Attacher, Root)> {
        if !sift_testkit::is_root() {
            return sift_testkit::oracle_missing("veth pair", "not root");
        }
        let pair = sift_testkit::oracle("veth pair in a private namespace", VethPair::new())?;
        sift_sys::bpf::mount_bpffs(std::path::Path::new(crate::attach::BPFFS)).unwrap();
        let root = PathBuf::from(format!(
            "/sys/fs/bpf/sift-pair-test-{}-{}",
            std::process::id(),
            NEXT_ROOT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        Some((pair, Attacher::with_root(&root), Root(root)))
    }

    fn fates(pair: &mut VethPair, way: Way) -> Vec<Fate> {
        frames()
            .iter()
            .map(|f| {
                let what =
                    format!("{way:?}: {}-byte frame {:02x?}", f.len(), &f[12..f.len().min(20)]);
                pair.send(way, f).expect(&what).expect(&what)
            })
            .collect()
    }

    fn all(fate: Fate) -> Vec<Fate> {
        vec![fate; frames().len()]
    }

    #[test]
    fn without_programs_every_frame_arrives() {
        let Some((mut pair, _, _root)) = pair() else { return };
        assert_eq!(fates(&mut pair, Way::In), all(Fate::Passed));
        assert_eq!(fates(&mut pair, Way::Out), all(Fate::Passed));
        assert_eq!(pair.send(Way::In, &[0; 13]).unwrap(), None);
        // A frame of the sentinel's EtherType that is not a sentinel.
        let mut f = sentinel(0);
        f[14] = b'x';
        assert_eq!(pair.send(Way::In, &f).unwrap(), Some(Fate::Passed));
        assert_eq!(pair.send(Way::Out, &f).unwrap(), Some(Fate::Passed));
    }

    #[test]
    fn xdp_and_tc_egress_drop_and_pass() {
        let Some((mut pair, attacher, _root)) = pair() else { return };
        let drop_in = prog(NATIVE, 1);
        pair.run_in(|| attacher.attach(RX, NATIVE, &drop_in)).unwrap().unwrap();
        assert_eq!(fates(&mut pair, Way::In), all(Fate::Dropped), "xdp drop");
        assert_eq!(fates(&mut pair, Way::Out), all(Fate::Passed), "nothing at tc egress");
        let drop_out = prog(Hook::TcEgress, 2);
        pair.run_in(|| attacher.attach(RX, Hook::TcEgress, &drop_out)).unwrap().unwrap();
        assert_eq!(fates(&mut pair, Way::Out), all(Fate::Dropped), "tc egress drop");
        let pass_in = prog(NATIVE, 2);
        pair.run_in(|| attacher.replace(RX, NATIVE, &pass_in)).unwrap().unwrap();
        assert_eq!(fates(&mut pair, Way::In), all(Fate::Passed), "xdp pass");
        let pass_out = prog(Hook::TcEgress, 0);
        pair.run_in(|| attacher.replace(RX, Hook::TcEgress, &pass_out)).unwrap().unwrap();
        assert_eq!(fates(&mut pair, Way::Out), all(Fate::Passed), "tc egress pass");
    }

    #[test]
    fn tc_ingress_drops_after_the_taps() {
        let Some((mut pair, attacher, _root)) = pair() else { return };
        let drop_in = prog(Hook::TcIngress, 2);
        pair.run_in(|| attacher.attach(RX, Hook::TcIngress, &drop_in)).unwrap().unwrap();
        assert_eq!(fates(&mut pair, Way::In), all(Fate::Dropped), "tc ingress drop");
        assert_eq!(fates(&mut pair, Way::Out), all(Fate::Passed));
    }
}
