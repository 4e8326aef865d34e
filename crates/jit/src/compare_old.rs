//! TEMPORARY: the assembler-based lowering against the hand-written emitter it replaces.
//!
//! Every program from the JIT's own tests (dumped by running them with a temporary hook into
//! `/tmp/jitprogs.txt`, one `code,jt,jf,k;…` line per program), the libpcap corpus listings
//! (`shared/corpus/libpcap/libpcap_TESTrun_cases.json`, opt and unopt), the compiler's golden
//! listings and seeded `sift_vm::testgen` programs are lowered both ways. The bytes must be
//! identical, or differ only in encodings: decoded with iced-x86, the same instructions with
//! the same operands (immediates and displacements by value, jumps by target instruction),
//! and never longer.

use iced_x86::{Decoder, DecoderOptions, Instruction, OpKind};
use sift_insn::Insn;
use sift_verify::{Mode, validate};
use sift_vm::testgen::{self, GenConfig, Rng};

use crate::regs::Regs;

/// One decoded instruction, with everything that matters and nothing about its encoding.
#[derive(Debug, PartialEq, Eq)]
struct Key {
    mnemonic: iced_x86::Mnemonic,
    lock: bool,
    ops: Vec<Op>,
}

#[derive(Debug, PartialEq, Eq)]
enum Op {
    Reg(iced_x86::Register),
    Imm(u64),
    Mem {
        base: iced_x86::Register,
        index: iced_x86::Register,
        scale: u32,
        disp: u64,
        size: usize,
    },
    /// The index of the target instruction.
    Branch(usize),
    Other(OpKind),
}

fn keys(code: &[u8]) -> Vec<Key> {
    let insns: Vec<Instruction> =
        Decoder::with_ip(64, code, 0, DecoderOptions::NONE).iter().collect();
    let index_of = |ip: u64| insns.iter().position(|i| i.ip() == ip).unwrap_or(usize::MAX);
    insns
        .iter()
        .map(|d| {
            assert!(!d.is_invalid(), "invalid instruction in {code:02X?}");
            // The operand size, for comparing immediates by value (imm8 and imm32 forms
            // sign-extend differently in iced's `immediate`).
            let bits = match d.op0_kind() {
                OpKind::Register => d.op0_register().size() * 8,
                OpKind::Memory => d.memory_size().size() * 8,
                _ => 64,
            };
            let mask = if bits >= 64 || bits == 0 { u64::MAX } else { (1u64 << bits) - 1 };
            let ops = (0..d.op_count())
                .map(|i| match d.op_kind(i) {
                    OpKind::Register => Op::Reg(d.op_register(i)),
                    OpKind::Memory => Op::Mem {
                        base: d.memory_base(),
                        index: d.memory_index(),
                        scale: d.memory_index_scale(),
                        disp: d.memory_displacement64(),
                        size: d.memory_size().size(),
                    },
                    OpKind::NearBranch64 => Op::Branch(index_of(d.near_branch_target())),
                    OpKind::Immediate8
                    | OpKind::Immediate16
                    | OpKind::Immediate32
                    | OpKind::Immediate64
                    | OpKind::Immediate8to16
                    | OpKind::Immediate8to32
                    | OpKind::Immediate8to64
                    | OpKind::Immediate32to64 => Op::Imm(d.immediate(i) & mask),
                    k => Op::Other(k),
                })
                .collect();
            Key { mnemonic: d.mnemonic(), lock: d.has_lock_prefix(), ops }
        })
        .collect()
}

/// Undoes JSON string escapes (the corpus's listings use `\n`, `\t`, `\"`, `\\`).
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

/// The `opt` and `unopt` listings of the libpcap corpus.
fn libpcap_listings() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/libpcap/libpcap_TESTrun_cases.json"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("SKIP libpcap corpus: {path} not found");
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in ["\"opt\" : \"", "\"unopt\" : \""] {
        let mut rest = text.as_str();
        while let Some(at) = rest.find(key) {
            rest = &rest[at + key.len()..];
            // The string ends at the first quote not escaped.
            let mut end = 0;
            let bytes = rest.as_bytes();
            while end < bytes.len()
                && !(bytes[end] == b'"' && (end == 0 || bytes[end - 1] != b'\\'))
            {
                end += 1;
            }
            out.push(unescape(&rest[..end]));
            rest = &rest[end..];
        }
    }
    out
}

/// The compiler's golden listings (`crates/compile/tests/data`).
fn compiler_listings() -> Vec<String> {
    let mut out = Vec::new();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../compile/tests/data");
    let files =
        ["opt/listings.txt", "gen/addresses.txt", "gen/ports_arith.txt", "gen/protocols.txt"];
    for f in files.iter().map(|f| format!("{dir}/{f}")).chain(
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().display().to_string())
            .filter(|p| p.ends_with(".txt")),
    ) {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        // Listings are runs of lines starting with "(NNN)".
        let mut cur = String::new();
        for line in text.lines().chain(std::iter::once("")) {
            if line.trim_start().starts_with('(') {
                cur.push_str(line);
                cur.push('\n');
            } else if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    out
}

fn dumped_programs() -> Vec<Vec<Insn>> {
    let Ok(text) = std::fs::read_to_string("/tmp/jitprogs.txt") else {
        eprintln!("SKIP the JIT tests' programs: /tmp/jitprogs.txt not found");
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            line.split(';')
                .filter(|s| !s.is_empty())
                .map(|i| {
                    let f: Vec<u32> = i.split(',').map(|n| n.parse().unwrap()).collect();
                    Insn { code: f[0] as u16, jt: f[1] as u8, jf: f[2] as u8, k: f[3] }
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_assembler_lowering_matches_the_hand_written_one() {
    let mut programs: Vec<(&str, Vec<Insn>)> = Vec::new();
    programs.extend(dumped_programs().into_iter().map(|p| ("jit tests", p)));
    for text in libpcap_listings() {
        if let Ok(p) = sift_insn::text::parse_listing(&text) {
            programs.push(("libpcap corpus", p.0));
        }
    }
    for text in compiler_listings() {
        if let Ok(p) = sift_insn::text::parse_listing(&text) {
            programs.push(("compiler listings", p.0));
        }
    }
    let mut rng = Rng::new(0x0DD_C0DE);
    for cfg in [GenConfig::libpcap(), GenConfig::linux(), GenConfig::anything()] {
        for _ in 0..30_000 {
            programs.push(("testgen", testgen::program(&mut rng, &cfg)));
        }
    }
    let mut by_source: std::collections::BTreeMap<&str, [u64; 4]> = Default::default();
    let (mut old_bytes, mut new_bytes) = (0u64, 0u64);
    let (mut old_time, mut new_time) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for (source, prog) in &programs {
        let Ok(v) = validate(prog, Mode::Libpcap).or_else(|_| validate(prog, Mode::Linux)) else {
            continue;
        };
        let t = std::time::Instant::now();
        let old = crate::lower_old::lower(&v).code;
        old_time += t.elapsed();
        let t = std::time::Instant::now();
        let new = crate::lower::lower(&v, &Regs::default()).expect("lowers").code;
        new_time += t.elapsed();
        let counts = by_source.entry(source).or_default();
        counts[0] += 1;
        old_bytes += old.len() as u64;
        new_bytes += new.len() as u64;
        if old == new {
            counts[1] += 1;
            continue;
        }
        assert!(new.len() <= old.len(), "longer: {prog:?}");
        assert_eq!(keys(&new), keys(&old), "different instructions for {prog:?}");
        counts[2] += 1;
        counts[3] += (old.len() - new.len()) as u64;
    }
    for (source, [n, same, shorter, saved]) in &by_source {
        eprintln!(
            "{source}: {n} programs, {same} byte-identical, {shorter} the same instructions in \
             shorter encodings ({saved} bytes saved)"
        );
    }
    let total: u64 = by_source.values().map(|c| c[0]).sum();
    eprintln!(
        "{total} programs compared; code {old_bytes} -> {new_bytes} bytes; lowering time \
         {old_time:?} (old) vs {new_time:?} (new)"
    );
    assert!(total > 100_000);
}
