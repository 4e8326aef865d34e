//! The state table's index from key to state: one flat array of 8-byte entries, open
//! addressing with linear probing.
//!
//! Why not a `HashMap<StateKey, Vec<u32>>`: with a million states every lookup of an
//! established flow missed the caches three or four times (the map's control bytes, its
//! 80-byte bucket, the `Vec` on the heap, then the state). Here an entry is the key's 32-bit
//! hash beside the state's slot number, eight to a cache line, so a lookup is one miss in the
//! index (the probe run almost always stays in one line at a load of at most one half) and one
//! in the state, where the full key is compared. Several states may share a key (if-bound
//! states on different interfaces, opposite directions): they are separate entries with the same
//! hash, all visited by [`KeyIndex::candidates`].
//!
//! The hash is std's SipHash-1-3 under a per-table random key, over the key's bytes: flows an
//! attacker chooses cannot be steered into one probe run without the key. An entry's home is the
//! low bits of its 32-bit hash, so growing the array needs no state and no hashing. Deletion
//! shifts the following entries of the run back (no tombstones: a table churning through
//! states never degrades).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use crate::packet::Family;
use crate::state::StateKey;

/// The fewest entries an index allocates.
const MIN_CAPACITY: usize = 16;
/// The most entries allocated ahead of need from `set limit states` (16 MiB); beyond, the
/// array doubles as states arrive.
const PRESIZE_MAX: usize = 1 << 21;
/// The most entries an index can hold: homes are taken from the 32-bit hash.
const MAX_CAPACITY: usize = 1 << 31;

/// An index from [`StateKey`] to state slots.
#[derive(Clone, Debug)]
pub(crate) struct KeyIndex {
    /// `hash << 32 | (slot + 1)`; 0 is an empty entry.
    entries: Vec<u64>,
    len: usize,
    hasher: RandomState,
}

impl Default for KeyIndex {
    fn default() -> KeyIndex {
        KeyIndex { entries: Vec::new(), len: 0, hasher: RandomState::new() }
    }
}

impl KeyIndex {
    /// The key's hash (its low bits are its home).
    pub fn hash(&self, key: &StateKey) -> u32 {
        let mut bytes = [0u8; 42];
        bytes[0] = match key.af {
            Family::Inet => 4,
            Family::Inet6 => 6,
        };
        bytes[1] = key.proto;
        bytes[2..6].copy_from_slice(&key.rdomain.to_ne_bytes());
        bytes[6..22].copy_from_slice(&key.addr[0].to_ne_bytes());
        bytes[22..38].copy_from_slice(&key.addr[1].to_ne_bytes());
        bytes[38..40].copy_from_slice(&key.port[0].to_ne_bytes());
        bytes[40..42].copy_from_slice(&key.port[1].to_ne_bytes());
        let mut h = self.hasher.build_hasher();
        h.write(&bytes);
        h.finish() as u32
    }

    /// Bytes the index holds.
    pub fn memory(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<u64>()
    }

    /// Allocates room for `states` entries ahead of need (at most [`PRESIZE_MAX`]), so that a
    /// table filling up to its limit does not stop to grow.
    pub fn reserve(&mut self, states: usize) {
        let want = (states.saturating_mul(2)).clamp(MIN_CAPACITY, PRESIZE_MAX).next_power_of_two();
        if want > self.entries.len() {
            self.resize(want);
        }
    }

    /// The slots of the entries with hash `hash`, in probe order.
    pub fn candidates(&self, hash: u32) -> impl Iterator<Item = u32> + '_ {
        let mask = self.entries.len().wrapping_sub(1);
        let start = hash as usize & mask;
        let len = self.entries.len();
        (0..len)
            .map(move |k| self.entries[(start + k) & mask])
            .take_while(|&e| e != 0)
            .filter(move |&e| (e >> 32) as u32 == hash)
            .map(|e| (e as u32) - 1)
    }

    /// Adds an entry for slot `slot` under `hash`.
    pub fn insert(&mut self, hash: u32, slot: u32) {
        if (self.len + 1) * 2 > self.entries.len() {
            let grown = (self.entries.len() * 2).max(MIN_CAPACITY);
            self.resize(grown.min(MAX_CAPACITY));
        }
        self.place(u64::from(hash) << 32 | u64::from(slot + 1));
        self.len += 1;
    }

    /// Removes the entry of slot `slot` under `hash` (nothing if there is none).
    pub fn remove(&mut self, hash: u32, slot: u32) {
        if self.entries.is_empty() {
            return;
        }
        let mask = self.entries.len() - 1;
        let want = u64::from(hash) << 32 | u64::from(slot + 1);
        let mut i = hash as usize & mask;
        loop {
            match self.entries[i] {
                0 => return,
                e if e == want => break,
                _ => i = (i + 1) & mask,
            }
        }
        // Backward shift: each later entry of the run whose home is not in (hole, j] moves
        // into the hole.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.entries[j];
            if e == 0 {
                break;
            }
            let home = (e >> 32) as usize & mask;
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.entries[hole] = e;
                hole = j;
            }
        }
        self.entries[hole] = 0;
        self.len -= 1;
    }

    fn place(&mut self, entry: u64) {
        let mask = self.entries.len() - 1;
        let mut i = (entry >> 32) as usize & mask;
        while self.entries[i] != 0 {
            i = (i + 1) & mask;
        }
        self.entries[i] = entry;
    }

    fn resize(&mut self, capacity: usize) {
        let old = std::mem::replace(&mut self.entries, vec![0; capacity]);
        for e in old.into_iter().filter(|&e| e != 0) {
            self.place(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries under few distinct hashes (long runs that wrap around the array) inserted and
    /// removed at random stay findable exactly while present.
    #[test]
    fn runs_wrap_and_shift_back() {
        let mut idx = KeyIndex::default();
        let mut present = std::collections::BTreeSet::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let slot = (x % 300) as u32;
            // Hashes near the top of the array make runs wrap.
            let hash = [7u32, 15, 0xffff_ffff, 8][(slot % 4) as usize];
            if present.remove(&slot) {
                idx.remove(hash, slot);
            } else {
                idx.insert(hash, slot);
                present.insert(slot);
            }
            if step % 97 == 0 {
                for s in 0..300u32 {
                    let h = [7u32, 15, 0xffff_ffff, 8][(s % 4) as usize];
                    let n = idx.candidates(h).filter(|&c| c == s).count();
                    assert_eq!(n, usize::from(present.contains(&s)), "slot {s} at step {step}");
                }
            }
        }
        assert_eq!(idx.len, present.len());
    }
}
