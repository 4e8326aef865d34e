//! Any bytes as filter text: the lexer, parser, name checks and renderer never panic, and
//! whatever parses prints to text that parses back to the same print (parse→print→parse).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_filter::{TableResolver, parse, parse_with};

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let r = TableResolver::well_known();
    if let Err(e) = parse_with(&src, &r) {
        let _ = e.render(&src);
        let _ = e.libpcap_message();
    }
    let cleaned = sift_filter::strip_comments(&src);
    let _ = parse(&cleaned);
    if let Ok(Some(e)) = parse(&src) {
        let printed = e.to_string();
        let again = parse(&printed).expect("canonical print parses").expect("non-empty");
        assert_eq!(again.to_string(), printed, "print is not a fixed point");
    }
});
