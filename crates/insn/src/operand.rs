//! The line lexer and operand grammar shared by the `-d` listing parser and the assembler.
//!
//! Both text forms spell operands the same way (`#0x800`, `[x + 14]`, `M[3]`, `4*([14]&0xf)`);
//! they differ only in how jumps name their targets, which the callers handle.

use crate::code;
use crate::{Opcode, ParseError};

/// One token of a line, with its byte offset in the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    Ident(&'a str),
    /// A number, already folded into 32 bits (negative numbers wrap, as C's `%d` printed them).
    Num(u32),
    Punct(char),
}

/// A tokenized line: tokens with their byte offsets, and the 1-based line number.
pub(crate) struct Line<'a> {
    pub text: &'a str,
    pub number: usize,
    pub toks: Vec<(usize, Tok<'a>)>,
    pub pos: usize,
}

impl<'a> Line<'a> {
    /// Tokenizes one line, dropping `;` and `//` comments. `#` is a token, not a comment.
    pub fn lex(text: &'a str, number: usize) -> Result<Line<'a>, ParseError> {
        let bytes = text.as_bytes();
        let mut toks = Vec::new();
        let mut i = 0;
        let err = |at: usize, msg: String| ParseError::new(number, column_of(text, at), msg);
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c == b';' || (c == b'/' && bytes.get(i + 1) == Some(&b'/')) {
                break;
            } else if c.is_ascii_alphabetic() || c == b'_' || c == b'.' {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                {
                    i += 1;
                }
                toks.push((start, Tok::Ident(&text[start..i])));
            } else if c.is_ascii_digit()
                || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                let start = i;
                let negative = c == b'-';
                if negative {
                    i += 1;
                }
                let digits_start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let value = parse_number(&text[digits_start..i])
                    .ok_or_else(|| err(start, format!("invalid number `{}`", &text[start..i])))?;
                let value = if negative {
                    if value > 1 << 32 {
                        return Err(err(
                            start,
                            format!("number `{}` does not fit in 32 bits", &text[start..i]),
                        ));
                    }
                    (value as u32).wrapping_neg()
                } else {
                    u32::try_from(value).map_err(|_| {
                        err(start, format!("number `{}` does not fit in 32 bits", &text[start..i]))
                    })?
                };
                toks.push((start, Tok::Num(value)));
            } else if b"#[]+*()&,:%{}".contains(&c) {
                toks.push((i, Tok::Punct(c as char)));
                i += 1;
            } else {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(err(i, format!("unexpected character `{ch}`")));
            }
        }
        Ok(Line { text, number, toks, pos: 0 })
    }

    pub fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos).map(|t| &t.1)
    }

    pub fn peek_at(&self, ahead: usize) -> Option<&Tok<'a>> {
        self.toks.get(self.pos + ahead).map(|t| &t.1)
    }

    pub fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.toks.get(self.pos).map(|t| t.1.clone());
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// The column of the current token (or of the line's end).
    pub fn column(&self) -> usize {
        let at = self.toks.get(self.pos).map_or(self.text.trim_end().len(), |t| t.0);
        column_of(self.text, at)
    }

    /// An error located at the current token.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError::new(self.number, self.column(), message)
    }

    /// An error located at the previous token.
    pub fn error_prev(&self, message: impl Into<String>) -> ParseError {
        let at = self.pos.checked_sub(1).and_then(|p| self.toks.get(p)).map_or(0, |t| t.0);
        ParseError::new(self.number, column_of(self.text, at), message)
    }

    pub fn describe_current(&self) -> String {
        match self.peek() {
            None => "end of line".to_string(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Num(_)) => {
                let at = self.toks[self.pos].0;
                let end = self.toks.get(self.pos + 1).map_or(self.text.len(), |t| t.0);
                format!("`{}`", self.text[at..end].trim())
            }
            Some(Tok::Punct(c)) => format!("`{c}`"),
        }
    }

    pub fn expect_punct(&mut self, c: char) -> Result<(), ParseError> {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}`, found {}", self.describe_current())))
        }
    }

    pub fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect_num(&mut self) -> Result<u32, ParseError> {
        match self.peek() {
            Some(Tok::Num(n)) => {
                let n = *n;
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.error(format!("expected a number, found {}", self.describe_current()))),
        }
    }

    pub fn expect_ident(&mut self, what: &str) -> Result<&'a str, ParseError> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = *s;
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error(format!("expected {what}, found {}", self.describe_current()))),
        }
    }

    pub fn expect_end(&self) -> Result<(), ParseError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(format!("unexpected {}", self.describe_current())))
        }
    }
}

/// The 1-based character column of byte offset `at` in `text`.
pub(crate) fn column_of(text: &str, at: usize) -> usize {
    text.get(..at).map_or(at, |s| s.chars().count()) + 1
}

/// Parses decimal, `0x` hex, `0b` binary or leading-`0` octal digits (as `bpf_asm` does), at
/// most 70 digits.
pub(crate) fn parse_number(s: &str) -> Option<u64> {
    use sift_diag::number::{Radix, Syntax, parse};
    let (n, radix) = parse(s, Syntax::ASSEMBLER, u64::MAX).ok()?;
    let prefix = match radix {
        Radix::Hex | Radix::Binary => 2,
        Radix::Octal => 1,
        Radix::Decimal => 0,
    };
    (s.len() - prefix <= 70).then_some(n)
}

/// An operand, as written after a mnemonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    /// Nothing.
    None,
    /// `#k`
    Imm(u32),
    /// `#pktlen`, `#len`, `len`
    Len,
    /// `M[k]`
    Mem(u32),
    /// `[k]`, or an ancillary name (`[vlan_tci]`, `vlan_tci`, `#vlan_tci`) as its offset.
    Abs(u32),
    /// `[x + k]`
    Ind(u32),
    /// `4*([k]&0xf)`
    Msh(u32),
    /// `x` (or `%x`)
    X,
    /// `a` (or `%a`)
    A,
    /// A bare number (`ja` targets in listings, `unimp` codes).
    Num(u32),
}

/// Parses the operand of a non-jump `mnemonic` and encodes the instruction; `line_number` is
/// 1-based, for the error.
pub(crate) fn parse_stmt(
    line: &mut Line<'_>,
    mnemonic: &str,
    line_number: usize,
) -> Result<crate::Insn, ParseError> {
    let column = line.column();
    let operand = parse_operand(line)?;
    let (op, k) = encode(mnemonic, operand)
        .ok_or_else(|| ParseError::new(line_number, column, bad_combo(mnemonic)))?;
    Ok(crate::Insn::stmt(op.code(), k))
}

/// Parses one operand, stopping before `,`, `jt` or the end of the line.
pub(crate) fn parse_operand(line: &mut Line<'_>) -> Result<Operand, ParseError> {
    let Some(tok) = line.peek().cloned() else { return Ok(Operand::None) };
    match tok {
        Tok::Punct(',') => Ok(Operand::None),
        Tok::Ident("jt") => Ok(Operand::None),
        Tok::Punct('#') => {
            line.next();
            match line.next() {
                Some(Tok::Num(n)) => Ok(Operand::Imm(n)),
                Some(Tok::Ident(name)) => {
                    named(name).ok_or_else(|| line.error_prev(format!("unknown name `{name}`")))
                }
                _ => Err(line.error_prev("expected a number or a name after `#`")),
            }
        }
        Tok::Punct('%') => {
            line.next();
            match line.next() {
                Some(Tok::Ident("x" | "X")) => Ok(Operand::X),
                Some(Tok::Ident("a" | "A")) => Ok(Operand::A),
                _ => Err(line.error_prev("expected `x` or `a` after `%`")),
            }
        }
        Tok::Punct('[') => {
            line.next();
            let op = bracket(line)?;
            line.expect_punct(']')?;
            Ok(op)
        }
        Tok::Ident("x" | "X") => {
            line.next();
            Ok(Operand::X)
        }
        Tok::Ident("a" | "A") => {
            line.next();
            Ok(Operand::A)
        }
        Tok::Ident("M") => {
            line.next();
            line.expect_punct('[')?;
            let k = line.expect_num()?;
            line.expect_punct(']')?;
            Ok(Operand::Mem(k))
        }
        Tok::Ident(name) => match named(name) {
            Some(op) => {
                line.next();
                Ok(op)
            }
            None => Err(line.error(format!("unknown operand `{name}`"))),
        },
        Tok::Num(n) => {
            line.next();
            if line.peek() == Some(&Tok::Punct('*')) {
                // 4*([k]&0xf)
                if n != 4 {
                    return Err(
                        line.error_prev("the header-length load must be written `4*([k]&0xf)`")
                    );
                }
                line.next();
                line.expect_punct('(')?;
                line.expect_punct('[')?;
                let k = line.expect_num()?;
                line.expect_punct(']')?;
                line.expect_punct('&')?;
                let mask = line.expect_num()?;
                if mask != 0xf {
                    return Err(
                        line.error_prev("the header-length load must be written `4*([k]&0xf)`")
                    );
                }
                line.expect_punct(')')?;
                Ok(Operand::Msh(k))
            } else {
                Ok(Operand::Num(n))
            }
        }
        Tok::Punct(_) => Err(line.error(format!("unexpected {}", line.describe_current()))),
    }
}

/// Inside `[…]`: `k`, `x + k`, `x`, `%x + k` or an ancillary name.
fn bracket(line: &mut Line<'_>) -> Result<Operand, ParseError> {
    line.eat_punct('%');
    match line.next() {
        Some(Tok::Num(k)) => Ok(Operand::Abs(k)),
        Some(Tok::Ident("x" | "X")) => {
            if line.eat_punct('+') {
                Ok(Operand::Ind(line.expect_num()?))
            } else {
                Ok(Operand::Ind(0))
            }
        }
        Some(Tok::Ident(name)) => match code::ancillary_by_name(name) {
            Some(k) => Ok(Operand::Abs(k)),
            None => Err(line.error_prev(format!("unknown ancillary name `{name}`"))),
        },
        _ => Err(line.error_prev("expected an offset, `x + offset` or an ancillary name")),
    }
}

/// Names usable as operands: the wire length and the ancillary keywords.
fn named(name: &str) -> Option<Operand> {
    match name {
        "len" | "pktlen" => Some(Operand::Len),
        _ => code::ancillary_by_name(name).map(Operand::Abs),
    }
}

/// The instruction a non-jump mnemonic with an operand stands for, as `(opcode, k)`.
/// Returns `None` when the combination does not exist.
pub(crate) fn encode(mnemonic: &str, operand: Operand) -> Option<(Opcode, u32)> {
    use Opcode::*;
    use Operand as O;
    let alu = |k_form: Opcode, x_form: Opcode| match operand {
        O::Imm(k) => Some((k_form, k)),
        O::X => Some((x_form, 0)),
        _ => None,
    };
    match mnemonic {
        "ld" => match operand {
            O::Imm(k) => Some((LdImm, k)),
            O::Len => Some((LdLen, 0)),
            O::Mem(k) => Some((LdMem, k)),
            O::Abs(k) => Some((LdAbsW, k)),
            O::Ind(k) => Some((LdIndW, k)),
            _ => None,
        },
        "ldh" => match operand {
            O::Abs(k) => Some((LdAbsH, k)),
            O::Ind(k) => Some((LdIndH, k)),
            _ => None,
        },
        "ldb" => match operand {
            O::Abs(k) => Some((LdAbsB, k)),
            O::Ind(k) => Some((LdIndB, k)),
            _ => None,
        },
        "ldi" => match operand {
            O::Imm(k) | O::Num(k) => Some((LdImm, k)),
            _ => None,
        },
        "ldx" => match operand {
            O::Imm(k) => Some((LdxImm, k)),
            O::Len => Some((LdxLen, 0)),
            O::Mem(k) => Some((LdxMem, k)),
            O::Msh(k) => Some((LdxMsh, k)),
            _ => None,
        },
        "ldxi" => match operand {
            O::Imm(k) | O::Num(k) => Some((LdxImm, k)),
            _ => None,
        },
        "ldxb" => match operand {
            O::Msh(k) => Some((LdxMsh, k)),
            _ => None,
        },
        "st" => match operand {
            O::Mem(k) => Some((St, k)),
            _ => None,
        },
        "stx" => match operand {
            O::Mem(k) => Some((Stx, k)),
            _ => None,
        },
        "add" => alu(AddK, AddX),
        "sub" => alu(SubK, SubX),
        "mul" => alu(MulK, MulX),
        "div" => alu(DivK, DivX),
        "mod" => alu(ModK, ModX),
        "and" => alu(AndK, AndX),
        "or" => alu(OrK, OrX),
        "xor" => alu(XorK, XorX),
        "lsh" => alu(LshK, LshX),
        "rsh" => alu(RshK, RshX),
        "neg" => (operand == O::None).then_some((Neg, 0)),
        "tax" => (operand == O::None).then_some((Tax, 0)),
        "txa" => (operand == O::None).then_some((Txa, 0)),
        "ret" => match operand {
            O::Imm(k) => Some((RetK, k)),
            O::A | O::None => Some((RetA, 0)),
            // `bpf_asm` accepts `ret x` (BPF_RET|BPF_X); neither libpcap nor Linux runs it.
            O::X => Some((Unknown(crate::code::BPF_RET | crate::code::BPF_X), 0)),
            _ => None,
        },
        _ => None,
    }
}

/// The message for a mnemonic/operand combination that is not an instruction.
pub(crate) fn bad_combo(mnemonic: &str) -> String {
    if KNOWN_MNEMONICS.contains(&mnemonic) {
        format!("invalid operand for `{mnemonic}`")
    } else {
        format!("unknown mnemonic `{mnemonic}`")
    }
}

const KNOWN_MNEMONICS: [&str; 30] = [
    "ld", "ldh", "ldb", "ldi", "ldx", "ldxi", "ldxb", "st", "stx", "add", "sub", "mul", "div",
    "mod", "and", "or", "xor", "lsh", "rsh", "neg", "tax", "txa", "ret", "ja", "jmp", "jeq", "jgt",
    "jge", "jset", "jne",
];
