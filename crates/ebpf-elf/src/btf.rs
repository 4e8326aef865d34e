//! Just enough BTF (the kernel's type format, `.BTF` and `.BTF.ext` sections) to read
//! BTF-defined maps and to refuse CO-RE relocations by name.
//!
//! A BTF-defined map is a variable in the `.maps` section whose type is a struct of pointer
//! members: `__uint(name, val)` is `int (*name)[val]` (the value is the array's element
//! count) and `__type(name, T)` is `T *name` (the size is `T`'s). Everything else in BTF (line
//! information, function prototypes) is for the kernel's verifier log and is not read here.

use crate::ElfError;

const MAGIC: u16 = 0xeb9f;

/// BTF kinds (`BTF_KIND_*`).
mod kind {
    pub const INT: u32 = 1;
    pub const PTR: u32 = 2;
    pub const ARRAY: u32 = 3;
    pub const STRUCT: u32 = 4;
    pub const UNION: u32 = 5;
    pub const ENUM: u32 = 6;
    pub const FWD: u32 = 7;
    pub const TYPEDEF: u32 = 8;
    pub const VOLATILE: u32 = 9;
    pub const CONST: u32 = 10;
    pub const RESTRICT: u32 = 11;
    pub const FUNC: u32 = 12;
    pub const FUNC_PROTO: u32 = 13;
    pub const VAR: u32 = 14;
    pub const DATASEC: u32 = 15;
    pub const FLOAT: u32 = 16;
    pub const DECL_TAG: u32 = 17;
    pub const TYPE_TAG: u32 = 18;
    pub const ENUM64: u32 = 19;
}

/// One type: its kind, name, `size`/`type` field and its trailing records (members,
/// array description, section variables) as `u32` triples or pairs.
#[derive(Clone, Debug)]
struct Type {
    kind: u32,
    name: u32,
    size_or_type: u32,
    /// STRUCT/UNION members and DATASEC entries: (name or type, type or offset, offset or
    /// size); ARRAY: one (elem type, index type, nelems).
    triples: Vec<[u32; 3]>,
}

/// A parsed `.BTF` section: types by id (id 0 is `void`) and the string table.
#[derive(Clone, Debug)]
pub struct Btf {
    types: Vec<Type>,
    strings: Vec<u8>,
}

fn err(message: impl Into<String>) -> ElfError {
    ElfError::Btf(message.into())
}

fn u32_at(b: &[u8], off: usize) -> Result<u32, ElfError> {
    b.get(off..off.wrapping_add(4))
        .filter(|_| off <= usize::MAX - 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| err(format!("truncated at byte {off}")))
}

/// A `.BTF`/`.BTF.ext` header's magic and length, checked.
fn header(b: &[u8], what: &str) -> Result<usize, ElfError> {
    if b.len() < 8 {
        return Err(err(format!("{what}: header truncated ({} bytes)", b.len())));
    }
    let magic = u16::from_le_bytes([b[0], b[1]]);
    if magic != MAGIC {
        return Err(err(format!("{what}: bad magic {magic:#06x} (big-endian BTF is not read)")));
    }
    let hdr_len = u32_at(b, 4)? as usize;
    if hdr_len > b.len() {
        return Err(err(format!("{what}: header length {hdr_len} past the section")));
    }
    Ok(hdr_len)
}

fn sub(b: &[u8], start: usize, len: usize, what: &str) -> Result<Vec<u8>, ElfError> {
    start
        .checked_add(len)
        .and_then(|end| b.get(start..end))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| err(format!("{what} ({len} bytes at {start}) past the section")))
}

impl Btf {
    /// Parses a `.BTF` section.
    pub fn parse(b: &[u8]) -> Result<Btf, ElfError> {
        let hdr_len = header(b, ".BTF")?;
        if hdr_len < 24 {
            return Err(err(format!(".BTF: header length {hdr_len} < 24")));
        }
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let (str_off, str_len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
        let type_bytes = sub(b, hdr_len.saturating_add(type_off), type_len, "types")?;
        let strings = sub(b, hdr_len.saturating_add(str_off), str_len, "strings")?;
        let mut types = vec![Type { kind: 0, name: 0, size_or_type: 0, triples: Vec::new() }];
        let mut off = 0;
        while off < type_bytes.len() {
            let at = |k: usize| u32_at(&type_bytes, off + 4 * k);
            let (name, info, size_or_type) = (at(0)?, at(1)?, at(2)?);
            let (kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
            off += 12;
            let mut triples = Vec::new();
            let mut take = |n: usize, words: usize| -> Result<(), ElfError> {
                for _ in 0..n {
                    let mut t = [0u32; 3];
                    for (k, w) in t.iter_mut().take(words).enumerate() {
                        *w = u32_at(&type_bytes, off + 4 * k)?;
                    }
                    triples.push(t);
                    off += 4 * words;
                }
                Ok(())
            };
            match kind {
                kind::INT | kind::VAR | kind::DECL_TAG => take(1, 1)?,
                kind::PTR
                | kind::FWD
                | kind::TYPEDEF
                | kind::VOLATILE
                | kind::CONST
                | kind::RESTRICT
                | kind::FUNC
                | kind::FLOAT
                | kind::TYPE_TAG => {}
                kind::ARRAY => take(1, 3)?,
                kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => take(vlen, 3)?,
                kind::ENUM | kind::FUNC_PROTO => take(vlen, 2)?,
                _ => {
                    return Err(err(format!("type {}: unknown kind {kind}", types.len())));
                }
            }
            types.push(Type { kind, name, size_or_type, triples });
        }
        Ok(Btf { types, strings })
    }

    /// The string at `off` of the string table.
    pub fn string(&self, off: u32) -> Result<&str, ElfError> {
        let rest = self
            .strings
            .get(off as usize..)
            .ok_or_else(|| err(format!("string offset {off} past the string table")))?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        std::str::from_utf8(&rest[..end]).map_err(|_| err(format!("string {off} is not UTF-8")))
    }

    fn ty(&self, id: u32) -> Result<&Type, ElfError> {
        self.types.get(id as usize).ok_or_else(|| err(format!("type id {id} out of range")))
    }

    /// Follows typedefs and qualifiers.
    fn skip_mods(&self, mut id: u32) -> Result<(u32, &Type), ElfError> {
        for _ in 0..64 {
            let t = self.ty(id)?;
            match t.kind {
                kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG => {
                    id = t.size_or_type;
                }
                _ => return Ok((id, t)),
            }
        }
        Err(err(format!("type {id}: modifier chain too long")))
    }

    /// The size in bytes of type `id`.
    pub fn size_of(&self, id: u32) -> Result<u64, ElfError> {
        self.size_at_depth(id, 0)
    }

    fn size_at_depth(&self, id: u32, depth: u32) -> Result<u64, ElfError> {
        if depth > 64 {
            return Err(err(format!("type {id}: nested too deeply")));
        }
        let t = self.ty(id)?;
        match t.kind {
            kind::INT
            | kind::STRUCT
            | kind::UNION
            | kind::ENUM
            | kind::ENUM64
            | kind::FLOAT
            | kind::DATASEC => Ok(u64::from(t.size_or_type)),
            kind::PTR => Ok(8),
            kind::ARRAY => {
                let [elem, _, n] = t.triples[0];
                self.size_at_depth(elem, depth + 1)?
                    .checked_mul(u64::from(n))
                    .ok_or_else(|| err(format!("type {id}: array size overflows")))
            }
            kind::TYPEDEF
            | kind::VOLATILE
            | kind::CONST
            | kind::RESTRICT
            | kind::TYPE_TAG
            | kind::VAR => self.size_at_depth(t.size_or_type, depth + 1),
            k => Err(err(format!("type {id}: kind {k} has no size"))),
        }
    }

    /// The variables of the data section named `section`: (name, type id of the variable's
    /// type).
    pub fn datasec_vars(&self, section: &str) -> Result<Vec<(String, u32)>, ElfError> {
        for t in &self.types {
            if t.kind == kind::DATASEC && self.string(t.name)? == section {
                let mut out = Vec::new();
                for &[var, _, _] in &t.triples {
                    let v = self.ty(var)?;
                    if v.kind != kind::VAR {
                        return Err(err(format!("{section}: entry type {var} is not a variable")));
                    }
                    out.push((self.string(v.name)?.to_string(), v.size_or_type));
                }
                return Ok(out);
            }
        }
        Err(err(format!("no data section {section} in .BTF")))
    }

    /// A BTF-defined map's members by name, each a pointer: what it points at
    /// ([`MapMember`]). Which reading applies is the member name's business (libbpf's rule:
    /// `key`/`value` are `__type`, the others `__uint`).
    pub fn map_members(&self, type_id: u32) -> Result<Vec<(String, MapMember)>, ElfError> {
        let (_, t) = self.skip_mods(type_id)?;
        if t.kind != kind::STRUCT {
            return Err(err(format!("map type {type_id} is not a struct")));
        }
        let mut out = Vec::new();
        for &[name, member_type, _] in &t.triples {
            let name = self.string(name)?.to_string();
            let (_, m) = self.skip_mods(member_type)?;
            if m.kind != kind::PTR {
                return Err(err(format!("member {name} is not a pointer (__uint or __type)")));
            }
            let (pointee_id, pointee) = self.skip_mods(m.size_or_type)?;
            out.push((
                name,
                MapMember {
                    array_len: (pointee.kind == kind::ARRAY).then(|| pointee.triples[0][2]),
                    pointee_size: self.size_of(pointee_id).ok(),
                },
            ));
        }
        Ok(out)
    }
}

/// A BTF-defined map's member: a pointer, read as `__uint(name, val)` (a pointer to an array
/// of `val` elements) or `__type(name, T)` (a pointer to `T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapMember {
    /// The pointee is an array of this many elements (`__uint`'s value).
    pub array_len: Option<u32>,
    /// The pointee's size (`__type`'s `sizeof(T)`), when it has one.
    pub pointee_size: Option<u64>,
}

/// One CO-RE relocation record of `.BTF.ext`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreRelo {
    /// The program section it applies to.
    pub section: String,
    /// Its instruction (slot index in the section).
    pub insn: u32,
    /// The relocation kind's name (`field byte offset`…).
    pub kind: &'static str,
    /// The BTF type it is relative to, by name (or its id when unnamed).
    pub type_name: String,
    /// The access string (`0:1:2`).
    pub access: String,
}

fn relo_kind_name(k: u32) -> &'static str {
    match k {
        0 => "field byte offset",
        1 => "field byte size",
        2 => "field existence",
        3 => "field signedness",
        4 => "field left shift",
        5 => "field right shift",
        6 => "local type id",
        7 => "target type id",
        8 => "type existence",
        9 => "type size",
        10 => "enum value existence",
        11 => "enum value",
        12 => "type match",
        _ => "unknown kind",
    }
}

/// The first CO-RE relocation of a `.BTF.ext` section, if it has any (the loader refuses
/// them: applying them needs the target kernel's BTF).
pub fn first_core_relo(ext: &[u8], btf: Option<&Btf>) -> Result<Option<CoreRelo>, ElfError> {
    let hdr_len = header(ext, ".BTF.ext")?;
    if hdr_len < 32 {
        return Ok(None);
    }
    let (off, len) = (u32_at(ext, 24)? as usize, u32_at(ext, 28)? as usize);
    if len == 0 {
        return Ok(None);
    }
    let recs = sub(ext, hdr_len.saturating_add(off), len, ".BTF.ext CO-RE relocations")?;
    let rec_size = u32_at(&recs, 0)? as usize;
    if rec_size < 16 {
        return Err(err(format!(".BTF.ext: CO-RE record size {rec_size} < 16")));
    }
    let mut p = 4;
    while p < recs.len() {
        let (sec_name, n) = (u32_at(&recs, p)?, u32_at(&recs, p + 4)?);
        p += 8;
        if n > 0 {
            let (insn_off, type_id, access_off, k) = (
                u32_at(&recs, p)?,
                u32_at(&recs, p + 4)?,
                u32_at(&recs, p + 8)?,
                u32_at(&recs, p + 12)?,
            );
            let name = |off: u32| -> String {
                btf.and_then(|b| b.string(off).ok()).unwrap_or("?").to_string()
            };
            let type_name = btf
                .and_then(|b| b.ty(type_id).ok().and_then(|t| b.string(t.name).ok()))
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("type id {type_id}"), str::to_string);
            return Ok(Some(CoreRelo {
                section: name(sec_name),
                insn: insn_off / 8,
                kind: relo_kind_name(k),
                type_name,
                access: name(access_off),
            }));
        }
    }
    Ok(None)
}
