//! A disassembly listing as `llvm-objdump -d` prints BPF code: slot index, the slot's bytes
//! (16 for a `lddw`), and the instruction in LLVM's C-like BPF syntax (`r0 = *(u64 *)(r1 + 8)`,
//! `if w1 s< w2 goto -1`, `lock *(u64 *)(r10 - 8) += r1`).
//!
//! It exists so that programs sift loads or generates can be set beside clang's output line by
//! line; slots that do not decode are listed as `<unknown>`, as llvm-objdump does.

use std::fmt::Write as _;

use crate::insn::{EbpfInsn, Reg};
use crate::isa::{
    AluOp, AtomicOp, ByteOrder, CallTarget, Cond, ImmKind, Insn, Operand, Size, Width, decode_at,
};

fn reg(width: Width, r: Reg) -> String {
    if width == Width::W32 { format!("w{r}") } else { format!("r{r}") }
}

fn operand(width: Width, o: Operand) -> String {
    match o {
        Operand::Reg(r) => reg(width, r),
        Operand::Imm(i) => i.to_string(),
    }
}

fn ty(size: Size, signed: bool) -> String {
    format!("{}{}", if signed { 's' } else { 'u' }, size.bytes() * 8)
}

fn addr(base: Reg, off: i16) -> String {
    if off < 0 { format!("r{base} - {}", -i32::from(off)) } else { format!("r{base} + {off}") }
}

/// One instruction in LLVM's BPF syntax.
pub fn llvm_syntax(insn: &Insn) -> String {
    match *insn {
        Insn::Alu { width, op, dst, src } => {
            let sym = match op {
                AluOp::Add => "+=",
                AluOp::Sub => "-=",
                AluOp::Mul => "*=",
                AluOp::Div => "/=",
                AluOp::SDiv => "s/=",
                AluOp::Or => "|=",
                AluOp::And => "&=",
                AluOp::Lsh => "<<=",
                AluOp::Rsh => ">>=",
                AluOp::Mod => "%=",
                AluOp::SMod => "s%=",
                AluOp::Xor => "^=",
                AluOp::Mov => "=",
                AluOp::Arsh => "s>>=",
            };
            format!("{} {sym} {}", reg(width, dst), operand(width, src))
        }
        Insn::MovSx { width, bits, dst, src } => {
            format!("{} = (s{bits}){}", reg(width, dst), reg(width, src))
        }
        Insn::Neg { width, dst } => format!("{} = -{}", reg(width, dst), reg(width, dst)),
        Insn::Endian { order, bits, dst } => {
            let n = match order {
                ByteOrder::Le => "le",
                ByteOrder::Be => "be",
                ByteOrder::Swap => "bswap",
            };
            format!("r{dst} = {n}{bits} r{dst}")
        }
        Insn::Load { size, dst, src, off } => {
            format!("r{dst} = *({} *)({})", ty(size, false), addr(src, off))
        }
        Insn::LoadSx { size, dst, src, off } => {
            format!("r{dst} = *({} *)({})", ty(size, true), addr(src, off))
        }
        Insn::Store { size, dst, off, src } => {
            format!("*({} *)({}) = {}", ty(size, false), addr(dst, off), operand(Width::W64, src))
        }
        Insn::Atomic { width, op, fetch, dst, src, off } => {
            let (t, s) = if width == Width::W32 { ("u32", "32") } else { ("u64", "64") };
            let v = reg(width, src);
            let a = addr(dst, off);
            match op {
                AtomicOp::Xchg => {
                    format!("{v} = xchg{}_{s}({a}, {v})", if s == "32" { "32" } else { "" })
                }
                AtomicOp::Cmpxchg => {
                    let r0 = reg(width, 0);
                    format!(
                        "{r0} = cmpxchg{}_{s}({a}, {r0}, {v})",
                        if s == "32" { "32" } else { "" }
                    )
                }
                _ => {
                    let (name, sym) = match op {
                        AtomicOp::Add => ("add", "+="),
                        AtomicOp::Or => ("or", "|="),
                        AtomicOp::And => ("and", "&="),
                        _ => ("xor", "^="),
                    };
                    if fetch {
                        format!("{v} = atomic_fetch_{name}(({t} *)({a}), {v})")
                    } else {
                        format!("lock *({t} *)({a}) {sym} {v}")
                    }
                }
            }
        }
        Insn::LdImm64 { dst, kind, imm } => match kind {
            ImmKind::Imm => format!("r{dst} = {imm} ll"),
            ImmKind::MapFd => format!("r{dst} = map_fd({}) ll", imm as u32),
            ImmKind::MapValue => format!("r{dst} = map_value({}, {}) ll", imm as u32, imm >> 32),
            ImmKind::BtfId => format!("r{dst} = btf_id({}) ll", imm as u32),
            ImmKind::Func => format!("r{dst} = func({:+}) ll", imm as u32 as i32),
            ImmKind::MapIdx => format!("r{dst} = map_idx({}) ll", imm as u32),
            ImmKind::MapIdxValue => {
                format!("r{dst} = map_idx_value({}, {}) ll", imm as u32, imm >> 32)
            }
        },
        Insn::LdAbs { size, imm } => format!("r0 = *({} *)skb[{imm}]", ty(size, false)),
        Insn::LdInd { size, src, imm } => {
            format!("r0 = *({} *)skb[r{src} + {imm}]", ty(size, false))
        }
        Insn::Ja { off, long: false } => format!("goto {off:+}"),
        Insn::Ja { off, long: true } => format!("gotol {off:+}"),
        Insn::Jmp { width, cond, dst, src, off } => {
            let sym = match cond {
                Cond::Eq => "==",
                Cond::Gt => ">",
                Cond::Ge => ">=",
                Cond::Set => "&",
                Cond::Ne => "!=",
                Cond::Sgt => "s>",
                Cond::Sge => "s>=",
                Cond::Lt => "<",
                Cond::Le => "<=",
                Cond::Slt => "s<",
                Cond::Sle => "s<=",
            };
            format!("if {} {sym} {} goto {off:+}", reg(width, dst), operand(width, src))
        }
        Insn::Call(CallTarget::Helper(n)) => format!("call {n}"),
        Insn::Call(CallTarget::Local(n)) => format!("call {n:+}"),
        Insn::Call(CallTarget::Kfunc { btf_id, .. }) => format!("call kfunc {btf_id}"),
        Insn::Callx { dst } => format!("callx r{dst}"),
        Insn::Exit => "exit".to_string(),
    }
}

fn hex(out: &mut String, slot: &EbpfInsn) {
    for (k, b) in slot.encode().iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02x}");
    }
}

/// The listing of a program's slots, one instruction a line.
pub fn objdump(slots: &[EbpfInsn]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < slots.len() {
        let _ = write!(out, "{i:8}:\t");
        hex(&mut out, &slots[i]);
        match decode_at(slots, i) {
            Ok(insn) => {
                if insn.slots() == 2 {
                    out.push(' ');
                    hex(&mut out, &slots[i + 1]);
                }
                let _ = writeln!(out, "\t{}", llvm_syntax(&insn));
                i += insn.slots();
            }
            Err(_) => {
                out.push_str("\t<unknown>\n");
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::EbpfProgram;

    #[test]
    fn lines_are_llvm_objdumps() {
        // The same bytes llvm-mc 14 assembles, and the lines its llvm-objdump prints (without
        // the `<.text+0x…>` target annotations, which need a section).
        let bytes: Vec<u8> = [
            "b7 00 00 00 01 00 00 00",
            "b4 01 00 00 fd ff ff ff",
            "79 10 08 00 00 00 00 00",
            "63 1a fc ff 00 00 00 00",
            "18 01 00 00 88 77 66 55 00 00 00 00 44 33 22 11",
            "ce 21 ff ff 00 00 00 00",
            "db 1a f8 ff 00 00 00 00",
            "dc 00 00 00 10 00 00 00",
            "28 00 00 00 0c 00 00 00",
            "06 00 00 00 00 00 00 00",
        ]
        .iter()
        .flat_map(|l| crate::datafile::parse_hex_bytes(l).unwrap())
        .collect();
        let p = EbpfProgram::from_bytes(&bytes);
        assert_eq!(
            objdump(&p.insns),
            "       0:\tb7 00 00 00 01 00 00 00\tr0 = 1\n\
             \x20      1:\tb4 01 00 00 fd ff ff ff\tw1 = -3\n\
             \x20      2:\t79 10 08 00 00 00 00 00\tr0 = *(u64 *)(r1 + 8)\n\
             \x20      3:\t63 1a fc ff 00 00 00 00\t*(u32 *)(r10 - 4) = r1\n\
             \x20      4:\t18 01 00 00 88 77 66 55 00 00 00 00 44 33 22 11\tr1 = 1234605616436508552 ll\n\
             \x20      6:\tce 21 ff ff 00 00 00 00\tif w1 s< w2 goto -1\n\
             \x20      7:\tdb 1a f8 ff 00 00 00 00\tlock *(u64 *)(r10 - 8) += r1\n\
             \x20      8:\tdc 00 00 00 10 00 00 00\tr0 = be16 r0\n\
             \x20      9:\t28 00 00 00 0c 00 00 00\tr0 = *(u16 *)skb[12]\n\
             \x20     10:\t06 00 00 00 00 00 00 00\tgotol +0\n"
        );
        assert!(
            objdump(&EbpfProgram::from_bytes(&[0x0e, 0, 0, 0, 0, 0, 0, 0]).insns)
                .ends_with("\t<unknown>\n")
        );
    }
}
