//! sift-kernel's integration tests (root): the corpus through the eBPF verifier, BPF_PROG_TEST_RUN and the veth socket filter.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod corpus_verifier;
mod ebpf_testrun;
mod veth_socket_filter;
