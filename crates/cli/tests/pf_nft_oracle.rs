//! A real oracle for `sift pf`: Linux netfilter (nftables with conntrack) in a network
//! namespace routing between two others, judging the same traffic; the verdicts must agree
//! packet by packet, except the documented differences below.
//!
//! Topology: `client` (c0 10.1.0.2 and .3) — `fw0` 10.1.0.1 [fw] 10.2.0.1 `fw1` — `server`
//! (s0 10.2.0.2 and .3; 10.3.0.1 and 10.3.0.200 on its loopback, routed by fw). fw forwards,
//! with one nftables rule set in its forward chain; the pf rule set that says the same is
//! beside it (`tests/data/pf_nft/NAME.nft` and `NAME.pf`): stateless pass/block by port,
//! address and protocol; block all with stateful TCP (SYN only), UDP and ICMP passes; rules by
//! interface and direction; a table of networks (with a negated entry on pf's side); strict TCP
//! windows (`nf_conntrack_tcp_loose=0`, `nf_conntrack_tcp_be_liberal=0`, `ct state invalid
//! drop`). Each pair runs in namespaces of its own, in parallel.
//!
//! Traffic: real sessions (`tests/data/pf_netns/peer.py`: HTTP-like, UDP echo, ICMP echo,
//! HTTP-like from the server side to a client-side service), then crafted packets from the
//! client (`tests/data/pf_nft/craft.py` on raw sockets: a SYN to a blocked port, an ACK without
//! a connection, a SYN from another address, UDP to a closed port and the port unreachable it
//! brings, SYNs to addresses inside and outside the table, a SYN the wrong way, and a
//! connection made by hand with data far beyond the window, a blind RST and an ACK of data never
//! sent). tcpdump captures on all of fw's interfaces (Linux cooked v2: interface and direction
//! per packet). netfilter's verdict on a packet that arrived on fw0 or fw1 is whether it left
//! by the other interface: the two copies are matched by their bytes with TTL and header
//! checksum zeroed, in order. For pf, the test writes one pcapng with both interfaces: each
//! arriving packet inbound on its interface (`epb_flags`), followed, when netfilter forwarded
//! it, by the copy that left, outbound on the other — the two passes pf makes on a router.
//! pf's verdict is pass when both pass. The pf rule sets filter on the way in and pass out
//! keeping state (out-rules that block would need the outbound copy netfilter never made).
//!
//! Documented differences, the trackers' rules (each is recognised from the packet and what
//! the endpoints saw before it — [`documented`] — counted and printed; any other disagreement
//! fails). All five come from craft.py's hand-made connection and occur in every pair that
//! keeps state:
//!
//! * `ack-slack` ([`ACK_SLACK`]): an ACK up to 66,535 bytes beyond the data the peer sent —
//!   pf passes (its `MAXACKWINDOW` slack), conntrack drops (it refuses acknowledgements of
//!   data it has not seen).
//! * `right-edge` ([`RIGHT_EDGE`]): data that starts inside the receiver's window and ends past
//!   its right edge — conntrack passes (it tests where a segment starts), pf blocks (it tests
//!   where it ends).
//! * `syn-new-isn` ([`SYN_NEW_ISN`]): a SYN with a new initial sequence number on an
//!   established connection — conntrack passes it as "ignored" (maybe a new connection its
//!   entry is out of date about), pf blocks it as out of window.
//! * `rst-in-window` ([`RST_IN_WINDOW`]): a RST in the window but not at the next sequence
//!   number — conntrack passes (the receiver answers with a challenge ACK, RFC 5961), pf blocks
//!   (it takes a RST only at the next sequence number ±1).
//! * `icmp-error-seq` ([`ICMP_SEQ`]): an ICMP error quoting a TCP segment far outside the
//!   window — conntrack relates it by addresses and ports, pf also checks the quoted sequence
//!   number.
//!
//! Where they agree, though one might expect otherwise: a SYN retransmitted with its ISN on an
//! established connection passes both; data far beyond the window, a blind RST far from it,
//! an ACK a megabyte ahead, an ACK without a connection, an ICMP error quoting an in-window
//! segment. Connections picked up mid-stream (conntrack's `nf_conntrack_tcp_loose`, pf's
//! `flags any`) do not come up: every rule set here, on both sides, admits a TCP flow only by
//! its SYN.
//!
//! Needs root, nft, tcpdump and python3: without them the test prints SKIP, and fails under
//! `SIFT_REQUIRE_ORACLES=1`. Run with `--nocapture` for the counts.

mod pf_support;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use pf_support::netns::{Ns, Proc, Tcpdump, available, veth};
use pf_support::packets::{Ip, flags};
use pf_support::replay::{Rec, Verdict, read_sll2, sift_pf, write_pcapng};

/// The rule set pairs, in `tests/data/pf_nft/`.
const PAIRS: [&str; 5] = ["stateless", "stateful", "interfaces", "tables", "window"];

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(dir)
}

/// The three namespaces of one pair.
struct Topology {
    client: Ns,
    fw: Ns,
    server: Ns,
}

fn topology(pair: &str) -> Topology {
    let t = Topology { client: Ns::new("nfc"), fw: Ns::new("nff"), server: Ns::new("nfs") };
    veth(&t.client, "c0", "10.1.0.2/24", &t.fw, "fw0", "10.1.0.1/24");
    veth(&t.fw, "fw1", "10.2.0.1/24", &t.server, "s0", "10.2.0.2/24");
    t.client.ok(&["ip", "addr", "add", "10.1.0.3/24", "dev", "c0"]);
    t.client.ok(&["ip", "route", "add", "default", "via", "10.1.0.1"]);
    t.server.ok(&["ip", "addr", "add", "10.2.0.3/24", "dev", "s0"]);
    for a in ["10.3.0.1/32", "10.3.0.200/32"] {
        t.server.ok(&["ip", "addr", "add", a, "dev", "lo"]);
    }
    t.server.ok(&["ip", "route", "add", "default", "via", "10.2.0.1"]);
    t.fw.ok(&["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    t.fw.ok(&["ip", "route", "add", "10.3.0.0/24", "via", "10.2.0.2"]);
    if pair == "window" {
        t.fw.ok(&["sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_loose=0"]);
        t.fw.ok(&["sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_be_liberal=0"]);
    }
    // The client's kernel would reset craft.py's hand-made connection (and answer SYN-ACKs
    // to its SYNs): its RSTs from those ports (TTL 64; craft.py's have 63) stay home.
    t.client.nft(
        "table inet sift {\n\
           chain output {\n\
             type filter hook output priority 0;\n\
             ip ttl 64 tcp sport 41000-41020 tcp flags & rst == rst drop\n\
           }\n\
         }\n",
    );
    let nft = std::fs::read_to_string(data("pf_nft").join(format!("{pair}.nft"))).unwrap();
    t.fw.nft(&nft);
    t
}

/// Runs the traffic through fw and returns fw's capture.
fn traffic(t: &Topology, dir: &Path) -> Vec<Rec> {
    let peer = data("pf_netns").join("peer.py");
    let craft = data("pf_nft").join("craft.py");
    let (peer, craft) = (peer.to_str().unwrap(), craft.to_str().unwrap());
    let capture = Tcpdump::start(&t.fw, &dir.join("fw.pcap"), "ip");
    let serve = |ns: &Ns, what: &str, addr: &str, port: &str| {
        Proc::start(ns, &["python3", peer, "server", what, addr, port], Some("ready"))
    };
    let servers = [
        serve(&t.server, "http", "10.2.0.2", "5006"),
        serve(&t.server, "udp", "10.2.0.2", "5004"),
        serve(&t.server, "sink", "10.2.0.2", "5007"),
        serve(&t.client, "http", "10.1.0.2", "5401"),
    ];
    for (ns, what, addr, port) in [
        (&t.client, "http", "10.2.0.2", "5006"),
        (&t.client, "udp", "10.2.0.2", "5004"),
        (&t.client, "icmp", "10.2.0.2", "0"),
        (&t.server, "http", "10.1.0.2", "5401"),
    ] {
        Proc::start(ns, &["python3", peer, "client", what, addr, port], None).wait(20);
    }
    let args = [
        "python3",
        craft,
        "10.1.0.2",
        "10.1.0.3",
        "10.2.0.2",
        "10.2.0.3",
        "10.3.0.1",
        "10.3.0.200",
    ];
    Proc::start(&t.client, &args, None).wait(30);
    for s in servers {
        s.wait(20);
    }
    read_sll2(&capture.stop())
}

/// A packet's bytes as netfilter leaves them when it forwards: TTL and header checksum zeroed.
fn forward_key(ip: &[u8]) -> Vec<u8> {
    let mut k = ip.to_vec();
    k[8] = 0;
    k[10] = 0;
    k[11] = 0;
    k
}

/// One packet that arrived at fw, and what each firewall did with it.
struct Judged {
    /// The arriving packet.
    ip: Ip,
    /// Its interface.
    iface: String,
    /// netfilter forwarded it.
    nf_pass: bool,
    /// pf's verdicts: on the way in, and out (when netfilter forwarded it).
    pf_in: Verdict,
    pf_out: Option<Verdict>,
}

impl Judged {
    fn pf_pass(&self) -> bool {
        self.pf_in.pass && self.pf_out.as_ref().is_none_or(|v| v.pass)
    }
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ip = &self.ip;
        write!(f, "in on {}: {}", self.iface, ip.src)?;
        if let Some((s, d)) = ip.ports {
            write!(f, ":{s} > {}:{d}", ip.dst)?;
        } else {
            write!(f, " > {} proto {}", ip.dst, ip.proto)?;
        }
        if let Some(t) = &ip.tcp {
            write!(f, " flags {:#04x} seq {} ack {} len {}", t.flags, t.seq, t.ack, t.len)?;
        }
        let nf = if self.nf_pass { "forwarded" } else { "dropped" };
        write!(f, " — netfilter {nf}, pf in: {}", self.pf_in)?;
        if let Some(o) = &self.pf_out {
            write!(f, ", out: {o}")?;
        }
        Ok(())
    }
}

/// The pair's verdicts, packet by packet.
fn judge(pair: &str, recs: &[Rec], names: &HashMap<u32, String>, dir: &Path) -> Vec<Judged> {
    let fw_addrs = [[10, 1, 0, 1], [10, 2, 0, 1]];
    let arriving = |r: &Rec| {
        !r.outbound && r.ipv4().is_some_and(|ip| !fw_addrs.iter().any(|a| ip[16..20] == *a))
    };
    // netfilter's verdicts: each packet that left matched to the first arrival like it.
    let mut waiting: HashMap<Vec<u8>, VecDeque<usize>> = HashMap::new();
    let mut forwarded: HashMap<usize, usize> = HashMap::new();
    let mut unmatched = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        let Some(ip) = r.ipv4() else { continue };
        if arriving(r) {
            waiting.entry(forward_key(ip)).or_default().push_back(i);
        } else if r.outbound {
            match waiting.get_mut(&forward_key(ip)).and_then(VecDeque::pop_front) {
                Some(a) => {
                    assert_ne!(recs[a].ifindex, r.ifindex, "{pair}: left by its own interface");
                    forwarded.insert(a, i);
                }
                None => unmatched.push(r.parsed()),
            }
        }
    }
    assert!(unmatched.is_empty(), "{pair}: packets fw sent of its own: {unmatched:?}");
    // pf: each arrival in, then its forwarded copy out.
    let mut merged = Vec::new();
    let mut stages = Vec::new();
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| arriving(r)) {
        merged.push(r.clone());
        let out = forwarded.get(&i).map(|&j| {
            merged.push(recs[j].clone());
            merged.len() - 1
        });
        stages.push((i, merged.len() - 1 - usize::from(out.is_some()), out));
    }
    let path = dir.join("fw.pcapng");
    write_pcapng(&merged, names, &path);
    let rules = std::fs::read_to_string(data("pf_nft").join(format!("{pair}.pf"))).unwrap();
    let v = sift_pf(&rules, &path);
    assert_eq!(v.len(), merged.len(), "{pair}");
    stages
        .into_iter()
        .map(|(i, vin, vout)| Judged {
            ip: recs[i].parsed().unwrap(),
            iface: names[&recs[i].ifindex].clone(),
            nf_pass: forwarded.contains_key(&i),
            pf_in: v[vin].clone(),
            pf_out: vout.map(|o| v[o].clone()),
        })
        .collect()
}

/// pf lets an ACK run up to `MAXACKWINDOW` (65,535 + 1,500 bytes) past what the peer has sent
/// (`ackskew >= -MAXACKWINDOW`); conntrack refuses an ACK of any data it has not seen ("ACK is
/// over upper bound").
const ACK_SLACK: &str = "ack-slack";
/// A segment that starts inside the receiver's window and ends beyond it: pf checks its end
/// against the window's right edge (`seqhi >= end`), conntrack only its start
/// (`before(seq, td_maxend + 1)`).
const RIGHT_EDGE: &str = "right-edge";
/// A SYN with a new initial sequence number on an established connection: conntrack lets it
/// through as "ignored" (it may announce a new connection the entry is out of date about; the
/// receiver answers with a challenge ACK), pf tests it against the window and blocks it (a SYN
/// purges a state only when both ends are past FIN_WAIT_2).
const SYN_NEW_ISN: &str = "syn-new-isn";
/// A RST inside the window but not at the next sequence number: conntrack passes it (the
/// receiver answers with a challenge ACK, RFC 5961), pf takes a RST only at the sender's next
/// sequence number ±1.
const RST_IN_WINDOW: &str = "rst-in-window";
/// An ICMP error quoting a TCP segment: conntrack relates it to the connection by addresses
/// and ports alone, pf also wants the quoted sequence number in the window.
const ICMP_SEQ: &str = "icmp-error-seq";

/// pf's slack for acknowledgements (`MAXACKWINDOW`).
const MAXACKWINDOW: u32 = 65_535 + 1_500;

/// Serial-number order (RFC 1982), as both trackers compare sequence numbers.
fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// What one end of a TCP connection has sent so far, as the other end saw it.
#[derive(Default, Debug)]
struct End {
    /// The sequence number after its last byte (SYN and FIN count).
    next: Option<u32>,
    /// Its initial sequence number.
    isn: Option<u32>,
    /// Its latest acknowledgement and window (scaled).
    ack: Option<u32>,
    win: u32,
    wscale: Option<u8>,
}

impl End {
    /// The right edge of the window this end offers its peer.
    fn edge(&self) -> Option<u32> {
        Some(self.ack?.wrapping_add(self.win))
    }
}

/// The two ends of the connection `(src, sport) → (dst, dport)` (that sender first), from the
/// packets netfilter forwarded before: what the endpoints themselves saw.
fn ends(
    before: &[Judged],
    src: (std::net::Ipv4Addr, u16),
    dst: (std::net::Ipv4Addr, u16),
) -> (End, End) {
    let (mut a, mut b) = (End::default(), End::default());
    let scaled = |e: &End, o: &End| e.wscale.is_some() && o.wscale.is_some();
    for j in before.iter().filter(|j| j.nf_pass) {
        let (Some(t), Some((sp, dp))) = (&j.ip.tcp, j.ip.ports) else { continue };
        let (from, to) = ((j.ip.src, sp), (j.ip.dst, dp));
        let (e, o) = if (from, to) == (src, dst) {
            (&mut a, &b)
        } else if (from, to) == (dst, src) {
            (&mut b, &a)
        } else {
            continue;
        };
        if t.flags & flags::SYN != 0 {
            e.isn.get_or_insert(t.seq);
            if t.wscale.is_some() {
                e.wscale = t.wscale;
            }
        }
        let end = t.seq.wrapping_add(t.seq_len());
        if e.next.is_none_or(|n| seq_lt(n, end)) {
            e.next = Some(end);
        }
        if t.flags & flags::ACK != 0 {
            let shift =
                if t.flags & flags::SYN == 0 && scaled(e, o) { e.wscale.unwrap_or(0) } else { 0 };
            e.ack = Some(t.ack);
            e.win = u32::from(t.win) << shift;
        }
    }
    (a, b)
}

/// The documented difference a disagreement on `j` is (one of the constants above), or `None`.
fn documented(j: &Judged, before: &[Judged]) -> Option<&'static str> {
    let pf_mismatch = !j.pf_pass()
        && [Some(&j.pf_in), j.pf_out.as_ref()]
            .into_iter()
            .flatten()
            .any(|v| v.reason == "state-mismatch");
    if let Some(t) = &j.ip.tcp {
        let (sp, dp) = j.ip.ports?;
        let (me, peer) = ends(before, (j.ip.src, sp), (j.ip.dst, dp));
        let end = t.seq.wrapping_add(t.seq_len());
        if !j.nf_pass && j.pf_pass() {
            let beyond = t.ack.wrapping_sub(peer.next?);
            let ack_only = t.flags & (flags::SYN | flags::RST | flags::FIN) == 0;
            return (ack_only && t.flags & flags::ACK != 0 && beyond > 0 && beyond <= MAXACKWINDOW)
                .then_some(ACK_SLACK);
        }
        if !(j.nf_pass && pf_mismatch) {
            return None;
        }
        let edge = peer.edge()?;
        if t.flags & flags::SYN != 0 && t.flags & flags::ACK == 0 {
            return (peer.isn.is_some() && me.isn != Some(t.seq)).then_some(SYN_NEW_ISN);
        }
        if t.flags & flags::RST != 0 {
            // The next sequence number the receiver expects (RFC 5961's RCV.NXT).
            let next = peer.ack?;
            let exact = [next.wrapping_sub(1), next, next.wrapping_add(1)].contains(&t.seq);
            return (!exact && !seq_lt(t.seq, next) && seq_lt(t.seq, edge))
                .then_some(RST_IN_WINDOW);
        }
        return (t.len > 0 && seq_lt(t.seq, edge) && seq_lt(edge, end)).then_some(RIGHT_EDGE);
    }
    // An ICMP error (unreachable, source quench, time exceeded, parameter problem) quoting a
    // TCP segment of a connection, at a sequence number outside its sender's window.
    let l4 = &j.ip.l4;
    if !(j.ip.proto == 1 && j.nf_pass && pf_mismatch && [3, 4, 11, 12].contains(l4.first()?)) {
        return None;
    }
    let quoted = l4.get(8..)?;
    let ihl = usize::from(quoted.first()? & 15) * 4;
    let q = pf_support::packets::parse_ipv4(quoted)?;
    let tcp = quoted.get(ihl..ihl + 8)?;
    if q.proto != 6 {
        return None;
    }
    let ports = (u16::from_be_bytes([tcp[0], tcp[1]]), u16::from_be_bytes([tcp[2], tcp[3]]));
    let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]);
    let (sender, receiver) = ends(before, (q.src, ports.0), (q.dst, ports.1));
    let (next, edge) = (sender.next?, receiver.edge()?);
    let window = next.wrapping_sub(receiver.win.max(1));
    (seq_lt(edge, seq) || seq_lt(seq, window)).then_some(ICMP_SEQ)
}

/// Counts for one pair.
#[derive(Default, Debug)]
struct Counts {
    packets: usize,
    nf_pass: usize,
    pf_pass: usize,
    pf_state: usize,
    differences: BTreeMap<&'static str, usize>,
}

fn run_pair(pair: &str) -> (Counts, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let t = topology(pair);
    let recs = traffic(&t, tmp.path());
    let names = t.fw.ifnames();
    let judged = judge(pair, &recs, &names, tmp.path());
    let mut c = Counts { packets: judged.len(), ..Counts::default() };
    let mut unexplained = Vec::new();
    for (k, j) in judged.iter().enumerate() {
        c.nf_pass += usize::from(j.nf_pass);
        c.pf_pass += usize::from(j.pf_pass());
        c.pf_state += usize::from(j.pf_in.by == "state");
        if j.nf_pass != j.pf_pass() {
            match documented(j, &judged[..k]) {
                Some(why) => *c.differences.entry(why).or_default() += 1,
                None => unexplained.push(format!("{pair}: packet {}: {j}", k + 1)),
            }
        }
    }
    if std::env::var_os("SIFT_PF_NFT_DUMP").is_some() {
        for (k, j) in judged.iter().enumerate() {
            println!("{pair} {}: {j}", k + 1);
        }
    }
    (c, unexplained)
}

#[test]
fn pf_agrees_with_nftables_and_conntrack() {
    if !available(&["nft", "tcpdump", "python3"]) {
        return;
    }
    let started = std::time::Instant::now();
    let results: Vec<(&str, (Counts, Vec<String>))> = std::thread::scope(|s| {
        let handles: Vec<_> = PAIRS.iter().map(|&p| (p, s.spawn(move || run_pair(p)))).collect();
        handles.into_iter().map(|(p, h)| (p, h.join().expect(p))).collect()
    });
    let mut unexplained = Vec::new();
    let mut total = Counts::default();
    for (pair, (c, u)) in &results {
        let diffs: usize = c.differences.values().sum();
        println!(
            "{pair}: {} packets; netfilter passed {}, dropped {}; pf passed {} ({} by state), \
             blocked {}; documented differences {diffs} {:?}",
            c.packets,
            c.nf_pass,
            c.packets - c.nf_pass,
            c.pf_pass,
            c.pf_state,
            c.packets - c.pf_pass,
            c.differences
        );
        total.packets += c.packets;
        total.nf_pass += c.nf_pass;
        total.pf_pass += c.pf_pass;
        for (k, v) in &c.differences {
            *total.differences.entry(k).or_default() += v;
        }
        unexplained.extend(u.iter().cloned());
    }
    println!(
        "all pairs: {} packets, netfilter passed {} / pf passed {}, documented differences {:?} \
         ({:.1} s)",
        total.packets,
        total.nf_pass,
        total.pf_pass,
        total.differences,
        started.elapsed().as_secs_f64()
    );
    assert!(unexplained.is_empty(), "verdicts differ:\n{}", unexplained.join("\n"));
    // Every pair both passed and dropped something; in the stateful ones pf passed replies by
    // state, and each documented difference came up once (craft.py's probes all happened).
    for (pair, (c, _)) in &results {
        assert!(c.nf_pass > 0 && c.nf_pass < c.packets, "{pair}: {c:?}");
        assert_eq!(c.pf_state > 0, *pair != "stateless", "{pair}: {c:?}");
        let expected: BTreeMap<&str, usize> = if *pair == "stateless" {
            BTreeMap::new()
        } else {
            [ACK_SLACK, RIGHT_EDGE, SYN_NEW_ISN, RST_IN_WINDOW, ICMP_SEQ].map(|d| (d, 1)).into()
        };
        assert_eq!(c.differences, expected, "{pair}");
    }
}
