//! `sift gen`: write a deterministic, realistic capture (sift-gen's traffic model) to a file.
//!
//! Used for benchmarks (`sift gen -c 2000000 -w big.pcap`), for trying filters on traffic of a
//! given link type, and by tests. The same seed and options always give the same bytes.
//! `sift gen --filters N [--seed S]` prints a realistic filter set instead (per-host,
//! per-subnet, per-port, per-VLAN filters as `NAME EXPR` lines, `sift_gen::filters`), for
//! `--split` and `bench --filters`.

use std::process::ExitCode;

use std::io::Write;

use anyhow::{Context, bail};
use sift_gen::{Config, Generator, Link};
use sift_pcap::{Interface, PcapWriter, PcapngWriter, Precision, Timestamp};

/// Options of `sift gen`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// Write the capture to FILE (`-` for standard output).
    #[arg(short = 'w', value_name = "FILE")]
    pub write: Option<std::path::PathBuf>,
    /// Print a realistic set of N named filters (a --split file) instead of a capture, to
    /// standard output (or -w FILE).
    #[arg(long, value_name = "N")]
    pub filters: Option<usize>,
    /// Number of packets.
    #[arg(short = 'c', long = "count", default_value_t = 1000)]
    pub count: u64,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Link type: EN10MB, LINUX_SLL, LINUX_SLL2, RAW, NULL or LOOP.
    #[arg(short = 'y', long = "linktype", default_value = "EN10MB")]
    pub link: String,
    /// Snapshot length: frames are cut to it.
    #[arg(short = 's', long, default_value_t = 262_144)]
    pub snaplen: u32,
    /// Fraction of frames additionally cut short (caplen < wire length).
    #[arg(long, default_value_t = 0.0)]
    pub truncate: f64,
    /// Fraction of frames deliberately malformed.
    #[arg(long, default_value_t = 0.0)]
    pub malformed: f64,
    /// Write pcapng instead of pcap.
    #[arg(long)]
    pub pcapng: bool,
    /// Timestamp precision of the file: micro (default) or nano.
    #[arg(long = "time-stamp-precision", value_parser = ["micro", "nano"], default_value = "micro")]
    pub precision: String,
}

fn link_named(name: &str) -> anyhow::Result<Link> {
    for link in Link::ALL {
        if link.name().eq_ignore_ascii_case(name) {
            return Ok(link);
        }
    }
    let known: Vec<&str> = Link::ALL.iter().map(|l| l.name()).collect();
    bail!("sift gen cannot generate link type '{name}' (it can: {})", known.join(", "))
}

/// Runs `sift gen`.
pub fn run(args: GenArgs) -> anyhow::Result<ExitCode> {
    if let Some(n) = args.filters {
        let text = sift_gen::filters::realistic_file(n, args.seed);
        match &args.write {
            None => crate::console::print(text)?,
            Some(p) if p.as_os_str() == "-" => crate::console::print(text)?,
            Some(p) => std::fs::write(p, text).with_context(|| p.display().to_string())?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(write) = &args.write else {
        bail!("give the capture's file with -w FILE (`-` for standard output)");
    };
    let link = link_named(&args.link)?;
    if !(0.0..=1.0).contains(&args.truncate) || !(0.0..=1.0).contains(&args.malformed) {
        bail!("--truncate and --malformed are fractions between 0 and 1");
    }
    let config = Config {
        snaplen: args.snaplen,
        truncate: args.truncate,
        malformed: args.malformed,
        ..Config::with_link(link)
    };
    let mut generator = Generator::new(args.seed, config);
    let link_type = generator.link_type();
    let precision = if args.precision == "nano" { Precision::Nano } else { Precision::Micro };
    let out: Box<dyn std::io::Write> = if write.as_os_str() == "-" {
        Box::new(std::io::stdout())
    } else {
        let path = write;
        Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?,
        )
    };
    let mut frame = Vec::with_capacity(2048);
    if args.pcapng {
        let mut w = PcapngWriter::new(out)?;
        let mut iface = Interface::new(link_type, args.snaplen, precision.resolution());
        iface.name = Some(format!("sift-gen-{}", link.name().to_ascii_lowercase()));
        let id = w.add_interface(&iface)?;
        for _ in 0..args.count {
            let meta = generator.next_frame(&mut frame);
            w.write(id, Timestamp::new(meta.ts_sec, meta.ts_nsec), meta.wire_len, &frame)?;
        }
        w.finish()?.flush()?;
    } else {
        let mut w = PcapWriter::new(out, link_type, 0, args.snaplen, precision)?;
        for _ in 0..args.count {
            let meta = generator.next_frame(&mut frame);
            w.write(Timestamp::new(meta.ts_sec, meta.ts_nsec), meta.wire_len, &frame)?;
        }
        w.finish()?.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
