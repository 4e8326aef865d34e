//! A port: an interface and its `AF_XDP` sockets, one per receive queue, each with a UMEM, a
//! free-frame pool and its four rings; and what one queue's socket does per batch (receive,
//! refill FILL, enqueue on TX, kick, reap COMPLETION).
//!
//! Every queue's socket has a UMEM of its own (the seed's lock-free design: one thread owns a
//! queue, its frames and its pool). A frame moves between five owners: the pool, the kernel
//! (on FILL, then on RX once filled), the batch being processed, and the kernel again (on TX
//! until it comes back on COMPLETION). [`Xsk::refill`] keeps FILL topped up from the pool but
//! leaves a reserve of free frames for copies that other ports transmit through this one.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sift_kernel::attach::XdpMode;
use sift_sys::xsk::{
    self, Bind, CompRing, Desc, FillRing, RingKind, RxRing, TxRing, Umem, XDP_PACKET_HEADROOM,
};

use crate::pool::{Pool, PoolKind, PtrStack};
use crate::program::XdpProgram;
use crate::{Error, MetaMode};

/// Copy or zero-copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BindMode {
    /// Zero-copy when the driver has it, else copy (what was used is in [`PortInfo::mode`]).
    #[default]
    Auto,
    /// The kernel copies each frame into the UMEM (`XDP_COPY`): any driver with XDP.
    Copy,
    /// The driver receives into the UMEM itself (`XDP_ZEROCOPY`);
    /// [`Error::ZeroCopyUnsupported`] when it cannot (veth).
    ZeroCopy,
}

/// The mode a socket was bound in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// Copy mode.
    Copy,
    /// Zero-copy mode.
    ZeroCopy,
}

/// The sizes of a socket's four rings (powers of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingSizes {
    /// Received frames.
    pub rx: u32,
    /// Frames to send.
    pub tx: u32,
    /// Empty frames for the kernel.
    pub fill: u32,
    /// Sent frames coming back.
    pub completion: u32,
}

impl Default for RingSizes {
    /// 2,048 entries each (libxdp's default).
    fn default() -> Self {
        RingSizes { rx: 2048, tx: 2048, fill: 2048, completion: 2048 }
    }
}

/// The largest ring accepted (the kernel's rings are allocated as one block of pages).
pub const MAX_RING: u32 = 1 << 16;

/// How to open a port: the interface, its queues, the sockets' settings and the XDP program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// The interface's name (in the namespace of the thread that starts the datapath).
    pub iface: String,
    /// The receive queues to bind (`None`: all of them).
    pub queues: Option<Vec<u32>>,
    /// Copy or zero-copy.
    pub bind: BindMode,
    /// Whether the sockets use need-wakeup (`XDP_USE_NEED_WAKEUP`): system calls only when
    /// the kernel asks for them.
    pub need_wakeup: bool,
    /// Ring sizes.
    pub rings: RingSizes,
    /// Frames in each queue's UMEM.
    pub frames: u32,
    /// The size of a frame (a power of two from 2,048 to the page size).
    pub frame_size: u32,
    /// The XDP program redirecting into the sockets.
    pub program: XdpProgram,
    /// Native (in the driver) or generic XDP.
    pub xdp_mode: XdpMode,
}

impl PortConfig {
    /// Every queue of `iface`, zero-copy when possible, need-wakeup on, rings of 2,048,
    /// 4,096 frames of 4,096 bytes per queue, sift's redirect program (dropping frames of
    /// queues without a socket) in native mode.
    pub fn new(iface: impl Into<String>) -> PortConfig {
        PortConfig {
            iface: iface.into(),
            queues: None,
            bind: BindMode::Auto,
            need_wakeup: true,
            rings: RingSizes::default(),
            frames: 4096,
            frame_size: 4096,
            program: XdpProgram::default(),
            xdp_mode: XdpMode::Native,
        }
    }
}

/// What a port was opened as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// The interface.
    pub iface: String,
    /// Its index.
    pub ifindex: u32,
    /// The queues bound.
    pub queues: Vec<u32>,
    /// The mode the sockets were bound in.
    pub mode: Bound,
}

/// Counters of one queue's socket, written by its thread alone (plain loads and stores, no
/// locked instructions) and read by anyone.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub rx_packets: AtomicU64,
    pub rx_bytes: AtomicU64,
    pub tx_packets: AtomicU64,
    pub tx_bytes: AtomicU64,
    pub tx_completed: AtomicU64,
    pub drop_pipeline: AtomicU64,
    pub drop_no_port: AtomicU64,
    pub drop_no_frame: AtomicU64,
    pub drop_too_long: AtomicU64,
    pub drop_tx_full: AtomicU64,
    pub kicks: AtomicU64,
    pub wakeups: AtomicU64,
}

/// Adds `n` to a counter only one thread writes.
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    if n != 0 {
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

/// One queue's socket with everything it owns.
#[derive(Debug)]
pub(crate) struct Xsk {
    pub queue: u32,
    fd: Arc<OwnedFd>,
    pub umem: Umem,
    fill: FillRing,
    comp: CompRing,
    rx: RxRing,
    tx: TxRing,
    pub pool: Pool,
    need_wakeup: bool,
    /// The UMEM headroom asked for (in front of the kernel's 256 bytes).
    umem_headroom: u32,
    /// Frames refill leaves in the pool for copies transmitted through this socket.
    reserve: usize,
    /// Entries submitted to TX and not completed yet.
    pub outstanding: u32,
    /// Entries submitted to TX since the last kick.
    pub unkicked: u32,
    pub counters: Arc<Counters>,
}

/// The number of receive queues of interface `iface`: what `ethtool -l` says, else sysfs
/// (`/sys/class/net/IFACE/queues/rx-*`, which shows the namespace sysfs was mounted in), else 1.
pub(crate) fn rx_queues(iface: &str) -> u32 {
    if let Ok(n) = sift_sys::iface::rx_queues(iface)
        && n > 0
    {
        return n;
    }
    let dir = format!("/sys/class/net/{iface}/queues");
    let Ok(entries) = std::fs::read_dir(dir) else { return 1 };
    let n = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("rx-")))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX).max(1)
}

/// How long `bind` is retried while the queue is busy: the kernel lets go of a closed socket's
/// queue in a work item, a moment after the close (a datapath started right after another
/// stopped would otherwise fail).
const BUSY_RETRY: Duration = Duration::from_millis(500);

/// [`xsk::bind`], retried on `EBUSY` for [`BUSY_RETRY`].
fn bind(fd: &OwnedFd, at: &Bind<'_>) -> std::io::Result<()> {
    let start = Instant::now();
    loop {
        match xsk::bind(fd, at) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && start.elapsed() < BUSY_RETRY => {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// Checks the settings that do not need the kernel.
pub(crate) fn check_config(cfg: &PortConfig) -> Result<(), Error> {
    let r = &cfg.rings;
    for (ring, size) in [
        (RingKind::Rx, r.rx),
        (RingKind::Tx, r.tx),
        (RingKind::Fill, r.fill),
        (RingKind::Completion, r.completion),
    ] {
        if !size.is_power_of_two() || size > MAX_RING {
            return Err(Error::RingSize {
                iface: cfg.iface.clone(),
                ring: ring.name(),
                size,
                max: MAX_RING,
            });
        }
    }
    if !cfg.frame_size.is_power_of_two() || cfg.frame_size < xsk::MIN_FRAME_SIZE {
        return Err(Error::Config {
            what: format!(
                "{}: frame size {}: must be a power of two of at least {} bytes",
                cfg.iface,
                cfg.frame_size,
                xsk::MIN_FRAME_SIZE
            ),
        });
    }
    if cfg.frames < 2 * r.fill.max(r.tx) || cfg.frames > 1 << 20 {
        return Err(Error::Config {
            what: format!(
                "{}: {} frames per queue: at least twice the larger of the FILL and TX rings ({}), \
                 at most 1,048,576",
                cfg.iface,
                cfg.frames,
                2 * r.fill.max(r.tx)
            ),
        });
    }
    Ok(())
}

impl Xsk {
    /// Opens queue `queue` of `cfg.iface` (index `ifindex`): socket, UMEM, rings, bind; FILL
    /// filled. `Auto` tries zero-copy on a first socket and falls back to copy on a second.
    pub(crate) fn open(
        cfg: &PortConfig,
        ifindex: u32,
        queue: u32,
        pool: PoolKind,
        meta: MetaMode,
        shared: Option<(Arc<Mutex<Vec<PtrStack>>>, usize)>,
    ) -> Result<(Xsk, Bound), Error> {
        let (flags, bound) = match cfg.bind {
            BindMode::Copy => (xsk::XDP_COPY, Bound::Copy),
            BindMode::ZeroCopy | BindMode::Auto => (xsk::XDP_ZEROCOPY, Bound::ZeroCopy),
        };
        match Xsk::open_as(cfg, ifindex, queue, flags, pool, meta, shared.clone()) {
            Ok(x) => Ok((x, bound)),
            Err(Error::Socket { what: "bind", source, .. })
                if source.raw_os_error() == Some(libc::EOPNOTSUPP)
                    && cfg.bind != BindMode::Copy =>
            {
                if cfg.bind == BindMode::ZeroCopy {
                    return Err(Error::ZeroCopyUnsupported { iface: cfg.iface.clone(), queue });
                }
                let x = Xsk::open_as(cfg, ifindex, queue, xsk::XDP_COPY, pool, meta, shared)?;
                Ok((x, Bound::Copy))
            }
            Err(e) => Err(e),
        }
    }

    fn open_as(
        cfg: &PortConfig,
        ifindex: u32,
        queue: u32,
        mut flags: u16,
        pool: PoolKind,
        meta: MetaMode,
        shared: Option<(Arc<Mutex<Vec<PtrStack>>>, usize)>,
    ) -> Result<Xsk, Error> {
        let err = |what: &'static str| {
            let iface = cfg.iface.clone();
            move |source| Error::Socket { iface, queue, what, source }
        };
        let fd = xsk::socket().map_err(err("socket"))?;
        let umem = Umem::new(cfg.frames, cfg.frame_size).map_err(err("UMEM"))?;
        let umem_headroom = meta.umem_headroom();
        xsk::register_umem(&fd, &umem, umem_headroom).map_err(err("XDP_UMEM_REG"))?;
        let r = cfg.rings;
        for (kind, size) in [
            (RingKind::Rx, r.rx),
            (RingKind::Tx, r.tx),
            (RingKind::Fill, r.fill),
            (RingKind::Completion, r.completion),
        ] {
            xsk::set_ring_size(&fd, kind, size).map_err(err("ring sizes"))?;
        }
        let off = xsk::mmap_offsets(&fd).map_err(err("XDP_MMAP_OFFSETS"))?;
        let mut fill = FillRing::map(&fd, r.fill, &off).map_err(err("mmap FILL"))?;
        let comp = CompRing::map(&fd, r.completion, &off).map_err(err("mmap COMPLETION"))?;
        let rx = RxRing::map(&fd, r.rx, &off).map_err(err("mmap RX"))?;
        let tx = TxRing::map(&fd, r.tx, &off).map_err(err("mmap TX"))?;
        if cfg.need_wakeup {
            flags |= xsk::XDP_USE_NEED_WAKEUP;
        }
        bind(&fd, &Bind { ifindex, queue, flags, shared_umem: None }).map_err(err("bind"))?;
        // Every frame to the pool, then FILL topped up from it (the frames the kernel may
        // write are the ones it has; it has none before bind).
        let frames = cfg.frames as usize;
        let mut pool = Pool::new(pool, frames, cfg.frame_size, shared);
        let all: Vec<u64> =
            (0..u64::from(cfg.frames)).map(|i| i * u64::from(cfg.frame_size)).collect();
        pool.put(&all);
        // Fewer than all frames go to FILL: a quarter stays for transmitted copies.
        let reserve = frames / 4;
        let mut scratch = vec![0u64; r.fill as usize];
        let n = pool.get(&mut scratch[..(frames - reserve).min(r.fill as usize)]);
        fill.produce(&scratch[..n]);
        Ok(Xsk {
            queue,
            fd: Arc::new(fd),
            umem,
            fill,
            comp,
            rx,
            tx,
            pool,
            need_wakeup: cfg.need_wakeup,
            umem_headroom,
            reserve,
            outstanding: 0,
            unkicked: 0,
            counters: Arc::new(Counters::default()),
        })
    }

    /// The socket (for the `XSKMAP`, `poll` and statistics).
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// A shared handle on the socket (read by statistics while the thread runs).
    pub(crate) fn fd_handle(&self) -> Arc<OwnedFd> {
        self.fd.clone()
    }

    /// Where a copied frame's data starts in its chunk (as the kernel places received data).
    pub(crate) fn data_offset(&self) -> u32 {
        self.umem_headroom + XDP_PACKET_HEADROOM
    }

    /// Takes up to `max` received frames, calling `f` with each descriptor, and gives their
    /// slots back to the kernel. Returns how many.
    pub(crate) fn receive(&mut self, max: u32, mut f: impl FnMut(&mut Umem, Desc)) -> u32 {
        let n = self.rx.peek(max);
        for i in 0..n {
            if let Some(d) = self.rx.read(i) {
                f(&mut self.umem, d);
            }
        }
        self.rx.release(n);
        n
    }

    /// Gives the kernel free frames on FILL, as many as fit, keeping the reserve in the pool.
    pub(crate) fn refill(&mut self, scratch: &mut [u64]) {
        loop {
            let room = self.fill.free(self.fill.size()) as usize;
            let spare = self.pool.len().saturating_sub(self.reserve);
            let want = room.min(spare).min(scratch.len());
            if want == 0 {
                return;
            }
            let got = self.pool.get(&mut scratch[..want]);
            self.fill.produce(&scratch[..got]);
            if got < want {
                return;
            }
        }
    }

    /// Puts descriptors on TX, as many as fit; returns how many.
    pub(crate) fn enqueue(&mut self, descs: &[Desc]) -> usize {
        let n = self.tx.produce(descs);
        self.outstanding += n as u32;
        self.unkicked += n as u32;
        n
    }

    /// Whether a kick is needed for what is on TX (always without need-wakeup; with it, when
    /// the kernel says so: in copy mode it always does).
    pub(crate) fn tx_needs_kick(&self) -> bool {
        !self.need_wakeup || self.tx.needs_wakeup()
    }

    /// Makes the kernel send what is on TX. In copy mode it sends a limited batch per call
    /// (`EAGAIN` for the rest), so the call is repeated while entries remain, a bounded number
    /// of times.
    pub(crate) fn kick(&mut self) {
        self.unkicked = 0;
        if !self.tx_needs_kick() {
            return;
        }
        // 32 frames a call in copy mode; one more round than that needs.
        let rounds = self.tx.pending() / 16 + 2;
        for _ in 0..rounds {
            bump(&self.counters.kicks, 1);
            match xsk::kick_tx(self.fd.as_fd()) {
                Ok(true) | Err(_) => break,
                Ok(false) if self.tx.pending() == 0 => break,
                Ok(false) => {}
            }
        }
    }

    /// Takes sent frames off COMPLETION back into the pool; returns how many.
    pub(crate) fn reap(&mut self, scratch: &mut [u64]) -> u32 {
        if self.outstanding == 0 {
            return 0;
        }
        let mut total = 0;
        loop {
            let n = self.comp.consume(scratch);
            if n == 0 {
                break;
            }
            let mask = !u64::from(self.umem.frame_size() - 1);
            for a in &mut scratch[..n] {
                *a &= mask;
            }
            self.pool.put(&scratch[..n]);
            total += n as u32;
            if n < scratch.len() {
                break;
            }
        }
        self.outstanding = self.outstanding.saturating_sub(total);
        bump(&self.counters.tx_completed, u64::from(total));
        total
    }

    /// The baseline's receive-and-drop: received frames straight back on FILL (what does not
    /// fit goes to the pool). Returns the frames and bytes received.
    pub(crate) fn rx_to_fill(&mut self, max: u32) -> (u32, u64) {
        let n = self.rx.peek(max);
        if n == 0 {
            return (0, 0);
        }
        let k = self.fill.reserve(n);
        let mut bytes = 0;
        for i in 0..n {
            let Some(d) = self.rx.read(i) else { continue };
            bytes += u64::from(d.len);
            let base = self.umem.frame_base(d.addr);
            if i < k {
                self.fill.write(i, base);
            } else {
                self.pool.put(&[base]);
            }
        }
        self.fill.submit(k);
        self.rx.release(n);
        (n, bytes)
    }

    /// The baseline's forwarding: received frames' MAC addresses swapped in place and the
    /// frames straight onto TX (kicking first when TX has no room). Returns the frames and
    /// bytes received.
    pub(crate) fn rx_to_tx(&mut self, max: u32) -> (u32, u64) {
        let n = self.rx.peek(max);
        if n == 0 {
            return (0, 0);
        }
        if self.tx.free(n) < n {
            self.kick();
            self.comp_to_fill();
        }
        let k = self.tx.reserve(n);
        let (mut bytes, mut sent) = (0, 0);
        for i in 0..n {
            let Some(d) = self.rx.read(i) else { continue };
            bytes += u64::from(d.len);
            if i < k {
                sent += u64::from(d.len);
            } else {
                let base = self.umem.frame_base(d.addr);
                self.pool.put(&[base]);
                continue;
            }
            if let Some(mac) = self.umem.bytes_mut(d.addr, 12) {
                let (dst, src) = mac.split_at_mut(6);
                dst.swap_with_slice(src);
            }
            self.tx.write(i, Desc { addr: d.addr, len: d.len, options: 0 });
        }
        self.tx.submit(k);
        self.rx.release(n);
        self.outstanding += k;
        self.unkicked += k;
        bump(&self.counters.drop_tx_full, u64::from(n - k));
        bump(&self.counters.tx_packets, u64::from(k));
        bump(&self.counters.tx_bytes, sent);
        (n, bytes)
    }

    /// The baseline's completion: sent frames straight back on FILL (what does not fit goes
    /// to the pool).
    pub(crate) fn comp_to_fill(&mut self) {
        if self.outstanding == 0 {
            return;
        }
        let n = self.comp.peek(self.comp.size());
        let k = self.fill.reserve(n);
        for i in 0..n {
            let Some(a) = self.comp.read(i) else { continue };
            let base = self.umem.frame_base(a);
            if i < k {
                self.fill.write(i, base);
            } else {
                self.pool.put(&[base]);
            }
        }
        self.fill.submit(k);
        self.comp.release(n);
        self.outstanding = self.outstanding.saturating_sub(n);
        bump(&self.counters.tx_completed, u64::from(n));
    }

    /// Wakes the driver when it waits for FILL entries (need-wakeup).
    pub(crate) fn wake_if_needed(&mut self) {
        if self.need_wakeup && self.fill.needs_wakeup() {
            bump(&self.counters.wakeups, 1);
            let _ = xsk::wake_rx(self.fd.as_fd());
        }
    }
}
