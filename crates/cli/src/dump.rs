//! The tcpdump-like default mode: read a capture, filter it, then write or print its packets.
//!
//! `sift -r FILE [-w OUT [--print]] [-c N] [-F FILE] [--engine jit|interp] [--pcapng] [-U]
//! [--time-stamp-precision=nano] [printing options] [EXPR]` keeps the packets the filter
//! accepts, as `tcpdump -r FILE -w OUT EXPR` does (same packets, bytes, timestamps, link type
//! and snaplen in the header), and can write pcapng, which tcpdump cannot. Without `-w` (or
//! with `--print`) it prints one line per packet (`-l`: each written out at once). The work is
//! the library's (`sift::input`, `sift::filter`, `sift::output`, and `sift::parallel` for
//! large files); this module decides tcpdump's order of things (compile before any output
//! exists, root given up (`-Z`) before the output is created, an output file even for an
//! empty or damaged capture, everything intact before damage written and flushed before the
//! error), checks what tcpdump checks (`-y`, `-T`, `-f`), and prints its messages; write
//! errors name the file (or standard output).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use sift::filter::{BATCH_PACKETS, Filter};
use sift::input::{InputError, Source};
use sift::output::{OutputError, Writer};
use sift_pcap::{Interface, LinkType, Packet, Precision, TsResolution};

use crate::console::{errln, outln};
use crate::print::PacketPrinter;

/// Options of the default mode.
#[derive(Debug, clap::Args)]
pub struct DumpArgs {
    /// Read packets from FILE (`-` for standard input). Repeat, or give a quoted pattern such
    /// as `'day*.pcap'`, to merge several files by timestamp as mergecap does.
    #[arg(short = 'r', value_name = "FILE", allow_hyphen_values = true)]
    pub read: Vec<PathBuf>,
    /// Write packets to FILE (`-` for standard output) instead of printing them.
    #[arg(short = 'w', value_name = "FILE", allow_hyphen_values = true)]
    pub write: Option<PathBuf>,
    /// Also print the packets while writing them with -w.
    #[arg(long = "print")]
    pub print: bool,
    /// Stop after COUNT packets.
    #[arg(short = 'c', value_name = "COUNT", value_parser = parse_count, allow_hyphen_values = true)]
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
    /// Shorthand for --time-stamp-precision=micro.
    #[arg(long = "micro")]
    pub micro: bool,
    /// Shorthand for --time-stamp-precision=nano.
    #[arg(long = "nano")]
    pub nano: bool,
    /// Read the filter expression from FILE (`#` starts a comment); any expression argument is
    /// then ignored, as with tcpdump.
    #[arg(short = 'F', value_name = "FILE", allow_hyphen_values = true)]
    pub filter_file: Option<PathBuf>,
    /// Do not resolve names (accepted for tcpdump compatibility: sift prints numbers only; so
    /// are -N, -a and -f).
    #[arg(short = 'n', action = clap::ArgAction::Count)]
    pub numeric: u8,
    /// Accepted for tcpdump compatibility (no domain names are printed).
    #[arg(short = 'N', hide = true)]
    pub no_domains: bool,
    /// Accepted for tcpdump compatibility (no names are printed).
    #[arg(short = 'a', hide = true)]
    pub names: bool,
    /// Accepted for tcpdump compatibility (addresses are always printed as numbers).
    #[arg(short = 'f', hide = true)]
    pub foreign: bool,
    /// Print the link-layer header on each line.
    #[arg(short = 'e')]
    pub link_header: bool,
    /// Quiet: less protocol information.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Timestamps: -t none, -tt epoch seconds, -ttt delta from the previous packet, -tttt date
    /// and time, -ttttt delta from the first packet. The default and -tttt are in the local
    /// time zone (TZ), as tcpdump's.
    #[arg(short = 't', action = clap::ArgAction::Count)]
    pub time: u8,
    /// Hex dump of each packet (-xx: with the link-layer header).
    #[arg(short = 'x', action = clap::ArgAction::Count)]
    pub hex: u8,
    /// Hex and ASCII dump of each packet (-XX: with the link-layer header).
    #[arg(short = 'X', action = clap::ArgAction::Count)]
    pub hex_ascii: u8,
    /// Each packet as ASCII text (-AA: with the link-layer header).
    #[arg(short = 'A', action = clap::ArgAction::Count)]
    pub ascii: u8,
    /// Number the printed packets.
    #[arg(short = '#', long = "number")]
    pub number: bool,
    /// More detail (-v, -vv).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Absolute TCP sequence numbers.
    #[arg(short = 'S', long = "absolute-tcp-sequence-numbers")]
    pub absolute_seq: bool,
    /// Do not verify IP, TCP and UDP checksums (-v prints nothing about them).
    #[arg(short = 'K', long = "dont-verify-checksums")]
    pub skip_checksums: bool,
    /// Read transport payloads as TYPE whatever their ports: domain or vxlan (as tcpdump:
    /// every UDP payload; TCP payloads as DNS for domain, else not at all).
    #[arg(short = 'T', value_name = "TYPE", allow_hyphen_values = true)]
    pub packet_type: Option<String>,
    /// Line-buffered output: each printed packet is written out at once.
    #[arg(short = 'l')]
    pub line_buffered: bool,
    /// Packet-buffered output: with -w, each packet is written out at once.
    #[arg(short = 'U', long = "packet-buffered")]
    pub packet_buffered: bool,
    /// The link type: of the live capture (as tcpdump, -i any: LINUX_SLL2 or LINUX_SLL; other
    /// interfaces have one), of the program -d prints without -r or -i. Ignored when
    /// reading files, as tcpdump does.
    #[arg(short = 'y', long = "linktype", value_name = "TYPE", allow_hyphen_values = true)]
    pub link_type: Option<String>,
    /// Print the compiled filter and exit (-d listing, -dd C array, -ddd decimal), for the
    /// link type of the file (-r), the interface (-i), -y, or else Ethernet.
    #[arg(short = 'd', action = clap::ArgAction::Count)]
    pub dump_program: u8,
    /// One JSON object per packet instead of text (schema: crates/decode/schema).
    #[arg(long)]
    pub json: bool,
    /// Do not run the optimizer on the compiled filter (as tcpdump -O). Verdicts are the same
    /// either way: sift's optimizer never changes what a program returns.
    #[arg(short = 'O', long = "no-optimize")]
    pub no_optimize: bool,
    /// The filter engine: `jit` (the default on x86-64) or `interp`.
    #[arg(long, value_enum)]
    pub engine: Option<crate::bpf_cmd::EngineArg>,
    /// After opening the capture and the output, run as USER (and USER's group); output files
    /// are made USER's. Needs root.
    #[arg(
        short = 'Z',
        long = "relinquish-privileges",
        value_name = "USER",
        allow_hyphen_values = true
    )]
    pub user: Option<String>,
    /// Split the packets by the named filters of FILTERS (one `NAME [priority N] [continue]
    /// EXPR` a line): each packet decided once, each filter's packets written to its own file
    /// (-w with one `%s` for the name), or counted.
    #[arg(long = "split", value_name = "FILTERS")]
    pub split: Option<PathBuf>,
    /// With --split: each packet goes to the first filter that matches it, in priority order
    /// (and to the `continue` filters before it), as CSPF delivered packets.
    #[arg(long = "first")]
    pub first: bool,
    /// A filter expression (pcap-filter syntax).
    #[arg(value_name = "EXPRESSION", trailing_var_arg = true, allow_hyphen_values = true)]
    pub expression: Vec<std::ffi::OsString>,
}

/// `-c` as tcpdump takes it: a positive number.
fn parse_count(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("invalid packet count {text}")),
    }
}

impl DumpArgs {
    pub(crate) fn precision(&self) -> Option<Precision> {
        if self.nano {
            return Some(Precision::Nano);
        }
        if self.micro {
            return Some(Precision::Micro);
        }
        match self.precision.as_deref() {
            Some("nano") => Some(Precision::Nano),
            Some(_) => Some(Precision::Micro),
            None => None,
        }
    }
}

/// Where packets go: a file (`-w`), printed lines, or both (`-w` with `--print`).
struct Sink {
    file: Option<OutFile>,
    print: Option<Printing>,
    /// `-U`: each packet written out at once.
    packet_buffered: bool,
}

/// The `-w` file.
struct OutFile {
    writer: Writer<Box<dyn Write + Send>>,
    /// Its name in messages.
    shown: String,
}

/// Printed packets.
struct Printing {
    out: io::BufWriter<io::Stdout>,
    printer: Box<PacketPrinter>,
    /// `-l`: each line written out at once.
    line_buffered: bool,
}

impl Printing {
    fn print(&mut self, packet: &Packet<'_>) -> io::Result<()> {
        self.printer.print(&mut self.out, packet)?;
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }
}

/// The filter expression from `-F` (comments stripped) or the arguments (joined with spaces;
/// bytes that are not UTF-8 become U+FFFD, which the compiler then points at).
pub(crate) fn expression(args: &DumpArgs) -> anyhow::Result<Option<String>> {
    let text = match &args.filter_file {
        Some(path) => sift::filter::read_file(path)?,
        None => {
            let words: Vec<String> =
                args.expression.iter().map(|w| w.to_string_lossy().into_owned()).collect();
            words.join(" ")
        }
    };
    Ok(if text.trim().is_empty() { None } else { Some(text) })
}

/// The `-r` arguments as files (patterns expanded).
pub(crate) fn inputs(read: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
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

/// An error writing the file `shown`: named after it, unless the error names it already.
pub(crate) fn file_error(e: OutputError, shown: &str) -> anyhow::Error {
    match e {
        OutputError::Io(_) | OutputError::Write(_) => {
            anyhow::Error::new(e).context(shown.to_owned())
        }
        e => output_error(e),
    }
}

/// `-y` as tcpdump checks it when reading files (where it is then ignored): a link type name.
pub(crate) fn link_type_arg(name: &str) -> anyhow::Result<LinkType> {
    LinkType::from_name(name).ok_or_else(|| anyhow!("invalid data link type {name}"))
}

/// `-T`: the packet types tcpdump knows, of which sift decodes `domain` and `vxlan`.
pub(crate) fn packet_type(args: &DumpArgs) -> anyhow::Result<Option<sift_decode::PacketType>> {
    /// tcpdump 4.99's `-T` types.
    const TCPDUMP: &[&str] = &[
        "aodv",
        "carp",
        "cnfp",
        "domain",
        "lmp",
        "pgm",
        "pgm_zmtp1",
        "ptp",
        "radius",
        "resp",
        "rpc",
        "rtcp",
        "rtp",
        "snmp",
        "someip",
        "tftp",
        "vat",
        "vxlan",
        "wb",
        "zmtp1",
    ];
    let Some(name) = &args.packet_type else { return Ok(None) };
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "domain" => Ok(Some(sift_decode::PacketType::Domain)),
        "vxlan" => Ok(Some(sift_decode::PacketType::Vxlan)),
        known if TCPDUMP.contains(&known) => {
            bail!("-T {name}: sift does not decode this packet type (it decodes: domain, vxlan)")
        }
        _ => bail!("unknown packet type `{name}'"),
    }
}

/// Checks what the printing options ask for before anything is opened.
pub(crate) fn check_printing(args: &DumpArgs) -> anyhow::Result<()> {
    if packet_type(args)?.is_some() && args.json {
        bail!("-T applies to printed text, not to --json");
    }
    Ok(())
}

/// Runs the default mode.
pub fn run(args: DumpArgs, live: &crate::live::LiveArgs) -> anyhow::Result<ExitCode> {
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    check_printing(&args)?;
    if let Some(name) = &args.link_type {
        // Checked, then ignored: a file has its own link type (as tcpdump).
        link_type_arg(name)?;
    }
    let mut filter = expression(&args)?
        .map(|expr| Filter::new(expr).with_engine(engine).with_optimizer(!args.no_optimize));
    if args.read.is_empty() {
        bail!("no input: give a capture file with -r FILE or an interface with -i IFACE");
    }
    if args.foreign {
        bail!("-f can not be used with -V or -r");
    }
    if args.count_only && args.write.is_some() {
        bail!("--count prints the number of matching packets; it cannot be combined with -w");
    }
    if live.file_size.is_some() || live.rotate_seconds.is_some() || live.file_count.is_some() {
        bail!(
            "-C, -G and -W rotate the files of a live capture (-i); sift does not rotate when reading files"
        );
    }
    let inputs = inputs(&args.read)?;
    if let Some(out) = &args.write {
        for input in &inputs {
            if sift_pcap::same_file(input, out).unwrap_or(false) {
                bail!(
                    "{}: the output is the input file (-r and -w name the same file); \
                     nothing was written",
                    out.display()
                );
            }
        }
    }
    let mut source = Source::open(&inputs)?;
    let precision = args.precision();
    errln!("{}", source.describe());
    // As tcpdump: root is given up once the inputs are open, before any output exists.
    if let Some(user) = &args.user {
        sift::user::relinquish(user)?;
    }

    // Like tcpdump, compile before writing anything, so a bad expression leaves no output file.
    if let (Some(f), Some(first)) = (filter.as_mut(), source.interfaces().first()) {
        f.prepare(first)?;
    }
    let printing = !args.count_only && (args.write.is_none() || args.print);
    let mut progress = crate::progress::Progress::new(source.progress().1, printing);
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
    let mut verdicts = Vec::new();
    let mut next_progress = 0x10000;
    // Packets are read and filtered a batch at a time (one at a time from a pipe or a merge:
    // `Source::next_batch`), then handled one by one in order. The loop ends at the end of the
    // input, at the count, or at the first error; in every case what was written so far is
    // flushed below before the error is reported.
    let outcome: anyhow::Result<()> = 'read: loop {
        if copied >= limit {
            break Ok(());
        }
        if read >= next_progress {
            progress.update(source.progress().0, copied);
            next_progress = read + 0x10000;
        }
        // No more packets than the count still needs: nothing is read past the last one.
        let want = usize::try_from(limit - copied).map_or(BATCH_PACKETS, |n| n.min(BATCH_PACKETS));
        let batch = match source.next_batch(want) {
            Ok(batch) if batch.is_empty() => break Ok(()),
            Ok(batch) => batch,
            Err(e) => break Err(e.into()),
        };
        let (packets, interfaces) = (batch.packets(), batch.interfaces());
        // On a filter error, `verdicts` covers the packets before the one it is about.
        let filtered = match filter.as_mut() {
            Some(f) => f.run_batch(packets, interfaces, &mut verdicts),
            None => {
                verdicts.clear();
                verdicts.resize(packets.len(), 1);
                Ok(())
            }
        };
        for (packet, &verdict) in packets.iter().zip(&verdicts) {
            if copied >= limit {
                break 'read Ok(());
            }
            read += 1;
            if verdict == 0 {
                continue;
            }
            if args.count_only {
                copied += 1;
                continue;
            }
            if sink.is_none() {
                match open_sink(&args, precision, &interfaces[packet.interface as usize]) {
                    Ok(s) => sink = Some(s),
                    Err(e) => break 'read Err(e),
                }
            }
            let Some(s) = sink.as_mut() else { unreachable!("opened above") };
            if let Err(e) = s.emit(packet, interfaces) {
                break 'read Err(e.context(format!(
                    "packet {} (byte {})",
                    copied + 1,
                    packet.offset
                )));
            }
            copied += 1;
        }
        // Unless the count was reached first, as one packet at a time.
        if let Err(e) = filtered
            && copied < limit
        {
            filter_failed = true;
            break Err(e.into());
        }
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
    let times = sink.as_ref().and_then(Sink::changed_times);
    let finished = sink.map(Sink::finish).unwrap_or(Ok(()));
    let engine = filter.as_ref().map(Filter::engine_name);
    let inputs = source.reports();
    let warnings = Warnings { inputs: &inputs, times, pcapng: args.pcapng };
    conclude(&args, engine, read, copied, warnings, outcome, finished, filter_failed)
}

/// What the readers and the writer changed or skipped, for the warnings at the end of a run
/// (each kind once, with a count and the first place).
#[derive(Clone, Copy)]
pub(crate) struct Warnings<'a> {
    /// Per input: records cut, damage skipped, values read as libpcap reads them.
    pub(crate) inputs: &'a [sift::input::InputReport],
    /// Times the output format could not hold as given (its name, and what was written).
    pub(crate) times: Option<(&'static str, sift_pcap::ChangedTimestamps)>,
    /// Whether the output is pcapng (a pcap record's odd fraction of a second is carried into
    /// the seconds there; a pcap copy keeps it as recorded, as tcpdump's does).
    pub(crate) pcapng: bool,
}

impl Warnings<'_> {
    /// Prints the warnings on standard error.
    pub(crate) fn print(&self) {
        for input in self.inputs {
            let shown = &input.shown;
            if let Some(first) = input.skipped.first_offset {
                errln!(
                    "sift: warning: {shown}: {} damaged block(s) skipped (first at byte {first}), \
                     as libpcap skips them",
                    input.skipped.count
                );
            }
            if let Some(first) = input.clipped.first_offset {
                errln!(
                    "sift: warning: {shown}: {} record(s) held more bytes than the snapshot length \
                     (first at byte {first}); delivered cut to the snapshot length, as libpcap does",
                    input.clipped.count
                );
            }
            let adjusted = &input.adjustments;
            if let Some(first) = adjusted.first_snaplen {
                errln!(
                    "sift: warning: {shown}: {} bogus snapshot length(s) (first {first}) read as \
                     the link type's largest, as libpcap reads them",
                    adjusted.snaplens
                );
            }
            if let (Some(first), true) = (adjusted.first_odd_fraction, self.pcapng) {
                errln!(
                    "sift: warning: {shown}: {} record(s) with a fraction of a second of a second \
                     or more (first at byte {first}); written to pcapng as the time they stand for",
                    adjusted.odd_fractions
                );
            }
        }
        if let Some((format, changed)) = self.times
            && let Some(first) = changed.first
        {
            let how = if format == "pcap" {
                "written modulo 2^32 seconds, as tcpdump writes them"
            } else {
                "written as the nearest time pcapng can count"
            };
            errln!(
                "sift: warning: {} packet(s) with a time a {format} file cannot hold (first \
                 {}.{:09} s from 1970); {how}",
                changed.count,
                first.secs,
                first.nanos
            );
        }
    }
}

/// The end of a run, sequential or parallel: warnings, the count or summary, and the exit
/// status (a closed pipe on standard output is a normal end, as for tcpdump: `main` sees to
/// it).
#[allow(clippy::too_many_arguments)]
fn conclude(
    args: &DumpArgs,
    engine: Option<&str>,
    read: u64,
    copied: u64,
    warnings: Warnings<'_>,
    outcome: anyhow::Result<()>,
    finished: anyhow::Result<()>,
    filter_failed: bool,
) -> anyhow::Result<ExitCode> {
    warnings.print();
    if args.count_only && !filter_failed {
        // tcpdump --count: the number of matching packets, on standard output.
        outln!("{copied} packet{}", if copied == 1 { "" } else { "s" })?;
    } else if args.write.is_some() && outcome.is_ok() && finished.is_ok() {
        errln!(
            "{read} packet{} read, {copied} written{}",
            if read == 1 { "" } else { "s" },
            engine.map(|e| format!(" (filter: {e})")).unwrap_or_default()
        );
    }
    outcome?;
    finished?;
    Ok(ExitCode::SUCCESS)
}

/// The parallel path ([`sift::parallel`]) for one large classic pcap file, when the output
/// allows it (pcap, `--count`, or printing, not both; no `-U`), there is no `-c`, and there are
/// several cores. `None`: take the sequential path.
fn run_parallel(
    args: &DumpArgs,
    inputs: &[PathBuf],
    source: &Source,
    filter: Option<&mut Filter>,
    precision: Option<Precision>,
    progress: &mut crate::progress::Progress,
) -> anyhow::Result<Option<anyhow::Result<ExitCode>>> {
    let threads = sift::parallel::threads();
    if inputs.len() != 1
        || args.count.is_some()
        || args.pcapng
        || args.print
        || args.packet_buffered
        || threads < 2
    {
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
        Some(Sink { file: Some(out), .. }) => match out.writer.pcap_writer() {
            Some(pcap) => sift::parallel::copy(file, threads, compiled, pcap, update),
            None => return Ok(None),
        },
        // Printing keeps state across packets (relative TCP sequence numbers, time deltas), so
        // this thread prints the kept packets, in order.
        Some(Sink { print: Some(printing), .. }) => {
            let print = |p: &Packet<'_>| printing.print(p);
            sift::parallel::for_each(file, threads, compiled, iface.link_type, print, update)
        }
        Some(Sink { file: None, print: None, .. }) => return Ok(None),
    };
    progress.clear();
    let cut = outcome.as_ref().err().and_then(|e| e.input_shrank());
    let outcome = outcome.map_err(|e| {
        let output = matches!(e, sift::parallel::ParallelError::Output(_)) && cut.is_none();
        let e = anyhow::Error::new(e);
        match (&sink, output) {
            (Some(Sink { file: Some(f), .. }), true) => e.context(f.shown.clone()),
            (Some(Sink { print: Some(_), .. }), true) => e.context("standard output"),
            _ => e.context(shown.clone()),
        }
    });
    let times = sink.as_ref().and_then(Sink::changed_times);
    let finished = sink.map(Sink::finish).unwrap_or(Ok(()));
    // The input shrank under the copy: what was written after the last record known to be the
    // input's real bytes goes (a regular file only; a pipe has been read already).
    if let (Some(complete), Some(path)) = (cut, args.write.as_ref().filter(|p| *p != "-"))
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
    {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(complete))
            .with_context(|| path.display().to_string())?;
    }
    // The readers of the threads cut the records; the source read the file header.
    let mut inputs = source.reports();
    for input in &mut inputs {
        input.clipped = totals.clipped;
    }
    let warnings = Warnings { inputs: &inputs, times, pcapng: false };
    Ok(Some(conclude(args, engine, totals.read, totals.kept, warnings, outcome, finished, false)))
}

/// The printer the options ask for (`-T` was checked by [`check_printing`]).
pub(crate) fn printer(args: &DumpArgs, nano: bool) -> PacketPrinter {
    PacketPrinter::new(args, nano, packet_type(args).ok().flatten())
}

fn open_sink(
    args: &DumpArgs,
    precision: Option<Precision>,
    first: &Interface,
) -> anyhow::Result<Sink> {
    let print = (args.write.is_none() || args.print).then(|| Printing {
        out: io::BufWriter::with_capacity(1 << 16, io::stdout()),
        printer: Box::new(printer(args, precision == Some(Precision::Nano))),
        line_buffered: args.line_buffered,
    });
    let file = match &args.write {
        None => None,
        Some(path) => {
            let shown = if path.as_os_str() == "-" {
                "standard output".to_owned()
            } else {
                path.display().to_string()
            };
            let out = sift::output::create(path)?;
            let writer = if args.pcapng {
                Writer::pcapng(out, precision.map(Precision::resolution))
            } else {
                Writer::pcap(out, first, precision.unwrap_or_default())
            }
            .map_err(|e| file_error(e, &shown))?;
            Some(OutFile { writer, shown })
        }
    };
    Ok(Sink { file, print, packet_buffered: args.packet_buffered })
}

impl Sink {
    fn emit(&mut self, packet: &Packet<'_>, interfaces: &[Interface]) -> anyhow::Result<()> {
        if let Some(f) = self.file.as_mut() {
            let mut written = f.writer.write(packet, interfaces);
            if self.packet_buffered && written.is_ok() {
                written = f.writer.flush();
            }
            written.map_err(|e| file_error(e, &f.shown))?;
        }
        if let Some(p) = self.print.as_mut() {
            p.print(packet).context("standard output")?;
        }
        Ok(())
    }

    /// Times the `-w` file could not hold as given, if any.
    fn changed_times(&self) -> Option<(&'static str, sift_pcap::ChangedTimestamps)> {
        self.file.as_ref().map(|f| f.writer.changed_times())
    }

    fn finish(self) -> anyhow::Result<()> {
        if let Some(mut p) = self.print {
            p.out.flush().context("standard output")?;
        }
        if let Some(f) = self.file {
            f.writer.finish().map_err(|e| file_error(e, &f.shown))?;
        }
        Ok(())
    }
}
