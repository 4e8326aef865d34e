//! The four rings of an `AF_XDP` socket, mapped, as safe producer and consumer types.
//!
//! A ring is a power-of-two array of entries plus a producer index, a consumer index and a
//! flags word, in one mapping shared with the kernel. Indices run freely and wrap at 2^32; an
//! entry's slot is `index & (size - 1)`. User space is the producer of FILL and TX
//! ([`ProdRing`]) and the consumer of RX and COMPLETION ([`ConsRing`]). Both types work in
//! batches: [`ProdRing::reserve`] slots, write them, [`ProdRing::submit`]; [`ConsRing::peek`]
//! entries, read them, [`ConsRing::release`].

use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{Desc, MmapOffsets, RingKind, RingOffsets, XDP_RING_NEED_WAKEUP};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for super::Desc {}
}

/// What a ring holds: a UMEM address (`u64`: FILL, COMPLETION) or a [`Desc`] (RX, TX).
pub trait RingItem: Copy + Default + sealed::Sealed {}
impl RingItem for u64 {}
impl RingItem for Desc {}

/// One mapped ring: where its parts are.
#[derive(Debug)]
struct Mapped<T> {
    base: NonNull<u8>,
    len: usize,
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    entries: NonNull<T>,
    /// `size - 1`.
    mask: u32,
    /// Whether `Drop` unmaps (a ring over memory the tests own does not).
    owned: bool,
}

impl<T: RingItem> Mapped<T> {
    /// Maps `kind`'s ring of `size` entries from the socket, as `offsets` lays it out.
    fn map(fd: impl AsFd, kind: RingKind, size: u32, offsets: &MmapOffsets) -> io::Result<Self> {
        if !size.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} ring of {size} entries: not a power of two", kind.name()),
            ));
        }
        let off = offsets.of(kind);
        let len = usize::try_from(off.desc)
            .ok()
            .and_then(|d| d.checked_add(size as usize * std::mem::size_of::<T>()))
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a new shared mapping of the socket's ring chosen by the kernel (no address
        // given); the kernel checks the length against the ring it allocated and refuses a
        // ring that was not set up. The result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_fd().as_raw_fd(),
                kind.page_offset() as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        // SAFETY: `base` maps `len` bytes, owned by the new value (unmapped by its Drop).
        unsafe { Self::from_raw(base, len, &off, size, true) }
    }

    /// A ring over `len` bytes at `base` laid out as `off` says.
    ///
    /// # Safety
    ///
    /// `base..base + len` is mapped, readable and writable for the life of the value, and only
    /// the ring's other side (the kernel) accesses it otherwise; with `owned`, it is a mapping
    /// the value may unmap on drop.
    unsafe fn from_raw(
        base: NonNull<u8>,
        len: usize,
        off: &RingOffsets,
        size: u32,
        owned: bool,
    ) -> io::Result<Self> {
        let word = |at: u64| -> io::Result<NonNull<AtomicU32>> {
            let at = usize::try_from(at)
                .ok()
                .filter(|&a| a % 4 == 0 && a.checked_add(4).is_some_and(|end| end <= len));
            let at = at.ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
            // SAFETY: `at + 4 <= len`, so the pointer stays inside the mapping.
            Ok(unsafe { base.add(at) }.cast())
        };
        let desc = usize::try_from(off.desc)
            .ok()
            .filter(|&d| {
                let bytes = (size as usize).checked_mul(std::mem::size_of::<T>());
                d % std::mem::align_of::<T>() == 0
                    && bytes.and_then(|b| d.checked_add(b)).is_some_and(|end| end <= len)
            })
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        Ok(Mapped {
            base,
            len,
            producer: word(off.producer)?,
            consumer: word(off.consumer)?,
            flags: word(off.flags)?,
            // SAFETY: `desc + size * size_of::<T>() <= len`: the entries lie in the mapping.
            entries: unsafe { base.add(desc) }.cast(),
            mask: size - 1,
            owned,
        })
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: a 4-aligned word inside the mapping (checked in `from_raw`), which lives as
        // long as `self`; both sides access it atomically only.
        unsafe { self.producer.as_ref() }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { self.consumer.as_ref() }
    }

    fn flags(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { self.flags.as_ref() }
    }

    /// Writes the entry at free-running index `idx`.
    fn write(&mut self, idx: u32, item: T) {
        // SAFETY: the slot `idx & mask` is below the ring's size, so inside the entries
        // (checked in `from_raw`); the caller (a producer) owns the slot: the kernel reads it
        // only after the release store of a producer index past it.
        unsafe { self.entries.as_ptr().add((idx & self.mask) as usize).write(item) }
    }

    /// Reads the entry at free-running index `idx`.
    fn read(&self, idx: u32) -> T {
        // SAFETY: as in `write`; the caller (a consumer) loaded a producer index past `idx`
        // with acquire ordering, so the kernel's write of the slot is visible, and the kernel
        // does not write it again before the consumer index passes it.
        unsafe { self.entries.as_ptr().add((idx & self.mask) as usize).read() }
    }

    fn size(&self) -> u32 {
        self.mask + 1
    }
}

impl<T> Drop for Mapped<T> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: unmapping exactly the region mapped in `map`; no borrow of it outlives
            // self.
            unsafe {
                libc::munmap(self.base.as_ptr().cast(), self.len);
            }
        }
    }
}

/// A ring user space produces into: FILL ([`FillRing`]) or TX ([`TxRing`]).
#[derive(Debug)]
pub struct ProdRing<T> {
    ring: Mapped<T>,
    /// The producer index as published.
    prod: u32,
    /// The consumer index last seen, plus the ring's size: `cached_cons - prod` slots are free
    /// for sure.
    cached_cons: u32,
    /// Slots reserved by the last `reserve` and not submitted yet.
    reserved: u32,
    _kind: PhantomData<T>,
}

/// A ring user space consumes from: RX ([`RxRing`]) or COMPLETION ([`CompRing`]).
#[derive(Debug)]
pub struct ConsRing<T> {
    ring: Mapped<T>,
    /// The consumer index as published.
    cons: u32,
    /// The producer index last seen: `cached_prod - cons` entries are ready for sure.
    cached_prod: u32,
    /// Entries handed out by the last `peek` and not released yet.
    peeked: u32,
    _kind: PhantomData<T>,
}

/// The FILL ring: UMEM addresses of empty frames for the kernel to receive into.
pub type FillRing = ProdRing<u64>;
/// The TX ring: frames to send.
pub type TxRing = ProdRing<Desc>;
/// The RX ring: received frames.
pub type RxRing = ConsRing<Desc>;
/// The COMPLETION ring: addresses of frames the kernel has sent.
pub type CompRing = ConsRing<u64>;

// SAFETY: the mapping belongs to the ring value alone (the kernel is the other side); moving
// it to another thread moves the only user-space handle on it.
unsafe impl<T: RingItem> Send for ProdRing<T> {}
// SAFETY: as for ProdRing.
unsafe impl<T: RingItem> Send for ConsRing<T> {}

impl<T: RingItem> ProdRing<T> {
    fn new(ring: Mapped<T>) -> Self {
        let prod = ring.producer().load(Ordering::Relaxed);
        let cached_cons = ring.consumer().load(Ordering::Acquire).wrapping_add(ring.size());
        ProdRing { ring, prod, cached_cons, reserved: 0, _kind: PhantomData }
    }

    /// The number of entries.
    pub fn size(&self) -> u32 {
        self.ring.size()
    }

    /// How many slots are free, looking at the kernel's consumer index only when the cached
    /// one shows fewer than `want`.
    pub fn free(&mut self, want: u32) -> u32 {
        let free = self.cached_cons.wrapping_sub(self.prod);
        if free >= want {
            return free;
        }
        self.cached_cons = self.ring.consumer().load(Ordering::Acquire).wrapping_add(self.size());
        self.cached_cons.wrapping_sub(self.prod)
    }

    /// Reserves up to `n` slots (fewer when fewer are free) and returns how many; they are
    /// written with [`write`](Self::write) and published with [`submit`](Self::submit). A
    /// second `reserve` before `submit` replaces the first.
    pub fn reserve(&mut self, n: u32) -> u32 {
        self.reserved = n.min(self.free(n));
        self.reserved
    }

    /// Writes the `i`-th reserved slot; `false` (nothing written) when `i` is not below what
    /// [`reserve`](Self::reserve) returned.
    pub fn write(&mut self, i: u32, item: T) -> bool {
        if i >= self.reserved {
            return false;
        }
        self.ring.write(self.prod.wrapping_add(i), item);
        true
    }

    /// Publishes the first `n` reserved slots to the kernel (release store of the producer
    /// index; at most what was reserved) and gives the rest of the reservation up.
    pub fn submit(&mut self, n: u32) {
        let n = n.min(self.reserved);
        self.reserved = 0;
        if n == 0 {
            return;
        }
        self.prod = self.prod.wrapping_add(n);
        self.ring.producer().store(self.prod, Ordering::Release);
    }

    /// Reserves, writes and submits as many of `items` as fit; returns how many.
    pub fn produce(&mut self, items: &[T]) -> usize {
        let n = self.reserve(u32::try_from(items.len()).unwrap_or(u32::MAX));
        for (i, item) in items.iter().take(n as usize).enumerate() {
            self.ring.write(self.prod.wrapping_add(i as u32), *item);
        }
        self.submit(n);
        n as usize
    }

    /// Entries submitted that the kernel has not consumed yet (reads its consumer index).
    pub fn pending(&self) -> u32 {
        self.prod.wrapping_sub(self.ring.consumer().load(Ordering::Acquire))
    }

    /// Whether the kernel asks for a system call to go on ([`XDP_RING_NEED_WAKEUP`]; only
    /// set when bound with `XDP_USE_NEED_WAKEUP`).
    pub fn needs_wakeup(&self) -> bool {
        self.ring.flags().load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }
}

impl<T: RingItem> ConsRing<T> {
    fn new(ring: Mapped<T>) -> Self {
        let cons = ring.consumer().load(Ordering::Relaxed);
        let cached_prod = ring.producer().load(Ordering::Acquire);
        ConsRing { ring, cons, cached_prod, peeked: 0, _kind: PhantomData }
    }

    /// The number of entries.
    pub fn size(&self) -> u32 {
        self.ring.size()
    }

    /// How many entries are ready, looking at the kernel's producer index only when the cached
    /// one shows fewer than `want`.
    pub fn available(&mut self, want: u32) -> u32 {
        let ready = self.cached_prod.wrapping_sub(self.cons);
        if ready >= want {
            return ready;
        }
        self.cached_prod = self.ring.producer().load(Ordering::Acquire);
        self.cached_prod.wrapping_sub(self.cons)
    }

    /// Takes up to `n` ready entries (fewer when fewer are ready) and returns how many; they
    /// are read with [`read`](Self::read) and given back with [`release`](Self::release). A
    /// second `peek` before `release` replaces the first.
    pub fn peek(&mut self, n: u32) -> u32 {
        self.peeked = n.min(self.available(n));
        self.peeked
    }

    /// The `i`-th peeked entry; `None` when `i` is not below what [`peek`](Self::peek)
    /// returned.
    pub fn read(&self, i: u32) -> Option<T> {
        (i < self.peeked).then(|| self.ring.read(self.cons.wrapping_add(i)))
    }

    /// Gives the first `n` peeked entries back to the kernel (release store of the consumer
    /// index; at most what was peeked): it may reuse their slots from now on.
    pub fn release(&mut self, n: u32) {
        let n = n.min(self.peeked);
        self.peeked = 0;
        if n == 0 {
            return;
        }
        self.cons = self.cons.wrapping_add(n);
        self.ring.consumer().store(self.cons, Ordering::Release);
    }

    /// Peeks, copies into `out` and releases as many entries as are ready and fit; returns
    /// how many.
    pub fn consume(&mut self, out: &mut [T]) -> usize {
        let n = self.peek(u32::try_from(out.len()).unwrap_or(u32::MAX));
        for (i, slot) in out.iter_mut().take(n as usize).enumerate() {
            *slot = self.ring.read(self.cons.wrapping_add(i as u32));
        }
        self.release(n);
        n as usize
    }

    /// Whether the kernel sets [`XDP_RING_NEED_WAKEUP`] on this ring.
    pub fn needs_wakeup(&self) -> bool {
        self.ring.flags().load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }
}

impl FillRing {
    /// Maps the socket's FILL ring of `size` entries (the size given to
    /// [`set_ring_size`](super::set_ring_size)).
    pub fn map(fd: impl AsFd, size: u32, offsets: &MmapOffsets) -> io::Result<FillRing> {
        Ok(ProdRing::new(Mapped::map(fd, RingKind::Fill, size, offsets)?))
    }
}

impl TxRing {
    /// Maps the socket's TX ring of `size` entries.
    pub fn map(fd: impl AsFd, size: u32, offsets: &MmapOffsets) -> io::Result<TxRing> {
        Ok(ProdRing::new(Mapped::map(fd, RingKind::Tx, size, offsets)?))
    }
}

impl RxRing {
    /// Maps the socket's RX ring of `size` entries.
    pub fn map(fd: impl AsFd, size: u32, offsets: &MmapOffsets) -> io::Result<RxRing> {
        Ok(ConsRing::new(Mapped::map(fd, RingKind::Rx, size, offsets)?))
    }
}

impl CompRing {
    /// Maps the socket's COMPLETION ring of `size` entries.
    pub fn map(fd: impl AsFd, size: u32, offsets: &MmapOffsets) -> io::Result<CompRing> {
        Ok(ConsRing::new(Mapped::map(fd, RingKind::Completion, size, offsets)?))
    }
}

/// Rings over plain memory, with the kernel's side played by the test.
#[cfg(test)]
pub(super) mod fake {
    use super::*;

    /// Memory laid out as a ring: producer at 0, consumer at 64, flags at 128, entries at 192.
    pub struct FakeRing {
        mem: Vec<u64>,
    }

    pub const OFFSETS: RingOffsets =
        RingOffsets { producer: 0, consumer: 64, flags: 128, desc: 192 };

    impl FakeRing {
        pub fn new<T>(size: u32) -> FakeRing {
            let bytes = 192 + size as usize * std::mem::size_of::<T>();
            FakeRing { mem: vec![0; bytes.div_ceil(8)] }
        }

        fn word(&self, at: usize) -> &AtomicU32 {
            // SAFETY: `at` is one of the three index offsets, 4-aligned and inside `mem`.
            unsafe { AtomicU32::from_ptr(self.mem.as_ptr().cast::<u8>().add(at).cast_mut().cast()) }
        }

        pub fn producer(&self) -> &AtomicU32 {
            self.word(0)
        }

        pub fn consumer(&self) -> &AtomicU32 {
            self.word(64)
        }

        pub fn flags(&self) -> &AtomicU32 {
            self.word(128)
        }

        /// The entries as the kernel sees them.
        pub fn entry<T: RingItem>(&self, slot: usize) -> T {
            // SAFETY: the caller asks for a slot below the ring's size.
            unsafe { self.mem.as_ptr().cast::<u8>().add(192).cast::<T>().add(slot).read() }
        }

        pub fn set_entry<T: RingItem>(&mut self, slot: usize, v: T) {
            // SAFETY: as in `entry`.
            unsafe { self.mem.as_mut_ptr().cast::<u8>().add(192).cast::<T>().add(slot).write(v) }
        }

        fn mapped<T: RingItem>(&mut self, size: u32) -> Mapped<T> {
            let len = self.mem.len() * 8;
            let base = NonNull::new(self.mem.as_mut_ptr().cast::<u8>()).expect("non-null");
            // SAFETY: `mem` outlives the ring in every test (declared first, dropped last) and
            // is not unmapped (`owned` false).
            unsafe { Mapped::from_raw(base, len, &OFFSETS, size, false) }.expect("layout")
        }

        pub fn prod<T: RingItem>(&mut self, size: u32) -> ProdRing<T> {
            ProdRing::new(self.mapped(size))
        }

        pub fn cons<T: RingItem>(&mut self, size: u32) -> ConsRing<T> {
            ConsRing::new(self.mapped(size))
        }
    }
}
