//! The eBPF instruction set, and sift's translation of classic BPF into it.
//!
//! eBPF is what the Linux kernel runs today: every classic program it is given is converted to
//! eBPF first, and the kernel's verifier, interpreter and JIT only know eBPF. sift uses it as a
//! second target for classic filters ([`translate`], run by `sift_kernel::KernelEbpf` with
//! `BPF_PROG_TEST_RUN`), and will grow its own eBPF VM, verifier and JIT on the same model.
//! This crate is that model, free of system calls and of `unsafe`, so that those engines need
//! not depend on the crate that talks to the kernel:
//!
//! * [`insn`]: the instruction format of RFC 9669: opcode fields ([`opcode`], named as the RFC
//!   names them), registers ([`reg`]), one slot ([`EbpfInsn`], with the kernel's 8-byte
//!   encoding) and a program ([`EbpfProgram`]).
//! * [`isa`]: every instruction through ISA v4 typed ([`Insn`]), decoded from slots with
//!   located errors ([`DecodeError`]: unknown opcodes, reserved fields, incomplete `lddw`) and
//!   encoded back.
//! * [`asm`]: the conformance suite's assembly syntax: [`asm::assemble`] (labels, located
//!   [`asm::AsmError`]s) and [`asm::print`].
//! * [`listing`]: an `llvm-objdump -d`-like listing ([`listing::objdump`]).
//! * [`datafile`]: the conformance suite's `.data` test files.
//! * [`text`]: the verifier log's notation ([`Disasm`], and `Display` for a program).
//! * [`helper_ids`]: the kernel's helper numbers and names ([`helper_name`], [`helper_id`]).
//! * [`map_type`]: the kernel's map types ([`MapType`]) and a declared map ([`MapSpec`]).
//! * [`prog_type`]: the kernel's program types ([`ProgType`]), by number, section and name.
//! * [`skb`]: the `__sk_buff` context offsets the translation and a test run share.
//! * [`from_cbpf`]: classic → eBPF for `SCHED_CLS` with classic semantics ([`translate`],
//!   [`translate_local_exits`], [`TranslateError`]).
#![forbid(unsafe_code)]

pub mod asm;
pub mod datafile;
pub mod from_cbpf;
pub mod helper_ids;
pub mod insn;
pub mod isa;
pub mod listing;
pub mod map_type;
pub mod prog_type;
pub mod skb;
pub mod text;
pub mod xdp_md;

pub use from_cbpf::{
    NET_HEADER, TranslateError, TranslateReason, translate, translate_local_exits,
};
pub use helper_ids::{helper_id, helper_name};
pub use insn::{EbpfInsn, EbpfProgram, Reg, opcode, reg};
pub use isa::{
    AluOp, AtomicOp, ByteOrder, CallTarget, Cond, DecodeError, DecodeErrorKind, ImmKind, Insn,
    IsaVersion, Located, Operand, Size, Width, decode_bytes, decode_program, encode_program,
};
pub use map_type::{MapSpec, MapType};
pub use prog_type::ProgType;
pub use text::Disasm;
