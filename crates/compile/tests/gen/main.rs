//! Generating programs: the builder and emitter (`build`), lifting programs back into graphs
//! (`lift`), the builder's algebra against a direct evaluation (`prop`), and the code
//! generator through the pipeline: golden listings and rendered errors (`golden`, `errors`),
//! byte identity with libpcap (`identity`), `protochain` and tunnels against libpcap
//! (`protochain`, `tunnel`), bad and huge input (`robustness`), and the libpcap corpus and
//! differential harness (`harness`: run with `--nocapture` for the figures, e.g.
//! `cargo test -p sift-compile --release --test gen -- harness:: --nocapture`).
//!
//! One test binary for all of them, so CI links the crate's tests once per theme.

#[path = "../common/mod.rs"]
mod common;

mod build;
mod errors;
mod golden;
mod harness;
mod identity;
mod lift;
mod linktypes;
mod prop;
mod protochain;
mod robustness;
mod tunnel;
