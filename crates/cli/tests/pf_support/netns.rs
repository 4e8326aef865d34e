//! Network namespaces joined by veth pairs, programs run inside them, and tcpdump captures
//! taken there (`-i any` in Linux cooked v2 form, so each packet records its interface and
//! whether the kernel sent or received it).
//!
//! Everything is removed when dropped, also when a test fails: namespaces are deleted (their
//! veths with them) and processes still running are killed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs `cmd`, panicking with its standard error unless it succeeds; returns standard output.
pub fn run_ok(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether the tests can run: root and every tool in `tools` on `PATH`. Otherwise prints the
/// reason and returns false, or panics under `SIFT_REQUIRE_ORACLES=1`.
pub fn available(tools: &[&str]) -> bool {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing::<()>("root (network namespaces)", "not root")
            .is_some();
    }
    tools.iter().all(|t| sift_testkit::tool(t).is_some())
}

/// A network namespace, deleted on drop.
pub struct Ns {
    /// Its name (`sift-TAG-PID-N`).
    pub name: String,
}

impl Ns {
    /// A new namespace with IPv6 off (no router solicitations or DAD in the captures) and `lo`
    /// up.
    pub fn new(tag: &str) -> Ns {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name =
            format!("sift-{tag}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst));
        run_ok(Command::new("ip").args(["netns", "add", &name]));
        let ns = Ns { name };
        ns.ok(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.ok(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns.ok(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    /// `args` run inside the namespace.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).args(args);
        c
    }

    /// `args` run inside the namespace's network only (`nsenter --net`): unlike `ip netns
    /// exec`, the mount namespace stays the caller's, so BPF file system pins and `/run` are
    /// the ones every command sees (what `sift xdp` and `sift pf load` keep there).
    pub fn net_cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/var/run/netns/{}", self.name)).args(args);
        c
    }

    /// Runs `args` inside the namespace; it must succeed. Returns standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        run_ok(&mut self.cmd(args))
    }

    /// Loads an nftables rule set (`nft -f -`).
    pub fn nft(&self, rules: &str) {
        use std::io::Write;
        let mut child = self
            .cmd(&["nft", "-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run nft");
        child.stdin.take().unwrap().write_all(rules.as_bytes()).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "nft -f:\n{rules}\n{}", String::from_utf8_lossy(&o.stderr));
    }

    /// Interface index → name.
    pub fn ifnames(&self) -> HashMap<u32, String> {
        self.ok(&["ip", "-o", "link", "show"])
            .lines()
            .filter_map(|l| {
                let (idx, rest) = l.split_once(": ")?;
                let name = rest.split([':', '@']).next()?;
                Some((idx.trim().parse().ok()?, name.to_string()))
            })
            .collect()
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

/// Joins `a` and `b` with a veth pair `a_if`–`b_if`, addresses `a_addr`/`b_addr` (CIDR), up.
pub fn veth(a: &Ns, a_if: &str, a_addr: &str, b: &Ns, b_if: &str, b_addr: &str) {
    run_ok(Command::new("ip").args([
        "link", "add", a_if, "netns", &a.name, "type", "veth", "peer", "name", b_if, "netns",
        &b.name,
    ]));
    for (ns, dev, addr) in [(a, a_if, a_addr), (b, b_if, b_addr)] {
        ns.ok(&["ip", "addr", "add", addr, "dev", dev]);
        ns.ok(&["ip", "link", "set", dev, "up"]);
    }
}

/// Joins `a` and `b` with a veth pair `a_if`–`b_if` without addresses, both ends up, with
/// transmit checksum offload, TSO, GSO and GRO off (frames cross whole and with complete
/// checksums, as a datapath that forwards what it reads needs them; needs `ethtool`).
pub fn veth_plain(a: &Ns, a_if: &str, b: &Ns, b_if: &str) {
    run_ok(Command::new("ip").args([
        "link", "add", a_if, "netns", &a.name, "type", "veth", "peer", "name", b_if, "netns",
        &b.name,
    ]));
    for (ns, dev) in [(a, a_if), (b, b_if)] {
        ns.ok(&["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off"]);
        ns.ok(&["ip", "link", "set", dev, "up"]);
    }
}

/// The MAC address of `dev` in `ns`.
pub fn mac_of(ns: &Ns, dev: &str) -> [u8; 6] {
    let text = ns.ok(&["cat", &format!("/sys/class/net/{dev}/address")]);
    let mut mac = [0u8; 6];
    for (m, part) in mac.iter_mut().zip(text.trim().split(':')) {
        *m = u8::from_str_radix(part, 16).expect("a MAC address");
    }
    mac
}

/// A program running in a namespace, killed if still running when dropped.
pub struct Proc {
    child: Child,
    what: String,
}

impl Proc {
    /// Starts `args` in `ns` with standard output piped and, when `ready` is given, waits (at
    /// most 10 s) for that first line of standard output.
    pub fn start(ns: &Ns, args: &[&str], ready: Option<&str>) -> Proc {
        let mut child = ns
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        if let Some(want) = ready {
            let mut line = String::new();
            let mut out = BufReader::new(child.stdout.take().unwrap());
            out.read_line(&mut line).unwrap();
            assert_eq!(line.trim(), want, "{args:?} did not start");
        }
        Proc { child, what: format!("{args:?}") }
    }

    /// Waits (at most `secs`) for the program to end successfully.
    pub fn wait(mut self, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                assert!(status.success(), "{} failed: {err}", self.what);
                return;
            }
            assert!(Instant::now() < deadline, "{} did not end in {secs} s", self.what);
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// tcpdump capturing in a namespace on all its interfaces (`-i any -y LINUX_SLL2`).
pub struct Tcpdump {
    proc: Proc,
    stderr: mpsc::Receiver<String>,
    /// The capture file.
    pub file: PathBuf,
}

impl Tcpdump {
    /// Starts tcpdump writing `file` with capture filter `filter`; returns once it listens.
    pub fn start(ns: &Ns, file: &Path, filter: &str) -> Tcpdump {
        // A 32 MiB ring: bulk transfers come as 64 kB GSO frames, and nothing may be dropped.
        let args = [
            "tcpdump",
            "-i",
            "any",
            "-y",
            "LINUX_SLL2",
            "-n",
            "-B",
            "32768",
            "-w",
            file.to_str().unwrap(),
            filter,
        ];
        Tcpdump::launch(ns, &args, file)
    }

    /// Starts tcpdump with `args` (writing `file`) and waits for its "listening on" line.
    fn launch(ns: &Ns, args: &[&str], file: &Path) -> Tcpdump {
        let mut proc = Proc::start(ns, args, None);
        let err = proc.child.stderr.take().unwrap();
        let (tx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match stderr.recv_timeout(left) {
                Ok(l) if l.contains("listening on") => break,
                Ok(_) => {}
                Err(_) => panic!("tcpdump did not start listening"),
            }
        }
        Tcpdump { proc, stderr, file: file.to_path_buf() }
    }

    /// Starts tcpdump writing the Ethernet frames `iface` receives (`-Q in`) to `file`;
    /// returns once it listens. The host must send nothing meanwhile: libpcap drops what it
    /// sends after the kernel counted it, and [`Tcpdump::stop`] would see a packet missing.
    pub fn start_inbound(ns: &Ns, iface: &str, file: &Path) -> Tcpdump {
        let file_name = file.to_str().unwrap();
        let args = ["tcpdump", "-i", iface, "-Q", "in", "-n", "-B", "32768", "-w", file_name];
        Tcpdump::launch(ns, &args, file)
    }

    /// Stops the capture once the kernel has handed over every packet (tcpdump's ring hands a
    /// block over after at most its 1 s timeout), and checks that none was dropped.
    pub fn stop(mut self) -> PathBuf {
        std::thread::sleep(Duration::from_millis(1300));
        run_ok(Command::new("kill").args(["-INT", &self.proc.child.id().to_string()]));
        let status = self.proc.child.wait().unwrap();
        let lines: Vec<String> = self.stderr.iter().collect();
        assert!(status.success(), "tcpdump: {lines:?}");
        let count = |what: &str| {
            lines.iter().find_map(|l| {
                let (n, rest) = l.split_once(' ')?;
                (rest == what).then(|| n.parse::<u64>().ok())?
            })
        };
        let (captured, received, dropped) = (
            count("packets captured"),
            count("packets received by filter"),
            count("packets dropped by kernel"),
        );
        assert_eq!(dropped, Some(0), "tcpdump dropped packets: {lines:?}");
        assert_eq!(captured, received, "tcpdump did not write every packet: {lines:?}");
        self.file.clone()
    }
}

/// A long-running command in a namespace (`sift switch`, `sift pf run --between`) whose
/// standard output and error lines are collected as they come; killed on drop if running.
pub struct Daemon {
    child: Child,
    what: String,
    out: mpsc::Receiver<String>,
    err: mpsc::Receiver<String>,
    /// Standard error so far.
    pub stderr: Vec<String>,
}

fn lines_of(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Daemon {
    /// Starts `args` in `ns` and waits (at most 20 s) for a line of standard error that starts
    /// with `ready`.
    pub fn start(ns: &Ns, args: &[&str], ready: &str) -> Daemon {
        let mut child = ns
            .cmd(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let out = lines_of(child.stdout.take().unwrap());
        let err = lines_of(child.stderr.take().unwrap());
        let mut d = Daemon { child, what: format!("{args:?}"), out, err, stderr: Vec::new() };
        d.wait_stderr(|l| l.starts_with(ready), 20);
        d
    }

    /// Waits (at most `secs`) for a line of standard error that `want` accepts; returns it.
    pub fn wait_stderr(&mut self, want: impl Fn(&str) -> bool, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.err.recv_timeout(left) {
                Ok(l) => {
                    self.stderr.push(l.clone());
                    if want(&l) {
                        return l;
                    }
                }
                Err(_) => panic!("{}: the line awaited did not come: {:?}", self.what, self.stderr),
            }
        }
    }

    /// Sends signal `sig` (`HUP`, `INT`…).
    pub fn signal(&self, sig: &str) {
        run_ok(Command::new("kill").args([&format!("-{sig}"), &self.child.id().to_string()]));
    }

    /// Stops it with SIGINT (it must end successfully within 10 s); returns its standard
    /// output and its whole standard error.
    pub fn stop(mut self) -> (String, String) {
        self.signal("INT");
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "{} did not stop on SIGINT", self.what);
            std::thread::sleep(Duration::from_millis(10));
        };
        self.stderr.extend(self.err.iter());
        let stderr = self.stderr.join("\n");
        assert!(status.success(), "{}: {status}: {stderr}", self.what);
        let stdout: Vec<String> = self.out.iter().collect();
        (stdout.join("\n"), stderr)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Writes Ethernet `frames` to a pcap file (for `sift inject`).
pub fn write_frames(path: &Path, frames: &[Vec<u8>]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = sift_pcap::PcapWriter::new(
        std::io::BufWriter::new(f),
        sift_pcap::LinkType::EN10MB,
        0,
        65535,
        sift_pcap::Precision::Micro,
    )
    .unwrap();
    for (i, fr) in frames.iter().enumerate() {
        let ts = sift_pcap::Timestamp::new(1_700_000_000 + i as u64 / 1000, 0);
        w.write(ts, fr.len() as u32, fr).unwrap();
    }
    w.finish().unwrap();
}

/// The frames of a capture file, in order.
pub fn read_frames(path: &Path) -> Vec<Vec<u8>> {
    let mut r = sift_pcap::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        out.push(p.data.to_vec());
    }
    out
}

/// Sends `frames` into `dev` of `ns` with `sift inject`, at `rate` frames a second.
pub fn inject(ns: &Ns, dev: &str, frames: &[Vec<u8>], dir: &Path, rate: u32) {
    let file = dir.join(format!("inject-{dev}-{}.pcap", frames.len()));
    write_frames(&file, frames);
    let sift = env!("CARGO_BIN_EXE_sift");
    ns.ok(&[sift, "inject", "-i", dev, "-r", file.to_str().unwrap(), "--rate", &rate.to_string()]);
}

/// Host A (`a0`, 10.88.0.1) and host B (`b0`, 10.88.0.2), each joined by a veth pair to the
/// namespace between them (its ends `pa` and `pb`), with static neighbours on the hosts.
pub struct TwoHosts {
    /// Host A.
    pub a: Ns,
    /// Host B.
    pub b: Ns,
    /// The namespace between them.
    pub mid: Ns,
    /// A's MAC address.
    pub mac_a: [u8; 6],
    /// B's MAC address.
    pub mac_b: [u8; 6],
}

impl TwoHosts {
    /// The three namespaces, named with `tag`.
    pub fn new(tag: &str) -> TwoHosts {
        let (a, b, mid) =
            (Ns::new(&format!("{tag}a")), Ns::new(&format!("{tag}b")), Ns::new(&format!("{tag}m")));
        veth_plain(&a, "a0", &mid, "pa");
        veth_plain(&b, "b0", &mid, "pb");
        a.ok(&["ip", "addr", "add", "10.88.0.1/24", "dev", "a0"]);
        b.ok(&["ip", "addr", "add", "10.88.0.2/24", "dev", "b0"]);
        let (mac_a, mac_b) = (mac_of(&a, "a0"), mac_of(&b, "b0"));
        let hex = |m: [u8; 6]| m.map(|b| format!("{b:02x}")).join(":");
        a.ok(&["ip", "neigh", "replace", "10.88.0.2", "lladdr", &hex(mac_b), "dev", "a0"]);
        b.ok(&["ip", "neigh", "replace", "10.88.0.1", "lladdr", &hex(mac_a), "dev", "b0"]);
        TwoHosts { a, b, mid, mac_a, mac_b }
    }
}
