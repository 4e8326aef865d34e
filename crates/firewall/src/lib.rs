//! pf's decision engine: what OpenBSD's packet filter decides for a packet under a rule set.
//!
//! Why this crate: sift runs pf rule sets offline against captures and, later, live; the
//! decision must be pf's — the same rule deciding, with pf's rule number, for the same reason.
//! [`sift_pf`] reads the rule set; this crate loads its expanded rules into rule sets with
//! their anchors resolved and skip steps computed (module `rules`), holds the tables
//! ([`table`]), reads packets ([`packet`]) and evaluates (module `eval`) as pf's
//! `pf_match_rule` does. This first part is stateless: a decision records whether the rule
//! keeps state so that the state table (a later part) can create one.
//!
//! ```
//! use sift_firewall::{Firewall, Verdict, packet::{Direction, Meta, Packet}};
//! use sift_pf::{Options, host::FixtureHost, parse};
//! let host = FixtureHost::openbsd(".");
//! let rules = parse("pf.conf", "block all\npass out proto icmp\n", &Options::default(), &host).unwrap();
//! let mut fw = Firewall::new(&rules, &host).unwrap();
//! // An ICMP echo request from 10.0.0.1 to 10.0.0.2.
//! let mut echo = [0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
//!                 8, 0, 0, 0, 0, 1, 0, 1];
//! let pkt = Packet::parse(&echo).unwrap();
//! let d = fw.decide(&pkt, &Meta::new("em0", Direction::Out));
//! assert_eq!(d.action, Verdict::Pass);
//! assert_eq!(d.rule.unwrap().nr, 1);
//! assert_eq!(fw.decide(&pkt, &Meta::new("em0", Direction::In)).action, Verdict::Block);
//! # echo[0] = 0;
//! ```
#![forbid(unsafe_code)]

mod afto;
pub mod between;
pub mod classify;
mod eval;
pub mod fragment;
pub mod frame;
mod nat;
pub mod packet;
pub mod pflog;
pub mod reply;
pub mod rewrite;
mod rules;
pub mod scrub;
pub mod state;
mod state_index;
mod stateful;
mod synproxy;
pub mod table;
mod tcp_scrub;
pub mod timeouts;
pub mod track;

use std::collections::HashMap;

use sift_pf::Ruleset;
use sift_pf::addr::{self, AddrKind, Af};
use sift_pf::ast::{self, TableEntry};
use sift_pf::host::Host;

pub use eval::{ANCHOR_STACK_MAX, icmp_kind};
pub use packet::{Direction, Family, Meta, Packet, PacketError};
pub use rules::{resolve_anchor, skip};
pub use state::{State, StateId, StateKey, StateTable};
pub use stateful::Processed;
pub use table::{Prefix, Table, TableError};
pub use timeouts::{Settings, SettingsError};

use eval::{End, Eval};
use rules::{Call, Names, RuleSet};

/// What pf does with the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// It goes on.
    Pass,
    /// It is dropped (and perhaps answered, see [`Return`]).
    Block,
}

/// pf's reasons (`PFRES_*`, as `pflog` records and `pfctl -si` counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// A rule (or the default rule) decided.
    Match,
    /// A header length or offset that cannot be.
    BadOffset,
    /// A fragment pf refused.
    Fragment,
    /// A header that does not fit.
    Short,
    /// A packet normalization refused.
    Normalize,
    /// Out of memory; also the global state limit (`set limit states`), as pf's pool.
    Memory,
    /// A TCP timestamp out of range.
    BadTimestamp,
    /// The interface queue was full.
    Congestion,
    /// IP options pf refused.
    IpOption,
    /// A bad transport checksum.
    ProtoCksum,
    /// A packet that does not fit its state (pf's `PFRES_BADSTATE`).
    BadState,
    /// A state could not be inserted (its key is in use).
    StateInsert,
    /// A rule's `max` states reached (pf's `PFRES_MAXSTATES`).
    StateLimit,
    /// A source tracking limit (`max-src-*`, `set limit src-nodes`).
    SrcLimit,
    /// synproxy.
    Synproxy,
    /// Translation failed.
    Translate,
    /// No route.
    NoRoute,
}

impl Reason {
    /// Every reason, in pf's order (index = [`Reason::code`]).
    pub const ALL: [Reason; 17] = [
        Reason::Match,
        Reason::BadOffset,
        Reason::Fragment,
        Reason::Short,
        Reason::Normalize,
        Reason::Memory,
        Reason::BadTimestamp,
        Reason::Congestion,
        Reason::IpOption,
        Reason::ProtoCksum,
        Reason::BadState,
        Reason::StateInsert,
        Reason::StateLimit,
        Reason::SrcLimit,
        Reason::Synproxy,
        Reason::Translate,
        Reason::NoRoute,
    ];

    /// The reason of pf's number `code`.
    pub fn from_code(code: u8) -> Option<Reason> {
        Reason::ALL.get(usize::from(code)).copied()
    }

    /// pf's number for the reason.
    pub fn code(self) -> u8 {
        match self {
            Reason::Match => 0,
            Reason::BadOffset => 1,
            Reason::Fragment => 2,
            Reason::Short => 3,
            Reason::Normalize => 4,
            Reason::Memory => 5,
            Reason::BadTimestamp => 6,
            Reason::Congestion => 7,
            Reason::IpOption => 8,
            Reason::ProtoCksum => 9,
            Reason::BadState => 10,
            Reason::StateInsert => 11,
            Reason::StateLimit => 12,
            Reason::SrcLimit => 13,
            Reason::Synproxy => 14,
            Reason::Translate => 15,
            Reason::NoRoute => 16,
        }
    }

    /// pf's name for the reason (`pfctl -si`).
    pub fn name(self) -> &'static str {
        match self {
            Reason::Match => "match",
            Reason::BadOffset => "bad-offset",
            Reason::Fragment => "fragment",
            Reason::Short => "short",
            Reason::Normalize => "normalize",
            Reason::Memory => "memory",
            Reason::BadTimestamp => "bad-timestamp",
            Reason::Congestion => "congestion",
            Reason::IpOption => "ip-option",
            Reason::ProtoCksum => "proto-cksum",
            Reason::BadState => "state-mismatch",
            Reason::StateInsert => "state-insert",
            Reason::StateLimit => "state-limit",
            Reason::SrcLimit => "src-limit",
            Reason::Synproxy => "synproxy",
            Reason::Translate => "translate",
            Reason::NoRoute => "no-route",
        }
    }
}

/// How a blocked packet is answered (`block return…`, `set block-policy return`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Return {
    /// Silently dropped.
    Drop,
    /// A TCP reset, with this TTL (0: the default).
    Rst {
        /// The reset's TTL.
        ttl: u8,
    },
    /// An ICMP (or ICMPv6, for IPv6 packets) error of this type and code.
    Icmp {
        /// Type.
        ty: u8,
        /// Code.
        code: u8,
    },
}

/// A rule: its rule set (index; see [`Firewall::ruleset_path`]) and its number there, the
/// `@N` of `pfctl -vv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleId {
    /// The rule set.
    pub ruleset: usize,
    /// The rule's number in it.
    pub nr: u32,
}

/// What pf decided for a packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Pass or block.
    pub action: Verdict,
    /// The deciding rule; `None` for pf's default rule (pass, `@-1`) or a packet refused
    /// before the rules.
    pub rule: Option<RuleId>,
    /// The anchor rule whose rule set holds `rule` (`None`: the main rule set).
    pub anchor: Option<RuleId>,
    /// Why.
    pub reason: Reason,
    /// Whether a `quick` rule (or `quick` anchor) ended the evaluation.
    pub quick: bool,
    /// How a block is answered.
    pub ret: Return,
    /// The deciding rule's state kind (`sift_pf::ast::state`; 0: no state).
    pub keep_state: u8,
    /// The packet's tag afterwards.
    pub tag: Option<String>,
    /// pf's `log` bits of the deciding rule and of the match rules applied.
    pub log: u8,
    /// The `match` rules that matched, in order.
    pub matches: Vec<RuleId>,
    /// Anchors nested deeper than pf's 64 rule sets (a loop of anchors): evaluation stopped
    /// and the packet is blocked.
    pub anchor_overflow: bool,
    /// The packet belonged to a known state and skipped the rules ([`Firewall::test`]).
    pub from_state: bool,
    /// The state the packet matched or created.
    pub state: Option<StateId>,
    /// How the packet is rewritten (translation); `None`: as it is.
    /// [`Firewall::filter`] applies it.
    pub rewrite: Option<rewrite::Rewrite>,
    /// How a TCP segment's numbers change (`modulate state`); [`Firewall::filter`] applies it.
    pub shift: Option<rewrite::SeqShift>,
    /// The scrub options for a passed packet (the match rules' and the deciding rule's, or its
    /// state's); [`Firewall::filter`] applies them.
    pub scrub: Option<scrub::ScrubOpts>,
    /// A packet pf sends back toward this packet's sender, as an IP packet: the answer to a
    /// blocked packet (`block return…`, made by [`Firewall::filter`]), or `synproxy`'s
    /// SYN+ACK to the client and its ACK to the server.
    pub reply: Option<Vec<u8>>,
    /// A packet pf sends on in this packet's direction (`synproxy`: the SYN that opens the
    /// server's side, the ACK that tells the client the server's window).
    pub ahead: Option<Vec<u8>>,
    /// pf keeps the packet (it passes but nothing goes on: `synproxy` answers it itself).
    pub held: bool,
}

impl Decision {
    fn refused(reason: Reason) -> Decision {
        Decision::new(Verdict::Block, None, reason)
    }

    /// `action` by `rule` for `reason`, with nothing else to do (no state, no log, no rewrite):
    /// what a pflog record says of a decision.
    pub fn new(action: Verdict, rule: Option<RuleId>, reason: Reason) -> Decision {
        Decision {
            action,
            rule,
            anchor: None,
            reason,
            quick: false,
            ret: Return::Drop,
            keep_state: 0,
            tag: None,
            log: 0,
            matches: Vec::new(),
            anchor_overflow: false,
            from_state: false,
            state: None,
            rewrite: None,
            shift: None,
            scrub: None,
            reply: None,
            ahead: None,
            held: false,
        }
    }
}

/// A route of the firewall's host, for `no-route`, `urpf-failed` and `route "label"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The destination network.
    pub net: Prefix,
    /// The interface it leaves by.
    pub ifname: String,
    /// Its route label.
    pub label: String,
}

/// What rules ask the host besides names: interface groups, routes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    pub names: Names,
    /// Interface → its groups.
    pub groups: HashMap<String, Vec<String>>,
    pub routes: Vec<Route>,
}

impl Env {
    /// Whether interface `ifname` is in group `group` (every interface is in `all`).
    pub fn in_group(&self, ifname: &str, group: &str) -> bool {
        group == "all" || self.groups.get(ifname).is_some_and(|g| g.iter().any(|x| x == group))
    }

    /// The most specific route to `key`.
    pub fn route(&self, key: u128, v4: bool) -> Option<&Route> {
        self.routes
            .iter()
            .filter(|r| {
                r.net.addr.is_ipv4() == v4
                    && (key & table::mask(r.net.len)) == table::key_of(r.net.addr)
            })
            .max_by_key(|r| r.net.len)
    }
}

/// Why a rule set or table could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FirewallError {
    /// A table's file or contents could not be read.
    #[error("table <{table}>: {source}")]
    Table {
        /// The table.
        table: String,
        /// What was wrong.
        source: TableError,
    },
    /// An anchor call names a path above the root (`..` too often).
    #[error("rule {nr} of anchor {from:?}: anchor {name:?} goes beyond the root")]
    Anchor {
        /// The calling rule set.
        from: String,
        /// The rule's number.
        nr: usize,
        /// The anchor name as written.
        name: String,
    },
    /// The rule set's tables need more than `set limit tables` or `set limit table-entries`
    /// allows (pfctl: "Cannot allocate memory").
    #[error("set limit {what} {limit}: the rule set needs {need}")]
    Limit {
        /// `tables` or `table-entries`.
        what: &'static str,
        /// The limit.
        limit: u32,
        /// What the rule set needs.
        need: usize,
    },
    /// A rule set read for anchor `wanted` was read for another.
    #[error("the rule set was read for anchor {got:?}, not {wanted:?}")]
    WrongAnchor {
        /// The anchor loaded.
        wanted: String,
        /// The anchor the rule set was read for (`sift_pf::Options::anchor`).
        got: String,
    },
}

/// A dynamic interface address (`(em0:network)/24`) and the table it is kept in.
#[derive(Clone, Debug)]
struct Dynamic {
    table: usize,
    ifname: String,
    flags: u8,
    bits: u32,
}

/// pf with its rule sets and tables loaded: decides packets.
#[derive(Clone, Debug)]
pub struct Firewall {
    sets: Vec<RuleSet>,
    by_path: HashMap<String, usize>,
    tables: Vec<Table>,
    table_index: HashMap<String, usize>,
    dynamic: Vec<Dynamic>,
    env: Env,
    rng: u64,
    states: StateTable,
    /// [`Firewall::interface`]'s answers for the last interfaces seen.
    if_masks: Vec<(Box<str>, usize, u64)>,
    /// Translation pools' cursors (round-robin counters), by rule and side.
    cursors: HashMap<(RuleId, nat::Side), nat::Cursor>,
    /// `sticky-address` bindings: (rule, side, source) to the address it was given.
    sticky: HashMap<(RuleId, nat::Side, u128), u128>,
    /// The secret of the initial sequence numbers `modulate state` gives (RFC 6528's key).
    iss_key: (u64, u64),
    /// Fragments waiting for their datagram (`set reassemble yes`).
    frags: fragment::Reassembler,
}

impl Firewall {
    /// Loads `ruleset` (read with `sift_pf::parse`, for the main rule set or, when it was read
    /// with `Options::anchor`, into that anchor under an empty main rule set); tables come
    /// from its definitions (files read through `host`), interfaces and groups from `host`.
    pub fn new(ruleset: &Ruleset, host: &dyn Host) -> Result<Firewall, FirewallError> {
        let mut fw = Firewall {
            sets: vec![RuleSet::default()],
            by_path: HashMap::from([(String::new(), 0)]),
            tables: Vec::new(),
            table_index: HashMap::new(),
            dynamic: Vec::new(),
            env: Env::default(),
            rng: 0x5eed,
            states: StateTable::default(),
            if_masks: Vec::new(),
            cursors: HashMap::new(),
            sticky: HashMap::new(),
            iss_key: random_key(),
            frags: fragment::Reassembler::new(fragment::FragLimits::default()),
        };
        fw.env.routes = vec![
            Route {
                net: Prefix::new("0.0.0.0".parse().expect("address"), 0, false).expect("prefix"),
                ifname: String::new(),
                label: String::new(),
            },
            Route {
                net: Prefix::new("::".parse().expect("address"), 0, false).expect("prefix"),
                ifname: String::new(),
                label: String::new(),
            },
        ];
        fw.refresh_interfaces(host);
        let path = ruleset.anchors.first().map_or("", |a| a.path.as_str()).to_string();
        fw.load_anchor(&path, ruleset, host)?;
        Ok(fw)
    }

    /// Loads `ruleset`, read for anchor `path` (`sift_pf::Options::anchor`, `""` for the main
    /// rule set), as `pfctl -a PATH -f FILE`: the rule sets it defines replace theirs, its
    /// tables are defined or redefined; other anchors stay.
    pub fn load_anchor(
        &mut self,
        path: &str,
        ruleset: &Ruleset,
        host: &dyn Host,
    ) -> Result<(), FirewallError> {
        let got = ruleset.anchors.first().map_or("", |a| a.path.as_str());
        if got != path {
            return Err(FirewallError::WrongAnchor { wanted: path.into(), got: got.into() });
        }
        // New rules may name new interfaces.
        self.if_masks.clear();
        for t in &ruleset.tables {
            let mut entries = Vec::new();
            for e in &t.entries {
                match e {
                    TableEntry::Hosts(hosts) => entries.extend(hosts.iter().filter_map(prefix_of)),
                    TableEntry::File(f) => {
                        let text = host.read_file(f).map_err(|e| FirewallError::Table {
                            table: t.name.clone(),
                            source: TableError::Io { path: f.clone(), reason: e.to_string() },
                        })?;
                        let more = table::parse_entries(&text).map_err(|e| {
                            FirewallError::Table { table: t.name.clone(), source: e }
                        })?;
                        entries.extend(more);
                    }
                }
            }
            let i = self.table_slot(&t.name);
            self.tables[i].replace(&entries);
        }
        for (i, a) in ruleset.anchors.iter().enumerate() {
            if i > 0 && a.rules.is_empty() {
                // Only named by a call: pf creates it empty when the call is loaded.
                continue;
            }
            let set = self.find_or_create(&a.path);
            self.load_rules(set, &a.rules, host)?;
        }
        self.resolve_calls()?;
        Ok(())
    }

    /// The index of table `name`, created empty if new.
    fn table_slot(&mut self, name: &str) -> usize {
        if let Some(&i) = self.table_index.get(name) {
            return i;
        }
        self.tables.push(Table::new(name));
        self.table_index.insert(name.to_string(), self.tables.len() - 1);
        self.tables.len() - 1
    }

    /// The rule set at `path`, created (with its parents) if new.
    fn find_or_create(&mut self, path: &str) -> usize {
        if let Some(&i) = self.by_path.get(path) {
            return i;
        }
        let (parent, name) = match path.rfind('/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        let p = self.find_or_create(parent);
        self.sets.push(RuleSet { path: path.to_string(), ..RuleSet::default() });
        let i = self.sets.len() - 1;
        self.by_path.insert(path.to_string(), i);
        self.sets[p].children.insert(name.to_string(), i);
        i
    }

    fn load_rules(
        &mut self,
        set: usize,
        src: &[ast::Rule],
        host: &dyn Host,
    ) -> Result<(), FirewallError> {
        let mut compiled = Vec::with_capacity(src.len());
        let mut pools = Vec::with_capacity(src.len());
        let mut names = std::mem::take(&mut self.env.names);
        for r in src {
            let mut lookup = |a: &AddrKind| -> usize {
                match a {
                    AddrKind::Table(name) => self.table_slot(name),
                    AddrKind::Dyn { ifname, flags, mask } => {
                        let bits = addr::unmask(mask);
                        let name = format!("({ifname}:{flags})/{bits}");
                        let known = self.table_index.contains_key(&name);
                        let t = self.table_slot(&name);
                        if !known {
                            self.dynamic.push(Dynamic {
                                table: t,
                                ifname: ifname.clone(),
                                flags: *flags,
                                bits,
                            });
                            fill_dynamic(&mut self.tables[t], ifname, *flags, bits, host);
                        }
                        t
                    }
                    _ => usize::MAX,
                }
            };
            compiled.push(rules::compile_rule(r, &mut names, &mut lookup));
            pools.push([
                nat::Pool::compile(&r.nat, &mut lookup),
                nat::Pool::compile(&r.rdr, &mut lookup),
            ]);
        }
        self.env.names = names;
        let steps = rules::skip_steps(src);
        self.sets[set].heads =
            compiled.iter().zip(steps).map(|(r, s)| rules::Head::new(r, s)).collect();
        self.sets[set].evaluations = vec![0; compiled.len()];
        self.sets[set].rules = compiled;
        self.sets[set].pools = pools;
        self.sets[set].source = src.to_vec();
        Ok(())
    }

    /// Resolves every anchor call (after a load, targets may be new rule sets).
    fn resolve_calls(&mut self) -> Result<(), FirewallError> {
        for s in 0..self.sets.len() {
            for nr in 0..self.sets[s].source.len() {
                let Some(call) = self.sets[s].source[nr].anchor.clone() else { continue };
                let from = self.sets[s].path.clone();
                let Some((path, wildcard)) = resolve_anchor(&from, &call.name) else {
                    return Err(FirewallError::Anchor { from, nr, name: call.name });
                };
                let target = self.find_or_create(&path);
                self.sets[s].rules[nr].call = Some(Call { target, wildcard });
            }
        }
        Ok(())
    }

    /// Re-reads interfaces and groups from `host` and refills the tables of dynamic
    /// addresses (`(em0)`), as pf does when an interface's addresses change.
    pub fn refresh_interfaces(&mut self, host: &dyn Host) {
        self.env.groups =
            host.interfaces().iter().map(|i| (i.name.clone(), i.groups.clone())).collect();
        self.if_masks.clear();
        for d in self.dynamic.clone() {
            fill_dynamic(&mut self.tables[d.table], &d.ifname, d.flags, d.bits, host);
        }
    }

    /// Sets the host's routes (`no-route`, `urpf-failed`, `route` labels); by default there is
    /// one default route per family on no interface.
    pub fn set_routes(&mut self, routes: Vec<Route>) {
        self.env.routes = routes;
    }

    /// Seeds the generator `probability` rules, translation pools and sequence number
    /// modulation draw from (runs repeat; by default modulation's secret is random).
    pub fn seed(&mut self, seed: u64) {
        self.rng = seed;
        self.iss_key = (eval::next_random(&mut self.rng), eval::next_random(&mut self.rng));
    }

    /// The table `name` (created empty if new; rules naming it see changes at once).
    pub fn table_mut(&mut self, name: &str) -> &mut Table {
        let i = self.table_slot(name);
        &mut self.tables[i]
    }

    /// The table `name`, if it exists.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.table_index.get(name).map(|&i| &self.tables[i])
    }

    /// The path of a rule set (`""` for the main one).
    pub fn ruleset_path(&self, ruleset: usize) -> &str {
        &self.sets[ruleset].path
    }

    /// The rule set at `path`, if loaded or called.
    pub fn ruleset_index(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// A rule as sift-pf expanded it.
    pub fn rule(&self, id: RuleId) -> Option<&ast::Rule> {
        self.sets.get(id.ruleset)?.source.get(id.nr as usize)
    }

    /// How often rule `id` was evaluated and matched (pf's `evaluations` and `packets`).
    pub fn rule_counters(&self, id: RuleId) -> Option<(u64, u64)> {
        let set = self.sets.get(id.ruleset)?;
        let r = set.rules.get(id.nr as usize)?;
        Some((set.evaluations[id.nr as usize], r.matches))
    }

    /// Decides a packet's bytes (IPv4 or IPv6 from the IP header on): pf's verdict, or a block
    /// with pf's reason when the bytes are not a packet pf would judge.
    pub fn decide_bytes(&mut self, bytes: &[u8], meta: &Meta<'_>) -> Decision {
        match Packet::parse(bytes) {
            Ok(p) => self.decide(&p, meta),
            Err(e) => Decision::refused(e.reason()),
        }
    }

    /// Decides `pkt` as pf's rule evaluation, with skip steps.
    pub fn decide(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>) -> Decision {
        self.evaluate(pkt, meta, false)
    }

    /// Decides `pkt` without skip steps, trying every rule (the reference the skip-step
    /// evaluator is tested against; slower).
    pub fn decide_naive(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>) -> Decision {
        self.evaluate(pkt, meta, true)
    }

    /// Interface `ifname`'s index among the rules' interface names (`usize::MAX`: none) and
    /// its mask: bit `i`, whether it matches name `i` (itself, or a group it is in), for the
    /// first 64 names; remembered for the last few interfaces.
    fn interface(&mut self, ifname: &str) -> (usize, u64) {
        if let Some((_, idx, m)) = self.if_masks.iter().find(|(n, _, _)| &**n == ifname) {
            return (*idx, *m);
        }
        let ifidx = self.env.names.if_index.get(ifname).copied().unwrap_or(usize::MAX);
        let names = &self.env.names.ifnames;
        let mut mask = 0u64;
        for (i, group) in names.iter().enumerate().take(64) {
            if i == ifidx || self.env.in_group(ifname, group) {
                mask |= 1 << i;
            }
        }
        if self.if_masks.len() >= 16 {
            self.if_masks.clear();
        }
        self.if_masks.push((ifname.into(), ifidx, mask));
        (ifidx, mask)
    }

    fn evaluate(&mut self, pkt: &Packet<'_>, meta: &Meta<'_>, naive: bool) -> Decision {
        let (icmp_in, icmp_error) = match pkt.proto {
            sift_wire::ipproto::ICMP | sift_wire::ipproto::ICMPV6 => {
                icmp_kind(pkt.af, pkt.icmp_type)
            }
            _ => (true, false),
        };
        let pkt_tag =
            meta.tag.map_or(0, |t| self.env.names.tag_index.get(t).copied().unwrap_or(u16::MAX));
        let (ifidx, if_mask) = self.interface(meta.ifname);
        let mut ev = Eval {
            sets: &mut self.sets,
            cx: eval::Cx {
                ifidx,
                if_mask,
                dir_bit: if meta.dir == Direction::In { 1 } else { 2 },
                af_bit: if pkt.af == Family::Inet { 1 } else { 2 },
                rcvidx: meta.received_on.and_then(|n| self.env.names.if_index.get(n).copied()),
                tables: &mut self.tables,
                env: &self.env,
                rng: &mut self.rng,
                pkt,
                meta,
                pkt_tag,
                icmp_in,
                icmp_error,
                found: eval::Found { tag: -1, ..eval::Found::default() },
                memo: eval::TableMemo::default(),
            },
        };
        let end = if naive { ev.run_naive(0, None, 1) } else { ev.run() };
        let found = ev.cx.found;
        let mut d = Decision::refused(Reason::Match);
        d.quick = end == End::Quick;
        d.anchor_overflow = end == End::Overflow;
        d.rule = found.rule;
        d.anchor = found.anchor;
        d.tag = match found.tag {
            -1 => meta.tag.map(str::to_string),
            0 => None,
            t => self.env.names.tags.get(t as usize - 1).cloned(),
        };
        for m in &found.matches {
            d.log |= self.sets[m.ruleset].source[m.nr as usize].log;
        }
        d.matches = found.matches;
        let rule = found.rule.map(|id| &self.sets[id.ruleset].source[id.nr as usize]);
        d.action = match rule {
            _ if end == End::Overflow => Verdict::Block,
            Some(r) if r.action == ast::Action::Block => Verdict::Block,
            _ => Verdict::Pass,
        };
        if let Some(r) = rule {
            d.log |= r.log;
            d.keep_state = if d.action == Verdict::Pass { r.keep_state } else { 0 };
            if d.action == Verdict::Block && !pkt.fragment && r.action == ast::Action::Block {
                d.ret = block_return(r, pkt);
            }
        }
        d
    }
}

/// How pf answers a packet blocked by `r` (`pf_test_rule`'s return-rst / return-icmp).
fn block_return(r: &ast::Rule, pkt: &Packet<'_>) -> Return {
    use ast::flag;
    let f = r.rule_flag;
    if f & (flag::RETURN | flag::RETURNRST | flag::RETURNICMP) == 0 {
        return Return::Drop;
    }
    let tcp = sift_wire::ipproto::TCP;
    if pkt.proto == tcp && f & (flag::RETURN | flag::RETURNRST) != 0 {
        if pkt.tcp_flags & packet::tcp_flags::RST != 0 {
            return Return::Drop;
        }
        return Return::Rst { ttl: r.return_ttl };
    }
    if f & (flag::RETURN | flag::RETURNICMP) != 0 {
        // ICMP queries are answered too (pf's `ICMP_INFOTYPE`; ICMPv6 types from echo
        // request on, except redirects); errors never.
        let t = pkt.icmp_type;
        let (icmp, code) = match pkt.af {
            Family::Inet if pkt.proto != sift_wire::ipproto::ICMP || reply::icmp_info_type(t) => {
                (r.return_icmp, true)
            }
            Family::Inet6 if pkt.proto != sift_wire::ipproto::ICMPV6 || (t >= 128 && t != 137) => {
                (r.return_icmp6, true)
            }
            _ => (0, false),
        };
        if code && icmp != 0 {
            return Return::Icmp { ty: (icmp >> 8) as u8, code: (icmp & 0xff) as u8 };
        }
    }
    Return::Drop
}

/// The table entry of a host of a table definition (`{ 10/8, !10.1/16 }`).
fn prefix_of(h: &addr::HostAddr) -> Option<Prefix> {
    let AddrKind::Mask { addr, mask } = &h.addr else { return None };
    let ip = match h.af {
        Af::Inet => {
            std::net::IpAddr::V4(std::net::Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3]))
        }
        Af::Inet6 => std::net::IpAddr::V6(std::net::Ipv6Addr::from(*addr)),
        Af::Any => return None,
    };
    Prefix::new(ip, addr::unmask(mask) as u8, h.not)
}

/// Fills the table of a dynamic address from the host's interfaces (pf's `pfi_dynaddr`).
fn fill_dynamic(t: &mut Table, ifname: &str, flags: u8, bits: u32, host: &dyn Host) {
    let mut entries = Vec::new();
    for h in addr::ifa_lookup(ifname, flags, host) {
        if let Some(mut p) = prefix_of(&h) {
            let full = if p.addr.is_ipv4() { 32 } else { 128 };
            if flags & addr::iflags::NETWORK == 0 && bits > 0 && bits < full {
                p = Prefix::new(p.addr, bits as u8, false).unwrap_or(p);
            }
            entries.push(p);
        }
    }
    t.replace(&entries);
}

/// A key from the process's random source (std's per-process random SipHash keys).
fn random_key() -> (u64, u64) {
    use std::hash::{BuildHasher, Hasher};
    let r = std::collections::hash_map::RandomState::new();
    let mut a = r.build_hasher();
    a.write_u8(1);
    let mut b = r.build_hasher();
    b.write_u8(2);
    (a.finish(), b.finish())
}
