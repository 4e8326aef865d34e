//! Spans and diagnostics for sift's text front ends, with a zero-dependency renderer.
//!
//! Why a crate of its own: the filter parser (and later the pf-style rule parser and the
//! compiler's semantic errors) all point into source text. They share one [`Span`] type (u32
//! byte offsets, as ruff's `TextRange`) and one way of showing a mistake, so that a user sees
//! the same kind of message whichever stage found it.
//!
//! Design choices, after regex-syntax and ruff:
//! * **Errors are data.** Parsers return typed errors carrying spans; turning one into text is a
//!   separate step ([`Diagnostic::render`]), done by whoever has the source at hand.
//! * **Plain text.** The renderer prints the offending source line with `^^^` under the primary
//!   span and `---` under an optional auxiliary span (an earlier, conflicting token). Colour can be
//!   layered on later; tests compare exact text.
//! * **One-line sources stay simple.** A filter given in argv is one line, so the header is just
//!   `error: message`. A multi-line source (`-F file`) gets `line:col` in the header.
//!
//! [`number`] holds the other thing every text front end shares: C-style numbers (`10`, `0x0a`,
//! `012`), parsed once for the filter lexer, the BPF and CSPF assemblers and the code generator.
#![forbid(unsafe_code)]

pub mod number;

use std::fmt::{self, Write as _};

/// A half-open range of byte offsets `start..end` into a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// An empty span at `at` (for "expected something here" at the end of input).
    pub const fn empty(at: u32) -> Span {
        Span { start: at, end: at }
    }

    /// The span from `usize` offsets, saturating at `u32::MAX`.
    pub fn from_range(r: std::ops::Range<usize>) -> Span {
        let c = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Span { start: c(r.start), end: c(r.end) }
    }

    /// Length in bytes.
    pub const fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span covers no byte.
    pub const fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// The smallest span covering both `self` and `other`.
    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// The span as a `usize` range, for slicing the source.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// One error to show the user: a message, where it is, and optional extras.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The one-line message (lowercase, no trailing period, code in backticks).
    pub message: String,
    /// Where the error is.
    pub span: Span,
    /// A short note printed after the carets (for example what was expected).
    pub label: Option<String>,
    /// An earlier location involved in the error (a conflicting qualifier…) and its note.
    pub aux: Option<(Span, String)>,
    /// A hint printed on its own line after the source excerpt.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with only a message and a span.
    pub fn new(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { message: message.into(), span, label: None, aux: None, help: None }
    }

    /// Adds a label printed after the carets.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// Adds an auxiliary span with its note.
    pub fn with_aux(mut self, span: Span, note: impl Into<String>) -> Diagnostic {
        self.aux = Some((span, note.into()));
        self
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Renders the diagnostic against `source` as plain text (ends with a newline).
    ///
    /// ```
    /// use sift_diag::{Diagnostic, Span};
    /// let d = Diagnostic::new("expected a port number or service name after `port`", Span::new(9, 13))
    ///     .with_help("`8o80` is not a number and not in the services database");
    /// assert_eq!(
    ///     d.render("tcp port 8o80"),
    ///     "error: expected a port number or service name after `port`\n  tcp port 8o80\n           ^^^^\n  help: `8o80` is not a number and not in the services database\n"
    /// );
    /// ```
    pub fn render(&self, source: &str) -> String {
        let index = LineIndex::new(source);
        let mut out = String::new();
        if index.starts.len() > 1 {
            let (line, col) = index.line_col(source, self.span.start);
            let _ = writeln!(out, "error: {line}:{col}: {}", self.message);
        } else {
            let _ = writeln!(out, "error: {}", self.message);
        }
        let mut marks = vec![(self.span, '^', self.label.as_deref())];
        if let Some((span, note)) = &self.aux {
            marks.push((*span, '-', Some(note.as_str())));
        }
        // Group marks by source line, in line order, primary first on a shared line.
        let mut lines: Vec<usize> = marks.iter().map(|m| index.line_of(m.0.start)).collect();
        lines.sort_unstable();
        lines.dedup();
        for line in lines {
            let (lstart, lend) = index.bounds(source, line);
            let chars: Vec<char> =
                source[lstart..lend].chars().map(|c| if c == '\t' { ' ' } else { c }).collect();
            // Marks on this line as (column, width) in characters.
            let cols: Vec<(usize, usize, char, Option<&str>)> = marks
                .iter()
                .filter(|m| index.line_of(m.0.start) == line)
                .map(|(span, ch, note)| {
                    let s = floor_boundary(source, (span.start as usize).clamp(lstart, lend));
                    let e = floor_boundary(source, (span.end as usize).clamp(s, lend)).max(s);
                    let col = source[lstart..s].chars().count();
                    (col, source[s..e].chars().count().max(1), *ch, *note)
                })
                .collect();
            // Long lines (a 10,000-term filter) are cut to a window around the first mark.
            let first = cols.iter().map(|c| c.0).min().unwrap_or(0);
            let (ws, we) = if chars.len() <= MAX_WIDTH {
                (0, chars.len())
            } else {
                let ws = first.saturating_sub(MAX_WIDTH / 3);
                (ws, (ws + MAX_WIDTH).min(chars.len()))
            };
            let lead = if ws > 0 { "…" } else { "" };
            let tail = if we < chars.len() { "…" } else { "" };
            let shown: String = chars[ws..we].iter().collect();
            let _ = writeln!(out, "  {lead}{}{tail}", shown.trim_end());
            for (col, width, ch, note) in cols {
                let col = col.clamp(ws, we);
                let width = width.min(we.saturating_sub(col).max(1));
                let pad = col - ws + lead.chars().count();
                let mut l = format!("  {}{}", " ".repeat(pad), ch.to_string().repeat(width));
                if let Some(n) = note {
                    l.push(' ');
                    l.push_str(n);
                }
                let _ = writeln!(out, "{l}");
            }
        }
        if let Some(h) = &self.help {
            let _ = writeln!(out, "  help: {h}");
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.span)
    }
}

/// Source lines longer than this many characters are shown as a window around the error.
const MAX_WIDTH: usize = 100;

/// The largest char boundary at or below `i` (spans from other tools may point mid-character).
fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Byte offsets of line starts, for turning offsets into `line:col`.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &str) -> LineIndex {
        let body = source.strip_suffix('\n').unwrap_or(source);
        let mut starts = vec![0];
        starts.extend(body.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// Zero-based line holding `offset`.
    fn line_of(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset as usize).saturating_sub(1)
    }

    /// Byte bounds of line `line`, without its newline.
    fn bounds(&self, source: &str, line: usize) -> (usize, usize) {
        let start = self.starts[line].min(source.len());
        let end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        (start, end)
    }

    /// One-based line and column (in characters) of `offset`.
    fn line_col(&self, source: &str, offset: u32) -> (usize, usize) {
        let line = self.line_of(offset);
        let (start, end) = self.bounds(source, line);
        let at = (offset as usize).clamp(start, end);
        let at = (start..=at).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(start);
        (line + 1, source[start..at].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aux_span_and_label() {
        let src = "ether src host 1.2.3.4";
        let d = Diagnostic::new("`src` is not a valid qualifier for `ether`", Span::new(6, 9))
            .with_aux(Span::new(0, 5), "protocol given here");
        assert_eq!(
            d.render(src),
            "error: `src` is not a valid qualifier for `ether`\n  ether src host 1.2.3.4\n        ^^^\n  ----- protocol given here\n"
        );
    }

    #[test]
    fn multi_line_header_and_eof() {
        let src = "host a and\n  port\n";
        let d = Diagnostic::new("expected a port", Span::empty(17)).with_label("here");
        assert_eq!(d.render(src), "error: 2:7: expected a port\n    port\n        ^ here\n");
    }

    #[test]
    fn long_lines_are_windowed() {
        let src = format!("{}tcp @", "host a or ".repeat(50));
        let at = src.len() as u32 - 1;
        let d = Diagnostic::new("unexpected character `@`", Span::new(at, at + 1));
        let r = d.render(&src);
        let lines: Vec<&str> = r.lines().collect();
        assert!(lines[1].starts_with("  …") && lines[1].ends_with("tcp @"), "{r}");
        assert_eq!(
            lines[2].find('^').map(|c| lines[2][..c].chars().count()),
            lines[1].find('@').map(|c| lines[1][..c].chars().count())
        );
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let d = Diagnostic::new("x", Span::new(100, 200)).with_aux(Span::new(7, 3), "y");
        let _ = d.render("é\tb");
        let _ = d.render("");
        for a in 0..6 {
            for b in 0..6 {
                let d = Diagnostic::new("x", Span::new(a, b)).with_aux(Span::new(b, a), "y");
                let _ = d.render("é\nü");
                let _ = d.render("aé");
            }
        }
    }
}
