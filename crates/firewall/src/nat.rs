//! pf's address translation (`nat-to`, `rdr-to`, `binat-to`): which address and port the first
//! packet of a connection gets (pf_lb.c's `pf_get_transaddr`, `pf_map_addr`, `pf_get_sport`),
//! and the state's two keys that make the later packets of both directions follow.
//!
//! Why its own module: translation is decided once per connection, from the rules' pools and
//! the state table (a port is free when no state holds the key it would make); everything
//! after that is a state lookup and a header rewrite (module `rewrite`). pfctl has already
//! turned `binat-to` into a `nat-to` with `static-port` plus a mirrored `rdr-to` rule and lists
//! of addresses into tables, so the pools here are a network, a table or an interface's
//! addresses (a table too).
//!
//! Differences from pf, each deliberate: the random choices (`random` pools, the first port
//! tried) come from the firewall's seeded generator so that runs repeat; OpenBSD's
//! `in_baddynamic` ports are not skipped (sift has no local sockets to protect); `least-states`
//! counts states per pool address for networks of up to 65,536 addresses and for tables
//! (pf counts per table entry and, for networks, keeps one shared count).

use sift_pf::addr::AddrKind;
use sift_pf::ast::{self, PoolType};

use crate::afto;
use sift_wire::ipproto;

use crate::eval::next_random;
use crate::packet::{Direction, Family, Meta, Packet};
use crate::state::StateKey;
use crate::{Decision, Firewall, Reason, RuleId};

/// Which pool of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Side {
    /// `nat-to` (the source).
    Nat,
    /// `rdr-to` (the destination).
    Rdr,
}

/// Where a pool's addresses come from.
#[derive(Clone, Debug)]
pub(crate) enum PoolAddr {
    /// A network: address and mask as keys (IPv4 in the top 32 bits).
    Net { addr: u128, mask: u128 },
    /// A table (an interface's addresses are kept in one too).
    Table(usize),
    /// `no-route` and the like: nothing to translate to.
    Unusable,
}

/// A rule's pool, compiled (pf's `pf_pool`).
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub addr: PoolAddr,
    pub ty: PoolType,
    pub sticky: bool,
    /// The `source-hash` key as SipHash's two words.
    pub key: (u64, u64),
    /// `nat-to`: the port range (0, 0: `static-port`); `rdr-to`: the new port or range start.
    pub ports: [u16; 2],
}

impl Pool {
    /// The pool of `p`, with `table` naming the table slot of a table or interface address.
    pub fn compile(p: &ast::Pool, table: &mut dyn FnMut(&AddrKind) -> usize) -> Option<Pool> {
        let addr = match &p.addr {
            AddrKind::None => return None,
            AddrKind::Mask { addr, mask } => {
                PoolAddr::Net { addr: u128::from_be_bytes(*addr), mask: u128::from_be_bytes(*mask) }
            }
            a @ (AddrKind::Table(_) | AddrKind::Dyn { .. }) => PoolAddr::Table(table(a)),
            _ => PoolAddr::Unusable,
        };
        // pf hands the key's 16 bytes to SipHash as they lie in memory (amd64: little-endian
        // words).
        let k = p.key;
        let key =
            (u64::from(k[0]) | u64::from(k[1]) << 32, u64::from(k[2]) | u64::from(k[3]) << 32);
        Some(Pool { addr, ty: p.ty, sticky: p.sticky, key, ports: p.proxy_port })
    }
}

/// A pool's moving parts (pf's `rpool->counter` and `tblidx`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cursor {
    counter: u128,
    tblidx: usize,
}

/// The addresses and ports a new connection is translated to (pf's `nsaddr`/`ndaddr`…), as
/// the state key holds them: ports are the ICMP query id for ICMP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Trans {
    pub src: u128,
    pub sport: u16,
    pub dst: u128,
    pub dport: u16,
    /// The family after translation (`af-to` changes it).
    pub af: Family,
}

/// What the key a translation would make looks like, apart from its source address and port
/// (the candidates `pf_get_sport` tries).
struct Far<'a> {
    /// The key's family and protocol (`af-to`: the new ones).
    af: Family,
    proto: u8,
    rdomain: i32,
    /// How the key is oriented (`af-to`: as the translated packet goes, the other way).
    dir: Direction,
    /// The direction of the packet that creates the state.
    lookup: Direction,
    /// The new destination for a candidate source address (`af-to` embeds it in the pool's
    /// prefix).
    dst_of: &'a dyn Fn(u128) -> u128,
    dport: u16,
    /// ICMP: the id is both ports.
    icmp: bool,
    now: u64,
    /// The ports to try (`None`: keep the port, no search: ICMP that is not an echo).
    ports: Option<(u16, u16)>,
    /// The port (or id) the packet had.
    sport: u16,
    /// The source address pools hash or mask.
    saddr: u128,
}

/// The ports `pf_get_sport` tries for `pkt` whose new key is in family `af`: the pool's range
/// for TCP and UDP, any id for an ICMP echo request, the port kept otherwise.
fn port_range(pkt: &Packet<'_>, af: Family, pool: [u16; 2]) -> Option<(u16, u16)> {
    match pkt.proto {
        ipproto::ICMP | ipproto::ICMPV6 => {
            let echo = if pkt.af == Family::Inet { 8 } else { 128 };
            let _ = af;
            (pkt.icmp_type == echo).then_some((1, 65535))
        }
        ipproto::TCP | ipproto::UDP => Some((pool[0], pool[1])),
        _ => Some((0, 0)),
    }
}

/// The bits of an address of family `af` (IPv4: the top 32).
fn family_mask(af: Family) -> u128 {
    match af {
        Family::Inet => u128::MAX << 96,
        Family::Inet6 => u128::MAX,
    }
}

/// pf's `pf_poolmask`: the network bits of `raddr`, the host bits of `other`.
fn poolmask(raddr: u128, rmask: u128, other: u128, af: Family) -> u128 {
    (raddr & rmask) | (other & !rmask & family_mask(af))
}

/// pf's `pf_addr_inc` within the family's bits.
fn addr_inc(a: u128, af: Family) -> u128 {
    match af {
        Family::Inet => a.wrapping_add(1 << 96),
        Family::Inet6 => a.wrapping_add(1),
    }
}

/// pf's `pf_hash` (SipHash-2-4 of the address bytes under the pool key), as an address whose
/// host bits `pf_poolmask` takes, and the 64-bit value a table index is taken from.
fn source_hash(saddr: u128, key: (u64, u64), af: Family) -> (u128, u64) {
    #[allow(deprecated)] // std's SipHasher is SipHash-2-4, pf's function; no other is needed.
    let mut h = std::hash::SipHasher::new_with_keys(key.0, key.1);
    let bytes = saddr.to_be_bytes();
    let n = if af == Family::Inet { 4 } else { 16 };
    std::hash::Hasher::write(&mut h, &bytes[..n]);
    let res = std::hash::Hasher::finish(&h);
    // pf stores the result's words in host (little-endian) order into the address.
    let (lo, hi) = (res as u32, (res >> 32) as u32);
    let words = match af {
        Family::Inet => [lo, 0, 0, 0],
        Family::Inet6 => [lo, hi, !hi, !lo],
    };
    let mut b = [0u8; 16];
    for (i, w) in words.iter().enumerate() {
        b[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    (u128::from_be_bytes(b), res)
}

/// The most addresses of a network `least-states` compares one by one.
const LEAST_STATES_SCAN: u128 = 1 << 16;

impl Firewall {
    /// pf's `pf_get_transaddr` over the match rules and the deciding rule of `d`, in order:
    /// the translation of a packet that creates a connection, `None` when no rule translates;
    /// `Err(Translate)` when a pool has no address or port left.
    pub(crate) fn translation(
        &mut self,
        pkt: &Packet<'_>,
        meta: &Meta<'_>,
        ports: (u16, u16),
        d: &Decision,
    ) -> Result<Option<(Trans, RuleId)>, Reason> {
        let mut t =
            Trans { src: pkt.src, sport: ports.0, dst: pkt.dst, dport: ports.1, af: pkt.af };
        let mut by = None;
        for id in d.matches.iter().copied().chain(d.rule) {
            let Some(pools) = self.sets.get(id.ruleset).and_then(|s| s.pools.get(id.nr as usize))
            else {
                continue;
            };
            let [nat, rdr] = pools.clone();
            if nat.is_none() && rdr.is_none() {
                continue;
            }
            let rule = &self.sets[id.ruleset].source[id.nr as usize];
            if rule.rule_flag & ast::flag::AFTO != 0 {
                let Some(p) = nat else { return Err(Reason::Translate) };
                t = self.transaddr_af(pkt, meta, &t, id, &p, rdr.as_ref())?;
                by = Some(id);
                continue;
            }
            if let Some(p) = nat {
                let far = Far {
                    af: pkt.af,
                    proto: pkt.proto,
                    rdomain: meta.rdomain,
                    dir: meta.dir,
                    lookup: meta.dir,
                    dst_of: &|_| t.dst,
                    dport: t.dport,
                    icmp: matches!(pkt.proto, ipproto::ICMP | ipproto::ICMPV6),
                    now: meta.now,
                    ports: port_range(pkt, pkt.af, p.ports),
                    sport: t.sport,
                    saddr: t.src,
                };
                let (a, port) = self.get_sport(&far, id, &p)?;
                t.src = a;
                t.sport = port;
                if matches!(pkt.proto, ipproto::ICMP | ipproto::ICMPV6) {
                    // The query id is both ports of the key.
                    t.dport = port;
                }
            }
            if let Some(p) = rdr {
                let mut a = self.map_addr(pkt.af, id, Side::Rdr, &p, t.src, None)?;
                if p.ty == PoolType::Bitmask
                    && let PoolAddr::Net { mask, .. } = p.addr
                {
                    a = poolmask(a, mask, t.dst, pkt.af);
                }
                let port = if p.ports[1] != 0 {
                    // A range: the rule's destination port range maps onto it.
                    let rule = &self.sets[id.ruleset].source[id.nr as usize];
                    let div = u32::from(p.ports[1].wrapping_sub(p.ports[0]).wrapping_add(1)).max(1);
                    let off = u32::from(t.dport.wrapping_sub(rule.dst.port.a)) % div;
                    let mut n = off + u32::from(p.ports[0]);
                    if n > 65535 {
                        n -= 65535;
                    }
                    n as u16
                } else {
                    p.ports[0]
                };
                t.dst = a;
                if port != 0 && matches!(pkt.proto, ipproto::TCP | ipproto::UDP) {
                    t.dport = port;
                }
            }
            by = Some(id);
        }
        Ok(by.map(|id| (t, id)))
    }

    /// pf's `pf_get_sport`: the source address from the pool and a port that makes a key no
    /// state holds.
    fn get_sport(&mut self, far: &Far<'_>, id: RuleId, p: &Pool) -> Result<(u128, u16), Reason> {
        let af = far.af;
        let mut init = None;
        let mut naddr = self.map_addr(af, id, Side::Nat, p, far.saddr, Some(&mut init))?;
        let (low, high) = match far.ports {
            Some(range) => range,
            // Other ICMP is not given a new id.
            None => return Ok((naddr, far.sport)),
        };
        // A candidate is free when no state holds the key it would make on the far side.
        let free = |fw: &Firewall, naddr: u128, port: u16| {
            let ports = if far.icmp { (port, port) } else { (port, far.dport) };
            let dst = (far.dst_of)(naddr);
            let key = StateKey::oriented(af, far.proto, far.rdomain, (naddr, dst), ports, far.dir);
            !fw.states.key_in_use(&key, opposite(far.lookup), far.now)
        };
        loop {
            if low == 0 && high == 0 {
                if free(self, naddr, far.sport) {
                    return Ok((naddr, far.sport));
                }
            } else if low == high {
                if free(self, naddr, low) {
                    return Ok((naddr, low));
                }
            } else {
                let (lo, hi) = (u32::from(low.min(high)), u32::from(low.max(high)));
                let cut = lo + (next_random(&mut self.rng) % u64::from(hi - lo + 1)) as u32;
                let found = (cut..=hi)
                    .chain((lo..cut).rev())
                    .map(|p| p as u16)
                    .find(|&port| free(self, naddr, port));
                if let Some(port) = found {
                    return Ok((naddr, port));
                }
            }
            // Out of ports on this address: pools that move on try the next one.
            match p.ty {
                PoolType::Random | PoolType::RoundRobin | PoolType::LeastStates => {
                    naddr = self.map_addr(af, id, Side::Nat, p, far.saddr, Some(&mut init))?;
                    if Some(naddr) == init {
                        return Err(Reason::Translate);
                    }
                }
                _ => return Err(Reason::Translate),
            }
        }
    }

    /// The usable entries of a pool table for family `af`, as (address, mask).
    fn pool_entries(&self, table: usize, af: Family) -> Vec<(u128, u128)> {
        let v4 = af == Family::Inet;
        self.tables[table]
            .entries()
            .into_iter()
            .filter(|e| !e.negated && e.addr.is_ipv4() == v4)
            .map(|e| (crate::table::key_of(e.addr), crate::table::mask(e.len)))
            .collect()
    }

    /// pf's `pf_map_addr`: an address of pool `p` for a connection from `saddr`. `init` is
    /// the first address chosen in this allocation (pf's `init_addr`): set on the first
    /// call, it makes `random` pools step instead of drawing again.
    fn map_addr(
        &mut self,
        af: Family,
        id: RuleId,
        side: Side,
        p: &Pool,
        saddr: u128,
        init: Option<&mut Option<u128>>,
    ) -> Result<u128, Reason> {
        if p.sticky
            && p.ty != PoolType::None
            && let Some(&a) = self.sticky.get(&(id, side, saddr))
        {
            return Ok(a);
        }
        let fmask = family_mask(af);
        // The pool's entries: one network, or a table's.
        let entries = match p.addr {
            PoolAddr::Net { addr, mask } => vec![(addr & fmask, mask & fmask)],
            PoolAddr::Table(t) => self.pool_entries(t, af),
            PoolAddr::Unusable => return Err(Reason::Translate),
        };
        if entries.is_empty() {
            return Err(Reason::Translate);
        }
        let table = matches!(p.addr, PoolAddr::Table(_));
        let mut cur = self.cursors.get(&(id, side)).copied().unwrap_or_default();
        // The entry under the cursor, the counter moved into it (pf's `pfr_pool_get`).
        let entry_at = |cur: &mut Cursor| {
            let i = cur.tblidx % entries.len();
            let (a, m) = entries[i];
            if cur.counter & m != a & m || cur.counter & fmask != cur.counter {
                cur.counter = a & m;
            }
            (a, m)
        };
        let naddr = match p.ty {
            PoolType::None => entries[0].0,
            PoolType::Bitmask => poolmask(entries[0].0, entries[0].1, saddr, af),
            PoolType::Random => {
                if table {
                    cur.tblidx = (next_random(&mut self.rng) % entries.len() as u64) as usize;
                    cur.counter = 0;
                    let (a, m) = entry_at(&mut cur);
                    a & m
                } else {
                    let (a, m) = entries[0];
                    let first = init.as_ref().is_none_or(|i| i.is_none());
                    if first {
                        cur.counter = u128::from(next_random(&mut self.rng))
                            | u128::from(next_random(&mut self.rng)) << 64;
                    } else {
                        cur.counter = addr_inc(cur.counter, af);
                    }
                    let n = poolmask(a, m, cur.counter, af);
                    if let Some(i) = init
                        && i.is_none()
                    {
                        *i = Some(n);
                    }
                    n
                }
            }
            PoolType::SourceHash => {
                let (hash, value) = source_hash(saddr, p.key, af);
                if table {
                    cur.tblidx = (value % entries.len() as u64) as usize;
                    cur.counter = 0;
                    let (a, m) = entry_at(&mut cur);
                    a & m
                } else {
                    poolmask(entries[0].0, entries[0].1, hash, af)
                }
            }
            PoolType::RoundRobin | PoolType::LeastStates => {
                let single = !table && entries[0].1 == fmask;
                let n = if single {
                    entries[0].0
                } else if p.ty == PoolType::RoundRobin {
                    self.round_robin(&entries, &mut cur, af)
                } else {
                    self.least_states(&entries, &mut cur, af, id, side)
                };
                if let Some(i) = init
                    && i.is_none()
                {
                    *i = Some(n);
                }
                n
            }
        };
        self.cursors.insert((id, side), cur);
        if p.sticky && p.ty != PoolType::None && self.sticky.len() < STICKY_MAX {
            self.sticky.insert((id, side, saddr), naddr);
        }
        Ok(naddr)
    }

    /// The next address of a round-robin walk over `entries` (each entry's addresses in
    /// turn).
    fn round_robin(&self, entries: &[(u128, u128)], cur: &mut Cursor, af: Family) -> u128 {
        let fmask = family_mask(af);
        let i = cur.tblidx % entries.len();
        let (a, m) = entries[i];
        if cur.counter & m != a & m || cur.counter & fmask != cur.counter {
            cur.counter = a & m;
        }
        let n = cur.counter;
        let next = addr_inc(n, af);
        if next & m != a & m || next & fmask != next {
            // Past this entry: the next one starts over at its first address.
            cur.tblidx = (i + 1) % entries.len();
            let (na, nm) = entries[cur.tblidx];
            cur.counter = na & nm;
        } else {
            cur.counter = next;
        }
        n
    }

    /// `least-states`: from the cursor on, the address with the fewest states (the first of
    /// equals), then the cursor moves past it.
    fn least_states(
        &self,
        entries: &[(u128, u128)],
        cur: &mut Cursor,
        af: Family,
        id: RuleId,
        side: Side,
    ) -> u128 {
        let fmask = family_mask(af);
        let shift = if af == Family::Inet { 96 } else { 0 };
        let total: u128 = entries
            .iter()
            .map(|&(_, m)| ((!m & fmask) >> shift).saturating_add(1))
            .fold(0u128, |a, b| a.saturating_add(b));
        if total > LEAST_STATES_SCAN {
            return self.round_robin(entries, cur, af);
        }
        let mut probe = *cur;
        let mut best: Option<(u32, u128)> = None;
        for _ in 0..total {
            let a = self.round_robin(entries, &mut probe, af);
            let n = self.states.pool_states(id, side == Side::Rdr, a);
            if best.is_none_or(|(b, _)| n < b) {
                best = Some((n, a));
                if n == 0 {
                    break;
                }
            }
        }
        let a = best.map_or(entries[0].0, |(_, a)| a);
        // Continue after the chosen address next time.
        *cur = probe;
        a
    }
}

/// The most sticky-address bindings kept (beyond it, new sources are not bound).
const STICKY_MAX: usize = 1 << 20;

/// The other direction.
pub(crate) fn opposite(d: Direction) -> Direction {
    match d {
        Direction::In => Direction::Out,
        Direction::Out => Direction::In,
    }
}

/// The keys (wire, stack) of a state whose creating packet going `dir` had key `orig` and is
/// translated to `t` (pf's `pf_state_key_setup`: the wire key is what the packet looks like
/// on the interface, the stack key what the host sees).
///
/// With `af-to` the stack key is in the new family, for ICMP the other ICMP, and oriented the
/// other way (pf builds it reversed: the translated packet leaves as a new one).
pub(crate) fn state_keys(orig: StateKey, t: &Trans, dir: Direction) -> [StateKey; 2] {
    let afto = t.af != orig.af;
    let moved = StateKey::oriented(
        t.af,
        if afto { afto::other_proto(orig.proto) } else { orig.proto },
        orig.rdomain,
        (t.src, t.dst),
        (t.sport, t.dport),
        if afto { opposite(dir) } else { dir },
    );
    match dir {
        Direction::In => [orig, moved],
        Direction::Out => [moved, orig],
    }
}

impl Firewall {
    /// pf's `pf_get_transaddr_af` for `af-to` rule `id`: the source from the `from` pool and a
    /// free port in the new family; the destination from the `to` pool, or the IPv4 address
    /// embedded in the IPv6 destination (NAT64: after the rule's destination prefix, /96 when
    /// shorter than /32), or the IPv4 destination embedded in the `from` pool's prefix
    /// (NAT46: at most /96), as RFC 6052 lays them out.
    fn transaddr_af(
        &mut self,
        pkt: &Packet<'_>,
        meta: &Meta<'_>,
        t: &Trans,
        id: RuleId,
        nat: &Pool,
        rdr: Option<&Pool>,
    ) -> Result<Trans, Reason> {
        let r = &self.sets[id.ruleset].source[id.nr as usize];
        let naf = match r.naf {
            sift_pf::addr::Af::Inet => Family::Inet,
            sift_pf::addr::Af::Inet6 => Family::Inet6,
            sift_pf::addr::Af::Any => return Err(Reason::Translate),
        };
        let bits = |m: &[u8; 16], af: Family| {
            let n = sift_pf::addr::unmask(m);
            if af == Family::Inet { n.min(32) } else { n }
        };
        let dst_mask = match &r.dst.addr {
            sift_pf::addr::AddrKind::Mask { mask, .. } => bits(mask, pkt.af),
            _ => 0,
        };
        let nat_mask = match nat.addr {
            PoolAddr::Net { mask, .. } => bits(&mask.to_be_bytes(), naf),
            _ => 128,
        };
        // The destination: from the `to` pool, or embedded in / extracted from an address.
        let rdr_dst = match rdr {
            Some(p) => {
                let a = self.map_addr(naf, id, Side::Rdr, p, t.src, None)?;
                let len = match p.addr {
                    PoolAddr::Net { mask, .. } => bits(&mask.to_be_bytes(), naf),
                    _ => {
                        if naf == Family::Inet {
                            32
                        } else {
                            128
                        }
                    }
                };
                Some((a, len, p.ports[0]))
            }
            None => None,
        };
        let orig_dst = pkt.dst;
        let dst_of = move |nsrc: u128| -> u128 {
            match (naf, rdr_dst) {
                (Family::Inet, Some((a, len, _))) => {
                    let m = crate::table::mask(len as u8);
                    (a & m) | (afto::extract(orig_dst, 96) & !m & (u128::MAX << 96))
                }
                (Family::Inet6, Some((a, len, _))) => afto::embed(orig_dst, a, len),
                (Family::Inet, None) => {
                    afto::extract(orig_dst, if dst_mask < 32 { 96 } else { dst_mask })
                }
                (Family::Inet6, None) => afto::embed(orig_dst, nsrc, nat_mask.min(96)),
            }
        };
        let icmp = matches!(pkt.proto, ipproto::ICMP | ipproto::ICMPV6);
        let far = Far {
            af: naf,
            proto: afto::other_proto(pkt.proto),
            rdomain: meta.rdomain,
            dir: opposite(meta.dir),
            lookup: meta.dir,
            dst_of: &dst_of,
            dport: match rdr_dst {
                Some((_, _, port)) if port != 0 && !icmp => port,
                _ => t.dport,
            },
            icmp,
            now: meta.now,
            ports: port_range(pkt, naf, nat.ports),
            sport: t.sport,
            saddr: t.src,
        };
        let (src, sport) = self.get_sport(&far, id, nat)?;
        let dport = if icmp { sport } else { far.dport };
        Ok(Trans { src, sport, dst: dst_of(src), dport, af: naf })
    }
}
