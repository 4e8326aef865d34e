//! Flow keys and masks: what the datapath knows about a packet, as a fixed array of words.
//!
//! **Why words.** Every cache lookup hashes a key, masks it and compares it. With the fields
//! packed into [`KEY_WORDS`] 64-bit words at fixed places, a mask is the same array, masking
//! is an AND per word, hashing a loop over words, and a megaflow subtable touches only the
//! words its mask uses (OVS's `miniflow` idea, without the indirection). Fields are reached by
//! name through [`Field`], which says where each one lives.
//!
//! The fields are OVS's flow fields for Ethernet, two VLAN tags, ARP, IPv4, IPv6 and
//! TCP/UDP/SCTP/ICMP, with OVS's conventions: a present tag's `vlan_tci` has the 0x1000 bit
//! set, ICMP type and code sit in `tp_src` and `tp_dst`, ARP's opcode in `nw_proto` and its
//! protocol addresses in `nw_src`/`nw_dst`, `nw_frag` holds [`NW_FRAG_ANY`] and
//! [`NW_FRAG_LATER`]. A field a frame does not have (or whose header is truncated) is zero.

use std::fmt;

use sift_wire::ethernet::{self, Mac};
use sift_wire::icmp::{IcmpPacket, Icmpv6Packet};
use sift_wire::ipv4::Ipv4Packet;
use sift_wire::ipv6::Ipv6Packet;
use sift_wire::tcp::TcpPacket;
use sift_wire::{arp::ArpPacket, ipproto, ports};

pub use crate::layout::{DL_TYPE_NONE, NW_FRAG_ANY, NW_FRAG_LATER, VLAN_PRESENT};
use crate::layout::{Layout, Net};

/// Words in a key or a mask.
pub const KEY_WORDS: usize = 11;

/// A port number (OpenFlow 1.1's 32-bit numbers; names come from a [`PortMap`]).
///
/// [`PortMap`]: crate::PortMap
pub type PortNo = u32;

/// One field of a flow key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The port the packet came in on (32 bits).
    InPort,
    /// EtherType after the VLAN tags (16 bits).
    DlType,
    /// Outer VLAN tag's TCI with the present bit (16 bits).
    VlanTci,
    /// Inner VLAN tag's TCI with the present bit (16 bits).
    VlanTci2,
    /// Destination MAC (48 bits).
    DlDst,
    /// Source MAC (48 bits).
    DlSrc,
    /// IP protocol, or ARP opcode (8 bits).
    NwProto,
    /// IPv4 TOS or IPv6 traffic class (8 bits).
    NwTos,
    /// IPv4 TTL or IPv6 hop limit (8 bits).
    NwTtl,
    /// Fragment bits (8 bits).
    NwFrag,
    /// TCP flags (12 bits used).
    TcpFlags,
    /// Transport source port, or ICMP type (16 bits).
    TpSrc,
    /// Transport destination port, or ICMP code (16 bits).
    TpDst,
    /// IPv4 source, or ARP sender protocol address (32 bits).
    NwSrc,
    /// IPv4 destination, or ARP target protocol address (32 bits).
    NwDst,
    /// IPv6 source (128 bits).
    Ipv6Src,
    /// IPv6 destination (128 bits).
    Ipv6Dst,
    /// ARP sender hardware address (48 bits).
    ArpSha,
    /// ARP target hardware address (48 bits).
    ArpTha,
}

impl Field {
    /// Every field, in the order the slow path compares them: ingress, then the types that
    /// are prerequisites of the rest, then outer to inner.
    pub const ALL: [Field; 19] = [
        Field::InPort,
        Field::DlType,
        Field::NwProto,
        Field::VlanTci,
        Field::VlanTci2,
        Field::DlSrc,
        Field::DlDst,
        Field::NwSrc,
        Field::NwDst,
        Field::Ipv6Src,
        Field::Ipv6Dst,
        Field::ArpSha,
        Field::ArpTha,
        Field::NwTos,
        Field::NwTtl,
        Field::NwFrag,
        Field::TpSrc,
        Field::TpDst,
        Field::TcpFlags,
    ];

    /// (first word, shift within it, width in bits). 128-bit fields take two whole words.
    const fn place(self) -> (usize, u32, u32) {
        match self {
            Field::InPort => (0, 32, 32),
            Field::DlType => (0, 16, 16),
            Field::VlanTci => (0, 0, 16),
            Field::DlDst => (1, 16, 48),
            Field::VlanTci2 => (1, 0, 16),
            Field::DlSrc => (2, 16, 48),
            Field::NwProto => (2, 8, 8),
            Field::NwTos => (2, 0, 8),
            Field::NwTtl => (3, 56, 8),
            Field::NwFrag => (3, 48, 8),
            Field::TcpFlags => (3, 32, 16),
            Field::TpSrc => (3, 16, 16),
            Field::TpDst => (3, 0, 16),
            Field::NwSrc => (4, 32, 32),
            Field::NwDst => (4, 0, 32),
            Field::Ipv6Src => (5, 0, 128),
            Field::Ipv6Dst => (7, 0, 128),
            Field::ArpSha => (9, 16, 48),
            Field::ArpTha => (10, 16, 48),
        }
    }

    /// Width in bits.
    pub const fn bits(self) -> u32 {
        self.place().2
    }

    /// The words the field occupies, with the field's bits in each (for the slow path's
    /// word-by-word comparisons; a 128-bit field is its high word, then its low word).
    pub fn word_masks(self) -> impl Iterator<Item = (usize, u64)> {
        let (w, shift, bits) = self.place();
        let parts = if bits == 128 {
            [(w, u64::MAX), (w + 1, u64::MAX)]
        } else {
            [(w, ((1u64 << bits) - 1) << shift), (usize::MAX, 0)]
        };
        parts.into_iter().filter(|p| p.0 != usize::MAX)
    }

    /// Whether the field is an IP address, compared by prefix (its mask is usually a prefix,
    /// and a mismatch is decided by the first differing bit).
    pub const fn is_address(self) -> bool {
        matches!(self, Field::NwSrc | Field::NwDst | Field::Ipv6Src | Field::Ipv6Dst)
    }

    /// All ones in the field's width.
    pub const fn full(self) -> u128 {
        let bits = self.bits();
        if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 }
    }
}

fn get(w: &[u64; KEY_WORDS], f: Field) -> u128 {
    let (i, shift, bits) = f.place();
    if bits == 128 {
        (u128::from(w[i]) << 64) | u128::from(w[i + 1])
    } else {
        u128::from(w[i] >> shift) & ((1u128 << bits) - 1)
    }
}

fn set(w: &mut [u64; KEY_WORDS], f: Field, v: u128) {
    let (i, shift, bits) = f.place();
    if bits == 128 {
        w[i] = (v >> 64) as u64;
        w[i + 1] = v as u64;
    } else {
        let m = ((1u64 << bits) - 1) << shift;
        w[i] = (w[i] & !m) | (((v as u64) << shift) & m);
    }
}

/// Hashes words with `seed`: a multiply-rotate per word (FxHash's step) and a final
/// avalanche (SplitMix64's), good enough for linear probing.
#[inline]
pub(crate) fn hash_words(seed: u64, words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = seed;
    for w in words {
        h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A packet's flow key.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowKey {
    w: [u64; KEY_WORDS],
}

/// Which bits of a [`FlowKey`] matter: same layout, a set bit is a compared bit.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowMask {
    w: [u64; KEY_WORDS],
}

macro_rules! words_common {
    ($t:ident) => {
        impl $t {
            /// From raw words.
            pub const fn from_words(w: [u64; KEY_WORDS]) -> $t {
                $t { w }
            }

            /// The raw words.
            #[inline]
            pub const fn words(&self) -> &[u64; KEY_WORDS] {
                &self.w
            }

            /// A field's value (right-aligned).
            #[inline]
            pub fn get(&self, f: Field) -> u128 {
                get(&self.w, f)
            }

            /// Sets a field (bits beyond its width are dropped).
            #[inline]
            pub fn set(&mut self, f: Field, v: u128) {
                set(&mut self.w, f, v)
            }
        }
    };
}
words_common!(FlowKey);
words_common!(FlowMask);

impl FlowKey {
    /// The key of `frame` received on `in_port` (an Ethernet frame; what does not fit or is
    /// damaged is left zero, never a panic).
    pub fn extract(in_port: PortNo, frame: &[u8]) -> FlowKey {
        let mut k = FlowKey::default();
        k.set(Field::InPort, in_port.into());
        let l = Layout::of(frame);
        if !l.eth {
            return k;
        }
        let eth = ethernet::EthernetFrame::new_unchecked(frame);
        k.set(Field::DlDst, mac(eth.dst_addr()));
        k.set(Field::DlSrc, mac(eth.src_addr()));
        k.set(Field::DlType, l.dl_type.into());
        let tcis = [Field::VlanTci, Field::VlanTci2];
        for (f, tci) in tcis.into_iter().zip(l.tcis).take(l.tags) {
            k.set(f, (tci | VLAN_PRESENT).into());
        }
        let l3 = &frame[l.l3..];
        match l.net {
            Net::None => {}
            Net::Ipv4 { .. } => {
                let ip = Ipv4Packet::new_unchecked(l3);
                k.set(Field::NwSrc, u32::from_be_bytes(ip.src_addr()).into());
                k.set(Field::NwDst, u32::from_be_bytes(ip.dst_addr()).into());
                k.set(Field::NwTos, ip.tos().into());
                k.set(Field::NwTtl, ip.ttl().into());
            }
            Net::Ipv6 => {
                let ip = Ipv6Packet::new_unchecked(l3);
                k.set(Field::Ipv6Src, u128::from_be_bytes(ip.src_addr()));
                k.set(Field::Ipv6Dst, u128::from_be_bytes(ip.dst_addr()));
                k.set(Field::NwTos, ip.traffic_class().into());
                k.set(Field::NwTtl, ip.hop_limit().into());
            }
            Net::Arp => {
                let a = ArpPacket::new_unchecked(l3);
                let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                let mac6 = |b: &[u8]| mac([b[0], b[1], b[2], b[3], b[4], b[5]]);
                k.set(Field::NwSrc, be32(a.sender_proto_addr()).into());
                k.set(Field::NwDst, be32(a.target_proto_addr()).into());
                k.set(Field::ArpSha, mac6(a.sender_hw_addr()));
                k.set(Field::ArpTha, mac6(a.target_hw_addr()));
            }
        }
        k.set(Field::NwProto, l.nw_proto.into());
        k.set(Field::NwFrag, l.nw_frag.into());
        if let Some(l4) = l.l4 {
            let t = &frame[l4.start..l4.end];
            match l.nw_proto {
                ipproto::ICMP => {
                    let p = IcmpPacket::new_unchecked(t);
                    k.set(Field::TpSrc, p.msg_type().into());
                    k.set(Field::TpDst, p.msg_code().into());
                }
                ipproto::ICMPV6 => {
                    let p = Icmpv6Packet::new_unchecked(t);
                    k.set(Field::TpSrc, p.msg_type().into());
                    k.set(Field::TpDst, p.msg_code().into());
                }
                _ => {
                    if let Some((s, d)) = ports::ports(t) {
                        k.set(Field::TpSrc, s.into());
                        k.set(Field::TpDst, d.into());
                    }
                    if l.nw_proto == ipproto::TCP {
                        let flags = TcpPacket::new_unchecked(t).flags() & TCP_FLAGS_MASK;
                        k.set(Field::TcpFlags, flags.into());
                    }
                }
            }
        }
        k
    }

    /// The key with the bits outside `mask` cleared.
    #[inline]
    pub fn masked(&self, mask: &FlowMask) -> FlowKey {
        let mut w = self.w;
        for (a, m) in w.iter_mut().zip(mask.w) {
            *a &= m;
        }
        FlowKey { w }
    }

    /// Whether `self` and `other` agree on every bit of `mask`.
    #[inline]
    pub fn matches(&self, other: &FlowKey, mask: &FlowMask) -> bool {
        self.w.iter().zip(&other.w).zip(&mask.w).all(|((a, b), m)| (a ^ b) & m == 0)
    }

    /// A hash of the whole key.
    #[inline]
    pub fn hash(&self, seed: u64) -> u64 {
        hash_words(seed, self.w)
    }

    /// Ingress port.
    pub fn in_port(&self) -> PortNo {
        self.get(Field::InPort) as PortNo
    }
    /// EtherType after the VLAN tags.
    pub fn dl_type(&self) -> u16 {
        self.get(Field::DlType) as u16
    }
    /// Outer VLAN TCI, with [`VLAN_PRESENT`] set when tagged.
    pub fn vlan_tci(&self) -> u16 {
        self.get(Field::VlanTci) as u16
    }
    /// Source MAC.
    pub fn dl_src(&self) -> Mac {
        to_mac(self.get(Field::DlSrc))
    }
    /// Destination MAC.
    pub fn dl_dst(&self) -> Mac {
        to_mac(self.get(Field::DlDst))
    }
    /// IP protocol or ARP opcode.
    pub fn nw_proto(&self) -> u8 {
        self.get(Field::NwProto) as u8
    }
    /// IPv4 source or ARP sender address.
    pub fn nw_src(&self) -> [u8; 4] {
        (self.get(Field::NwSrc) as u32).to_be_bytes()
    }
    /// IPv4 destination or ARP target address.
    pub fn nw_dst(&self) -> [u8; 4] {
        (self.get(Field::NwDst) as u32).to_be_bytes()
    }
    /// IPv6 source.
    pub fn ipv6_src(&self) -> [u8; 16] {
        self.get(Field::Ipv6Src).to_be_bytes()
    }
    /// IPv6 destination.
    pub fn ipv6_dst(&self) -> [u8; 16] {
        self.get(Field::Ipv6Dst).to_be_bytes()
    }
    /// Transport source port or ICMP type.
    pub fn tp_src(&self) -> u16 {
        self.get(Field::TpSrc) as u16
    }
    /// Transport destination port or ICMP code.
    pub fn tp_dst(&self) -> u16 {
        self.get(Field::TpDst) as u16
    }
}

impl FlowMask {
    /// Every bit of every field.
    pub fn exact() -> FlowMask {
        let mut m = FlowMask::default();
        for f in Field::ALL {
            m.set(f, f.full());
        }
        m
    }

    /// Adds the bits of `other`.
    #[inline]
    pub fn union(&mut self, other: &FlowMask) {
        for (a, b) in self.w.iter_mut().zip(other.w) {
            *a |= b;
        }
    }

    /// Whether every bit of `other` is also in `self`.
    #[inline]
    pub fn covers(&self, other: &FlowMask) -> bool {
        self.w.iter().zip(other.w).all(|(a, b)| b & !a == 0)
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.w.iter().all(|&w| w == 0)
    }

    /// Sets the bits `bits` of word `word` (the slow path's word-level un-wildcarding).
    #[inline]
    pub fn add_word_bits(&mut self, word: usize, bits: u64) {
        if let Some(w) = self.w.get_mut(word) {
            *w |= bits;
        }
    }
}

/// The TCP flag bits a key keeps (OVS's `TCP_FLAGS`: the 12 bits of the flags field).
pub const TCP_FLAGS_MASK: u16 = 0x0fff;

fn mac(m: Mac) -> u128 {
    m.iter().fold(0u128, |a, &b| (a << 8) | u128::from(b))
}

fn to_mac(v: u128) -> Mac {
    let b = (v as u64).to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

impl fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlowKey(")?;
        for (i, w) in self.w.iter().enumerate() {
            write!(f, "{}{w:016x}", if i > 0 { " " } else { "" })?;
        }
        write!(f, ")")
    }
}

impl fmt::Debug for FlowMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlowMask(")?;
        for (i, w) in self.w.iter().enumerate() {
            write!(f, "{}{w:016x}", if i > 0 { " " } else { "" })?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_overlap_and_fill_their_widths() {
        let mut seen = FlowMask::default();
        for f in Field::ALL {
            let mut m = FlowMask::default();
            m.set(f, u128::MAX);
            assert_eq!(m.get(f), f.full(), "{f:?}");
            let ones: u32 = m.words().iter().map(|w| w.count_ones()).sum();
            assert_eq!(ones, f.bits(), "{f:?}");
            assert!(m.words().iter().zip(seen.words()).all(|(a, b)| a & b == 0), "{f:?}");
            seen.union(&m);
            let by_words: FlowMask = {
                let mut x = FlowMask::default();
                for (w, bits) in f.word_masks() {
                    x.add_word_bits(w, bits);
                }
                x
            };
            assert_eq!(by_words, m, "{f:?}");
        }
        assert_eq!(seen, FlowMask::exact());
    }

    #[test]
    fn set_keeps_neighbours() {
        let mut k = FlowKey::default();
        k.set(Field::TpSrc, 0xffff);
        k.set(Field::TpDst, 0x1234);
        k.set(Field::TcpFlags, 0x3ff);
        assert_eq!((k.tp_src(), k.tp_dst(), k.get(Field::TcpFlags)), (0xffff, 0x1234, 0x3ff));
        k.set(Field::TpSrc, 0);
        assert_eq!((k.tp_src(), k.tp_dst()), (0, 0x1234));
    }
}
