//! Shared test support: rule sets loaded as `sift pf` loads them, the kernel oracle, and the
//! equivalence harness that runs each frame through the userspace engine (`Firewall::test`)
//! and through the program (in sift's VM or in the kernel) and compares what they decide, the
//! states they keep, their counters and their pflog records.
#![allow(dead_code)] // Each test uses part of it.

use sift_firewall::frame::{Frame, ip_of};
use sift_firewall::packet::{Direction, Family, Meta, Packet};
use sift_firewall::state::{Peer, State};
use sift_firewall::{Decision, Firewall, Settings, Verdict, pflog};
use sift_firewall_ebpf::kernel::KernelPf;
use sift_firewall_ebpf::layout::{self, Counters, LogRecord, RuleCounters};
use sift_firewall_ebpf::read::{self, MapsRead};
use sift_firewall_ebpf::vm::VmPf;
use sift_firewall_ebpf::{Hook, RuleSet};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

/// sift-firewall's test support: TCP conversations and their packets, TCP flags by letter.
#[path = "../../../firewall/tests/support/mod.rs"]
mod fw_support;
#[allow(unused_imports)] // each test binary uses its part
pub use fw_support::conversation::{segment, tcp_packet};

/// A rule set read as pfctl reads it, loaded, with its `set` options.
pub fn firewall(rules: &str) -> (Firewall, FixtureHost, Settings) {
    let host = FixtureHost::openbsd(".");
    let opts = Options { verbose: true, ..Options::default() };
    let out = pfctl("pf.conf", rules, &opts, &host);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let mut fw = Firewall::new(&out.ruleset, &host).expect("load");
    let settings = Settings::from_pfctl_verbose(&out.stdout).expect("settings");
    fw.set_settings(settings.clone());
    (fw, host, settings)
}

/// Whether the kernel can load eBPF here (root): SKIP otherwise, a failure under
/// `SIFT_REQUIRE_ORACLES=1`.
pub fn kernel_available() -> bool {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing("kernel bpf(2)", "not root").unwrap_or(false);
    }
    match sift_sys::bpf::map_create(sift_ebpf::MapType::Array as u32, 4, 4, 1, 0) {
        Ok(_) => true,
        Err(e) if sift_sys::bpf::is_unavailable(&e) => {
            sift_testkit::oracle_missing("kernel bpf(2)", e).unwrap_or(false)
        }
        Err(e) => panic!("BPF_MAP_CREATE: {e}"),
    }
}

/// Where the program runs.
pub enum Engine {
    /// sift's VM, its clock set to each packet's time.
    Vm(Box<VmPf>),
    /// The kernel, through `BPF_PROG_TEST_RUN`; its clock is its own.
    Kernel(KernelPf),
}

impl Engine {
    fn maps(&self) -> &dyn MapsRead {
        match self {
            Engine::Vm(v) => &**v,
            Engine::Kernel(k) => k,
        }
    }
}

/// What the harness saw.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Frames run through both.
    pub packets: usize,
    /// Frames the kernel's test run does not take (too short, too long): run through neither.
    pub skipped: usize,
    /// Passed.
    pub passed: usize,
    /// Blocked.
    pub blocked: usize,
    /// Decided by a state.
    pub from_state: usize,
    /// Not IPv4 or IPv6.
    pub not_ip: usize,
    /// Logged.
    pub logged: usize,
    /// The most states alive at once.
    pub states_max: usize,
}

/// A state as both engines are compared on it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cmp {
    /// Family (IPv6?), protocol, addresses, ports.
    pub key: (bool, u8, [u128; 2], [u16; 2]),
    /// Created going out.
    pub out: bool,
    /// The peers: seqlo, seqhi, max_win, wscale, state.
    pub peers: [(u32, u32, u16, u8, u8); 2],
    /// Timeout index.
    pub timeout: usize,
    /// Packets and bytes each way.
    pub counts: [u64; 4],
    /// The rule's number.
    pub rule: Option<u32>,
    /// Sloppy.
    pub sloppy: bool,
    /// Creation and last activity (compared in the VM only).
    pub times: Option<(u64, u64)>,
}

fn peer(p: &Peer) -> (u32, u32, u16, u8, u8) {
    (p.seqlo, p.seqhi, p.max_win, p.wscale, p.state)
}

fn cmp(s: &State, times: bool) -> Cmp {
    let k = &s.key[0];
    Cmp {
        key: (k.af == Family::Inet6, k.proto, k.addr, k.port),
        out: s.direction == Direction::Out,
        peers: [peer(&s.src), peer(&s.dst)],
        timeout: s.timeout,
        counts: [s.packets[0], s.packets[1], s.bytes[0], s.bytes[1]],
        rule: s.rule.map(|r| r.nr),
        sloppy: s.sloppy,
        times: times.then_some((s.creation, s.last)),
    }
}

/// The userspace engine and the program, fed the same frames.
pub struct Harness {
    /// The userspace engine.
    pub fw: Firewall,
    /// Names.
    pub host: FixtureHost,
    /// The rule set as the program has it.
    pub rules: RuleSet,
    /// The program.
    pub engine: Engine,
    /// The interface.
    pub ifname: String,
    /// For packets going in: XDP or TC ingress.
    pub in_hook: Hook,
    /// What was seen.
    pub stats: Stats,
    /// Expected global counters (reasons, packets by direction and verdict).
    reasons: [u64; layout::REASONS],
    packets: [[u64; 2]; 2],
    not_ip: u64,
    /// Expected rule counters (by rule index, the default rule last): packets and bytes by
    /// direction, states.
    rule_counts: Vec<RuleCounters>,
    /// Expected pflog records (VM).
    logs: Vec<Vec<u8>>,
    /// The userspace clock of the last packet.
    pub now: u64,
}

impl Harness {
    /// The rule set `text` for interface `ifname` on `engine` (`None`: the kernel is not
    /// available, SKIP).
    pub fn new(text: &str, ifname: &str, kernel: bool) -> Option<Harness> {
        if kernel && !kernel_available() {
            return None;
        }
        let (fw, host, settings) = firewall(text);
        let rules = RuleSet::compile(&fw, &host, ifname, &settings)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let engine = if kernel {
            Engine::Kernel(KernelPf::load(&rules).unwrap_or_else(|e| panic!("{e}")))
        } else {
            Engine::Vm(Box::new(VmPf::new(&rules, 7).unwrap_or_else(|e| panic!("{e}"))))
        };
        let n = rules.rules.len();
        Some(Harness {
            fw,
            host,
            rules,
            engine,
            ifname: ifname.to_string(),
            in_hook: Hook::Xdp,
            stats: Stats::default(),
            reasons: [0; layout::REASONS],
            packets: [[0; 2]; 2],
            not_ip: 0,
            rule_counts: vec![RuleCounters::default(); n + 1],
            logs: Vec::new(),
            now: 0,
        })
    }

    fn is_kernel(&self) -> bool {
        matches!(self.engine, Engine::Kernel(_))
    }

    /// Runs an Ethernet frame going `dir` at `now` seconds (plus `ns`) through both engines
    /// and compares their verdicts; returns the userspace decision (`None`: not IP, or a
    /// frame the kernel's test run does not take).
    pub fn packet(
        &mut self,
        frame: &[u8],
        dir: Direction,
        now: u64,
        ns: u32,
        what: &str,
    ) -> Option<Decision> {
        let hook = match dir {
            Direction::In => self.in_hook,
            Direction::Out => Hook::TcEgress,
        };
        // The kernel's clock is its own: the userspace engine's stays at 0 (nothing expires
        // in a test's seconds).
        let now = if self.is_kernel() { 0 } else { now };
        let got = match &mut self.engine {
            Engine::Vm(vm) => {
                let mut f = frame.to_vec();
                let clock = now * 1_000_000_000 + u64::from(ns);
                Some(vm.run(hook, &mut f, clock).unwrap_or_else(|e| panic!("{what}: {e}")))
            }
            Engine::Kernel(k) => k.run(hook, frame).unwrap_or_else(|e| panic!("{what}: {e}")),
        };
        let Some(got) = got else {
            self.stats.skipped += 1;
            return None;
        };
        self.now = now;
        self.stats.packets += 1;
        let d = match ip_of(1, frame) {
            Frame::Ip { ip, .. } => {
                let mut meta = Meta::new(&self.ifname, dir);
                meta.now = now;
                let d = self.fw.test_bytes(ip, &meta);
                self.expect(ip, &d, dir);
                Some(d)
            }
            Frame::Other => {
                self.stats.not_ip += 1;
                self.not_ip += 1;
                None
            }
        };
        let want = d.as_ref().map_or(Verdict::Pass, |d| d.action);
        assert_eq!(got, want, "{what}: verdict (userspace {d:?})");
        match got {
            Verdict::Pass => self.stats.passed += 1,
            Verdict::Block => self.stats.blocked += 1,
        }
        d
    }

    /// The counters and pflog records the program should show for decision `d`.
    fn expect(&mut self, ip: &[u8], d: &Decision, dir: Direction) {
        let di = usize::from(dir == Direction::Out);
        let blocked = usize::from(d.action == Verdict::Block);
        self.packets[di][blocked] += 1;
        if d.from_state {
            self.stats.from_state += 1;
        }
        if !(d.from_state && d.action == Verdict::Pass) {
            self.reasons[usize::from(d.reason.code())] += 1;
        }
        let Ok(pkt) = Packet::parse(ip) else { return };
        let n = self.rules.rules.len();
        let slot = d.rule.map_or(n, |r| r.nr as usize);
        let rc = &mut self.rule_counts[slot];
        rc.packets[di] += 1;
        rc.bytes[di] += u64::from(pkt.len);
        if d.state.is_some() && !d.from_state && d.action == Verdict::Pass {
            rc.states += 1;
        }
        if pflog::logs(d) {
            self.stats.logged += 1;
            let mut meta = Meta::new(&self.ifname, dir);
            meta.now = self.now;
            let mut rec = pflog::record(d, &pkt, &meta, "", None);
            rec.truncate(pflog::HEADER_LEN + layout::LOG_SNAP);
            self.logs.push(rec);
        }
    }

    /// The states both keep, alive at the last packet's time, in key order.
    pub fn states(&self) -> (Vec<Cmp>, Vec<Cmp>) {
        let times = !self.is_kernel();
        let t = self.fw.states();
        let mut user: Vec<Cmp> =
            t.iter().filter(|(_, s)| t.expires(s) > self.now).map(|(_, s)| cmp(s, times)).collect();
        user.sort();
        let mut prog: Vec<Cmp> = read::states(self.engine.maps())
            .expect("read the states")
            .iter()
            .filter(|k| !times || self.rules.expires(&k.value) > self.now)
            .map(|k| cmp(&self.rules.state(k), times))
            .collect();
        prog.sort();
        (user, prog)
    }

    /// Compares the states.
    pub fn check_states(&mut self, what: &str) {
        let (user, prog) = self.states();
        self.stats.states_max = self.stats.states_max.max(user.len());
        assert_eq!(prog, user, "{what}: states (program, userspace)");
    }

    /// Compares the counters: pf's reasons, packets by direction and verdict, state searches
    /// and inserts, each rule's packets, bytes and states.
    pub fn check_counters(&self, what: &str) {
        let c: Counters = read::counters(self.engine.maps()).expect("counters");
        assert_eq!(c.reasons, self.reasons, "{what}: reasons");
        assert_eq!(c.packets, self.packets, "{what}: packets");
        assert_eq!(c.not_ip, self.not_ip, "{what}: not IP");
        let sc = self.fw.states().counters();
        assert_eq!((c.searches, c.inserts), (sc.searches, sc.inserts), "{what}: searches, inserts");
        let (rules, default) =
            read::rule_counters(self.engine.maps(), self.rules.rules.len()).expect("rules");
        let n = self.rules.rules.len();
        for (i, (got, want)) in rules.iter().chain([&default]).zip(&self.rule_counts).enumerate() {
            let slot = if i == n { "default".to_string() } else { format!("@{i}") };
            assert_eq!(
                (got.packets, got.bytes, got.states),
                (want.packets, want.bytes, want.states),
                "{what}: rule {slot}"
            );
        }
    }

    /// Compares the pflog records the program wrote since the last check.
    pub fn check_log(&mut self, what: &str) {
        let recs: Vec<LogRecord> = match &mut self.engine {
            Engine::Vm(vm) => vm.drain_log(),
            Engine::Kernel(k) => k.drain_log().expect("read the ring buffer"),
        };
        let got: Vec<Vec<u8>> =
            recs.iter().map(|r| self.rules.pflog_record(r, &|_| String::new())).collect();
        assert_eq!(got.len(), self.logs.len(), "{what}: pflog records");
        for (i, (g, w)) in got.iter().zip(&self.logs).enumerate() {
            assert_eq!(g, w, "{what}: pflog record {i}");
        }
        self.logs.clear();
    }
}

/// An Ethernet frame around an IP packet.
pub fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    f.extend_from_slice(if ip.first().is_some_and(|b| b >> 4 == 6) {
        &[0x86, 0xdd]
    } else {
        &[0x08, 0x00]
    });
    f.extend_from_slice(ip);
    f
}

/// Rule sets for generated traffic (interface em0, the generator's LAN inside).
pub const POLICIES: &[(&str, &str)] = &[
    ("pass all", "pass all\n"),
    ("out keep state", "block all\npass out all keep state\n"),
    (
        "tables, quick, flags, no state, log",
        "table <servers> { 192.0.2.0/24, 198.51.100.0/25, 2001:db8:2::/64 }\n\
         table <bad> { 203.0.113.0/24, !203.0.113.7 }\n\
         block log all\n\
         block in log quick from <bad>\n\
         pass out proto tcp to <servers> port { 80, 443, 8080 } flags S/SA keep state\n\
         pass out proto tcp to any port 8443 flags S/SA keep state (sloppy)\n\
         pass out proto udp to any port { 53, 514 } keep state\n\
         pass out inet proto icmp all keep state\n\
         pass out inet6 proto ipv6-icmp all keep state\n\
         pass in inet proto icmp all icmp-type echoreq no state\n\
         pass out proto udp to port 9 no state\n\
         pass in log (all) proto tcp from 10.1.0.0/16 to any keep state\n",
    ),
    (
        "no state, quick blocks",
        "pass all no state\n\
         block out quick proto tcp to port 443\n\
         block in quick inet6 all\n\
         block out log proto udp from any to 10.0.0.53\n",
    ),
];

/// Whether a frame's packet comes from the generator's LAN (it leaves em0) or not (it
/// arrives).
pub fn direction(frame: &[u8], inside: &dyn Fn(&[u8]) -> bool) -> Direction {
    use sift_firewall::frame::{Frame, ip_of};
    let Frame::Ip { ip, .. } = ip_of(1, frame) else { return Direction::In };
    let src = match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= 16 => &ip[12..16],
        Some(6) if ip.len() >= 24 => &ip[8..24],
        _ => return Direction::In,
    };
    if inside(src) { Direction::Out } else { Direction::In }
}

pub fn generator_lan(src: &[u8]) -> bool {
    let (lan4, _) = sift_gen::pools::LAN_V4;
    (src.len() == 4 && src[..3] == lan4[..3])
        || (src.len() == 16 && src[..8] == sift_gen::pools::LAN_V6[..8])
}

/// sift-firewall's TCP conversations: each file's path and text.
pub fn tcp_cases() -> Vec<(std::path::PathBuf, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../firewall/tests/tcp");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("crates/firewall/tests/tcp")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files.into_iter().map(|f| (f.clone(), std::fs::read_to_string(&f).expect("read"))).collect()
}

/// One segment of a TCP conversation.
pub struct Segment {
    /// Its line number in the file.
    pub line: usize,
    /// The line.
    pub text: String,
    /// The Ethernet frame.
    pub frame: Vec<u8>,
    /// Client to server: out; server to client: in.
    pub dir: Direction,
    /// The time in seconds (`t=`, kept until changed).
    pub now: u64,
}

/// A TCP conversation (rules, `---`, packet lines: `c|s FLAGS seq= ack= win= ws= len= t=`,
/// client 10.0.0.1:40000, server 10.0.0.2:80): its rules and segments.
pub fn conversation(text: &str) -> (&str, Vec<Segment>) {
    let (rules, convo) = text.split_once("\n---\n").expect("a --- line");
    let mut now = 0u64;
    let mut out = Vec::new();
    for (i, line) in convo.lines().enumerate() {
        let Some(seg) = segment(line) else { continue };
        now = seg.now.unwrap_or(now);
        let frame = ethernet(&seg.bytes);
        out.push(Segment { line: i + 1, text: line.to_string(), frame, dir: seg.dir, now });
    }
    (rules, out)
}
