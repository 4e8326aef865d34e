//! pf tables: sets of networks matched by longest prefix, where a negated entry (`!net`) makes
//! the addresses it covers a non-match when it is the most specific entry covering them.
//!
//! Why its own structure: a table may hold a million prefixes and is consulted for every
//! packet a rule with `<name>` sees, so lookups must not scan. Each address family has a
//! path-compressed binary trie (a Patricia trie, as pf's radix tree): a node is a prefix
//! (its bits and length), inner nodes exist only where two subtrees branch, and a lookup walks
//! one root-to-leaf path remembering the deepest node holding an entry — so a lookup costs at
//! most one node per distinct prefix length on the path, never one per entry. Entries are
//! added, deleted and replaced at run time (pfctl's `-T add/delete/replace/flush`); the table
//! keeps pf's match and no-match counters.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// No node (an empty child slot).
const NIL: u32 = u32::MAX;

/// One entry of a table: a network, possibly negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// The network's address (masked to `len` bits when built with [`Prefix::new`]).
    pub addr: IpAddr,
    /// The prefix length (32 or 128 for a host).
    pub len: u8,
    /// `!`: addresses whose most specific entry this is do not match.
    pub negated: bool,
}

impl Prefix {
    /// `addr/len`, the address masked to its prefix; `None` when `len` is longer than the
    /// family allows.
    pub fn new(addr: IpAddr, len: u8, negated: bool) -> Option<Prefix> {
        let width = width_of(&addr);
        if u32::from(len) > width {
            return None;
        }
        let key = key_of(addr) & mask(len);
        Some(Prefix { addr: addr_of(key, addr.is_ipv4()), len, negated })
    }

    /// A host entry (`/32` or `/128`).
    pub fn host(addr: IpAddr) -> Prefix {
        let len = width_of(&addr) as u8;
        Prefix { addr, len, negated: false }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negated {
            f.write_str("!")?;
        }
        write!(f, "{}", self.addr)?;
        if u32::from(self.len) != width_of(&self.addr) {
            write!(f, "/{}", self.len)?;
        }
        Ok(())
    }
}

/// Why a table entry could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// Not an address, or a mask too long for its family.
    #[error("line {line}: {word:?} is not a network (address[/bits], optionally after `!`)")]
    BadEntry {
        /// 1-based line of the file or text.
        line: usize,
        /// The word as written.
        word: String,
    },
    /// The file could not be read.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
}

impl FromStr for Prefix {
    type Err = TableError;

    /// `[!]address[/bits]`, numeric addresses only (pf tables hold no names).
    fn from_str(s: &str) -> Result<Prefix, TableError> {
        let bad = || TableError::BadEntry { line: 0, word: s.to_string() };
        let (negated, rest) = match s.strip_prefix('!') {
            Some(r) => (true, r.trim_start()),
            None => (false, s),
        };
        let (addr, len) = match rest.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (rest, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let len = match len {
            Some(l) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) && l.len() <= 3 => {
                l.parse::<u8>().map_err(|_| bad())?
            }
            Some(_) => return Err(bad()),
            None => width_of(&addr) as u8,
        };
        Prefix::new(addr, len, negated).ok_or_else(bad)
    }
}

/// Reads a table file's text as pfctl's `-T … -f FILE`: words separated by white space, `#`
/// to the end of the line a comment.
pub fn parse_entries(text: &str) -> Result<Vec<Prefix>, TableError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            // `! 10.0.0.0/8` with a space after the `!` is one entry.
            let word = if w == "!" {
                match words.next() {
                    Some(n) => format!("!{n}"),
                    None => w.to_string(),
                }
            } else {
                w.to_string()
            };
            let p = word
                .parse::<Prefix>()
                .map_err(|_| TableError::BadEntry { line: i + 1, word: word.clone() })?;
            out.push(p);
        }
    }
    Ok(out)
}

/// Reads a table file (see [`parse_entries`]).
pub fn load_file(path: &std::path::Path) -> Result<Vec<Prefix>, TableError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TableError::Io { path: path.display().to_string(), reason: e.to_string() })?;
    parse_entries(&text)
}

/// What [`Table::add`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// A new entry.
    Added,
    /// The same entry was there already.
    Exists,
    /// The network was there with the other negation (pfctl's conflict; left unchanged).
    Conflict,
}

/// The counters of a table (pf's `pfrkt_match` / `pfrkt_nomatch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Lookups that matched.
    pub matches: u64,
    /// Lookups that did not.
    pub misses: u64,
}

/// A pf table: IPv4 and IPv6 entries, each family in its own trie.
#[derive(Clone, Debug, Default)]
pub struct Table {
    name: String,
    v4: Trie,
    v6: Trie,
    counters: Counters,
}

impl Table {
    /// An empty table.
    pub fn new(name: &str) -> Table {
        Table {
            name: name.to_string(),
            v4: Trie::new(32),
            v6: Trie::new(128),
            counters: Counters::default(),
        }
    }

    /// A table holding `entries` (later duplicates and conflicts are dropped, as pfctl does).
    pub fn with_entries(name: &str, entries: &[Prefix]) -> Table {
        let mut t = Table::new(name);
        for e in entries {
            t.add(*e);
        }
        t
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn trie(&self, addr: &IpAddr) -> &Trie {
        if addr.is_ipv4() { &self.v4 } else { &self.v6 }
    }

    fn trie_mut(&mut self, addr: &IpAddr) -> &mut Trie {
        if addr.is_ipv4() { &mut self.v4 } else { &mut self.v6 }
    }

    /// Adds an entry.
    pub fn add(&mut self, p: Prefix) -> Added {
        let p = Prefix::new(p.addr, p.len, p.negated).unwrap_or(p);
        self.trie_mut(&p.addr).insert(key_of(p.addr), p.len, p.negated, false)
    }

    /// Deletes the entry for `p`'s network (its negation must agree, as in pfctl); whether one
    /// was deleted.
    pub fn delete(&mut self, p: &Prefix) -> bool {
        let key = key_of(p.addr) & mask(p.len);
        self.trie_mut(&p.addr).remove(key, p.len, Some(p.negated))
    }

    /// Replaces the contents with `entries` (pfctl's `-T replace`).
    pub fn replace(&mut self, entries: &[Prefix]) {
        self.flush();
        for e in entries {
            let p = Prefix::new(e.addr, e.len, e.negated).unwrap_or(*e);
            self.trie_mut(&p.addr).insert(key_of(p.addr), p.len, p.negated, true);
        }
    }

    /// Removes every entry; returns how many there were.
    pub fn flush(&mut self) -> usize {
        let n = self.len();
        self.v4 = Trie::new(32);
        self.v6 = Trie::new(128);
        n
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.v4.entries + self.v6.entries
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `addr` matches (its most specific entry exists and is not negated), without
    /// touching the counters (`pfctl -T test`).
    pub fn test(&self, addr: IpAddr) -> bool {
        self.trie(&addr).lookup(key_of(addr)) == Some(false)
    }

    /// Whether the address (16 bytes as pf's `pf_addr`, IPv4 in the first four) of family
    /// `v4`/IPv6 matches; counts the lookup.
    pub fn match_key(&mut self, key: u128, v4: bool) -> bool {
        let t = if v4 { &mut self.v4 } else { &mut self.v6 };
        let hit = t.lookup_counted(key) == Some(false);
        self.count(hit);
        hit
    }

    /// Counts a lookup whose answer was `hit` (for a caller that remembered the answer).
    pub(crate) fn count(&mut self, hit: bool) {
        if hit {
            self.counters.matches += 1;
        } else {
            self.counters.misses += 1;
        }
    }

    /// Like [`Table::test`], counting the lookup as a rule's would.
    pub fn matches(&mut self, addr: IpAddr) -> bool {
        self.match_key(key_of(addr), addr.is_ipv4())
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Resets the counters (pfctl's `-T zero`).
    pub fn zero(&mut self) {
        self.counters = Counters::default();
    }

    /// The entries, IPv4 first, each family in address order (shorter prefixes first).
    pub fn entries(&self) -> Vec<Prefix> {
        let mut out = Vec::with_capacity(self.len());
        self.v4.collect(true, &mut out);
        self.v6.collect(false, &mut out);
        out
    }
}

/// The key of an address: its 16 bytes big-endian, IPv4 in the top 32 bits.
pub fn key_of(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)) << 96,
        IpAddr::V6(a) => u128::from(a),
    }
}

fn addr_of(key: u128, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::V4(Ipv4Addr::from((key >> 96) as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(key))
    }
}

fn width_of(addr: &IpAddr) -> u32 {
    if addr.is_ipv4() { 32 } else { 128 }
}

/// The mask of the first `len` bits.
#[inline]
pub fn mask(len: u8) -> u128 {
    if len == 0 { 0 } else { u128::MAX << (128 - u32::from(len.min(128))) }
}

#[inline]
fn bit(key: u128, at: u8) -> usize {
    ((key >> (127 - u32::from(at))) & 1) as usize
}

/// A node: a prefix, perhaps an entry, two children.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: u128,
    len: u8,
    /// 0 none, 1 entry, 2 negated entry.
    entry: u8,
    child: [u32; 2],
}

/// A path-compressed binary trie over keys of `width` bits (32 or 128).
///
/// A large trie is deep (a million prefixes: some twenty nodes from the root to a host's
/// entry), and its lower levels miss the caches. Once it has been looked up often enough
/// since it last changed, a jump table indexed by the key's first bits (see [`Jump`]) takes
/// lookups past the top levels in one access; any change drops it, so tables that change
/// between lookups never pay for building one.
#[derive(Clone, Debug)]
struct Trie {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    width: u8,
    entries: usize,
    jump: Option<Jump>,
    /// Lookups since the last change (counted by [`Trie::lookup_counted`]).
    lookups: u64,
}

/// For each value of a key's first `bits` bits (a block of addresses): the node where a walk
/// from the root for any key of the block arrives once it has passed the nodes shorter than
/// `bits` (`NIL`: the walk ends there), and the entry found on the way (as
/// [`Node::entry`]). Those nodes' tests depend only on the block, so the walk can start there.
#[derive(Clone, Debug)]
struct Jump {
    bits: u8,
    slots: Vec<(u32, u8)>,
}

/// The fewest entries a trie has before it gets a jump table, and the entries from which it
/// uses [`JUMP_BITS_LARGE`] bits instead of [`JUMP_BITS_SMALL`].
const JUMP_MIN_ENTRIES: usize = 4096;
const JUMP_LARGE_ENTRIES: usize = 1 << 17;
/// Jump table sizes: 2^16 slots (512 KiB) and 2^20 (8 MiB).
const JUMP_BITS_SMALL: u8 = 16;
const JUMP_BITS_LARGE: u8 = 20;

impl Default for Trie {
    fn default() -> Trie {
        Trie::new(128)
    }
}

impl Trie {
    fn new(width: u8) -> Trie {
        Trie {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NIL,
            width,
            entries: 0,
            jump: None,
            lookups: 0,
        }
    }

    /// The trie changed: its jump table no longer holds.
    fn changed(&mut self) {
        self.jump = None;
        self.lookups = 0;
    }

    /// [`Trie::lookup`] for a rule's test: counts it, and builds the jump table once the trie
    /// is large and has been looked up about as often as building the table costs (one walk
    /// per slot) since it last changed.
    fn lookup_counted(&mut self, key: u128) -> Option<bool> {
        if self.jump.is_none() && self.entries >= JUMP_MIN_ENTRIES {
            self.lookups += 1;
            let bits =
                if self.entries >= JUMP_LARGE_ENTRIES { JUMP_BITS_LARGE } else { JUMP_BITS_SMALL };
            if self.lookups >= 1 << bits && bits <= self.width {
                self.build_jump(bits);
            }
        }
        self.lookup(key)
    }

    fn build_jump(&mut self, bits: u8) {
        let mut slots = vec![(NIL, 0u8); 1 << bits];
        // Depth-first over the nodes shorter than `bits`: each fills the blocks it covers with
        // the walk's result for a key that fails its test, then its children refine them.
        let mut stack = vec![(self.root, 0u128, 0u8, 0u8)];
        while let Some((n, region, region_len, best)) = stack.pop() {
            let block = |key: u128| (key >> (128 - u32::from(bits))) as usize;
            let span = |len: u8| 1usize << (bits - len.min(bits));
            let first = block(region);
            slots[first..first + span(region_len)].fill((NIL, best));
            if n == NIL {
                continue;
            }
            let node = self.nodes[n as usize];
            if node.len >= bits {
                // Exactly one block can match the node's first `bits` bits.
                let b = block(node.key);
                if (node.key & mask(region_len)) == region {
                    slots[b] = (n, best);
                }
                continue;
            }
            if (node.key & mask(region_len)) != region {
                continue;
            }
            let best = if node.entry != 0 { node.entry } else { best };
            let one = 1u128 << (127 - u32::from(node.len));
            stack.push((node.child[0], node.key, node.len + 1, best));
            stack.push((node.child[1], node.key | one, node.len + 1, best));
        }
        self.jump = Some(Jump { bits, slots });
    }

    fn alloc(&mut self, key: u128, len: u8, entry: u8) -> u32 {
        let n = Node { key: key & mask(len), len, entry, child: [NIL, NIL] };
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = n;
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    /// The entry of the longest prefix covering `key`: `Some(negated)`, or `None`.
    #[inline]
    fn lookup(&self, key: u128) -> Option<bool> {
        let (mut n, mut best) = match &self.jump {
            Some(j) => j.slots[(key >> (128 - u32::from(j.bits))) as usize],
            None => (self.root, 0u8),
        };
        while n != NIL {
            let node = &self.nodes[n as usize];
            if (key & mask(node.len)) != node.key {
                break;
            }
            if node.entry != 0 {
                best = node.entry;
            }
            if node.len >= self.width {
                break;
            }
            n = node.child[bit(key, node.len)];
        }
        match best {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        }
    }

    /// Reads the slot `at`: the root (`None`) or a child of a node.
    fn slot(&self, at: Option<(u32, usize)>) -> u32 {
        match at {
            None => self.root,
            Some((p, b)) => self.nodes[p as usize].child[b],
        }
    }

    fn set_slot(&mut self, at: Option<(u32, usize)>, v: u32) {
        match at {
            None => self.root = v,
            Some((p, b)) => self.nodes[p as usize].child[b] = v,
        }
    }

    /// Inserts `key/len`; `overwrite` changes a conflicting negation instead of refusing.
    fn insert(&mut self, key: u128, len: u8, negated: bool, overwrite: bool) -> Added {
        self.changed();
        let key = key & mask(len);
        let want = if negated { 2 } else { 1 };
        let mut at: Option<(u32, usize)> = None;
        loop {
            let n = self.slot(at);
            if n == NIL {
                let leaf = self.alloc(key, len, want);
                self.set_slot(at, leaf);
                self.entries += 1;
                return Added::Added;
            }
            let node = self.nodes[n as usize];
            let common = common_len(key, len, node.key, node.len);
            if common == node.len && node.len == len {
                let nd = &mut self.nodes[n as usize];
                return match nd.entry {
                    0 => {
                        nd.entry = want;
                        self.entries += 1;
                        Added::Added
                    }
                    e if e == want => Added::Exists,
                    _ if overwrite => {
                        nd.entry = want;
                        Added::Added
                    }
                    _ => Added::Conflict,
                };
            }
            if common == node.len {
                // Below this node.
                at = Some((n, bit(key, node.len)));
                continue;
            }
            if common == len {
                // The new prefix sits above this node.
                let up = self.alloc(key, len, want);
                self.nodes[up as usize].child[bit(node.key, len)] = n;
                self.set_slot(at, up);
                self.entries += 1;
                return Added::Added;
            }
            // They part at `common`: a branch node with both below it.
            let branch = self.alloc(key, common, 0);
            let leaf = self.alloc(key, len, want);
            let b = bit(key, common);
            self.nodes[branch as usize].child[b] = leaf;
            self.nodes[branch as usize].child[1 - b] = n;
            self.set_slot(at, branch);
            self.entries += 1;
            return Added::Added;
        }
    }

    /// Removes the entry `key/len` (with negation `negated` when given).
    fn remove(&mut self, key: u128, len: u8, negated: Option<bool>) -> bool {
        self.changed();
        let mut parent: Option<(u32, usize)> = None;
        let mut at: Option<(u32, usize)> = None;
        loop {
            let n = self.slot(at);
            if n == NIL {
                return false;
            }
            let node = self.nodes[n as usize];
            if (key & mask(node.len)) != node.key || node.len > len {
                return false;
            }
            if node.len == len {
                if node.entry == 0 || negated.is_some_and(|neg| (node.entry == 2) != neg) {
                    return false;
                }
                self.nodes[n as usize].entry = 0;
                self.entries -= 1;
                self.prune(n, at);
                if let Some((p, _)) = at {
                    self.prune(p, parent);
                }
                return true;
            }
            parent = at;
            at = Some((n, bit(key, node.len)));
        }
    }

    /// Removes node `n` (in slot `at`) if it holds no entry and has fewer than two children.
    fn prune(&mut self, n: u32, at: Option<(u32, usize)>) {
        let node = self.nodes[n as usize];
        if node.entry != 0 {
            return;
        }
        let kids: Vec<u32> = node.child.iter().copied().filter(|&c| c != NIL).collect();
        if kids.len() >= 2 {
            return;
        }
        self.set_slot(at, kids.first().copied().unwrap_or(NIL));
        self.free.push(n);
    }

    fn collect(&self, v4: bool, out: &mut Vec<Prefix>) {
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            if n == NIL {
                continue;
            }
            let node = &self.nodes[n as usize];
            if node.entry != 0 {
                out.push(Prefix {
                    addr: addr_of(node.key, v4),
                    len: node.len,
                    negated: node.entry == 2,
                });
            }
            stack.push(node.child[1]);
            stack.push(node.child[0]);
        }
    }
}

/// The number of leading bits `a/alen` and `b/blen` share (at most the shorter length).
#[inline]
fn common_len(a: u128, alen: u8, b: u128, blen: u8) -> u8 {
    let diff = (a ^ b).leading_zeros().min(128) as u8;
    diff.min(alen).min(blen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jump table gives every lookup the plain walk's answer, for both families and both
    /// jump sizes, and is dropped (then rebuilt) when the table changes.
    #[test]
    fn jump_table_answers_as_the_walk() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (v4, count, bits) in [(true, 5000, 16), (true, 140_000, 20), (false, 5000, 16)] {
            let mut t = Table::new("t");
            // Prefixes clustered in a few blocks (so that blocks hold deep subtries), plus
            // short ones spanning many blocks, some negated.
            while t.len() < count {
                let r = next();
                let (addr, len) = if v4 {
                    let a = (r as u32 & 0x0f0f_ffff) | 0x0a00_0000;
                    let len = [4u8, 8, 12, 14, 16, 17, 20, 24, 24, 28, 32][(r >> 40) as usize % 11];
                    (IpAddr::V4(a.into()), len)
                } else {
                    let a = u128::from(r) << 64 | u128::from(next()) | 0x2001 << 112;
                    let len = [8u8, 15, 16, 17, 32, 48, 64, 128][(r >> 40) as usize % 8];
                    (IpAddr::V6(a.into()), len)
                };
                t.add(Prefix::new(addr, len, (r >> 50) % 7 == 0).unwrap());
            }
            let probes: Vec<u128> = (0..20_000)
                .map(|i| {
                    let r = u128::from(next());
                    let k = if v4 { (r & 0x0f0f_ffff_u128 | 0x0a00_0000) << 96 } else { r << 64 };
                    // Every third probe is an entry's own network.
                    if i % 3 == 0 { k & mask(24) } else { k }
                })
                .collect();
            let trie = if v4 { &mut t.v4 } else { &mut t.v6 };
            let walked: Vec<Option<bool>> = probes.iter().map(|&k| trie.lookup(k)).collect();
            for _ in 0..(1u32 << bits) {
                trie.lookup_counted(probes[0]);
            }
            assert_eq!(trie.jump.as_ref().map(|j| j.bits), Some(bits));
            let jumped: Vec<Option<bool>> = probes.iter().map(|&k| trie.lookup(k)).collect();
            assert_eq!(walked, jumped, "v4 {v4} bits {bits}");
            trie.insert(probes[1] & mask(8), 8, false, false);
            assert!(trie.jump.is_none());
        }
    }

    fn p(s: &str) -> Prefix {
        s.parse().unwrap()
    }

    #[test]
    fn more_specific_negation_wins() {
        let t = Table::with_entries("t", &[p("10.0.0.0/8"), p("!10.1.0.0/16"), p("10.1.2.0/24")]);
        assert!(t.test("10.9.9.9".parse().unwrap()));
        assert!(!t.test("10.1.9.9".parse().unwrap()));
        assert!(t.test("10.1.2.3".parse().unwrap()));
        assert!(!t.test("11.0.0.1".parse().unwrap()));
        assert!(!t.test("::1".parse().unwrap()));
    }

    #[test]
    fn add_delete_replace_flush() {
        let mut t = Table::new("t");
        assert_eq!(t.add(p("192.0.2.0/24")), Added::Added);
        assert_eq!(t.add(p("192.0.2.0/24")), Added::Exists);
        assert_eq!(t.add(p("!192.0.2.0/24")), Added::Conflict);
        assert_eq!(t.add(p("192.0.2.128/25")), Added::Added);
        assert_eq!(t.add(p("2001:db8::/32")), Added::Added);
        assert_eq!(t.len(), 3);
        assert!(t.delete(&p("192.0.2.0/24")));
        assert!(!t.delete(&p("192.0.2.0/24")));
        assert!(!t.test("192.0.2.1".parse().unwrap()));
        assert!(t.test("192.0.2.200".parse().unwrap()));
        t.replace(&[p("!0.0.0.0/0"), p("198.51.100.7")]);
        assert_eq!(t.len(), 2);
        assert!(t.test("198.51.100.7".parse().unwrap()));
        assert!(!t.test("2001:db8::1".parse().unwrap()));
        assert_eq!(t.flush(), 2);
        assert!(t.is_empty());
    }

    #[test]
    fn files_with_comments_and_bad_words() {
        let e = parse_entries("# c\n10.0.0.0/8 ! 10.1.0.0/16 # x\n\n2001:db8::1\n").unwrap();
        assert_eq!(e.len(), 3);
        assert!(e[1].negated);
        assert_eq!(e[2].len, 128);
        let err = parse_entries("10.0.0.0/8\n10.0.0.0/33\n").unwrap_err();
        assert_eq!(err, TableError::BadEntry { line: 2, word: "10.0.0.0/33".into() });
    }
}
