//! The consumer side of a `BPF_MAP_TYPE_RINGBUF` map: records an eBPF program submitted, read
//! in user space without a system call per record.
//!
//! A program in the kernel (pf's rule set logging a packet) reserves a record in the ring,
//! fills it and submits it (or discards it); user space maps the ring and reads what was
//! submitted, in order. The kernel's layout (`kernel/bpf/ringbuf.c`), which this module
//! follows as libbpf does:
//!
//! * offset 0 of the map: one page holding the consumer position (a `u64`), the only part user
//!   space writes: mapped read-write;
//! * offset one page: one page holding the producer position, then the data area, mapped
//!   read-only. The kernel maps the data pages twice in a row, so a record that wraps past the
//!   end of the ring reads as one contiguous slice;
//! * each record: an 8-byte header (`u32` length with the *busy* bit 31 while the producer
//!   still writes and the *discard* bit 30 for a discarded record, then the page offset the
//!   kernel uses), the data, padding to 8 bytes. Positions only grow; a position's place in
//!   the ring is `pos & (size - 1)`.
//!
//! [`RingBuf::consume`] reads from the consumer position up to the producer position, stops at
//! a record still busy, skips discarded ones, hands each other record's bytes to the caller
//! and then moves the consumer position past it (a release store: the kernel may reuse the
//! space from then on). [`RingBuf::wait`] sleeps in `poll` on the map until the kernel signals
//! new data.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::bpf;

/// `BPF_RINGBUF_BUSY_BIT`: the producer has not committed the record yet.
const BUSY_BIT: u32 = 1 << 31;
/// `BPF_RINGBUF_DISCARD_BIT`: the producer discarded the record.
const DISCARD_BIT: u32 = 1 << 30;
/// `BPF_RINGBUF_HDR_SZ`.
const HDR_SIZE: u64 = 8;

/// A mapped ring buffer map, read from user space.
#[derive(Debug)]
pub struct RingBuf {
    map: OwnedFd,
    /// The consumer page (read-write, one page).
    consumer: NonNull<u8>,
    /// The producer page and the data area twice (read-only).
    producer: NonNull<u8>,
    page: usize,
    /// The data area's size: a power of two.
    size: u64,
}

// SAFETY: the mappings belong to the RingBuf alone and are only read (or, the consumer
// position, written) through `&mut self` or atomics.
unsafe impl Send for RingBuf {}

fn page_size() -> usize {
    // SAFETY: plain call without pointers.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

/// `mmap(NULL, len, prot, MAP_SHARED, fd, offset)`.
fn map_shared(
    fd: &OwnedFd,
    len: usize,
    prot: libc::c_int,
    offset: usize,
) -> io::Result<NonNull<u8>> {
    // SAFETY: a new mapping chosen by the kernel (no address given), so nothing existing is
    // replaced; the result is checked before use.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned NULL"))
}

impl RingBuf {
    /// Maps the ring buffer map `map` (a descriptor of it is kept: the ring lives as long as
    /// the `RingBuf`). `InvalidInput` when it is not a ring buffer map.
    pub fn new(map: impl AsFd) -> io::Result<RingBuf> {
        let map = map.as_fd().try_clone_to_owned()?;
        let info = bpf::map_info(&map)?;
        if info.map_type != bpf::BPF_MAP_TYPE_RINGBUF {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("map {} is of type {}, not a ring buffer", info.id, info.map_type),
            ));
        }
        let page = page_size();
        let size = u64::from(info.max_entries);
        let consumer = map_shared(&map, page, libc::PROT_READ | libc::PROT_WRITE, 0)?;
        let producer = match map_shared(&map, page + 2 * size as usize, libc::PROT_READ, page) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the consumer page was mapped just above with this length.
                unsafe { libc::munmap(consumer.as_ptr().cast(), page) };
                return Err(e);
            }
        };
        Ok(RingBuf { map, consumer, producer, page, size })
    }

    /// The consumer position (the kernel reads it too).
    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer page is mapped for as long as `self` lives, page-aligned, and
        // its first 8 bytes are the consumer position, which the kernel accesses atomically.
        unsafe { &*self.consumer.as_ptr().cast::<AtomicU64>() }
    }

    /// The producer position (written by the kernel).
    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: as above, for the producer page (read-only: only loads are made).
        unsafe { &*self.producer.as_ptr().cast::<AtomicU64>() }
    }

    /// The record header at position `pos`.
    fn header(&self, pos: u64) -> &AtomicU32 {
        let at = self.page + (pos & (self.size - 1)) as usize;
        // SAFETY: `at` is inside the data area (offset below `size`, after the producer
        // page), 8-aligned (positions advance in multiples of 8), and the header's length word
        // is written atomically by the kernel.
        unsafe { &*self.producer.as_ptr().add(at).cast::<AtomicU32>() }
    }

    /// Bytes submitted (or being written) and not consumed yet.
    pub fn pending(&self) -> u64 {
        let cons = self.consumer_pos().load(Ordering::Acquire);
        self.producer_pos().load(Ordering::Acquire).saturating_sub(cons)
    }

    /// Reads every committed record, in order, handing each one's bytes to `f` and then
    /// releasing its space to the kernel; stops at a record the producer has not committed yet
    /// (a later call reads it). Discarded records are skipped. Returns how many records `f`
    /// was given.
    pub fn consume(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let mut delivered = 0;
        let mut cons = self.consumer_pos().load(Ordering::Acquire);
        loop {
            let prod = self.producer_pos().load(Ordering::Acquire);
            let mut progressed = false;
            while cons < prod {
                let len = self.header(cons).load(Ordering::Acquire);
                if len & BUSY_BIT != 0 {
                    return delivered;
                }
                let data_len = u64::from(len & !(BUSY_BIT | DISCARD_BIT));
                if data_len + HDR_SIZE > self.size {
                    // Not a record the kernel could have written: stop rather than read past.
                    return delivered;
                }
                if len & DISCARD_BIT == 0 {
                    let at = self.page + ((cons & (self.size - 1)) + HDR_SIZE) as usize;
                    // SAFETY: the record's data is committed (no busy bit, loaded with acquire
                    // ordering after the producer's release), lies within the mapping (the data
                    // area is mapped twice, so `at + data_len` stays below `page + 2 * size`),
                    // and the kernel does not write it until the consumer position passes it,
                    // which happens only after `f` returns.
                    let record = unsafe {
                        std::slice::from_raw_parts(
                            self.producer.as_ptr().add(at),
                            data_len as usize,
                        )
                    };
                    f(record);
                    delivered += 1;
                }
                cons += (data_len + HDR_SIZE).next_multiple_of(8);
                self.consumer_pos().store(cons, Ordering::Release);
                progressed = true;
            }
            if !progressed {
                return delivered;
            }
        }
    }

    /// Waits until the kernel signals new data or `timeout` passes (`poll` on the map);
    /// `Ok(true)` when there is something to [`consume`](RingBuf::consume). A signal ends the
    /// wait early with `Ok(false)`.
    pub fn wait(&self, timeout: Duration) -> io::Result<bool> {
        if self.pending() > 0 {
            return Ok(true);
        }
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        let mut pfd = libc::pollfd { fd: self.map.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one live pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
        }
        Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
    }

    /// The map's descriptor.
    pub fn map(&self) -> &OwnedFd {
        &self.map
    }
}

impl Drop for RingBuf {
    fn drop(&mut self) {
        // SAFETY: both regions were mapped in `new` with these lengths and are unmapped once;
        // nothing borrowed from them outlives `self`.
        unsafe {
            libc::munmap(self.consumer.as_ptr().cast(), self.page);
            libc::munmap(self.producer.as_ptr().cast(), self.page + 2 * self.size as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_ebpf::{asm, encode_program};

    /// An XDP program that reserves an 8-byte record, copies the packet's first 8 bytes into it,
    /// and submits it, or discards it when the first byte is odd.
    fn logger(map_fd: i32) -> Vec<u8> {
        let text = format!(
            "
            ldxw %r2, [%r1+0]
            ldxw %r3, [%r1+4]
            mov %r4, %r2
            add %r4, 8
            jgt %r4, %r3, out
            ldxdw %r6, [%r2+0]
            lddw %r1, map_fd({map_fd})
            mov %r2, 8
            mov %r3, 0
            call 131
            jeq %r0, 0, out
            stxdw [%r0+0], %r6
            mov %r1, %r0
            mov %r2, 0
            and %r6, 1
            jne %r6, 0, drop
            call 132
            ja out
            drop:
            call 133
            out:
            mov %r0, 2
            exit
            "
        );
        let insns = asm::assemble(&text).unwrap();
        encode_program(&insns).iter().flat_map(|i| i.encode()).collect()
    }

    #[test]
    fn records_in_order_across_wraps_discarded_ones_skipped() {
        let map = match bpf::map_create_with(&bpf::MapCreate {
            map_type: bpf::BPF_MAP_TYPE_RINGBUF,
            key_size: 0,
            value_size: 0,
            max_entries: 4096,
            map_flags: 0,
            name: "sift_ringbuf",
        }) {
            Ok(m) => m,
            Err(e) if bpf::is_unavailable(&e) => {
                return sift_testkit::oracle_missing("kernel bpf(2) ring buffer", e).unwrap_or(());
            }
            Err(e) => panic!("{e}"),
        };
        let prog = bpf::prog_load_with(
            &logger(map.as_raw_fd()),
            bpf::ProgLoad {
                expected_attach_type: bpf::BPF_XDP,
                ..bpf::ProgLoad::new(bpf::BPF_PROG_TYPE_XDP)
            },
        )
        .unwrap();
        let mut ring = RingBuf::new(&map).unwrap();
        assert!(!ring.wait(Duration::ZERO).unwrap(), "empty at first");
        assert_eq!(ring.consume(|_| panic!("no record yet")), 0);
        let mut pkt = [0u8; 64];
        let mut got = Vec::new();
        let mut next = 0u64;
        // 16 bytes a record, 256 fit: 3000 packets wrap the ring many times.
        for round in 0..30 {
            for _ in 0..100 {
                pkt[..8].copy_from_slice(&next.to_le_bytes());
                next += 1;
                bpf::prog_test_run(&prog, &pkt, &[], 1).unwrap();
            }
            assert!(ring.wait(Duration::from_secs(1)).unwrap(), "round {round}");
            ring.consume(|r| got.push(u64::from_le_bytes(r.try_into().unwrap())));
            assert_eq!(ring.pending(), 0);
        }
        let want: Vec<u64> = (0..next).filter(|n| n % 2 == 0).collect();
        let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            got == want,
            "{} records for {}; first wrong: {first_wrong:?}",
            got.len(),
            want.len()
        );
        // Not a ring buffer.
        let array = bpf::map_create(2, 4, 4, 1, 0).unwrap();
        assert_eq!(RingBuf::new(&array).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
