//! Golden verifier verdicts: each `tests/golden/NAME.asm` (a header line with the program type
//! and maps, then the program) with its verdict beside it in `NAME.out` (`accepted: N insns
//! processed` or `refused: instruction N: message`); `BLESS=1` rewrites them.

mod common;

#[test]
fn golden_verdicts() {
    let cases = common::cases();
    assert!(cases.len() >= 40, "{} golden programs", cases.len());
    for c in &cases {
        let out = match sift_ebpf_verifier::verify_with(&c.slots, c.prog, &c.maps, c.options) {
            Ok(r) => format!("accepted: {} insns processed\n", r.processed),
            Err(e) => format!("refused: {e}\n"),
        };
        sift_testkit::golden(&c.path.with_extension("out"), &out);
    }
}

/// The report's access bases (`Report::access_bases`) of each accepted golden program, one
/// line per load, store or atomic, in `NAME.bases` (`BLESS=1` rewrites them).
#[test]
fn golden_access_bases() {
    let mut seen = std::collections::HashSet::new();
    for c in &common::cases() {
        let Ok(r) = sift_ebpf_verifier::verify_with(&c.slots, c.prog, &c.maps, c.options) else {
            continue;
        };
        let mut out = String::new();
        for (pc, b) in r.access_bases.iter().enumerate() {
            if let Some(b) = b {
                out.push_str(&format!("{pc}: {b:?}\n"));
                seen.insert(std::mem::discriminant(b));
            }
        }
        sift_testkit::golden(&c.path.with_extension("bases"), &out);
    }
    // Stack, context, packet, map value and mixed bases at least.
    assert!(seen.len() >= 5, "{} kinds of access bases in the golden programs", seen.len());
}
