//! What the namespace tests share: a private network namespace with veth pairs, a sender and a
//! tap on the far ends, deterministic frames, bounded waits.
#![allow(dead_code)]

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use sift_sys::socket::{self, Wait};
use sift_sys::{iface, netns, packet};

/// The longest any wait in these tests lasts.
pub const WAIT: Duration = Duration::from_secs(10);

/// Runs `f` on a thread in a new network namespace (IPv6 off, so the kernel sends nothing of
/// its own) in which `pairs` veth pairs exist, up: `(near, far, queues)`, frames sent into
/// `far` arrive at `near`. `None` (after printing why, or failing under
/// `SIFT_REQUIRE_ORACLES=1`) when that cannot be done here.
pub fn in_netns<T: Send>(pairs: &[(&str, &str, u32)], f: impl FnOnce() -> T + Send) -> Option<T> {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing("root (namespaces, AF_XDP, bpf)", "not root");
    }
    let ip = sift_testkit::tool("ip")?;
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Err(e) = setup(&ip, pairs) {
                return sift_testkit::oracle_missing("a veth pair in a private namespace", e);
            }
            Some(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn setup(ip: &PathBuf, pairs: &[(&str, &str, u32)]) -> Result<(), String> {
    netns::unshare_net().map_err(|e| format!("unshare: {e}"))?;
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, "1").map_err(|e| format!("{path}: {e}"))?;
        }
    }
    let run = |args: &[&str]| -> Result<(), String> {
        let out = Command::new(ip).args(args).output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)))
        }
    };
    for (near, far, queues) in pairs {
        let q = queues.to_string();
        let qs = ["numtxqueues", q.as_str(), "numrxqueues", q.as_str()];
        let mut add = vec!["link", "add", near];
        add.extend(qs);
        add.extend(["type", "veth", "peer", "name", far]);
        add.extend(qs);
        run(&add)?;
        for dev in [near, far] {
            // GRO would hold TCP segments back (and merge them) on the NAPI path XDP gives.
            iface::set_gro(dev, false).map_err(|e| format!("GRO off on {dev}: {e}"))?;
            run(&["link", "set", dev, "up"])?;
        }
    }
    Ok(())
}

/// Frames into an interface (past its queueing discipline).
pub struct Sender {
    fd: OwnedFd,
    ifindex: u32,
}

impl Sender {
    pub fn new(iface_name: &str) -> Sender {
        let fd = packet::socket(packet::SockType::Raw, 0).unwrap();
        packet::qdisc_bypass(&fd).unwrap();
        Sender { fd, ifindex: iface::index_of(iface_name).unwrap() }
    }

    pub fn send(&self, frame: &[u8]) {
        assert_eq!(packet::send_to(&self.fd, self.ifindex, frame).unwrap(), frame.len());
    }
}

/// Every frame an interface receives.
pub struct Tap {
    fd: OwnedFd,
    buf: Vec<u8>,
}

impl Tap {
    pub fn new(iface_name: &str) -> Tap {
        let fd = packet::socket(packet::SockType::Raw, 0).unwrap();
        packet::ignore_outgoing(&fd).unwrap();
        socket::set_receive_buffer(&fd, 16 << 20).unwrap();
        packet::bind(&fd, iface::index_of(iface_name).unwrap(), packet::ETH_P_ALL).unwrap();
        Tap { fd, buf: vec![0; 1 << 16] }
    }

    /// Frames received until `n` have come or [`WAIT`] passes (then 100 ms more, to see
    /// extra ones).
    pub fn collect(&mut self, n: usize) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let deadline = Instant::now() + WAIT;
        let mut extra_until = None;
        loop {
            let now = Instant::now();
            if got.len() >= n && extra_until.is_none() {
                extra_until = Some(now + Duration::from_millis(100));
            }
            if extra_until.is_some_and(|t| now >= t) || now >= deadline {
                return got;
            }
            match socket::recv(&self.fd, &mut self.buf, Wait::Never).unwrap() {
                Some(len) => got.push(self.buf[..len].to_vec()),
                None => {
                    socket::poll_readable(&self.fd, 10).unwrap();
                }
            }
        }
    }
}

/// Waits until `cond` holds or [`WAIT`] passes; whether it held.
pub fn wait_until(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + WAIT;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `n` generated Ethernet frames (seed `seed`) that a veth can carry: 14 to 1,514 bytes.
pub fn frames(n: usize, seed: u64) -> Vec<Vec<u8>> {
    use sift_gen::{Config, Generator, Link};
    let mut generator = Generator::new(seed, Config::with_link(Link::Ethernet));
    let mut out = Vec::with_capacity(n);
    let mut buf = Vec::new();
    while out.len() < n {
        generator.next_frame(&mut buf);
        if (14..=1514).contains(&buf.len()) {
            out.push(buf.clone());
        }
    }
    out
}

/// Whether a frame is untagged IPv4 carrying UDP (what the UDP-only program redirects).
pub fn is_ipv4_udp(f: &[u8]) -> bool {
    let Ok(eth) = sift_wire::ethernet::EthernetFrame::new_checked(f) else { return false };
    if eth.ethertype() != sift_wire::ethertype::IPV4 {
        return false;
    }
    f.len() >= 34 && f[23] == sift_wire::ipproto::UDP
}

/// The frame with its MAC addresses swapped.
pub fn swapped(f: &[u8]) -> Vec<u8> {
    let mut g = f.to_vec();
    if g.len() >= 12 {
        let (dst, src) = g[..12].split_at_mut(6);
        dst.swap_with_slice(src);
    }
    g
}

/// What a packet socket on the receiving veth sees of `f`: the outer VLAN tag is gone (the
/// receive path moves it into the socket buffer's metadata).
pub fn tap_view(f: &[u8]) -> Vec<u8> {
    sift_kernel::kernel_view(f).map_or_else(|| f.to_vec(), |v| v.into_owned())
}
