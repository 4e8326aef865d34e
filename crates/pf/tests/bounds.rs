//! Hostile inputs end with a clear error, never a panic, a stack overflow or a hang: deep
//! anchors and lists, include and load loops, self-referencing and exploding macros, long
//! tags, megabyte lines, rules that expand to millions of combinations.

use std::time::Instant;

use sift_pf::{Options, host::FixtureHost, pfctl};

fn run(text: &str) -> sift_pf::PfctlOutput {
    let host = FixtureHost::openbsd(std::env::temp_dir());
    let start = Instant::now();
    let out = pfctl("stdin", text, &Options { verbose: true, ..Options::default() }, &host);
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    out
}

fn stderr_has(out: &sift_pf::PfctlOutput, what: &str) {
    assert!(out.stderr.contains(what), "expected {what:?} in:\n{}", out.stderr);
    assert_eq!(out.status, 1);
}

#[test]
fn anchors_nest_at_most_64_deep() {
    let deep = |n: usize| {
        let mut s = String::new();
        for _ in 0..n {
            s.push_str("anchor {\n");
        }
        s.push_str("pass\n");
        for _ in 0..n {
            s.push_str("}\n");
        }
        s
    };
    assert_eq!(run(&deep(63)).status, 0);
    stderr_has(&run(&deep(64)), "pfctl: pfa_anchor: anchors too deep");
    stderr_has(&run(&deep(10_000)), "anchors too deep");
}

#[test]
fn lists_nest_boundedly() {
    let n = 100_000;
    let text = format!("pass from {}1.2.3.4{}\n", "{".repeat(n), "}".repeat(n));
    stderr_has(&run(&text), "lists nested too deeply");
    let text = format!("table <t> {}1.2.3.4{}\n", "{".repeat(n), "}".repeat(n));
    stderr_has(&run(&text), "lists nested too deeply");
}

#[test]
fn include_loops_end() {
    let dir = std::env::temp_dir().join(format!("sift-pf-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("loop.conf");
    std::fs::write(&path, format!("include \"{}\"\npass\n", path.display())).unwrap();
    let out = run(&format!("include \"{}\"\n", path.display()));
    stderr_has(&out, "failed to include file");
    let load = dir.join("load.conf");
    std::fs::write(&load, format!("anchor x\nload anchor x from \"{}\"\n", load.display()))
        .unwrap();
    let out = run(&format!("anchor x\nload anchor x from \"{}\"\n", load.display()));
    stderr_has(&out, "anchors nested too deeply");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn macros_cannot_recurse_or_explode() {
    stderr_has(&run("a = $a\n"), "stdin:1: macro 'a' not defined");
    let mut text = String::from("a = \"x y\"\n");
    for _ in 0..40 {
        text.push_str("a = $a $a\n");
    }
    stderr_has(&run(&text), "macro 'a' too long");
}

#[test]
fn tags_hold_63_characters() {
    let ok = format!("pass tag {}\n", "t".repeat(63));
    assert_eq!(run(&ok).status, 0);
    let long = format!("pass tag {}\n", "t".repeat(64));
    stderr_has(&run(&long), "stdin:1: tag too long, max 63 chars");
}

#[test]
fn megabyte_lines() {
    let word = format!("pass from {}\n", "a".repeat(1 << 20));
    stderr_has(&run(&word), "stdin:1: string too long");
    let quoted = format!("pass label \"{}\"\n", "a".repeat(1 << 20));
    stderr_has(&run(&quoted), "stdin:1: string too long");
    let mut hosts = String::from("block from {");
    for i in 0..60_000u32 {
        hosts.push_str(&format!(" 10.{}.{}.1", i / 256, i % 256));
    }
    hosts.push_str(" }\n");
    let out = run(&hosts);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 60_000);
}

#[test]
fn expansion_is_bounded() {
    let list: Vec<String> = (0..1000).map(|i| format!("10.0.{}.{}", i / 256, i % 256)).collect();
    let l = list.join(" ");
    let text = format!("pass proto tcp from {{ {l} }} to {{ {l} }} port {{ 1 2 3 }}\n");
    stderr_has(&run(&text), "rule expands to more than 1000000 rules");
}

#[test]
fn endless_files_are_refused() {
    let out = run("table <t> file \"/dev/zero\"\n");
    stderr_has(&out, "stdin:1: cannot load \"/dev/zero\": File too large");
    stderr_has(&run("include \"/dev/zero\"\n"), "stdin:1: failed to include file /dev/zero");
}

#[test]
fn non_ascii_text_is_an_error_not_a_panic() {
    let key = format!("0x{}11", "€".repeat(10));
    let out = run(&format!("match out on lo0 nat-to 10.0.0.1 source-hash \"{key}\"\n"));
    stderr_has(&out, "stdin:1: invalid hex key");
    stderr_has(&run("pass from é\n"), "stdin:1: syntax error");
    let out = run("pass label \"é ü\"\n");
    assert_eq!(out.stdout, "pass all flags S/SA label \"é ü\"\n");
}

/// A macro's value that reads as the start of a number but is followed (after the value ends)
/// by a character that cannot end one: the digits are given back into the value, not into the
/// text before `$name` (which once re-read the reference forever). Found by the `pf_parse`
/// fuzz target.
#[test]
fn digits_given_back_after_a_macro_stay_in_it() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let hang = "_=00000002000000245000321200!23245l=$_|";
        let port = "n = 123\npass in from any port $n|\n";
        tx.send((run(hang), run(port))).unwrap();
    });
    let (hang, port) = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("a hang");
    stderr_has(&hang, "stdin:1: syntax error");
    // pfctl reads `123|` as one string after the number fails to end.
    stderr_has(&port, "unknown port 123|");
}
