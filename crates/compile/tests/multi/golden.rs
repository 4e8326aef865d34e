//! Golden files: each `tests/data/multi/*.set` compiled for Ethernet, printed beside it as
//! `*.anchors` (every filter's anchors, then the index's tables). `BLESS=1` rewrites them.

use sift_compile::multi::{FilterSet, MultiProgram};
use sift_compile::pipeline::LinkType;
use std::fmt::Write;

fn render(prog: &MultiProgram) -> String {
    let mut s = String::new();
    for m in &prog.members {
        let flags = if m.spec.cont { ", continue" } else { "" };
        let _ =
            writeln!(s, "{} (priority {}{flags}): {}", m.spec.name, m.spec.priority, m.spec.expr);
        for line in m.anchoring.to_string().lines() {
            let _ = writeln!(s, "    {line}");
        }
    }
    let ix = &prog.index;
    let _ = writeln!(
        s,
        "index: {} tables, {} fields, {} guard conditions",
        ix.tables.len(),
        ix.fields.len(),
        ix.conds.len()
    );
    for t in &ix.tables {
        let _ = write!(s, "    {}: {} values", ix.fields[t.field as usize], t.map.len());
        for (i, &c) in ix.guards[t.guard as usize].iter().enumerate() {
            let (f, eq, v) = ix.conds[c as usize];
            let op = if eq { "==" } else { "!=" };
            let _ = write!(
                s,
                "{}{} {op} {v:#x}",
                if i == 0 { " if " } else { " and " },
                ix.fields[f as usize]
            );
        }
        s.push('\n');
    }
    let _ = writeln!(s, "always: {:?}", ix.always);
    s
}

#[test]
fn golden_anchors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/multi");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "set") {
            continue;
        }
        let set = FilterSet::parse(&std::fs::read(&path).unwrap()).unwrap();
        let prog = super::compile(&set, LinkType::EN10MB);
        sift_testkit::golden(&path.with_extension("anchors"), &render(&prog));
        n += 1;
    }
    assert!(n >= 2, "golden sets in {}", dir.display());
}
