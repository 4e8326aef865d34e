//! Program contexts: what `r1` points at for a program type. XDP's `xdp_md` over a packet
//! in a frame buffer with the kernel's headroom and tailroom ([`XdpPacket`]: helpers may move
//! its bounds, and the packet as the program left it is read back), and TC's and socket
//! filters' `__sk_buff` ([`SkbInfo`], [`sk_buff`]). Packet pointers (`data`, `data_end`,
//! `data_meta`) are 32-bit virtual addresses, which the kernel rewrites to pointers and this
//! VM's below-4-GiB layout makes the same thing.

use sift_ebpf::skb;

use crate::memory::{PACKET_BASE, PacketBounds};

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

    use sift_ebpf::xdp_md as md;
    /// `sizeof(struct xdp_md)`.
    pub const MD_SIZE: usize = md::SIZE;
    /// `offsetof(struct xdp_md, data)`.
    pub const DATA: usize = md::DATA as usize;
    /// `offsetof(struct xdp_md, data_end)`.
    pub const DATA_END: usize = md::DATA_END as usize;
    /// `offsetof(struct xdp_md, data_meta)`.
    pub const DATA_META: usize = md::DATA_META as usize;
    /// `XDP_PACKET_HEADROOM`: bytes before the packet in its frame.
    pub const HEADROOM: usize = 256;
    /// The frame a test run gives a packet (`PAGE_SIZE`), when the packet fits in it.
    pub const FRAME_SIZE: usize = 4096;
    /// The end of the frame reserved for `struct skb_shared_info`
    /// (`SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on x86-64): `bpf_xdp_adjust_tail`
    /// may not grow the packet into it.
    pub const SHARED_INFO: usize = 320;
    /// `sizeof(struct xdp_frame)`: the start of the frame that `bpf_xdp_adjust_head` and
    /// `bpf_xdp_adjust_meta` may not move into.
    pub const FRAME_HEADER: usize = 40;
    /// The most metadata bytes (`bpf_xdp_adjust_meta`; a multiple of 4).
    pub const MAX_META: usize = 252;
    /// `ETH_HLEN`: the shortest packet `adjust_head`/`adjust_tail` leave.
    pub const ETH_HLEN: usize = 14;
}

/// TC classifier results (`TC_ACT_*`).
pub mod tc {
    /// `TC_ACT_UNSPEC` (-1): the default action.
    pub const UNSPEC: u64 = u32::MAX as u64;
    /// `TC_ACT_OK`: pass.
    pub const OK: u64 = 0;
    /// `TC_ACT_RECLASSIFY`.
    pub const RECLASSIFY: u64 = 1;
    /// `TC_ACT_SHOT`: drop.
    pub const SHOT: u64 = 2;
    /// `TC_ACT_PIPE`.
    pub const PIPE: u64 = 3;
    /// `TC_ACT_STOLEN`.
    pub const STOLEN: u64 = 4;
    /// `TC_ACT_QUEUED`.
    pub const QUEUED: u64 = 5;
    /// `TC_ACT_REPEAT`.
    pub const REPEAT: u64 = 6;
    /// `TC_ACT_REDIRECT`.
    pub const REDIRECT: u64 = 7;
    /// `TC_ACT_TRAP`.
    pub const TRAP: u64 = 8;

    /// The result's name (`TC_ACT_OK`…), or `None` for another value. Only the low 32 bits
    /// count (the kernel's result is an `int`).
    pub fn name(action: u64) -> Option<&'static str> {
        Some(match action & 0xffff_ffff {
            UNSPEC => "TC_ACT_UNSPEC",
            OK => "TC_ACT_OK",
            RECLASSIFY => "TC_ACT_RECLASSIFY",
            SHOT => "TC_ACT_SHOT",
            PIPE => "TC_ACT_PIPE",
            STOLEN => "TC_ACT_STOLEN",
            QUEUED => "TC_ACT_QUEUED",
            REPEAT => "TC_ACT_REPEAT",
            REDIRECT => "TC_ACT_REDIRECT",
            TRAP => "TC_ACT_TRAP",
            _ => return None,
        })
    }
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

/// An XDP packet in its frame: [`xdp::HEADROOM`] bytes before it, the frame
/// [`xdp::FRAME_SIZE`] bytes long (longer for a packet that does not fit), as a test run in
/// the kernel lays it out. After a run, [`XdpPacket::data`] is the packet as the program left
/// it (moved, grown or shrunk by `bpf_xdp_adjust_head/tail`), [`XdpPacket::meta`] its
/// metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XdpPacket {
    pub(crate) frame: Vec<u8>,
    pub(crate) bounds: PacketBounds,
}

impl XdpPacket {
    /// The packet `bytes` at the start of a fresh frame's data.
    pub fn new(bytes: &[u8]) -> XdpPacket {
        let size = xdp::FRAME_SIZE.max(xdp::HEADROOM + bytes.len() + xdp::SHARED_INFO);
        let mut frame = vec![0u8; size];
        let data = xdp::HEADROOM;
        frame[data..data + bytes.len()].copy_from_slice(bytes);
        XdpPacket { frame, bounds: PacketBounds { meta: data, data, end: data + bytes.len() } }
    }

    /// The packet (`data` to `data_end`).
    pub fn data(&self) -> &[u8] {
        &self.frame[self.bounds.data..self.bounds.end]
    }

    /// The metadata before it (`data_meta` to `data`).
    pub fn meta(&self) -> &[u8] {
        &self.frame[self.bounds.meta..self.bounds.data]
    }

    /// The bounds in the frame.
    pub fn bounds(&self) -> PacketBounds {
        self.bounds
    }

    /// The `xdp_md` of the packet as it is.
    pub(crate) fn md(&self, ingress_ifindex: u32, rx_queue_index: u32) -> [u8; xdp::MD_SIZE] {
        let addr = |off: usize| (PACKET_BASE as usize - self.bounds.data + off) as u32;
        let mut md = [0u8; xdp::MD_SIZE];
        let fields = [
            addr(self.bounds.data),
            addr(self.bounds.end),
            addr(self.bounds.meta),
            ingress_ifindex,
            rx_queue_index,
            0,
        ];
        for (k, v) in fields.into_iter().enumerate() {
            md[k * 4..k * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        md
    }
}

/// `struct __sk_buff` offsets beyond those `sift_ebpf::skb` has (uapi `linux/bpf.h`).
pub mod sk_buff_off {
    /// `pkt_type`.
    pub const PKT_TYPE: usize = 4;
    /// `mark`.
    pub const MARK: usize = 8;
    /// `queue_mapping`.
    pub const QUEUE_MAPPING: usize = 12;
    /// `protocol` (network byte order).
    pub const PROTOCOL: usize = 16;
    /// `vlan_present`.
    pub const VLAN_PRESENT: usize = 20;
    /// `vlan_tci`.
    pub const VLAN_TCI: usize = 24;
    /// `vlan_proto`.
    pub const VLAN_PROTO: usize = 28;
    /// `priority`.
    pub const PRIORITY: usize = 32;
    /// `ingress_ifindex`.
    pub const INGRESS_IFINDEX: usize = 36;
    /// `ifindex`.
    pub const IFINDEX: usize = 40;
    /// `tc_index`.
    pub const TC_INDEX: usize = 44;
    /// `hash`.
    pub const HASH: usize = 68;
    /// `tc_classid`.
    pub const TC_CLASSID: usize = 72;
    /// `napi_id`.
    pub const NAPI_ID: usize = 84;
    /// `data_meta`.
    pub const DATA_META: usize = 140;
    /// `tstamp`.
    pub const TSTAMP: usize = 152;
    /// `gso_segs`.
    pub const GSO_SEGS: usize = 164;
    /// `gso_size`.
    pub const GSO_SIZE: usize = 176;
}

/// `PACKET_HOST`…: what `eth_type_trans` says of the destination.
pub mod pkt_type {
    /// To this host.
    pub const HOST: u32 = 0;
    /// Broadcast.
    pub const BROADCAST: u32 = 1;
    /// Multicast.
    pub const MULTICAST: u32 = 2;
    /// To another host.
    pub const OTHERHOST: u32 = 3;
}

/// The `__sk_buff` fields an embedder chooses; the rest come from the packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkbInfo {
    /// `mark`.
    pub mark: u32,
    /// `priority`.
    pub priority: u32,
    /// `ingress_ifindex`.
    pub ingress_ifindex: u32,
    /// `ifindex` (a kernel test run: the loopback device, 1).
    pub ifindex: u32,
    /// `cb[5]`.
    pub cb: [u32; 5],
    /// `hash`.
    pub hash: u32,
    /// `tstamp`.
    pub tstamp: u64,
    /// `wire_len` (a kernel test run without a context leaves it 0; a capture's original
    /// length is the natural value).
    pub wire_len: u32,
    /// The receiving device's MAC address (`pkt_type` compares the destination with it;
    /// the loopback device's, a kernel test run's, is all zeros).
    pub dev_addr: [u8; 6],
    /// The device's broadcast address (the loopback device's is all zeros, so that a test
    /// run calls `ff:ff:ff:ff:ff:ff` multicast; an Ethernet device's is all ones).
    pub dev_broadcast: [u8; 6],
}

impl Default for SkbInfo {
    fn default() -> SkbInfo {
        SkbInfo {
            mark: 0,
            priority: 0,
            ingress_ifindex: 0,
            ifindex: 1,
            cb: [0; 5],
            hash: 0,
            tstamp: 0,
            wire_len: 0,
            dev_addr: [0; 6],
            dev_broadcast: [0; 6],
        }
    }
}

/// The `__sk_buff` for `packet` (an Ethernet frame at [`PACKET_BASE`]): `len`, `pkt_type`
/// and `protocol` as `eth_type_trans` sets them, the chosen fields, `data`/`data_end`
/// (`data_meta` = `data`) when `direct` (TC; socket filters have no direct packet access).
pub fn sk_buff(packet: &[u8], info: &SkbInfo, direct: bool) -> [u8; skb::SIZE] {
    let mut ctx = [0u8; skb::SIZE];
    let mut put = |off: usize, v: u32| ctx[off..off + 4].copy_from_slice(&v.to_le_bytes());
    use sk_buff_off as o;
    let len = packet.len() as u32;
    put(skb::LEN as usize, len);
    let (ptype, proto) = eth_type_trans(packet, &info.dev_addr, &info.dev_broadcast);
    put(o::PKT_TYPE, ptype);
    put(o::PROTOCOL, u32::from(proto.swap_bytes()));
    put(o::MARK, info.mark);
    put(o::PRIORITY, info.priority);
    put(o::INGRESS_IFINDEX, info.ingress_ifindex);
    put(o::IFINDEX, info.ifindex);
    for (k, c) in info.cb.iter().enumerate() {
        put(skb::CB0 as usize + 4 * k, *c);
    }
    put(o::HASH, info.hash);
    put(skb::WIRE_LEN as usize, info.wire_len);
    if direct {
        let data = PACKET_BASE as u32;
        put(skb::DATA as usize, data);
        put(skb::DATA_END as usize, data.wrapping_add(len));
        put(o::DATA_META, data);
    }
    ctx[o::TSTAMP..o::TSTAMP + 8].copy_from_slice(&info.tstamp.to_le_bytes());
    ctx
}

/// `eth_type_trans`: the packet type (by the destination address and the device's own and
/// broadcast addresses) and the protocol (host order: the EtherType, `ETH_P_802_3` for raw
/// 802.3, `ETH_P_802_2` for 802.2 LLC).
pub fn eth_type_trans(packet: &[u8], dev_addr: &[u8; 6], broadcast: &[u8; 6]) -> (u32, u16) {
    if packet.len() < 14 {
        return (pkt_type::HOST, 0);
    }
    let dst = &packet[..6];
    let ptype = if dst[0] & 1 != 0 {
        if dst == broadcast { pkt_type::BROADCAST } else { pkt_type::MULTICAST }
    } else if dst == dev_addr {
        pkt_type::HOST
    } else {
        pkt_type::OTHERHOST
    };
    let ether = u16::from_be_bytes([packet[12], packet[13]]);
    let proto = if ether >= 1536 {
        ether
    } else if packet.len() >= 16 && packet[14..16] == [0xff, 0xff] {
        1
    } else {
        4
    };
    (ptype, proto)
}
