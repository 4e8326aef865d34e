//! Placeholder: filled in by its issue.
#![forbid(unsafe_code)]
