//! An x86-64 assembler for sift's JITs, and the executable memory their code runs from.
//!
//! **Why it exists.** The classic-BPF JIT (`sift-jit`) first wrote its few instructions as
//! hand-made byte strings with A fixed in `eax` and X in `ecx`. The eBPF JIT needs eleven
//! registers in machine registers, 64-bit arithmetic, atomics and calls: it needs an
//! assembler, and both JITs share this one. It encodes what it is asked for (Intel SDM vol. 2
//! names and operand orders), picks the shortest encoding of that same instruction, sizes
//! jumps to labels, and reports every operand combination x86-64 cannot encode as a typed
//! [`AsmError`] instead of panicking.
//!
//! ```
//! use sift_x86::{Assembler, Cond, Mem, Reg, Scale, Size};
//! let mut asm = Assembler::new();
//! let done = asm.new_label();
//! asm.xor(Size::Dword, Reg::Rax, Reg::Rax)?;                       // 31 C0
//! asm.cmp(Size::Qword, Reg::Rsi, 14)?;                             // 48 83 FE 0E
//! asm.jcc(Cond::B, done)?;                                         // 72 xx
//! let at = Mem::base(Reg::Rdi).index(Reg::R9, Scale::X1).disp(12);
//! asm.movzx(Size::Dword, Reg::Rax, Size::Word, at)?;               // 42 0F B7 44 0F 0C
//! asm.bind(done)?;
//! asm.ret();
//! let code = asm.finish()?;
//! assert_eq!(code.code.len(), 2 + 4 + 2 + 6 + 1);
//! # Ok::<(), sift_x86::AsmError>(())
//! ```
//!
//! **What it covers.** The 16 general registers ([`Reg`]) at 8, 16, 32 and 64 bits
//! ([`Size`]; `spl`–`dil` get their REX, the high-byte registers are not offered); register,
//! immediate and memory operands ([`Operand`], [`Mem`]: base, index, scale, displacement,
//! RIP-relative to a displacement or a [`Label`]); data movement, the ALU, multiply and divide,
//! shifts, byte swaps, atomics (with [`Locked`]), `setcc`/`cmovcc`/`jcc` for all 16 conditions
//! ([`Cond`]), calls, jumps, returns, no-ops, traps and prefetches. Jumps to labels are
//! short (rel8) where they reach and near (rel32) otherwise, decided by a fixed-point pass at
//! [`Assembler::finish`].
//!
//! **How the encodings were checked.** Against iced-x86's decoder, which this crate uses in
//! tests only: a property test assembles over a million random instructions (every mnemonic,
//! register, size, immediate width, addressing form and condition, with labels and jumps
//! both ways), decodes the bytes and compares the mnemonic and every operand, that each
//! instruction decodes to exactly the bytes emitted, and that every near jump would have
//! missed as a short one; the `x86_encode` fuzz target does the same from arbitrary bytes;
//! golden tests pin the tricky encodings byte for byte (`r12`/`r13` bases, byte registers that
//! need a REX, imm8 against imm32, the 127/128-byte jump boundary).
//!
//! **Executable memory** ([`exec`]) is never writable and executable at once; making a
//! function pointer of it and calling it is the caller's `unsafe`, so this crate has none.
#![forbid(unsafe_code)]

mod asm;
mod encode;
mod error;
pub mod exec;
mod insn;
mod layout;
mod lock;
mod operand;
mod reg;

pub use asm::{Assembled, Assembler};
pub use error::{AsmError, OperandError};
pub use insn::{AluOp, Prefetch, ShiftOp};
pub use lock::Locked;
pub use operand::{Label, Mem, Operand};
pub use reg::{Cond, Reg, Scale, Size};
