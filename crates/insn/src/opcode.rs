//! The decoded view of an opcode.

macro_rules! opcodes {
    ($($(#[$doc:meta])* $name:ident = $code:expr, $mn:expr;)*) => {
        /// A classic BPF opcode: one of the 49 that libpcap's `bpf_image` and Linux's classic
        /// checker both know, or [`Opcode::Unknown`].
        ///
        /// Variant names read as mnemonic, then addressing: `LdAbsH` is `ldh [k]`, `AddX` is
        /// `add x`, `JeqK` is `jeq #k`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Opcode {
            $($(#[$doc])* $name,)*
            /// Any other 16-bit code; libpcap prints it `unimp 0x…`.
            Unknown(u16),
        }

        impl Opcode {
            /// The 49 known opcodes, in code order.
            pub const ALL: [Opcode; 49] = [$(Opcode::$name,)*];

            /// Decodes a 16-bit code.
            pub const fn from_code(code: u16) -> Opcode {
                match code {
                    $(c if c == $code => Opcode::$name,)*
                    other => Opcode::Unknown(other),
                }
            }

            /// The 16-bit code.
            pub const fn code(self) -> u16 {
                match self {
                    $(Opcode::$name => $code,)*
                    Opcode::Unknown(c) => c,
                }
            }

            /// The mnemonic libpcap prints (`unimp` for unknown codes).
            pub const fn mnemonic(self) -> &'static str {
                match self {
                    $(Opcode::$name => $mn,)*
                    Opcode::Unknown(_) => "unimp",
                }
            }
        }
    };
}

use crate::code::*;

opcodes! {
    /// `ld #k`
    LdImm = BPF_LD | BPF_IMM, "ld";
    /// `ldx #k`
    LdxImm = BPF_LDX | BPF_IMM, "ldx";
    /// `st M[k]`
    St = BPF_ST, "st";
    /// `stx M[k]`
    Stx = BPF_STX, "stx";
    /// `add #k`
    AddK = BPF_ALU | BPF_ADD | BPF_K, "add";
    /// `ja k` (relative to the next instruction)
    Ja = BPF_JMP | BPF_JA, "ja";
    /// `ret #k`
    RetK = BPF_RET | BPF_K, "ret";
    /// `tax`
    Tax = BPF_MISC | BPF_TAX, "tax";
    /// `add x`
    AddX = BPF_ALU | BPF_ADD | BPF_X, "add";
    /// `sub #k`
    SubK = BPF_ALU | BPF_SUB | BPF_K, "sub";
    /// `jeq #k`
    JeqK = BPF_JMP | BPF_JEQ | BPF_K, "jeq";
    /// `ret a`
    RetA = BPF_RET | BPF_A, "ret";
    /// `sub x`
    SubX = BPF_ALU | BPF_SUB | BPF_X, "sub";
    /// `jeq x`
    JeqX = BPF_JMP | BPF_JEQ | BPF_X, "jeq";
    /// `ld [k]`
    LdAbsW = BPF_LD | BPF_W | BPF_ABS, "ld";
    /// `mul #k`
    MulK = BPF_ALU | BPF_MUL | BPF_K, "mul";
    /// `jgt #k`
    JgtK = BPF_JMP | BPF_JGT | BPF_K, "jgt";
    /// `ldh [k]`
    LdAbsH = BPF_LD | BPF_H | BPF_ABS, "ldh";
    /// `mul x`
    MulX = BPF_ALU | BPF_MUL | BPF_X, "mul";
    /// `jgt x`
    JgtX = BPF_JMP | BPF_JGT | BPF_X, "jgt";
    /// `ldb [k]`
    LdAbsB = BPF_LD | BPF_B | BPF_ABS, "ldb";
    /// `div #k`
    DivK = BPF_ALU | BPF_DIV | BPF_K, "div";
    /// `jge #k`
    JgeK = BPF_JMP | BPF_JGE | BPF_K, "jge";
    /// `div x`
    DivX = BPF_ALU | BPF_DIV | BPF_X, "div";
    /// `jge x`
    JgeX = BPF_JMP | BPF_JGE | BPF_X, "jge";
    /// `ld [x + k]`
    LdIndW = BPF_LD | BPF_W | BPF_IND, "ld";
    /// `or #k`
    OrK = BPF_ALU | BPF_OR | BPF_K, "or";
    /// `jset #k`
    JsetK = BPF_JMP | BPF_JSET | BPF_K, "jset";
    /// `ldh [x + k]`
    LdIndH = BPF_LD | BPF_H | BPF_IND, "ldh";
    /// `or x`
    OrX = BPF_ALU | BPF_OR | BPF_X, "or";
    /// `jset x`
    JsetX = BPF_JMP | BPF_JSET | BPF_X, "jset";
    /// `ldb [x + k]`
    LdIndB = BPF_LD | BPF_B | BPF_IND, "ldb";
    /// `and #k`
    AndK = BPF_ALU | BPF_AND | BPF_K, "and";
    /// `and x`
    AndX = BPF_ALU | BPF_AND | BPF_X, "and";
    /// `ld M[k]`
    LdMem = BPF_LD | BPF_MEM, "ld";
    /// `ldx M[k]`
    LdxMem = BPF_LDX | BPF_MEM, "ldx";
    /// `lsh #k`
    LshK = BPF_ALU | BPF_LSH | BPF_K, "lsh";
    /// `lsh x`
    LshX = BPF_ALU | BPF_LSH | BPF_X, "lsh";
    /// `rsh #k`
    RshK = BPF_ALU | BPF_RSH | BPF_K, "rsh";
    /// `rsh x`
    RshX = BPF_ALU | BPF_RSH | BPF_X, "rsh";
    /// `ld #pktlen` (the wire length)
    LdLen = BPF_LD | BPF_W | BPF_LEN, "ld";
    /// `ldx #pktlen` (the wire length)
    LdxLen = BPF_LDX | BPF_W | BPF_LEN, "ldx";
    /// `neg`
    Neg = BPF_ALU | BPF_NEG, "neg";
    /// `txa`
    Txa = BPF_MISC | BPF_TXA, "txa";
    /// `mod #k`
    ModK = BPF_ALU | BPF_MOD | BPF_K, "mod";
    /// `mod x`
    ModX = BPF_ALU | BPF_MOD | BPF_X, "mod";
    /// `xor #k`
    XorK = BPF_ALU | BPF_XOR | BPF_K, "xor";
    /// `xor x`
    XorX = BPF_ALU | BPF_XOR | BPF_X, "xor";
    /// `ldxb 4*([k]&0xf)` (IPv4 header length)
    LdxMsh = BPF_LDX | BPF_B | BPF_MSH, "ldxb";
}

impl Opcode {
    /// Whether this is a known opcode.
    pub const fn is_known(self) -> bool {
        !matches!(self, Opcode::Unknown(_))
    }

    /// Whether this is a conditional jump (uses `jt`/`jf`).
    pub const fn is_conditional_jump(self) -> bool {
        matches!(
            self,
            Opcode::JeqK
                | Opcode::JeqX
                | Opcode::JgtK
                | Opcode::JgtX
                | Opcode::JgeK
                | Opcode::JgeX
                | Opcode::JsetK
                | Opcode::JsetX
        )
    }

    /// Whether this is a return.
    pub const fn is_ret(self) -> bool {
        matches!(self, Opcode::RetK | Opcode::RetA)
    }

    /// Whether `k` means something for this opcode (it is ignored by, e.g., `tax` and `add x`).
    pub const fn uses_k(self) -> bool {
        !matches!(
            self,
            Opcode::Tax
                | Opcode::Txa
                | Opcode::RetA
                | Opcode::LdLen
                | Opcode::LdxLen
                | Opcode::Neg
                | Opcode::AddX
                | Opcode::SubX
                | Opcode::MulX
                | Opcode::DivX
                | Opcode::ModX
                | Opcode::AndX
                | Opcode::OrX
                | Opcode::XorX
                | Opcode::LshX
                | Opcode::RshX
                | Opcode::JeqX
                | Opcode::JgtX
                | Opcode::JgeX
                | Opcode::JsetX
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_49_round_trip_and_are_distinct() {
        let mut codes: Vec<u16> = Opcode::ALL.iter().map(|o| o.code()).collect();
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_code(op.code()), op);
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 49);
        let known = (0..=u16::MAX).filter(|&c| Opcode::from_code(c).is_known()).count();
        assert_eq!(known, 49);
    }
}
