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

use crate::addr::{self, AddrKind, HostAddr};
use crate::ast::{Queue, Rule, Ruleset, TableDef, TableEntry};
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
    auto_tables: usize,
    include_base: usize,
    /// yacc's `yyerrflag`: after an error, syntax errors stay silent until three tokens have
    /// been shifted.
    errflag: u8,
    /// `load anchor` requests (anchor path, file), in order.
    pub loads: Vec<(String, String)>,
    /// Line of the last token read (for semantic errors).
    pub(crate) last_line: u32,
    last_span: Span,
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
        let span = self.last_span;
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
                self.la = Some(Token { tok: Tok::Newline, line: self.last_line, span: self.last_span });
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
        spec.span = start;
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
        crate::parse_rule::finish_anchor_rule(self, spec, call, idx)
    }

    /// Appends expanded rules to the current anchor.
    pub(crate) fn add_rule(&mut self, r: Rule) {
        let cur = *self.anchor_stack.last().unwrap_or(&0);
        self.ruleset.anchors[cur].rules.push(r);
    }

    /// The number of rules in the current anchor (pfctl's `$nr`).
    pub(crate) fn rule_count(&self) -> usize {
        let cur = *self.anchor_stack.last().unwrap_or(&0);
        self.ruleset.anchors[cur].rules.len()
    }

    /// Whether the current anchor is the top one of this parse.
    pub(crate) fn at_top_anchor(&self) -> bool {
        self.anchor_stack.len() == 1
    }

    // ---- set ------------------------------------------------------------------------------

    fn option(&mut self) -> PResult<()> {
        self.bump();
        let Tok::Word(w) = self.tok() else { return self.syntax("an option name") };
        match w.as_str() {
            "reassemble" => {
                self.bump();
                let yes = if self.eat_kw("no") {
                    false
                } else {
                    let s = self.string("`yes` or `no`")?;
                    if s != "yes" {
                        self.error(format!("invalid value '{s}', expected 'yes' or 'no'"));
                        return Err(Fail::Reported);
                    }
                    true
                };
                let nodf = self.eat_kw("no-df");
                self.reassemble = (yes, nodf);
                let line = format!(
                    "set reassemble {} {}",
                    if yes { "yes" } else { "no" },
                    if nodf { "no-df" } else { "" }
                );
                self.print(&line);
            }
            "optimization" => {
                self.bump();
                let s = self.string("an optimization")?;
                if !["normal", "default", "satellite", "high-latency", "conservative", "aggressive"]
                    .contains(&s.as_str())
                {
                    self.error(format!("unknown optimization {s}"));
                    return Err(Fail::Reported);
                }
                self.print(&format!("set optimization {s}"));
            }
            "ruleset-optimization" => {
                self.bump();
                let s = self.string("`none`, `basic` or `profile`")?;
                if !["none", "basic", "profile"].contains(&s.as_str()) {
                    self.error(format!("unknown ruleset-optimization {s}"));
                    return Err(Fail::Reported);
                }
            }
            "timeout" => {
                self.bump();
                if self.eat_punct('{') {
                    self.optnl();
                    loop {
                        self.timeout_spec()?;
                        self.optnl();
                        if self.eat_punct('}') {
                            break;
                        }
                        self.comma();
                        self.optnl();
                    }
                } else {
                    self.timeout_spec()?;
                }
            }
            "limit" => {
                self.bump();
                if self.eat_punct('{') {
                    self.optnl();
                    loop {
                        self.limit_spec()?;
                        self.optnl();
                        if self.eat_punct('}') {
                            break;
                        }
                        self.comma();
                        self.optnl();
                    }
                } else {
                    self.limit_spec()?;
                }
            }
            "loginterface" => {
                self.bump();
                let s = if self.eat_kw("all") { "all".into() } else { self.string("an interface")? };
                self.print(&format!("set loginterface {s}"));
            }
            "hostid" => {
                self.bump();
                let n = match self.tok() {
                    Tok::Number(n) => {
                        self.bump();
                        n
                    }
                    _ => {
                        let s = self.string("a number")?;
                        match crate::parse_rule::atoul(&s) {
                            Some(v) => v as i64,
                            None => {
                                self.error(format!("{s} is not a number"));
                                return Err(Fail::Reported);
                            }
                        }
                    }
                };
                if n <= 0 || n > i64::from(u32::MAX) {
                    self.error("hostid must be non-zero");
                    return Err(Fail::Reported);
                }
                self.print(&format!("set hostid 0x{n:08x}"));
            }
            "block-policy" => {
                self.bump();
                if self.eat_kw("drop") {
                    self.print("set block-policy drop");
                    self.blockpolicy = 0;
                } else if self.eat_kw("return") {
                    self.print("set block-policy return");
                    self.blockpolicy = crate::ast::flag::RETURN;
                } else {
                    return self.syntax("`drop` or `return`");
                }
            }
            "fingerprints" => {
                self.bump();
                let s = self.string("a file name")?;
                self.print(&format!("set fingerprints \"{s}\""));
            }
            "state-policy" => {
                self.bump();
                if self.eat_kw("if-bound") {
                    self.print("set state-policy if-bound");
                    self.default_ifbound = true;
                } else if self.eat_kw("floating") {
                    self.print("set state-policy floating");
                    self.default_ifbound = false;
                } else {
                    return self.syntax("`if-bound` or `floating`");
                }
            }
            "debug" => {
                self.bump();
                let s = if self.eat_kw("debug") { "debug".into() } else { self.string("a level")? };
                const LEVELS: &[&str] =
                    &["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];
                let ok = LEVELS.contains(&s.to_ascii_lowercase().as_str())
                    || s.parse::<u8>().is_ok_and(|v| v <= 7);
                if !ok {
                    self.error(format!("error setting debuglevel {s}"));
                    return Err(Fail::Reported);
                }
                self.print(&format!("set debug {s}"));
            }
            "skip" => {
                self.bump();
                self.expect_kw("on")?;
                let ifs = crate::parse_rule::interface_list(self)?;
                if ifs.len() == 1 && !ifs[0].not && ifs[0].name == "none" {
                    self.print("set skip on none");
                } else {
                    let names: Vec<String> = ifs.iter().map(|i| format!(" {}", i.name)).collect();
                    self.print(&format!("set skip on {{{} }}", names.concat()));
                    for i in &ifs {
                        if i.not {
                            self.error("skip on ! <interface> is not supported");
                        } else if i.rdomain.is_some() {
                            self.error("skip on rdomain <num> is not supported");
                        }
                    }
                    if ifs.iter().any(|i| i.not || i.rdomain.is_some()) {
                        self.error("error setting skip interface(s)");
                        return Err(Fail::Reported);
                    }
                }
            }
            "state-defaults" => {
                self.bump();
                let opts = crate::parse_rule::state_opt_list(self)?;
                if self.state_defaults.is_some() {
                    self.error("cannot redefine state-defaults");
                    return Err(Fail::Reported);
                }
                self.state_defaults = Some(opts);
            }
            "syncookies" => {
                self.bump();
                let s = self.string("`never`, `adaptive` or `always`")?;
                if !["never", "adaptive", "always"].contains(&s.as_str()) {
                    self.error("illegal value for syncookies");
                    return Err(Fail::Reported);
                }
                let mut marks = String::new();
                if self.eat_punct('(') {
                    loop {
                        let k = self.string("`start` or `end`")?;
                        let v = self.string("a percentage")?;
                        let pct = v.strip_suffix('%').and_then(|x| x.parse::<f64>().ok());
                        let Some(pct) = pct else { return self.syntax("a percentage") };
                        if pct <= 0.0 || pct > 100.0 {
                            self.error("illegal percentage value");
                            return Err(Fail::Reported);
                        }
                        if k != "start" && k != "end" {
                            self.error("illegal syncookie option");
                            return Err(Fail::Reported);
                        }
                        marks.push_str(&format!("{}{k} {v}", if marks.is_empty() { "" } else { ", " }));
                        if self.eat_punct(')') {
                            break;
                        }
                        self.comma();
                    }
                }
                if marks.is_empty() {
                    self.print(&format!("set syncookies {s}"));
                } else {
                    self.print(&format!("set syncookies {s} ({marks})"));
                }
            }
            _ => return self.syntax("an option name"),
        }
        Ok(())
    }

    fn timeout_spec(&mut self) -> PResult<()> {
        let name = self.string("a timeout name")?;
        let n = self.number("a number of seconds")?;
        if !(0..=i64::from(u32::MAX)).contains(&n) {
            self.error("only positive values permitted");
            return Err(Fail::Reported);
        }
        if !crate::ast::TIMEOUTS.contains(&name.as_str()) {
            self.error(format!("unknown timeout {name}"));
            return Err(Fail::Reported);
        }
        self.print(&format!("set timeout {name} {n}"));
        Ok(())
    }

    fn limit_spec(&mut self) -> PResult<()> {
        let name = self.string("a limit name")?;
        let n = self.number("a number")?;
        if !(0..=i64::from(u32::MAX)).contains(&n) {
            self.error("only positive values permitted");
            return Err(Fail::Reported);
        }
        const LIMITS: &[&str] =
            &["states", "src-nodes", "frags", "tables", "table-entries", "pktdelay-pkts", "anchors"];
        if !LIMITS.contains(&name.as_str()) {
            self.error(format!("unable to set limit {name} {n}"));
            return Err(Fail::Reported);
        }
        self.print(&format!("set limit {name} {n}"));
        Ok(())
    }

    // ---- tables ---------------------------------------------------------------------------

    fn tabledef(&mut self) -> PResult<()> {
        self.bump();
        self.expect_punct('<')?;
        let name = self.string("a table name")?;
        self.expect_punct('>')?;
        let mut t = TableDef { name: name.clone(), ..TableDef::default() };
        loop {
            if self.at_string() {
                let s = self.string("a table option")?;
                match s.as_str() {
                    "const" => t.is_const = true,
                    "persist" => t.persist = true,
                    "counters" => t.counters = true,
                    _ => {
                        self.error(format!("invalid table option '{s}'"));
                        return Err(Fail::Reported);
                    }
                }
            } else if self.eat_punct('{') {
                self.optnl();
                if self.eat_punct('}') {
                    t.init_addr = true;
                    continue;
                }
                let hosts = self.table_host_list()?;
                self.expect_punct('}')?;
                for h in &hosts {
                    let msg = match &h.addr {
                        AddrKind::Mask { .. } => continue,
                        AddrKind::Range { .. } => "address ranges are not permitted inside tables",
                        AddrKind::Dyn { .. } => "dynamic addresses are not permitted inside tables",
                        AddrKind::Table(_) => "tables cannot contain tables",
                        AddrKind::NoRoute => "\"no-route\" is not permitted inside tables",
                        AddrKind::UrpfFailed => "\"urpf-failed\" is not permitted inside tables",
                        _ => "unknown address type",
                    };
                    self.error(msg);
                    return Err(Fail::Reported);
                }
                t.entries.push(TableEntry::Hosts(hosts));
                t.init_addr = true;
            } else if self.eat_kw("file") {
                let f = self.string("a file name")?;
                t.entries.push(TableEntry::File(f));
                t.init_addr = true;
            } else {
                break;
            }
        }
        if name.len() >= 32 {
            self.error("table name too long, max 31 chars");
            return Err(Fail::Reported);
        }
        for e in &t.entries {
            if let TableEntry::File(f) = e {
                match self.host.read_file(f) {
                    Ok(text) => {
                        for w in text
                            .lines()
                            .map(|l| l.split('#').next().unwrap_or(""))
                            .flat_map(str::split_whitespace)
                        {
                            let w = w.strip_prefix('!').unwrap_or(w);
                            if addr::host(w, self.host).is_err() {
                                self.error(format!("file \"{f}\" contains bad data"));
                                return Err(Fail::Reported);
                            }
                        }
                    }
                    Err(e) => {
                        let why = io_reason(&e);
                        self.error(format!("cannot load \"{f}\": {why}"));
                        return Err(Fail::Reported);
                    }
                }
            }
        }
        if self.verbose && self.at_top_anchor() {
            let line = crate::print::tabledef(&t);
            self.stdout.push_str(&line);
        }
        self.ruleset.tables.push(t);
        Ok(())
    }

    fn table_host_list(&mut self) -> PResult<Vec<HostAddr>> {
        let mut out = Vec::new();
        loop {
            if self.eat_punct('{') {
                self.optnl();
                out.extend(self.table_host_list()?);
                self.expect_punct('}')?;
            } else {
                out.extend(crate::parse_rule::xhost(self)?);
            }
            self.optnl();
            if self.peek().tok == Tok::Punct('}') {
                return Ok(out);
            }
            self.comma();
            self.optnl();
        }
    }

    /// Registers an automatic table holding `hosts` and prints it as pfctl does; returns its
    /// name.
    pub(crate) fn auto_table(&mut self, hosts: Vec<HostAddr>) -> String {
        let name = format!("__automatic_{}", self.auto_tables);
        self.auto_tables += 1;
        let t = TableDef {
            name: name.clone(),
            is_const: true,
            init_addr: true,
            entries: vec![TableEntry::Hosts(hosts)],
            ..TableDef::default()
        };
        if self.verbose {
            let line = crate::print::tabledef(&t);
            self.stdout.push_str(&line);
        }
        self.ruleset.tables.push(t);
        name
    }

    // ---- antispoof --------------------------------------------------------------------------

    fn antispoof(&mut self) -> PResult<()> {
        self.bump();
        let (log, logif, quick) = crate::parse_rule::logquick(self)?;
        self.expect_kw("for")?;
        let mut ifs = Vec::new();
        let one = |p: &mut Parser| -> PResult<crate::ast::IfItem> {
            if p.eat_punct('(') {
                let mut i = crate::parse_rule::if_item(p)?;
                p.expect_punct(')')?;
                i.dynamic = true;
                Ok(i)
            } else {
                crate::parse_rule::if_item(p)
            }
        };
        if self.eat_punct('{') {
            self.optnl();
            loop {
                ifs.push(one(self)?);
                self.optnl();
                if self.eat_punct('}') {
                    break;
                }
                self.comma();
                self.optnl();
            }
        } else {
            ifs.push(one(self)?);
        }
        let af = crate::parse_rule::af(self);
        let mut label = None;
        let mut rtable = None;
        loop {
            if self.eat_kw("label") {
                let l = self.string("a label")?;
                if label.is_some() {
                    self.error("label cannot be redefined");
                    return Err(Fail::Reported);
                }
                label = Some(l);
            } else if self.eat_kw("rtable") {
                let n = self.number("a routing table id")?;
                if !(0..=255).contains(&n) {
                    self.error("invalid rtable id");
                    return Err(Fail::Reported);
                }
                rtable = Some(n as i32);
            } else {
                break;
            }
        }
        crate::expand::antispoof(self, log, logif, quick, &ifs, af, label, rtable);
        Ok(())
    }

    // ---- queues -----------------------------------------------------------------------------

    fn queue(&mut self) -> PResult<()> {
        self.bump();
        let name = self.string("a queue name")?;
        let ifs = if self.eat_kw("on") { Some(crate::parse_rule::interface_list(self)?) } else { None };
        let mut q = Queue { name, line: self.last_line, ..Queue::default() };
        let (mut bw, mut parent, mut default, mut qlimit, mut flows, mut quantum) =
            (false, false, false, false, false, false);
        loop {
            let Tok::Word(w) = self.tok() else { break };
            match w.as_str() {
                "bandwidth" => {
                    self.bump();
                    if bw {
                        self.error("bandwidth cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    bw = true;
                    q.bandwidth[0] = self.scspec()?;
                    loop {
                        let save_comma = self.peek().tok == Tok::Punct(',');
                        if save_comma {
                            self.bump();
                        }
                        if self.eat_kw("min") {
                            q.bandwidth[1] = self.scspec()?;
                        } else if self.eat_kw("max") {
                            q.bandwidth[2] = self.scspec()?;
                        } else if save_comma {
                            return self.syntax("`min` or `max`");
                        } else {
                            break;
                        }
                    }
                }
                "parent" => {
                    self.bump();
                    let p = self.string("a queue name")?;
                    if parent {
                        self.error("parent cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    parent = true;
                    q.parent = Some(p);
                }
                "default" => {
                    self.bump();
                    if default {
                        self.error("default cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    default = true;
                    q.default = true;
                }
                "qlimit" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if qlimit {
                        self.error("qlimit cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(0..=65535).contains(&n) {
                        self.error("qlimit out of range: max 65535");
                        return Err(Fail::Reported);
                    }
                    qlimit = true;
                    q.qlimit = n as u32;
                }
                "flows" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if flows {
                        self.error("number of flows cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(1..=32767).contains(&n) {
                        self.error("number of flows out of range: max 32767");
                        return Err(Fail::Reported);
                    }
                    flows = true;
                    q.flows = n as u32;
                }
                "quantum" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if quantum {
                        self.error("quantum cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(1..=65535).contains(&n) {
                        self.error("quantum out of range: max 65535");
                        return Err(Fail::Reported);
                    }
                    quantum = true;
                    q.quantum = n as u32;
                }
                _ => break,
            }
        }
        if !(bw || parent || default || qlimit || flows || quantum) {
            return self.syntax("a queue option");
        }
        if ifs.is_none() && q.parent.is_none() {
            self.error("root queue without interface");
            return Err(Fail::Reported);
        }
        if let Some(ifs) = &ifs
            && (ifs.len() != 1 || !self.host.interfaces().iter().any(|i| i.name == ifs[0].name))
        {
            self.error("not an interface");
            return Err(Fail::Reported);
        }
        let names: Vec<String> = match &ifs {
            Some(v) => v.iter().map(|i| i.name.clone()).collect(),
            None => vec![String::new()],
        };
        for ifname in names {
            if !bw && !flows {
                self.error("no bandwidth or flow specification");
                return Err(Fail::Reported);
            }
            let mut qq = q.clone();
            qq.ifname = ifname;
            self.ruleset.queues.push(qq);
        }
        Ok(())
    }

    fn scspec(&mut self) -> PResult<(u32, u32, u32)> {
        let m2 = self.bandwidth()?;
        if self.eat_kw("burst") {
            let m1 = self.bandwidth()?;
            self.expect_kw("for")?;
            let s = self.string("a time in ms")?;
            let ms = s.strip_suffix("ms").and_then(|v| v.parse::<u32>().ok());
            let Some(ms) = ms else {
                self.error("time in scspec must be in ms");
                return Err(Fail::Reported);
            };
            return Ok((m2, m1, ms));
        }
        Ok((m2, 0, 0))
    }

    fn bandwidth(&mut self) -> PResult<u32> {
        if let Tok::Number(n) = self.tok() {
            self.bump();
            if !(0..=i64::from(u32::MAX)).contains(&n) {
                self.error("bandwidth number too big");
                return Err(Fail::Reported);
            }
            return Ok(n as u32);
        }
        let s = self.string("a bandwidth")?;
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let Ok(v) = num.parse::<f64>() else {
            self.error(format!("unknown unit \"{unit}\""));
            return Err(Fail::Reported);
        };
        let unit = unit.trim_end_matches("Bit").trim_end_matches("bit");
        let unit = if unit.len() > 1 { unit.trim_end_matches('B').trim_end_matches('b') } else { unit };
        let mult = match unit {
            "" | "b" => 1.0,
            "K" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "%" => {
                self.error("no bandwidth in % yet");
                return Err(Fail::Reported);
            }
            _ => {
                self.error(format!("unknown unit \"{unit}\""));
                return Err(Fail::Reported);
            }
        };
        Ok((v * mult) as u32)
    }
}

/// The C library's wording of an I/O error.
pub(crate) fn io_reason(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory",
        std::io::ErrorKind::PermissionDenied => "Permission denied",
        std::io::ErrorKind::IsADirectory => "Is a directory",
        _ => "Input/output error",
    }
}

