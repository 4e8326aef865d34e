//! Any bytes as a pf.conf: the parser never panics or hangs, and a rule set it accepts prints
//! in pfctl's canonical form that reads back to the same print (parse → print → parse).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_pf::{Options, host::FixtureHost, pfctl};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let host = FixtureHost::openbsd("/nonexistent");
    let opts = Options { verbose: true, ..Options::default() };
    let first = pfctl("stdin", src, &opts, &host);
    if first.status != 0 {
        return;
    }
    let second = pfctl("stdin", &first.stdout, &opts, &host);
    assert_eq!(second.status, 0, "the canonical form must parse:\n{}\n{}", first.stdout, second.stderr);
    assert_eq!(second.stdout, first.stdout, "the canonical form must be a fixpoint");
});
