//! The tcpdump-like default mode: read a capture, filter it, then write or print its packets.
//!
//! `sift -r FILE [-w OUT] [-c N] [-F FILE] [--engine jit|interp] [--pcapng]
//! [--time-stamp-precision=nano] [EXPR]` keeps the packets the filter accepts, as
//! `tcpdump -r FILE -w OUT EXPR` does (same packets, bytes, timestamps, link type and snaplen in
//! the header), and can write pcapng, which tcpdump cannot. The expression is compiled for each
//! link type met in the file (pcapng can mix them), with the file's snapshot length as the accept
//! value, and runs in the JIT (the interpreter elsewhere, or with `--engine interp`). Without
//! `-w` it prints one line per packet. Damage in the input stops the read with an error naming the file and byte offset,
//! after every intact packet before it has been written and the output flushed.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::parallel::Encoded;
use anyhow::{Context, bail};
use sift_pcap::{Interface, LinkType, Packet, PcapWriter, PcapngWriter, Precision, TsResolution};

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
    pub engine: Option<crate::bpf_cmd::Engine>,
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

/// How packets are printed: tcpdump's text or JSON Lines, into a reused buffer.
pub(crate) struct PacketPrinter {
    kind: PrinterKind,
    buf: Vec<u8>,
}

enum PrinterKind {
    Text(sift_decode::Printer),
    Json(sift_decode::JsonWriter),
}

impl PacketPrinter {
    /// The printer the options ask for; `nano` for nanosecond timestamps.
    pub(crate) fn new(args: &DumpArgs, nano: bool) -> PacketPrinter {
        use sift_decode::{HexDump, TimeFormat};
        let kind = if args.json {
            PrinterKind::Json(sift_decode::JsonWriter::new())
        } else {
            let time = match args.time {
                0 => TimeFormat::TimeOfDay,
                1 => TimeFormat::None,
                2 => TimeFormat::Epoch,
                3 => TimeFormat::DeltaPrevious,
                4 => TimeFormat::DateTime,
                _ => TimeFormat::DeltaFirst,
            };
            let hex = match (args.hex_ascii, args.hex) {
                (0, 0) => HexDump::None,
                (0, 1) => HexDump::Hex,
                (0, _) => HexDump::HexLink,
                (1, _) => HexDump::HexAscii,
                _ => HexDump::HexAsciiLink,
            };
            PrinterKind::Text(sift_decode::Printer::new(sift_decode::Options {
                link_header: args.link_header,
                quiet: args.quiet,
                time,
                nano,
                hex,
                verbose: args.verbose,
                absolute_seq: args.absolute_seq,
            }))
        };
        PacketPrinter { kind, buf: Vec::with_capacity(1 << 12) }
    }

    /// Prints one packet to `out`.
    pub(crate) fn print(&mut self, out: &mut impl Write, packet: &Packet<'_>) -> io::Result<()> {
        self.buf.clear();
        let (lt, ts, len, data) =
            (packet.link_type, packet.timestamp, packet.wire_len, packet.data);
        match &mut self.kind {
            PrinterKind::Text(p) => p.print(&mut self.buf, lt, ts, len, data),
            PrinterKind::Json(j) => j.write(&mut self.buf, lt, ts, len, data),
        }
        out.write_all(&self.buf)
    }
}

/// Where packets go.
enum Sink {
    Pcap {
        writer: PcapWriter<Box<dyn Write>>,
        link_type: LinkType,
    },
    Pcapng {
        writer: PcapngWriter<Box<dyn Write>>,
        /// How many of the reader's interfaces have an IDB in the output.
        described: usize,
        /// Packets seen per interface, written into the statistics blocks.
        received: Vec<u64>,
        /// Forced timestamp resolution (`--time-stamp-precision`), else each interface's own.
        resolution: Option<TsResolution>,
    },
    Print {
        out: io::BufWriter<io::Stdout>,
        printer: Box<PacketPrinter>,
    },
}

/// The compiled filter, per link type (a pcapng file may hold several).
struct Filters {
    expr: String,
    engine: Option<crate::bpf_cmd::Engine>,
    /// Whether to run sift's optimizer (tcpdump's default; `-O` turns it off).
    optimize: bool,
    resolver: sift_filter::SystemResolver,
    by_link_type: std::collections::HashMap<LinkType, sift_jit::Filter>,
}

impl Filters {
    /// The engine of the compiled filters (`jit` or `interp`).
    fn engine_name(&self) -> &'static str {
        self.by_link_type.values().next().map(|f| f.engine_name()).unwrap_or("none")
    }

    /// Whether the packet passes, compiling the expression for its link type on first use.
    fn accepts(&mut self, packet: &Packet<'_>, iface: &Interface) -> anyhow::Result<bool> {
        self.prepare(iface)?;
        Ok(self.by_link_type[&packet.link_type].run(packet.data, packet.wire_len) != 0)
    }

    /// Compiles the expression for the interface's link type, unless that was done already.
    fn prepare(&mut self, iface: &Interface) -> anyhow::Result<()> {
        if !self.by_link_type.contains_key(&iface.link_type) {
            let snaplen = if iface.snaplen == 0 { sift_pcap::MAX_CAPLEN } else { iface.snaplen };
            let prog = compile_for_file(
                &self.expr,
                &self.resolver,
                iface.link_type,
                snaplen,
                self.optimize,
            )?;
            let validated =
                sift_verify::validate(&prog, sift_verify::Mode::Libpcap).map_err(|e| {
                    anyhow::anyhow!("internal error: the compiled filter is invalid: {e}")
                })?;
            let filter = match self.engine {
                Some(crate::bpf_cmd::Engine::Interp) => sift_jit::Filter::interpreter(&validated),
                _ => sift_jit::Filter::new(&validated),
            };
            self.by_link_type.insert(iface.link_type, filter);
        }
        Ok(())
    }
}

/// Compiles `expr` as tcpdump does for a capture file of `link_type` (a LINKTYPE_ number) and
/// `snaplen`; errors are rendered with a caret under the offending span.
pub(crate) fn compile_for_file(
    expr: &str,
    resolver: &dyn sift_filter::Resolver,
    link_type: LinkType,
    snaplen: u32,
    optimize: bool,
) -> anyhow::Result<sift_insn::Program> {
    let ctx = sift_compile::Context {
        link_type: link_type.dlt(),
        snaplen,
        // tcpdump reading a file passes netmask 0 (not "unknown"), so `ip broadcast` compiles
        // and matches only 255.255.255.255 and 0.0.0.0.
        netmask: Some(0),
        linux_ext: false,
        resolver,
    };
    sift_compile::compile_program(expr, &ctx, optimize)
        .map_err(|e| anyhow::anyhow!("{}", e.render(expr).trim_end()))
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

/// Runs the default mode.
pub fn run(args: DumpArgs) -> anyhow::Result<ExitCode> {
    let mut filters = expression(&args)?.map(|expr| Filters {
        expr,
        engine: args.engine,
        optimize: !args.no_optimize,
        resolver: sift_filter::SystemResolver::new(),
        by_link_type: std::collections::HashMap::new(),
    });
    if args.read.is_empty() {
        bail!("no input: give a capture file with -r FILE or an interface with -i IFACE");
    }
    if args.count_only && args.write.is_some() {
        bail!("--count prints the number of matching packets; it cannot be combined with -w");
    }
    let inputs = crate::source::expand_inputs(&args.read)?;
    let mut source = crate::source::open(&inputs)?;
    let precision = args.precision();
    eprintln!("{}", crate::source::describe(&inputs, source.as_ref()));

    // Like tcpdump, compile before writing anything, so a bad expression leaves no output file.
    if let (Some(f), Some(first)) = (filters.as_mut(), source.interfaces().first()) {
        f.prepare(first)?;
    }
    let mut progress = crate::progress::Progress::new(source.progress().1);
    if let Some(done) =
        run_parallel(&args, &inputs, source.as_ref(), filters.as_mut(), precision, &mut progress)?
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
        let (packet, interfaces) = match source.next() {
            Ok(Some(next)) => next,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        read += 1;
        if let Some(f) = filters.as_mut() {
            match f.accepts(&packet, &interfaces[packet.interface as usize]) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    filter_failed = true;
                    break Err(e);
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
    let engine = filters.as_ref().map(Filters::engine_name);
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
            if is_broken_pipe(&e) {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(e);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The parallel path ([`crate::parallel`]) for one large classic pcap file, when the output
/// allows it (pcap, `--count`, or printing), there is no `-c`, and there are several cores.
/// `None`: take the sequential path.
fn run_parallel(
    args: &DumpArgs,
    inputs: &[PathBuf],
    source: &dyn crate::source::Source,
    filters: Option<&mut Filters>,
    precision: Option<Precision>,
    progress: &mut crate::progress::Progress,
) -> anyhow::Result<Option<anyhow::Result<ExitCode>>> {
    let threads = crate::parallel::threads();
    if inputs.len() != 1 || args.count.is_some() || args.pcapng || threads < 2 {
        return Ok(None);
    }
    let Some(file) = source.pcap_bytes() else { return Ok(None) };
    if file.len() < 2 * crate::parallel::CHUNK_BYTES {
        return Ok(None);
    }
    let Some(iface) = source.interfaces().first().cloned() else { return Ok(None) };
    let (filter, engine) = match filters {
        Some(f) => {
            f.prepare(&iface)?;
            (Some(&f.by_link_type[&iface.link_type]), Some(f.engine_name()))
        }
        None => (None, None),
    };
    let keep = |p: &Packet<'_>| filter.is_none_or(|f| f.run(p.data, p.wire_len) != 0);
    let shown = inputs[0].display().to_string();
    let mut sink = if args.count_only { None } else { Some(open_sink(args, precision, &iface)?) };
    let (totals, outcome) = match sink.as_mut() {
        None => crate::parallel::run(file, threads, &keep, &|_, _| Ok(()), |_, at, kept| {
            progress.update(at, kept);
            Ok(())
        }),
        Some(Sink::Pcap { writer, .. }) => {
            let precision = writer.precision();
            let encode = |p: &Packet<'_>, out: &mut Encoded| -> anyhow::Result<()> {
                // A record already as the output has it is copied from the mapping by the
                // kernel when written; others are encoded.
                if let Some(range) = file.verbatim(p, precision) {
                    out.verbatim(range);
                    return Ok(());
                }
                let h = PcapWriter::<Box<dyn Write>>::record_header(
                    precision,
                    p.timestamp,
                    p.wire_len,
                    p.data.len(),
                )?;
                out.buf.extend_from_slice(&h);
                out.buf.extend_from_slice(p.data);
                Ok(())
            };
            crate::parallel::run(file, threads, &keep, &encode, |out, at, kept| {
                progress.update(at, kept);
                Ok(writer.write_pieces(out.pieces(file.bytes()))?)
            })
        }
        Some(Sink::Print { out, printer }) => {
            // Printing keeps state across packets (relative TCP sequence numbers, time
            // deltas), so workers only filter: they pass the kept packets on as records, and
            // this thread prints them in order.
            let encode = |p: &Packet<'_>, out: &mut Encoded| -> anyhow::Result<()> {
                crate::parallel::encode_packet(&mut out.buf, p);
                Ok(())
            };
            crate::parallel::run(file, threads, &keep, &encode, |chunk, at, kept| {
                progress.update(at, kept);
                for p in crate::parallel::decode_packets(&chunk.buf, iface.link_type) {
                    printer.print(out, &p)?;
                }
                Ok(())
            })
        }
        Some(Sink::Pcapng { .. }) => return Ok(None),
    };
    progress.clear();
    let outcome = outcome.map_err(|e| e.context(shown.clone()));
    let finished = sink.map(finish).unwrap_or(Ok(()));
    let clipped = vec![(shown, totals.clipped)];
    Ok(Some(conclude(args, engine, totals.read, totals.kept, &clipped, outcome, finished, false)))
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<sift_pcap::WriteError>()
                .is_some_and(|w| matches!(w, sift_pcap::WriteError::Io(io) if io.kind() == io::ErrorKind::BrokenPipe))
    })
}

fn open_output(path: &PathBuf) -> anyhow::Result<Box<dyn Write>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdout()));
    }
    let file = File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    Ok(Box::new(file))
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
    let out = open_output(path)?;
    if args.pcapng {
        let writer = PcapngWriter::new(out)?;
        let resolution = precision.map(Precision::resolution);
        return Ok(Sink::Pcapng { writer, described: 0, received: Vec::new(), resolution });
    }
    let snaplen = if first.snaplen == 0 { sift_pcap::MAX_CAPLEN } else { first.snaplen };
    let writer = PcapWriter::new(
        out,
        first.link_type,
        first.link_type_ext,
        snaplen,
        precision.unwrap_or_default(),
    )?;
    Ok(Sink::Pcap { writer, link_type: first.link_type })
}

fn emit(sink: &mut Sink, packet: &Packet<'_>, interfaces: &[Interface]) -> anyhow::Result<()> {
    match sink {
        Sink::Pcap { writer, link_type } => {
            if packet.link_type != *link_type {
                bail!(
                    "this packet has link type {} but the pcap output holds {} only; \
                     write pcapng (--pcapng) to keep captures with several link types",
                    packet.link_type,
                    link_type
                );
            }
            writer.write(packet.timestamp, packet.wire_len, packet.data)?;
        }
        Sink::Pcapng { writer, described, received, resolution } => {
            // Describe every interface the reader knows, in order, so output IDs equal input
            // indices.
            while *described < interfaces.len() {
                let mut iface = interfaces[*described].clone();
                iface.ts_resolution = resolution.unwrap_or(iface.ts_resolution);
                writer.add_interface(&iface)?;
                *described += 1;
                received.push(0);
            }
            received[packet.interface as usize] += 1;
            writer.write(packet.interface, packet.timestamp, packet.wire_len, packet.data)?;
        }
        Sink::Print { out, printer } => printer.print(out, packet)?,
    }
    Ok(())
}

fn finish(sink: Sink) -> anyhow::Result<()> {
    match sink {
        Sink::Pcap { writer, .. } => {
            writer.finish()?.flush()?;
        }
        Sink::Pcapng { mut writer, received, .. } => {
            for (id, n) in received.iter().enumerate() {
                let stats = sift_pcap::InterfaceStats {
                    received: Some(*n),
                    filter_accepted: Some(*n),
                    ..Default::default()
                };
                writer.set_stats(id as u32, stats)?;
            }
            writer.finish()?.flush()?;
        }
        Sink::Print { mut out, .. } => out.flush()?,
    }
    Ok(())
}
