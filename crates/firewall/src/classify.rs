//! pf's rules as bit-vector classification tables: what pf's program in the kernel matches
//! packets with (issue 26).
//!
//! Why its own module: an eBPF program that walks 2,048 rules with skip steps costs what
//! bpfilter's linear walk costs (microseconds), and its verifier would explore every path
//! through the rules. Here the rules become data that fixed code can look up in constant
//! time: for every field the rules test, the packet's value maps to a *class* (an LPM trie
//! for addresses, arrays for protocols, ports, flags, ICMP types and TOS), every class is the
//! bit vector of the rules whose test of that field the value passes, and the rules a packet
//! matches are the AND of its classes' vectors. pf's winner is then the first matching
//! `quick` rule if there is one, else the last matching rule (a quick rule ends evaluation,
//! and every rule before it that matched was not quick), else pf's default (pass).
//!
//! The tables are built from the loaded rules of the main rule set, for one interface (its
//! `on` tests are decided here) and both directions. [`Tables::lookup`] is the reference in
//! Rust that the tests hold against [`Firewall::decide`]; the kernel program reads the same
//! tables from its maps.
//!
//! What the tables cannot express is refused, naming the rule: anchors, `match` rules, tags,
//! `received-on`, `probability`, `once`, `max-pkt-rate`, user and group tests, routing
//! domains, priorities, OS fingerprints, non-contiguous netmasks, route-based addresses.
//!
//! Addresses: every prefix a rule or one of its tables names is an entry of the side's LPM
//! trie. For an address whose longest matching entry is `P`, each rule's prefixes that contain
//! the address are exactly its prefixes that contain `P` (they are entries too, no longer than
//! `P`), so the rule's answer is a function of `P`: the trie's value for `P` is the class of
//! the rules whose address test passes there (a table's answer: its longest entry containing
//! `P`, not negated).

use std::collections::HashMap;

use sift_pf::ast;
use sift_wire::ipproto;

use crate::packet::{Direction, Family, Packet};
use crate::rules::{AddrMatch, PortMatch, Rule};
use crate::table::mask;
use crate::{Firewall, RuleId, icmp_kind};

/// The most words of a bit vector (so at most `MAX_WORDS * 64` rules).
pub const MAX_WORDS: usize = 64;
/// The most rules a rule set may have to be classified.
pub const MAX_RULES: usize = MAX_WORDS * 64;
/// [`Tables::sport`]/[`Tables::dport`]: the entry for packets without ports.
pub const NO_PORT: usize = 65536;
/// [`Tables::tcpflags`]: the entry for packets that are not TCP (or are fragments).
pub const NOT_TCP: usize = 256;
/// [`Tables::icmp`]: the entry for packets that are not ICMP of their family (or fragments).
pub const NOT_ICMP: usize = 2 * 65536;
/// [`Tables::frag`]'s entries: not a fragment, a TCP fragment, another fragment.
pub mod frag {
    /// Not a fragment.
    pub const NONE: usize = 0;
    /// A fragment of a TCP datagram.
    pub const TCP: usize = 1;
    /// A fragment of another protocol's datagram.
    pub const OTHER: usize = 2;
}

/// An entry of an IPv4 LPM trie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix4 {
    /// The prefix length.
    pub len: u8,
    /// The network, in network byte order.
    pub addr: [u8; 4],
    /// The class of addresses whose longest entry this is.
    pub class: u32,
}

/// An entry of an IPv6 LPM trie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix6 {
    /// The prefix length.
    pub len: u8,
    /// The network, in network byte order.
    pub addr: [u8; 16],
    /// The class of addresses whose longest entry this is.
    pub class: u32,
}

/// What the kernel program needs of a rule besides its tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleMeta {
    /// The rule's number (`@N`).
    pub nr: u32,
    /// `block` (else `pass`).
    pub block: bool,
    /// `quick`.
    pub quick: bool,
    /// The rule keeps state (`keep state`, the default of `pass`).
    pub keep_state: bool,
    /// `keep state (sloppy)`.
    pub sloppy: bool,
    /// `log`.
    pub log: bool,
    /// `log (all)`.
    pub log_all: bool,
    /// The rule, for [`Firewall::rule`].
    pub id: RuleId,
}

/// pf's rules as classification tables (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    /// Words per bit vector: `ceil(rules / 64)`, at least 1, at most [`MAX_WORDS`].
    pub nwords: u32,
    /// Class id → bit vector of `nwords` words (bit `r % 64` of word `r / 64`: rule index `r`).
    pub bits: Vec<Vec<u64>>,
    /// The class of the `quick` rules.
    pub quick: u32,
    /// The class of the rules that apply to the interface in direction in.
    pub dir_in: u32,
    /// ... in direction out.
    pub dir_out: u32,
    /// 512 entries: `(af == inet6) * 256 + protocol` → class.
    pub proto: Vec<u32>,
    /// By [`frag`]: not a fragment, a TCP fragment, another fragment.
    pub frag: [u32; 3],
    /// The IPv4 source trie (a `0/0` entry always present).
    pub src4: Vec<Prefix4>,
    /// The IPv4 destination trie.
    pub dst4: Vec<Prefix4>,
    /// The IPv6 source trie.
    pub src6: Vec<Prefix6>,
    /// The IPv6 destination trie.
    pub dst6: Vec<Prefix6>,
    /// 65,537 entries: source port → class; [`NO_PORT`] for packets without ports (not TCP or
    /// UDP, or fragments).
    pub sport: Vec<u32>,
    /// Destination ports, as `sport`.
    pub dport: Vec<u32>,
    /// 257 entries: TCP flags → class; [`NOT_TCP`] for the rest.
    pub tcpflags: Vec<u32>,
    /// 131,073 entries: `(af == inet6) * 65536 + type * 256 + code` → class for ICMP (IPv4) and
    /// ICMPv6 (IPv6); [`NOT_ICMP`] for the rest.
    pub icmp: Vec<u32>,
    /// 256 entries: TOS / traffic class (without ECN, as [`Packet::tos`]) → class.
    pub tos: Vec<u32>,
    /// The rules, by index.
    pub rules: Vec<RuleMeta>,
}

/// Why a rule set cannot be classified.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClassifyError {
    /// A rule tests something the tables cannot hold.
    #[error("rule @{nr}: {what} cannot run in the kernel")]
    Rule {
        /// The rule's number (`pfctl -vvsr`'s `@N`; [`Firewall::rule`] gives the rule).
        nr: u32,
        /// What it tests.
        what: &'static str,
    },
    /// More rules than the bit vectors hold.
    #[error("{0} rules: at most {MAX_RULES} can run in the kernel")]
    TooManyRules(usize),
}

/// The fields of a packet the tables classify (what [`Tables::lookup`] reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    /// The family.
    pub af: Family,
    /// The protocol.
    pub proto: u8,
    /// Addresses as pf's keys (IPv4 in the top 32 bits).
    pub src: u128,
    /// The destination.
    pub dst: u128,
    /// Ports (TCP and UDP).
    pub sport: u16,
    /// The destination port.
    pub dport: u16,
    /// TCP flags.
    pub tcp_flags: u8,
    /// ICMP type and code.
    pub icmp_type: u8,
    /// The code.
    pub icmp_code: u8,
    /// TOS without ECN.
    pub tos: u8,
    /// A fragment.
    pub fragment: bool,
    /// The direction.
    pub dir: Direction,
}

impl Fields {
    /// The fields of `pkt` travelling in `dir`.
    pub fn of(pkt: &Packet<'_>, dir: Direction) -> Fields {
        Fields {
            af: pkt.af,
            proto: pkt.proto,
            src: pkt.src,
            dst: pkt.dst,
            sport: pkt.sport,
            dport: pkt.dport,
            tcp_flags: pkt.tcp_flags,
            icmp_type: pkt.icmp_type,
            icmp_code: pkt.icmp_code,
            tos: pkt.tos,
            fragment: pkt.fragment,
            dir,
        }
    }
}

impl Tables {
    /// The class ids of `f`, in the order the kernel program ANDs them.
    pub fn classes(&self, f: &Fields) -> [u32; 10] {
        let v6 = f.af == Family::Inet6;
        let transport = !f.fragment && matches!(f.proto, ipproto::TCP | ipproto::UDP);
        let icmp_proto = if v6 { ipproto::ICMPV6 } else { ipproto::ICMP };
        let (src, dst) = if v6 {
            (longest6(&self.src6, f.src), longest6(&self.dst6, f.dst))
        } else {
            (longest4(&self.src4, f.src), longest4(&self.dst4, f.dst))
        };
        [
            match f.dir {
                Direction::In => self.dir_in,
                Direction::Out => self.dir_out,
            },
            self.proto[usize::from(v6) * 256 + usize::from(f.proto)],
            self.frag[match (f.fragment, f.proto) {
                (false, _) => frag::NONE,
                (true, ipproto::TCP) => frag::TCP,
                (true, _) => frag::OTHER,
            }],
            src,
            dst,
            self.sport[if transport { usize::from(f.sport) } else { NO_PORT }],
            self.dport[if transport { usize::from(f.dport) } else { NO_PORT }],
            self.tcpflags[if !f.fragment && f.proto == ipproto::TCP {
                usize::from(f.tcp_flags)
            } else {
                NOT_TCP
            }],
            self.icmp[if !f.fragment && f.proto == icmp_proto {
                usize::from(v6) * 65536 + usize::from(f.icmp_type) * 256 + usize::from(f.icmp_code)
            } else {
                NOT_ICMP
            }],
            self.tos[usize::from(f.tos)],
        ]
    }

    /// The index of the rule that decides `f` (`None`: pf's default rule, pass): the AND of
    /// its classes, then the first quick rule or the last rule.
    pub fn lookup(&self, f: &Fields) -> Option<usize> {
        let classes = self.classes(f);
        let n = self.nwords as usize;
        let mut m = vec![u64::MAX; n];
        for c in classes {
            for (w, b) in m.iter_mut().zip(&self.bits[c as usize]) {
                *w &= b;
            }
        }
        let quick = &self.bits[self.quick as usize];
        if let Some((i, w)) =
            m.iter().zip(quick).map(|(a, q)| a & q).enumerate().find(|(_, w)| *w != 0)
        {
            return Some(i * 64 + w.trailing_zeros() as usize);
        }
        let (i, w) = m.iter().enumerate().rev().find(|(_, w)| **w != 0)?;
        Some(i * 64 + 63 - w.leading_zeros() as usize)
    }
}

fn longest4(trie: &[Prefix4], key: u128) -> u32 {
    let a = (key >> 96) as u32;
    trie.iter()
        .filter(|p| {
            p.len == 0
                || a >> (32 - u32::from(p.len))
                    == u32::from_be_bytes(p.addr) >> (32 - u32::from(p.len))
        })
        .max_by_key(|p| p.len)
        .map_or(0, |p| p.class)
}

fn longest6(trie: &[Prefix6], key: u128) -> u32 {
    trie.iter()
        .filter(|p| key & mask(p.len) == u128::from_be_bytes(p.addr))
        .max_by_key(|p| p.len)
        .map_or(0, |p| p.class)
}

/// Interned bit vectors.
struct Classes {
    nwords: usize,
    bits: Vec<Vec<u64>>,
    ids: HashMap<Vec<u64>, u32>,
}

impl Classes {
    fn id(&mut self, v: Vec<u64>) -> u32 {
        if let Some(&id) = self.ids.get(&v) {
            return id;
        }
        let id = self.bits.len() as u32;
        self.ids.insert(v.clone(), id);
        self.bits.push(v);
        id
    }

    /// The class of the rules `pass` accepts.
    fn of(&mut self, rules: &[Rule], pass: impl Fn(&Rule) -> bool) -> u32 {
        let mut v = vec![0u64; self.nwords];
        for (i, r) in rules.iter().enumerate() {
            if pass(r) {
                v[i / 64] |= 1 << (i % 64);
            }
        }
        self.id(v)
    }
}

/// One rule's address test over one family, as prefixes: the union of `Prefixes`, a table's
/// entries (longest match decides), or everything.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Spec {
    Any,
    /// (key, length) with the key masked.
    Prefixes(Vec<(u128, u8)>),
    Table(usize),
}

/// Splits `[lo, hi]` (keys of `width` bits, at the top of a `u128`) into prefixes.
fn range_prefixes(lo: u128, hi: u128, width: u32, out: &mut Vec<(u128, u8)>) {
    // Work on the `width`-bit numbers, then shift back to the top.
    let shift = 128 - width;
    let (mut lo, hi) = (lo >> shift, hi >> shift);
    loop {
        if lo > hi {
            return;
        }
        // The largest aligned block starting at `lo` that stays within `hi`.
        let mut size = if lo == 0 { width } else { lo.trailing_zeros().min(width) };
        let last =
            |size: u32| lo.checked_add(if size >= 128 { u128::MAX } else { (1u128 << size) - 1 });
        while size > 0 && last(size).is_none_or(|l| l > hi) {
            size -= 1;
        }
        out.push((lo << shift, (width - size) as u8));
        let Some(next) = last(size).and_then(|l| l.checked_add(1)) else { return };
        if width < 128 && next >> width != 0 {
            return;
        }
        lo = next;
    }
}

/// The test `m` as a [`Spec`] over family `v4` (IPv4 keys have their low 96 bits zero).
fn spec_of(m: &AddrMatch, v4: bool) -> Result<Spec, &'static str> {
    let width = if v4 { 32 } else { 128 };
    Ok(match m {
        AddrMatch::Any => Spec::Any,
        AddrMatch::Prefix32 { addr, mask: msk } => {
            Spec::Prefixes(vec![(u128::from(*addr) << 96, msk.leading_ones() as u8)])
        }
        AddrMatch::Prefix { addr, len } => {
            if v4 {
                // An IPv4 key matches when the rest of the network below 32 bits is zero.
                if addr & !mask(32) == 0 {
                    Spec::Prefixes(vec![(*addr, 32)])
                } else {
                    Spec::Prefixes(Vec::new())
                }
            } else {
                Spec::Prefixes(vec![(*addr, *len)])
            }
        }
        AddrMatch::Range(r) => {
            let mut out = Vec::new();
            let (lo, hi) = (r.0, r.1);
            if v4 {
                // IPv4 keys x << 96 inside [lo, hi].
                let first = (lo >> 96) + u128::from(lo & !mask(32) != 0);
                let last = hi >> 96;
                if first <= last && first <= u128::from(u32::MAX) {
                    range_prefixes(
                        first << 96,
                        last.min(u128::from(u32::MAX)) << 96,
                        width,
                        &mut out,
                    );
                }
            } else {
                range_prefixes(lo, hi, width, &mut out);
            }
            Spec::Prefixes(out)
        }
        AddrMatch::Table(t) => Spec::Table(*t),
        AddrMatch::Mask(_) => return Err("a netmask that is not a prefix"),
        AddrMatch::NoRoute => return Err("`no-route`"),
        AddrMatch::UrpfFailed => return Err("`urpf-failed`"),
        AddrMatch::RtLabel(_) => return Err("`route` labels"),
    })
}

fn contains(net: (u128, u8), p: (u128, u8)) -> bool {
    net.1 <= p.1 && p.0 & mask(net.1) == net.0
}

/// A table's entries of one family, by (key, length) → negated.
type TableEntries = HashMap<(u128, u8), bool>;

/// Whether a table's answer for addresses whose longest entry (among all) is `p` is a match.
fn table_member(entries: &TableEntries, p: (u128, u8)) -> bool {
    (0..=p.1).rev().find_map(|len| entries.get(&(p.0 & mask(len), len))).is_some_and(|neg| !neg)
}

impl Firewall {
    /// The classification tables of the main rule set for interface `ifname` (see the module
    /// documentation), or the first rule that cannot be classified.
    pub fn classify(&self, ifname: &str) -> Result<Tables, ClassifyError> {
        let set = &self.sets[0];
        let rules = &set.rules;
        if rules.len() > MAX_RULES {
            return Err(ClassifyError::TooManyRules(rules.len()));
        }
        for (i, r) in rules.iter().enumerate() {
            let refuse = |what| ClassifyError::Rule { nr: i as u32, what };
            let what = if r.call.is_some() {
                Some("an anchor")
            } else if r.action == ast::Action::Match {
                Some("a `match` rule")
            } else if r.tag != 0 || r.match_tag.is_some() {
                Some("tags")
            } else if r.rcv.is_some() {
                Some("`received-on`")
            } else if r.prob != 0 {
                Some("`probability`")
            } else if r.once {
                Some("`once`")
            } else if r.pktrate.is_some() {
                Some("`max-pkt-rate`")
            } else if r.uid.op != ast::Op::None || r.gid.op != ast::Op::None {
                Some("user and group tests")
            } else if r.rdomain.is_some() {
                Some("routing domains")
            } else if r.prio != 0 {
                Some("`prio`")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(refuse(what));
            }
            for (m, v4) in [(&r.src, true), (&r.src, false), (&r.dst, true), (&r.dst, false)] {
                spec_of(m, v4).map_err(refuse)?;
            }
        }
        let nwords = rules.len().div_ceil(64).max(1);
        let mut cl = Classes { nwords, bits: Vec::new(), ids: HashMap::new() };
        let all = cl.of(rules, |_| true);
        debug_assert_eq!(all, 0);
        let quick = cl.of(rules, |r| r.quick);
        let if_fails = |r: &Rule| match r.ifname {
            None => false,
            Some(i) => {
                let name = &self.env.names.ifnames[i as usize];
                (name == ifname || self.env.in_group(ifname, name)) == r.ifnot
            }
        };
        let dir_in = cl.of(rules, |r| !if_fails(r) && r.dirs & 1 != 0);
        let dir_out = cl.of(rules, |r| !if_fails(r) && r.dirs & 2 != 0);
        let mut proto = Vec::with_capacity(512);
        for af in 0..2u8 {
            for p in 0..=255u8 {
                proto.push(
                    cl.of(rules, |r| r.afs & (1 << af) != 0 && (r.proto == 0 || r.proto == p)),
                );
            }
        }
        let no_transport_tests = |r: &Rule| {
            r.sport.op == ast::Op::None
                && r.dport.op == ast::Op::None
                && r.icmp_type == 0
                && r.icmp_code == 0
        };
        let frag = [
            cl.of(rules, |r| !r.fragment),
            cl.of(rules, |r| no_transport_tests(r) && r.flagset == 0),
            cl.of(rules, no_transport_tests),
        ];
        let ports = |cl: &mut Classes, pick: fn(&Rule) -> PortMatch| -> Vec<u32> {
            let mut out = port_classes(cl, rules, pick);
            out.push(all);
            out
        };
        let sport = ports(&mut cl, |r| r.sport);
        let dport = ports(&mut cl, |r| r.dport);
        let mut tcpflags: Vec<u32> = (0..=255u8)
            .map(|f| {
                cl.of(rules, |r| {
                    (r.flagset & f) == r.flags && r.os.as_deref().is_none_or(|os| os == "unknown")
                })
            })
            .collect();
        tcpflags.push(all);
        let mut icmp = Vec::with_capacity(NOT_ICMP + 1);
        // Types and codes no rule names behave alike (for the same kind of message).
        let mut named_type = [false; 256];
        let mut named_code = [false; 256];
        for r in rules {
            if r.icmp_type != 0 {
                named_type[usize::from(r.icmp_type - 1)] = true;
            }
            if r.icmp_code != 0 {
                named_code[usize::from(r.icmp_code - 1)] = true;
            }
        }
        let mut memo: HashMap<(bool, bool, u16, u16), u32> = HashMap::new();
        for af in [Family::Inet, Family::Inet6] {
            for ty in 0..=255u8 {
                let (icmp_in, icmp_error) = icmp_kind(af, ty);
                let na = af == Family::Inet6 && ty == 136;
                for code in 0..=255u8 {
                    let key = (
                        icmp_in || icmp_error,
                        na,
                        if named_type[usize::from(ty)] { u16::from(ty) } else { 256 },
                        if named_code[usize::from(code)] { u16::from(code) } else { 256 },
                    );
                    let id = *memo.entry(key).or_insert_with(|| {
                        cl.of(rules, |r| {
                            if r.icmp_type != 0 && r.icmp_type != ty.wrapping_add(1) {
                                return false;
                            }
                            if r.icmp_code != 0 && r.icmp_code != code.wrapping_add(1) {
                                return false;
                            }
                            // Rules that keep state do not match replies (pf's check).
                            !(r.keep_state != 0 && !icmp_error && !r.sloppy && !icmp_in && !na)
                        })
                    });
                    icmp.push(id);
                }
            }
        }
        icmp.push(all);
        let tos = (0..=255u8).map(|t| cl.of(rules, |r| r.tos == 0 || r.tos == t)).collect();
        let mut tries = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        for (k, (src, v4)) in
            [(true, true), (false, true), (true, false), (false, false)].into_iter().enumerate()
        {
            tries[k] = self.address_classes(&mut cl, rules, src, v4);
        }
        let [src4, dst4, src6, dst6] = tries;
        let to4 = |v: Vec<((u128, u8), u32)>| -> Vec<Prefix4> {
            v.into_iter()
                .map(|((key, len), class)| Prefix4 {
                    len,
                    addr: ((key >> 96) as u32).to_be_bytes(),
                    class,
                })
                .collect()
        };
        let to6 = |v: Vec<((u128, u8), u32)>| -> Vec<Prefix6> {
            v.into_iter()
                .map(|((key, len), class)| Prefix6 { len, addr: key.to_be_bytes(), class })
                .collect()
        };
        let metas = rules
            .iter()
            .enumerate()
            .map(|(i, r)| RuleMeta {
                nr: i as u32,
                block: r.action == ast::Action::Block,
                quick: r.quick,
                keep_state: r.keep_state != 0,
                sloppy: r.sloppy,
                log: set.source.get(i).is_some_and(|s| s.log & 1 != 0),
                log_all: set.source.get(i).is_some_and(|s| s.log & 2 != 0),
                id: RuleId { ruleset: 0, nr: i as u32 },
            })
            .collect();
        Ok(Tables {
            nwords: nwords as u32,
            bits: cl.bits,
            quick,
            dir_in,
            dir_out,
            proto,
            frag,
            src4: to4(src4),
            dst4: to4(dst4),
            src6: to6(src6),
            dst6: to6(dst6),
            sport,
            dport,
            tcpflags,
            icmp,
            tos,
            rules: metas,
        })
    }

    /// The LPM entries of one side and family: every prefix a rule names (or one of its
    /// tables holds), and `0/0`, each with the class of the rules whose test passes for
    /// addresses whose longest entry it is.
    fn address_classes(
        &self,
        cl: &mut Classes,
        rules: &[Rule],
        src: bool,
        v4: bool,
    ) -> Vec<((u128, u8), u32)> {
        let width: u8 = if v4 { 32 } else { 128 };
        // Distinct (spec, negated) → the rules with it.
        let mut specs: HashMap<(Spec, bool), Vec<usize>> = HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            let (m, neg) = if src { (&r.src, r.src_neg) } else { (&r.dst, r.dst_neg) };
            let spec = spec_of(m, v4).expect("refused before");
            specs.entry((spec, neg)).or_default().push(i);
        }
        let mut tables: HashMap<usize, TableEntries> = HashMap::new();
        let mut entries: Vec<(u128, u8)> = vec![(0, 0)];
        for (spec, _) in specs.keys() {
            match spec {
                Spec::Any => {}
                Spec::Prefixes(ps) => entries.extend(ps.iter().copied()),
                Spec::Table(t) => {
                    let e = tables.entry(*t).or_insert_with(|| {
                        self.tables[*t]
                            .entries()
                            .into_iter()
                            .filter(|p| p.addr.is_ipv4() == v4)
                            .map(|p| {
                                let key = crate::table::key_of(p.addr) & mask(p.len);
                                ((key, p.len), p.negated)
                            })
                            .collect()
                    });
                    entries.extend(e.keys().copied());
                }
            }
        }
        entries.retain(|e| e.1 <= width);
        entries.sort_unstable();
        entries.dedup();
        let specs: Vec<((Spec, bool), Vec<usize>)> = specs.into_iter().collect();
        let prefix_sets: Vec<Option<std::collections::HashSet<(u128, u8)>>> = specs
            .iter()
            .map(|((s, _), _)| match s {
                Spec::Prefixes(ps) if ps.len() > 8 => Some(ps.iter().copied().collect()),
                _ => None,
            })
            .collect();
        entries
            .into_iter()
            .map(|p| {
                let mut v = vec![0u64; cl.nwords];
                for (k, ((spec, neg), members)) in specs.iter().enumerate() {
                    let hit = match spec {
                        Spec::Any => true,
                        Spec::Prefixes(ps) => match &prefix_sets[k] {
                            Some(set) => (0..=p.1).any(|len| set.contains(&(p.0 & mask(len), len))),
                            None => ps.iter().any(|q| contains(*q, p)),
                        },
                        Spec::Table(t) => table_member(&tables[t], p),
                    };
                    if hit != *neg {
                        for &i in members {
                            v[i / 64] |= 1 << (i % 64);
                        }
                    }
                }
                (p, cl.id(v))
            })
            .collect()
    }
}

/// The classes of every port value (0..65536) under the rules' tests `pick`: the values cut
/// into intervals at every bound a test names, one class per interval.
fn port_classes(cl: &mut Classes, rules: &[Rule], pick: fn(&Rule) -> PortMatch) -> Vec<u32> {
    let mut cuts: Vec<u32> = vec![0, 65536];
    for r in rules {
        let m = pick(r);
        if m.op != ast::Op::None {
            for b in [m.a, m.a + 1, m.b, m.b + 1] {
                if b <= 65536 {
                    cuts.push(b);
                }
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = vec![0u32; 65536];
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let id = cl.of(rules, |r| pick(r).matches(lo));
        out[lo as usize..hi as usize].fill(id);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_into_prefixes() {
        let mut out = Vec::new();
        let k = |a: u32| u128::from(a) << 96;
        range_prefixes(k(1), k(6), 32, &mut out);
        let got: Vec<(u32, u8)> = out.iter().map(|(a, l)| ((a >> 96) as u32, *l)).collect();
        assert_eq!(got, vec![(1, 32), (2, 31), (4, 31), (6, 32)]);
        out.clear();
        range_prefixes(0, u128::MAX, 128, &mut out);
        assert_eq!(out, vec![(0, 0)]);
        out.clear();
        range_prefixes(k(0), k(u32::MAX), 32, &mut out);
        assert_eq!(out, vec![(0, 0)]);
    }

    #[test]
    fn table_answers_by_longest_entry() {
        let e: TableEntries = [((10 << 120, 8), false), ((10 << 120 | 1 << 96, 32), true)].into();
        assert!(table_member(&e, (10 << 120 | 2 << 96, 32)));
        assert!(!table_member(&e, (10 << 120 | 1 << 96, 32)));
        assert!(!table_member(&e, (11 << 120, 8)));
    }
}
