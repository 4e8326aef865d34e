//! The Linux kernel as a second oracle for pf's fragment reassembly, where their rules agree:
//! fragments that do not overlap, in any order, and (IPv4) duplicates of identical data.
//!
//! Two network namespaces joined by a veth pair; fragments of UDP datagrams built here are
//! sent as raw frames from one namespace (a packet socket), the other namespace's kernel
//! reassembles them and delivers the datagram to a UDP socket. The payloads delivered must be
//! those [`Reassembler`] produces from the same fragments, which must be the datagrams cut.
//! The peers are small python3 programs run with `ip netns exec`.
//!
//! Needs root, `ip` and python3: otherwise prints SKIP, and fails under
//! `SIFT_REQUIRE_ORACLES=1`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sift_firewall::fragment::{FragLimits, Reassembler, Reassembly};

const A_MAC: &str = "02:5f:00:00:00:01";
const B_MAC: &str = "02:5f:00:00:00:02";
const A4: [u8; 4] = [10, 79, 0, 1];
const B4: [u8; 4] = [10, 79, 0, 2];
const PORT: u16 = 5557;

fn a6() -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..2].copy_from_slice(&[0xfd, 0x79]);
    a[15] = 1;
    a
}

fn b6() -> [u8; 16] {
    let mut a = a6();
    a[15] = 2;
    a
}

/// Receives UDP datagrams on both families and prints each payload in hex; ends after
/// `count` datagrams or 5 s without one.
const RECEIVER: &str = r#"
import select, socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s4.bind(("10.79.0.2", port))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s6.bind(("fd79::2", port))
print("ready", flush=True)
n = 0
while n < count:
    r, _, _ = select.select([s4, s6], [], [], 5)
    if not r:
        break
    for s in r:
        d = s.recv(70000)
        print(d.hex(), flush=True)
        n += 1
print("end", flush=True)
"#;

/// Sends each hex line of standard input as an IP packet on `sfa0` to the peer's MAC.
const SENDER: &str = r#"
import socket, sys, time
ifname, mac = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
for line in sys.stdin:
    p = bytes.fromhex(line.strip())
    proto = 0x0800 if p[0] >> 4 == 4 else 0x86dd
    s.sendto(p, (ifname, proto, 0, 0, mac))
    time.sleep(0.001)
"#;

fn run_ok(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A network namespace, deleted on drop (its veth with it).
struct Ns(String);

impl Ns {
    fn new(tag: &str) -> Ns {
        let name = format!("sfrag-{tag}-{}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run_ok(Command::new("ip").args(["netns", "add", &name]));
        let ns = Ns(name);
        ns.ok(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(args);
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        run_ok(&mut self.cmd(args))
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A child process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A UDP datagram from A to B carrying `payload`, with its checksum.
fn udp(six: bool, payload: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    let mut u = Vec::with_capacity(len.into());
    u.extend_from_slice(&40000u16.to_be_bytes());
    u.extend_from_slice(&PORT.to_be_bytes());
    u.extend_from_slice(&len.to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    let pseudo = if six {
        sift_wire::checksum::pseudo_ipv6(&a6(), &b6(), 17, len.into())
    } else {
        sift_wire::checksum::pseudo_ipv4(&A4, &B4, 17, len.into())
    };
    let mut sum = sift_wire::checksum::finish(sift_wire::checksum::add(pseudo, &u));
    if sum == 0 {
        sum = 0xffff;
    }
    u[6..8].copy_from_slice(&sum.to_be_bytes());
    u
}

fn frag4(id: u16, off: usize, mf: bool, data: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&((20 + data.len()) as u16).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&((off / 8) as u16 | if mf { 0x2000 } else { 0 }).to_be_bytes());
    p.extend_from_slice(&[64, 17, 0, 0]);
    p.extend_from_slice(&A4);
    p.extend_from_slice(&B4);
    let sum = sift_wire::checksum::internet(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(data);
    p
}

fn frag6(id: u32, off: usize, mf: bool, hop: bool, data: &[u8]) -> Vec<u8> {
    let ext = if hop { 8 } else { 0 };
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&((ext + 8 + data.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[if hop { 0 } else { 44 }, 64]);
    p.extend_from_slice(&a6());
    p.extend_from_slice(&b6());
    if hop {
        p.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
    }
    p.extend_from_slice(&[17, 0]);
    p.extend_from_slice(&(off as u16 | u16::from(mf)).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(data);
    p
}

/// A case: a datagram's payload and the order (and repetition) its fragments are sent in.
struct Case {
    six: bool,
    hop: bool,
    len: usize,
    size: usize,
    /// Fragment indices in sending order (`None`: in order).
    order: Option<Vec<usize>>,
}

fn cases() -> Vec<Case> {
    let c = |six, hop, len, size, order: Option<Vec<usize>>| Case { six, hop, len, size, order };
    vec![
        c(false, false, 4000, 1480, None),
        c(false, false, 4000, 1480, Some(vec![2, 1, 0])),
        c(false, false, 4000, 1480, Some(vec![1, 2, 0])),
        c(false, false, 1000, 256, Some(vec![3, 0, 2, 1])),
        // Duplicates of identical data: both kernels drop the copy and keep the queue.
        c(false, false, 4000, 1480, Some(vec![0, 1, 1, 2])),
        c(false, false, 3000, 512, Some(vec![5, 5, 0, 4, 1, 3, 2])),
        c(true, false, 4000, 1448, None),
        c(true, false, 4000, 1448, Some(vec![2, 0, 1])),
        c(true, false, 2000, 256, Some(vec![7, 3, 0, 5, 1, 6, 2, 4])),
        c(true, true, 3000, 1232, Some(vec![1, 2, 0])),
    ]
}

#[test]
fn linux_reassembles_as_pf() {
    if !sift_testkit::is_root() {
        sift_testkit::oracle_missing::<()>("root (network namespaces)", "not root");
        return;
    }
    for tool in ["ip", "python3"] {
        if sift_testkit::tool(tool).is_none() {
            sift_testkit::oracle_missing::<()>(tool, "not on PATH");
            return;
        }
    }
    let a = Ns::new("a");
    let b = Ns::new("b");
    run_ok(Command::new("ip").args([
        "link", "add", "sfa0", "netns", &a.0, "type", "veth", "peer", "name", "sfb0", "netns", &b.0,
    ]));
    for (ns, ifname, mac, v4, v6) in [
        (&a, "sfa0", A_MAC, "10.79.0.1/24", "fd79::1/64"),
        (&b, "sfb0", B_MAC, "10.79.0.2/24", "fd79::2/64"),
    ] {
        ns.ok(&["ip", "link", "set", ifname, "address", mac]);
        ns.ok(&["ip", "addr", "add", v4, "dev", ifname]);
        ns.ok(&["ip", "addr", "add", v6, "dev", ifname, "nodad"]);
        ns.ok(&["ip", "link", "set", ifname, "up"]);
    }

    // What pf's reassembly makes of each case, and the packets to send.
    let mut expected = Vec::new();
    let mut packets = Vec::new();
    let mut r = Reassembler::new(FragLimits::default());
    for (n, case) in cases().iter().enumerate() {
        let payload: Vec<u8> = (0..case.len).map(|i| (i * 31 + n * 7) as u8).collect();
        let datagram = udp(case.six, &payload);
        let frags: Vec<Vec<u8>> = datagram
            .chunks(case.size)
            .enumerate()
            .map(|(i, c)| {
                let (off, mf) = (i * case.size, (i + 1) * case.size < datagram.len());
                let id = 0x5100 + n;
                if case.six {
                    frag6(id as u32, off, mf, case.hop, c)
                } else {
                    frag4(id as u16, off, mf, c)
                }
            })
            .collect();
        let order = case.order.clone().unwrap_or_else(|| (0..frags.len()).collect());
        let mut complete = None;
        for &i in &order {
            match r.push(&frags[i], 0) {
                Reassembly::Complete(d) => complete = Some(d.bytes),
                Reassembly::Held | Reassembly::Dropped(sift_firewall::Reason::Match) => {}
                other => panic!("case {n}: fragment {i}: {other:?}"),
            }
            packets.push(frags[i].clone());
        }
        let got = complete.unwrap_or_else(|| panic!("case {n}: not reassembled"));
        let hdr = if case.six { 40 + if case.hop { 8 } else { 0 } } else { 20 };
        assert_eq!(&got[hdr..], &datagram[..], "case {n}: reassembled datagram");
        expected.push(hex(&payload));
    }

    let mut rx = Proc(
        b.cmd(&["python3", "-c", RECEIVER, &PORT.to_string(), &expected.len().to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("receiver"),
    );
    let mut lines = BufReader::new(rx.0.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ready"));
    std::thread::sleep(Duration::from_millis(100));
    let mut tx = Proc(
        a.cmd(&["python3", "-c", SENDER, "sfa0", B_MAC])
            .stdin(Stdio::piped())
            .spawn()
            .expect("sender"),
    );
    {
        let mut stdin = tx.0.stdin.take().unwrap();
        for p in &packets {
            writeln!(stdin, "{}", hex(p)).unwrap();
        }
    }
    assert!(tx.0.wait().unwrap().success(), "sender failed");
    let mut delivered: Vec<String> =
        lines.map_while(Result::ok).take_while(|l| l != "end").collect();
    delivered.sort();
    expected.sort();
    assert_eq!(delivered.len(), expected.len(), "datagrams the kernel delivered");
    assert_eq!(delivered, expected, "kernel and pf reassembly differ");
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
