//! Golden tests of the classic → eBPF translation: each case in `golden/translate.txt` is a
//! classic program (`asm:` bpf_asm text, lines separated by `|`; `asm-local:` the same in the
//! local-exit form; `expr:` a filter compiled by sift for Ethernet), printed as classic and as
//! eBPF. With root, every translation that
//! succeeds must also pass the kernel's verifier.

use std::path::Path;

use sift_compile::pipeline::{self, LinkType};
use sift_ebpf::translate;
use sift_filter::TableResolver;
use sift_insn::Insn;
use sift_kernel::{EbpfError, KernelEbpf};

fn classic(input: &str) -> Result<Vec<Insn>, String> {
    if let Some(asm) = input.strip_prefix("asm:").or_else(|| input.strip_prefix("asm-local:")) {
        let text = asm.replace('|', "\n");
        return sift_insn::asm::assemble(&text).map(|p| p.0).map_err(|e| e.to_string());
    }
    if let Some(expr) = input.strip_prefix("expr:") {
        let resolver = TableResolver::well_known();
        let opts = pipeline::Options::new(LinkType::EN10MB, &resolver).optimize(false);
        return pipeline::compile(expr.trim(), &opts)
            .map(|c| c.program.insns().to_vec())
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
        let translated = if input.starts_with("asm-local:") {
            sift_ebpf::translate_local_exits(&prog)
        } else {
            translate(&prog)
        };
        match translated {
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

/// Without the kernel: random programs (both validators' worth, and broken ones) translate or
/// fail cleanly, never panic, and every translation is well formed (jumps land inside the
/// program, nothing runs off the end).
#[test]
fn random_translations_are_well_formed() {
    use sift_ebpf::{EbpfProgram, TranslateReason};
    use sift_verify::{Mode, validate};
    use sift_vm::testgen::{self, GenConfig, Rng};

    fn well_formed(p: &EbpfProgram) -> Result<(), String> {
        let n = p.insns.len() as i64;
        for (i, insn) in p.insns.iter().enumerate() {
            let class = insn.code & 7;
            let op = insn.code & 0xf0;
            let is_jump = class == 5 || class == 6;
            let is_exit_or_call = class == 5 && (op == 0x90 || op == 0x80);
            if is_jump && !is_exit_or_call {
                let to = i as i64 + 1 + i64::from(insn.off);
                if !(0..n).contains(&to) {
                    return Err(format!("slot {i} jumps to {to} of {n}"));
                }
            }
        }
        match p.insns.last() {
            Some(last) if last.code == 0x95 || last.code == 0x05 => Ok(()),
            _ => Err("does not end in exit or goto".into()),
        }
    }

    let mut rng = Rng::new(99);
    let mut translated = 0;
    for round in 0..6000 {
        let cfg = if round % 2 == 0 { GenConfig::linux() } else { GenConfig::anything() };
        let mut prog = testgen::program(&mut rng, &cfg);
        if round % 3 == 0 {
            prog = testgen::mutate(&mut rng, &prog);
        }
        for mode in [Mode::Linux, Mode::Libpcap] {
            let Ok(valid) = validate(&prog, mode) else { continue };
            match translate(valid.insns()) {
                Ok(p) => {
                    well_formed(&p).unwrap_or_else(|e| panic!("{e}\n{prog:?}\n{p}"));
                    assert_eq!(EbpfProgram::from_bytes(&p.to_bytes()), p);
                    translated += 1;
                }
                Err(e) => assert!(
                    matches!(e.reason, TranslateReason::Ancillary(_) | TranslateReason::JumpTooFar),
                    "{e}"
                ),
            }
        }
    }
    assert!(translated > 4000, "{translated}");
}
