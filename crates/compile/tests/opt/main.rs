//! The optimizer: golden listings (`golden`), its gate, same values on every packet
//! (`semantics`), arbitrary programs (`programs`), known libpcap failures and edge cases
//! (`regressions`), and program size against libpcap's optimizer (`size`: run with
//! `--nocapture` for the figures, e.g.
//! `cargo test -p sift-compile --release --test opt -- size:: --nocapture`).
//!
//! One test binary for all of them, so CI links the crate's tests once per theme.

#[path = "../common/mod.rs"]
mod common;

mod golden;
mod programs;
mod regressions;
mod semantics;
mod size;
