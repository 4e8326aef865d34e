//! An assembler and disassembler in the style of Linux's `bpf_asm` (`tools/bpf/bpf_exp.y`).
//!
//! ```text
//! ; accept IPv4 TCP, drop the rest
//!         ldh [12]
//!         jne #0x800, drop        ; jne/jlt/jle are jeq/jge/jgt with the targets swapped
//!         ldb [23]
//!         jeq #6, accept, drop
//! accept: ret #262144
//! drop:   ret #0
//! ```
//!
//! Accepted syntax, one instruction per line, `;` or `//` comments, any number of `name:` labels
//! before an instruction:
//!
//! * loads: `ld #k`, `ld #len` (also `#pktlen`, `len`), `ld M[k]`, `ld [k]`, `ld [x + k]`,
//!   `ldh`/`ldb` with `[k]`/`[x + k]`, `ldi #k`, `ldx #k`, `ldx M[k]`, `ldx #len`, `ldxi #k`,
//!   `ldx 4*([k]&0xf)`, `ldxb 4*([k]&0xf)`; ancillary loads by name: `ld vlan_tci`,
//!   `ldb #vlan_pr`, `ld [ifidx]` (`bpf_asm` keywords and libpcap's `bpf_image` names both work);
//! * stores `st M[k]`, `stx M[k]`; ALU `add|sub|mul|div|mod|and|or|xor|lsh|rsh` with `#k` or
//!   `x` (`%x`), `neg`; `tax`, `txa`; `ret #k`, `ret a` (`ret` alone also means `ret a`);
//! * jumps: `ja L` / `jmp L`; `jeq|jgt|jge|jset #k|x, Ltrue[, Lfalse]` (a missing false
//!   target means the next instruction); `jne`/`jneq`, `jlt`, `jle` take the targets of `jeq`,
//!   `jge`, `jgt` swapped;
//! * numbers in decimal, `0x` hex, `0b` binary or leading-`0` octal; a leading `-` wraps;
//! * `.insn code, jt, jf, k` for any raw instruction (unknown opcodes, ignored fields that are not
//!   zero, jumps out of range), so that [`disassemble`] can print every program.
//!
//! [`disassemble`] emits labels `L<index>` and the canonical spelling of each instruction;
//! `assemble(disassemble(p)) == p` for every program `p`.

use crate::operand::{self, Line, Tok};
use crate::text::jump_code;
use crate::{Insn, Opcode, ParseError, Program};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A jump target as written: a label and where it appeared.
struct LabelRef {
    name: String,
    line: usize,
    column: usize,
}

/// A jump waiting for its labels: (instruction index, taken target, not-taken target).
struct PendingJump {
    index: usize,
    jt: Option<LabelRef>,
    jf: Option<LabelRef>,
}

/// Assembles `bpf_asm`-style source into a program.
pub fn assemble(text: &str) -> Result<Program, ParseError> {
    let mut prog: Vec<Insn> = Vec::new();
    let mut labels: HashMap<&str, usize> = HashMap::new();
    let mut pending: Vec<PendingJump> = Vec::new();

    for (idx, raw) in text.lines().enumerate() {
        let mut line = Line::lex(raw, idx + 1)?;
        // Leading `name:` label definitions.
        while let (Some(Tok::Ident(name)), Some(Tok::Punct(':'))) =
            (line.peek().cloned(), line.peek_at(1))
        {
            if labels.insert(name, prog.len()).is_some() {
                return Err(line.error(format!("label `{name}` is defined twice")));
            }
            line.next();
            line.next();
        }
        if line.at_end() {
            continue;
        }
        let mnemonic = line.expect_ident("a mnemonic or a label")?;
        let index = prog.len();
        let insn = match mnemonic {
            ".insn" => {
                let code = line.expect_num()?;
                let code = u16::try_from(code)
                    .map_err(|_| line.error_prev("code does not fit in 16 bits"))?;
                line.expect_punct(',')?;
                let jt = u8::try_from(line.expect_num()?)
                    .map_err(|_| line.error_prev("jt does not fit in 8 bits"))?;
                line.expect_punct(',')?;
                let jf = u8::try_from(line.expect_num()?)
                    .map_err(|_| line.error_prev("jf does not fit in 8 bits"))?;
                line.expect_punct(',')?;
                let k = line.expect_num()?;
                Insn::new(code, jt, jf, k)
            }
            "ja" | "jmp" => {
                let target = label_ref(&mut line)?;
                pending.push(PendingJump { index, jt: Some(target), jf: None });
                Insn::stmt(Opcode::Ja.code(), 0)
            }
            "jeq" | "jgt" | "jge" | "jset" | "jne" | "jneq" | "jlt" | "jle" => {
                let (base, swapped) = match mnemonic {
                    "jne" | "jneq" => ("jeq", true),
                    "jlt" => ("jge", true),
                    "jle" => ("jgt", true),
                    other => (other, false),
                };
                let column = line.column();
                let operand = operand::parse_operand(&mut line)?;
                let (code, k) = jump_code(base, operand).ok_or_else(|| {
                    ParseError::new(idx + 1, column, format!("`{mnemonic}` needs `#k` or `x`"))
                })?;
                line.expect_punct(',')?;
                let first = Some(label_ref(&mut line)?);
                let second = if line.eat_punct(',') { Some(label_ref(&mut line)?) } else { None };
                let (jt, jf) = if swapped { (second, first) } else { (first, second) };
                pending.push(PendingJump { index, jt, jf });
                Insn::jump(code, k, 0, 0)
            }
            _ => operand::parse_stmt(&mut line, mnemonic, idx + 1)?,
        };
        line.expect_end()?;
        prog.push(insn);
    }

    for jump in pending {
        let resolve = |r: &LabelRef| -> Result<usize, ParseError> {
            labels.get(r.name.as_str()).copied().ok_or_else(|| {
                ParseError::new(r.line, r.column, format!("undefined label `{}`", r.name))
            })
        };
        let next = jump.index + 1;
        let Some(insn) = prog.get_mut(jump.index) else { continue };
        if insn.code == Opcode::Ja.code() {
            if let Some(r) = &jump.jt {
                // Any target is representable: k wraps, so backward `ja` assembles too.
                insn.k = (resolve(r)? as u32).wrapping_sub(next as u32);
            }
            continue;
        }
        let offset = |r: &Option<LabelRef>| -> Result<u8, ParseError> {
            let Some(r) = r else { return Ok(0) };
            let target = resolve(r)?;
            let off = target.checked_sub(next).ok_or_else(|| {
                ParseError::new(
                    r.line,
                    r.column,
                    format!("conditional jump to `{}` goes backward", r.name),
                )
            })?;
            u8::try_from(off).map_err(|_| {
                ParseError::new(
                    r.line,
                    r.column,
                    format!("`{}` is {off} instructions ahead; at most 255 fit", r.name),
                )
            })
        };
        insn.jt = offset(&jump.jt)?;
        insn.jf = offset(&jump.jf)?;
    }
    Ok(Program(prog))
}

fn label_ref(line: &mut Line<'_>) -> Result<LabelRef, ParseError> {
    let column = line.column();
    let name = line.expect_ident("a label")?;
    Ok(LabelRef { name: name.to_string(), line: line.number, column })
}

/// Prints `prog` as assembler source that [`assemble`] turns back into the identical program.
pub fn disassemble(prog: &[Insn]) -> String {
    let len = prog.len();
    let lines: Vec<(String, Vec<usize>)> =
        prog.iter().enumerate().map(|(i, insn)| spell(insn, i, len)).collect();
    let mut is_target = vec![false; len];
    for (_, targets) in &lines {
        for &t in targets {
            is_target[t] = true;
        }
    }
    let mut out = String::new();
    for (i, (text, _)) in lines.iter().enumerate() {
        if is_target[i] {
            let _ = writeln!(out, "L{i}:");
        }
        let _ = writeln!(out, "    {text}");
    }
    out
}

/// The canonical spelling of one instruction and the indices it names as labels.
fn spell(insn: &Insn, i: usize, len: usize) -> (String, Vec<usize>) {
    use Opcode::*;
    let raw = || {
        (format!(".insn 0x{:x}, {}, {}, 0x{:x}", insn.code, insn.jt, insn.jf, insn.k), Vec::new())
    };
    let op = insn.opcode();
    let k = insn.k;
    if !op.is_known()
        || (!op.uses_k() && k != 0)
        || (!op.is_conditional_jump() && (insn.jt | insn.jf) != 0)
    {
        return raw();
    }
    let m = op.mnemonic();
    let text = match op {
        Ja => {
            let target = ((i as u32).wrapping_add(1).wrapping_add(k)) as usize;
            if target >= len {
                return raw();
            }
            return (format!("ja L{target}"), vec![target]);
        }
        JeqK | JgtK | JgeK | JsetK | JeqX | JgtX | JgeX | JsetX => {
            let (t, f) = (i + 1 + usize::from(insn.jt), i + 1 + usize::from(insn.jf));
            if t >= len || f >= len {
                return raw();
            }
            let operand = if op.uses_k() { format!("#0x{k:x}") } else { "x".to_string() };
            return (format!("{m} {operand}, L{t}, L{f}"), vec![t, f]);
        }
        LdAbsW | LdAbsH | LdAbsB => match crate::code::ancillary_asm_name(k) {
            Some(name) => format!("{m} {name}"),
            None => format!("{m} [{k}]"),
        },
        LdIndW | LdIndH | LdIndB => format!("{m} [x + {k}]"),
        LdImm | LdxImm => format!("{m} #0x{k:x}"),
        LdLen | LdxLen => format!("{m} #len"),
        LdMem | LdxMem | St | Stx => format!("{m} M[{k}]"),
        LdxMsh => format!("ldxb 4*([{k}]&0xf)"),
        RetK => format!("ret #{k}"),
        RetA => "ret a".to_string(),
        Neg | Tax | Txa => m.to_string(),
        AddK | SubK | MulK | DivK | ModK | AndK | OrK | XorK | LshK | RshK => format!("{m} #{k}"),
        AddX | SubX | MulX | DivX | ModX | AndX | OrX | XorX | LshX | RshX => format!("{m} x"),
        Unknown(_) => return raw(),
    };
    (text, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bpf_asm_example() {
        let src = "\
; accept IPv4 TCP
        ldh [12]
        jne #0x800, drop
        ldb [23]
        jeq #6, accept, drop
accept: ret #262144
drop:   ret #0
";
        let p = assemble(src).unwrap();
        assert_eq!(
            p.0,
            vec![
                Insn::stmt(0x28, 12),
                Insn::jump(0x15, 0x800, 0, 3),
                Insn::stmt(0x30, 23),
                Insn::jump(0x15, 6, 0, 1),
                Insn::stmt(0x06, 262144),
                Insn::stmt(0x06, 0),
            ]
        );
        assert_eq!(assemble(&disassemble(&p)).unwrap(), p);
    }

    #[test]
    fn errors_are_located() {
        let e = assemble("  ld [12]\n  jeq #1, nowhere\n ret #0\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 11), "{e}");
        let e = assemble("ld [12]\nfoo #1\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 5), "{e}");
        assert!(e.message.contains("unknown mnemonic"), "{e}");
        let e = assemble("a: ret #0\na: ret #1\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = assemble("x: ret #0\n jeq #1, x\n").unwrap_err();
        assert!(e.message.contains("backward"), "{e}");
    }

    #[test]
    fn ancillary_and_misc_forms() {
        let p = assemble("ld vlan_tci\nldb #vlan_pr\nld [ifidx]\nldx 4*([14]&0xf)\nld #len\nldx len\nret a\nret x\n")
            .unwrap();
        let codes: Vec<(u16, u32)> = p.iter().map(|i| (i.code, i.k)).collect();
        assert_eq!(
            codes,
            vec![
                (0x20, 0xfffff02c),
                (0x30, 0xfffff030),
                (0x20, 0xfffff008),
                (0xb1, 14),
                (0x80, 0),
                (0x81, 0),
                (0x16, 0),
                (0x0e, 0)
            ]
        );
        assert_eq!(assemble(&disassemble(&p)).unwrap(), p);
    }

    #[test]
    fn disassemble_backward_ja_and_raw() {
        let p = Program(vec![
            Insn::stmt(0x05, u32::MAX), // ja to itself
            Insn::jump(0x15, 1, 200, 0),
            Insn::new(0x07, 1, 0, 3),
            Insn::stmt(0xffff, 9),
        ]);
        let text = disassemble(&p);
        assert!(text.contains("ja L0"), "{text}");
        assert_eq!(assemble(&text).unwrap(), p);
    }
}
