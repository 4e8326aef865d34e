//! `sift pf load|show|flush`: a pf rule set running in the Linux kernel on an interface, as
//! eBPF with its state in maps (`sift-firewall-ebpf`).
//!
//! `load` classifies the rule set for the interface, loads pf's program with the rule set in
//! its maps and attaches it: packets arriving at XDP (or TC ingress) and leaving at TC egress,
//! both programs sharing one state table. The attachments are pinned links and the maps are
//! pinned beside them (`/sys/fs/bpf/sift/IFACE/pf/`), so the rule set keeps running after the
//! command, as pfctl's does; loading again replaces the programs atomically and keeps the
//! states. The rule set's text is kept in `/run/sift/pf/IFACE/` so that `show` can print the
//! rules with their counters as `pfctl -vsr` does, the states as `pfctl -ss` and the counters
//! as `pfctl -si`. `flush --states` empties the state table; `flush` removes pf from the
//! interface.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use sift_firewall_ebpf::kernel::{KernelPf, PinnedPf};
use sift_firewall_ebpf::{RuleSet, read};
use sift_kernel::attach::{Attacher, Hook, XdpMode};

use crate::console::print;
use crate::pf_cmd::{host, load_firewall_text, read};

/// Where the loaded rule sets' text is kept (one directory per interface).
const STATE_DIR: &str = "/run/sift/pf";

/// `sift pf load`
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// The interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: String,
    /// The rule set.
    #[arg(short = 'f', value_name = "RULES")]
    rules: String,
    /// Where packets arriving are judged: `xdp` (before the stack; leaving packets at TC
    /// egress) or `tc` (TC ingress and egress).
    #[arg(long, value_name = "HOOK", default_value = "xdp")]
    hook: String,
    /// XDP's mode: `native` or `generic`.
    #[arg(long, value_name = "MODE", default_value = "native")]
    mode: String,
    /// Print the programs, the classification's size and the kernel verifier's verdict;
    /// attach nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Define a macro.
    #[arg(short = 'D', value_name = "MACRO=VALUE")]
    define: Vec<String>,
    /// Resolve names on this host: `system` (default) or `openbsd`.
    #[arg(long = "host", value_name = "HOST", default_value = "system")]
    host: String,
}

/// `sift pf show`
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: String,
    /// What to show: `rules` (`pfctl -vsr`), `states` (`pfctl -ss`), `info` (`pfctl -si`);
    /// by default rules and states.
    #[arg(short = 's', value_name = "WHAT")]
    what: Option<String>,
}

/// `sift pf flush`
#[derive(Debug, clap::Args)]
pub struct FlushArgs {
    /// The interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: String,
    /// Only remove the states (`pfctl -F states`); without it pf is removed from the
    /// interface.
    #[arg(long)]
    states: bool,
}

/// What `load` recorded for later commands.
struct Saved {
    dir: PathBuf,
    host: String,
    define: Vec<String>,
    hook: String,
}

impl Saved {
    fn dir(iface: &str) -> PathBuf {
        Path::new(STATE_DIR).join(iface)
    }

    fn rules(&self) -> PathBuf {
        self.dir.join("pf.conf")
    }

    fn write(&self, text: &str) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        std::fs::write(self.rules(), text)?;
        let mut args = format!("host={}\nhook={}\n", self.host, self.hook);
        for d in &self.define {
            args += &format!("define={d}\n");
        }
        std::fs::write(self.dir.join("args"), args)?;
        Ok(())
    }

    fn read(iface: &str) -> anyhow::Result<Saved> {
        let dir = Saved::dir(iface);
        let args = std::fs::read_to_string(dir.join("args"))
            .with_context(|| format!("no pf rule set loaded by sift on {iface}"))?;
        let mut saved =
            Saved { dir, host: "system".into(), define: Vec::new(), hook: "xdp".into() };
        for line in args.lines() {
            match line.split_once('=') {
                Some(("host", v)) => saved.host = v.into(),
                Some(("hook", v)) => saved.hook = v.into(),
                Some(("define", v)) => saved.define.push(v.into()),
                _ => {}
            }
        }
        Ok(saved)
    }
}

/// The hooks pf runs at for `--hook`: arriving, then leaving.
fn hooks(hook: &str, mode: XdpMode) -> anyhow::Result<[(Hook, sift_firewall_ebpf::Hook); 2]> {
    use sift_firewall_ebpf::Hook as Pf;
    Ok(match hook {
        "xdp" => [(Hook::Xdp { mode }, Pf::Xdp), (Hook::TcEgress, Pf::TcEgress)],
        "tc" => [(Hook::TcIngress, Pf::TcIngress), (Hook::TcEgress, Pf::TcEgress)],
        other => bail!("unknown hook {other:?} (xdp or tc)"),
    })
}

/// The rule set `text` (read from `name`) for `iface` (`None`: its errors were printed).
fn compile(
    name: &str,
    text: &str,
    host_name: &str,
    define: &[String],
    iface: &str,
) -> anyhow::Result<Option<Compiled>> {
    let host = host(host_name)?;
    let Some(fw) = load_firewall_text(name, text, host.as_ref(), define)? else {
        return Ok(None);
    };
    let rs = RuleSet::compile(&fw, host.as_ref(), iface, &fw.states().settings)?;
    Ok(Some(Compiled { fw, rs, host }))
}

/// A rule set loaded for the kernel, with what printing it needs.
struct Compiled {
    fw: sift_firewall::Firewall,
    rs: RuleSet,
    host: Box<dyn sift_pf::host::Host>,
}

/// `sift pf load`
pub fn load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let mode = match args.mode.as_str() {
        "native" | "drv" => XdpMode::Native,
        "generic" | "skb" => XdpMode::Generic,
        other => bail!("unknown XDP mode {other:?} (native or generic)"),
    };
    let chosen = hooks(&args.hook, mode)?;
    let (name, text) = read(&args.rules).with_context(|| format!("cannot read {}", args.rules))?;
    let Some(Compiled { rs, .. }) = compile(&name, &text, &args.host, &args.define, &args.iface)?
    else {
        return Ok(ExitCode::FAILURE);
    };
    let summary = format!(
        "{} rules, {} classes of {} words",
        rs.rules.len(),
        rs.image.classes_needed(),
        rs.image.config.nwords
    );
    if args.dry_run {
        let pf = KernelPf::load_logged(&rs)?;
        let object = sift_firewall_ebpf::object()?;
        for (_, h) in chosen {
            let p = object.program(Some(h.program()))?;
            print(format!("# {} ({} slots)\n", h.program(), p.insns.len()))?;
            print(sift_ebpf::EbpfProgram { insns: p.insns.clone() }.to_string())?;
            let log = pf.object().program(h.program())?.log.clone().unwrap_or_default();
            // The log of a program this size is megabytes; its verdict is the last lines.
            let tail: Vec<&str> = log.lines().rev().take(3).collect();
            print(format!(
                "# verifier: {}\n\n",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n# ")
            ))?;
        }
        print(format!("# {summary}; nothing attached\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let attacher = Attacher::new()?;
    let pins = attacher.root().join(&args.iface).join("pf");
    let pf = KernelPf::load_keeping(&rs, &pins)?;
    // A hook of the other `--hook` choice is removed after the new ones run.
    let mut stale = Vec::new();
    for (h, _) in hooks(if args.hook == "xdp" { "tc" } else { "xdp" }, mode)? {
        if !chosen.iter().any(|(k, _)| k.pin_name() == h.pin_name()) {
            stale.push(h);
        }
    }
    let mut replaced = false;
    for (hook, program) in chosen {
        replaced |= attacher.attach_or_replace(&args.iface, hook, pf.program_fd(program)?)?.1;
    }
    for hook in stale {
        if matches!(attacher.query_hook(&args.iface, hook)?, Some(a) if a.attached) {
            attacher.detach(&args.iface, hook)?;
        }
    }
    pf.pin(&pins)?;
    let saved = Saved {
        dir: Saved::dir(&args.iface),
        host: args.host.clone(),
        define: args.define.clone(),
        hook: args.hook.clone(),
    };
    saved.write(&text)?;
    print(format!(
        "pf {} on {} ({}): {summary}{}\n",
        if replaced { "replaced" } else { "loaded" },
        args.iface,
        chosen.iter().map(|(h, _)| h.to_string()).collect::<Vec<_>>().join(" + "),
        if replaced { ", states kept" } else { "" }
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `sift pf show`
pub fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let saved = Saved::read(&args.iface)?;
    let attacher = Attacher::new()?;
    let maps = PinnedPf::open(&attacher.root().join(&args.iface).join("pf"))
        .with_context(|| format!("no pf maps pinned for {}", args.iface))?;
    let rules = saved.rules().to_string_lossy().into_owned();
    let (name, text) = read(&rules).with_context(|| format!("cannot read {rules}"))?;
    let Some(Compiled { fw, rs, host }) =
        compile(&name, &text, &saved.host, &saved.define, &args.iface)?
    else {
        return Ok(ExitCode::FAILURE);
    };
    let now = sift_firewall_ebpf::kernel::now();
    let states = read::states(&maps)?;
    let what = args.what.as_deref();
    if matches!(what, None | Some("rules" | "r")) {
        let (counters, default) = read::rule_counters(&maps, rs.rules.len())?;
        print(rs.pfctl_rules(&fw, host.as_ref(), &counters, &default))?;
    }
    if matches!(what, None | Some("states" | "s")) {
        if what.is_none() {
            print("\n")?;
        }
        print(rs.pfctl_states(&states, now))?;
    }
    if matches!(what, Some("info" | "i")) {
        let live = states.iter().filter(|k| rs.expires(&k.value) > now).count();
        print(read::pfctl_info(&read::counters(&maps)?, live))?;
    }
    if let Some(other) = what.filter(|w| !["rules", "r", "states", "s", "info", "i"].contains(w)) {
        bail!("unknown -s {other:?} (rules, states or info)");
    }
    Ok(ExitCode::SUCCESS)
}

/// `sift pf flush`
pub fn flush(args: FlushArgs) -> anyhow::Result<ExitCode> {
    let attacher = Attacher::new()?;
    let pins = attacher.root().join(&args.iface).join("pf");
    if args.states {
        let maps = PinnedPf::open(&pins)
            .with_context(|| format!("no pf maps pinned for {}", args.iface))?;
        let n = maps.flush_states()?;
        print(format!("{n} states cleared\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let saved = Saved::read(&args.iface)?;
    for (hook, _) in hooks(&saved.hook, XdpMode::Native)? {
        if attacher.query_hook(&args.iface, hook)?.is_some() {
            attacher.detach(&args.iface, hook)?;
        }
    }
    if pins.exists() {
        std::fs::remove_dir_all(&pins)
            .with_context(|| format!("cannot remove {}", pins.display()))?;
    }
    std::fs::remove_dir_all(&saved.dir)
        .with_context(|| format!("cannot remove {}", saved.dir.display()))?;
    print(format!("pf removed from {}\n", args.iface))?;
    Ok(ExitCode::SUCCESS)
}
