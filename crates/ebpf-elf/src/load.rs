//! The loader proper: the ELF header's checks, sections by role, maps, and the linking of
//! each program (subprograms appended, relocations applied).

use std::collections::{BTreeMap, HashMap};

use object::LittleEndian as LE;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader, SectionTable, Sym, SymbolTable};
use sift_ebpf::{EbpfInsn, MapSpec, MapType};

use crate::btf::{Btf, first_core_relo};
use crate::{ElfError, ObjProgram, Object, ProgType};

/// `BPF_F_RDONLY_PROG`: the program may not write the map (libbpf's flag for `.rodata`).
pub const BPF_F_RDONLY_PROG: u32 = 1 << 7;

/// `R_BPF_64_64`: a 64-bit immediate (`lddw`) names a map or a global variable.
const R_BPF_64_64: u32 = 1;
/// `R_BPF_64_ABS64` — and ubpf's number for a call to a helper by name.
const R_BPF_64_ABS64: u32 = 2;
/// `R_BPF_64_ABS32`.
const R_BPF_64_ABS32: u32 = 3;
/// `R_BPF_64_NODYLD32`.
const R_BPF_64_NODYLD32: u32 = 4;
/// `R_BPF_64_32`: a `call`'s target.
const R_BPF_64_32: u32 = 10;

const LDDW: u8 = 0x18;
const CALL: u8 = 0x85;
const PSEUDO_CALL: u8 = 1;
const PSEUDO_MAP_FD: u8 = 1;
const PSEUDO_MAP_VALUE: u8 = 2;

type Header = elf::FileHeader64<LE>;
type Shdr = elf::SectionHeader64<LE>;
type Syms<'d> = SymbolTable<'d, elf::FileHeader64<LE>, &'d [u8]>;

fn malformed(what: &str, e: impl std::fmt::Display) -> ElfError {
    ElfError::Malformed(format!("{what}: {e}"))
}

/// The `e_ident` and header fields `object` does not check: a 64-bit little-endian
/// relocatable object for BPF (or no machine, as ubpf's objects say), System V ABI.
fn check_header(data: &[u8]) -> Result<(), ElfError> {
    let h = |m: &str| Err(ElfError::Header(m.to_string()));
    if data.len() < 64 {
        return h(&format!("not enough data for an ELF header ({} bytes of 64)", data.len()));
    }
    if data[..4] != [0x7f, b'E', b'L', b'F'] {
        return h("not an ELF file (bad magic)");
    }
    if data[4] != elf::ELFCLASS64 {
        return h(&format!("wrong class {} (eBPF objects are 64-bit)", data[4]));
    }
    if data[5] != elf::ELFDATA2LSB {
        return h(&format!("wrong byte order {} (sift reads little-endian eBPF)", data[5]));
    }
    if data[6] != elf::EV_CURRENT {
        return h(&format!("wrong version {}", data[6]));
    }
    if data[7] != elf::ELFOSABI_SYSV {
        return h(&format!("wrong OS ABI {}", data[7]));
    }
    let e_type = u16::from_le_bytes([data[16], data[17]]);
    if e_type != elf::ET_REL {
        return h(&format!("wrong type {e_type}, expected relocatable (1)"));
    }
    let machine = u16::from_le_bytes([data[18], data[19]]);
    if machine != elf::EM_BPF && machine != elf::EM_NONE {
        return h(&format!("wrong machine {machine}, expected BPF (247) or none"));
    }
    Ok(())
}

/// A code section: its bytes as slots, its functions and its relocations.
struct Code<'d> {
    name: String,
    slots: Vec<EbpfInsn>,
    /// Function symbols: (first slot, slots, name), by start.
    functions: Vec<(usize, usize, String)>,
    /// Relocations by slot: (type, symbol).
    relocs: BTreeMap<usize, (u32, &'d elf::Sym64<LE>, String)>,
}

/// Where a symbol's section leads.
#[derive(Clone, Copy)]
enum Target {
    /// A map of the legacy or BTF map sections, by index.
    Map(usize),
    /// A global data section's map, by index.
    Data(usize),
    /// Code.
    Code,
}

struct Loader<'d> {
    data: &'d [u8],
    sections: SectionTable<'d, Header, &'d [u8]>,
    names: Vec<String>,
}

impl<'d> Loader<'d> {
    fn section_bytes(&self, index: usize) -> Result<&'d [u8], ElfError> {
        let shdr = self.shdr(index)?;
        shdr.data(LE, self.data).map_err(|_| ElfError::Section {
            section: self.names[index].clone(),
            message: format!(
                "offset {} or size {} past the end of the file ({} bytes)",
                shdr.sh_offset(LE),
                shdr.sh_size(LE),
                self.data.len()
            ),
        })
    }

    fn shdr(&self, index: usize) -> Result<&'d Shdr, ElfError> {
        self.sections
            .section(object::SectionIndex(index))
            .map_err(|e| malformed(&format!("section {index}"), e))
    }

    fn section_err(&self, index: usize, message: impl Into<String>) -> ElfError {
        ElfError::Section { section: self.names[index].clone(), message: message.into() }
    }
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    b.get(off..off + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn is_data_section(name: &str) -> bool {
    [".data", ".rodata", ".bss"]
        .iter()
        .any(|p| name == *p || name.strip_prefix(p).is_some_and(|rest| rest.starts_with('.')))
}

pub(crate) fn load(data: &[u8], helper: &dyn Fn(&str) -> Option<u32>) -> Result<Object, ElfError> {
    check_header(data)?;
    let header = Header::parse(data).map_err(|e| malformed("header", e))?;
    let sections = header.sections(LE, data).map_err(|e| malformed("section headers", e))?;
    let mut names = Vec::with_capacity(sections.len());
    for (i, shdr) in sections.enumerate() {
        let name = sections
            .section_name(LE, shdr)
            .map_err(|e| malformed(&format!("section {}'s name", i.0), e))?;
        names.push(String::from_utf8_lossy(name).into_owned());
    }
    let l = Loader { data, sections, names };
    let symtab_index = l.sections.iter().position(|s| s.sh_type(LE) == elf::SHT_SYMTAB);
    let symbols: Syms<'_> =
        l.sections.symbols(LE, data, elf::SHT_SYMTAB).map_err(|e| malformed("symbol table", e))?;

    // Symbols by section, and the relocation section of each section, found once.
    let mut symbols_of: HashMap<usize, Vec<&elf::Sym64<LE>>> = HashMap::new();
    for sym in symbols.iter() {
        symbols_of.entry(usize::from(sym.st_shndx(LE))).or_default().push(sym);
    }
    let mut rel_of: HashMap<usize, usize> = HashMap::new();
    for (i, s) in l.sections.enumerate() {
        if s.sh_type(LE) == elf::SHT_REL {
            rel_of.entry(s.sh_info(LE) as usize).or_insert(i.0);
        }
    }
    let in_section = |sec: usize| symbols_of.get(&sec).map(Vec::as_slice).unwrap_or_default();

    // Sections by role.
    let mut code_sections = Vec::new();
    let mut text = None;
    let (mut legacy_maps, mut btf_maps) = (None, None);
    let mut data_sections = Vec::new();
    let (mut license, mut btf_index, mut btf_ext_index) = (String::new(), None, None);
    for (i, shdr) in l.sections.enumerate() {
        let i = i.0;
        let name = l.names[i].as_str();
        let (kind, flags) = (shdr.sh_type(LE), shdr.sh_flags(LE));
        if kind == elf::SHT_PROGBITS
            && flags & u64::from(elf::SHF_EXECINSTR) != 0
            && shdr.sh_size(LE) > 0
        {
            if name == ".text" {
                text = Some(i);
            } else {
                let t = ProgType::from_section(name)
                    .ok_or_else(|| ElfError::UnknownSection(name.to_string()))?;
                code_sections.push((i, t));
            }
        } else if name == "maps" {
            legacy_maps = Some(i);
        } else if name == ".maps" {
            btf_maps = Some(i);
        } else if (kind == elf::SHT_PROGBITS || kind == elf::SHT_NOBITS)
            && flags & u64::from(elf::SHF_ALLOC) != 0
            && is_data_section(name)
            && shdr.sh_size(LE) > 0
        {
            data_sections.push(i);
        } else if name == "license" {
            let b = l.section_bytes(i)?;
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            license = String::from_utf8_lossy(&b[..end]).into_owned();
        } else if name == ".BTF" {
            btf_index = Some(i);
        } else if name == ".BTF.ext" {
            btf_ext_index = Some(i);
        }
    }
    let btf = btf_index.map(|i| l.section_bytes(i).and_then(Btf::parse)).transpose()?;
    if let Some(i) = btf_ext_index
        && let Some(relo) = first_core_relo(l.section_bytes(i)?, btf.as_ref())?
    {
        return Err(ElfError::CoRe(relo));
    }

    // Maps: legacy, BTF-defined, global data; symbol (section, offset) → index.
    let mut maps = Vec::new();
    let mut map_at: HashMap<(usize, u64), usize> = HashMap::new();
    let section_symbols = |sec: usize| -> Result<Vec<(u64, String)>, ElfError> {
        let mut v = Vec::new();
        for &sym in in_section(sec) {
            if sym.st_type() != elf::STT_SECTION && sym.st_name(LE) != 0 {
                let n = symbols.symbol_name(LE, sym).map_err(|e| malformed("symbol name", e))?;
                v.push((sym.st_value(LE), String::from_utf8_lossy(n).into_owned()));
            }
        }
        v.sort();
        v.dedup_by(|a, b| a.0 == b.0);
        Ok(v)
    };
    if let Some(sec) = legacy_maps {
        let bytes = l.section_bytes(sec)?;
        let syms = section_symbols(sec)?;
        if !syms.is_empty() {
            let def_size = bytes.len() / syms.len();
            if def_size < 16 || bytes.len() % syms.len() != 0 {
                return Err(l.section_err(
                    sec,
                    format!("{} bytes do not hold {} map definitions", bytes.len(), syms.len()),
                ));
            }
            for (off, name) in syms {
                let off = usize::try_from(off).unwrap_or(usize::MAX);
                if off % def_size != 0 || off >= bytes.len() {
                    return Err(ElfError::Map {
                        map: name,
                        message: format!("definition at offset {off} is misplaced"),
                    });
                }
                let def = &bytes[off..off + def_size];
                let f = |k: usize| if 4 * k + 4 <= def_size { u32_at(def, 4 * k) } else { 0 };
                let map_type = MapType::from_u32(f(0)).ok_or_else(|| ElfError::Map {
                    map: name.clone(),
                    message: format!("unknown map type {}", f(0)),
                })?;
                map_at.insert((sec, off as u64), maps.len());
                maps.push(MapSpec {
                    name,
                    map_type,
                    key_size: f(1),
                    value_size: f(2),
                    max_entries: f(3),
                    flags: f(4),
                    initial: Vec::new(),
                });
            }
        }
    }
    if let Some(sec) = btf_maps {
        let syms = section_symbols(sec)?;
        if !syms.is_empty() {
            let btf =
                btf.as_ref().ok_or_else(|| l.section_err(sec, "BTF-defined maps need .BTF"))?;
            let vars = btf.datasec_vars(".maps")?;
            for (off, name) in syms {
                let (_, ty) = vars.iter().find(|(n, _)| *n == name).ok_or_else(|| {
                    ElfError::Map { map: name.clone(), message: "no BTF variable".into() }
                })?;
                let spec = btf_map(btf, *ty, &name)?;
                map_at.insert((sec, off), maps.len());
                maps.push(spec);
            }
        }
        if let Some(rel) = rel_of.get(&sec).copied() {
            return Err(l.section_err(
                rel,
                "relocations of .maps (map-in-map or program array initial values) are not supported yet",
            ));
        }
    }
    let first_data_map = maps.len();
    for &sec in &data_sections {
        let shdr = l.shdr(sec)?;
        let size = u32::try_from(shdr.sh_size(LE))
            .map_err(|_| l.section_err(sec, "too large for a map value"))?;
        let initial = if shdr.sh_type(LE) == elf::SHT_NOBITS {
            Vec::new()
        } else {
            l.section_bytes(sec)?.to_vec()
        };
        let flags = if l.names[sec].starts_with(".rodata") { BPF_F_RDONLY_PROG } else { 0 };
        maps.push(MapSpec {
            name: l.names[sec].clone(),
            map_type: MapType::Array,
            key_size: 4,
            value_size: size,
            max_entries: 1,
            flags,
            initial,
        });
    }
    // An object with only `.text` (ubpf's, rbpf's) is one program.
    if code_sections.is_empty() {
        match text {
            Some(t) => code_sections.push((t, ProgType::Unspec)),
            None => return Err(ElfError::NoProgram),
        }
    }
    let target_of = |sec: usize, value: u64| -> Option<Target> {
        if let Some(k) = data_sections.iter().position(|&s| s == sec) {
            return Some(Target::Data(first_data_map + k));
        }
        if Some(sec) == legacy_maps || Some(sec) == btf_maps {
            return map_at.get(&(sec, value)).map(|&i| Target::Map(i));
        }
        (Some(sec) == text || code_sections.iter().any(|&(s, _)| s == sec)).then_some(Target::Code)
    };

    // Code sections, with their functions and relocations.
    let mut code: HashMap<usize, Code<'_>> = HashMap::new();
    for sec in code_sections.iter().map(|&(s, _)| s).chain(text) {
        if code.contains_key(&sec) {
            continue;
        }
        let bytes = l.section_bytes(sec)?;
        if bytes.len() % 8 != 0 {
            return Err(
                l.section_err(sec, format!("{} bytes is not whole instructions", bytes.len()))
            );
        }
        let slots: Vec<EbpfInsn> = bytes
            .chunks_exact(8)
            .map(|c| EbpfInsn::decode([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let mut functions = Vec::new();
        for &sym in in_section(sec) {
            if sym.st_type() == elf::STT_FUNC {
                let name = symbols.symbol_name(LE, sym).map_err(|e| malformed("symbol name", e))?;
                let name = String::from_utf8_lossy(name).into_owned();
                let (value, size) = (sym.st_value(LE), sym.st_size(LE));
                if value % 8 != 0
                    || size % 8 != 0
                    || value.checked_add(size).is_none_or(|end| end > bytes.len() as u64)
                {
                    return Err(l.section_err(
                        sec,
                        format!(
                            "function {name} ({size} bytes at {value}) is not inside the section"
                        ),
                    ));
                }
                functions.push(((value / 8) as usize, (size / 8) as usize, name));
            }
        }
        functions.sort();
        let mut relocs = BTreeMap::new();
        if let Some(rel) = rel_of.get(&sec).copied() {
            if Some(l.shdr(rel)?.sh_link(LE) as usize) != symtab_index {
                return Err(l.section_err(
                    rel,
                    format!("bad symbol table section index {}", l.shdr(rel)?.sh_link(LE)),
                ));
            }
            let rb = l.section_bytes(rel)?;
            if rb.len() % 16 != 0 {
                return Err(l.section_err(rel, "size is not whole Elf64_Rel entries"));
            }
            for (k, e) in rb.chunks_exact(16).enumerate() {
                let offset = u64::from_le_bytes(e[..8].try_into().unwrap_or_default());
                let info = u64::from_le_bytes(e[8..].try_into().unwrap_or_default());
                let (sym_index, rtype) = ((info >> 32) as usize, info as u32);
                if offset % 8 != 0 || offset >= bytes.len() as u64 {
                    return Err(l.section_err(
                        rel,
                        format!("relocation {k}: bad relocation offset {offset}"),
                    ));
                }
                let sym = symbols.symbol(object::SymbolIndex(sym_index)).map_err(|_| {
                    l.section_err(rel, format!("relocation {k}: bad symbol index {sym_index}"))
                })?;
                let name = symbols.symbol_name(LE, sym).map_err(|_| {
                    l.section_err(
                        rel,
                        format!("relocation {k}: bad symbol name (offset {})", sym.st_name(LE)),
                    )
                })?;
                relocs.insert(
                    (offset / 8) as usize,
                    (rtype, sym, String::from_utf8_lossy(name).into_owned()),
                );
            }
        }
        code.insert(sec, Code { name: l.names[sec].clone(), slots, functions, relocs });
    }

    // Programs: each global function of a program section, or the whole section.
    let mut programs = Vec::new();
    for &(sec, prog_type) in &code_sections {
        let c = &code[&sec];
        let entries: Vec<(usize, usize, String)> = {
            let globals: std::collections::HashSet<u64> = in_section(sec)
                .iter()
                .filter(|s| s.st_type() == elf::STT_FUNC && s.st_bind() != elf::STB_LOCAL)
                .map(|s| s.st_value(LE) / 8)
                .collect();
            let v: Vec<_> =
                c.functions.iter().filter(|f| globals.contains(&(f.0 as u64))).cloned().collect();
            if v.is_empty() { vec![(0, c.slots.len(), c.name.clone())] } else { v }
        };
        for (start, len, name) in entries {
            let insns = link(&code, sec, start, len, &target_of, helper, &maps)?;
            programs.push(ObjProgram { section: c.name.clone(), name, prog_type, insns });
        }
    }
    Ok(Object { programs, maps, license })
}

/// A BTF-defined map's spec from its variable's type.
fn btf_map(btf: &Btf, ty: u32, name: &str) -> Result<MapSpec, ElfError> {
    let map_err = |message: String| ElfError::Map { map: name.to_string(), message };
    let mut spec = MapSpec {
        name: name.to_string(),
        map_type: MapType::Unspec,
        key_size: 0,
        value_size: 0,
        max_entries: 0,
        flags: 0,
        initial: Vec::new(),
    };
    let mut typed = false;
    for (member, m) in btf.map_members(ty).map_err(|e| map_err(e.to_string()))? {
        let uint = || m.array_len.ok_or_else(|| map_err(format!("{member} is not __uint(…)")));
        let size = || -> Result<u32, ElfError> {
            m.pointee_size
                .and_then(|s| u32::try_from(s).ok())
                .ok_or_else(|| map_err(format!("{member}: the type has no size")))
        };
        match member.as_str() {
            "type" => {
                let t = uint()?;
                spec.map_type =
                    MapType::from_u32(t).ok_or_else(|| map_err(format!("unknown map type {t}")))?;
                typed = true;
            }
            "key_size" => spec.key_size = uint()?,
            "value_size" => spec.value_size = uint()?,
            "key" => spec.key_size = size()?,
            "value" => spec.value_size = size()?,
            "max_entries" => spec.max_entries = uint()?,
            "map_flags" => spec.flags = uint()?,
            // Matter to the kernel's placement and to pinning only.
            "numa_node" | "pinning" | "map_extra" => {
                uint()?;
            }
            other => return Err(map_err(format!("member {other} is not supported yet"))),
        }
    }
    if !typed {
        return Err(map_err("no type".into()));
    }
    Ok(spec)
}

/// Links the function at slots `start..start+len` of section `sec`: its code, then each
/// subprogram it calls (once each, in the order first called), relocations applied.
#[allow(clippy::too_many_arguments)]
fn link(
    code: &HashMap<usize, Code<'_>>,
    sec: usize,
    start: usize,
    len: usize,
    target_of: &dyn Fn(usize, u64) -> Option<Target>,
    helper: &dyn Fn(&str) -> Option<u32>,
    maps: &[MapSpec],
) -> Result<Vec<EbpfInsn>, ElfError> {
    let mut out: Vec<EbpfInsn> = Vec::new();
    // (section, first slot) → where it was placed; functions to patch.
    let mut placed: HashMap<(usize, usize), usize> = HashMap::new();
    let mut work = vec![(sec, start, len, 0usize)];
    out.extend_from_slice(&code[&sec].slots[start..start + len]);
    placed.insert((sec, start), 0);
    while let Some((sec, start, len, at)) = work.pop() {
        let c = &code[&sec];
        let at_err = |index: usize, message: String| ElfError::At {
            section: c.name.clone(),
            index,
            message,
        };
        for i in start..start + len {
            let insn = c.slots[i];
            let here = at + (i - start);
            // The call's target in this section's slots, if it is a bpf-to-bpf call.
            let mut call_target: Option<(usize, i64)> = None;
            if let Some((rtype, sym, name)) = c.relocs.get(&i) {
                let sym_sec = usize::from(sym.st_shndx(LE));
                let value = sym.st_value(LE);
                match *rtype {
                    R_BPF_64_64 => {
                        if insn.code != LDDW || i + 1 >= start + len {
                            return Err(at_err(i, format!("R_BPF_64_64 ({name}) on a non-lddw")));
                        }
                        match target_of(sym_sec, value) {
                            Some(Target::Map(m)) => {
                                out[here].src = PSEUDO_MAP_FD;
                                out[here].imm = m as i32;
                            }
                            Some(Target::Data(m)) => {
                                let off = i64::from(insn.imm).wrapping_add(value as i64);
                                if off < 0 || off >= i64::from(maps[m].value_size) {
                                    return Err(at_err(
                                        i,
                                        format!("{name}: offset {off} outside {}", maps[m].name),
                                    ));
                                }
                                out[here].src = PSEUDO_MAP_VALUE;
                                out[here].imm = m as i32;
                                out[here + 1].imm = off as i32;
                            }
                            Some(Target::Code) => {
                                return Err(at_err(
                                    i,
                                    format!("address of function {name} (callx) not supported yet"),
                                ));
                            }
                            None if sym_sec == 0 => {
                                return Err(at_err(
                                    i,
                                    format!("extern {name} (kconfig, ksym) not supported yet"),
                                ));
                            }
                            None => {
                                return Err(at_err(
                                    i,
                                    format!("{name} is not a map or global variable"),
                                ));
                            }
                        }
                    }
                    R_BPF_64_32 | R_BPF_64_ABS64 if insn.code == CALL => {
                        if sym_sec == 0 {
                            let id = helper(name)
                                .ok_or_else(|| at_err(i, format!("function '{name}' not found")))?;
                            out[here].src = 0;
                            out[here].imm = id as i32;
                        } else if *rtype == R_BPF_64_32
                            && insn.src == PSEUDO_CALL
                            && matches!(target_of(sym_sec, value), Some(Target::Code))
                        {
                            let slot = (value / 8) as i64 + i64::from(insn.imm) + 1;
                            call_target = Some((sym_sec, slot));
                        } else {
                            return Err(at_err(i, format!("call to {name}, which is not code")));
                        }
                    }
                    R_BPF_64_32 => {
                        return Err(at_err(i, format!("R_BPF_64_32 ({name}) on a non-call")));
                    }
                    R_BPF_64_ABS64 | R_BPF_64_ABS32 | R_BPF_64_NODYLD32 => {
                        return Err(at_err(
                            i,
                            format!("data relocation type {rtype} ({name}) in code not supported"),
                        ));
                    }
                    t => return Err(at_err(i, format!("bad relocation type {t} ({name})"))),
                }
            } else if insn.code == LDDW && insn.src != 0 {
                // A pseudo `lddw` (map, global, BTF id) says what it loads by its relocation.
                return Err(at_err(i, format!("lddw with src_reg {} and no relocation", insn.src)));
            } else if insn.code == CALL && insn.src == PSEUDO_CALL {
                call_target = Some((sec, i as i64 + i64::from(insn.imm) + 1));
            }
            let Some((tsec, slot)) = call_target else { continue };
            let tc = code.get(&tsec).ok_or_else(|| at_err(i, "call into no code".into()))?;
            let slot = usize::try_from(slot)
                .ok()
                .filter(|&s| s < tc.slots.len())
                .ok_or_else(|| at_err(i, format!("call target {slot} outside {}", tc.name)))?;
            let dest = if tsec == sec && slot >= start && slot < start + len {
                at + (slot - start)
            } else {
                let (fstart, flen) = match tc.functions.iter().find(|f| f.0 == slot) {
                    Some(f) => (f.0, f.1),
                    None if tc.functions.is_empty() => (slot, tc.slots.len() - slot),
                    None => {
                        return Err(at_err(
                            i,
                            format!("call to slot {slot} of {}: not a function's start", tc.name),
                        ));
                    }
                };
                match placed.get(&(tsec, fstart)) {
                    Some(&p) => p,
                    None => {
                        let p = out.len();
                        if p + flen > 1 << 20 {
                            return Err(at_err(i, "linked program too large".into()));
                        }
                        out.extend_from_slice(&tc.slots[fstart..fstart + flen]);
                        placed.insert((tsec, fstart), p);
                        work.push((tsec, fstart, flen, p));
                        p
                    }
                }
            };
            out[here].src = PSEUDO_CALL;
            out[here].imm = i32::try_from(dest as i64 - here as i64 - 1)
                .map_err(|_| at_err(i, "call offset overflows".into()))?;
        }
    }
    Ok(out)
}
