//! The text form: one instruction per line, the paper's names in lower case.
//!
//! ```text
//! pushword+6              ; EtherType
//! pushlit|cand 0x0800     ; return FALSE unless IPv4
//! pushword+11
//! push00ff|and
//! pushlit|eq 6            ; protocol TCP
//! ```
//!
//! An instruction is `ACTION`, `OP` or `ACTION|OP`, then the literal for `pushlit` (decimal or
//! `0x` hex, at most 0xffff). Actions: `nopush pushlit pushzero pushone pushffff pushff00
//! push00ff pushword+N pushind`; operators: `nop eq neq lt le gt ge and or xor cor cand cnor
//! cnand add shr` (`pushind`, `add`, `shr` are the indirect-push extension). `.word N` places a
//! raw word (the disassembler writes words that do not decode that way, so any word sequence
//! survives a round trip). Comments start with `;` or `#`. Case does not matter.

use std::fmt;

use crate::insn::{Action, Decoded, Insn, MAX_PUSHWORD, Op, decode};

/// An assembler error, located at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for TextError {}

/// Writes one line per instruction (the canonical text form).
pub fn disassemble(words: &[u16]) -> String {
    let mut out = String::new();
    for d in decode(words) {
        match d {
            Decoded::Insn(i) => out.push_str(&i.to_string()),
            Decoded::Invalid(w) => out.push_str(&format!(".word {w:#06x}")),
        }
        out.push('\n');
    }
    out
}

/// A number as `disassemble` writes it: decimal (at most 10 digits) or lowercase `0x` hex (at
/// most 8 digits); a leading `0` is a decimal digit.
fn parse_num(s: &str) -> Option<u32> {
    use sift_diag::number::{Radix, Syntax, parse};
    if s.starts_with("0X") {
        return None;
    }
    let (n, radix) = parse(s, Syntax::HEX_OR_DECIMAL, u64::from(u32::MAX)).ok()?;
    let fits = match radix {
        Radix::Hex => s.len() - 2 <= 8,
        _ => s.len() <= 10,
    };
    fits.then_some(n as u32)
}

/// Columns are counted in characters.
fn col(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

fn parse_action(m: &str) -> Option<Action> {
    Some(match m {
        "nopush" => Action::NoPush,
        "pushlit" => Action::PushLit,
        "pushzero" => Action::PushZero,
        "pushone" => Action::PushOne,
        "pushffff" => Action::PushFfff,
        "pushff00" => Action::PushFf00,
        "push00ff" => Action::Push00ff,
        "pushind" => Action::PushInd,
        _ => {
            let n = parse_num(m.strip_prefix("pushword+")?)?;
            Action::PushWord(u16::try_from(n).ok().filter(|&n| n <= MAX_PUSHWORD)?)
        }
    })
}

/// Assembles text into words.
pub fn assemble(src: &str) -> Result<Vec<u16>, TextError> {
    let mut out = Vec::new();
    for (ln, raw) in src.lines().enumerate() {
        let line_no = ln + 1;
        let code = raw.split([';', '#']).next().unwrap_or("");
        let lower = code.to_ascii_lowercase();
        // Tokens with their byte offsets.
        let mut toks = Vec::new();
        let mut start = None;
        for (i, c) in lower.char_indices() {
            match (c.is_whitespace(), start) {
                (true, Some(s)) => {
                    toks.push((s, &lower[s..i]));
                    start = None;
                }
                (false, None) => start = Some(i),
                _ => {}
            }
        }
        if let Some(s) = start {
            toks.push((s, &lower[s..]));
        }
        let err = |byte: usize, message: String| TextError {
            line: line_no,
            column: col(raw, byte.min(raw.len())),
            message,
        };
        let Some(&(m_at, mnemonic)) = toks.first() else { continue };
        if mnemonic == ".word" {
            let Some(&(at, v)) = toks.get(1) else {
                return Err(err(m_at + mnemonic.len(), "`.word` needs a value".into()));
            };
            let n = parse_num(v)
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(|| err(at, format!("`{v}` is not a number from 0 to 0xffff")))?;
            if let Some(&(at, extra)) = toks.get(2) {
                return Err(err(at, format!("unexpected `{extra}` after the value")));
            }
            out.push(n);
            continue;
        }
        let (a_text, o_text) = match mnemonic.split_once('|') {
            Some((a, o)) => (Some(a), Some(o)),
            None => (None, None),
        };
        let (action, op) = match (a_text, o_text) {
            (Some(a), Some(o)) => {
                let action = parse_action(a)
                    .ok_or_else(|| err(m_at, format!("unknown stack action `{a}`")))?;
                let op = Op::from_name(o).ok_or_else(|| {
                    err(m_at + a.len() + 1, format!("unknown binary operator `{o}`"))
                })?;
                (action, op)
            }
            _ => {
                if let Some(op) = Op::from_name(mnemonic) {
                    (Action::NoPush, op)
                } else if let Some(action) = parse_action(mnemonic) {
                    (action, Op::Nop)
                } else if mnemonic.starts_with("pushword+") {
                    return Err(err(
                        m_at,
                        format!("`{mnemonic}`: the word number must be 0 to {MAX_PUSHWORD}"),
                    ));
                } else {
                    return Err(err(m_at, format!("unknown instruction `{mnemonic}`")));
                }
            }
        };
        let mut insn = Insn::new(action, op);
        let mut next = 1;
        if action == Action::PushLit {
            let Some(&(at, v)) = toks.get(1) else {
                return Err(err(m_at + mnemonic.len(), "`pushlit` needs a literal".into()));
            };
            insn.lit = parse_num(v)
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(|| err(at, format!("`{v}` is not a number from 0 to 0xffff")))?;
            next = 2;
        }
        if let Some(&(at, extra)) = toks.get(next) {
            return Err(err(at, format!("unexpected `{extra}`")));
        }
        insn.encode(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_12_assembles_to_eight_words() {
        let src = "pushword+8\npushlit|cand 35 ; low word\npushword+7\npushzero|cand\n\
                   pushword+1\npushlit|eq 2\n";
        let w = assemble(src).unwrap();
        assert_eq!(w.len(), 8);
        assert_eq!(
            disassemble(&w),
            "pushword+8\npushlit|cand 0x0023\npushword+7\npushzero|cand\npushword+1\npushlit|eq 0x0002\n"
        );
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = assemble("and\n  pushlit|eq\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 13));
        let e = assemble("pushlit|foo 1").unwrap_err();
        assert_eq!((e.column, e.message.as_str()), (9, "unknown binary operator `foo`"));
        let e = assemble("pushword+1024").unwrap_err();
        assert_eq!(e.column, 1);
        let e = assemble("pushlit 0x10000").unwrap_err();
        assert_eq!(e.column, 9);
        let e = assemble("eq 3").unwrap_err();
        assert_eq!(e.to_string(), "1:4: unexpected `3`");
    }

    #[test]
    fn every_word_pair_round_trips() {
        for w in (0..=u16::MAX).step_by(7) {
            for tail in [&[][..], &[0x1234][..]] {
                let mut words = vec![w];
                words.extend_from_slice(tail);
                assert_eq!(assemble(&disassemble(&words)).unwrap(), words, "{words:x?}");
            }
        }
    }
}
