//! Parse goldens: every `tests/parse/*.txt` case (`=== name`, `input: EXPR`) is followed by
//! `output:` and the canonical print of its AST, which must itself parse back to the same
//! print. `BLESS=1` rewrites the files.

use std::path::Path;

fn run(path: &Path) -> usize {
    let mut failed = Vec::new();
    let n = sift_testkit::golden_cases(path, |name, input| match sift_filter::parse(input) {
        Ok(e) => {
            let printed = e.map(|e| e.to_string()).unwrap_or_default();
            let again = sift_filter::parse(&printed)
                .unwrap_or_else(|err| panic!("{name}: canonical form does not parse: {err}"))
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert_eq!(again, printed, "{name}: print is not a fixed point");
            format!("output: {printed}\n")
        }
        Err(e) => {
            failed.push(name.to_string());
            format!("UNEXPECTED ERROR\n{}", e.render(input))
        }
    });
    assert!(failed.is_empty(), "{}: these cases failed to parse: {failed:?}", path.display());
    n
}

#[test]
fn golden_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parse");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let total: usize = files.iter().map(|f| run(f)).sum();
    assert!(total > 0);
}
