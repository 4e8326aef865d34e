//! `sift switch` between two hosts: three namespaces — host A (`a0` 10.88.0.1/24), host B
//! (`b0` 10.88.0.2/24) and the switch (`pa` facing A, `pb` facing B, no addresses) — and
//! `sift switch -p pa -p pb -f FLOWS` in the middle. Traffic is sent from the hosts' namespaces
//! (raw frames with `sift inject`, or Linux UDP through Python) and checked where it arrives:
//! tcpdump on `b0` (frames byte for byte) and Python sockets (the kernel accepted the
//! checksums).
//!
//! - the switch forwards exactly what its rules say: forward, drop by `tp_dst`, `set_field`
//!   rewrites (addresses, MAC, port) with right checksums, `pop_vlan`, `push_vlan`; the
//!   rules' counters and the caches' hits are as the traffic makes them;
//! - rules changed under traffic (SIGHUP with a new FLOWS while a sender runs) change
//!   forwarding from then on, and back;
//! - rule sets it cannot carry out exactly are refused with their line and column (no root
//!   needed: a golden file).
//!
//! The hosts send complete checksums and whole segments (offloads off on the veths, static
//! neighbours so no ARP crosses). Needs root, tcpdump, ethtool and python3: without them each
//! namespace test prints SKIP, and fails under `SIFT_REQUIRE_ORACLES=1`.

mod pf_support;

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pf_support::netns::{Daemon, Ns, Tcpdump, TwoHosts, available, inject, read_frames};
use pf_support::packets::udp;

const A: Ipv4Addr = Ipv4Addr::new(10, 88, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 88, 0, 2);

/// The hosts' programs: `python3 -c PEER MODE ARGS…`.
///
/// - `recv ADDR PORT…`: prints `ready`, then `PORT PAYLOAD` for each datagram, until none came
///   for 20 s.
/// - `send ADDR PORT`: sends `N` (0, 1, …) every 5 ms until killed.
const PEER: &str = r#"
import select, socket, sys, time
mode, args = sys.argv[1], sys.argv[2:]
if mode == "recv":
    socks = {}
    for p in args[1:]:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((args[0], int(p)))
        socks[s] = p
    print("ready", flush=True)
    while True:
        r, _, _ = select.select(list(socks), [], [], 20)
        if not r:
            break
        for s in r:
            print(socks[s], s.recv(2048).decode(errors="replace"), flush=True)
elif mode == "send":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    n = 0
    while True:
        s.sendto(str(n).encode(), (args[0], int(args[1])))
        n += 1
        time.sleep(0.005)
"#;

fn can_run() -> bool {
    available(&["ip", "tcpdump", "python3", "ethtool"])
}

/// Host A, host B, the switch between them (`mid`).
type Net = TwoHosts;

impl TwoHosts {
    fn switch(&self, flows: &Path) -> Daemon {
        let sift = env!("CARGO_BIN_EXE_sift");
        let f = flows.to_str().unwrap();
        Daemon::start(
            &self.mid,
            &[sift, "switch", "-p", "pa", "-p", "pb", "-f", f, "--stats", "--copy"],
            "sift: switch: listening on pa (port 1), pb (port 2)",
        )
    }

    /// `ip` in an Ethernet frame from A to `dst`, with an 802.1Q tag `vlan` if given.
    fn frame(&self, dst: [u8; 6], vlan: Option<u16>, ip: &[u8]) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend_from_slice(&self.mac_a);
        if let Some(v) = vlan {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(ip);
        f
    }
}

fn hex_mac(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// A program of [`PEER`] in `ns`, its standard output lines on a channel.
struct Peer {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Peer {
    fn start(ns: &Ns, args: &[&str], ready: bool) -> Peer {
        let mut cmd_args = vec!["python3", "-c", PEER];
        cmd_args.extend_from_slice(args);
        let mut child = ns
            .cmd(&cmd_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run python3");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let p = Peer { child, lines };
        if ready {
            let l = p.lines.recv_timeout(Duration::from_secs(10)).expect("the peer started");
            assert_eq!(l, "ready");
        }
        p
    }

    /// The lines that came so far.
    fn take(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The counter after `what` in a summary line (`49 microflow hits`).
fn counter(summary: &str, what: &str) -> u64 {
    summary
        .split([',', ';', ':', '(', ')'])
        .find_map(|part| part.trim().strip_suffix(what)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{what}` in {summary}"))
}

/// The `n_packets` of the dump-flows line that ends with `rule`.
fn n_packets(dump: &str, rule: &str) -> u64 {
    let line = dump
        .lines()
        .find(|l| l.ends_with(rule))
        .unwrap_or_else(|| panic!("no rule `{rule}` in:\n{dump}"));
    line.trim().strip_prefix("n_packets=").unwrap().split(',').next().unwrap().parse().unwrap()
}

#[test]
fn forwards_exactly_what_its_rules_say() {
    if !can_run() {
        return;
    }
    let net = Net::new("sw");
    let dir = tempfile::tempdir().unwrap();
    let flows = dir.path().join("switch.flows");
    let mac_b = hex_mac(net.mac_b);
    std::fs::write(
        &flows,
        format!(
            "# Drops first, then rewrites, VLANs, and plain forwarding.\n\
             priority=300,udp,tp_dst=9999,actions=drop\n\
             priority=300,tcp,tp_dst=23,actions=drop\n\
             priority=200,in_port=pa,udp,nw_dst=10.88.0.99,tp_dst=7002,actions=set_field:10.88.0.2->nw_dst,set_field:{mac_b}->eth_dst,mod_tp_dst:7003,output:pb\n\
             priority=200,in_port=pa,dl_vlan=10,actions=pop_vlan,output:pb\n\
             priority=200,in_port=pa,vlan_tci=0x0000,udp,tp_dst=7005,actions=push_vlan:0x8100,set_field:20->vlan_vid,output:pb\n\
             priority=10,in_port=pa,actions=output:pb\n\
             priority=10,in_port=pb,actions=output:pa\n"
        ),
    )
    .unwrap();
    let tcp23 = {
        let t = pf_support::packets::TcpSpec {
            src: (A, 40000),
            dst: (B, 23),
            seq: 1,
            ack: 0,
            flags: pf_support::packets::flags::SYN,
            win: 512,
        };
        pf_support::packets::tcp(&t, 9, b"")
    };
    let other = Ipv4Addr::new(10, 88, 0, 99);
    let sent = [
        net.frame(net.mac_b, None, &udp((A, 5000), (B, 7001), 1, b"plain")),
        net.frame(net.mac_b, None, &udp((A, 5000), (B, 9999), 2, b"dropped")),
        net.frame([2, 0, 0, 0, 0, 0x99], None, &udp((A, 5000), (other, 7002), 3, b"rewritten")),
        net.frame(net.mac_b, Some(10), &udp((A, 5000), (B, 7004), 4, b"untagged")),
        net.frame(net.mac_b, None, &udp((A, 5000), (B, 7005), 5, b"tagged")),
        net.frame(net.mac_b, None, &tcp23),
    ];
    // What B must receive: the rewritten datagram built from scratch (checksums computed
    // whole, not updated), the VLAN 10 frame without its tag, the last one tagged 20.
    let arrive = [
        sent[0].clone(),
        net.frame(net.mac_b, None, &udp((A, 5000), (B, 7003), 3, b"rewritten")),
        net.frame(net.mac_b, None, &udp((A, 5000), (B, 7004), 4, b"untagged")),
        net.frame(net.mac_b, Some(20), &udp((A, 5000), (B, 7005), 5, b"tagged")),
    ];
    let rounds = 5;
    let frames: Vec<Vec<u8>> = (0..rounds).flat_map(|_| sent.iter().cloned()).collect();
    let switch = net.switch(&flows);
    let cap = Tcpdump::start_inbound(&net.b, "b0", &dir.path().join("b0.pcap"));
    let recv = Peer::start(&net.b, &["recv", "10.88.0.2", "7001", "7003", "7004", "7005"], true);
    inject(&net.a, "a0", &frames, dir.path(), 200);
    let got = read_frames(&cap.stop());
    let (stats, summary) = switch.stop();
    let want: Vec<Vec<u8>> = (0..rounds).flat_map(|_| arrive.iter().cloned()).collect();
    assert_eq!(got.len(), want.len(), "frames at B: {got:02x?}\n{summary}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i} at B");
    }
    // B's kernel took the datagrams it could (the tagged ones are for a VLAN it does not have).
    std::thread::sleep(Duration::from_millis(200));
    let mut heard = recv.take();
    heard.sort();
    let mut expected: Vec<String> = (0..rounds)
        .flat_map(|_| ["7001 plain", "7003 rewritten", "7004 untagged"].map(String::from))
        .collect();
    expected.sort();
    assert_eq!(heard, expected);
    // The rules' counters; the caches answered all but each flow's first frame.
    let n = |rule: &str| n_packets(&stats, rule);
    assert_eq!(n("priority=300,udp,tp_dst=9999 actions=drop"), rounds);
    assert_eq!(n("priority=300,tcp,tp_dst=23 actions=drop"), rounds);
    assert_eq!(n("priority=200,in_port=pa,dl_vlan=10 actions=pop_vlan,output:pb"), rounds);
    assert_eq!(n("priority=10,in_port=pa actions=output:pb"), rounds);
    assert_eq!(n("priority=10,in_port=pb actions=output:pa"), 0);
    let caches = summary.lines().find(|l| l.starts_with("caches:")).unwrap();
    assert_eq!(counter(caches, "misses"), 6, "{summary}");
    assert_eq!(counter(caches, "microflow hits") + counter(caches, "megaflow hits"), 6 * 4);
    let pa = summary.lines().find(|l| l.starts_with("pa (port 1)")).unwrap();
    assert_eq!(counter(pa, "received"), 6 * rounds);
    assert_eq!(counter(pa, "dropped by the rules"), 2 * rounds);
    // Each flow's megaflow, with what the rules consulted.
    assert!(stats.contains("# megaflows of queue 0"), "{stats}");
    assert!(stats.contains("actions:set(ipv4(dst=10.88.0.2)"), "{stats}");
}

/// Waits (at most 10 s) until `recv` heard `n` more datagrams than `seen`; returns the total.
fn heard_more(recv: &Peer, seen: &mut Vec<String>, n: usize) -> usize {
    let start = seen.len();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.len() < start + n {
        assert!(Instant::now() < deadline, "only {} datagrams came", seen.len() - start);
        if let Ok(l) = recv.lines.recv_timeout(Duration::from_millis(100)) {
            seen.push(l);
        }
    }
    seen.len()
}

#[test]
fn a_rule_change_under_traffic_changes_forwarding_from_then_on() {
    if !can_run() {
        return;
    }
    let net = Net::new("sw");
    let dir = tempfile::tempdir().unwrap();
    let flows = dir.path().join("switch.flows");
    let forward =
        "priority=10,in_port=pa,actions=output:pb\npriority=10,in_port=pb,actions=output:pa\n";
    let drop = "priority=100,udp,tp_dst=7010,actions=drop\n";
    let over = "priority=200,in_port=pa,udp,tp_dst=7010,actions=output:pb\n";
    std::fs::write(&flows, forward).unwrap();
    let mut switch = net.switch(&flows);
    let recv = Peer::start(&net.b, &["recv", "10.88.0.2", "7010"], true);
    let _send = Peer::start(&net.a, &["send", "10.88.0.2", "7010"], false);
    let mut seen = Vec::new();
    heard_more(&recv, &mut seen, 50);

    // The datagrams stop once the switch's queue took the new rules…
    std::fs::write(&flows, format!("{drop}{forward}")).unwrap();
    switch.signal("HUP");
    switch.wait_stderr(|l| l.starts_with("sift: switch: queue 0: rules of generation 1"), 10);
    std::thread::sleep(Duration::from_millis(100));
    seen.extend(recv.take());
    let stopped = seen.len();
    std::thread::sleep(Duration::from_millis(700));
    seen.extend(recv.take());
    assert_eq!(seen.len(), stopped, "datagrams crossed after the drop rule came");

    // …and come again with a rule above it; the drop rule keeps its counters.
    std::fs::write(&flows, format!("{over}{drop}{forward}")).unwrap();
    switch.signal("HUP");
    switch.wait_stderr(|l| l.starts_with("sift: switch: queue 0: rules of generation 2"), 10);
    heard_more(&recv, &mut seen, 50);
    let (stats, summary) = switch.stop();
    let dropped = n_packets(&stats, "priority=100,udp,tp_dst=7010 actions=drop");
    assert!(dropped >= 50, "{dropped} dropped in 0.8 s at up to 200 a second:\n{stats}");
    assert!(n_packets(&stats, "priority=200,udp,in_port=pa,tp_dst=7010 actions=output:pb") >= 50);
    let caches = summary.lines().find(|l| l.starts_with("caches:")).unwrap();
    assert_eq!(counter(caches, "rule changes"), 2, "{summary}");
    assert!(counter(caches, "microflow hits") > 50, "{summary}");
    // The datagrams that came are in order, with a gap where the drop rule was.
    let nums: Vec<u64> = seen.iter().map(|l| l[5..].parse().unwrap()).collect();
    assert!(nums.windows(2).all(|w| w[0] < w[1]), "{nums:?}");
    assert!(nums.windows(2).any(|w| w[1] - w[0] > 100), "no gap: {nums:?}");
}

#[test]
fn rules_it_cannot_carry_out_are_refused_where_they_are_written() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/switch");
    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
        .current_dir(&data)
        .args(["switch", "-p", "pa", "-p", "pb", "-f", "refused.flows"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    sift_testkit::golden(&data.join("refused.err"), &String::from_utf8_lossy(&out.stderr));
}
