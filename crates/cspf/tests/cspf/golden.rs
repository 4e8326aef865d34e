//! Golden files (rewrite with `BLESS=1`): the assembler (`data/asm.txt`: input lines joined by
//! ` / `; words, then the disassembly, or the located error) and the compiler
//! (`data/compile.txt`: an expression; a case whose name starts with `ind-` compiles with the
//! indirect-push extension; the program text or the rendered error).

use std::path::Path;

use sift_compile::pipeline::LinkType;
use sift_cspf::{Options, text};
use sift_filter::TableResolver;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

#[test]
fn assembler_cases() {
    let n = sift_testkit::golden_cases(&data("asm.txt"), |_, input| {
        let src = input.replace(" / ", "\n");
        match text::assemble(&src) {
            Ok(words) => {
                let hex: Vec<String> = words.iter().map(|w| format!("{w:04x}")).collect();
                let dis = text::disassemble(&words);
                assert_eq!(text::assemble(&dis).as_ref(), Ok(&words), "round trip");
                format!("words: {}\n{dis}", hex.join(" "))
            }
            Err(e) => format!("error: {e}\n"),
        }
    });
    assert!(n >= 10);
}

#[test]
fn compiler_cases() {
    let resolver = TableResolver::well_known();
    let n = sift_testkit::golden_cases(&data("compile.txt"), |name, input| {
        let opts = Options::new(&resolver).with_indirect(name.starts_with("ind-"));
        match sift_cspf::compile_text(input, LinkType::EN10MB, &opts) {
            Ok(p) => {
                let text = p.to_text();
                assert_eq!(text::assemble(&text).as_deref(), Ok(p.words()), "round trip");
                format!("{} words\n{text}", p.words().len())
            }
            Err(e) => e.render(input),
        }
    });
    assert!(n >= 10);
}
