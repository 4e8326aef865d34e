//! C-style numbers: decimal, `0x` hexadecimal, leading-`0` octal and (for assemblers) `0b`
//! binary, as libpcap's `stoulen`, `bpf_asm` and tcpdump's `-ddd` text write them.
//!
//! **Why it exists.** Five readers of sift's text forms (the filter lexer, the code generator's
//! port and DECnet numbers, the classic BPF assembler and `-ddd` reader, the CSPF assembler) each
//! parsed numbers with their own copy of these rules. They differ only in which prefixes they
//! accept and in their limits and wording, so this module parses the digits once
//! ([`parse`]) and reports what went wrong as data ([`NumberError`]); each caller keeps its own
//! limits and its own messages.
//!
//! Digits are read one by one and the first problem wins, as libpcap's `stoulen` does: `09x`
//! is a bad octal digit, `0xfffffffff` an overflow.
//!
//! ```
//! use sift_diag::number::{Radix, Syntax, parse};
//! assert_eq!(parse("0x1f", Syntax::C, u32::MAX.into()), Ok((31, Radix::Hex)));
//! assert_eq!(parse("010", Syntax::C, 255), Ok((8, Radix::Octal)));
//! assert_eq!(parse("010", Syntax::HEX_OR_DECIMAL, 255), Ok((10, Radix::Decimal)));
//! assert_eq!(parse("0b101", Syntax::ASSEMBLER, 255), Ok((5, Radix::Binary)));
//! assert!(parse("256", Syntax::C, 255).is_err());
//! ```

use std::fmt;

/// Which prefixes a reader accepts besides decimal digits and `0x`/`0X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Syntax {
    /// A leading `0` makes the number octal (`010` is 8).
    pub octal: bool,
    /// `0b`/`0B` makes it binary.
    pub binary: bool,
}

impl Syntax {
    /// C and libpcap: decimal, `0x` hex, leading-`0` octal.
    pub const C: Syntax = Syntax { octal: true, binary: false };
    /// `bpf_asm` and tcpdump's text forms: C plus `0b` binary.
    pub const ASSEMBLER: Syntax = Syntax { octal: true, binary: true };
    /// Decimal or `0x` hex only (a leading `0` is just a digit).
    pub const HEX_OR_DECIMAL: Syntax = Syntax { octal: false, binary: false };
}

/// The base a number was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Radix {
    /// `0b…`
    Binary,
    /// `0…`
    Octal,
    /// Plain digits.
    Decimal,
    /// `0x…`
    Hex,
}

impl Radix {
    /// The numeric base.
    pub const fn base(self) -> u32 {
        match self {
            Radix::Binary => 2,
            Radix::Octal => 8,
            Radix::Decimal => 10,
            Radix::Hex => 16,
        }
    }

    /// The short name libpcap uses for a bad digit (`non-hex digit`).
    pub const fn short_name(self) -> &'static str {
        match self {
            Radix::Binary => "binary",
            Radix::Octal => "octal",
            Radix::Decimal => "decimal",
            Radix::Hex => "hex",
        }
    }

    /// The long name libpcap uses for an overflow (`hexadecimal number … overflows`).
    pub const fn long_name(self) -> &'static str {
        match self {
            Radix::Hex => "hexadecimal",
            r => r.short_name(),
        }
    }
}

/// Why a text is not a number within the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumberError {
    /// No digit at all (empty text, or a bare `0x`).
    NoDigits(Radix),
    /// A character that is not a digit of the radix (the first such one wins).
    BadDigit(Radix),
    /// The value grew past the caller's maximum.
    Overflow(Radix),
}

impl NumberError {
    /// The radix the text was read in.
    pub fn radix(self) -> Radix {
        match self {
            NumberError::NoDigits(r) | NumberError::BadDigit(r) | NumberError::Overflow(r) => r,
        }
    }
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::NoDigits(r) => write!(f, "no {} digits", r.short_name()),
            NumberError::BadDigit(r) => write!(f, "contains a non-{} digit", r.short_name()),
            NumberError::Overflow(r) => write!(f, "{} number too large", r.long_name()),
        }
    }
}

impl std::error::Error for NumberError {}

/// Parses `text` (the whole of it) under `syntax`, refusing values above `max`. Returns the
/// value and the radix it was written in.
pub fn parse(text: &str, syntax: Syntax, max: u64) -> Result<(u64, Radix), NumberError> {
    let b = text.as_bytes();
    let (digits, radix) = if b.len() >= 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' {
        (&text[2..], Radix::Hex)
    } else if syntax.binary && b.len() >= 2 && b[0] == b'0' && (b[1] | 0x20) == b'b' {
        (&text[2..], Radix::Binary)
    } else if syntax.octal && b.len() > 1 && b[0] == b'0' {
        (&text[1..], Radix::Octal)
    } else {
        (text, Radix::Decimal)
    };
    if digits.is_empty() {
        return Err(NumberError::NoDigits(radix));
    }
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix.base()).ok_or(NumberError::BadDigit(radix))?;
        n = n
            .checked_mul(u64::from(radix.base()))
            .and_then(|n| n.checked_add(u64::from(d)))
            .filter(|&n| n <= max)
            .ok_or(NumberError::Overflow(radix))?;
    }
    Ok((n, radix))
}

/// [`parse`] with [`Syntax::C`] into a `u32`, `None` on any error (for names that may or may
/// not be numbers, as `port 0x50` versus `port http`).
pub fn parse_c_u32(text: &str) -> Option<u32> {
    parse(text, Syntax::C, u64::from(u32::MAX)).ok().map(|(n, _)| n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radixes_and_first_error_wins() {
        let c = |s| parse(s, Syntax::C, u64::from(u32::MAX));
        assert_eq!(c("0"), Ok((0, Radix::Decimal)));
        assert_eq!(c("4294967295"), Ok((u64::from(u32::MAX), Radix::Decimal)));
        assert_eq!(c("4294967296"), Err(NumberError::Overflow(Radix::Decimal)));
        assert_eq!(c("0X1F"), Ok((31, Radix::Hex)));
        assert_eq!(c("0x"), Err(NumberError::NoDigits(Radix::Hex)));
        assert_eq!(c("08"), Err(NumberError::BadDigit(Radix::Octal)));
        assert_eq!(c("0b1"), Err(NumberError::BadDigit(Radix::Octal)));
        // stoulen: the overflow comes before the bad digit.
        assert_eq!(c("0x1000000000g"), Err(NumberError::Overflow(Radix::Hex)));
        assert_eq!(c("0x1g000000000"), Err(NumberError::BadDigit(Radix::Hex)));
        assert_eq!(c("+5"), Err(NumberError::BadDigit(Radix::Decimal)));
        assert_eq!(c(""), Err(NumberError::NoDigits(Radix::Decimal)));
        assert_eq!(parse("0b", Syntax::ASSEMBLER, 9), Err(NumberError::NoDigits(Radix::Binary)));
        assert_eq!(parse("99999999999999999999999", Syntax::C, u64::MAX).map(|x| x.0).ok(), None);
        assert_eq!(parse_c_u32("017"), Some(15));
        assert_eq!(parse_c_u32("http"), None);
    }
}
