//! Free-frame pools: which frames of a queue's UMEM are neither with the kernel (FILL, RX, TX,
//! COMPLETION) nor in a batch being processed.
//!
//! The seed's OVS work measured four designs (§4.5.2) and this module keeps all four, so that
//! the optimisation figure (`benches/afxdp-steps.sh`) can reproduce what each bought:
//!
//! * [`PoolKind::Stack`] (`ptr_stack`, the default): an array of free addresses used as a
//!   stack; frames are taken from and given back at its top, so the frames in use are the
//!   ones most recently touched (warm in the cache), and a batch moves as one `memcpy`;
//! * [`PoolKind::Ring`] (`ptr_ring`): the same array as a FIFO, taken at the tail and given
//!   back at the head: frames go round the whole UMEM;
//! * [`PoolKind::List`] (`list_head`): a linked free list threaded through a per-frame `next`
//!   array: one dependent load per frame taken;
//! * [`PoolKind::SharedMutex`]: OVS's first design, one pool per port shared by the port's
//!   queue threads behind a mutex, taken and released for every batch of frames moved.
//!   (sift keeps one UMEM per queue even then; what the design costs is the lock, and that is
//!   what it measures.)
//!
//! A pool never holds more addresses than its UMEM has frames: giving back more (a frame given
//! back twice would be a bug of the caller) drops the extra ones rather than grow.

use std::sync::{Arc, Mutex};

/// Which free-frame pool a port's queues use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// `ptr_stack`: a per-queue array used as a stack (no lock, no atomics: one thread owns a
    /// queue).
    #[default]
    Stack,
    /// `ptr_ring`: a per-queue array used as a FIFO.
    Ring,
    /// `list_head`: a per-queue linked free list.
    List,
    /// One stack per port behind a mutex, shared by the port's queue threads.
    SharedMutex,
}

impl PoolKind {
    /// The name the command-line tools use (`stack`, `ring`, `list`, `mutex`).
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Stack => "stack",
            PoolKind::Ring => "ring",
            PoolKind::List => "list",
            PoolKind::SharedMutex => "mutex",
        }
    }

    /// The kind a name (see [`name`](Self::name)) stands for.
    pub fn from_name(name: &str) -> Option<PoolKind> {
        [PoolKind::Stack, PoolKind::Ring, PoolKind::List, PoolKind::SharedMutex]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// `ptr_stack`.
#[derive(Debug)]
pub(crate) struct PtrStack {
    addrs: Vec<u64>,
    cap: usize,
}

impl PtrStack {
    pub(crate) fn new(cap: usize) -> PtrStack {
        PtrStack { addrs: Vec::with_capacity(cap), cap }
    }

    fn get(&mut self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.addrs.len());
        let from = self.addrs.len() - n;
        out[..n].copy_from_slice(&self.addrs[from..]);
        self.addrs.truncate(from);
        n
    }

    fn put(&mut self, addrs: &[u64]) {
        let n = addrs.len().min(self.cap - self.addrs.len());
        self.addrs.extend_from_slice(&addrs[..n]);
    }
}

/// `ptr_ring`: a FIFO over a power-of-two array.
#[derive(Debug)]
pub(crate) struct PtrRing {
    slots: Box<[u64]>,
    /// Where the next frame is given back (free-running).
    head: usize,
    /// Where the next frame is taken (free-running).
    tail: usize,
    cap: usize,
}

impl PtrRing {
    fn new(cap: usize) -> PtrRing {
        PtrRing { slots: vec![0; cap.next_power_of_two()].into(), head: 0, tail: 0, cap }
    }

    fn len(&self) -> usize {
        self.head.wrapping_sub(self.tail)
    }

    fn get(&mut self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.len());
        let mask = self.slots.len() - 1;
        for slot in &mut out[..n] {
            *slot = self.slots[self.tail & mask];
            self.tail = self.tail.wrapping_add(1);
        }
        n
    }

    fn put(&mut self, addrs: &[u64]) {
        let n = addrs.len().min(self.cap - self.len());
        let mask = self.slots.len() - 1;
        for &a in &addrs[..n] {
            self.slots[self.head & mask] = a;
            self.head = self.head.wrapping_add(1);
        }
    }
}

/// `list_head`: free frames linked through `next`, by frame number.
#[derive(Debug)]
pub(crate) struct ListPool {
    next: Box<[u32]>,
    /// Whether a frame is on the list (to refuse a second give-back, which would make a loop).
    on_list: Box<[bool]>,
    head: u32,
    len: usize,
    /// `log2(frame size)`.
    shift: u32,
}

const NIL: u32 = u32::MAX;

impl ListPool {
    fn new(frames: usize, frame_size: u32) -> ListPool {
        ListPool {
            next: vec![NIL; frames].into(),
            on_list: vec![false; frames].into(),
            head: NIL,
            len: 0,
            shift: frame_size.trailing_zeros(),
        }
    }

    fn get(&mut self, out: &mut [u64]) -> usize {
        let mut n = 0;
        while n < out.len() && self.head != NIL {
            let i = self.head as usize;
            out[n] = (i as u64) << self.shift;
            self.head = self.next[i];
            self.on_list[i] = false;
            self.len -= 1;
            n += 1;
        }
        n
    }

    fn put(&mut self, addrs: &[u64]) {
        for &a in addrs {
            let i = (a >> self.shift) as usize;
            if i < self.next.len() && !self.on_list[i] {
                self.next[i] = self.head;
                self.on_list[i] = true;
                self.head = i as u32;
                self.len += 1;
            }
        }
    }
}

/// One queue's pool.
#[derive(Debug)]
pub(crate) enum Pool {
    Stack(PtrStack),
    Ring(PtrRing),
    List(ListPool),
    /// The port's stacks (one per queue: the frames stay the queue's), all behind one lock,
    /// and which one is this queue's.
    Shared(Arc<Mutex<Vec<PtrStack>>>, usize),
}

impl Pool {
    /// An empty pool for a UMEM of `frames` frames of `frame_size` bytes. For
    /// [`PoolKind::SharedMutex`], `shared` is the port's stacks and this queue's index in them
    /// (given by the caller, who makes one per port).
    pub(crate) fn new(
        kind: PoolKind,
        frames: usize,
        frame_size: u32,
        shared: Option<(Arc<Mutex<Vec<PtrStack>>>, usize)>,
    ) -> Pool {
        match (kind, shared) {
            (PoolKind::Ring, _) => Pool::Ring(PtrRing::new(frames)),
            (PoolKind::List, _) => Pool::List(ListPool::new(frames, frame_size)),
            (PoolKind::SharedMutex, Some((stacks, i))) => Pool::Shared(stacks, i),
            (PoolKind::Stack | PoolKind::SharedMutex, _) => Pool::Stack(PtrStack::new(frames)),
        }
    }

    /// Takes up to `out.len()` free frames; returns how many.
    pub(crate) fn get(&mut self, out: &mut [u64]) -> usize {
        match self {
            Pool::Stack(s) => s.get(out),
            Pool::Ring(r) => r.get(out),
            Pool::List(l) => l.get(out),
            Pool::Shared(stacks, i) => with_stack(stacks, *i, |s| s.get(out)).unwrap_or(0),
        }
    }

    /// Gives frames back (their base addresses).
    pub(crate) fn put(&mut self, addrs: &[u64]) {
        if addrs.is_empty() {
            return;
        }
        match self {
            Pool::Stack(s) => s.put(addrs),
            Pool::Ring(r) => r.put(addrs),
            Pool::List(l) => l.put(addrs),
            Pool::Shared(stacks, i) => {
                with_stack(stacks, *i, |s| s.put(addrs));
            }
        }
    }

    /// How many frames are free.
    pub(crate) fn len(&self) -> usize {
        match self {
            Pool::Stack(s) => s.addrs.len(),
            Pool::Ring(r) => r.len(),
            Pool::List(l) => l.len,
            Pool::Shared(stacks, i) => {
                let guard = stacks.lock().unwrap_or_else(|p| p.into_inner());
                guard.get(*i).map_or(0, |s| s.addrs.len())
            }
        }
    }
}

/// Runs `f` on stack `i` under the lock (a poisoned lock is taken over: the stacks are plain
/// data, consistent after any panic between two of their calls).
fn with_stack<T>(
    stacks: &Mutex<Vec<PtrStack>>,
    i: usize,
    f: impl FnOnce(&mut PtrStack) -> T,
) -> Option<T> {
    let mut guard = stacks.lock().unwrap_or_else(|p| p.into_inner());
    guard.get_mut(i).map(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(frames: usize) -> Vec<Pool> {
        let shared = Arc::new(Mutex::new(vec![PtrStack::new(frames), PtrStack::new(frames)]));
        [PoolKind::Stack, PoolKind::Ring, PoolKind::List, PoolKind::SharedMutex]
            .into_iter()
            .map(|k| Pool::new(k, frames, 2048, Some((shared.clone(), 1))))
            .collect()
    }

    #[test]
    fn every_pool_gives_back_what_it_was_given_and_no_more() {
        for mut pool in all(8) {
            let addrs: Vec<u64> = (0..8).map(|i| i * 2048).collect();
            pool.put(&addrs[..5]);
            assert_eq!(pool.len(), 5, "{pool:?}");
            let mut out = [0u64; 3];
            assert_eq!(pool.get(&mut out), 3);
            pool.put(&addrs[5..]);
            assert_eq!(pool.len(), 5);
            let mut rest = [0u64; 16];
            assert_eq!(pool.get(&mut rest), 5);
            assert_eq!(pool.get(&mut rest), 0, "empty");
            let mut got: Vec<u64> = out.iter().chain(&rest[..5]).copied().collect();
            got.sort();
            assert_eq!(got, addrs, "{pool:?}");
            // Never more than the UMEM's frames.
            pool.put(&addrs);
            pool.put(&addrs);
            assert_eq!(pool.len(), 8, "{pool:?}");
        }
    }

    #[test]
    fn orders() {
        let mut pools = all(4);
        let mut out = [0u64; 2];
        for pool in &mut pools {
            pool.put(&[0, 2048, 4096]);
            pool.get(&mut out);
        }
        // Stack: the last given back first; ring: the first; list: the last (pushed at the head).
        assert_eq!(pools[0].get(&mut out[..1]), 1);
        assert_eq!(out[0], 0, "stack");
        pools[1].get(&mut out[..1]);
        assert_eq!(out[0], 4096, "ring");
        pools[2].get(&mut out[..1]);
        assert_eq!(out[0], 0, "list");
        assert_eq!(PoolKind::from_name("mutex"), Some(PoolKind::SharedMutex));
        assert_eq!(PoolKind::from_name("heap"), None);
    }
}
