//! `sift_kernel::attach` on a veth pair between two private network namespaces (root): XDP
//! (native, generic) and TC (ingress, egress) programs attached through links and through
//! netlink drop and pass real traffic, are replaced many times under a numbered UDP stream and
//! a TCP session without losing a packet, outlive every descriptor through their pins, and
//! are detached; the errors say what is wrong.
//!
//! Each test builds its own pair: namespace A holds `sa` (10.99.0.1), namespace B holds `sb`
//! (10.99.0.2), with static neighbour entries (an XDP drop would otherwise starve ARP) and no
//! IPv6. Threads move into either namespace to open sockets and to attach. Pins go under a
//! root of the test's own in the BPF file system. Everything goes when the test ends or fails:
//! the namespaces (and so the interfaces) with their last descriptor, the pins with the root.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sift_ebpf::{EbpfProgram, asm, encode_program};
use sift_kernel::attach::{AttachError, Attacher, Hook, Mechanism, XdpMode, load};
use sift_sys::bpf;
use sift_sys::netlink::{Rtnetlink, XDP_FLAGS_SKB_MODE};
use sift_sys::{iface, netns};

const A_ADDR: &str = "10.99.0.1";
const B_ADDR: &str = "10.99.0.2";
const A_MAC: &str = "02:00:5e:51:f7:0a";
const B_MAC: &str = "02:00:5e:51:f7:0b";

/// `XDP_DROP`, `XDP_PASS`, `TC_ACT_OK`, `TC_ACT_SHOT`.
const XDP_DROP: i32 = 1;
const XDP_PASS: i32 = 2;
const TC_OK: i32 = 0;
const TC_SHOT: i32 = 2;

/// Two namespaces joined by a veth pair, and a pin root of their own.
struct Pair {
    ns_a: OwnedFd,
    ns_b: OwnedFd,
    root: PathBuf,
}

/// A new, empty network namespace (a thread enters it and ends; the descriptor keeps it).
fn new_netns() -> std::io::Result<OwnedFd> {
    std::thread::spawn(|| {
        netns::unshare_net()?;
        netns::current()
    })
    .join()
    .map_err(|_| std::io::Error::other("namespace thread panicked"))?
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn no_ipv6() -> Result<(), String> {
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, "1").map_err(|e| format!("{path}: {e}"))?;
        }
    }
    Ok(())
}

static NEXT_ROOT: AtomicU64 = AtomicU64::new(0);

impl Pair {
    /// The pair, or `None` (SKIP, or a failure under SIFT_REQUIRE_ORACLES=1) without root,
    /// namespaces, veth, `ip` or bpffs.
    fn new() -> Option<Pair> {
        sift_testkit::oracle("veth pair between private namespaces", Pair::build())
    }

    fn build() -> Result<Pair, String> {
        let ns_a = new_netns().map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
        let ns_b = new_netns().map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
        bpf::mount_bpffs(std::path::Path::new("/sys/fs/bpf"))
            .map_err(|e| format!("mounting bpffs: {e}"))?;
        let n = NEXT_ROOT.fetch_add(1, Ordering::Relaxed);
        let root = PathBuf::from(format!("/sys/fs/bpf/sift-test-{}-{n}", std::process::id()));
        let pair = Pair { ns_a, ns_b, root };
        let peer_ns = format!("/proc/{}/fd/{}", std::process::id(), pair.ns_b.as_raw_fd());
        pair.in_a(|| -> Result<(), String> {
            no_ipv6()?;
            #[rustfmt::skip]
            ip(&["link", "add", "sa", "address", A_MAC, "numtxqueues", "1", "numrxqueues", "1",
                 "type", "veth", "peer", "name", "sb", "address", B_MAC, "netns", &peer_ns,
                 "numtxqueues", "1", "numrxqueues", "1"])?;
            ip(&["addr", "add", &format!("{A_ADDR}/24"), "dev", "sa"])?;
            ip(&["link", "set", "sa", "up"])?;
            ip(&["neigh", "add", B_ADDR, "lladdr", B_MAC, "dev", "sa", "nud", "permanent"])
        })?;
        pair.in_b(|| -> Result<(), String> {
            no_ipv6()?;
            ip(&["addr", "add", &format!("{B_ADDR}/24"), "dev", "sb"])?;
            ip(&["link", "set", "sb", "up"])?;
            ip(&["neigh", "add", A_ADDR, "lladdr", A_MAC, "dev", "sb", "nud", "permanent"])
        })?;
        pair.wait_ready()?;
        Ok(pair)
    }

    /// Waits until a datagram crosses: the pair carries nothing until the kernel's link
    /// watcher has seen both ends up and activated their queueing disciplines (asynchronously,
    /// up to a second or so after `up`; longer on a busy machine).
    fn wait_ready(&self) -> Result<(), String> {
        let rx = self.in_b(|| UdpSocket::bind((B_ADDR, 0))).map_err(|e| e.to_string())?;
        let to = rx.local_addr().map_err(|e| e.to_string())?;
        let tx = self.in_a(|| UdpSocket::bind((A_ADDR, 0))).map_err(|e| e.to_string())?;
        rx.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
        let mut buf = [0u8; 8];
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            tx.send_to(b"ready?", to).map_err(|e| e.to_string())?;
            if rx.recv(&mut buf).is_ok() {
                // Drain the probes still in flight.
                while rx.recv(&mut buf).is_ok() {}
                return Ok(());
            }
        }
        Err("no datagram crossed the veth pair in 10 s".into())
    }

    fn run_in<T: Send>(ns: &OwnedFd, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            s.spawn(|| {
                netns::enter(ns).expect("setns");
                f()
            })
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// Runs `f` on a thread in namespace A.
    fn in_a<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        Pair::run_in(&self.ns_a, f)
    }

    /// Runs `f` on a thread in namespace B.
    fn in_b<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        Pair::run_in(&self.ns_b, f)
    }

    fn attacher(&self) -> Attacher {
        Attacher::with_root(&self.root)
    }

    /// The namespace of the interface a hook is tested on: XDP and TC ingress on `sb` (what
    /// it receives from `sa`), TC egress on `sa` (what it sends to `sb`).
    fn side(&self, hook: Hook) -> (&OwnedFd, &'static str) {
        match hook {
            Hook::TcEgress => (&self.ns_a, "sa"),
            _ => (&self.ns_b, "sb"),
        }
    }

    /// Runs `f` with the interface the hook is tested on, in its namespace.
    fn at<T: Send>(&self, hook: Hook, f: impl FnOnce(&str) -> T + Send) -> T {
        let (ns, name) = self.side(hook);
        Pair::run_in(ns, || f(name))
    }

    /// Sends `n` datagrams from A to B and counts those that arrive.
    fn udp_delivered(&self, n: usize) -> usize {
        let rx = self.in_b(|| UdpSocket::bind((B_ADDR, 0)).unwrap());
        let to = rx.local_addr().unwrap();
        let tx = self.in_a(|| UdpSocket::bind((A_ADDR, 0)).unwrap());
        for i in 0..n {
            tx.send_to(&(i as u64).to_le_bytes(), to).unwrap();
        }
        rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let mut got = 0;
        let mut buf = [0u8; 64];
        while got < n && rx.recv(&mut buf).is_ok() {
            got += 1;
        }
        got
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // The namespaces go with their descriptors (and the veth pair with them); the pins are
        // files under the root.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn prog_bytes(text: &str) -> EbpfProgram {
    let insns = asm::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    EbpfProgram { insns: encode_program(&insns) }
}

/// `r0 = ret; exit`, loaded for `hook`.
fn ret_prog(hook: Hook, ret: i32, name: &str) -> OwnedFd {
    load(&prog_bytes(&format!("mov %r0, {ret}\nexit\n")), hook, name).unwrap()
}

/// A program for `hook` that adds 1 to slot `slot` of `counts` (an array of two u64) for each
/// UDP packet (IPv4 protocol 17) and returns `ret`: the replacement test's two versions.
fn counting_prog(hook: Hook, counts: &OwnedFd, slot: i32, ret: i32) -> OwnedFd {
    // Where the context keeps the packet's start and end: `xdp_md` or `__sk_buff`.
    let (data, data_end) = match hook {
        Hook::Xdp { .. } => (0, 4),
        Hook::TcIngress | Hook::TcEgress => (76, 80),
    };
    let text = format!(
        "
        ldxw %r2, [%r1+{data}]
        ldxw %r3, [%r1+{data_end}]
        mov %r4, %r2
        add %r4, 24
        jgt %r4, %r3, out
        ldxb %r4, [%r2+23]
        jne %r4, 17, out
        stw [%r10-4], {slot}
        mov %r2, %r10
        add %r2, -4
        lddw %r1, map_fd({fd})
        call 1
        jeq %r0, 0, out
        mov %r1, 1
        lock add [%r0], %r1
        out:
        mov %r0, {ret}
        exit
        ",
        fd = counts.as_raw_fd()
    );
    load(&prog_bytes(&text), hook, &format!("sift_count{slot}")).unwrap()
}

fn counts_map() -> OwnedFd {
    bpf::map_create_with(&bpf::MapCreate {
        map_type: 2,
        key_size: 4,
        value_size: 8,
        max_entries: 2,
        map_flags: 0,
        name: "sift_counts",
    })
    .unwrap()
}

fn count(map: &OwnedFd, slot: u32) -> u64 {
    let mut v = [0u8; 8];
    bpf::map_lookup_elem(map, &slot.to_le_bytes(), &mut v).unwrap();
    u64::from_le_bytes(v)
}

fn drop_pass(hook: Hook) -> (i32, i32) {
    match hook {
        Hook::Xdp { .. } => (XDP_DROP, XDP_PASS),
        Hook::TcIngress | Hook::TcEgress => (TC_SHOT, TC_OK),
    }
}

const NATIVE: Hook = Hook::Xdp { mode: XdpMode::Native };
const GENERIC: Hook = Hook::Xdp { mode: XdpMode::Generic };

/// Attach a dropping program: nothing arrives; replace it with a passing one: everything
/// does; detach: everything does, and nothing of sift's is left.
fn drop_then_pass_then_detach(hook: Hook, mechanism: Mechanism) {
    let Some(pair) = Pair::new() else { return };
    let what = format!("{hook} by {mechanism:?}");
    assert_eq!(pair.udp_delivered(20), 20, "{what}: before anything is attached");
    let (drop, pass) = drop_pass(hook);
    let a = pair.attacher().mechanism(mechanism);
    let attached = pair.at(hook, |dev| {
        let prog = ret_prog(hook, drop, "sift_drop");
        a.attach(dev, hook, &prog).unwrap()
    });
    assert!(attached.attached, "{what}: {attached:?}");
    assert_eq!((attached.hook, attached.mechanism), (hook, mechanism), "{what}");
    assert_eq!(attached.prog_name, "sift_drop");
    assert!(attached.pin.starts_with(&pair.root));
    assert_eq!(pair.udp_delivered(20), 0, "{what}: the dropping program drops");
    let replaced = pair.at(hook, |dev| {
        let prog = ret_prog(hook, pass, "sift_pass");
        a.replace(dev, hook, &prog).unwrap()
    });
    assert_eq!(replaced.prog_name, "sift_pass", "{what}");
    assert_ne!(replaced.prog_id, attached.prog_id);
    assert_eq!(pair.udp_delivered(20), 20, "{what}: the passing program passes");
    pair.at(hook, |dev| {
        assert_eq!(a.query(dev).unwrap(), vec![replaced.clone()]);
        a.detach(dev, hook).unwrap();
        assert_eq!(a.query(dev).unwrap(), vec![], "{what}: nothing left");
        let dir = pair.root.join(dev);
        assert!(!dir.exists(), "{what}: {} removed", dir.display());
        match hook {
            Hook::Xdp { .. } => {
                let idx = iface::index_of(dev).unwrap();
                assert_eq!(Rtnetlink::open().unwrap().xdp_query(idx).unwrap().attached, 0);
            }
            Hook::TcIngress | Hook::TcEgress => {
                let idx = iface::index_of(dev).unwrap();
                let mut rt = Rtnetlink::open().unwrap();
                for d in [
                    sift_sys::netlink::TcDirection::Ingress,
                    sift_sys::netlink::TcDirection::Egress,
                ] {
                    assert!(rt.tc_bpf_list(idx, d).unwrap().is_empty(), "{what}");
                }
                let tcx = if hook == Hook::TcIngress {
                    bpf::BPF_TCX_INGRESS
                } else {
                    bpf::BPF_TCX_EGRESS
                };
                assert!(bpf::prog_query(idx, tcx).unwrap().prog_ids.is_empty(), "{what}");
            }
        }
    });
    assert_eq!(pair.udp_delivered(20), 20, "{what}: detached");
}

#[test]
fn xdp_native_link_drops_passes_detaches() {
    drop_then_pass_then_detach(NATIVE, Mechanism::Link);
}

#[test]
fn xdp_generic_link_drops_passes_detaches() {
    drop_then_pass_then_detach(GENERIC, Mechanism::Link);
}

#[test]
fn xdp_netlink_drops_passes_detaches() {
    drop_then_pass_then_detach(NATIVE, Mechanism::Netlink);
    drop_then_pass_then_detach(GENERIC, Mechanism::Netlink);
}

#[test]
fn tcx_ingress_and_egress_drop_pass_detach() {
    drop_then_pass_then_detach(Hook::TcIngress, Mechanism::Link);
    drop_then_pass_then_detach(Hook::TcEgress, Mechanism::Link);
}

#[test]
fn clsact_ingress_and_egress_drop_pass_detach() {
    drop_then_pass_then_detach(Hook::TcIngress, Mechanism::Netlink);
    drop_then_pass_then_detach(Hook::TcEgress, Mechanism::Netlink);
}

/// How many replacements each run makes under traffic, at most…
const REPLACEMENTS: usize = 300;
/// … and for how long at most.
const REPLACING: Duration = Duration::from_secs(4);
/// The fewest replacements a run must make.
const MIN_REPLACEMENTS: usize = 40;

/// A numbered UDP stream and a TCP session flow from A to B while the program at `hook` is
/// replaced [`REPLACEMENTS`] times (or for [`REPLACING`]), alternating two versions that count
/// the datagrams they see in a map they share: every datagram arrives, each was seen by one
/// version (none slipped through while no program was attached), both versions saw traffic, and
/// the TCP session delivers every byte in order.
fn replace_under_traffic(hook: Hook, mechanism: Mechanism) {
    let Some(pair) = Pair::new() else { return };
    let what = format!("{hook} by {mechanism:?}");
    let (_, pass) = drop_pass(hook);
    let counts = counts_map();
    let progs = [counting_prog(hook, &counts, 0, pass), counting_prog(hook, &counts, 1, pass)];
    let a = pair.attacher().mechanism(mechanism);
    pair.at(hook, |dev| a.attach(dev, hook, &progs[0]).unwrap());

    let rx = pair.in_b(|| UdpSocket::bind((B_ADDR, 0)).unwrap());
    let _ = sift_sys::socket::set_receive_buffer(&rx, 8 << 20);
    rx.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let udp_to = rx.local_addr().unwrap();
    let tx = pair.in_a(|| UdpSocket::bind((A_ADDR, 0)).unwrap());
    // Small TCP buffers bound the segments in flight, so that with the UDP window below the
    // veth ring (256 frames under native XDP) never overflows: a loss is the replacement's.
    let listener = pair.in_b(|| TcpListener::bind((B_ADDR, 0)).unwrap());
    let _ = sift_sys::socket::set_receive_buffer(&listener, 16 << 10);
    let tcp_to: SocketAddr = listener.local_addr().unwrap();
    let tcp_client = pair.in_a(|| {
        let socket = TcpStream::connect(tcp_to).unwrap();
        let _ = sift_sys::socket::set_send_buffer(&socket, 16 << 10);
        socket
    });

    let stop = AtomicBool::new(false);
    let received = AtomicU64::new(0);
    let (sent, got, tcp_sent, tcp_got, replacements) = std::thread::scope(|s| {
        // The UDP receiver: marks each number; stops at the sender's total or a silence.
        let receiver = s.spawn(|| {
            let mut seen = Vec::<bool>::new();
            let mut buf = [0u8; 64];
            while let Ok(n) = rx.recv(&mut buf) {
                assert_eq!(n, 8);
                let i = u64::from_le_bytes(buf[..8].try_into().unwrap()) as usize;
                if seen.len() <= i {
                    seen.resize(i + 1, false);
                }
                assert!(!seen[i], "datagram {i} twice");
                seen[i] = true;
                received.fetch_add(1, Ordering::Release);
            }
            seen
        });
        // The UDP sender: at most 64 datagrams ahead of the receiver, so that a full socket
        // buffer or ring never explains a loss: a datagram missing was dropped on the way.
        let sender = s.spawn(|| {
            // Paced (16 datagrams, then a pause) to leave the CPUs to the kernel's work: an
            // XDP replacement waits for RCU grace periods, which a busy machine stretches.
            let mut i = 0u64;
            while !stop.load(Ordering::Acquire) {
                let t0 = Instant::now();
                while i >= received.load(Ordering::Acquire) + 64 {
                    if t0.elapsed() > Duration::from_secs(2) {
                        return i; // lost ones never come: the receiver reports them
                    }
                    std::thread::sleep(Duration::from_micros(20));
                }
                tx.send_to(&i.to_le_bytes(), udp_to).unwrap();
                i += 1;
                if i.is_multiple_of(16) {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            i
        });
        // The TCP session: a byte pattern until told to stop.
        let tcp_server = s.spawn(|| {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0u64;
            loop {
                let n = conn.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                for (k, b) in buf[..n].iter().enumerate() {
                    assert_eq!(
                        *b,
                        ((total + k as u64) % 251) as u8,
                        "TCP byte {}",
                        total + k as u64
                    );
                }
                total += n as u64;
            }
            conn.write_all(b"done").unwrap();
            total
        });
        let tcp_sender = s.spawn(|| {
            let mut conn = tcp_client;
            let mut total = 0u64;
            let mut chunk = vec![0u8; 16 << 10];
            while !stop.load(Ordering::Acquire) {
                for (k, b) in chunk.iter_mut().enumerate() {
                    *b = ((total + k as u64) % 251) as u8;
                }
                conn.write_all(&chunk).unwrap();
                total += chunk.len() as u64;
                std::thread::sleep(Duration::from_micros(200));
            }
            conn.shutdown(std::net::Shutdown::Write).unwrap();
            let mut reply = Vec::new();
            conn.read_to_end(&mut reply).unwrap();
            assert_eq!(reply, b"done");
            total
        });
        // Replace, replace, replace, in the interface's namespace.
        // Replace, replace, replace, in the interface's namespace: REPLACEMENTS times, or as
        // many as fit in REPLACING (an XDP replacement takes 10–20 ms on an idle machine).
        let replacements = pair.at(hook, |dev| {
            std::thread::sleep(Duration::from_millis(20));
            let t0 = Instant::now();
            let mut k = 0;
            while k < REPLACEMENTS && t0.elapsed() < REPLACING {
                let r = a.replace(dev, hook, &progs[(k + 1) % 2]).unwrap();
                assert!(r.attached);
                k += 1;
                std::thread::sleep(Duration::from_micros(500));
            }
            std::thread::sleep(Duration::from_millis(20));
            k
        });
        stop.store(true, Ordering::Release);
        let sent = sender.join().unwrap();
        let seen = receiver.join().unwrap();
        let tcp_sent = tcp_sender.join().unwrap();
        let tcp_got = tcp_server.join().unwrap();
        (sent, seen, tcp_sent, tcp_got, replacements)
    });
    let stats = |ns: &OwnedFd, dev: &'static str| {
        Pair::run_in(ns, || {
            let idx = iface::index_of(dev).unwrap();
            Rtnetlink::open().unwrap().link_stats(idx).unwrap()
        })
    };
    let (sa, sb) = (stats(&pair.ns_a, "sa"), stats(&pair.ns_b, "sb"));
    let missing: Vec<usize> =
        (0..sent as usize).filter(|&i| !got.get(i).copied().unwrap_or(false)).collect();
    let (c0, c1) = (count(&counts, 0), count(&counts, 1));
    eprintln!(
        "{what}: {replacements} replacements, {sent} datagrams, {tcp_sent} TCP bytes; \
         version 0 counted {c0} datagrams, version 1 {c1}"
    );
    assert!(
        missing.is_empty(),
        "{what}: {} of {sent} datagrams lost: {:?}…; sa {sa:?}, sb {sb:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    assert!(sent > 1000, "{what}: the stream ran ({sent} datagrams)");
    assert!(replacements >= MIN_REPLACEMENTS, "{what}: only {replacements} replacements");
    assert_eq!(tcp_got, tcp_sent, "{what}: the TCP session delivered every byte");
    assert!(tcp_sent > 0);
    assert!(c0 > 0 && c1 > 0, "{what}: both versions ran ({c0}, {c1})");
    // Not one datagram passed while no program was attached.
    assert_eq!(c0 + c1, sent, "{what}: every datagram went through one version");
    pair.at(hook, |dev| a.detach(dev, hook).unwrap());
}

#[test]
fn xdp_link_replaced_under_traffic_loses_nothing() {
    replace_under_traffic(NATIVE, Mechanism::Link);
}

#[test]
fn xdp_netlink_replaced_under_traffic_loses_nothing() {
    replace_under_traffic(GENERIC, Mechanism::Netlink);
}

#[test]
fn tcx_replaced_under_traffic_loses_nothing() {
    replace_under_traffic(Hook::TcIngress, Mechanism::Link);
}

#[test]
fn clsact_replaced_under_traffic_loses_nothing() {
    replace_under_traffic(Hook::TcEgress, Mechanism::Netlink);
}

/// Attached in a scope whose descriptors all close: still attached, found by a new
/// attacher, removed by detach.
fn attachment_outlives_its_descriptors(hook: Hook, mechanism: Mechanism) {
    let Some(pair) = Pair::new() else { return };
    let what = format!("{hook} by {mechanism:?}");
    let (drop, _) = drop_pass(hook);
    let id = pair.at(hook, |dev| {
        let prog = ret_prog(hook, drop, "sift_pinned");
        let a = pair.attacher().mechanism(mechanism);
        a.attach(dev, hook, prog.as_fd()).unwrap().prog_id
        // `prog`, the link (pinned) and the attacher close here.
    });
    assert_eq!(pair.udp_delivered(10), 0, "{what}: still dropping");
    pair.at(hook, |dev| {
        let a = pair.attacher();
        let found = a.query(dev).unwrap();
        assert_eq!(found.len(), 1, "{what}");
        assert_eq!((found[0].prog_id, found[0].mechanism), (id, mechanism), "{what}");
        assert!(found[0].attached);
        if let Hook::Xdp { .. } = hook {
            let idx = iface::index_of(dev).unwrap();
            assert_eq!(Rtnetlink::open().unwrap().xdp_query(idx).unwrap().prog_id, id);
        }
        a.detach(dev, hook).unwrap();
        assert!(!found[0].pin.exists(), "{what}: the pin is gone");
    });
    assert_eq!(pair.udp_delivered(10), 10, "{what}: detached");
}

#[test]
fn pinned_attachments_outlive_every_descriptor() {
    attachment_outlives_its_descriptors(NATIVE, Mechanism::Link);
    attachment_outlives_its_descriptors(Hook::TcIngress, Mechanism::Link);
    attachment_outlives_its_descriptors(GENERIC, Mechanism::Netlink);
    attachment_outlives_its_descriptors(Hook::TcEgress, Mechanism::Netlink);
}

/// The errors: no interface, twice, another tool's program, nothing to replace or detach, the
/// verifier's refusal, native XDP where the driver has none, a deleted interface.
#[test]
fn errors_say_what_is_wrong() {
    let Some(pair) = Pair::new() else { return };
    let a = pair.attacher();
    pair.in_b(|| {
        let pass = ret_prog(NATIVE, XDP_PASS, "sift_pass");
        let e = a.attach("nosuch0", NATIVE, &pass).unwrap_err();
        assert!(matches!(e, AttachError::NoSuchInterface { .. }), "{e}");
        let e = a.replace("sb", NATIVE, &pass).unwrap_err();
        assert!(matches!(e, AttachError::NotAttached { .. }), "{e}");
        let e = a.attach("sb", Hook::TcIngress, &pass).unwrap_err();
        assert!(matches!(e, AttachError::WrongType { .. }), "an XDP program on tc: {e}");
        let e = a.detach("sb", Hook::TcIngress).unwrap_err();
        assert!(matches!(e, AttachError::NotAttached { .. }), "{e}");

        // Another tool's XDP program (netlink, as `ip link set xdp` does): sift refuses to
        // take its place, by either mechanism, and names it.
        let other = ret_prog(GENERIC, XDP_PASS, "other_tool");
        let idx = iface::index_of("sb").unwrap();
        let mut rt = Rtnetlink::open().unwrap();
        rt.xdp_set(idx, Some(other.as_fd()), XDP_FLAGS_SKB_MODE, None).unwrap();
        for m in [Mechanism::Link, Mechanism::Netlink] {
            let e = a.clone().mechanism(m).attach("sb", GENERIC, &pass).unwrap_err();
            assert!(matches!(e, AttachError::Busy { .. }), "{m:?}: {e}");
            assert!(e.to_string().contains("other_tool"), "{m:?}: {e}");
        }
        assert!(a.query("sb").unwrap().is_empty(), "nothing of sift's left behind");
        rt.xdp_set(idx, None, XDP_FLAGS_SKB_MODE, None).unwrap();

        // TCX keeps another tool's program beside sift's, sift's first; a program already
        // there cannot be attached a second time.
        let other_tc = ret_prog(Hook::TcIngress, TC_OK, "other_tc");
        let other_id = bpf::prog_info(&other_tc).unwrap().id;
        let at = bpf::LinkCreate {
            ifindex: idx,
            attach_type: bpf::BPF_TCX_INGRESS,
            ..Default::default()
        };
        let other_link = bpf::link_create(&other_tc, &at).unwrap();
        let tcx = a.clone().mechanism(Mechanism::Link);
        let ours =
            tcx.attach("sb", Hook::TcIngress, ret_prog(Hook::TcIngress, TC_OK, "s")).unwrap();
        let chain = bpf::prog_query(idx, bpf::BPF_TCX_INGRESS).unwrap();
        assert_eq!(chain.prog_ids, vec![ours.prog_id, other_id]);
        tcx.detach("sb", Hook::TcIngress).unwrap();
        let e = tcx.attach("sb", Hook::TcIngress, &other_tc).unwrap_err();
        assert!(matches!(e, AttachError::Busy { .. }), "{e}");
        assert!(a.query("sb").unwrap().is_empty());
        drop(other_link);
        assert!(bpf::prog_query(idx, bpf::BPF_TCX_INGRESS).unwrap().prog_ids.is_empty());

        // Twice.
        a.attach("sb", GENERIC, &pass).unwrap();
        let e = a.attach("sb", GENERIC, &pass).unwrap_err();
        assert!(matches!(e, AttachError::AlreadyAttached { .. }), "{e}");
        // Someone removes sift's link's program by netlink: refused (the link holds the hook).
        assert!(rt.xdp_set(idx, None, XDP_FLAGS_SKB_MODE, None).is_err());
        a.detach("sb", GENERIC).unwrap();

        // The verifier's refusal, with its log.
        let e = load(&prog_bytes("exit\n"), NATIVE, "sift_bad").unwrap_err();
        match &e {
            AttachError::Rejected { log, .. } => assert!(log.contains("R0 !read_ok"), "{log}"),
            _ => panic!("{e}"),
        }
        // A name the kernel would refuse.
        let e = load(&prog_bytes("mov %r0, 2\nexit\n"), NATIVE, "no-dashes").unwrap_err();
        assert!(matches!(e, AttachError::Kernel { .. }), "{e}");

        // lo has no native XDP.
        let e = a.attach("lo", NATIVE, &pass).unwrap_err();
        assert!(matches!(e, AttachError::NativeUnsupported { .. }), "{e}");
        assert!(a.query("lo").unwrap().is_empty());
    });

    // The interface goes: the pin stays, says it is not attached, and detach removes it.
    pair.in_a(|| {
        let drop = ret_prog(NATIVE, XDP_DROP, "sift_drop");
        a.attach("sa", NATIVE, &drop).unwrap();
        a.attach("sa", Hook::TcEgress, ret_prog(Hook::TcEgress, TC_OK, "sift_ok")).unwrap();
        ip(&["link", "del", "sa"]).unwrap();
        let left = a.query("sa").unwrap();
        assert_eq!(left.len(), 2);
        assert!(left.iter().all(|x| !x.attached && x.ifindex == 0), "{left:?}");
        let e = a.replace("sa", NATIVE, &drop).unwrap_err();
        assert!(matches!(e, AttachError::NoSuchInterface { .. }), "{e}");
        a.detach("sa", NATIVE).unwrap();
        a.detach("sa", Hook::TcEgress).unwrap();
        assert!(a.query("sa").unwrap().is_empty());
        assert!(!pair.root.join("sa").exists());
    });
}

/// The live-frames generator of `examples/xdp_veth_rate.rs`: an XDP program redirecting to
/// `sa`, run with `BPF_F_TEST_XDP_LIVE_FRAMES`, puts frames on the wire into `sb`, where an
/// attached program counts them; every frame is counted or refused by the full veth ring.
#[test]
fn live_frames_reach_the_peer() {
    let Some(pair) = Pair::new() else { return };
    let counts = counts_map();
    let counter = counting_prog(NATIVE, &counts, 0, XDP_DROP);
    let a = pair.attacher();
    pair.in_b(|| a.attach("sb", NATIVE, &counter).unwrap());
    let frames = 20_000;
    let refused = pair.in_a(|| {
        let sa = iface::index_of("sa").unwrap();
        let text = format!("mov %r1, {sa}\nmov %r2, 0\ncall 23\nexit\n");
        let generator = load(&prog_bytes(&text), NATIVE, "sift_gen").unwrap();
        let mut frame = vec![0u8; 60];
        frame[..6].copy_from_slice(&[0x02, 0, 0x5e, 0x51, 0xf7, 0x99]);
        frame[12..14].copy_from_slice(&[0x08, 0x00]);
        frame[14] = 0x45;
        frame[23] = 17; // UDP: what the counter counts
        let mut rt = Rtnetlink::open().unwrap();
        let before = rt.link_stats(sa).unwrap().tx_dropped;
        bpf::prog_test_run_xdp_live(&generator, &frame, frames, 64).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        rt.link_stats(sa).unwrap().tx_dropped - before
    });
    let counted = count(&counts, 0);
    assert!(counted > 0, "no frame arrived ({refused} refused)");
    assert_eq!(counted + refused, u64::from(frames), "{counted} counted, {refused} refused");
    pair.in_b(|| a.detach("sb", NATIVE).unwrap());
}
