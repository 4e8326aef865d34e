//! eBPF as text: a program or one instruction in the notation of the kernel verifier's log
//! (`w0 += 5`, `if w0 == 0x800 goto +3`, `r0 = *(u8 *)(r8 +12)`).
//!
//! It exists so that translations can be read, compared in golden files and set beside the
//! verifier's own log line by line; an assembler for the same notation will live next to it.

use std::fmt;

use crate::insn::opcode::alu::*;
use crate::insn::opcode::class::*;
use crate::insn::opcode::jmp::*;
use crate::insn::opcode::{mode, size};
use crate::insn::{EbpfInsn, EbpfProgram};

/// The disassembly, one slot per line in the verifier log's notation (`w0 += 5`,
/// `if w0 == 0x800 goto +3`, `r0 = *(u8 *)(r8 +12)`), each line prefixed with its index.
impl fmt::Display for EbpfProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.insns.len() {
            let insn = &self.insns[i];
            if insn.is_ld_imm64() {
                let hi = self.insns.get(i + 1).map_or(0, |n| n.imm as u32);
                let v = (u64::from(hi) << 32) | u64::from(insn.imm as u32);
                writeln!(f, "{i:4}: r{} = {v:#x} ll", insn.dst)?;
                i += 2;
                continue;
            }
            writeln!(f, "{i:4}: {}", Disasm(insn))?;
            i += 1;
        }
        Ok(())
    }
}

/// One instruction in the verifier log's notation.
pub struct Disasm<'a>(pub &'a EbpfInsn);

fn size_name(code: u8) -> &'static str {
    match code & size::MASK {
        size::W => "u32",
        size::H => "u16",
        size::B => "u8",
        _ => "u64",
    }
}

fn imm_text(imm: i32) -> String {
    if (-1023..=1023).contains(&imm) { imm.to_string() } else { format!("{:#x}", imm as u32) }
}

impl fmt::Display for Disasm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.0;
        let class = i.class();
        let op = i.op();
        let is_x = i.uses_src_reg();
        match class {
            ALU | ALU64 => {
                let r = if class == ALU { 'w' } else { 'r' };
                let src = if is_x { format!("{r}{}", i.src) } else { imm_text(i.imm) };
                let sym = match op {
                    ADD => "+=",
                    SUB => "-=",
                    MUL => "*=",
                    DIV => "/=",
                    OR => "|=",
                    AND => "&=",
                    LSH => "<<=",
                    RSH => ">>=",
                    MOD => "%=",
                    XOR => "^=",
                    MOV => "=",
                    ARSH => "s>>=",
                    NEG => return write!(f, "{r}{} = -{r}{}", i.dst, i.dst),
                    END => {
                        let e = if is_x { "be" } else { "le" };
                        return write!(f, "r{} = {e}{} r{}", i.dst, i.imm, i.dst);
                    }
                    _ => return write!(f, "(unknown alu {:#04x})", i.code),
                };
                write!(f, "{r}{} {sym} {src}", i.dst)
            }
            LDX if i.code & mode::MASK == mode::MEM => {
                write!(f, "r{} = *({} *)(r{} {:+})", i.dst, size_name(i.code), i.src, i.off)
            }
            STX if i.code & mode::MASK == mode::MEM => {
                write!(f, "*({} *)(r{} {:+}) = r{}", size_name(i.code), i.dst, i.off, i.src)
            }
            ST if i.code & mode::MASK == mode::MEM => write!(
                f,
                "*({} *)(r{} {:+}) = {}",
                size_name(i.code),
                i.dst,
                i.off,
                imm_text(i.imm)
            ),
            JMP | JMP32 => {
                let r = if class == JMP32 { 'w' } else { 'r' };
                match op {
                    JA if class == JMP => return write!(f, "goto {:+}", i.off),
                    EXIT if class == JMP => return write!(f, "exit"),
                    CALL if class == JMP => return write!(f, "call {}", i.imm),
                    _ => {}
                }
                let sym = match op {
                    JEQ => "==",
                    JGT => ">",
                    JGE => ">=",
                    JSET => "&",
                    JNE => "!=",
                    JSGT => "s>",
                    JSGE => "s>=",
                    JLT => "<",
                    JLE => "<=",
                    JSLT => "s<",
                    JSLE => "s<=",
                    _ => return write!(f, "(unknown jump {:#04x})", i.code),
                };
                let src = if is_x { format!("{r}{}", i.src) } else { imm_text(i.imm) };
                write!(f, "if {r}{} {sym} {src} goto {:+}", i.dst, i.off)
            }
            _ => write!(f, "(unknown {:#04x})", i.code),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ld_imm64_prints_as_one_line() {
        let mut p = EbpfProgram::default();
        p.insns.extend(EbpfInsn::ld_imm64(1, 0x1234_5678_9abc_def0));
        p.insns.push(EbpfInsn::exit());
        assert_eq!(p.to_string(), "   0: r1 = 0x123456789abcdef0 ll\n   2: exit\n");
        assert_eq!(EbpfProgram::from_bytes(&p.to_bytes()), p);
    }
}
