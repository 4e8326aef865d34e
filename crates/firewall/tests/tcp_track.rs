//! Golden TCP tracking tests: each `tests/tcp/*.txt` holds a rule set and a conversation
//! between a client (10.0.0.1:40000, whose packets leave em0) and a server (10.0.0.2:80, whose
//! packets arrive on em0); after each packet, a `>` line says what sift decided and the
//! state's peers afterwards (`BLESS=1` rewrites them). The form:
//!
//! ```text
//! # comment
//! pass all
//! ---
//! c S seq=1000 win=65535 ws=7
//! > pass @0 match SYN_SENT:CLOSED
//! ```
//!
//! A packet line is `c|s FLAGS [seq=N] [ack=N] [win=N] [ws=N] [len=N] [t=SECONDS]` (`-` for
//! no flags; `t` holds for the packets after it). The `>` line is `VERDICT BY REASON PEERS`:
//! BY is `state`, `@N` or `@-1`; PEERS the client-side and server-side states of the
//! packet's state (`-`: none).

use std::fmt::Write;
use std::path::Path;

use sift_firewall::packet::{Direction, Meta, Packet};
use sift_firewall::state::tcps;
use sift_firewall::{Decision, Firewall, Settings, Verdict};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

mod support;
use support::conversation;

fn firewall(rules: &str) -> Firewall {
    let host = FixtureHost::openbsd(".");
    let opts = Options { verbose: true, ..Options::default() };
    let out = pfctl("pf.conf", rules, &opts, &host);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let mut fw = Firewall::new(&out.ruleset, &host).expect("load");
    fw.set_settings(Settings::from_pfctl_verbose(&out.stdout).expect("settings"));
    fw
}

fn render(fw: &Firewall, d: &Decision) -> String {
    let by = if d.from_state {
        "state".to_string()
    } else {
        d.rule.map_or("@-1".into(), |r| format!("@{}", r.nr))
    };
    let peers = match d.state.and_then(|id| fw.states().get(id)) {
        Some(s) => {
            // Client side first whichever side created the state.
            let (c, sv) =
                if s.direction == Direction::Out { (s.src, s.dst) } else { (s.dst, s.src) };
            format!("{}:{}", tcps::NAMES[usize::from(c.state)], tcps::NAMES[usize::from(sv.state)])
        }
        None => "-".into(),
    };
    let v = if d.action == Verdict::Pass { "pass" } else { "block" };
    format!("> {v} {by} {} {peers}", d.reason.name())
}

/// Runs one scenario; returns the text with its `>` lines.
fn run(text: &str) -> String {
    let (rules, convo) = text.split_once("\n---\n").expect("a --- line");
    let mut fw = firewall(rules);
    let mut out = format!("{rules}\n---\n");
    let mut now = 0u64;
    for line in convo.lines() {
        if line.starts_with('>') {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        let Some(seg) = conversation::segment(line) else { continue };
        now = seg.now.unwrap_or(now);
        let (bytes, dir) = (seg.bytes, seg.dir);
        let pkt = Packet::parse(&bytes).expect("packet");
        let mut meta = Meta::new("em0", dir);
        meta.now = now;
        let d = fw.test(&pkt, &meta);
        writeln!(out, "{}", render(&fw, &d)).unwrap();
    }
    out
}

#[test]
fn tcp_golden() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tcp");
    let bless = std::env::var_os("BLESS").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/tcp")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failed = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let got = run(&text);
        if got != text {
            if bless {
                std::fs::write(f, &got).expect("write");
            } else {
                failed.push(format!("{}:\n{got}", f.display()));
            }
        }
    }
    assert!(failed.is_empty(), "golden mismatch (BLESS=1 rewrites):\n{}", failed.join("\n"));
}
