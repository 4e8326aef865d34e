//! The caches in front of pf are exact: generated frames of every shape (repeated flows, and
//! the same flow keys with other bytes where pf reads them: IP options, fragments, extension
//! headers, VLAN tags, urgent pointers, reserved bits, truncation, padding) go through
//! `sift::pf_between::PfCache` and through `between::judge` alone, each on its own copy of one
//! firewall; every frame's verdicts and bytes out, and the state tables' inserts and removals,
//! must be equal. The clock moves, states are created, expire and are purged (more than one
//! purge slice: purge work is owed across frames), the rules are reloaded halfway.

use std::sync::Arc;

use sift::pf_between::{Outcome, PfCache, SharedPf, cacheable_shape};
use sift_firewall::{Firewall, Settings, between};
use sift_flow::CacheConfig;
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};
use sift_testkit::Rng;

const IFS: [&str; 2] = ["pa", "pb"];

/// The rule set `text` read as `sift pf run` reads it (`set` options applied).
fn ruleset(text: &str) -> (sift_pf::Ruleset, Settings) {
    let host = FixtureHost::openbsd(".");
    let opts = Options { verbose: true, ..Options::default() };
    let out = pfctl("pf.conf", text, &opts, &host);
    assert_eq!(out.status, 0, "{}", out.render_errors());
    (out.ruleset, Settings::from_pfctl_verbose(&out.stdout).unwrap())
}

fn firewall(text: &str) -> Firewall {
    let (rules, settings) = ruleset(text);
    let mut fw = Firewall::new(&rules, &FixtureHost::openbsd(".")).unwrap();
    fw.set_settings(settings);
    fw.seed(7);
    fw
}

fn reload(fw: &mut Firewall, text: &str) {
    let (rules, _) = ruleset(text);
    fw.load_anchor("", &rules, &FixtureHost::openbsd(".")).unwrap();
}

/// Short timeouts and a fast purge, so states come and go within a run.
const TIMEOUTS: &str = "set timeout { tcp.first 3, tcp.opening 3, tcp.established 6, \
    tcp.closing 3, tcp.finwait 2, tcp.closed 2, udp.first 3, udp.single 3, udp.multiple 4, \
    interval 2 }\n";

/// Eligible: `block`, `no state` and `keep state` rules, flags, TOS, both families.
const MIXED: &str = "block all
pass in on pa proto udp from 10.1.0.0/16 to any port 1000:1999 no state
pass out on pb proto udp to port 1000:1999 no state
pass in on pa proto tcp to port 80 flags S/SA keep state
pass out on pb proto tcp to port 80 keep state
pass in on pb proto udp to port 53 keep state
pass out on pa proto udp to port 53 keep state
block in quick on pa proto tcp to port 23
pass quick proto tcp to port 443 flags any no state
pass inet6 proto udp no state
pass proto tcp from 10.1.2.0/24 tos 0x10 flags any no state
";

/// Eligible, no state at all.
const STATELESS: &str = "block all
pass proto udp to port { 53 1000:1999 } no state
pass proto tcp from 10.1.0.0/16 to port { 80 443 } flags any no state
block quick proto tcp from 10.1.3.0/24
pass inet6 no state
";

/// Eligible, with `modulate state` and `synproxy state` (states that rewrite and answer).
const STATEFUL: &str = "block all
pass proto tcp to port 80 modulate state
pass proto tcp to port 443 synproxy state
pass proto udp to port 1000:1999 no state
pass proto udp to port 53 keep state
";

/// Not eligible: a `block return` rule.
const ANSWERS: &str = "pass all no state
block return in proto tcp to port 23
block return in proto udp to port 1500
";

/// What pf made of a frame, in comparable form.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    line: String,
    on: Vec<Vec<u8>>,
    back: Vec<Vec<u8>>,
}

/// A flow: family, protocol, addresses, ports.
#[derive(Clone, Copy, Debug)]
struct Flow {
    v6: bool,
    proto: u8,
    src: [u8; 16],
    dst: [u8; 16],
    sport: u16,
    dport: u16,
}

fn addr4(a: [u8; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&a);
    b
}

fn flows(rng: &mut Rng, n: usize) -> Vec<Flow> {
    let ports = [23u16, 53, 80, 443, 1000, 1500, 1999, 2000, 8080];
    (0..n)
        .map(|_| {
            let v6 = rng.chance(15);
            let proto = rng.pick(&[6u8, 6, 17, 17, 1]);
            let (src, dst) = if v6 {
                let mut s = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
                let mut d = s;
                s[15] = rng.below(4) as u8 + 1;
                d[15] = 0x10 + rng.below(4) as u8;
                (s, d)
            } else {
                let s = addr4([10, 1, rng.below(4) as u8, rng.below(8) as u8 + 1]);
                let d = addr4([rng.pick(&[10u8, 192]), 2, 0, rng.below(4) as u8 + 1]);
                (s, d)
            };
            Flow {
                v6,
                proto,
                src,
                dst,
                sport: 30000 + rng.below(8) as u16,
                dport: rng.pick(&ports),
            }
        })
        .collect()
}

fn be(v: u16) -> [u8; 2] {
    v.to_be_bytes()
}

/// A frame of `flow` (reversed when `back`), with everything outside the flow key drawn, and
/// now and then another shape.
fn frame(rng: &mut Rng, flow: &Flow, back: bool) -> Vec<u8> {
    let (src, dst, sport, dport) = if back {
        (flow.dst, flow.src, flow.dport, flow.sport)
    } else {
        (flow.src, flow.dst, flow.sport, flow.dport)
    };
    // The transport header and its payload.
    let mut l4 = Vec::new();
    let payload = rng.below(40) as usize;
    match flow.proto {
        6 => {
            l4.extend_from_slice(&be(sport));
            l4.extend_from_slice(&be(dport));
            l4.extend_from_slice(&(rng.next() as u32).to_be_bytes());
            l4.extend_from_slice(&(rng.next() as u32).to_be_bytes());
            let opts = if rng.chance(20) { 4 } else { 0 };
            let mut off = (5 + opts / 4) << 4;
            if rng.chance(3) {
                off |= 0x02; // a reserved bit
            }
            if rng.chance(2) {
                off = rng.pick(&[0x40u8, 0xf0]); // a data offset that cannot be or does not fit
            }
            let flags = rng.pick(&[
                0x02u8, 0x02, 0x12, 0x10, 0x10, 0x18, 0x11, 0x04, 0x14, 0x01, 0x03, 0x06, 0x20,
                0x00, 0x30, 0xc2,
            ]);
            l4.extend_from_slice(&[off, flags]);
            l4.extend_from_slice(&be(rng.below(65536) as u16));
            l4.extend_from_slice(&[0, 0]); // checksum (pf does not read it)
            let urgent = if rng.chance(5) { rng.below(65535) as u16 + 1 } else { 0 };
            l4.extend_from_slice(&be(urgent));
            // NOPs.
            l4.extend(std::iter::repeat_n(1, usize::from(opts)));
        }
        17 => {
            l4.extend_from_slice(&be(sport));
            l4.extend_from_slice(&be(dport));
            l4.extend_from_slice(&be((8 + payload) as u16));
            l4.extend_from_slice(&[0, 0]);
        }
        _ => {
            let (ty, code) = (rng.pick(&[8u8, 0, 3, 11]), rng.below(2) as u8);
            l4.extend_from_slice(&[if flow.v6 { ty + 128 } else { ty }, code, 0, 0, 0, 1, 0, 1]);
        }
    }
    for _ in 0..payload {
        l4.push(rng.next() as u8);
    }
    let tos = rng.pick(&[0u8, 0, 0, 0x10, 0x11, 0x02]);
    let ttl = if rng.chance(90) { 64 } else { rng.below(256) as u8 };
    let proto = if flow.v6 && flow.proto == 1 { 58 } else { flow.proto };
    let mut ip = Vec::new();
    if flow.v6 {
        let ext = rng.chance(4);
        let plen = l4.len() + if ext { 8 } else { 0 };
        ip.extend_from_slice(&[0x60 | (tos >> 4), tos << 4, 0, 0]);
        ip.extend_from_slice(&be(plen as u16));
        ip.push(if ext { 0 } else { proto });
        ip.push(ttl);
        ip.extend_from_slice(&src);
        ip.extend_from_slice(&dst);
        if ext {
            // Hop-by-hop options: padding only.
            ip.extend_from_slice(&[proto, 0, 1, 4, 0, 0, 0, 0]);
        }
    } else {
        let opts = rng.chance(3);
        let hlen = if opts { 24 } else { 20 };
        let total = hlen + l4.len();
        ip.push(if opts { 0x46 } else { 0x45 });
        ip.push(tos);
        ip.extend_from_slice(&be(total as u16));
        ip.extend_from_slice(&be(rng.below(65536) as u16));
        let frag: u16 = if rng.chance(3) {
            rng.pick(&[0x2000u16, 0x2001, 0x0001, 0x0010])
        } else if rng.chance(30) {
            0x4000 // DF
        } else {
            0
        };
        ip.extend_from_slice(&be(frag));
        ip.extend_from_slice(&[ttl, proto, 0, 0]);
        ip.extend_from_slice(&src[..4]);
        ip.extend_from_slice(&dst[..4]);
        if opts {
            ip.extend_from_slice(&[1, 1, 1, 0]);
        }
    }
    ip.extend_from_slice(&l4);
    let mut f = Vec::new();
    let (mac_a, mac_b) = ([2u8, 0, 0, 0, 0, 0xa], [2u8, 0, 0, 0, 0, 0xb]);
    let (d, s) = if back { (mac_a, mac_b) } else { (mac_b, mac_a) };
    f.extend_from_slice(&d);
    f.extend_from_slice(&s);
    if rng.chance(3) {
        f.extend_from_slice(&[0x81, 0, 0, rng.pick(&[5u8, 7])]);
    }
    let ethertype: u16 = if rng.chance(2) {
        0x0806
    } else if flow.v6 {
        0x86dd
    } else {
        0x0800
    };
    f.extend_from_slice(&be(ethertype));
    f.extend_from_slice(&ip);
    if rng.chance(10) {
        // Ethernet padding after the IP packet.
        f.extend(std::iter::repeat_n(0, rng.below(12) as usize + 1));
    }
    if rng.chance(3) {
        f.truncate(rng.below(f.len() as u64) as usize);
    }
    f
}

fn seen_of_judge(fw: &mut Firewall, f: &[u8], from: usize, now: u64) -> Seen {
    let mut line = String::new();
    let fate = between::judge(fw, 1, f, IFS[from], IFS[from ^ 1], now, &mut line);
    Seen { line, on: fate.on, back: fate.back }
}

/// Runs `n` frames through both paths; the rules become `after` halfway. Returns the frames
/// the caches answered.
fn differential(name: &str, seed: u64, rules: &str, after: &str, n: usize) -> u64 {
    let text = format!("{TIMEOUTS}{rules}");
    let mut alone = firewall(&text);
    let shared = Arc::new(SharedPf::new(firewall(&text), IFS.map(String::from)));
    let mut cache =
        PfCache::new(shared.clone(), CacheConfig { seed: Some(seed), ..CacheConfig::default() });
    let mut rng = Rng(seed);
    let mut pool = flows(&mut rng, 60);
    // A busy UDP conversation that states follow (its replies come from pb).
    pool[0] = Flow {
        v6: false,
        proto: 17,
        src: addr4([10, 1, 0, 1]),
        dst: addr4([10, 2, 0, 1]),
        sport: 30000,
        dport: 53,
    };
    let mut now = 1_000u64;
    let mut answered = 0u64;
    let mut shaped = 0u64;
    for i in 0..n {
        if i == n / 2 {
            let text = format!("{TIMEOUTS}{after}");
            reload(&mut alone, &text);
            shared.reload(|fw| reload(fw, &text));
        }
        if rng.chance(1) {
            now += rng.below(3);
        }
        // A few flows often; in the first half new SYNs to port 80 often (many states, purge
        // work owed), in the second seldom (long quiet spells for the caches).
        let hot = if rng.chance(70) { 8 } else { 60 };
        let mut flow = pool[rng.below(hot) as usize];
        let syns = if i < n / 2 { 100 } else { 1 };
        if rng.below(1000) < syns {
            flow.proto = 6;
            flow.dport = 80;
            flow.sport = 1024 + rng.below(60_000) as u16;
        }
        let back = rng.chance(30);
        let f = frame(&mut rng, &flow, back);
        shaped += u64::from(cacheable_shape(&f));
        let from = usize::from(back);
        let want = seen_of_judge(&mut alone, &f, from, now);
        let got = match cache.judge(&f, from, now) {
            Outcome::Cached { pass, line } => {
                answered += 1;
                Seen {
                    line: line.to_string(),
                    on: if pass { vec![f.clone()] } else { vec![] },
                    back: vec![],
                }
            }
            Outcome::Judged(j) => Seen { line: j.line, on: j.fate.on, back: j.fate.back },
        };
        assert_eq!(got, want, "frame {i} at {now} from {}: {f:02x?}", IFS[from]);
        // The state tables move alike: states made, expired, purged (the purge's slices too).
        let (a, b) = (alone.states().counters(), shared.with(|fw| fw.states().counters()));
        assert_eq!((a.inserts, a.removals), (b.inserts, b.removals), "state tables at frame {i}");
    }
    assert_eq!(alone.states().len(), shared.with(|fw| fw.states().len()));
    let c = cache.counters();
    assert_eq!(c.microflow_hits + c.megaflow_hits, answered);
    assert!(shaped > n as u64 / 2, "{shaped} frames of the cacheable shape");
    eprintln!(
        "{name}: {n} frames, {answered} answered by the caches, {c:?}, {} bypassed",
        cache.bypassed()
    );
    answered
}

#[test]
fn cached_verdicts_and_bytes_equal_pf_alone() {
    let n = 100_000;
    let hits = differential("mixed", 0x5151, MIXED, STATELESS, n);
    assert!(hits > n as u64 / 10, "{hits} cache answers");
    let hits = differential("stateless", 0x7272, STATELESS, MIXED, n);
    assert!(hits > n as u64 / 5, "{hits} cache answers");
    let hits = differential("stateful", 0x9393, STATEFUL, MIXED, n);
    assert!(hits > 0);
}

#[test]
fn rule_sets_that_answer_are_never_cached() {
    let shared = SharedPf::new(firewall(ANSWERS), IFS.map(String::from));
    let why = shared.ineligible().expect("not eligible");
    assert_eq!(why.to_string(), "rule @1: `return` (an answer)");
    assert_eq!(differential("answers", 0x1313, ANSWERS, ANSWERS, 20_000), 0);
    // Eligible again after a reload, and then cached.
    assert!(differential("answers, then stateless", 0x2424, ANSWERS, STATELESS, 20_000) > 0);
}
