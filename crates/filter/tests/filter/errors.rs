//! Golden diagnostics: every `tests/errors/*.txt` file lists cases (`=== name`, then
//! `input: EXPR`, `{NL}` in EXPR standing for a newline) followed by the exact rendered error.
//! The runner rebuilds each file from its inputs and compares; `BLESS=1` rewrites them.

use sift_filter::{TableResolver, parse_with};
use std::path::Path;

fn resolver() -> TableResolver {
    let mut r = TableResolver::well_known();
    if let Some(dir) = sift_testkit::libpcap_corpus() {
        let text = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")).unwrap();
        r.load_mixed(&text);
    }
    r
}

fn run(path: &Path, r: &TableResolver) -> usize {
    let mut failed = Vec::new();
    let n = sift_testkit::golden_cases(path, |name, input| {
        let src = input.replace("{NL}", "\n");
        match parse_with(&src, r) {
            Ok(e) => {
                failed.push(name.to_string());
                format!("UNEXPECTED SUCCESS: {e:?}\n")
            }
            Err(e) => e.render(&src),
        }
    });
    assert!(failed.is_empty(), "{}: these cases parsed: {failed:?}", path.display());
    n
}

#[test]
fn golden_errors() {
    let r = resolver();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let total: usize = files.iter().map(|f| run(f, &r)).sum();
    assert!(total >= 40, "only {total} error cases");
}
