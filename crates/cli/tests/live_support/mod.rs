//! What the live-capture tests share: a namespace with a veth pair `inj0`–`cap0`, capture
//! processes started and stopped, tcpdump's counters read back, generated traffic and the
//! packets a filter keeps of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const SIFT: &str = env!("CARGO_BIN_EXE_sift");

/// A network namespace with a veth pair `inj0`–`cap0`, deleted on drop.
pub struct Netns {
    pub name: String,
}

pub fn run_ok(cmd: &mut Command) {
    let o = cmd.output().expect("run a setup command");
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
}

impl Netns {
    /// Creates the namespace, or skips (`None`) when not root, as the oracle policy says.
    pub fn new(tag: &str) -> Option<Netns> {
        Netns::with_mtu(tag, 9000)
    }

    /// The same with another MTU on the veth pair (native XDP on veth takes at most about
    /// 3,500 bytes).
    pub fn with_mtu(tag: &str, mtu: u32) -> Option<Netns> {
        if !sift_testkit::is_root() {
            return sift_testkit::oracle_missing(
                "root (network namespaces)",
                "not running as root",
            );
        }
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name =
            format!("sift-{tag}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst));
        run_ok(Command::new("ip").args(["netns", "add", &name]));
        let ns = Netns { name };
        ns.ok(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.ok(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        let add = format!(
            "ip link add inj0 numtxqueues 1 numrxqueues 1 mtu {mtu} \
             type veth peer name cap0 numtxqueues 1 numrxqueues 1 mtu {mtu}"
        );
        ns.ok(&add.split_whitespace().collect::<Vec<_>>());
        for dev in ["inj0", "cap0", "lo"] {
            ns.ok(&["ip", "link", "set", dev, "up"]);
        }
        Some(ns)
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).args(args);
        c
    }

    pub fn ok(&self, args: &[&str]) {
        run_ok(&mut self.cmd(args));
    }

    pub fn inject(&self, file: &Path, extra: &[&str]) -> Output {
        let mut args = vec![SIFT, "inject", "-i", "inj0", "-r", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.cmd(&args).output().expect("run sift inject")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

/// A capture process (sift or tcpdump) started and ready.
pub struct Running {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
    pub stderr: Vec<String>,
}

impl Running {
    /// Starts `args` in the namespace and waits for its "listening on" line.
    pub fn start(ns: &Netns, args: &[&str]) -> Running {
        let mut child = ns
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the capture");
        let (tx, lines) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut r = Running { child, lines, stderr: Vec::new() };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !r.stderr.iter().any(|l| l.contains("listening on")) {
            let left = deadline.saturating_duration_since(Instant::now());
            match r.lines.recv_timeout(left) {
                Ok(l) => r.stderr.push(l),
                Err(_) => {
                    let _ = r.child.kill();
                    panic!("{args:?} did not start listening: {:?}", r.stderr);
                }
            }
        }
        r
    }

    pub fn signal(&self, sig: &str) {
        run_ok(Command::new("kill").args([sig, &self.child.id().to_string()]));
    }

    /// Waits for the process to end (at most `secs`), returning its exit success and stderr.
    pub fn wait(mut self, secs: u64) -> (bool, String) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("capture did not end: {:?}", self.stderr);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends at EOF, once the process is gone.
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stderr.push(l);
        }
        (status.success(), self.stderr.join("\n"))
    }

    /// Waits (at most `secs`) for a line of standard error containing `what`, and returns it.
    pub fn await_line(&mut self, what: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(l) = self.stderr.iter().find(|l| l.contains(what)) {
                return l.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.stderr.push(l),
                Err(_) => panic!("no line with {what:?}: {:?}", self.stderr),
            }
        }
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn stop(self) -> (bool, String) {
        self.signal("-INT");
        self.wait(30)
    }
}

/// A test that fails while a capture runs must not leave the process behind.
impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The three counters tcpdump (and sift) print at exit.
#[derive(Debug, PartialEq, Eq)]
pub struct Counts {
    pub captured: u64,
    pub received: u64,
    pub dropped: u64,
}

pub fn counts(stderr: &str) -> Counts {
    let find = |what: &str| -> u64 {
        stderr
            .lines()
            .find_map(|l| {
                let (n, rest) = l.split_once(' ')?;
                rest.ends_with(what).then(|| n.parse().ok())?
            })
            .unwrap_or_else(|| panic!("no '{what}' line in:\n{stderr}"))
    };
    Counts {
        captured: find("captured"),
        received: find("received by filter"),
        dropped: find("dropped by kernel"),
    }
}

/// (bytes, wire length) of every packet of a capture file; panics on damage.
pub fn packets(path: &Path) -> Vec<(Vec<u8>, u32)> {
    let mut r = sift_pcap::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    while let Some(p) = r.next_packet().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        out.push((p.data.to_vec(), p.wire_len));
    }
    out
}

pub fn generate(dir: &Path, count: u32, seed: u32) -> PathBuf {
    let path = dir.join(format!("gen{seed}.pcap"));
    let o = Command::new(SIFT)
        .args(["gen", "-c", &count.to_string(), "--seed", &seed.to_string(), "-w"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    path
}

/// The frame the kernel's filter sees: the outer VLAN tag stripped.
pub fn kernel_view(frame: &[u8]) -> Vec<u8> {
    if frame.len() >= 18 && matches!(&frame[12..14], [0x81, 0x00] | [0x88, 0xa8]) {
        let mut v = frame[..12].to_vec();
        v.extend_from_slice(&frame[16..]);
        v
    } else {
        frame.to_vec()
    }
}

/// The packets of `input` that `filter` keeps on a live Ethernet capture, cut to `snaplen`.
pub fn expected(input: &Path, filter: &str, snaplen: u32) -> Vec<(Vec<u8>, u32)> {
    kept(input, filter, snaplen, true)
}

/// The packets of `input` that `filter` keeps at XDP (the frame as sent: XDP runs before the
/// kernel moves a VLAN tag into metadata), cut to `snaplen`.
pub fn expected_at_xdp(input: &Path, filter: &str, snaplen: u32) -> Vec<(Vec<u8>, u32)> {
    kept(input, filter, snaplen, false)
}

/// The packets `filter` keeps, run on the frame as a socket filter sees it (`socket`: the
/// outer VLAN tag stripped, Linux extensions on) or as sent.
fn kept(input: &Path, filter: &str, snaplen: u32, socket: bool) -> Vec<(Vec<u8>, u32)> {
    let resolver = sift_filter::SystemResolver::new();
    let opts = sift_compile::pipeline::Options::new(sift_pcap::LinkType::EN10MB, &resolver)
        .snaplen(snaplen)
        .linux_ext(socket)
        .optimize(false);
    let validated =
        sift_compile::pipeline::compile(filter, &opts).expect("test filter compiles").program;
    let interp = sift_vm::Interpreter::new(&validated);
    packets(input)
        .into_iter()
        .filter(|(data, wire)| {
            let view = if socket { kernel_view(data) } else { data.clone() };
            let tag = (data.len() - view.len()) as u32;
            interp.run(&view, wire - tag) != 0
        })
        .map(|(mut data, wire)| {
            data.truncate(snaplen as usize);
            (data, wire)
        })
        .collect()
}

pub fn tcpdump() -> Option<PathBuf> {
    sift_testkit::tool("tcpdump")
}

pub fn assert_same_packets(what: &str, got: &[(Vec<u8>, u32)], want: &[(Vec<u8>, u32)]) {
    assert_eq!(got.len(), want.len(), "{what}: packet count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(g == w, "{what}: packet {} differs:\n got {:02x?}\nwant {:02x?}", i + 1, g, w);
    }
}
