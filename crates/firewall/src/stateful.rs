//! pf's `pf_test` with its state table: a packet of a known state is tracked and skips the
//! rules; any other is judged by the rules, and a passing rule that keeps state creates one
//! (with pf's limits: `set limit states`, the rule's `max`, source tracking).
//!
//! Why its own module: the stateless evaluator (`Firewall::decide`) stays what the
//! differential tests hold to the naive evaluator; this is the layer around it.

use sift_pf::ast;
use sift_wire::ipproto;

use crate::nat::{self, Trans};
use crate::packet::{Direction, Meta, Packet, tcp_flags as th};
use crate::rewrite::{Rewrite, SeqShift};
use crate::scrub;
use crate::state::{Peer, SrcKey, State, StateId, StateKey, StateTable, tcps, udps};
use crate::timeouts::{Settings, tm};
use crate::track::{self, Segment, Tracked};
use crate::{Decision, Firewall, Prefix, Reason, RuleId, Verdict, icmp_kind};

/// pf's `log (all)` bit as sift-pf records it: log every packet of the rule's states.
const LOG_ALL: u8 = 2;

/// What pf sends on for one packet that arrived ([`Firewall::process`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Processed {
    /// The decision (for the fragment that completed a datagram: the datagram's).
    pub decision: Decision,
    /// The packets that go on, in order, each from its IP header: none when blocked, held by
    /// `synproxy` or waiting for the rest of its datagram.
    pub out: Vec<Vec<u8>>,
}

/// How a packet fared against the state table.
#[allow(clippy::large_enum_variant)] // once per packet, by value: boxing would allocate
enum Lookup {
    /// It belongs to a state: the decision is made.
    Done(Decision),
    /// No state: the rules decide.
    Rules,
}

impl Firewall {
    /// The state table.
    pub fn states(&self) -> &StateTable {
        &self.states
    }

    /// The state table, to flush or purge it.
    pub fn states_mut(&mut self) -> &mut StateTable {
        &mut self.states
    }

    /// Sets the state options (`set timeout`, `set limit`, `set state-policy`; see
    /// [`Settings::from_pfctl_verbose`]).
    pub fn set_settings(&mut self, settings: Settings) {
        let limits = crate::fragment::FragLimits {
            frags: settings.frag_limit as usize,
            timeout_secs: settings.timeouts[tm::FRAG],
        };
        self.frags = crate::fragment::Reassembler::new(limits).with_no_df(settings.reassemble.1);
        self.states.settings = settings;
    }

    /// Whether the tables fit `set limit tables` and `set limit table-entries` (as pfctl
    /// refuses a rule set whose tables do not).
    pub fn check_limits(&self) -> Result<(), crate::FirewallError> {
        let s = &self.states.settings;
        if self.tables.len() > s.table_limit as usize {
            return Err(crate::FirewallError::Limit {
                what: "tables",
                limit: s.table_limit,
                need: self.tables.len(),
            });
        }
        let entries = self.table_entries();
        if entries > s.table_entry_limit as usize {
            return Err(crate::FirewallError::Limit {
                what: "table-entries",
                limit: s.table_entry_limit,
                need: entries,
            });
        }
        Ok(())
    }

    /// The entries of all tables together.
    fn table_entries(&self) -> usize {
        self.tables.iter().map(crate::Table::len).sum()
    }

    /// The fragments waiting for their datagrams.
    pub fn reassembler(&self) -> &crate::fragment::Reassembler {
        &self.frags
    }

    /// pf's whole path for one packet that arrived (`ip`: an IPv4 or IPv6 packet from its IP
    /// header on): reassembly first (`set reassemble yes`, pf's default: a fragment waits for
    /// its datagram, which is then judged whole), then [`Firewall::filter`]; the packets that
    /// go on are the packet as pf sends it, or the datagram it completed (IPv4), or that
    /// datagram cut again as it arrived (IPv6, pf's `pf_refragment6`).
    pub fn process(&mut self, ip: &[u8], meta: &Meta<'_>) -> Processed {
        use crate::fragment::Reassembly;
        self.frags.expire(meta.now);
        let mut refrag = None;
        let mut bytes = if self.states.settings.reassemble.0 {
            match self.frags.push(ip, meta.now) {
                Reassembly::NotFragment => ip.to_vec(),
                Reassembly::Held => {
                    // pf keeps the fragment: it passes, and nothing goes on yet.
                    let mut d = Decision::refused(Reason::Match);
                    d.action = Verdict::Pass;
                    d.held = true;
                    return Processed { decision: d, out: Vec::new() };
                }
                Reassembly::Complete(r) => {
                    refrag = r.refrag;
                    r.bytes
                }
                Reassembly::Dropped(reason) => {
                    return Processed { decision: Decision::refused(reason), out: Vec::new() };
                }
            }
        } else {
            ip.to_vec()
        };
        let mut d = self.filter(&mut bytes, meta);
        if d.action == Verdict::Pass
            && !d.held
            && let Some(rw @ (Rewrite::Af { .. } | Rewrite::AfError { .. })) = d.rewrite
        {
            let rebuilt = match rw {
                Rewrite::Af { af, src, sport, dst, dport } => {
                    crate::afto::translate(&bytes, af, (src, sport), (dst, dport))
                }
                Rewrite::AfError { af, src, dst, qsrc, qdst } => {
                    crate::afto::translate_error(&bytes, af, (src, dst), qsrc, qdst)
                }
                _ => None,
            };
            match rebuilt {
                Some(b) => bytes = b,
                None => {
                    d.action = Verdict::Block;
                    d.reason = Reason::Translate;
                }
            }
        }
        let mut out = Vec::new();
        if d.action == Verdict::Pass && !d.held {
            match refrag {
                Some(r) => match crate::fragment::refragment6(&bytes, &r) {
                    Ok(parts) => out = parts,
                    Err(reason) => {
                        d.action = Verdict::Block;
                        d.reason = reason;
                    }
                },
                None => out.push(bytes),
            }
        }
        Processed { decision: d, out }
    }

    /// The direction of a packet from a capture that does not record one: out if it answers a
    /// state created by a packet going in on `ifname` (a reply leaves by the interface its
    /// request arrived on), in otherwise — a capture on the firewall's outer interface.
    pub fn infer_direction(
        &self,
        pkt: &Packet<'_>,
        ifname: &str,
        rdomain: i32,
        now: u64,
    ) -> Direction {
        let key = StateKey::of(pkt, rdomain, state_ports(pkt), Direction::Out);
        if self.states.peek(&key, ifname, Direction::Out, now) {
            Direction::Out
        } else {
            Direction::In
        }
    }

    /// Tests a packet's bytes as [`Firewall::test`] (bytes pf would not judge are blocked
    /// with pf's reason).
    pub fn test_bytes(&mut self, bytes: &[u8], meta: &Meta<'_>) -> Decision {
        match Packet::parse(bytes) {
            Ok(p) => self.test(&p, meta),
            Err(e) => Decision::refused(e.reason()),
        }
    }

    /// pf's `pf_test`: the state table first (a packet of a known state is tracked and skips
    /// the rules; `Decision::from_state`), then the rules; a passing rule that keeps state
    /// creates one. `meta.now` is the clock: states expire on it.
    pub fn test(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>) -> Decision {
        self.states.tick(meta.now);
        if !pkt.fragment {
            match self.lookup(pkt, meta) {
                Lookup::Done(d) => return d,
                Lookup::Rules => {}
            }
        }
        let mut d = self.evaluate(pkt, meta, false);
        let icmp_error = matches!(pkt.proto, ipproto::ICMP | ipproto::ICMPV6)
            && icmp_kind(pkt.af, pkt.icmp_type).1;
        if d.action == Verdict::Pass {
            // pf_rule_to_actions over the match rules, then the deciding rule.
            let mut o = scrub::ScrubOpts::default();
            for id in d.matches.iter().chain(d.rule.as_ref()) {
                if let Some(r) = self.rule(*id) {
                    o.add_rule(r);
                }
            }
            d.scrub = (!o.is_empty()).then_some(o);
        }
        if d.action != Verdict::Pass || pkt.fragment || icmp_error {
            return d;
        }
        let trans = match self.translation(pkt, meta, state_ports(pkt), &d) {
            Ok(t) => t,
            Err(reason) => {
                d.action = Verdict::Block;
                d.reason = reason;
                return d;
            }
        };
        if d.keep_state != 0 {
            match self.create_state(pkt, meta, &d, trans) {
                Ok(id) => {
                    d.state = Some(id);
                    if d.keep_state == ast::state::SYNPROXY
                        && pkt.proto == ipproto::TCP
                        && pkt.tcp_flags & (th::SYN | th::ACK) == th::SYN
                        && meta.dir == Direction::In
                    {
                        self.start_synproxy(id, pkt, &mut d);
                        return d;
                    }
                }
                Err(reason) => {
                    d.action = Verdict::Block;
                    d.reason = reason;
                    return d;
                }
            }
        }
        if let Some((t, _)) = trans {
            d.rewrite = Some(if t.af != pkt.af {
                Rewrite::Af { af: t.af, src: t.src, sport: t.sport, dst: t.dst, dport: t.dport }
            } else {
                Rewrite::Header { src: t.src, sport: t.sport, dst: t.dst, dport: t.dport }
            });
        }
        if let Some(s) = d.state.and_then(|id| self.states.get(id))
            && s.src.seqdiff != 0
        {
            d.shift = Some(SeqShift { seq: s.src.seqdiff, ack: None, sack: 0, ts: None });
        }
        // `reassemble tcp` normalizes the creating segment too (pf_create_state).
        if let Some(id) = d.state
            && self.states.get(id).is_some_and(|s| s.tcp_scrub.is_some())
            && let Some(seg) = Segment::of(pkt)
        {
            let r = crate::eval::next_random(&mut self.rng) as u32;
            if let Some(s) = self.states.get_mut(id)
                && let Ok(n) = crate::tcp_scrub::stateful(s, &seg, true, pkt.ttl, meta.now, r)
            {
                d.shift = crate::tcp_scrub::merge(d.shift, n.ts);
            }
        }
        d
    }

    /// [`Firewall::test`], then the packet rewritten as pf sends it on (translated): `bytes`
    /// is an IPv4 or IPv6 packet from its IP header on. Bytes pf would not judge are blocked
    /// with pf's reason and left alone.
    ///
    /// pf_test's order: `pf_normalize_tcp` on every TCP segment (a segment it refuses is
    /// blocked with `normalize`), the state table or the rules, then on a passed packet the
    /// modulation, the translation and the scrub options (`max-mss`, `no-df`, `min-ttl`,
    /// `set-tos`, `random-id`); on a blocked one the answer `block return` asks for
    /// ([`Decision::reply`]).
    pub fn filter(&mut self, bytes: &mut [u8], meta: &Meta<'_>) -> Decision {
        use crate::rewrite::Layout;
        // One parse: the decision and where the parts are (rewriting moves none of them); a
        // TCP segment is normalized first and read again.
        let parsed = Packet::parse(bytes);
        let tcp_l4 = match &parsed {
            Ok(p) if p.proto == ipproto::TCP => scrub::l4_offset(p),
            Ok(_) => None,
            Err(e) => return Decision::refused(e.reason()),
        };
        let (mut d, layout) = match (tcp_l4, parsed) {
            (None, Ok(p)) => (self.test(&p, meta), Layout::of(&p)),
            (Some(l4), _) => {
                if let Err(r) = scrub::normalize_tcp(bytes, l4) {
                    return Decision::refused(r);
                }
                match Packet::parse(bytes) {
                    Ok(p) => (self.test(&p, meta), Layout::of(&p)),
                    Err(e) => return Decision::refused(e.reason()),
                }
            }
            (None, Err(e)) => return Decision::refused(e.reason()),
        };
        let rng = &mut self.rng;
        if d.action == Verdict::Pass && !d.held {
            // Each updates the checksums incrementally: the order does not matter.
            if let (Some(sh), Some(l)) = (&d.shift, &layout) {
                crate::rewrite::apply_shift_at(bytes, l, sh);
            }
            if let (Some(rw), Some(l)) = (&d.rewrite, &layout) {
                crate::rewrite::apply_at(bytes, l, rw);
            }
            if let Some(o) = &d.scrub {
                let l4 = layout.map(|l| l.l4);
                scrub::scrub(bytes, l4, o, &mut || crate::eval::next_random(rng) as u16);
            }
        } else if d.action == Verdict::Block && d.ret != crate::Return::Drop {
            let opts = crate::reply::ReplyOpts {
                ip_id: crate::eval::next_random(rng) as u16,
                link_broadcast: false,
            };
            match crate::reply::reply(bytes, d.ret, &opts) {
                Ok(r) => d.reply = Some(r),
                Err(e) => {
                    if let Some(r) = e.reason() {
                        d.reason = r;
                    }
                }
            }
        }
        d
    }

    /// The decision for a packet of state `id`.
    pub(crate) fn state_decision(
        &self,
        id: StateId,
        dir: Direction,
        af: crate::Family,
        result: Result<(), Reason>,
    ) -> Decision {
        let s = self.states.get(id).expect("state just found");
        let mut d = Decision::refused(Reason::Match);
        d.from_state = true;
        d.state = Some(id);
        d.rule = s.rule;
        d.anchor = s.anchor;
        d.keep_state = s.kind;
        d.log = if s.log & LOG_ALL != 0 { s.log } else { 0 };
        match result {
            Ok(()) => d.action = Verdict::Pass,
            Err(r) => d.reason = r,
        }
        if s.scrub != 0 {
            d.scrub = self.states.scrub_of(s);
        }
        d.rewrite = state_rewrite(s, dir, af);
        d
    }

    fn count(&mut self, id: StateId, from_src: bool, len: u32) {
        if let Some(s) = self.states.get_mut(id) {
            let i = usize::from(!from_src);
            s.packets[i] += 1;
            s.bytes[i] += u64::from(len);
        }
    }

    /// pf's `pf_test_state*`: the packet's state, tracked.
    fn lookup(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>) -> Lookup {
        let now = meta.now;
        match pkt.proto {
            ipproto::TCP => {
                let Some(seg) = Segment::of(pkt) else { return Lookup::Rules };
                let key = StateKey::of(pkt, meta.rdomain, (pkt.sport, pkt.dport), meta.dir);
                let Some(id) = self.states.find(&key, meta.ifname, meta.dir, now) else {
                    return Lookup::Rules;
                };
                if let Some(d) = self.synproxy(id, pkt, &seg, meta) {
                    let from_src = self.states.get(id).is_some_and(|s| s.direction == meta.dir);
                    self.count(id, from_src, pkt.len);
                    return Lookup::Done(d);
                }
                let s = self.states.get_mut(id).expect("found");
                let from_src = (s.direction == meta.dir) != reversed(s, pkt.af);
                if seg.flags & (th::SYN | th::ACK) == th::SYN
                    && s.src.state >= tcps::FIN_WAIT_2
                    && s.dst.state >= tcps::FIN_WAIT_2
                {
                    // A new connection on a closed state's key: pf purges the old state
                    // and the rules judge the SYN.
                    self.states.remove(id);
                    return Lookup::Rules;
                }
                let mut shift = None;
                let rng = &mut self.rng;
                let mut iss = || crate::eval::next_random(rng) as u32;
                let res = if s.sloppy {
                    Ok(track::tcp_sloppy(s, &seg, from_src, now))
                } else {
                    track::tcp_full(s, &seg, from_src, now, &mut iss, &mut shift)
                };
                // `reassemble tcp`: the TTL floor and the timestamps, on a segment tracking took.
                let mut ttl_floor = 0;
                // The scrub number is hot; the boxed data is looked at only when it is set.
                let scrubbed = if res.is_ok() && s.scrub != 0 && s.tcp_scrub.is_some() {
                    let r = crate::eval::next_random(&mut self.rng) as u32;
                    Some(crate::tcp_scrub::stateful(s, &seg, from_src, pkt.ttl, now, r))
                } else {
                    None
                };
                self.count(id, from_src, pkt.len);
                if let Some(scrubbed) = scrubbed {
                    match scrubbed {
                        Ok(n) => {
                            ttl_floor = n.ttl;
                            shift = crate::tcp_scrub::merge(shift, n.ts);
                        }
                        Err(reason) => {
                            let d = self.state_decision(id, meta.dir, pkt.af, Err(reason));
                            return Lookup::Done(d);
                        }
                    }
                }
                let shifted = |mut d: Decision| {
                    d.shift = shift;
                    if ttl_floor > pkt.ttl {
                        let o = d.scrub.get_or_insert_with(scrub::ScrubOpts::default);
                        o.min_ttl = o.min_ttl.max(ttl_floor);
                    }
                    Lookup::Done(d)
                };
                match res {
                    Ok(Tracked::Pass) => shifted(self.state_decision(id, meta.dir, pkt.af, Ok(()))),
                    Ok(Tracked::Established) => {
                        let Some(over) = self.states.connlimit(id, now) else {
                            return shifted(self.state_decision(id, meta.dir, pkt.af, Ok(())));
                        };
                        let d = self.state_decision(id, meta.dir, pkt.af, Err(Reason::SrcLimit));
                        self.states.remove(id);
                        if !over.table.is_empty() {
                            let full = if over.af == crate::Family::Inet { 32 } else { 128 };
                            let ip = crate::packet::Packet { af: over.af, src: over.addr, ..*pkt }
                                .src_addr();
                            let t = self.table_slot(&over.table);
                            // An overload address is not added past `set limit table-entries`.
                            let room = self.table_entries()
                                < self.states.settings.table_entry_limit as usize;
                            if let Some(p) = Prefix::new(ip, full, false)
                                && room
                            {
                                self.tables[t].add(p);
                            }
                            if over.flush != 0 {
                                let rule = if over.flush & 2 != 0 { None } else { Some(over.rule) };
                                self.states.flush_source(over.af, over.addr, rule);
                            }
                        }
                        Lookup::Done(d)
                    }
                    Err(r) => Lookup::Done(self.state_decision(id, meta.dir, pkt.af, Err(r))),
                }
            }
            ipproto::ICMP | ipproto::ICMPV6 => {
                let (_, error) = icmp_kind(pkt.af, pkt.icmp_type);
                if error {
                    return self.lookup_icmp_error(pkt, meta);
                }
                let Some(qid) = track::icmp_id(pkt) else { return Lookup::Rules };
                let key = StateKey::of(pkt, meta.rdomain, (qid, qid), meta.dir);
                let Some(id) = self.states.find(&key, meta.ifname, meta.dir, now) else {
                    return Lookup::Rules;
                };
                let s = self.states.get_mut(id).expect("found");
                let from_src = (s.direction == meta.dir) != reversed(s, pkt.af);
                track::icmp(s, now);
                self.count(id, from_src, pkt.len);
                Lookup::Done(self.state_decision(id, meta.dir, pkt.af, Ok(())))
            }
            _ => {
                let key = StateKey::of(pkt, meta.rdomain, (pkt.sport, pkt.dport), meta.dir);
                let Some(id) = self.states.find(&key, meta.ifname, meta.dir, now) else {
                    return Lookup::Rules;
                };
                let s = self.states.get_mut(id).expect("found");
                let from_src = (s.direction == meta.dir) != reversed(s, pkt.af);
                track::datagram(s, from_src, now);
                self.count(id, from_src, pkt.len);
                Lookup::Done(self.state_decision(id, meta.dir, pkt.af, Ok(())))
            }
        }
    }

    /// An ICMP error: the state of the packet it quotes (which went the other way).
    fn lookup_icmp_error(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>) -> Lookup {
        let Some(q) = track::quoted(pkt) else { return Lookup::Rules };
        if q.af != pkt.af {
            return Lookup::Rules;
        }
        let qdir = match meta.dir {
            Direction::In => Direction::Out,
            Direction::Out => Direction::In,
        };
        // The quoted packet went the other way, as it looked on this side: the key of the
        // error's own direction (wire going in, stack going out) holds it.
        let key = StateKey::oriented(q.af, q.proto, meta.rdomain, (q.src, q.dst), q.ports, qdir);
        let Some(id) = self.states.find(&key, meta.ifname, meta.dir, meta.now) else {
            return Lookup::Rules;
        };
        let s = self.states.get(id).expect("found");
        if s.key[0].af != s.key[1].af {
            // An error about an af-to connection goes on in the other family, its quote
            // rebuilt too: the quoted source is at `qs` in the key that matched, and at the
            // other end of the other (reversed) key.
            let m = crate::state::key_side(s, meta.dir, q.af);
            let nk = s.key[1 - m];
            let qs = usize::from(qdir == Direction::Out);
            let (qsrc, qdst) = ((nk.addr[1 - qs], nk.port[1 - qs]), (nk.addr[qs], nk.port[qs]));
            // The error's sender, mapped as the remote side is: into the NAT64 prefix, or out
            // of it.
            let sender = match nk.af {
                crate::Family::Inet6 => crate::afto::embed(pkt.src, qdst.0, 96),
                crate::Family::Inet => crate::afto::extract(pkt.src, 96),
            };
            let rw = Rewrite::AfError { af: nk.af, src: sender, dst: qsrc.0, qsrc, qdst };
            self.count(id, s.direction == meta.dir, pkt.len);
            let mut d = self.state_decision(id, meta.dir, pkt.af, Ok(()));
            d.rewrite = Some(rw);
            return Lookup::Done(d);
        }
        let sender_is_src = s.direction == qdir;
        // A modulated sender's segment is quoted in the numbers its peer saw.
        let seq_back = match q.proto {
            ipproto::TCP if sender_is_src => s.src.seqdiff,
            ipproto::TCP => s.dst.seqdiff,
            _ => 0,
        };
        let seq = q.seq.wrapping_sub(seq_back);
        let ok = q.proto != ipproto::TCP || track::quoted_tcp_fits(s, seq, sender_is_src);
        let moved = (s.key[0] != s.key[1] || seq_back != 0).then(|| {
            // The quoted packet takes the other key's addresses, oriented as it went.
            let (nk, si, di) = match meta.dir {
                Direction::In => (&s.key[1], 1, 0),
                Direction::Out => (&s.key[0], 0, 1),
            };
            Rewrite::Quoted {
                src: nk.addr[si],
                sport: nk.port[si],
                dst: nk.addr[di],
                dport: nk.port[di],
                seq_back,
            }
        });
        self.count(id, s.direction == meta.dir, pkt.len);
        let mut d = self.state_decision(
            id,
            meta.dir,
            pkt.af,
            if ok { Ok(()) } else { Err(Reason::BadState) },
        );
        d.rewrite = moved;
        Lookup::Done(d)
    }

    /// pf's `pf_create_state` for a packet that rule `d.rule` passed with `keep state`.
    fn create_state(
        &mut self,
        pkt: &Packet<'_>,
        meta: &Meta<'_>,
        d: &Decision,
        trans: Option<(Trans, RuleId)>,
    ) -> Result<StateId, Reason> {
        let now = meta.now;
        // The rule by field, not through `Firewall::rule`, so that the state table can be
        // borrowed beside it.
        let rule: Option<&ast::Rule> =
            d.rule.and_then(|id| self.sets.get(id.ruleset)?.source.get(id.nr as usize));
        let limits = self.states.limits_for(d.rule, rule);
        let settings_limit = self.states.settings.state_limit;
        let l = &self.states.limits[limits as usize];
        if l.max_states != 0 && l.states >= l.max_states {
            return Err(Reason::StateLimit);
        }
        let flag = rule.map_or(0, |r| r.rule_flag);
        let if_bound = if flag & ast::flag::IFBOUND != 0 {
            true
        } else {
            // `floating` on the rule is the absence of the flag; the global policy decides.
            self.states.settings.if_bound
        };
        let key = StateKey::of(pkt, meta.rdomain, state_ports(pkt), meta.dir);
        let (keys, pool_addr) = match &trans {
            Some((t, by)) => {
                let pools = &self.sets[by.ruleset].pools[by.nr as usize];
                let least = |i: usize| {
                    pools[i].as_ref().is_some_and(|p| p.ty == ast::PoolType::LeastStates)
                };
                let pool_addr = if least(0) {
                    Some(Box::new((*by, false, t.src)))
                } else if least(1) {
                    Some(Box::new((*by, true, t.dst)))
                } else {
                    None
                };
                (nat::state_keys(key, t, meta.dir), pool_addr)
            }
            None => ([key, key], None),
        };
        let tracks = flag & (ast::flag::SRCTRACK | ast::flag::RULESRCTRACK) != 0
            || rule.is_some_and(|r| {
                r.max_src_states != 0
                    || r.max_src_conn != 0
                    || r.max_src_conn_rate.0 != 0
                    || r.max_src_nodes != 0
            });
        let src_node = if tracks {
            let k = SrcKey {
                af: pkt.af,
                addr: pkt.src,
                rule: if flag & ast::flag::RULESRCTRACK != 0 { d.rule } else { None },
            };
            Some(self.states.src_node_for(k, limits, now)?)
        } else {
            None
        };
        // pf_create_state's order: the rule's `max`, the source node, then the state pool
        // (`set limit states`), whose failure frees a source node no state holds.
        if self.states.len() >= settings_limit as usize {
            if let Some(k) = src_node {
                self.states.drop_unused_src_node(k);
            }
            return Err(Reason::Memory);
        }
        let mut s = State {
            key: keys,
            pool_addr,
            scrub: 0,
            proxy_mss: 0,
            tcp_scrub: None,
            direction: meta.dir,
            ifname: if_bound.then(|| self.states.intern(meta.ifname)),
            created_on: self.states.intern(meta.ifname),
            rule: d.rule,
            anchor: d.anchor,
            kind: d.keep_state,
            sloppy: flag & ast::flag::STATESLOPPY != 0,
            log: d.log,
            src: Peer::default(),
            dst: Peer::default(),
            timeout: tm::OTHER_FIRST,
            creation: now,
            last: now,
            packets: [1, 0],
            bytes: [u64::from(pkt.len), 0],
            src_node,
            tcp_est: false,
            limits,
            purge: false,
            hash: [0; 2],
        };
        match pkt.proto {
            ipproto::TCP => {
                let Some(seg) = Segment::of(pkt) else { return Err(Reason::Short) };
                track::tcp_create(&mut s, &seg);
                if d.scrub.is_some_and(|o| o.reassemble_tcp) {
                    let mut sides = Box::<[crate::tcp_scrub::PeerScrub; 2]>::default();
                    let r = crate::eval::next_random(&mut self.rng) as u32;
                    crate::tcp_scrub::init(&mut sides[0], &seg, pkt.ttl, now, r);
                    s.tcp_scrub = Some(sides);
                }
                if d.keep_state == ast::state::MODULATE
                    && seg.flags & (th::SYN | th::ACK) == th::SYN
                {
                    // An unpredictable initial sequence number for the connection (RFC 6528:
                    // a keyed hash of its addresses and ports plus a 4 µs clock), as the
                    // difference pf adds to the initiator's numbers.
                    let iss = self.iss(&key, now);
                    s.src.seqdiff = iss.wrapping_sub(seg.seq).max(1);
                }
            }
            ipproto::UDP => {
                s.src.state = udps::SINGLE;
                s.timeout = tm::UDP_FIRST;
            }
            ipproto::ICMP | ipproto::ICMPV6 => s.timeout = tm::ICMP_FIRST,
            _ => s.src.state = udps::SINGLE,
        }
        s.scrub = self.states.scrub_index(d.scrub);
        let id = self.states.insert(s, now)?;
        self.states.limits[limits as usize].states += 1;
        if let Some(k) = src_node {
            self.states.attach_src_node(k);
        }
        Ok(id)
    }
}

impl Firewall {
    /// RFC 6528's initial sequence number for the connection of `key` at `now` seconds.
    fn iss(&self, key: &StateKey, now: u64) -> u32 {
        use std::hash::Hasher;
        #[allow(deprecated)] // SipHash-2-4, a keyed PRF as RFC 6528 asks.
        let mut h = std::hash::SipHasher::new_with_keys(self.iss_key.0, self.iss_key.1);
        h.write_u128(key.addr[0]);
        h.write_u128(key.addr[1]);
        h.write_u16(key.port[0]);
        h.write_u16(key.port[1]);
        (h.finish() as u32).wrapping_add((now as u32).wrapping_mul(250_000))
    }
}

/// The ports of `pkt`'s state key: TCP/UDP ports, an ICMP query's id twice, 0s otherwise.
pub(crate) fn state_ports(pkt: &Packet<'_>) -> (u16, u16) {
    match pkt.proto {
        ipproto::ICMP | ipproto::ICMPV6 => {
            let q = track::icmp_id(pkt).unwrap_or(0);
            (q, q)
        }
        _ => (pkt.sport, pkt.dport),
    }
}

/// Whether a packet of family `af` meets state `s` reversed (pf's `PF_REVERSED_KEY`: an
/// `af-to` state whose wire key is of the other family: its stack key is looked up going in,
/// and the packet comes from the other side).
pub(crate) fn reversed(s: &State, af: crate::Family) -> bool {
    s.key[0].af != s.key[1].af && s.key[0].af != af
}

/// How a packet of state `s` going `dir` is rewritten (pf_test_state's translation): going
/// in it takes the stack key's addresses, going out the wire key's; an `af-to` state met
/// reversed takes the other key, and a packet changing family swaps the key's sides.
fn state_rewrite(s: &State, dir: Direction, af: crate::Family) -> Option<Rewrite> {
    if s.key[0] == s.key[1] {
        return None;
    }
    let (si, di) = match dir {
        Direction::In => (0, 1),
        Direction::Out => (1, 0),
    };
    let nk = if reversed(s, af) { &s.key[si] } else { &s.key[di] };
    if nk.af != af {
        return Some(Rewrite::Af {
            af: nk.af,
            src: nk.addr[di],
            sport: nk.port[di],
            dst: nk.addr[si],
            dport: nk.port[si],
        });
    }
    Some(Rewrite::Header {
        src: nk.addr[si],
        sport: nk.port[si],
        dst: nk.addr[di],
        dport: nk.port[di],
    })
}
