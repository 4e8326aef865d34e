//! Loading: both verifiers accept every program of the committed object (sift's own, as for a
//! privileged loader, as the kernel here loads it; and the kernel's: root, SKIP otherwise);
//! what the program cannot do is refused with the rule named; a rule set replaced in the
//! kernel keeps its states.

use sift_firewall_ebpf::kernel::KernelPf;
use sift_firewall_ebpf::{RuleSet, object};

mod support;

#[test]
fn sift_verifier_accepts_every_program() {
    use sift_ebpf_verifier::{Options, verify_with};
    let object = object().unwrap();
    assert_eq!(object.programs.len(), 3);
    for p in &object.programs {
        let report = verify_with(&p.insns, p.prog_type, &object.maps, Options { privileged: true })
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        println!(
            "{}: {} slots, {} instructions processed, {} states",
            p.name,
            p.insns.len(),
            report.processed,
            report.total_states
        );
    }
}

#[test]
fn kernel_accepts_every_program() {
    if !support::kernel_available() {
        return;
    }
    let (fw, host, settings) = support::firewall("pass all\n");
    let rules = RuleSet::compile(&fw, &host, "em0", &settings).unwrap();
    let pf = KernelPf::load(&rules).unwrap_or_else(|e| panic!("{e}"));
    for p in pf.object().programs() {
        println!("{}: {} slots", p.name, p.slots);
    }
    assert_eq!(pf.object().programs().len(), 3);
}

#[test]
fn what_cannot_run_in_the_kernel_is_refused_naming_the_rule() {
    use sift_firewall_ebpf::Error;
    for (rules, nr, text, what) in [
        (
            "pass in all\npass out on em0 from any to any nat-to 192.0.2.1\n",
            1,
            "nat-to 192.0.2.1",
            "nat-to / binat-to",
        ),
        ("block return in all\n", 0, "block return in all", "block return"),
        ("pass in proto tcp all user 1000\n", 0, "user = 1000", "user and group tests"),
        ("pass all\nmatch in all tag x\n", 1, "match in all tag x", "a `match` rule"),
    ] {
        let (fw, host, settings) = support::firewall(rules);
        match RuleSet::compile(&fw, &host, "em0", &settings) {
            Err(Error::Unsupported { nr: n, text: t, what: w }) => {
                assert_eq!(n, nr, "{rules}");
                assert!(t.contains(text), "{rules}: {t}");
                assert_eq!(w, what, "{rules}");
            }
            other => panic!("{rules}: {other:?}"),
        }
    }
}

#[test]
fn a_replaced_rule_set_keeps_its_states() {
    use sift_firewall::Verdict;
    use sift_firewall_ebpf::{Hook, read};
    if !support::kernel_available() {
        return;
    }
    let load = |rules: &str| {
        let (fw, host, settings) = support::firewall(rules);
        RuleSet::compile(&fw, &host, "em0", &settings).unwrap()
    };
    let pf = KernelPf::load(&load("pass out all keep state\n")).unwrap();
    let c = ([10, 0, 0, 1], 40000);
    let s = ([192, 0, 2, 9], 80);
    let syn = support::ethernet(&support::tcp_packet(c, s, 0x02, (1000, 0, 65535), None, 0));
    let synack = support::ethernet(&support::tcp_packet(s, c, 0x12, (5000, 1001, 65535), None, 0));
    assert_eq!(pf.run(Hook::TcEgress, &syn).unwrap(), Some(Verdict::Pass));
    // A rule set that blocks everything coming in: the reply still passes by its state.
    let pf = KernelPf::replace(&load("block in all\npass out all keep state\n"), pf).unwrap();
    assert_eq!(pf.run(Hook::Xdp, &synack).unwrap(), Some(Verdict::Pass));
    let states = read::states(&pf).unwrap();
    assert_eq!(states.len(), 1);
    assert_eq!(read::counters(&pf).unwrap().inserts, 1);
    // Without the old state, the same reply is blocked.
    let fresh = KernelPf::load(&load("block in all\npass out all keep state\n")).unwrap();
    assert_eq!(fresh.run(Hook::Xdp, &synack).unwrap(), Some(Verdict::Block));
    // Flushed, the replaced rule set's table is empty too.
    assert_eq!(pf.flush_states().unwrap(), 1);
    assert_eq!(pf.run(Hook::Xdp, &synack).unwrap(), Some(Verdict::Block));
}
