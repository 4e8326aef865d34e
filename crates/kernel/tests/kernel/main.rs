//! sift-kernel's integration tests (root): the corpus through the eBPF verifier, BPF_PROG_TEST_RUN and the veth socket filter, `protochain` unrolled in the kernel, and XDP/TC attachment between namespaces.
//!
//! One test binary for the crate (each module was a binary of its own): CI links once.

mod attach;
mod corpus_verifier;
mod ebpf_random;
mod ebpf_testrun;
mod protochain;
mod veth_socket_filter;
