//! Program contexts: what `r1` points at for a program type. This part has XDP's `xdp_md`
//! over a packet (the packet read and written in place; `data`, `data_end` and `data_meta`
//! as 32-bit virtual addresses, which the kernel rewrites to pointers and this VM's
//! below-4-GiB layout makes the same thing).

use crate::memory::PACKET_BASE;

/// XDP verdicts (`enum xdp_action`).
pub mod xdp {
    /// An error: the packet is dropped and a trace point fires.
    pub const ABORTED: u64 = 0;
    /// Drop.
    pub const DROP: u64 = 1;
    /// Pass to the network stack.
    pub const PASS: u64 = 2;
    /// Send back out of the interface it came in on.
    pub const TX: u64 = 3;
    /// Redirect (to another interface, CPU or socket).
    pub const REDIRECT: u64 = 4;

    /// The verdict's name (`XDP_PASS`…), or `None` for a value the kernel treats as an
    /// invalid action.
    pub fn name(action: u64) -> Option<&'static str> {
        Some(match action {
            ABORTED => "XDP_ABORTED",
            DROP => "XDP_DROP",
            PASS => "XDP_PASS",
            TX => "XDP_TX",
            REDIRECT => "XDP_REDIRECT",
            _ => return None,
        })
    }

    /// `sizeof(struct xdp_md)`.
    pub const MD_SIZE: usize = 24;
}

/// The `xdp_md` for a packet of `len` bytes at [`PACKET_BASE`]: `data`, `data_end`,
/// `data_meta` (no metadata: equal to `data`), `ingress_ifindex`, `rx_queue_index`,
/// `egress_ifindex` (0).
pub fn xdp_md(len: usize, ingress_ifindex: u32, rx_queue_index: u32) -> [u8; xdp::MD_SIZE] {
    let data = PACKET_BASE as u32;
    let end = data.wrapping_add(len as u32);
    let mut md = [0u8; xdp::MD_SIZE];
    for (k, v) in [data, end, data, ingress_ifindex, rx_queue_index, 0].into_iter().enumerate() {
        md[k * 4..k * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    md
}
