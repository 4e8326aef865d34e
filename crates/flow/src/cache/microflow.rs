//! The microflow cache: exact keys, direct-mapped (OVS's EMC).
//!
//! One probe: the key's hash picks a slot; the slot holds the hash, the whole key and the
//! cache generation it was written in, and points at a megaflow (slot and serial). A hit needs
//! all four to agree; the megaflow keeps the actions and the statistics. Bumping the
//! generation invalidates every entry at once.

use crate::key::FlowKey;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hash: u64,
    generation: u64,
    key: FlowKey,
    mega: u32,
    serial: u64,
}

/// The most slots a microflow cache has (16 Mi, about 2 GiB).
pub(crate) const MAX_ENTRIES: usize = 1 << 24;

/// The cache (no slots: disabled).
#[derive(Clone, Debug)]
pub(crate) struct Microflows {
    slots: Vec<Slot>,
    generation: u64,
}

impl Microflows {
    /// `entries` rounded up to a power of two (at most [`MAX_ENTRIES`]); 0 disables the
    /// cache.
    pub fn new(entries: usize) -> Microflows {
        let n = if entries == 0 { 0 } else { entries.min(MAX_ENTRIES).next_power_of_two() };
        Microflows { slots: vec![Slot::default(); n], generation: 1 }
    }

    pub fn enabled(&self) -> bool {
        !self.slots.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The megaflow (slot, serial) cached for `key`.
    #[inline]
    pub fn find(&self, hash: u64, key: &FlowKey) -> Option<(u32, u64)> {
        if self.slots.is_empty() {
            return None;
        }
        let s = &self.slots[hash as usize & (self.slots.len() - 1)];
        (s.hash == hash && s.generation == self.generation && s.key == *key)
            .then_some((s.mega, s.serial))
    }

    #[inline]
    pub fn insert(&mut self, hash: u64, key: &FlowKey, mega: u32, serial: u64) {
        if self.slots.is_empty() {
            return;
        }
        let i = hash as usize & (self.slots.len() - 1);
        self.slots[i] = Slot { hash, generation: self.generation, key: *key, mega, serial };
    }

    /// Forgets every entry.
    pub fn invalidate(&mut self) {
        self.generation += 1;
    }
}
