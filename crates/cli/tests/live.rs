//! Live capture and injection end to end, in private network namespaces.
//!
//! Each test makes its own namespace with a single-queue veth pair `inj0`–`cap0` (removed by a guard
//! on drop, also when the test fails), injects generated packets into `inj0` with `sift inject`
//! and captures on `cap0` with `sift -i cap0`. IPv6 is disabled in the namespace before the veth
//! pair exists and no address is configured, so the kernel sends nothing of its own (no router
//! solicitations, no DAD, no IGMP): the capture sees exactly the injected packets. The MTU is
//! raised to 9000 because sift-gen makes some frames longer than 1514 bytes.
//!
//! The expected packets are computed offline with sift's interpreter, on the frame as the
//! kernel's filter sees it: Linux strips the outer 802.1Q/802.1ad tag into metadata before the
//! taps, and libpcap (and sift) put it back afterwards, so the filter runs on the untagged
//! frame while the file holds the tagged one. Where tcpdump is present it captures the same
//! traffic and must write the same packets.
//!
//! These tests need root (namespaces, packet sockets): without it they skip, and fail under
//! `SIFT_REQUIRE_ORACLES=1` as CI runs them.

mod live_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use live_support::*;

#[test]
fn kernel_filter_writes_exactly_the_matching_packets_like_tcpdump() {
    let Some(ns) = Netns::new("filter") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 3000, 11);
    let filter = "tcp[tcpflags] & tcp-syn != 0 or udp port 53 or icmp";
    let want = expected(&input, filter, 262_144);
    assert!(want.len() > 50 && want.len() < 2500, "a filter that matches some: {}", want.len());

    let out = dir.path().join("sift.pcap");
    let sift = Running::start(&ns, &[SIFT, "-i", "cap0", "-w", out.to_str().unwrap(), filter]);
    let td_out = dir.path().join("tcpdump.pcap");
    let td = tcpdump().map(|t| {
        Running::start(
            &ns,
            &[t.to_str().unwrap(), "-i", "cap0", "-w", td_out.to_str().unwrap(), filter],
        )
    });
    let o = ns.inject(&input, &["--topspeed"]);
    assert!(o.status.success(), "inject: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sent 3000 packets"));
    // tcpdump's ring blocks are handed over after its 1 s timeout; sift drains its own.
    std::thread::sleep(Duration::from_millis(if td.is_some() { 1500 } else { 100 }));

    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("user space"), "the filter should run in the kernel: {stderr}");
    let n = want.len() as u64;
    assert_eq!(counts(&stderr), Counts { captured: n, received: n, dropped: 0 }, "{stderr}");
    assert_same_packets("sift -i", &packets(&out), &want);

    if let Some(td) = td {
        let (ok, stderr) = td.stop();
        assert!(ok, "{stderr}");
        assert_same_packets("tcpdump vs sift", &packets(&out), &packets(&td_out));
    }
}

#[test]
fn count_stops_at_exactly_n_and_snaplen_cuts() {
    let Some(ns) = Netns::new("count") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 1000, 12);
    let out = dir.path().join("c.pcap");
    let sift = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "-c", "137", "-s", "80", "-w", out.to_str().unwrap(), "ip or arp"],
    );
    let o = ns.inject(&input, &["--topspeed"]);
    assert!(o.status.success());
    // No signal: -c ends the capture by itself.
    let (ok, stderr) = sift.wait(30);
    assert!(ok, "{stderr}");
    assert_eq!(counts(&stderr).captured, 137, "{stderr}");
    let want: Vec<_> = expected(&input, "ip or arp", 80).into_iter().take(137).collect();
    let got = packets(&out);
    assert_same_packets("-c 137 -s 80", &got, &want);
    assert!(got.iter().all(|(d, _)| d.len() <= 80));
    let mut r = sift_pcap::open(&out).unwrap();
    let _ = r.next_packet();
    assert_eq!(r.interfaces()[0].snaplen, 80);
}

#[test]
fn sigint_in_mid_traffic_leaves_a_valid_file_with_every_counted_packet() {
    let Some(ns) = Netns::new("sigint") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 2000, 13);
    let out = dir.path().join("i.pcap");
    let sift = Running::start(&ns, &[SIFT, "-i", "cap0", "-B", "256", "-w", out.to_str().unwrap()]);
    // About 4 s of traffic; the capture is interrupted after 1 s.
    let mut inject = ns
        .cmd(&[SIFT, "inject", "-i", "inj0", "-r", input.to_str().unwrap(), "--rate", "20000"])
        .args(["--loop", "40"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let (ok, stderr) = sift.stop();
    let _ = inject.kill();
    let _ = inject.wait();
    assert!(ok, "{stderr}");
    let c = counts(&stderr);
    assert!(c.captured > 1000, "traffic was flowing: {c:?}");
    assert!(c.captured < 80_000, "stopped in the middle: {c:?}");
    // Every packet the kernel queued was written; none was lost at the end.
    assert_eq!(c.captured + c.dropped, c.received, "{stderr}");
    let got = packets(&out);
    assert_eq!(got.len() as u64, c.captured);
    // And they are the injected packets, in order (the capture loops over the file).
    let sent = packets(&input);
    let mut at = 0;
    for (i, g) in got.iter().enumerate() {
        let found = (0..sent.len()).map(|k| (at + k) % sent.len()).find(|&k| sent[k] == *g);
        let Some(k) = found else { panic!("captured packet {} was never sent", i + 1) };
        at = k + 1;
    }
}

fn file_names(dir: &Path, prefix: &str) -> Vec<(String, u64)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
        .collect();
    v.sort();
    v
}

#[test]
fn size_rotation_makes_the_files_tcpdump_makes() {
    let Some(ns) = Netns::new("rot") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 7000, 14);
    let d = dir.path();
    // -C 1: a new file past 10^6 bytes (tcpdump 4.99.3 takes no k/m/g suffix); a ring of 2
    // (-W) and an unbounded series.
    let ring = d.join("ring.pcap");
    let series = d.join("series.pcap");
    let s1 = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "-C", "1", "-W", "2", "-B", "8192", "-w", ring.to_str().unwrap()],
    );
    let s2 = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "-C", "1", "-B", "8192", "-w", series.to_str().unwrap()],
    );
    let td = tcpdump().map(|t| {
        let t = t.to_str().unwrap().to_string();
        let a = Running::start(
            &ns,
            &[
                &t,
                "-Z",
                "root",
                "-i",
                "cap0",
                "-C",
                "1",
                "-W",
                "2",
                "-B",
                "8192",
                "-w",
                d.join("td_ring.pcap").to_str().unwrap(),
            ],
        );
        let b = Running::start(
            &ns,
            &[
                &t,
                "-Z",
                "root",
                "-i",
                "cap0",
                "-C",
                "1",
                "-B",
                "8192",
                "-w",
                d.join("td_series.pcap").to_str().unwrap(),
            ],
        );
        (a, b)
    });
    assert!(ns.inject(&input, &["--rate", "20000"]).status.success());
    std::thread::sleep(Duration::from_millis(if td.is_some() { 1500 } else { 100 }));
    for r in [s1, s2] {
        let (ok, stderr) = r.stop();
        assert!(ok, "{stderr}");
    }
    let ring_files = file_names(d, "ring.pcap");
    let series_files = file_names(d, "series.pcap");
    let names = |v: &[(String, u64)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&ring_files), ["ring.pcap0", "ring.pcap1"]);
    assert!(series_files.len() >= 3, "{series_files:?}");
    assert_eq!(series_files[0].0, "series.pcap");
    assert!(series_files.iter().any(|(n, _)| n == "series.pcap1"));
    // Full files end with the first packet that took them past the limit.
    let all: Vec<_> = packets(&input);
    let mut total = 0;
    for (i, (name, size)) in series_files.iter().enumerate() {
        let pk = packets(&d.join(name));
        total += pk.len();
        let body: u64 = pk.iter().map(|(p, _)| 16 + p.len() as u64).sum();
        assert_eq!(*size, 24 + body);
        if i + 1 < series_files.len() {
            let last = 16 + pk.last().unwrap().0.len() as u64;
            assert!(*size > 1_000_000 && *size - last <= 1_000_000, "{name}: {size}");
        }
    }
    assert_eq!(total, all.len());
    if let Some((a, b)) = td {
        a.stop();
        b.stop();
        assert_eq!(file_names(d, "td_ring.pcap").len(), ring_files.len());
        let td_series = file_names(d, "td_series.pcap");
        let strip = |v: &[(String, u64)], p: &str| {
            v.iter().map(|(n, s)| (n.trim_start_matches(p).to_string(), *s)).collect::<Vec<_>>()
        };
        assert_eq!(strip(&td_series, "td_series.pcap"), strip(&series_files, "series.pcap"));
        for ((n, _), (tn, _)) in ring_files.iter().zip(file_names(d, "td_ring.pcap")) {
            assert_same_packets(n, &packets(&d.join(n)), &packets(&d.join(&tn)));
        }
    }
}

#[test]
fn time_rotation_names_files_with_strftime_and_stops_at_w() {
    let Some(ns) = Netns::new("grot") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 200, 15);
    let pattern = dir.path().join("g_%Y%m%d%H%M%S.pcap");
    let sift = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "-G", "1", "-W", "2", "-w", pattern.to_str().unwrap()],
    );
    // 200 packets over about 4 s: the capture ends by itself after two files.
    let o = ns.inject(&input, &["--rate", "50"]);
    assert!(o.status.success());
    let (ok, stderr) = sift.wait(30);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("Maximum file limit reached: 2"), "{stderr}");
    let files = file_names(dir.path(), "g_");
    assert_eq!(files.len(), 2, "{files:?}");
    for (name, _) in &files {
        let stamp = name.trim_start_matches("g_").trim_end_matches(".pcap");
        assert!(stamp.len() == 14 && stamp.bytes().all(|b| b.is_ascii_digit()), "{name}");
    }
    assert_ne!(files[0].0, files[1].0);
    let total: usize = files.iter().map(|(n, _)| packets(&dir.path().join(n)).len()).sum();
    assert_eq!(total as u64, counts(&stderr).captured);
}

#[test]
fn any_uses_cooked_v2_headers_like_tcpdump_and_falls_back_to_user_space() {
    let Some(ns) = Netns::new("any") else { return };
    let Some(td_path) = tcpdump() else { return };
    let td_path = td_path.to_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 600, 16);
    let d = dir.path();
    // `ip`: rewritten for the kernel (protocol field → ancillary load). `link[12] == 2`: the
    // hardware address cannot be read by the kernel, so the filter runs in user space.
    let cases = [("kernel", "ip"), ("user", "link[12] == 2 and not ip6")];
    let mut runs = Vec::new();
    for (tag, filter) in cases {
        let s = d.join(format!("sift_{tag}.pcap"));
        let t = d.join(format!("td_{tag}.pcap"));
        let a = Running::start(&ns, &[SIFT, "-i", "any", "-w", s.to_str().unwrap(), filter]);
        let b = Running::start(&ns, &[&td_path, "-i", "any", "-w", t.to_str().unwrap(), filter]);
        runs.push((tag, s, t, a, b));
    }
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    std::thread::sleep(Duration::from_millis(1500));
    for (tag, s, t, a, b) in runs {
        let (ok, stderr) = a.stop();
        assert!(ok, "{stderr}");
        assert_eq!(stderr.contains("filtering in user space"), tag == "user", "{stderr}");
        let (ok, td_err) = b.stop();
        assert!(ok, "{td_err}");
        let mine = packets(&s);
        assert!(!mine.is_empty());
        assert_same_packets(tag, &mine, &packets(&t));
        let r = sift_pcap::open(&s).unwrap();
        assert_eq!(r.interfaces()[0].link_type, sift_pcap::LinkType::LINUX_SLL2);
        let c = counts(&stderr);
        assert_eq!(c.captured, mine.len() as u64);
        if tag == "kernel" {
            assert_eq!(c.captured, c.received);
        } else {
            // Every packet reached user space; the filter kept some.
            assert!(c.received > c.captured, "{c:?}");
        }
    }
}

#[test]
fn pcapng_output_has_an_interface_block_and_statistics() {
    let Some(ns) = Netns::new("ng") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 500, 17);
    let out = dir.path().join("o.pcapng");
    let sift = Running::start(
        &ns,
        &[
            SIFT,
            "-i",
            "cap0",
            "--pcapng",
            "--time-stamp-precision=nano",
            "-w",
            out.to_str().unwrap(),
            "tcp",
        ],
    );
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    let want = expected(&input, "tcp", 262_144);
    assert_same_packets("pcapng", &packets(&out), &want);
    let mut r = sift_pcap::open(&out).unwrap();
    while r.next_packet().unwrap().is_some() {}
    let iface = &r.interfaces()[0];
    assert_eq!(r.interfaces().len(), 1);
    assert_eq!(iface.name.as_deref(), Some("cap0"));
    assert_eq!(iface.link_type, sift_pcap::LinkType::EN10MB);
    assert_eq!(iface.ts_resolution, sift_pcap::TsResolution::NANO);
    let stats = iface.stats.expect("a statistics block");
    assert_eq!(stats.received, Some(want.len() as u64));
    assert_eq!(stats.dropped, Some(0));
    assert_eq!(stats.delivered, Some(want.len() as u64));
}

#[test]
fn printing_is_line_buffered() {
    let Some(ns) = Netns::new("print") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 20, 18);
    let mut sift = Running::start(&ns, &[SIFT, "-i", "cap0", "arp or ip"]);
    let want = expected(&input, "arp or ip", 262_144).len();
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    // The lines arrive while the capture still runs (read on a thread, so that a missing line
    // fails the test instead of hanging it).
    let out = sift.child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    for i in 0..want {
        let l = rx.recv_timeout(Duration::from_secs(10));
        let l = l.unwrap_or_else(|_| panic!("line {} of {want} did not arrive", i + 1));
        // tcpdump's format: a time of day, then the protocol.
        let b = l.as_bytes();
        assert!(b.len() > 16 && b[2] == b':' && b[5] == b':' && b[8] == b'.', "{l}");
        assert!(l.contains(" IP ") || l.contains(" ARP,") || l.contains(" IP6 "), "{l}");
    }
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    assert_eq!(counts(&stderr).captured, want as u64);
}

#[test]
fn privileges_are_checked_before_anything_is_created() {
    if !sift_testkit::is_root() {
        // Not root already: the check itself is what runs.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.pcap");
        let o = Command::new(SIFT).args(["-i", "lo", "-w"]).arg(&out).output().unwrap();
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("permission"));
        assert!(!out.exists());
        return;
    }
    let Some(setpriv) = sift_testkit::tool("setpriv") else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .unwrap();
    let out = dir.path().join("x.pcap");
    for args in [
        vec!["-i", "lo", "-w", out.to_str().unwrap()],
        vec!["inject", "-i", "lo", "-r", "/dev/null"],
    ] {
        let o = Command::new(&setpriv)
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"])
            .arg(SIFT)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("permission") && err.contains("CAP_NET_RAW"), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn inject_reports_sent_counts_errors_rate_and_loops() {
    let Some(ns) = Netns::new("inj") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 300, 19);
    let sent = packets(&input);
    // The kernel takes 1514 bytes at MTU 1500, 1518 when the frame carries an 802.1Q tag.
    let refused = |p: &[u8]| p.len() > 1518 || (p.len() > 1514 && p[12..14] != [0x81, 0x00]);
    let too_long = sent.iter().filter(|(p, _)| refused(p)).count();
    assert!(too_long > 0, "sift-gen makes some frames longer than 1514 bytes");

    // --loop 3 at 3000 packets/s: 900 packets, not faster than the rate allows.
    let out = dir.path().join("l.pcap");
    let cap = Running::start(&ns, &[SIFT, "-i", "cap0", "-w", out.to_str().unwrap()]);
    let t = Instant::now();
    let o = ns.inject(&input, &["--rate", "3000", "--loop", "3"]);
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sent 900 packets") && err.contains(", 0 errors"), "{err}");
    assert!(took >= Duration::from_millis(280), "900 packets at 3000/s took {took:?}");
    let (ok, stderr) = cap.stop();
    assert!(ok, "{stderr}");
    let got = packets(&out);
    let thrice: Vec<_> = sent.iter().chain(&sent).chain(&sent).cloned().collect();
    assert_same_packets("--loop 3", &got, &thrice);

    // At MTU 1500 the long frames are refused, counted and reported; the rest still go out.
    ns.ok(&["ip", "link", "set", "inj0", "mtu", "1500"]);
    let o = ns.inject(&input, &["--topspeed"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Message too long"), "{err}");
    let summary = format!("sent {} packets", sent.len() - too_long);
    assert!(err.contains(&summary) && err.contains(&format!("{too_long} error")), "{err}");
}

#[test]
fn direction_keeps_only_the_packets_asked_for() {
    let Some(ns) = Netns::new("dir") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 200, 20);
    // On the sending side every packet is outgoing.
    let mut runs = Vec::new();
    for q in ["in", "out", "inout"] {
        let out = dir.path().join(format!("{q}.pcap"));
        let r = Running::start(&ns, &[SIFT, "-i", "inj0", "-Q", q, "-w", out.to_str().unwrap()]);
        runs.push((q, out, r));
    }
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    for (q, out, r) in runs {
        let (ok, stderr) = r.stop();
        assert!(ok, "{stderr}");
        let n = packets(&out).len();
        assert_eq!(n, if q == "in" { 0 } else { 200 }, "-Q {q}: {stderr}");
        assert_eq!(counts(&stderr).captured, n as u64);
    }
}

#[test]
fn fanout_spreads_the_capture_over_threads_and_loses_nothing() {
    let Some(ns) = Netns::new("fanout") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 2000, 21);
    let out = dir.path().join("f.pcap");
    let filter = "ip or arp";
    let sift = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "--fanout", "3", "-w", out.to_str().unwrap(), filter],
    );
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    let mut want = expected(&input, filter, 262_144);
    let mut got = packets(&out);
    let n = want.len() as u64;
    assert_eq!(counts(&stderr), Counts { captured: n, received: n, dropped: 0 }, "{stderr}");
    // Flows may interleave differently; the packets are the same.
    want.sort();
    got.sort();
    assert_same_packets("--fanout 3", &got, &want);
}

/// The file sift or tcpdump captured to, read while the capture goes on: only whole packets.
fn packets_so_far(path: &Path) -> Vec<(Vec<u8>, u32)> {
    packets(path)
}

/// SIGUSR1 prints the counters and the capture goes on; SIGUSR2 writes out the file (every
/// packet captured so far is in it, whole); SIGHUP ends the capture as SIGINT does, nothing
/// counted lost. tcpdump, where installed, does each the same way.
#[test]
fn usr1_usr2_and_hup_behave_as_tcpdumps() {
    let Some(ns) = Netns::new("signals") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Few enough packets that nothing reaches the file before it is flushed.
    let input = generate(dir.path(), 60, 31);
    let td = tcpdump();
    let programs: Vec<(String, String)> = std::iter::once((SIFT.to_owned(), "sift".to_owned()))
        .chain(td.map(|t| (t.display().to_string(), "tcpdump".to_owned())))
        .collect();
    let mut runs = Vec::new();
    for (program, name) in &programs {
        let out = dir.path().join(format!("{name}.pcap"));
        let r = Running::start(&ns, &[program, "-i", "cap0", "-w", out.to_str().unwrap()]);
        runs.push((name.clone(), out, r));
    }
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    // tcpdump's ring hands blocks over after 1 s; sift's after 100 ms.
    std::thread::sleep(Duration::from_millis(1500));
    for (name, out, r) in &mut runs {
        r.signal("-USR1");
        let line = r.await_line("packets captured, ", 10);
        assert_eq!(
            line,
            format!(
                "{name}: 60 packets captured, 60 packets received by filter, 0 packets dropped \
                 by kernel"
            ),
            "{name}"
        );
        assert!(r.running(), "{name}: SIGUSR1 must not end the capture");
        if name == "sift" {
            // (tcpdump's stdio buffer is 4 KiB: it has written some already.)
            assert!(std::fs::metadata(&*out).unwrap().len() < 100, "sift: nothing written yet");
        }
        r.signal("-USR2");
        std::thread::sleep(Duration::from_millis(300));
        assert!(r.running(), "{name}: SIGUSR2 must not end the capture");
        assert_eq!(packets_so_far(out).len(), 60, "{name}: SIGUSR2 writes every packet out");
    }
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    std::thread::sleep(Duration::from_millis(1500));
    for (name, out, r) in runs {
        r.signal("-HUP");
        let (ok, stderr) = r.wait(30);
        assert!(ok, "{name}: {stderr}");
        assert_eq!(counts(&stderr), Counts { captured: 120, received: 120, dropped: 0 }, "{name}");
        assert_eq!(packets(&out), [packets(&input), packets(&input)].concat(), "{name}");
    }
}

/// Under `nohup` SIGHUP stays ignored, as tcpdump leaves it; with a fan-out group the
/// signals act as on one socket.
#[test]
fn hup_is_left_ignored_under_nohup_and_fanout_obeys_the_signals() {
    let Some(ns) = Netns::new("nohup") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 100, 32);
    let out = dir.path().join("n.pcap");
    let o = out.to_str().unwrap();
    let mut sift = Running::start(&ns, &["nohup", SIFT, "-i", "cap0", "--fanout", "2", "-w", o]);
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    std::thread::sleep(Duration::from_millis(500));
    sift.signal("-HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert!(sift.running(), "SIGHUP is ignored under nohup");
    sift.signal("-USR1");
    let line = sift.await_line("packets captured, ", 10);
    assert!(line.starts_with("sift: 100 packets captured, 100 packets received"), "{line}");
    sift.signal("-USR2");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(packets_so_far(&out).len(), 100);
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    assert_eq!(counts(&stderr).captured, 100, "{stderr}");
    if let Some(td) = tcpdump() {
        let t_out = dir.path().join("t.pcap");
        let t = td.to_str().unwrap();
        let mut r = Running::start(&ns, &["nohup", t, "-i", "cap0", "-w", t_out.to_str().unwrap()]);
        r.signal("-HUP");
        std::thread::sleep(Duration::from_millis(300));
        assert!(r.running(), "tcpdump leaves SIGHUP ignored under nohup");
        let (ok, _) = r.stop();
        assert!(ok);
    }
}

/// tcpdump's live flags: `-y` names the interface's one link type (or chooses `any`'s cooked
/// header), `-I` and unknown `-j` types are refused as tcpdump refuses them, `-U` writes each
/// packet out as it comes.
#[test]
fn y_i_j_and_u_on_a_live_capture() {
    let Some(ns) = Netns::new("flags") else { return };
    let td = tcpdump();
    for (args, says) in [
        (&["-y", "LINUX_SLL"][..], "LINUX_SLL is not one of the DLTs supported by this device"),
        (&["-I"][..], "cap0: That device doesn't support monitor mode"),
        (&["-j", "foo"][..], "invalid time stamp type foo"),
    ] {
        let mut programs = vec![SIFT.to_owned()];
        programs.extend(td.iter().map(|t| t.display().to_string()));
        for program in programs {
            let mut cmd = vec![program.as_str(), "-i", "cap0", "-c", "1"];
            cmd.extend_from_slice(args);
            let o = ns.cmd(&cmd).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{cmd:?}: {err}");
            assert!(err.contains(says), "{cmd:?}: {err}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 20, 33);
    let out = dir.path().join("u.pcap");
    let o = out.to_str().unwrap();
    let sift =
        Running::start(&ns, &[SIFT, "-i", "any", "-y", "LINUX_SLL", "-U", "-w", o, "ip or arp"]);
    assert!(sift.stderr.iter().any(|l| l == "sift: data link type LINUX_SLL"), "{:?}", sift.stderr);
    assert!(ns.inject(&input, &["--topspeed"]).status.success());
    std::thread::sleep(Duration::from_millis(500));
    // Each packet is in the file already (any sees each frame leave inj0 and reach cap0).
    let want = expected(&input, "ip or arp", 262_144).len() * 2;
    assert_eq!(packets_so_far(&out).len(), want, "-U");
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    let mut r = sift_pcap::open(&out).unwrap();
    let _ = r.next_packet();
    assert_eq!(r.interfaces()[0].link_type, sift_pcap::LinkType::LINUX_SLL);
}

/// `sift -i cap0 --split SET -w 'o-%s.pcap' -c N -s S`: each filter's file holds the packets it
/// keeps of the first N captured (`-c` counts packets captured, whatever they matched), cut to
/// S bytes. The set is decided in user space on the frames as written (VLAN tags put back), so
/// each filter keeps what it keeps of the frames as sent.
#[test]
fn split_writes_each_filters_packets_from_a_live_capture() {
    let Some(ns) = Netns::new("split") else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 2000, 21);
    let set = [
        ("web", "tcp port 80 or tcp port 443"),
        ("dns", "udp port 53"),
        ("vlans", "vlan"),
        ("syn", "tcp[tcpflags] & tcp-syn != 0"),
        ("all", ""),
    ];
    let set_path = dir.path().join("set.txt");
    let text: String = set.iter().map(|(n, e)| format!("{n} {e}\n")).collect();
    std::fs::write(&set_path, text).unwrap();
    let pattern = dir.path().join("o-%s.pcap");
    let sift = Running::start(
        &ns,
        &[
            SIFT,
            "-i",
            "cap0",
            "--split",
            set_path.to_str().unwrap(),
            "-w",
            pattern.to_str().unwrap(),
            "-c",
            "1500",
            "-s",
            "200",
        ],
    );
    let o = ns.inject(&input, &["--topspeed"]);
    assert!(o.status.success(), "inject: {}", String::from_utf8_lossy(&o.stderr));
    let (ok, stderr) = sift.wait(30);
    assert!(ok, "{stderr}");
    assert_eq!(counts(&stderr).captured, 1500, "{stderr}");
    let first = dir.path().join("first.pcap");
    {
        // The first 1,500 packets sent, as a file, to compute what each filter keeps.
        let mut r = sift_pcap::open(&input).unwrap();
        let mut w = sift_pcap::PcapWriter::new(
            std::fs::File::create(&first).unwrap(),
            sift_pcap::LinkType::EN10MB,
            0,
            262_144,
            sift_pcap::Precision::Micro,
        )
        .unwrap();
        for _ in 0..1500 {
            let p = r.next_packet().unwrap().unwrap();
            w.write(p.timestamp, p.wire_len, p.data).unwrap();
        }
        w.finish().unwrap();
    }
    let mut matched = 0;
    for (name, expr) in set {
        let got = packets(&dir.path().join(format!("o-{name}.pcap")));
        let want = expected_at_xdp(&first, expr, 200);
        assert_same_packets(&format!("--split {name} `{expr}`"), &got, &want);
        matched += usize::from(!want.is_empty());
    }
    assert_eq!(matched, set.len(), "every filter keeps something");
}
