//! The eBPF instruction model: opcode fields, registers, one 8-byte instruction slot and a
//! program of slots, with the kernel's byte encoding.
//!
//! It exists apart from any engine so that everything that reads or writes eBPF (the classic
//! translation today; a VM, a verifier, a JIT, an assembler and an ELF loader later) shares one
//! definition of the instruction format (RFC 9669, "BPF Instruction Set Architecture").

/// The opcode byte's fields, named as RFC 9669 names them, each value already shifted to its
/// place in the byte: an opcode is `class | op | source` for arithmetic and jumps,
/// `class | mode | size` for loads and stores.
pub mod opcode {
    /// Instruction classes: the low three bits.
    pub mod class {
        /// Mask of the class bits.
        pub const MASK: u8 = 0x07;
        /// Non-standard loads (64-bit immediate; legacy packet access).
        pub const LD: u8 = 0x00;
        /// Load into a register.
        pub const LDX: u8 = 0x01;
        /// Store an immediate.
        pub const ST: u8 = 0x02;
        /// Store a register.
        pub const STX: u8 = 0x03;
        /// 32-bit arithmetic.
        pub const ALU: u8 = 0x04;
        /// 64-bit jumps.
        pub const JMP: u8 = 0x05;
        /// 32-bit jumps.
        pub const JMP32: u8 = 0x06;
        /// 64-bit arithmetic.
        pub const ALU64: u8 = 0x07;
    }

    /// Where the second operand of an arithmetic or jump instruction comes from (bit 3).
    pub mod source {
        /// Mask of the source bit.
        pub const MASK: u8 = 0x08;
        /// The immediate.
        pub const K: u8 = 0x00;
        /// The source register.
        pub const X: u8 = 0x08;
    }

    /// Arithmetic operations (`ALU`, `ALU64`): the high four bits.
    pub mod alu {
        /// Mask of the operation bits (the same for jumps).
        pub const MASK: u8 = 0xf0;
        /// `dst += src`.
        pub const ADD: u8 = 0x00;
        /// `dst -= src`.
        pub const SUB: u8 = 0x10;
        /// `dst *= src`.
        pub const MUL: u8 = 0x20;
        /// `dst /= src` (unsigned; signed with offset 1).
        pub const DIV: u8 = 0x30;
        /// `dst |= src`.
        pub const OR: u8 = 0x40;
        /// `dst &= src`.
        pub const AND: u8 = 0x50;
        /// `dst <<= src`.
        pub const LSH: u8 = 0x60;
        /// `dst >>= src` (logical).
        pub const RSH: u8 = 0x70;
        /// `dst = -dst`.
        pub const NEG: u8 = 0x80;
        /// `dst %= src` (unsigned; signed with offset 1).
        pub const MOD: u8 = 0x90;
        /// `dst ^= src`.
        pub const XOR: u8 = 0xa0;
        /// `dst = src` (sign-extending with a non-zero offset).
        pub const MOV: u8 = 0xb0;
        /// `dst >>= src` (arithmetic).
        pub const ARSH: u8 = 0xc0;
        /// Byte swap ([`super::swap`] says to which order; `imm` is the width: 16, 32 or 64).
        pub const END: u8 = 0xd0;
    }

    /// The byte order of an `END` instruction (its source bit).
    pub mod swap {
        /// To little-endian.
        pub const TO_LE: u8 = 0x00;
        /// To big-endian.
        pub const TO_BE: u8 = 0x08;
    }

    /// Jump operations (`JMP`, `JMP32`): the high four bits.
    pub mod jmp {
        /// `goto +off` (`JMP` only).
        pub const JA: u8 = 0x00;
        /// `==`.
        pub const JEQ: u8 = 0x10;
        /// `>` (unsigned).
        pub const JGT: u8 = 0x20;
        /// `>=` (unsigned).
        pub const JGE: u8 = 0x30;
        /// `&` (any bit in common).
        pub const JSET: u8 = 0x40;
        /// `!=`.
        pub const JNE: u8 = 0x50;
        /// `>` (signed).
        pub const JSGT: u8 = 0x60;
        /// `>=` (signed).
        pub const JSGE: u8 = 0x70;
        /// Call a helper (`JMP` only).
        pub const CALL: u8 = 0x80;
        /// Return `r0` (`JMP` only).
        pub const EXIT: u8 = 0x90;
        /// `<` (unsigned).
        pub const JLT: u8 = 0xa0;
        /// `<=` (unsigned).
        pub const JLE: u8 = 0xb0;
        /// `<` (signed).
        pub const JSLT: u8 = 0xc0;
        /// `<=` (signed).
        pub const JSLE: u8 = 0xd0;
    }

    /// Access sizes of loads and stores (bits 3–4).
    pub mod size {
        /// Mask of the size bits.
        pub const MASK: u8 = 0x18;
        /// 4 bytes.
        pub const W: u8 = 0x00;
        /// 2 bytes.
        pub const H: u8 = 0x08;
        /// 1 byte.
        pub const B: u8 = 0x10;
        /// 8 bytes.
        pub const DW: u8 = 0x18;
    }

    /// Modes of loads and stores (the high three bits).
    pub mod mode {
        /// Mask of the mode bits.
        pub const MASK: u8 = 0xe0;
        /// 64-bit immediate (`LD | IMM | DW`, two slots).
        pub const IMM: u8 = 0x00;
        /// Legacy packet access at a constant offset.
        pub const ABS: u8 = 0x20;
        /// Legacy packet access at a register plus a constant.
        pub const IND: u8 = 0x40;
        /// Memory at a register plus the offset.
        pub const MEM: u8 = 0x60;
        /// Sign-extending memory load.
        pub const MEMSX: u8 = 0x80;
        /// Atomic operation.
        pub const ATOMIC: u8 = 0xc0;
    }
}

use opcode::{alu, class, jmp, mode, size, source, swap};

/// An eBPF register number (`r0`–`r10`).
pub type Reg = u8;

/// The eBPF registers by their names.
pub mod reg {
    use super::Reg;

    /// Return value; the first helper's result.
    pub const R0: Reg = 0;
    /// First argument (the context on entry).
    pub const R1: Reg = 1;
    /// Second argument.
    pub const R2: Reg = 2;
    /// Third argument.
    pub const R3: Reg = 3;
    /// Fourth argument.
    pub const R4: Reg = 4;
    /// Fifth argument.
    pub const R5: Reg = 5;
    /// Callee-saved.
    pub const R6: Reg = 6;
    /// Callee-saved.
    pub const R7: Reg = 7;
    /// Callee-saved.
    pub const R8: Reg = 8;
    /// Callee-saved.
    pub const R9: Reg = 9;
    /// The read-only frame pointer.
    pub const R10: Reg = 10;
}

/// One eBPF instruction slot (`struct bpf_insn`, 8 bytes). A 64-bit immediate load
/// (`BPF_LD | BPF_IMM | BPF_DW`) takes two slots; the second has code 0 and carries the upper
/// 32 bits in `imm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EbpfInsn {
    /// Opcode: class, size/source and operation bits.
    pub code: u8,
    /// Destination register (low nibble of the second byte).
    pub dst: Reg,
    /// Source register (high nibble).
    pub src: Reg,
    /// Signed offset: jump distance in slots, or memory offset.
    pub off: i16,
    /// Signed immediate.
    pub imm: i32,
}

impl EbpfInsn {
    /// Any instruction from its fields.
    pub const fn new(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> EbpfInsn {
        EbpfInsn { code, dst, src, off, imm }
    }

    /// The 8 bytes the kernel reads (little-endian host).
    pub fn encode(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = (self.dst & 0xf) | (self.src << 4);
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }

    /// Decodes 8 bytes (the inverse of [`EbpfInsn::encode`]).
    pub fn decode(b: [u8; 8]) -> EbpfInsn {
        EbpfInsn {
            code: b[0],
            dst: b[1] & 0xf,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    /// `dst = imm` on 32 bits (`w` registers; the upper half is zeroed).
    pub const fn mov32_imm(dst: Reg, imm: i32) -> EbpfInsn {
        EbpfInsn::new(class::ALU | alu::MOV | source::K, dst, 0, 0, imm)
    }
    /// `dst = src` on 32 bits.
    pub const fn mov32_reg(dst: Reg, src: Reg) -> EbpfInsn {
        EbpfInsn::new(class::ALU | alu::MOV | source::X, dst, src, 0, 0)
    }
    /// `dst = src` on 64 bits.
    pub const fn mov64_reg(dst: Reg, src: Reg) -> EbpfInsn {
        EbpfInsn::new(class::ALU64 | alu::MOV | source::X, dst, src, 0, 0)
    }
    /// A 32-bit ALU operation with an immediate (`op` is one of the [`opcode::alu`] bits).
    pub const fn alu32_imm(op: u8, dst: Reg, imm: i32) -> EbpfInsn {
        EbpfInsn::new(class::ALU | op | source::K, dst, 0, 0, imm)
    }
    /// A 32-bit ALU operation with a register.
    pub const fn alu32_reg(op: u8, dst: Reg, src: Reg) -> EbpfInsn {
        EbpfInsn::new(class::ALU | op | source::X, dst, src, 0, 0)
    }
    /// A 64-bit ALU operation with an immediate.
    pub const fn alu64_imm(op: u8, dst: Reg, imm: i32) -> EbpfInsn {
        EbpfInsn::new(class::ALU64 | op | source::K, dst, 0, 0, imm)
    }
    /// A 64-bit ALU operation with a register.
    pub const fn alu64_reg(op: u8, dst: Reg, src: Reg) -> EbpfInsn {
        EbpfInsn::new(class::ALU64 | op | source::X, dst, src, 0, 0)
    }
    /// `dst = *(size *)(src + off)`; `size` is one of the [`opcode::size`] bits.
    pub const fn load(size: u8, dst: Reg, src: Reg, off: i16) -> EbpfInsn {
        EbpfInsn::new(class::LDX | mode::MEM | size, dst, src, off, 0)
    }
    /// `*(size *)(dst + off) = src`.
    pub const fn store_reg(size: u8, dst: Reg, src: Reg, off: i16) -> EbpfInsn {
        EbpfInsn::new(class::STX | mode::MEM | size, dst, src, off, 0)
    }
    /// `*(size *)(dst + off) = imm`.
    pub const fn store_imm(size: u8, dst: Reg, off: i16, imm: i32) -> EbpfInsn {
        EbpfInsn::new(class::ST | mode::MEM | size, dst, 0, off, imm)
    }
    /// `dst = be16/be32/be64 dst` (byte swap on a little-endian host; `bits` = 16, 32, 64).
    pub const fn to_be(dst: Reg, bits: i32) -> EbpfInsn {
        EbpfInsn::new(class::ALU | alu::END | swap::TO_BE, dst, 0, 0, bits)
    }
    /// A conditional jump comparing `dst` with an immediate, 64-bit (`JMP`) or 32-bit (`JMP32`).
    pub const fn jmp_imm(class: u8, op: u8, dst: Reg, imm: i32, off: i16) -> EbpfInsn {
        EbpfInsn::new(class | op | source::K, dst, 0, off, imm)
    }
    /// A conditional jump comparing `dst` with `src`.
    pub const fn jmp_reg(class: u8, op: u8, dst: Reg, src: Reg, off: i16) -> EbpfInsn {
        EbpfInsn::new(class | op | source::X, dst, src, off, 0)
    }
    /// `goto +off`.
    pub const fn ja(off: i16) -> EbpfInsn {
        EbpfInsn::new(class::JMP | jmp::JA, 0, 0, off, 0)
    }
    /// `exit` (returns `r0`).
    pub const fn exit() -> EbpfInsn {
        EbpfInsn::new(class::JMP | jmp::EXIT, 0, 0, 0, 0)
    }
    /// `dst = imm64` (two slots).
    pub const fn ld_imm64(dst: Reg, imm: u64) -> [EbpfInsn; 2] {
        [
            EbpfInsn::new(class::LD | mode::IMM | size::DW, dst, 0, 0, imm as u32 as i32),
            EbpfInsn::new(0, 0, 0, 0, (imm >> 32) as u32 as i32),
        ]
    }

    /// The instruction class ([`opcode::class`]).
    pub const fn class(&self) -> u8 {
        self.code & class::MASK
    }

    /// The operation bits of an arithmetic or jump instruction ([`opcode::alu`],
    /// [`opcode::jmp`]).
    pub const fn op(&self) -> u8 {
        self.code & alu::MASK
    }

    /// Whether the second operand is the source register (`X`) rather than the immediate.
    pub const fn uses_src_reg(&self) -> bool {
        self.code & source::MASK == source::X
    }

    /// Whether this is the first slot of a 64-bit immediate load (two slots).
    pub const fn is_ld_imm64(&self) -> bool {
        self.code == class::LD | mode::IMM | size::DW
    }
}

/// An eBPF program: instruction slots in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EbpfProgram {
    /// The slots (a 64-bit immediate load takes two).
    pub insns: Vec<EbpfInsn>,
}

impl EbpfProgram {
    /// The program as the kernel reads it (`BPF_PROG_LOAD`'s `insns`).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.insns.iter().flat_map(EbpfInsn::encode).collect()
    }

    /// Decodes a byte image (a multiple of 8 bytes; a partial last slot is ignored).
    pub fn from_bytes(bytes: &[u8]) -> EbpfProgram {
        let insns = bytes
            .chunks_exact(8)
            .map(|c| EbpfInsn::decode([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        EbpfProgram { insns }
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// Whether there are no instructions.
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let insns = [
            EbpfInsn::mov32_imm(0, -1),
            EbpfInsn::load(size::H, 3, 8, -12),
            EbpfInsn::jmp_imm(class::JMP32, jmp::JGE, 1, sift_insn::code::SKF_NET_OFF as i32, 3),
            EbpfInsn::exit(),
        ];
        for i in insns {
            assert_eq!(EbpfInsn::decode(i.encode()), i);
        }
        // r0 = -1 on 32 bits: b4 00 0000 ffffffff
        assert_eq!(EbpfInsn::mov32_imm(0, -1).encode(), [0xb4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        // r8 = *(u32 *)(r6 +76): 61 68 4c00 00000000
        assert_eq!(EbpfInsn::load(size::W, 8, 6, 76).encode(), [0x61, 0x68, 76, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn opcodes_are_the_kernels() {
        // A few opcodes as the kernel's headers spell them out.
        assert_eq!(EbpfInsn::exit().code, 0x95);
        assert_eq!(EbpfInsn::ja(0).code, 0x05);
        assert_eq!(EbpfInsn::to_be(0, 16).code, 0xdc);
        assert_eq!(EbpfInsn::mov64_reg(6, 1).code, 0xbf);
        assert_eq!(EbpfInsn::ld_imm64(1, 0)[0].code, 0x18);
        assert_eq!(EbpfInsn::store_imm(size::W, 10, -4, 0).code, 0x62);
        assert_eq!(EbpfInsn::jmp_reg(class::JMP, jmp::JGT, 2, 9, 0).code, 0x2d);
        let i = EbpfInsn::alu32_reg(alu::RSH, 0, 7);
        assert_eq!((i.class(), i.op(), i.uses_src_reg()), (class::ALU, alu::RSH, true));
    }
}
