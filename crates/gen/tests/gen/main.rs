//! sift-gen's integration tests: determinism, tshark's dissection of generated frames and the header checks.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod common;
mod determinism;
mod tshark;
mod wire;
