//! Rule evaluation as pf's `pf_match_rule`: the last matching rule decides, `quick` stops,
//! `match` rules apply their actions and evaluation goes on, a tag set by a rule holds for the
//! rest of the evaluation, `once` rules expire after their first match, anchors are entered
//! through an explicit stack of at most 64 rule sets (a loop of anchors ends there and the
//! packet is blocked, as pf's stack overflow fails the test).
//!
//! Two evaluators share the rule tests ([`Eval::check`]): [`Eval::run`] moves past a rule that
//! fails a skip field to the rule its skip step names, as pf does; [`Eval::run_naive`] tries
//! every rule in turn and enters anchors by recursion. They must agree on every packet; the
//! differential test holds them to it.

use sift_pf::ast;
use sift_wire::ipproto;

use crate::packet::{Family, Meta, Packet};
use crate::rules::{AddrMatch, Head, Rule, RuleSet, head, skip};
use crate::table::Table;
use crate::{Env, RuleId};

/// pf's anchor stack: 64 frames, the first holding the main rule set, so 63 anchors deep.
pub const ANCHOR_STACK_MAX: usize = 64;

/// Why a rule does not match: move by the skip step of a field, or to the next rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Miss {
    Skip(usize),
    Next,
}

/// How an evaluation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The rule sets were exhausted.
    Done,
    /// A `quick` rule (or a `quick` anchor holding the match) stopped it.
    Quick,
    /// Anchors nested deeper than pf's stack (a loop of anchors).
    Overflow,
}

/// What an evaluation found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Found {
    /// The last matching pass/block rule.
    pub rule: Option<RuleId>,
    /// The anchor rule whose rule set holds `rule`.
    pub anchor: Option<RuleId>,
    /// The `match` rules that matched, in order.
    pub matches: Vec<RuleId>,
    /// The tag at the end (-1: never set, so the packet's own).
    pub tag: i32,
}

/// One evaluation's state (pf's `pf_test_ctx`): the rule sets, and beside them everything
/// else a rule's tests read or change (two fields, so a rule can be borrowed from the one while
/// the other is tested against it).
pub(crate) struct Eval<'a> {
    pub sets: &'a mut [RuleSet],
    pub cx: Cx<'a>,
}

/// What a rule's tests read and change: the packet, tables, the generator, the findings.
pub(crate) struct Cx<'a> {
    pub tables: &'a mut [Table],
    pub env: &'a Env,
    pub rng: &'a mut u64,
    pub pkt: &'a Packet<'a>,
    pub meta: &'a Meta<'a>,
    /// Interface indices of the packet's interface and receiving interface (`usize::MAX`:
    /// not a name any rule uses).
    pub ifidx: usize,
    pub rcvidx: Option<usize>,
    /// Bit `i`: whether the packet's interface matches interface name `i` (the first 64
    /// names; [`Cx::if_match`] answers for the rest).
    pub if_mask: u64,
    /// The packet's direction and family as [`Rule::dirs`] and [`Rule::afs`] test them.
    pub dir_bit: u8,
    pub af_bit: u8,
    /// The packet's own tag id (0 none).
    pub pkt_tag: u16,
    /// ICMP: a query (pf's `icmp_dir == PF_IN`) and an error (`state_icmp`).
    pub icmp_in: bool,
    pub icmp_error: bool,
    pub found: Found,
    /// The last table lookups of this evaluation (table, address, answer): a rule set tests
    /// the same address against the same table rule after rule, and a table cannot change
    /// within one evaluation. Each lookup is still counted on the table, as pf counts it.
    pub memo: TableMemo,
}

/// A few remembered table lookups (see [`Eval::memo`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TableMemo {
    entries: [(usize, u128, bool); 4],
    used: usize,
    /// The lookup asked last (table, address) and its answer, tested first.
    last: Option<(usize, u128)>,
    last_hit: bool,
}

impl TableMemo {
    fn get(&mut self, table: usize, key: u128) -> Option<bool> {
        let hit = self.entries[..self.used.min(4)]
            .iter()
            .find(|e| e.0 == table && e.1 == key)
            .map(|e| e.2)?;
        (self.last, self.last_hit) = (Some((table, key)), hit);
        Some(hit)
    }

    fn put(&mut self, table: usize, key: u128, hit: bool) {
        self.entries[self.used % 4] = (table, key, hit);
        self.used += 1;
        (self.last, self.last_hit) = (Some((table, key)), hit);
    }
}

/// pf's `pf_icmp_mapping` reduced to what rules test: (query or unknown — `PF_IN`, error).
pub fn icmp_kind(af: Family, ty: u8) -> (bool, bool) {
    match af {
        Family::Inet => match ty {
            // Replies answer queries in the other direction.
            0 | 14 | 16 | 18 | 38 | 36 | 9 => (false, false),
            3 | 4 | 5 | 11 | 12 => (true, true),
            _ => (true, false),
        },
        Family::Inet6 => match ty {
            129 | 131 | 140 | 200 | 136 => (false, false),
            1..=4 => (true, true),
            _ => (true, false),
        },
    }
}

/// The next number of a seeded splitmix64 generator.
pub(crate) fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Cx<'_> {
    /// Whether the address test `m` (negated when `neg`) fails for `a` (pf's `PF_MISMATCHAW`);
    /// `src` says whether `a` is the source (`urpf-failed` tests only sources).
    #[inline]
    fn addr_mismatch(&mut self, m: &AddrMatch, neg: bool, a: u128, src: bool) -> bool {
        let miss = match m {
            AddrMatch::Any => false,
            AddrMatch::Prefix32 { addr, mask } => ((a >> 96) as u32 & mask) != *addr,
            AddrMatch::Prefix { addr, len } => (a & crate::table::mask(*len)) != *addr,
            AddrMatch::Table(t) => !self.table_hit(*t, a),
            _ => self.addr_mismatch_slow(m, a, src),
        };
        miss != neg
    }

    /// Whether `a` matches table `t` (remembered within the evaluation; every lookup counted).
    #[inline]
    fn table_hit(&mut self, t: usize, a: u128) -> bool {
        if self.memo.last == Some((t, a)) {
            let hit = self.memo.last_hit;
            self.tables[t].count(hit);
            return hit;
        }
        self.table_hit_slow(t, a)
    }

    #[inline(never)]
    fn table_hit_slow(&mut self, t: usize, a: u128) -> bool {
        if let Some(hit) = self.memo.get(t, a) {
            self.tables[t].count(hit);
            return hit;
        }
        let hit = self.tables[t].match_key(a, self.pkt.af == Family::Inet);
        self.memo.put(t, a, hit);
        hit
    }

    /// The address test of a [`Head`] (`kind`, `v`), the rule's own `m` for what the head does
    /// not hold; as [`Cx::addr_mismatch`].
    #[inline(always)]
    fn head_mismatch(&mut self, kind: u8, v: [u32; 2], m: &AddrMatch, a: u128, src: bool) -> bool {
        let neg = kind & head::NEG != 0;
        let miss = match kind & !head::NEG {
            head::ANY => false,
            head::PREFIX32 => ((a >> 96) as u32 & v[1]) != v[0],
            head::TABLE => !self.table_hit(v[0] as usize, a),
            _ => return self.addr_mismatch(m, neg, a, src),
        };
        miss != neg
    }

    /// [`Cx::check_rule`] by the rule's [`Head`] (the skip-step evaluator's form; the naive
    /// evaluator's `check_rule` is the reference it is tested against).
    #[inline(always)]
    pub(crate) fn check_head(&mut self, h: &Head, r: &mut Rule) -> Result<(), Miss> {
        let pkt = self.pkt;
        let meta = self.meta;
        let ifnot = h.flags & head::IFNOT != 0;
        let if_fails = match h.ifbit {
            head::IF_NONE => false,
            head::IF_SLOW => r.ifname.is_some_and(|i| {
                self.if_match(i as usize, Some(self.ifidx), Some(meta.ifname)) == ifnot
            }),
            i => (self.if_mask >> i & 1 != 0) == ifnot,
        };
        let dir_fails = h.dirs & self.dir_bit == 0;
        let rdom_fails =
            h.flags & head::RDOMAIN != 0 && r.rdomain.is_some_and(|d| (d == meta.rdomain) == ifnot);
        let af_fails = h.afs & self.af_bit == 0;
        let proto_fails = h.proto != 0 && h.proto != pkt.proto;
        cheap_fields([if_fails, dir_fails, rdom_fails, af_fails, proto_fails])?;
        if self.head_mismatch(h.src_kind, h.src, &r.src, pkt.src, true) {
            return Err(Miss::Skip(skip::SRC_ADDR));
        }
        if self.head_mismatch(h.dst_kind, h.dst, &r.dst, pkt.dst, false) {
            return Err(Miss::Skip(skip::DST_ADDR));
        }
        self.check_rest(r)
    }

    /// [`Eval::addr_mismatch`] for the address tests that look something up (not negated).
    #[inline(never)]
    fn addr_mismatch_slow(&mut self, m: &AddrMatch, a: u128, src: bool) -> bool {
        let v4 = self.pkt.af == Family::Inet;
        match m {
            AddrMatch::Any => false,
            AddrMatch::Prefix32 { addr, mask } => ((a >> 96) as u32 & mask) != *addr,
            AddrMatch::Prefix { addr, len } => (a & crate::table::mask(*len)) != *addr,
            AddrMatch::Mask(m) => (a & m.1) != m.0,
            AddrMatch::Range(r) => a < r.0 || a > r.1,
            AddrMatch::Table(t) => !self.table_hit(*t, a),
            AddrMatch::NoRoute => self.env.route(a, v4).is_some(),
            AddrMatch::UrpfFailed => {
                src && self.env.route(a, v4).is_some_and(|r| r.ifname == self.meta.ifname)
            }
            AddrMatch::RtLabel(l) => self.env.route(a, v4).is_none_or(|r| r.label != *l),
        }
    }

    /// pf's `pfi_kif_match`: the rule's interface is the packet's, or a group it is in.
    fn if_match(&self, rule_if: usize, pkt_if: Option<usize>, pkt_name: Option<&str>) -> bool {
        if pkt_if == Some(rule_if) {
            return true;
        }
        match pkt_name {
            Some(n) => self.env.in_group(n, &self.env.names.ifnames[rule_if]),
            None => false,
        }
    }

    /// The tests of `pf_match_rule`, in its order, for rule `r`.
    #[inline(always)]
    pub(crate) fn check_rule(&mut self, r: &mut Rule) -> Result<(), Miss> {
        let pkt = self.pkt;
        let meta = self.meta;
        let if_fails = match r.ifname {
            None => false,
            Some(i) if i < 64 => (self.if_mask >> i & 1 != 0) == r.ifnot,
            Some(i) => self.if_match(i as usize, Some(self.ifidx), Some(meta.ifname)) == r.ifnot,
        };
        let dir_fails = r.dirs & self.dir_bit == 0;
        let rdom_fails = r.rdomain.is_some_and(|d| (d == meta.rdomain) == r.ifnot);
        let af_fails = r.afs & self.af_bit == 0;
        let proto_fails = r.proto != 0 && r.proto != pkt.proto;
        cheap_fields([if_fails, dir_fails, rdom_fails, af_fails, proto_fails])?;
        if self.addr_mismatch(&r.src, r.src_neg, pkt.src, true) {
            return Err(Miss::Skip(skip::SRC_ADDR));
        }
        if self.addr_mismatch(&r.dst, r.dst_neg, pkt.dst, false) {
            return Err(Miss::Skip(skip::DST_ADDR));
        }
        self.check_rest(r)
    }

    /// The tests after the skip fields' (few rules get this far).
    #[inline(never)]
    fn check_rest(&mut self, r: &mut Rule) -> Result<(), Miss> {
        let pkt = self.pkt;
        let meta = self.meta;
        if pkt.fragment {
            if r.sport.op != ast::Op::None || r.dport.op != ast::Op::None {
                return Err(Miss::Next);
            }
            if pkt.proto == ipproto::TCP && r.flagset != 0 {
                return Err(Miss::Next);
            }
            if r.icmp_type != 0 || r.icmp_code != 0 {
                return Err(Miss::Next);
            }
            if r.uid.op != ast::Op::None || r.gid.op != ast::Op::None {
                return Err(Miss::Next);
            }
        } else {
            match pkt.proto {
                ipproto::TCP | ipproto::UDP => {
                    if pkt.proto == ipproto::TCP {
                        if (r.flagset & pkt.tcp_flags) != r.flags {
                            return Err(Miss::Next);
                        }
                        if r.os.as_deref().is_some_and(|os| os != "unknown") {
                            return Err(Miss::Next);
                        }
                    }
                    if !r.sport.matches(u32::from(pkt.sport)) {
                        return Err(Miss::Skip(skip::SRC_PORT));
                    }
                    if !r.dport.matches(u32::from(pkt.dport)) {
                        return Err(Miss::Skip(skip::DST_PORT));
                    }
                    if r.uid.op != ast::Op::None && !id_match(r.uid, meta.uid) {
                        return Err(Miss::Next);
                    }
                    if r.gid.op != ast::Op::None && !id_match(r.gid, meta.gid) {
                        return Err(Miss::Next);
                    }
                }
                ipproto::ICMP | ipproto::ICMPV6 => {
                    if r.icmp_type != 0 && r.icmp_type != pkt.icmp_type.wrapping_add(1) {
                        return Err(Miss::Next);
                    }
                    if r.icmp_code != 0 && r.icmp_code != pkt.icmp_code.wrapping_add(1) {
                        return Err(Miss::Next);
                    }
                    // Rules that keep state do not match replies (they would create states on
                    // them); neighbor advertisements are the exception in ICMPv6.
                    if r.keep_state != 0
                        && !self.icmp_error
                        && !r.sloppy
                        && !self.icmp_in
                        && (pkt.proto != ipproto::ICMPV6 || pkt.icmp_type != 136)
                    {
                        return Err(Miss::Next);
                    }
                }
                _ => {}
            }
        }
        if r.fragment && !pkt.fragment {
            return Err(Miss::Next);
        }
        if r.tos != 0 && r.tos != pkt.tos {
            return Err(Miss::Next);
        }
        if r.prob != 0 {
            let draw = (next_random(self.rng) % u64::from(u32::MAX - 1)) as u32 + 1;
            if r.prob <= draw {
                return Err(Miss::Next);
            }
        }
        if let Some((tag, not)) = r.match_tag {
            let cur = if self.found.tag == -1 {
                self.found.tag = i32::from(self.pkt_tag);
                self.pkt_tag
            } else {
                self.found.tag as u16
            };
            if (cur == tag) == not {
                return Err(Miss::Next);
            }
        }
        if let Some((rcv, not)) = r.rcv {
            let hit = match self.rcvidx {
                Some(i) => self.if_match(rcv, Some(i), meta.received_on),
                None => self.if_match(rcv, None, meta.received_on),
            };
            if hit == not {
                return Err(Miss::Next);
            }
        }
        if r.prio != 0 && (if r.prio == 0xff { 0 } else { r.prio }) != meta.prio {
            return Err(Miss::Next);
        }
        if let Some(t) = &mut r.pktrate
            && t.add_and_check(meta.now)
        {
            return Err(Miss::Next);
        }
        Ok(())
    }
}

impl Eval<'_> {
    /// [`Cx::check_rule`] for rule `ri` of rule set `rs`, counted.
    pub(crate) fn check(&mut self, rs: usize, ri: usize) -> Result<(), Miss> {
        self.sets[rs].evaluations[ri] += 1;
        self.cx.check_rule(&mut self.sets[rs].rules[ri])
    }

    /// What a matching rule does that is not a jump: its tag; for a rule without an anchor,
    /// `once`, recording it as a match rule or as the decision so far. Returns whether it
    /// stops the evaluation (`quick`).
    fn matched(&mut self, rs: usize, ri: usize, anchor: Option<RuleId>) -> bool {
        let r = &mut self.sets[rs].rules[ri];
        if r.tag != 0 {
            self.cx.found.tag = i32::from(r.tag);
        }
        if r.call.is_some() {
            return false;
        }
        if r.once {
            self.sets[rs].heads[ri].flags |= head::EXPIRED;
        }
        r.matches += 1;
        let id = RuleId { ruleset: rs, nr: ri as u32 };
        if r.action == ast::Action::Match {
            self.cx.found.matches.push(id);
        } else {
            self.cx.found.rule = Some(id);
            self.cx.found.anchor = anchor;
        }
        r.quick
    }

    /// The children of `target` a wildcard call walks, in name order.
    fn children(&self, target: usize) -> Vec<usize> {
        self.sets[target].children.values().copied().collect()
    }

    /// pf's evaluation with skip steps and its anchor stack.
    pub(crate) fn run(&mut self) -> End {
        struct Frame {
            rs: usize,
            anchor: Option<RuleId>,
            ri: usize,
            children: Vec<usize>,
            next_child: usize,
        }
        let mut stack: Vec<Frame> = Vec::new();
        let mut rs = 0usize;
        let mut ri = 0usize;
        let mut anchor: Option<RuleId> = None;
        loop {
            'rules: while let Some(found) = next_match(&mut self.sets[rs], &mut self.cx, ri) {
                ri = found;
                if self.matched(rs, ri, anchor) {
                    return End::Quick;
                }
                if let Some(call) = self.sets[rs].rules[ri].call.clone() {
                    let children =
                        if call.wildcard { self.children(call.target) } else { vec![call.target] };
                    if let Some(&first) = children.first() {
                        if stack.len() + 1 >= ANCHOR_STACK_MAX {
                            return End::Overflow;
                        }
                        stack.push(Frame { rs, anchor, ri, children, next_child: 1 });
                        anchor = Some(RuleId { ruleset: rs, nr: ri as u32 });
                        rs = first;
                        ri = 0;
                        continue 'rules;
                    }
                }
                ri += 1;
            }
            // The rule set is done: back to the anchor rule that entered it.
            let Some(mut f) = stack.pop() else { return End::Done };
            let call_rule = RuleId { ruleset: f.rs, nr: f.ri as u32 };
            if self.sets[f.rs].rules[f.ri].quick && self.cx.found.anchor == Some(call_rule) {
                return End::Quick;
            }
            if f.next_child < f.children.len() {
                // The next child of a wildcard.
                rs = f.children[f.next_child];
                f.next_child += 1;
                anchor = Some(call_rule);
                ri = 0;
                stack.push(f);
                continue;
            }
            rs = f.rs;
            ri = f.ri + 1;
            anchor = f.anchor;
        }
    }

    /// The same evaluation without skip steps: every rule tried, anchors entered by
    /// recursion. `depth` counts the rule sets entered (the main one is 1).
    pub(crate) fn run_naive(&mut self, rs: usize, anchor: Option<RuleId>, depth: usize) -> End {
        for ri in 0..self.sets[rs].rules.len() {
            if self.sets[rs].heads[ri].flags & head::EXPIRED != 0 || self.check(rs, ri).is_err() {
                continue;
            }
            if self.matched(rs, ri, anchor) {
                return End::Quick;
            }
            let Some(call) = self.sets[rs].rules[ri].call.clone() else { continue };
            let here = RuleId { ruleset: rs, nr: ri as u32 };
            let children =
                if call.wildcard { self.children(call.target) } else { vec![call.target] };
            for child in children {
                if depth + 1 > ANCHOR_STACK_MAX {
                    return End::Overflow;
                }
                match self.run_naive(child, Some(here), depth + 1) {
                    End::Done => {}
                    other => return other,
                }
                if self.sets[rs].rules[ri].quick && self.cx.found.anchor == Some(here) {
                    return End::Quick;
                }
            }
        }
        End::Done
    }
}

/// The five cheap skip fields' results (interface, direction, rdomain, family, protocol:
/// whether each fails) computed together, and the first failing one in pf's order taken: one
/// branch instead of five hard-to-predict ones.
#[inline(always)]
fn cheap_fields(fails: [bool; 5]) -> Result<(), Miss> {
    let [i, d, r, a, p] = fails.map(u32::from);
    let bits = i << skip::IFP | d << skip::DIR | r << skip::RDOM | a << skip::AF | p << skip::PROTO;
    if bits != 0 {
        return Err(Miss::Skip(bits.trailing_zeros() as usize));
    }
    Ok(())
}

/// The first rule from `ri` on that matches, moving by skip steps (the evaluator's hot loop:
/// one slice, no other borrow).
#[inline]
fn next_match(set: &mut RuleSet, cx: &mut Cx<'_>, mut ri: usize) -> Option<usize> {
    let (heads, rules, counts) = (&set.heads, &mut set.rules, &mut set.evaluations);
    while let Some(h) = heads.get(ri) {
        if h.flags & head::EXPIRED != 0 {
            ri += 1;
            continue;
        }
        let (Some(r), Some(n)) = (rules.get_mut(ri), counts.get_mut(ri)) else { break };
        *n += 1;
        match cx.check_head(h, r) {
            Err(Miss::Skip(f)) => ri = h.skip[f] as usize,
            Err(Miss::Next) => ri += 1,
            Ok(()) => return Some(ri),
        }
    }
    None
}

/// pf's `pf_match_uid`/`pf_match_gid`: an unknown id matches only `=` and `!=` tests.
fn id_match(m: crate::rules::PortMatch, id: Option<u32>) -> bool {
    let v = id.unwrap_or(u32::MAX);
    if v == u32::MAX && m.op != ast::Op::Eq && m.op != ast::Op::Ne {
        return false;
    }
    m.matches(v)
}
