//! Any bytes as a filter expression: the CSPF compiler never panics on any supported link
//! type, with or without the indirect-push extension; what it compiles fits the machine,
//! survives a text round trip, and runs (on the input bytes as a packet) without a fault other
//! than a short packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_cspf::{End, Fault, Options, SUPPORTED, text};
use sift_filter::TableResolver;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let resolver = TableResolver::well_known();
    for &link in SUPPORTED {
        for indirect in [false, true] {
            let opts = Options::new(&resolver).with_indirect(indirect);
            let p = match sift_cspf::compile_text(src, link, &opts) {
                Ok(p) => p,
                Err(e) => {
                    let _ = e.render(src);
                    continue;
                }
            };
            assert!(p.words().len() <= opts.max_words);
            assert_eq!(text::assemble(&p.to_text()).as_deref(), Ok(p.words()));
            let r = p.run_detailed(data);
            assert!(
                matches!(
                    r.end,
                    End::Finished
                        | End::ShortCircuit { .. }
                        | End::Fault(Fault::OutOfPacket { .. })
                ),
                "`{src}`: {:?}\n{}",
                r.end,
                p.to_text()
            );
            let _ = p.exact_for(data);
        }
    }
});
