//! `sift pfctl` and `sift pf check`: OpenBSD pf rule sets, read as `pfctl` reads them.
//!
//! `sift pfctl -nvf FILE` prints what `pfctl -o none -nv -f FILE` prints, with pfctl's messages
//! and exit status (sift never loads rules into a kernel, so `-n` is required). `sift pf check`
//! reports every mistake with sift's rendering: the line, a caret under the token, and what was
//! expected. Both read the machine's services, protocols, users and interfaces, or with
//! `--host openbsd` the OpenBSD host of pfctl's regression tests (for output that does not
//! depend on the machine).

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, bail};
use sift_pf::host::{FixtureHost, Host, SystemHost};
use sift_pf::{Options, pfctl};

use crate::console::{eprint, print};

/// `sift pfctl`: pfctl's options for reading a rule set.
#[derive(Debug, clap::Args)]
pub struct PfctlArgs {
    /// Do not load the rules (required: sift only reads rule sets).
    #[arg(short = 'n')]
    noaction: bool,
    /// Print the rule set as parsed, in pfctl's canonical form.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
    /// The rule set to read (`-` for standard input).
    #[arg(short = 'f', value_name = "FILE")]
    file: Option<String>,
    /// Define a macro, as if `MACRO = "VALUE"` came first (the file cannot redefine it).
    #[arg(short = 'D', value_name = "MACRO=VALUE")]
    define: Vec<String>,
    /// Load the rules into this anchor.
    #[arg(short = 'a', value_name = "ANCHOR")]
    anchor: Option<String>,
    /// Ruleset optimization: only `none` (pfctl's optimizer is not implemented).
    #[arg(short = 'o', value_name = "LEVEL")]
    optimize: Option<String>,
    /// Resolve names on this host: `system` (default) or `openbsd` (the regression fixture).
    #[arg(long = "host", value_name = "HOST", default_value = "system")]
    host: String,
}

/// `sift pf …`
#[derive(Debug, clap::Subcommand)]
pub enum PfCommand {
    /// Check a rule set; mistakes are shown with the line and a caret under the token.
    Check(CheckArgs),
}

/// `sift pf check`
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The rule set (`-` for standard input).
    #[arg(value_name = "FILE")]
    file: String,
    /// Define a macro.
    #[arg(short = 'D', value_name = "MACRO=VALUE")]
    define: Vec<String>,
    /// Resolve names on this host: `system` (default) or `openbsd`.
    #[arg(long = "host", value_name = "HOST", default_value = "system")]
    host: String,
}

fn host(name: &str) -> anyhow::Result<Box<dyn Host>> {
    match name {
        "system" => Ok(Box::new(SystemHost::load())),
        "openbsd" => Ok(Box::new(FixtureHost::openbsd("."))),
        other => bail!("unknown host {other:?} (system or openbsd)"),
    }
}

fn defines(list: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    list.iter()
        .map(|d| match d.rsplit_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => bail!("could not parse macro definition {d}"),
        })
        .collect()
}

/// Reads `file` (`-`: standard input, named `stdin` in messages as pfctl names it).
fn read(file: &str) -> std::io::Result<(String, String)> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        return Ok(("stdin".into(), s));
    }
    let bytes = std::fs::read(file)?;
    Ok((file.to_string(), String::from_utf8_lossy(&bytes).into_owned()))
}

fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

/// `sift pfctl`
pub fn run_pfctl(args: PfctlArgs) -> anyhow::Result<ExitCode> {
    if !args.noaction {
        bail!("sift pfctl only reads rule sets: use -n (as in `sift pfctl -nvf pf.conf`)");
    }
    if let Some(o) = args.optimize.as_deref()
        && o != "none"
    {
        bail!("-o {o}: only -o none is supported (pfctl's ruleset optimizer is not implemented)");
    }
    let Some(file) = args.file.as_deref() else {
        bail!("no rule set given: use -f FILE (or -f - for standard input)");
    };
    let opts = Options {
        verbose: args.verbose > 0,
        anchor: args.anchor.clone(),
        defines: match defines(&args.define) {
            Ok(d) => d,
            Err(e) => {
                eprint(format_args!("pfctl: {e}\n"));
                return Ok(ExitCode::FAILURE);
            }
        },
    };
    let (name, text) = match read(file) {
        Ok(x) => x,
        Err(e) => {
            eprint(format_args!("pfctl: cannot open the main config file!: {}\n", reason(&e)));
            return Ok(ExitCode::FAILURE);
        }
    };
    let host = host(&args.host)?;
    let out = pfctl(&name, &text, &opts, host.as_ref());
    eprint(format_args!("{}", out.stderr));
    print(&out.stdout)?;
    Ok(if out.status == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `sift pf …`
pub fn run(cmd: PfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PfCommand::Check(args) => {
            let (name, text) =
                read(&args.file).with_context(|| format!("cannot read {}", args.file))?;
            let host = host(&args.host)?;
            let opts = Options { defines: defines(&args.define)?, ..Options::default() };
            let out = pfctl(&name, &text, &opts, host.as_ref());
            if out.status != 0 {
                eprint(format_args!("{}", out.render_errors()));
                return Ok(ExitCode::FAILURE);
            }
            let rules: usize = out.ruleset.anchors.iter().map(|a| a.rules.len()).sum();
            print(format!(
                "{name}: {rules} rule{}, {} table{}\n",
                if rules == 1 { "" } else { "s" },
                out.ruleset.tables.len(),
                if out.ruleset.tables.len() == 1 { "" } else { "s" }
            ))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
