//! The instruction word: a stack action in the low 10 bits and a binary operator in the high 6
//! bits (the paper's Figure 9), plus the literal word that follows `PUSHLIT`.
//!
//! **Where the numbers come from.** The paper gives the field widths (6-bit operator, 10-bit
//! action), the names and meanings, and `PUSHWORD+n`, but not the numeric codes. The codes
//! below are those of the `enet`/`pfmod` filter headers that descend from the CMU/Stanford
//! code (the same names, `ENF_NBPA` = 10): actions `NOPUSH` 0, `PUSHLIT` 1, `PUSHZERO` 2,
//! `PUSHONE` 3, `PUSHFFFF` 4, `PUSHFF00` 5, `PUSH00FF` 6, `PUSHWORD` 16 (+ n); operators `NOP` 0,
//! `EQ` 1, `LT` 2, `LE` 3, `GT` 4, `GE` 5, `AND` 6, `OR` 7, `XOR` 8, `COR` 9, `CAND` 10, `CNOR`
//! 11, `CNAND` 12, `NEQ` 13 (shifted left by 10).
//!
//! **What sift chose.** The *indirect-push extension* the BPF paper added to CSPF for its
//! Figure 8 comparison is described there only as "an indirection operator"; the CSPF paper
//! (section 7) says one would need "an 'indirect push' operator, as well as arithmetic operators
//! to assist in addressing-unit conversions". sift's extension is that and nothing more:
//! action `PUSHIND` = 15 (a code the descendants leave unused) replaces the top of the stack `i`
//! with packet word `i`; operators `ADD` = 14 (`T2 + T1`, modulo 2^16) and `SHR` = 15 (`T2 >>
//! T1`, 0 for shifts of 16 or more). Action codes 7–14 and operator codes 16–63 are invalid
//! instructions (the interpreter rejects the packet on reaching one).

use std::fmt;

/// Bits of the stack-action field (`ENF_NBPA`).
pub const ACTION_BITS: u32 = 10;
/// Mask of the stack-action field.
pub const ACTION_MASK: u16 = (1 << ACTION_BITS) - 1;
/// The first `PUSHWORD` code: `PUSHWORD+n` is `PUSHWORD_BASE + n`.
pub const PUSHWORD_BASE: u16 = 16;
/// The largest `n` of `PUSHWORD+n` (the 10-bit field holds up to 1023).
pub const MAX_PUSHWORD: u16 = ACTION_MASK - PUSHWORD_BASE;

/// A stack action (the low 10 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Nothing is pushed.
    NoPush,
    /// The following instruction word is pushed.
    PushLit,
    /// 0 is pushed.
    PushZero,
    /// 1 is pushed.
    PushOne,
    /// 0xffff is pushed.
    PushFfff,
    /// 0xff00 is pushed.
    PushFf00,
    /// 0x00ff is pushed.
    Push00ff,
    /// Extension: the top of the stack `i` is replaced by packet word `i`.
    PushInd,
    /// Packet word `n` is pushed.
    PushWord(u16),
}

impl Action {
    /// The field value.
    pub fn code(self) -> u16 {
        match self {
            Action::NoPush => 0,
            Action::PushLit => 1,
            Action::PushZero => 2,
            Action::PushOne => 3,
            Action::PushFfff => 4,
            Action::PushFf00 => 5,
            Action::Push00ff => 6,
            Action::PushInd => 15,
            Action::PushWord(n) => PUSHWORD_BASE + n,
        }
    }

    /// The action with field value `code` (`None` for the unused codes 7–14).
    pub fn from_code(code: u16) -> Option<Action> {
        Some(match code & ACTION_MASK {
            0 => Action::NoPush,
            1 => Action::PushLit,
            2 => Action::PushZero,
            3 => Action::PushOne,
            4 => Action::PushFfff,
            5 => Action::PushFf00,
            6 => Action::Push00ff,
            15 => Action::PushInd,
            c if c >= PUSHWORD_BASE => Action::PushWord(c - PUSHWORD_BASE),
            _ => return None,
        })
    }

    /// Whether this is part of the indirect-push extension.
    pub fn is_extension(self) -> bool {
        self == Action::PushInd
    }
}

/// A binary operator (the high 6 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// No operation.
    Nop,
    /// `T2 == T1`.
    Eq,
    /// `T2 < T1`.
    Lt,
    /// `T2 <= T1`.
    Le,
    /// `T2 > T1`.
    Gt,
    /// `T2 >= T1`.
    Ge,
    /// `T2 & T1`.
    And,
    /// `T2 | T1`.
    Or,
    /// `T2 ^ T1`.
    Xor,
    /// Return TRUE at once if `T1 == T2`.
    Cor,
    /// Return FALSE at once if `T1 != T2`.
    Cand,
    /// Return FALSE at once if `T1 == T2`.
    Cnor,
    /// Return TRUE at once if `T1 != T2`.
    Cnand,
    /// `T2 != T1`.
    Neq,
    /// Extension: `T2 + T1` (mod 2^16).
    Add,
    /// Extension: `T2 >> T1`.
    Shr,
}

const OPS: [Op; 16] = [
    Op::Nop,
    Op::Eq,
    Op::Lt,
    Op::Le,
    Op::Gt,
    Op::Ge,
    Op::And,
    Op::Or,
    Op::Xor,
    Op::Cor,
    Op::Cand,
    Op::Cnor,
    Op::Cnand,
    Op::Neq,
    Op::Add,
    Op::Shr,
];

impl Op {
    /// The field value (0–15), before shifting.
    pub fn code(self) -> u16 {
        OPS.iter().position(|&o| o == self).unwrap_or(0) as u16
    }

    /// The operator with field value `code` (`None` for 16–63).
    pub fn from_code(code: u16) -> Option<Op> {
        OPS.get(usize::from(code)).copied()
    }

    /// Whether this is part of the indirect-push extension.
    pub fn is_extension(self) -> bool {
        matches!(self, Op::Add | Op::Shr)
    }

    /// Whether this is one of the short-circuit operators.
    pub fn is_short_circuit(self) -> bool {
        matches!(self, Op::Cor | Op::Cand | Op::Cnor | Op::Cnand)
    }

    /// The lower-case name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            Op::Nop => "nop",
            Op::Eq => "eq",
            Op::Lt => "lt",
            Op::Le => "le",
            Op::Gt => "gt",
            Op::Ge => "ge",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
            Op::Cor => "cor",
            Op::Cand => "cand",
            Op::Cnor => "cnor",
            Op::Cnand => "cnand",
            Op::Neq => "neq",
            Op::Add => "add",
            Op::Shr => "shr",
        }
    }

    /// The operator named `name` (lower case).
    pub fn from_name(name: &str) -> Option<Op> {
        OPS.iter().copied().find(|o| o.name() == name)
    }
}

/// One instruction: an action and an operator, and for `PUSHLIT` the literal word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Insn {
    /// The stack action.
    pub action: Action,
    /// The binary operator.
    pub op: Op,
    /// The literal pushed by `PUSHLIT` (0 for other actions).
    pub lit: u16,
}

impl Insn {
    /// An instruction without a literal.
    pub fn new(action: Action, op: Op) -> Insn {
        Insn { action, op, lit: 0 }
    }

    /// `PUSHLIT | op` with literal `lit`.
    pub fn lit(op: Op, lit: u16) -> Insn {
        Insn { action: Action::PushLit, op, lit }
    }

    /// The instruction word (without the literal).
    pub fn word(self) -> u16 {
        (self.op.code() << ACTION_BITS) | self.action.code()
    }

    /// Appends the instruction's words (one, or two for `PUSHLIT`).
    pub fn encode(self, out: &mut Vec<u16>) {
        out.push(self.word());
        if self.action == Action::PushLit {
            out.push(self.lit);
        }
    }

    /// How many words the instruction takes.
    pub fn words(self) -> usize {
        if self.action == Action::PushLit { 2 } else { 1 }
    }
}

/// One decoded item of a word sequence: an instruction, or a word that is not one (an invalid
/// code, or a `PUSHLIT` with no literal after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A valid instruction.
    Insn(Insn),
    /// A word that does not decode.
    Invalid(u16),
}

/// Decodes a word sequence, item by item.
pub fn decode(words: &[u16]) -> Vec<Decoded> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        let (Some(action), Some(op)) =
            (Action::from_code(w & ACTION_MASK), Op::from_code(w >> ACTION_BITS))
        else {
            out.push(Decoded::Invalid(w));
            continue;
        };
        if action == Action::PushLit {
            match words.get(i) {
                Some(&lit) => {
                    out.push(Decoded::Insn(Insn { action, op, lit }));
                    i += 1;
                }
                None => out.push(Decoded::Invalid(w)),
            }
        } else {
            out.push(Decoded::Insn(Insn::new(action, op)));
        }
    }
    out
}

/// Encodes instructions into words.
pub fn encode(insns: &[Insn]) -> Vec<u16> {
    let mut out = Vec::new();
    for i in insns {
        i.encode(&mut out);
    }
    out
}

impl fmt::Display for Insn {
    /// The text form: `pushword+6`, `pushlit|eq 0x0800`, `pushzero|cand`, `and`, `nop`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let action = match self.action {
            Action::NoPush => None,
            Action::PushLit => Some("pushlit".to_string()),
            Action::PushZero => Some("pushzero".to_string()),
            Action::PushOne => Some("pushone".to_string()),
            Action::PushFfff => Some("pushffff".to_string()),
            Action::PushFf00 => Some("pushff00".to_string()),
            Action::Push00ff => Some("push00ff".to_string()),
            Action::PushInd => Some("pushind".to_string()),
            Action::PushWord(n) => Some(format!("pushword+{n}")),
        };
        match (action, self.op) {
            (None, op) => f.write_str(op.name())?,
            (Some(a), Op::Nop) => f.write_str(&a)?,
            (Some(a), op) => write!(f, "{a}|{}", op.name())?,
        }
        if self.action == Action::PushLit {
            write!(f, " {:#06x}", self.lit)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_match_the_enet_headers() {
        assert_eq!(Insn::lit(Op::Eq, 2).word(), 0x0401);
        assert_eq!(Insn::new(Action::PushWord(1), Op::Nop).word(), 17);
        assert_eq!(Insn::new(Action::Push00ff, Op::And).word(), (6 << 10) | 6);
        assert_eq!(Insn::new(Action::NoPush, Op::Neq).word(), 13 << 10);
        for w in 0..=u16::MAX {
            if let [Decoded::Insn(i)] = decode(&[w, 7])[..1] {
                assert_eq!(i.word(), w);
            }
        }
    }

    #[test]
    fn decode_marks_bad_words() {
        assert_eq!(decode(&[7]), vec![Decoded::Invalid(7)]);
        assert_eq!(decode(&[16 << 10]), vec![Decoded::Invalid(16 << 10)]);
        assert_eq!(decode(&[1]), vec![Decoded::Invalid(1)]);
        assert_eq!(decode(&[0x0401, 2]), vec![Decoded::Insn(Insn::lit(Op::Eq, 2))]);
    }
}
