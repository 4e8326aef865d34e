//! pf's fragment reassembly (`set reassemble yes`, the default): fragments are held until
//! their datagram is whole, and pf's rules see only the whole datagram.
//!
//! Why it exists: a rule on ports or TCP flags cannot judge a fragment (only the first one
//! carries the transport header, and overlapping fragments can make the header the firewall
//! saw differ from the one the host reassembles). pf therefore reassembles before filtering
//! (`pf_normalize_ip`, `pf_normalize_ip6` in OpenBSD's `sys/net/pf_norm.c`), and so must sift
//! to decide as pf does. This module is that step, byte in, bytes out, independent of the rest
//! of the engine: [`Reassembler::push`] takes one IP packet and says whether it is not a
//! fragment, is held, completes a datagram, or is dropped with pf's reason.
//!
//! pf's rules, as `pf_norm.c` (1.236) applies them:
//!
//! - **Keys.** A fragment belongs to the queue of (family, protocol, source, destination,
//!   identification) for IPv4, and of (source, destination, identification) for IPv6, whose
//!   later fragments do not carry the protocol. Queues of one source, destination and protocol
//!   share a node (`pf_frnode`) that numbers them (generations).
//! - **Refused alone** (`PFRES_FRAG`, the queue kept): no data; a non-final fragment whose length
//!   is not a multiple of 8; data past 65,535; an IPv4 fragment with DF set (unless `no-df`,
//!   which clears it). Before that, packets shorter than their headers say are `PFRES_SHORT`.
//! - **Final fragments.** A fragment ending before the data seen must have more-fragments set;
//!   once the last fragment is in, nothing may end after it or end with it and claim more
//!   follow; before it, nothing may end exactly at the end seen and claim to be last. IPv4
//!   drops the fragment (`PFRES_FRAG`); IPv6 frees the whole queue.
//! - **Overlaps, IPv4.** Older data wins at the front of a new fragment (it is cut, or dropped
//!   when wholly covered — pf sets no reason then, so the drop says [`Reason::Match`]); the new
//!   data wins at its back (older fragments are cut at their front, or removed when covered).
//! - **Overlaps, IPv6.** Any overlap, duplicates included, frees the whole queue (RFC 5722).
//! - **Atomic fragments** (IPv6 fragment header with offset 0 and no more fragments, RFC 6946)
//!   are not reassembled: [`Reassembly::NotFragment`], the packet goes on as it is.
//! - **Queue length.** Each 4,096-octet stretch of a datagram (`PF_FRAG_ENTRY_POINTS`) holds at
//!   most `PF_FRAG_ENTRY_LIMIT` (64) fragments; one more frees the queue (`PFRES_FRAG`).
//! - **Stale queues.** Looking up a queue whose node has since opened `timeout × PF_FRAG_STALE`
//!   (60 × 200) newer queues frees it, and the fragment starts a new one (RFC 4963's high
//!   rate of fragments with reused identifications). This is pf's only per-source bound.
//! - **Pool limit** (`set limit frags`). When as many fragments as the limit are held, a new
//!   one first frees the least recently used queues down to nine tenths of them
//!   (`pf_flush_fragments`); only if that frees nothing is it dropped (`PFRES_MEMORY`).
//! - **Timeout** (`set timeout frag`). [`Reassembler::expire`] frees queues created that many
//!   seconds ago, walking from the least recently used one and stopping at the first that is
//!   not old enough (`pf_purge_expired_fragments`; a queue's time is its creation, not its
//!   last fragment).
//! - **Complete.** When no hole is left the data is joined behind the first fragment's
//!   headers. IPv4: total length set, offset and more-fragments cleared (only DF may stay);
//!   IPv6: fragment header removed, payload length set, its next header written into the
//!   header before it. A datagram past 65,535 octets is dropped (`PFRES_SHORT`).
//!
//! What differs from pf, and why:
//!
//! - The IPv4 header checksum of a complete datagram is recomputed here; in the kernel the
//!   output path does it.
//! - [`refragment6`] keeps the original identification (as FreeBSD's pf does); OpenBSD's
//!   `ip6_fragment` draws a random one. A fixed one keeps output reproducible.
//! - The checks of `pf_setup_pdesc` that are not about fragments (IP options, routing header
//!   type 0, jumbograms) are left to the caller, which runs them on every packet anyway;
//!   this module reads only what reassembly needs and never panics on any input.
//! - Non-fragments are returned untouched: pf also clears the reserved flag bit of every IPv4
//!   packet (`no_fragment` in `pf_normalize_ip`), which belongs to scrubbing, not here.
//! - The interface direction and routing domain are not part of the key (the caller keeps one
//!   reassembler per domain if it needs to).
//!
//! Memory: every entry counts against `frags`, a queue holds at least one entry, and an
//! entry's data is at most one packet, so [`Reassembler::memory`] stays within a fixed multiple
//! of `frags × 65,535` octets whatever arrives; buffers are reused, so steady reassembly
//! allocates only the datagrams it returns.

mod queue;
mod wire;

use std::collections::HashMap;

use crate::Reason;
use crate::packet::Family;

use queue::{Insert, Queue};
use wire::{Key, NodeKey, Parsed};

/// `PF_FRAG_STALE`: a queue whose node has opened this many newer queues per second of the
/// `frag` timeout is stale.
pub const PF_FRAG_STALE: u32 = 200;
/// `PF_FRAG_ENTRY_POINTS`: the datagram's 65,536 octets are split in this many stretches for the
/// per-queue entry limit.
pub const PF_FRAG_ENTRY_POINTS: usize = 16;
/// `PF_FRAG_ENTRY_LIMIT`: the most fragments one stretch of a queue holds.
pub const PF_FRAG_ENTRY_LIMIT: u8 = 64;
/// pf's default `set limit frags` (`PFFRAG_FRENT_HIWAT`, `NMBCLUSTERS / 16` on amd64).
pub const PFFRAG_FRENT_HIWAT: usize = 65536;
/// pf's default `set timeout frag`, seconds.
pub const PFTM_FRAG_VAL: u32 = 60;

/// Spare queue buffers larger than this are released when the queue is freed.
const KEEP_ARENA: usize = 16 * 1024;
/// No link in the queue list.
const NIL: u32 = u32::MAX;

/// The limits reassembly works under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragLimits {
    /// `set limit frags`: the most fragments held at once.
    pub frags: usize,
    /// `set timeout frag`: seconds a queue may wait for its missing fragments; also scales
    /// the stale bound (`timeout × PF_FRAG_STALE` newer queues).
    pub timeout_secs: u32,
}

impl Default for FragLimits {
    fn default() -> FragLimits {
        FragLimits { frags: PFFRAG_FRENT_HIWAT, timeout_secs: PFTM_FRAG_VAL }
    }
}

/// What became of a packet given to [`Reassembler::push`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reassembly {
    /// Not a fragment (or an IPv6 atomic fragment): the caller goes on with the packet as is.
    NotFragment,
    /// Kept; its datagram is not complete yet.
    Held,
    /// The packet completed its datagram, which is returned whole.
    Complete(Reassembled),
    /// Dropped with pf's reason; where pf does so its whole queue is gone too.
    Dropped(Reason),
}

/// A reassembled datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reassembled {
    /// The datagram, header rewritten as pf leaves it.
    pub bytes: Vec<u8>,
    /// IPv6: what [`refragment6`] needs to cut it again on output (pf's `pf_fragment_tag`).
    pub refrag: Option<Refrag>,
}

/// How an IPv6 datagram was fragmented (pf's `pf_fragment_tag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refrag {
    /// Length of the unfragmentable part: the IPv6 header and the extension headers before the
    /// fragment header (`ft_hdrlen`).
    pub hdrlen: u16,
    /// Offset of the last of those extension headers, 0 if none (`ft_extoff`).
    pub extoff: u16,
    /// The largest fragment's data length (`ft_maxlen`).
    pub maxlen: u16,
    /// The identification the fragments carried.
    pub id: u32,
}

/// pf's `pf_refragment6`: cuts a reassembled IPv6 datagram (possibly rewritten since) into
/// fragments no larger than the largest one received, with the original identification.
/// Errors: the datagram does not match `refrag` ([`Reason::Short`]), or the fragments would
/// carry fewer than 8 octets ([`Reason::Fragment`]; pf drops the packet).
pub fn refragment6(datagram: &[u8], refrag: &Refrag) -> Result<Vec<Vec<u8>>, Reason> {
    wire::refragment6(datagram, refrag)
}

/// A queue slot: the queue, its key, its node, its place in the recency list.
#[derive(Clone, Debug, Default)]
struct Slot {
    queue: Queue,
    key: Option<Key>,
    node: u32,
    /// Generation within its node (`fr_gen`).
    generation: u32,
    /// Creation time (`fr_timeout`).
    created: u64,
    /// Towards the most recently used.
    newer: u32,
    /// Towards the least recently used.
    older: u32,
}

/// A node (`pf_frnode`): the queues of one (family, protocol, source, destination).
#[derive(Clone, Debug, Default)]
struct Node {
    key: Option<NodeKey>,
    /// Queues in the node (`fn_fragments`).
    queues: u32,
    /// The next generation (`fn_gen`).
    generation: u32,
}

/// pf's fragment reassembly state: the queues, bounded by [`FragLimits`].
#[derive(Clone, Debug)]
pub struct Reassembler {
    limits: FragLimits,
    no_df: bool,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    index: HashMap<Key, u32>,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    node_index: HashMap<NodeKey, u32>,
    /// Most and least recently used queues (`pf_fragqueue`'s head and tail).
    newest: u32,
    oldest: u32,
    /// Fragment entries held (`pf_status.fragments`).
    fragments: usize,
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new(limits: FragLimits) -> Reassembler {
        Reassembler {
            limits,
            no_df: false,
            slots: Vec::new(),
            free_slots: Vec::new(),
            index: HashMap::new(),
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            node_index: HashMap::new(),
            newest: NIL,
            oldest: NIL,
            fragments: 0,
        }
    }

    /// `set reassemble yes no-df`: IPv4 fragments with DF set have it cleared and are
    /// reassembled instead of dropped.
    pub fn with_no_df(mut self, no_df: bool) -> Reassembler {
        self.no_df = no_df;
        self
    }

    /// The limits.
    pub fn limits(&self) -> FragLimits {
        self.limits
    }

    /// Fragment entries held: what `set limit frags` bounds.
    pub fn fragments(&self) -> usize {
        self.fragments
    }

    /// Datagrams waiting for fragments.
    pub fn queues(&self) -> usize {
        self.index.len()
    }

    /// Bytes allocated for held fragments: queue buffers (spare ones included) and
    /// bookkeeping.
    pub fn memory(&self) -> usize {
        let slots: usize = self.slots.iter().map(|s| s.queue.memory()).sum();
        slots
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + (self.index.capacity() + self.node_index.capacity()) * 48
    }

    /// Bytes of packet data held (live fragment data and first-fragment headers).
    pub fn held_bytes(&self) -> usize {
        self.index.values().map(|&s| self.slots[s as usize].queue.held()).sum()
    }

    /// pf's reassembly of one packet (`ip`: an IPv4 or IPv6 packet from its IP header; bytes
    /// past its length are ignored) received at `now` seconds.
    pub fn push(&mut self, ip: &[u8], now: u64) -> Reassembly {
        let (af, key, frag) = match wire::parse(ip, self.no_df) {
            Parsed::Whole => return Reassembly::NotFragment,
            Parsed::Refused(r) => return Reassembly::Dropped(r),
            Parsed::Fragment(af, key, frag) => (af, key, frag),
        };
        // pf_create_fragment: the entry is taken from the pool first.
        if self.fragments >= self.limits.frags {
            self.flush();
            if self.fragments >= self.limits.frags {
                return Reassembly::Dropped(Reason::Memory);
            }
        }
        // pf_fillup_fragment's checks of the fragment alone.
        if frag.len == 0
            || (frag.mff && frag.len & 7 != 0)
            || usize::from(frag.off) + usize::from(frag.len) > queue::IP_MAXPACKET
        {
            return Reassembly::Dropped(Reason::Fragment);
        }
        let Some(slot) = self.find(&key) else {
            let slot = self.create(key, now);
            self.slots[slot as usize].queue.first(&frag);
            self.fragments += 1;
            return Reassembly::Held;
        };
        let q = &mut self.slots[slot as usize].queue;
        let before = q.entries.len();
        match q.add(af, &frag) {
            Insert::Queued => {
                self.fragments = self.fragments + q.entries.len() - before;
            }
            Insert::Refused(r) => {
                self.fragments -= before - q.entries.len();
                return Reassembly::Dropped(r);
            }
            Insert::FreeQueue => {
                self.fragments -= before - q.entries.len();
                self.free(slot);
                return Reassembly::Dropped(Reason::Fragment);
            }
        }
        if q.holes != 0 {
            return Reassembly::Held;
        }
        let done = self.join(af, slot, &key);
        self.free(slot);
        done
    }

    /// Frees the queues whose `frag` timeout passed at `now` (pf's purge, from the least
    /// recently used queue); returns how many.
    pub fn expire(&mut self, now: u64) -> usize {
        let mut n = 0;
        while self.oldest != NIL {
            let slot = self.oldest;
            let s = &self.slots[slot as usize];
            if s.created.saturating_add(u64::from(self.limits.timeout_secs)) > now {
                break;
            }
            self.free(slot);
            n += 1;
        }
        n
    }

    /// pf_find_fragment: the queue of `key`, made most recent; a stale one is freed.
    fn find(&mut self, key: &Key) -> Option<u32> {
        let slot = *self.index.get(key)?;
        let s = &self.slots[slot as usize];
        let stale = self.limits.timeout_secs.wrapping_mul(PF_FRAG_STALE);
        if self.nodes[s.node as usize].generation.wrapping_sub(s.generation) >= stale {
            self.free(slot);
            return None;
        }
        self.unlink(slot);
        self.link_newest(slot);
        Some(slot)
    }

    /// A new queue for `key`, most recent, in its node (created if needed).
    fn create(&mut self, key: Key, now: u64) -> u32 {
        let node = match self.node_index.get(&key.node) {
            Some(&n) => n,
            None => {
                let n = self.free_nodes.pop().unwrap_or_else(|| {
                    self.nodes.push(Node::default());
                    (self.nodes.len() - 1) as u32
                });
                self.nodes[n as usize] = Node { key: Some(key.node), queues: 0, generation: 0 };
                self.node_index.insert(key.node, n);
                n
            }
        };
        let nd = &mut self.nodes[node as usize];
        let generation = nd.generation;
        nd.generation = nd.generation.wrapping_add(1);
        nd.queues += 1;
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(Slot::default());
            (self.slots.len() - 1) as u32
        });
        let s = &mut self.slots[slot as usize];
        s.queue.reset(KEEP_ARENA);
        s.key = Some(key);
        s.node = node;
        s.generation = generation;
        s.created = now;
        self.index.insert(key, slot);
        self.link_newest(slot);
        slot
    }

    /// pf_free_fragment: the queue and its entries go; its node too when it was the last.
    fn free(&mut self, slot: u32) {
        self.unlink(slot);
        let s = &mut self.slots[slot as usize];
        self.fragments -= s.queue.entries.len();
        s.queue.reset(KEEP_ARENA);
        if let Some(key) = s.key.take() {
            self.index.remove(&key);
        }
        let node = &mut self.nodes[s.node as usize];
        node.queues -= 1;
        if node.queues == 0 {
            if let Some(k) = node.key.take() {
                self.node_index.remove(&k);
            }
            self.free_nodes.push(s.node);
        }
        self.free_slots.push(slot);
    }

    /// pf_flush_fragments: frees the least recently used queues until at most nine tenths of
    /// the fragments are left.
    fn flush(&mut self) {
        let goal = self.fragments * 9 / 10;
        while goal < self.fragments && self.oldest != NIL {
            self.free(self.oldest);
        }
    }

    /// pf_join_fragment and the rest of pf_reassemble{,6}: the whole datagram.
    fn join(&mut self, af: Family, slot: u32, key: &Key) -> Reassembly {
        let q = &self.slots[slot as usize].queue;
        let total = q.total() as usize;
        let mut out = Vec::with_capacity(q.head.len() + total);
        let refrag = match af {
            Family::Inet => {
                if q.head.len() + total > queue::IP_MAXPACKET {
                    return Reassembly::Dropped(Reason::Short);
                }
                out.extend_from_slice(&q.head);
                None
            }
            Family::Inet6 => {
                if wire::start6(&q.head, q.extoff, total, &mut out).is_none() {
                    return Reassembly::Dropped(Reason::Short);
                }
                Some(Refrag {
                    hdrlen: out.len() as u16,
                    extoff: q.extoff,
                    maxlen: q.maxlen,
                    id: key.id,
                })
            }
        };
        let hlen = out.len();
        for e in &q.entries {
            out.extend_from_slice(q.data(e));
        }
        if af == Family::Inet {
            wire::finish4(&mut out, hlen);
        }
        Reassembly::Complete(Reassembled { bytes: out, refrag })
    }

    fn link_newest(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        s.newer = NIL;
        s.older = self.newest;
        if self.newest != NIL {
            self.slots[self.newest as usize].newer = slot;
        } else {
            self.oldest = slot;
        }
        self.newest = slot;
    }

    fn unlink(&mut self, slot: u32) {
        let (newer, older) = {
            let s = &self.slots[slot as usize];
            (s.newer, s.older)
        };
        if newer != NIL {
            self.slots[newer as usize].older = older;
        } else {
            self.newest = older;
        }
        if older != NIL {
            self.slots[older as usize].newer = newer;
        } else {
            self.oldest = newer;
        }
        let s = &mut self.slots[slot as usize];
        s.newer = NIL;
        s.older = NIL;
    }
}
