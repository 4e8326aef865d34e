//! `struct xdp_md` field offsets (uapi `linux/bpf.h`): the context an XDP program reads through
//! `r1`; and the map of AF_XDP sockets an XDP program redirects into by receive queue.
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

/// The name sift gives the `XSKMAP` its XDP programs redirect into (`bpf_redirect_map(&xsks,
/// ctx->rx_queue_index, …)`): the compiler's filters and the AF_XDP datapath's own program.
pub const XSK_MAP: &str = "xsks";

/// An `XSKMAP` named `name` of `entries` sockets (keys: receive queues; values: sockets).
pub fn xsk_map_spec(name: &str, entries: u32) -> crate::MapSpec {
    crate::MapSpec {
        name: name.to_string(),
        map_type: crate::MapType::Xskmap,
        key_size: 4,
        value_size: 4,
        max_entries: entries,
        flags: 0,
        initial: Vec::new(),
    }
}
