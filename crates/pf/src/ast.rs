//! The rule set: what a pf.conf says once read, in two shapes.
//!
//! * [`RuleSpec`] is one rule as written — lists of interfaces, protocols, hosts, ports, users
//!   not yet multiplied out, with the span of the rule in its file — the shape of parse.y's
//!   `pfrule` production.
//! * [`Rule`] is one rule after list expansion, with everything decided (address family,
//!   default flags and state, pools, label macros): the shape of pf's `struct pf_rule`, which is
//!   what pfctl prints and what an evaluator runs.
//!
//! [`Ruleset`] holds the expanded rules of the main rule set and of every anchor, plus what the
//! rule set defines besides rules (tables, queues, options).

use sift_diag::Span;

use crate::addr::{AddrKind, Af, Bytes, HostAddr};

/// A rule's action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Action {
    /// `pass`
    #[default]
    Pass,
    /// `block`
    Block,
    /// `match`
    Match,
}

/// A rule's direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dir {
    /// Either direction.
    #[default]
    InOut,
    /// `in`
    In,
    /// `out`
    Out,
}

/// pf's `rule_flag` bits that pfctl sets.
pub mod flag {
    /// `block return`
    pub const RETURN: u32 = 1 << 0;
    /// `block return-rst`
    pub const RETURNRST: u32 = 1 << 1;
    /// `block return-icmp`
    pub const RETURNICMP: u32 = 1 << 2;
    /// `fragment`
    pub const FRAGMENT: u32 = 1 << 3;
    /// `no-sync`
    pub const NOSYNC: u32 = 1 << 4;
    /// `source-track`
    pub const SRCTRACK: u32 = 1 << 5;
    /// `source-track rule`
    pub const RULESRCTRACK: u32 = 1 << 6;
    /// `if-bound`
    pub const IFBOUND: u32 = 1 << 7;
    /// `sloppy`
    pub const STATESLOPPY: u32 = 1 << 8;
    /// `pflow`
    pub const PFLOW: u32 = 1 << 9;
    /// `once`
    pub const ONCE: u32 = 1 << 10;
    /// `af-to`
    pub const AFTO: u32 = 1 << 11;
    /// `set delay`
    pub const SETDELAY: u32 = 1 << 12;
}

/// pf's `scrub_flags` bits.
pub mod scrub {
    /// `no-df`
    pub const NODF: u8 = 1;
    /// `random-id`
    pub const RANDOMID: u8 = 2;
    /// `reassemble tcp`
    pub const SCRUB_TCP: u8 = 4;
    /// `set prio`
    pub const SETPRIO: u8 = 8;
    /// `set tos`
    pub const SETTOS: u8 = 16;
}

/// Port and id comparison operators (pf's `PF_OP_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    /// No comparison.
    #[default]
    None,
    /// `a >< b`
    Irg,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `a <> b`
    Xrg,
    /// `a:b`
    Rrg,
}

/// A port comparison (`node_port`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortItem {
    /// The operator.
    pub op: Op,
    /// First port.
    pub a: u16,
    /// Second port.
    pub b: u16,
}

/// A user or group comparison (`node_uid`); `u32::MAX` is `unknown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdItem {
    /// The operator.
    pub op: Op,
    /// First id.
    pub a: u32,
    /// Second id.
    pub b: u32,
}

/// An interface of `on` (`node_if`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IfItem {
    /// Its name (empty: any interface).
    pub name: String,
    /// `!`
    pub not: bool,
    /// `on rdomain N`
    pub rdomain: Option<i32>,
    /// Whether it is written `(name)` (antispoof).
    pub dynamic: bool,
    /// Whether the host knows it as a loopback interface.
    pub loopback: bool,
}

/// An ICMP type and code (`node_icmp`), each stored plus one, 0 meaning none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcmpItem {
    /// Type + 1.
    pub ty: u8,
    /// Code + 1.
    pub code: u8,
    /// 1 (icmp) or 58 (icmp6); 0 when there is no icmp-type.
    pub proto: u8,
}

/// Pool types (`PF_POOL_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolType {
    /// None given.
    #[default]
    None,
    /// `bitmask`
    Bitmask,
    /// `random`
    Random,
    /// `source-hash`
    SourceHash,
    /// `round-robin`
    RoundRobin,
    /// `least-states`
    LeastStates,
}

/// Pool options as written (`pool_opts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolOpts {
    /// The pool type.
    pub ty: PoolType,
    /// The source-hash key.
    pub key: Option<[u32; 4]>,
    /// `static-port`
    pub static_port: bool,
    /// `sticky-address`
    pub sticky: bool,
}

/// A translation or routing target as written (`redirspec` + `pool_opts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redir {
    /// The hosts.
    pub hosts: Vec<HostAddr>,
    /// `port a[:b|:*]` as (a, b, op) with op `Rrg`/`Irg` for ranges.
    pub rport: PortItem,
    /// The options.
    pub pool: PoolOpts,
    /// `af-to` target family.
    pub af: Af,
    /// `binat-to`
    pub binat: bool,
}

/// A state option (`node_state_opt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateOpt {
    /// `max N`
    Max(u32),
    /// `no-sync`
    NoSync,
    /// `source-track [rule|global]` (0 plain, 1 rule, 2 global)
    SrcTrack(u8),
    /// `max-src-states N`
    MaxSrcStates(u32),
    /// `max-src-conn N`
    MaxSrcConn(u32),
    /// `max-src-conn-rate N/S`
    MaxSrcConnRate(u32, u32),
    /// `overload <t> [flush [global]]` (flush bits 1, 2)
    Overload(String, u8),
    /// `max-src-nodes N`
    MaxSrcNodes(u32),
    /// `if-bound` (true) / `floating`
    StateLock(bool),
    /// `sloppy`
    Sloppy,
    /// `pflow`
    Pflow,
    /// `<timeout> N`
    Timeout(usize, u32),
}

/// Divert targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Divert {
    /// None.
    #[default]
    None,
    /// `divert-to addr port p`
    To(Vec<HostAddr>, u16),
    /// `divert-reply`
    Reply,
    /// `divert-packet port p`
    Packet(u16),
}

/// Routing kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Route {
    /// None.
    #[default]
    None,
    /// `route-to`
    RouteTo,
    /// `reply-to`
    ReplyTo,
    /// `dup-to`
    DupTo,
}

/// The options after the addresses of a rule (`filter_opts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterOpts {
    /// `user …` (latest first, as pfctl prepends)
    pub uid: Vec<IdItem>,
    /// `group …`
    pub gid: Vec<IdItem>,
    /// `flags a/b` given.
    pub flags_given: bool,
    /// Flags that must be set.
    pub flags: u8,
    /// Flags examined.
    pub flagset: u8,
    /// `icmp-type`/`icmp6-type` list.
    pub icmp: Vec<IcmpItem>,
    /// `prio N`
    pub prio: Option<u8>,
    /// `tos N`
    pub tos: Option<u8>,
    /// `no state` / `keep|modulate|synproxy state`: (state kind, options).
    pub keep: Option<(u8, Vec<StateOpt>)>,
    /// `fragment`
    pub fragment: bool,
    /// `allow-opts`
    pub allow_opts: bool,
    /// `label`
    pub label: Option<String>,
    /// `queue` (name, parent)
    pub queue: Option<(String, Option<String>)>,
    /// `tag`
    pub tag: Option<String>,
    /// `tagged` (not, name)
    pub tagged: Option<(bool, String)>,
    /// `probability` as pf's fraction of 2^32.
    pub prob: u32,
    /// `rtable`
    pub rtable: Option<i32>,
    /// divert options
    pub divert: Divert,
    /// `scrub (no-df)`
    pub nodf: bool,
    /// `scrub (random-id)`
    pub randomid: bool,
    /// `scrub (min-ttl)`
    pub min_ttl: u8,
    /// `scrub (max-mss)`
    pub max_mss: u16,
    /// `scrub (reassemble tcp)` (or divert-packet's implicit one)
    pub scrub_tcp: bool,
    /// `nat-to`, `binat-to`, `af-to … from`
    pub nat: Option<Redir>,
    /// `rdr-to`, `af-to … to`
    pub rdr: Option<Redir>,
    /// `route-to`/`reply-to`/`dup-to`
    pub route: Option<(Route, Redir)>,
    /// `received-on` (not, name)
    pub rcv: Option<(bool, String)>,
    /// `once`
    pub once: bool,
    /// `max-pkt-rate N/S`
    pub pktrate: Option<(u32, u32)>,
    /// `set prio` (a, b)
    pub set_prio: Option<(u8, u8)>,
    /// `set tos`
    pub set_tos: Option<u8>,
    /// `set delay`
    pub delay: Option<u16>,
    /// `af-to`
    pub afto: bool,
}

/// The source or destination of a rule as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// The hosts (`None`: any).
    pub hosts: Option<Vec<HostAddr>>,
    /// The ports.
    pub ports: Option<Vec<PortItem>>,
}

/// One rule as written, before list expansion (parse.y's `pfrule` and `anchorrule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSpec {
    /// The action.
    pub action: Action,
    /// `block` variant: 0 policy, or a [`flag`] bit, with ttl/icmp codes.
    pub block: (u32, u8, u16, u16),
    /// Direction.
    pub dir: Dir,
    /// `log` bits (1 log, 2 all, 4 matches, 8 user).
    pub log: u8,
    /// `log (to pflogN)`
    pub logif: u8,
    /// `quick`
    pub quick: bool,
    /// `on …`
    pub interfaces: Option<Vec<IfItem>>,
    /// `inet`/`inet6`
    pub af: Af,
    /// `proto …`
    pub protos: Option<Vec<u8>>,
    /// `from …`
    pub src: Endpoint,
    /// `os …`
    pub os: Option<Vec<String>>,
    /// `to …`
    pub dst: Endpoint,
    /// Options.
    pub opts: FilterOpts,
    /// Where the rule is, in its file.
    pub span: Span,
}

/// A translation or routing pool once expanded (`pf_pool`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// The address (`None` when unused).
    pub addr: AddrKind,
    /// `addr@ifname`
    pub ifname: String,
    /// Proxy ports.
    pub proxy_port: [u16; 2],
    /// Port operator (rdr-to ranges).
    pub port_op: Op,
    /// Pool type.
    pub ty: PoolType,
    /// `sticky-address`
    pub sticky: bool,
    /// Source-hash key.
    pub key: [u32; 4],
}

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            addr: AddrKind::None,
            ifname: String::new(),
            proxy_port: [0; 2],
            port_op: Op::None,
            ty: PoolType::None,
            sticky: false,
            key: [0; 4],
        }
    }
}

/// The source or destination of an expanded rule (`pf_rule_addr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleAddr {
    /// The address.
    pub addr: AddrKind,
    /// `!`
    pub neg: bool,
    /// The port comparison.
    pub port: PortItem,
}

impl Default for RuleAddr {
    fn default() -> RuleAddr {
        RuleAddr { addr: AddrKind::any(), neg: false, port: PortItem::default() }
    }
}

/// State kinds.
pub mod state {
    /// `keep state`
    pub const NORMAL: u8 = 1;
    /// `modulate state`
    pub const MODULATE: u8 = 2;
    /// `synproxy state`
    pub const SYNPROXY: u8 = 3;
}

/// pf's state timeouts, in `PFTM_*` order, with pfctl's names.
pub const TIMEOUTS: &[&str] = &[
    "tcp.first",
    "tcp.opening",
    "tcp.established",
    "tcp.closing",
    "tcp.finwait",
    "tcp.closed",
    "udp.first",
    "udp.single",
    "udp.multiple",
    "icmp.first",
    "icmp.error",
    "other.first",
    "other.single",
    "other.multiple",
    "frag",
    "interval",
    "adaptive.start",
    "adaptive.end",
    "src.track",
    "tcp.tsdiff",
];

/// Index of `adaptive.start` in [`TIMEOUTS`].
pub const TM_ADAPTIVE_START: usize = 16;
/// Index of `adaptive.end` in [`TIMEOUTS`].
pub const TM_ADAPTIVE_END: usize = 17;
/// Index of `src.track` in [`TIMEOUTS`].
pub const TM_SRC_NODE: usize = 18;

/// An anchor call of a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorCall {
    /// The name as printed (`_N` for unnamed brace anchors, which print as `anchor`).
    pub name: String,
    /// The ruleset the anchor evaluates (index into [`Ruleset::anchors`]).
    pub ruleset: usize,
}

/// One expanded rule (pf's `struct pf_rule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// The action.
    pub action: Action,
    /// [`flag`] bits.
    pub rule_flag: u32,
    /// `return-rst(ttl N)`
    pub return_ttl: u8,
    /// ICMP type<<8|code for return-icmp.
    pub return_icmp: u16,
    /// ICMP6 type<<8|code for return-icmp6.
    pub return_icmp6: u16,
    /// Direction.
    pub direction: Dir,
    /// Log bits.
    pub log: u8,
    /// pflog interface number.
    pub logif: u8,
    /// `quick`
    pub quick: bool,
    /// `on` interface ("" for any).
    pub ifname: String,
    /// `on !`
    pub ifnot: bool,
    /// `on rdomain`
    pub onrdomain: Option<i32>,
    /// Address family.
    pub af: Af,
    /// af-to target family.
    pub naf: Af,
    /// Protocol (0: any).
    pub proto: u8,
    /// Source.
    pub src: RuleAddr,
    /// Destination.
    pub dst: RuleAddr,
    /// `os`
    pub os: Option<String>,
    /// `received-on`
    pub rcv: Option<(bool, String)>,
    /// `user`
    pub uid: IdItem,
    /// `group`
    pub gid: IdItem,
    /// TCP flags that must be set.
    pub flags: u8,
    /// TCP flags examined.
    pub flagset: u8,
    /// ICMP type + 1.
    pub icmp_type: u8,
    /// ICMP code + 1.
    pub icmp_code: u8,
    /// `tos`
    pub tos: u8,
    /// `prio` (0xff for prio 0)
    pub prio: u8,
    /// `max-pkt-rate`
    pub pktrate: (u32, u32),
    /// [`scrub`] bits.
    pub scrub_flags: u8,
    /// `set prio`
    pub set_prio: [u8; 2],
    /// `set queue`
    pub qname: String,
    /// `set queue (q, parent)`
    pub pqname: String,
    /// `set tos`
    pub set_tos: u8,
    /// `set delay`
    pub delay: u16,
    /// [`state`] kind, 0 for none.
    pub keep_state: u8,
    /// `max`
    pub max_states: u32,
    /// `max-src-nodes`
    pub max_src_nodes: u32,
    /// `max-src-states`
    pub max_src_states: u32,
    /// `max-src-conn`
    pub max_src_conn: u32,
    /// `max-src-conn-rate`
    pub max_src_conn_rate: (u32, u32),
    /// `overload <table>`
    pub overload: String,
    /// overload flush bits.
    pub flush: u8,
    /// Timeouts by [`TIMEOUTS`] index.
    pub timeout: [u32; 20],
    /// Probability as a fraction of 2^32.
    pub prob: u32,
    /// `min-ttl`
    pub min_ttl: u8,
    /// `max-mss`
    pub max_mss: u16,
    /// `allow-opts`
    pub allow_opts: bool,
    /// `label`
    pub label: String,
    /// `tag`
    pub tag: String,
    /// `tagged`
    pub match_tag: String,
    /// `! tagged`
    pub match_tag_not: bool,
    /// `rtable`
    pub rtableid: Option<i32>,
    /// Divert kind and its address and port.
    pub divert: (u8, Bytes, u16),
    /// nat-to / binat-to / af-to source pool.
    pub nat: Pool,
    /// rdr-to / af-to destination pool.
    pub rdr: Pool,
    /// route-to/reply-to/dup-to pool.
    pub route: Pool,
    /// Which routing.
    pub rt: Route,
    /// The anchor this rule calls.
    pub anchor: Option<AnchorCall>,
}

/// A table definition as written (`table <name> …`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableDef {
    /// Name.
    pub name: String,
    /// `const`
    pub is_const: bool,
    /// `persist`
    pub persist: bool,
    /// `counters`
    pub counters: bool,
    /// Whether an address list or file was given.
    pub init_addr: bool,
    /// The entries: address lists and files, in order.
    pub entries: Vec<TableEntry>,
}

/// One part of a table's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableEntry {
    /// `{ … }`
    Hosts(Vec<HostAddr>),
    /// `file "…"`
    File(String),
}

/// A queue (`queue name on if … `).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    /// Name.
    pub name: String,
    /// Parent queue.
    pub parent: Option<String>,
    /// Interface.
    pub ifname: String,
    /// Bandwidth (bits/s, burst, burst ms) for linkshare, realtime (min) and upperlimit (max).
    pub bandwidth: [(u32, u32, u32); 3],
    /// Flows.
    pub flows: u32,
    /// Quantum.
    pub quantum: u32,
    /// `default`
    pub default: bool,
    /// `qlimit`
    pub qlimit: u32,
    /// Line of the definition.
    pub line: u32,
}

/// A rule set: its rules (which call anchors), and its anchors' rule sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    /// The rule sets by index; 0 is the main (or `-a`) rule set.
    pub anchors: Vec<AnchorRules>,
    /// Tables defined, in order.
    pub tables: Vec<TableDef>,
    /// Queues defined, in order.
    pub queues: Vec<Queue>,
}

/// The rules of one anchor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorRules {
    /// The anchor's path (`""` for the main rule set).
    pub path: String,
    /// The rules in order.
    pub rules: Vec<Rule>,
}
