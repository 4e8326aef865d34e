//! The pf.conf lexer, with pfctl's rules.
//!
//! Why it is hand-written and character-driven rather than a token grammar: pfctl expands macros
//! *while lexing* (`$name` pushes the macro's text back into the input, so `body="pass in all"`
//! followed by `$body` lexes as three keywords), decides between a number and a word by the
//! character that follows the digits (`10/8` is two numbers, `10.1/8` a word and a number), and
//! counts lines across `\` continuations and quoted newlines. This module reproduces those rules
//! so that every later stage sees the tokens pfctl's yacc grammar sees, each with the line pfctl
//! would report and a span into the text for sift's own caret rendering.

use sift_diag::Span;

/// The largest token pfctl accepts (its lexer buffer holds 8096 bytes).
pub const MAX_TOKEN: usize = 8096;

/// The largest macro value sift accepts; pfctl has no limit but a macro that doubles itself a
/// few dozen times (`a = $a $a`) would otherwise exhaust memory.
pub const MAX_MACRO: usize = 1 << 20;

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An unquoted word (a keyword when [`is_keyword`] says so, otherwise pfctl's STRING).
    Word(String),
    /// A quoted string (always pfctl's STRING, never a keyword).
    Quoted(String),
    /// A decimal number as pfctl's lexer recognises it (digits followed by a delimiter).
    Number(i64),
    /// `!=`
    Ne,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `<>` (port range exclusive)
    Xrg,
    /// `><` (port range inclusive)
    Irg,
    /// Any other single character: `{ } ( ) < > ! = , / - :` and so on.
    Punct(char),
    /// The end of a line (also produced once at the end of each file).
    Newline,
    /// A lexer error (already recorded; the rest of the line was skipped): pfctl's ERROR
    /// token, which no production accepts.
    Error,
    /// The end of the input.
    Eof,
}

impl Tok {
    /// How the token reads in a message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Quoted(s) => format!("\"{s}\""),
            Tok::Number(n) => format!("`{n}`"),
            Tok::Ne => "`!=`".into(),
            Tok::Le => "`<=`".into(),
            Tok::Ge => "`>=`".into(),
            Tok::Xrg => "`<>`".into(),
            Tok::Irg => "`><`".into(),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Newline => "the end of the line".into(),
            Tok::Error => "an invalid token".into(),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

/// A token with the line pfctl reports for it and its span in the file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// pfctl's line number (`yylval.lineno`).
    pub line: u32,
    /// Where it is in the text (for a token from a macro: the `$name` reference).
    pub span: Span,
}

/// The keywords of pf.conf (parse.y's `lookup` table); any other word is a STRING.
const KEYWORDS: &[&str] = &[
    "af-to",
    "all",
    "allow-opts",
    "anchor",
    "antispoof",
    "any",
    "bandwidth",
    "binat-to",
    "bitmask",
    "block",
    "block-policy",
    "burst",
    "code",
    "debug",
    "default",
    "delay",
    "divert-packet",
    "divert-reply",
    "divert-to",
    "drop",
    "dup-to",
    "file",
    "fingerprints",
    "flags",
    "floating",
    "flows",
    "flush",
    "for",
    "fragment",
    "from",
    "global",
    "group",
    "hostid",
    "icmp-type",
    "icmp6-type",
    "if-bound",
    "in",
    "include",
    "inet",
    "inet6",
    "keep",
    "label",
    "least-states",
    "limit",
    "load",
    "log",
    "loginterface",
    "match",
    "matches",
    "max",
    "max-mss",
    "max-pkt-rate",
    "max-src-conn",
    "max-src-conn-rate",
    "max-src-nodes",
    "max-src-states",
    "min",
    "min-ttl",
    "modulate",
    "nat-to",
    "no",
    "no-df",
    "no-route",
    "no-sync",
    "on",
    "once",
    "optimization",
    "os",
    "out",
    "overload",
    "parent",
    "pass",
    "pflow",
    "port",
    "prio",
    "probability",
    "proto",
    "qlimit",
    "quantum",
    "queue",
    "quick",
    "random",
    "random-id",
    "rdomain",
    "rdr-to",
    "reassemble",
    "received-on",
    "reply-to",
    "return",
    "return-icmp",
    "return-icmp6",
    "return-rst",
    "round-robin",
    "route",
    "route-to",
    "rtable",
    "rule",
    "ruleset-optimization",
    "scrub",
    "set",
    "skip",
    "sloppy",
    "source-hash",
    "source-track",
    "state",
    "state-defaults",
    "state-policy",
    "static-port",
    "sticky-address",
    "syncookies",
    "synproxy",
    "table",
    "tag",
    "tagged",
    "timeout",
    "to",
    "tos",
    "ttl",
    "urpf-failed",
    "user",
    "weight",
];

/// Whether `word` is a pf.conf keyword (so that, unquoted, it is not a STRING).
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.binary_search(&word).is_ok()
}

/// A lexer error pfctl reports (`string too long`, `macro 'x' not defined`…), with the rest of
/// the line skipped as pfctl's `findeol` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// pfctl's message.
    pub message: String,
    /// The line pfctl reports.
    pub line: u32,
    /// Where in the text.
    pub span: Span,
}

/// One level of input: the file's text, or a macro's value pushed back into it.
struct Source {
    chars: Vec<char>,
    pos: usize,
    /// For the file: byte offsets of each char; for a macro: the reference's span.
    offsets: Option<Vec<u32>>,
    span: Span,
}

/// What one [`Lexer::raw`] call did, so that [`Lexer::unget`] can undo it exactly (pfctl's
/// `lungetc`): characters given back after a macro's value ran out go back into that value,
/// never into the text before the macro's reference.
enum Read {
    /// A character taken from the top source.
    Char,
    /// An exhausted macro value dropped from the stack on the way to the next character.
    Popped(Source),
}

/// The lexer over one file, expanding macros from `macros` as pfctl does.
pub struct Lexer {
    stack: Vec<Source>,
    /// The reads of the current token, newest last (cleared when a token starts).
    reads: Vec<Read>,
    file_len: u32,
    /// pfctl's `file->lineno`.
    pub line: u32,
    eof_reached: bool,
    /// Errors found while lexing, in order.
    pub errors: Vec<LexError>,
}

impl Lexer {
    /// A lexer over `text` whose first line is `first_line`.
    pub fn new(text: &str, first_line: u32) -> Lexer {
        let mut chars = Vec::with_capacity(text.len());
        let mut offsets = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            chars.push(c);
            offsets.push(i as u32);
        }
        Lexer {
            stack: vec![Source { chars, pos: 0, offsets: Some(offsets), span: Span::default() }],
            reads: Vec::new(),
            file_len: text.len() as u32,
            line: first_line,
            eof_reached: false,
            errors: Vec::new(),
        }
    }

    /// The span of the next character to be read.
    fn here(&self) -> Span {
        for s in self.stack.iter().rev() {
            match &s.offsets {
                Some(o) => {
                    let at = o.get(s.pos).copied().unwrap_or(self.file_len);
                    return Span::new(at, at + 1);
                }
                None if s.pos < s.chars.len() => return s.span,
                None => {}
            }
        }
        Span::empty(self.file_len)
    }

    /// Whether a macro's text is being read (macros are not expanded inside macros).
    fn expanding(&self) -> bool {
        self.stack.len() > 1 && self.stack.last().is_some_and(|s| s.pos < s.chars.len())
    }

    fn raw(&mut self) -> Option<char> {
        loop {
            let top = self.stack.last_mut()?;
            if top.pos < top.chars.len() {
                let c = top.chars[top.pos];
                top.pos += 1;
                self.reads.push(Read::Char);
                return Some(c);
            }
            if self.stack.len() == 1 {
                return None;
            }
            let done = self.stack.pop().expect("more than one level");
            self.reads.push(Read::Popped(done));
        }
    }

    /// Gives back the last character [`Lexer::raw`] returned in this token.
    fn unget(&mut self) {
        while let Some(read) = self.reads.pop() {
            match read {
                Read::Popped(source) => self.stack.push(source),
                Read::Char => {
                    if let Some(top) = self.stack.last_mut() {
                        top.pos -= 1;
                    }
                    return;
                }
            }
        }
    }

    fn peek_raw(&mut self) -> Option<char> {
        let c = self.raw();
        if c.is_some() {
            self.unget();
        }
        c
    }

    /// pfctl's `lgetc(0)`: joins `\`-newline continuations; the first end of file reads as a
    /// newline.
    fn getc(&mut self) -> Option<char> {
        loop {
            let c = self.raw();
            if c == Some('\\') {
                let next = self.raw();
                if next == Some('\n') {
                    self.line += 1;
                    continue;
                }
                if next.is_some() {
                    self.unget();
                }
                return Some('\\');
            }
            if c.is_none() && !self.eof_reached {
                self.eof_reached = true;
                return Some('\n');
            }
            return c;
        }
    }

    fn error(&mut self, message: String, span: Span) {
        self.errors.push(LexError { message, line: self.line, span });
    }

    /// pfctl's `findeol`: skips to the end of the line after an error.
    fn findeol(&mut self) {
        loop {
            match self.getc() {
                Some('\n') => {
                    self.line += 1;
                    break;
                }
                None => break,
                _ => {}
            }
        }
    }

    /// The next token; errors are recorded in [`Lexer::errors`] and the line is skipped, as
    /// pfctl returns its ERROR token (which here reads as a newline so the parser resyncs).
    pub fn next_token(&mut self, macros: &crate::parse::Macros) -> Token {
        'top: loop {
            self.reads.clear();
            let mut c;
            loop {
                c = self.getc();
                if c != Some(' ') && c != Some('\t') {
                    break;
                }
            }
            let line = self.line;
            let start = self.span_before();
            if c == Some('#') {
                loop {
                    c = self.getc();
                    if c == Some('\n') || c.is_none() {
                        break;
                    }
                }
            }
            if c == Some('$') && !self.expanding() {
                let mut name = String::new();
                loop {
                    match self.raw() {
                        None => return self.token(Tok::Eof, line, start),
                        Some(ch) if ch.is_ascii_alphanumeric() || ch == '_' => {
                            name.push(ch);
                            if name.len() >= MAX_TOKEN {
                                let sp = self.cover(start);
                                self.error("string too long".into(), sp);
                                self.findeol();
                                return self.token(Tok::Error, line, start);
                            }
                        }
                        Some(_) => {
                            self.unget();
                            break;
                        }
                    }
                }
                let span = self.cover(start);
                match macros.get(&name) {
                    Some(val) => {
                        self.stack.push(Source {
                            chars: val.chars().collect(),
                            pos: 0,
                            offsets: None,
                            span,
                        });
                        continue 'top;
                    }
                    None => {
                        self.error(format!("macro '{name}' not defined"), span);
                        self.findeol();
                        return self.token(Tok::Error, line, start);
                    }
                }
            }
            let Some(ch) = c else {
                return self.token(Tok::Eof, line, start);
            };
            match ch {
                '\'' | '"' => {
                    let quote = ch;
                    let mut s = String::new();
                    loop {
                        let Some(mut c) = self.raw() else {
                            let sp = self.cover(start);
                            self.error(
                                "reached end of file while parsing quoted string".into(),
                                sp,
                            );
                            return self.token(Tok::Eof, line, start);
                        };
                        if c == '\n' {
                            self.line += 1;
                            continue;
                        } else if c == '\\' {
                            match self.raw() {
                                None => return self.token(Tok::Eof, line, start),
                                Some(n) if n == quote || n == ' ' || n == '\t' => c = n,
                                Some('\n') => {
                                    self.line += 1;
                                    continue;
                                }
                                Some(_) => self.unget(),
                            }
                        } else if c == quote {
                            break;
                        } else if c == '\0' {
                            let sp = self.cover(start);
                            self.error("syntax error".into(), sp);
                            self.findeol();
                            return self.token(Tok::Error, line, start);
                        }
                        if s.len() + 1 >= MAX_TOKEN - 1 {
                            let sp = self.cover(start);
                            self.error("string too long".into(), sp);
                            self.findeol();
                            return self.token(Tok::Error, line, start);
                        }
                        s.push(c);
                    }
                    return self.token(Tok::Quoted(s), line, start);
                }
                '!' if self.peek_raw() == Some('=') => {
                    self.raw();
                    return self.token(Tok::Ne, line, start);
                }
                '<' => match self.peek_raw() {
                    Some('>') => {
                        self.raw();
                        return self.token(Tok::Xrg, line, start);
                    }
                    Some('=') => {
                        self.raw();
                        return self.token(Tok::Le, line, start);
                    }
                    _ => {}
                },
                '>' => match self.peek_raw() {
                    Some('<') => {
                        self.raw();
                        return self.token(Tok::Irg, line, start);
                    }
                    Some('=') => {
                        self.raw();
                        return self.token(Tok::Ge, line, start);
                    }
                    _ => {}
                },
                _ => {}
            }
            if ch == '-' || ch.is_ascii_digit() {
                let mut buf = String::new();
                buf.push(ch);
                let mut taken = 0usize;
                let mut next;
                loop {
                    next = self.raw();
                    match next {
                        Some(d) if d.is_ascii_digit() => {
                            buf.push(d);
                            taken += 1;
                            if buf.len() >= MAX_TOKEN {
                                let sp = self.cover(start);
                                self.error("string too long".into(), sp);
                                self.findeol();
                                return self.token(Tok::Error, line, start);
                            }
                        }
                        _ => break,
                    }
                }
                if next.is_some() {
                    self.unget();
                }
                let ends = match next {
                    None => true,
                    Some(x) => x.is_ascii_whitespace() || matches!(x, ')' | ',' | '/' | '}' | '='),
                };
                if buf != "-" && ends {
                    return match buf.parse::<i64>() {
                        Ok(n) => self.token(Tok::Number(n), line, start),
                        Err(_) => {
                            let why = if buf.starts_with('-') { "too small" } else { "too large" };
                            let sp = self.cover(start);
                            self.error(format!("\"{buf}\" invalid number: {why}"), sp);
                            self.findeol();
                            self.token(Tok::Error, line, start)
                        }
                    };
                }
                // Not a number: give the digits back and read a word (or a lone '-').
                for _ in 0..taken {
                    self.unget();
                }
                if ch == '-' {
                    return self.token(Tok::Punct('-'), line, start);
                }
            }
            if ch.is_ascii_alphanumeric() || ch == ':' || ch == '_' {
                let mut buf = String::new();
                buf.push(ch);
                loop {
                    match self.raw() {
                        Some(x) if allowed_in_string(x) => {
                            buf.push(x);
                            if buf.len() >= MAX_TOKEN {
                                let sp = self.cover(start);
                                self.error("string too long".into(), sp);
                                self.findeol();
                                return self.token(Tok::Error, line, start);
                            }
                        }
                        Some(_) => {
                            self.unget();
                            break;
                        }
                        None => break,
                    }
                }
                return self.token(Tok::Word(buf), line, start);
            }
            if ch == '\n' {
                let t = self.token(Tok::Newline, line, start);
                self.line += 1;
                return t;
            }
            return self.token(Tok::Punct(ch), line, start);
        }
    }

    /// The span where the token that starts with the last character read began.
    fn span_before(&self) -> Span {
        for s in self.stack.iter().rev() {
            match &s.offsets {
                Some(o) => {
                    let at = if s.pos == 0 {
                        0
                    } else {
                        o.get(s.pos - 1).copied().unwrap_or(self.file_len)
                    };
                    return Span::new(at, at + 1);
                }
                None if s.pos > 0 => return s.span,
                None => {}
            }
        }
        Span::empty(self.file_len)
    }

    fn cover(&self, start: Span) -> Span {
        if self.stack.len() > 1 && self.stack.last().is_some_and(|s| s.offsets.is_none()) {
            return start;
        }
        let here = self.here();
        if here.start > start.start { Span::new(start.start, here.start) } else { start }
    }

    fn token(&self, tok: Tok, line: u32, start: Span) -> Token {
        let span = match tok {
            Tok::Newline | Tok::Eof | Tok::Error => Span::new(start.start, start.start),
            _ => self.cover(start),
        };
        Token { tok, line, span }
    }
}

/// pfctl's `allowed_in_string`: letters, digits and punctuation except the grammar's own.
fn allowed_in_string(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || (c.is_ascii_punctuation()
            && !matches!(c, '(' | ')' | '{' | '}' | '<' | '>' | '!' | '=' | '/' | '#' | ','))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        let macros = crate::parse::Macros::default();
        let mut l = Lexer::new(text, 1);
        let mut out = Vec::new();
        loop {
            let t = l.next_token(&macros);
            if t.tok == Tok::Eof {
                break;
            }
            out.push(t.tok);
        }
        out
    }

    #[test]
    fn numbers_and_words_split_as_pfctl() {
        assert_eq!(
            toks("10/8 10.1/8 0x10 1024:2048"),
            vec![
                Tok::Number(10),
                Tok::Punct('/'),
                Tok::Number(8),
                Tok::Word("10.1".into()),
                Tok::Punct('/'),
                Tok::Number(8),
                Tok::Word("0x10".into()),
                Tok::Word("1024:2048".into()),
                Tok::Newline
            ]
        );
    }

    #[test]
    fn keywords_are_sorted_for_binary_search() {
        let mut sorted = KEYWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, KEYWORDS);
    }
}
