//! Golden tests of the classic → eBPF translation: each case in `golden/translate.txt` is a
//! classic program (`asm:` bpf_asm text, lines separated by `|`, or `expr:` a filter compiled
//! by sift for Ethernet), printed as classic and as eBPF. With root, every translation that
//! succeeds must also pass the kernel's verifier.

use std::path::Path;

use sift_compile::Context;
use sift_filter::TableResolver;
use sift_insn::Insn;
use sift_kernel::ebpf::translate;
use sift_kernel::{EbpfError, KernelEbpf};

fn classic(input: &str) -> Result<Vec<Insn>, String> {
    if let Some(asm) = input.strip_prefix("asm:") {
        let text = asm.replace('|', "\n");
        return sift_insn::asm::assemble(&text).map(|p| p.0).map_err(|e| e.to_string());
    }
    if let Some(expr) = input.strip_prefix("expr:") {
        let resolver = TableResolver::well_known();
        let ctx = Context {
            link_type: 1,
            snaplen: 262_144,
            netmask: None,
            linux_ext: false,
            resolver: &resolver,
        };
        return sift_compile::compile_str(expr.trim(), &ctx)
            .map(|p| p.0)
            .map_err(|e| e.to_string());
    }
    Err(format!("unknown input kind: {input}"))
}

#[test]
fn translations() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/translate.txt");
    let mut loaded = 0;
    let n = sift_testkit::golden_cases(&path, |_, input| {
        let prog = match classic(input) {
            Ok(p) => p,
            Err(e) => return format!("error: {e}\n"),
        };
        let mut out = sift_insn::text::listing(&prog);
        out.push_str("--- eBPF\n");
        match translate(&prog) {
            Ok(e) => {
                out.push_str(&e.to_string());
                match KernelEbpf::load(e) {
                    Ok(_) => loaded += 1,
                    Err(EbpfError::Unavailable(_)) => {}
                    Err(err) => panic!("{input}: {err}"),
                }
            }
            Err(e) => out.push_str(&format!("error: {e}\n")),
        }
        out
    });
    assert!(n >= 20, "{n} cases");
    eprintln!("{n} golden cases, {loaded} accepted by the kernel's verifier");
}
