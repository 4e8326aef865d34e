//! The classifier's output as this crate reads it: `sift_firewall::classify`'s `Tables`.
//!
//! Why its own module: until the classifier is on main, this is a copy of its interface (the
//! same names and fields) that tests fill by hand; when it lands this module becomes a
//! re-export.

use sift_firewall::RuleId;

/// An IPv4 prefix of an LPM trie and its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix4 {
    /// Prefix length.
    pub len: u8,
    /// Address, network order.
    pub addr: [u8; 4],
    /// Class.
    pub class: u32,
}

/// An IPv6 prefix of an LPM trie and its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix6 {
    /// Prefix length.
    pub len: u8,
    /// Address, network order.
    pub addr: [u8; 16],
    /// Class.
    pub class: u32,
}

/// What a rule does, by rule index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleMeta {
    /// pf's rule number.
    pub nr: u32,
    /// `block`
    pub block: bool,
    /// `quick`
    pub quick: bool,
    /// `keep state`
    pub keep_state: bool,
    /// `(sloppy)`
    pub sloppy: bool,
    /// `log`
    pub log: bool,
    /// `log (all)`
    pub log_all: bool,
    /// The rule.
    pub id: RuleId,
}

/// A rule set as bit-vector classes (see the crate documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    /// Words of the bit vectors.
    pub nwords: u32,
    /// Class → bit vector (`nwords` words).
    pub bits: Vec<Vec<u64>>,
    /// The quick rules' class.
    pub quick: u32,
    /// The rules for this interface going in.
    pub dir_in: u32,
    /// ... going out.
    pub dir_out: u32,
    /// 512: `(af == inet6) * 256 + proto` → class.
    pub proto: Vec<u32>,
    /// Not a fragment, a fragment.
    pub frag: [u32; 2],
    /// IPv4 sources.
    pub src4: Vec<Prefix4>,
    /// IPv4 destinations.
    pub dst4: Vec<Prefix4>,
    /// IPv6 sources.
    pub src6: Vec<Prefix6>,
    /// IPv6 destinations.
    pub dst6: Vec<Prefix6>,
    /// 65,537: source port → class; the last: no ports.
    pub sport: Vec<u32>,
    /// As `sport`.
    pub dport: Vec<u32>,
    /// 257: TCP flags → class; the last: not TCP.
    pub tcpflags: Vec<u32>,
    /// 131,073: `(af == inet6) * 65536 + type * 256 + code` → class; the last: not ICMP.
    pub icmp: Vec<u32>,
    /// 256: TOS → class.
    pub tos: Vec<u32>,
    /// By rule index.
    pub rules: Vec<RuleMeta>,
}
