//! OpenFlow-style flow rules as `ovs-ofctl add-flow` writes them, one per line.
//!
//! **Why OVS's text.** The seed's datapath is Open vSwitch's, its rules are written for
//! `ovs-ofctl` (`in_port=eth1,actions=set_field:eth2->in_port,output:eth1`), and people who
//! run a software switch know that syntax. sift reads the part of it a single-table switch
//! over AF_XDP ports needs: the match fields of Ethernet, VLAN, ARP, IPv4, IPv6 and
//! TCP/UDP/SCTP/ICMP with OVS's shorthands and masks, and the actions that forward, drop,
//! rewrite fields and push or pop VLAN tags.
//!
//! A [`Match`] is kept as OVS keeps one: a value and a mask over the [`FlowKey`] layout, so
//! the slow path compares words and the printer recovers OVS's canonical text from the bits
//! (`ip,nw_proto=6` prints as `tcp`, `nw_src=10.1.2.3/8` as `nw_src=10.0.0.0/8`).
//! Prerequisites are checked as OVS checks them: a field whose protocol the match does not fix
//! (`tp_dst` without `tcp`/`udp`/`sctp`, `nw_src` without `ip` or `arp`) is an error, and so
//! is a `set_field` whose header the match does not guarantee.
//!
//! - [`parse`](mod@parse): the text, with [`FlowError`]s located at `line:column` and rendered with a
//!   caret by [`FlowError::render`];
//! - [`print`](mod@print): the canonical text, and `ovs-ofctl dump-flows`'s lines with per-rule counters.
//!
//! [`FlowKey`]: crate::FlowKey

mod error;
pub mod parse;
pub mod print;
mod value;

use std::sync::Arc;

use sift_wire::ethernet::Mac;

use crate::key::{Field, FlowKey, FlowMask, PortNo};

pub use error::{FlowError, ParseErrors};
pub use parse::{parse_rule, parse_rules};

/// OpenFlow's default priority (`OFP_DEFAULT_PRIORITY`), for rules that give none.
pub const DEFAULT_PRIORITY: u16 = 32768;
/// The largest port number a rule may name (OpenFlow 1.1's `OFPP_MAX`).
pub const MAX_PORT: PortNo = 0xffff_ff00;

/// What a rule matches: a value and a mask over the flow key's layout (the value has no bit
/// outside the mask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Match {
    key: FlowKey,
    mask: FlowMask,
}

impl Match {
    /// The match of every packet.
    pub fn any() -> Match {
        Match::default()
    }

    /// The value (zero outside the mask).
    pub fn key(&self) -> &FlowKey {
        &self.key
    }

    /// The compared bits.
    pub fn mask(&self) -> &FlowMask {
        &self.mask
    }

    /// Whether `key` is matched.
    pub fn matches(&self, key: &FlowKey) -> bool {
        self.key.matches(key, &self.mask)
    }

    /// A field's value and mask.
    pub fn field(&self, f: Field) -> (u128, u128) {
        (self.key.get(f), self.mask.get(f))
    }

    /// Whether the match fixes `f` to `v` exactly.
    pub fn is_exact(&self, f: Field, v: u128) -> bool {
        self.field(f) == (v, f.full())
    }

    /// Sets bits of a field: `mask` bits of the field take `value`'s bits (kept within the
    /// crate: a match's consistency is the parser's job).
    pub(crate) fn set_bits(&mut self, f: Field, value: u128, mask: u128) {
        let (v, m) = self.field(f);
        self.mask.set(f, m | mask);
        self.key.set(f, (v & !mask) | (value & mask));
    }
}

/// A field a `set_field` action writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetField {
    /// Source MAC.
    EthSrc(Mac),
    /// Destination MAC.
    EthDst(Mac),
    /// IPv4 source (header and transport checksums follow).
    Ipv4Src([u8; 4]),
    /// IPv4 destination.
    Ipv4Dst([u8; 4]),
    /// IPv6 source (transport checksums follow).
    Ipv6Src([u8; 16]),
    /// IPv6 destination.
    Ipv6Dst([u8; 16]),
    /// The DSCP bits of IPv4's TOS or IPv6's traffic class (a multiple of 4; ECN is kept).
    NwTos(u8),
    /// IPv4 TTL or IPv6 hop limit.
    NwTtl(u8),
    /// TCP, UDP or SCTP source port.
    TpSrc(u16),
    /// TCP, UDP or SCTP destination port.
    TpDst(u16),
    /// The outer VLAN tag's VID (a tag is pushed on an untagged frame, as OVS's
    /// `mod_vlan_vid` does).
    VlanVid(u16),
    /// The outer VLAN tag's priority (pushing a tag as for the VID).
    VlanPcp(u8),
    /// The packet's ingress port as later actions see it (`output` to the ingress port is
    /// skipped, as OpenFlow requires; the seed's `set_field:eth2->in_port,output:eth1`).
    InPort(PortNo),
}

/// One action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Send the frame as it is now to a port (skipped when it is the ingress port).
    Output(PortNo),
    /// Send the frame back out of its ingress port (`in_port`, OpenFlow's `OFPP_IN_PORT`).
    InPort,
    /// Rewrite a field.
    Set(SetField),
    /// Push a VLAN tag with this TPID (0x8100 or 0x88a8), copying the outer tag's TCI if
    /// there is one.
    PushVlan(u16),
    /// Remove the outer VLAN tag, if any.
    PopVlan,
}

/// A rule's actions, in order; none is `drop`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Actions {
    list: Vec<Action>,
}

impl Actions {
    /// The actions `list`.
    pub fn new(list: Vec<Action>) -> Actions {
        Actions { list }
    }

    /// `drop`.
    pub fn drop() -> Actions {
        Actions::default()
    }

    /// The actions in order.
    pub fn as_slice(&self) -> &[Action] {
        &self.list
    }

    /// Whether the packet is dropped (no action at all).
    pub fn is_drop(&self) -> bool {
        self.list.is_empty()
    }

    /// The port, when the actions are a single `output` that does not change the frame: the
    /// caller may hand the received buffer to that port as it is (unless it is the ingress
    /// port, where OpenFlow sends nothing).
    pub fn single_output(&self) -> Option<PortNo> {
        match self.list.as_slice() {
            [Action::Output(p)] => Some(*p),
            _ => None,
        }
    }
}

/// One rule: priority, match, actions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Higher first; among equals, the rule added first.
    pub priority: u16,
    /// What it matches.
    pub matches: Match,
    /// What it does (shared with the caches that hold it).
    pub actions: Arc<Actions>,
}

/// Port names and numbers, given by the caller (the switch's ports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortMap {
    ports: Vec<(String, PortNo)>,
}

/// Why a port cannot join a [`PortMap`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PortMapError {
    /// The name would not read back as one token of a rule, or reads as a number.
    #[error(
        "`{0}` cannot name a port: names are letters, digits, `_`, `-`, `.` and `@`, and not a number"
    )]
    BadName(String),
    /// The name is one of OpenFlow's reserved port names or a keyword of the actions.
    #[error("`{0}` is a reserved port name")]
    Reserved(String),
    /// The number is 0 or above `OFPP_MAX`.
    #[error("port number {0} is outside 1 to {MAX_PORT}")]
    BadNumber(PortNo),
    /// The name or the number is taken.
    #[error("port `{0}` or number {1} is already in the map")]
    Duplicate(String, PortNo),
}

/// Names a rule's text gives a meaning of its own (OpenFlow's reserved ports and the actions'
/// keywords), refused as port names.
const RESERVED_PORT_NAMES: &[&str] = &[
    "in_port",
    "local",
    "all",
    "flood",
    "normal",
    "controller",
    "any",
    "none",
    "table",
    "drop",
    "pop_vlan",
    "strip_vlan",
];

impl PortMap {
    /// An empty map.
    pub fn new() -> PortMap {
        PortMap::default()
    }

    /// Adds port `name` as number `no`.
    pub fn add(&mut self, name: &str, no: PortNo) -> Result<(), PortMapError> {
        let ok = |c: char| c.is_ascii_alphanumeric() || "_.@-".contains(c);
        if name.is_empty() || !name.chars().all(ok) || name.chars().all(|c| c.is_ascii_digit()) {
            return Err(PortMapError::BadName(name.into()));
        }
        if RESERVED_PORT_NAMES.iter().any(|r| r.eq_ignore_ascii_case(name)) {
            return Err(PortMapError::Reserved(name.into()));
        }
        if no == 0 || no > MAX_PORT {
            return Err(PortMapError::BadNumber(no));
        }
        if self.ports.iter().any(|(n, p)| n == name || *p == no) {
            return Err(PortMapError::Duplicate(name.into(), no));
        }
        self.ports.push((name.into(), no));
        Ok(())
    }

    /// The number of port `name`.
    pub fn number(&self, name: &str) -> Option<PortNo> {
        self.ports.iter().find(|(n, _)| n == name).map(|p| p.1)
    }

    /// The name of port `no`.
    pub fn name(&self, no: PortNo) -> Option<&str> {
        self.ports.iter().find(|(_, p)| *p == no).map(|p| p.0.as_str())
    }

    /// The ports, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = (&str, PortNo)> {
        self.ports.iter().map(|(n, p)| (n.as_str(), *p))
    }
}
