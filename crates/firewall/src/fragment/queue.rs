//! One datagram's reassembly queue: its fragment entries in offset order, the count of holes
//! between them, and their data; the insertion rules of pf's `pf_fillup_fragment`.
//!
//! An entry's bytes live in the queue's arena (one buffer per queue, reused when the queue
//! slot is), so a fragment costs no allocation once the arena has grown. Trimming an entry's
//! front (pf's `m_adj`) only moves its window into the arena; the bytes left behind are
//! reclaimed by compaction once they outweigh the live ones, so an arena stays within a small
//! multiple of the data it holds.

use crate::Reason;

use super::{Family, PF_FRAG_ENTRY_LIMIT, PF_FRAG_ENTRY_POINTS, wire::Fragment};

/// The largest IP datagram (`IP_MAXPACKET`, equal to `IPV6_MAXPACKET`).
pub(super) const IP_MAXPACKET: usize = 65535;

/// Below this many dead bytes an arena is never compacted.
const COMPACT_SLACK: usize = 4096;

/// A fragment entry (pf's `pf_frent`): where its data sits in the datagram and in the arena.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    /// Offset of its data in the datagram (`fe_off`).
    pub off: u16,
    /// Length of its data (`fe_len`).
    pub len: u16,
    /// More fragments follow (`fe_mff`).
    pub mff: bool,
    /// Where its data starts in the arena.
    pub at: u32,
}

impl Entry {
    fn end(&self) -> u32 {
        u32::from(self.off) + u32::from(self.len)
    }

    /// pf's `pf_frent_index`: which of the entry points (4,096 octets each) it counts against.
    fn index(&self) -> usize {
        usize::from(self.off) / (0x10000 / PF_FRAG_ENTRY_POINTS)
    }
}

/// What inserting a fragment did to its queue.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Insert {
    /// The fragment is in the queue.
    Queued,
    /// The fragment is dropped, the queue kept; with pf's reason.
    Refused(Reason),
    /// The fragment is dropped and the whole queue must be freed (pf's `free_fragment`).
    FreeQueue,
}

/// A reassembly queue (pf's `pf_fragment` with its entries).
#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    /// Entries in offset order, never overlapping.
    pub entries: Vec<Entry>,
    /// Entries per entry point (`fr_entries`).
    counts: [u8; PF_FRAG_ENTRY_POINTS],
    /// Holes in the queue (`fr_holes`): complete at 0.
    pub holes: u16,
    /// The longest fragment's data (`fr_maxlen`), for IPv6 refragmentation.
    pub maxlen: u16,
    /// The headers of the fragment at offset 0, once it arrived: the IPv4 header with its
    /// options, or the IPv6 header, its extension headers and the fragment header.
    pub head: Vec<u8>,
    /// For IPv6, the offset of the last extension header before the fragment header in
    /// `head` (0: none), pf's `fe_extoff`.
    pub extoff: u16,
    /// The entries' bytes.
    arena: Vec<u8>,
    /// Bytes of the arena still referenced.
    live: usize,
}

impl Queue {
    /// Empties the queue for reuse, keeping its buffers unless they grew past `keep` bytes.
    pub fn reset(&mut self, keep: usize) {
        self.entries.clear();
        self.counts = [0; PF_FRAG_ENTRY_POINTS];
        self.holes = 1;
        self.maxlen = 0;
        self.head.clear();
        self.extoff = 0;
        self.arena.clear();
        self.live = 0;
        if self.arena.capacity() > keep {
            self.arena = Vec::new();
        }
        if self.entries.capacity() > 64 {
            self.entries = Vec::new();
        }
    }

    /// Bytes allocated by the queue's buffers.
    pub fn memory(&self) -> usize {
        self.arena.capacity()
            + self.head.capacity()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
    }

    /// The data of an entry.
    pub fn data(&self, e: &Entry) -> &[u8] {
        let at = e.at as usize;
        &self.arena[at..at + usize::from(e.len)]
    }

    /// The end of the data seen so far: the last entry's end.
    pub fn total(&self) -> u32 {
        self.entries.last().map_or(0, Entry::end)
    }

    /// pf's `pf_frent_holes` for the entry at `i` (in the queue): the holes it adds, from 1 for
    /// an entry alone in the middle down to -1 for one joining its neighbours.
    fn holes_at(&self, i: usize) -> i32 {
        let e = &self.entries[i];
        let mut holes = 1;
        if i == 0 {
            if e.off == 0 {
                holes -= 1;
            }
        } else if u32::from(e.off) == self.entries[i - 1].end() {
            holes -= 1;
        }
        match self.entries.get(i + 1) {
            None => {
                if !e.mff {
                    holes -= 1;
                }
            }
            Some(next) => {
                if u32::from(next.off) == e.end() {
                    holes -= 1;
                }
            }
        }
        holes
    }

    /// pf's `pf_frent_insert`: puts `e` at position `i` unless its entry point is full.
    fn insert_at(&mut self, i: usize, e: Entry) -> bool {
        let index = e.index();
        if self.counts[index] >= PF_FRAG_ENTRY_LIMIT {
            return false;
        }
        self.counts[index] += 1;
        self.entries.insert(i, e);
        self.holes = (i32::from(self.holes) + self.holes_at(i)) as u16;
        true
    }

    /// pf's `pf_frent_remove`: takes the entry at `i` out.
    fn remove_at(&mut self, i: usize) -> Entry {
        self.holes = (i32::from(self.holes) - self.holes_at(i)) as u16;
        let e = self.entries.remove(i);
        self.counts[e.index()] -= 1;
        self.live -= usize::from(e.len);
        e
    }

    /// Copies `bytes` into the arena, returning where they start.
    fn store(&mut self, bytes: &[u8]) -> u32 {
        let at = self.arena.len();
        self.arena.extend_from_slice(bytes);
        self.live += bytes.len();
        at as u32
    }

    /// The first fragment of a new queue (it cannot be refused).
    pub fn first(&mut self, f: &Fragment<'_>) {
        self.maxlen = f.len;
        let at = self.store(f.data);
        let e = Entry { off: f.off, len: f.len, mff: f.mff, at };
        self.keep_head(f, &e);
        let inserted = self.insert_at(0, e);
        debug_assert!(inserted);
    }

    fn keep_head(&mut self, f: &Fragment<'_>, e: &Entry) {
        if e.off == 0 {
            self.head.clear();
            self.head.extend_from_slice(f.head);
            self.extoff = f.extoff;
        }
    }

    /// pf's `pf_fillup_fragment` on an existing queue, after the checks on the fragment alone:
    /// the rules on final fragments, then the overlaps (IPv4: the queue's data wins at the new
    /// fragment's front, the new data at its back; IPv6: any overlap frees the queue, RFC 5722).
    pub fn add(&mut self, af: Family, f: &Fragment<'_>) -> Insert {
        // IPv4 drops only the fragment where IPv6 frees the whole datagram.
        let refuse = match af {
            Family::Inet => Insert::Refused(Reason::Fragment),
            Family::Inet6 => Insert::FreeQueue,
        };
        if f.len > self.maxlen {
            self.maxlen = f.len;
        }
        let total = self.total();
        let end = u32::from(f.off) + u32::from(f.len);
        // A fragment ending before the data seen must say more fragments follow.
        if end < total && !f.mff {
            return refuse;
        }
        let seen_last = self.entries.last().is_some_and(|e| !e.mff);
        if seen_last {
            // Nothing may end past the last fragment, or end there and claim more follow.
            if end > total || (end == total && f.mff) {
                return refuse;
            }
        } else if end == total && !f.mff {
            return refuse;
        }

        let mut e = Entry { off: f.off, len: f.len, mff: f.mff, at: 0 };
        let mut skip = 0usize; // bytes of the new data cut at its front
        // Entries before: the last one starting at or before the new one (pf_frent_previous).
        let pos = self.entries.partition_point(|x| x.off <= e.off);
        if pos > 0 {
            let prev = self.entries[pos - 1];
            if prev.end() > u32::from(e.off) {
                if af == Family::Inet6 {
                    return Insert::FreeQueue;
                }
                let precut = prev.end() - u32::from(e.off);
                if precut >= u32::from(e.len) {
                    // Entirely covered by older data: pf drops it without a reason.
                    return Insert::Refused(Reason::Match);
                }
                e.off += precut as u16;
                e.len -= precut as u16;
                skip = precut as usize;
            }
        }
        // Entries after: the new data wins, older entries are cut at their front or lost.
        while let Some(&after) = self.entries.get(pos) {
            if e.end() <= u32::from(after.off) {
                break;
            }
            if af == Family::Inet6 {
                return Insert::FreeQueue;
            }
            let aftercut = e.end() - u32::from(after.off);
            let mut cut = self.remove_at(pos);
            if aftercut < u32::from(after.len) {
                cut.off += aftercut as u16;
                cut.len -= aftercut as u16;
                cut.at += aftercut;
                self.live += usize::from(cut.len);
                // It may move to another entry point; re-queueing can fail.
                if !self.insert_at(pos, cut) {
                    self.live -= usize::from(cut.len);
                    return Insert::FreeQueue;
                }
                break;
            }
        }
        if self.counts[e.index()] >= PF_FRAG_ENTRY_LIMIT {
            return Insert::FreeQueue;
        }
        e.at = self.store(&f.data[skip..]);
        self.keep_head(f, &e);
        let inserted = self.insert_at(pos, e);
        debug_assert!(inserted);
        self.compact();
        Insert::Queued
    }

    /// Rewrites the arena with only the live bytes once the dead ones outweigh them.
    fn compact(&mut self) {
        let dead = self.arena.len() - self.live;
        if dead <= COMPACT_SLACK || dead <= self.live {
            return;
        }
        let mut fresh = Vec::with_capacity(self.live);
        for e in &mut self.entries {
            let at = e.at as usize;
            let start = fresh.len();
            fresh.extend_from_slice(&self.arena[at..at + usize::from(e.len)]);
            e.at = start as u32;
        }
        self.arena = fresh;
    }

    /// Bytes held: the live data and the first fragment's headers.
    pub fn held(&self) -> usize {
        self.arena.len() + self.head.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(off: u16, len: u16, mff: bool, data: &[u8]) -> Fragment<'_> {
        Fragment { off, len, mff, data, head: &[], extoff: 0 }
    }

    #[test]
    fn holes_close_when_the_pieces_meet() {
        let mut q = Queue::default();
        q.reset(0);
        let a = [1u8; 8];
        q.first(&frag(8, 8, true, &a));
        assert_eq!(q.holes, 2);
        assert_eq!(q.add(Family::Inet, &frag(16, 8, false, &a)), Insert::Queued);
        assert_eq!(q.holes, 1);
        assert_eq!(q.add(Family::Inet, &frag(0, 8, true, &a)), Insert::Queued);
        assert_eq!(q.holes, 0);
    }

    #[test]
    fn compaction_bounds_the_arena() {
        let mut q = Queue::default();
        q.reset(0);
        let d = vec![9u8; 16000];
        q.first(&frag(0, 8, true, &d[..8]));
        assert_eq!(q.add(Family::Inet, &frag(8, 8000, false, &d[..8000])), Insert::Queued);
        // Each fragment from 0 keeps the older front and cuts the front of what follows.
        for i in 2..1000u16 {
            let len = 8 * i;
            assert_eq!(q.add(Family::Inet, &frag(0, len, true, &d[..len.into()])), Insert::Queued);
            assert!(q.arena.len() <= 2 * q.live + COMPACT_SLACK + usize::from(len));
        }
        let covered: u32 = q.entries.iter().map(|e| u32::from(e.len)).sum();
        assert_eq!(covered, 8008);
        assert_eq!(q.holes, 0);
    }
}
