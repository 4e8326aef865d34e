//! pf's state table: the connections pf has let through, found by key before any rule is
//! tried, with pf's limits, source tracking and expiry.
//!
//! Why its own module: a packet of a known connection must not be judged by the rules again
//! (pf's `pf_find_state` comes first in `pf_test`), and the table must hold under chosen
//! traffic: keys are hashed with a per-table random key (std's SipHash `RandomState`), the
//! table never grows past `set limit states`, source nodes past `set limit src-nodes`, and
//! expired states are purged a bounded number at a time (pf's `pf_purge_expired_states`
//! walks `states / interval` per second; here each packet walks a bounded slice), so a
//! million expiring states never stall a packet.
//!
//! A state has two keys (pf's `PF_SK_WIRE` and `PF_SK_STACK`); without translation they are
//! equal, and both are kept so that NAT can make them differ. Keys are oriented as pf's: for
//! a packet going in, address 0 is its source; going out, its destination — so a reply finds
//! the state of the packet it answers.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::sync::Arc;

use crate::packet::{Direction, Family, Packet};
use crate::rules::Threshold;
use crate::state_index::KeyIndex;
use crate::timeouts::{self, Settings, tm};
use crate::{Reason, RuleId};

/// A state's key (pf's `pf_state_key`): family, protocol, routing domain, the two addresses
/// and ports (ICMP: the query id in both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateKey {
    /// The family.
    pub af: Family,
    /// The protocol.
    pub proto: u8,
    /// The routing domain.
    pub rdomain: i32,
    /// Addresses: index 0 the outer side (an inbound packet's source), 1 the inner side.
    pub addr: [u128; 2],
    /// Ports, in the order of `addr`.
    pub port: [u16; 2],
}

impl StateKey {
    /// The key of a packet with these addresses and ports going `dir` (pf's
    /// `pf_state_key_setup`: `sidx`/`didx` by direction).
    pub fn oriented(
        af: Family,
        proto: u8,
        rdomain: i32,
        (src, dst): (u128, u128),
        (sport, dport): (u16, u16),
        dir: Direction,
    ) -> StateKey {
        let (s, d) = match dir {
            Direction::In => (0, 1),
            Direction::Out => (1, 0),
        };
        let mut addr = [0; 2];
        let mut port = [0; 2];
        addr[s] = src;
        addr[d] = dst;
        port[s] = sport;
        port[d] = dport;
        StateKey { af, proto, rdomain, addr, port }
    }

    /// The key of `pkt` going `dir`, with `ports` (TCP/UDP ports, an ICMP id twice, 0s).
    pub fn of(pkt: &Packet<'_>, rdomain: i32, ports: (u16, u16), dir: Direction) -> StateKey {
        StateKey::oriented(pkt.af, pkt.proto, rdomain, (pkt.src, pkt.dst), ports, dir)
    }
}

/// pf's TCP peer states (`TCPS_*` of `tcp_fsm.h`) and their names as `pfctl -ss` prints them.
pub mod tcps {
    /// Nothing seen.
    pub const CLOSED: u8 = 0;
    /// Listening (unused by pf).
    pub const LISTEN: u8 = 1;
    /// Sent a SYN (or its first packet).
    pub const SYN_SENT: u8 = 2;
    /// Unused by pf.
    pub const SYN_RECEIVED: u8 = 3;
    /// Its SYN was acknowledged.
    pub const ESTABLISHED: u8 = 4;
    /// Unused by pf.
    pub const CLOSE_WAIT: u8 = 5;
    /// Unused by pf.
    pub const FIN_WAIT_1: u8 = 6;
    /// Sent a FIN.
    pub const CLOSING: u8 = 7;
    /// Unused by pf.
    pub const LAST_ACK: u8 = 8;
    /// Its FIN was acknowledged.
    pub const FIN_WAIT_2: u8 = 9;
    /// A reset was seen.
    pub const TIME_WAIT: u8 = 10;
    /// `synproxy state`: pf answers the client's handshake itself (pf's `PF_TCPS_PROXY_SRC`).
    pub const PROXY_SRC: u8 = 11;
    /// `synproxy state`: pf opens the server's side (pf's `PF_TCPS_PROXY_DST`).
    pub const PROXY_DST: u8 = 12;
    /// Names by state.
    pub const NAMES: [&str; 13] = [
        "CLOSED",
        "LISTEN",
        "SYN_SENT",
        "SYN_RCVD",
        "ESTABLISHED",
        "CLOSE_WAIT",
        "FIN_WAIT_1",
        "CLOSING",
        "LAST_ACK",
        "FIN_WAIT_2",
        "TIME_WAIT",
        "PROXY:SRC",
        "PROXY:DST",
    ];
}

/// pf's UDP and other-protocol peer states (`PFUDPS_*`, `PFOTHERS_*`).
pub mod udps {
    /// Nothing sent.
    pub const NO_TRAFFIC: u8 = 0;
    /// This side sent.
    pub const SINGLE: u8 = 1;
    /// Both sides sent.
    pub const MULTIPLE: u8 = 2;
    /// Names by state.
    pub const NAMES: [&str; 3] = ["NO_TRAFFIC", "SINGLE", "MULTIPLE"];
}

/// One side of a state (pf's `pf_state_peer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peer {
    /// The highest sequence number sent (TCP).
    pub seqlo: u32,
    /// The highest sequence number the other side allows it to send.
    pub seqhi: u32,
    /// The largest window it advertised (unscaled).
    pub max_win: u16,
    /// Its window scale (`0x80` flag: it sent the option; `0x0f`: the shift).
    pub wscale: u8,
    /// Its protocol state ([`tcps`] or [`udps`]).
    pub state: u8,
    /// What pf adds to this side's sequence numbers on their way (`modulate state`,
    /// `synproxy state`); 0: none.
    pub seqdiff: u32,
}

/// Which key of `s` a packet of family `af` going `dir` is looked up by: the wire key going
/// in, the stack key going out; an `af-to` state met from its other family the other way
/// round (pf's `PF_REVERSED_KEY`).
pub(crate) fn key_side(s: &State, dir: Direction, af: Family) -> usize {
    let reversed = s.key[0].af != s.key[1].af && s.key[0].af != af;
    usize::from((dir == Direction::Out) != reversed)
}

/// A state's handle in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateId(pub u32);

/// A source tracking node's key: the source address, per rule or global.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SrcKey {
    pub af: Family,
    pub addr: u128,
    pub rule: Option<RuleId>,
}

/// A source tracking node (pf's `pf_src_node`).
#[derive(Clone, Debug)]
pub(crate) struct SrcNode {
    pub states: u32,
    pub conn: u32,
    pub conn_rate: Threshold,
    pub expire: u64,
}

/// What a state keeps of the rule that created it (pf keeps a pointer to the rule).
#[derive(Clone, Debug, Default)]
pub(crate) struct RuleLimits {
    pub timeouts: [u32; tm::COUNT],
    pub max_states: u32,
    pub max_src_states: u32,
    pub max_src_nodes: u32,
    pub max_src_conn: u32,
    pub max_src_conn_rate: (u32, u32),
    pub overload: String,
    pub flush: u8,
    /// pf's `states_cur`.
    pub states: u32,
    pub src_nodes: u32,
}

/// One state (pf's `pf_state`).
///
/// `repr(C)`, cache-line aligned, with what a packet of an established flow reads (keys,
/// binding, clock, peers, counters, the rule) in the first four lines and the rest after: in
/// a table of a million states each packet's state is a cache miss.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct State {
    /// Keys: wire side, stack side (equal without translation).
    pub key: [StateKey; 2],
    /// When it was last updated (pf's `expire` field: the timeout counts from here).
    pub last: u64,
    /// The interface it is bound to (`if-bound`), `None` floating.
    pub ifname: Option<Arc<str>>,
    /// Its current timeout ([`tm`] index).
    pub timeout: usize,
    /// The creating side.
    pub src: Peer,
    /// The other side.
    pub dst: Peer,
    /// Packets: in the creating direction, in the other.
    pub packets: [u64; 2],
    /// Bytes, as `packets`.
    pub bytes: [u64; 2],
    pub(crate) limits: u32,
    /// The direction of the packet that created it.
    pub direction: Direction,
    /// `keep`, `modulate` or `synproxy` (`sift_pf::ast::state`; the last two are recorded,
    /// not applied).
    pub kind: u8,
    /// `sloppy` tracking.
    pub sloppy: bool,
    /// The rule's `log` bits.
    pub log: u8,
    /// Marked for removal (pf's `PFTM_PURGE`).
    pub(crate) purge: bool,
    /// Counted as an established connection of its source node.
    pub(crate) tcp_est: bool,
    /// Its scrub options: 0 none, else 1 + their index in the table's interned options (a
    /// number here keeps the options' bytes out of the first four cache lines).
    pub(crate) scrub: u16,
    /// The rule that created it (`None`: pf's default rule).
    pub rule: Option<RuleId>,
    /// The anchor rule whose rule set holds `rule`.
    pub anchor: Option<RuleId>,
    /// The interface the creating packet passed.
    pub created_on: Arc<str>,
    /// When it was created (seconds on the virtual clock).
    pub creation: u64,
    pub(crate) src_node: Option<SrcKey>,
    /// The index hashes of `key` (set by the table on insertion).
    pub(crate) hash: [u32; 2],
    /// The translation pool address it holds, for `least-states`: (rule, rdr side, address).
    /// (Boxed: only `least-states` pools use it, and a state of a million should stay small.)
    pub(crate) pool_addr: Option<Box<(RuleId, bool, u128)>>,
    /// The MSS pf announces to the client while it proxies the handshake (`synproxy`).
    pub(crate) proxy_mss: u16,
    /// `reassemble tcp`: each side's normalization data (creating side first).
    pub(crate) tcp_scrub: Option<Box<[crate::tcp_scrub::PeerScrub; 2]>>,
}

/// The table's counters (`pfctl -si`'s state table section).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounters {
    /// Lookups.
    pub searches: u64,
    /// States created.
    pub inserts: u64,
    /// States removed.
    pub removals: u64,
}

/// The most states a table makes room for ahead of need (its address space is reserved, not
/// touched, until states arrive).
const PRESIZE_STATES: usize = 1 << 20;

/// The most slots one purge step examines (bounds the work any one packet does).
pub const PURGE_MAX: usize = 1024;

/// The state table.
#[derive(Clone, Debug)]
pub struct StateTable {
    slots: Vec<Option<State>>,
    free: Vec<u32>,
    index: KeyIndex,
    /// Interface names, each held once and shared by the states on it.
    ifnames: Vec<Arc<str>>,
    len: usize,
    /// The options that govern it.
    pub settings: Settings,
    pub(crate) limits: Vec<RuleLimits>,
    limit_index: HashMap<Option<RuleId>, u32>,
    /// The last rule `limits_for` was asked about and its index (most states come from a few
    /// rules).
    last_limits: Option<(Option<RuleId>, u32)>,
    /// The last key [`StateTable::find`] missed, and its hash.
    last_hash: Option<(StateKey, u32)>,
    pub(crate) src_nodes: HashMap<SrcKey, SrcNode, RandomState>,
    /// States per translation pool address (`least-states`).
    pool_counts: HashMap<(RuleId, bool, u128), u32>,
    /// The distinct scrub options states hold ([`State`]'s `scrub` indexes them).
    scrubs: Vec<crate::scrub::ScrubOpts>,
    cursor: usize,
    /// Slots the purge still owes (see [`StateTable::tick`]).
    purge_debt: usize,
    clock: u64,
    counters: StateCounters,
}

impl Default for StateTable {
    fn default() -> StateTable {
        StateTable::new(Settings::default())
    }
}

impl StateTable {
    /// An empty table under `settings`.
    pub fn new(settings: Settings) -> StateTable {
        StateTable {
            slots: Vec::new(),
            free: Vec::new(),
            index: KeyIndex::default(),
            ifnames: Vec::new(),
            len: 0,
            settings,
            limits: Vec::new(),
            limit_index: HashMap::new(),
            last_limits: None,
            last_hash: None,
            src_nodes: HashMap::with_hasher(RandomState::new()),
            pool_counts: HashMap::new(),
            scrubs: Vec::new(),
            cursor: 0,
            purge_debt: 0,
            clock: 0,
            counters: StateCounters::default(),
        }
    }

    /// How many states.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Interface `name`, shared with the states already on it.
    pub(crate) fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.ifnames.iter().find(|n| &***n == name) {
            return n.clone();
        }
        let n: Arc<str> = name.into();
        self.ifnames.push(n.clone());
        n
    }

    /// The bytes one state takes in the table: its slot (the state is one cache-aligned
    /// record) and room for its two index entries (the index is kept at most half full).
    pub const STATE_BYTES: usize = std::mem::size_of::<Option<State>>() + 4 * 8;

    /// Bytes the table holds now (slots and index, allocated capacity).
    pub fn memory(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Option<State>>() + self.index.memory()
    }

    /// The number a state holds for scrub options `o` (interned: rule sets have few).
    pub(crate) fn scrub_index(&mut self, o: Option<crate::scrub::ScrubOpts>) -> u16 {
        let Some(o) = o else { return 0 };
        if let Some(i) = self.scrubs.iter().position(|x| *x == o) {
            return i as u16 + 1;
        }
        if self.scrubs.len() >= usize::from(u16::MAX - 1) {
            return 0;
        }
        self.scrubs.push(o);
        self.scrubs.len() as u16
    }

    /// The scrub options of state `s`.
    pub fn scrub_of(&self, s: &State) -> Option<crate::scrub::ScrubOpts> {
        self.scrubs.get(usize::from(s.scrub).checked_sub(1)?).copied()
    }

    /// How many source tracking nodes.
    pub fn src_node_count(&self) -> usize {
        self.src_nodes.len()
    }

    /// The counters.
    pub fn counters(&self) -> StateCounters {
        self.counters
    }

    /// The state `id`, if it exists.
    pub fn get(&self, id: StateId) -> Option<&State> {
        self.slots.get(id.0 as usize)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: StateId) -> Option<&mut State> {
        self.slots.get_mut(id.0 as usize)?.as_mut()
    }

    /// Every state, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (StateId, &State)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (StateId(i as u32), s)))
    }

    /// When state `s` expires (pf's `pf_state_expires`, with adaptive scaling).
    pub fn expires(&self, s: &State) -> u64 {
        if s.purge {
            return s.last;
        }
        let l = &self.limits[s.limits as usize];
        timeouts::expires(&self.settings, &l.timeouts, s.timeout, s.last, l.states, self.len as u32)
    }

    /// The index of the limits of `rule`, refreshed from its options.
    pub(crate) fn limits_for(
        &mut self,
        rule: Option<RuleId>,
        r: Option<&sift_pf::ast::Rule>,
    ) -> u32 {
        let known = match self.last_limits {
            Some((last, i)) if last == rule => Some(i),
            _ => self.limit_index.get(&rule).copied(),
        };
        let i = match known {
            Some(i) => i,
            None => {
                self.limits.push(RuleLimits::default());
                let i = (self.limits.len() - 1) as u32;
                self.limit_index.insert(rule, i);
                i
            }
        };
        if let Some(r) = r {
            let l = &mut self.limits[i as usize];
            l.timeouts = r.timeout;
            l.max_states = r.max_states;
            l.max_src_states = r.max_src_states;
            l.max_src_nodes = r.max_src_nodes;
            l.max_src_conn = r.max_src_conn;
            l.max_src_conn_rate = r.max_src_conn_rate;
            l.overload.clone_from(&r.overload);
            l.flush = r.flush;
        }
        self.last_limits = Some((rule, i));
        i
    }

    /// pf's `pf_find_state`: the state of key `key` for a packet going `dir` on `ifname`
    /// (an if-bound state only on its interface). A state found expired is removed and not
    /// returned (pf would purge it within a purge interval; sift decides on the packet's
    /// clock).
    pub fn find(
        &mut self,
        key: &StateKey,
        ifname: &str,
        dir: Direction,
        now: u64,
    ) -> Option<StateId> {
        self.counters.searches += 1;
        if self.len == 0 {
            return None;
        }
        let hash = self.index.hash(key);
        let mut found = None;
        let mut dead = Vec::new();
        for id in self.index.candidates(hash) {
            let Some(s) = self.slots[id as usize].as_ref() else { continue };
            if s.ifname.as_deref().is_some_and(|i| i != ifname) {
                continue;
            }
            let side = &s.key[key_side(s, dir, key.af)];
            if side != key {
                continue;
            }
            if self.expires(s) <= now {
                dead.push(id);
                continue;
            }
            found = Some(StateId(id));
            break;
        }
        for id in dead {
            self.remove(StateId(id));
        }
        if found.is_none() {
            // Kept for the insert that may follow a miss; a hit needs nothing more.
            self.last_hash = Some((*key, hash));
        }
        found
    }

    /// Whether a live state of `key` exists for a packet going `dir` on `ifname` (as
    /// [`StateTable::find`], changing nothing).
    pub fn peek(&self, key: &StateKey, ifname: &str, dir: Direction, now: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        let hash = self.index.hash(key);
        self.index.candidates(hash).filter_map(|id| self.slots[id as usize].as_ref()).any(|s| {
            let side = &s.key[key_side(s, dir, key.af)];
            s.ifname.as_deref().is_none_or(|i| i == ifname) && side == key && self.expires(s) > now
        })
    }

    /// Whether a live state holds `key` as its key for packets going `dir` (wire going in,
    /// stack going out), on any interface (pf's `pf_find_state_all`, which translation asks
    /// before it hands out an address and port).
    pub fn key_in_use(&self, key: &StateKey, dir: Direction, now: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        let side = usize::from(dir == Direction::Out);
        let hash = self.index.hash(key);
        self.index
            .candidates(hash)
            .filter_map(|id| self.slots[id as usize].as_ref())
            .any(|s| &s.key[side] == key && self.expires(s) > now)
    }

    /// How many states hold address `addr` of the nat (or, `rdr`, the rdr) pool of `rule`.
    pub(crate) fn pool_states(&self, rule: RuleId, rdr: bool, addr: u128) -> u32 {
        self.pool_counts.get(&(rule, rdr, addr)).copied().unwrap_or(0)
    }

    /// Inserts `s` (pf's `pf_state_insert`): fails with `state-insert` when a state of the same
    /// key, interface binding and direction exists — unless both are closed TCP states, when
    /// the old one goes.
    pub(crate) fn insert(&mut self, mut s: State, now: u64) -> Result<StateId, Reason> {
        if self.slots.is_empty() {
            // Room for the states the limit allows (up to a bound), so that a filling table
            // neither rehashes nor copies its states while packets wait.
            let room = (self.settings.state_limit as usize).min(PRESIZE_STATES);
            self.index.reserve(room);
            self.slots.reserve(room);
        }
        // A packet's state is created just after its lookup missed: the hash is known.
        let h0 = match self.last_hash {
            Some((k, h)) if k == s.key[0] => h,
            _ => self.index.hash(&s.key[0]),
        };
        s.hash = [h0, if s.key[1] == s.key[0] { h0 } else { self.index.hash(&s.key[1]) }];
        let mut old = None;
        for id in self.index.candidates(s.hash[0]) {
            let Some(o) = self.slots[id as usize].as_ref() else { continue };
            if o.ifname == s.ifname && o.direction == s.direction && o.key == s.key {
                let closed = |p: &Peer| p.state >= tcps::FIN_WAIT_2;
                let reusable =
                    o.key[0].proto == sift_wire::ipproto::TCP && closed(&o.src) && closed(&o.dst);
                if reusable || self.expires(o) <= now {
                    old = Some(id);
                } else {
                    return Err(Reason::StateInsert);
                }
            }
        }
        if let Some(id) = old {
            self.remove(StateId(id));
        }
        let (keys, hash) = (s.key, s.hash);
        if let Some(k) = s.pool_addr.as_deref() {
            *self.pool_counts.entry(*k).or_insert(0) += 1;
        }
        let id = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(s);
                i
            }
            None => {
                self.slots.push(Some(s));
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(hash[0], id);
        if keys[1] != keys[0] {
            self.index.insert(hash[1], id);
        }
        self.len += 1;
        self.counters.inserts += 1;
        Ok(StateId(id))
    }

    /// Removes state `id` (pf's `pf_remove_state` and `pf_free_state`).
    pub fn remove(&mut self, id: StateId) -> Option<State> {
        let s = self.slots.get_mut(id.0 as usize)?.take()?;
        self.index.remove(s.hash[0], id.0);
        if s.key[1] != s.key[0] {
            self.index.remove(s.hash[1], id.0);
        }
        if let Some(k) = s.pool_addr.as_deref()
            && let Some(n) = self.pool_counts.get_mut(k)
        {
            *n -= 1;
            if *n == 0 {
                self.pool_counts.remove(k);
            }
        }
        let l = &mut self.limits[s.limits as usize];
        l.states = l.states.saturating_sub(1);
        if let Some(k) = s.src_node {
            self.release_src_node(k, s.tcp_est);
        }
        self.free.push(id.0);
        self.len -= 1;
        self.counters.removals += 1;
        Some(s)
    }

    fn release_src_node(&mut self, k: SrcKey, est: bool) {
        let keep = self.settings.timeouts[tm::SRC_NODE];
        let clock = self.clock;
        let Some(n) = self.src_nodes.get_mut(&k) else { return };
        n.states = n.states.saturating_sub(1);
        if est {
            n.conn = n.conn.saturating_sub(1);
        }
        if n.states == 0 {
            if keep == 0 {
                self.src_nodes.remove(&k);
                if let Some(&i) = self.limit_index.get(&k.rule) {
                    let l = &mut self.limits[i as usize];
                    l.src_nodes = l.src_nodes.saturating_sub(1);
                }
            } else {
                n.expire = clock + u64::from(keep);
            }
        }
    }

    /// The source node for a new state of `rule` from `src` (pf's `pf_insert_src_node`), its
    /// limits checked: `max-src-nodes`, `set limit src-nodes`, `max-src-states`.
    pub(crate) fn src_node_for(
        &mut self,
        key: SrcKey,
        limits: u32,
        now: u64,
    ) -> Result<SrcKey, Reason> {
        let l = &self.limits[limits as usize];
        let (max_nodes, max_states, rate) =
            (l.max_src_nodes, l.max_src_states, l.max_src_conn_rate);
        if let Some(n) = self.src_nodes.get(&key)
            && n.states == 0
            && n.expire <= now
            && self.settings.timeouts[tm::SRC_NODE] != 0
        {
            self.src_nodes.remove(&key);
            let l = &mut self.limits[limits as usize];
            l.src_nodes = l.src_nodes.saturating_sub(1);
        }
        match self.src_nodes.get(&key) {
            Some(n) => {
                if max_states != 0 && n.states >= max_states {
                    return Err(Reason::SrcLimit);
                }
            }
            None => {
                let l = &self.limits[limits as usize];
                if (max_nodes != 0 && l.src_nodes >= max_nodes)
                    || self.src_nodes.len() >= self.settings.src_node_limit as usize
                {
                    return Err(Reason::SrcLimit);
                }
                self.src_nodes.insert(
                    key,
                    SrcNode {
                        states: 0,
                        conn: 0,
                        conn_rate: Threshold::new(rate.0, rate.1),
                        expire: 0,
                    },
                );
                self.limits[limits as usize].src_nodes += 1;
            }
        }
        Ok(key)
    }

    /// Removes source node `key` if no state holds it (a state that could not be created).
    pub(crate) fn drop_unused_src_node(&mut self, key: SrcKey) {
        if self.src_nodes.get(&key).is_some_and(|n| n.states == 0) {
            self.src_nodes.remove(&key);
            if let Some(&i) = self.limit_index.get(&key.rule) {
                let l = &mut self.limits[i as usize];
                l.src_nodes = l.src_nodes.saturating_sub(1);
            }
        }
    }

    /// Counts a new state on its source node.
    pub(crate) fn attach_src_node(&mut self, key: SrcKey) {
        if let Some(n) = self.src_nodes.get_mut(&key) {
            n.states += 1;
        }
    }

    /// pf's `pf_src_connlimit` for state `id` whose handshake just completed: counts the
    /// connection; if `max-src-conn` or `max-src-conn-rate` is exceeded returns the overload
    /// table and flush bits (the state itself is closed and marked for purge).
    pub(crate) fn connlimit(&mut self, id: StateId, now: u64) -> Option<Overload> {
        let s = self.slots[id.0 as usize].as_mut()?;
        let key = s.src_node?;
        let l = &self.limits[s.limits as usize];
        let n = self.src_nodes.get_mut(&key)?;
        n.conn += 1;
        s.tcp_est = true;
        let rate_hit = n.conn_rate.limit != 0 && n.conn_rate.add_and_check(now);
        let bad = (l.max_src_conn != 0 && n.conn > l.max_src_conn) || rate_hit;
        if !bad {
            return None;
        }
        s.purge = true;
        s.src.state = tcps::CLOSED;
        s.dst.state = tcps::CLOSED;
        Some(Overload {
            table: l.overload.clone(),
            flush: l.flush,
            af: key.af,
            addr: key.addr,
            rule: s.rule,
        })
    }

    /// Removes the states from `addr` (the creating side's source), of `rule` only unless
    /// `rule` is `None` (pf's overload `flush` and `flush global`); returns how many.
    pub(crate) fn flush_source(
        &mut self,
        af: Family,
        addr: u128,
        rule: Option<Option<RuleId>>,
    ) -> usize {
        let ids: Vec<StateId> = self
            .iter()
            .filter(|(_, s)| {
                let src = match s.direction {
                    Direction::In => s.key[0].addr[0],
                    Direction::Out => s.key[1].addr[1],
                };
                s.key[0].af == af && src == addr && rule.is_none_or(|r| r == s.rule)
            })
            .map(|(id, _)| id)
            .collect();
        for &id in &ids {
            self.remove(id);
        }
        ids.len()
    }

    /// Moves the clock to `now` and purges a bounded slice of the table (pf's
    /// `pf_purge_expired_states`: the whole table once per `interval`, here as a debt of slots
    /// to examine that grows with the clock and is paid at most [`PURGE_MAX`] slots a packet;
    /// while the clock stands still packets pay nothing); returns how many states were removed.
    pub fn tick(&mut self, now: u64) -> usize {
        let elapsed = now.saturating_sub(self.clock);
        self.clock = self.clock.max(now);
        let slots = self.slots.len() as u64;
        if elapsed > 0 {
            let interval = u64::from(self.settings.timeouts[tm::INTERVAL].max(1));
            let share = slots.saturating_mul(elapsed).div_ceil(interval);
            // One walk of the table is the most ever owed.
            self.purge_debt = (self.purge_debt + share as usize).min(slots as usize);
        }
        if self.purge_debt == 0 {
            return 0;
        }
        let budget = self.purge_debt.min(PURGE_MAX);
        self.purge_debt -= budget;
        self.purge(now, budget)
    }

    /// Whether [`tick`](Self::tick) at `now` would change anything: the clock would move, or
    /// purge work is still owed. A cache in front of pf that answers packets without calling
    /// pf skips their ticks, which is exact only while this is false (`sift pf run --between`).
    pub fn tick_pending(&self, now: u64) -> bool {
        now > self.clock || self.purge_debt > 0
    }

    /// Examines up to `budget` slots from the purge cursor, removing expired states.
    pub fn purge(&mut self, now: u64, budget: usize) -> usize {
        let mut removed = 0;
        for _ in 0..budget.min(self.slots.len()) {
            if self.cursor >= self.slots.len() {
                self.cursor = 0;
            }
            let i = self.cursor;
            self.cursor += 1;
            let expired = self.slots[i].as_ref().is_some_and(|s| self.expires(s) <= now);
            if expired {
                self.remove(StateId(i as u32));
                removed += 1;
            }
        }
        removed
    }

    /// Removes every state.
    pub fn clear(&mut self) {
        let ids: Vec<StateId> = self.iter().map(|(id, _)| id).collect();
        for id in ids {
            self.remove(id);
        }
    }
}

/// A source that exceeded `max-src-conn` or `max-src-conn-rate`: what `overload` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Overload {
    pub table: String,
    pub flush: u8,
    pub af: Family,
    pub addr: u128,
    pub rule: Option<RuleId>,
}

/// pfctl's rendering of an address and port in `-ss` (IPv4 `a.b.c.d:port`, IPv6
/// `addr[port]`; no port when 0 and the protocol has none).
fn host(af: Family, a: u128, port: Option<u16>) -> String {
    let ip = match af {
        Family::Inet => std::net::IpAddr::V4(std::net::Ipv4Addr::from((a >> 96) as u32)),
        Family::Inet6 => std::net::IpAddr::V6(std::net::Ipv6Addr::from(a)),
    };
    match (af, port) {
        (_, None) => ip.to_string(),
        (Family::Inet, Some(p)) => format!("{ip}:{p}"),
        (Family::Inet6, Some(p)) => format!("{ip}[{p}]"),
    }
}

/// A protocol's name as pfctl prints it.
fn proto_name(p: u8) -> String {
    match p {
        sift_wire::ipproto::TCP => "tcp".into(),
        sift_wire::ipproto::UDP => "udp".into(),
        sift_wire::ipproto::ICMP => "icmp".into(),
        sift_wire::ipproto::ICMPV6 => "ipv6-icmp".into(),
        sift_wire::ipproto::GRE => "gre".into(),
        sift_wire::ipproto::ESP => "esp".into(),
        other => other.to_string(),
    }
}

impl State {
    /// One line of `pfctl -ss`: interface (or `all`), protocol, the inner address first,
    /// `->` for a state created going out, `<-` going in, the peers' states.
    pub fn pfctl_line(&self) -> String {
        let k = &self.key[1];
        let ported = matches!(
            k.proto,
            sift_wire::ipproto::TCP
                | sift_wire::ipproto::UDP
                | sift_wire::ipproto::ICMP
                | sift_wire::ipproto::ICMPV6
        );
        let p = |i: usize| ported.then_some(k.port[i]);
        let arrow = match self.direction {
            Direction::Out => "->",
            Direction::In => "<-",
        };
        let states = match k.proto {
            sift_wire::ipproto::TCP => format!(
                "{}:{}",
                tcps::NAMES.get(usize::from(self.src.state)).unwrap_or(&"?"),
                tcps::NAMES.get(usize::from(self.dst.state)).unwrap_or(&"?")
            ),
            sift_wire::ipproto::ICMP | sift_wire::ipproto::ICMPV6 => {
                format!("{}:{}", self.src.state, self.dst.state)
            }
            _ => format!(
                "{}:{}",
                udps::NAMES.get(usize::from(self.src.state)).unwrap_or(&"?"),
                udps::NAMES.get(usize::from(self.dst.state)).unwrap_or(&"?")
            ),
        };
        format!(
            "{} {} {} {} {}       {}",
            self.ifname.as_deref().unwrap_or("all"),
            proto_name(k.proto),
            host(k.af, k.addr[1], p(1)),
            arrow,
            host(k.af, k.addr[0], p(0)),
            states
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an established flow's packet reads of its state (keys, clock, peers, counters,
    /// limits, flags, scrub number, rule and anchor) lies in the first four cache lines.
    #[test]
    fn per_packet_fields_fit_four_cache_lines() {
        use std::mem::{offset_of, size_of};
        let end = |off: usize, len: usize| off + len;
        assert!(end(offset_of!(State, anchor), size_of::<Option<RuleId>>()) <= 256);
        assert!(end(offset_of!(State, scrub), 2) <= 256);
        assert!(end(offset_of!(State, limits), 4) <= 256);
        assert!(end(offset_of!(State, dst), size_of::<Peer>()) <= 256);
        assert_eq!(size_of::<State>() % 64, 0);
    }

    fn key(a: u128, b: u128) -> StateKey {
        StateKey { af: Family::Inet, proto: 17, rdomain: 0, addr: [a, b], port: [1, 2] }
    }

    fn state(k: StateKey) -> State {
        State {
            key: [k, k],
            direction: Direction::In,
            ifname: None,
            created_on: "em0".into(),
            rule: None,
            anchor: None,
            kind: 1,
            sloppy: false,
            log: 0,
            src: Peer::default(),
            dst: Peer::default(),
            timeout: tm::UDP_FIRST,
            creation: 0,
            last: 0,
            packets: [0; 2],
            bytes: [0; 2],
            src_node: None,
            tcp_est: false,
            limits: 0,
            purge: false,
            hash: [0; 2],
            pool_addr: None,
            scrub: 0,
            proxy_mss: 0,
            tcp_scrub: None,
        }
    }

    #[test]
    fn insert_find_remove() {
        let mut t = StateTable::default();
        t.limits_for(None, None);
        let id = t.insert(state(key(1, 2)), 0).unwrap();
        assert_eq!(t.find(&key(1, 2), "em0", Direction::In, 1), Some(id));
        assert_eq!(t.find(&key(2, 1), "em0", Direction::In, 1), None);
        // The same key, binding and direction again: pf's state-insert failure.
        assert_eq!(t.insert(state(key(1, 2)), 0), Err(Reason::StateInsert));
        assert!(t.remove(id).is_some());
        assert!(t.is_empty());
        assert_eq!(t.find(&key(1, 2), "em0", Direction::In, 1), None);
    }

    #[test]
    fn expired_states_are_not_found_and_purged_in_slices() {
        let mut t = StateTable::default();
        t.limits_for(None, None);
        for i in 0..100 {
            t.insert(state(key(i, 2)), 0).unwrap();
        }
        // udp.first is 60 s.
        assert!(t.find(&key(5, 2), "em0", Direction::In, 59).is_some());
        assert!(t.find(&key(5, 2), "em0", Direction::In, 60).is_none());
        assert_eq!(t.len(), 99);
        let removed = t.purge(61, 10);
        // Slot 5 was freed by the lookup: 9 of the first 10 slots hold states.
        assert_eq!(removed, 9);
        let mut total = removed;
        while !t.is_empty() {
            let r = t.purge(61, 10);
            assert!(r <= 10);
            total += r;
        }
        assert_eq!(total, 99);
    }

    #[test]
    fn a_tick_is_pending_while_the_clock_moves_or_purge_work_is_owed() {
        let mut t = StateTable::default();
        t.limits_for(None, None);
        for i in 0..(3 * PURGE_MAX as u128) {
            t.insert(state(key(i, 2)), 0).unwrap();
        }
        assert!(t.tick_pending(1), "the clock would move");
        t.tick(1);
        assert!(!t.tick_pending(1) && !t.tick_pending(0));
        // Ten seconds (the purge interval) owe a walk of the table: three ticks' worth.
        t.tick(11);
        assert!(t.tick_pending(11), "purge work owed");
        t.tick(11);
        t.tick(11);
        assert!(!t.tick_pending(11));
        assert_eq!(t.tick(11), 0);
    }
}
