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

/// A guard field compared with more values than this is not a protocol field.
pub const CONTEXT_VALUES: usize = 16;
/// A protocol condition guards at least this fraction (1/n) of all anchors.
pub const CONTEXT_SHARE: usize = 64;

/// The merged anchors of a set of filters.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Every field the tables and guards read, each once.
    pub fields: Vec<Field>,
    /// Every guard condition, each once: (field index, `==`?, value).
    pub conds: Vec<(u32, bool, u32)>,
    /// Every guard, each once, as condition indices; guard 0 is the empty one.
    pub guards: Vec<Vec<u32>>,
    /// One table per indexed field and protocol context.
    pub tables: Vec<Table>,
    /// Filters (by rank) that run on every packet, ascending.
    pub always: Vec<u32>,
    /// How many filters the index was built for.
    pub filters: usize,
    /// The tables to look up, by the value of one protocol field (see [`Switch`]).
    pub switch: Switch,
    /// Every table's bitmap of its values' hashes, end to end (moved out of the tables): a
    /// step reaches its table's in one load.
    pub blooms: Vec<u64>,
}

/// Which tables a packet looks up, decided by one protocol field (for Ethernet, the
/// EtherType), so that a packet visits only the tables of its protocol and their contexts
/// lose the tests the switch made.
#[derive(Clone, Debug, Default)]
pub struct Switch {
    /// The field (index into [`Index::fields`]); `None`: every packet takes plan 0.
    pub field: Option<u32>,
    /// Values of the field with a plan of their own, ascending: (value, plan).
    pub cases: Vec<(u32, u32)>,
    /// The plan of the other values.
    pub default: u32,
    /// The plan when the field cannot be loaded.
    pub unloadable: u32,
    /// The plans.
    pub plans: Vec<Plan>,
}

/// The lookups one kind of packet makes.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The conditions the steps' contexts test (at most 64), evaluated once per packet into
    /// one bit each before the steps run: a step's context is then one mask test.
    pub conds: Vec<Cond>,
    /// The lookups, in order.
    pub steps: Vec<Step>,
}

/// One lookup of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The table's field, copied here so that a step reads one place.
    pub field: Field,
    /// The table (index into [`Index::tables`]).
    pub table: u32,
    /// Its context without the switch's tests: the plan's conditions that must hold…
    pub mask: u64,
    /// …and the rest, beyond the plan's 64 (index into [`Index::guards`]; 0: none).
    pub guard: u32,
    /// Where the table's bitmap starts in [`Index::blooms`], and its bit mask.
    pub bloom_at: u32,
    /// The bitmap's bit mask (its size in bits less one).
    pub bloom_mask: u64,
}

/// The anchors of one field in one protocol context.
#[derive(Clone, Debug)]
pub struct Table {
    /// The field's index in [`Index::fields`].
    pub field: u32,
    /// The guard (index into [`Index::guards`]) every anchor of the table has: the protocol
    /// context (`ldh [12] == 0x800`…) shared by its filters. When it fails, no lookup.
    pub guard: u32,
    /// Value → anchors.
    pub map: ValueMap,
    /// Where its bitmap starts in [`Index::blooms`].
    pub bloom_at: u32,
}

/// One anchor in a table: which filter, the rest of its guard, and whether a hit decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The filter's rank.
    pub rank: u32,
    /// The anchor's guard beyond its table's (index into [`Index::guards`]).
    pub guard: u32,
    /// A hit (with the guard) means the filter accepts ([`super::Anchor::exact`]).
    pub exact: bool,
}

/// A hash table from a field's value to a list of anchors: open addressing, linear probing, a
/// power-of-two size at most a quarter full (a miss rarely probes twice), behind a bitmap of
/// the values' hashes; lists stored end to end.
#[derive(Clone, Debug, Default)]
pub struct ValueMap {
    /// `(value, start, len)`; `len == 0` marks an empty slot.
    slots: Vec<(u32, u32, u32)>,
    /// The lists, end to end.
    entries: Vec<Entry>,
    shift: u32,
    /// One bit per hash of the values present, 8 per value (at most 64 Ki bits): most packets'
    /// values are in no table, and this small bitmap says so with one load. [`Index::build`]
    /// moves it into [`Index::blooms`].
    bloom: Vec<u64>,
    /// The bitmap's size in bits, less one.
    bloom_mask: u64,
}

impl ValueMap {
    /// A table of `lists` (values distinct; lists not empty).
    pub fn new(lists: Vec<(u32, Vec<Entry>)>) -> ValueMap {
        let cap = (lists.len() * 4).next_power_of_two().max(4);
        let shift = 64 - cap.trailing_zeros();
        let mut slots = vec![(0u32, 0u32, 0u32); cap];
        let mut entries = Vec::new();
        let bits = (lists.len() * 8).next_power_of_two().clamp(64, 1 << 16);
        let mut bloom = vec![0u64; bits / 64];
        let bloom_mask = bits as u64 - 1;
        for (value, list) in lists {
            let b = Self::bloom_bit(value, bloom_mask);
            bloom[(b / 64) as usize] |= 1 << (b % 64);
            let start = entries.len() as u32;
            entries.extend_from_slice(&list);
            let mut i = Self::hash(value, shift);
            while slots[i].2 != 0 {
                i = (i + 1) & (cap - 1);
            }
            slots[i] = (value, start, list.len() as u32);
        }
        ValueMap { slots, entries, shift, bloom, bloom_mask }
    }

    #[inline]
    fn bloom_bit(value: u32, mask: u64) -> u64 {
        (u64::from(value).wrapping_mul(0xc2b2_ae3d_27d4_eb4f) >> 24) & mask
    }

    #[inline]
    fn hash(value: u32, shift: u32) -> usize {
        (u64::from(value).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    /// The anchors `value` hits (empty: none). The bitmap is the caller's to test first
    /// ([`Index::blooms`]).
    #[inline]
    pub fn get(&self, value: u32) -> &[Entry] {
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(value, self.shift);
        loop {
            let (v, start, len) = self.slots[i];
            if len == 0 {
                return &[];
            }
            if v == value {
                return &self.entries[start as usize..(start + len) as usize];
            }
            i = (i + 1) & mask;
        }
    }

    /// Every value with its anchors, values ascending (for other back ends: eBPF writes the
    /// table as code).
    pub fn iter(&self) -> Vec<(u32, &[Entry])> {
        let mut all: Vec<(u32, &[Entry])> = self
            .slots
            .iter()
            .filter(|s| s.2 != 0)
            .map(|&(v, start, len)| (v, &self.entries[start as usize..(start + len) as usize]))
            .collect();
        all.sort_unstable_by_key(|e| e.0);
        all
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
    ///
    /// A table holds one field's anchors in one protocol context: the conditions of an
    /// anchor's guard on protocol fields (`ldh [12] == 0x800` for IPv4 addresses, `ldh [16] ==
    /// 0x800` behind a VLAN tag) — fields of at most 16 bits that the set compares with at
    /// most [`CONTEXT_VALUES`] values, conditions that guard at least 1/[`CONTEXT_SHARE`] of
    /// the anchors. The rest of a guard (a VLAN number, the `!=` of an
    /// earlier address comparison) is checked per hit.
    pub fn build(anchorings: &[Anchoring]) -> Index {
        let mut index = Index { filters: anchorings.len(), ..Index::default() };
        index.guards.push(Vec::new());
        // The values each guard field is compared with: protocol fields (EtherTypes, IP
        // protocols, the fragment bits) take few, addresses and ports many.
        let mut values: HashMap<Field, std::collections::HashSet<u32>> = HashMap::new();
        let mut tested_eq: std::collections::HashSet<Field> = std::collections::HashSet::new();
        // How many anchors each condition guards: a protocol test guards many, a VLAN number or
        // an address few.
        let mut guarded: HashMap<Cond, usize> = HashMap::new();
        let mut anchors_total = 0usize;
        for a in anchorings {
            let Anchoring::Anchors(anchors) = a else { continue };
            anchors_total += anchors.len();
            for c in anchors.iter().flat_map(|a| &a.guard) {
                values.entry(c.field).or_default().insert(c.value);
                *guarded.entry(*c).or_default() += 1;
                if c.eq {
                    tested_eq.insert(c.field);
                }
            }
        }
        let many = (anchors_total / CONTEXT_SHARE).max(8);
        // `!=` conditions are context only on fields guards also test for `==` (not an EtherType
        // but the ports an earlier comparison ruled out).
        let context = |c: &Cond| {
            c.field.bits() <= 16
                && values.get(&c.field).is_some_and(|v| v.len() <= CONTEXT_VALUES)
                && (c.eq || tested_eq.contains(&c.field))
                && guarded.get(c).is_some_and(|&n| n >= many)
        };
        let mut field_ids: HashMap<Field, u32> = HashMap::new();
        let mut cond_ids: HashMap<Cond, u32> = HashMap::new();
        let mut guard_ids: HashMap<Vec<u32>, u32> = HashMap::from([(Vec::new(), 0)]);
        // (field, context) → value → entries.
        let mut tables: HashMap<(Field, Vec<Cond>), HashMap<u32, Vec<Entry>>> = HashMap::new();
        for (rank, a) in anchorings.iter().enumerate() {
            let rank = rank as u32;
            let anchors = match a {
                Anchoring::Never => continue,
                Anchoring::Always => {
                    index.always.push(rank);
                    continue;
                }
                Anchoring::Anchors(anchors) => anchors,
            };
            for Anchor { field, value, guard, exact } in anchors {
                let (context, rest): (Vec<Cond>, Vec<Cond>) =
                    guard.iter().partition(|c| context(c));
                let rest = index.intern_guard(&rest, &mut field_ids, &mut cond_ids, &mut guard_ids);
                let list = tables.entry((*field, context)).or_default().entry(*value).or_default();
                match list.iter_mut().find(|e| e.rank == rank && e.guard == rest) {
                    Some(e) => e.exact |= *exact,
                    None => list.push(Entry { rank, guard: rest, exact: *exact }),
                }
            }
        }
        let mut tables: Vec<_> = tables.into_iter().collect();
        // Tables with the same context next to each other: its outcome is reused.
        tables.sort_by(|a, b| a.0.1.cmp(&b.0.1).then(a.0.0.cmp(&b.0.0)));
        for ((field, context), values) in tables {
            let f = index.intern_field(field, &mut field_ids);
            let guard = index.intern_guard(&context, &mut field_ids, &mut cond_ids, &mut guard_ids);
            let mut lists: Vec<(u32, Vec<Entry>)> = values.into_iter().collect();
            lists.sort_unstable_by_key(|e| e.0);
            index.tables.push(Table { field: f, guard, map: ValueMap::new(lists), bloom_at: 0 });
        }
        for t in &mut index.tables {
            t.bloom_at = index.blooms.len() as u32;
            index.blooms.append(&mut t.map.bloom);
        }
        index.switch = index.plan(&mut guard_ids);
        index
    }

    /// The switch: on the field most tables' contexts test, one plan per value they name.
    fn plan(&mut self, guard_ids: &mut HashMap<Vec<u32>, u32>) -> Switch {
        // The fields contexts test most are the candidates; the one whose longest plan is
        // shortest wins (a VLAN number in a few filters' contexts is no EtherType).
        let mut uses: Vec<(u32, usize)> = self.context_fields();
        uses.sort_by_key(|&(f, n)| (std::cmp::Reverse(n), f));
        let mut best: Option<(usize, Switch)> = None;
        for &(f, _) in uses.iter().take(4) {
            let sw = self.plan_on(Some(f), guard_ids);
            let longest = sw.plans.iter().map(|p| p.steps.len()).max().unwrap_or(0);
            if best.as_ref().is_none_or(|b| longest < b.0) {
                best = Some((longest, sw));
            }
        }
        match best {
            Some((_, sw)) => sw,
            None => self.plan_on(None, guard_ids),
        }
    }

    /// How many tables' contexts test each field.
    fn context_fields(&self) -> Vec<(u32, usize)> {
        let mut uses: HashMap<u32, usize> = HashMap::new();
        for t in &self.tables {
            let mut fields: Vec<u32> =
                self.guards[t.guard as usize].iter().map(|&c| self.conds[c as usize].0).collect();
            fields.dedup();
            for f in fields {
                *uses.entry(f).or_default() += 1;
            }
        }
        uses.into_iter().collect()
    }

    /// The switch on `field` (`None`: one plan of every table).
    fn plan_on(&mut self, field: Option<u32>, guard_ids: &mut HashMap<Vec<u32>, u32>) -> Switch {
        let Some(sw) = field else {
            let steps: Vec<(u32, u32)> =
                (0..self.tables.len() as u32).map(|t| (t, self.tables[t as usize].guard)).collect();
            let plan = self.finish_plan(&steps, guard_ids);
            return Switch {
                field: None,
                cases: Vec::new(),
                default: 0,
                unloadable: 0,
                plans: vec![plan],
            };
        };
        let mut values: Vec<u32> = self.conds.iter().filter(|c| c.0 == sw).map(|c| c.2).collect();
        values.sort_unstable();
        values.dedup();
        // `Some(v)`: the field holds v; `None`: it holds a value no condition names, or (when
        // `loaded` is false) cannot be loaded.
        let plan_for =
            |index: &mut Index, v: Option<u32>, loaded: bool, ids: &mut HashMap<Vec<u32>, u32>| {
                let mut steps = Vec::new();
                for (t, table) in index.tables.iter().enumerate() {
                    let conds = &index.guards[table.guard as usize];
                    let fits = conds.iter().all(|&c| {
                        let (f, eq, value) = index.conds[c as usize];
                        f != sw || (loaded && (v.map_or(!eq, |v| (v == value) == eq)))
                    });
                    if fits {
                        let rest: Vec<u32> = conds
                            .iter()
                            .copied()
                            .filter(|&c| index.conds[c as usize].0 != sw)
                            .collect();
                        steps.push((t as u32, rest));
                    }
                }
                let steps: Vec<(u32, u32)> = steps
                    .into_iter()
                    .map(|(t, rest)| {
                        let guard = *ids.entry(rest.clone()).or_insert_with(|| {
                            index.guards.push(rest);
                            index.guards.len() as u32 - 1
                        });
                        (t, guard)
                    })
                    .collect();
                index.finish_plan(&steps, ids)
            };
        let mut plans = Vec::new();
        let mut cases = Vec::new();
        for &v in &values {
            plans.push(plan_for(self, Some(v), true, guard_ids));
            cases.push((v, plans.len() as u32 - 1));
        }
        plans.push(plan_for(self, None, true, guard_ids));
        let default = plans.len() as u32 - 1;
        plans.push(plan_for(self, None, false, guard_ids));
        let unloadable = plans.len() as u32 - 1;
        Switch { field: Some(sw), cases, default, unloadable, plans }
    }

    /// A plan of `(table, context guard)` steps: the first 64 conditions as bits.
    fn finish_plan(&mut self, steps: &[(u32, u32)], ids: &mut HashMap<Vec<u32>, u32>) -> Plan {
        let mut bit_of: HashMap<u32, u32> = HashMap::new();
        let mut plan = Plan::default();
        for &(t, g) in steps {
            let mut mask = 0u64;
            let mut rest = Vec::new();
            for &c in &self.guards[g as usize] {
                let bit = match bit_of.get(&c) {
                    Some(&b) => Some(b),
                    None if plan.conds.len() < 64 => {
                        let (f, eq, value) = self.conds[c as usize];
                        plan.conds.push(Cond { field: self.fields[f as usize], eq, value });
                        bit_of.insert(c, plan.conds.len() as u32 - 1);
                        Some(plan.conds.len() as u32 - 1)
                    }
                    None => None,
                };
                match bit {
                    Some(b) => mask |= 1 << b,
                    None => rest.push(c),
                }
            }
            let guard = *ids.entry(rest.clone()).or_insert_with(|| {
                self.guards.push(rest);
                self.guards.len() as u32 - 1
            });
            let table = &self.tables[t as usize];
            let field = self.fields[table.field as usize];
            let (bloom_at, bloom_mask) = (table.bloom_at, table.map.bloom_mask);
            plan.steps.push(Step { field, table: t, mask, guard, bloom_at, bloom_mask });
        }
        plan
    }

    fn intern_field(&mut self, f: Field, ids: &mut HashMap<Field, u32>) -> u32 {
        *ids.entry(f).or_insert_with(|| {
            self.fields.push(f);
            self.fields.len() as u32 - 1
        })
    }

    fn intern_guard(
        &mut self,
        conds: &[Cond],
        field_ids: &mut HashMap<Field, u32>,
        cond_ids: &mut HashMap<Cond, u32>,
        guard_ids: &mut HashMap<Vec<u32>, u32>,
    ) -> u32 {
        let mut g: Vec<u32> = conds
            .iter()
            .map(|c| {
                let f = self.intern_field(c.field, field_ids);
                *cond_ids.entry(*c).or_insert_with(|| {
                    self.conds.push((f, c.eq, c.value));
                    self.conds.len() as u32 - 1
                })
            })
            .collect();
        g.sort_unstable();
        *guard_ids.entry(g.clone()).or_insert_with(|| {
            self.guards.push(g);
            self.guards.len() as u32 - 1
        })
    }

    /// A scratch area for [`Index::candidates`].
    pub fn scratch(&self) -> Scratch {
        Scratch { stamp: 0, seen: vec![(0, 0); self.filters], values: vec![0; 64] }
    }

    /// The filters that may accept the packet, ascending by rank, each once, with whether a
    /// hit already decided it (`true`: it accepts; `false`: run it). Every filter that accepts
    /// the packet is among them.
    pub fn candidates(
        &self,
        pkt: &[u8],
        wire_len: u32,
        s: &mut Scratch,
        out: &mut Vec<(u32, bool)>,
    ) {
        out.clear();
        if s.seen.len() != self.filters || s.values.len() != 64 {
            *s = self.scratch();
        }
        s.next();
        let stamp = s.stamp;
        let sw = &self.switch;
        let plan = match sw.field {
            None => 0,
            Some(f) => match self.fields[f as usize].eval(pkt, wire_len) {
                None => sw.unloadable,
                Some(v) => match sw.cases.binary_search_by_key(&v, |c| c.0) {
                    Ok(i) => sw.cases[i].1,
                    Err(_) => sw.default,
                },
            },
        };
        let Some(plan) = sw.plans.get(plan as usize) else { return };
        let mut bits = 0u64;
        for (i, c) in plan.conds.iter().enumerate() {
            bits |= u64::from(c.holds(pkt, wire_len)) << i;
        }
        // Two passes over each group of 64 steps: first every step's field and bitmap bit, with
        // no branch on the bitmaps' (often missing) cache lines, so their loads overlap; then
        // the tables of the steps whose bit is set.
        for group in plan.steps.chunks(64) {
            let mut maybe = 0u64;
            for (i, step) in group.iter().enumerate() {
                if bits & step.mask != step.mask {
                    continue;
                }
                let Some(v) = step.field.eval(pkt, wire_len) else { continue };
                let b = ValueMap::bloom_bit(v, step.bloom_mask);
                let word = self
                    .blooms
                    .get(step.bloom_at as usize + (b / 64) as usize)
                    .copied()
                    .unwrap_or(0);
                maybe |= ((word >> (b % 64)) & 1) << i;
                s.values[i] = v;
            }
            while maybe != 0 {
                let i = maybe.trailing_zeros() as usize;
                maybe &= maybe - 1;
                let step = &group[i];
                if step.guard != 0 && !self.holds(step.guard, pkt, wire_len) {
                    continue;
                }
                let Some(t) = self.tables.get(step.table as usize) else { continue };
                self.hits(t.map.get(s.values[i]), pkt, wire_len, stamp, &mut s.seen, out);
            }
        }
        out.extend(self.always.iter().map(|&r| (r, false)));
        if out.len() > 1 {
            out.sort_unstable_by_key(|e| e.0);
        }
    }

    /// Adds a table's hit anchors whose guard holds to the candidates.
    #[inline]
    fn hits(
        &self,
        entries: &[Entry],
        pkt: &[u8],
        wire_len: u32,
        stamp: u32,
        seen: &mut [(u32, u32)],
        out: &mut Vec<(u32, bool)>,
    ) {
        {
            for e in entries {
                if e.guard != 0 && !self.holds(e.guard, pkt, wire_len) {
                    continue;
                }
                let Some(seen) = seen.get_mut(e.rank as usize) else { continue };
                if seen.0 != stamp {
                    *seen = (stamp, out.len() as u32);
                    out.push((e.rank, e.exact));
                } else if e.exact {
                    out[seen.1 as usize].1 = true;
                }
            }
        }
    }

    /// Whether every condition of guard `g` holds (evaluated afresh: guards beyond a plan's
    /// bits are rare, and per-hit guards run only on hits).
    #[inline]
    fn holds(&self, g: u32, pkt: &[u8], wire_len: u32) -> bool {
        self.guards.get(g as usize).is_none_or(|conds| {
            conds.iter().all(|&c| {
                let (f, eq, value) = self.conds[c as usize];
                self.fields[f as usize].eval(pkt, wire_len).is_some_and(|v| (v == value) == eq)
            })
        })
    }
}

/// Per-packet memory of [`Index::candidates`]: generation stamps instead of clearing.
#[derive(Clone, Debug)]
pub struct Scratch {
    stamp: u32,
    /// Per filter: the packet's stamp, and where it is in the candidates.
    seen: Vec<(u32, u32)>,
    /// The fields' values of a group of steps.
    values: Vec<u32>,
}

impl Scratch {
    fn next(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: old stamps could be mistaken for this packet's.
            self.seen.fill((0, 0));
            self.stamp = 1;
        }
    }
}
