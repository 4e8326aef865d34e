//! pf in the kernel equals the userspace engine (`Firewall::test`) on traffic through a veth
//! pair, frame by frame: pf's programs attached to the receiving end of a pair in a private
//! network namespace (`sift_kernel::pair`: `pf_xdp` at native XDP, or `pf_tc_in` at TC
//! ingress, for frames arriving; `pf_tc_out` at TC egress for frames leaving), each frame sent
//! the way its direction says and its fate (arrived or dropped, told by the sentinel that
//! follows it) equal to the userspace verdict; the states the programs keep in their map
//! equal the userspace table's (keys, direction, both peers' TCP states, windows and sequence
//! numbers, timeouts, packet and byte counts, rule; not the times, which are on the kernel's
//! clock).
//!
//! Traffic: sift-gen's frames under every policy of the equivalence tests (TCP, DNS, pings,
//! fragments, IPv6 extension headers, VLANs, malformed and truncated frames), and
//! sift-firewall's TCP golden conversations that do not move the clock. Root only: SKIP
//! otherwise, a failure under `SIFT_REQUIRE_ORACLES=1`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use sift_firewall::Verdict;
use sift_firewall::frame::{Frame, ip_of};
use sift_firewall::packet::{Direction, Meta};
use sift_firewall_ebpf::Hook;
use sift_kernel::attach::{self, Attacher, XdpMode};
use sift_kernel::pair::{Fate, RX, VethPair, Way};

mod support;
use support::{Engine, Harness, POLICIES, conversation, direction, generator_lan, tcp_cases};

/// What one run saw.
#[derive(Debug, Default)]
struct Counts {
    frames: usize,
    skipped: usize,
    passed: usize,
    blocked: usize,
    states_max: usize,
}

/// A pin root of the test's own, removed at the end.
struct Root(PathBuf);

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

static NEXT_ROOT: AtomicU32 = AtomicU32::new(0);

/// The rule set on a veth pair, its programs attached to `rx`.
struct OnVeth {
    h: Harness,
    pair: VethPair,
    _root: Root,
    counts: Counts,
}

impl OnVeth {
    /// `None`: SKIP (not root, no namespaces or veth).
    fn new(rules: &str, in_hook: Hook) -> Option<OnVeth> {
        let h = Harness::new(rules, "em0", true)?;
        let pair = sift_testkit::oracle("veth pair in a private namespace", VethPair::new())?;
        sift_sys::bpf::mount_bpffs(std::path::Path::new(attach::BPFFS)).expect("bpffs");
        let root = PathBuf::from(format!(
            "/sys/fs/bpf/sift-pf-veth-{}-{}",
            std::process::id(),
            NEXT_ROOT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let attacher = Attacher::with_root(&root);
        let Engine::Kernel(k) = &h.engine else { unreachable!("a kernel harness") };
        let hook_in = match in_hook {
            Hook::Xdp => attach::Hook::Xdp { mode: XdpMode::Native },
            Hook::TcIngress => attach::Hook::TcIngress,
            Hook::TcEgress => panic!("TC egress is for frames leaving"),
        };
        let fd_in = k.program_fd(in_hook).expect("program");
        let fd_out = k.program_fd(Hook::TcEgress).expect("program");
        pair.run_in(|| {
            attacher.attach(RX, hook_in, fd_in).expect("attach for frames arriving");
            attacher.attach(RX, attach::Hook::TcEgress, fd_out).expect("attach at TC egress");
        })
        .expect("enter the pair's namespace");
        Some(OnVeth { h, pair, _root: Root(root), counts: Counts::default() })
    }

    /// Sends `frame` going `dir` and compares its fate with the userspace verdict.
    fn frame(&mut self, frame: &[u8], dir: Direction, what: &str) {
        let way = match dir {
            Direction::In => Way::In,
            Direction::Out => Way::Out,
        };
        let Some(fate) = self.pair.send(way, frame).unwrap_or_else(|e| panic!("{what}: {e}"))
        else {
            self.counts.skipped += 1;
            return;
        };
        self.counts.frames += 1;
        // The kernel's clock is its own: the userspace engine's stays at 0 (nothing expires
        // in a test's seconds).
        let d = match ip_of(1, frame) {
            Frame::Ip { ip, .. } => Some(self.h.fw.test_bytes(ip, &Meta::new("em0", dir))),
            Frame::Other => None,
        };
        let want = d.as_ref().map_or(Verdict::Pass, |d| d.action);
        let got = match fate {
            Fate::Passed => Verdict::Pass,
            Fate::Dropped => Verdict::Block,
        };
        assert_eq!(got, want, "{what}: verdict on the veth pair (userspace {d:?})");
        match got {
            Verdict::Pass => self.counts.passed += 1,
            Verdict::Block => self.counts.blocked += 1,
        }
    }

    fn check_states(&mut self, what: &str) {
        let (user, kernel) = self.h.states();
        self.counts.states_max = self.counts.states_max.max(user.len());
        assert_eq!(kernel, user, "{what}: states (kernel, userspace)");
    }

    fn summary(&self, name: &str) -> String {
        let c = &self.counts;
        format!(
            "{name}: {} frames ({} not carried), {} passed, {} blocked, up to {} states",
            c.frames, c.skipped, c.passed, c.blocked, c.states_max
        )
    }
}

/// `frames` generated frames under every policy; a summary line per policy.
fn generated(frames: usize, in_hook: Hook) -> Option<Vec<String>> {
    use sift_gen::{Config, Generator};
    let mut summary = Vec::new();
    for (pi, (name, rules)) in POLICIES.iter().enumerate() {
        let mut v = OnVeth::new(rules, in_hook)?;
        let config = Config { malformed: 0.03, truncate: 0.01, ..Config::default() };
        let mut g = Generator::new(0x5eed + pi as u64, config);
        let mut frame = Vec::new();
        for i in 0..frames {
            g.next_frame(&mut frame);
            let dir = direction(&frame, &generator_lan);
            let what = format!("{name}: frame {i}");
            v.frame(&frame, dir, &what);
            if i % 100 == 99 {
                v.check_states(&what);
            }
        }
        v.check_states(name);
        let c = &v.counts;
        assert!(c.passed > 0 && c.blocked + c.states_max > 0, "{name}: {c:?}");
        summary.push(v.summary(name));
    }
    Some(summary)
}

#[test]
fn generated_traffic_through_xdp_and_tc_egress() {
    let Some(s) = generated(2000, Hook::Xdp) else { return };
    println!("{}", s.join("\n"));
}

#[test]
fn generated_traffic_through_tc_ingress_and_egress() {
    let Some(s) = generated(1000, Hook::TcIngress) else { return };
    println!("{}", s.join("\n"));
}

#[test]
fn tcp_conversations_through_xdp_and_tc_egress() {
    let mut total = Counts::default();
    for (path, text) in tcp_cases() {
        // Conversations that move the clock depend on it: the kernel's is its own.
        if text.contains(" t=") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (rules, segments) = conversation(&text);
        let Some(mut v) = OnVeth::new(rules, Hook::Xdp) else { return };
        for s in &segments {
            let what = format!("{name} line {}: {}", s.line, s.text);
            v.frame(&s.frame, s.dir, &what);
            v.check_states(&what);
        }
        total.frames += v.counts.frames;
        total.passed += v.counts.passed;
        total.blocked += v.counts.blocked;
        total.states_max = total.states_max.max(v.counts.states_max);
    }
    println!(
        "{} TCP segments through the veth pair: {} passed, {} blocked, up to {} states",
        total.frames, total.passed, total.blocked, total.states_max
    );
}
