//! Errors as pfctl reports them, and as sift renders them.
//!
//! pfctl writes `stdin:LINE: message` (yacc's `yyerror`), a few messages without a location
//! (`no IP address found for x` from the resolver, `pfctl: …` from the checks after parsing),
//! and keeps going to the end of the file. sift keeps the same list — message, file, line — and
//! adds the span of the offending token and what the grammar expected there, so that
//! `sift pf check` can show the line with a caret (through `sift-diag`).

use sift_diag::{Diagnostic, Span};

/// How a message is prefixed when printed as pfctl prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// `file:line: message`
    Located,
    /// `message` (resolver and warning lines)
    Bare,
    /// `pfctl: message` (checks after parsing)
    Program,
}

/// One error or warning of a rule set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.pfctl_line())]
pub struct PfError {
    /// The file's name as pfctl prints it (`stdin` for standard input).
    pub file: String,
    /// Index of the file's text in the parse's source list.
    pub src_index: usize,
    /// pfctl's line number.
    pub line: u32,
    /// pfctl's message.
    pub message: String,
    /// Where in the file's text (for sift's rendering).
    pub span: Span,
    /// What sift expected at the span, when the error is a syntax error.
    pub expected: Option<String>,
    /// How pfctl prefixes it.
    pub prefix: Prefix,
}

impl PfError {
    /// The line pfctl prints.
    pub fn pfctl_line(&self) -> String {
        match self.prefix {
            Prefix::Located => format!("{}:{}: {}", self.file, self.line, self.message),
            Prefix::Bare => self.message.clone(),
            Prefix::Program => format!("pfctl: {}", self.message),
        }
    }

    /// sift's rendering: the message with the file and line, the source line, a caret under the
    /// offending token, and what was expected.
    pub fn render(&self, source_text: &str) -> String {
        let mut d = Diagnostic::new(self.message.clone(), self.span);
        if let Some(e) = &self.expected {
            d = d.with_help(format!("expected {e}"));
        }
        let body = d.render(source_text);
        // sift-diag's header names no file (and no position for a one-line source): put
        // `error: FILE:LINE:COLUMN: message` in its place, the position of the caret.
        let at = (self.span.start as usize).min(source_text.len());
        let before = source_text.get(..at).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        let rest = body.split_once('\n').map_or("", |x| x.1);
        format!("error: {}:{line}:{col}: {}\n{rest}", self.file, self.message)
    }
}
