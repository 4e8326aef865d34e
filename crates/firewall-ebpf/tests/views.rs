//! The maps read back as pf shows them: `pfctl -ss` (sift-firewall's own lines, from states
//! converted to its `State`), `pfctl -vsr` (rules with evaluations, packets, bytes and states;
//! evaluations as pf counts them without skip steps: `Firewall::decide_naive`'s), `pfctl -si`,
//! and the pflog records as a pflog capture that tcpdump reads (SKIP without tcpdump). Golden
//! text in `tests/views/views.txt` (`BLESS=1` rewrites it).

use std::path::Path;

use sift_firewall::packet::{Direction, Meta, Packet};
use sift_firewall::{Firewall, RuleId};
use sift_firewall_ebpf::read;

mod support;
use support::{Harness, ethernet, tcp_packet};

const RULES: &str = "block in log all\n\
                     pass out proto tcp to port 80 flags S/SA keep state\n\
                     pass out log proto udp to port 53 keep state\n\
                     pass in quick inet proto icmp all icmp-type echoreq no state\n";

/// The scenario's frames: a TCP connection out, a DNS query and its answer, pings in, a
/// connection in that is blocked.
fn frames() -> Vec<(Vec<u8>, Direction)> {
    let c = [10, 0, 0, 1];
    let s = [192, 0, 2, 9];
    let udp = |src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16| {
        let mut p = vec![0x45, 0, 0, 36, 0, 1, 0, 0, 64, 17, 0, 0];
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(&sp.to_be_bytes());
        p.extend_from_slice(&dp.to_be_bytes());
        p.extend_from_slice(&[0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
        p
    };
    let echo = {
        let mut p = vec![0x45, 0, 0, 28, 0, 1, 0, 0, 64, 1, 0, 0];
        p.extend_from_slice(&s);
        p.extend_from_slice(&c);
        p.extend_from_slice(&[8, 0, 0, 0, 0, 1, 0, 1]);
        p
    };
    use Direction::{In, Out};
    vec![
        (tcp_packet((c, 40000), (s, 80), 0x02, (1000, 0, 65535), Some(7), 0), Out),
        (tcp_packet((s, 80), (c, 40000), 0x12, (5000, 1001, 65535), Some(7), 0), In),
        (tcp_packet((c, 40000), (s, 80), 0x10, (1001, 5001, 512), None, 0), Out),
        (tcp_packet((c, 40000), (s, 80), 0x18, (1001, 5001, 512), None, 120), Out),
        (udp(c, s, 5353, 53), Out),
        (udp(s, c, 53, 5353), In),
        (echo.clone(), In),
        (echo, In),
        (tcp_packet((s, 4000), (c, 22), 0x02, (7, 0, 65535), None, 0), In),
    ]
    .into_iter()
    .map(|(ip, d)| (ethernet(&ip), d))
    .collect()
}

/// Runs the scenario; returns the harness and pf's evaluation counts without skip steps.
fn run(kernel: bool) -> Option<(Harness, Vec<u64>)> {
    let mut h = Harness::new(RULES, "em0", kernel)?;
    let (mut naive, _, _) = support::firewall(RULES);
    for (i, (frame, dir)) in frames().iter().enumerate() {
        let d = h.packet(frame, *dir, 100 + i as u64, 0, &format!("frame {i}"));
        if let Some(d) = d
            && !d.from_state
        {
            let pkt = Packet::parse(&frame[14..]).unwrap();
            naive.decide_naive(&pkt, &Meta::new("em0", *dir));
        }
    }
    h.check_states("views");
    h.check_counters("views");
    let evals = evaluations(&naive, h.rules.rules.len());
    Some((h, evals))
}

fn evaluations(fw: &Firewall, n: usize) -> Vec<u64> {
    (0..n as u32).map(|nr| fw.rule_counters(RuleId { ruleset: 0, nr }).map_or(0, |c| c.0)).collect()
}

/// `pfctl -ss`, `pfctl -vsr` and `pfctl -si` of the program's maps.
fn views(h: &Harness) -> String {
    let maps = match &h.engine {
        support::Engine::Vm(v) => &**v as &dyn read::MapsRead,
        support::Engine::Kernel(k) => k as &dyn read::MapsRead,
    };
    let states = read::states(maps).unwrap();
    let (rules, default) = read::rule_counters(maps, h.rules.rules.len()).unwrap();
    let counters = read::counters(maps).unwrap();
    format!(
        "# pfctl -ss\n{}# pfctl -vsr\n{}# pfctl -si\n{}",
        h.rules.pfctl_states(&states, h.now),
        h.rules.pfctl_rules(&h.fw, &h.host, &rules, &default),
        read::pfctl_info(&counters, states.len())
    )
}

#[test]
fn views_of_the_vm_maps() {
    let (mut h, evals) = run(false).expect("the VM");
    // The states print as sift-firewall prints its own.
    let mut want: Vec<String> = h.fw.states().iter().map(|(_, s)| s.pfctl_line()).collect();
    want.sort();
    let text = views(&h);
    let mut got: Vec<String> =
        text.split("# pfctl -vsr").next().unwrap().lines().skip(1).map(str::to_string).collect();
    got.sort();
    assert_eq!(got, want);
    // Evaluations are pf's without skip steps.
    for (i, e) in evals.iter().enumerate() {
        assert!(text.contains(&format!("[ Evaluations: {e:<8}")), "rule {i}: {e} in\n{text}");
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/views/views.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &text).unwrap();
    } else {
        let want = std::fs::read_to_string(&golden).expect("tests/views/views.txt (BLESS=1)");
        assert_eq!(text, want, "BLESS=1 rewrites tests/views/views.txt");
    }
    pflog_capture(&mut h);
}

#[test]
fn views_of_the_kernel_maps() {
    let Some((mut h, evals)) = run(true) else { return };
    let text = views(&h);
    let mut want: Vec<String> = h.fw.states().iter().map(|(_, s)| s.pfctl_line()).collect();
    want.sort();
    let mut got: Vec<String> =
        text.split("# pfctl -vsr").next().unwrap().lines().skip(1).map(str::to_string).collect();
    got.sort();
    assert_eq!(got, want);
    for e in &evals {
        assert!(text.contains(&format!("[ Evaluations: {e:<8}")), "{e} in\n{text}");
    }
    pflog_capture(&mut h);
}

/// The pflog records as a capture: sift-pcap reads them back as link type PFLOG, and tcpdump
/// prints pf's rule, action, direction and interface for each.
fn pflog_capture(h: &mut Harness) {
    let recs = match &mut h.engine {
        support::Engine::Vm(vm) => vm.drain_log(),
        support::Engine::Kernel(k) => k.drain_log().unwrap(),
    };
    assert_eq!(
        recs.len(),
        2,
        "the DNS query (log; its answer passes by the state) and the blocked SYN"
    );
    let bytes = h.rules.pflog_capture(&recs, &|_| String::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pflog.pcap");
    std::fs::write(&path, &bytes).unwrap();
    let mut r = sift_pcap::open(&path).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet().unwrap() {
        assert_eq!(p.link_type, sift_pcap::LinkType::PFLOG);
        n += 1;
    }
    assert_eq!(n, 2);
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let out = std::process::Command::new(tcpdump)
        .args(["-e", "-n", "-r"])
        .arg(&path)
        .output()
        .expect("run tcpdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("rule 2/0(match): pass out on em0"), "{text}");
    assert!(lines[0].contains("10.0.0.1.5353 > 192.0.2.9.53"), "{text}");
    assert!(lines[1].contains("rule 0/0(match): block in on em0"), "{text}");
    assert!(lines[1].contains("192.0.2.9.4000 > 10.0.0.1.22"), "{text}");
}
