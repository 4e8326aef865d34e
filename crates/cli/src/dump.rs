//! The tcpdump-like default mode: read a capture, filter it, then write or print its packets.
//!
//! `sift -r FILE [-w OUT] [-c N] [-F FILE] [--engine jit|interp] [--pcapng]
//! [--time-stamp-precision=nano] [EXPR]` keeps the packets the filter accepts, as
//! `tcpdump -r FILE -w OUT EXPR` does (same packets, bytes, timestamps, link type and snaplen in
//! the header), and can write pcapng, which tcpdump cannot. Without `-w` it prints one line per
//! packet. The work is the library's (`sift::input`, `sift::filter`, `sift::output`, and
//! `sift::parallel` for large files); this module decides tcpdump's order of things (compile
//! before any output exists, an output file even for an empty or damaged capture, everything
//! intact before damage written and flushed before the error) and prints its messages.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use sift::filter::Filter;
use sift::input::{InputError, Source};
use sift::output::{OutputError, Writer};
use sift_pcap::{Interface, LinkType, Packet, Precision, TsResolution};

use crate::print::PacketPrinter;

/// Options of the default mode.
#[derive(Debug, clap::Args)]
pub struct DumpArgs {
    /// Read packets from FILE (`-` for standard input). Repeat, or give a quoted pattern such
    /// as `'day*.pcap'`, to merge several files by timestamp as mergecap does.
    #[arg(short = 'r', value_name = "FILE")]
    pub read: Vec<PathBuf>,
    /// Write packets to FILE (`-` for standard output) instead of printing them.
    #[arg(short = 'w', value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// Stop after COUNT packets.
    #[arg(short = 'c', value_name = "COUNT")]
    pub count: Option<u64>,
    /// Print only the number of matching packets (as tcpdump --count).
    #[arg(long = "count")]
    pub count_only: bool,
    /// Write pcapng instead of pcap.
    #[arg(long = "pcapng")]
    pub pcapng: bool,
    /// Timestamp precision for written files and printed times: micro (default) or nano.
    #[arg(long = "time-stamp-precision", value_name = "micro|nano", value_parser = ["micro", "nano"])]
    pub precision: Option<String>,
    /// Shorthand for --time-stamp-precision=nano.
    #[arg(long = "nano", hide = true)]
    pub nano: bool,
    /// Read the filter expression from FILE (`#` starts a comment); any expression argument is
    /// then ignored, as with tcpdump.
    #[arg(short = 'F', value_name = "FILE")]
    pub filter_file: Option<PathBuf>,
    /// Do not resolve names (accepted for tcpdump compatibility: sift prints numbers only).
    #[arg(short = 'n', action = clap::ArgAction::Count)]
    pub numeric: u8,
    /// Print the link-layer header on each line.
    #[arg(short = 'e')]
    pub link_header: bool,
    /// Quiet: less protocol information.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Timestamps: -t none, -tt epoch seconds, -ttt delta from the previous packet, -tttt date
    /// and time, -ttttt delta from the first packet.
    #[arg(short = 't', action = clap::ArgAction::Count)]
    pub time: u8,
    /// Hex dump of each packet (-xx: with the link-layer header).
    #[arg(short = 'x', action = clap::ArgAction::Count)]
    pub hex: u8,
    /// Hex and ASCII dump of each packet (-XX: with the link-layer header).
    #[arg(short = 'X', action = clap::ArgAction::Count)]
    pub hex_ascii: u8,
    /// More detail (-v, -vv).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Absolute TCP sequence numbers.
    #[arg(short = 'S')]
    pub absolute_seq: bool,
    /// One JSON object per packet instead of text (schema: crates/decode/schema).
    #[arg(long)]
    pub json: bool,
    /// Do not run the optimizer on the compiled filter (as tcpdump -O). Verdicts are the same
    /// either way: sift's optimizer never changes what a program returns.
    #[arg(short = 'O')]
    pub no_optimize: bool,
    /// The filter engine: `jit` (the default on x86-64) or `interp`.
    #[arg(long, value_enum)]
    pub engine: Option<crate::bpf_cmd::EngineArg>,
    /// A filter expression (pcap-filter syntax).
    #[arg(value_name = "EXPRESSION", trailing_var_arg = true, allow_hyphen_values = true)]
    pub expression: Vec<String>,
}

impl DumpArgs {
    pub(crate) fn precision(&self) -> Option<Precision> {
        if self.nano {
            return Some(Precision::Nano);
        }
        match self.precision.as_deref() {
            Some("nano") => Some(Precision::Nano),
            Some(_) => Some(Precision::Micro),
            None => None,
        }
    }
}

/// Where packets go.
enum Sink {
    File(Writer<Box<dyn Write + Send>>),
    Print { out: io::BufWriter<io::Stdout>, printer: Box<PacketPrinter> },
}

/// The filter expression from `-F` (comments stripped) or the arguments (joined with spaces).
pub(crate) fn expression(args: &DumpArgs) -> anyhow::Result<Option<String>> {
    let text = match &args.filter_file {
        Some(path) => {
            let raw = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the filter file", path.display()))?;
            sift_filter::strip_comments(&raw)
        }
        None => args.expression.join(" "),
    };
    Ok(if text.trim().is_empty() { None } else { Some(text) })
}

/// The `-r` arguments as files (patterns expanded).
fn inputs(read: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    sift::input::expand(read).map_err(|e| match e {
        InputError::StdinWithOthers => {
            anyhow!("standard input (-r -) cannot be merged with other files")
        }
        e => e.into(),
    })
}

/// An output error in the command line's words (naming the option that helps).
pub(crate) fn output_error(e: OutputError) -> anyhow::Error {
    match e {
        OutputError::LinkTypeMismatch { packet, output } => anyhow!(
            "this packet has link type {packet} but the pcap output holds {output} only; \
             write pcapng (--pcapng) to keep captures with several link types"
        ),
        OutputError::RotateStdout => {
            anyhow!("-C and -G need a file name for -w, not standard output")
        }
        e => e.into(),
    }
}

/// Runs the default mode.
pub fn run(args: DumpArgs) -> anyhow::Result<ExitCode> {
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    let mut filter = expression(&args)?
        .map(|expr| Filter::new(expr).with_engine(engine).with_optimizer(!args.no_optimize));
    if args.read.is_empty() {
        bail!("no input: give a capture file with -r FILE or an interface with -i IFACE");
    }
    if args.count_only && args.write.is_some() {
        bail!("--count prints the number of matching packets; it cannot be combined with -w");
    }
    let inputs = inputs(&args.read)?;
    let mut source = Source::open(&inputs)?;
    let precision = args.precision();
    eprintln!("{}", source.describe());

    // Like tcpdump, compile before writing anything, so a bad expression leaves no output file.
    if let (Some(f), Some(first)) = (filter.as_mut(), source.interfaces().first()) {
        f.prepare(first)?;
    }
    let mut progress = crate::progress::Progress::new(source.progress().1);
    if let Some(done) =
        run_parallel(&args, &inputs, &source, filter.as_mut(), precision, &mut progress)?
    {
        return done;
    }
    let mut sink: Option<Sink> = None;
    // A filter that cannot be compiled leaves no output, as with tcpdump; a damaged capture
    // still gets its (possibly empty) output file.
    let mut filter_failed = false;
    let (mut read, mut copied): (u64, u64) = (0, 0);
    let limit = args.count.unwrap_or(u64::MAX);
    // The loop ends at the end of the input, at the count, or at the first error; in every case
    // what was written so far is flushed below before the error is reported.
    let outcome: anyhow::Result<()> = loop {
        if copied >= limit {
            break Ok(());
        }
        if read & 0xffff == 0 && read > 0 {
            progress.update(source.progress().0, copied);
        }
        let (packet, interfaces) = match source.next_packet() {
            Ok(Some(next)) => next,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.into()),
        };
        read += 1;
        if let Some(f) = filter.as_mut() {
            match f.accepts(&packet, &interfaces[packet.interface as usize]) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    filter_failed = true;
                    break Err(e.into());
                }
            }
        }
        if args.count_only {
            copied += 1;
            continue;
        }
        if sink.is_none() {
            match open_sink(&args, precision, &interfaces[packet.interface as usize]) {
                Ok(s) => sink = Some(s),
                Err(e) => break Err(e),
            }
        }
        let Some(s) = sink.as_mut() else { unreachable!("opened above") };
        if let Err(e) = emit(s, &packet, interfaces) {
            break Err(e.context(format!("packet {} (byte {})", copied + 1, packet.offset)));
        }
        copied += 1;
    };
    progress.clear();
    // A capture with no packets still gets a valid output file, as with tcpdump.
    if sink.is_none() && args.write.is_some() && !filter_failed {
        let first = source.interfaces().first().cloned();
        let fallback = first.unwrap_or_else(|| {
            Interface::new(LinkType::EN10MB, sift_pcap::MAX_CAPLEN, TsResolution::MICRO)
        });
        sink = Some(open_sink(&args, precision, &fallback)?);
    }
    let finished = sink.map(finish).unwrap_or(Ok(()));
    let engine = filter.as_ref().map(Filter::engine_name);
    conclude(&args, engine, read, copied, &source.clipped(), outcome, finished, filter_failed)
}

/// The end of a run, sequential or parallel: warnings, the count or summary, and the exit
/// status (a closed pipe on standard output is a normal end, as for tcpdump).
#[allow(clippy::too_many_arguments)]
fn conclude(
    args: &DumpArgs,
    engine: Option<&str>,
    read: u64,
    copied: u64,
    clipped: &[(String, sift_pcap::ClippedRecords)],
    outcome: anyhow::Result<()>,
    finished: anyhow::Result<()>,
    filter_failed: bool,
) -> anyhow::Result<ExitCode> {
    for (shown, clipped) in clipped {
        if let Some(first) = clipped.first_offset {
            eprintln!(
                "sift: warning: {shown}: {} record(s) held more bytes than the snapshot length \
                 (first at byte {first}); delivered cut to the snapshot length, as libpcap does",
                clipped.count
            );
        }
    }
    if args.count_only && !filter_failed {
        // tcpdump --count: the number of matching packets, on standard output.
        println!("{copied} packet{}", if copied == 1 { "" } else { "s" });
    } else if args.write.is_some() && outcome.is_ok() {
        eprintln!(
            "{read} packet{} read, {copied} written{}",
            if read == 1 { "" } else { "s" },
            engine.map(|e| format!(" (filter: {e})")).unwrap_or_default()
        );
    }
    for result in [outcome, finished.context("writing output")] {
        if let Err(e) = result {
            if e.chain().any(sift::output::is_broken_pipe) {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(e);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The parallel path ([`sift::parallel`]) for one large classic pcap file, when the output
/// allows it (pcap, `--count`, or printing), there is no `-c`, and there are several cores.
/// `None`: take the sequential path.
fn run_parallel(
    args: &DumpArgs,
    inputs: &[PathBuf],
    source: &Source,
    filter: Option<&mut Filter>,
    precision: Option<Precision>,
    progress: &mut crate::progress::Progress,
) -> anyhow::Result<Option<anyhow::Result<ExitCode>>> {
    let threads = sift::parallel::threads();
    if inputs.len() != 1 || args.count.is_some() || args.pcapng || threads < 2 {
        return Ok(None);
    }
    let Some(file) = source.pcap_bytes() else { return Ok(None) };
    if !sift::parallel::worth_splitting(&file) {
        return Ok(None);
    }
    let Some(iface) = source.interfaces().first().cloned() else { return Ok(None) };
    let compiled = match filter {
        Some(f) => Some(f.prepare(&iface)?),
        None => None,
    };
    let engine = compiled.map(|c| c.engine_name());
    let shown = inputs[0].display().to_string();
    let mut sink = if args.count_only { None } else { Some(open_sink(args, precision, &iface)?) };
    let update = |at, kept| progress.update(at, kept);
    let (totals, outcome) = match sink.as_mut() {
        None => sift::parallel::count(file, threads, compiled, update),
        Some(Sink::File(writer)) => match writer.pcap_writer() {
            Some(pcap) => sift::parallel::copy(file, threads, compiled, pcap, update),
            None => return Ok(None),
        },
        // Printing keeps state across packets (relative TCP sequence numbers, time deltas), so
        // this thread prints the kept packets, in order.
        Some(Sink::Print { out, printer }) => {
            let print = |p: &Packet<'_>| printer.print(out, p);
            sift::parallel::for_each(file, threads, compiled, iface.link_type, print, update)
        }
    };
    progress.clear();
    let outcome = outcome.map_err(|e| anyhow::Error::new(e).context(shown.clone()));
    let finished = sink.map(finish).unwrap_or(Ok(()));
    let clipped = vec![(shown, totals.clipped)];
    Ok(Some(conclude(args, engine, totals.read, totals.kept, &clipped, outcome, finished, false)))
}

fn open_sink(
    args: &DumpArgs,
    precision: Option<Precision>,
    first: &Interface,
) -> anyhow::Result<Sink> {
    let Some(path) = &args.write else {
        let printer = Box::new(PacketPrinter::new(args, precision == Some(Precision::Nano)));
        return Ok(Sink::Print {
            out: io::BufWriter::with_capacity(1 << 16, io::stdout()),
            printer,
        });
    };
    let out = sift::output::create(path)?;
    let writer = if args.pcapng {
        Writer::pcapng(out, precision.map(Precision::resolution))?
    } else {
        Writer::pcap(out, first, precision.unwrap_or_default())?
    };
    Ok(Sink::File(writer))
}

fn emit(sink: &mut Sink, packet: &Packet<'_>, interfaces: &[Interface]) -> anyhow::Result<()> {
    match sink {
        Sink::File(writer) => writer.write(packet, interfaces).map_err(output_error),
        Sink::Print { out, printer } => Ok(printer.print(out, packet)?),
    }
}

fn finish(sink: Sink) -> anyhow::Result<()> {
    match sink {
        Sink::File(writer) => drop(writer.finish()?),
        Sink::Print { mut out, .. } => out.flush()?,
    }
    Ok(())
}
