//! Filter mistakes as the user sees them: `sift -r FILE EXPR` and `sift compile EXPR` print
//! sift's own located message with a caret and exit with status 1. Golden file
//! `tests/data/errors.txt` (`BLESS=1` rewrites it); in an input, `N*X` stands for `X` repeated
//! `N` times (for the deeply nested case).

use std::path::Path;
use std::process::Command;

/// The input with `N*X` words expanded.
fn expand(input: &str) -> String {
    input
        .split(' ')
        .map(|w| match w.split_once('*') {
            Some((n, x)) if n.parse::<usize>().is_ok() => x.repeat(n.parse().unwrap()),
            _ => w.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().unwrap();
    let code = o.status.code().map_or_else(|| "signal".to_owned(), |c| c.to_string());
    assert!(o.stdout.is_empty(), "{args:?}: nothing on standard output");
    format!("exit {code}\n{}", String::from_utf8_lossy(&o.stderr))
}

#[test]
fn filter_mistakes_are_located_in_sifts_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let capture = root.join("../../samples/http.pcap");
    let capture = capture.to_str().unwrap();
    let n = sift_testkit::golden_cases(&root.join("tests/data/errors.txt"), |_, input| {
        let expr = expand(input);
        // The file's "reading from …" line comes first, as with tcpdump; it names a path.
        let read = run(&["-r", capture, &expr]).replace(capture, "http.pcap");
        format!("$ sift -r http.pcap EXPR\n{read}$ sift compile EXPR\n{}", run(&["compile", &expr]))
    });
    assert!(n >= 3);
}
