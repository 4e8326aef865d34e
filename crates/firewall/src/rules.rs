//! The loaded rule sets: sift-pf's expanded rules turned into what the evaluator tests, every
//! anchor call resolved to its rule set as pf's `pf_anchor_setup` does, and the skip steps
//! computed once per rule set as pf's `pf_calc_skip_steps`.
//!
//! Why its own module: the evaluator must not look up names or compare strings per packet.
//! Here interface names, tables and tags become indices, addresses become 128-bit keys and
//! masks, and each rule gets for each of pf's nine skip fields the index of the next rule of
//! its rule set that differs in that field — the rules in between would fail the same test.

use std::collections::{BTreeMap, HashMap};

use sift_pf::addr::{AddrKind, Af};
use sift_pf::ast::{self, Dir, Op};

/// pf's skip fields, in `PF_SKIP_*` order (`pfvar.h`): the order the evaluator tests them.
pub mod skip {
    /// The interface (`on`, with `!`).
    pub const IFP: usize = 0;
    /// The direction.
    pub const DIR: usize = 1;
    /// The routing domain (`on rdomain`, with `!`).
    pub const RDOM: usize = 2;
    /// The address family.
    pub const AF: usize = 3;
    /// The protocol.
    pub const PROTO: usize = 4;
    /// The source address (with `!`).
    pub const SRC_ADDR: usize = 5;
    /// The destination address (with `!`).
    pub const DST_ADDR: usize = 6;
    /// The source port.
    pub const SRC_PORT: usize = 7;
    /// The destination port.
    pub const DST_PORT: usize = 8;
    /// How many.
    pub const COUNT: usize = 9;
}

/// An address test (pf's `pf_addr_wrap` as `PF_MISMATCHAW` reads it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AddrMatch {
    /// `any` (a zero mask), or an unused address: never a mismatch.
    Any,
    /// A network of at most 32 bits of prefix: the key's top 32 bits masked (an IPv4 network,
    /// or a short IPv6 one).
    Prefix32 { addr: u32, mask: u32 },
    /// A network: the address (masked) and its prefix length (33..=128).
    Prefix { addr: u128, len: u8 },
    /// Address and a mask that is not a prefix (boxed: rare, and a rule's hot fields stay
    /// small).
    Mask(Box<(u128, u128)>),
    /// `a - b`, inclusive (boxed, as `Mask`).
    Range(Box<(u128, u128)>),
    /// A table (index into the firewall's tables), also for dynamic interface addresses.
    Table(usize),
    /// `no-route`
    NoRoute,
    /// `urpf-failed`
    UrpfFailed,
    /// `route "label"`
    RtLabel(String),
}

/// A port or id comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortMatch {
    pub op: Op,
    pub a: u32,
    pub b: u32,
}

impl PortMatch {
    /// pf's `pf_match` (ports and ids alike).
    #[inline]
    pub fn matches(&self, p: u32) -> bool {
        let (a, b) = (self.a, self.b);
        match self.op {
            Op::None => true,
            Op::Irg => p > a && p < b,
            Op::Xrg => p < a || p > b,
            Op::Rrg => p >= a && p <= b,
            Op::Eq => p == a,
            Op::Ne => p != a,
            Op::Lt => p < a,
            Op::Le => p <= a,
            Op::Gt => p > a,
            Op::Ge => p >= a,
        }
    }
}

/// pf's packet-rate threshold (`pf_threshold`): counts in thousandths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Threshold {
    pub limit: u64,
    pub seconds: u64,
    pub count: u64,
    pub last: u64,
}

const THRESHOLD_MULT: u64 = 1000;

impl Threshold {
    pub fn new(limit: u32, seconds: u32) -> Threshold {
        Threshold {
            limit: u64::from(limit) * THRESHOLD_MULT,
            seconds: u64::from(seconds),
            count: 0,
            last: 0,
        }
    }

    /// `pf_add_threshold` then `pf_check_threshold`: whether the rate is exceeded.
    pub fn add_and_check(&mut self, now: u64) -> bool {
        let diff = now.saturating_sub(self.last);
        if diff >= self.seconds {
            self.count = 0;
        } else {
            self.count -= self.count * diff / self.seconds.max(1);
        }
        self.count += THRESHOLD_MULT;
        self.last = now;
        self.count > self.limit
    }
}

/// An anchor call of a rule, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    /// The rule set called (for a wildcard, the parent of the rule sets called).
    pub target: usize,
    /// `anchor "name/*"`: every child of `target`, in name order.
    pub wildcard: bool,
}

/// One rule as the evaluator tests it (the skip-step evaluator reads its [`Head`] first and
/// the rule only when the head's tests pass or cannot decide).
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub src: AddrMatch,
    pub dst: AddrMatch,
    /// Index into the firewall's interface names, or `None` for any.
    pub ifname: Option<u32>,
    pub rdomain: Option<i32>,
    /// `dir` and `af` as the evaluator tests them: bit 0 in / IPv4 allowed, bit 1 out / IPv6.
    pub dirs: u8,
    pub afs: u8,
    pub ifnot: bool,
    pub proto: u8,
    pub src_neg: bool,
    pub dst_neg: bool,
    pub flags: u8,
    pub flagset: u8,
    pub sport: PortMatch,
    pub dport: PortMatch,
    pub action: ast::Action,
    pub quick: bool,
    pub uid: PortMatch,
    pub gid: PortMatch,
    /// Type + 1 and code + 1, 0 for none.
    pub icmp_type: u8,
    pub icmp_code: u8,
    pub tos: u8,
    /// 0 (none) or 1..=255 (`prio 0` is 255).
    pub prio: u8,
    pub prob: u32,
    /// `os`: sift does no fingerprinting, so every packet is of OS `unknown`.
    pub os: Option<String>,
    pub fragment: bool,
    pub keep_state: u8,
    pub sloppy: bool,
    pub once: bool,
    /// Tag id set (0 none).
    pub tag: u16,
    /// `tagged`: (tag id, `!`).
    pub match_tag: Option<(u16, bool)>,
    /// `received-on`: (interface index, `!`).
    pub rcv: Option<(usize, bool)>,
    pub pktrate: Option<Threshold>,
    pub call: Option<Call>,
    /// How often the rule matched (pf's `packets`; `evaluations` are in [`RuleSet`]).
    pub matches: u64,
}

/// The part of a rule every visit of the skip-step evaluator reads, in one cache line: its
/// skip steps and compact forms of its skip-field tests. Evaluation jumps from rule to rule,
/// and the heads a rule set's evaluations visit stay in the first-level cache where whole rules
/// (five lines each) did not; a test the head cannot hold is marked, and read from the
/// [`Rule`].
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Head {
    pub skip: [u32; skip::COUNT],
    /// Address tests: ([`head::PREFIX32`]) address and mask of the key's top 32 bits,
    /// ([`head::TABLE`]) the table index.
    pub src: [u32; 2],
    pub dst: [u32; 2],
    /// [`head::ANY`], [`head::PREFIX32`], [`head::TABLE`] or [`head::SLOW`], with
    /// [`head::NEG`] for `!`.
    pub src_kind: u8,
    pub dst_kind: u8,
    /// The interface name's index when below 64, else [`head::IF_NONE`] or [`head::IF_SLOW`].
    pub ifbit: u8,
    /// As [`Rule::dirs`], [`Rule::afs`], [`Rule::proto`].
    pub dirs: u8,
    pub afs: u8,
    pub proto: u8,
    /// [`head::EXPIRED`], [`head::IFNOT`], [`head::RDOMAIN`].
    pub flags: u8,
}

/// The codes of a [`Head`].
pub(crate) mod head {
    /// Address test kinds.
    pub const ANY: u8 = 0;
    pub const PREFIX32: u8 = 1;
    pub const TABLE: u8 = 2;
    /// Any other test: the rule's [`super::AddrMatch`].
    pub const SLOW: u8 = 3;
    /// The test is negated.
    pub const NEG: u8 = 0x80;
    /// No interface test; an interface index of 64 or more (tested through the rule).
    pub const IF_NONE: u8 = 0xff;
    pub const IF_SLOW: u8 = 0xfe;
    /// A `once` rule that matched.
    pub const EXPIRED: u8 = 1;
    /// `on ! if` and `on ! rdomain`.
    pub const IFNOT: u8 = 2;
    /// The rule tests the rdomain.
    pub const RDOMAIN: u8 = 4;
}

impl Head {
    /// The head of `r` with skip steps `skip`.
    pub fn new(r: &Rule, skip: [u32; skip::COUNT]) -> Head {
        let addr = |m: &AddrMatch, neg: bool| {
            let (kind, v) = match m {
                AddrMatch::Any => (head::ANY, [0, 0]),
                AddrMatch::Prefix32 { addr, mask } => (head::PREFIX32, [*addr, *mask]),
                AddrMatch::Table(t) if *t <= u32::MAX as usize => (head::TABLE, [*t as u32, 0]),
                _ => (head::SLOW, [0, 0]),
            };
            (if neg { kind | head::NEG } else { kind }, v)
        };
        let (src_kind, src) = addr(&r.src, r.src_neg);
        let (dst_kind, dst) = addr(&r.dst, r.dst_neg);
        let ifbit = match r.ifname {
            None => head::IF_NONE,
            Some(i) if i < 64 => i as u8,
            Some(_) => head::IF_SLOW,
        };
        let flags = if r.ifnot { head::IFNOT } else { 0 }
            | if r.rdomain.is_some() { head::RDOMAIN } else { 0 };
        Head {
            skip,
            src,
            dst,
            src_kind,
            dst_kind,
            ifbit,
            dirs: r.dirs,
            afs: r.afs,
            proto: r.proto,
            flags,
        }
    }
}

/// The rules of one anchor (or of the main rule set, path `""`).
#[derive(Clone, Debug, Default)]
pub(crate) struct RuleSet {
    pub path: String,
    pub rules: Vec<Rule>,
    /// Each rule's [`Head`] and pf's `evaluations` counter (apart: both are touched by every
    /// visit, the rest of a rule only by rules that get past the skip fields).
    pub heads: Vec<Head>,
    pub evaluations: Vec<u64>,
    /// The expanded rules as sift-pf gave them (numbered as `pfctl -vv` prints `@N`).
    pub source: Vec<ast::Rule>,
    /// Each rule's translation pools (`nat-to`, `rdr-to`), compiled.
    pub pools: Vec<[Option<crate::nat::Pool>; 2]>,
    /// Children by name (pf's anchor tree; wildcards walk it in name order).
    pub children: BTreeMap<String, usize>,
}

/// Name tables shared by all rule sets: interfaces, tables, tags.
#[derive(Clone, Debug, Default)]
pub(crate) struct Names {
    pub ifnames: Vec<String>,
    pub if_index: HashMap<String, usize>,
    pub tags: Vec<String>,
    pub tag_index: HashMap<String, u16>,
}

impl Names {
    pub fn ifname(&mut self, name: &str) -> usize {
        if let Some(&i) = self.if_index.get(name) {
            return i;
        }
        self.ifnames.push(name.to_string());
        self.if_index.insert(name.to_string(), self.ifnames.len() - 1);
        self.ifnames.len() - 1
    }

    /// A tag's id (1-based; pf allows 50,000, sift as many as fit in `u16`).
    pub fn tag(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.tag_index.get(name) {
            return i;
        }
        self.tags.push(name.to_string());
        let id = u16::try_from(self.tags.len()).unwrap_or(u16::MAX);
        self.tag_index.insert(name.to_string(), id);
        id
    }
}

/// `pf_anchor_setup`: the path of the rule set an anchor call from the rule set at `from`
/// names, and whether it is a wildcard; `None` for `..` beyond the root.
pub fn resolve_anchor(from: &str, name: &str) -> Option<(String, bool)> {
    let mut path;
    if let Some(abs) = name.strip_prefix('/') {
        path = abs.to_string();
    } else {
        path = from.to_string();
        let mut rest = name;
        while let Some(r) = rest.strip_prefix("../") {
            if path.is_empty() {
                return None;
            }
            match path.rfind('/') {
                Some(i) => path.truncate(i),
                None => path.clear(),
            }
            rest = r;
        }
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(rest);
    }
    let wildcard = path.ends_with("/*");
    if wildcard {
        path.truncate(path.len() - 2);
    }
    Some((path, wildcard))
}

/// pf's `pf_calc_skip_steps` over `rules`: for each rule and field, the index of the next
/// rule differing in that field (`rules.len()` when none does).
pub fn skip_steps(rules: &[ast::Rule]) -> Vec<[u32; skip::COUNT]> {
    let n = rules.len();
    let mut out = vec![[n as u32; skip::COUNT]; n];
    let same = |f: usize, a: &ast::Rule, b: &ast::Rule| -> bool {
        match f {
            skip::IFP => a.ifname == b.ifname && a.ifnot == b.ifnot,
            skip::DIR => a.direction == b.direction,
            skip::RDOM => a.onrdomain == b.onrdomain && a.ifnot == b.ifnot,
            skip::AF => a.af == b.af,
            skip::PROTO => a.proto == b.proto,
            skip::SRC_ADDR => a.src.neg == b.src.neg && a.src.addr == b.src.addr,
            skip::DST_ADDR => a.dst.neg == b.dst.neg && a.dst.addr == b.dst.addr,
            skip::SRC_PORT => a.src.port == b.src.port,
            _ => a.dst.port == b.dst.port,
        }
    };
    for (f, _) in [0; skip::COUNT].iter().enumerate() {
        // `head` is the first rule of the current run of rules equal in field `f`.
        let mut head = 0;
        for cur in 1..=n {
            if cur == n || !same(f, &rules[cur], &rules[cur - 1]) {
                for r in out.iter_mut().take(cur).skip(head) {
                    r[f] = cur as u32;
                }
                head = cur;
            }
        }
    }
    out
}

/// The key of 16 address bytes.
pub fn key(b: &[u8; 16]) -> u128 {
    u128::from_be_bytes(*b)
}

/// The address test of an expanded address; `table` gives the index of a named table or of a
/// dynamic address's table.
pub(crate) fn addr_match(a: &AddrKind, table: &mut dyn FnMut(&AddrKind) -> usize) -> AddrMatch {
    match a {
        AddrKind::Mask { addr, mask } => {
            let m = key(mask);
            let len = m.leading_ones() as u8;
            if m == 0 {
                AddrMatch::Any
            } else if crate::table::mask(len) == m && len <= 32 {
                AddrMatch::Prefix32 { addr: ((key(addr) & m) >> 96) as u32, mask: (m >> 96) as u32 }
            } else if crate::table::mask(len) == m {
                AddrMatch::Prefix { addr: key(addr) & m, len }
            } else {
                AddrMatch::Mask(Box::new((key(addr) & m, m)))
            }
        }
        AddrKind::Range { from, to } => AddrMatch::Range(Box::new((key(from), key(to)))),
        AddrKind::Dyn { .. } | AddrKind::Table(_) => AddrMatch::Table(table(a)),
        AddrKind::NoRoute => AddrMatch::NoRoute,
        AddrKind::UrpfFailed => AddrMatch::UrpfFailed,
        AddrKind::RtLabel(l) => AddrMatch::RtLabel(l.clone()),
        AddrKind::None => AddrMatch::Any,
    }
}

/// The evaluator's form of one expanded rule (its anchor call is resolved by the caller).
pub(crate) fn compile_rule(
    r: &ast::Rule,
    names: &mut Names,
    table: &mut dyn FnMut(&AddrKind) -> usize,
) -> Rule {
    let port = |p: &ast::PortItem| PortMatch { op: p.op, a: u32::from(p.a), b: u32::from(p.b) };
    let id = |p: &ast::IdItem| PortMatch { op: p.op, a: p.a, b: p.b };
    Rule {
        action: r.action,
        quick: r.quick,
        ifname: (!r.ifname.is_empty()).then(|| names.ifname(&r.ifname) as u32),
        ifnot: r.ifnot,
        dirs: match r.direction {
            Dir::InOut => 3,
            Dir::In => 1,
            Dir::Out => 2,
        },
        afs: match r.af {
            Af::Any => 3,
            Af::Inet => 1,
            Af::Inet6 => 2,
        },
        rdomain: r.onrdomain,
        proto: r.proto,
        src: addr_match(&r.src.addr, table),
        src_neg: r.src.neg,
        dst: addr_match(&r.dst.addr, table),
        dst_neg: r.dst.neg,
        sport: port(&r.src.port),
        dport: port(&r.dst.port),
        uid: id(&r.uid),
        gid: id(&r.gid),
        flags: r.flags,
        flagset: r.flagset,
        icmp_type: r.icmp_type,
        icmp_code: r.icmp_code,
        tos: r.tos,
        prio: r.prio,
        prob: r.prob,
        os: r.os.clone(),
        fragment: r.rule_flag & ast::flag::FRAGMENT != 0,
        keep_state: r.keep_state,
        sloppy: r.rule_flag & ast::flag::STATESLOPPY != 0,
        once: r.rule_flag & ast::flag::ONCE != 0,
        tag: if r.tag.is_empty() { 0 } else { names.tag(&r.tag) },
        match_tag: (!r.match_tag.is_empty()).then(|| (names.tag(&r.match_tag), r.match_tag_not)),
        rcv: r.rcv.as_ref().map(|(not, name)| (names.ifname(name), *not)),
        pktrate: (r.pktrate.0 > 0).then(|| Threshold::new(r.pktrate.0, r.pktrate.1)),
        call: None,
        matches: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_paths_as_pf_anchor_setup() {
        let r = |from: &str, name: &str| resolve_anchor(from, name);
        assert_eq!(r("", "foo"), Some(("foo".into(), false)));
        assert_eq!(r("regress/first", "../second"), Some(("regress/second".into(), false)));
        assert_eq!(r("regress/first", "/second"), Some(("second".into(), false)));
        assert_eq!(r("a", "b/*"), Some(("a/b".into(), true)));
        assert_eq!(r("", "*"), Some(("*".into(), false)));
        assert_eq!(r("a", "../../x"), None);
        assert_eq!(r("a/b", "../../x"), Some(("x".into(), false)));
    }

    #[test]
    fn ports_and_ranges() {
        let m = |op, a, b, p| PortMatch { op, a, b }.matches(p);
        assert!(m(Op::Irg, 10, 20, 11) && !m(Op::Irg, 10, 20, 10));
        assert!(m(Op::Rrg, 10, 20, 10) && m(Op::Rrg, 10, 20, 20) && !m(Op::Rrg, 10, 20, 21));
        assert!(m(Op::Xrg, 10, 20, 9) && !m(Op::Xrg, 10, 20, 10));
        assert!(m(Op::Le, 10, 0, 10) && !m(Op::Lt, 10, 0, 10));
        assert!(m(Op::Ge, 10, 0, 10) && !m(Op::Gt, 10, 0, 10));
        assert!(m(Op::Ne, 10, 0, 11) && !m(Op::Eq, 10, 0, 11));
    }

    #[test]
    fn packet_rate_threshold() {
        let mut t = Threshold::new(2, 10);
        assert!(!t.add_and_check(100));
        assert!(!t.add_and_check(100));
        assert!(t.add_and_check(100));
        assert!(!t.add_and_check(200));
    }
}
