//! Filter-set files: one named filter a line, with CSPF's priority and "continue" flag.
//!
//! **Why it exists.** `sift --split`, `sift bench --filters` and the bindings read many filters
//! at once, and the names become output file names; the format is parsed once, here, with
//! located errors (`line:column`), so every caller refuses the same bad files the same way.
//!
//! The format, one filter a line:
//!
//! ```text
//! # NAME  [priority N] [continue]  EXPRESSION
//! web     priority 10 continue     tcp port 80 or tcp port 443
//! dns     udp port 53
//! rest    not (tcp port 80 or tcp port 443 or udp port 53)
//! ```
//!
//! `#` starts a comment (at the start of a line, or after blanks); blank lines are skipped.
//! Names are 1–64 characters of letters, digits, `_`, `-`, `.` (not `.` or `..`: names become
//! parts of file names), unique. Filters are applied in decreasing priority (default 0), in
//! file order among equal priorities, as CSPF applies them; `continue` hands a packet the
//! filter accepts on to lower priorities too (only first-match decisions look at it). The
//! expression is the rest of the line, pcap-filter syntax; it is compiled later, and its
//! errors are placed in the file with [`FilterSpec::expr_column`].

use std::fmt;

/// The most filters one set may hold.
pub const MAX_FILTERS: usize = 1 << 20;
/// The longest name.
pub const MAX_NAME: usize = 64;

/// One filter of a set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterSpec {
    /// Its name (unique in the set).
    pub name: String,
    /// Its priority: higher runs first.
    pub priority: i32,
    /// Whether a packet it accepts goes on to lower-priority filters (CSPF's flag).
    pub cont: bool,
    /// The pcap-filter expression (may be empty: every packet).
    pub expr: String,
    /// The 1-based line it is on (0 for sets not read from text).
    pub line: u32,
    /// The 1-based column where the expression starts.
    pub expr_column: u32,
}

/// Filters in the order a first-match decision applies them: decreasing priority, then the
/// order given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterSet {
    filters: Vec<FilterSpec>,
}

/// Why a filter-set file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct SetError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
    /// What is wrong.
    pub kind: SetErrorKind,
}

/// What is wrong with a filter-set line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetErrorKind {
    /// A name with a character names may not hold, too long, or `.`/`..`.
    BadName(String),
    /// A name given twice.
    DuplicateName {
        /// The name.
        name: String,
        /// The line that gave it first.
        first: u32,
    },
    /// `priority` without a number in `i32`'s range.
    BadPriority(String),
    /// More than [`MAX_FILTERS`] filters.
    TooMany,
    /// The text is not UTF-8 outside comments (at this byte of the line).
    NotUtf8,
    /// No filter at all.
    Empty,
}

impl fmt::Display for SetErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetErrorKind::BadName(n) => write!(
                f,
                "`{n}` is not a filter name (1–{MAX_NAME} letters, digits, `_`, `-`, `.`; not `.` or `..`)"
            ),
            SetErrorKind::DuplicateName { name, first } => {
                write!(f, "the name `{name}` is already used on line {first}")
            }
            SetErrorKind::BadPriority(p) => {
                write!(
                    f,
                    "`priority` needs a whole number from -2147483648 to 2147483647, not `{p}`"
                )
            }
            SetErrorKind::TooMany => write!(f, "more than {MAX_FILTERS} filters"),
            SetErrorKind::NotUtf8 => write!(f, "the line is not UTF-8"),
            SetErrorKind::Empty => write!(f, "the set has no filter"),
        }
    }
}

/// Whether `name` may name a filter.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

impl FilterSet {
    /// Reads a filter-set file's bytes. Comments may hold any bytes; the rest must be UTF-8.
    pub fn parse(text: &[u8]) -> Result<FilterSet, SetError> {
        let mut specs = Vec::new();
        let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
            let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let start = raw.iter().position(|b| !b.is_ascii_whitespace());
            let Some(start) = start else { continue };
            if raw[start] == b'#' {
                continue;
            }
            let at = |col: usize, kind| SetError {
                line: line_no,
                column: u32::try_from(col + 1).unwrap_or(u32::MAX),
                kind,
            };
            let line =
                std::str::from_utf8(raw).map_err(|e| at(e.valid_up_to(), SetErrorKind::NotUtf8))?;
            let mut words = Words { line, pos: start };
            let (name_col, name) = words.next().unwrap_or((start, ""));
            if !valid_name(name) {
                return Err(at(char_col(line, name_col), SetErrorKind::BadName(name.into())));
            }
            if let Some(&first) = seen.get(name) {
                let kind = SetErrorKind::DuplicateName { name: name.into(), first };
                return Err(at(char_col(line, name_col), kind));
            }
            let mut priority = 0;
            let mut cont = false;
            words.skip_blanks();
            let expr_start;
            loop {
                let save = words.pos;
                match words.next() {
                    Some((_, "priority")) => {
                        let (col, n) = words.next().unwrap_or((line.len(), ""));
                        priority = n.parse().map_err(|_| {
                            at(char_col(line, col), SetErrorKind::BadPriority(n.into()))
                        })?;
                    }
                    Some((_, "continue")) => cont = true,
                    _ => {
                        words.pos = save;
                        expr_start = words.skip_blanks();
                        break;
                    }
                }
            }
            if specs.len() == MAX_FILTERS {
                return Err(at(start, SetErrorKind::TooMany));
            }
            seen.insert(name.to_string(), line_no);
            specs.push(FilterSpec {
                name: name.into(),
                priority,
                cont,
                expr: line[expr_start..].trim_end().to_string(),
                line: line_no,
                expr_column: u32::try_from(char_col(line, expr_start) + 1).unwrap_or(u32::MAX),
            });
        }
        if specs.is_empty() {
            return Err(SetError { line: 1, column: 1, kind: SetErrorKind::Empty });
        }
        Ok(FilterSet::new(specs))
    }

    /// A set from specs (reordered by priority, stably).
    pub fn new(mut specs: Vec<FilterSpec>) -> FilterSet {
        specs.sort_by_key(|s| std::cmp::Reverse(s.priority));
        FilterSet { filters: specs }
    }

    /// A set of unnamed expressions (`f0`, `f1`, …), all priority 0, none with `continue`.
    pub fn from_exprs<S: AsRef<str>>(exprs: impl IntoIterator<Item = S>) -> FilterSet {
        let specs = exprs
            .into_iter()
            .enumerate()
            .map(|(i, e)| FilterSpec {
                name: format!("f{i}"),
                priority: 0,
                cont: false,
                expr: e.as_ref().to_string(),
                line: 0,
                expr_column: 1,
            })
            .collect();
        FilterSet::new(specs)
    }

    /// The filters, highest priority first.
    pub fn filters(&self) -> &[FilterSpec] {
        &self.filters
    }

    /// How many filters.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }
}

/// The character column of byte offset `at` in `line`.
fn char_col(line: &str, at: usize) -> usize {
    line.get(..at).map_or(at, |s| s.chars().count())
}

/// Blank-separated words of a line, with their byte offsets.
struct Words<'a> {
    line: &'a str,
    pos: usize,
}

impl<'a> Words<'a> {
    fn skip_blanks(&mut self) -> usize {
        let rest = &self.line[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
        self.pos
    }

    fn next(&mut self) -> Option<(usize, &'a str)> {
        let start = self.skip_blanks();
        let rest = &self.line[start..];
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        self.pos = start + len;
        Some((start, &rest[..len]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_flags_and_expressions_in_priority_order() {
        let text =
            b"# comment \xff\n\n a   udp port 53 \nweb priority 10 continue tcp port 80\nall\n";
        let set = FilterSet::parse(text).unwrap();
        let names: Vec<_> = set.filters().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["web", "a", "all"]);
        let web = &set.filters()[0];
        assert_eq!((web.priority, web.cont, web.expr.as_str()), (10, true, "tcp port 80"));
        assert_eq!((web.line, web.expr_column), (4, 26));
        let a = &set.filters()[1];
        assert_eq!((a.expr.as_str(), a.line, a.expr_column, a.cont), ("udp port 53", 3, 6, false));
        assert_eq!(set.filters()[2].expr, "");
    }

    #[test]
    fn refuses_with_locations() {
        let err = |t: &[u8]| FilterSet::parse(t).unwrap_err();
        let e = err(b"ok tcp\n  a/b tcp\n");
        assert_eq!((e.line, e.column), (2, 3));
        assert!(matches!(e.kind, SetErrorKind::BadName(_)));
        let e = err(b"x tcp\nx udp\n");
        assert_eq!(
            (e.line, e.column, e.kind),
            (2, 1, SetErrorKind::DuplicateName { name: "x".into(), first: 1 })
        );
        let e = err(b"x priority high tcp\n");
        assert_eq!((e.line, e.column), (1, 12));
        let e = err(b"x priority\n");
        assert!(matches!(e.kind, SetErrorKind::BadPriority(_)));
        assert_eq!(err(b"# only\n\n").kind, SetErrorKind::Empty);
        let e = err(b"x tcp and \xff\n");
        assert_eq!((e.line, e.column, e.kind), (1, 11, SetErrorKind::NotUtf8));
        assert!(matches!(err(b"..\n").kind, SetErrorKind::BadName(_)));
    }
}
