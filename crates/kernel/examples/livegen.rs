//! Sends one 60-byte UDP frame many times out of an interface with the kernel's live-frames
//! generator (`sift_kernel::livegen`), at full speed or paced to a rate, and prints what it
//! sent and how fast. The capture benchmark (`benches/capture-xdp.sh`) drives it; run it inside
//! the namespace of the interface.
//!
//! ```text
//! cargo run --release -p sift-kernel --example livegen -- -i IFACE [--frames N] [--rate MPPS]
//! ```
//!
//! Pacing (`--rate`): the frames go in chunks of 65,536, one test run each, and before each
//! chunk the sender sleeps until the chunk's place on the schedule. A test run costs ~16 ms of
//! set-up (the kernel's XDP dispatcher update), so a chunk leaves in one burst at the
//! generator's speed: the rate holds on average, not within a chunk. Output: `sent N frames in
//! S s (R Mpps)`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use sift_kernel::livegen::{self, LiveGen};

/// Frames per test run when paced.
const CHUNK: u32 = 65_536;

fn main() -> ExitCode {
    let mut iface = None;
    let mut frames: u32 = 2_000_000;
    let mut rate: Option<f64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{a} needs {what}"));
        let r = match a.as_str() {
            "-i" => value("an interface").map(|v| iface = Some(v)),
            "--frames" => value("a number").and_then(|v| {
                v.parse().map(|n| frames = n).map_err(|_| format!("--frames {v}: not a number"))
            }),
            "--rate" => value("Mpps").and_then(|v| match v.parse::<f64>() {
                Ok(r) if r > 0.0 => {
                    rate = Some(r);
                    Ok(())
                }
                _ => Err(format!("--rate {v}: not a positive number")),
            }),
            _ => Err(format!(
                "unknown argument {a:?}; usage: livegen -i IFACE [--frames N] [--rate MPPS]"
            )),
        };
        if let Err(e) = r {
            eprintln!("livegen: {e}");
            return ExitCode::from(2);
        }
    }
    let Some(iface) = iface else {
        eprintln!("livegen: -i IFACE is required");
        return ExitCode::from(2);
    };
    match run(&iface, frames, rate) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("livegen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(iface: &str, frames: u32, rate: Option<f64>) -> Result<(), String> {
    let ifindex = sift_sys::iface::index_of(iface).map_err(|e| format!("{iface}: {e}"))?;
    let generator = LiveGen::new(ifindex).map_err(|e| e.to_string())?;
    let frame = livegen::udp_frame(livegen::NOBODY, livegen::SENDER);
    let start = Instant::now();
    match rate {
        None => generator.send(&frame, frames, livegen::BATCH).map_err(|e| e.to_string())?,
        Some(mpps) => {
            let mut sent = 0u32;
            while sent < frames {
                let due = Duration::from_secs_f64(f64::from(sent) / (mpps * 1e6));
                if let Some(wait) = due.checked_sub(start.elapsed()) {
                    std::thread::sleep(wait);
                }
                let n = CHUNK.min(frames - sent);
                generator.send(&frame, n, livegen::BATCH).map_err(|e| e.to_string())?;
                sent += n;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("sent {frames} frames in {secs:.3} s ({:.3} Mpps)", f64::from(frames) / secs / 1e6);
    Ok(())
}
