//! The flow datapath's logic, pure: OpenFlow-style rules, flow keys, a slow path that says
//! what it looked at, microflow and megaflow caches in front of it, and the actions on frames.
//!
//! **Why a crate of its own.** The seed's OVS-with-AF_XDP design splits into the ports (AF_XDP
//! sockets, UMEM, rings: `sift-xdp`, built on `sift-sys`) and what happens to a packet between
//! receiving and sending it, which needs no kernel at all. That second half lives here, with
//! no `unsafe`, no sockets and no clock, so it can be tested on millions of generated packets
//! and fuzzed; the switch glues the two together.
//!
//! A packet's way through:
//!
//! 1. [`FlowKey::extract`]: the key of the frame (Ethernet, two VLAN tags, ARP, IPv4, IPv6,
//!    TCP/UDP/SCTP/ICMP), as fixed words, read through `sift_wire`'s views.
//! 2. [`Datapath::lookup`]: the microflow cache (exact key), the megaflow cache (tuple-space
//!    search over wildcarded entries), or an upcall to the [`SlowPath`] — a [`FlowTable`] of
//!    [`Rule`]s parsed from `ovs-ofctl add-flow` text ([`parse_rules`]), or another slow path
//!    such as a firewall. The slow path returns the actions and the [`FlowMask`] of what it
//!    consulted, from which the megaflow is installed; rule changes go through
//!    [`Datapath::update`], which revalidates every cached entry.
//! 3. [`execute`]: the actions on the frame ([`FrameMut`]): outputs, `set_field` with
//!    incremental checksums, VLAN push and pop.
//!
//! ```
//! use sift_flow::{CacheConfig, Datapath, FlowKey, FlowTable, Hit, PortMap, VecFrame, execute, parse_rules};
//!
//! let mut ports = PortMap::new();
//! ports.add("eth1", 1).unwrap();
//! ports.add("eth2", 2).unwrap();
//! let rules = parse_rules("in_port=eth1,udp,tp_dst=53,actions=output:eth2\n", &ports).unwrap();
//! let mut dp = Datapath::new(FlowTable::with_rules(rules), CacheConfig::default());
//!
//! use sift_gen::build::{Packet, ipv4_header};
//! let (mut frame, mut scratch) = (Vec::new(), Vec::new());
//! let mut p = Packet::new(&mut frame, &mut scratch);
//! p.ethernet([4; 6], [2; 6]).ipv4(&ipv4_header([10, 0, 0, 1], [10, 0, 0, 53])).udp(40000, 53);
//! p.payload(b"query");
//! p.finish();
//! let key = FlowKey::extract(1, &frame);
//! let (actions, hit) = dp.lookup(&key, &frame);
//! assert_eq!(hit, Hit::Miss);
//! let actions = actions.clone();
//! assert_eq!(dp.lookup(&key, &frame).1, Hit::Microflow);
//!
//! let mut buf = VecFrame::new(&frame, 64);
//! let mut sent = Vec::new();
//! execute(&actions, &mut buf, 1, |port, bytes| sent.push((port, bytes.to_vec()))).unwrap();
//! assert_eq!(sent, [(2, frame)]);
//! ```
#![forbid(unsafe_code)]

pub mod actions;
pub mod cache;
pub mod key;
mod layout;
pub mod rules;
pub mod table;
#[cfg(feature = "testgen")]
pub mod testgen;

pub use actions::{ExecError, Executed, FrameMut, VecFrame, execute};
pub use cache::{CacheConfig, Counters, Datapath, Hit, MegaflowInfo};
pub use key::{Field, FlowKey, FlowMask, KEY_WORDS, PortNo};
pub use rules::{
    Action, Actions, FlowError, Match, ParseErrors, PortMap, Rule, SetField, parse_rule,
    parse_rules,
};
pub use table::{Classified, FlowTable, NO_RULE, RuleStats, SlowPath, Upcall};
