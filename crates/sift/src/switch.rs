//! `sift switch`: a software switch between AF_XDP ports whose forwarding follows OpenFlow-style
//! rules, with Open vSwitch's caches in front of the rules.
//!
//! Why it exists: the seed's OVS-with-AF_XDP datapath (`../shared/seeds/002_…` §4) is two
//! halves that sift keeps in two crates — `sift-xdp` moves frames between sockets in batches,
//! `sift-flow` decides what happens to each (rules, flow keys, microflow and megaflow caches,
//! actions). This module is the glue the command and embedders share.
//!
//! - **Ports.** Interfaces in the order given; a port's OpenFlow number is 1 + its position
//!   (`-p eth1 -p eth2`: `eth1` is 1, `eth2` is 2), and rules name ports by interface or number.
//! - **One cache per queue thread.** `sift-xdp` runs a thread per receive queue index; each
//!   owns a [`sift_flow::Datapath`] over its own copy of the [`FlowTable`] (as OVS's PMD threads
//!   each own their exact-match cache and classifier), so nothing is shared on the packet path.
//! - **Actions on the frame in place.** [`FrameMut`] over [`Packet`]: rewrites and VLAN pushes
//!   change the frame in its UMEM chunk (pushes use the headroom), outputs become
//!   [`Packet::output`]. `sift-xdp` then sends the frame *as the actions left it*, once to each
//!   port. OpenFlow sends each output as the frame was at that action; `sift-xdp` has no way to
//!   send a copy of given bytes, so a rule whose rewrite follows an output, or that would send
//!   one frame twice to one port, is refused when the rules are read, with its line and column
//!   ([`load_rules`]). Outputs to ports the switch does not have are refused the same way.
//! - **Rules changed under traffic.** [`Switch::reload`] publishes new rules and bumps a
//!   generation that every thread compares at each batch; a thread that sees it changed
//!   replaces its table through [`sift_flow::Datapath::update`], which revalidates its caches
//!   (megaflows the new rules decide alike are kept, the rest removed; the microflow cache is
//!   invalidated), and reports it ([`Switch::applied`]). Rules whose priority and match stay
//!   keep their counters (`ovs-ofctl replace-flows` modifies them).
//! - **Statistics.** When the switch stops, each thread hands over its table (the caches' hits
//!   credited to the rules) and caches: [`Report`] has the rules' counters summed over threads
//!   (`ovs-ofctl dump-flows`), each thread's megaflows (`ovs-dpctl dump-flows`), the cache
//!   counters and the ports' counters.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sift_diag::Span;
use sift_flow::rules::print;
use sift_flow::{
    Action, CacheConfig, Counters, Field, FlowError, FlowKey, FlowTable, FrameMut, NO_RULE,
    ParseErrors, PortNo, SetField, SlowPath, execute, parse_rule, parse_rules,
};
use sift_xdp::{
    Batch, BindMode, Datapath, Options, Packet, Pipeline, PollMode, PortConfig, PortInfo,
    PortStats, ThreadStats,
};

/// The rule and port types of the rules this module reads.
pub use sift_flow::{PortMap, Rule, RuleStats};
/// How a port's sockets were bound.
pub use sift_xdp::Bound;

/// How to run the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The ports' interfaces, in OpenFlow port order (port `i + 1` is `ports[i]`).
    pub ports: Vec<String>,
    /// Bind the sockets in copy mode (else zero-copy when the driver has it).
    pub copy: bool,
    /// Frames taken off a receive ring at a time.
    pub batch: u32,
    /// Sleep in `poll()` between rounds instead of spinning.
    pub poll: bool,
    /// Stop after this many frames (the frames past it in the last batch are dropped).
    pub count: Option<u64>,
}

impl Config {
    /// The switch between `ports`, zero-copy when possible, batches of 64, spinning.
    pub fn new(ports: Vec<String>) -> Config {
        Config { ports, copy: false, batch: 64, poll: false, count: None }
    }

    /// The AF_XDP ports and options the configuration asks for (also `sift pf run --between`).
    pub(crate) fn xdp(&self) -> (Vec<PortConfig>, Options) {
        let ports = self
            .ports
            .iter()
            .map(|p| PortConfig {
                bind: if self.copy { BindMode::Copy } else { BindMode::Auto },
                ..PortConfig::new(p.as_str())
            })
            .collect();
        let opts = Options {
            batch: self.batch,
            poll: if self.poll { PollMode::Poll } else { PollMode::Pmd },
            ..Options::default()
        };
        (ports, opts)
    }
}

/// Why the switch cannot start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// A port cannot be named in rules (or is given twice).
    #[error("port {port}: {source}")]
    Port {
        /// The interface.
        port: String,
        /// Why.
        source: sift_flow::rules::PortMapError,
    },
    /// Setting up or running the AF_XDP datapath.
    #[error(transparent)]
    Datapath(#[from] sift_xdp::Error),
}

/// The port map of a switch between `ports`: port `i + 1` is `ports[i]`.
pub fn port_map(ports: &[String]) -> Result<PortMap, SwitchError> {
    let mut map = PortMap::new();
    for (i, p) in ports.iter().enumerate() {
        let no = PortNo::try_from(i + 1).unwrap_or(PortNo::MAX);
        map.add(p, no).map_err(|source| SwitchError::Port { port: p.clone(), source })?;
    }
    Ok(map)
}

/// Reads rules (`ovs-ofctl add-flow` text, one a line) for a switch with the ports of
/// `ports`, and refuses, located, the rules it cannot carry out exactly (see the module
/// documentation): a rewrite after an output, two outputs of one frame to one port, an output
/// to a port the switch does not have.
pub fn load_rules(text: &str, ports: &PortMap) -> Result<Vec<Rule>, ParseErrors> {
    let rules = parse_rules(text, ports)?;
    let nports = ports.iter().count() as PortNo;
    // The rules came from the lines that read as one, in order.
    let mut lines = Vec::new();
    let mut start = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches(['\n', '\r']);
        if parse_rule(body, ports).is_ok() {
            lines.push((i, start, body));
        }
        start += line.len();
    }
    let mut errors = Vec::new();
    for (rule, &(line, at, body)) in rules.iter().zip(&lines) {
        if let Some((message, help)) = refusal(rule, nports, ports) {
            let col = body.to_ascii_lowercase().find("actions").unwrap_or(0);
            let span = Span::new((at + col) as u32, (at + body.len()) as u32);
            errors.push(FlowError {
                line: line as u32 + 1,
                column: body[..col].chars().count() as u32 + 1,
                span,
                message,
                help: Some(help.into()),
                aux: None,
            });
        }
    }
    if errors.is_empty() { Ok(rules) } else { Err(ParseErrors { errors }) }
}

/// Whether an action changes the frame's bytes.
fn rewrites(a: &Action) -> bool {
    match a {
        Action::Set(SetField::InPort(_)) | Action::Output(_) | Action::InPort => false,
        Action::Set(_) | Action::PushVlan(_) | Action::PopVlan => true,
    }
}

/// The help of a refusal of actions that need a copy of the frame.
const ONE_COPY: &str = "sift-xdp sends each frame once to each port, as its last action leaves \
                        it: put every rewrite before the first output, each port once";

/// Why the switch cannot carry out `rule`'s actions exactly, if it cannot, and a help line.
fn refusal(rule: &Rule, nports: PortNo, ports: &PortMap) -> Option<(String, &'static str)> {
    let acts = rule.actions.as_slice();
    let text = |a: &Action| print::actions(&sift_flow::Actions::new(vec![*a]), ports);
    let out_of_range = |p: PortNo| p == 0 || p > nports;
    for a in acts {
        if let Action::Output(p) | Action::Set(SetField::InPort(p)) = a
            && out_of_range(*p)
        {
            return Some((
                format!("`{}` names port {p}: the switch has ports 1 to {nports}", text(a)),
                "ports are numbered from 1 in the order they are given",
            ));
        }
    }
    if let Some(first) = acts.iter().position(|a| matches!(a, Action::Output(_) | Action::InPort))
        && let Some(late) = acts[first..].iter().find(|a| rewrites(a))
    {
        return Some((
            format!(
                "`{}` after `{}`: the frame would leave changed by a later action",
                text(late),
                text(&acts[first])
            ),
            ONE_COPY,
        ));
    }
    // Every ingress the match allows: does any port get the frame twice?
    let (v, m) = rule.matches.field(Field::InPort);
    let ingress: Vec<PortNo> =
        if m == Field::InPort.full() { vec![v as PortNo] } else { (1..=nports).collect() };
    for in_port in ingress {
        let mut cur = in_port;
        let mut sent = 0u64;
        for a in acts {
            let to = match *a {
                Action::Output(p) if p != cur => p,
                Action::InPort => cur,
                Action::Set(SetField::InPort(p)) => {
                    cur = p;
                    continue;
                }
                _ => continue,
            };
            let bit = 1u64 << ((to - 1) % 64);
            if sent & bit != 0 {
                return Some((
                    format!(
                        "a frame from port {in_port} would leave twice by port {}",
                        print::port(to, ports)
                    ),
                    ONE_COPY,
                ));
            }
            sent |= bit;
        }
    }
    None
}

/// SIGINT/SIGTERM stop, SIGHUP reloads: the datapath commands' signals.
#[derive(Debug)]
pub struct Signals {
    stop: &'static AtomicBool,
    hup: &'static AtomicU64,
    hups_seen: u64,
}

impl Signals {
    /// Installs the handlers (without `SA_RESTART`; they only store to atomics).
    pub fn install() -> io::Result<Signals> {
        let stop = sift_sys::signal::install_stop_handler(&[libc::SIGINT, libc::SIGTERM])?;
        let hup = sift_sys::signal::install_count_handler(libc::SIGHUP)?;
        Ok(Signals { stop, hup, hups_seen: hup.load(Ordering::SeqCst) })
    }

    /// Whether SIGINT or SIGTERM came.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Whether SIGHUP came since the last call.
    pub fn reload_requested(&mut self) -> bool {
        let now = self.hup.load(Ordering::SeqCst);
        let asked = now != self.hups_seen;
        self.hups_seen = now;
        asked
    }
}

/// A thread's table replaced by newer rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The thread's receive queue.
    pub queue: u32,
    /// The generation of the rules ([`Switch::reload`]'s number).
    pub generation: u64,
    /// Rules now.
    pub rules: usize,
    /// Megaflows the new rules decide alike (kept).
    pub kept: u64,
    /// Megaflows removed.
    pub removed: u64,
}

/// What the threads share: the current rules, the frame count, what they report.
#[derive(Debug)]
struct Shared {
    /// The rules and their generation.
    rules: Mutex<(u64, Arc<Vec<Rule>>)>,
    /// The generation, for a cheap look at each batch.
    generation: AtomicU64,
    received: AtomicU64,
    count: Option<u64>,
    done: AtomicBool,
    exec_errors: AtomicU64,
    applied: Mutex<Vec<Applied>>,
    /// Each thread's caches and table when it ended.
    finished: Mutex<Vec<(u32, sift_flow::Datapath<FlowTable>)>>,
    start: Instant,
}

/// Counts a batch of `n` frames against `-c`; returns how many of them may be handled.
fn admit(received: &AtomicU64, count: Option<u64>, done: &AtomicBool, n: u64) -> u64 {
    let base = received.fetch_add(n, Ordering::Relaxed);
    match count {
        None => n,
        Some(c) => {
            if base + n >= c {
                done.store(true, Ordering::SeqCst);
            }
            c.saturating_sub(base).min(n)
        }
    }
}

/// A frame of a batch as the actions see it.
struct XdpFrame<'p, 'b>(&'p mut Packet<'b>);

impl FrameMut for XdpFrame<'_, '_> {
    fn bytes(&self) -> &[u8] {
        self.0.data()
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self.0.data_mut()
    }

    fn push_front(&mut self, n: usize) -> bool {
        self.0.push_head(n).is_some()
    }

    fn pull_front(&mut self, n: usize) -> bool {
        self.0.pull_head(n)
    }
}

/// One queue thread's pipeline: its caches and its copy of the rules.
struct SwitchPipe {
    queue: u32,
    dp: Option<sift_flow::Datapath<FlowTable>>,
    generation: u64,
    shared: Arc<Shared>,
}

impl SwitchPipe {
    /// Replaces the table by the current rules, keeping the counters of rules whose priority
    /// and match stay; the caches are revalidated.
    fn catch_up(&mut self) {
        let (generation, rules) =
            self.shared.rules.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(dp) = self.dp.as_mut() else { return };
        let before = dp.counters();
        dp.update(|table| replace_rules(table, &rules));
        let after = dp.counters();
        self.generation = generation;
        let applied = Applied {
            queue: self.queue,
            generation,
            rules: rules.len(),
            kept: after.revalidated_kept - before.revalidated_kept,
            removed: after.removed - before.removed,
        };
        self.shared.applied.lock().unwrap_or_else(PoisonError::into_inner).push(applied);
    }
}

/// `table` with `rules` instead of its own; rules with the priority and match of an old one
/// start from its counters.
fn replace_rules(table: &mut FlowTable, rules: &[Rule]) {
    let old: Vec<(u16, sift_flow::Match, RuleStats)> =
        table.rules().map(|(r, s)| (r.priority, r.matches, s)).collect();
    let misses = table.miss_stats();
    *table = FlowTable::with_rules(rules.iter().cloned());
    let new: Vec<(u16, sift_flow::Match)> =
        table.rules().map(|(r, _)| (r.priority, r.matches)).collect();
    for (i, (prio, m)) in new.iter().enumerate() {
        if let Some((_, _, s)) = old.iter().find(|(p, om, _)| p == prio && om == m) {
            table.credit(i as u64, s.packets, s.bytes);
        }
    }
    table.credit(NO_RULE, misses.packets, misses.bytes);
}

impl Pipeline for SwitchPipe {
    fn process(&mut self, batch: &mut Batch<'_>) {
        if self.shared.generation.load(Ordering::Acquire) != self.generation {
            self.catch_up();
        }
        let Some(dp) = self.dp.as_mut() else { return };
        let sh = &self.shared;
        let allowed = admit(&sh.received, sh.count, &sh.done, batch.len() as u64);
        dp.set_now((sh.start.elapsed().as_nanos() as u64).max(1));
        let in_port = batch.in_port() as PortNo + 1;
        let (mut i, mut errors) = (0u64, 0u64);
        batch.for_each(|mut p| {
            i += 1;
            if i > allowed {
                p.discard();
                return;
            }
            let key = FlowKey::extract(in_port, p.data());
            let (actions, _) = dp.lookup(&key, p.data());
            let mut outs = 0u64;
            let done = execute(actions, &mut XdpFrame(&mut p), in_port, |port, _| {
                // Numbers were checked against the ports when the rules were read.
                if (1..=64).contains(&port) {
                    outs |= 1 << (port - 1);
                }
            });
            if done.is_err() {
                errors += 1;
                outs = 0;
            }
            while outs != 0 {
                p.output(outs.trailing_zeros() as usize);
                outs &= outs - 1;
            }
        });
        if errors > 0 {
            sh.exec_errors.fetch_add(errors, Ordering::Relaxed);
        }
    }
}

impl Drop for SwitchPipe {
    fn drop(&mut self) {
        if self.shared.generation.load(Ordering::Acquire) != self.generation {
            self.catch_up();
        }
        if let Some(mut dp) = self.dp.take() {
            dp.sync_stats();
            let mut done = self.shared.finished.lock().unwrap_or_else(PoisonError::into_inner);
            done.push((self.queue, dp));
        }
    }
}

/// A running switch. Dropping it stops it (without a report).
#[derive(Debug)]
pub struct Switch {
    dp: Datapath,
    shared: Arc<Shared>,
    ports: PortMap,
}

/// What the switch did, when it stopped.
#[derive(Debug)]
pub struct Report {
    /// Per port: interface and counters.
    pub ports: Vec<(String, PortStats)>,
    /// The rules in priority order with their counters summed over the threads.
    pub rules: Vec<(Rule, RuleStats)>,
    /// Frames no rule matched (dropped).
    pub table_misses: RuleStats,
    /// Each thread's queue and megaflows, as `ovs-dpctl dump-flows` prints them.
    pub megaflows: Vec<(u32, String)>,
    /// The cache counters summed over the threads.
    pub caches: Counters,
    /// Frames whose actions could not be carried out (no headroom for a tag), dropped.
    pub exec_errors: u64,
    /// Frames received (those past `-c` included).
    pub frames: u64,
    /// The threads' counters.
    pub threads: Vec<ThreadStats>,
    /// How long the switch ran.
    pub elapsed: Duration,
    /// The port names and numbers.
    pub port_map: PortMap,
}

impl Report {
    /// The rules as `ovs-ofctl dump-flows` prints them, one a line.
    pub fn dump_flows(&self) -> String {
        self.rules
            .iter()
            .map(|(r, s)| print::dump_line(r, s.packets, s.bytes, &self.port_map) + "\n")
            .collect()
    }
}

/// Adds the counters `b` to `a`.
pub(crate) fn add_counters(a: &mut Counters, b: &Counters) {
    a.microflow_hits += b.microflow_hits;
    a.megaflow_hits += b.megaflow_hits;
    a.misses += b.misses;
    a.uncacheable += b.uncacheable;
    a.installed += b.installed;
    a.evicted += b.evicted;
    a.updates += b.updates;
    a.revalidated_kept += b.revalidated_kept;
    a.removed += b.removed;
}

impl Switch {
    /// Opens the ports and starts forwarding by `rules` (read by [`load_rules`] for these
    /// ports).
    pub fn start(cfg: &Config, rules: Vec<Rule>) -> Result<Switch, SwitchError> {
        let ports = port_map(&cfg.ports)?;
        let rules = Arc::new(rules);
        let shared = Arc::new(Shared {
            rules: Mutex::new((0, rules.clone())),
            generation: AtomicU64::new(0),
            received: AtomicU64::new(0),
            count: cfg.count,
            done: AtomicBool::new(false),
            exec_errors: AtomicU64::new(0),
            applied: Mutex::new(Vec::new()),
            finished: Mutex::new(Vec::new()),
            start: Instant::now(),
        });
        let (xdp_ports, opts) = cfg.xdp();
        let sh = shared.clone();
        let dp = Datapath::start(&xdp_ports, &opts, move |queue| SwitchPipe {
            queue,
            dp: Some(sift_flow::Datapath::new(
                FlowTable::with_rules(rules.iter().cloned()),
                CacheConfig::default(),
            )),
            generation: 0,
            shared: sh.clone(),
        })?;
        Ok(Switch { dp, shared, ports })
    }

    /// The ports as opened.
    pub fn ports(&self) -> Vec<PortInfo> {
        self.dp.ports()
    }

    /// The port names and numbers.
    pub fn port_map(&self) -> &PortMap {
        &self.ports
    }

    /// Replaces the rules (read by [`load_rules`]); each thread takes them at its next batch.
    /// Returns their generation.
    pub fn reload(&self, rules: Vec<Rule>) -> u64 {
        let mut cur = self.shared.rules.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = cur.0 + 1;
        *cur = (generation, Arc::new(rules));
        self.shared.generation.store(generation, Ordering::Release);
        generation
    }

    /// The rule changes the threads carried out since the last call.
    pub fn applied(&self) -> Vec<Applied> {
        std::mem::take(&mut *self.shared.applied.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.shared.received.load(Ordering::Relaxed)
    }

    /// Whether `-c`'s count of frames was reached (or a thread ended early).
    pub fn finished(&self) -> bool {
        self.shared.done.load(Ordering::SeqCst) || self.dp.is_degraded()
    }

    /// Stops (the datapath drains what it received) and reports.
    pub fn stop(self) -> Result<Report, SwitchError> {
        let Switch { dp, shared, ports } = self;
        let xdp = dp.stop()?;
        let elapsed = shared.start.elapsed();
        let mut finished =
            std::mem::take(&mut *shared.finished.lock().unwrap_or_else(PoisonError::into_inner));
        finished.sort_by_key(|(q, _)| *q);
        let now = (elapsed.as_nanos() as u64).max(1);
        let mut rules: Vec<(Rule, RuleStats)> = Vec::new();
        let mut table_misses = RuleStats::default();
        let mut caches = Counters::default();
        let mut megaflows = Vec::new();
        for (queue, dp) in &mut finished {
            dp.set_now(now);
            let table = dp.slow_path();
            if rules.is_empty() {
                rules = table.rules().map(|(r, s)| (r.clone(), s)).collect();
            } else {
                for ((_, sum), (_, s)) in rules.iter_mut().zip(table.rules()) {
                    sum.packets += s.packets;
                    sum.bytes += s.bytes;
                }
            }
            let m = table.miss_stats();
            table_misses.packets += m.packets;
            table_misses.bytes += m.bytes;
            add_counters(&mut caches, &dp.counters());
            megaflows.push((*queue, dp.dump_megaflows(&ports)));
        }
        if finished.is_empty() {
            let (_, current) = shared.rules.lock().unwrap_or_else(PoisonError::into_inner).clone();
            rules = current.iter().map(|r| (r.clone(), RuleStats::default())).collect();
        }
        let names = ports.iter().map(|(n, _)| n.to_string());
        Ok(Report {
            ports: names.zip(xdp.ports).collect(),
            rules,
            table_misses,
            megaflows,
            caches,
            exec_errors: shared.exec_errors.load(Ordering::Relaxed),
            frames: shared.received.load(Ordering::Relaxed),
            threads: xdp.threads,
            elapsed,
            port_map: ports,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> PortMap {
        port_map(&["pa".into(), "pb".into(), "pc".into()]).unwrap()
    }

    fn refused(text: &str) -> Vec<String> {
        match load_rules(text, &ports()) {
            Ok(_) => Vec::new(),
            Err(e) => e.errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn rule_sets_the_datapath_can_carry_out_are_read() {
        let text = "# two ports\n\
                    in_port=pa,actions=output:pb\n\
                    \n\
                    in_port=pb,udp,tp_dst=53,actions=set_field:10.0.0.53->nw_dst,output:pa,output:pc\n\
                    arp,actions=IN_PORT,output:pa,output:pb,output:pc\n\
                    in_port=pc,actions=set_field:pa->in_port,output:pb,output:pc\n\
                    tcp,actions=drop\n";
        let rules = load_rules(text, &ports()).unwrap();
        assert_eq!(rules.len(), 5);
    }

    #[test]
    fn what_needs_copies_or_ports_it_lacks_is_refused_where_it_is_written() {
        assert_eq!(
            refused(
                "in_port=pa,actions=output:pb\nin_port=pa,udp,actions=output:pb,mod_tp_dst:9,output:pc\n"
            ),
            [
                "2:16: `set_field:9->tp_dst` after `output:pb`: the frame would leave changed by a later action"
            ]
        );
        assert_eq!(
            refused("actions=output:pb,push_vlan:0x8100,output:pc\n"),
            [
                "1:1: `push_vlan:0x8100` after `output:pb`: the frame would leave changed by a later action"
            ]
        );
        assert_eq!(
            refused("in_port=pa,actions=output:pb,output:pb\n"),
            ["1:12: a frame from port 1 would leave twice by port pb"]
        );
        // IN_PORT after the ingress was changed, and the old ingress named too.
        assert_eq!(
            refused("in_port=pa,actions=set_field:pb->in_port,output:pa,IN_PORT,output:pa\n"),
            ["1:12: a frame from port 1 would leave twice by port pa"]
        );
        assert_eq!(
            refused("actions=output:7\n"),
            ["1:1: `output:7` names port 7: the switch has ports 1 to 3"]
        );
        // Without an in_port, every ingress: from pc, output:pb twice.
        assert_eq!(
            refused("actions=output:pb,IN_PORT,output:pb\n").len(),
            1,
            "output:pb then output:pb again"
        );
        // An output to the ingress is skipped (OpenFlow), so it is no second copy.
        assert!(refused("in_port=pb,actions=output:pb,IN_PORT\n").is_empty());
    }

    #[test]
    fn unchanged_rules_keep_their_counters_across_a_reload() {
        let p = ports();
        let old = parse_rules("priority=5,udp,actions=output:pb\ntcp,actions=drop\n", &p).unwrap();
        let mut t = FlowTable::with_rules(old);
        t.credit(0, 3, 300); // tcp (priority 32768 first)
        t.credit(1, 2, 200);
        t.credit(NO_RULE, 1, 60);
        let new = parse_rules("priority=5,udp,actions=output:pc\narp,actions=drop\n", &p).unwrap();
        replace_rules(&mut t, &new);
        let stats: Vec<(u64, u64)> = t.rules().map(|(_, s)| (s.packets, s.bytes)).collect();
        assert_eq!(stats, [(0, 0), (2, 200)]);
        assert_eq!(t.miss_stats(), RuleStats { packets: 1, bytes: 60 });
    }
}
