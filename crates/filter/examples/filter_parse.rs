//! Parses each argument as a filter and prints its canonical form or the rendered error.
//!
//! `cargo run -p sift-filter --example filter_parse -- 'host a or b' 'tcp port 8o80'`

fn main() {
    let r = sift_filter::TableResolver::well_known();
    for arg in std::env::args().skip(1) {
        match sift_filter::parse_with(&arg, &r) {
            Ok(Some(e)) => println!("{e}"),
            Ok(None) => println!("(empty filter: matches every packet)"),
            Err(err) => print!("{}", err.render(&arg)),
        }
    }
}
