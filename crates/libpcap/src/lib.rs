//! Placeholder: filled in by its issue.
#![deny(unsafe_code)]
