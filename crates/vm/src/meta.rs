//! Packet metadata for ancillary loads, and the Linux kernel's netlink-attribute search.

/// What the kernel knows about a packet besides its bytes (`struct sk_buff` fields), read by
/// ancillary loads (`ld [SKF_AD_OFF + …]`) in [`Flavor::Linux`](crate::Flavor::Linux) and, for
/// the two VLAN fields only, by libpcap's `bpf_filter_with_aux_data`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketMeta {
    /// The length on the wire (`len`); the captured length is the slice's length.
    pub wire_len: u32,
    /// `skb->protocol` in host order (e.g. 0x0800 for IPv4) — `SKF_AD_PROTOCOL`.
    pub protocol: u16,
    /// `skb->pkt_type` (`PACKET_HOST` = 0, `PACKET_OUTGOING` = 4…) — `SKF_AD_PKTTYPE`.
    pub pkttype: u8,
    /// The device's ifindex, `None` when the packet has no device (the kernel then ends the
    /// filter with 0) — `SKF_AD_IFINDEX`.
    pub ifindex: Option<u32>,
    /// The device's ARPHRD type, `None` without a device (filter ends with 0) — `SKF_AD_HATYPE`.
    pub hatype: Option<u16>,
    /// `skb->mark` — `SKF_AD_MARK`.
    pub mark: u32,
    /// `skb->queue_mapping` — `SKF_AD_QUEUE`.
    pub queue: u16,
    /// `skb->hash` — `SKF_AD_RXHASH`.
    pub rxhash: u32,
    /// The CPU running the filter — `SKF_AD_CPU`.
    pub cpu: u32,
    /// The VLAN TCI stripped by the NIC — `SKF_AD_VLAN_TAG`.
    pub vlan_tci: u16,
    /// Whether a VLAN tag was stripped — `SKF_AD_VLAN_TAG_PRESENT`.
    pub vlan_present: bool,
    /// The stripped tag's protocol (0x8100, 0x88a8) in host order — `SKF_AD_VLAN_TPID`.
    pub vlan_tpid: u16,
    /// The payload offset the kernel's flow dissector finds — `SKF_AD_PAY_OFFSET`.
    pub pay_offset: u32,
    /// What `SKF_AD_RANDOM` returns (the kernel draws a fresh number; tests want a fixed one).
    pub random: u32,
    /// Where the link-layer header starts in the packet slice, for `SKF_LL_OFF` loads
    /// (`None`: not set, such loads end the filter with 0).
    pub mac_header: Option<u32>,
    /// Where the network header starts in the packet slice, for `SKF_NET_OFF` loads.
    pub net_header: Option<u32>,
}

impl PacketMeta {
    /// Metadata with only the wire length set.
    pub fn new(wire_len: u32) -> Self {
        PacketMeta { wire_len, ..PacketMeta::default() }
    }
}

/// `struct nlattr` is 4 bytes: `nla_len`, `nla_type` (host order; little-endian here, as on the
/// x86-64 and arm64 kernels sift is tested on).
const NLA_HDRLEN: usize = 4;
const NLA_TYPE_MASK: u16 = !((1 << 15) | (1 << 14));

fn nla_header(pkt: &[u8], at: usize) -> Option<(usize, u16)> {
    let h = pkt.get(at..at.checked_add(NLA_HDRLEN)?)?;
    Some((usize::from(u16::from_le_bytes([h[0], h[1]])), u16::from_le_bytes([h[2], h[3]])))
}

/// The kernel's `nla_find` over `pkt[start..start + len]`: the offset of the first attribute of
/// type `attr`, or 0.
fn nla_find(pkt: &[u8], start: usize, len: usize, attr: u32) -> u32 {
    let mut at = start;
    let mut rem = len;
    while rem >= NLA_HDRLEN {
        let Some((nla_len, nla_type)) = nla_header(pkt, at) else { return 0 };
        if nla_len < NLA_HDRLEN || nla_len > rem {
            return 0;
        }
        if u32::from(nla_type & NLA_TYPE_MASK) == attr {
            return at as u32;
        }
        let step = (nla_len + 3) & !3;
        if step > rem {
            return 0;
        }
        at += step;
        rem -= step;
    }
    0
}

/// `SKF_AD_NLATTR`: find attribute type `x` among the attributes starting at offset `a`.
pub(crate) fn nlattr(pkt: &[u8], a: u32, x: u32) -> u32 {
    let len = pkt.len();
    let a = a as usize;
    if len < NLA_HDRLEN || a > len - NLA_HDRLEN {
        return 0;
    }
    nla_find(pkt, a, len - a, x)
}

/// `SKF_AD_NLATTR_NEST`: find attribute type `x` inside the nested attribute at offset `a`.
pub(crate) fn nlattr_nest(pkt: &[u8], a: u32, x: u32) -> u32 {
    let len = pkt.len();
    let a = a as usize;
    if len < NLA_HDRLEN || a > len - NLA_HDRLEN {
        return 0;
    }
    let Some((nla_len, _)) = nla_header(pkt, a) else { return 0 };
    if nla_len > len - a || nla_len < NLA_HDRLEN {
        return 0;
    }
    nla_find(pkt, a + NLA_HDRLEN, nla_len - NLA_HDRLEN, x)
}
