//! The program equals the userspace engine (`Firewall::test`), packet by packet: the same
//! verdicts, the same states (keys, direction, both peers' TCP states, sequence windows and
//! scales, timeouts, packet and byte counts, rule), the same counters and pflog records; in
//! sift's VM and in the kernel (`BPF_PROG_TEST_RUN`, XDP for packets going in, TC egress for
//! packets going out; root, SKIP otherwise; its pflog records read from the ring buffer mapped
//! in user space).
//!
//! Time: in the VM, the program's clock (`bpf_ktime_get_ns`) is set to each packet's time and
//! the userspace engine runs on the same seconds, so creation and last-activity times are
//! compared and states expire alike. The kernel's clock is its own: there, the userspace
//! engine's clock stays at 0, the tests last seconds (no state expires on either side), and
//! what depends on the clock (creation and last-activity times, the golden cases that move
//! time with `t=`) is not compared.
//!
//! Traffic: sift-firewall's TCP golden conversations (`crates/firewall/tests/tcp/*.txt`:
//! handshakes, data, closes, resets, windows, sloppy tracking, expiry), generated traffic
//! (sift-gen: TCP, DNS, pings, syslog, fragments, IPv6 extension headers, VLANs, malformed and
//! truncated frames) under rule sets with tables, quick rules, block and pass, keep state and
//! no state, flags S/SA, logging; and the repository's sample captures.

use std::path::Path;

use sift_firewall::packet::Direction;

mod support;
use support::{
    Harness, POLICIES, conversation, direction, ethernet, generator_lan, tcp_cases, tcp_packet,
};

/// Runs a TCP conversation (rules, `---`, packet lines) through the harness, comparing the
/// states after every packet; returns how many packets ran.
fn run_conversation(text: &str, name: &str, kernel: bool) -> Option<usize> {
    let (rules, segments) = conversation(text);
    let mut h = Harness::new(rules, "em0", kernel)?;
    let mut n = 0;
    for s in &segments {
        let what = format!("{name} line {}: {}", s.line, s.text);
        h.packet(&s.frame, s.dir, s.now, 0, &what);
        h.check_states(&what);
        n += 1;
    }
    h.check_counters(name);
    h.check_log(name);
    Some(n)
}

#[test]
fn tcp_conversations_in_the_vm() {
    let mut total = 0;
    for (path, text) in tcp_cases() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        total += run_conversation(&text, &name, false).expect("the VM is always there");
    }
    println!("{total} TCP segments: the VM equals the userspace engine");
}

#[test]
fn tcp_conversations_in_the_kernel() {
    let mut total = 0;
    for (path, text) in tcp_cases() {
        // Conversations that move the clock depend on it: the kernel's is its own.
        if text.contains(" t=") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(n) = run_conversation(&text, &name, true) else { return };
        total += n;
    }
    println!("{total} TCP segments: the kernel equals the userspace engine");
}

/// Runs `frames` generated frames under every policy; returns a summary line per policy.
fn generated(
    kernel: bool,
    frames: usize,
    in_hook: sift_firewall_ebpf::Hook,
) -> Option<Vec<String>> {
    use sift_gen::{Config, Generator};
    let mut summary = Vec::new();
    for (pi, (name, rules)) in POLICIES.iter().enumerate() {
        let mut h = Harness::new(rules, "em0", kernel)?;
        h.in_hook = in_hook;
        let config = Config { malformed: 0.03, truncate: 0.01, ..Config::default() };
        let mut g = Generator::new(0x5eed + pi as u64, config);
        let start = config.start_ns / 1_000_000_000;
        let mut frame = Vec::new();
        for i in 0..frames {
            let meta = g.next_frame(&mut frame);
            let dir = direction(&frame, &generator_lan);
            let what = format!("{name}: frame {i}");
            h.packet(&frame, dir, meta.ts_sec - start, meta.ts_nsec, &what);
            if i % 100 == 99 {
                h.check_states(&what);
                h.check_log(&what);
            }
        }
        h.check_states(name);
        h.check_counters(name);
        h.check_log(name);
        let s = &h.stats;
        summary.push(format!(
            "{name}: {} frames ({} not IP, {} skipped), {} passed ({} by a state), {} blocked, \
             {} logged, up to {} states",
            s.packets,
            s.not_ip,
            s.skipped,
            s.passed,
            s.from_state,
            s.blocked,
            s.logged,
            s.states_max
        ));
        assert!(s.passed > 0 && s.blocked + s.from_state > 0, "{name}: {s:?}");
    }
    Some(summary)
}

#[test]
fn generated_traffic_in_the_vm() {
    let s = generated(false, 3000, sift_firewall_ebpf::Hook::Xdp).expect("the VM");
    println!("{}", s.join("\n"));
}

#[test]
fn generated_traffic_in_the_kernel() {
    let Some(s) = generated(true, 3000, sift_firewall_ebpf::Hook::Xdp) else { return };
    println!("{}", s.join("\n"));
}

#[test]
fn generated_traffic_in_the_kernel_through_tc_ingress() {
    let Some(s) = generated(true, 1000, sift_firewall_ebpf::Hook::TcIngress) else { return };
    println!("{}", s.join("\n"));
}

/// The repository's sample captures (client 192.0.2.1, 198.51.100.1, 2001:db8:1::1,
/// 2001:db8:2::1 inside) under a policy that lets the client's connections out.
fn samples(kernel: bool) -> Option<Vec<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let clients: [&[u8]; 4] = [
        &[192, 0, 2, 1],
        &[198, 51, 100, 1],
        &[0x20, 1, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        &[0x20, 1, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ];
    let inside = |src: &[u8]| clients.contains(&src);
    let mut summary = Vec::new();
    for name in ["ping.pcap", "http.pcap", "dns.pcap", "tcp.pcap", "mixed.pcapng"] {
        let rules = "block log all\npass out all keep state\npass in inet6 proto ipv6-icmp all\n";
        let mut h = Harness::new(rules, "em0", kernel)?;
        let mut r = sift_pcap::open(&dir.join(name)).expect("sample");
        let mut first = None;
        let mut i = 0;
        while let Some(p) = r.next_packet().expect("read") {
            let t0 = *first.get_or_insert(p.timestamp.secs);
            let dir = direction(p.data, &inside);
            let what = format!("{name}: packet {i}");
            h.packet(p.data, dir, p.timestamp.secs - t0, p.timestamp.nanos, &what);
            h.check_states(&what);
            i += 1;
        }
        h.check_counters(name);
        h.check_log(name);
        let s = &h.stats;
        summary.push(format!(
            "{name}: {} packets ({} skipped), {} passed ({} by a state), {} blocked",
            s.packets, s.skipped, s.passed, s.from_state, s.blocked
        ));
    }
    Some(summary)
}

#[test]
fn samples_in_the_vm() {
    println!("{}", samples(false).expect("the VM").join("\n"));
}

#[test]
fn samples_in_the_kernel() {
    let Some(s) = samples(true) else { return };
    println!("{}", s.join("\n"));
}

/// An IPv4 header (no options) around `payload`.
fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0, 64, proto, 0, 0];
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(payload);
    p
}

/// An IPv6 header around `payload` whose first header is `next`.
fn ipv6(src: u8, dst: u8, next: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    p.extend_from_slice(&[next, 64]);
    let addr = |h: u8| {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 1, 0x0d, 0xb8]);
        a[15] = h;
        a
    };
    p.extend_from_slice(&addr(src));
    p.extend_from_slice(&addr(dst));
    p.extend_from_slice(payload);
    p
}

/// A UDP header and payload.
fn udp(sport: u16, dport: u16, len: usize) -> Vec<u8> {
    let mut u = sport.to_be_bytes().to_vec();
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + len) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.resize(8 + len, 0xab);
    u
}

/// An ICMP (or ICMPv6) message: type, code, the 4 bytes after the checksum, a payload.
fn icmp(ty: u8, code: u8, rest: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, code, 0, 0];
    m.extend_from_slice(&rest);
    m.extend_from_slice(payload);
    m
}

/// An IPv6 extension header of `kind` with `next`, `len` 8-byte units after the first.
fn ext(kind: u8, next: u8, len: u8) -> Vec<u8> {
    match kind {
        44 => vec![next, 0, 0, 0, 0, 0, 0, 1],
        51 => {
            let mut h = vec![next, len, 0, 0];
            h.resize((usize::from(len) + 2) * 4, 0);
            h
        }
        _ => {
            let mut h = vec![next, len];
            h.resize((usize::from(len) + 1) * 8, 0);
            h
        }
    }
}

/// Frames that take every branch of the parser and of the state lookups, each with its
/// direction.
fn edge_frames() -> Vec<(String, Vec<u8>, Direction)> {
    use Direction::{In, Out};
    let c = [10, 0, 0, 1];
    let s = [192, 0, 2, 9];
    let mut v: Vec<(String, Vec<u8>, Direction)> = Vec::new();
    let mut add = |name: &str, frame: Vec<u8>, dir| v.push((name.to_string(), frame, dir));
    // TCP out with window scaling, then ICMP errors quoting it (in and out of its window).
    let syn = tcp_packet((c, 40000), (s, 80), 0x02, (1000, 0, 65535), Some(7), 0);
    add("tcp syn", ethernet(&syn), Out);
    let quote = |seq: u32| {
        let mut q = ipv4(c, s, 6, &[0x9c, 0x40, 0, 80]);
        q.extend_from_slice(&seq.to_be_bytes());
        q[2..4].copy_from_slice(&40u16.to_be_bytes());
        q
    };
    add("icmp error in window", ethernet(&ipv4(s, c, 1, &icmp(3, 1, [0; 4], &quote(1000)))), In);
    add(
        "icmp error out of window",
        ethernet(&ipv4(s, c, 1, &icmp(3, 1, [0; 4], &quote(9_000_000)))),
        In,
    );
    add(
        "icmp error short quote",
        ethernet(&ipv4(s, c, 1, &icmp(3, 1, [0; 4], &quote(1000)[..24]))),
        In,
    );
    // The SYN+ACK with options (NOPs, MSS, window scale, SACK permitted).
    let mut sa = tcp_packet((s, 80), (c, 40000), 0x12, (5000, 1001, 65535), None, 0);
    sa[32] = 0x80; // 32 bytes of TCP header: 12 of options
    sa.splice(40..40, [1, 1, 2, 4, 5, 0xb4, 3, 3, 9, 4, 2, 0]);
    let len = sa.len() as u16;
    sa[2..4].copy_from_slice(&len.to_be_bytes());
    add("tcp syn+ack with options", ethernet(&sa), In);
    add(
        "tcp ack",
        ethernet(&tcp_packet((c, 40000), (s, 80), 0x10, (1001, 5001, 512), None, 0)),
        Out,
    );
    add(
        "tcp data",
        ethernet(&tcp_packet((c, 40000), (s, 80), 0x18, (1001, 5001, 512), None, 100)),
        Out,
    );
    add(
        "tcp out of window",
        ethernet(&tcp_packet((s, 80), (c, 40000), 0x10, (90_000_000, 1101, 512), None, 0)),
        In,
    );
    add("tcp rst", ethernet(&tcp_packet((s, 80), (c, 40000), 0x04, (5001, 0, 0), None, 0)), In);
    add("tcp syn on the closed state", ethernet(&syn), Out);
    // UDP and an ICMP port unreachable about it.
    add("udp out", ethernet(&ipv4(c, s, 17, &udp(5353, 53, 20))), Out);
    add("udp reply", ethernet(&ipv4(s, c, 17, &udp(53, 5353, 40))), In);
    let mut uq = ipv4(c, s, 17, &udp(5353, 53, 0));
    uq.truncate(28);
    add("icmp port unreachable", ethernet(&ipv4(s, c, 1, &icmp(3, 3, [0; 4], &uq))), In);
    // ICMP echo both ways, and an error quoting the echo.
    add("echo request", ethernet(&ipv4(c, s, 1, &icmp(8, 0, [0, 7, 0, 1], &[0; 16]))), Out);
    add("echo reply", ethernet(&ipv4(s, c, 1, &icmp(0, 0, [0, 7, 0, 1], &[0; 16]))), In);
    add(
        "echo reply of another id",
        ethernet(&ipv4(s, c, 1, &icmp(0, 0, [0, 8, 0, 1], &[0; 16]))),
        In,
    );
    add(
        "time exceeded quoting the echo",
        ethernet(&ipv4(
            s,
            c,
            1,
            &icmp(11, 0, [0; 4], &ipv4(c, s, 1, &icmp(8, 0, [0, 7, 0, 1], &[]))),
        )),
        In,
    );
    // IPv6: ICMPv6 echo, extension header chains, fragments.
    add("icmpv6 echo", ethernet(&ipv6(1, 2, 58, &icmp(128, 0, [0, 9, 0, 1], &[0; 8]))), Out);
    add("icmpv6 echo reply", ethernet(&ipv6(2, 1, 58, &icmp(129, 0, [0, 9, 0, 1], &[0; 8]))), In);
    let mut chain = ext(0, 60, 0);
    chain.extend(ext(60, 43, 1));
    chain.extend(ext(43, 51, 0));
    chain.extend(ext(51, 17, 1));
    chain.extend(udp(1000, 53, 8));
    add("ipv6 extension headers, then udp", ethernet(&ipv6(1, 2, 0, &chain)), Out);
    let mut ah0 = ext(51, 17, 0);
    ah0.extend(udp(1000, 53, 8));
    add("ipv6 ah with length 0", ethernet(&ipv6(1, 2, 51, &ah0)), Out);
    let mut long = Vec::new();
    for _ in 0..64 {
        long.extend(ext(0, 0, 0));
    }
    let n = long.len();
    long[n - 8] = 17;
    long.extend(udp(1, 2, 0));
    add("ipv6 64 extension headers", ethernet(&ipv6(1, 2, 0, &long)), Out);
    let mut longer = ext(0, 0, 0);
    longer.extend(&long);
    add("ipv6 65 extension headers", ethernet(&ipv6(1, 2, 0, &longer)), Out);
    let mut frag = vec![17, 0, 0, 8, 0, 0, 0, 1];
    frag.extend(udp(1, 2, 8));
    add("ipv6 later fragment", ethernet(&ipv6(1, 2, 44, &frag)), Out);
    let mut atomic = vec![17, 0, 0, 0, 0, 0, 0, 1];
    atomic.extend(udp(1, 2, 8));
    add("ipv6 atomic fragment", ethernet(&ipv6(1, 2, 44, &atomic)), Out);
    add("ipv6 truncated extension", ethernet(&ipv6(1, 2, 60, &[17, 4, 0, 0, 0, 0, 0, 0])), Out);
    add("icmp in ipv6", ethernet(&ipv6(1, 2, 1, &icmp(8, 0, [0; 4], &[]))), Out);
    add("icmpv6 in ipv4", ethernet(&ipv4(c, s, 58, &icmp(128, 0, [0; 4], &[]))), Out);
    // IPv4 refusals and fragments.
    let mut mf = ipv4(c, s, 17, &udp(1, 2, 8));
    mf[6] = 0x20;
    add("ipv4 first fragment", ethernet(&mf), Out);
    let mut later = ipv4(c, s, 6, &[0; 16]);
    later[7] = 0x10;
    add("ipv4 later tcp fragment", ethernet(&later), Out);
    let mut badhl = ipv4(c, s, 17, &udp(1, 2, 0));
    badhl[0] = 0x44;
    add("ipv4 header length 16", ethernet(&badhl), Out);
    let mut short = ipv4(c, s, 17, &udp(1, 2, 20));
    short.truncate(40);
    add("ipv4 shorter than its length", ethernet(&short), Out);
    let mut tl = ipv4(c, s, 6, &[0; 20]);
    tl[2..4].copy_from_slice(&18u16.to_be_bytes());
    add("ipv4 total length below the header", ethernet(&tl), Out);
    let mut tcp_short = ipv4(c, s, 6, &[0; 12]);
    tcp_short.truncate(32);
    add("tcp header short", ethernet(&tcp_short), Out);
    let mut bad_doff = tcp_packet((c, 1), (s, 2), 0x02, (1, 0, 1), None, 0);
    bad_doff[32] = 0x40;
    add("tcp data offset 4", ethernet(&bad_doff), Out);
    let mut v5 = ipv4(c, s, 17, &udp(1, 2, 0));
    v5[0] = 0x55;
    add("ip version 5", ethernet(&v5), Out);
    add(
        "ethernet with an ip type and nothing",
        vec![0; 12].into_iter().chain([8, 0]).collect(),
        Out,
    );
    add("arp", vec![0xff; 12].into_iter().chain([8, 6, 0, 1, 8, 0, 6, 4, 0, 1]).collect(), In);
    // Tagged frames: 802.1Q, then 802.1ad and 802.1Q.
    let tagged = |tags: &[[u8; 4]], ip: &[u8]| {
        let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
        for t in tags {
            f.extend_from_slice(t);
        }
        f.extend_from_slice(&[8, 0]);
        f.extend_from_slice(ip);
        f
    };
    add("vlan udp", tagged(&[[0x81, 0, 0, 10]], &ipv4(c, s, 17, &udp(7, 7, 4))), Out);
    add(
        "qinq udp",
        tagged(&[[0x88, 0xa8, 0, 20], [0x81, 0, 0, 10]], &ipv4(c, s, 17, &udp(7, 7, 4))),
        Out,
    );
    add("other protocol", ethernet(&ipv4(c, s, 47, &[0; 8])), Out);
    add("other protocol back", ethernet(&ipv4(s, c, 47, &[0; 8])), In);
    v
}

fn edges(kernel: bool) -> Option<usize> {
    let rules = "block log all\n\
                 pass out all keep state\n\
                 pass in proto tcp to port 22 flags S/SA keep state\n";
    let mut h = Harness::new(rules, "em0", kernel)?;
    let frames = edge_frames();
    for (i, (name, frame, dir)) in frames.iter().enumerate() {
        let what = format!("edge case {i}: {name}");
        let d = h.packet(frame, *dir, 1 + i as u64, 0, &what);
        if std::env::var("EDGE_DEBUG").is_ok() {
            println!(
                "{what}: {:?}",
                d.map(|d| (d.action, d.reason, d.from_state, d.rule.map(|r| r.nr)))
            );
        }
        h.check_states(&what);
    }
    h.check_counters("edge cases");
    h.check_log("edge cases");
    Some(frames.len())
}

#[test]
fn edge_cases_in_the_vm() {
    println!("{} frames", edges(false).expect("the VM"));
}

#[test]
fn edge_cases_in_the_kernel() {
    if let Some(n) = edges(true) {
        println!("{n} frames");
    }
}
