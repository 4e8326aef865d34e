//! OpenBSD's pfctl regression data (`../shared/corpus/pf/pfctl`, see its README): every `pf`
//! test prints byte-identical to its `.ok` under the OpenBSD fixture host, feeding the `.ok`
//! back prints it again (`selfpf`), every `pfail` test is rejected with pfctl's output, the
//! `pfopt` tests run with their options and the `pfsimple` tests are accepted.
//!
//! Known differences are listed, each with its cause, in `tests/data/corpus-exceptions.txt`; a
//! listed test that starts passing fails this test too, so the list stays true.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sift_pf::{Options, host::FixtureHost, pfctl};

const PF: &str = "1-32,34-36,38-41,44,46-50,52-57,60,61,65-111,114";
const PFAIL: &str = "1-8,11-17,19,20,23,25,27,30,37-43,47-67";
const PFOPT: &str = "1,2,6";
const PFSIMPLE: &str = "1,2";

fn numbers(spec: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

fn corpus() -> Option<PathBuf> {
    sift_testkit::corpus("pf/pfctl")
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn exceptions() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus-exceptions.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

fn verbose() -> Options {
    Options { verbose: true, ..Options::default() }
}

/// Runs every case; returns (name, passed, detail) per case.
fn run_all(dir: &Path) -> Vec<(String, bool, String)> {
    let host = FixtureHost::openbsd(dir);
    let mut results = Vec::new();
    for n in numbers(PF) {
        let name = format!("pf{n}");
        let input = read(dir, &format!("{name}.in"));
        let want = read(dir, &format!("{name}.ok"));
        let got = pfctl("stdin", &input, &verbose(), &host);
        let ok = got.stdout == want && got.status == 0;
        results.push((name.clone(), ok, diff(&want, &got.stdout, &got.stderr)));
        let again = pfctl("stdin", &want, &verbose(), &host);
        let ok = again.stdout == want && again.status == 0;
        results.push((format!("self{name}"), ok, diff(&want, &again.stdout, &again.stderr)));
    }
    for n in numbers(PFAIL) {
        let name = format!("pfail{n}");
        let input = read(dir, &format!("{name}.in"));
        let want = read(dir, &format!("{name}.ok"));
        let got = pfctl("stdin", &input, &verbose(), &host);
        let all = format!("{}{}", got.stderr, got.stdout);
        // pfail14 is accepted by pfctl (its .ok is the printed rule): compare what it prints,
        // and require failure whenever pfctl reported an error.
        let errs = want.lines().any(|l| l.starts_with("stdin:") || l.starts_with("pfctl:"));
        let ok = all == want && (got.status != 0) == errs;
        results.push((name.clone(), ok, diff(&want, &all, "")));
        // At least the same located messages (file:line: message), in the same order.
        let located = |s: &str| -> Vec<String> {
            s.lines().filter(|l| l.starts_with("stdin:")).map(str::to_string).collect()
        };
        let ok = located(&want) == located(&got.stderr) && (got.status != 0) == errs;
        results.push((format!("{name}-messages"), ok, diff(&want, &got.stderr, "")));
    }
    for n in numbers(PFOPT) {
        let name = format!("pfopt{n}");
        let input = read(dir, &format!("{name}.in"));
        let want = read(dir, &format!("{name}.ok"));
        let mut opts = verbose();
        for o in read(dir, &format!("{name}.opts")).split_whitespace().collect::<Vec<_>>().chunks(1)
        {
            let o = o[0];
            if let Some(d) = o.strip_prefix("-D") {
                let (k, v) = d.split_once('=').unwrap();
                opts.defines.push((k.into(), v.into()));
            }
        }
        let opt_text = read(dir, &format!("{name}.opts"));
        let words: Vec<&str> = opt_text.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "-a") {
            opts.anchor = words.get(i + 1).map(|s| s.to_string());
        }
        let got = pfctl("stdin", &input, &opts, &host);
        let ok = got.stdout == want && got.status == 0;
        results.push((name, ok, diff(&want, &got.stdout, &got.stderr)));
    }
    for n in numbers(PFSIMPLE) {
        let name = format!("pfsimple{n}");
        let input = read(dir, &format!("{name}.in"));
        let got = pfctl("stdin", &input, &Options::default(), &host);
        let ok = got.status == 0 && got.stdout.is_empty();
        results.push((name, ok, got.stderr.clone()));
    }
    results
}

fn diff(want: &str, got: &str, stderr: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  want: {w}\n  got:  {g}\n{stderr}", i + 1);
        }
    }
    format!(
        "lengths differ: want {} lines, got {}\n{}{stderr}",
        want.lines().count(),
        got.lines().count(),
        got.lines().skip(want.lines().count()).take(3).collect::<Vec<_>>().join("\n")
    )
}

#[test]
fn pfctl_regression_corpus() {
    let Some(dir) = corpus() else { return };
    let results = run_all(&dir);
    let exc = exceptions();
    let mut unexpected = Vec::new();
    let mut stale = Vec::new();
    let count = |prefix: &str, suffix: &str| {
        let sel: Vec<_> = results
            .iter()
            .filter(|r| r.0.starts_with(prefix) && r.0.ends_with(suffix))
            .filter(|r| {
                let rest = &r.0[prefix.len()..r.0.len() - suffix.len()];
                rest.chars().all(|c| c.is_ascii_digit())
            })
            .collect();
        (sel.iter().filter(|r| r.1).count(), sel.len())
    };
    for (name, ok, detail) in &results {
        if std::env::var("PF_CORPUS_VERBOSE").is_ok() && !ok {
            eprintln!("--- {name} FAILED\n{detail}");
        }
        match (ok, exc.contains(name)) {
            (false, false) => unexpected.push(format!("{name}: {detail}")),
            (true, true) => stale.push(name.clone()),
            _ => {}
        }
    }
    let (pf, pft) = count("pf", "");
    let (selfpf, selft) = count("selfpf", "");
    let (pfail, pfailt) = count("pfail", "");
    let (msgs, msgt) = count("pfail", "-messages");
    let (opt, optt) = count("pfopt", "");
    let (simple, simplet) = count("pfsimple", "");
    eprintln!(
        "pf {pf}/{pft}, selfpf {selfpf}/{selft}, pfail exact {pfail}/{pfailt}, pfail messages \
         {msgs}/{msgt}, pfopt {opt}/{optt}, pfsimple {simple}/{simplet}"
    );
    assert!(stale.is_empty(), "listed as exceptions but now passing: {stale:?}");
    assert!(unexpected.is_empty(), "{} mismatches:\n{}", unexpected.len(), unexpected.join("\n"));
    // Every case passes except the documented exceptions.
    let excused = |prefix: &str| exc.iter().filter(|e| e.starts_with(prefix)).count();
    assert_eq!(
        pf + excused("pf")
            - excused("pfail")
            - excused("pfopt")
            - excused("pfsimple")
            - excused("selfpf"),
        pft
    );
    assert_eq!(selfpf + excused("selfpf"), selft);
    assert_eq!(
        pfail + exc.iter().filter(|e| e.starts_with("pfail") && !e.ends_with("-messages")).count(),
        pfailt
    );
    assert_eq!(msgs + exc.iter().filter(|e| e.ends_with("-messages")).count(), msgt);
    assert_eq!(opt + excused("pfopt"), optt);
    assert_eq!(simple + excused("pfsimple"), simplet);
    assert_eq!((pft, selft, pfailt, msgt, optt, simplet), (101, 101, 49, 49, 3, 2));
}
