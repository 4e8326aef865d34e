//! Filters a capture into a new pcap file, as `tcpdump -r IN -w OUT EXPR` does.
//!
//! From the top of the repository:
//!
//! ```sh
//! cargo run -p sift --example filter -- samples/http.pcap 'tcp port 80' /tmp/http80.pcap
//! ```
//!
//! prints `24 of 24 packets written to /tmp/http80.pcap`. The expression is compiled for the
//! capture's link type and runs in sift's JIT; a mistake in it is shown with a caret under the
//! offending text.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, expr, output] = args.as_slice() else {
        eprintln!("usage: filter CAPTURE EXPRESSION OUTPUT.pcap");
        return ExitCode::from(2);
    };
    match filter(input, expr, output) {
        Ok(saved) => {
            println!("{} of {} packets written to {output}", saved.written, saved.read);
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Each error says what failed; its sources say why (`/x.pcap: byte 0: read error:
            // No such file or directory`).
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                text = format!("{text}: {cause}");
                source = cause.source();
            }
            eprintln!("filter: {text}");
            ExitCode::from(1)
        }
    }
}

fn filter(input: &str, expr: &str, output: &str) -> Result<sift::Saved, sift::Error> {
    sift::Capture::open(input)?.filter(expr)?.save(output)
}
