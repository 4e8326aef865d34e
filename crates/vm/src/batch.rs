//! Many packets per call: the batch form every engine takes.
//!
//! On a capture much larger than the CPU caches, filtering one packet mostly means waiting for
//! its first bytes to arrive from memory, and calling a filter per packet adds a fixed cost on
//! top. A batch lets an engine pay its setup once per batch and ask for the bytes of packets a
//! few places ahead while it filters the current one (the JIT with `prefetcht0` from its
//! generated loop, the interpreter with a plain load, as it may not use `unsafe`).
//!
//! [`PacketRef`] is the descriptor both engines read. It keeps the packet's address and length
//! as plain integers at fixed offsets besides the slice, because the layout of a Rust slice
//! reference is unspecified and generated code must read them.

use std::mem::{offset_of, size_of};

/// One packet of a batch: its captured bytes and its length on the wire.
///
/// Built with [`PacketRef::new`]; the fields are private so that the copies generated code
/// reads ([`PacketRef::ADDR_OFFSET`], [`PacketRef::CAPLEN_OFFSET`]) always describe the slice.
/// A packet longer than `u32::MAX` bytes (which no capture format can hold) is cut to that
/// length, as the single-packet entry of generated code would see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct PacketRef<'a> {
    data: &'a [u8],
    /// `data`'s address, for generated code.
    addr: usize,
    /// `data.len()`, for generated code.
    caplen: u32,
    wire_len: u32,
}

impl<'a> PacketRef<'a> {
    /// The captured bytes `data` of a packet that was `wire_len` bytes long on the wire.
    #[inline]
    pub fn new(data: &'a [u8], wire_len: u32) -> PacketRef<'a> {
        let data = data.get(..u32::MAX as usize).unwrap_or(data);
        PacketRef {
            data,
            addr: data.as_ptr().expose_provenance(),
            caplen: data.len() as u32,
            wire_len,
        }
    }

    /// The captured bytes.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The length on the wire.
    #[inline]
    pub fn wire_len(&self) -> u32 {
        self.wire_len
    }
}

impl PacketRef<'_> {
    /// The size of a descriptor in bytes: consecutive descriptors of a `&[PacketRef]` are this
    /// far apart.
    pub const SIZE: usize = size_of::<PacketRef<'static>>();
    /// Where, in a descriptor, the packet's address is (a native-endian `usize`).
    pub const ADDR_OFFSET: usize = offset_of!(PacketRef<'static>, addr);
    /// Where, in a descriptor, the captured length is (a native-endian `u32`).
    pub const CAPLEN_OFFSET: usize = offset_of!(PacketRef<'static>, caplen);
    /// Where, in a descriptor, the wire length is (a native-endian `u32`).
    pub const WIRE_LEN_OFFSET: usize = offset_of!(PacketRef<'static>, wire_len);
}

impl<'a> From<(&'a [u8], u32)> for PacketRef<'a> {
    fn from((data, wire_len): (&'a [u8], u32)) -> PacketRef<'a> {
        PacketRef::new(data, wire_len)
    }
}

/// Loads the first two cache lines' worth of each packet's headers (bytes 0 and 63), so that
/// their cache misses overlap rather than each filter run waiting for its own: safe code's
/// prefetch. Batch loops call it on groups of [`TOUCH_GROUP`] packets.
pub fn touch(packets: &[PacketRef<'_>]) {
    let mut touched = 0u8;
    for p in packets {
        let data = p.data();
        if let Some(&b) = data.first() {
            touched ^= b;
        }
        if let Some(&b) = data.get(63) {
            touched ^= b;
        }
    }
    std::hint::black_box(touched);
}

/// How many packets the interpreter's batch loop loads the headers of before filtering them.
/// Measured on a 114 MB capture (`crates/jit/examples/batch_figures.rs`).
pub const TOUCH_GROUP: usize = 64;
