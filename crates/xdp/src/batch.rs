//! A batch of received packets as a pipeline sees it, and where each packet's metadata lives.
//!
//! A packet is a frame of the receiving queue's UMEM plus a little metadata: which frame, where
//! its data starts in it (the bytes before are headroom, at least 256, so an action can push a
//! header), how long it is, and to which ports it goes. The seed (§4.5.2) found that *where*
//! that metadata lives matters as much as the pool; [`MetaMode`] keeps its three answers so the
//! optimisation figure can compare them:
//!
//! * [`MetaMode::Array`] (the default): one array per thread, reused for every batch: set up
//!   in order, in a few cache lines;
//! * [`MetaMode::Alloc`]: a heap allocation per packet, freed after the batch (what a
//!   straightforward `dp_packet` per packet costs);
//! * [`MetaMode::Inline`]: in the frame itself, in 32 bytes kept in front of the headroom
//!   (each frame's own cache line, written through the UMEM).
//!
//! The pipeline reads and changes packets through [`Packet`], which is the same in every mode.

use std::time::SystemTime;

use sift_sys::xsk::Umem;

/// A port's index in the datapath's list of ports (below 64: a packet's outputs are a bit set).
pub type PortId = usize;

/// The most ports a datapath has.
pub const MAX_PORTS: usize = 64;

/// Where a batch's packet metadata lives (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MetaMode {
    /// An array per thread, reused across batches.
    #[default]
    Array,
    /// Allocated per packet.
    Alloc,
    /// In the frame's first bytes, in front of its headroom.
    Inline,
}

impl MetaMode {
    /// The name the command-line tools use (`array`, `alloc`, `inline`).
    pub fn name(self) -> &'static str {
        match self {
            MetaMode::Array => "array",
            MetaMode::Alloc => "alloc",
            MetaMode::Inline => "inline",
        }
    }

    /// The mode a name (see [`name`](Self::name)) stands for.
    pub fn from_name(name: &str) -> Option<MetaMode> {
        [MetaMode::Array, MetaMode::Alloc, MetaMode::Inline].into_iter().find(|m| m.name() == name)
    }

    /// The UMEM headroom the mode needs in front of the kernel's (inline metadata's bytes).
    pub(crate) fn umem_headroom(self) -> u32 {
        match self {
            MetaMode::Inline => INLINE_BYTES,
            MetaMode::Array | MetaMode::Alloc => 0,
        }
    }
}

/// The bytes kept for inline metadata at the start of each frame.
const INLINE_BYTES: u32 = 32;

/// One packet's metadata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Meta {
    /// The frame's base address in the UMEM.
    pub addr: u64,
    /// Where the data starts, from the frame's base.
    pub start: u32,
    /// The data's length.
    pub len: u32,
    /// The ports it goes to (bit `p` for port `p`); 0 drops it.
    pub out: u64,
}

impl Meta {
    fn encode(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..12].copy_from_slice(&self.start.to_le_bytes());
        b[12..16].copy_from_slice(&self.len.to_le_bytes());
        b[16..].copy_from_slice(&self.out.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<Meta> {
        let b: &[u8; 24] = b.get(..24)?.try_into().ok()?;
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Some(Meta { addr: u64_at(0), start: u32_at(8), len: u32_at(12), out: u64_at(16) })
    }

    fn read_inline(umem: &Umem, base: u64) -> Meta {
        umem.bytes(base, 24).and_then(Meta::decode).unwrap_or_default()
    }

    fn write_inline(&self, umem: &mut Umem) {
        if let Some(b) = umem.bytes_mut(self.addr, 24) {
            b.copy_from_slice(&self.encode());
        }
    }
}

/// A thread's metadata store for one batch at a time.
#[derive(Debug)]
pub(crate) struct Metas {
    mode: MetaMode,
    array: Vec<Meta>,
    /// One allocation per packet: what [`MetaMode::Alloc`] is there to measure.
    #[expect(clippy::vec_box, reason = "a heap allocation per packet is the point")]
    boxed: Vec<Box<Meta>>,
    /// Inline: the frames' base addresses.
    frames: Vec<u64>,
}

impl Metas {
    pub(crate) fn new(mode: MetaMode, batch: usize) -> Metas {
        Metas {
            mode,
            array: Vec::with_capacity(batch),
            boxed: Vec::with_capacity(batch),
            frames: Vec::with_capacity(batch),
        }
    }

    /// Forgets the last batch (alloc mode: frees its metadata).
    pub(crate) fn clear(&mut self) {
        self.array.clear();
        self.boxed.clear();
        self.frames.clear();
    }

    /// Adds a received packet.
    pub(crate) fn push(&mut self, umem: &mut Umem, m: Meta) {
        match self.mode {
            MetaMode::Array => self.array.push(m),
            MetaMode::Alloc => self.boxed.push(Box::new(m)),
            MetaMode::Inline => {
                m.write_inline(umem);
                self.frames.push(m.addr);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self.mode {
            MetaMode::Array => self.array.len(),
            MetaMode::Alloc => self.boxed.len(),
            MetaMode::Inline => self.frames.len(),
        }
    }

    /// Packet `i`'s metadata (`i` below [`len`](Self::len)).
    pub(crate) fn get(&self, umem: &Umem, i: usize) -> Meta {
        match self.mode {
            MetaMode::Array => self.array.get(i).copied().unwrap_or_default(),
            MetaMode::Alloc => self.boxed.get(i).map(|b| **b).unwrap_or_default(),
            MetaMode::Inline => {
                self.frames.get(i).map(|&f| Meta::read_inline(umem, f)).unwrap_or_default()
            }
        }
    }
}

/// The packets received in one batch from one port's queue. The pipeline decides each one's
/// fate with [`Packet::output`] and [`Packet::discard`]; a packet sent nowhere is dropped.
#[derive(Debug)]
pub struct Batch<'a> {
    in_port: PortId,
    queue: u32,
    received: SystemTime,
    umem: &'a mut Umem,
    metas: &'a mut Metas,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(
        in_port: PortId,
        queue: u32,
        received: SystemTime,
        umem: &'a mut Umem,
        metas: &'a mut Metas,
    ) -> Batch<'a> {
        Batch { in_port, queue, received, umem, metas }
    }

    /// When the batch was taken off the RX ring (the wall clock, read once per batch): AF_XDP
    /// gives frames no timestamp of their own, so this is a capture's time stamp.
    pub fn received(&self) -> SystemTime {
        self.received
    }

    /// The number of packets.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    /// Whether there are none (a pipeline is never given an empty batch).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The port the packets came in on.
    pub fn in_port(&self) -> PortId {
        self.in_port
    }

    /// The receive queue they came from (the thread's).
    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// Packet `i` (`None` past the end).
    pub fn packet(&mut self, i: usize) -> Option<Packet<'_>> {
        let min_start = self.metas.mode.umem_headroom();
        let slot = match self.metas.mode {
            MetaMode::Array => Slot::Mem(self.metas.array.get_mut(i)?),
            MetaMode::Alloc => Slot::Mem(&mut **self.metas.boxed.get_mut(i)?),
            MetaMode::Inline => Slot::Inline(*self.metas.frames.get(i)?),
        };
        Some(Packet { umem: &mut *self.umem, slot, min_start, in_port: self.in_port })
    }

    /// Calls `f` on every packet, in order.
    pub fn for_each(&mut self, mut f: impl FnMut(Packet<'_>)) {
        let min_start = self.metas.mode.umem_headroom();
        let in_port = self.in_port;
        match self.metas.mode {
            MetaMode::Array => {
                for m in &mut self.metas.array {
                    f(Packet { umem: &mut *self.umem, slot: Slot::Mem(m), min_start, in_port });
                }
            }
            MetaMode::Alloc => {
                for m in &mut self.metas.boxed {
                    let slot = Slot::Mem(m);
                    f(Packet { umem: &mut *self.umem, slot, min_start, in_port });
                }
            }
            MetaMode::Inline => {
                for &frame in &self.metas.frames {
                    let slot = Slot::Inline(frame);
                    f(Packet { umem: &mut *self.umem, slot, min_start, in_port });
                }
            }
        }
    }

    /// Sends every packet to `port` (as well as where it goes already).
    pub fn output_all(&mut self, port: PortId) {
        self.for_each(|mut p| {
            p.output(port);
        });
    }
}

/// Where a packet's metadata is.
#[derive(Debug)]
enum Slot<'b> {
    Mem(&'b mut Meta),
    /// In the frame at this base address.
    Inline(u64),
}

/// One packet of a [`Batch`]: its bytes, writable, with headroom in front, and its outputs.
#[derive(Debug)]
pub struct Packet<'b> {
    umem: &'b mut Umem,
    slot: Slot<'b>,
    /// The lowest data start (inline metadata's bytes are below it).
    min_start: u32,
    in_port: PortId,
}

impl Packet<'_> {
    fn meta(&self) -> Meta {
        match &self.slot {
            Slot::Mem(m) => **m,
            Slot::Inline(base) => Meta::read_inline(self.umem, *base),
        }
    }

    fn set_meta(&mut self, m: Meta) {
        match &mut self.slot {
            Slot::Mem(slot) => **slot = m,
            Slot::Inline(_) => m.write_inline(self.umem),
        }
    }

    /// The port it came in on.
    pub fn in_port(&self) -> PortId {
        self.in_port
    }

    /// Its bytes.
    pub fn data(&self) -> &[u8] {
        let m = self.meta();
        self.umem.bytes(m.addr + u64::from(m.start), m.len as usize).unwrap_or(&[])
    }

    /// Its bytes, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let m = self.meta();
        self.umem.bytes_mut(m.addr + u64::from(m.start), m.len as usize).unwrap_or(&mut [])
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.meta().len as usize
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes free in front of the data.
    pub fn headroom(&self) -> usize {
        self.meta().start.saturating_sub(self.min_start) as usize
    }

    /// The bytes free after the data, to the end of the frame.
    pub fn tailroom(&self) -> usize {
        let m = self.meta();
        (self.umem.frame_size() as usize).saturating_sub((m.start + m.len) as usize)
    }

    /// Moves the start of the data `n` bytes back into the headroom (the new first `n` bytes
    /// hold whatever was there) and returns the data; `None`, and nothing changes, when the
    /// headroom is smaller.
    pub fn push_head(&mut self, n: usize) -> Option<&mut [u8]> {
        let mut m = self.meta();
        let n = u32::try_from(n).ok().filter(|&n| n <= m.start.saturating_sub(self.min_start))?;
        m.start -= n;
        m.len += n;
        self.set_meta(m);
        Some(self.data_mut())
    }

    /// Moves the start of the data `n` bytes forward (dropping them); `false`, and nothing
    /// changes, when the data is shorter.
    pub fn pull_head(&mut self, n: usize) -> bool {
        let mut m = self.meta();
        let Some(n) = u32::try_from(n).ok().filter(|&n| n <= m.len) else { return false };
        m.start += n;
        m.len -= n;
        self.set_meta(m);
        true
    }

    /// Sets the length (shorter: truncates; longer: into the tailroom, whose bytes are
    /// whatever was there); `false`, and nothing changes, past the end of the frame.
    pub fn set_len(&mut self, len: usize) -> bool {
        let mut m = self.meta();
        let end = u64::from(m.start) + len as u64;
        if end > u64::from(self.umem.frame_size()) {
            return false;
        }
        m.len = len as u32;
        self.set_meta(m);
        true
    }

    /// Inserts an 802.1Q tag with `tci` after the MAC addresses; `false`, and nothing changes,
    /// when the frame is shorter than the addresses or the headroom has no 4 bytes.
    pub fn push_vlan(&mut self, tci: u16) -> bool {
        if self.len() < 12 || self.headroom() < 4 {
            return false;
        }
        let Some(d) = self.push_head(4) else { return false };
        d.copy_within(4..16, 0);
        d[12..14].copy_from_slice(&sift_wire::ethertype::VLAN.to_be_bytes());
        d[14..16].copy_from_slice(&tci.to_be_bytes());
        true
    }

    /// Removes the outer 802.1Q tag and returns its TCI; `None`, and nothing changes, when the
    /// frame has none.
    pub fn pop_vlan(&mut self) -> Option<u16> {
        let d = self.data_mut();
        if d.len() < 18 || d[12..14] != sift_wire::ethertype::VLAN.to_be_bytes() {
            return None;
        }
        let tci = u16::from_be_bytes([d[14], d[15]]);
        d.copy_within(0..12, 4);
        self.pull_head(4);
        Some(tci)
    }

    /// Sends it to `port` too (the port it came in on sends it back out). `false` for a port
    /// number of [`MAX_PORTS`] or more; an index the datapath has no port for is counted as a
    /// drop when the batch is executed.
    pub fn output(&mut self, port: PortId) -> bool {
        if port >= MAX_PORTS {
            return false;
        }
        let mut m = self.meta();
        m.out |= 1 << port;
        self.set_meta(m);
        true
    }

    /// Sends it nowhere (forgets every output): it is dropped.
    pub fn discard(&mut self) {
        let mut m = self.meta();
        m.out = 0;
        self.set_meta(m);
    }

    /// The ports it goes to, as a bit set (bit `p` for port `p`).
    pub fn outputs(&self) -> u64 {
        self.meta().out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_of(mode: MetaMode, umem: &mut Umem, metas: &mut Metas) {
        metas.clear();
        for f in 0..3u64 {
            let start = 256 + mode.umem_headroom();
            let m = Meta { addr: f * 2048, start, len: 60, out: 0 };
            umem.bytes_mut(m.addr + u64::from(start), 60).unwrap().fill(f as u8 + 1);
            metas.push(umem, m);
        }
    }

    #[test]
    fn packets_read_write_and_route_alike_in_every_mode() {
        for mode in [MetaMode::Array, MetaMode::Alloc, MetaMode::Inline] {
            let mut umem = Umem::new(4, 2048).unwrap();
            let mut metas = Metas::new(mode, 4);
            batch_of(mode, &mut umem, &mut metas);
            let mut b = Batch::new(1, 0, SystemTime::UNIX_EPOCH, &mut umem, &mut metas);
            assert_eq!((b.len(), b.in_port(), b.queue()), (3, 1, 0));
            assert_eq!(b.received(), SystemTime::UNIX_EPOCH);
            {
                let mut p = b.packet(1).unwrap();
                assert_eq!(p.data(), [2u8; 60]);
                assert_eq!(p.headroom(), 256, "{mode:?}");
                assert_eq!(p.tailroom(), 2048 - 256 - 60 - mode.umem_headroom() as usize);
                p.data_mut()[..12].copy_from_slice(&[9; 12]);
                assert!(p.push_vlan(0x0123));
                assert_eq!(p.len(), 64);
                assert_eq!(
                    &p.data()[..16],
                    &[9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0x81, 0, 1, 0x23]
                );
                assert_eq!(p.pop_vlan(), Some(0x0123));
                assert_eq!(p.pop_vlan(), None);
                assert_eq!(&p.data()[..14], &[9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2, 2]);
                assert!(p.push_head(256).is_some());
                assert!(p.push_head(1).is_none(), "no headroom left");
                assert!(p.pull_head(256));
                assert!(!p.pull_head(61));
                assert!(p.set_len(10));
                assert!(!p.set_len(2048));
                assert!(p.output(0) && p.output(1) && !p.output(64));
                assert_eq!(p.outputs(), 0b11);
            }
            b.packet(2).unwrap().output(5);
            b.packet(0).unwrap().output(5);
            b.packet(0).unwrap().discard();
            assert!(b.packet(3).is_none());
            let mut seen = Vec::new();
            b.for_each(|p| seen.push((p.len(), p.outputs())));
            assert_eq!(seen, [(60, 0), (10, 0b11), (60, 1 << 5)], "{mode:?}");
            let m = metas.get(&umem, 1);
            assert_eq!((m.addr, m.start, m.len, m.out), (2048, 256 + mode.umem_headroom(), 10, 3));
            assert_eq!(metas.get(&umem, 7), Meta::default());
        }
        assert_eq!(MetaMode::from_name("inline"), Some(MetaMode::Inline));
    }
}
