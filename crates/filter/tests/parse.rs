//! Parse goldens: every `tests/parse/*.txt` case (`=== name`, `input: EXPR`) is followed by
//! `output:` and the canonical print of its AST, which must itself parse back to the same
//! print. `BLESS=1` rewrites the files.

use std::path::Path;

fn run(path: &Path) -> usize {
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
        out.push_str(&format!("=== {name}\ninput: {input}\n"));
        match sift_filter::parse(input) {
            Ok(e) => {
                let printed = e.map(|e| e.to_string()).unwrap_or_default();
                let again = sift_filter::parse(&printed)
                    .unwrap_or_else(|err| panic!("{name}: canonical form does not parse: {err}"))
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                assert_eq!(again, printed, "{name}: print is not a fixed point");
                out.push_str(&format!("output: {printed}\n"));
            }
            Err(e) => out.push_str(&format!("UNEXPECTED ERROR\n{}", e.render(input))),
        }
        n += 1;
    }
    sift_testkit::golden(path, &out);
    assert!(!out.contains("UNEXPECTED ERROR"), "{}: a case failed to parse", path.display());
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
