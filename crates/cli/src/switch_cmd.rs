//! `sift switch -p IFACE -p IFACE… -f FLOWS`: a software switch between AF_XDP ports,
//! forwarding by OpenFlow-style rules with OVS's caches in front of them (`sift::switch`).
//!
//! The command reads FLOWS (`ovs-ofctl add-flow` lines; mistakes and rules the datapath cannot
//! carry out exactly are shown with the line and a caret), opens the ports, says on standard
//! error when it listens, reads FLOWS again on SIGHUP (the rules change under traffic; each
//! queue thread says when it took them), and stops on SIGINT/SIGTERM or after `-c COUNT`
//! frames with its counters on standard error and, with `--stats`, the flow tables on standard
//! output.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use sift::switch::{Bound, Config, PortMap, Report, Rule, Signals, Switch, load_rules, port_map};

use crate::console::{errln, print};

/// `sift switch`
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Ports are numbered in the order given, from 1 (OpenFlow port numbers); rules name them by \
interface or number. FLOWS holds one `ovs-ofctl add-flow` rule a line: \
`priority=100,in_port=veth1,tcp,tp_dst=80,actions=output:veth2`, `actions=drop`, \
`set_field:10.0.0.1->nw_dst`, `mod_tp_dst:8080`, `push_vlan:0x8100`, `pop_vlan`, `IN_PORT`. \
A frame no rule matches is dropped. Each frame leaves each port at most once, as the actions \
left it: a rewrite after an output is refused when FLOWS is read.

SIGHUP reads FLOWS again (a file with mistakes leaves the rules as they were); \
SIGINT/SIGTERM or -c COUNT stop. At the end: per-port and cache counters on standard error; \
with --stats, the rules with their counters (`ovs-ofctl dump-flows`) and each queue's \
megaflows (`ovs-dpctl dump-flows`) on standard output.

Needs root (AF_XDP sockets, an XDP program on each port).

Example: sift switch -p veth1 -p veth2 -f switch.flows --stats")]
pub struct SwitchArgs {
    /// A port (repeat: port 1, port 2, …).
    #[arg(short = 'p', long = "port", value_name = "IFACE", required = true)]
    ports: Vec<String>,
    /// The rules.
    #[arg(short = 'f', value_name = "FLOWS")]
    flows: String,
    /// Print the rules with their counters and the megaflows at the end.
    #[arg(long)]
    stats: bool,
    /// Stop after COUNT frames.
    #[arg(short = 'c', value_name = "COUNT")]
    count: Option<u64>,
    /// Frames taken off a receive ring at a time (1 to 256).
    #[arg(long, value_name = "N", default_value_t = 64)]
    batch: u32,
    /// Sleep in poll() between rounds instead of spinning on the rings.
    #[arg(long)]
    poll: bool,
    /// Bind the sockets in copy mode (default: zero-copy when the driver has it).
    #[arg(long)]
    copy: bool,
}

/// FLOWS's rules for `ports`; `None` when it has mistakes (shown on standard error).
fn read_rules(file: &str, ports: &PortMap) -> anyhow::Result<Option<Vec<Rule>>> {
    let (name, text) = crate::pf_cmd::read(file).with_context(|| format!("cannot read {file}"))?;
    match load_rules(&text, ports) {
        Ok(rules) => Ok(Some(rules)),
        Err(e) => {
            crate::console::eprint(format_args!("{}", e.render(&name, &text)));
            Ok(None)
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The counters on standard error; with `stats`, the tables on standard output.
fn summary(r: &Report, stats: bool) -> anyhow::Result<()> {
    for (i, (name, s)) in r.ports.iter().enumerate() {
        let mut line = format!(
            "{name} (port {}): {} received ({} bytes), {} sent ({} bytes), {} dropped by the rules",
            i + 1,
            s.rx_packets,
            s.rx_bytes,
            s.tx_packets,
            s.tx_bytes,
            s.drop_pipeline
        );
        let lost = s.drop_no_frame + s.drop_too_long + s.drop_tx_full + s.drop_no_port;
        if lost > 0 {
            line.push_str(&format!(
                ", {lost} lost ({} no free frame, {} too long, {} TX ring full)",
                s.drop_no_frame, s.drop_too_long, s.drop_tx_full
            ));
        }
        if s.xdp.rx_dropped + s.xdp.rx_ring_full > 0 {
            line.push_str(&format!(
                ", {} dropped by the kernel",
                s.xdp.rx_dropped + s.xdp.rx_ring_full
            ));
        }
        errln!("{line}");
    }
    let c = &r.caches;
    errln!(
        "caches: {} microflow hits, {} megaflow hits, {} misses, {} megaflows installed, {} \
         evicted, {} invalidated; {}",
        c.microflow_hits,
        c.megaflow_hits,
        c.misses,
        c.installed,
        c.evicted,
        c.removed,
        plural(c.updates, "rule change", "rule changes")
    );
    let mut last = format!(
        "{} in {:.1} s; {} matched no rule",
        plural(r.frames, "frame", "frames"),
        r.elapsed.as_secs_f64(),
        r.table_misses.packets
    );
    if r.exec_errors > 0 {
        last.push_str(&format!(", {} dropped: no headroom for a VLAN tag", r.exec_errors));
    }
    errln!("{last}");
    if stats {
        let mut out = r.dump_flows();
        for (queue, megaflows) in &r.megaflows {
            out.push_str(&format!("# megaflows of queue {queue} (ovs-dpctl dump-flows)\n"));
            out.push_str(megaflows);
        }
        print(out)?;
    }
    Ok(())
}

/// Runs `sift switch`.
pub fn run(args: SwitchArgs) -> anyhow::Result<ExitCode> {
    let ports = port_map(&args.ports)?;
    let Some(rules) = read_rules(&args.flows, &ports)? else {
        return Ok(ExitCode::FAILURE);
    };
    let cfg = Config {
        ports: args.ports.clone(),
        copy: args.copy,
        batch: args.batch,
        poll: args.poll,
        count: args.count,
    };
    let mut signals = Signals::install().context("cannot install the signal handlers")?;
    let switch = Switch::start(&cfg, rules)?;
    let opened = switch.ports();
    let list: Vec<String> =
        opened.iter().enumerate().map(|(i, p)| format!("{} (port {})", p.iface, i + 1)).collect();
    let queues = opened.iter().map(|p| p.queues.len()).max().unwrap_or(0) as u64;
    let mode =
        if opened.iter().all(|p| p.mode == Bound::ZeroCopy) { "zero-copy" } else { "copy mode" };
    errln!(
        "sift: switch: listening on {}; {}, {mode}",
        list.join(", "),
        plural(queues, "queue", "queues")
    );
    while !signals.stop_requested() && !switch.finished() {
        std::thread::sleep(Duration::from_millis(10));
        if signals.reload_requested() {
            match read_rules(&args.flows, switch.port_map()) {
                Ok(Some(rules)) => {
                    let n = rules.len();
                    let generation = switch.reload(rules);
                    errln!(
                        "sift: switch: SIGHUP: {} read again, {} (generation {generation}); \
                         each queue takes them at its next batch",
                        args.flows,
                        plural(n as u64, "rule", "rules")
                    );
                }
                Ok(None) => errln!("sift: switch: SIGHUP: the rules stay as they were"),
                Err(e) => errln!(
                    "sift: switch: SIGHUP: {}; the rules stay as they were",
                    crate::console::render(&e)
                ),
            }
        }
        for a in switch.applied() {
            errln!(
                "sift: switch: queue {}: rules of generation {} in place ({}); caches \
                 revalidated: {} megaflows kept, {} removed",
                a.queue,
                a.generation,
                plural(a.rules as u64, "rule", "rules"),
                a.kept,
                a.removed
            );
        }
    }
    let report = switch.stop()?;
    summary(&report, args.stats)?;
    Ok(ExitCode::SUCCESS)
}
