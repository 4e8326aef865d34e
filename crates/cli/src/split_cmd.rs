//! `sift -r CAPTURE --split FILTERS.txt [-w 'out-%s.pcap'] [--first]` and the same on a live
//! capture (`-i IFACE`): many named filters, each packet decided once.
//!
//! The work is the library's (`sift::split`: the set compiled per link type on first use and
//! decided by `sift::multi`'s decision program; one output file per filter, written as
//! `sift -r CAPTURE -w FILE EXPR` writes it). This module checks the option combinations by
//! hand (clap's `requires` breaks the getopt pass), reads captures in batches as the default
//! mode does, and prints: per-filter counts (`NAME  COUNT`, in the set's order: decreasing
//! priority, then as written) without `-w` or with `--count`, else tcpdump's summary line on
//! standard error. `-c N` counts packets read (decided), whatever they matched. Errors in the
//! set are `FILE:LINE:COLUMN: …`, a compile error with its caret.

use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use sift::filter::BATCH_PACKETS;
use sift::input::Source;
use sift::live::{Event, Limits, Session, Signals, Sink, Taken};
use sift::split::{Decide, OutputFormat, SplitError, SplitFileError, SplitOutputs, Splitter};
use sift_pcap::{Interface, LinkType, Packet, TsResolution};

use crate::console::errln;
use crate::dump::DumpArgs;
use crate::live::LiveArgs;

/// An error of the set in the command line's form (`FILE:LINE:COLUMN: …`).
fn set_error(e: SplitFileError) -> anyhow::Error {
    match e {
        SplitFileError::Set(e) => anyhow!("{e}"),
        e => e.into(),
    }
}

fn split_error(e: SplitError) -> anyhow::Error {
    match e {
        SplitError::Filters(e) => anyhow!("{e}"),
        SplitError::Output { path, source } => crate::dump::file_error(source, &path),
        e => e.into(),
    }
}

/// `--first` without `--split`.
pub fn check_first(args: &DumpArgs) -> anyhow::Result<()> {
    if args.first && args.split.is_none() {
        bail!("--first chooses how --split delivers packets; give --split FILTERS");
    }
    Ok(())
}

/// Checks the options `--split` cannot go with, then reads the set.
fn splitter(args: &DumpArgs, live: &LiveArgs) -> anyhow::Result<Splitter> {
    let Some(path) = &args.split else { bail!("no --split") };
    if !args.expression.is_empty() || args.filter_file.is_some() {
        bail!(
            "--split takes its filters from {}; give no expression (or -F) with it",
            path.display()
        );
    }
    if args.dump_program > 0 {
        bail!("-d prints one filter's program; it cannot be combined with --split");
    }
    if args.print || args.json {
        bail!("--split writes or counts each filter's packets; --print and --json do not apply");
    }
    if args.count_only && args.write.is_some() {
        bail!("--count prints each filter's number of packets; it cannot be combined with -w");
    }
    if live.file_size.is_some() || live.rotate_seconds.is_some() || live.file_count.is_some() {
        bail!("-C, -G and -W rotate one output file; --split writes one file per filter");
    }
    if live.xdp {
        bail!(
            "--xdp runs one filter at the XDP hook; --split decides in user space, over AF_PACKET \
             (leave out --xdp)"
        );
    }
    live.check_xdp()?;
    if let Some(w) = &args.write {
        sift::split::check_pattern(w).map_err(split_error)?;
    }
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    let mode = if args.first { Decide::First } else { Decide::All };
    Ok(Splitter::from_file(path)
        .map_err(set_error)?
        .with_engine(engine)
        .with_optimizer(!args.no_optimize)
        .with_mode(mode))
}

/// The output files, when `-w` asks for them.
fn outputs(args: &DumpArgs, splitter: &Splitter) -> anyhow::Result<Option<SplitOutputs>> {
    let Some(pattern) = &args.write else { return Ok(None) };
    let format = OutputFormat {
        pcapng: args.pcapng,
        precision: args.precision(),
        packet_buffered: args.packet_buffered,
    };
    Ok(Some(SplitOutputs::new(pattern, splitter.set(), format).map_err(split_error)?))
}

/// Runs `--split`, on files or live.
pub fn run(args: DumpArgs, live: LiveArgs) -> anyhow::Result<ExitCode> {
    let splitter = splitter(&args, &live)?;
    if live.interface.is_some() {
        return crate::live::run_split(live, args, splitter);
    }
    run_files(args, splitter)
}

/// Prints each filter's count, in rank order.
fn print_counts(splitter: &Splitter, counts: &[u64]) -> anyhow::Result<()> {
    let width = (0..counts.len() as u32).map(|r| splitter.name(r).len()).max().unwrap_or(0);
    let mut text = String::new();
    for (r, n) in counts.iter().enumerate() {
        text.push_str(&format!("{:<width$}  {n}\n", splitter.name(r as u32)));
    }
    crate::console::print(text)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `sift -r CAPTURE --split FILTERS [-w PATTERN]`.
fn run_files(args: DumpArgs, mut splitter: Splitter) -> anyhow::Result<ExitCode> {
    if args.read.is_empty() {
        bail!("no input: give a capture file with -r FILE or an interface with -i IFACE");
    }
    if let Some(name) = &args.link_type {
        crate::dump::link_type_arg(name)?;
    }
    let inputs = crate::dump::inputs(&args.read)?;
    let mut outputs = outputs(&args, &splitter)?;
    if let Some(outs) = &outputs {
        for (input, out) in inputs.iter().flat_map(|i| outs.paths().iter().map(move |o| (i, o))) {
            if sift_pcap::same_file(input, out).unwrap_or(false) {
                bail!(
                    "{}: the output is the input file (-r and -w name the same file); nothing \
                     was written",
                    out.display()
                );
            }
        }
    }
    let mut source = Source::open(&inputs)?;
    errln!("{}", source.describe());
    if let Some(user) = &args.user {
        sift::user::relinquish(user)?;
    }
    // Compile before any output exists: a bad filter leaves no file, as with tcpdump.
    if let Some(first) = source.interfaces().first() {
        splitter.prepare(first).map_err(|e| anyhow!("{e}"))?;
    }
    let mut progress = crate::progress::Progress::new(source.progress().1, false);
    let limit = args.count.unwrap_or(u64::MAX);
    let mut counts = vec![0u64; splitter.len()];
    let (mut read, mut matched) = (0u64, 0u64);
    let mut filter_failed = false;
    let mut next_progress = 0x10000;
    let outcome: anyhow::Result<()> = loop {
        if read >= limit {
            break Ok(());
        }
        if read >= next_progress {
            progress.update(source.progress().0, matched);
            next_progress = read + 0x10000;
        }
        let want = usize::try_from(limit - read).map_or(BATCH_PACKETS, |n| n.min(BATCH_PACKETS));
        let batch = match source.next_batch(want) {
            Ok(batch) if batch.is_empty() => break Ok(()),
            Ok(batch) => batch,
            Err(e) => break Err(e.into()),
        };
        let (packets, interfaces) = (batch.packets(), batch.interfaces());
        let mut failure: Option<SplitError> = None;
        let decided = splitter.decide_batch(packets, interfaces, |i, ranks| {
            if failure.is_some() {
                return;
            }
            matched += 1;
            for &r in ranks {
                counts[r as usize] += 1;
                if let Some(outs) = outputs.as_mut()
                    && let Err(e) = outs.write(r, &packets[i], interfaces)
                {
                    failure = Some(e);
                    return;
                }
            }
        });
        if let Some(e) = failure {
            break Err(split_error(e));
        }
        read += packets.len() as u64;
        if let Err(e) = decided {
            filter_failed = true;
            break Err(anyhow!("{e}"));
        }
    };
    progress.clear();
    // Every filter gets its file, as `sift -r … -w FILE EXPR` writes one for no packet; not
    // when the set did not compile (then no filter's file is complete).
    let finished = match outputs.take() {
        Some(outs) if !filter_failed => {
            let first = source.interfaces().first().cloned().unwrap_or_else(|| {
                Interface::new(LinkType::EN10MB, sift_pcap::MAX_CAPLEN, TsResolution::MICRO)
            });
            outs.finish(&first).map(|_| ()).map_err(split_error)
        }
        Some(outs) => outs.abandon().map_err(split_error),
        None => Ok(()),
    };
    let inputs = source.reports();
    crate::dump::Warnings { inputs: &inputs, times: None, pcapng: args.pcapng }.print();
    if (args.write.is_none() || args.count_only) && !filter_failed {
        print_counts(&splitter, &counts)?;
    } else if args.write.is_some() && outcome.is_ok() && finished.is_ok() {
        let written: u64 = counts.iter().sum();
        errln!(
            "{read} packet{} read, {matched} matched, {written} written to {} file{} (decision \
             program: {})",
            plural(read),
            counts.len(),
            plural(counts.len() as u64),
            splitter.engine_name()
        );
    }
    outcome?;
    finished?;
    Ok(ExitCode::SUCCESS)
}

/// A live capture's packets, split.
struct SplitSink {
    splitter: Splitter,
    outputs: Option<SplitOutputs>,
    counts: Vec<u64>,
    /// The capture's one interface.
    interfaces: [Interface; 1],
}

impl Sink for SplitSink {
    type Error = anyhow::Error;

    fn take(&mut self, packet: &Packet<'_>) -> anyhow::Result<Taken> {
        let ranks =
            self.splitter.decide(packet, &self.interfaces[0]).map_err(|e| anyhow!("{e}"))?;
        for &r in ranks {
            self.counts[r as usize] += 1;
            if let Some(outs) = self.outputs.as_mut() {
                outs.write(r, packet, &self.interfaces).map_err(split_error)?;
            }
        }
        Ok(Taken::Yes)
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        match self.outputs.as_mut() {
            Some(outs) => outs.flush().map_err(split_error),
            None => Ok(()),
        }
    }
}

/// What the live capture's set-up hands over (`live::run_split`): the session, opened and
/// checked as for one filter, before any filter is set.
pub struct LiveSplit<'a> {
    pub session: Session,
    pub splitter: Splitter,
    pub live: &'a LiveArgs,
    pub args: &'a DumpArgs,
    pub interface: &'a str,
    pub snaplen: u32,
}

/// `sift -i IFACE --split FILTERS [-w PATTERN] [-c N]`: every packet to user space (no
/// filter on the socket), decided there.
pub fn run_live(run: LiveSplit<'_>) -> anyhow::Result<ExitCode> {
    let LiveSplit { mut session, splitter, live, args, interface, snaplen } = run;
    let link_type = session.link_type();
    let precision = args.precision().unwrap_or_default();
    let mut iface = Interface::new(link_type, snaplen, precision.resolution());
    iface.name = Some(interface.to_string());
    let mut splitter = splitter.for_live();
    // Compile before any output exists.
    splitter.prepare(&iface).map_err(|e| anyhow!("{e}"))?;
    let engine = crate::bpf_cmd::EngineArg::chosen(args.engine);
    session.set_filter(None, false, engine)?;
    if let Some(user) = &args.user {
        sift::user::relinquish(user)?;
    }
    let outputs = outputs(args, &splitter)?;
    let n = splitter.len();
    let mut sink = SplitSink { splitter, outputs, counts: vec![0; n], interfaces: [iface] };
    let limits = Limits { count: args.count, fanout: live.fanout.unwrap_or(1) };
    let filters = sink.splitter.len();
    let events = |event: Event| match event {
        Event::Listening => errln!(
            "sift: listening on {interface}, link-type {} ({}), snapshot length {snaplen} bytes, \
             splitting by {filters} filter{}",
            link_type,
            link_type.description().unwrap_or("unknown"),
            plural(filters as u64),
        ),
        Event::Counters { captured, stats } => crate::live::counters_line(captured, stats),
        _ => {}
    };
    let signals = Signals::install().context("cannot install the signal handlers")?;
    let outcome = session.run(&mut sink, limits, signals, events)?;
    let SplitSink { splitter, outputs, counts, interfaces } = sink;
    let finished = match outputs {
        Some(outs) => outs.finish(&interfaces[0]).map(|_| ()).map_err(split_error),
        None => Ok(()),
    };
    if (args.write.is_none() || args.count_only) && outcome.failure.is_none() {
        print_counts(&splitter, &counts)?;
    }
    crate::live::conclude(live, interface, outcome, finished)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn first_needs_split() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            d: DumpArgs,
        }
        let t = T::try_parse_from(["t", "--first"]).unwrap();
        assert!(check_first(&t.d).unwrap_err().to_string().contains("--split"));
        let t = T::try_parse_from(["t", "--first", "--split", "f.txt"]).unwrap();
        assert!(check_first(&t.d).is_ok());
    }

    #[test]
    fn outputs_are_named_from_the_pattern() {
        let p = PathBuf::from("out-%s.pcap");
        assert_eq!(sift::split::output_path(&p, "web"), Some(PathBuf::from("out-web.pcap")));
        assert!(sift::split::check_pattern(&PathBuf::from("out.pcap")).is_err());
        assert!(sift::split::check_pattern(&PathBuf::from("%s-%s.pcap")).is_err());
        assert!(sift::split::check_pattern(&PathBuf::from("-")).is_err());
    }
}
