//! The fast path: a microflow cache in front of a megaflow cache in front of a slow path.
//!
//! This is OVS's userspace datapath (`dpif-netdev`) as the seed describes it: the exact-match
//! cache answers the packets of flows seen recently in one probe; the megaflow cache answers
//! whole aggregates with wildcarded entries installed from what the slow path consulted; a
//! miss goes up to the slow path ([`SlowPath::upcall`]), whose answer is installed in both.
//!
//! **Nothing stale.** The slow path is changed only through [`Datapath::update`], which first
//! credits the cached statistics to the slow path, then applies the change, then revalidates:
//! every megaflow is decided again ([`SlowPath::revalidate`]) and kept only if the new
//! decision needs no bit outside its mask (its actions replaced by the new ones), and the
//! microflow cache's generation is bumped so none of its entries is used again. A slow path
//! that cannot revalidate gets a flush.
//!
//! Statistics: every megaflow counts its hits (packets, bytes, when last used by the caller's
//! clock, [`Datapath::set_now`]); they reach the slow path's rules by
//! [`SlowPath::credit`] when an entry is evicted or removed, before every update, and on
//! [`Datapath::sync_stats`] (OVS's revalidators do the same in the background). The packet
//! that caused an upcall is counted by the slow path itself.

mod dump;
mod megaflow;
mod microflow;
mod probe;

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use crate::key::{FlowKey, FlowMask};
use crate::rules::{Actions, PortMap};
use crate::table::SlowPath;

pub use dump::{format_actions as format_dp_actions, format_key as format_dp_key};

use megaflow::{Megaflows, Removed};
use microflow::Microflows;

/// Where a lookup was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hit {
    /// The exact-match cache.
    Microflow,
    /// A megaflow.
    Megaflow,
    /// The slow path (an upcall).
    Miss,
}

/// The caches' sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Microflow entries (rounded up to a power of two, at most 2^24; 0 disables the cache).
    pub microflow_entries: usize,
    /// The most megaflows held at once; more evict the least recently hit (CLOCK).
    pub megaflow_limit: usize,
    /// The hash seed (`None`: a random one per datapath, so traffic cannot aim at chains).
    pub seed: Option<u64>,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig { microflow_entries: 8192, megaflow_limit: 65_536, seed: None }
    }
}

/// What the datapath has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Lookups answered by the microflow cache.
    pub microflow_hits: u64,
    /// Lookups answered by a megaflow.
    pub megaflow_hits: u64,
    /// Lookups that went to the slow path.
    pub misses: u64,
    /// Upcalls whose answer could not be cached.
    pub uncacheable: u64,
    /// Megaflows installed.
    pub installed: u64,
    /// Megaflows evicted for room.
    pub evicted: u64,
    /// Updates of the slow path.
    pub updates: u64,
    /// Megaflows kept by revalidation.
    pub revalidated_kept: u64,
    /// Megaflows removed by revalidation or flushes.
    pub removed: u64,
}

/// One megaflow, for dumps.
#[derive(Clone, Copy, Debug)]
pub struct MegaflowInfo<'a> {
    /// Its key (zero outside the mask).
    pub key: &'a FlowKey,
    /// Its mask.
    pub mask: &'a FlowMask,
    /// Its actions.
    pub actions: &'a Arc<Actions>,
    /// Packets it answered.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// When last hit, on the caller's clock (`None`: never).
    pub used: Option<u64>,
}

/// The caches and the slow path behind them.
#[derive(Debug)]
pub struct Datapath<S: SlowPath> {
    slow: S,
    micro: Microflows,
    mega: Megaflows,
    seed: u64,
    now: u64,
    counters: Counters,
    /// The answer of the last upcall that could not be cached (lookups hand out references).
    uncached: Arc<Actions>,
}

impl<S: SlowPath> Datapath<S> {
    /// A datapath in front of `slow`.
    pub fn new(slow: S, config: CacheConfig) -> Datapath<S> {
        let seed = config.seed.unwrap_or_else(|| RandomState::new().hash_one(0x5eed_u64));
        Datapath {
            slow,
            micro: Microflows::new(config.microflow_entries),
            mega: Megaflows::new(config.megaflow_limit, seed),
            seed,
            now: 0,
            counters: Counters::default(),
            uncached: Arc::new(Actions::drop()),
        }
    }

    /// Sets the clock megaflows record as "last used" (any monotonic unit; the dump reads it
    /// as nanoseconds). 0 is "never".
    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// The actions for the packet with `key` (and `frame`, for the slow path and the byte
    /// counts), and where they came from.
    pub fn lookup(&mut self, key: &FlowKey, frame: &[u8]) -> (&Arc<Actions>, Hit) {
        let bytes = frame.len() as u64;
        let hash = if self.micro.enabled() { key.hash(self.seed) } else { 0 };
        if let Some((slot, serial)) = self.micro.find(hash, key)
            && self.mega.live(slot, serial)
        {
            self.mega.hit(slot, bytes, self.now);
            self.counters.microflow_hits += 1;
            return (&self.mega.entry(slot).actions, Hit::Microflow);
        }
        if let Some(slot) = self.mega.lookup(key) {
            self.mega.hit(slot, bytes, self.now);
            self.micro.insert(hash, key, slot, self.mega.entry(slot).serial);
            self.counters.megaflow_hits += 1;
            return (&self.mega.entry(slot).actions, Hit::Megaflow);
        }
        self.counters.misses += 1;
        let up = self.slow.upcall(key, frame);
        if !up.cacheable {
            self.counters.uncacheable += 1;
            self.uncached = up.actions;
            return (&self.uncached, Hit::Miss);
        }
        let (slot, evicted) = self.mega.insert(key.masked(&up.mask), &up.mask, up.actions, up.tag);
        self.counters.installed += 1;
        if let Some(r) = evicted {
            self.counters.evicted += 1;
            self.credit(r);
        }
        self.micro.insert(hash, key, slot, self.mega.entry(slot).serial);
        (&self.mega.entry(slot).actions, Hit::Miss)
    }

    fn credit(&mut self, r: Removed) {
        if r.packets != 0 || r.bytes != 0 {
            self.slow.credit(r.tag, r.packets, r.bytes);
        }
    }

    /// The slow path (for reading: sync the statistics first to see cached hits).
    pub fn slow_path(&self) -> &S {
        &self.slow
    }

    /// Changes the slow path (rules added, removed, replaced) and revalidates the caches, so
    /// no decision made under the old slow path is used again.
    pub fn update<R>(&mut self, change: impl FnOnce(&mut S) -> R) -> R {
        self.sync_stats();
        let r = change(&mut self.slow);
        self.counters.updates += 1;
        self.micro.invalidate();
        let slots: Vec<u32> = self.mega.slots().collect();
        for i in slots {
            let key = self.mega.entry(i).key;
            let kept = match self.slow.revalidate(&key) {
                Some(up) if up.cacheable && self.mega.mask(i).covers(&up.mask) => {
                    self.mega.set_decision(i, up.actions, up.tag);
                    true
                }
                _ => false,
            };
            if kept {
                self.counters.revalidated_kept += 1;
            } else if let Some(r) = self.mega.remove(i) {
                self.counters.removed += 1;
                self.credit(r);
            }
        }
        r
    }

    /// Drops every cached decision (crediting their statistics first).
    pub fn flush(&mut self) {
        self.micro.invalidate();
        let slots: Vec<u32> = self.mega.slots().collect();
        for i in slots {
            if let Some(r) = self.mega.remove(i) {
                self.counters.removed += 1;
                self.credit(r);
            }
        }
    }

    /// Credits every megaflow's new hits to the slow path.
    pub fn sync_stats(&mut self) {
        let slots: Vec<u32> = self.mega.slots().collect();
        for i in slots {
            let r = self.mega.take_unpushed(i);
            self.credit(r);
        }
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Megaflows held.
    pub fn megaflow_count(&self) -> usize {
        self.mega.len()
    }

    /// Megaflow subtables (distinct masks).
    pub fn subtable_count(&self) -> usize {
        self.mega.subtables()
    }

    /// Microflow slots (0: disabled).
    pub fn microflow_capacity(&self) -> usize {
        self.micro.capacity()
    }

    /// The megaflows, in the order installed.
    pub fn megaflows(&self) -> Vec<MegaflowInfo<'_>> {
        let mut slots: Vec<u32> = self.mega.slots().collect();
        slots.sort_by_key(|&i| self.mega.entry(i).serial);
        slots
            .into_iter()
            .map(|i| {
                let e = self.mega.entry(i);
                MegaflowInfo {
                    key: &e.key,
                    mask: self.mega.mask(i),
                    actions: &e.actions,
                    packets: e.packets,
                    bytes: e.bytes,
                    used: (e.used != 0).then_some(e.used),
                }
            })
            .collect()
    }

    /// The megaflows as `ovs-dpctl dump-flows` prints them, one a line, in the order
    /// installed.
    pub fn dump_megaflows(&self, ports: &PortMap) -> String {
        self.megaflows().iter().map(|m| dump::line(m, self.now, ports) + "\n").collect()
    }
}
