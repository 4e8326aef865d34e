//! OpenBSD pf's rule language, read exactly as `pfctl` reads it.
//!
//! Why this crate: sift runs pf rule sets (offline against captures, in user space, in the
//! kernel through eBPF), and everything starts with reading `pf.conf` as pfctl does — the same
//! rules accepted, the same canonical form printed by `pfctl -nv`, the same messages for the
//! same mistakes. OpenBSD's own regression data (`../shared/corpus/pf/pfctl`) is the test.
//!
//! The pipeline: [`lex`] (pfctl's lexer, macros expanded while lexing) → [`parse`](mod@parse) and
//! `parse_rule` (parse.y's productions and checks) → `expand` (one [`ast::Rule`] per list
//! combination) → [`print`](mod@print) (pfctl's printer). Everything the machine would be asked
//! (interfaces, services, users, files) goes through [`host::Host`].
//!
//! ```
//! use sift_pf::{Options, host::FixtureHost, pfctl};
//! let host = FixtureHost::openbsd(".");
//! let opts = Options { verbose: true, ..Options::default() };
//! let out = pfctl("stdin", "pass in proto tcp to port ssh\n", &opts, &host);
//! assert_eq!(out.stdout, "pass in proto tcp from any to any port = 22 flags S/SA\n");
//! assert_eq!(out.status, 0);
//! ```
#![forbid(unsafe_code)]

pub mod addr;
pub mod ast;
pub mod error;
mod expand;
pub mod host;
pub mod icmp;
pub mod lex;
mod md5;
mod options;
pub mod parse;
mod parse_rule;
pub mod print;
mod rule_action;
mod rule_opts;

pub use ast::Ruleset;
pub use error::PfError;
pub use parse::Options;

use error::Prefix;
use host::Host;

/// What `pfctl -o none -n[v] -f FILE` does with a rule set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PfctlOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status.
    pub status: i32,
    /// The errors and warnings, with spans.
    pub errors: Vec<PfError>,
    /// The texts of the files read (name, text), for rendering errors.
    pub sources: Vec<(String, String)>,
    /// The rule set (complete only when `status` is 0).
    pub ruleset: Ruleset,
}

impl PfctlOutput {
    /// sift's rendering of every error: file, line and column, the line, a caret under the
    /// offending token and what was expected.
    pub fn render_errors(&self) -> String {
        let mut out = String::new();
        for e in &self.errors {
            match e.prefix {
                Prefix::Located => {
                    let text = self.sources.get(e.src_index).map_or("", |s| s.1.as_str());
                    out.push_str(&e.render(text));
                }
                _ => {
                    out.push_str(&e.pfctl_line());
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// Reads `text` (named `name`; `stdin` for standard input) as `pfctl -o none -n` does, with
/// `-v` when `opts.verbose`; returns what pfctl prints and its exit status.
pub fn pfctl(name: &str, text: &str, opts: &Options, host: &dyn Host) -> PfctlOutput {
    let mut p = parse::Parser::new(name, text, host, opts);
    let mut fatal = !p.parse_all(false);
    if !p.failed && !fatal {
        // `load anchor … from` files, in order (a loaded file may load more).
        let verbose = p.verbose;
        let mut i = 0;
        while i < p.loads.len() && !fatal {
            let (path, file) = p.loads[i].clone();
            i += 1;
            match host.read_file(&file) {
                Ok(t) => {
                    let idx = p.anchor_index(&path);
                    p.verbose = false;
                    p.push_text(&file, &t, idx);
                    fatal = !p.parse_all(false);
                    p.pop_text();
                    p.verbose = verbose;
                }
                Err(e) => {
                    p.errors.push(PfError {
                        file: file.clone(),
                        src_index: 0,
                        line: 0,
                        message: format!("{file}: {}", parse::io_reason(&e)),
                        span: sift_diag::Span::default(),
                        expected: None,
                        prefix: Prefix::Program,
                    });
                    p.failed = true;
                }
            }
        }
    }
    if !p.failed && !fatal {
        check_queues(&mut p);
    }
    let mut stdout = std::mem::take(&mut p.stdout);
    let failed = p.failed || fatal;
    if !failed && opts.verbose {
        for q in &p.ruleset.queues {
            stdout.push_str(&print::queue(q));
        }
        print::ruleset(&p.ruleset, 0, 0, host, &mut stdout);
        // A loaded anchor no rule calls prints on its own, after the main rule set (pfctl
        // loads and prints it as a rule set of its own).
        let called: Vec<usize> = p
            .ruleset
            .anchors
            .iter()
            .flat_map(|a| a.rules.iter().filter_map(|r| r.anchor.as_ref().map(|c| c.ruleset)))
            .collect();
        for (path, _) in &p.loads {
            if let Some(i) = p.ruleset.anchors.iter().position(|a| &a.path == path)
                && !called.contains(&i)
            {
                print::ruleset(&p.ruleset, i, 0, host, &mut stdout);
            }
        }
    }
    let mut stderr = String::new();
    for e in &p.errors {
        stderr.push_str(&e.pfctl_line());
        stderr.push('\n');
    }
    PfctlOutput {
        stdout,
        stderr,
        status: i32::from(failed),
        errors: std::mem::take(&mut p.errors),
        sources: std::mem::take(&mut p.sources),
        ruleset: std::mem::take(&mut p.ruleset),
    }
}

/// The checks pfctl makes on queues once the rule set is read.
fn check_queues(p: &mut parse::Parser) {
    let queues = p.ruleset.queues.clone();
    if queues.is_empty() {
        return;
    }
    let fail = |p: &mut parse::Parser, m: String| {
        p.errors.push(PfError {
            file: String::new(),
            src_index: 0,
            line: 0,
            message: m,
            span: sift_diag::Span::default(),
            expected: None,
            prefix: Prefix::Program,
        });
        p.failed = true;
    };
    for q in &queues {
        let leaf = !queues.iter().any(|c| c.parent.as_deref() == Some(q.name.as_str()));
        if !leaf && q.default {
            fail(p, format!("default queue {} is not a leaf queue", q.name));
            return;
        }
        if !leaf && q.flows != 0 {
            fail(p, format!("flow queue {} is not a leaf queue", q.name));
            return;
        }
        if q.parent.is_some() && q.bandwidth[0].0 == 0 {
            fail(p, format!("queue {}: no bandwidth was specified", q.name));
            return;
        }
    }
    // A lone flow queue needs no default; a hierarchy does.
    let hierarchy = queues.iter().any(|q| q.parent.is_some());
    if hierarchy && !queues.iter().any(|q| q.default) {
        fail(p, "no default queue specified".into());
    }
}

/// Reads a rule set; the rules, or every error (pfctl's messages with spans).
pub fn parse(
    name: &str,
    text: &str,
    opts: &Options,
    host: &dyn Host,
) -> Result<Ruleset, Vec<PfError>> {
    let out = pfctl(name, text, opts, host);
    if out.status == 0 { Ok(out.ruleset) } else { Err(out.errors) }
}
