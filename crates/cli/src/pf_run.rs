//! `sift pf run --between IF1 IF2 -f RULES`: pf live between two interfaces over AF_XDP
//! (`sift::pf_between`), with the flow datapath's caches in front of pf where a decision
//! provably depends on the flow key alone.
//!
//! Every frame is judged as `sift pf bridge` judges it (`in` on the interface it came from,
//! `out` on the other; one state table) and leaves as pf sends it; `--verdicts` prints each
//! frame's verdicts in the bridge's form. SIGHUP reads RULES again and loads it over the
//! running pf, states kept (`pfctl -f`); SIGINT/SIGTERM or `-c COUNT` stop, then the counters
//! of each way, of the caches and of pf go to standard error.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use sift::pf_between::{PfBetween, Report, VerdictSink};
use sift::switch::{Config, Signals};
use sift_firewall::{Firewall, Settings};
use sift_pf::{Options, pfctl};

use crate::console::{errln, print};

/// What `sift pf run` passes on.
pub struct RunOptions<'a> {
    /// The rule set's file.
    pub rules: &'a str,
    /// `--host`.
    pub host: &'a str,
    /// `-D`.
    pub define: &'a [String],
    /// `--verdicts`.
    pub verdicts: bool,
}

/// RULES read again and loaded over `fw` (`pfctl -f`: states stay); false when it has
/// mistakes (shown on standard error) and `fw` is left as it was.
fn reload(fw: &mut Firewall, o: &RunOptions<'_>) -> anyhow::Result<bool> {
    let (name, text) =
        crate::pf_cmd::read(o.rules).with_context(|| format!("cannot read {}", o.rules))?;
    let host = crate::pf_cmd::host(o.host)?;
    let opts =
        Options { verbose: true, defines: crate::pf_cmd::defines(o.define)?, ..Options::default() };
    let out = pfctl(&name, &text, &opts, host.as_ref());
    if out.status != 0 {
        crate::console::eprint(format_args!("{}", out.render_errors()));
        return Ok(false);
    }
    let settings = Settings::from_pfctl_verbose(&out.stdout)?;
    fw.load_anchor("", &out.ruleset, host.as_ref())?;
    // New settings renew the reassembler: only when they changed.
    if fw.states().settings != settings {
        fw.set_settings(settings);
    }
    fw.check_limits()?;
    Ok(true)
}

fn summary(r: &Report) {
    for (i, w) in r.ways.iter().enumerate() {
        let mut s = format!(
            "{}>{}: {} frames, {} passed ({} not IP), {} held, {} blocked, {} answers",
            r.ifnames[i],
            r.ifnames[i ^ 1],
            w.frames,
            w.passed,
            w.not_ip,
            w.held,
            w.blocked,
            w.answers
        );
        if w.send_errors > 0 {
            s.push_str(&format!(", {} send errors", w.send_errors));
        }
        let p = &r.ports[i];
        let lost = p.drop_no_frame + p.drop_too_long + p.drop_tx_full + p.xdp.rx_dropped;
        if lost > 0 {
            s.push_str(&format!(", {lost} lost by the datapath"));
        }
        errln!("{s}");
    }
    let c = &r.caches;
    errln!(
        "caches: {} microflow hits, {} megaflow hits, {} misses ({} not cacheable), {} \
         megaflows installed, {} invalidated; {} frames judged without the caches",
        c.microflow_hits,
        c.megaflow_hits,
        c.misses,
        c.uncacheable,
        c.installed,
        c.removed,
        r.bypassed
    );
    if let Some(e) = &r.first_send_error {
        errln!("sift: pf run: {e}");
    }
    errln!(
        "{} frames in {:.1} s; {} states",
        r.frames,
        r.elapsed.as_secs_f64(),
        r.firewall.states().len()
    );
}

/// Runs `sift pf run --between IF1 IF2`.
pub fn run(o: &RunOptions<'_>, ifs: &[String], count: Option<u64>) -> anyhow::Result<ExitCode> {
    let [a, b] = ifs else { bail!("--between takes two interfaces") };
    if a == b {
        bail!("--between takes two different interfaces");
    }
    let Some(fw) = crate::pf_cmd::load_firewall(o.rules, o.host, o.define)? else {
        return Ok(ExitCode::FAILURE);
    };
    let broken = Arc::new(AtomicBool::new(false));
    let sink: Option<VerdictSink> = o.verdicts.then(|| {
        let broken = broken.clone();
        let sink: VerdictSink = Arc::new(move |line: &str| {
            if !broken.load(Ordering::Relaxed) && print(format!("{line}\n")).is_err() {
                broken.store(true, Ordering::Relaxed);
            }
        });
        sink
    });
    let cfg = Config { count, ..Config::new(vec![a.clone(), b.clone()]) };
    let mut signals = Signals::install().context("cannot install the signal handlers")?;
    let pf = PfBetween::start(fw, &cfg, sink)?;
    let queues = pf.ports().iter().map(|p| p.queues.len()).max().unwrap_or(0);
    errln!(
        "sift: pf run: listening between {a} and {b}; {queues} queue{}",
        if queues == 1 { "" } else { "s" }
    );
    match pf.ineligible() {
        None => errln!("sift: pf run: caches on (the rule set is eligible)"),
        Some(why) => errln!("sift: pf run: caches unused: {why}"),
    }
    while !signals.stop_requested() && !pf.finished() && !broken.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(10));
        if signals.reload_requested() {
            match pf.reload(|fw| reload(fw, o)) {
                Ok(true) => {
                    let states = pf.with_firewall(|fw| fw.states().len());
                    errln!(
                        "sift: pf run: SIGHUP: {} loaded, {states} states kept; caches flushed",
                        o.rules
                    );
                    match pf.ineligible() {
                        None => errln!("sift: pf run: caches on (the rule set is eligible)"),
                        Some(why) => errln!("sift: pf run: caches unused: {why}"),
                    }
                }
                Ok(false) => errln!("sift: pf run: SIGHUP: the rules stay as they were"),
                Err(e) => errln!(
                    "sift: pf run: SIGHUP: {}; the rules stay as they were",
                    crate::console::render(&e)
                ),
            }
        }
    }
    let report = pf.stop()?;
    summary(&report);
    // Standard output going away (`| head`) is a normal end, as elsewhere.
    Ok(ExitCode::SUCCESS)
}
