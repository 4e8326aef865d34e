//! Placeholder.
#![deny(unsafe_code)]
