//! sift-x86's integration tests: the property test against iced-x86 and the hand-checked encodings.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod encode_props;
mod encodings;
mod support;
