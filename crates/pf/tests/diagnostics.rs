//! sift's rendering of pf.conf mistakes (`sift pf check`): for each kind of mistake, the
//! message pfctl gives, the line, a caret under the offending token and, for syntax errors,
//! what was expected. Cases are in `tests/data/diagnostics.txt` (`\n` in an input is a line
//! break); `BLESS=1` rewrites the expected renderings.

use std::path::Path;

use sift_pf::{Options, host::FixtureHost, pfctl};

#[test]
fn rendered_mistakes() {
    let host = FixtureHost::openbsd("/nonexistent");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/diagnostics.txt");
    let n = sift_testkit::golden_cases(&path, |_, input| {
        let text = format!("{}\n", input.replace("\\n", "\n"));
        let out = pfctl("stdin", &text, &Options::default(), &host);
        assert_eq!(out.status, 1, "{input} must be rejected");
        out.render_errors()
    });
    assert!(n >= 30, "only {n} kinds of mistake");
}
