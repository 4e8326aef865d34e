//! Classic BPF instructions: the shared vocabulary of sift's BPF crates.
//!
//! Every other BPF crate (the validators in `sift-verify`, the interpreter in `sift-vm`, the
//! compilers and JITs that come later) speaks in the types defined here, so this crate depends on
//! nothing but `sift-diag`'s number reader and contains no policy about which programs are
//! *valid*: any 64-bit [`Insn`] can be represented, printed and parsed back.
//!
//! Design choices:
//!
//! * **One raw representation.** [`Insn`] is `#[repr(C)]` and field-for-field `struct bpf_insn`
//!   (`struct sock_filter` on Linux), so a `&[Insn]` can be handed to libpcap or the kernel as is.
//!   Interpreting the `code` field is done through the named constants in [`code`] and the
//!   decoded view [`Opcode`], which names exactly the 49 opcodes libpcap's `bpf_image` knows and
//!   keeps everything else as [`Opcode::Unknown`].
//! * **Text forms are byte-exact.** [`text`] prints tcpdump's `-d`, `-dd` and `-ddd` forms byte
//!   for byte as the installed tcpdump 4.99.3 / libpcap 1.10.3 does (including its trailing
//!   spaces), or in libpcap 1.11's trimmed style, and reads all of them back, auto-detecting the
//!   form. libpcap 1.11's TESTrun listings (with `; 0x…` opcode comments) parse too.
//! * **An assembler with labels.** [`asm`] reads the syntax of Linux's `bpf_asm` (plus the `-d`
//!   operand spellings) and reports errors with a line and column. Its disassembler prints every
//!   program, including malformed ones, in a form that assembles back to the identical program.
//! * **No panics.** All parsers return errors for any input; they are fuzzed
//!   (`fuzz/fuzz_targets/bpf_text.rs`).
#![forbid(unsafe_code)]

pub mod asm;
pub mod code;
mod opcode;
mod operand;
pub mod text;

pub use opcode::Opcode;

use std::fmt;

/// One classic BPF instruction, laid out exactly like C's `struct bpf_insn` / `struct sock_filter`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Insn {
    /// The opcode: class, size/op, mode/source bits (see [`code`]).
    pub code: u16,
    /// Conditional jumps: how many instructions to skip when the condition holds.
    pub jt: u8,
    /// Conditional jumps: how many instructions to skip when it does not.
    pub jf: u8,
    /// The generic operand: constant, packet offset, scratch-memory index or jump offset.
    pub k: u32,
}

impl Insn {
    /// An instruction from its four fields.
    pub const fn new(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
        Insn { code, jt, jf, k }
    }

    /// A non-jump instruction (`jt` and `jf` zero).
    pub const fn stmt(code: u16, k: u32) -> Insn {
        Insn { code, jt: 0, jf: 0, k }
    }

    /// A conditional jump.
    pub const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
        Insn { code, jt, jf, k }
    }

    /// The decoded opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode::from_code(self.code)
    }
}

/// A classic BPF program: a sequence of instructions.
///
/// A `Program` may be anything at all (empty, with unknown opcodes, with jumps out of range);
/// `sift-verify` decides what may run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Program(pub Vec<Insn>);

impl Program {
    /// The instructions.
    pub fn insns(&self) -> &[Insn] {
        &self.0
    }

    /// The number of instructions.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no instructions.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<Insn>> for Program {
    fn from(v: Vec<Insn>) -> Self {
        Program(v)
    }
}

impl std::ops::Deref for Program {
    type Target = [Insn];
    fn deref(&self) -> &[Insn] {
        &self.0
    }
}

impl FromIterator<Insn> for Program {
    fn from_iter<I: IntoIterator<Item = Insn>>(iter: I) -> Self {
        Program(iter.into_iter().collect())
    }
}

/// Where a text parse failed, and why. Lines and columns count from 1; the column counts
/// characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in characters) where the offending token starts.
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        ParseError { line, column, message: message.into() }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}
