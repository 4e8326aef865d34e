//! The longest-prefix-match trie behind `BPF_MAP_TYPE_LPM_TRIE`: the kernel's
//! path-compressed binary trie (`kernel/bpf/lpm_trie.c`), nodes holding a prefix, two
//! children and, unless they are intermediate, the slot of their value. Lookups walk one path
//! from the root (never a scan); updates and deletes keep the kernel's shape (an
//! intermediate node where two prefixes part, removed again when a delete leaves it one
//! child).

/// One node: a prefix of `prefixlen` bits of `data` (the key's data bytes as they were
/// given), its children by the next bit, and its value's slot (`None`: intermediate).
#[derive(Clone, Debug)]
struct Node {
    prefixlen: u32,
    data: Vec<u8>,
    child: [Option<usize>; 2],
    slot: Option<u32>,
}

/// The trie; nodes live in a vector, freed indexes are reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct Trie {
    nodes: Vec<Node>,
    free_nodes: Vec<usize>,
    root: Option<usize>,
    /// Value-holding nodes.
    pub(crate) entries: u32,
}

/// Where a node hangs: the root or a parent's child.
#[derive(Clone, Copy)]
enum Link {
    Root,
    Child(usize, usize),
}

fn bit(data: &[u8], index: u32) -> usize {
    usize::from(data[(index / 8) as usize] >> (7 - index % 8) & 1)
}

/// Bits of `a` and `b` that agree from the start, at most `limit`.
fn common_bits(a: &[u8], b: &[u8], limit: u32) -> u32 {
    let mut n = 0;
    for (x, y) in a.iter().zip(b) {
        if n >= limit {
            break;
        }
        let diff = x ^ y;
        if diff != 0 {
            return (n + diff.leading_zeros()).min(limit);
        }
        n += 8;
    }
    n.min(limit)
}

/// The outcome of an update that found where the key goes.
pub(crate) enum Insert {
    /// The prefix existed: its value's slot, to overwrite.
    Replace(u32),
    /// A new prefix: the caller gives a slot with [`Trie::insert`].
    New,
}

impl Trie {
    fn get(&self, link: Link) -> Option<usize> {
        match link {
            Link::Root => self.root,
            Link::Child(p, b) => self.nodes[p].child[b],
        }
    }

    fn set(&mut self, link: Link, node: Option<usize>) {
        match link {
            Link::Root => self.root = node,
            Link::Child(p, b) => self.nodes[p].child[b] = node,
        }
    }

    fn alloc(&mut self, node: Node) -> usize {
        match self.free_nodes.pop() {
            Some(i) => {
                self.nodes[i] = node;
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    fn matchlen(&self, node: usize, prefixlen: u32, data: &[u8]) -> u32 {
        let n = &self.nodes[node];
        common_bits(&n.data, data, n.prefixlen.min(prefixlen))
    }

    /// The slot of the longest prefix that covers the first `prefixlen` bits of `data`.
    pub(crate) fn lookup(&self, prefixlen: u32, data: &[u8]) -> Option<u32> {
        let max = data.len() as u32 * 8;
        let mut found = None;
        let mut at = self.root;
        while let Some(n) = at {
            let m = self.matchlen(n, prefixlen, data);
            let node = &self.nodes[n];
            if m == max {
                return node.slot.or(found);
            }
            if m < node.prefixlen {
                break;
            }
            if node.slot.is_some() {
                found = node.slot;
            }
            at = node.child[bit(data, node.prefixlen)];
        }
        found
    }

    /// Walks to where `prefixlen`/`data` belongs: the link and the node there (if any) and
    /// how many bits of it match.
    fn walk(&self, prefixlen: u32, data: &[u8]) -> (Link, Option<usize>, u32) {
        let max = data.len() as u32 * 8;
        let mut link = Link::Root;
        loop {
            let Some(n) = self.get(link) else { return (link, None, 0) };
            let m = self.matchlen(n, prefixlen, data);
            let p = self.nodes[n].prefixlen;
            if p != m || p == prefixlen || p == max {
                return (link, Some(n), m);
            }
            link = Link::Child(n, bit(data, p));
        }
    }

    /// The slot of exactly this prefix.
    pub(crate) fn exact(&self, prefixlen: u32, data: &[u8]) -> Option<u32> {
        match self.walk(prefixlen, data) {
            (_, Some(n), m) if m == prefixlen && self.nodes[n].prefixlen == prefixlen => {
                self.nodes[n].slot
            }
            _ => None,
        }
    }

    /// Whether the prefix exists ([`Insert::Replace`]) or would be new.
    pub(crate) fn find_for_update(&self, prefixlen: u32, data: &[u8]) -> Insert {
        match self.exact(prefixlen, data) {
            Some(s) => Insert::Replace(s),
            None => Insert::New,
        }
    }

    /// An existing prefix's value is replaced: the kernel puts a new node in its place,
    /// which keeps the data bytes of the key it was given (also past the prefix).
    pub(crate) fn replace_data(&mut self, prefixlen: u32, data: &[u8]) {
        if let (_, Some(n), m) = self.walk(prefixlen, data)
            && m == prefixlen
            && self.nodes[n].prefixlen == prefixlen
        {
            self.nodes[n].data = data.to_vec();
        }
    }

    /// Adds a prefix that [`Trie::find_for_update`] said is new, its value in `slot`.
    pub(crate) fn insert(&mut self, prefixlen: u32, data: &[u8], slot: u32) {
        self.entries += 1;
        let (link, node, m) = self.walk(prefixlen, data);
        let new = Node { prefixlen, data: data.to_vec(), child: [None, None], slot: Some(slot) };
        let Some(n) = node else {
            let i = self.alloc(new);
            self.set(link, Some(i));
            return;
        };
        if self.nodes[n].prefixlen == m && m == prefixlen {
            // An intermediate node becomes a real one.
            self.nodes[n].slot = Some(slot);
            self.nodes[n].data = data.to_vec();
            return;
        }
        if m == prefixlen {
            // The new prefix is the old node's parent.
            let b = bit(&self.nodes[n].data, m);
            let i = self.alloc(new);
            self.nodes[i].child[b] = Some(n);
            self.set(link, Some(i));
            return;
        }
        // They part at bit m: an intermediate node with both below it.
        let i = self.alloc(new);
        let im = Node {
            prefixlen: m,
            data: self.nodes[n].data.clone(),
            child: [None, None],
            slot: None,
        };
        let im = self.alloc(im);
        let b = bit(data, m);
        self.nodes[im].child[b] = Some(i);
        self.nodes[im].child[1 - b] = Some(n);
        self.set(link, Some(im));
    }

    /// Removes exactly this prefix; its slot, or `None` when it is not there.
    pub(crate) fn remove(&mut self, prefixlen: u32, data: &[u8]) -> Option<u32> {
        let max = data.len() as u32 * 8;
        let mut parent_link: Option<Link> = None;
        let mut link = Link::Root;
        let n = loop {
            let n = self.get(link)?;
            let m = self.matchlen(n, prefixlen, data);
            let p = self.nodes[n].prefixlen;
            if p != m || p == prefixlen || p == max {
                break n;
            }
            parent_link = Some(link);
            link = Link::Child(n, bit(data, p));
        };
        let node = &self.nodes[n];
        if node.prefixlen != prefixlen || self.matchlen(n, prefixlen, data) != prefixlen {
            return None;
        }
        let slot = node.slot?;
        self.entries -= 1;
        match node.child {
            [Some(_), Some(_)] => {
                // Two children: it stays as an intermediate node.
                self.nodes[n].slot = None;
            }
            [a, b] => {
                let only = a.or(b);
                self.set(link, only);
                self.free_nodes.push(n);
                // An intermediate parent left with one child goes too.
                if only.is_none()
                    && let (Some(pl), Link::Child(p, _)) = (parent_link, link)
                    && self.nodes[p].slot.is_none()
                {
                    let other = self.nodes[p].child[0].or(self.nodes[p].child[1]);
                    self.set(pl, other);
                    self.free_nodes.push(p);
                }
            }
        }
        Some(slot)
    }

    /// Every prefix: `(prefixlen, data, slot)`.
    pub(crate) fn entries(&self) -> Vec<(u32, Vec<u8>, u32)> {
        let mut out = Vec::new();
        let mut todo: Vec<usize> = self.root.into_iter().collect();
        while let Some(n) = todo.pop() {
            let node = &self.nodes[n];
            if let Some(s) = node.slot {
                out.push((node.prefixlen, node.data.clone(), s));
            }
            todo.extend(node.child.iter().flatten());
        }
        out
    }
}
