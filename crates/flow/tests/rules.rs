//! Rule text: parsing, the canonical printer and the errors, as golden files.
//!
//! `tests/data/rules.txt`: each case's input (`\n` is a line break) and the canonical lines
//! it prints, each of which must read back to the same rule. `tests/data/errors.txt`: inputs
//! that must be refused and their rendered errors. `tests/data/switch.flows`: a rule file
//! whose `ovs-ofctl dump-flows` lines are in `switch.flows.dump`. `BLESS=1` rewrites the
//! expectations.

use std::path::{Path, PathBuf};

use sift_flow::rules::print;
use sift_flow::{PortMap, parse_rule, parse_rules};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn ports() -> PortMap {
    let mut p = PortMap::new();
    for (name, no) in [("eth1", 1), ("eth2", 2), ("veth0", 3), ("veth1", 4)] {
        p.add(name, no).unwrap();
    }
    p
}

#[test]
fn canonical_forms_read_back() {
    let ports = ports();
    let n = sift_testkit::golden_cases(&data("rules.txt"), |name, input| {
        let text = input.replace("\\n", "\n");
        let rules = parse_rules(&text, &ports)
            .unwrap_or_else(|e| panic!("{name}: {}", e.render("rules", &text)));
        let mut out = String::new();
        for r in &rules {
            let line = print::rule(r, &ports);
            let again = parse_rule(&line, &ports)
                .unwrap_or_else(|e| panic!("{name}: `{line}` does not read back: {e}"));
            assert_eq!(again, *r, "{name}: `{line}` reads back differently");
            out.push_str(&line);
            out.push('\n');
        }
        out
    });
    assert!(n >= 40, "only {n} cases");
}

#[test]
fn mistakes_are_located() {
    let ports = ports();
    let n = sift_testkit::golden_cases(&data("errors.txt"), |name, input| {
        let text = input.replace("\\n", "\n");
        match parse_rules(&text, &ports) {
            Ok(r) => panic!("{name}: accepted as {r:?}"),
            Err(e) => e.render("rules", &text),
        }
    });
    assert!(n >= 40, "only {n} cases");
}

#[test]
fn dump_of_a_rule_file() {
    let ports = ports();
    let text = std::fs::read_to_string(data("switch.flows")).unwrap();
    let rules = parse_rules(&text, &ports)
        .unwrap_or_else(|e| panic!("{}", e.render("switch.flows", &text)));
    let table = sift_flow::FlowTable::with_rules(rules);
    let dump = table.dump(&ports);
    sift_testkit::golden(&data("switch.flows.dump"), &dump);
    // The dump reads back to the same table.
    let again = sift_flow::FlowTable::with_rules(parse_rules(&dump, &ports).unwrap());
    assert_eq!(again.dump(&ports), dump);
}

#[test]
fn positions_in_long_and_multi_line_texts() {
    let ports = ports();
    // One rule over two lines (parse_rule takes the whole text): line 2, column 1.
    let e = parse_rule("ip\ntp_dst=1 actions=drop", &ports).unwrap_err();
    assert_eq!((e.line, e.column), (2, 1));
    assert_eq!(
        e.render("r", "ip\ntp_dst=1 actions=drop"),
        "error: r:2:1: `tp_dst` needs `tcp`, `udp` or `sctp` (or `tcp6`, `udp6`, `sctp6`) in the match\n  \
         tp_dst=1 actions=drop\n  ^^^^^^^^\n  help: OVS refuses a field whose protocol the match does not fix (OFPBMC_BAD_PREREQ)\n"
    );
    // Every line wrong: each error is located and rendered from its own line (a file of many
    // mistakes costs each its line, not the whole file).
    let text = "ip,tp_dst=1 actions=drop\n".repeat(50_000);
    let errors = parse_rules(&text, &ports).unwrap_err();
    assert_eq!(errors.errors.len(), 50_000);
    assert_eq!((errors.errors[49_999].line, errors.errors[49_999].column), (50_000, 4));
    assert!(errors.render("r", &text).ends_with("(OFPBMC_BAD_PREREQ)\n"));
    assert_eq!(
        parse_rule("  # nothing", &ports).unwrap_err().message,
        "expected a rule, found nothing"
    );
}
