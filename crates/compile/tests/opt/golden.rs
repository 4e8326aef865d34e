//! Golden listings of the optimizer: `LINKTYPE EXPR` → optimized `-d` listing (or the error),
//! in `tests/data/opt/listings.txt`. `BLESS=1` rewrites them. They show what each pass does on
//! familiar filters; the semantics are checked elsewhere (`semantics`).

use crate::common::link;
use sift_compile::pipeline::{self, Options};
use sift_filter::TableResolver;

#[test]
fn optimized_listings() {
    let resolver = TableResolver::well_known();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/opt/listings.txt");
    let n = sift_testkit::golden_cases(&path, |_, input| {
        let (name, expr) = input.split_once(' ').expect("LINKTYPE EXPR");
        match pipeline::compile(expr, &Options::new(link(name), &resolver)) {
            Ok(c) => sift_insn::text::listing(c.program.insns()),
            Err(e) => e.render(expr),
        }
    });
    assert!(n >= 20);
}
