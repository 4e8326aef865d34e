//! Once warmed up, the generator allocates (almost) nothing per frame when the caller reuses
//! its buffer: the benchmarks generate millions of frames and should measure the filter, not
//! the allocator. Counted with a wrapping global allocator, alone in this test binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use sift_gen::{Config, Generator, Link};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// GlobalAlloc contract is exactly System's; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's (forwarded unchanged).
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` through `alloc`/`realloc` above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's (forwarded unchanged).
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_allocates_almost_nothing() {
    for link in [Link::Ethernet, Link::Raw] {
        let cfg = Config { malformed: 0.01, truncate: 0.01, ..Config::with_link(link) };
        let mut g = Generator::new(1, cfg);
        let mut buf = Vec::with_capacity(65_536);
        for _ in 0..20_000 {
            g.next_frame(&mut buf);
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(before > 0, "the counting allocator is not in use");
        let n = 100_000;
        for _ in 0..n {
            g.next_frame(&mut buf);
        }
        let allocs = ALLOCATIONS.load(Ordering::Relaxed) - before;
        // A handful of buffers may still grow to a new largest frame; nothing per frame.
        assert!(allocs < 50, "{link:?}: {allocs} allocations for {n} frames");
    }
}
