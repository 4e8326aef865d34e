//! Live capture: `sift -i IFACE [-w OUT] [-c N] [-s SNAPLEN] [-B KiB] [--immediate-mode]
//! [-Q in|out|inout] [-p] [--time-stamp-precision=nano] [--pcapng] [-C SIZE] [-G SECS]
//! [-W COUNT] [--fanout N] [EXPR]`, and `sift -D`.
//!
//! The capture itself is the library's (`sift::live`: the filter compiled for the interface and
//! attached in the kernel, or run in user space when the kernel refuses it; the ring drained on
//! a signal; fan-out), and so are the output files (`sift::output::Rotating`: tcpdump's
//! `-C`/`-G`/`-W` rotation and file names). This module turns the options into the socket's
//! configuration, prints packets one line each (flushed line by line) when there is no `-w`,
//! and prints what tcpdump prints: the `listening on` line, the user-space warning, and the
//! counters at the end.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use sift::live::{Limits, Outcome, Session, Sink, Taken};
use sift::output::{FileFormat, Rotating, Rotation};
use sift_capture::{Config, Direction, Placement};
use sift_pcap::{Interface, Packet, Precision};

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
    /// Keep at most SNAPLEN bytes of each packet (0: 262144, the default).
    #[arg(short = 's', long = "snapshot-length", value_name = "SNAPLEN")]
    pub snaplen: Option<u32>,
    /// Capture buffer (ring) size in KiB (default 2048).
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
}

impl LiveArgs {
    /// Whether the command line asks for live capture or the interface list.
    pub fn wanted(&self) -> bool {
        self.interface.is_some() || self.list
    }
}

/// `sift -D`.
fn list_interfaces() -> anyhow::Result<ExitCode> {
    let list = sift_capture::iface::list().context("cannot list the interfaces")?;
    let mut out = io::stdout().lock();
    for (n, i) in list.iter().enumerate() {
        let descr =
            if i.name == "any" { " (Pseudo-device that captures on all interfaces)" } else { "" };
        writeln!(out, "{}.{}{descr} {}", n + 1, i.name, i.flags_text())?;
    }
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

/// Packets printed one line each, flushed line by line.
struct Printing {
    out: io::StdoutLock<'static>,
    printer: PacketPrinter,
}

impl Sink for Printing {
    type Error = io::Error;

    fn take(&mut self, packet: &Packet<'_>) -> io::Result<Taken> {
        self.printer.print(&mut self.out, packet)?;
        self.out.flush()?;
        Ok(Taken::Yes)
    }
}

/// Runs live capture (or `-D`).
pub fn run(live: LiveArgs, args: DumpArgs) -> anyhow::Result<ExitCode> {
    if live.list {
        return list_interfaces();
    }
    let Some(interface) = live.interface.clone() else { bail!("no interface given (-i)") };
    if !args.read.is_empty() {
        bail!("-r and -i cannot be used together");
    }
    if args.write.is_none()
        && (live.file_size.is_some() || live.rotate_seconds.is_some() || live.file_count.is_some())
    {
        bail!("-C, -G and -W need an output file (-w)");
    }
    // Privileges first, before any file is created.
    sift_capture::check_privileges()?;

    let snaplen = match live.snaplen {
        None | Some(0) => sift_capture::MAX_SNAPLEN,
        Some(s) => s.min(sift_capture::MAX_SNAPLEN),
    };
    let printing = args.write.is_none();
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
    let mut session = Session::open(cfg)?;
    let link_type = session.link_type();

    // Compile before any output exists: a bad filter leaves no file, as with tcpdump.
    let expr = crate::dump::expression(&args)?;
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    let placement = session.set_filter(expr.as_deref(), !args.no_optimize, engine)?;
    if let Placement::UserSpace { reason } = &placement {
        eprintln!("sift: warning: filtering in user space ({}): {reason}", session.user_engine());
    }

    let precision = args.precision().unwrap_or_default();
    let limits = Limits { count: args.count, fanout: live.fanout.unwrap_or(1) };
    let listening = || {
        eprintln!(
            "sift: listening on {interface}, link-type {} ({}), snapshot length {snaplen} bytes",
            link_type,
            link_type.description().unwrap_or("unknown"),
        );
    };
    match &args.write {
        Some(path) => {
            let mut iface = Interface::new(link_type, snaplen, precision.resolution());
            iface.name = Some(interface.clone());
            let format = FileFormat { pcapng: args.pcapng, precision, interface: iface };
            let rotation = Rotation {
                max_bytes: live.file_size.as_deref().map(parse_file_size).transpose()?,
                seconds: live.rotate_seconds,
                files: live.file_count,
            };
            let mut files = Rotating::new(path_text(path), format, rotation)
                .map_err(crate::dump::output_error)?;
            let stop = stop_on_signals()?;
            let outcome = session.run(&mut files, limits, stop, listening)?;
            let isb = sift_pcap::InterfaceStats {
                received: Some(outcome.stats.received),
                dropped: Some(outcome.stats.dropped),
                ..Default::default()
            };
            let finished = files.close(Some(isb)).map_err(anyhow::Error::from);
            conclude(&live, &interface, outcome, finished)
        }
        None => {
            let printer = PacketPrinter::new(&args, precision == Precision::Nano);
            let mut printing = Printing { out: io::stdout().lock(), printer };
            let stop = stop_on_signals()?;
            let outcome = session.run(&mut printing, limits, stop, listening)?;
            let finished = printing.out.flush().map_err(anyhow::Error::from);
            conclude(&live, &interface, outcome, finished)
        }
    }
}

fn stop_on_signals() -> anyhow::Result<&'static std::sync::atomic::AtomicBool> {
    sift_capture::stop_on_signals().context("cannot install the signal handlers")
}

/// tcpdump's end of a capture: the file limit, the counters, then the first error.
fn conclude<E>(
    live: &LiveArgs,
    interface: &str,
    outcome: Outcome<E>,
    finished: anyhow::Result<()>,
) -> anyhow::Result<ExitCode>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let Outcome { stats, captured, full, failure, error } = outcome;
    if let (true, Some(w)) = (full, live.file_count) {
        eprintln!("Maximum file limit reached: {w}");
    }
    eprintln!("{captured} packet{} captured", plural(captured));
    eprintln!("{} packet{} received by filter", stats.received, plural(stats.received));
    eprintln!("{} packet{} dropped by kernel", stats.dropped, plural(stats.dropped));
    if let Some(e) = failure {
        return Err(e.into());
    }
    if let Some(e) = error {
        return Err(anyhow::Error::new(e).context(format!("{interface}: capture failed")));
    }
    finished.context("writing output")?;
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
