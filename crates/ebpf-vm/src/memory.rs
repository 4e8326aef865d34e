//! The memory a program sees: a few regions (the stack, the context or input memory, the
//! packet) at fixed virtual addresses, every access checked against them.
//!
//! Pointers in eBPF registers are plain 64-bit numbers, and this crate has no `unsafe`, so the
//! VM gives each region a virtual base address and translates each access; an access that
//! falls outside every region (or writes a read-only one) is a fault, never a panic.
//!
//! The packet region is a window of a larger frame buffer (headroom before it, tailroom
//! after it), so that helpers such as `bpf_xdp_adjust_head` can move its bounds as the
//! kernel moves `data`, `data_meta` and `data_end`; the program reaches only the window
//! (`data_meta` to `data_end`).

use thiserror::Error;

use crate::env::VmEnv;
use crate::maps::{MAP_BASE, MAP_HANDLE_BASE, Map};

// Stack, memory and packet sit below 4 GiB: an XDP context holds 32-bit packet pointers
// (`xdp_md.data`), which must be the packet's virtual addresses as they are.
/// The stack's virtual base: the stack of the deepest frame starts here.
pub const STACK_BASE: u64 = 0x1000_0000;
/// The context / input memory's virtual base (`r1` on entry when there is one).
pub const MEM_BASE: u64 = 0x2000_0000;
/// The packet's virtual base.
pub const PACKET_BASE: u64 = 0x3000_0000;
/// Stack bytes per frame (the kernel's `MAX_BPF_STACK`).
pub const STACK_PER_FRAME: usize = 512;
/// Call frames, the entry function included (the kernel's `MAX_CALL_FRAMES`).
pub const MAX_FRAMES: usize = 8;
/// The whole stack: every frame's 512 bytes.
pub const STACK_SIZE: usize = STACK_PER_FRAME * MAX_FRAMES;

/// An access outside every region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("out-of-bounds {} of {len} bytes at {addr:#x}", if *.write { "write" } else { "read" })]
pub struct OutOfBounds {
    /// The first address.
    pub addr: u64,
    /// The access size.
    pub len: usize,
    /// Whether it was a write.
    pub write: bool,
}

/// The regions of one run.
pub struct Memory<'a> {
    stack: &'a mut [u8],
    mem: &'a mut [u8],
    mem_writable: bool,
    /// The frame buffer; the packet is `packet[meta..end]`, `data` where the program's
    /// `data` points; `packet[0]` is at `packet_base`.
    packet: &'a mut [u8],
    meta: usize,
    data: usize,
    end: usize,
    packet_base: u64,
    maps: &'a mut [Map],
    env: Option<&'a mut VmEnv>,
}

/// A packet's bounds in its frame buffer (offsets): `meta <= data <= end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketBounds {
    /// Where the metadata starts (`data_meta`).
    pub meta: usize,
    /// Where the packet starts (`data`).
    pub data: usize,
    /// Where it ends (`data_end`).
    pub end: usize,
}

/// Which region an address is in, and where ([`Memory::locate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The stack, at this offset.
    Stack(usize),
    /// The input memory or context, at this offset.
    Mem(usize),
    /// The frame buffer, at this offset (inside the packet window).
    Packet(usize),
    /// Map `.0`'s values, at offset `.1`.
    Map(usize, usize),
}

/// One region as raw parts, for compiled code that accesses it without going through
/// [`Memory`] ([`Memory::raw_regions`]). The host pointer is valid for `len` bytes as long as
/// the `Memory` it came from is neither moved from nor used by anything else; a helper call
/// may move the packet window, after which the parts must be taken again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRegion {
    /// The host address of the region's first byte.
    pub host: *mut u8,
    /// Its length in bytes.
    pub len: usize,
    /// The virtual address of its first byte.
    pub base: u64,
    /// Whether programs may write it.
    pub writable: bool,
}

/// The regions of a run as raw parts ([`Memory::raw_regions`]); maps come one by one
/// ([`Memory::raw_map`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRegions {
    /// The stack (`STACK_SIZE` bytes at [`STACK_BASE`]).
    pub stack: RawRegion,
    /// The input memory or context at [`MEM_BASE`].
    pub mem: RawRegion,
    /// The packet window (`data_meta` to `data_end`).
    pub packet: RawRegion,
}

#[inline(always)]
fn within(addr: u64, len: usize, base: u64, size: usize) -> Option<usize> {
    let off = addr.wrapping_sub(base);
    if off <= size as u64 && (len as u64) <= size as u64 - off { Some(off as usize) } else { None }
}

impl<'a> Memory<'a> {
    /// The regions: the stack (`STACK_SIZE` bytes), the input memory and the packet (either
    /// may be empty).
    #[inline]
    pub fn new(
        stack: &'a mut [u8],
        mem: &'a mut [u8],
        mem_writable: bool,
        packet: &'a mut [u8],
        maps: &'a mut [Map],
    ) -> Memory<'a> {
        let end = packet.len();
        Memory {
            stack,
            mem,
            mem_writable,
            packet,
            meta: 0,
            data: 0,
            end,
            packet_base: PACKET_BASE,
            maps,
            env: None,
        }
    }

    /// The packet as a window `bounds` of a frame buffer `frame`, `data` at [`PACKET_BASE`]
    /// (headroom below it, tailroom above `end`).
    #[inline]
    pub fn with_frame(mut self, bounds: PacketBounds) -> Memory<'a> {
        let PacketBounds { meta, data, end } = bounds;
        if meta <= data && data <= end && end <= self.packet.len() {
            (self.meta, self.data, self.end) = (meta, data, end);
            self.packet_base = PACKET_BASE - data as u64;
        }
        self
    }

    /// The helpers' world for this run.
    #[inline]
    pub fn with_env(mut self, env: &'a mut VmEnv) -> Memory<'a> {
        self.env = Some(env);
        self
    }

    /// The helpers' world (an error for runs without one).
    pub fn env(&mut self) -> Result<&mut VmEnv, String> {
        self.env.as_deref_mut().ok_or_else(|| "this run has no helper environment".to_string())
    }

    /// The packet's bounds in the frame buffer.
    #[inline]
    pub fn packet_bounds(&self) -> PacketBounds {
        PacketBounds { meta: self.meta, data: self.data, end: self.end }
    }

    /// Moves the packet's bounds (helpers that resize it); `false` (nothing changed) when
    /// they are out of order or past the frame.
    pub fn set_packet_bounds(&mut self, b: PacketBounds) -> bool {
        if b.meta <= b.data && b.data <= b.end && b.end <= self.packet.len() {
            (self.meta, self.data, self.end) = (b.meta, b.data, b.end);
            true
        } else {
            false
        }
    }

    /// The virtual address of frame buffer offset `off`.
    pub fn packet_address(&self, off: usize) -> u64 {
        self.packet_base.wrapping_add(off as u64)
    }

    /// The whole frame buffer, writable (helpers moving data within it).
    pub fn frame_mut(&mut self) -> &mut [u8] {
        self.packet
    }

    /// The context (or input memory), writable whatever the program may do: helpers update
    /// the fields a resize moves.
    pub fn ctx_mut(&mut self) -> &mut [u8] {
        self.mem
    }

    /// The maps (values at `MAP_BASE + (index << 32)`).
    pub fn maps(&self) -> &[Map] {
        self.maps
    }

    /// The maps, writable.
    pub fn maps_mut(&mut self) -> &mut [Map] {
        self.maps
    }

    /// The regions as raw parts (see [`RawRegion`]). Nothing here reallocates during a run:
    /// the slices are borrowed for the whole run and map values are fixed-size buffers.
    #[inline]
    pub fn raw_regions(&mut self) -> RawRegions {
        let packet = &mut self.packet[self.meta..self.end];
        RawRegions {
            stack: RawRegion {
                host: self.stack.as_mut_ptr(),
                len: self.stack.len(),
                base: STACK_BASE,
                writable: true,
            },
            mem: RawRegion {
                host: self.mem.as_mut_ptr(),
                len: self.mem.len(),
                base: MEM_BASE,
                writable: self.mem_writable,
            },
            packet: RawRegion {
                host: packet.as_mut_ptr(),
                len: packet.len(),
                base: self.packet_base + self.meta as u64,
                writable: true,
            },
        }
    }

    /// Map `i`'s values as raw parts (see [`RawRegion`]), if there is such a map.
    #[inline]
    pub fn raw_map(&mut self, i: usize) -> Option<RawRegion> {
        let m = self.maps.get_mut(i)?;
        let bytes = m.bytes_mut();
        Some(RawRegion {
            host: bytes.as_mut_ptr(),
            len: bytes.len(),
            base: MAP_BASE + ((i as u64) << 32),
            writable: true,
        })
    }

    /// Which region `len` bytes at `addr` are in, as [`Memory::slice`] (`write`: as
    /// [`Memory::slice_mut`]) finds them.
    #[inline]
    pub fn locate(&self, addr: u64, len: usize, write: bool) -> Result<Place, OutOfBounds> {
        self.place(addr, len, write)
    }

    #[inline(always)]
    fn place(&self, addr: u64, len: usize, write: bool) -> Result<Place, OutOfBounds> {
        if let Some(o) = within(addr, len, STACK_BASE, self.stack.len()) {
            return Ok(Place::Stack(o));
        }
        if let Some(o) = within(addr, len, MEM_BASE, self.mem.len())
            && (!write || self.mem_writable)
        {
            return Ok(Place::Mem(o));
        }
        if let Some(o) =
            within(addr, len, self.packet_base + self.meta as u64, self.end - self.meta)
        {
            return Ok(Place::Packet(self.meta + o));
        }
        if (MAP_BASE..MAP_HANDLE_BASE).contains(&addr) {
            let i = ((addr - MAP_BASE) >> 32) as usize;
            if let Some(m) = self.maps.get(i)
                && let Some(o) = within(addr, len, MAP_BASE + ((i as u64) << 32), m.byte_len())
            {
                return Ok(Place::Map(i, o));
            }
        }
        Err(OutOfBounds { addr, len, write })
    }

    /// The bytes at `addr` (checked).
    #[inline]
    pub fn slice(&self, addr: u64, len: usize) -> Result<&[u8], OutOfBounds> {
        Ok(match self.place(addr, len, false)? {
            Place::Stack(o) => &self.stack[o..o + len],
            Place::Mem(o) => &self.mem[o..o + len],
            Place::Packet(o) => &self.packet[o..o + len],
            Place::Map(i, o) => &self.maps[i].bytes()[o..o + len],
        })
    }

    /// The bytes at `addr`, writable (checked).
    #[inline]
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> Result<&mut [u8], OutOfBounds> {
        Ok(match self.place(addr, len, true)? {
            Place::Stack(o) => &mut self.stack[o..o + len],
            Place::Mem(o) => &mut self.mem[o..o + len],
            Place::Packet(o) => &mut self.packet[o..o + len],
            Place::Map(i, o) => &mut self.maps[i].bytes_mut()[o..o + len],
        })
    }

    /// Reads a little-endian value of `len` (1, 2, 4 or 8) bytes.
    #[inline(always)]
    pub fn load(&self, addr: u64, len: usize) -> Result<u64, OutOfBounds> {
        let s = self.slice(addr, len)?;
        let mut b = [0u8; 8];
        b[..len].copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }

    /// Writes the low `len` bytes of `value`, little-endian.
    #[inline(always)]
    pub fn store(&mut self, addr: u64, len: usize, value: u64) -> Result<(), OutOfBounds> {
        let s = self.slice_mut(addr, len)?;
        s.copy_from_slice(&value.to_le_bytes()[..len]);
        Ok(())
    }

    /// The packet from `data` to `data_end` (empty when the run has none).
    pub fn packet(&self) -> &[u8] {
        &self.packet[self.data..self.end]
    }

    /// The packet from `data` to `data_end`, writable.
    pub fn packet_mut(&mut self) -> &mut [u8] {
        &mut self.packet[self.data..self.end]
    }
}
