//! The runner of the eBPF conformance suite and ubpf's tests (`../shared/corpus/ebpf`),
//! shared by the interpreter's tests (`sift-ebpf-vm`'s `tests/conformance.rs`) and the JIT's
//! (`sift-ebpf-jit`'s, which include this file with `#[path]`): an [`Engine`] says how a
//! loaded VM is prepared (nothing for the interpreter, compiled for the JIT) and where the
//! expected listings are.
//!
//! Each `.data` file is assembled (or its `-- raw` bytes taken), loaded with ubpf's test
//! helpers and run over its `-- mem`; the outcome (`r0`, the refusal or the fault) is
//! compared with what the file expects. ubpf's ELF tests build their object from a template
//! ([`ubpf_elf`]) and load it with `sift-ebpf-elf`. Every outcome is also listed in a golden file beside
//! this test (`golden/*.txt`, `BLESS=1` rewrites), so a change of message or value shows, and
//! the counts of each kind are asserted.

use std::path::{Path, PathBuf};

use sift_ebpf::asm::assemble;
use sift_ebpf::datafile::{DataFile, parse_hex_bytes};
use sift_ebpf::{EbpfInsn, encode_program, isa::slots_from_bytes};
use sift_ebpf_vm::{Vm, test_helpers};

/// How the suites run: `prepare` gets every loaded VM before its run (the JIT compiles it);
/// the listings are compared with `golden/NAME.txt` in `golden_dir`, rewritten under
/// `BLESS=1` only when `bless` (the interpreter's tests own them; the JIT's must match them).
pub struct Engine {
    /// What the engine does to a loaded VM.
    pub prepare: fn(&mut Vm),
    /// Where the expected listings are.
    pub golden_dir: &'static str,
    /// Whether `BLESS=1` may rewrite them.
    pub bless: bool,
}

fn corpus() -> Option<PathBuf> {
    sift_testkit::corpus("ebpf")
}

fn data_files(dir: &Path) -> Vec<PathBuf> {
    sift_ebpf::datafile::data_files(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// What running a test file gave.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    NoProgram,
    AsmError(String),
    Refused(String),
    Fault(String),
    Result(u64),
}

/// How the outcome compares with the file's expectation.
#[derive(Debug, PartialEq, Eq, Clone, Copy, PartialOrd, Ord)]
enum Verdict {
    /// The expected `r0`.
    Pass,
    /// Refused (at load or by a fault) as the file expects.
    ExpectedRefusal,
    /// Not what the file expects.
    Mismatch,
    /// The assembler refused the text (the file has no program to run).
    AsmError,
    /// Nothing to run.
    Skip,
    /// An assembler test (`-- asm` beside `-- raw`, nothing to expect from a run); the
    /// assembler's test in `sift-ebpf` compares the two.
    AssemblyOnly,
    /// A test of ubpf's C API (`-- reload`: loading twice into one VM), which has no
    /// counterpart here.
    ApiOnly,
}

fn program(path: &Path, f: &DataFile) -> Result<Option<Vec<EbpfInsn>>, String> {
    let text = match f.section_file("asm") {
        Some(file) => Some(std::fs::read_to_string(path.parent().unwrap().join(file)).unwrap()),
        None => f.section("asm").map(str::to_string),
    };
    if let Some(text) = text {
        let insns = assemble(&text).map_err(|e| e.to_string())?;
        return Ok((!insns.is_empty()).then(|| encode_program(&insns)));
    }
    match f.raw() {
        Some(raw) => {
            let bytes = raw.map_err(|e| e.to_string())?;
            slots_from_bytes(&bytes).map(Some).map_err(|e| e.to_string())
        }
        None => Ok(None),
    }
}

fn mem(path: &Path, f: &DataFile) -> Vec<u8> {
    match f.section_file("mem") {
        Some(file) => {
            // A `tcpdump -x` dump: `0x0010:  0040 a8de …`, two bytes a group.
            let text = std::fs::read_to_string(path.parent().unwrap().join(file)).unwrap();
            let digits: String = text
                .lines()
                .map(|l| l.split_once(':').map_or(l, |(_, rest)| rest))
                .flat_map(|l| l.chars().filter(char::is_ascii_hexdigit))
                .collect();
            let spaced: Vec<&str> =
                (0..digits.len() / 2).map(|k| &digits[2 * k..2 * k + 2]).collect();
            parse_hex_bytes(&spaced.join(" ")).unwrap()
        }
        None => f.mem().unwrap(),
    }
}

/// An ELF test: ubpf's object edited by the file's `-- pyelf`, loaded by `sift-ebpf-elf`
/// (calls to undefined functions name ubpf's test helpers), its one program run without
/// memory.
/// Prepares a loaded VM for the engine and runs it over `mem`.
fn run_vm(vm: &mut Vm, engine: &Engine, mem: &mut [u8]) -> Result<u64, sift_ebpf_vm::RunError> {
    (engine.prepare)(vm);
    vm.run(mem)
}

fn run_elf(pyelf: &str, engine: &Engine) -> Outcome {
    let mut t = ubpf_elf::Template::new();
    t.edit(pyelf);
    let names = test_helpers();
    let by_name = |n: &str| (0..64).find(|&i| names.name(i) == Some(n));
    let object = match sift_ebpf_elf::Object::parse_with_helpers(&t.bytes(), &by_name) {
        Ok(o) => o,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let program = match object.program(None) {
        Ok(p) => p,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    match Vm::load(&program.insns, test_helpers()) {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok(mut vm) => match run_vm(&mut vm, engine, &mut []) {
            Ok(r0) => Outcome::Result(r0),
            Err(e) => Outcome::Fault(e.to_string()),
        },
    }
}

fn run(path: &Path, engine: &Engine) -> (Outcome, Verdict) {
    let f = DataFile::parse(&std::fs::read_to_string(path).unwrap());
    let outcome = match program(path, &f) {
        _ if f.section("pyelf").is_some() => {
            run_elf(f.section("pyelf").unwrap_or_default(), engine)
        }
        Err(e) => Outcome::AsmError(e),
        Ok(None) => Outcome::NoProgram,
        Ok(Some(slots)) => match Vm::load(&slots, test_helpers()) {
            Err(e) => Outcome::Refused(e.to_string()),
            Ok(mut vm) => match run_vm(&mut vm, engine, &mut mem(path, &f)) {
                Ok(r0) => Outcome::Result(r0),
                Err(e) => Outcome::Fault(e.to_string()),
            },
        },
    };
    let expects_refusal = f.error().is_some() || f.error_pattern().is_some();
    let verdict = match (&outcome, expects_refusal) {
        (Outcome::NoProgram, _) => Verdict::Skip,
        _ if f.section("reload").is_some() => Verdict::ApiOnly,
        _ if f.result().is_none() && !expects_refusal => Verdict::AssemblyOnly,
        (Outcome::AsmError(_), _) => Verdict::AsmError,
        (Outcome::Refused(_) | Outcome::Fault(_), true) => Verdict::ExpectedRefusal,
        (Outcome::Result(r0), false) if f.result().is_some_and(|r| r == Ok(*r0)) => Verdict::Pass,
        _ => Verdict::Mismatch,
    };
    (outcome, verdict)
}

/// Runs every file of `dir`, checks the listing against `golden/NAME.txt`, returns the count
/// of each verdict.
fn suite(dir: &Path, golden: &str, engine: &Engine) -> std::collections::BTreeMap<Verdict, usize> {
    let mut listing = String::new();
    let mut counts = std::collections::BTreeMap::new();
    for path in data_files(dir) {
        let (outcome, verdict) = run(&path, engine);
        *counts.entry(verdict).or_insert(0) += 1;
        let name = path.file_name().unwrap().to_string_lossy();
        let o = match outcome {
            Outcome::NoProgram => "no program".to_string(),
            Outcome::AsmError(e) => format!("assembly error: {e}"),
            Outcome::Refused(e) => format!("refused: {e}"),
            Outcome::Fault(e) => format!("fault: {e}"),
            Outcome::Result(r) => format!("r0 = {r:#x}"),
        };
        listing.push_str(&format!("{name}: {verdict:?}: {o}\n"));
    }
    let path = Path::new(engine.golden_dir).join(format!("{golden}.txt"));
    if engine.bless {
        sift_testkit::golden(&path, &listing);
    } else {
        let expected =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let first = expected.lines().zip(listing.lines()).find(|(e, a)| e != a);
        assert!(
            expected == listing,
            "{golden}: the listing differs from {}; first difference: {first:?}",
            path.display()
        );
    }
    println!("{golden}: {counts:?}");
    counts
}

fn counts(pairs: &[(Verdict, usize)]) -> std::collections::BTreeMap<Verdict, usize> {
    pairs.iter().copied().collect()
}

/// The conformance suite: every test passes.
pub fn conformance_suite_passes(engine: &Engine) {
    let Some(root) = corpus() else { return };
    let c = suite(&root.join("conformance/tests"), "conformance", engine);
    assert_eq!(c, counts(&[(Verdict::Pass, 313)]));
}

/// The suite's negative tests: none passes.
pub fn conformance_negative_tests_are_caught(engine: &Engine) {
    // Upstream's tests of its own harness: programs that must not assemble, reserved fields
    // the decoder must refuse, and two files whose expectation is wrong on purpose (a result
    // with the wrong high bits, an error for a valid program); none may pass.
    let Some(root) = corpus() else { return };
    let c = suite(&root.join("conformance/negative"), "conformance-negative", engine);
    assert_eq!(
        c,
        counts(&[
            (Verdict::ExpectedRefusal, 45),
            (Verdict::AsmError, 10),
            (Verdict::Mismatch, 2),
            (Verdict::Skip, 3)
        ])
    );
}

/// ubpf's tests: as the golden listings say.
pub fn ubpf_tests_pass(engine: &Engine) {
    let Some(root) = corpus() else { return };
    let ubpf = root.join("ubpf");
    let c = suite(&ubpf, "ubpf", engine);
    assert_eq!(
        c,
        counts(&[(Verdict::Pass, 40), (Verdict::AssemblyOnly, 6), (Verdict::ApiOnly, 1)])
    );
    // One divergence, on purpose: err-unknown-opcode's 0x06 is `JMP32 | JA` ("gotol", ISA v4),
    // which ubpf predates; at v4 the program is `gotol +0; exit` and returns 0. The golden
    // listing shows it.
    let c = suite(&ubpf.join("errors"), "ubpf-errors", engine);
    assert_eq!(c, counts(&[(Verdict::ExpectedRefusal, 24), (Verdict::Mismatch, 1)]));
    for (sub, n) in [("helpers", 3), ("extensions", 2), ("tcp-port-80", 4), ("tcp-sack", 2)] {
        let c = suite(&ubpf.join(sub), &format!("ubpf-{sub}"), engine);
        assert_eq!(c, counts(&[(Verdict::Pass, n)]), "ubpf/{sub}");
    }
    // ELF objects (`sift-ebpf-elf`): the valid one returns sqrti(42 * 42); every damaged one
    // is refused.
    let c = suite(&ubpf.join("elf"), "ubpf-elf", engine);
    assert_eq!(c, counts(&[(Verdict::Pass, 1), (Verdict::ExpectedRefusal, 20)]));
}

/// ubpf's ELF tests (`ubpf/elf/*.data`) give no object: a `-- pyelf` section edits the fields
/// of the object ubpf's test framework builds (`test_framework/test_elf.py`: an ELF header,
/// five section headers — null, `.text`, `.strtab`, `.symtab`, `.rel` — the text
/// `mov r1, 1764; call sqrti; exit`, the strings, two symbols and the relocation of the call
/// to `sqrti`). This rebuilds that object field by field and applies the edits, which are
/// assignments (`text_shdr.sh_size = 1024`, `sqrti_sym.st_name += 1`, `ehdr.e_ident.EI_DATA =
/// 'ELFDATA2MSB'`) and one replacement of the whole object by four bytes (`ehdr-short`).
mod ubpf_elf {
    use std::collections::BTreeMap;

    /// Each part's kind and fields (name → value), in file order.
    pub struct Template {
        order: Vec<String>,
        parts: BTreeMap<String, Part>,
    }

    enum Part {
        Fields(&'static [(&'static str, usize)], BTreeMap<String, u64>),
        Bytes(Vec<u8>),
    }

    /// Field names and byte widths of each structure (`Elf64_Ehdr`, `Elf64_Shdr`, `Elf64_Sym`,
    /// `Elf64_Rel`).
    const EHDR: &[(&str, usize)] = &[
        ("e_ident.EI_MAG", 4),
        ("e_ident.EI_CLASS", 1),
        ("e_ident.EI_DATA", 1),
        ("e_ident.EI_VERSION", 1),
        ("e_ident.EI_OSABI", 1),
        ("e_ident.EI_ABIVERSION", 1),
        ("e_ident.pad", 7),
        ("e_type", 2),
        ("e_machine", 2),
        ("e_version", 4),
        ("e_entry", 8),
        ("e_phoff", 8),
        ("e_shoff", 8),
        ("e_flags", 4),
        ("e_ehsize", 2),
        ("e_phentsize", 2),
        ("e_phnum", 2),
        ("e_shentsize", 2),
        ("e_shnum", 2),
        ("e_shstrndx", 2),
    ];
    const SHDR: &[(&str, usize)] = &[
        ("sh_name", 4),
        ("sh_type", 4),
        ("sh_flags", 8),
        ("sh_addr", 8),
        ("sh_offset", 8),
        ("sh_size", 8),
        ("sh_link", 4),
        ("sh_info", 4),
        ("sh_addralign", 8),
        ("sh_entsize", 8),
    ];
    const SYM: &[(&str, usize)] = &[
        ("st_name", 4),
        ("st_info", 1),
        ("st_other", 1),
        ("st_shndx", 2),
        ("st_value", 8),
        ("st_size", 8),
    ];
    const REL: &[(&str, usize)] = &[("r_offset", 8), ("r_info", 8)];

    /// The symbolic values the edits use (elftools' names).
    fn constant(name: &str) -> u64 {
        match name {
            "ELFCLASS32" => 1,
            "ELFCLASS64" => 2,
            "ELFDATA2LSB" => 1,
            "ELFDATA2MSB" => 2,
            "ELFOSABI_SYSV" => 0,
            "ELFOSABI_LINUX" => 3,
            "SHT_NULL" => 0,
            "SHT_PROGBITS" => 1,
            _ => panic!("pyelf constant {name} unknown to this test"),
        }
    }

    impl Template {
        /// ubpf's template object.
        pub fn new() -> Template {
            let mut t = Template { order: Vec::new(), parts: BTreeMap::new() };
            let mut add = |name: &str, layout: &'static [(&'static str, usize)], v: &[u64]| {
                let fields = layout.iter().map(|(n, _)| n.to_string()).zip(v.iter().copied());
                t.parts.insert(name.into(), Part::Fields(layout, fields.collect()));
                t.order.push(name.into());
            };
            // 0x7f 'E' 'L' 'F' read little-endian; class 64, LSB, EV_CURRENT, SYSV; ET_REL,
            // EM_NONE; section headers at 64, five of 64 bytes, strings in section 2.
            add(
                "ehdr",
                EHDR,
                &[0x464c457f, 2, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 64, 0, 64, 0, 0, 64, 5, 2],
            );
            add("first_shdr", SHDR, &[0; 10]);
            add("text_shdr", SHDR, &[1, 1, 6, 0, 384, 24, 0, 0, 8, 0]);
            add("strtab_shdr", SHDR, &[7, 3, 0, 0, 408, 34, 0, 0, 1, 0]);
            add("symtab_shdr", SHDR, &[15, 2, 0, 0, 442, 48, 2, 0, 8, 24]);
            add("rel_shdr", SHDR, &[23, 9, 0, 0, 490, 16, 3, 1, 8, 16]);
            // mov r1, 1764; call 0xffffffff; exit
            let text = [
                0xb7, 0x01, 0, 0, 0xe4, 0x06, 0, 0, 0x85, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x95, 0,
                0, 0, 0, 0, 0, 0,
            ];
            t.parts.insert("text".into(), Part::Bytes(text.to_vec()));
            t.order.push("text".into());
            t.parts.insert(
                "strtab".into(),
                Part::Bytes(b"\0.text\0.strtab\0.symtab\0.rel\0sqrti\0".to_vec()),
            );
            t.order.push("strtab".into());
            // STB_WEAK, STT_FUNC.
            let mut add = |name: &str, layout: &'static [(&'static str, usize)], v: &[u64]| {
                let fields = layout.iter().map(|(n, _)| n.to_string()).zip(v.iter().copied());
                t.parts.insert(name.into(), Part::Fields(layout, fields.collect()));
                t.order.push(name.into());
            };
            add("first_sym", SYM, &[0, 0x22, 0, 0, 0, 0]);
            add("sqrti_sym", SYM, &[28, 0x22, 0, 0, 0, 0]);
            add("sqrti_rel", REL, &[8, (1 << 32) | 2]);
            t
        }

        /// Applies a `-- pyelf` section.
        pub fn edit(&mut self, pyelf: &str) {
            for line in pyelf.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if line == "del order[:]" {
                    self.order.clear();
                } else if let Some(name) =
                    line.strip_prefix("order.append('").and_then(|r| r.strip_suffix("')"))
                {
                    self.order.push(name.to_string());
                } else if let Some((name, lit)) = line.split_once(" = b'") {
                    let bytes = bytes_literal(lit.strip_suffix('\'').expect("bytes literal"));
                    self.parts.insert(name.to_string(), Part::Bytes(bytes));
                } else {
                    let (lhs, op, rhs) = if let Some((l, r)) = line.split_once(" += ") {
                        (l, "+=", r)
                    } else {
                        let (l, r) =
                            line.split_once(" = ").unwrap_or_else(|| panic!("pyelf: {line}"));
                        (l, "=", r)
                    };
                    let (part, field) = lhs.split_once('.').expect("part.field");
                    let value = match rhs.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
                        Some(c) => constant(c),
                        None => eval(rhs),
                    };
                    let Some(Part::Fields(_, fields)) = self.parts.get_mut(part) else {
                        panic!("pyelf: no structure {part}")
                    };
                    let f =
                        fields.get_mut(field).unwrap_or_else(|| panic!("pyelf: no field {lhs}"));
                    *f = if op == "+=" { *f + value } else { value };
                }
            }
        }

        /// The object's bytes.
        pub fn bytes(&self) -> Vec<u8> {
            let mut out = Vec::new();
            for name in &self.order {
                match &self.parts[name] {
                    Part::Bytes(b) => out.extend_from_slice(b),
                    Part::Fields(layout, fields) => {
                        for (f, width) in layout.iter() {
                            let v = fields[*f];
                            out.extend_from_slice(&v.to_le_bytes()[..(*width).min(8)]);
                            out.extend(std::iter::repeat_n(0, width.saturating_sub(8)));
                        }
                    }
                }
            }
            out
        }
    }

    fn bytes_literal(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                assert_eq!(chars.next(), Some('x'), "only \\x escapes");
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap());
            } else {
                out.push(c as u8);
            }
        }
        out
    }

    /// Integers with `(`, `)`, `<<` and `|`: what the edits' expressions use.
    fn eval(s: &str) -> u64 {
        fn expr(t: &[&str], i: &mut usize) -> u64 {
            let mut v = term(t, i);
            while t.get(*i) == Some(&"|") {
                *i += 1;
                v |= term(t, i);
            }
            v
        }
        fn term(t: &[&str], i: &mut usize) -> u64 {
            let mut v = atom(t, i);
            while t.get(*i) == Some(&"<<") {
                *i += 1;
                v <<= atom(t, i);
            }
            v
        }
        fn atom(t: &[&str], i: &mut usize) -> u64 {
            let tok = t[*i];
            *i += 1;
            if tok == "(" {
                let v = expr(t, i);
                assert_eq!(t[*i], ")");
                *i += 1;
                v
            } else {
                tok.parse().unwrap_or_else(|_| panic!("pyelf number {tok}"))
            }
        }
        let spaced = s.replace('(', " ( ").replace(')', " ) ");
        let tokens: Vec<&str> = spaced.split_whitespace().collect();
        let mut i = 0;
        let v = expr(&tokens, &mut i);
        assert_eq!(i, tokens.len(), "pyelf expression {s}");
        v
    }
}
