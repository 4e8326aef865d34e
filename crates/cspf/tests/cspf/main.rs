//! sift-cspf's integration tests: the API, differential verdicts against BPF, the paper's figure 8, golden programs and the VM's edges.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod api;
mod differential;
mod figure8;
mod golden;
mod vm_edges;
