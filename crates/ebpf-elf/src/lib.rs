//! Loading eBPF programs from the ELF objects `clang -O2 -g -target bpf -c` writes, as libbpf
//! reads them, into programs ready for sift's VM or the kernel's `BPF_PROG_LOAD`.
//!
//! eBPF programs are written in C and reach the kernel as relocatable ELF objects; to run such
//! a program offline sift needs what libbpf does before the `bpf(2)` calls: find the programs
//! and their types, the maps they declare, and link each program (its `.text` subprograms
//! appended, calls and map references relocated). This crate is that step, free of system
//! calls and of `unsafe`. ELF itself is read with the `object` crate (section headers, symbol
//! and string tables, with their bounds checked); the eBPF conventions on top of it are here:
//!
//! * Program sections by name, as libbpf names them: `xdp`, `xdp/…`, `xdp.frags` → XDP;
//!   `tc`, `tc/…`, `tcx/…`, `classifier`, `classifier/…` → `SCHED_CLS`; `socket`, `socket/…`
//!   → `SOCKET_FILTER` ([`ProgType`]); any other executable section is an error naming it.
//!   Each global function of a program section is a program; a section without function
//!   symbols is one program. `.text` holds subprograms; an object whose only code is `.text`
//!   (ubpf's and rbpf's objects) is one program of type [`ProgType::Unspec`].
//! * Calls (`R_BPF_64_32` on a `call`): to a function of `.text` or of the same section, the
//!   callee's code is appended after the program (once) and the call's `imm` becomes the
//!   relative offset, as libbpf links; to an undefined symbol, a helper by name (ubpf's
//!   convention; ubpf's objects give it type 2).
//! * Map references (`R_BPF_64_64` on `lddw`): a map symbol gives `src_reg = 1`
//!   (`BPF_PSEUDO_MAP_FD`) with `imm` its index in [`Object::maps`]; a global variable gives
//!   `src_reg = 2` (`BPF_PSEUDO_MAP_VALUE`), `imm` its data section's map and the second slot's
//!   `imm` the offset in it. A loader patches real map fds over the indices (sift's VM takes
//!   the indices as they are).
//! * Maps ([`MapSpec`] of `sift-ebpf`), in this order: the legacy `maps` section (`struct
//!   bpf_map_def`: type, key_size, value_size, max_entries, map_flags) by offset, the
//!   BTF-defined `.maps` section by offset ([`btf`]: `__uint`/`__type` members), then each
//!   global data section (`.data*`, `.rodata*`, `.bss*`) in section order as a one-element
//!   array named after the section whose `initial` is the section's bytes (`.bss`: empty, that
//!   is zeros; `.rodata*` get `BPF_F_RDONLY_PROG`, as libbpf gives them).
//! * The `license` section's string.
//!
//! Everything else is refused with a located [`ElfError`]: CO-RE relocations (`.BTF.ext`
//! field relocations, "not supported yet" with the relocation named), externs (`.kconfig`,
//! ksyms) and function addresses, relocation types and instructions they do not fit, a pseudo
//! `lddw` without a relocation, truncated or out-of-range sections, symbols, names and
//! offsets. Nothing panics on any input (the `ebpf_elf` fuzz target checks).
#![forbid(unsafe_code)]

pub mod btf;
mod load;

pub use sift_ebpf::ProgType;
use sift_ebpf::{EbpfInsn, MapSpec};
use thiserror::Error;

pub use load::BPF_F_RDONLY_PROG;

/// One program of an object, linked: its code first, then each subprogram it calls
/// (transitively), calls and map references relocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjProgram {
    /// The section it was found in (`xdp`, `tc/ingress`).
    pub section: String,
    /// Its function's name (the section's name for a section without function symbols).
    pub name: String,
    /// Its type, from the section name.
    pub prog_type: ProgType,
    /// The linked slots (a `lddw` takes two).
    pub insns: Vec<EbpfInsn>,
}

impl ObjProgram {
    /// The slots in the kernel's encoding, 8 bytes each (what `BPF_PROG_LOAD` takes).
    pub fn bytes(&self) -> Vec<u8> {
        self.insns.iter().flat_map(EbpfInsn::encode).collect()
    }

    /// The slots of each `lddw` that references a map: (slot index, map index) — where a
    /// loader writes real map fds over the indices.
    pub fn map_references(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.insns.len() {
            let insn = self.insns[i];
            if insn.code == 0x18 {
                if matches!(insn.src, 1 | 2) {
                    out.push((i, insn.imm as u32 as usize));
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }
}

/// A loaded object: its programs, maps and license.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Every program, in section order then function order.
    pub programs: Vec<ObjProgram>,
    /// Every map, in the order map references index them (see the crate documentation).
    pub maps: Vec<MapSpec>,
    /// The `license` section's string (empty without one).
    pub license: String,
}

impl Object {
    /// Loads an object; calls to undefined functions name kernel helpers (`bpf_` prefix
    /// optional: `bpf_map_lookup_elem` or `map_lookup_elem`).
    pub fn parse(data: &[u8]) -> Result<Object, ElfError> {
        Object::parse_with_helpers(data, &|name: &str| {
            sift_ebpf::helper_id(name.strip_prefix("bpf_").unwrap_or(name))
        })
    }

    /// Loads an object; `helper` gives the number of the helper an undefined function names
    /// (ubpf's objects call their embedder's helpers by name).
    pub fn parse_with_helpers(
        data: &[u8],
        helper: &dyn Fn(&str) -> Option<u32>,
    ) -> Result<Object, ElfError> {
        load::load(data, helper)
    }

    /// The program a user names: by section (`xdp/lb`) or function name; with `None`, the only
    /// program (an error lists them when there are several).
    pub fn program(&self, name: Option<&str>) -> Result<&ObjProgram, ElfError> {
        let list = || {
            self.programs
                .iter()
                .map(|p| format!("{} ({})", p.section, p.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            Some(n) => self
                .programs
                .iter()
                .find(|p| p.section == n)
                .or_else(|| self.programs.iter().find(|p| p.name == n))
                .ok_or_else(|| ElfError::NoSuchProgram { name: n.to_string(), have: list() }),
            None if self.programs.len() == 1 => Ok(&self.programs[0]),
            None => Err(ElfError::SeveralPrograms(list())),
        }
    }
}

/// Why an object is refused; each names where (section, instruction, symbol, map).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ElfError {
    /// The ELF header is not one of an eBPF relocatable object.
    #[error("ELF header: {0}")]
    Header(String),
    /// The ELF structure (section headers, symbol and string tables) is damaged.
    #[error("ELF: {0}")]
    Malformed(String),
    /// A section's contents are wrong.
    #[error("section {section}: {message}")]
    Section {
        /// The section's name (or `#index`).
        section: String,
        /// What is wrong.
        message: String,
    },
    /// An instruction (or its relocation) is wrong.
    #[error("section {section}, instruction {index}: {message}")]
    At {
        /// The section's name.
        section: String,
        /// The slot index in the section.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// An executable section whose name gives no program type sift knows.
    #[error(
        "section {0}: unknown program type (sift knows xdp, xdp/…, tc, tc/…, classifier, socket, socket/…)"
    )]
    UnknownSection(String),
    /// A map declaration is wrong.
    #[error("map {map}: {message}")]
    Map {
        /// The map's name.
        map: String,
        /// What is wrong.
        message: String,
    },
    /// `.BTF` or `.BTF.ext` is damaged.
    #[error("BTF: {0}")]
    Btf(String),
    /// A CO-RE relocation (it needs the target kernel's BTF).
    #[error(
        "CO-RE relocation not supported yet: section {}, instruction {}: {} of {} (access {})",
        .0.section, .0.insn, .0.kind, .0.type_name, .0.access
    )]
    CoRe(btf::CoreRelo),
    /// No program in the object.
    #[error("no program (no executable section with code)")]
    NoProgram,
    /// [`Object::program`] found no program of that name.
    #[error("no program {name} (the object has: {have})")]
    NoSuchProgram {
        /// The name asked for.
        name: String,
        /// The programs there are.
        have: String,
    },
    /// [`Object::program`] without a name, and several programs.
    #[error("several programs; choose one with its section: {0}")]
    SeveralPrograms(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_give_libbpf_program_types() {
        for (name, t) in [
            ("xdp", Some(ProgType::Xdp)),
            ("xdp/lb", Some(ProgType::Xdp)),
            ("xdp.frags", Some(ProgType::Xdp)),
            ("xdpfoo", None),
            ("tc", Some(ProgType::SchedCls)),
            ("tc/ingress", Some(ProgType::SchedCls)),
            ("tcx/egress", Some(ProgType::SchedCls)),
            ("classifier", Some(ProgType::SchedCls)),
            ("classifier/x", Some(ProgType::SchedCls)),
            ("socket", Some(ProgType::SocketFilter)),
            ("socket/1", Some(ProgType::SocketFilter)),
            ("kprobe/x", None),
            (".text", None),
        ] {
            assert_eq!(ProgType::from_section(name), t, "{name}");
        }
        assert_eq!(ProgType::Xdp.number(), 6);
        assert_eq!(ProgType::SchedCls.number(), 3);
    }

    #[test]
    fn short_and_foreign_headers_are_refused() {
        assert_eq!(
            Object::parse(b"\x7fELF").unwrap_err().to_string(),
            "ELF header: not enough data for an ELF header (4 bytes of 64)"
        );
        let mut h = [0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[6] = 1;
        h[16] = 1;
        h[18] = 62; // EM_X86_64
        assert_eq!(
            Object::parse(&h).unwrap_err().to_string(),
            "ELF header: wrong machine 62, expected BPF (247) or none"
        );
        h[18] = 247;
        // No sections at all: nothing to run.
        assert_eq!(Object::parse(&h).unwrap_err(), ElfError::NoProgram);
    }
}
