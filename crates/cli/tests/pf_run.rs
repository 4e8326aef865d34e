//! `sift pf run --between pa pb` between two hosts: host A (`a0` 10.88.0.1/24), host B (`b0`
//! 10.88.0.2/24), and pf over AF_XDP on `pa` (facing A) and `pb` (facing B) in the middle.
//!
//! - pf between the ports gives the userspace engine's verdicts: frames injected from A (UDP
//!   passed with `no state`, blocked by `block` and `block quick`, a TCP SYN that creates a
//!   state and segments of its flow, IPv4 with options, ARP) get, line by line, the verdicts
//!   `sift_firewall::between::judge` gives the same frames on a `Firewall` of the same rules,
//!   and what passes arrives at B byte for byte; the caches answer for the eligible rule set,
//!   never for one with `block return` (whose answers go back to A);
//! - a TCP session works through `keep state`, and keeps working after SIGHUP loads a rule set
//!   that passes nothing (states are kept, as `pfctl -f` keeps them), while a new connection no
//!   longer gets through.
//!
//! The injected frames are addressed to a MAC address nobody has, so B's kernel answers none
//! of them (tcpdump on `b0` still sees them). Needs root, tcpdump, ethtool and python3:
//! without them each test prints SKIP, and fails under `SIFT_REQUIRE_ORACLES=1`.

mod pf_support;

use std::io::{BufRead, BufReader, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pf_support::netns::{Daemon, Ns, Tcpdump, TwoHosts, available, inject, read_frames};
use pf_support::packets::{TcpSpec, flags, tcp, udp};
use sift_firewall::{Firewall, Settings, between};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

const A: Ipv4Addr = Ipv4Addr::new(10, 88, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 88, 0, 2);

fn can_run() -> bool {
    available(&["ip", "tcpdump", "python3", "ethtool"])
}

type Net = TwoHosts;

impl TwoHosts {
    /// `sift pf run --between pa pb` with `rules` (`$A`, `$B`: the ports), verdicts printed.
    fn pf(&self, rules: &Path) -> Daemon {
        let sift = env!("CARGO_BIN_EXE_sift");
        let args = [
            sift,
            "pf",
            "run",
            "--between",
            "pa",
            "pb",
            "-f",
            rules.to_str().unwrap(),
            "-D",
            "A=pa",
            "-D",
            "B=pb",
            "--host",
            "openbsd",
            "--verdicts",
        ];
        let mut d = Daemon::start(&self.mid, &args, "sift: pf run: listening between pa and pb");
        d.wait_stderr(|l| l.starts_with("sift: pf run: caches"), 5);
        d
    }
}

/// The firewall `sift pf run` makes of `rules` (with `--host openbsd`, `-D A=pa -D B=pb`).
fn firewall(rules: &str) -> Firewall {
    let host = FixtureHost::openbsd(".");
    let defines = vec![("A".to_string(), "pa".to_string()), ("B".to_string(), "pb".to_string())];
    let opts = Options { verbose: true, defines, ..Options::default() };
    let out = pfctl("pf.conf", rules, &opts, &host);
    assert_eq!(out.status, 0, "{}", out.render_errors());
    let mut fw = Firewall::new(&out.ruleset, &host).unwrap();
    fw.set_settings(Settings::from_pfctl_verbose(&out.stdout).unwrap());
    fw
}

/// The counter after `what` in a summary line.
fn counter(line: &str, what: &str) -> u64 {
    line.split([',', ';', ':', '(', ')'])
        .find_map(|part| part.trim().strip_suffix(what)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{what}` in {line}"))
}

const ELIGIBLE: &str = "block all
pass in on $A proto udp to port 7000 no state
pass out on $B proto udp to port 7000 no state
pass proto tcp to port 8000 keep state
block in quick proto udp to port 7001
pass proto udp to port 7002 no state
";

/// The same with an answer: the caches may not answer for it.
const ANSWERING: &str = "block all
pass in on $A proto udp to port 7000 no state
pass out on $B proto udp to port 7000 no state
pass proto tcp to port 8000 keep state
block return in quick proto udp to port 7001
pass proto udp to port 7002 no state
";

/// Frames from A to a MAC address nobody has (B's kernel stays silent).
fn frames(mac_a: [u8; 6]) -> Vec<Vec<u8>> {
    let eth = |ip: &[u8]| {
        let mut f = vec![0x02, 0, 0, 0, 0, 0x99];
        f.extend_from_slice(&mac_a);
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(ip);
        f
    };
    let syn = TcpSpec {
        src: (A, 41000),
        dst: (B, 8000),
        seq: 1000,
        ack: 0,
        flags: flags::SYN,
        win: 8192,
    };
    let ack = TcpSpec { seq: 1001, ack: 0, flags: flags::ACK, ..syn };
    // IPv4 with a 4-byte option (NOPs and an end): not of the caches' shape.
    let mut opts = udp((A, 5000), (B, 7002), 9, b"options");
    opts.splice(20..20, [1, 1, 1, 0]);
    opts[0] = 0x46;
    let total = opts.len() as u16;
    opts[2..4].copy_from_slice(&total.to_be_bytes());
    let mut out = Vec::new();
    for i in 0..8 {
        out.push(eth(&udp((A, 5000), (B, 7000), 1, b"no state")));
        if i % 3 == 0 {
            out.push(eth(&udp((A, 5000), (B, 7001), 2, b"quick")));
            out.push(eth(&udp((A, 5000), (B, 7999), 3, b"block all")));
        }
    }
    out.push(eth(&tcp(&syn, 4, b"")));
    out.push(eth(&tcp(&ack, 5, b"")));
    out.push(eth(&tcp(&ack, 6, b"")));
    out.push(eth(&opts));
    out.push(eth(&opts));
    // ARP (for an address nobody has): not pf's.
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&mac_a);
    arp.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&mac_a);
    arp.extend_from_slice(&A.octets());
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&[10, 88, 0, 77]);
    out.push(arp);
    for _ in 0..3 {
        out.push(eth(&udp((A, 5000), (B, 7000), 1, b"no state")));
    }
    out
}

fn wall_clock() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Injects the frames through `sift pf run` with `rules`; checks every verdict line and what
/// arrived at B against `between::judge` on a firewall of the same rules. Returns pf's summary.
fn verdicts_match(rules_text: &str) -> String {
    let net = Net::new("pfr");
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("pf.conf");
    std::fs::write(&rules, rules_text).unwrap();
    let sent = frames(net.mac_a);
    let pf = net.pf(&rules);
    let cap = Tcpdump::start_inbound(&net.b, "b0", &dir.path().join("b0.pcap"));
    inject(&net.a, "a0", &sent, dir.path(), 100);
    let arrived = read_frames(&cap.stop());
    let (verdicts, summary) = pf.stop();

    let mut fw = firewall(rules_text);
    let (mut want, mut on) = (Vec::new(), Vec::new());
    for (i, f) in sent.iter().enumerate() {
        let mut line = String::new();
        let fate = between::judge(&mut fw, 1, f, "pa", "pb", wall_clock(), &mut line);
        let answered = if fate.back.is_empty() { "" } else { " answered" };
        want.push(format!("{} pa>pb{line}{answered}", i + 1));
        on.extend(fate.on);
    }
    let got: Vec<&str> = verdicts.lines().collect();
    assert_eq!(got, want, "{summary}");
    assert_eq!(arrived.len(), on.len(), "{summary}");
    for (i, (a, w)) in arrived.iter().zip(&on).enumerate() {
        assert_eq!(a, w, "frame {i} passed to B");
    }
    let way = summary.lines().find(|l| l.starts_with("pa>pb:")).unwrap();
    assert_eq!(counter(way, "frames"), sent.len() as u64, "{summary}");
    summary
}

#[test]
fn verdicts_are_the_userspace_engines_and_the_caches_answer_when_they_may() {
    if !can_run() {
        return;
    }
    let summary = verdicts_match(ELIGIBLE);
    assert!(summary.contains("caches on (the rule set is eligible)"), "{summary}");
    let caches = summary.lines().find(|l| l.starts_with("caches:")).unwrap();
    let hits = counter(caches, "microflow hits") + counter(caches, "megaflow hits");
    assert!(hits >= 8, "{summary}");

    let summary = verdicts_match(ANSWERING);
    assert!(
        summary.contains("sift: pf run: caches unused: rule @4: `return` (an answer)"),
        "{summary}"
    );
    let caches = summary.lines().find(|l| l.starts_with("caches:")).unwrap();
    assert_eq!(counter(caches, "microflow hits") + counter(caches, "megaflow hits"), 0);
    assert_eq!(counter(caches, "misses"), 0, "{summary}");
    let way = summary.lines().find(|l| l.starts_with("pa>pb:")).unwrap();
    assert_eq!(counter(way, "answers"), 3, "{summary}");
}

/// The hosts' TCP programs: `server ADDR PORT` (echoes every connection, prints `ready`),
/// `client ADDR PORT` (reads commands: `echo TEXT` on the open connection, printing `ok
/// TEXT`; `new`, a second connection, printing `connected` or `timeout`).
const TCP_PEER: &str = r#"
import socket, sys, threading
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "server":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(4)
    print("ready", flush=True)
    def echo(c):
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
    while True:
        c, _ = s.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()
else:
    c = socket.create_connection((host, port), timeout=5)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "echo":
            data = (cmd[1] * 2000).encode()
            c.sendall(data)
            got = b""
            while len(got) < len(data):
                got += c.recv(65536)
            print("ok " + cmd[1] if got == data else "bad", flush=True)
        elif cmd[0] == "new":
            try:
                socket.create_connection((host, port), timeout=2)
                print("connected", flush=True)
            except OSError:
                print("timeout", flush=True)
"#;

/// A [`TCP_PEER`] program: its standard input and output lines.
struct TcpPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl TcpPeer {
    fn start(ns: &Ns, mode: &str) -> TcpPeer {
        let mut child = ns
            .cmd(&["python3", "-c", TCP_PEER, mode, "10.88.0.2", "8000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run python3");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        TcpPeer { child, stdin, lines }
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(Duration::from_secs(10)).expect("the peer answered")
    }

    fn ask(&mut self, cmd: &str) -> String {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{cmd}").unwrap();
        stdin.flush().unwrap();
        self.line()
    }
}

impl Drop for TcpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_tcp_session_works_through_keep_state_and_survives_a_reload() {
    if !can_run() {
        return;
    }
    let net = Net::new("pfr");
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("pf.conf");
    std::fs::write(&rules, "block all\npass proto tcp to port 8000 keep state\n").unwrap();
    let mut pf = net.pf(&rules);
    let server = TcpPeer::start(&net.b, "server");
    assert_eq!(server.line(), "ready");
    let mut client = TcpPeer::start(&net.a, "client");
    assert_eq!(client.ask("echo one"), "ok one");
    assert_eq!(client.ask("echo two"), "ok two");

    // A rule set that passes nothing: the session goes on by its states, a new one cannot.
    std::fs::write(&rules, "block all\n").unwrap();
    pf.signal("HUP");
    let loaded = pf.wait_stderr(|l| l.starts_with("sift: pf run: SIGHUP:"), 10);
    assert!(loaded.contains("loaded") && loaded.contains("states kept"), "{loaded}");
    assert_eq!(client.ask("echo three"), "ok three");
    assert_eq!(client.ask("new"), "timeout");
    drop(client);
    let (_, summary) = pf.stop();
    let last = summary.lines().last().unwrap();
    assert!(counter(last, "states") >= 2, "{summary}");
    let way = summary.lines().find(|l| l.starts_with("pa>pb:")).unwrap();
    assert!(counter(way, "blocked") >= 1, "the second connection's SYN: {summary}");
}
