//! Loading a program: decoding every slot and the structural checks that make the
//! interpreter's control flow safe (targets inside the program and inside their own function,
//! never the second half of a `lddw`, functions that end in `exit` or `ja`, no writes to the
//! read-only frame pointer, helpers that exist), each refusal located at its instruction.
//!
//! This is not the verifier (no register types or bounds): memory safety in this version comes
//! from the interpreter's checked accesses.

use sift_ebpf::{
    CallTarget, DecodeError, EbpfInsn, ImmKind, Insn, IsaVersion, Located, decode_program,
};
use thiserror::Error;

use crate::maps::{MapDef, MapKind};

/// The most slots a program may have (ubpf's limit; the kernel's is 4096 unprivileged and
/// 1,000,000 processed instructions privileged).
pub const MAX_INSNS: usize = 65_536;

/// Why a program is refused at load.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LoadError {
    /// A slot does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// No instructions.
    #[error("empty program")]
    Empty,
    /// More than [`MAX_INSNS`] slots.
    #[error("too many instructions ({0}; max {MAX_INSNS})")]
    TooLong(usize),
    /// A structural problem at an instruction.
    #[error("instruction {index}: {reason}")]
    At {
        /// The slot index.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

fn at(index: usize, reason: impl Into<String>) -> LoadError {
    LoadError::At { index, reason: reason.into() }
}

/// A loaded program: its slots, decoded instructions and the start of each function.
#[derive(Clone, Debug)]
pub struct Program {
    slots: Vec<EbpfInsn>,
    insns: Vec<Located>,
    functions: Vec<usize>,
}

/// Whether an instruction writes its `dst` register (and so may not name `r10`).
fn writes_dst(insn: &Insn) -> Option<u8> {
    match *insn {
        Insn::Alu { dst, .. }
        | Insn::MovSx { dst, .. }
        | Insn::Neg { dst, .. }
        | Insn::Endian { dst, .. }
        | Insn::Load { dst, .. }
        | Insn::LoadSx { dst, .. }
        | Insn::LdImm64 { dst, .. } => Some(dst),
        Insn::Atomic { src, fetch: true, .. } => Some(src),
        _ => None,
    }
}

impl Program {
    /// Decodes and checks a program; `helper_exists` says which helper numbers the embedder
    /// provides (calls to others are refused here, as the kernel and ubpf refuse them).
    pub fn load(
        slots: &[EbpfInsn],
        helper_exists: impl Fn(u32) -> bool,
    ) -> Result<Program, LoadError> {
        Program::load_with_maps(slots, helper_exists, &[])
    }

    /// [`Program::load`] for a VM with these maps: `lddw map_fd(i)` / `map_idx(i)` name map
    /// `i`, `map_value(i, off)` / `map_idx_value(i, off)` a byte of array map `i`'s values.
    pub fn load_with_maps(
        slots: &[EbpfInsn],
        helper_exists: impl Fn(u32) -> bool,
        maps: &[MapDef],
    ) -> Result<Program, LoadError> {
        if slots.is_empty() {
            return Err(LoadError::Empty);
        }
        if slots.len() > MAX_INSNS {
            return Err(LoadError::TooLong(slots.len()));
        }
        let insns = decode_program(slots)?;
        let n = slots.len();
        // Slot starts (a lddw's second half is not one).
        let mut starts = vec![false; n];
        for l in &insns {
            starts[l.index] = true;
        }
        let target = |index: usize, off: i64, what: &str| -> Result<usize, LoadError> {
            let t = index as i64 + 1 + off;
            if t < 0 || t >= n as i64 {
                return Err(at(index, format!("{what} out of bounds (to {t})")));
            }
            if !starts[t as usize] {
                return Err(at(index, format!("{what} to the middle of lddw (slot {t})")));
            }
            Ok(t as usize)
        };
        let mut functions = vec![0usize];
        for l in &insns {
            if let Some(r) = writes_dst(&l.insn)
                && r == 10
            {
                return Err(at(l.index, "r10 (the frame pointer) is read-only"));
            }
            match l.insn {
                Insn::Call(CallTarget::Local(off)) => {
                    functions.push(target(l.index, off.into(), "call")?);
                }
                Insn::Call(CallTarget::Helper(id)) if !helper_exists(id as u32) => {
                    return Err(at(l.index, format!("call to nonexistent helper {id}")));
                }
                Insn::Call(CallTarget::Kfunc { btf_id, .. }) => {
                    return Err(at(
                        l.index,
                        format!("kernel function calls (BTF id {btf_id}) are not supported"),
                    ));
                }
                Insn::LdImm64 { kind, imm, .. } if kind != ImmKind::Imm => {
                    let (i, off) = (imm as u32 as usize, imm >> 32);
                    let map = maps.get(i);
                    match kind {
                        ImmKind::MapFd | ImmKind::MapIdx if map.is_some() && off == 0 => {}
                        ImmKind::MapValue | ImmKind::MapIdxValue
                            if map.is_some_and(|m| {
                                m.kind == MapKind::Array
                                    && off < u64::from(m.value_size) * u64::from(m.max_entries)
                            }) => {}
                        ImmKind::MapFd
                        | ImmKind::MapIdx
                        | ImmKind::MapValue
                        | ImmKind::MapIdxValue => {
                            return Err(at(
                                l.index,
                                format!("lddw {kind:?}: no map {i} (or no offset {off} in it)"),
                            ));
                        }
                        _ => {
                            return Err(at(
                                l.index,
                                format!("lddw {kind:?} needs BTF, not supported yet"),
                            ));
                        }
                    }
                }
                Insn::Ja { off: -1, .. } => {
                    return Err(at(l.index, "infinite loop (jump to itself)"));
                }
                _ => {}
            }
        }
        functions.sort_unstable();
        functions.dedup();
        let function_of = |i: usize| functions.partition_point(|&s| s <= i) - 1;
        for l in &insns {
            if let Some(off) = l.insn.branch_offset()
                && !matches!(l.insn, Insn::Call(_))
            {
                let t = target(l.index, off, "jump")?;
                if function_of(t) != function_of(l.index) {
                    return Err(at(l.index, format!("jump out of its function (to {t})")));
                }
            }
        }
        // Every function ends with `exit` or an unconditional jump (no falling into the next).
        for (k, &start) in functions.iter().enumerate() {
            let end = functions.get(k + 1).copied().unwrap_or(n);
            let last = insns.iter().rev().find(|l| l.index < end && l.index >= start);
            match last.map(|l| l.insn) {
                Some(Insn::Exit | Insn::Ja { .. }) => {}
                _ => {
                    let index = last.map_or(start, |l| l.index);
                    return Err(at(
                        index,
                        "function does not end with exit or an unconditional jump",
                    ));
                }
            }
        }
        Ok(Program { slots: slots.to_vec(), insns, functions })
    }

    /// Loads a byte image (8 bytes a slot).
    pub fn from_bytes(
        bytes: &[u8],
        helper_exists: impl Fn(u32) -> bool,
    ) -> Result<Program, LoadError> {
        let slots = sift_ebpf::isa::slots_from_bytes(bytes)?;
        Program::load(&slots, helper_exists)
    }

    /// The slots as loaded.
    pub fn slots(&self) -> &[EbpfInsn] {
        &self.slots
    }

    /// The decoded instructions with their slot indices.
    pub fn insns(&self) -> &[Located] {
        &self.insns
    }

    /// The first slot of each function (0 and every `call local` target), in order.
    pub fn functions(&self) -> &[usize] {
        &self.functions
    }

    /// Refuses, at its slot, the first instruction that instruction-set version `max` does not
    /// have (a program for a target that predates v4's `sdiv` or `gotol`, as ubpf does).
    pub fn check_isa(&self, max: IsaVersion) -> Result<(), LoadError> {
        match self.insns.iter().find(|l| l.insn.isa_version() > max) {
            Some(l) => Err(at(
                l.index,
                format!(
                    "instruction needs ISA v{}, the target has v{}",
                    l.insn.isa_version() as u8,
                    max as u8
                ),
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_ebpf::asm::assemble;
    use sift_ebpf::encode_program;

    fn load(text: &str) -> Result<Program, LoadError> {
        Program::load(&encode_program(&assemble(text).unwrap()), |id| id < 8)
    }

    #[test]
    fn structural_refusals_are_located() {
        let e = |t: &str| load(t).unwrap_err().to_string();
        assert_eq!(e("ja +2\nexit"), "instruction 0: jump out of bounds (to 3)");
        assert_eq!(
            e("ja +1\nlddw %r0, 1\nexit"),
            "instruction 0: jump to the middle of lddw (slot 2)"
        );
        assert_eq!(e("ja -1\nexit"), "instruction 0: infinite loop (jump to itself)");
        assert_eq!(e("mov %r10, 1\nexit"), "instruction 0: r10 (the frame pointer) is read-only");
        assert_eq!(e("call 64\nexit"), "instruction 0: call to nonexistent helper 64");
        assert_eq!(
            e("mov %r0, 1\ncall local f\nf:\nexit"),
            "instruction 1: function does not end with exit or an unconditional jump"
        );
        assert_eq!(
            e("b:\nmov %r1, 1\ncall local n\nexit\nn:\nja b\nexit"),
            "instruction 3: jump out of its function (to 0)"
        );
        assert_eq!(
            e("mov %r0, 0"),
            "instruction 0: function does not end with exit or an unconditional jump"
        );
        assert!(load("mov %r0, 0\ncall local f\nexit\nf:\nexit").is_ok());
    }

    #[test]
    fn isa_versions_are_checked_on_request() {
        let p = load("mov %r0, 1\njlt %r0, 2, +1\nsdiv %r0, 3\nexit").unwrap();
        assert_eq!(
            p.check_isa(IsaVersion::V1).unwrap_err().to_string(),
            "instruction 1: instruction needs ISA v2, the target has v1"
        );
        assert_eq!(
            p.check_isa(IsaVersion::V3).unwrap_err().to_string(),
            "instruction 2: instruction needs ISA v4, the target has v3"
        );
        assert!(p.check_isa(IsaVersion::V4).is_ok());
    }
}
