//! Issue 26's deployment commands against real kernels: `sift xdp attach|show|detach` and
//! `sift pf load|show|flush` on one end of a veth pair between two namespaces, with Linux's
//! TCP and UDP on both ends.
//!
//! - `sift xdp attach -i IF EXPR` drops the datagrams the expression does not match and
//!   passes the rest; `--pass-only` passes everything and counts (`sift xdp show`); attaching
//!   again replaces; `detach` restores the path; `--dry-run` prints the program and the
//!   verifier's verdict.
//! - `sift pf load` with `block all` / `pass out keep state` on the client's interface: the
//!   client's TCP sessions out work through their states, a connection from the server in is
//!   blocked; `sift pf show` prints the rules with counters and the states; `flush --states`
//!   empties the table; `flush` removes pf (links, pins and the saved rule set).
//! - Reloading under traffic (another rule set, then the other hook) keeps the states: a
//!   slow transfer that is running meanwhile completes, which it could not if its state were
//!   lost (`block all` would drop the answers).
//!
//! Interface names carry the process id: pins (`/sys/fs/bpf/sift/IF`) and saved rule sets
//! (`/run/sift/pf/IF`) are by name and tests run in parallel. Needs root and python3: SKIP
//! otherwise, failing under `SIFT_REQUIRE_ORACLES=1`.

mod pf_support;

use std::path::Path;
use std::process::Command;

use pf_support::netns::{Ns, available, veth};

const SIFT: &str = env!("CARGO_BIN_EXE_sift");

/// Peers: `python3 -c PEER MODE ARGS…`.
///
/// - `server ADDR PORT`: listens on TCP, prints `ready`, echoes one connection (at most 8 s
///   to come).
/// - `echo ADDR PORT N [slow]`: sends N bytes (slowly: 1,000 every 10 ms), reads them back;
///   prints `echo ok`, `echo broken N` or `connect failed`.
/// - `udp ADDR PORT`: binds, prints `ready`, prints `got N` for each datagram until 1 s passes
///   without one.
/// - `send ADDR PORT N`: sends N datagrams.
const PEER: &str = r#"
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "server":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(4)
    s.settimeout(8)
    print("ready", flush=True)
    try:
        c, _ = s.accept()
    except socket.timeout:
        sys.exit(0)
    c.settimeout(10)
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
elif mode == "echo":
    n = int(sys.argv[4])
    slow = len(sys.argv) > 5
    data = bytes(i % 251 for i in range(n))
    try:
        s = socket.create_connection((host, port), timeout=3)
    except OSError:
        print("connect failed")
        sys.exit(0)
    s.settimeout(10)
    for i in range(0, n, 1000):
        s.sendall(data[i:i + 1000])
        if slow:
            time.sleep(0.01)
    s.shutdown(socket.SHUT_WR)
    got = bytearray()
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    print("echo ok" if bytes(got) == data else "echo broken %d" % len(got))
elif mode == "udp":
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((host, port))
    u.settimeout(1)
    print("ready", flush=True)
    n = 0
    try:
        while True:
            u.recv(100)
            n += 1
    except socket.timeout:
        pass
    print("got %d" % n)
elif mode == "send":
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(int(sys.argv[4])):
        u.sendto(b"sift", (host, port))
"#;

fn can_run() -> bool {
    available(&["ip", "nsenter", "python3"])
}

/// Two namespaces joined by a veth pair: the client's `IF` 10.79.0.1, the server's 10.79.0.2.
struct Pair {
    client: Ns,
    server: Ns,
    iface: String,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let client = Ns::new(&format!("{tag}c"));
        let server = Ns::new(&format!("{tag}s"));
        let iface = format!("{tag}{}", std::process::id() % 100_000);
        veth(&client, &iface, "10.79.0.1/24", &server, "peer0", "10.79.0.2/24");
        // A moment for the pair to carry frames (the first ones can vanish).
        std::thread::sleep(std::time::Duration::from_millis(500));
        Pair { client, server, iface }
    }

    /// `sift ARGS` in the client's network namespace: (success, stdout, stderr).
    fn sift(&self, args: &[&str]) -> (bool, String, String) {
        let o = self.client.net_cmd(&[SIFT]).args(args).output().expect("run sift");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    fn sift_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.sift(args);
        assert!(ok, "sift {args:?}: {err}");
        out
    }

    /// Runs the peer `args` in `ns`, waiting for it; returns its last line.
    fn peer(ns: &Ns, args: &[&str]) -> String {
        let o = ns.net_cmd(&["python3", "-c", PEER]).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or("").to_string()
    }

    /// Starts the peer `args` in `ns` once it printed `ready`.
    fn start(ns: &Ns, args: &[&str]) -> std::process::Child {
        use std::io::BufRead;
        let mut child = ns
            .net_cmd(&["python3", "-c", PEER])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "{args:?}");
        // Keep reading in the background so the child never blocks on its output.
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut rest);
            rest
        });
        child
    }

    /// How many of `n` datagrams to the client's UDP port `port` arrive.
    fn udp_in(&self, port: &str, n: usize) -> usize {
        let mut child = self
            .client
            .net_cmd(&["python3", "-c", PEER, "udp", "10.79.0.1", port])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        Pair::peer(&self.server, &["send", "10.79.0.1", port, &n.to_string()]);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        child.wait().unwrap();
        rest.trim().strip_prefix("got ").and_then(|n| n.parse().ok()).expect("udp count")
    }

    /// A TCP echo of `n` bytes from `from` to `to_addr` (whose namespace is `to`).
    fn echo(from: &Ns, to: &Ns, to_addr: &str, port: &str, n: usize) -> String {
        let mut server = Pair::start(to, &["server", to_addr, port]);
        let got = Pair::peer(from, &["echo", to_addr, port, &n.to_string()]);
        let _ = server.kill();
        let _ = server.wait();
        got
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // Whatever a failed test left attached or pinned (by name, so outside the namespaces).
        let _ = self.sift(&["xdp", "detach", "-i", &self.iface]);
        let _ = self.sift(&["pf", "flush", "-i", &self.iface]);
        let _ = std::fs::remove_dir_all(Path::new("/sys/fs/bpf/sift").join(&self.iface));
        let _ = std::fs::remove_dir_all(Path::new("/run/sift/pf").join(&self.iface));
    }
}

#[test]
fn xdp_attach_drops_what_does_not_match_counts_and_detaches() {
    if !can_run() {
        return;
    }
    let p = Pair::new("kx");
    let i = p.iface.as_str();
    assert_eq!(p.udp_in("5000", 5), 5);
    let out = p.sift_ok(&["xdp", "attach", "-i", i, "udp port 53 or arp"]);
    assert!(out.starts_with(&format!("attached to {i} xdp (native)")), "{out}");
    assert_eq!(p.udp_in("5000", 5), 0, "port 5000 must be dropped");
    assert_eq!(p.udp_in("53", 5), 5, "port 53 must pass");
    let out = p.sift_ok(&["xdp", "attach", "-i", i, "--pass-only", "udp port 53"]);
    assert!(out.starts_with(&format!("replaced on {i}")), "{out}");
    assert_eq!(p.udp_in("5000", 4), 4);
    assert_eq!(p.udp_in("53", 3), 3);
    let show = p.sift_ok(&["xdp", "show", "-i", i]);
    assert!(show.contains(", 3 matched, "), "{show}");
    let missed: u64 = show
        .split(" matched, ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(missed >= 4, "{show}");
    p.sift_ok(&["xdp", "detach", "-i", i]);
    assert_eq!(p.udp_in("5000", 5), 5);
    let (ok, _, err) = p.sift(&["xdp", "show", "-i", i]);
    assert!(!ok && err.contains("nothing of sift's is attached"), "{err}");
    // --dry-run: the program and the kernel's verdict, nothing attached.
    let dry = p.sift_ok(&["xdp", "attach", "-i", i, "--dry-run", "ip6 protochain 6"]);
    assert!(dry.contains("exit") && dry.contains("processed "), "{dry}");
    assert!(!p.sift(&["xdp", "show", "-i", i]).0);
}

#[test]
fn pf_in_the_kernel_keeps_state_for_sessions_out_and_blocks_the_rest() {
    if !can_run() {
        return;
    }
    let p = Pair::new("kp");
    let i = p.iface.as_str();
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("pf.conf");
    std::fs::write(&rules, "block all\npass out keep state\n").unwrap();
    let out = p.sift_ok(&["pf", "load", "-i", i, "-f", rules.to_str().unwrap()]);
    assert!(out.contains("pf loaded on") && out.contains("xdp (native) + tc egress"), "{out}");
    assert_eq!(Pair::echo(&p.client, &p.server, "10.79.0.2", "8080", 100_000), "echo ok");
    assert_eq!(
        Pair::echo(&p.server, &p.client, "10.79.0.1", "8081", 1000),
        "connect failed",
        "a connection in must be blocked"
    );
    assert_eq!(p.udp_in("5000", 3), 0);
    let show = p.sift_ok(&["pf", "show", "-i", i]);
    assert!(show.contains("@0 block drop all") && show.contains("@1 pass out all"), "{show}");
    assert!(show.contains("all tcp 10.79.0.1:") && show.contains(" -> 10.79.0.2:8080 "), "{show}");
    let info = p.sift_ok(&["pf", "show", "-i", i, "-s", "info"]);
    assert!(info.contains("inserts") && info.contains("match"), "{info}");
    let cleared = p.sift_ok(&["pf", "flush", "-i", i, "--states"]);
    assert!(cleared.ends_with("states cleared\n") && !cleared.starts_with("0 "), "{cleared}");
    let states = p.sift_ok(&["pf", "show", "-i", i, "-s", "states"]);
    assert!(!states.contains("10.79.0.2:8080"), "{states}");
    p.sift_ok(&["pf", "flush", "-i", i]);
    assert!(!Path::new("/sys/fs/bpf/sift").join(i).join("pf").exists());
    assert!(!Path::new("/run/sift/pf").join(i).exists());
    assert_eq!(p.udp_in("5000", 3), 3, "pf removed: everything passes");
}

#[test]
fn reloading_under_traffic_keeps_the_states() {
    if !can_run() {
        return;
    }
    let p = Pair::new("kr");
    let i = p.iface.as_str();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.conf");
    let second = dir.path().join("b.conf");
    std::fs::write(&first, "block all\npass out keep state\n").unwrap();
    std::fs::write(&second, "block all\npass out proto tcp keep state\npass out proto udp\n")
        .unwrap();
    p.sift_ok(&["pf", "load", "-i", i, "-f", first.to_str().unwrap()]);
    let mut server = Pair::start(&p.server, &["server", "10.79.0.2", "8082"]);
    let client = p
        .client
        .net_cmd(&["python3", "-c", PEER, "echo", "10.79.0.2", "8082", "300000", "slow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let out = p.sift_ok(&["pf", "load", "-i", i, "-f", second.to_str().unwrap()]);
    assert!(out.contains("replaced") && out.contains("states kept"), "{out}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = p.sift_ok(&["pf", "load", "-i", i, "--hook", "tc", "-f", second.to_str().unwrap()]);
    assert!(out.contains("tc ingress + tc egress"), "{out}");
    let o = client.wait_with_output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "echo ok");
    // The XDP program went away with the switch to TC.
    let attached = Command::new("nsenter")
        .arg(format!("--net=/var/run/netns/{}", p.client.name))
        .args(["ip", "-d", "link", "show", i])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&attached.stdout).contains("prog/xdp"));
    p.sift_ok(&["pf", "flush", "-i", i]);
}

#[test]
fn what_cannot_run_in_the_kernel_is_refused_naming_the_rule() {
    // No kernel needed: the rule set is refused before anything is loaded.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("pf.conf");
    std::fs::write(&rules, "block all\npass in proto tcp to port 80 synproxy state\n").unwrap();
    let o = Command::new(SIFT)
        .args(["pf", "load", "-i", "lo", "--host", "openbsd", "-f", rules.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("rule 1") && err.contains("synproxy"), "{err}");
    // The same rule set on standard input.
    let mut child = Command::new(SIFT)
        .args(["pf", "load", "-i", "lo", "--host", "openbsd", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &std::fs::read(&rules).unwrap())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("rule 1") && err.contains("synproxy"), "{err}");
    let o = Command::new(SIFT).args(["xdp", "attach", "-i", "lo", "tcp port"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains('^'), "{err}");
}
