//! Golden listings of the optimizer: `LINKTYPE EXPR` → optimized `-d` listing (or the error),
//! in `tests/data/opt/listings.txt`. `BLESS=1` rewrites them. They show what each pass does on
//! familiar filters; the semantics are checked elsewhere (`opt_semantics.rs`).

use sift_compile::{Context, compile_program, link_type_by_name};
use sift_filter::TableResolver;

#[test]
fn optimized_listings() {
    let resolver = TableResolver::well_known();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/opt/listings.txt");
    let n = sift_testkit::golden_cases(&path, |_, input| {
        let (link, expr) = input.split_once(' ').expect("LINKTYPE EXPR");
        let ctx = Context {
            link_type: link_type_by_name(link).expect("known link type"),
            snaplen: 262144,
            netmask: None,
            linux_ext: false,
            resolver: &resolver,
        };
        match compile_program(expr, &ctx, true) {
            Ok(p) => sift_insn::text::listing(&p.0),
            Err(e) => e.render(expr),
        }
    });
    assert!(n >= 20);
}
