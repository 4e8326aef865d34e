//! The cBPF → eBPF translation on every program sift's compiler emits for the libpcap corpus
//! (its accept cases, every link type sift compiles for, unoptimized and optimized): the
//! kernel's verifier must accept each one, and `BPF_PROG_TEST_RUN` must give the interpreter's
//! value on generated frames of the link type. Programs with Linux ancillary loads (the
//! `linuxext` cases) are not translated (reported apart). Needs root.

use std::collections::BTreeMap;

use sift_compile::pipeline;
use sift_filetests::{Corpus, PacketSet};
use sift_filter::TableResolver;
use sift_kernel::{EbpfError, KernelEbpf};
use sift_vm::Interpreter;

#[test]
fn every_corpus_program_passes_the_verifier_and_agrees() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    if !sift_testkit::is_root() {
        sift_testkit::oracle_missing::<()>("bpf(2)", "not root");
        return;
    }
    let mut resolver = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        resolver.load_mixed(&text);
    }
    let mut sets: BTreeMap<&str, PacketSet> = BTreeMap::new();
    let (mut loaded, mut runs, mut not_compiled, mut ancillary) = (0, 0, 0, 0);
    let mut rejected: Vec<String> = Vec::new();
    let mut too_big: Vec<String> = Vec::new();
    let mut wrong: Vec<String> = Vec::new();
    for case in &corpus.accept {
        if case.skip.is_some() || !pipeline::supports(case.link) {
            continue;
        }
        let set = sets
            .entry(case.link.name().unwrap())
            .or_insert_with(|| PacketSet::generate(case.link, 0x6b, 40, 10).thin(4));
        for optimize in [false, true] {
            let opts = pipeline::Options::new(case.link, &resolver)
                .snaplen(case.snaplen as u32)
                .netmask((case.netmask != 0xffff_ffff).then_some(case.netmask))
                .linux_ext(case.linuxext)
                .optimize(optimize);
            let valid = match pipeline::compile(&case.expr, &opts) {
                Ok(c) => c.program,
                Err(e) if e.is_internal() => {
                    wrong.push(format!("{}: sift emitted an invalid program", case.name));
                    continue;
                }
                Err(_) => {
                    not_compiled += 1;
                    continue;
                }
            };
            let k = match KernelEbpf::new(&valid) {
                Ok(k) => k,
                Err(EbpfError::Translate(e))
                    if matches!(e.reason, sift_ebpf::TranslateReason::Ancillary(_)) =>
                {
                    ancillary += 1;
                    continue;
                }
                Err(e) => {
                    // The one known exception: `protochain`'s walk is unrolled for the kernel
                    // (some 145 header steps), and the verifier walks its paths; with one way
                    // out per step it stays within the verifier's million instructions here,
                    // but a kernel that prunes less may stop with E2BIG.
                    let too_complex = matches!(&e, EbpfError::Rejected { errno, .. }
                        if errno.raw_os_error() == Some(libc::E2BIG));
                    if too_complex && case.expr.contains("protochain") {
                        too_big.push(case.name.clone());
                    } else {
                        rejected.push(format!(
                            "{} `{}` (optimize {optimize}): {}",
                            case.name,
                            case.expr,
                            short(&e)
                        ));
                    }
                    continue;
                }
            };
            loaded += 1;
            let interp = Interpreter::with_flavor(&valid, sift_vm::Flavor::Linux);
            for f in &set.frames {
                if f.data.len() > sift_kernel::MAX_PACKET {
                    continue;
                }
                let want = interp.run(&f.data, f.wire_len());
                let got = k.run(&f.data, f.wire_len()).expect("BPF_PROG_TEST_RUN");
                runs += 1;
                if got != want && wrong.len() < 20 {
                    wrong.push(format!(
                        "{} `{}`: kernel {got}, interpreter {want}",
                        case.name, case.expr
                    ));
                }
            }
        }
    }
    println!(
        "{loaded} programs loaded ({} link types), {runs} test runs, {} refused by the verifier, \
         {} protochain programs beyond the verifier's complexity limit ({}), {ancillary} with \
         ancillary loads (not translated), {not_compiled} not compiled by sift",
        sets.len(),
        rejected.len(),
        too_big.len(),
        too_big.join(", ")
    );
    assert!(rejected.is_empty(), "the verifier refused:\n{}", rejected.join("\n"));
    assert!(wrong.is_empty(), "verdicts differ:\n{}", wrong.join("\n"));
    assert!(loaded > 3000, "only {loaded} programs loaded");
}

/// The error in a few lines: the errno and the last lines of the verifier's log (where the
/// kernel says why), not the whole log of a 10,000-instruction program.
fn short(e: &EbpfError) -> String {
    match e {
        EbpfError::Rejected { errno, log } => {
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(8)..].join("\n    ");
            format!("{errno}; {} log lines, ending:\n    {tail}", lines.len())
        }
        other => other.to_string(),
    }
}
