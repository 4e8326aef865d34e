//! The index: every filter's anchors merged by field, looked up once per packet.
//!
//! **Why it exists.** This is the decision table the 1987 paper wished for: the loads that
//! many filters make are made once, and the many constants compared with one field become
//! one hash table from value to the filters that value lets through. A packet costs one load
//! and one lookup per indexed field whose guard holds (a few, whatever the number of filters),
//! and yields the *candidates*: a superset of the filters that accept it, which the engine
//! then runs in priority order.
//!
//! Anchors on the same field share a table; the table's guard is what all of their guards
//! have in common (so it still holds whenever one of them can match). Networks of different
//! prefix lengths on one address are different fields (different masks), each one table: a
//! few exact lookups, as a tuple-space search does, rather than a trie walk.

use super::anchor::{Anchor, Anchoring};
use super::field::{Cond, Field};
use std::collections::HashMap;

/// The merged anchors of a set of filters.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Every field the tables and guards read, each once.
    pub fields: Vec<Field>,
    /// Every guard condition, each once: (field index, `==`?, value).
    pub conds: Vec<(u32, bool, u32)>,
    /// One table per indexed field.
    pub tables: Vec<Table>,
    /// Filters (by rank) that run on every packet, ascending.
    pub always: Vec<u32>,
    /// How many filters the index was built for.
    pub filters: usize,
}

/// The anchors of one field.
#[derive(Clone, Debug)]
pub struct Table {
    /// The field's index in [`Index::fields`].
    pub field: u32,
    /// Conditions (indices into [`Index::conds`]) that hold whenever one of the table's
    /// anchors can match.
    pub guard: Vec<u32>,
    /// Value → filters.
    pub map: ValueMap,
}

/// A hash table from a field's value to a list of filter ranks: open addressing, linear
/// probing, a power-of-two size at most half full; lists stored end to end.
#[derive(Clone, Debug, Default)]
pub struct ValueMap {
    /// `(value, start, len)`; `len == 0` marks an empty slot.
    slots: Vec<(u32, u32, u32)>,
    /// The lists, end to end.
    ranks: Vec<u32>,
    shift: u32,
}

impl ValueMap {
    /// A table of `entries` (values distinct; lists ascending, not empty).
    pub fn new(entries: Vec<(u32, Vec<u32>)>) -> ValueMap {
        let cap = (entries.len() * 2).next_power_of_two().max(4);
        let shift = 64 - cap.trailing_zeros();
        let mut slots = vec![(0u32, 0u32, 0u32); cap];
        let mut ranks = Vec::new();
        for (value, list) in entries {
            let start = ranks.len() as u32;
            ranks.extend_from_slice(&list);
            let mut i = Self::hash(value, shift);
            while slots[i].2 != 0 {
                i = (i + 1) & (cap - 1);
            }
            slots[i] = (value, start, list.len() as u32);
        }
        ValueMap { slots, ranks, shift }
    }

    #[inline]
    fn hash(value: u32, shift: u32) -> usize {
        (u64::from(value).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    /// The filters `value` lets through (empty: none).
    #[inline]
    pub fn get(&self, value: u32) -> &[u32] {
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(value, self.shift);
        loop {
            let (v, start, len) = self.slots[i];
            if len == 0 {
                return &[];
            }
            if v == value {
                return &self.ranks[start as usize..(start + len) as usize];
            }
            i = (i + 1) & mask;
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.2 != 0).count()
    }

    /// Whether there is no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Index {
    /// Merges the anchorings of filters ranked `0..` (their order in the slice).
    pub fn build(anchorings: &[Anchoring]) -> Index {
        let mut index = Index { filters: anchorings.len(), ..Index::default() };
        let mut field_ids: HashMap<Field, u32> = HashMap::new();
        let mut cond_ids: HashMap<Cond, u32> = HashMap::new();
        // Field → (common guard, value → ranks).
        let mut by_field: Vec<(Field, Vec<Cond>, HashMap<u32, Vec<u32>>)> = Vec::new();
        let mut table_of: HashMap<Field, usize> = HashMap::new();
        for (rank, a) in anchorings.iter().enumerate() {
            let rank = rank as u32;
            match a {
                Anchoring::Never => {}
                Anchoring::Always => index.always.push(rank),
                Anchoring::Anchors(anchors) => {
                    for Anchor { field, value, guard } in anchors {
                        let t = *table_of.entry(*field).or_insert_with(|| {
                            by_field.push((*field, guard.clone(), HashMap::new()));
                            by_field.len() - 1
                        });
                        let entry = &mut by_field[t];
                        entry.1.retain(|c| guard.contains(c));
                        let list = entry.2.entry(*value).or_default();
                        if list.last() != Some(&rank) {
                            list.push(rank);
                        }
                    }
                }
            }
        }
        let mut field_id = |f: Field, index: &mut Index| {
            *field_ids.entry(f).or_insert_with(|| {
                index.fields.push(f);
                index.fields.len() as u32 - 1
            })
        };
        // Tables with the same guard next to each other: the guard's outcome is reused.
        by_field.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        for (field, guard, values) in by_field {
            let f = field_id(field, &mut index);
            let mut g = Vec::new();
            for c in guard {
                let cf = field_id(c.field, &mut index);
                let id = *cond_ids.entry(c).or_insert_with(|| {
                    index.conds.push((cf, c.eq, c.value));
                    index.conds.len() as u32 - 1
                });
                g.push(id);
            }
            let mut entries: Vec<(u32, Vec<u32>)> = values.into_iter().collect();
            entries.sort_unstable_by_key(|e| e.0);
            index.tables.push(Table { field: f, guard: g, map: ValueMap::new(entries) });
        }
        index
    }

    /// A scratch area for [`Index::candidates`].
    pub fn scratch(&self) -> Scratch {
        Scratch {
            stamp: 0,
            seen: vec![0; self.filters],
            field_stamp: vec![0; self.fields.len()],
            field_val: vec![None; self.fields.len()],
            cond_stamp: vec![0; self.conds.len()],
            cond_val: vec![false; self.conds.len()],
        }
    }

    /// The filters (by rank, ascending, each once) that may accept the packet: every filter
    /// that does is among them.
    pub fn candidates(&self, pkt: &[u8], wire_len: u32, s: &mut Scratch, out: &mut Vec<u32>) {
        out.clear();
        if s.seen.len() != self.filters
            || s.field_stamp.len() != self.fields.len()
            || s.cond_stamp.len() != self.conds.len()
        {
            *s = self.scratch();
        }
        s.next();
        let stamp = s.stamp;
        let mut last_guard: Option<(&[u32], bool)> = None;
        for t in &self.tables {
            let pass = match last_guard {
                Some((g, pass)) if g == t.guard.as_slice() => pass,
                _ => {
                    let pass = t.guard.iter().all(|&c| self.cond(c, pkt, wire_len, s));
                    last_guard = Some((&t.guard, pass));
                    pass
                }
            };
            if !pass {
                continue;
            }
            let Some(v) = self.field(t.field, pkt, wire_len, s) else { continue };
            for &r in t.map.get(v) {
                let seen = &mut s.seen[r as usize];
                if *seen != stamp {
                    *seen = stamp;
                    out.push(r);
                }
            }
        }
        if !self.always.is_empty() {
            out.extend_from_slice(&self.always);
        }
        out.sort_unstable();
    }

    #[inline]
    fn field(&self, f: u32, pkt: &[u8], wire_len: u32, s: &mut Scratch) -> Option<u32> {
        let i = f as usize;
        if s.field_stamp[i] != s.stamp {
            s.field_stamp[i] = s.stamp;
            s.field_val[i] = self.fields[i].eval(pkt, wire_len);
        }
        s.field_val[i]
    }

    #[inline]
    fn cond(&self, c: u32, pkt: &[u8], wire_len: u32, s: &mut Scratch) -> bool {
        let i = c as usize;
        if s.cond_stamp[i] != s.stamp {
            let (f, eq, value) = self.conds[i];
            s.cond_stamp[i] = s.stamp;
            s.cond_val[i] = self.field(f, pkt, wire_len, s).is_some_and(|v| (v == value) == eq);
        }
        s.cond_val[i]
    }
}

/// Per-packet memory of [`Index::candidates`]: generation stamps instead of clearing.
#[derive(Clone, Debug)]
pub struct Scratch {
    stamp: u32,
    seen: Vec<u32>,
    field_stamp: Vec<u32>,
    field_val: Vec<Option<u32>>,
    cond_stamp: Vec<u32>,
    cond_val: Vec<bool>,
}

impl Scratch {
    fn next(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: old stamps could be mistaken for this packet's.
            self.seen.fill(0);
            self.field_stamp.fill(0);
            self.cond_stamp.fill(0);
            self.stamp = 1;
        }
    }
}
