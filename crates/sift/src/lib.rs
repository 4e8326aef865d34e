//! sift as a library: what the `sift` command does, for programs that embed it.
//!
//! The command line (`crates/cli`) parses arguments and prints; everything between (opening
//! captures, compiling a filter once per link type and running it on the chosen engine,
//! copying large files on every core, writing and rotating pcap/pcapng, capturing live,
//! timing and comparing engines) lives here, so that other front ends (Python bindings, a
//! libpcap-compatible C library) reach the same code. The modules follow a packet's way:
//!
//! * [`input`]: capture files, shell-style patterns and `-` for standard input, several inputs
//!   merged by time, behind one [`input::Source`];
//! * [`filter`]: an expression compiled once per link type ([`filter::compile`] is the one
//!   place an expression becomes a program) and run on the JIT or the interpreter;
//! * [`parallel`]: a large classic pcap file filtered on every core, with exactly the output of
//!   one thread;
//! * [`output`]: pcap and pcapng files as tcpdump writes them, and tcpdump's `-C`/`-G`/`-W`
//!   rotation;
//! * [`live`]: live capture on one socket or a fan-out group, handing packets to a
//!   [`live::Sink`];
//! * [`bench`](mod@bench) and [`diff`]: every engine timed, or compared verdict by verdict, on the same
//!   packets;
//! * [`switch`]: a software switch between AF_XDP ports by OpenFlow-style rules, with
//!   microflow and megaflow caches per queue thread; [`pf_between`]: pf between two AF_XDP
//!   ports, behind the same caches where a decision provably depends on the flow key alone;
//! * [`text`]: the files that are not captures (filters, programs, lists of expressions), read
//!   whole but bounded; [`user`]: root given up once inputs are open (`-Z`).
//!
//! [`Capture`] is the short way in. Filtering a capture into a new pcap file:
//!
//! ```
//! # fn main() -> Result<(), sift::Error> {
//! # let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/http.pcap");
//! # let dir = tempfile::tempdir().unwrap();
//! # let output = dir.path().join("web.pcap");
//! let saved = sift::Capture::open(input)?.filter("tcp port 80")?.save(&output)?;
//! assert_eq!((saved.read, saved.written), (24, 24));
//!
//! // Or one packet at a time:
//! for packet in sift::Capture::open(input)?.filter("tcp[tcpflags] & tcp-syn != 0")? {
//!     let packet = packet?;
//!     println!("{}.{:09} {} bytes", packet.timestamp.secs, packet.timestamp.nanos, packet.wire_len);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Errors are typed per module and carry what they are about (the file, the byte offset, the
//! span of the expression); [`Error`] gathers those of [`Capture`]. An error's message says
//! what failed and its [`source`](std::error::Error::source) chain says why, so print the
//! chain: [`error_line`] puts it on one line with each cause said once,
//! `in.pcap: byte 24: truncated packet record header: …`.
#![forbid(unsafe_code)]

pub mod bench;
mod capture;
pub mod diff;
pub mod filter;
pub mod input;
pub mod live;
pub mod live_xdp;
pub mod multi;
pub mod multi_bench;
pub mod output;
pub mod parallel;
pub mod pf_between;
pub mod split;
pub mod switch;
pub mod text;
pub mod user;

pub use capture::{Capture, OwnedPacket, Saved};
pub use filter::{Engine, Filter};
pub use sift_pcap::{Interface, LinkType, Packet, Timestamp};

/// Why a [`Capture`] cannot be opened, filtered or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening or reading the input.
    #[error(transparent)]
    Input(#[from] input::InputError),
    /// Compiling the filter.
    #[error(transparent)]
    Filter(#[from] filter::FilterError),
    /// Writing the output.
    #[error(transparent)]
    Output(#[from] output::OutputError),
}

/// An error and its causes on one line, joined with `: ` (as `anyhow`'s `{:#}` joins them),
/// each cause said once: a cause whose text already ends the line so far is skipped (many
/// errors put their source's text in their own message too), and so is the ` (os error N)`
/// Rust appends to system errors (`No such file or directory`, as tcpdump says it).
pub fn error_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(error);
    while let Some(e) = cause {
        let text = strip_os_error(&e.to_string());
        if !text.is_empty() && !line.ends_with(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

/// `text` without the ` (os error N)` Rust appends to system errors, wherever it appears.
fn strip_os_error(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            rest = &after[digits + 1..];
        } else {
            out.push_str(MARK);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_said_once_without_os_error_numbers() {
        let e = input::Source::open(&["/nonexistent/in.pcap"]).unwrap_err();
        assert_eq!(error_line(&e), "/nonexistent/in.pcap: No such file or directory");
        let Err(e) = sift_pcap::open(std::path::Path::new("/nonexistent")) else { panic!() };
        // sift-pcap's message holds its source's text: said once.
        assert_eq!(error_line(&e), format!("{e}").replace(" (os error 2)", ""));
        assert_eq!(strip_os_error("a (os error x) b (os error 12)"), "a (os error x) b");
    }
}
