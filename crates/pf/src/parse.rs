//! The pf.conf parser: statements, options, macros, tables, anchors, includes and queues.
//!
//! Recursive descent over [`crate::lex`]'s tokens, one production per parse.y production, with
//! the same checks in the same order so that the same mistakes give the same messages. pfctl's
//! yacc parser recovers from an error by skipping to the end of the line (`ruleset error '\n'`)
//! and carries on; so does this one, collecting every error. What pfctl prints while parsing
//! (macros, `set` options, tables) is printed here at the same moments; rules are printed after
//! the whole file was read and only when it had no error ([`crate::print`]).
//!
//! The rule grammar itself (`pfrule`, addresses, ports, options) is in `parse_rule`;
//! list expansion and the checks on expanded rules in `expand`.

use std::collections::HashMap;

use sift_diag::Span;

use crate::ast::{Rule, Ruleset};
use crate::error::{PfError, Prefix};
use crate::host::Host;
use crate::lex::{Lexer, Tok, Token, is_keyword};

/// Macros by name, with whether each was defined on the command line (and so cannot be
/// redefined by the file).
#[derive(Clone, Debug, Default)]
pub struct Macros {
    map: HashMap<String, (String, bool)>,
}

impl Macros {
    /// A macro's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(|v| v.0.as_str())
    }

    /// pfctl's `symset`: a command-line (`persist`) macro is never overwritten.
    pub fn set(&mut self, name: &str, value: &str, persist: bool) {
        if self.map.get(name).is_some_and(|v| v.1) {
            return;
        }
        self.map.insert(name.to_string(), (value.to_string(), persist));
    }
}

/// How `pfctl` was asked to read the rule set.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-v`: print what is parsed.
    pub verbose: bool,
    /// `-a anchor`: load into this anchor.
    pub anchor: Option<String>,
    /// `-D name=value` definitions, in order.
    pub defines: Vec<(String, String)>,
}

/// Why a statement failed: a syntax error at a token, or a reported semantic error.
pub(crate) enum Fail {
    /// An unexpected token; the message is `syntax error`.
    Syntax(Token, String),
    /// The error was already reported.
    Reported,
    /// Parsing must stop (pfctl exits).
    Fatal,
}

/// The result of a production.
pub(crate) type PResult<T> = Result<T, Fail>;

struct FileState {
    name: String,
    lexer: Lexer,
    source: usize,
}

/// The anchor stack depth pfctl allows (`PFCTL_ANCHOR_STACK_DEPTH`).
pub const MAX_ANCHOR_DEPTH: usize = 64;
/// How deeply sift lets `{ }` lists nest (pfctl's yacc stack allows about 150 levels).
pub const MAX_LIST_DEPTH: usize = 64;
/// The most rules one rule may expand to.
pub const MAX_EXPANSION: u64 = 1_000_000;
/// The include depth sift allows (pfctl has none; an include loop would never end).
pub const MAX_INCLUDE_DEPTH: usize = 64;

/// The parser's state across files and anchors (pfctl's `struct pfctl` plus parse.y's globals).
pub struct Parser<'h> {
    files: Vec<FileState>,
    /// The texts of every file read, by source index.
    pub sources: Vec<(String, String)>,
    la: Option<Token>,
    /// Macros.
    pub macros: Macros,
    /// The host environment.
    pub host: &'h dyn Host,
    /// `-v`
    pub verbose: bool,
    /// What pfctl prints on standard output while parsing.
    pub stdout: String,
    /// Errors and warnings in order.
    pub errors: Vec<PfError>,
    /// Whether an error (not a warning) occurred.
    pub failed: bool,
    /// `set block-policy` (a `flag` bit, 0 for drop).
    pub blockpolicy: u32,
    /// `set state-defaults`
    pub state_defaults: Option<Vec<crate::ast::StateOpt>>,
    /// `set state-policy if-bound`
    pub default_ifbound: bool,
    /// `set reassemble` (enabled, no-df)
    pub reassemble: (bool, bool),
    /// The rule sets built so far.
    pub ruleset: Ruleset,
    /// The current anchor (index into `ruleset.anchors`) and the stack of enclosing ones.
    pub anchor_stack: Vec<usize>,
    brace_count: usize,
    pub(crate) auto_tables: usize,
    include_base: usize,
    /// The span errors point at while a whole rule is checked (its expansion).
    pub(crate) rule_span: Option<Span>,
    /// How deeply `{ }` lists are nested right now.
    pub(crate) nest: usize,
    /// yacc's `yyerrflag`: after an error, syntax errors stay silent until three tokens have
    /// been shifted.
    errflag: u8,
    /// `load anchor` requests (anchor path, file), in order.
    pub loads: Vec<(String, String)>,
    /// Line of the last token read (for semantic errors).
    pub(crate) last_line: u32,
    pub(crate) last_span: Span,
}

impl<'h> Parser<'h> {
    /// A parser reading `text` (named `name`, `stdin` for standard input).
    pub fn new(name: &str, text: &str, host: &'h dyn Host, opts: &Options) -> Parser<'h> {
        let mut macros = Macros::default();
        for (k, v) in &opts.defines {
            macros.set(k, v, true);
        }
        let mut ruleset = Ruleset::default();
        ruleset.anchors.push(crate::ast::AnchorRules {
            path: opts.anchor.clone().unwrap_or_default(),
            rules: vec![],
        });
        Parser {
            files: vec![FileState { name: name.into(), lexer: Lexer::new(text, 1), source: 0 }],
            sources: vec![(name.to_string(), text.to_string())],
            la: None,
            macros,
            host,
            verbose: opts.verbose,
            stdout: String::new(),
            errors: Vec::new(),
            failed: false,
            blockpolicy: 0,
            state_defaults: None,
            default_ifbound: false,
            reassemble: (true, false),
            ruleset,
            anchor_stack: vec![0],
            brace_count: 0,
            auto_tables: 0,
            include_base: 1,
            errflag: 0,
            nest: 0,
            rule_span: None,
            loads: Vec::new(),
            last_line: 1,
            last_span: Span::default(),
        }
    }

    /// Starts reading another file where the current one stands (a loaded anchor).
    pub fn push_text(&mut self, name: &str, text: &str, anchor: usize) {
        let source = self.sources.len();
        self.sources.push((name.to_string(), text.to_string()));
        self.files.push(FileState { name: name.into(), lexer: Lexer::new(text, 1), source });
        self.la = None;
        self.include_base = self.files.len();
        self.anchor_stack = vec![anchor];
    }

    /// Stops reading the file pushed by [`Parser::push_text`].
    pub fn pop_text(&mut self) {
        if self.files.len() > 1 {
            self.files.pop();
        }
        self.include_base = self.files.len();
        self.la = None;
        self.anchor_stack = vec![0];
    }

    // ---- tokens -------------------------------------------------------------------------

    /// The lookahead token.
    pub(crate) fn peek(&mut self) -> &Token {
        if self.la.is_none() {
            let t = self.read();
            self.la = Some(t);
        }
        self.la.as_ref().expect("filled above")
    }

    fn read(&mut self) -> Token {
        loop {
            let Some(f) = self.files.last_mut() else {
                return Token { tok: Tok::Eof, line: self.last_line, span: self.last_span };
            };
            let t = f.lexer.next_token(&self.macros);
            let errs: Vec<_> = f.lexer.errors.drain(..).collect();
            let (name, source) = (f.name.clone(), f.source);
            for e in errs {
                self.failed = true;
                self.errors.push(PfError {
                    file: name.clone(),
                    src_index: source,
                    line: e.line,
                    message: e.message,
                    span: e.span,
                    expected: None,
                    prefix: Prefix::Located,
                });
            }
            if t.tok == Tok::Eof && self.files.len() > 1 && self.is_include_top() {
                self.files.pop();
                continue;
            }
            return t;
        }
    }

    fn is_include_top(&self) -> bool {
        // Included files are popped at their end; the bottom file of a parse is not.
        self.files.len() > self.include_base
    }

    /// Consumes the lookahead.
    pub(crate) fn bump(&mut self) -> Token {
        self.peek();
        let t = self.la.take().expect("peeked");
        self.errflag = self.errflag.saturating_sub(1);
        self.last_line = t.line;
        self.last_span = t.span;
        t
    }

    /// The lookahead's kind.
    pub(crate) fn tok(&mut self) -> Tok {
        self.peek().tok.clone()
    }

    /// Whether the lookahead is the keyword `kw`.
    pub(crate) fn at_kw(&mut self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(w) if w == kw)
    }

    /// Consumes the keyword `kw` if it is next.
    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes punctuation `c` if it is next.
    pub(crate) fn eat_punct(&mut self, c: char) -> bool {
        if self.peek().tok == Tok::Punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// A syntax error at the lookahead.
    pub(crate) fn syntax<T>(&mut self, expected: &str) -> PResult<T> {
        let t = self.peek().clone();
        Err(Fail::Syntax(t, expected.to_string()))
    }

    /// Requires the keyword `kw`.
    pub(crate) fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) { Ok(()) } else { self.syntax(&format!("`{kw}`")) }
    }

    /// Requires punctuation `c`.
    pub(crate) fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) { Ok(()) } else { self.syntax(&format!("`{c}`")) }
    }

    /// Whether the lookahead is a STRING (a quoted string or an unquoted non-keyword).
    pub(crate) fn at_string(&mut self) -> bool {
        match &self.peek().tok {
            Tok::Quoted(_) => true,
            Tok::Word(w) => !is_keyword(w),
            _ => false,
        }
    }

    /// Requires a STRING.
    pub(crate) fn string(&mut self, what: &str) -> PResult<String> {
        if self.at_string() {
            match self.bump().tok {
                Tok::Quoted(s) | Tok::Word(s) => Ok(s),
                _ => unreachable!("checked by at_string"),
            }
        } else {
            self.syntax(what)
        }
    }

    /// Requires a NUMBER.
    pub(crate) fn number(&mut self, what: &str) -> PResult<i64> {
        if let Tok::Number(n) = self.peek().tok {
            self.bump();
            Ok(n)
        } else {
            self.syntax(what)
        }
    }

    /// pfctl's `numberstring`: a NUMBER printed back, or a STRING.
    pub(crate) fn numberstring(&mut self, what: &str) -> PResult<String> {
        if let Tok::Number(n) = self.peek().tok {
            self.bump();
            return Ok(n.to_string());
        }
        self.string(what)
    }

    /// Skips newlines (`optnl`).
    pub(crate) fn optnl(&mut self) {
        while self.peek().tok == Tok::Newline {
            self.bump();
        }
    }

    /// Consumes an optional comma (`comma`).
    pub(crate) fn comma(&mut self) {
        self.eat_punct(',');
    }

    // ---- errors ---------------------------------------------------------------------------

    fn file_info(&self) -> (String, usize) {
        self.files.last().map_or(("stdin".into(), 0), |f| (f.name.clone(), f.source))
    }

    /// Reports `message` at the line of the last token read (pfctl's `yyerror` in an action).
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        let line = self.la.as_ref().map_or(self.last_line, |t| t.line);
        let span = self.rule_span.unwrap_or(self.last_span);
        self.error_at(message, line, span);
    }

    /// Reports `message` at `line`, pointing at `span`.
    pub(crate) fn error_at(&mut self, message: impl Into<String>, line: u32, span: Span) {
        let (file, source) = self.file_info();
        self.failed = true;
        self.errors.push(PfError {
            file,
            src_index: source,
            line,
            message: message.into(),
            span,
            expected: None,
            prefix: Prefix::Located,
        });
    }

    /// A message without a location (the resolver's `no IP address found for …`).
    pub(crate) fn bare(&mut self, message: impl Into<String>, span: Span) {
        let (file, source) = self.file_info();
        let line = self.la.as_ref().map_or(self.last_line, |t| t.line);
        self.errors.push(PfError {
            file,
            src_index: source,
            line,
            message: message.into(),
            span,
            expected: None,
            prefix: Prefix::Bare,
        });
    }

    /// A warning (`file:line: warning: …`), which does not fail the parse.
    pub(crate) fn warn(&mut self, message: impl Into<String>) {
        let (file, source) = self.file_info();
        let line = self.la.as_ref().map_or(self.last_line, |t| t.line);
        self.errors.push(PfError {
            file,
            src_index: source,
            line,
            message: message.into(),
            span: self.last_span,
            expected: None,
            prefix: Prefix::Located,
        });
    }

    /// Prints to pfctl's standard output (when verbose).
    pub(crate) fn print(&mut self, line: &str) {
        if self.verbose {
            self.stdout.push_str(line);
            self.stdout.push('\n');
        }
    }

    /// Recovers from a failed statement as yacc does: reports a syntax error, then skips to
    /// the end of the line.
    fn recover(&mut self, fail: Fail) -> bool {
        match fail {
            Fail::Fatal => return false,
            Fail::Reported => {}
            Fail::Syntax(_, _) if self.errflag > 0 => {
                // yacc stays silent about an error this close to the previous one.
                self.failed = true;
            }
            Fail::Syntax(t, expected) => {
                let (file, source) = self.file_info();
                self.failed = true;
                self.errors.push(PfError {
                    file,
                    src_index: source,
                    line: t.line,
                    message: "syntax error".into(),
                    span: t.span,
                    expected: Some(format!("{expected}, found {}", t.tok.describe())),
                    prefix: Prefix::Located,
                });
            }
        }
        // An ERROR token already skipped its own line; yacc then discards the next line too.
        loop {
            let t = self.bump();
            match t.tok {
                Tok::Newline | Tok::Eof => break,
                _ => {}
            }
        }
        // The error token and the newline were shifted.
        self.errflag = 2;
        true
    }

    // ---- statements -------------------------------------------------------------------------

    /// Parses statements until the end of the input (or `}` when `in_brace`).
    pub fn parse_all(&mut self, in_brace: bool) -> bool {
        loop {
            match self.tok() {
                Tok::Eof => return true,
                Tok::Newline => {
                    self.bump();
                }
                Tok::Punct('}') if in_brace => return true,
                _ => {
                    let r = self.statement(in_brace);
                    match r {
                        Ok(()) => match self.tok() {
                            Tok::Newline => {
                                self.bump();
                            }
                            Tok::Eof => {}
                            Tok::Punct('}') if in_brace => {
                                let t = self.peek().clone();
                                if !self.recover(Fail::Syntax(t, "the end of the line".into())) {
                                    return false;
                                }
                            }
                            _ => {
                                let t = self.peek().clone();
                                if !self.recover(Fail::Syntax(t, "the end of the line".into())) {
                                    return false;
                                }
                            }
                        },
                        Err(Fail::Reported) if self.peek().tok == Tok::Newline => {
                            self.bump();
                            self.errflag = 2;
                        }
                        Err(f) => {
                            if !self.recover(f) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
    }

    fn statement(&mut self, in_brace: bool) -> PResult<()> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Error => self.syntax("a statement"),
            Tok::Word(w) => match w.as_str() {
                "include" => self.include(),
                "pass" | "block" | "match" => crate::parse_rule::pfrule(self),
                "anchor" => self.anchor_rule(),
                "set" if !in_brace => self.option(),
                "load" if !in_brace => self.load_rule(),
                "queue" if !in_brace => self.queue(),
                "antispoof" if !in_brace => self.antispoof(),
                "table" if !in_brace => self.tabledef(),
                _ if !is_keyword(w) && !in_brace => self.varset(),
                _ => self.syntax("a rule, an option or a definition"),
            },
            Tok::Quoted(_) if !in_brace => self.varset(),
            _ => self.syntax("a rule, an option or a definition"),
        }
    }

    fn include(&mut self) -> PResult<()> {
        self.bump();
        let name = self.string("a file name in quotes")?;
        let depth = self.files.len() - self.include_base;
        if depth >= MAX_INCLUDE_DEPTH {
            self.error(format!("failed to include file {name}: includes nested too deeply"));
            return Err(Fail::Reported);
        }
        match self.host.read_file(&name) {
            Ok(text) => {
                // The include's own line ends in the outer file, after the included text.
                let source = self.sources.len();
                self.sources.push((name.clone(), text.clone()));
                self.files.push(FileState {
                    name: name.clone(),
                    lexer: Lexer::new(&text, 1),
                    source,
                });
                // The lookahead must be re-read from the new file.
                self.la =
                    Some(Token { tok: Tok::Newline, line: self.last_line, span: self.last_span });
                Ok(())
            }
            Err(_) => {
                self.error(format!("failed to include file {name}"));
                Err(Fail::Reported)
            }
        }
    }

    fn varset(&mut self) -> PResult<()> {
        let name = self.string("a macro name")?;
        self.expect_punct('=')?;
        let mut parts = vec![self.numberstring("a macro value")?];
        while matches!(self.tok(), Tok::Number(_)) || self.at_string() {
            parts.push(self.numberstring("a macro value")?);
        }
        let value = parts.join(" ");
        self.print(&format!("{name} = \"{value}\""));
        if name.chars().skip(1).any(|c| c.is_whitespace()) {
            self.error("macro name cannot contain whitespace");
            return Err(Fail::Reported);
        }
        if value.len() > crate::lex::MAX_MACRO {
            self.error(format!("macro '{name}' too long"));
            return Err(Fail::Reported);
        }
        self.macros.set(&name, &value, false);
        Ok(())
    }

    fn load_rule(&mut self) -> PResult<()> {
        self.bump();
        self.expect_kw("anchor")?;
        let name = self.anchorname()?;
        self.expect_kw("from")?;
        let file = self.string("a file name")?;
        let Some(name) = name else {
            self.error("anchor name is missing");
            return Err(Fail::Reported);
        };
        let cur = *self.anchor_stack.last().unwrap_or(&0);
        let base = self.ruleset.anchors[cur].path.clone();
        let path = if base.is_empty() { name } else { format!("{base}/{name}") };
        if path.split('/').count() > MAX_ANCHOR_DEPTH {
            self.error(format!("load anchor {path}: anchors nested too deeply"));
            return Err(Fail::Reported);
        }
        self.loads.push((path, file));
        Ok(())
    }

    /// `anchorname`: a STRING or nothing.
    pub(crate) fn anchorname(&mut self) -> PResult<Option<String>> {
        if !self.at_string() {
            return Ok(None);
        }
        let n = self.string("an anchor name")?;
        if n.is_empty() {
            self.error("anchor name must not be empty");
            return Err(Fail::Reported);
        }
        if n.starts_with('_') || n.contains("/_") {
            self.error("anchor names beginning with '_' are reserved for internal use");
            return Err(Fail::Reported);
        }
        Ok(Some(n))
    }

    /// The index of the rule set of anchor `path`, created when new.
    pub fn anchor_index(&mut self, path: &str) -> usize {
        if let Some(i) = self.ruleset.anchors.iter().position(|a| a.path == path) {
            return i;
        }
        self.ruleset.anchors.push(crate::ast::AnchorRules { path: path.into(), rules: vec![] });
        self.ruleset.anchors.len() - 1
    }

    fn anchor_rule(&mut self) -> PResult<()> {
        let start = self.peek().span;
        self.bump();
        let name = self.anchorname()?;
        let mut spec = crate::parse_rule::rule_head(self, false)?;
        spec.span = start.cover(self.last_span);
        // The brace body, if any.
        let cur = *self.anchor_stack.last().unwrap_or(&0);
        let base = self.ruleset.anchors[cur].path.clone();
        let mut body = None;
        if self.peek().tok == Tok::Punct('{') {
            self.bump();
            if self.peek().tok != Tok::Newline {
                return self.syntax("the end of the line after `{`");
            }
            if self.anchor_stack.len() >= MAX_ANCHOR_DEPTH {
                let (file, source) = self.file_info();
                self.failed = true;
                self.errors.push(PfError {
                    file,
                    src_index: source,
                    line: self.last_line,
                    message: "pfa_anchor: anchors too deep".into(),
                    span: self.last_span,
                    expected: None,
                    prefix: Prefix::Program,
                });
                return Err(Fail::Fatal);
            }
            self.brace_count += 1;
            let holding = match &name {
                Some(n) => n.clone(),
                None => format!("_{}", self.brace_count),
            };
            if holding.contains('/') {
                self.error("anchor paths containing '/' cannot be used for inline anchors.");
                return Err(Fail::Reported);
            }
            let path = if base.is_empty() { holding.clone() } else { format!("{base}/{holding}") };
            let idx = self.anchor_index(&path);
            self.anchor_stack.push(idx);
            let ok = self.parse_all(true);
            self.anchor_stack.pop();
            if !ok {
                return Err(Fail::Fatal);
            }
            if self.peek().tok != Tok::Punct('}') {
                return self.syntax("`}`");
            }
            self.bump();
            body = Some((holding, idx));
        }
        crate::parse_rule::end_of_rule(self)?;
        let (call, idx) = match (body, name) {
            (Some((holding, idx)), _) => (holding, idx),
            (None, Some(n)) => {
                let path = if base.is_empty() { n.clone() } else { format!("{base}/{n}") };
                let idx = self.anchor_index(&path);
                (n, idx)
            }
            (None, None) => {
                self.error("anchors without explicit rules must specify a name");
                return Err(Fail::Reported);
            }
        };
        crate::rule_action::finish_anchor_rule(self, spec, call, idx)
    }

    /// Appends expanded rules to the current anchor.
    pub(crate) fn add_rule(&mut self, r: Rule) {
        let cur = *self.anchor_stack.last().unwrap_or(&0);
        self.ruleset.anchors[cur].rules.push(r);
    }

    /// Whether the current anchor is the top one of this parse.
    pub(crate) fn at_top_anchor(&self) -> bool {
        self.anchor_stack.len() == 1
    }
}

/// The C library's wording of an I/O error.
pub(crate) fn io_reason(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory",
        std::io::ErrorKind::PermissionDenied => "Permission denied",
        std::io::ErrorKind::IsADirectory => "Is a directory",
        std::io::ErrorKind::FileTooLarge => "File too large",
        _ => "Input/output error",
    }
}
