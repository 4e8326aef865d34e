//! sift-insn's integration tests: round trips and tcpdump's text forms.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod roundtrip;
mod text_forms;
