//! Golden rendered errors (`tests/data/errors/*.txt`, `BLESS=1` rewrites): each case is filter
//! text (`{NL}` stands for a newline, as in a `-F` file) compiled through the pipeline on
//! EN10MB unoptimized, unless its name starts with `link=NAME` (another link type) or
//! `optimize` (optimized); the expected output is sift's rendered diagnostic.

use sift_compile::pipeline::{self, LinkType, Options};
use sift_filter::TableResolver;

#[test]
fn rendered_errors() {
    let resolver = TableResolver::well_known();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/errors/rendered.txt");
    let mut compiled = Vec::new();
    let n = sift_testkit::golden_cases(&path, |name, input| {
        let src = input.replace("{NL}", "\n");
        let mut opts = Options::new(LinkType::EN10MB, &resolver).optimize(false);
        for word in name.split_whitespace() {
            if let Some(link) = word.strip_prefix("link=") {
                opts.link = LinkType::from_name(link).expect("a link type name");
            } else if word == "optimize" {
                opts.optimize = true;
            }
        }
        match pipeline::compile(&src, &opts) {
            Ok(_) => {
                compiled.push(name.to_string());
                "UNEXPECTED SUCCESS\n".into()
            }
            Err(e) => e.render(&src),
        }
    });
    assert!(compiled.is_empty(), "these cases compiled: {compiled:?}");
    assert!(n >= 16, "only {n} cases");
}
