//! `sift pfctl`, `sift pf check` and `sift pf run`: OpenBSD pf rule sets, read as `pfctl`
//! reads them, and replayed against captures through sift-firewall's state table.
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

/// `sift pf …`: a subcommand, or without one the options of `run` (`sift pf -f RULES -r
/// CAPTURE`, as issue 24 spells it).
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PfArgs {
    /// What to do.
    #[command(subcommand)]
    command: Option<PfCommand>,
    /// `run`'s options, when no subcommand is given.
    #[command(flatten)]
    run: Option<RunArgs>,
}

/// `sift pf …`
#[derive(Debug, clap::Subcommand)]
pub enum PfCommand {
    /// Check a rule set; mistakes are shown with the line and a caret under the token.
    Check(CheckArgs),
    /// Replay a capture through a rule set and its state table: pf's verdict per packet; or
    /// with --between IF1 IF2, pf live between two interfaces over AF_XDP (needs root).
    Run(RunArgs),
    /// pf live between two interfaces, as an OpenBSD bridge filters (needs root).
    Bridge(crate::pf_bridge::BridgeArgs),
    /// Load a rule set into the kernel on an interface, as eBPF at XDP or TC with its state
    /// in maps (needs root); loading again replaces it and keeps the states.
    Load(crate::pf_kernel::LoadArgs),
    /// The rule set in the kernel on an interface: rules with counters (`pfctl -vsr`),
    /// states (`pfctl -ss`), counters (`-s info`, `pfctl -si`).
    Show(crate::pf_kernel::ShowArgs),
    /// Remove pf from an interface, or with `--states` only its states.
    Flush(crate::pf_kernel::FlushArgs),
}

/// `sift pf run`
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The rule set.
    #[arg(short = 'f', value_name = "RULES")]
    rules: String,
    /// The capture to replay (pcap or pcapng), in file order.
    #[arg(short = 'r', value_name = "CAPTURE", required_unless_present = "between")]
    capture: Option<String>,
    /// Write the packets that pass to this capture, as pf sends them on (normalized,
    /// translated, modulated, scrubbed), with the answers `block return` sends.
    #[arg(short = 'w', value_name = "PASSED")]
    passed: Option<String>,
    /// Write the packets that are blocked to this capture.
    #[arg(long = "blocked", value_name = "BLOCKED")]
    blocked: Option<String>,
    /// Write pflog records (link type PFLOG) of the packets rules with `log` log.
    #[arg(long = "log", value_name = "PFLOG")]
    log: Option<String>,
    /// Print each packet's verdict: `N pass|block @R|state|@-1 REASON`.
    #[arg(long)]
    verdicts: bool,
    /// Print the state table at the end, as `pfctl -ss`.
    #[arg(long)]
    states: bool,
    /// Judge every packet as arriving on this interface (default: the capture's interface, in
    /// the direction its pcapng flags record, or without them inbound, except that a packet
    /// answering a state goes out).
    #[arg(long = "in", value_name = "IFACE", conflicts_with = "out_if")]
    in_if: Option<String>,
    /// Judge every packet as leaving by this interface.
    #[arg(long = "out", value_name = "IFACE")]
    out_if: Option<String>,
    /// Define a macro.
    #[arg(short = 'D', value_name = "MACRO=VALUE")]
    define: Vec<String>,
    /// Resolve names on this host: `system` (default) or `openbsd`.
    #[arg(long = "host", value_name = "HOST", default_value = "system")]
    host: String,
    /// Run pf live between two interfaces over AF_XDP instead of replaying a capture (needs
    /// root; `sift::pf_between`).
    #[arg(
        long,
        num_args = 2,
        value_names = ["IF1", "IF2"],
        conflicts_with_all = ["capture", "passed", "blocked", "log", "states", "in_if", "out_if"]
    )]
    between: Option<Vec<String>>,
    /// With --between: stop after COUNT frames (both ways together).
    #[arg(short = 'c', value_name = "COUNT")]
    count: Option<u64>,
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

pub(crate) fn host(name: &str) -> anyhow::Result<Box<dyn Host>> {
    match name {
        "system" => Ok(Box::new(SystemHost::load())),
        "openbsd" => Ok(Box::new(FixtureHost::openbsd("."))),
        other => bail!("unknown host {other:?} (system or openbsd)"),
    }
}

pub(crate) fn defines(list: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    list.iter()
        .map(|d| match d.rsplit_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => bail!("could not parse macro definition {d}"),
        })
        .collect()
}

/// Reads `file` (`-`: standard input, named `stdin` in messages as pfctl names it).
pub(crate) fn read(file: &str) -> std::io::Result<(String, String)> {
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

/// A capture being written.
type Out = sift_pcap::PcapWriter<std::io::BufWriter<std::fs::File>>;

fn create(path: &str, link: sift_pcap::LinkType) -> anyhow::Result<Out> {
    let f = std::fs::File::create(path).with_context(|| format!("cannot create {path}"))?;
    Ok(sift_pcap::PcapWriter::new(
        std::io::BufWriter::new(f),
        link,
        0,
        262_144,
        sift_pcap::Precision::Micro,
    )?)
}

/// The firewall of rule set `rules` as `sift pf run` and `sift pf bridge` load it (names from
/// `host`, macros from `defines`; `set` options and limits applied); `None` when the rule set
/// has mistakes (printed, located, on standard error).
pub(crate) fn load_firewall(
    rules: &str,
    host_name: &str,
    define: &[String],
) -> anyhow::Result<Option<sift_firewall::Firewall>> {
    let (name, text) = read(rules).with_context(|| format!("cannot read {rules}"))?;
    load_firewall_text(&name, &text, host(host_name)?.as_ref(), define)
}

/// [`load_firewall`] of a rule set already read (`name` for its messages).
pub(crate) fn load_firewall_text(
    name: &str,
    text: &str,
    host: &dyn Host,
    define: &[String],
) -> anyhow::Result<Option<sift_firewall::Firewall>> {
    let opts = Options { verbose: true, defines: defines(define)?, ..Options::default() };
    let out = pfctl(name, text, &opts, host);
    if out.status != 0 {
        eprint(format_args!("{}", out.render_errors()));
        return Ok(None);
    }
    let mut fw = sift_firewall::Firewall::new(&out.ruleset, host)?;
    fw.set_settings(sift_firewall::Settings::from_pfctl_verbose(&out.stdout)?);
    fw.check_limits()?;
    Ok(Some(fw))
}

/// `sift pf run`
fn replay(args: RunArgs) -> anyhow::Result<ExitCode> {
    use sift_firewall::frame::{self, Frame};
    use sift_firewall::packet::{Direction, Meta};
    use sift_firewall::{Verdict, pflog};

    if let Some(ifs) = &args.between {
        let o = crate::pf_run::RunOptions {
            rules: &args.rules,
            host: &args.host,
            define: &args.define,
            verdicts: args.verdicts,
        };
        return crate::pf_run::run(&o, ifs, args.count);
    }
    if args.count.is_some() {
        bail!("sift pf run: -c COUNT goes with --between IF1 IF2 (a capture is replayed whole)");
    }
    let Some(capture) = args.capture.as_deref() else {
        bail!("sift pf run: give -r CAPTURE or --between IF1 IF2");
    };
    let Some(mut fw) = load_firewall(&args.rules, &args.host, &args.define)? else {
        return Ok(ExitCode::FAILURE);
    };
    let mut reader = sift_pcap::open(std::path::Path::new(capture))
        .with_context(|| format!("cannot read {capture}"))?;
    let mut passed = None;
    let mut blocked = None;
    let mut log = match &args.log {
        Some(p) => Some(create(p, sift_pcap::LinkType::PFLOG)?),
        None => None,
    };
    let mut text_out = String::new();
    let (mut n, mut npass, mut nblock, mut nstate, mut nother) = (0u64, 0u64, 0u64, 0u64, 0u64);
    while let Some((pkt, ifaces, flags)) = reader.next_with_flags()? {
        n += 1;
        let link = pkt.link_type;
        if let Some(p) = &args.passed
            && passed.is_none()
        {
            passed = Some(create(p, link)?);
        }
        if let Some(p) = &args.blocked
            && blocked.is_none()
        {
            blocked = Some(create(p, link)?);
        }
        let cap_if = ifaces
            .get(pkt.interface as usize)
            .and_then(|i| i.name.clone())
            .unwrap_or_else(|| format!("if{}", pkt.interface));
        // `--in`/`--out` decide; then the capture's own word (pcapng `epb_flags`); without
        // either, in, unless the packet answers a state (then out).
        let recorded = flags.and_then(sift_pcap::PacketFlags::direction).map(|d| match d {
            sift_pcap::Direction::Inbound => Direction::In,
            sift_pcap::Direction::Outbound => Direction::Out,
        });
        let (ifname, dir) = match (&args.in_if, &args.out_if) {
            (Some(i), _) => (i.clone(), Direction::In),
            (_, Some(o)) => (o.clone(), Direction::Out),
            _ => (cap_if, recorded.unwrap_or(Direction::In)),
        };
        let infer = args.in_if.is_none() && args.out_if.is_none() && recorded.is_none();
        // The frames that leave in the packet's place (`None`: the frame as it came), and the
        // packets pf makes: answers back toward the sender, packets ahead (synproxy).
        let mut leaving: Option<Vec<Vec<u8>>> = None;
        let mut made: Vec<Vec<u8>> = Vec::new();
        let (pass, line) = match frame::ip_of(link.number(), pkt.data) {
            Frame::Other => {
                nother += 1;
                (true, format!("{n} pass not-ip\n"))
            }
            Frame::Ip { ip, vlan } => {
                let ifname = frame::interface(&ifname, vlan);
                let parsed = sift_firewall::Packet::parse(ip);
                let now = pkt.timestamp.secs;
                let dir = match &parsed {
                    Ok(p) if infer => fw.infer_direction(p, &ifname, 0, now),
                    _ => dir,
                };
                let mut meta = Meta::new(&ifname, dir);
                meta.now = now;
                // pf's whole path (reassembly, normalization, state or rules, rewriting): what
                // leaves is what pf sends on, each packet behind the frame's link header.
                let at = ip.as_ptr() as usize - pkt.data.as_ptr() as usize;
                let header = &pkt.data[..at];
                let processed = fw.process(ip, &meta);
                let d = processed.decision;
                if !(processed.out.len() == 1 && processed.out[0] == ip) {
                    let frames = processed.out.iter().map(|o| [header, o].concat()).collect();
                    leaving = Some(frames);
                }
                if let Some(r) = &d.reply {
                    made.push(frame::answer_frame(link.number(), header, r));
                }
                if let Some(a) = &d.ahead {
                    made.push([header, a].concat());
                }
                let by = if d.from_state {
                    nstate += 1;
                    "state".to_string()
                } else {
                    d.rule.map_or("@-1".into(), |r| format!("@{}", r.nr))
                };
                if let (Some(w), Ok(p)) = (log.as_mut(), &parsed)
                    && pflog::logs(&d)
                {
                    let path = d.rule.map_or("", |r| fw.ruleset_path(r.ruleset));
                    let rec = pflog::record(&d, p, &meta, path, d.anchor.map(|a| a.nr));
                    w.write(pkt.timestamp, rec.len() as u32, &rec)?;
                }
                let pass = d.action == Verdict::Pass;
                let v = if pass { "pass" } else { "block" };
                let held = if d.held { " held" } else { "" };
                (pass, format!("{n} {v} {by} {}{held}\n", d.reason.name()))
            }
        };
        if pass {
            npass += 1;
        } else {
            nblock += 1;
        }
        match (pass, &leaving) {
            (true, Some(frames)) => {
                if let Some(w) = passed.as_mut() {
                    for f in frames {
                        w.write(pkt.timestamp, f.len() as u32, f)?;
                    }
                }
            }
            (true, None) => {
                if let Some(w) = passed.as_mut() {
                    w.write(pkt.timestamp, pkt.wire_len, pkt.data)?;
                }
            }
            (false, _) => {
                if let Some(w) = blocked.as_mut() {
                    w.write(pkt.timestamp, pkt.wire_len, pkt.data)?;
                }
            }
        }
        // pf's own packets go out at the same time, among the packets pf sends.
        if let Some(w) = passed.as_mut() {
            for f in &made {
                w.write(pkt.timestamp, f.len() as u32, f)?;
            }
        }
        if args.verdicts {
            text_out.push_str(&line);
            if text_out.len() > 1 << 16 {
                print(std::mem::take(&mut text_out))?;
            }
        }
    }
    if args.states {
        for (_, s) in fw.states().iter() {
            text_out.push_str(&s.pfctl_line());
            text_out.push('\n');
        }
    }
    print(text_out)?;
    for w in [passed, blocked, log].into_iter().flatten() {
        w.finish()?;
    }
    eprint(format_args!(
        "{n} packets: {npass} passed ({nstate} by state, {nother} not IP), {nblock} blocked; {} states \
         ({} bytes each)\n",
        fw.states().len(),
        sift_firewall::StateTable::STATE_BYTES
    ));
    Ok(ExitCode::SUCCESS)
}

/// `sift pf …`
/// Runs `sift pf …`.
pub fn run_args(args: PfArgs) -> anyhow::Result<ExitCode> {
    match (args.command, args.run) {
        (Some(cmd), _) => run(cmd),
        (None, Some(r)) => replay(r),
        (None, None) => {
            anyhow::bail!("sift pf: give -f RULES -r CAPTURE, or a subcommand (run, check)")
        }
    }
}

fn run(cmd: PfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PfCommand::Run(args) => replay(args),
        PfCommand::Bridge(args) => crate::pf_bridge::run(args),
        PfCommand::Load(args) => crate::pf_kernel::load(args),
        PfCommand::Show(args) => crate::pf_kernel::show(args),
        PfCommand::Flush(args) => crate::pf_kernel::flush(args),
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
