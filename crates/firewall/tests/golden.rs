//! Golden rule-set tests: each `tests/golden/*.txt` holds a rule set and packets in a small
//! text form; the verdict lines after each packet are what sift decides (`BLESS=1` rewrites
//! them). The form:
//!
//! ```text
//! # comment
//! rules:
//! <pf.conf lines, up to the first `packet` line>
//! packet out em0 tcp 10.0.0.1:1234 > 10.0.0.2:80 flags S
//! > pass @1 quick keep-state
//! ```
//!
//! A packet line is `packet DIR IFACE PROTO SRC[:PORT] > DST[:PORT] [flags F] [type T code C]
//! [tag T] [tos N] [frag] [rcv IFACE]`; PROTO is `tcp`, `udp`, `icmp`, `icmp6` or a number.
//! Lines starting with `table <name> add|delete|flush ADDR…` change a table between packets.
//! The verdict line is `> VERDICT @N` (or `@-1`, the default rule) with the anchor path
//! (`in ANCHOR`), `quick`, `keep-state`, `return …`, `tag T`, `match @N…`, `overflow`.

use std::fmt::Write;
use std::path::Path;

use sift_firewall::packet::{Direction, Family, Meta, Packet};
use sift_firewall::{Decision, Firewall, Prefix, Return, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, parse};

mod support;
use support::{addr_port, flags};

fn key(a: std::net::IpAddr) -> u128 {
    sift_firewall::table::key_of(a)
}

fn render(fw: &Firewall, d: &Decision) -> String {
    let id = |r: sift_firewall::RuleId| format!("@{}", r.nr);
    let mut s = format!(
        "> {} {}",
        if d.action == Verdict::Pass { "pass" } else { "block" },
        d.rule.map_or("@-1".to_string(), id)
    );
    if let Some(r) = d.rule
        && !fw.ruleset_path(r.ruleset).is_empty()
    {
        write!(s, " in {}", fw.ruleset_path(r.ruleset)).unwrap();
    }
    if d.quick {
        s += " quick";
    }
    if d.keep_state != 0 {
        s += " keep-state";
    }
    match d.ret {
        Return::Drop => {}
        Return::Rst { ttl } => write!(s, " return-rst ttl {ttl}").unwrap(),
        Return::Icmp { ty, code } => write!(s, " return-icmp {ty}/{code}").unwrap(),
    }
    if let Some(t) = &d.tag {
        write!(s, " tag {t}").unwrap();
    }
    for m in &d.matches {
        let path = fw.ruleset_path(m.ruleset);
        write!(s, " match @{}{}{}", m.nr, if path.is_empty() { "" } else { " in " }, path).unwrap();
    }
    if d.anchor_overflow {
        s += " overflow";
    }
    if d.reason != sift_firewall::Reason::Match {
        write!(s, " reason {}", d.reason.name()).unwrap();
    }
    s
}

fn run_packet(fw: &mut Firewall, line: &str) -> String {
    let w: Vec<&str> = line.split_whitespace().collect();
    let dir = match w[1] {
        "in" => Direction::In,
        "out" => Direction::Out,
        d => panic!("direction {d}"),
    };
    let proto: u8 = match w[3] {
        "tcp" => 6,
        "udp" => 17,
        "icmp" => 1,
        "icmp6" => 58,
        n => n.parse().expect("protocol"),
    };
    let (src, sport) = addr_port(w[4]);
    assert_eq!(w[5], ">");
    let (dst, dport) = addr_port(w[6]);
    let mut pkt = Packet {
        af: if src.is_ipv4() { Family::Inet } else { Family::Inet6 },
        proto,
        src: key(src),
        dst: key(dst),
        sport,
        dport,
        tcp_flags: 0,
        icmp_type: 0,
        icmp_code: 0,
        tos: 0,
        ttl: 64,
        fragment: false,
        len: 40,
        bytes: &[],
    };
    let mut meta = Meta::new(w[2], dir);
    let mut i = 7;
    while i < w.len() {
        match w[i] {
            "flags" => pkt.tcp_flags = flags(w[i + 1]),
            "type" => pkt.icmp_type = w[i + 1].parse().expect("type"),
            "code" => pkt.icmp_code = w[i + 1].parse().expect("code"),
            "tag" => meta.tag = Some(w[i + 1]),
            "tos" => pkt.tos = w[i + 1].parse().expect("tos"),
            "rcv" => meta.received_on = Some(w[i + 1]),
            "frag" => {
                pkt.fragment = true;
                i += 1;
                continue;
            }
            o => panic!("packet option {o}"),
        }
        i += 2;
    }
    let naive = fw.clone().decide_naive(&pkt, &meta);
    let d = fw.decide(&pkt, &meta);
    assert_eq!(d, naive, "naive evaluator differs: {line}");
    render(fw, &d)
}

fn run_file(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let host = FixtureHost::openbsd(path.parent().unwrap());
    let mut out = String::new();
    let mut rules = String::new();
    let mut fw: Option<Firewall> = None;
    let mut in_rules = false;
    for line in text.lines() {
        if line.starts_with("> ") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line == "rules:" {
            in_rules = true;
            rules.clear();
            fw = None;
            continue;
        }
        let table_cmd =
            line.strip_prefix("table <").and_then(|r| r.split_once('>')).is_some_and(|(_, r)| {
                matches!(r.split_whitespace().next(), Some("add" | "delete" | "replace" | "flush"))
            });
        let cmd = line.starts_with("packet ") || table_cmd;
        if in_rules && !cmd {
            rules.push_str(line);
            rules.push('\n');
            continue;
        }
        if !cmd {
            continue;
        }
        in_rules = false;
        let fw = fw.get_or_insert_with(|| {
            let rs = parse(&path.display().to_string(), &rules, &Options::default(), &host)
                .unwrap_or_else(|e| {
                    panic!("{}: {:?}", path.display(), e.first().map(|e| e.pfctl_line()))
                });
            Firewall::new(&rs, &host).unwrap()
        });
        if let Some(rest) = line.strip_prefix("table <").filter(|_| table_cmd) {
            let (name, rest) = rest.split_once('>').unwrap();
            let mut w = rest.split_whitespace();
            let op = w.next().unwrap();
            let t = fw.table_mut(name);
            let ps: Vec<Prefix> = w.map(|x| x.parse().unwrap()).collect();
            match op {
                "add" => ps.iter().for_each(|p| {
                    t.add(*p);
                }),
                "delete" => ps.iter().for_each(|p| {
                    t.delete(p);
                }),
                "replace" => t.replace(&ps),
                "flush" => {
                    t.flush();
                }
                o => panic!("table command {o}"),
            }
            continue;
        }
        out.push_str(&run_packet(fw, line));
        out.push('\n');
    }
    out
}

#[test]
fn golden_rule_sets() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let actual = run_file(&f);
        sift_testkit::golden(&f, &actual);
    }
}
