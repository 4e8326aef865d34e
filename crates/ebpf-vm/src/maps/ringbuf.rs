//! The ring buffer behind `BPF_MAP_TYPE_RINGBUF` (`kernel/bpf/ringbuf.c`): records of an
//! 8-byte header (`len` with the busy bit 31 and the discard bit 30, then `pg_off`) and their
//! data, each rounded up to 8 bytes, between a consumer and a producer position that only grow.
//!
//! The kernel maps the data pages twice in a row so that a record that wraps is contiguous;
//! here the data area is followed by a mirror of the same size, a record that runs past the
//! end is written there by the program, and submitting or discarding it copies that part to
//! the start. The embedder reads committed records with [`drain`](crate::Map::ringbuf_drain).

/// `BPF_RINGBUF_BUSY_BIT`: reserved, not yet submitted or discarded.
pub const BUSY_BIT: u32 = 1 << 31;
/// `BPF_RINGBUF_DISCARD_BIT`: discarded (the consumer skips it).
pub const DISCARD_BIT: u32 = 1 << 30;
/// `BPF_RINGBUF_HDR_SZ`.
pub const HDR_SZ: u64 = 8;
/// `bpf_ringbuf_query` flag: bytes not yet consumed.
pub const BPF_RB_AVAIL_DATA: u64 = 0;
/// `bpf_ringbuf_query` flag: the data area's size.
pub const BPF_RB_RING_SIZE: u64 = 1;
/// `bpf_ringbuf_query` flag: the consumer position.
pub const BPF_RB_CONS_POS: u64 = 2;
/// `bpf_ringbuf_query` flag: the producer position.
pub const BPF_RB_PROD_POS: u64 = 3;
/// `bpf_ringbuf_output` flag: no wake-up (accepted, nothing to wake here).
pub const BPF_RB_NO_WAKEUP: u64 = 1;
/// `bpf_ringbuf_output` flag: forced wake-up (accepted, nothing to wake here).
pub const BPF_RB_FORCE_WAKEUP: u64 = 2;

/// The positions; the bytes are the map's value buffer (`2 × size`: data and mirror).
#[derive(Clone, Debug, Default)]
pub(crate) struct Ring {
    pub(crate) size: u64,
    pub(crate) cons: u64,
    pub(crate) prod: u64,
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap_or([0; 4]))
}

impl Ring {
    /// Reserves `size` data bytes: the data's offset in the buffer, or `None` when it does not
    /// fit (the kernel's `NULL`).
    pub(crate) fn reserve(&mut self, buf: &mut [u8], size: u64) -> Option<usize> {
        let len = (size + HDR_SZ).div_ceil(8) * 8;
        if len > self.size {
            return None;
        }
        let new_prod = self.prod + len;
        // The kernel refuses when the new producer position would be `size` or more ahead of
        // the consumer (`new_prod_pos - cons_pos > rb->mask`).
        if new_prod - self.cons > self.size - 1 {
            return None;
        }
        let at = (self.prod % self.size) as usize;
        put_u32(buf, at, size as u32 | BUSY_BIT);
        put_u32(buf, at + 4, (at / 4096) as u32);
        self.prod = new_prod;
        Some(at + HDR_SZ as usize)
    }

    /// Submits (or discards) the record whose data starts at buffer offset `data`; `false`
    /// when no busy record starts there.
    pub(crate) fn commit(&mut self, buf: &mut [u8], data: usize, discard: bool) -> bool {
        let Some(at) = data.checked_sub(HDR_SZ as usize) else { return false };
        if at >= self.size as usize || at % 8 != 0 {
            return false;
        }
        let hdr = get_u32(buf, at);
        if hdr & BUSY_BIT == 0 {
            return false;
        }
        let len = u64::from(hdr & !(BUSY_BIT | DISCARD_BIT));
        let end = data as u64 + len;
        if end > 2 * self.size {
            // A header the program overwrote: no record of this ring.
            return false;
        }
        if end > self.size {
            // The wrapped part was written into the mirror.
            let (size, over) = (self.size as usize, (end - self.size) as usize);
            buf.copy_within(size..size + over, 0);
        }
        let hdr = (hdr & !BUSY_BIT) | if discard { DISCARD_BIT } else { 0 };
        put_u32(buf, at, hdr);
        true
    }

    /// The committed records from the consumer position on, up to the first still busy one;
    /// the consumer moves past them.
    pub(crate) fn drain(&mut self, buf: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while self.cons < self.prod {
            let at = (self.cons % self.size) as usize;
            let hdr = get_u32(buf, at);
            if hdr & BUSY_BIT != 0 {
                break;
            }
            let len = u64::from(hdr & !DISCARD_BIT);
            let total = (len + HDR_SZ).div_ceil(8) * 8;
            if total > self.prod - self.cons {
                // A header the program overwrote: the rest cannot be read.
                break;
            }
            if hdr & DISCARD_BIT == 0 {
                let record = (0..len)
                    .map(|k| buf[((self.cons + HDR_SZ + k) % self.size) as usize])
                    .collect();
                out.push(record);
            }
            self.cons += total;
        }
        out
    }

    /// `bpf_ringbuf_query`.
    pub(crate) fn query(&self, flags: u64) -> u64 {
        match flags {
            BPF_RB_AVAIL_DATA => self.prod - self.cons,
            BPF_RB_RING_SIZE => self.size,
            BPF_RB_CONS_POS => self.cons,
            BPF_RB_PROD_POS => self.prod,
            _ => 0,
        }
    }
}
