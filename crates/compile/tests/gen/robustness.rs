//! Bad or huge input is normal input for the code generator: 10,000-term expressions compile
//! (unoptimized) to valid programs on every supported link type, deep nesting is refused by
//! the parser before it can overflow the stack, and primitives that exhaust scratch memory or
//! the `protochain` budget give errors, not panics.

use crate::common::{link, unoptimized};
use sift_compile::pipeline::{self, Compiled, Options};
use sift_compile::{CompileError, CompileErrorKind};
use sift_filter::TableResolver;

const LINKS: &[&str] = &[
    "EN10MB",
    "RAW",
    "LINUX_SLL",
    "LINUX_SLL2",
    "NULL",
    "PPP",
    "FDDI",
    "PFLOG",
    "IEEE802_11",
    "IEEE802_11_RADIO",
    "PRISM_HEADER",
    "PPI",
];

fn opts<'a>(name: &str, resolver: &'a TableResolver) -> Options<'a> {
    unoptimized(link(name), resolver).netmask(Some(0xffff_ff00))
}

fn compile(expr: &str, name: &str, resolver: &TableResolver) -> Result<Compiled, CompileError> {
    pipeline::compile(expr, &opts(name, resolver))
}

/// An error, not an invalid program or a bug (the pipeline validates what it emits).
fn refusal(link: &str, expr: &str, e: &CompileError) {
    assert!(
        !matches!(e.kind, CompileErrorKind::Invalid(_) | CompileErrorKind::Internal(_)),
        "{link} {expr}: {e}"
    );
    assert!(!e.to_string().is_empty());
}

/// Compiles `expr` (the pipeline validates the program) and runs it on a few frames.
fn compile_valid(link: &str, expr: &str) -> usize {
    let r = TableResolver::well_known();
    let c = compile(expr, link, &r).unwrap_or_else(|e| panic!("{link}: {e}"));
    let vm = sift_vm::Interpreter::new(&c.program);
    for len in [0usize, 14, 60, 200] {
        let frame: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        let _ = vm.run(&frame, len as u32);
    }
    c.program.insns().len()
}

#[test]
fn ten_thousand_term_expressions_compile_on_every_link_type() {
    // A long `or` of hosts, ports and protocols, and a long `and` of negations.
    let mut terms = Vec::new();
    for i in 0..10_000u32 {
        terms.push(match i % 5 {
            0 => format!("host 10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255),
            1 => format!("tcp port {}", i % 65536),
            2 => format!("ip6 net 2001:db8:{i:x}::/48"),
            3 => format!("len > {i}"),
            _ => "udp".to_string(),
        });
    }
    let or = terms.join(" or ");
    let and = terms.iter().map(|t| format!("not {t}")).collect::<Vec<_>>().join(" and ");
    for link in LINKS {
        let t = std::time::Instant::now();
        let n = compile_valid(link, &or);
        let m = compile_valid(link, &and);
        eprintln!("{link}: 10,000-term or: {n} insns, and: {m} insns, {:?}", t.elapsed());
        assert!(n > 10_000 && m > 10_000);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let r = TableResolver::well_known();
    for depth in [300, 10_000, 100_000] {
        for (open, close) in [("(", ")"), ("not (", ")"), ("(ip[", "] > 0)")] {
            let expr = format!("{}tcp{}", open.repeat(depth), close.repeat(depth));
            let e = compile(&expr, "EN10MB", &r);
            assert!(e.is_err(), "depth {depth} of {open:?} compiled");
        }
        let neg = format!("{}1 > 0", "-".repeat(depth));
        assert!(compile(&neg, "EN10MB", &r).is_err(), "depth {depth} of negations");
    }
    // Within the cap, nesting compiles.
    let expr = format!("{}tcp{}", "not (".repeat(100), ")".repeat(100));
    compile_valid("EN10MB", &expr);
}

#[test]
fn resource_limits_are_errors() {
    let r = TableResolver::well_known();
    // 17 live arithmetic values need more than 16 scratch words.
    let sum = (0..40).map(|i| format!("(ip[{i}] + (1 + (2 + (3 + 4))))")).collect::<Vec<_>>();
    let deep = format!("{} > 0", (0..17).fold("1".to_string(), |acc, i| format!("({i} + {acc})")));
    for (expr, link) in [(sum.join(" * ") + " > 0", "EN10MB"), (deep, "IEEE802_11")] {
        if let Err(e) = compile(&expr, link, &r) {
            refusal(link, &expr, &e);
        }
    }
    let many = ["protochain 6"; 5].join(" or ");
    let e = compile(&many, "EN10MB", &r).expect_err("protochain budget");
    assert!(e.is_unsupported(), "{e}");
    // Every `protochain` kind, `vxlan`/`geneve` with later primitives, 802.11 and pflog
    // fields over every link type: errors or valid programs.
    for link in LINKS {
        for expr in [
            "ip6 protochain 17 and tcp port 80",
            "vxlan and tcp port 80 and ether host 1:2:3:4:5:6",
            "geneve 7 and ip6 and udp[0:2] > 5 and link[2] = 3",
            "wlan addr4 1:2:3:4:5:6 or type data subtype qos-data",
            "action block and on em0 and rnr 5",
            "radio[3] = 1 and ip[2:2] < len",
        ] {
            if let Err(e) = compile(expr, link, &r) {
                refusal(link, expr, &e);
            }
        }
    }
}
