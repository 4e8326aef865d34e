//! Standard output and standard error without panics, and errors as sift prints them.
//!
//! `print!` and `println!` panic when standard output cannot be written (`> /dev/full`), and
//! `eprintln!` when standard error cannot. A command-line tool must instead stop with a message,
//! or quietly when the reader went away (`sift … | head`: a broken pipe is a normal end, see
//! [`is_broken_pipe`]). So everything sift prints goes through here (clippy's `print_stdout`
//! and `print_stderr` lints, denied in `main.rs`, keep it so): [`print`] and [`outln!`] return
//! the error, named "standard output"; [`errln!`] gives up silently, since there is nowhere
//! left to report a failure to write to standard error. Errors are printed on one line with
//! each cause once ([`render`]).

use std::io::{self, Write};

use anyhow::Context;

/// Writes `text` to standard output and flushes it; the error says "standard output".
pub(crate) fn print(text: impl AsRef<[u8]>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_ref()).and_then(|()| out.flush()).context("standard output")
}

/// `println!` that returns an `anyhow::Result` instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::console::print(format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// `eprintln!` that never panics (a failure to write to standard error is dropped).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::console::eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use errln;

/// Writes to standard error, ignoring failures (see [`errln!`]).
pub(crate) fn eprint(args: std::fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// Whether an error, or one of its causes, is a write to a closed pipe.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(sift::output::is_broken_pipe)
}

/// An error and its causes on one line, each said once ([`sift::error_line`]).
pub(crate) fn render(e: &anyhow::Error) -> String {
    sift::error_line(e.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that puts its source's text in its own message, as many do.
    #[derive(Debug)]
    struct Wrapping(io::Error);

    impl std::fmt::Display for Wrapping {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "read error: {}", self.0)
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_cause_is_said_once_without_os_error_numbers() {
        let io = io::Error::from_raw_os_error(2);
        let e = anyhow::Error::new(Wrapping(io)).context("x.pcap: byte 0");
        assert_eq!(render(&e), "x.pcap: byte 0: read error: No such file or directory");
        let e = anyhow::Error::new(io::Error::from_raw_os_error(28)).context("out.pcap");
        assert_eq!(render(&e), "out.pcap: No space left on device");
    }

    #[test]
    fn broken_pipes_are_found_anywhere_in_the_chain() {
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("out");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("no")));
    }
}
