//! Reading the program's maps back as pf shows them: the states as sift-firewall's [`State`]
//! (`pfctl -ss`), the rules with their counters (`pfctl -vsr`), the global counters
//! (`pfctl -si`), and the pflog records as a pflog capture.
//!
//! Why its own module: both engines (sift's VM and the kernel) hold the same map bytes; this is
//! the one place that turns them into pf's views, over [`MapsRead`].

use std::fmt::Write as _;
use std::sync::OnceLock;

use sift_firewall::packet::{Direction, Family, Meta, Packet};
use sift_firewall::state::{Peer, State, StateKey};
use sift_firewall::{Decision, Firewall, Reason, RuleId, Verdict, pflog};
use sift_pf::host::Host;

use crate::layout::{
    self, Counters, DEFAULT_SLOT, LogRecord, NO_RULE, RuleCounters, StateBytes, StateKeyBytes, map,
    state_flag,
};
use crate::{Error, Result, RuleSet};

/// A map element: key and value bytes.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Reading map entries (sift's VM or the kernel).
pub trait MapsRead {
    /// Every (key, value) of map `name`.
    fn entries(&self, name: &str) -> Result<Vec<Entry>>;
    /// The value at `key` of per-CPU map `name`, every CPU's summed as `u64` counters.
    fn summed(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
}

/// A state as the program keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelState {
    /// Its key.
    pub key: StateKeyBytes,
    /// Its value.
    pub value: StateBytes,
}

/// Every state of the table (expired ones too: see [`RuleSet::expires`]), by key.
pub fn states(maps: &dyn MapsRead) -> Result<Vec<KernelState>> {
    let mut out: Vec<KernelState> = maps
        .entries(map::STATES)?
        .iter()
        .filter(|(k, v)| k.len() == StateKeyBytes::SIZE && v.len() == StateBytes::SIZE)
        .map(|(k, v)| KernelState { key: StateKeyBytes::decode(k), value: StateBytes::decode(v) })
        .collect();
    out.sort_by_key(|s| s.key.encode());
    Ok(out)
}

/// The global counters.
pub fn counters(maps: &dyn MapsRead) -> Result<Counters> {
    Ok(maps
        .summed(map::COUNTERS, &0u32.to_le_bytes())?
        .map_or_else(Counters::default, |v| Counters::decode(&v)))
}

/// The counters of rules `0..n` and of the default rule.
pub fn rule_counters(maps: &dyn MapsRead, n: usize) -> Result<(Vec<RuleCounters>, RuleCounters)> {
    let read = |slot: u32| -> Result<RuleCounters> {
        Ok(maps
            .summed(map::RULE_COUNTERS, &slot.to_le_bytes())?
            .map_or_else(RuleCounters::default, |v| RuleCounters::decode(&v)))
    };
    let rules = (0..n as u32).map(read).collect::<Result<Vec<_>>>()?;
    Ok((rules, read(DEFAULT_SLOT)?))
}

/// A `State` to fill in: sift-firewall's states are made by its own table, so one is made
/// there once (a UDP packet under `pass all keep state`) and copied.
fn template() -> &'static State {
    static TEMPLATE: OnceLock<State> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let host = sift_pf::host::FixtureHost::openbsd(".");
        let rules =
            sift_pf::parse("pf.conf", "pass all keep state\n", &sift_pf::Options::default(), &host)
                .expect("a fixed rule set");
        let mut fw = Firewall::new(&rules, &host).expect("a fixed rule set");
        let mut udp = [0u8; 28];
        udp[0] = 0x45;
        udp[3] = 28;
        udp[9] = 17;
        udp[25] = 8;
        let d = fw.test_bytes(&udp, &Meta::new("lo0", Direction::In));
        let id = d.state.expect("pass all keep state makes a state");
        fw.states_mut().remove(id).expect("the state just made")
    })
}

fn addr_key(a: &[u8; 16], af: Family) -> u128 {
    match af {
        Family::Inet => u128::from(u32::from_be_bytes([a[0], a[1], a[2], a[3]])) << 96,
        Family::Inet6 => u128::from_be_bytes(*a),
    }
}

fn peer(p: &layout::PeerBytes) -> Peer {
    Peer {
        seqlo: p.seqlo,
        seqhi: p.seqhi,
        max_win: p.max_win,
        wscale: p.wscale,
        state: p.state,
        seqdiff: 0,
    }
}

impl RuleSet {
    /// The rule of rule index `i` (`None`: pf's default rule).
    pub fn rule_id(&self, i: u32) -> Option<RuleId> {
        if i == NO_RULE { None } else { self.rules.get(i as usize).map(|r| r.id) }
    }

    /// When a state expires (seconds on its clock: last activity plus its timeout).
    pub fn expires(&self, v: &StateBytes) -> u64 {
        let t = self.settings.timeouts.get(usize::from(v.timeout)).copied().unwrap_or(0);
        v.last + u64::from(t)
    }

    /// A kernel state as sift-firewall's `State`.
    pub fn state(&self, k: &KernelState) -> State {
        let af = if k.key.af == layout::INET6 { Family::Inet6 } else { Family::Inet };
        let key = StateKey {
            af,
            proto: k.key.proto,
            rdomain: 0,
            addr: [addr_key(&k.key.addr[0], af), addr_key(&k.key.addr[1], af)],
            port: k.key.port,
        };
        let v = &k.value;
        let idx = v.rule as usize;
        let bound = self.if_bound.get(idx).copied().unwrap_or(self.settings.if_bound);
        let ifname: std::sync::Arc<str> = self.ifname.as_str().into();
        let mut s = template().clone();
        s.key = [key, key];
        s.direction = if v.direction == layout::OUT { Direction::Out } else { Direction::In };
        s.ifname = bound.then(|| ifname.clone());
        s.created_on = ifname;
        s.rule = self.rule_id(v.rule);
        s.anchor = None;
        s.kind = sift_pf::ast::state::NORMAL;
        s.sloppy = v.flags & state_flag::SLOPPY != 0;
        s.log = self.log_bits.get(idx).copied().unwrap_or(0);
        s.src = peer(&v.src);
        s.dst = peer(&v.dst);
        s.timeout = usize::from(v.timeout);
        s.creation = v.creation;
        s.last = v.last;
        s.packets = v.packets;
        s.bytes = v.bytes;
        s
    }

    /// `pfctl -ss`: the states alive at `now` (seconds on their clock), one line each.
    pub fn pfctl_states(&self, states: &[KernelState], now: u64) -> String {
        let mut out = String::new();
        for k in states.iter().filter(|k| self.expires(&k.value) > now) {
            out.push_str(&self.state(k).pfctl_line());
            out.push('\n');
        }
        out
    }

    /// `pfctl -vsr`: each rule as pfctl prints it, then its counters (evaluations as pf
    /// counts them without skip steps: the classifications that reached it).
    pub fn pfctl_rules(
        &self,
        fw: &Firewall,
        host: &dyn Host,
        counters: &[RuleCounters],
        default: &RuleCounters,
    ) -> String {
        // A classification that stopped at rule i (a quick rule) evaluated rules 0..=i; one
        // that found no quick rule evaluated them all.
        let mut reached = default.stops;
        let mut evaluations = vec![0u64; self.rules.len()];
        for i in (0..self.rules.len()).rev() {
            reached += counters.get(i).map_or(0, |c| c.stops);
            evaluations[i] = reached;
        }
        let mut out = String::new();
        for (i, meta) in self.rules.iter().enumerate() {
            let text = fw.rule(meta.id).map_or_else(String::new, |r| sift_pf::print::rule(r, host));
            let c = counters.get(i).copied().unwrap_or_default();
            let _ = writeln!(out, "@{} {text}", meta.nr);
            let _ = writeln!(
                out,
                "  [ Evaluations: {:<8}  Packets: {:<8}  Bytes: {:<10}  States: {:<6}]",
                evaluations[i],
                c.packets[0] + c.packets[1],
                c.bytes[0] + c.bytes[1],
                c.states
            );
        }
        out
    }
}

/// `pfctl -si`: the state table's counters and pf's reasons.
pub fn pfctl_info(c: &Counters, states: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "State Table                          Total");
    let _ = writeln!(out, "  current entries               {states:>14}");
    let _ = writeln!(out, "  searches                      {:>14}", c.searches);
    let _ = writeln!(out, "  inserts                       {:>14}", c.inserts);
    let _ = writeln!(out, "  removals                      {:>14}", c.removals);
    let _ = writeln!(out, "Counters");
    for (i, n) in c.reasons.iter().enumerate() {
        let _ = writeln!(out, "  {:<30}{n:>14}", reason(i as u8).name());
    }
    let _ = writeln!(out, "Packets                              Passed        Blocked");
    for (d, name) in ["in", "out"].iter().enumerate() {
        let _ = writeln!(out, "  {name:<28}{:>14} {:>14}", c.packets[d][0], c.packets[d][1]);
    }
    out
}

/// pf's reason of number `code` (`match` for a number pf does not have).
pub fn reason(code: u8) -> Reason {
    Reason::from_code(code).unwrap_or(Reason::Match)
}

/// The decision a pflog record tells (what `pflog::header` reads of it).
fn decision(rec: &LogRecord, rule: Option<RuleId>) -> Decision {
    let action = if rec.action == 0 { Verdict::Pass } else { Verdict::Block };
    let mut d = Decision::new(action, rule, reason(rec.reason));
    d.log = 1;
    d
}

impl RuleSet {
    /// A pflog record as `pflog0` delivers it: pf's header (sift-firewall's `pflog::header`),
    /// then the packet's first bytes. `paths` gives a rule set's anchor path (`""`: main).
    pub fn pflog_record(&self, rec: &LogRecord, paths: &dyn Fn(usize) -> String) -> Vec<u8> {
        let id = self.rule_id(rec.rule);
        let d = decision(rec, id);
        let pkt = Packet {
            af: if rec.af == layout::INET6 { Family::Inet6 } else { Family::Inet },
            proto: 0,
            src: 0,
            dst: 0,
            sport: 0,
            dport: 0,
            tcp_flags: 0,
            icmp_type: 0,
            icmp_code: 0,
            tos: 0,
            ttl: 0,
            fragment: false,
            len: rec.len,
            bytes: &rec.data,
        };
        let dir = if rec.dir == layout::OUT { Direction::Out } else { Direction::In };
        let meta = Meta::new(&self.ifname, dir);
        let path = id.map_or_else(String::new, |r| paths(r.ruleset));
        let mut out = pflog::header(&d, &pkt, &meta, &path, None).to_vec();
        out.extend_from_slice(&rec.data);
        out
    }

    /// The records as a pflog capture (pcap, link type `PFLOG`), their times moved by
    /// `offset_ns` (the kernel's monotonic clock to the wall clock).
    pub fn pflog_capture(
        &self,
        records: &[LogRecord],
        paths: &dyn Fn(usize) -> String,
        offset_ns: u64,
    ) -> Result<Vec<u8>> {
        let capture = |e: &dyn std::fmt::Display| Error::Capture(e.to_string());
        let mut w = sift_pcap::PcapWriter::new(
            Vec::new(),
            sift_pcap::LinkType::PFLOG,
            0,
            262_144,
            sift_pcap::Precision::Nano,
        )
        .map_err(|e| capture(&e))?;
        for rec in records {
            let bytes = self.pflog_record(rec, paths);
            let ns = rec.ts_ns.wrapping_add(offset_ns);
            let ts = sift_pcap::Timestamp::new(ns / 1_000_000_000, (ns % 1_000_000_000) as u32);
            let wire = (pflog::HEADER_LEN as u32).saturating_add(rec.len);
            w.write(ts, wire.max(bytes.len() as u32), &bytes).map_err(|e| capture(&e))?;
        }
        w.finish().map_err(|e| capture(&e))
    }
}
