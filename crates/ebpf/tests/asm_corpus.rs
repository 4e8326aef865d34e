//! The assembler over every `-- asm` program of the eBPF corpus (`../shared/corpus/ebpf`):
//! each assembles (except the conformance suite's `negative/` ones, which must not), prints,
//! and assembles back to the same instructions; where a file also has `-- raw`, the bytes
//! are the assembler's; every assembled program decodes to what was assembled.

use std::path::{Path, PathBuf};

use sift_ebpf::asm::{assemble, print};
use sift_ebpf::datafile::DataFile;
use sift_ebpf::{decode_bytes, encode_program};

fn corpus() -> Option<PathBuf> {
    sift_testkit::corpus("ebpf")
}

fn data_files(dir: &Path) -> Vec<PathBuf> {
    sift_ebpf::datafile::data_files(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The file's program text (`-- asm`, or the file named by `-- asm @ FILE`).
fn asm_text(path: &Path, f: &DataFile) -> Option<String> {
    if let Some(file) = f.section_file("asm") {
        return Some(std::fs::read_to_string(path.parent().unwrap().join(file)).unwrap());
    }
    f.section("asm").map(str::to_string)
}

/// (assembled, refused) over the `.data` files of `dir`.
fn round_trip(dir: &Path) -> (usize, Vec<String>) {
    let mut ok = 0;
    let mut refused = Vec::new();
    for path in data_files(dir) {
        let f = DataFile::parse(&std::fs::read_to_string(&path).unwrap());
        let Some(text) = asm_text(&path, &f) else { continue };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let insns = match assemble(&text) {
            Ok(i) => i,
            Err(e) => {
                refused.push(format!("{name}: {e}"));
                continue;
            }
        };
        let printed = print(&insns);
        assert_eq!(assemble(&printed).as_ref(), Ok(&insns), "{name}: print → assemble\n{printed}");
        let bytes: Vec<u8> = encode_program(&insns).iter().flat_map(|s| s.encode()).collect();
        if let Some(raw) = f.raw() {
            assert_eq!(raw.unwrap(), bytes, "{name}: -- raw differs from the assembly");
        }
        // Registers past r10 assemble (for negative tests) but do not decode.
        if let Ok(decoded) = decode_bytes(&bytes) {
            assert_eq!(sift_ebpf::asm::strip(&decoded), insns, "{name}: decode");
        }
        ok += 1;
    }
    (ok, refused)
}

#[test]
fn every_corpus_program_round_trips() {
    let Some(root) = corpus() else { return };
    let (n, refused) = round_trip(&root.join("conformance/tests"));
    assert_eq!((n, refused.len()), (313, 0), "{refused:#?}");
    let mut total = n;
    for sub in ["", "errors", "helpers", "extensions", "tcp-port-80", "tcp-sack"] {
        let (n, refused) = round_trip(&root.join("ubpf").join(sub));
        // err-invalid-reg-*: `%r11` assembles (upstream keeps fake registers for negative
        // tests) and the decoder refuses it; nothing in ubpf's corpus fails to assemble.
        assert!(refused.is_empty(), "ubpf/{sub}: {refused:#?}");
        total += n;
    }
    println!("{total} corpus programs assemble, print and assemble back");
    assert_eq!(total, 313 + 71, "ubpf program count changed");
}

#[test]
fn negative_programs_are_refused_with_a_location() {
    let Some(root) = corpus() else { return };
    let (_, refused) = round_trip(&root.join("conformance/negative"));
    let expected = [
        "invalid_imm32_dec_range.data: 2:12: Immediate out of 32-bit range: 2147483648",
        "invalid_imm32_hex_range.data: 2:12: Immediate out of 32-bit range: 0x100000000",
        "invalid_label.data: 1:4: Invalid label: NOT_A_LABEL",
        "invalid_lock.data: 1:1: Invalid number of operands for lock",
        "invalid_lock2.data: 1:1: Invalid number of operands for lock",
        "invalid_mnemonic.data: 2:1: Invalid mnemonic: ldxq",
        "invalid_offset.data: 1:11: Failed to decode register and offset: %r1",
        "invalid_offset_range.data: 2:15: Offset out of 16-bit range: +0x10000",
        "invalid_operand_count.data: 1:1: Invalid number of operands for mnemonic: lddw",
        "invalid_register.data: 1:9: Invalid register: %r50",
    ];
    assert_eq!(refused, expected);
}
