//! Any bytes as a pf.conf: the parser never panics or hangs, and a rule set it accepts prints
//! in pfctl's canonical form that reads back to the same print (parse → print → parse).
//!
//! pfctl prints macro definitions, labels, route labels and anchor names as they are,
//! unescaped: `b = "x" y"` or a label holding a `"` does not read back, in pfctl as in sift. So
//! the macro lines (which the printed rules no longer use) are left out of the second reading,
//! and rule sets printing a quote inside quotes (a line with an odd number of `"`) or a
//! backslash are not compared; nor are those whose tags (printed without quotes) would not
//! read back as one word, that hold an empty unnamed anchor, or a pool of `any` (a binat-to
//! from any mirrors into `rdr-to any`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_pf::addr::AddrKind;
use sift_pf::{Options, host::FixtureHost, pfctl};

/// A macro definition as pfctl prints it with `-v` (`NAME = "VALUE"`). pfctl refuses
/// whitespace in a name only after its first character, so a quoted name may be empty (`'' =
/// x`) or start with a space or a control character (`' A\x04A' = x`): pfctl prints those and
/// then cannot read them.
fn is_macro_line(l: &str) -> bool {
    l.split_once(" = \"").is_some_and(|(name, _)| !name.chars().skip(1).any(char::is_whitespace))
        && l.ends_with('"')
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let mut host = FixtureHost::openbsd("/nonexistent");
    host.files = false;
    let opts = Options { verbose: true, ..Options::default() };
    let first = pfctl("stdin", src, &opts, &host);
    if first.status != 0 {
        return;
    }
    let rules: String =
        first.stdout.lines().filter(|l| !is_macro_line(l)).map(|l| format!("{l}\n")).collect();
    if rules.lines().any(|l| l.matches('"').count() % 2 == 1 || l.contains('\\')) {
        return;
    }
    let word = |t: &str| {
        t.is_empty()
            || (t.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && !sift_pf::lex::is_keyword(t))
    };
    let raw = |t: &str| t.contains('"') || t.contains('\\');
    let rtlabel = |a: &AddrKind| matches!(a, AddrKind::RtLabel(l) if raw(l));
    if first.ruleset.anchors.iter().flat_map(|a| &a.rules).any(|r| {
        !word(&r.tag)
            || !word(&r.match_tag)
            || raw(&r.label)
            || r.os.as_deref().is_some_and(raw)
            || r.anchor.as_ref().is_some_and(|c| {
                // pfctl prints an empty unnamed `{ }` anchor as a bare `anchor`, which it
                // then refuses ("anchors without explicit rules must specify a name").
                raw(&c.name)
                    || (c.name.starts_with('_')
                        && first.ruleset.anchors.get(c.ruleset).is_none_or(|a| a.rules.is_empty()))
            })
            // binat-to from `any` mirrors into `rdr-to any`, which pfctl prints but cannot read.
            || r.rdr.addr.is_any()
            || r.nat.addr.is_any()
            || rtlabel(&r.src.addr)
            || rtlabel(&r.dst.addr)
    }) {
        return;
    }
    let second = pfctl("stdin", &rules, &opts, &host);
    assert_eq!(second.status, 0, "the canonical form must parse:\n{rules}\n{}", second.stderr);
    assert_eq!(second.stdout, rules, "the canonical form must be a fixpoint");
});
