//! Shared test support: rule sets loaded as `sift pf` loads them, the kernel oracle, frames.
#![allow(dead_code)] // Each test uses part of it.

use sift_firewall::{Firewall, Settings};
use sift_pf::host::FixtureHost;
use sift_pf::{Options, pfctl};

/// A rule set read as pfctl reads it, loaded, with its `set` options.
pub fn firewall(rules: &str) -> (Firewall, FixtureHost, Settings) {
    let host = FixtureHost::openbsd(".");
    let opts = Options { verbose: true, ..Options::default() };
    let out = pfctl("pf.conf", rules, &opts, &host);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let mut fw = Firewall::new(&out.ruleset, &host).expect("load");
    let settings = Settings::from_pfctl_verbose(&out.stdout).expect("settings");
    fw.set_settings(settings.clone());
    (fw, host, settings)
}

/// Whether the kernel can load eBPF here (root): SKIP otherwise, a failure under
/// `SIFT_REQUIRE_ORACLES=1`.
pub fn kernel_available() -> bool {
    if !sift_testkit::is_root() {
        return sift_testkit::oracle_missing("kernel bpf(2)", "not root").unwrap_or(false);
    }
    match sift_sys::bpf::map_create(sift_ebpf::MapType::Array as u32, 4, 4, 1, 0) {
        Ok(_) => true,
        Err(e) if sift_sys::bpf::is_unavailable(&e) => {
            sift_testkit::oracle_missing("kernel bpf(2)", e).unwrap_or(false)
        }
        Err(e) => panic!("BPF_MAP_CREATE: {e}"),
    }
}
