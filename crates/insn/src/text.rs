//! tcpdump's text forms of a program: `-d` (listing), `-dd` (C array), `-ddd` (decimal), plus
//! reading any of them (and assembler source) back.
//!
//! Printing follows libpcap's `bpf_dump`/`bpf_image` to the byte. Two listing styles exist
//! because libpcap changed its output between the installed 1.10.3 and 1.11:
//!
//! | | [`ListingStyle::Libpcap110`] (tcpdump 4.99.3, default) | [`ListingStyle::Libpcap111`] |
//! |---|---|---|
//! | operand-less lines (`ret`, `tax`, `neg`) | trailing spaces kept (`"ret      "`) | trimmed |
//! | `ldx` of the wire length (0x81) | `unimp 0x81` | `ldx #pktlen` |
//!
//! The parsers accept both styles, and the 1.11 TESTrun listings whose lines end in a
//! `; 0x…` comment. A listing does not show every field: `unimp 0x…` reads back with `k` zero
//! (and `jt`/`jf` zero unless its class is JMP), and operand-less instructions (`tax`, `ret`,
//! `add x`…) read back with `k` zero, although compilers sometimes leave a stale `k` there.

use crate::operand::{self, Line, Operand, Tok};
use crate::{Insn, Opcode, ParseError, Program, asm};
use std::fmt::Write as _;

/// How a listing (`-d`) is printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListingStyle {
    /// Byte-identical to the installed tcpdump 4.99.3 / libpcap 1.10.3.
    #[default]
    Libpcap110,
    /// libpcap 1.11: no trailing spaces; `ldx #pktlen` has a name.
    Libpcap111,
}

/// The text forms a program can be read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `tcpdump -d`: `(000) ldh      [12]` (either [`ListingStyle`], with or without `; 0x…`).
    Listing,
    /// `tcpdump -dd`: `{ 0x28, 0, 0, 0x0000000c },`.
    CArray,
    /// `tcpdump -ddd`: a count line, then `code jt jf k` in decimal; also `bpf_asm`'s one-line
    /// `count,code jt jf k,…` form.
    Decimal,
    /// Assembler source ([`crate::asm`]).
    Asm,
}

/// One `-d` line for instruction `insn` at index `n`, without the newline.
pub fn image(insn: &Insn, n: usize, style: ListingStyle) -> String {
    use Opcode::*;
    let k = insn.k;
    let sk = k as i32; // bpf_image prints most constants with %d
    let (op, operand): (&str, String) = match insn.opcode() {
        Unknown(code) => ("unimp", format!("0x{code:x}")),
        LdxLen if style == ListingStyle::Libpcap110 => ("unimp", format!("0x{:x}", insn.code)),
        RetK => ("ret", format!("#{sk}")),
        RetA | Neg | Tax | Txa => (insn.opcode().mnemonic(), String::new()),
        o @ (LdAbsW | LdAbsH | LdAbsB) => {
            let operand = match crate::code::ancillary_image_name(k) {
                Some(name) => format!("[{name}]"),
                None => format!("[{sk}]"),
            };
            (o.mnemonic(), operand)
        }
        o @ (LdIndW | LdIndH | LdIndB) => (o.mnemonic(), format!("[x + {sk}]")),
        o @ (LdLen | LdxLen) => (o.mnemonic(), "#pktlen".to_string()),
        o @ (LdImm | LdxImm) => (o.mnemonic(), format!("#0x{k:x}")),
        o @ (LdMem | LdxMem | St | Stx) => (o.mnemonic(), format!("M[{sk}]")),
        LdxMsh => ("ldxb", format!("4*([{sk}]&0xf)")),
        Ja => ("ja", format!("{}", (n as u32).wrapping_add(1).wrapping_add(k) as i32)),
        o @ (JeqK | JgtK | JgeK | JsetK) => (o.mnemonic(), format!("#0x{k:x}")),
        o @ (JeqX | JgtX | JgeX | JsetX) => (o.mnemonic(), "x".to_string()),
        o @ (AddK | SubK | MulK | DivK | ModK | LshK | RshK) => (o.mnemonic(), format!("#{sk}")),
        o @ (AndK | OrK | XorK) => (o.mnemonic(), format!("#0x{k:x}")),
        o @ (AddX | SubX | MulX | DivX | ModX | AndX | OrX | XorX | LshX | RshX) => {
            (o.mnemonic(), "x".to_string())
        }
    };
    let n32 = n as i32;
    // Like bpf_image, decide by the class and op bits alone, so unknown codes of the JMP class
    // print their targets too.
    let conditional = crate::code::class(insn.code) == crate::code::BPF_JMP
        && crate::code::op(insn.code) != crate::code::BPF_JA;
    let mut line = if conditional {
        format!(
            "({n:03}) {op:<8} {operand:<16} jt {}\tjf {}",
            n32.wrapping_add(1).wrapping_add(i32::from(insn.jt)),
            n32.wrapping_add(1).wrapping_add(i32::from(insn.jf))
        )
    } else {
        format!("({n:03}) {op:<8} {operand}")
    };
    if style == ListingStyle::Libpcap111 {
        line.truncate(line.trim_end().len());
    }
    line
}

/// The `-d` listing, as the installed tcpdump prints it (one line per instruction).
pub fn listing(prog: &[Insn]) -> String {
    listing_with(prog, ListingStyle::default())
}

/// The `-d` listing in a chosen style.
pub fn listing_with(prog: &[Insn], style: ListingStyle) -> String {
    let mut out = String::new();
    for (n, insn) in prog.iter().enumerate() {
        out.push_str(&image(insn, n, style));
        out.push('\n');
    }
    out
}

/// The `-dd` form: `{ 0x%x, %d, %d, 0x%08x },` per instruction.
pub fn c_array(prog: &[Insn]) -> String {
    let mut out = String::new();
    for i in prog {
        let _ = writeln!(out, "{{ 0x{:x}, {}, {}, 0x{:08x} }},", i.code, i.jt, i.jf, i.k);
    }
    out
}

/// The `-ddd` form: the count, then `code jt jf k` in decimal.
pub fn decimal(prog: &[Insn]) -> String {
    let mut out = format!("{}\n", prog.len());
    for i in prog {
        let _ = writeln!(out, "{} {} {} {}", i.code, i.jt, i.jf, i.k);
    }
    out
}

/// Guesses the form of `text` from its first meaningful line.
pub fn detect(text: &str) -> Format {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(';') && !l.starts_with("//"));
    let Some(first) = first else { return Format::Asm };
    if first.starts_with('(') {
        Format::Listing
    } else if first.starts_with('{') {
        Format::CArray
    } else if first
        .split(',')
        .next()
        .is_some_and(|c| !c.trim().is_empty() && c.trim().bytes().all(|b| b.is_ascii_digit()))
    {
        Format::Decimal
    } else {
        Format::Asm
    }
}

/// Reads a program in any text form, detecting which ([`detect`]).
pub fn parse(text: &str) -> Result<Program, ParseError> {
    parse_as(text, detect(text))
}

/// Reads a program in the given form.
pub fn parse_as(text: &str, format: Format) -> Result<Program, ParseError> {
    match format {
        Format::Listing => parse_listing(text),
        Format::CArray => parse_c_array(text),
        Format::Decimal => parse_decimal(text),
        Format::Asm => asm::assemble(text),
    }
}

/// Reads a `-d` listing (1.10 or 1.11 style, `; 0x…` comments allowed).
pub fn parse_listing(text: &str) -> Result<Program, ParseError> {
    let mut prog = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        // The `(NNN)` prefix is zero-padded decimal, which the lexer would read as octal: check
        // it here and blank it out (keeping columns) before lexing the rest.
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with(';') {
            continue;
        }
        let lead = raw.len() - trimmed.len();
        let close = trimmed.find(')').unwrap_or(0);
        let number = trimmed.get(1..close).unwrap_or("");
        if !trimmed.starts_with('(')
            || number.is_empty()
            || !number.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(ParseError::new(
                idx + 1,
                operand::column_of(raw, lead),
                "expected `(NNN)` instruction number",
            ));
        }
        if number.parse::<usize>().ok() != Some(prog.len()) {
            return Err(ParseError::new(
                idx + 1,
                operand::column_of(raw, lead + 1),
                format!("expected instruction number {}, found {number}", prog.len()),
            ));
        }
        let masked = format!("{}{}", " ".repeat(lead + close + 1), &raw[lead + close + 1..]);
        let mut line = Line::lex(&masked, idx + 1)?;
        let mnemonic = line.expect_ident("a mnemonic")?;
        let here = prog.len() as u32;
        let insn = match mnemonic {
            "jeq" | "jgt" | "jge" | "jset" => {
                let operand = operand::parse_operand(&mut line)?;
                let (code, k) = jump_code(mnemonic, operand)
                    .ok_or_else(|| line.error_prev("expected `#k` or `x`"))?;
                let jt = listing_target(&mut line, "jt", here)?;
                let jf = listing_target(&mut line, "jf", here)?;
                Insn::jump(code, k, jt, jf)
            }
            "ja" => {
                let target = line.expect_num()?;
                Insn::stmt(Opcode::Ja.code(), target.wrapping_sub(here).wrapping_sub(1))
            }
            "unimp" => {
                let code = line.expect_num()?;
                let code = u16::try_from(code)
                    .map_err(|_| line.error_prev("opcode does not fit in 16 bits"))?;
                let mut insn = Insn::stmt(code, 0);
                if line.peek() == Some(&Tok::Ident("jt")) {
                    insn.jt = listing_target(&mut line, "jt", here)?;
                    insn.jf = listing_target(&mut line, "jf", here)?;
                }
                insn
            }
            _ => operand::parse_stmt(&mut line, mnemonic, idx + 1)?,
        };
        line.expect_end()?;
        prog.push(insn);
    }
    Ok(Program(prog))
}

/// The code and k of a conditional jump mnemonic with its `#k` or `x` operand.
pub(crate) fn jump_code(mnemonic: &str, operand: Operand) -> Option<(u16, u32)> {
    use crate::code::*;
    let op = match mnemonic {
        "jeq" => BPF_JEQ,
        "jgt" => BPF_JGT,
        "jge" => BPF_JGE,
        "jset" => BPF_JSET,
        _ => return None,
    };
    match operand {
        Operand::Imm(k) => Some((BPF_JMP | op | BPF_K, k)),
        Operand::X => Some((BPF_JMP | op | BPF_X, 0)),
        _ => None,
    }
}

/// `jt N` / `jf N` with an absolute target, turned into the 8-bit offset from `here + 1`.
fn listing_target(line: &mut Line<'_>, word: &str, here: u32) -> Result<u8, ParseError> {
    match line.next() {
        Some(Tok::Ident(w)) if w == word => {}
        _ => return Err(line.error_prev(format!("expected `{word}`"))),
    }
    let target = line.expect_num()?;
    let offset = i64::from(target as i32) - i64::from(here) - 1;
    u8::try_from(offset)
        .map_err(|_| line.error_prev(format!("target {target} is not 0..255 instructions ahead")))
}

/// Reads the `-dd` form.
pub fn parse_c_array(text: &str) -> Result<Program, ParseError> {
    let mut prog = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let mut line = Line::lex(raw, idx + 1)?;
        if line.at_end() {
            continue;
        }
        line.expect_punct('{')?;
        let code = line.expect_num()?;
        let code =
            u16::try_from(code).map_err(|_| line.error_prev("code does not fit in 16 bits"))?;
        line.expect_punct(',')?;
        let jt = u8::try_from(line.expect_num()?)
            .map_err(|_| line.error_prev("jt does not fit in 8 bits"))?;
        line.expect_punct(',')?;
        let jf = u8::try_from(line.expect_num()?)
            .map_err(|_| line.error_prev("jf does not fit in 8 bits"))?;
        line.expect_punct(',')?;
        let k = line.expect_num()?;
        line.expect_punct('}')?;
        line.eat_punct(',');
        line.expect_end()?;
        prog.push(Insn::new(code, jt, jf, k));
    }
    Ok(Program(prog))
}

/// Reads the `-ddd` form (count line, then `code jt jf k` lines), or `bpf_asm`'s
/// `count,code jt jf k,…` one-liner.
pub fn parse_decimal(text: &str) -> Result<Program, ParseError> {
    // Gather (line, column, field) items: one per non-empty line, or per comma-separated field.
    let mut items: Vec<(usize, usize, &str)> = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let mut offset = 0;
        for part in raw.split(',') {
            let lead = part.len() - part.trim_start().len();
            if !part.trim().is_empty() {
                items.push((idx + 1, operand::column_of(raw, offset + lead), part.trim()));
            }
            offset += part.len() + 1;
        }
    }
    let Some(&(line0, col0, count_text)) = items.first() else {
        return Err(ParseError::new(1, 1, "empty program text"));
    };
    let count: usize = count_text.parse().map_err(|_| {
        ParseError::new(line0, col0, format!("expected an instruction count, found `{count_text}`"))
    })?;
    let mut prog = Vec::new();
    for &(line, col, field) in &items[1..] {
        let nums: Vec<&str> = field.split_whitespace().collect();
        let err = |m: &str| ParseError::new(line, col, format!("{m} in `{field}`"));
        if nums.len() != 4 {
            return Err(err("expected four numbers `code jt jf k`"));
        }
        let num = |s: &str| operand::parse_number(s);
        let code =
            num(nums[0]).and_then(|v| u16::try_from(v).ok()).ok_or_else(|| err("bad code"))?;
        let jt = num(nums[1]).and_then(|v| u8::try_from(v).ok()).ok_or_else(|| err("bad jt"))?;
        let jf = num(nums[2]).and_then(|v| u8::try_from(v).ok()).ok_or_else(|| err("bad jf"))?;
        let k = num(nums[3]).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| err("bad k"))?;
        prog.push(Insn::new(code, jt, jf, k));
    }
    if prog.len() != count {
        return Err(ParseError::new(
            line0,
            col0,
            format!("count says {count} instructions, found {}", prog.len()),
        ));
    }
    Ok(Program(prog))
}
