//! Any bytes as an Ethernet frame through the pf program in sift's VM (a fixed rule set with
//! a table, quick rules, block and pass, keep state, no state, sloppy, flags, log), going in
//! (XDP or TC ingress) or out (TC egress) at a clock the input moves: never a VM error, and
//! the verdict is the userspace engine's (`Firewall::test` on the same frames, states kept by
//! both across inputs and flushed together every few hundred states).
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use sift_firewall::frame::{Frame, ip_of};
use sift_firewall::packet::{Direction, Meta};
use sift_firewall::{Firewall, Settings, Verdict};
use sift_firewall_ebpf::vm::VmPf;
use sift_firewall_ebpf::{Hook, RuleSet};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

const RULES: &str = "\
set limit states 4096
table <lan> { 10.0.0.0/8, !10.1.0.0/16, 2001:db8::/32 }
block log all
block in quick from 192.0.2.0/28
pass out all keep state
pass in proto tcp from any to <lan> port { 22, 80 } flags S/SA keep state
pass in proto udp from any port >= 1024 to <lan> port 53 keep state (sloppy)
pass in inet proto icmp all icmp-type echoreq no state
pass in inet6 proto ipv6-icmp all
pass in log (all) proto tcp from 198.51.100.0/24 to any port 443 keep state (sloppy)
";

/// Flush both tables when the userspace one holds this many states.
const FLUSH_AT: usize = 512;

struct Engines {
    fw: Firewall,
    vm: VmPf,
    now: u64,
}

fn engines() -> Engines {
    let host = FixtureHost::openbsd("/nonexistent");
    let out = pfctl("pf.conf", RULES, &Options { verbose: true, ..Options::default() }, &host);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let mut fw = Firewall::new(&out.ruleset, &host).expect("firewall");
    let settings = Settings::from_pfctl_verbose(&out.stdout).expect("settings");
    fw.set_settings(settings.clone());
    let rules = RuleSet::compile(&fw, &host, "em0", &settings).expect("rule set");
    let vm = VmPf::new(&rules, 1).expect("vm");
    Engines { fw, vm, now: 0 }
}

thread_local! {
    /// The engines, kept across inputs (the VM is not `Send`; libFuzzer runs one thread).
    static ENGINES: RefCell<Engines> = RefCell::new(engines());
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, frame)) = data.split_first() else { return };
    ENGINES.with_borrow_mut(|e| run(e, control, frame));
});

fn run(e: &mut Engines, control: u8, frame: &[u8]) {
    e.now += u64::from(control >> 3);
    let (hook, dir) = match control & 3 {
        0 => (Hook::Xdp, Direction::In),
        1 => (Hook::TcIngress, Direction::In),
        _ => (Hook::TcEgress, Direction::Out),
    };
    let mut f = frame.to_vec();
    let got = e.vm.run(hook, &mut f, e.now * 1_000_000_000 + u64::from(control & 4) * 1000);
    let got = got.unwrap_or_else(|err| panic!("VM error: {err}"));
    let want = match ip_of(1, frame) {
        Frame::Ip { ip, .. } => {
            let mut meta = Meta::new("em0", dir);
            meta.now = e.now;
            e.fw.test_bytes(ip, &meta).action
        }
        Frame::Other => Verdict::Pass,
    };
    assert_eq!(got, want, "verdict of the program and of the userspace engine");
    if e.fw.states().len() >= FLUSH_AT {
        e.fw.states_mut().clear();
        e.vm.flush_states().expect("flush");
    }
    e.vm.drain_log();
}
