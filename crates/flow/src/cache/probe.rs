//! A small open-addressing index from a hash to an entry number, for megaflow subtables.
//!
//! Why not `HashMap`: a subtable already has its key's hash (computed once over the words its
//! mask uses) and compares keys in the megaflow slab, not in the map; std's map would hash
//! again and store the key twice. Linear probing with backward-shift deletion keeps lookups
//! to a few adjacent words and needs no tombstones.

/// Slots hold `(low 32 bits of the hash) << 32 | (entry + 1)`; 0 is empty.
#[derive(Clone, Debug, Default)]
pub(crate) struct Probe {
    slots: Vec<u64>,
    len: usize,
}

const MIN_SLOTS: usize = 8;

impl Probe {
    fn home(&self, stored: u64) -> usize {
        (stored >> 32) as usize & (self.slots.len() - 1)
    }

    /// The entry with `hash` for which `eq` holds.
    #[inline]
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let m = self.slots.len() - 1;
        let h = hash & 0xffff_ffff;
        let mut i = h as usize & m;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == h {
                let e = (s as u32).wrapping_sub(1);
                if eq(e) {
                    return Some(e);
                }
            }
            i = (i + 1) & m;
        }
    }

    /// Adds `entry` under `hash` (the caller knows it is not there).
    pub fn insert(&mut self, hash: u64, entry: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let m = self.slots.len() - 1;
        let stored = ((hash & 0xffff_ffff) << 32) | u64::from(entry + 1);
        let mut i = self.home(stored);
        while self.slots[i] != 0 {
            i = (i + 1) & m;
        }
        self.slots[i] = stored;
        self.len += 1;
    }

    /// Removes `entry` (stored under `hash`); whether it was there.
    pub fn remove(&mut self, hash: u64, entry: u32) -> bool {
        let Some(mut i) = self.position(hash, entry) else { return false };
        let m = self.slots.len() - 1;
        self.slots[i] = 0;
        self.len -= 1;
        // Backward shift: pull later members of the run into the hole when their home is
        // not between the hole and them.
        let mut j = i;
        loop {
            j = (j + 1) & m;
            let s = self.slots[j];
            if s == 0 {
                return true;
            }
            let k = self.home(s);
            if (j.wrapping_sub(k) & m) >= (j.wrapping_sub(i) & m) {
                self.slots[i] = s;
                self.slots[j] = 0;
                i = j;
            }
        }
    }

    fn position(&self, hash: u64, entry: u32) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let m = self.slots.len() - 1;
        let want = ((hash & 0xffff_ffff) << 32) | u64::from(entry + 1);
        let mut i = self.home(want);
        loop {
            match self.slots[i] {
                0 => return None,
                s if s == want => return Some(i),
                _ => i = (i + 1) & m,
            }
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![0; (old.len() * 2).max(MIN_SLOTS)];
        let m = self.slots.len() - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = self.home(s);
            while self.slots[i] != 0 {
                i = (i + 1) & m;
            }
            self.slots[i] = s;
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_remove_against_a_model() {
        let mut p = Probe::default();
        let mut model: Vec<(u64, u32)> = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct hashes, so runs collide and wrap.
            let hash = (x % 61) | ((x >> 40) << 32);
            if x.is_multiple_of(3) && !model.is_empty() {
                let (h, e) = model.swap_remove((x >> 8) as usize % model.len());
                assert!(p.remove(h, e));
            } else {
                p.insert(hash, step);
                model.push((hash, step));
            }
            assert_eq!(p.len(), model.len());
            if step.is_multiple_of(97) {
                for &(h, e) in &model {
                    assert_eq!(p.find(h, |c| c == e), Some(e));
                }
                assert_eq!(p.find(hash, |c| c == u32::MAX - 1), None);
            }
        }
    }
}
