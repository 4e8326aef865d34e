//! sift-filter's integration tests: the libpcap corpus, error and parse goldens, the tcpdump oracle and robustness properties.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod corpus;
mod errors;
mod oracle;
mod parse;
mod robustness;
