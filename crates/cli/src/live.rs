//! Live capture: `sift -i IFACE [-w OUT [--print]] [-c N] [-s SNAPLEN] [-B KiB] [-y TYPE]
//! [--immediate-mode] [-Q in|out|inout] [-p] [--time-stamp-precision=nano] [--pcapng] [-U]
//! [-C SIZE] [-G SECS] [-W COUNT] [--fanout N] [EXPR]`, `sift -D` and `sift -J`.
//!
//! The capture itself is the library's (`sift::live`: the filter compiled for the interface and
//! attached in the kernel, or run in user space when the kernel refuses it; the ring drained on
//! a signal; fan-out), and so are the output files (`sift::output::Rotating`: tcpdump's
//! `-C`/`-G`/`-W` rotation and file names). This module turns the options into the socket's
//! configuration, prints packets one line each (flushed line by line) when there is no `-w`
//! (or with `--print`), and prints what tcpdump prints: the `listening on` line, the
//! user-space warning, the counters at the end and on SIGUSR1.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use sift::live::{Event, Limits, Outcome, Session, Signals, Sink, Taken};
use sift::output::{FileFormat, Rotating, Rotation};
use sift_capture::{Config, Direction, Placement};
use sift_pcap::{Interface, LinkType, Packet, Precision};

use crate::console::errln;
use crate::dump::DumpArgs;
use crate::print::PacketPrinter;

/// Options of live capture (the rest, `-w`, `-c`, `--pcapng`, `-F`, the expression…, are the
/// default mode's).
#[derive(Debug, clap::Args)]
pub struct LiveArgs {
    /// Capture on interface IFACE (`any` for all interfaces, with cooked headers).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// List the interfaces one can capture on, and exit.
    #[arg(short = 'D', long = "list-interfaces")]
    pub list: bool,
    /// Keep at most SNAPLEN bytes of each packet (0: 262144, the default). Used by live
    /// capture and by -d without -r; files keep their own.
    #[arg(short = 's', long = "snapshot-length", value_name = "SNAPLEN", value_parser = parse_snaplen, allow_hyphen_values = true)]
    pub snaplen: Option<u32>,
    /// Capture buffer (ring) size in KiB (default 2048; with --xdp, the frames of each receive
    /// queue's socket, default 32768).
    #[arg(short = 'B', long = "buffer-size", value_name = "KiB")]
    pub buffer_kib: Option<u64>,
    /// Deliver packets as soon as they arrive (1 ms block timeout) instead of in batches.
    #[arg(long = "immediate-mode")]
    pub immediate: bool,
    /// Direction of the packets to capture.
    #[arg(short = 'Q', long = "direction", value_parser = ["in", "out", "inout"])]
    pub direction: Option<String>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', long = "no-promiscuous-mode")]
    pub no_promiscuous: bool,
    /// Start a new output file when the current one exceeds FILE_SIZE millions of bytes (a k,
    /// m or g suffix means KiB, MiB, GiB); files get a number appended, as with tcpdump.
    #[arg(short = 'C', value_name = "FILE_SIZE")]
    pub file_size: Option<String>,
    /// Start a new output file every SECONDS seconds (the -w name goes through strftime).
    #[arg(short = 'G', value_name = "SECONDS")]
    pub rotate_seconds: Option<u64>,
    /// With -C: keep a ring of COUNT files; with -G alone: stop after COUNT files.
    #[arg(short = 'W', value_name = "COUNT")]
    pub file_count: Option<u32>,
    /// How long the kernel holds a partly filled ring block, in ms (default 100; 1 with
    /// --immediate-mode or when printing).
    #[arg(long = "block-timeout", value_name = "MS")]
    pub block_timeout: Option<u32>,
    /// Capture with N sockets in a PACKET_FANOUT group, one thread each (flows are spread
    /// over them; packets of different flows may be written in a different order).
    #[arg(long = "fanout", value_name = "N")]
    pub fanout: Option<usize>,
    /// Monitor mode (802.11): not supported by sift, which says so.
    #[arg(short = 'I', long = "monitor-mode")]
    pub monitor: bool,
    /// The time stamp type (see -J): sift's packets are stamped by the host (`host`).
    #[arg(short = 'j', long = "time-stamp-type", value_name = "TYPE", allow_hyphen_values = true)]
    pub ts_type: Option<String>,
    /// List the time stamp types of the interface (-i, else the first one), and exit.
    #[arg(short = 'J', long = "list-time-stamp-types")]
    pub list_ts_types: bool,
    /// Capture over AF_XDP: the filter runs in the interface's XDP hook and only matching
    /// frames reach sift; the rest are dropped there (see --xdp-pass). Frames the host sends
    /// are not seen.
    #[arg(long = "xdp")]
    pub xdp: bool,
    /// With --xdp: leave the frames that do not match to the kernel's network stack.
    #[arg(long = "xdp-pass")]
    pub xdp_pass: bool,
    /// With --xdp: copy-mode sockets even where the driver has zero-copy.
    #[arg(long = "xdp-copy")]
    pub xdp_copy: bool,
}

/// `-s` as tcpdump takes it: 0 to 262144, 0 meaning 262144.
fn parse_snaplen(text: &str) -> Result<u32, String> {
    let max = sift_capture::MAX_SNAPLEN;
    match text.parse::<i64>() {
        Ok(0) => Ok(max),
        Ok(n) if (1..=i64::from(max)).contains(&n) => Ok(n as u32),
        _ => Err(format!("invalid snaplen {text} (must be >= 0 and <= {max})")),
    }
}

/// libpcap's time stamp type names (`pcap_tstamp_type_name_to_val`).
const TS_TYPES: &[&str] =
    &["host", "host_lowprec", "host_hiprec", "adapter", "adapter_unsynced", "host_hiprec_unsynced"];

impl LiveArgs {
    /// Whether the command line asks for live capture or the interface list.
    pub fn wanted(&self) -> bool {
        self.interface.is_some() || self.list
    }

    /// The AF_XDP options make sense only together, on a live capture (clap's `requires`
    /// would refuse them where the getopt pass hands them on alone).
    pub fn check_xdp(&self) -> anyhow::Result<()> {
        if !self.xdp && (self.xdp_pass || self.xdp_copy) {
            bail!("--xdp-pass and --xdp-copy go with --xdp");
        }
        if self.xdp && self.interface.is_none() {
            bail!("--xdp captures live: give an interface (-i)");
        }
        Ok(())
    }

    /// `-j`, checked as tcpdump checks it: a name libpcap knows.
    fn ts_type(&self) -> anyhow::Result<Option<&str>> {
        match self.ts_type.as_deref() {
            Some(t) if !TS_TYPES.contains(&t.to_ascii_lowercase().as_str()) => {
                bail!("invalid time stamp type {t}")
            }
            other => Ok(other),
        }
    }
}

/// `sift -D`.
pub fn list_interfaces() -> anyhow::Result<ExitCode> {
    let list = sift_capture::iface::list().context("cannot list the interfaces")?;
    let mut text = String::new();
    for (n, i) in list.iter().enumerate() {
        let descr =
            if i.name == "any" { " (Pseudo-device that captures on all interfaces)" } else { "" };
        text.push_str(&format!("{}.{}{descr} {}\n", n + 1, i.name, i.flags_text()));
    }
    crate::console::print(text)?;
    Ok(ExitCode::SUCCESS)
}

/// The interface tcpdump captures on without `-i`: the first one listed that is not `any` or
/// a loopback (else the first).
fn default_interface() -> anyhow::Result<String> {
    let list = sift_capture::iface::list().context("cannot list the interfaces")?;
    let pick = list.iter().find(|i| i.name != "any" && !i.loopback).or(list.first());
    pick.map(|i| i.name.clone()).ok_or_else(|| anyhow::anyhow!("no interface to capture on"))
}

/// `sift -J`: the time stamp types, on standard error as tcpdump prints them. sift's ring is
/// stamped by the host, whatever the interface.
pub fn list_time_stamp_types(live: &LiveArgs) -> anyhow::Result<ExitCode> {
    let name = match &live.interface {
        Some(i) => i.clone(),
        None => default_interface()?,
    };
    errln!("Time stamp types for {name} (use option -j to set):\n  host (Host)");
    Ok(ExitCode::SUCCESS)
}

/// `-C` as tcpdump reads it: millions of bytes, or KiB/MiB/GiB with a suffix.
fn parse_file_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let unit = match c.to_ascii_lowercase() {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                _ => bail!("invalid file size {text}"),
            };
            (&t[..i], unit)
        }
        _ => (t, 1_000_000),
    };
    let n: u64 = num.parse().map_err(|_| anyhow::anyhow!("invalid file size {text}"))?;
    if n == 0 {
        bail!("invalid file size {text}");
    }
    n.checked_mul(unit).ok_or_else(|| anyhow::anyhow!("invalid file size {text}"))
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Where captured packets go: the `-w` files, printed lines (flushed line by line), or both
/// (`--print`).
struct LiveSink {
    files: Option<Rotating>,
    print: Option<(io::StdoutLock<'static>, PacketPrinter)>,
    /// `-U`: each packet written out at once.
    packet_buffered: bool,
}

impl Sink for LiveSink {
    type Error = anyhow::Error;

    fn take(&mut self, packet: &Packet<'_>) -> anyhow::Result<Taken> {
        if let Some(files) = self.files.as_mut() {
            if files.take(packet).map_err(crate::dump::output_error)? == Taken::Full {
                return Ok(Taken::Full);
            }
            if self.packet_buffered {
                files.flush().map_err(crate::dump::output_error)?;
            }
        }
        if let Some((out, printer)) = self.print.as_mut() {
            printer.print(out, packet).and_then(|()| out.flush()).context("standard output")?;
        }
        Ok(Taken::Yes)
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        if let Some(files) = self.files.as_mut() {
            files.flush().map_err(crate::dump::output_error)?;
        }
        if let Some((out, _)) = self.print.as_mut() {
            out.flush().context("standard output")?;
        }
        Ok(())
    }
}

/// tcpdump's `-y` on a live capture: `any` offers both cooked headers; another interface has
/// its one link type, which `-y` may only name.
pub(crate) fn choose_link_type(cfg: &mut Config, wanted: Option<LinkType>) -> anyhow::Result<()> {
    let Some(lt) = wanted else { return Ok(()) };
    if cfg.interface == "any" {
        cfg.any_cooked = match lt {
            LinkType::LINUX_SLL => sift_capture::cooked::Cooked::Sll,
            LinkType::LINUX_SLL2 => sift_capture::cooked::Cooked::Sll2,
            _ => bail!("{lt} is not one of the DLTs supported by this device"),
        };
    }
    Ok(())
}

/// Runs live capture (or `-D`).
pub fn run(live: LiveArgs, args: DumpArgs) -> anyhow::Result<ExitCode> {
    run_with(live, args, None)
}

/// Runs a live capture split by a filter set (`--split`, checked by `split_cmd`).
pub fn run_split(
    live: LiveArgs,
    args: DumpArgs,
    splitter: sift::split::Splitter,
) -> anyhow::Result<ExitCode> {
    run_with(live, args, Some(splitter))
}

fn run_with(
    live: LiveArgs,
    args: DumpArgs,
    split: Option<sift::split::Splitter>,
) -> anyhow::Result<ExitCode> {
    live.check_xdp()?;
    if live.list {
        return list_interfaces();
    }
    let Some(interface) = live.interface.clone() else { bail!("no interface given (-i)") };
    if !args.read.is_empty() {
        bail!("-r and -i cannot be used together");
    }
    crate::dump::check_printing(&args)?;
    let wanted_link = args.link_type.as_deref().map(crate::dump::link_type_arg).transpose()?;
    let ts_type = live.ts_type()?;
    if args.write.is_none()
        && (live.file_size.is_some() || live.rotate_seconds.is_some() || live.file_count.is_some())
    {
        bail!("-C, -G and -W need an output file (-w)");
    }
    // Privileges first, before any file is created.
    sift_capture::check_privileges()?;
    if live.monitor {
        bail!("{interface}: That device doesn't support monitor mode (sift has no monitor mode)");
    }

    let snaplen = live.snaplen.unwrap_or(sift_capture::MAX_SNAPLEN);
    let printing = args.write.is_none() || args.print;
    if live.xdp {
        return run_xdp(&live, &args, interface, snaplen, wanted_link);
    }
    let mut cfg = Config::new(&interface);
    cfg.snaplen = snaplen;
    if let Some(kib) = live.buffer_kib {
        if kib == 0 {
            bail!("invalid buffer size 0");
        }
        cfg.buffer_bytes = usize::try_from(kib.saturating_mul(1024)).unwrap_or(usize::MAX);
    }
    cfg.block_timeout_ms =
        live.block_timeout.unwrap_or(if live.immediate || printing { 1 } else { 100 });
    cfg.promiscuous = !live.no_promiscuous;
    cfg.direction = match live.direction.as_deref() {
        Some("in") => Direction::In,
        Some("out") => Direction::Out,
        _ => Direction::InOut,
    };
    choose_link_type(&mut cfg, wanted_link)?;
    let mut session = Session::open(cfg)?;
    let link_type = session.link_type();
    if let Some(wanted) = wanted_link {
        if wanted != link_type {
            bail!("{wanted} is not one of the DLTs supported by this device");
        }
        errln!("sift: data link type {wanted}");
    }
    if let Some(t) = ts_type
        && !t.eq_ignore_ascii_case("host")
    {
        errln!(
            "sift: WARNING: When trying to set timestamp type '{t}' on {interface}: That type \
             of time stamp is not supported by that device"
        );
    }

    if let Some(splitter) = split {
        let run = crate::split_cmd::LiveSplit {
            session,
            splitter,
            live: &live,
            args: &args,
            interface: &interface,
            snaplen,
        };
        return crate::split_cmd::run_live(run);
    }
    // Compile before any output exists: a bad filter leaves no file, as with tcpdump.
    let expr = crate::dump::expression(&args)?;
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    let placement = session.set_filter(expr.as_deref(), !args.no_optimize, engine)?;
    if let Placement::UserSpace { reason } = &placement {
        errln!("sift: warning: filtering in user space ({}): {reason}", session.user_engine());
    }

    // As tcpdump: root is given up once the socket is open, before any output exists (rotated
    // files are then created as that user too).
    if let Some(user) = &args.user {
        sift::user::relinquish(user)?;
    }
    let limits = Limits { count: args.count, fanout: live.fanout.unwrap_or(1) };
    let events = |event: Event| match event {
        Event::Listening => errln!(
            "sift: listening on {interface}, link-type {} ({}), snapshot length {snaplen} bytes",
            link_type,
            link_type.description().unwrap_or("unknown"),
        ),
        // tcpdump's SIGUSR1 line.
        Event::Counters { captured, stats } => counters_line(captured, stats),
        _ => {}
    };
    let mut sink = live_sink(&live, &args, &interface, link_type, snaplen)?;
    let signals = Signals::install().context("cannot install the signal handlers")?;
    let outcome = session.run(&mut sink, limits, signals, events)?;
    let finished = finish_sink(&mut sink, outcome.stats);
    conclude(&live, &interface, outcome, finished)
}

/// The `-w` files (with `-C`/`-G`/`-W` rotation) and the printer the options ask for.
fn live_sink(
    live: &LiveArgs,
    args: &DumpArgs,
    interface: &str,
    link_type: LinkType,
    snaplen: u32,
) -> anyhow::Result<LiveSink> {
    let precision = args.precision().unwrap_or_default();
    let files = match &args.write {
        Some(path) => {
            let mut iface = Interface::new(link_type, snaplen, precision.resolution());
            iface.name = Some(interface.to_string());
            let format = FileFormat { pcapng: args.pcapng, precision, interface: iface };
            let rotation = Rotation {
                max_bytes: live.file_size.as_deref().map(parse_file_size).transpose()?,
                seconds: live.rotate_seconds,
                files: live.file_count,
            };
            let files = Rotating::new(path_text(path), format, rotation)
                .map_err(crate::dump::output_error)?;
            Some(files)
        }
        None => None,
    };
    let printing = args.write.is_none() || args.print;
    let print = printing.then(|| {
        let printer = crate::dump::printer(args, precision == Precision::Nano);
        (io::stdout().lock(), printer)
    });
    Ok(LiveSink { files, print, packet_buffered: args.packet_buffered })
}

/// Flushes standard output and closes the files (with the counters in a pcapng file's
/// statistics block): the first error.
fn finish_sink(sink: &mut LiveSink, stats: sift_capture::Stats) -> anyhow::Result<()> {
    let mut finished: anyhow::Result<()> = Ok(());
    if let Some((out, _)) = sink.print.as_mut() {
        finished = out.flush().context("standard output");
    }
    if let Some(mut files) = sink.files.take() {
        let isb = sift_pcap::InterfaceStats {
            received: Some(stats.received),
            dropped: Some(stats.dropped),
            ..Default::default()
        };
        let closed = files.close(Some(isb)).map_err(crate::dump::output_error);
        finished = finished.and(closed);
    }
    finished
}

/// tcpdump's SIGUSR1 line.
pub(crate) fn counters_line(captured: u64, stats: sift_capture::Stats) {
    errln!(
        "sift: {captured} packet{} captured, {} packet{} received by filter, {} packet{} \
         dropped by kernel",
        plural(captured),
        stats.received,
        plural(stats.received),
        stats.dropped,
        plural(stats.dropped)
    );
}

/// `sift -i IFACE --xdp [EXPR]`: capture over AF_XDP (`sift::live_xdp`).
fn run_xdp(
    live: &LiveArgs,
    args: &DumpArgs,
    interface: String,
    snaplen: u32,
    wanted_link: Option<LinkType>,
) -> anyhow::Result<ExitCode> {
    use sift::live_xdp::{XdpConfig, XdpSession};
    if let Some(lt) = wanted_link.filter(|&lt| lt != LinkType::EN10MB) {
        bail!("{lt} is not one of the DLTs supported by this device (--xdp sees Ethernet frames)");
    }
    if matches!(live.direction.as_deref(), Some("out" | "inout")) {
        bail!("--xdp sees only the frames an interface receives (-Q in)");
    }
    if live.fanout.is_some() {
        bail!(
            "--xdp takes every receive queue with a thread of its own; --fanout is for AF_PACKET"
        );
    }
    let mut cfg = XdpConfig::new(&interface);
    cfg.snaplen = snaplen;
    cfg.pass_rest = live.xdp_pass;
    if live.xdp_copy {
        cfg.bind = sift::live_xdp::BindMode::Copy;
    }
    if let Some(kib) = live.buffer_kib {
        cfg.buffer_bytes = usize::try_from(kib.saturating_mul(1024)).unwrap_or(usize::MAX);
    }
    let expr = crate::dump::expression(args)?;
    let session = XdpSession::open(cfg, expr.as_deref(), !args.no_optimize)?;
    if let Some(user) = &args.user {
        sift::user::relinquish(user)?;
    }
    let link_type = LinkType::EN10MB;
    let mut sink = live_sink(live, args, &interface, link_type, snaplen)?;
    let insns = session.instructions();
    let events = |event: Event, bound: sift::live_xdp::Bound| match event {
        Event::Listening => errln!(
            "sift: listening on {interface} (AF_XDP, {} mode, filter of {insns} eBPF \
             instructions at XDP), link-type {} ({}), snapshot length {snaplen} bytes",
            match bound {
                sift::live_xdp::Bound::Copy => "copy",
                sift::live_xdp::Bound::ZeroCopy => "zero-copy",
            },
            link_type,
            link_type.description().unwrap_or("unknown"),
        ),
        Event::Counters { captured, stats } => counters_line(captured, stats),
        _ => {}
    };
    let signals = Signals::install().context("cannot install the signal handlers")?;
    let outcome = session.run(&mut sink, args.count, signals, events)?;
    let stats = outcome.stats.as_capture();
    let finished = finish_sink(&mut sink, stats);
    let outcome = Outcome {
        stats,
        captured: outcome.captured,
        full: outcome.full,
        failure: outcome.failure,
        error: outcome.error,
    };
    conclude(live, &interface, outcome, finished)
}

/// tcpdump's end of a capture: the file limit, the counters, then the first error.
pub(crate) fn conclude(
    live: &LiveArgs,
    interface: &str,
    outcome: Outcome<anyhow::Error>,
    finished: anyhow::Result<()>,
) -> anyhow::Result<ExitCode> {
    let Outcome { stats, captured, full, failure, error } = outcome;
    if let (true, Some(w)) = (full, live.file_count) {
        errln!("Maximum file limit reached: {w}");
    }
    errln!("{captured} packet{} captured", plural(captured));
    errln!("{} packet{} received by filter", stats.received, plural(stats.received));
    errln!("{} packet{} dropped by kernel", stats.dropped, plural(stats.dropped));
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(e) = error {
        return Err(anyhow::Error::new(e).context(format!("{interface}: capture failed")));
    }
    finished?;
    Ok(ExitCode::SUCCESS)
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_sizes_use_tcpdump_units() {
        assert_eq!(parse_file_size("1").unwrap(), 1_000_000);
        assert_eq!(parse_file_size("3k").unwrap(), 3072);
        assert_eq!(parse_file_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_file_size("1g").unwrap(), 1 << 30);
        assert!(parse_file_size("0").is_err());
        assert!(parse_file_size("1x").is_err());
        assert!(parse_file_size("k").is_err());
    }
}
