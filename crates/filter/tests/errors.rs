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
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    let mut n = 0;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("=== ") else { continue };
        let input = lines.next().and_then(|l| l.strip_prefix("input:")).expect("input line");
        let input = input.strip_prefix(' ').unwrap_or(input);
        while lines.peek().is_some_and(|l| !l.starts_with("=== ")) {
            lines.next();
        }
        let src = input.replace("{NL}", "\n");
        out.push_str(&format!("=== {name}\ninput: {input}\n"));
        match parse_with(&src, r) {
            Ok(e) => out.push_str(&format!("UNEXPECTED SUCCESS: {e:?}\n")),
            Err(e) => out.push_str(&e.render(&src)),
        }
        n += 1;
    }
    sift_testkit::golden(path, &out);
    assert!(!out.contains("UNEXPECTED SUCCESS"), "{}: a case parsed", path.display());
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
