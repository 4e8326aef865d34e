//! The slow path: what decides a packet the caches have not seen, and the OpenFlow table that
//! decides by rules.
//!
//! **Why the mask matters.** A megaflow is a cached decision for every packet that agrees
//! with one packet on some bits. It is exact only if the decision depended on nothing else. So
//! the slow path returns, with its actions, the bits it looked at: [`FlowTable::classify`]
//! tries rules in priority order and, for each rule tried, un-wildcards the fields it compared
//! up to the first mismatch (all of them for the rule that matched). A mismatch on an IP
//! address un-wildcards its prefix only down to the first differing bit (the length consulted,
//! as OVS's prefix tries do), which keeps megaflows wide where rules are prefixes. Any packet
//! agreeing on those bits is compared the same way by every rule tried, so it gets the same
//! rule: the megaflow built from the mask is exact.
//!
//! Other slow paths (pf as a firewall) implement [`SlowPath`] and use the same caches; one
//! whose decision is not a function of the key alone says so with `cacheable: false`.

use std::sync::Arc;

use crate::key::{Field, FlowKey, FlowMask};
use crate::rules::{Actions, Match, PortMap, Rule, print};

/// The tag of an upcall no rule decided (the table-miss `drop`).
pub const NO_RULE: u64 = u64::MAX;

/// What a slow path decided for one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upcall {
    /// The actions for the packet.
    pub actions: Arc<Actions>,
    /// The key bits the decision depended on: every packet that agrees on them gets the same
    /// actions (when `cacheable`).
    pub mask: FlowMask,
    /// Whether the decision may be cached (false for a stateful decision that depends on
    /// more than the key).
    pub cacheable: bool,
    /// The slow path's name for what decided (a rule's index), handed back with the counts
    /// of cached hits by [`SlowPath::credit`].
    pub tag: u64,
}

/// A slow path for the caches of [`Datapath`](crate::Datapath).
pub trait SlowPath {
    /// Decides a packet (its key, and its frame for slow paths that look further).
    fn upcall(&mut self, key: &FlowKey, frame: &[u8]) -> Upcall;

    /// Decides a megaflow's key again after a change of the slow path, without counting it:
    /// `None` if the slow path cannot (the cache then drops the megaflow).
    fn revalidate(&self, key: &FlowKey) -> Option<Upcall> {
        let _ = key;
        None
    }

    /// Counts packets the caches decided with an upcall's `tag` (pushed in batches, as OVS's
    /// revalidators push datapath flow statistics to rules).
    fn credit(&mut self, tag: u64, packets: u64, bytes: u64) {
        let _ = (tag, packets, bytes);
    }
}

/// A rule's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleStats {
    /// Packets matched.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// One comparison of a rule: the bits of one word of the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Check {
    word: usize,
    mask: u64,
    value: u64,
    /// Part of an IP address: a mismatch needs only the bits down to the first difference.
    prefix: bool,
}

#[derive(Clone, Debug)]
struct Entry {
    rule: Rule,
    checks: Box<[Check]>,
    stats: RuleStats,
}

/// The result of [`FlowTable::classify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classified {
    /// The index of the matching rule (in priority order), if any.
    pub rule: Option<usize>,
    /// The bits compared.
    pub mask: FlowMask,
}

/// An OpenFlow table: rules in priority order (ties: the rule added first wins), with
/// per-rule counters; a packet no rule matches is dropped and counted as a table miss.
#[derive(Clone, Debug)]
pub struct FlowTable {
    entries: Vec<Entry>,
    drop: Arc<Actions>,
    misses: RuleStats,
}

impl Default for FlowTable {
    fn default() -> FlowTable {
        FlowTable::new()
    }
}

fn checks(m: &Match) -> Box<[Check]> {
    let mut out = Vec::new();
    for f in Field::ALL {
        for (word, bits) in f.word_masks() {
            let mask = m.mask().words()[word] & bits;
            if mask != 0 {
                let value = m.key().words()[word] & mask;
                out.push(Check { word, mask, value, prefix: f.is_address() });
            }
        }
    }
    out.into_boxed_slice()
}

impl FlowTable {
    /// An empty table (every packet dropped).
    pub fn new() -> FlowTable {
        FlowTable {
            entries: Vec::new(),
            drop: Arc::new(Actions::drop()),
            misses: RuleStats::default(),
        }
    }

    /// A table of `rules`, added in order.
    pub fn with_rules(rules: impl IntoIterator<Item = Rule>) -> FlowTable {
        let mut t = FlowTable::new();
        for r in rules {
            t.add(r);
        }
        t
    }

    /// Adds a rule after the rules of its priority. A rule with the same priority and match
    /// is replaced, counters and all (OpenFlow's `OFPFC_ADD`).
    pub fn add(&mut self, rule: Rule) {
        self.remove(rule.priority, &rule.matches);
        let at = self.entries.partition_point(|e| e.rule.priority >= rule.priority);
        let checks = checks(&rule.matches);
        self.entries.insert(at, Entry { rule, checks, stats: RuleStats::default() });
    }

    /// Removes the rule with this priority and match (`ovs-ofctl del-flows --strict`);
    /// whether there was one.
    pub fn remove(&mut self, priority: u16, m: &Match) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.rule.priority != priority || e.rule.matches != *m);
        self.entries.len() != before
    }

    /// Removes every rule (and the table-miss counters).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.misses = RuleStats::default();
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The rules in priority order, with their counters.
    pub fn rules(&self) -> impl Iterator<Item = (&Rule, RuleStats)> {
        self.entries.iter().map(|e| (&e.rule, e.stats))
    }

    /// Rule `i` in priority order.
    pub fn rule(&self, i: usize) -> Option<&Rule> {
        self.entries.get(i).map(|e| &e.rule)
    }

    /// The packets no rule matched.
    pub fn miss_stats(&self) -> RuleStats {
        self.misses
    }

    /// The rule deciding `key` and the bits the decision consulted.
    pub fn classify(&self, key: &FlowKey) -> Classified {
        let words = key.words();
        let mut mask = FlowMask::default();
        'rules: for (i, e) in self.entries.iter().enumerate() {
            for c in e.checks.iter() {
                let diff = (words[c.word] ^ c.value) & c.mask;
                if diff != 0 {
                    let bits = if c.prefix {
                        // The bits down to the highest differing one decide the mismatch.
                        let top = 1u64 << (63 - diff.leading_zeros());
                        c.mask & !(top - 1)
                    } else {
                        c.mask
                    };
                    mask.add_word_bits(c.word, bits);
                    continue 'rules;
                }
                mask.add_word_bits(c.word, c.mask);
            }
            return Classified { rule: Some(i), mask };
        }
        Classified { rule: None, mask }
    }

    fn decide(&self, c: &Classified) -> Upcall {
        let (actions, tag) = match c.rule {
            Some(i) => (self.entries[i].rule.actions.clone(), i as u64),
            None => (self.drop.clone(), NO_RULE),
        };
        Upcall { actions, mask: c.mask, cacheable: true, tag }
    }

    /// `ovs-ofctl dump-flows`'s lines, one a rule in priority order.
    pub fn dump(&self, ports: &PortMap) -> String {
        self.entries
            .iter()
            .map(|e| print::dump_line(&e.rule, e.stats.packets, e.stats.bytes, ports) + "\n")
            .collect()
    }
}

impl SlowPath for FlowTable {
    fn upcall(&mut self, key: &FlowKey, frame: &[u8]) -> Upcall {
        let c = self.classify(key);
        let up = self.decide(&c);
        self.credit(up.tag, 1, frame.len() as u64);
        up
    }

    fn revalidate(&self, key: &FlowKey) -> Option<Upcall> {
        Some(self.decide(&self.classify(key)))
    }

    fn credit(&mut self, tag: u64, packets: u64, bytes: u64) {
        let s = match usize::try_from(tag).ok().and_then(|i| self.entries.get_mut(i)) {
            Some(e) => &mut e.stats,
            None => &mut self.misses,
        };
        s.packets += packets;
        s.bytes += bytes;
    }
}
