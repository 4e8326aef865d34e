//! The pcap-filter language (`tcpdump 'tcp port 80'`): lexer, parser, syntax tree, name
//! resolution and the checks libpcap makes at parse time.
//!
//! Why a crate of its own: every engine sift grows (classic BPF, eBPF, the 1987 CSPF stack
//! machine, a pf-style firewall) starts from the same filter text. This crate turns the text
//! into a spanned [`ast::Expr`] and nothing more; code generation lives in `sift-compile`.
//!
//! Design choices:
//! * **A hand-written lexer** ([`lexer`]): pcap tokens depend on context (`1.2.3` is an address,
//!   `len-1` is a name, `012345670123` is a MAC address), so the scanner reproduces libpcap's
//!   flex rules, longest match first and rule order on ties.
//! * **Recursive descent that mirrors libpcap's grammar**, including its quirks, each verified
//!   against `tcpdump -d` and pinned by tests: `and`/`or` have equal precedence and associate
//!   left; `%` and `^` have no precedence, so they take everything to their right
//!   (`a*b%c+d` = `a*(b%(c+d))`); a bare id after `and`/`or`/`not`/`(` inherits the last
//!   qualifiers (`host a or b`), cleared by relations and abbreviations.
//! * **Never a stack overflow:** `and`/`or` runs are parsed in a loop into a flat
//!   [`ast::ExprKind::Chain`]; nesting (parentheses, `not`, unary minus, arithmetic) is capped
//!   at [`MAX_DEPTH`] with the error "expression nested too deeply (limit 256)".
//! * **Errors are data** ([`ParseError`]: a noun-first kind, a span, an optional auxiliary span),
//!   rendered by `sift-diag`. [`ParseError::message`] is sift's wording (backticks, "expected …,
//!   found …" for syntax errors, "port 70000 is out of range (0–65535)");
//!   [`ParseError::libpcap_message`] gives libpcap's exact wording, for the corpus tests that
//!   compare with libpcap.
//! * **Name resolution is behind a trait** ([`Resolver`]). [`parse`] never looks a name up;
//!   [`parse_with`] also checks every name against a resolver, as libpcap would at compile time.
//!   The AST keeps the names as written; the code generator resolves them with the same
//!   resolver. [`SystemResolver`] reads `/etc` files and never asks DNS; [`TableResolver`] is
//!   hermetic for tests.
//!
//! What this crate checks, and what it leaves to the code generator:
//! * **Here** (no link type needed): lexical errors, the grammar, qualifier combinations
//!   (`'tcp' is not a valid qualifier for 'net <IPv4 prefix>'`, `'port' qualifier applied to
//!   IPv4 address`…), value ranges ("VLAN tag 4096 greater than maximum 4095"), address
//!   validity, network bits, literal division/modulus by zero and shifts over 31, accessor sizes,
//!   802.11/LLC/pflog names, and with a resolver every name. The libpcap corpus test pins this
//!   set: every `reject` case with such an error gets libpcap's message.
//! * **Codegen** (`sift-compile`): everything that depends on the link type or on earlier
//!   primitives — "'x' not supported on DLT_…", "… is valid for 802.11 syntax only",
//!   "'gateway' cannot be used within MPLS", "not a live capture", `link proto` limits
//!   (EtherType / PPP / HDLC / LLC DSAP), "netmask not known", "expression rejects all packets",
//!   and the meaning of short addresses (`host 10`, `net 10.1`).
//!
//! ```
//! let src = "tcp port 70000";
//! let err = sift_filter::parse(src).unwrap_err();
//! assert_eq!(err.libpcap_message(), "port number 70000 greater than maximum 65535");
//! assert_eq!(
//!     err.render(src),
//!     "error: port 70000 is out of range (0–65535)\n  tcp port 70000\n           ^^^^^\n"
//! );
//! ```
#![forbid(unsafe_code)]

pub mod ast;
mod error;
pub mod lexer;
mod parser;
mod print;
mod resolve;
pub mod semantic;

pub use error::{ParseError, ParseErrorKind};
pub use lexer::{JoinedArgs, strip_comments};
pub use parser::MAX_DEPTH;
pub use resolve::{Layered, Resolver, Service, SystemResolver, TableResolver, check_names};

/// Parses a filter expression. Names are kept as written and not looked up.
///
/// An empty filter (only blanks) is valid, as in libpcap, and matches every packet: it
/// parses to `None`.
///
/// ```
/// let e = sift_filter::parse("tcp dst port ftp or ftp-data").unwrap().unwrap();
/// assert_eq!(e.to_string(), "tcp dst port ftp or tcp dst port ftp-data");
/// assert!(sift_filter::parse("  ").unwrap().is_none());
/// ```
pub fn parse(src: &str) -> Result<Option<ast::Expr>, ParseError> {
    parser::Parser::new(src)?.parse()
}

/// Parses a filter expression and checks every name against `resolver` ("unknown host 'x'",
/// "unknown port 'x'"…).
pub fn parse_with(src: &str, resolver: &dyn Resolver) -> Result<Option<ast::Expr>, ParseError> {
    let e = parse(src)?;
    if let Some(e) = &e {
        check_names(e, resolver)?;
    }
    Ok(e)
}
