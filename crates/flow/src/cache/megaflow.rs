//! The megaflow cache: wildcarded entries found by tuple-space search.
//!
//! Entries with the same mask live in one subtable, a hash table over the masked key; a
//! lookup masks the packet's key with each subtable's mask in turn and probes (OVS's
//! `dpcls`). Subtables are tried in order of recent hits, re-sorted every
//! [`RESORT_EVERY`] lookups with the counts halved, so the busy masks come first. Each
//! subtable hashes and compares only the words its mask uses.
//!
//! Entries sit in a slab with a serial number each (the microflow cache points at an entry
//! and its serial, so an entry removed and its slot reused is never mistaken for the old one),
//! with their statistics. The slab is bounded: when full, the CLOCK algorithm evicts an entry
//! not hit since the hand last passed it.

use std::sync::Arc;

use super::probe::Probe;
use crate::key::{FlowKey, FlowMask, KEY_WORDS, hash_words};
use crate::rules::Actions;

/// Lookups between two re-sortings of the subtables.
pub(crate) const RESORT_EVERY: u64 = 1024;

/// One megaflow.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// 0 for a free slot.
    pub serial: u64,
    /// The key within the mask.
    pub key: FlowKey,
    pub subtable: u32,
    pub hash: u64,
    pub actions: Arc<Actions>,
    pub tag: u64,
    pub packets: u64,
    pub bytes: u64,
    /// When last hit (the caller's clock; 0: never).
    pub used: u64,
    /// What was already credited to the slow path.
    pub pushed_packets: u64,
    pub pushed_bytes: u64,
    /// Hit since the clock hand last passed.
    pub referenced: bool,
}

#[derive(Clone, Debug)]
struct Subtable {
    mask: FlowMask,
    /// The words the mask uses.
    words: Vec<usize>,
    index: Probe,
    hits: u64,
}

impl Subtable {
    #[inline]
    fn hash(&self, seed: u64, key: &FlowKey) -> u64 {
        let (k, m) = (key.words(), self.mask.words());
        hash_words(seed, self.words.iter().map(|&w| k[w] & m[w]))
    }
}

/// The cache.
#[derive(Clone, Debug)]
pub(crate) struct Megaflows {
    entries: Vec<Entry>,
    free: Vec<u32>,
    live: usize,
    limit: usize,
    subtables: Vec<Option<Subtable>>,
    /// Live subtables, busiest first.
    order: Vec<u32>,
    next_serial: u64,
    hand: usize,
    lookups: u64,
    seed: u64,
}

/// An entry taken out of the cache, with what it had not yet credited to the slow path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Removed {
    pub tag: u64,
    pub packets: u64,
    pub bytes: u64,
}

impl Megaflows {
    pub fn new(limit: usize, seed: u64) -> Megaflows {
        Megaflows {
            entries: Vec::new(),
            free: Vec::new(),
            live: 0,
            limit: limit.clamp(1, u32::MAX as usize - 1),
            subtables: Vec::new(),
            order: Vec::new(),
            next_serial: 1,
            hand: 0,
            lookups: 0,
            seed,
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn subtables(&self) -> usize {
        self.order.len()
    }

    pub fn entry(&self, i: u32) -> &Entry {
        &self.entries[i as usize]
    }

    /// Entry `i` if it still holds the megaflow with `serial`.
    #[inline]
    pub fn live(&self, i: u32, serial: u64) -> bool {
        self.entries.get(i as usize).is_some_and(|e| e.serial == serial)
    }

    /// The live entries' slots.
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().enumerate().filter(|(_, e)| e.serial != 0).map(|(i, _)| i as u32)
    }

    /// The mask of entry `i`.
    pub fn mask(&self, i: u32) -> &FlowMask {
        let sub = self.entries[i as usize].subtable as usize;
        &self.subtables[sub].as_ref().expect("a live entry's subtable is live").mask
    }

    /// Counts a hit of entry `i`.
    #[inline]
    pub fn hit(&mut self, i: u32, bytes: u64, now: u64) {
        let e = &mut self.entries[i as usize];
        e.packets += 1;
        e.bytes += bytes;
        e.used = now;
        e.referenced = true;
    }

    /// The entry matching `key`, searching the subtables busiest first.
    #[inline]
    pub fn lookup(&mut self, key: &FlowKey) -> Option<u32> {
        self.lookups += 1;
        if self.lookups.is_multiple_of(RESORT_EVERY) {
            self.resort();
        }
        let k = key.words();
        for &s in &self.order {
            let Some(sub) = self.subtables[s as usize].as_mut() else { continue };
            let hash = sub.hash(self.seed, key);
            let (m, words, entries) = (sub.mask.words(), &sub.words, &self.entries);
            let found = sub.index.find(hash, |e| {
                let ek = entries[e as usize].key.words();
                words.iter().all(|&w| k[w] & m[w] == ek[w])
            });
            if let Some(e) = found {
                sub.hits += 1;
                return Some(e);
            }
        }
        None
    }

    fn resort(&mut self) {
        let subs = &self.subtables;
        let hits = |s: &u32| subs[*s as usize].as_ref().map_or(0, |t| t.hits);
        self.order.sort_by_key(|s| std::cmp::Reverse(hits(s)));
        for t in self.subtables.iter_mut().flatten() {
            t.hits /= 2;
        }
    }

    /// Installs `key` (already within `mask`); returns its slot and an entry evicted to make
    /// room.
    pub fn insert(
        &mut self,
        key: FlowKey,
        mask: &FlowMask,
        actions: Arc<Actions>,
        tag: u64,
    ) -> (u32, Option<Removed>) {
        let evicted = if self.live >= self.limit { self.evict() } else { None };
        let sub = self.subtable_for(mask);
        let t = self.subtables[sub as usize].as_mut().expect("just found or made");
        let hash = t.hash(self.seed, &key);
        let serial = self.next_serial;
        self.next_serial += 1;
        let entry = Entry {
            serial,
            key,
            subtable: sub,
            hash,
            actions,
            tag,
            packets: 0,
            bytes: 0,
            used: 0,
            pushed_packets: 0,
            pushed_bytes: 0,
            referenced: true,
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = entry;
                i
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        t.index.insert(hash, slot);
        self.live += 1;
        (slot, evicted)
    }

    fn subtable_for(&mut self, mask: &FlowMask) -> u32 {
        if let Some(&s) = self
            .order
            .iter()
            .find(|&&s| self.subtables[s as usize].as_ref().is_some_and(|t| t.mask == *mask))
        {
            return s;
        }
        let words = (0..KEY_WORDS).filter(|&w| mask.words()[w] != 0).collect();
        let t = Subtable { mask: *mask, words, index: Probe::default(), hits: 0 };
        let s = match self.subtables.iter().position(Option::is_none) {
            Some(i) => {
                self.subtables[i] = Some(t);
                i as u32
            }
            None => {
                self.subtables.push(Some(t));
                (self.subtables.len() - 1) as u32
            }
        };
        // New masks go last: they have no hits yet.
        self.order.push(s);
        s
    }

    /// Takes entry `i` out; what it had not credited.
    pub fn remove(&mut self, i: u32) -> Option<Removed> {
        let e = self.entries.get_mut(i as usize).filter(|e| e.serial != 0)?;
        let removed = Removed {
            tag: e.tag,
            packets: e.packets - e.pushed_packets,
            bytes: e.bytes - e.pushed_bytes,
        };
        e.serial = 0;
        e.actions = Arc::new(Actions::drop());
        let (sub, hash) = (e.subtable as usize, e.hash);
        self.live -= 1;
        self.free.push(i);
        if let Some(t) = self.subtables[sub].as_mut() {
            t.index.remove(hash, i);
            if t.index.len() == 0 {
                self.subtables[sub] = None;
                self.order.retain(|&s| s as usize != sub);
            }
        }
        Some(removed)
    }

    /// CLOCK: the first entry after the hand not hit since the hand last passed it (at most
    /// two turns).
    fn evict(&mut self) -> Option<Removed> {
        let n = self.entries.len();
        for _ in 0..2 * n {
            let i = self.hand;
            self.hand = (self.hand + 1) % n;
            let e = &mut self.entries[i];
            if e.serial == 0 {
                continue;
            }
            if e.referenced {
                e.referenced = false;
                continue;
            }
            return self.remove(i as u32);
        }
        None
    }

    /// Replaces entry `i`'s decision (revalidation kept its mask).
    pub fn set_decision(&mut self, i: u32, actions: Arc<Actions>, tag: u64) {
        let e = &mut self.entries[i as usize];
        e.actions = actions;
        e.tag = tag;
    }

    /// What entry `i` has not credited yet, marked as credited.
    pub fn take_unpushed(&mut self, i: u32) -> Removed {
        let e = &mut self.entries[i as usize];
        let r = Removed {
            tag: e.tag,
            packets: e.packets - e.pushed_packets,
            bytes: e.bytes - e.pushed_bytes,
        };
        e.pushed_packets = e.packets;
        e.pushed_bytes = e.bytes;
        r
    }
}
