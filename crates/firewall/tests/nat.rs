//! Translation golden tests: each `tests/nat/*.txt` holds a rule set and packets; after each
//! packet come what pf decides and the packet as it leaves (`BLESS=1` rewrites those lines).
//! Every packet sift writes has its checksums recomputed from scratch here (an implementation
//! apart from the incremental updates under test) and the result printed (`sum ok`).
//!
//! ```text
//! rules:
//! match out on em0 from 10.0.0.0/8 nat-to 192.0.2.1
//! pass
//! packet out em0 udp 10.0.0.5:1234 > 198.51.100.7:53
//! > pass @1 state 0 | udp 192.0.2.1:61234 > 198.51.100.7:53 sum ok
//! ```
//!
//! Lines: `packet DIR IFACE PROTO SRC[:PORT] > DST[:PORT] [flags F] [id N] [type echo|reply]
//! [len N]` (PROTO `tcp`, `udp`, `icmp`, `icmp6`); `error DIR IFACE FROM TO TYPE CODE quoting
//! K` builds an ICMP (or ICMPv6) error from FROM to TO quoting output packet K (counted from
//! 0, as it left); `reply K` sends the answer to output packet K back (addresses and ports
//! swapped, the other direction, TCP flags SA / ICMP echo reply); `seed N` reseeds.

use std::fmt::Write;
use std::net::IpAddr;
use std::path::Path;

use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Decision, Firewall, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

mod support;
use support::{addr_port, flags};

/// One's-complement sum, written here apart from sift-wire's.
fn sum(data: &[u8], mut acc: u32) -> u32 {
    for c in data.chunks(2) {
        acc += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

fn pseudo(ip: &[u8], v6: bool, proto: u8, len: usize) -> u32 {
    let acc = if v6 { sum(&ip[8..40], 0) } else { sum(&ip[12..20], 0) };
    acc + u32::from(proto) + len as u32
}

/// Fills in every checksum of an IPv4/IPv6 packet (IP header, transport), from scratch.
fn fill(p: &mut [u8]) {
    let v6 = p[0] >> 4 == 6;
    let (hl, proto) = if v6 { (40, p[6]) } else { (usize::from(p[0] & 15) * 4, p[9]) };
    if !v6 {
        p[10..12].fill(0);
        let c = fold(sum(&p[..hl], 0));
        p[10..12].copy_from_slice(&c.to_be_bytes());
    }
    let at = match proto {
        6 => 16,
        17 => 6,
        1 | 58 => 2,
        _ => return,
    };
    let len = p.len() - hl;
    p[hl + at..hl + at + 2].fill(0);
    let acc = if proto == 1 { 0 } else { pseudo(p, v6, proto, len) };
    let mut c = fold(sum(&p[hl..], acc));
    if proto == 17 && c == 0 {
        c = 0xffff;
    }
    p[hl + at..hl + at + 2].copy_from_slice(&c.to_be_bytes());
}

/// Whether every checksum of `p` holds (and of the packet an ICMP error quotes, those the
/// quote holds whole).
fn sums_ok(p: &[u8]) -> bool {
    let v6 = p[0] >> 4 == 6;
    let (hl, proto) = if v6 { (40, p[6]) } else { (usize::from(p[0] & 15) * 4, p[9]) };
    if !v6 && fold(sum(&p[..hl], 0)) != 0 {
        return false;
    }
    let len = p.len() - hl;
    let ok = match proto {
        1 => fold(sum(&p[hl..], 0)) == 0,
        6 | 58 => fold(sum(&p[hl..], pseudo(p, v6, proto, len))) == 0,
        17 => p[hl + 6..hl + 8] == [0, 0] || fold(sum(&p[hl..], pseudo(p, v6, proto, len))) == 0,
        _ => true,
    };
    let error = matches!((proto, p.get(hl)), (1, Some(3 | 11)) | (58, Some(1..=4)));
    if ok && error {
        let q = &p[hl + 8..];
        if !v6 && q.len() >= 20 {
            let qhl = usize::from(q[0] & 15) * 4;
            return q.len() >= qhl && fold(sum(&q[..qhl], 0)) == 0;
        }
    }
    ok
}

fn ip_bytes(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// An IP packet around `l4` with protocol `proto`.
fn ip(src: IpAddr, dst: IpAddr, proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut p = match src {
        IpAddr::V4(_) => {
            let len = (20 + l4.len()) as u16;
            let mut h = vec![0x45, 0, 0, 0, 0x12, 0x34, 0, 0, 64, proto, 0, 0];
            h[2..4].copy_from_slice(&len.to_be_bytes());
            h
        }
        IpAddr::V6(_) => {
            let mut h = vec![0x60, 0, 0, 0, 0, 0, proto, 64];
            h[4..6].copy_from_slice(&(l4.len() as u16).to_be_bytes());
            h
        }
    };
    p.extend(ip_bytes(src));
    p.extend(ip_bytes(dst));
    p.extend_from_slice(l4);
    fill(&mut p);
    p
}

struct Spec {
    proto: String,
    src: (IpAddr, u16),
    dst: (IpAddr, u16),
    flags: u8,
    id: u16,
    echo_reply: bool,
    len: usize,
    /// TCP: sequence and acknowledgement numbers (default 1000 and, with ACK, 2000), a
    /// timestamp option (TSval, TSecr); IP: the TTL (hop limit).
    seq: Option<u32>,
    ack: Option<u32>,
    ts: Option<(u32, u32)>,
    ttl: Option<u8>,
}

impl Spec {
    /// A packet of `proto` from `src` to `dst` with everything else at its default.
    fn new(proto: &str, src: (IpAddr, u16), dst: (IpAddr, u16)) -> Spec {
        Spec {
            proto: proto.into(),
            src,
            dst,
            flags: 0,
            id: 0,
            echo_reply: false,
            len: 0,
            seq: None,
            ack: None,
            ts: None,
            ttl: None,
        }
    }
}

fn build(s: &Spec) -> Vec<u8> {
    let v6 = s.src.0.is_ipv6();
    let data = vec![0xa5u8; s.len];
    match s.proto.as_str() {
        "tcp" => {
            let mut t = vec![0u8; 20];
            t[0..2].copy_from_slice(&s.src.1.to_be_bytes());
            t[2..4].copy_from_slice(&s.dst.1.to_be_bytes());
            t[4..8].copy_from_slice(&s.seq.unwrap_or(1000).to_be_bytes());
            let ack = s.ack.unwrap_or(if s.flags & 0x10 != 0 { 2000 } else { 0 });
            t[8..12].copy_from_slice(&ack.to_be_bytes());
            t[12] = 5 << 4;
            t[13] = s.flags;
            t[14..16].copy_from_slice(&65535u16.to_be_bytes());
            if let Some((v, e)) = s.ts {
                t.extend([1, 1, 8, 10]);
                t.extend(v.to_be_bytes());
                t.extend(e.to_be_bytes());
                t[12] = 8 << 4;
            }
            t.extend(&data);
            let mut p = ip(s.src.0, s.dst.0, 6, &t);
            if let Some(ttl) = s.ttl {
                let at = if p[0] >> 4 == 4 { 8 } else { 7 };
                p[at] = ttl;
                fill(&mut p);
            }
            p
        }
        "udp" => {
            let mut u = vec![0u8; 8];
            u[0..2].copy_from_slice(&s.src.1.to_be_bytes());
            u[2..4].copy_from_slice(&s.dst.1.to_be_bytes());
            u[4..6].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
            u.extend(&data);
            ip(s.src.0, s.dst.0, 17, &u)
        }
        "icmp" | "icmp6" => {
            let ty = match (v6, s.echo_reply) {
                (false, false) => 8,
                (false, true) => 0,
                (true, false) => 128,
                (true, true) => 129,
            };
            let mut m = vec![ty, 0, 0, 0];
            m.extend(s.id.to_be_bytes());
            m.extend(1u16.to_be_bytes());
            m.extend(&data);
            ip(s.src.0, s.dst.0, if v6 { 58 } else { 1 }, &m)
        }
        p => panic!("protocol {p}"),
    }
}

/// An ICMP error from `from` to `to` quoting `quoted` (IPv4: the header and 8 bytes, as
/// routers do; IPv6: up to 1,232 bytes).
fn error(from: IpAddr, to: IpAddr, ty: u8, code: u8, quoted: &[u8]) -> Vec<u8> {
    let v6 = from.is_ipv6();
    let keep = if v6 {
        quoted.len().min(1232)
    } else {
        (usize::from(quoted[0] & 15) * 4 + 8).min(quoted.len())
    };
    let mut m = vec![ty, code, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&quoted[..keep]);
    ip(from, to, if v6 { 58 } else { 1 }, &m)
}

/// A one-line description of an IP packet.
fn describe(p: &[u8]) -> String {
    let v6 = p[0] >> 4 == 6;
    let (hl, proto) = if v6 { (40, p[6]) } else { (usize::from(p[0] & 15) * 4, p[9]) };
    let addr = |o: usize| -> IpAddr {
        if v6 {
            IpAddr::from(<[u8; 16]>::try_from(&p[o..o + 16]).unwrap())
        } else {
            IpAddr::from(<[u8; 4]>::try_from(&p[o..o + 4]).unwrap())
        }
    };
    let (s, d) = if v6 { (addr(8), addr(24)) } else { (addr(12), addr(16)) };
    let port = |a: IpAddr, o: usize| {
        let n = u16::from_be_bytes([p[o], p[o + 1]]);
        if v6 { format!("[{a}]:{n}") } else { format!("{a}:{n}") }
    };
    let l4 = &p[hl..];
    match proto {
        6 => format!(
            "tcp {} > {} [{}] seq {} ack {}{}",
            port(s, hl),
            port(d, hl + 2),
            l4.get(13).map_or("-".into(), |f| tcp_flags(*f)),
            u32::from_be_bytes(l4[4..8].try_into().unwrap()),
            // A quoted segment may end before its acknowledgement number.
            l4.get(8..12)
                .map_or("-".into(), |a| u32::from_be_bytes(a.try_into().unwrap()).to_string()),
            timestamps(l4)
        ),
        17 => format!("udp {} > {}", port(s, hl), port(d, hl + 2)),
        1 | 58 => {
            let id = u16::from_be_bytes([l4[4], l4[5]]);
            let name = if v6 { "icmp6" } else { "icmp" };
            if matches!((proto, l4[0]), (1, 3 | 11) | (58, 1..=4)) {
                format!(
                    "{name} {s} > {d} error {}/{} quoting [{}]",
                    l4[0],
                    l4[1],
                    describe(&l4[8..])
                )
            } else {
                format!("{name} {s} > {d} type {} id {id}", l4[0])
            }
        }
        n => format!("proto {n} {s} > {d}"),
    }
}

fn render(d: &Decision, out: &[u8]) -> String {
    let mut s = match d.action {
        Verdict::Pass => "pass".to_string(),
        Verdict::Block => format!("block {}", d.reason.name()),
    };
    match d.rule {
        Some(r) => write!(s, " @{}", r.nr).unwrap(),
        None => s.push_str(" @-1"),
    }
    if d.from_state {
        s.push_str(" from-state");
    }
    if let Some(id) = d.state {
        write!(s, " state {}", id.0).unwrap();
    }
    if d.held {
        write!(s, " held ({})", d.reason.name()).unwrap();
    }
    // What leaves: the packet itself, then pf's packets back and ahead.
    let mut part = |label: &str, p: &[u8]| {
        let ok = if sums_ok(p) { "ok" } else { "BAD" };
        write!(s, " |{label} {}{} sum {ok}", describe(p), ip_fields(p)).unwrap();
    };
    if d.action == Verdict::Pass && !d.held {
        part("", out);
    }
    if let Some(r) = &d.reply {
        part(" reply", r);
    }
    if let Some(r) = &d.ahead {
        part(" ahead", r);
    }
    s
}

/// The IP header fields scrubbing changes: TTL (hop limit), DF, the IPv4 id when not the
/// builder's.
fn ip_fields(p: &[u8]) -> String {
    if p[0] >> 4 == 6 {
        return format!(" hlim {}", p[7]);
    }
    let mut s = format!(" ttl {}", p[8]);
    if p[6] & 0x40 != 0 {
        s.push_str(" DF");
    }
    let id = u16::from_be_bytes([p[4], p[5]]);
    if id != 0x1234 {
        write!(s, " id {id}").unwrap();
    }
    s
}

/// ` ts V E` for a TCP header (and data) with a timestamp option.
fn timestamps(t: &[u8]) -> String {
    let hlen = t.get(12).map_or(20, |b| usize::from(b >> 4) * 4).min(t.len());
    let mut i = 20;
    while i < hlen {
        match t[i] {
            0 => break,
            1 => i += 1,
            8 if i + 10 <= hlen => {
                let w = |o: usize| u32::from_be_bytes(t[o..o + 4].try_into().unwrap());
                return format!(" ts {} {}", w(i + 2), w(i + 6));
            }
            _ => i += usize::from(t.get(i + 1).copied().unwrap_or(1)).max(1),
        }
    }
    String::new()
}

fn tcp_flags(f: u8) -> String {
    let names = [(0x01, 'F'), (0x02, 'S'), (0x04, 'R'), (0x08, 'P'), (0x10, 'A'), (0x20, 'U')];
    names.iter().filter(|(b, _)| f & b != 0).map(|(_, c)| *c).collect()
}

fn run_case(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    let mut rules = String::new();
    while let Some(l) = lines.next() {
        out.push_str(l);
        out.push('\n');
        if l == "rules:" {
            while let Some(r) = lines.peek() {
                if r.starts_with("packet") || r.starts_with("error") || r.starts_with("seed") {
                    break;
                }
                rules.push_str(r);
                rules.push('\n');
                out.push_str(r);
                out.push('\n');
                lines.next();
            }
            break;
        }
    }
    let host = FixtureHost::openbsd(".");
    let rs = parse("pf.conf", &rules, &Options::default(), &host)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let mut fw = Firewall::new(&rs, &host).unwrap();
    fw.seed(1);
    let mut sent: Vec<(Vec<u8>, Direction, String)> = Vec::new();
    for l in lines {
        if l.starts_with('>') {
            continue;
        }
        out.push_str(l);
        out.push('\n');
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.is_empty() || w[0].starts_with('#') {
            continue;
        }
        let dir = |s: &str| if s == "in" { Direction::In } else { Direction::Out };
        let (bytes, d, ifname) = match w[0] {
            "seed" => {
                fw.seed(w[1].parse().unwrap());
                continue;
            }
            "packet" => {
                let mut spec = Spec::new(w[3], addr_port(w[4]), addr_port(w[6]));
                let mut i = 7;
                while i < w.len() {
                    match w[i] {
                        "flags" => spec.flags = flags(w[i + 1]),
                        "id" => spec.id = w[i + 1].parse().unwrap(),
                        "type" => spec.echo_reply = w[i + 1] == "reply",
                        "len" => spec.len = w[i + 1].parse().unwrap(),
                        "seq" => spec.seq = Some(w[i + 1].parse().unwrap()),
                        "ack" => spec.ack = Some(w[i + 1].parse().unwrap()),
                        "ttl" => spec.ttl = Some(w[i + 1].parse().unwrap()),
                        "ts" => {
                            spec.ts = Some((w[i + 1].parse().unwrap(), w[i + 2].parse().unwrap()));
                            i += 1;
                        }
                        x => panic!("{x}"),
                    }
                    i += 2;
                }
                (build(&spec), dir(w[1]), w[2].to_string())
            }
            "error" => {
                let k: usize = w[8].parse().unwrap();
                let q = &sent[k].0;
                let e = error(
                    w[3].parse().unwrap(),
                    w[4].parse().unwrap(),
                    w[5].parse().unwrap(),
                    w[6].parse().unwrap(),
                    q,
                );
                (e, dir(w[1]), w[2].to_string())
            }
            "reply" => {
                let k: usize = w[1].parse().unwrap();
                let (q, qd, qif) = sent[k].clone();
                let f = w.iter().position(|x| *x == "flags").map(|i| flags(w[i + 1]));
                // The answer goes the other way, unless the line says (`af-to`: the answer
                // in the new family arrives, too).
                let dir = match w.get(2) {
                    Some(&"in") => Direction::In,
                    Some(&"out") => Direction::Out,
                    _ if qd == Direction::In => Direction::Out,
                    _ => Direction::In,
                };
                (reply_to(&q, f), dir, qif)
            }
            x => panic!("line {x}"),
        };
        let mut meta = Meta::new(&ifname, d);
        meta.now = 1;
        let processed = fw.process(&bytes, &meta);
        let dec = processed.decision;
        let leaving = processed.out.first().cloned().unwrap_or_else(|| bytes.clone());
        out.push_str("> ");
        out.push_str(&render(&dec, &leaving));
        out.push('\n');
        // What leaves, in order: the packet, pf's answer back, pf's packet ahead.
        for p in processed.out {
            sent.push((p, d, ifname.clone()));
        }
        let back = if d == Direction::In { Direction::Out } else { Direction::In };
        if let Some(r) = dec.reply {
            sent.push((r, back, ifname.clone()));
        }
        if let Some(a) = dec.ahead {
            sent.push((a, d, ifname.clone()));
        }
    }
    out
}

/// The answer to `p`: addresses and ports swapped, an echo request answered with its reply,
/// a TCP segment with SYN+ACK (sequence 5000) or, given `tcp_flags`, with those flags and the
/// numbers that follow `p`'s (its acknowledgement as the sequence, its end as the ack).
fn reply_to(p: &[u8], tcp_flags: Option<u8>) -> Vec<u8> {
    let v6 = p[0] >> 4 == 6;
    let (hl, proto) = if v6 { (40, p[6]) } else { (usize::from(p[0] & 15) * 4, p[9]) };
    let mut r = p.to_vec();
    let (s, d, n) = if v6 { (8, 24, 16) } else { (12, 16, 4) };
    let (a, b) = (p[s..s + n].to_vec(), p[d..d + n].to_vec());
    r[s..s + n].copy_from_slice(&b);
    r[d..d + n].copy_from_slice(&a);
    match proto {
        6 | 17 => {
            r[hl..hl + 2].copy_from_slice(&p[hl + 2..hl + 4]);
            r[hl + 2..hl + 4].copy_from_slice(&p[hl..hl + 2]);
            if proto == 6 {
                let seq = u32::from_be_bytes(p[hl + 4..hl + 8].try_into().unwrap());
                let ack = u32::from_be_bytes(p[hl + 8..hl + 12].try_into().unwrap());
                let thl = usize::from(p[hl + 12] >> 4) * 4;
                let mut end = seq.wrapping_add((p.len() - hl - thl) as u32);
                if p[hl + 13] & 0x03 != 0 {
                    end = end.wrapping_add(1);
                }
                // A SYN starts its own numbering (at 5000); other segments follow `p`'s ack.
                let (s, f) = match tcp_flags {
                    Some(f) if f & 0x02 == 0 => (ack, f),
                    Some(f) => (5000, f),
                    None => (5000, 0x12),
                };
                r[hl + 4..hl + 8].copy_from_slice(&s.to_be_bytes());
                r[hl + 8..hl + 12].copy_from_slice(&end.to_be_bytes());
                r[hl + 13] = f;
            }
        }
        1 => r[hl] = 0,
        58 => r[hl] = 129,
        _ => {}
    }
    fill(&mut r);
    r
}

#[test]
fn nat_golden() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nat");
    let bless = std::env::var_os("BLESS").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut failed = Vec::new();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "txt")) {
        let got = run_case(f);
        if bless {
            std::fs::write(f, &got).unwrap();
        } else if got != std::fs::read_to_string(f).unwrap() {
            eprintln!("--- {}\n{got}", f.display());
            failed.push(f.display().to_string());
        }
        assert!(!got.contains("sum BAD"), "{}: a checksum is wrong:\n{got}", f.display());
    }
    assert!(failed.is_empty(), "differs (BLESS=1 rewrites): {failed:?}");
}

/// 60,000 concurrent UDP flows through one NAT address to eight servers: every flow gets a
/// port no other flow to the same server holds, and every answer finds its way back to the
/// inner host and port it answers.
#[test]
fn sixty_thousand_concurrent_flows_get_distinct_ports() {
    let host = FixtureHost::openbsd(".");
    let rules = "set limit states 200000\nmatch out on em0 proto udp from 10.0.0.0/8 nat-to 192.0.2.1\npass\n";
    let rs = parse("pf.conf", rules, &Options::default(), &host).unwrap();
    let mut fw = Firewall::new(&rs, &host).unwrap();
    let out = Meta::new("em0", Direction::Out);
    let inbound = Meta::new("em0", Direction::In);
    let flows = 60_000u32;
    let mut taken = std::collections::HashSet::new();
    let mut outer = Vec::with_capacity(flows as usize);
    for i in 0..flows {
        let inner = IpAddr::from([10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
        let server = IpAddr::from([198, 51, 100, 1 + (i % 8) as u8]);
        let spec = Spec::new("udp", (inner, 1000 + (i % 7) as u16), (server, 53));
        let mut p = build(&spec);
        let d = fw.filter(&mut p, &out);
        assert_eq!(d.action, Verdict::Pass, "flow {i}: {d:?}");
        assert_eq!(p[12..16], [192, 0, 2, 1]);
        let port = u16::from_be_bytes([p[20], p[21]]);
        assert!((50001..=65535).contains(&port), "flow {i}: port {port}");
        assert!(taken.insert((server, port)), "flow {i}: port {port} to {server} taken twice");
        outer.push((spec, port));
    }
    assert_eq!(fw.states().len(), flows as usize);
    for (i, (spec, port)) in outer.iter().enumerate() {
        let answer = Spec::new("udp", spec.dst, ("192.0.2.1".parse().unwrap(), *port));
        let mut p = build(&answer);
        let d = fw.filter(&mut p, &inbound);
        assert!(d.from_state && d.action == Verdict::Pass, "answer {i}: {d:?}");
        assert_eq!(IpAddr::from(<[u8; 4]>::try_from(&p[16..20]).unwrap()), spec.src.0);
        assert_eq!(u16::from_be_bytes([p[22], p[23]]), spec.src.1, "answer {i}");
        assert!(sums_ok(&p), "answer {i}");
    }
}

/// Cuts an IPv4 datagram into fragments of at most `size` data octets.
fn fragments4(p: &[u8], size: usize) -> Vec<Vec<u8>> {
    let data = &p[20..];
    let mut out = Vec::new();
    let mut off = 0;
    while off < data.len() {
        let n = size.min(data.len() - off);
        let mut f = p[..20].to_vec();
        f.extend_from_slice(&data[off..off + n]);
        let len = f.len() as u16;
        f[2..4].copy_from_slice(&len.to_be_bytes());
        let more = if off + n < data.len() { 0x2000 } else { 0 };
        f[6..8].copy_from_slice(&(more | (off / 8) as u16).to_be_bytes());
        // The header checksum only: the UDP checksum is the datagram's.
        f[10..12].fill(0);
        let c = fold(sum(&f[..20], 0));
        f[10..12].copy_from_slice(&c.to_be_bytes());
        out.push(f);
        off += n;
    }
    out
}

/// Cuts an IPv6 datagram into fragments (a fragment header, identification 7).
fn fragments6(p: &[u8], size: usize) -> Vec<Vec<u8>> {
    let (next, data) = (p[6], &p[40..]);
    let mut out = Vec::new();
    let mut off = 0;
    while off < data.len() {
        let n = size.min(data.len() - off);
        let mut f = p[..40].to_vec();
        f[6] = 44;
        let more = u16::from(off + n < data.len());
        f.extend([next, 0]);
        f.extend(((off as u16) | more).to_be_bytes());
        f.extend(7u32.to_be_bytes());
        f.extend_from_slice(&data[off..off + n]);
        let plen = (f.len() - 40) as u16;
        f[4..6].copy_from_slice(&plen.to_be_bytes());
        out.push(f);
        off += n;
    }
    out
}

/// Fragments are reassembled before the rules see them, the datagram is translated and
/// leaves whole (IPv4) or cut again as it arrived (IPv6), every checksum good.
#[test]
fn fragments_are_reassembled_translated_and_cut_again() {
    let host = FixtureHost::openbsd(".");
    let rules = "match out on em0 from 10.0.0.0/8 nat-to 192.0.2.1\n\
                 match out on em0 inet6 from fd00::/8 nat-to 2001:db8::1\npass\n";
    let rs = parse("pf.conf", rules, &Options::default(), &host).unwrap();
    let mut fw = Firewall::new(&rs, &host).unwrap();
    let out = Meta::new("em0", Direction::Out);
    let udp = |src: &str, dst: &str| Spec {
        len: 3000,
        ..Spec::new("udp", addr_port(src), addr_port(dst))
    };
    let whole = build(&udp("10.0.0.5:1234", "198.51.100.7:53"));
    let frags = fragments4(&whole, 1480);
    assert_eq!(frags.len(), 3);
    let mut sent = Vec::new();
    for (i, f) in frags.iter().enumerate() {
        let p = fw.process(f, &out);
        assert_eq!(p.decision.action, Verdict::Pass, "fragment {i}");
        assert_eq!(p.decision.held, i < 2, "fragment {i}");
        sent.extend(p.out);
    }
    assert_eq!(sent.len(), 1);
    let d = &sent[0];
    assert_eq!(d.len(), whole.len());
    assert_eq!(d[12..16], [192, 0, 2, 1]);
    assert_eq!(d[6..8], [0, 0], "offset and MF cleared");
    assert!(sums_ok(d));
    assert_eq!(d[28..], whole[28..], "the data is the datagram's");

    let whole6 = build(&udp("[fd00::5]:1234", "[2001:db8:ffff::7]:53"));
    let frags6 = fragments6(&whole6, 1232);
    assert_eq!(frags6.len(), 3);
    let mut sent6 = Vec::new();
    for f in &frags6 {
        sent6.extend(fw.process(f, &out).out);
    }
    assert_eq!(sent6.len(), 3, "cut again as it arrived");
    let mut again = sift_firewall::fragment::Reassembler::new(Default::default());
    let mut rebuilt = None;
    for f in &sent6 {
        assert_eq!(f[8..24], "2001:db8::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
        if let sift_firewall::fragment::Reassembly::Complete(r) = again.push(f, 1) {
            rebuilt = Some(r.bytes);
        }
    }
    let rebuilt = rebuilt.expect("the fragments sift sent make the datagram");
    assert!(sums_ok(&rebuilt), "the translated datagram's UDP checksum holds");
    assert_eq!(rebuilt[48..], whole6[48..]);
}

/// Past `set limit states` new flows are dropped with pf's `memory` reason while the
/// existing ones go on; past `set limit src-nodes` with `src-limit`; a rule set whose tables
/// need more than `set limit table-entries` is refused.
#[test]
fn limits_drop_new_flows_and_keep_existing_ones() {
    let host = FixtureHost::openbsd(".");
    // Adaptive timeouts off: at 2 of 2 states they would expire the states at once.
    let rules = "set limit { states 2, src-nodes 1 }\n\
                 set timeout { adaptive.start 0, adaptive.end 0 }\n\
                 pass out on em0 proto udp from 10.0.0.0/8 keep state\n\
                 pass out on em0 proto tcp from 10.0.0.0/8 keep state (source-track)\n";
    let rs = parse("pf.conf", rules, &Options::default(), &host).unwrap();
    let mut fw = Firewall::new(&rs, &host).unwrap();
    let text =
        sift_pf::pfctl("pf.conf", rules, &Options { verbose: true, ..Options::default() }, &host);
    fw.set_settings(sift_firewall::Settings::from_pfctl_verbose(&text.stdout).unwrap());
    let out = Meta::new("em0", Direction::Out);
    let flow = |proto: &str, src: &str| Spec {
        flags: if proto == "tcp" { 0x02 } else { 0 },
        ..Spec::new(proto, addr_port(src), addr_port("198.51.100.7:53"))
    };
    let mut first = build(&flow("udp", "10.0.0.1:1000"));
    assert_eq!(fw.process(&first, &out).decision.action, Verdict::Pass);
    // A tracked source takes the only source node.
    let d = fw.process(&build(&flow("tcp", "10.0.0.2:1000")), &out).decision;
    assert_eq!(d.action, Verdict::Pass, "{d:?}");
    let d = fw.process(&build(&flow("tcp", "10.0.0.3:1000")), &out).decision;
    assert_eq!((d.action, d.reason.name()), (Verdict::Block, "src-limit"));
    // Two states: the next flow finds no room.
    let d = fw.process(&build(&flow("udp", "10.0.0.4:1000")), &out).decision;
    assert_eq!((d.action, d.reason.name()), (Verdict::Block, "memory"));
    // The first flow goes on, both ways.
    let d = fw.process(&first, &out).decision;
    assert!(d.from_state && d.action == Verdict::Pass);
    first = reply_to(&first, None);
    let d = fw.process(&first, &Meta::new("em0", Direction::In)).decision;
    assert!(d.from_state && d.action == Verdict::Pass, "{d:?}");

    let big =
        "set limit table-entries 2\ntable <t> { 10.0.0.1, 10.0.0.2, 10.0.0.3 }\npass from <t>\n";
    let text =
        sift_pf::pfctl("pf.conf", big, &Options { verbose: true, ..Options::default() }, &host);
    let mut fw = Firewall::new(&text.ruleset, &host).unwrap();
    fw.set_settings(sift_firewall::Settings::from_pfctl_verbose(&text.stdout).unwrap());
    let e = fw.check_limits().unwrap_err();
    assert_eq!(e.to_string(), "set limit table-entries 2: the rule set needs 3");
}
