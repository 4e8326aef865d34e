//! Capture over AF_XDP end to end (`sift -i IFACE --xdp`), in private network namespaces: the
//! filter runs at the interface's XDP hook and only matching frames reach sift.
//!
//! Each test injects generated packets into `inj0` with `sift inject` and captures on `cap0`
//! (see `live_support`; MTU 3,000: native XDP on veth refuses larger ones, and sift-gen's
//! frames stay below it). The expected packets are computed offline with sift's interpreter on
//! the frames as sent: XDP sees a frame before the kernel moves its VLAN tag into metadata.
//! Counters are tcpdump's and exact: received by filter (the redirects the program made) =
//! captured + dropped by kernel.
//!
//! These tests need root: without it they skip, and fail under `SIFT_REQUIRE_ORACLES=1` as CI
//! runs them.

mod live_support;

use std::time::Duration;

use live_support::*;

#[test]
fn xdp_capture_writes_exactly_the_matching_frames_with_exact_counters() {
    let Some(ns) = Netns::with_mtu("xdp", 3000) else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 3000, 21);
    let filter = "tcp[tcpflags] & tcp-syn != 0 or udp port 53 or icmp or vlan";
    let want = expected_at_xdp(&input, filter, 262_144);
    assert!(want.len() > 50 && want.len() < 2500, "a filter that matches some: {}", want.len());

    let out = dir.path().join("xdp.pcap");
    let sift =
        Running::start(&ns, &[SIFT, "-i", "cap0", "--xdp", "-w", out.to_str().unwrap(), filter]);
    assert!(sift.stderr.iter().any(|l| l.contains("AF_XDP")), "{:?}", sift.stderr);
    let o = ns.inject(&input, &["--topspeed"]);
    assert!(o.status.success(), "inject: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sent 3000 packets"));
    std::thread::sleep(Duration::from_millis(200));
    let (ok, stderr) = sift.stop();
    assert!(ok, "{stderr}");
    let n = want.len() as u64;
    assert_eq!(counts(&stderr), Counts { captured: n, received: n, dropped: 0 }, "{stderr}");
    assert_same_packets("sift -i --xdp", &packets(&out), &want);
}

/// Without `--xdp-pass` the frames that do not match end at XDP: an `AF_PACKET` capture on the
/// same interface sees none of them. With it, it sees exactly those (the matching ones went to
/// the AF_XDP socket).
#[test]
fn xdp_pass_leaves_the_rest_to_the_stack_and_c_stops_at_n() {
    let Some(ns) = Netns::with_mtu("xdppass", 3000) else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), 1000, 22);
    let filter = "udp";
    let matching = expected_at_xdp(&input, filter, 262_144);
    let rest = expected_at_xdp(&input, &format!("not ({filter})"), 262_144);
    assert!(matching.len() > 20 && rest.len() > 20, "{} {}", matching.len(), rest.len());

    for pass in [false, true] {
        let xdp_out = dir.path().join(format!("xdp-{pass}.pcap"));
        let stack_out = dir.path().join(format!("stack-{pass}.pcap"));
        // The AF_PACKET capture sees what XDP passed (tags restored, as libpcap does).
        let stack = Running::start(&ns, &[SIFT, "-i", "cap0", "-w", stack_out.to_str().unwrap()]);
        let mut args = vec![SIFT, "-i", "cap0", "--xdp", "-w", xdp_out.to_str().unwrap()];
        if pass {
            args.push("--xdp-pass");
        }
        args.push(filter);
        let sift = Running::start(&ns, &args);
        let o = ns.inject(&input, &["--topspeed"]);
        assert!(o.status.success(), "inject: {}", String::from_utf8_lossy(&o.stderr));
        std::thread::sleep(Duration::from_millis(200));
        let (ok, stderr) = sift.stop();
        assert!(ok, "{stderr}");
        assert_same_packets("--xdp", &packets(&xdp_out), &matching);
        let (ok, stderr) = stack.stop();
        assert!(ok, "{stderr}");
        let seen = packets(&stack_out);
        if pass {
            assert_same_packets("the stack with --xdp-pass", &seen, &rest);
        } else {
            assert!(seen.is_empty(), "the stack saw {} frames without --xdp-pass", seen.len());
        }
    }

    // -c: exactly N, and the capture ends by itself.
    let out = dir.path().join("c.pcap");
    let sift = Running::start(
        &ns,
        &[SIFT, "-i", "cap0", "--xdp", "-c", "17", "-s", "60", "-w", out.to_str().unwrap(), "ip"],
    );
    let o = ns.inject(&input, &["--topspeed"]);
    assert!(o.status.success());
    let (ok, stderr) = sift.wait(30);
    assert!(ok, "{stderr}");
    let got = packets(&out);
    let want: Vec<_> = expected_at_xdp(&input, "ip", 60).into_iter().take(17).collect();
    assert_same_packets("-c 17 -s 60", &got, &want);
}

/// What `--xdp` cannot do is refused before anything is attached.
#[test]
fn xdp_refuses_what_it_cannot_do() {
    let Some(ns) = Netns::with_mtu("xdpno", 3000) else { return };
    for (args, what) in [
        (&["-Q", "out"][..], "only the frames an interface receives"),
        (&["--fanout", "2"][..], "--fanout"),
        (&["-y", "LINUX_SLL"][..], "not one of the DLTs"),
        (&["ip6 protochain"][..], "expected a protocol"),
    ] {
        let mut cmd = ns.cmd(&[SIFT, "-i", "cap0", "--xdp"]);
        cmd.args(args);
        let o = cmd.output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(what), "{args:?}: {err}");
    }
    for (args, what) in [
        (&[SIFT, "-i", "cap0", "--xdp-pass"][..], "go with --xdp"),
        (&[SIFT, "-r", "/dev/null", "--xdp"][..], "give an interface"),
    ] {
        let o = ns.cmd(args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(what), "{args:?}: {err}");
    }
    let o = ns.cmd(&[SIFT, "-i", "nosuch0", "--xdp"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch0"));
}
