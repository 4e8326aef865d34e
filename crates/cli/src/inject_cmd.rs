//! `sift inject -i IFACE -r FILE [--rate PPS | --topspeed] [--loop N]`: send the packets of a
//! capture on an interface (the 1987 packet filter's write path; also sift's own traffic
//! generator for tests and benchmarks).
//!
//! By default packets keep the capture's own spacing; `--rate` sends a fixed number per second
//! and `--topspeed` as fast as the interface takes them. A frame the kernel refuses (too long
//! for the MTU, too short for a link-layer header) is counted and reported, and sending goes
//! on; the summary on standard error gives packets and bytes sent, the rate, and the errors.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::console::errln;
use anyhow::{Context, bail};
use sift_pcap::LinkType;

/// Options of `sift inject`.
#[derive(Debug, clap::Args)]
pub struct InjectArgs {
    /// Send on interface IFACE.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: String,
    /// The capture whose packets are sent (pcap or pcapng).
    #[arg(short = 'r', value_name = "FILE")]
    pub read: PathBuf,
    /// Send PPS packets per second.
    #[arg(long, value_name = "PPS", conflicts_with = "topspeed")]
    pub rate: Option<f64>,
    /// Send as fast as possible.
    #[arg(long)]
    pub topspeed: bool,
    /// Send the capture N times (0: until interrupted).
    #[arg(long = "loop", value_name = "N", default_value_t = 1)]
    pub loops: u64,
    /// Bypass the interface's queueing discipline (PACKET_QDISC_BYPASS).
    #[arg(long = "qdisc-bypass")]
    pub qdisc_bypass: bool,
}

/// How many failed sends are described one by one before only being counted.
const ERRORS_SHOWN: u64 = 5;

/// Runs `sift inject`.
pub fn run(args: InjectArgs) -> anyhow::Result<ExitCode> {
    if let Some(r) = args.rate
        && !(r.is_finite() && r > 0.0)
    {
        bail!("--rate must be a positive number of packets per second");
    }
    sift_capture::check_privileges()?;
    let shown = args.read.display().to_string();
    // Check the file before touching the interface.
    drop(sift_pcap::open(&args.read).with_context(|| shown.clone())?);
    let mut injector = sift_capture::Injector::open(&args.interface, args.qdisc_bypass)?;
    let stop = sift_capture::stop_on_signals().context("cannot install the signal handlers")?;

    let start = Instant::now();
    let (mut sent, mut bytes, mut errors) = (0u64, 0u64, 0u64);
    let mut attempted = 0u64;
    let mut pass = 0u64;
    'passes: while args.loops == 0 || pass < args.loops {
        pass += 1;
        let mut reader = sift_pcap::open(&args.read).with_context(|| shown.clone())?;
        // Recorded timing: the offset of each packet from the first one of this pass.
        let pass_start = Instant::now();
        let mut first_ts: Option<sift_pcap::Timestamp> = None;
        while let Some(packet) = reader.next_packet().with_context(|| shown.clone())? {
            if stop.load(Ordering::SeqCst) {
                break 'passes;
            }
            if packet.link_type.number() != injector.link_type() {
                bail!(
                    "{shown}: packet {} has link type {} but {} takes {}",
                    attempted + 1,
                    packet.link_type,
                    args.interface,
                    LinkType::new(injector.link_type())
                );
            }
            if let Some(rate) = args.rate {
                let due = start + Duration::from_secs_f64(attempted as f64 / rate);
                sleep_until(due);
            } else if !args.topspeed {
                // Points in time (a record's odd fraction field carried into its seconds).
                let (now, first) = (
                    packet.timestamp.instant(),
                    first_ts.get_or_insert(packet.timestamp).instant(),
                );
                let gap = Duration::new(now.secs, now.nanos)
                    .saturating_sub(Duration::new(first.secs, first.nanos));
                sleep_until(pass_start + gap);
            }
            attempted += 1;
            match injector.send(packet.data) {
                Ok(()) => {
                    sent += 1;
                    bytes += packet.data.len() as u64;
                }
                Err(e) => {
                    errors += 1;
                    if errors <= ERRORS_SHOWN {
                        errln!(
                            "sift inject: packet {attempted} ({} bytes): {e}",
                            packet.data.len()
                        );
                    }
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let pps = if secs > 0.0 { sent as f64 / secs } else { 0.0 };
    errln!(
        "sift inject: sent {sent} packets ({bytes} bytes) on {} in {secs:.3} s ({pps:.0} packets/s), \
         {errors} error{}",
        args.interface,
        if errors == 1 { "" } else { "s" }
    );
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn sleep_until(due: Instant) {
    let now = Instant::now();
    if due > now {
        std::thread::sleep(due - now);
    }
}
