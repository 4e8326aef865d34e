//! Issue 17's acceptance for pf's rewriting, judged by real kernels: `sift pf bridge` runs
//! between a client namespace and a server namespace, and the Linux TCP/IP stacks at both ends
//! must accept what pf makes of their packets.
//!
//! Three namespaces: `sbrc` (the client, `c0` 10.77.0.1/24), `sbrs` (the server, `s0`
//! 10.77.0.2/24) and `sbrb`, which holds the other ends of both veth pairs (`ba` facing the
//! client, `bb` facing the server, no addresses) and runs `sift pf bridge -f RULES ba bb`. The
//! client and server are small Python programs ([`PEER`]); tcpdump captures in `sbrc` and
//! `sbrs` show what each kernel sent and received.
//!
//! - `modulate state`: a 100 KB echo completes, and the server receives the client's SYN with
//!   another initial sequence number than the client sent (the same shift on the client's
//!   FIN); with `keep state` the numbers are the same.
//! - `block return`: a TCP connection to a blocked port is refused at once (pf's RST), a UDP
//!   datagram to a blocked port gets ICMP port unreachable (the client's recv is refused).
//!   The server listens on both ports, so without pf's answers the connection would succeed
//!   and the datagram go unanswered.
//! - `synproxy state`: the echo completes, the server sees no SYN before the client's
//!   handshake is done.
//!
//! The client and server send complete checksums (transmit checksum offload is turned off on
//! `c0` and `s0`, which also turns off TSO): the bridge forwards frames as read.
//!
//! Needs root, tcpdump and python3: without them each test prints SKIP, and fails under
//! `SIFT_REQUIRE_ORACLES=1`.

mod pf_support;

use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pf_support::netns::{Ns, Proc, Tcpdump, available, run_ok};
use pf_support::packets::{Tcp, flags};
use pf_support::replay::{Rec, read_sll2};

/// The client's address.
const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The server's address, as the programs take it.
const SERVER: &str = "10.77.0.2";

/// The client's and server's programs: `python3 -c PEER MODE ARGS…`.
///
/// - `txoff DEV…`: transmit checksum offload off (`ethtool -K DEV tx off`, by its ioctl).
/// - `server ADDR PORT`: listens on TCP and UDP port PORT, prints `ready`, echoes one TCP
///   connection (the UDP socket only keeps the kernel from answering).
/// - `echo ADDR PORT N`: sends N bytes, reads them back, checks them; prints the seconds taken.
/// - `tcp ADDR PORT`: connects; prints `refused SECONDS`, `timeout` or `connected`.
/// - `udp ADDR PORT`: sends a datagram on a connected socket, then reads; prints `refused`,
///   `timeout` or `answered`.
const PEER: &str = r#"
import ctypes, fcntl, socket, struct, sys, time
mode, args = sys.argv[1], sys.argv[2:]
if mode == "txoff":
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for dev in args:
        val = ctypes.create_string_buffer(struct.pack("II", 0x17, 0))  # ETHTOOL_STXCSUM
        ifr = struct.pack("16sP", dev.encode(), ctypes.addressof(val))
        fcntl.ioctl(sock.fileno(), 0x8946, ifr)  # SIOCETHTOOL
    sys.exit(0)
host, port = args[0], int(args[1])
if mode == "server":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(4)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((host, port))
    print("ready", flush=True)
    c, _ = s.accept()
    c.settimeout(20)
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.close()
elif mode == "echo":
    n = int(args[2])
    data = bytes((i * 7 + i // 251) % 256 for i in range(n))
    t = time.monotonic()
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = bytearray()
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    took = time.monotonic() - t
    if bytes(got) != data:
        sys.exit("the echo differs: %d bytes back of %d" % (len(got), n))
    print("%.6f" % took)
elif mode == "tcp":
    t = time.monotonic()
    try:
        socket.create_connection((host, port), timeout=5)
        print("connected")
    except ConnectionRefusedError:
        print("refused %.6f" % (time.monotonic() - t))
    except socket.timeout:
        print("timeout")
elif mode == "udp":
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(3)
    u.connect((host, port))
    u.send(b"sift")
    try:
        u.recv(100)
        print("answered")
    except ConnectionRefusedError:
        print("refused")
    except socket.timeout:
        print("timeout")
"#;

/// Whether the tests can run (prints SKIP otherwise; panics under `SIFT_REQUIRE_ORACLES=1`).
fn can_run() -> bool {
    available(&["ip", "tcpdump", "python3"])
}

/// Deletes the namespaces a crashed earlier run left (`sift-sbr?-PID-N` of a process gone).
fn remove_leftovers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let list = run_ok(Command::new("ip").args(["netns", "list"]));
        for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
            let mut parts = name.split('-');
            let (Some("sift"), Some(tag), Some(pid)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if tag.starts_with("sbr") && !Path::new("/proc").join(pid).exists() {
                let _ = Command::new("ip").args(["netns", "del", name]).status();
            }
        }
    });
}

/// `sift pf bridge` running in `sbrb`; stopped with SIGINT (killed if still running on drop).
struct Bridge {
    child: Child,
    stderr: mpsc::Receiver<String>,
}

impl Bridge {
    /// Starts the bridge between `ba` and `bb` (`$A` and `$B` in `rules`), its verdicts
    /// written to `verdicts`; returns once both rings read.
    fn start(ns: &Ns, rules: &Path, verdicts: &Path) -> Bridge {
        let mut child = ns
            .cmd(&[env!("CARGO_BIN_EXE_sift"), "pf", "bridge", "-f", rules.to_str().unwrap()])
            .args(["-D", "A=ba", "-D", "B=bb", "--verdicts", "ba", "bb"])
            .stdout(std::fs::File::create(verdicts).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sift pf bridge");
        let err = child.stderr.take().unwrap();
        let (tx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bridge = Bridge { child, stderr };
        match bridge.stderr.recv_timeout(Duration::from_secs(20)) {
            Ok(l) if l == "sift: pf bridge: ba <-> bb" => bridge,
            other => {
                let _ = bridge.child.kill();
                let rest: Vec<String> = bridge.stderr.try_iter().collect();
                panic!("sift pf bridge did not start: {other:?} {rest:?}");
            }
        }
    }

    /// Stops the bridge with SIGINT; returns its summary (standard error), which must say it
    /// forwarded without sending errors.
    fn stop(mut self) -> String {
        run_ok(Command::new("kill").args(["-INT", &self.child.id().to_string()]));
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "sift pf bridge did not stop on SIGINT");
            std::thread::sleep(Duration::from_millis(10));
        };
        let summary = self.stderr.iter().collect::<Vec<_>>().join("\n");
        assert!(status.success(), "sift pf bridge: {status}: {summary}");
        assert!(!summary.contains("send errors"), "{summary}");
        assert!(!summary.contains("dropped by the kernel"), "{summary}");
        summary
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The three namespaces, joined through the bridge's namespace. Fields drop in order: the
/// bridge stops before its namespace goes.
struct Net {
    bridge: Option<Bridge>,
    client: Ns,
    server: Ns,
    _middle: Ns,
    dir: tempfile::TempDir,
}

/// Joins `end` (interface `end_if`, address `addr`) to the bridge's namespace (`mid_if`, no
/// address), both up, the end's transmit checksum offload off.
fn link(end: &Ns, end_if: &str, addr: &str, middle: &Ns, mid_if: &str) {
    run_ok(Command::new("ip").args([
        "link",
        "add",
        end_if,
        "netns",
        &end.name,
        "type",
        "veth",
        "peer",
        "name",
        mid_if,
        "netns",
        &middle.name,
    ]));
    end.ok(&["ip", "addr", "add", addr, "dev", end_if]);
    end.ok(&["ip", "link", "set", end_if, "up"]);
    middle.ok(&["ip", "link", "set", mid_if, "up"]);
    end.ok(&["python3", "-c", PEER, "txoff", end_if]);
}

impl Net {
    /// The namespaces, with `sift pf bridge -f RULES` running between them.
    fn new(rules: &str) -> Net {
        remove_leftovers();
        let client = Ns::new("sbrc");
        let server = Ns::new("sbrs");
        let middle = Ns::new("sbrb");
        link(&client, "c0", "10.77.0.1/24", &middle, "ba");
        link(&server, "s0", "10.77.0.2/24", &middle, "bb");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pf.conf");
        std::fs::write(&file, rules).unwrap();
        let bridge = Some(Bridge::start(&middle, &file, &dir.path().join("verdicts.txt")));
        Net { bridge, client, server, _middle: middle, dir }
    }

    /// Stops the bridge; returns its summary and its `--verdicts` lines.
    fn stop(&mut self) -> (String, String) {
        let summary = self.bridge.take().expect("the bridge runs").stop();
        (summary, std::fs::read_to_string(self.dir.path().join("verdicts.txt")).unwrap())
    }

    /// Runs the client program `args` (see [`PEER`]); returns its one line of output.
    fn client(&self, args: &[&str]) -> String {
        let mut cmd = self.client.cmd(&["python3", "-c", PEER]);
        run_ok(cmd.args(args)).trim().to_string()
    }

    /// Starts the server on `port`.
    fn server(&self, port: u16) -> Proc {
        let port = port.to_string();
        let args = ["python3", "-c", PEER, "server", SERVER, &port];
        Proc::start(&self.server, &args, Some("ready"))
    }

    /// tcpdump in the client's and the server's namespaces.
    fn captures(&self, filter: &str) -> (Tcpdump, Tcpdump) {
        let c = Tcpdump::start(&self.client, &self.dir.path().join("client.pcap"), filter);
        let s = Tcpdump::start(&self.server, &self.dir.path().join("server.pcap"), filter);
        (c, s)
    }
}

/// The TCP segments of a capture taken at one end, with their time and whether the client
/// sent them.
fn segments(recs: &[Rec]) -> Vec<(Duration, bool, Tcp)> {
    recs.iter()
        .filter_map(|r| {
            let ip = r.parsed()?;
            let at = Duration::new(r.ts.secs, r.ts.nanos);
            Some((at, ip.src == CLIENT, ip.tcp?))
        })
        .collect()
}

/// The first segment the client sent with exactly `want` of SYN/ACK/FIN/RST set.
fn first(segs: &[(Duration, bool, Tcp)], want: u8) -> &(Duration, bool, Tcp) {
    let mask = flags::SYN | flags::ACK | flags::FIN | flags::RST;
    segs.iter()
        .find(|(_, from_client, t)| *from_client && t.flags & mask == want)
        .unwrap_or_else(|| panic!("no client segment with flags {want:#x} in {segs:?}"))
}

/// The client's initial sequence number and its FIN's sequence number, as seen at the client
/// and at the server, after a 100 KB echo through the bridge with `rules`.
fn echo_through(rules: &str, port: u16) -> ([u32; 2], [u32; 2]) {
    let mut net = Net::new(rules);
    let (cap_c, cap_s) = net.captures(&format!("tcp port {port}"));
    let server = net.server(port);
    let took = net.client(&["echo", SERVER, &port.to_string(), "102400"]);
    server.wait(20);
    let (at_c, at_s) = (read_sll2(&cap_c.stop()), read_sll2(&cap_s.stop()));
    let (summary, _) = net.stop();
    let secs: f64 = took.parse().unwrap_or_else(|_| panic!("client said {took:?}"));
    eprintln!("100 KB echoed through sift pf bridge in {:.1} ms\n{summary}", secs * 1e3);
    let (seg_c, seg_s) = (segments(&at_c), segments(&at_s));
    let syn = [first(&seg_c, flags::SYN).2.seq, first(&seg_s, flags::SYN).2.seq];
    // The FIN's own number, after the data it may carry.
    let fin = |segs| {
        let t = &first(segs, flags::FIN | flags::ACK).2;
        t.seq.wrapping_add(t.len)
    };
    (syn, [fin(&seg_c), fin(&seg_s)])
}

#[test]
fn modulate_state_gives_the_server_other_sequence_numbers_and_the_echo_completes() {
    if !can_run() {
        return;
    }
    let ([syn_c, syn_s], [fin_c, fin_s]) =
        echo_through("pass\npass in on $A proto tcp modulate state\n", 5001);
    assert_ne!(syn_c, syn_s, "modulate state left the client's ISN as it was");
    // The client's whole sequence space moved by the one shift: 1 (SYN) + 102400 bytes.
    assert_eq!(fin_c.wrapping_sub(syn_c), 102_401);
    assert_eq!(fin_s.wrapping_sub(syn_s), 102_401);
}

#[test]
fn keep_state_leaves_the_sequence_numbers_alone() {
    if !can_run() {
        return;
    }
    let (syn, fin) = echo_through("pass\npass in on $A proto tcp keep state\n", 5001);
    assert_eq!(syn[0], syn[1]);
    assert_eq!(fin[0], fin[1]);
}

#[test]
fn block_return_refuses_tcp_with_a_reset_and_udp_with_port_unreachable() {
    if !can_run() {
        return;
    }
    let mut net = Net::new(
        "pass\n\
         block return in on $A proto tcp to port 5002\n\
         block return in on $A proto udp to port 5002\n",
    );
    // The server listens on both: only pf's answers refuse.
    let _server = net.server(5002);
    let tcp = net.client(&["tcp", SERVER, "5002"]);
    let secs: f64 = match tcp.strip_prefix("refused ") {
        Some(s) => s.parse().unwrap(),
        None => panic!("the TCP connection was not refused: {tcp}"),
    };
    assert!(secs < 1.0, "refused only after {secs} s");
    assert_eq!(net.client(&["udp", SERVER, "5002"]), "refused");
    let (summary, verdicts) = net.stop();
    eprintln!("TCP refused in {:.2} ms\n{summary}", secs * 1e3);
    assert!(
        summary.contains("ba>bb: ") && summary.contains("0 held, 2 blocked, 2 answers"),
        "{summary}"
    );
    // Each answered by its own rule (`pass` is @0).
    for rule in ["@1", "@2"] {
        let want = format!(" ba>bb in block {rule} match answered");
        assert!(verdicts.lines().any(|l| l.ends_with(&want)), "no {want:?} in:\n{verdicts}");
    }
}

#[test]
fn synproxy_completes_the_clients_handshake_before_opening_the_servers() {
    if !can_run() {
        return;
    }
    let mut net = Net::new("pass\npass in on $A proto tcp synproxy state\n");
    let (cap_c, cap_s) = net.captures("tcp port 5001");
    let server = net.server(5001);
    // The echo checks the data both ways.
    let took = net.client(&["echo", SERVER, "5001", "102400"]);
    server.wait(20);
    let (at_c, at_s) = (read_sll2(&cap_c.stop()), read_sll2(&cap_s.stop()));
    let (summary, _) = net.stop();
    eprintln!("100 KB echoed through synproxy in {took} s\n{summary}");
    let (seg_c, seg_s) = (segments(&at_c), segments(&at_s));
    // The client's handshake: its SYN, pf's SYN-ACK, its ACK (no data).
    let (client_ack, _, ack) = first(&seg_c, flags::ACK);
    assert_eq!(ack.len, 0, "the client's first ACK carries data: {ack:?}");
    let (server_syn, _, _) = first(&seg_s, flags::SYN);
    assert!(
        client_ack < server_syn,
        "the server saw a SYN at {server_syn:?}, before the client's handshake completed at \
         {client_ack:?}"
    );
    // Data crossed both ways at the server.
    assert!(seg_s.iter().any(|(_, from_client, t)| *from_client && t.len > 0));
    assert!(seg_s.iter().any(|(_, from_client, t)| !*from_client && t.len > 0));
}
