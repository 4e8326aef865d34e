//! Issue 24's TCP tracking acceptance on sift's own captures: real kernel TCP, UDP and ICMP
//! between two network namespaces, captured on the client's side and replayed through
//! `sift pf`, block no packet; crafted packets put into a real session are blocked as
//! `state-mismatch`.
//!
//! A client namespace and a server namespace are joined by a veth pair `cl0`–`sv0`. Each
//! scenario runs `tests/data/pf_netns/peer.py` at both ends and its own tcpdump in the client
//! namespace (`-i any -y LINUX_SLL2`: each packet records its interface and whether the kernel
//! sent or received it); the test rewrites the capture as pcapng with those directions in
//! `epb_flags`, so `sift pf` judges the client's packets out and the server's in on `cl0`.
//!
//! The kernel here has no `netem`, so loss and crossing FINs are made with nftables in the
//! receiving namespace's input hook, after the client-side capture point: every 30th large
//! bulk segment is dropped at the server (retransmissions, SACK blocks), and the first FIN of
//! each side of the simultaneous close is dropped at its peer, so both FINs are on the wire
//! before either end has seen the other's (the retransmitted FINs then close the connection
//! from CLOSING). Reordering is not made.
//!
//! Each capture is checked for what its scenario is about (SACK blocks and retransmissions,
//! window scale options on the SYNs, a zero window and the probes against it, keepalive
//! probes, FINs that cross) before it is replayed, so a scenario that did not happen fails
//! instead of passing vacuously. Three small captures are committed
//! (`tests/data/pf_netns/{http,keepalive,simclose}.pcapng`, rewritten by a root run with
//! `BLESS=1`) and replayed without root, crafted packets included.
//!
//! Needs root, nft, tcpdump and python3: without them the namespace test prints SKIP, and
//! fails under `SIFT_REQUIRE_ORACLES=1`.

mod pf_support;

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use pf_support::netns::{Ns, Proc, Tcpdump, available, veth};
use pf_support::packets::{Ip, Tcp, TcpSpec, flags, tcp};
use pf_support::replay::{Rec, read_sll2, sift_pf, write_pcapng};

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

/// The scenarios, the server's port (0: ICMP), and tcpdump's filter.
const SCENARIOS: [(&str, u16); 7] = [
    ("bulk", 5001),
    ("zerowin", 5002),
    ("keepalive", 5003),
    ("udp", 5004),
    ("simclose", 5005),
    ("http", 5006),
    ("icmp", 0),
];

/// Everything is passed, keeping state (`pass all` is `flags S/SA keep state`).
const PASS_ALL: &str = "pass all\n";
/// Only the client's first packet of a flow passes by rule; everything else needs its state.
const CLIENT_ONLY: &str = "block all\n\
                           pass out proto tcp flags S/SA keep state\n\
                           pass out proto { udp icmp } keep state\n";

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pf_netns")
}

/// The client's and server's namespaces, joined, with the drops that make loss and crossing
/// FINs.
struct Net {
    client: Ns,
    server: Ns,
}

fn net() -> Net {
    let client = Ns::new("pfc");
    let server = Ns::new("pfs");
    veth(&client, "cl0", "10.77.0.1/24", &server, "sv0", "10.77.0.2/24");
    // `numgen inc` counts only the packets that reach it: the 10th of every 30 large bulk
    // segments, and the first FIN of each direction of the simultaneous close.
    server.nft(
        "table inet sift {\n\
           chain input {\n\
             type filter hook input priority 0;\n\
             tcp dport 5001 meta length > 1000 numgen inc mod 30 == 10 drop\n\
             tcp dport 5005 tcp flags & fin == fin numgen inc mod 1000 == 0 drop\n\
           }\n\
         }\n",
    );
    client.nft(
        "table inet sift {\n\
           chain input {\n\
             type filter hook input priority 0;\n\
             tcp sport 5005 tcp flags & fin == fin numgen inc mod 1000 == 0 drop\n\
           }\n\
         }\n",
    );
    Net { client, server }
}

/// Runs one scenario with its own capture; returns the captured records.
fn run_scenario(net: &Net, dir: &Path, name: &str, port: u16) -> Vec<Rec> {
    let filter = match (name, port) {
        (_, 0) => "icmp".to_string(),
        ("udp", p) => format!("udp port {p}"),
        (_, p) => format!("tcp port {p}"),
    };
    let peer = data_dir().join("peer.py");
    let peer = peer.to_str().unwrap();
    let port = port.to_string();
    let server = SERVER.to_string();
    let capture = Tcpdump::start(&net.client, &dir.join(format!("{name}.pcap")), &filter);
    let srv = (name != "icmp").then(|| {
        Proc::start(&net.server, &["python3", peer, "server", name, &server, &port], Some("ready"))
    });
    Proc::start(&net.client, &["python3", peer, "client", name, &server, &port], None).wait(20);
    if let Some(s) = srv {
        s.wait(20);
    }
    read_sll2(&capture.stop())
}

/// The segments of a capture with their direction (true: the client's).
fn segments(recs: &[Rec]) -> Vec<(bool, Tcp)> {
    recs.iter().filter_map(|r| Some((r.outbound, r.parsed()?.tcp?))).collect()
}

/// Checks that a capture shows what its scenario is about.
fn check_scenario(name: &str, recs: &[Rec]) {
    let ips: Vec<(bool, Ip)> =
        recs.iter().filter_map(|r| Some((r.outbound, r.parsed()?))).collect();
    assert_eq!(ips.len(), recs.len(), "{name}: a packet that is not IPv4");
    for (out, ip) in &ips {
        let (from, to) = if *out { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
        assert_eq!((ip.src, ip.dst), (from, to), "{name}: a packet in the wrong direction");
    }
    let segs = segments(recs);
    let count = |f: &dyn Fn(bool, &Tcp) -> bool| segs.iter().filter(|(o, t)| f(*o, t)).count();
    let syn = |o: bool, t: &Tcp| o == (t.flags & flags::ACK == 0) && t.flags & flags::SYN != 0;
    if !matches!(name, "udp" | "icmp") {
        // Window scaling is on by default: both SYNs carry the option.
        assert_eq!(count(&|o, t| syn(o, t) && t.wscale.is_some()), 2, "{name}: SYNs with wscale");
    }
    // The last ack each side sent before each segment, for probes (seq = peer's ack − 1).
    let probes = |zero_window_first: bool| {
        let (mut srv_ack, mut zero) = (None, false);
        let mut n = 0;
        for (out, t) in &segs {
            if !out {
                srv_ack = Some(t.ack);
                zero |= t.win == 0;
            } else if t.len == 0
                && t.flags == flags::ACK
                && Some(t.seq.wrapping_add(1)) == srv_ack
                && (zero || !zero_window_first)
            {
                n += 1;
            }
        }
        n
    };
    match name {
        "bulk" => {
            let mut top = None::<u32>;
            let mut retransmitted = 0;
            for (out, t) in &segs {
                if *out && t.len > 0 {
                    let end = t.seq.wrapping_add(t.len);
                    match top {
                        Some(m) if (end.wrapping_sub(m) as i32) <= 0 => retransmitted += 1,
                        _ => top = Some(end),
                    }
                }
            }
            assert!(retransmitted > 0, "bulk: no retransmission");
            assert!(count(&|o, t| !o && t.sack_blocks > 0) > 0, "bulk: no SACK block");
        }
        "zerowin" => {
            assert!(count(&|o, t| !o && t.win == 0) > 0, "zerowin: the window never closed");
            assert!(probes(true) > 0, "zerowin: no zero-window probe");
        }
        "keepalive" => assert!(probes(false) >= 2, "keepalive: {} probes", probes(false)),
        "simclose" => {
            let fins: Vec<&(bool, Tcp)> =
                segs.iter().filter(|(_, t)| t.flags & flags::FIN != 0).collect();
            let first = fins.first().expect("simclose: no FIN");
            let other = fins.iter().find(|(o, _)| *o != first.0).expect("simclose: one FIN");
            let first_end = first.1.seq.wrapping_add(first.1.seq_len());
            assert!(
                (other.1.ack.wrapping_sub(first_end) as i32) < 0,
                "simclose: the second FIN acknowledges the first: {fins:?}"
            );
        }
        "http" => {
            assert!(count(&|o, t| o && t.len > 0) > 0 && count(&|o, t| !o && t.len > 1000) > 0);
            assert_eq!(count(&|_, t| t.flags & flags::FIN != 0), 2, "http: FINs");
        }
        "udp" => {
            let n = |out: bool| ips.iter().filter(|(o, ip)| *o == out && ip.proto == 17).count();
            assert!(n(true) >= 3 && n(false) >= 3, "udp: {} out, {} in", n(true), n(false));
        }
        "icmp" => {
            let n = |out: bool| ips.iter().filter(|(o, ip)| *o == out && ip.proto == 1).count();
            assert!(n(true) >= 3 && n(false) >= 3, "icmp: {} out, {} in", n(true), n(false));
        }
        _ => unreachable!(),
    }
}

/// Replays a capture through both rule sets: nothing blocked; with [`CLIENT_ONLY`], the
/// server's packets all pass by state, and exactly one packet (the flow's first) by a rule.
/// Returns (packets, passed by state) for the second.
fn check_replay(name: &str, recs: &[Rec], pcapng: &Path) -> (usize, usize) {
    for rules in [PASS_ALL, CLIENT_ONLY] {
        let v = sift_pf(rules, pcapng);
        assert_eq!(v.len(), recs.len(), "{name}");
        for (i, (r, v)) in recs.iter().zip(&v).enumerate() {
            assert!(v.pass, "{name}: packet {} blocked ({v}) by {rules:?}", i + 1);
            if !r.outbound && rules == CLIENT_ONLY {
                assert_eq!(v.by, "state", "{name}: packet {} from the server: {v}", i + 1);
            }
        }
        let by_rule = v.iter().filter(|v| v.by != "state").count();
        if rules == CLIENT_ONLY {
            assert_eq!(by_rule, 1, "{name}: packets passed by a rule: {v:?}");
            return (v.len(), v.len() - by_rule);
        }
    }
    unreachable!()
}

/// Puts three crafted segments from the server into the HTTP session, after the server's
/// first data segment: data far beyond the window, a RST far from the expected sequence
/// number, an ACK of data the client never sent. pf blocks each as `state-mismatch`; the real
/// packets around them all still pass.
fn check_crafted(recs: &[Rec], names: &HashMap<u32, String>, dir: &Path) -> usize {
    let segs: Vec<(usize, bool, Tcp, Ip)> = recs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let ip = r.parsed()?;
            Some((i, r.outbound, ip.tcp.clone()?, ip))
        })
        .collect();
    let &(at, _, _, ref first_data) =
        segs.iter().find(|(_, out, t, _)| !out && t.len > 0).expect("the server's data");
    let (mut cli_next, mut srv_next) = (0u32, 0u32);
    for (i, out, t, _) in &segs {
        if *i > at {
            break;
        }
        let end = t.seq.wrapping_add(t.seq_len());
        let next = if *out { &mut cli_next } else { &mut srv_next };
        if *next == 0 || (end.wrapping_sub(*next) as i32) > 0 {
            *next = end;
        }
    }
    let (sport, dport) = first_data.ports.unwrap();
    let spec = |seq: u32, ack: u32, f: u8| TcpSpec {
        src: (SERVER, sport),
        dst: (CLIENT, dport),
        seq,
        ack,
        flags: f,
        win: 500,
    };
    let crafted = [
        (
            "data beyond the window",
            spec(srv_next.wrapping_add(0x4000_0000), cli_next, flags::ACK | flags::PSH),
            100,
        ),
        (
            "blind RST",
            spec(srv_next.wrapping_add(0x2000_0000), cli_next, flags::RST | flags::ACK),
            0,
        ),
        (
            "ACK beyond what was sent",
            spec(srv_next, cli_next.wrapping_add(1_000_000), flags::ACK),
            0,
        ),
    ];
    let base = &recs[at];
    let mut all: Vec<Rec> = recs[..=at].to_vec();
    for (n, (_, s, len)) in crafted.iter().enumerate() {
        let ip = tcp(s, 0xc000 + n as u16, &vec![b'x'; *len]);
        all.push(Rec::crafted(base.ts, base.ifindex, false, &ip));
    }
    all.extend_from_slice(&recs[at + 1..]);
    let path = dir.join("http-crafted.pcapng");
    write_pcapng(&all, names, &path);
    for rules in [PASS_ALL, CLIENT_ONLY] {
        let v = sift_pf(rules, &path);
        for (i, v) in v.iter().enumerate() {
            match i.checked_sub(at + 1).and_then(|k| crafted.get(k)) {
                Some((what, ..)) => {
                    assert!(!v.pass && v.reason == "state-mismatch", "{what}: {v} with {rules:?}")
                }
                None => assert!(v.pass, "packet {} of the session: {v} with {rules:?}", i + 1),
            }
        }
    }
    crafted.len()
}

#[test]
fn own_captures_between_namespaces_replay_through_pf_without_a_block() {
    if !available(&["nft", "tcpdump", "python3"]) {
        return;
    }
    let started = std::time::Instant::now();
    let net = net();
    let tmp = tempfile::tempdir().unwrap();
    let names = net.client.ifnames();
    let captures: Vec<(&str, Vec<Rec>)> = std::thread::scope(|s| {
        let handles: Vec<_> = SCENARIOS
            .iter()
            .map(|&(name, port)| {
                let (net, dir) = (&net, tmp.path());
                (name, s.spawn(move || run_scenario(net, dir, name, port)))
            })
            .collect();
        handles.into_iter().map(|(n, h)| (n, h.join().expect(n))).collect()
    });
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    for (name, recs) in &captures {
        check_scenario(name, recs);
        let pcapng = tmp.path().join(format!("{name}.pcapng"));
        write_pcapng(recs, &names, &pcapng);
        let (n, by_state) = check_replay(name, recs, &pcapng);
        println!("{name}: {n} packets, none blocked, {by_state} passed by state");
        if bless && matches!(*name, "http" | "keepalive" | "simclose") {
            std::fs::copy(&pcapng, data_dir().join(format!("{name}.pcapng"))).unwrap();
        }
        if *name == "http" {
            let n = check_crafted(recs, &names, tmp.path());
            println!("http: {n} crafted segments blocked as state-mismatch");
        }
    }
    println!("namespace scenarios: {:.1} s", started.elapsed().as_secs_f64());
}

/// The committed captures, replayed without root: the same checks, crafted packets included.
#[test]
fn committed_namespace_captures_replay_through_pf() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["http", "keepalive", "simclose"] {
        let path = data_dir().join(format!("{name}.pcapng"));
        let (recs, names) = read_pcapng(&path);
        check_scenario(name, &recs);
        let (n, by_state) = check_replay(name, &recs, &path);
        println!("{name} (committed): {n} packets, none blocked, {by_state} passed by state");
        if name == "http" {
            check_crafted(&recs, &names, tmp.path());
        }
    }
}

/// Reads a capture written by [`write_pcapng`] back into records.
fn read_pcapng(path: &Path) -> (Vec<Rec>, HashMap<u32, String>) {
    let mut r = sift_pcap::open(path).unwrap();
    let (mut recs, mut names) = (Vec::new(), HashMap::new());
    while let Some((p, ifaces, flags)) = r.next_with_flags().unwrap() {
        let d = p.data;
        let ifindex = u32::from_be_bytes([d[4], d[5], d[6], d[7]]);
        names.insert(ifindex, ifaces[p.interface as usize].name.clone().unwrap());
        let outbound = flags.and_then(sift_pcap::PacketFlags::direction)
            == Some(sift_pcap::Direction::Outbound);
        recs.push(Rec { ts: p.timestamp, ifindex, outbound, frame: d.to_vec() });
    }
    (recs, names)
}
