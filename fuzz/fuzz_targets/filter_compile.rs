//! Any bytes as a filter for any supported link type: parsing and code generation never
//! panic, hang or overflow the stack; whatever compiles is a program sift's validator accepts
//! (libpcap mode: the pipeline validates, and an invalid program is a bug) and that runs on a
//! packet made of the same bytes; every error renders.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_compile::CompileErrorKind;
use sift_compile::pipeline::{self, LinkType, Options};
use sift_filter::TableResolver;

/// The link types the generator supports, by name (the first input byte picks one).
const LINKS: &[&str] = &[
    "EN10MB",
    "RAW",
    "IPV4",
    "IPV6",
    "LINUX_SLL",
    "LINUX_SLL2",
    "NULL",
    "LOOP",
    "PPP",
    "C_HDLC",
    "FDDI",
    "IEEE802",
    "SLIP",
    "ENC",
    "PFLOG",
    "IEEE802_11",
    "IEEE802_11_RADIO",
    "IEEE802_11_RADIO_AVS",
    "PRISM_HEADER",
    "PPI",
    "PPP_SERIAL",
    "PPP_PPPD",
    "PPP_ETHER",
    "IP_OVER_FC",
    "NETANALYZER",
    "NETANALYZER_TRANSPARENT",
    "DSA_TAG_BRCM",
    "DSA_TAG_DSA",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let link = LINKS[usize::from(pick) % LINKS.len()];
    let resolver = TableResolver::well_known();
    let opts = Options::new(LinkType::from_name(link).expect("a link type"), &resolver)
        .optimize(false)
        .netmask((pick & 0x80 != 0).then_some(0xffff_ff00))
        .linux_ext(pick & 0x40 != 0);
    let src = String::from_utf8_lossy(rest);
    match pipeline::compile(&src, &opts) {
        Ok(c) => {
            let vm = sift_vm::Interpreter::new(&c.program);
            let _ = vm.run(rest, rest.len() as u32);
        }
        Err(e)
            if matches!(e.kind, CompileErrorKind::Invalid(_) | CompileErrorKind::Internal(_)) =>
        {
            panic!("{link} {src:?}: {e}")
        }
        Err(e) => {
            let _ = e.render(&src);
        }
    }
});
