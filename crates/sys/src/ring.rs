//! The `TPACKET_V3` receive ring of an `AF_PACKET` socket: memory shared with the kernel, cut
//! into blocks that the kernel fills with packets and hands over whole.
//!
//! A ring saves a system call and a copy per packet: the kernel writes packets (with a header
//! each) into the current block, hands the block to user space when it is full or its timeout
//! expires (`TP_STATUS_USER` in the block's status word), and takes it back when user space
//! clears that word. This module sizes the ring ([`Geometry`]), sets it up ([`set_version_v3`],
//! [`request`]), maps it ([`RxRing`]: block status with acquire/release ordering, a handed-over
//! block as bytes) and reads the kernel's layout of a block ([`packets`], [`PacketHeader`]), so
//! that the capture code above it deals in packets, not offsets.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::Plain;
use crate::packet::{PACKET_RX_RING, PACKET_VERSION, SOL_PACKET};
use crate::socket::setsockopt;

/// `TPACKET_V3` (the value of `PACKET_VERSION`).
const TPACKET_V3: libc::c_int = 2;
/// The page size the ring is laid out in.
const PAGE: usize = 4096;
/// `sizeof(struct tpacket_block_desc)`: the block header in front of the first packet.
const BLOCK_DESC_LEN: usize = 48;
/// Room for a packet's `tpacket3_hdr`, the `sockaddr_ll` after it and alignment.
const FRAME_OVERHEAD: usize = 96;
/// Offset of `block_status` in `struct tpacket_block_desc` (version, offset_to_priv, then the
/// `tpacket_hdr_v1` whose first field it is).
const BLOCK_STATUS: usize = 8;
/// Offsets of `num_pkts` and `offset_to_first_pkt` in the block descriptor.
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST_PKT: usize = 16;
/// `TP_STATUS_USER`: the block belongs to user space.
const TP_STATUS_USER: u32 = 1;

/// `tp_status` bit: the kernel stripped a VLAN tag; `tp_vlan_tci` holds it.
pub const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
/// `tp_status` bit: `tp_vlan_tpid` holds the stripped tag's TPID.
pub const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

/// The shape of a ring: `blocks` blocks of `block_size` bytes, each holding packets of up to
/// `frame_size` bytes with their headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Bytes per block (a power of two, at least a page).
    pub block_size: usize,
    /// Number of blocks (at least 2).
    pub blocks: usize,
    /// The largest packet with its headers, 16-byte aligned.
    pub frame_size: usize,
}

impl Geometry {
    /// A ring of about `buffer_bytes` for packets of up to `packet_bytes` bytes. Blocks hold at
    /// least one such packet with its headers, are a power of two pages, and are large enough
    /// (an eighth of the buffer, between 64 KiB and 1 MiB) that a busy capture wakes up once per
    /// many packets.
    pub fn new(packet_bytes: usize, buffer_bytes: usize) -> Geometry {
        let frame_size = (FRAME_OVERHEAD + packet_bytes).next_multiple_of(16);
        let wanted = (buffer_bytes / 8).clamp(64 << 10, 1 << 20);
        let block_size = (frame_size + BLOCK_DESC_LEN).max(wanted).max(PAGE).next_power_of_two();
        let blocks = (buffer_bytes / block_size).max(2);
        Geometry { block_size, blocks, frame_size }
    }

    /// The ring's size in bytes.
    pub fn len(&self) -> usize {
        self.block_size * self.blocks
    }

    /// Whether the ring has no bytes (never for a [`Geometry::new`] one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `PACKET_VERSION` = `TPACKET_V3`, before [`request`] (Linux 3.2+).
pub fn set_version_v3(fd: impl AsFd) -> io::Result<()> {
    setsockopt(fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V3)
}

/// `struct tpacket_req3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct TpacketReq3 {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
    retire_blk_tov: u32,
    sizeof_priv: u32,
    feature_req_word: u32,
}

// SAFETY: #[repr(C)], integers only.
unsafe impl Plain for TpacketReq3 {}

/// `PACKET_RX_RING`: asks the kernel for a ring of `geometry` whose partly filled block is
/// handed over after `block_timeout_ms`.
pub fn request(fd: impl AsFd, geometry: &Geometry, block_timeout_ms: u32) -> io::Result<()> {
    let req = TpacketReq3 {
        block_size: geometry.block_size as u32,
        block_nr: geometry.blocks as u32,
        frame_size: geometry.frame_size as u32,
        frame_nr: ((geometry.block_size / geometry.frame_size) * geometry.blocks) as u32,
        retire_blk_tov: block_timeout_ms,
        sizeof_priv: 0,
        feature_req_word: 0,
    };
    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req)
}

/// The kernel's receive ring, mapped into our address space (unmapped on drop).
pub struct RxRing {
    base: *mut u8,
    len: usize,
    block_size: usize,
    blocks: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another thread is fine.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Maps the ring that [`request`] set up on `fd` with `geometry` (locked in memory when
    /// allowed: `MAP_LOCKED` needs `CAP_IPC_LOCK` or room under `RLIMIT_MEMLOCK`).
    pub fn map(fd: impl AsFd, geometry: &Geometry) -> io::Result<RxRing> {
        let fd = fd.as_fd().as_raw_fd();
        let len = geometry.len();
        let map = |flags| {
            // SAFETY: a fresh shared mapping of the socket's ring; the kernel validates the
            // length against the ring it allocated. Nothing else refers to the new region.
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    fd,
                    0,
                )
            }
        };
        let mut base = map(libc::MAP_SHARED | libc::MAP_LOCKED);
        if base == libc::MAP_FAILED {
            base = map(libc::MAP_SHARED);
        }
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(RxRing {
            base: base.cast(),
            len,
            block_size: geometry.block_size,
            blocks: geometry.blocks,
        })
    }

    /// The number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    fn status(&self, block: usize) -> &AtomicU32 {
        assert!(block < self.blocks, "block {block} of {}", self.blocks);
        // SAFETY: the block descriptor lies at the start of the block, inside the mapping;
        // `block_status` is a 4-byte-aligned u32 (blocks are page-aligned) that the kernel and
        // we hand back and forth, so it is accessed atomically only.
        unsafe { AtomicU32::from_ptr(self.base.add(block * self.block_size + BLOCK_STATUS).cast()) }
    }

    /// Whether the kernel has handed `block` to user space (`TP_STATUS_USER`).
    pub fn ready(&self, block: usize) -> bool {
        self.status(block).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// The bytes of a block the kernel has handed over ([`ready`](Self::ready)). The kernel
    /// does not touch the block again until [`release`](Self::release).
    pub fn block(&self, block: usize) -> &[u8] {
        assert!(block < self.blocks, "block {block} of {}", self.blocks);
        // SAFETY: the block lies inside the mapping; while its status is TP_STATUS_USER (the
        // caller checked `ready`, with acquire ordering) the kernel does not write to it, and
        // the returned borrow ends before `release` (which takes `&mut self`).
        unsafe {
            std::slice::from_raw_parts(self.base.add(block * self.block_size), self.block_size)
        }
    }

    /// Gives `block` back to the kernel (`TP_STATUS_KERNEL`).
    pub fn release(&mut self, block: usize) {
        self.status(block).store(0, Ordering::Release);
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map`; no borrows of it outlive self.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

/// The `sockaddr_ll` the kernel writes after each packet header: where the packet came from
/// (what a cooked header is made of).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkAddr {
    /// EtherType in host order (`sll_protocol` after `ntohs`).
    pub protocol: u16,
    /// Interface index.
    pub ifindex: u32,
    /// ARPHRD type.
    pub hatype: u16,
    /// Packet type (`PACKET_HOST` = 0 … [`PACKET_OUTGOING`](crate::packet::PACKET_OUTGOING) = 4).
    pub pkttype: u8,
    /// Link-layer address length.
    pub halen: u8,
    /// Link-layer address (the first `halen` bytes, at most 8).
    pub addr: [u8; 8],
}

/// A packet's `struct tpacket3_hdr` (the fields in use) and its `sockaddr_ll`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketHeader {
    /// Bytes from this header to the next packet's (0: the last one).
    pub next_offset: u32,
    /// Timestamp, seconds.
    pub sec: u32,
    /// Timestamp, nanoseconds.
    pub nsec: u32,
    /// Captured bytes.
    pub snaplen: u32,
    /// Length on the wire.
    pub len: u32,
    /// `tp_status` bits ([`TP_STATUS_VLAN_VALID`]…).
    pub status: u32,
    /// Offset of the packet's bytes from this header.
    pub mac: u16,
    /// The flow hash.
    pub rxhash: u32,
    /// The stripped VLAN tag's TCI (see [`TP_STATUS_VLAN_VALID`]).
    pub vlan_tci: u32,
    /// The stripped VLAN tag's TPID (see [`TP_STATUS_VLAN_TPID_VALID`]).
    pub vlan_tpid: u16,
    /// Where the packet came from.
    pub addr: LinkAddr,
}

/// `sizeof(struct tpacket3_hdr)`: the `sockaddr_ll` follows.
const TPACKET3_HDR_LEN: usize = 48;
/// The part of `struct sockaddr_ll` read.
const SOCKADDR_LL_LEN: usize = 20;

impl PacketHeader {
    /// The header at `off` in `block`, or `None` when it does not fit in the block.
    pub fn read(block: &[u8], off: usize) -> Option<PacketHeader> {
        let h = block.get(off..off.checked_add(TPACKET3_HDR_LEN + SOCKADDR_LL_LEN)?)?;
        let u32_at = |o: usize| u32::from_ne_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let u16_at = |o: usize| u16::from_ne_bytes([h[o], h[o + 1]]);
        let sll = &h[TPACKET3_HDR_LEN..];
        let mut addr = [0u8; 8];
        addr.copy_from_slice(&sll[12..20]);
        Some(PacketHeader {
            next_offset: u32_at(0),
            sec: u32_at(4),
            nsec: u32_at(8),
            snaplen: u32_at(12),
            len: u32_at(16),
            status: u32_at(20),
            mac: u16_at(24),
            rxhash: u32_at(28),
            vlan_tci: u32_at(32),
            vlan_tpid: u16_at(36),
            addr: LinkAddr {
                protocol: u16::from_be_bytes([sll[2], sll[3]]),
                ifindex: u32::from_ne_bytes([sll[4], sll[5], sll[6], sll[7]]),
                hatype: u16::from_ne_bytes([sll[8], sll[9]]),
                pkttype: sll[10],
                halen: sll[11],
                addr,
            },
        })
    }
}

/// One packet of a block: its header and its captured bytes (`None` when the header points
/// outside the block).
#[derive(Clone, Copy, Debug)]
pub struct RingPacket<'a> {
    /// The header.
    pub header: PacketHeader,
    /// The captured bytes (`snaplen` of them at `mac` from the header).
    pub data: Option<&'a [u8]>,
}

/// The packets of a handed-over block, in order, as the block descriptor counts them; stops
/// early at a header that does not fit in the block or at the last one (`next_offset` 0).
pub fn packets(block: &[u8]) -> Packets<'_> {
    let u32_at = |off: usize| -> Option<u32> {
        block.get(off..off + 4).map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
    };
    Packets {
        block,
        left: u32_at(BLOCK_NUM_PKTS).unwrap_or(0),
        off: Some(u32_at(BLOCK_FIRST_PKT).unwrap_or(0) as usize),
    }
}

/// The iterator of [`packets`].
#[derive(Clone, Debug)]
pub struct Packets<'a> {
    block: &'a [u8],
    left: u32,
    /// The next header's offset; `None` after the last one.
    off: Option<usize>,
}

impl<'a> Iterator for Packets<'a> {
    type Item = RingPacket<'a>;

    fn next(&mut self) -> Option<RingPacket<'a>> {
        if self.left == 0 {
            return None;
        }
        let off = self.off?;
        let Some(header) = PacketHeader::read(self.block, off) else {
            self.off = None;
            return None;
        };
        self.left -= 1;
        self.off = match header.next_offset {
            0 => None,
            n => off.checked_add(n as usize),
        };
        let start = off + usize::from(header.mac);
        let data =
            start.checked_add(header.snaplen as usize).and_then(|end| self.block.get(start..end));
        Some(RingPacket { header, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PACKET_OUTGOING;

    #[test]
    fn geometry_follows_the_snapshot_length_and_the_buffer() {
        // libpcap's defaults: 262144-byte snapshots (plus a cooked header), 2 MiB.
        let g = Geometry::new(262_144 + 20, 2 << 20);
        assert_eq!(g, Geometry { block_size: 512 << 10, blocks: 4, frame_size: 262_272 });
        // Small packets: blocks of an eighth of the buffer.
        let g = Geometry::new(96, 8 << 20);
        assert_eq!(g, Geometry { block_size: 1 << 20, blocks: 8, frame_size: 192 });
        // The block never goes below 64 KiB, the ring below two blocks.
        let g = Geometry::new(1500, 4096);
        assert_eq!(g, Geometry { block_size: 64 << 10, blocks: 2, frame_size: 1600 });
        for (packet, buffer) in [(0, 0), (65_535, 1 << 20), (262_164, 64 << 20), (7, 333_333)] {
            let g = Geometry::new(packet, buffer);
            assert!(g.block_size.is_power_of_two() && g.block_size >= PAGE, "{g:?}");
            assert!(g.block_size >= g.frame_size + BLOCK_DESC_LEN, "{g:?}");
            assert!(
                g.frame_size >= packet + FRAME_OVERHEAD && g.frame_size.is_multiple_of(16),
                "{g:?}"
            );
            assert!(g.blocks >= 2 && g.len() == g.blocks * g.block_size, "{g:?}");
        }
    }

    /// A block as the kernel lays it out, with packets of the given lengths.
    fn block(lens: &[usize], count: u32) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[BLOCK_NUM_PKTS..BLOCK_NUM_PKTS + 4].copy_from_slice(&count.to_ne_bytes());
        b[BLOCK_FIRST_PKT..BLOCK_FIRST_PKT + 4].copy_from_slice(&48u32.to_ne_bytes());
        let mut off = 48;
        for (i, &len) in lens.iter().enumerate() {
            let mac = 80usize;
            let next = if i + 1 == lens.len() { 0 } else { (mac + len).next_multiple_of(16) };
            let h = &mut b[off..];
            h[0..4].copy_from_slice(&(next as u32).to_ne_bytes());
            h[4..8].copy_from_slice(&(1000 + i as u32).to_ne_bytes());
            h[12..16].copy_from_slice(&(len as u32).to_ne_bytes());
            h[16..20].copy_from_slice(&(len as u32 + 1).to_ne_bytes());
            h[20..24].copy_from_slice(&TP_STATUS_VLAN_VALID.to_ne_bytes());
            h[24..26].copy_from_slice(&(mac as u16).to_ne_bytes());
            h[48 + 2..48 + 4].copy_from_slice(&0x0800u16.to_be_bytes());
            h[48 + 4..48 + 8].copy_from_slice(&7u32.to_ne_bytes());
            h[48 + 10] = PACKET_OUTGOING;
            h[mac..mac + len].fill(i as u8 + 1);
            off += next;
        }
        b
    }

    #[test]
    fn packets_of_a_block() {
        let b = block(&[60, 1514, 42], 3);
        let got: Vec<_> = packets(&b).collect();
        assert_eq!(got.len(), 3);
        for (i, (p, len)) in got.iter().zip([60, 1514, 42]).enumerate() {
            assert_eq!(p.header.sec, 1000 + i as u32);
            assert_eq!((p.header.snaplen, p.header.len), (len as u32, len as u32 + 1));
            assert_eq!(p.header.status, TP_STATUS_VLAN_VALID);
            assert_eq!(p.header.addr.protocol, 0x0800);
            assert_eq!(p.header.addr.ifindex, 7);
            assert_eq!(p.header.addr.pkttype, PACKET_OUTGOING);
            assert_eq!(p.data, Some(&vec![i as u8 + 1; len][..]));
        }
        // The count in the descriptor bounds the walk; so does the last header.
        assert_eq!(packets(&block(&[60, 1514, 42], 2)).count(), 2);
        assert_eq!(packets(&block(&[60, 1514], 5)).count(), 2);
        assert_eq!(packets(&block(&[], 0)).count(), 0);
        // A header that points outside the block: the packet is there, its bytes are not.
        let mut b = block(&[60], 1);
        b[48 + 12..48 + 16].copy_from_slice(&100_000u32.to_ne_bytes());
        let p: Vec<_> = packets(&b).collect();
        assert_eq!((p.len(), p[0].data), (1, None));
        // A first-packet offset past the end: nothing.
        let mut b = block(&[60], 1);
        b[BLOCK_FIRST_PKT..BLOCK_FIRST_PKT + 4].copy_from_slice(&5000u32.to_ne_bytes());
        assert_eq!(packets(&b).count(), 0);
        assert_eq!(packets(&[]).count(), 0);
    }
}
