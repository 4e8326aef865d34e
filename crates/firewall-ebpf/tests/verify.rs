//! Both verifiers accept every program of the committed object: sift's own (as for a
//! privileged loader, as the kernel here loads it) and the kernel's (root; SKIP otherwise).

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
