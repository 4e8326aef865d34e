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
    /// An error at `span` of `source`.
    pub(crate) fn new(source: &str, span: Span, message: impl Into<String>) -> FlowError {
        let at = (span.start as usize).min(source.len());
        let before = source.get(..at).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        FlowError {
            line: line as u32,
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
        let mut d = Diagnostic::new(self.message.clone(), self.span);
        if let Some((span, note)) = &self.aux {
            d = d.with_aux(*span, note.clone());
        }
        if let Some(h) = &self.help {
            d = d.with_help(h.clone());
        }
        let body = d.render(source);
        let rest = body.split_once('\n').map_or("", |x| x.1);
        format!("error: {file}:{}:{}: {}\n{rest}", self.line, self.column, self.message)
    }
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
