//! The caches in front of pf: pf as a [`SlowPath`] of `sift-flow`'s microflow and megaflow
//! caches, answering only what is provably a function of the flow key (the argument is the
//! parent module's documentation).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use sift_firewall::Firewall;
use sift_firewall::between::{self, Fate};
use sift_flow::{
    Action, Actions, CacheConfig, Counters, FlowKey, FlowMask, Hit, PortNo, SlowPath, Upcall,
};
use sift_pf::ast;
use sift_wire::{ethertype, ipproto};

/// pcap's link type of the frames (Ethernet).
const LINK_ETHERNET: u16 = 1;

/// Why a rule set's decisions are never cached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{what}", .rule.map(|n| format!("rule @{n}: ")).unwrap_or_default())]
pub struct Ineligible {
    /// The rule (`@N`), when one rule is the reason.
    pub rule: Option<u32>,
    /// What it does that a cache cannot answer for.
    pub what: String,
}

/// Whether the decisions of `fw`'s rule set between `ifnames` may be cached at all: every rule
/// classifies (`Firewall::classify`: no anchors, `match` rules, tags, `received-on`,
/// `probability`, `once`, `max-pkt-rate`, user or group tests…) for both interfaces, and no
/// rule translates, routes, scrubs, answers, logs, fingerprints or fills tables
/// (`overload`).
pub fn eligibility(fw: &Firewall, ifnames: &[String; 2]) -> Result<(), Ineligible> {
    let mut tables = None;
    for ifname in ifnames {
        match fw.classify(ifname) {
            Ok(t) => tables = Some(t),
            Err(sift_firewall::classify::ClassifyError::Rule { nr, what }) => {
                return Err(Ineligible { rule: Some(nr), what: what.to_string() });
            }
            Err(e) => return Err(Ineligible { rule: None, what: e.to_string() }),
        }
    }
    let Some(tables) = tables else { return Ok(()) };
    use ast::flag;
    for meta in &tables.rules {
        let Some(r) = fw.rule(meta.id) else { continue };
        let what = if r.nat.addr != sift_pf::addr::AddrKind::None
            || r.rdr.addr != sift_pf::addr::AddrKind::None
            || r.rule_flag & flag::AFTO != 0
        {
            Some("translation (`nat-to`, `rdr-to`, `binat-to`, `af-to`)")
        } else if r.rt != ast::Route::None || r.route.addr != sift_pf::addr::AddrKind::None {
            Some("`route-to`, `reply-to` or `dup-to`")
        } else if r.scrub_flags != 0 || r.min_ttl != 0 || r.max_mss != 0 || r.set_tos != 0 {
            Some("scrub options")
        } else if r.rule_flag & (flag::RETURN | flag::RETURNRST | flag::RETURNICMP) != 0 {
            Some("`return` (an answer)")
        } else if r.log != 0 {
            Some("`log`")
        } else if r.os.is_some() {
            Some("`os`")
        } else if !r.overload.is_empty() {
            Some("`overload` (tables change)")
        } else if r.divert.0 != 0 {
            Some("`divert-to`")
        } else if r.rtableid.is_some() {
            Some("`rtable`")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(Ineligible { rule: Some(meta.nr), what: what.into() });
        }
    }
    Ok(())
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Whether a frame has the shape whose every byte pf reads outside the flow key is fixed:
/// untagged Ethernet; IPv4 without options and not a fragment, or IPv6 with TCP or UDP right
/// after its header; lengths that fit the frame; TCP with a data offset that fits, the reserved
/// bits clear and the urgent pointer zero unless URG is set; UDP with its 8 bytes.
pub fn cacheable_shape(frame: &[u8]) -> bool {
    if frame.len() < 14 {
        return false;
    }
    let ip = &frame[14..];
    let (proto, l4) = match be16(frame, 12) {
        ethertype::IPV4 => {
            if ip.len() < 20 || ip[0] != 0x45 {
                return false;
            }
            let total = usize::from(be16(ip, 2));
            // More-fragments and the offset clear (DF and the reserved bit pf does not read).
            if total < 20 || total > ip.len() || be16(ip, 6) & 0x3fff != 0 {
                return false;
            }
            (ip[9], &ip[20..total])
        }
        ethertype::IPV6 => {
            if ip.len() < 40 || ip[0] >> 4 != 6 {
                return false;
            }
            let end = 40 + usize::from(be16(ip, 4));
            if end > ip.len() {
                return false;
            }
            (ip[6], &ip[40..end])
        }
        _ => return false,
    };
    match proto {
        ipproto::TCP => {
            if l4.len() < 20 {
                return false;
            }
            let hlen = usize::from(l4[12] >> 4) * 4;
            let urgent_ok = l4[13] & 0x20 != 0 || (l4[18] == 0 && l4[19] == 0);
            hlen >= 20 && hlen <= l4.len() && l4[12] & 0x0e == 0 && urgent_ok
        }
        ipproto::UDP => l4.len() >= 8,
        _ => false,
    }
}

/// Whether every pass of a judged frame's verdicts (` in pass @3 match, out pass @5 match`)
/// was decided by a rule (not a state) for pf's reason `match`, and nothing was held.
fn decided_by_rules(line: &str) -> bool {
    line.split(',').all(|part| {
        let t: Vec<&str> = part.split_whitespace().collect();
        t.len() == 4 && (t[0] == "in" || t[0] == "out") && t[2] != "state" && t[3] == "match"
    })
}

/// What judging a frame gave (the verdicts as `between::judge` writes them).
#[derive(Debug)]
pub struct Judged {
    /// What pf makes of the frame.
    pub fate: Fate,
    /// The verdicts: ` in pass @3 match, out pass @5 match`.
    pub line: String,
    /// Whether the decision may be cached.
    pub cacheable: bool,
}

/// One pf shared by the threads of a datapath between two interfaces (port 1 and port 2), and
/// what the caches in front of it must know: a generation that changes whenever the state
/// table or the rules do, whether the rule set is eligible, up to when pf's housekeeping owes
/// nothing.
#[derive(Debug)]
pub struct SharedPf {
    fw: Mutex<Firewall>,
    ifnames: [String; 2],
    generation: AtomicU64,
    eligible: AtomicBool,
    why_not: Mutex<Option<Ineligible>>,
    /// Ticks of the state table at a clock below this value do nothing (0: none is known to).
    idle_below: AtomicU64,
}

impl SharedPf {
    /// pf between `ifnames[0]` (port 1) and `ifnames[1]` (port 2).
    pub fn new(fw: Firewall, ifnames: [String; 2]) -> SharedPf {
        let why_not = eligibility(&fw, &ifnames).err();
        SharedPf {
            fw: Mutex::new(fw),
            ifnames,
            generation: AtomicU64::new(0),
            eligible: AtomicBool::new(why_not.is_none()),
            why_not: Mutex::new(why_not),
            idle_below: AtomicU64::new(0),
        }
    }

    /// The interfaces (port 1, port 2).
    pub fn ifnames(&self) -> &[String; 2] {
        &self.ifnames
    }

    /// Why the rule set's decisions are not cached, if they are not.
    pub fn ineligible(&self) -> Option<Ineligible> {
        self.why_not.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Changes pf (a rule set loaded over it, `pfctl -f`: states stay); every cache is
    /// flushed and the rule set's eligibility decided again.
    pub fn reload<R>(&self, change: impl FnOnce(&mut Firewall) -> R) -> R {
        let mut fw = self.fw.lock().unwrap_or_else(PoisonError::into_inner);
        let r = change(&mut fw);
        let why_not = eligibility(&fw, &self.ifnames).err();
        self.eligible.store(why_not.is_none(), Ordering::SeqCst);
        *self.why_not.lock().unwrap_or_else(PoisonError::into_inner) = why_not;
        self.idle_below.store(0, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
        r
    }

    /// Reads pf (its states, counters).
    pub fn with<R>(&self, f: impl FnOnce(&Firewall) -> R) -> R {
        f(&self.fw.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// pf, once no thread uses it.
    pub fn into_firewall(self) -> Firewall {
        self.fw.into_inner().unwrap_or_else(PoisonError::into_inner)
    }

    /// `between::judge` on a frame that came in on port `from` (0 or 1) at `now`: both passes
    /// under the lock; notes what changed for the caches and whether the result may be cached.
    pub fn judge(&self, frame: &[u8], from: usize, now: u64) -> Judged {
        let (src, dst) = (&self.ifnames[from & 1], &self.ifnames[(from + 1) & 1]);
        let mut line = String::new();
        let mut fw = self.fw.lock().unwrap_or_else(PoisonError::into_inner);
        let before = fw.states().counters();
        let fate = between::judge(&mut fw, LINK_ETHERNET, frame, src, dst, now, &mut line);
        let after = fw.states().counters();
        let states_changed = after.inserts != before.inserts || after.removals != before.removals;
        if states_changed {
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        let idle = if fw.states().tick_pending(now) { 0 } else { now.saturating_add(1) };
        self.idle_below.store(idle, Ordering::SeqCst);
        drop(fw);
        let unchanged = if fate.blocked {
            fate.on.is_empty()
        } else {
            !fate.held && !fate.not_ip && fate.on.len() == 1 && fate.on[0] == frame
        };
        let cacheable = self.eligible.load(Ordering::SeqCst)
            && !states_changed
            && unchanged
            && fate.back.is_empty()
            && decided_by_rules(&line)
            && cacheable_shape(frame);
        Judged { fate, line, cacheable }
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Whether a frame at `now` may be answered without pf: the rule set is eligible and a
    /// tick of the state table at `now` would do nothing.
    fn cache_usable(&self, now: u64) -> bool {
        self.eligible.load(Ordering::SeqCst) && now < self.idle_below.load(Ordering::SeqCst)
    }
}

/// A cached decision: pass (the frame goes on unchanged) or block (dropped), and its verdicts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cached {
    pass: bool,
    line: Arc<str>,
}

/// pf as the slow path of one thread's caches.
#[derive(Debug)]
pub struct PfSlowPath {
    pf: Arc<SharedPf>,
    /// The clock of the frame being looked up (set before each lookup).
    now: Cell<u64>,
    /// The last upcall's result, for the caller.
    stash: RefCell<Option<Judged>>,
    /// One `Actions` per (in-port, verdicts) decision, told apart by address (the caches hand
    /// back the `Arc` they were given).
    interned: HashMap<(PortNo, Arc<str>), Arc<Actions>>,
    by_addr: HashMap<usize, Cached>,
    nothing: Arc<Actions>,
}

impl PfSlowPath {
    fn new(pf: Arc<SharedPf>) -> PfSlowPath {
        PfSlowPath {
            pf,
            now: Cell::new(0),
            stash: RefCell::new(None),
            interned: HashMap::new(),
            by_addr: HashMap::new(),
            nothing: Arc::new(Actions::drop()),
        }
    }

    fn intern(&mut self, in_port: PortNo, pass: bool, line: &str) -> Arc<Actions> {
        let line: Arc<str> = line.into();
        if let Some(a) = self.interned.get(&(in_port, line.clone())) {
            return a.clone();
        }
        let actions = if pass {
            // The other port, as the caches' dumps would show it.
            Actions::new(vec![Action::Output(3 - in_port)])
        } else {
            Actions::drop()
        };
        let a = Arc::new(actions);
        self.by_addr.insert(Arc::as_ptr(&a) as usize, Cached { pass, line: line.clone() });
        self.interned.insert((in_port, line), a.clone());
        a
    }

    /// Forgets the interned decisions (only once no cache holds them: after a flush).
    fn forget(&mut self) {
        self.interned.clear();
        self.by_addr.clear();
    }
}

impl SlowPath for PfSlowPath {
    fn upcall(&mut self, key: &FlowKey, frame: &[u8]) -> Upcall {
        let in_port = key.in_port();
        let j = self.pf.judge(frame, (in_port as usize).wrapping_sub(1), self.now.get());
        let up = if j.cacheable {
            let pass = !j.fate.blocked;
            let actions = self.intern(in_port, pass, &j.line);
            Upcall { actions, mask: FlowMask::exact(), cacheable: true, tag: 0 }
        } else {
            Upcall {
                actions: self.nothing.clone(),
                mask: FlowMask::exact(),
                cacheable: false,
                tag: 0,
            }
        };
        *self.stash.borrow_mut() = Some(j);
        up
    }
}

/// What pf (or the caches, for pf) made of a frame.
#[derive(Debug)]
pub enum Outcome<'a> {
    /// A cached decision: the frame goes on unchanged (`pass`) or is dropped.
    Cached {
        /// Whether it passes.
        pass: bool,
        /// The verdicts, as `between::judge` wrote them when it decided.
        line: &'a str,
    },
    /// pf judged it.
    Judged(Judged),
}

/// One thread's caches in front of a [`SharedPf`].
#[derive(Debug)]
pub struct PfCache {
    pf: Arc<SharedPf>,
    dp: sift_flow::Datapath<PfSlowPath>,
    generation: u64,
    bypassed: u64,
}

impl PfCache {
    /// Caches of `config`'s sizes in front of `pf`.
    pub fn new(pf: Arc<SharedPf>, config: CacheConfig) -> PfCache {
        let generation = pf.generation();
        let dp = sift_flow::Datapath::new(PfSlowPath::new(pf.clone()), config);
        PfCache { pf, dp, generation, bypassed: 0 }
    }

    /// pf's decision on `frame`, which came in on port `from` (0 or 1) at `now` (seconds):
    /// from the caches when they may answer, else from pf (installed when cacheable).
    pub fn judge(&mut self, frame: &[u8], from: usize, now: u64) -> Outcome<'_> {
        let g = self.pf.generation();
        if g != self.generation {
            // Every cached decision goes (the slow path cannot revalidate), then the interned
            // ones no cache holds any more.
            self.dp.update(PfSlowPath::forget);
            self.generation = g;
        }
        if !(cacheable_shape(frame) && self.pf.cache_usable(now)) {
            self.bypassed += 1;
            return Outcome::Judged(self.pf.judge(frame, from, now));
        }
        let key = FlowKey::extract(from as PortNo + 1, frame);
        self.dp.slow_path().now.set(now);
        let (actions, hit) = self.dp.lookup(&key, frame);
        let addr = Arc::as_ptr(actions) as usize;
        let slow = self.dp.slow_path();
        let cached = match hit {
            Hit::Miss => None,
            Hit::Microflow | Hit::Megaflow => slow.by_addr.get(&addr),
        };
        match cached {
            Some(c) => Outcome::Cached { pass: c.pass, line: &c.line },
            // A miss made an upcall, which left its result.
            None => match slow.stash.borrow_mut().take() {
                Some(j) => Outcome::Judged(j),
                None => Outcome::Judged(self.pf.judge(frame, from, now)),
            },
        }
    }

    /// The cache counters.
    pub fn counters(&self) -> Counters {
        self.dp.counters()
    }

    /// Frames judged without looking at the caches (a frame of another shape, a rule set not
    /// eligible, pf's housekeeping due).
    pub fn bypassed(&self) -> u64 {
        self.bypassed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_lines_decided_by_rules() {
        assert!(decided_by_rules(" in pass @1 match, out pass @-1 match"));
        assert!(decided_by_rules(" in block @0 match"));
        assert!(!decided_by_rules(" in pass state match, out pass state match"));
        assert!(!decided_by_rules(" in pass @2 match, out block @-1 state-limit"));
        assert!(!decided_by_rules(" in pass @-1 match held"));
        assert!(!decided_by_rules(" not-ip"));
    }
}
