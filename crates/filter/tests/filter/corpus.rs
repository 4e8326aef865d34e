//! libpcap's own filter corpus (`../shared/corpus/libpcap`): every expression parses without
//! panicking, the `accept` cases parse, and the `reject` cases whose error is a parse-level one
//! get libpcap's message. Prints coverage figures (run with `--nocapture` to see them).

use sift_filter::{TableResolver, parse, parse_with};
use std::collections::BTreeMap;

fn fixtures(dir: &std::path::Path) -> TableResolver {
    let mut r = TableResolver::well_known();
    r.load_mixed(&std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")).unwrap());
    r
}

/// Extracts `(kind, expr, errstr)` from the JSON corpus without a JSON dependency: the file is
/// pretty-printed one field a line, and the fields we need are plain strings.
fn cases(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let (mut kind, mut expr, mut err) = (String::new(), None, String::new());
    for line in text.lines() {
        let l = line.trim();
        if l == "{" {
            (kind, expr, err) = (String::new(), None, String::new());
        } else if l.starts_with('}') {
            if let Some(e) = expr.take() {
                out.push((kind.clone(), e, err.clone()));
            }
        } else if let Some(v) = field(l, "kind") {
            kind = v;
        } else if let Some(v) = field(l, "expr") {
            expr = Some(v);
        } else if let Some(v) = field(l, "errstr") {
            err = v;
        }
    }
    out
}

fn field(line: &str, name: &str) -> Option<String> {
    let rest = line.strip_prefix(&format!("\"{name}\" : \""))?;
    let rest = rest.strip_suffix(',').unwrap_or(rest).strip_suffix('"')?;
    let mut s = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some(o) => s.push(o),
                None => {}
            }
        } else {
            s.push(c);
        }
    }
    Some(s)
}

/// Errors libpcap raises while generating code for a link type (or in the optimizer).
fn codegen_level(errstr: &str) -> bool {
    [
        "DLT_",
        "supported only on",
        "not a live capture",
        "802.11 syntax only",
        "rejects all packets",
        "cannot be used within",
        "variable length headers",
        "link-layer type filtering",
        "netmask not known",
        "protochain not supported",
        "EtherType",
        "PPP protocol",
        "HDLC protocol",
        "LLC DSAP",
        "Failed opening",
    ]
    .iter()
    .any(|p| errstr.contains(p))
}

#[test]
fn every_expression_parses_without_panic() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let text = std::fs::read_to_string(dir.join("libpcap_filter_expressions.txt")).unwrap();
    let r = fixtures(&dir);
    let (mut ok, mut total) = (0, 0);
    for line in text.lines() {
        total += 1;
        let _ = parse(line);
        if parse_with(line, &r).is_ok() {
            ok += 1;
        }
        // Whatever parses prints to a form that parses to the same print.
        if let Ok(Some(e)) = parse(line) {
            let p = e.to_string();
            let again = parse(&p).unwrap_or_else(|err| panic!("{line:?} → {p:?}: {err}"));
            let again = again.expect("non-empty");
            assert_eq!(again.to_string(), p, "{line:?}");
            assert_eq!(shape(&again), shape(&e), "{line:?}: print → parse changed the tree");
        }
    }
    eprintln!("corpus expressions: {total}, parsed (with name fixtures): {ok}");
    assert_eq!(total, 4187);
}

#[test]
fn accept_and_reject_cases() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let text = std::fs::read_to_string(dir.join("libpcap_TESTrun_cases.json")).unwrap();
    let r = fixtures(&dir);
    let all = cases(&text);
    let (mut acc, mut acc_ok) = (0, 0);
    let mut acc_fail: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut rej, mut matched, mut deferred, mut mismatched, mut missed) = (0, 0, 0, 0, 0);
    let mut miss: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut mism: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (kind, expr, errstr) in &all {
        if expr.starts_with('_') {
            continue;
        }
        match kind.as_str() {
            "accept" | "apply" => {
                acc += 1;
                match parse_with(expr, &r) {
                    Ok(_) => acc_ok += 1,
                    Err(e) => acc_fail.entry(e.libpcap_message()).or_default().push(expr.clone()),
                }
            }
            "reject" if codegen_level(errstr) => {
                rej += 1;
                // libpcap reports these while generating code; the parser must let them through
                // (names are resolved by then, but the link type is checked first).
                match parse(expr) {
                    Ok(_) => deferred += 1,
                    Err(e) => {
                        mismatched += 1;
                        mism.entry(format!("{errstr} ≠ (parse) {}", e.libpcap_message()))
                            .or_default()
                            .push(expr.clone());
                    }
                }
            }
            "reject" => {
                rej += 1;
                match parse_with(expr, &r) {
                    Ok(_) => {
                        missed += 1;
                        miss.entry(errstr.clone()).or_default().push(expr.clone());
                    }
                    Err(e) if e.libpcap_message().contains(errstr.as_str()) => matched += 1,
                    Err(e) => {
                        mismatched += 1;
                        mism.entry(format!("{errstr} ≠ {}", e.libpcap_message()))
                            .or_default()
                            .push(expr.clone());
                    }
                }
            }
            _ => {}
        }
    }
    eprintln!("accept/apply cases: {acc}, parsed: {acc_ok}");
    for (m, v) in &acc_fail {
        eprintln!("  not parsed ({}): {m}: e.g. {:?}", v.len(), &v[..v.len().min(3)]);
    }
    eprintln!(
        "reject cases: {rej}; rejected at parse level with libpcap's message: {matched}; \
         link-type/optimizer errors correctly left to codegen: {deferred}; \
         parse-level errors not detected: {missed}; wrong message or rejected too early: {mismatched}"
    );
    for (m, v) in &miss {
        eprintln!("  missed ({}): {m}: e.g. {:?}", v.len(), &v[..v.len().min(3)]);
    }
    for (m, v) in &mism {
        eprintln!("  mismatch ({}): {m}: e.g. {:?}", v.len(), &v[..v.len().min(3)]);
    }
    assert!(acc > 2000);
    assert_eq!(acc_ok, acc, "accept cases that do not parse");
    assert!(mismatched * 50 <= rej, "too many reject cases with the wrong message");
}

/// The tree's `Debug` form with every span removed: equal trees up to spans.
fn shape(e: &sift_filter::ast::Expr) -> String {
    let d = format!("{e:?}");
    let mut out = String::with_capacity(d.len());
    let mut rest = d.as_str();
    while let Some(i) = rest.find("Span {") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
        rest = &rest[j..];
    }
    out.push_str(rest);
    out
}
