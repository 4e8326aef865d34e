//! `struct xdp_md` field offsets (uapi `linux/bpf.h`): the context an XDP program reads through
//! `r1`.
//!
//! The compiler's back end reads the packet pointers and the receive queue from it, the VM
//! builds it and the verifier checks accesses to it; all three must agree on where the fields
//! are.

/// `data`.
pub const DATA: i16 = 0;
/// `data_end`.
pub const DATA_END: i16 = 4;
/// `data_meta`.
pub const DATA_META: i16 = 8;
/// `ingress_ifindex`.
pub const INGRESS_IFINDEX: i16 = 12;
/// `rx_queue_index`: the key of an AF_XDP socket map.
pub const RX_QUEUE_INDEX: i16 = 16;
/// `egress_ifindex` (readable only by `BPF_XDP_DEVMAP` programs).
pub const EGRESS_IFINDEX: i16 = 20;
/// `sizeof(struct xdp_md)`.
pub const SIZE: usize = 24;
