//! Errors of a rule file, located and rendered.
//!
//! `ovs-ofctl` reports the first mistake of a file as `FILE:LINE: message` and stops. sift
//! reports the first mistake of every line, each with its byte span, `line:column` and a help
//! line, rendered with the line and a caret under the offending token through `sift-diag` (as
//! `sift pf check` renders pf.conf's mistakes).

use sift_diag::{Diagnostic, Span};

/// One mistake in a rule's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct FlowError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters) of the span's start.
    pub column: u32,
    /// The offending bytes in the whole text.
    pub span: Span,
    /// What is wrong (lowercase, code in backticks).
    pub message: String,
    /// What would be right, when sift can say.
    pub help: Option<String>,
    /// An earlier token involved (the first of two conflicting settings) and its note.
    pub aux: Option<(Span, String)>,
}

impl FlowError {
    /// An error at `span` of `source`, on the line `line` that starts at `line_start` (the
    /// span may be on a later line of a text given as one rule).
    pub(crate) fn new(
        source: &str,
        line: u32,
        line_start: usize,
        span: Span,
        message: impl Into<String>,
    ) -> FlowError {
        let at = (span.start as usize).clamp(line_start.min(source.len()), source.len());
        let before = source.get(line_start.min(at)..at).unwrap_or("");
        let line = line + before.matches('\n').count() as u32;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        FlowError {
            line,
            column: column as u32,
            span,
            message: message.into(),
            help: None,
            aux: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> FlowError {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn aux(mut self, span: Span, note: impl Into<String>) -> FlowError {
        self.aux = Some((span, note.into()));
        self
    }

    /// The error as sift prints it: `error: FILE:LINE:COLUMN: message`, the line, a caret
    /// under the offending token (and dashes under an earlier one involved), and the help.
    pub fn render(&self, file: &str, source: &str) -> String {
        // Render against the error's line alone: a file with many mistakes costs each one its
        // line, not the whole file.
        let at = (self.span.start as usize).min(source.len());
        let start = source[..floor(source, at)].rfind('\n').map_or(0, |i| i + 1);
        let end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line = &source[start..end];
        let shift = |s: Span| {
            let c = |v: u32| (v as usize).saturating_sub(start).min(line.len());
            Span::from_range(c(s.start)..c(s.end))
        };
        let mut d = Diagnostic::new(self.message.clone(), shift(self.span));
        if let Some((span, note)) = &self.aux {
            d = d.with_aux(shift(*span), note.clone());
        }
        if let Some(h) = &self.help {
            d = d.with_help(h.clone());
        }
        let body = d.render(line);
        let rest = body.split_once('\n').map_or("", |x| x.1);
        format!("error: {file}:{}:{}: {}\n{rest}", self.line, self.column, self.message)
    }
}

/// The largest char boundary at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The mistakes of a rule file: the first of each line that has one, in line order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} error(s) in the rules, the first: {}", .errors.len(), .errors.first().map(|e| e.to_string()).unwrap_or_default())]
pub struct ParseErrors {
    /// The errors.
    pub errors: Vec<FlowError>,
}

impl ParseErrors {
    /// Every error rendered ([`FlowError::render`]), one after the other.
    pub fn render(&self, file: &str, source: &str) -> String {
        self.errors.iter().map(|e| e.render(file, source)).collect()
    }
}
