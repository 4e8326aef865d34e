//! Any bytes as a rule file: the parser never panics, its errors render, and every rule it
//! accepts prints in the canonical form, which reads back to the same rule and prints the
//! same again (print(parse(x)) is a fixpoint).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_flow::rules::print;
use sift_flow::{parse_rule, parse_rules, testgen};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let ports = testgen::ports();
    let rules = match parse_rules(text, &ports) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.render("fuzz", text);
            return;
        }
    };
    for r in rules {
        let line = print::rule(&r, &ports);
        let again = parse_rule(&line, &ports)
            .unwrap_or_else(|e| panic!("`{line}` does not read back: {e}"));
        assert_eq!(again, r, "`{line}` reads back differently");
        assert_eq!(print::rule(&again, &ports), line);
        let dump = print::dump_line(&r, 1, 2, &ports);
        assert_eq!(parse_rule(&dump, &ports).unwrap(), r, "`{dump}`");
    }
});
