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
