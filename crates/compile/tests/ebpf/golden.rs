//! Golden listings: `HOOK[,FLAG…] EXPR` → the lowered program (or the refusal), in
//! `tests/data/ebpf/listings.txt`; `BLESS=1` rewrites them. `HOOK` is `xdp`, `tc` or `socket`;
//! the flags are `raw`, `count`, `xsk`, `linux_ext` (compile with Linux extensions) and `link=NAME`
//! (compile for another link type). They show what the lowering makes of familiar filters;
//! the semantics are checked by the differential tests (`vm`, `kernel`).

use sift_compile::ebpf::{self, EbpfOptions, Hook};
use sift_compile::pipeline::{self, LinkType, Options};

fn render(input: &str) -> String {
    let (head, expr) = input.split_once(' ').expect("HOOK EXPR");
    let mut flags = head.split(',');
    let hook = match flags.next() {
        Some("xdp") => Hook::Xdp,
        Some("tc") => Hook::Tc,
        Some("socket") => Hook::SocketFilter,
        other => panic!("unknown hook {other:?}"),
    };
    let resolver = crate::resolver();
    let mut opts = Options::new(LinkType::EN10MB, &resolver);
    let mut eopts = EbpfOptions::new(hook);
    for flag in flags {
        match flag {
            "raw" => eopts = eopts.raw(),
            "count" => eopts = eopts.counting(),
            "xsk" => eopts = eopts.to_xsk(),
            "linux_ext" => opts = opts.linux_ext(true),
            _ => match flag.strip_prefix("link=") {
                Some(name) => opts.link = LinkType::from_name(name).expect("a link type"),
                None => panic!("unknown flag {flag}"),
            },
        }
    }
    let compiled = match pipeline::compile(expr, &opts) {
        Ok(c) => c,
        Err(e) => return e.render(expr),
    };
    match ebpf::lower(&compiled, &eopts) {
        Ok(f) => {
            let maps: Vec<String> =
                f.maps.iter().map(|m| format!("map {}: {m:?}\n", m.name)).collect();
            format!(
                "; {} classic instructions, {} eBPF slots\n{}{}",
                compiled.program.insns().len(),
                f.len(),
                maps.concat(),
                f.listing()
            )
        }
        Err(e) => format!("error: {e}\n"),
    }
}

#[test]
fn listings() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ebpf/listings.txt");
    let n = sift_testkit::golden_cases(&path, |_, input| render(input));
    assert!(n >= 15, "{n} cases");
}
