//! The context `r1` points at, per program type: which fields a program may read or write
//! and at what sizes, and which loads give packet pointers (the kernel's
//! `xdp_is_valid_access`, `tc_cls_act_is_valid_access`, `sk_filter_is_valid_access` over
//! `bpf_skb_is_valid_access`). Offsets are the uapi's (`struct xdp_md`, `struct __sk_buff`).

use crate::ProgType;

/// `struct xdp_md` offsets (`sift_ebpf::xdp_md`, widened for offset arithmetic).
pub mod xdp_md {
    use sift_ebpf::xdp_md as md;
    /// `data`.
    pub const DATA: i64 = md::DATA as i64;
    /// `data_end`.
    pub const DATA_END: i64 = md::DATA_END as i64;
    /// `data_meta`.
    pub const DATA_META: i64 = md::DATA_META as i64;
    /// `ingress_ifindex`.
    pub const INGRESS_IFINDEX: i64 = md::INGRESS_IFINDEX as i64;
    /// `rx_queue_index`.
    pub const RX_QUEUE_INDEX: i64 = md::RX_QUEUE_INDEX as i64;
    /// `egress_ifindex` (readable only by `BPF_XDP_DEVMAP` programs, which this verifier does
    /// not model).
    pub const EGRESS_IFINDEX: i64 = md::EGRESS_IFINDEX as i64;
    /// `sizeof(struct xdp_md)`.
    pub const SIZE: i64 = md::SIZE as i64;
}

/// `struct __sk_buff` offsets the rules below name (the rest are plain `__u32` fields).
pub mod sk_buff {
    pub use sift_ebpf::skb::{CB0, DATA, DATA_END, LEN, WIRE_LEN};
    /// `mark`.
    pub const MARK: i16 = 8;
    /// `queue_mapping`.
    pub const QUEUE_MAPPING: i16 = 12;
    /// `protocol`.
    pub const PROTOCOL: i16 = 16;
    /// `priority`.
    pub const PRIORITY: i16 = 32;
    /// `ifindex`.
    pub const IFINDEX: i16 = 40;
    /// `tc_index`.
    pub const TC_INDEX: i16 = 44;
    /// One past `cb[4]`.
    pub const CB_END: i16 = 68;
    /// `tc_classid`.
    pub const TC_CLASSID: i16 = 72;
    /// `family` (first of the `sk_skb`-only fields).
    pub const FAMILY: i16 = 88;
    /// One past `local_port` (last of the `sk_skb`-only fields).
    pub const LOCAL_PORT_END: i16 = 140;
    /// `data_meta`.
    pub const DATA_META: i16 = 140;
    /// `flow_keys` (8 bytes).
    pub const FLOW_KEYS: i16 = 144;
    /// `tstamp` (8 bytes).
    pub const TSTAMP: i16 = 152;
    /// `sk` (8 bytes).
    pub const SK: i16 = 168;
    /// `tstamp_type` (1 byte and 3 of padding).
    pub const TSTAMP_TYPE: i16 = 180;
    /// `hwtstamp` (8 bytes).
    pub const HWTSTAMP: i16 = 184;
    /// `sizeof(struct __sk_buff)`.
    pub const SIZE: i16 = sift_ebpf::skb::SIZE as i16;
}

/// What a context load gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxField {
    /// A number of at most `bytes` bytes.
    Scalar,
    /// `data`.
    Packet,
    /// `data_end`.
    PacketEnd,
    /// `data_meta`.
    PacketMeta,
}

/// Whether `size` bytes at `off` of a `__u32` field starting at `field` is a read the kernel
/// allows (narrow loads of a whole-aligned part).
fn narrow_ok(off: i64, size: u32) -> bool {
    size <= 4 && off % i64::from(size) == 0
}

/// Checks a context access: `Some(field)` if allowed.
pub fn access(prog: ProgType, off: i64, size: u32, write: bool) -> Option<CtxField> {
    match prog {
        ProgType::Xdp => {
            // `egress_ifindex` only for programs attached to a devmap entry.
            if write || !(0..xdp_md::EGRESS_IFINDEX).contains(&off) || off % 4 != 0 || size != 4 {
                return None;
            }
            Some(match off {
                xdp_md::DATA => CtxField::Packet,
                xdp_md::DATA_END => CtxField::PacketEnd,
                xdp_md::DATA_META => CtxField::PacketMeta,
                _ => CtxField::Scalar,
            })
        }
        ProgType::SchedCls | ProgType::SocketFilter => skb_access(prog, off, size, write),
        // Refused before exploring.
        ProgType::Unspec => None,
    }
}

fn in_field(off: i64, start: i16, len: i64) -> bool {
    off >= i64::from(start) && off < i64::from(start) + len
}

fn skb_access(prog: ProgType, off: i64, size: u32, write: bool) -> Option<CtxField> {
    use sk_buff::*;
    let tc = prog == ProgType::SchedCls;
    let packet_field =
        in_field(off, DATA, 4) || in_field(off, DATA_END, 4) || in_field(off, DATA_META, 4);
    if !tc
        && (packet_field
            || in_field(off, TC_CLASSID, 4)
            || in_field(off, TSTAMP, 8)
            || in_field(off, WIRE_LEN, 4)
            || in_field(off, HWTSTAMP, 8))
    {
        return None;
    }
    if (FAMILY as i64..LOCAL_PORT_END as i64).contains(&off) {
        return None;
    }
    if write {
        let writable = in_field(off, CB0, 20)
            || (tc
                && (in_field(off, MARK, 4)
                    || in_field(off, TC_INDEX, 4)
                    || in_field(off, PRIORITY, 4)
                    || in_field(off, TC_CLASSID, 4)
                    || in_field(off, TSTAMP, 8)
                    || in_field(off, QUEUE_MAPPING, 4)));
        if !writable {
            return None;
        }
    }
    // bpf_skb_is_valid_access
    if !(0..i64::from(SIZE)).contains(&off) || off % i64::from(size) != 0 {
        return None;
    }
    if in_field(off, CB0, 20) {
        return (off + i64::from(size) <= i64::from(CB_END)).then_some(CtxField::Scalar);
    }
    if packet_field {
        if size != 4 {
            return None;
        }
        return Some(if off == i64::from(DATA) {
            CtxField::Packet
        } else if off == i64::from(DATA_END) {
            CtxField::PacketEnd
        } else {
            CtxField::PacketMeta
        });
    }
    if in_field(off, FLOW_KEYS, 8) || in_field(off, SK, 8) || in_field(off, TSTAMP_TYPE, 4) {
        // Pointers to other kernel objects and a bit field: not modelled, refused.
        return None;
    }
    if in_field(off, TSTAMP, 8) || in_field(off, HWTSTAMP, 8) {
        return (size == 8 && off % 8 == 0).then_some(CtxField::Scalar);
    }
    if write {
        return (size == 4).then_some(CtxField::Scalar);
    }
    narrow_ok(off, size).then_some(CtxField::Scalar)
}
