//! The link-layer model: where the link-layer header, its type field, its payload and the
//! network layer are, per link type, and which of those places are known only at run time
//! (gencode's `init_linktype` and its `off_*` offsets). It is the only place that knows which
//! link types the generator supports; their names and numbers are `sift_wire::LinkType`'s.

use crate::ir::Slot;

use super::target::Loc;
use super::{Base, CompileError, R};
use sift_wire::LinkType;
use sift_wire::ethertype as et;

/// EtherTypes (`sift_wire::ethertype`) as the generator compares them: 32-bit values.
pub(crate) mod ethertype {
    use sift_wire::ethertype as et;

    pub const IP: u32 = et::IPV4 as u32;
    pub const ARP: u32 = et::ARP as u32;
    pub const REVARP: u32 = et::REVARP as u32;
    pub const IPV6: u32 = et::IPV6 as u32;
    pub const ATALK: u32 = et::ATALK as u32;
    pub const AARP: u32 = et::AARP as u32;
    pub const IPX: u32 = et::IPX as u32;
    pub const DECNET: u32 = et::DECNET as u32;
    pub const LAT: u32 = et::LAT as u32;
    pub const SCA: u32 = et::SCA as u32;
    pub const MOPRC: u32 = et::MOPRC as u32;
    pub const MOPDL: u32 = et::MOPDL as u32;
    pub const LOOPBACK: u32 = et::LOOPBACK as u32;
    pub const LLDP: u32 = et::LLDP as u32;
    pub const VLAN: u32 = et::VLAN as u32;
    pub const QINQ: u32 = et::QINQ as u32;
    pub const QINQ_9100: u32 = et::QINQ_9100 as u32;
    pub const MPLS: u32 = et::MPLS as u32;
    pub const PPPOE_DISCOVERY: u32 = et::PPPOE_DISCOVERY as u32;
    pub const PPPOE_SESSION: u32 = et::PPPOE_SESSION as u32;
    pub const TEB: u32 = et::TEB as u32;
}

/// IEEE 802.2 SAPs used as protocol values below 1500.
pub(crate) mod llcsap {
    pub const IP: u32 = 0x06;
    pub const BPDU: u32 = 0x42;
    pub const IPX: u32 = 0xe0;
    pub const NETBEUI: u32 = 0xf0;
    pub const ISONS: u32 = 0xfe;
}

/// The largest 802.3 length (values up to it in the type field are lengths, not types).
pub(crate) const ETHERMTU: u32 = et::MAX_8023_LENGTH as u32;

/// How a link type carries its payload type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Ethernet (DLT_EN10MB).
    Ether,
    /// Raw IP, version in the first nibble (DLT_RAW).
    Raw,
    /// Raw IPv4 only (DLT_IPV4).
    Ipv4,
    /// Raw IPv6 only (DLT_IPV6).
    Ipv6,
    /// Linux cooked v1 (DLT_LINUX_SLL): EtherType at 14.
    Sll,
    /// Linux cooked v2 (DLT_LINUX_SLL2): EtherType at 0.
    Sll2,
    /// BSD loopback, AF in host byte order (DLT_NULL).
    Null,
    /// OpenBSD loopback, AF in network byte order (DLT_LOOP).
    Loop,
    /// PPP (DLT_PPP): PPP protocol at 2.
    Ppp,
    /// Cisco HDLC (DLT_C_HDLC): EtherType at 2.
    CHdlc,
    /// 802.2 LLC after a MAC header (DLT_FDDI, DLT_IEEE802): SNAP type at payload + 6.
    Llc,
    /// 802.11 (DLT_IEEE802_11 and the radio-header variants): a variable-length MAC header
    /// (computed at run time into a scratch word), then 802.2 LLC.
    Wlan,
    /// OpenBSD pflog (DLT_PFLOG): a variable-length header whose first byte is its length,
    /// the address family at 1.
    Pflog,
}

/// A variable-length header before the link-layer header, whose length the program computes
/// first (gencode's `off_linkhdr.is_variable` and `gen_load_*_llprefixlen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// None: the link-layer header starts at a constant offset.
    None,
    /// Radiotap: little-endian length at 2.
    Radiotap,
    /// AVS: big-endian length at 4.
    Avs,
    /// Prism, or AVS when the first word says so (the Prism header is 144 bytes).
    Prism,
    /// PPI: little-endian length at 2 (802.11 payload only: the DLT field is checked).
    Ppi,
}

/// The link-layer model of one supported link type, as the primitives seen so far left it
/// (`vlan`, `mpls`, `pppoes` and tunnels move it on). Targets other than classic BPF read it
/// through [`Link::resolve`].
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// The link type the offsets describe (PPP after `pppoes`, EN10MB inside a tunnel).
    pub(crate) link_type: LinkType,
    /// What kind of header.
    pub(crate) kind: Kind,
    /// Offset of the link-layer header (`off_linkhdr`; moves after `pppoes`).
    pub(crate) off_linkhdr: u32,
    /// Offset of the type field (`None`: the link type has none, gencode's `OFFSET_NOT_SET`).
    pub(crate) off_linktype: Option<u32>,
    /// Offset of the link-layer payload (`off_linkpl`).
    pub(crate) off_linkpl: u32,
    /// Offset of the network layer in the payload (`off_nl`).
    pub(crate) off_nl: u32,
    /// Offset of the network layer in an 802.2 payload without SNAP (`off_nl_nosnap`).
    pub(crate) off_nl_nosnap: u32,
    /// Offsets of the source and destination MAC addresses, for link types that have them.
    pub(crate) mac: Option<(u32, u32)>,
    /// The variable-length header before the link-layer header, if any.
    pub(crate) prefix: Prefix,
    /// Whether the link-layer payload starts at a run-time offset (`off_linkpl.is_variable`):
    /// payload-relative loads are `ldx M[r]; ld [x + k]`.
    pub(crate) var_pl: bool,
    /// Inside `vxlan`/`geneve`: the scratch words holding the inner offsets.
    pub(crate) tunnel: Option<Tunnel>,
}

/// The scratch words holding run-time offsets of the frame later primitives look at
/// (gencode's `off_linkhdr.reg`, `off_linktype.reg` and `off_linkpl.reg` after
/// `gen_vxlan`/`gen_geneve`, or after `vlan` with Linux extensions).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tunnel {
    /// The inner link-layer header (`None`: at its constant offset, as after `vlan` with
    /// Linux extensions, which moves only the type and payload).
    pub(crate) hdr: Option<Slot>,
    /// The inner link-layer type field (Geneve: its protocol type unless Ethernet).
    pub(crate) lt: Slot,
    /// The inner link-layer payload.
    pub(crate) pl: Slot,
    /// Geneve (whose link type is compared as is) rather than VXLAN.
    pub(crate) geneve: bool,
}

impl Link {
    /// The model of `link_type`, or an error naming it when the generator does not support it.
    pub(crate) fn new(link_type: LinkType) -> R<Link> {
        let l = |kind, off_linktype, off_linkpl| Link {
            link_type,
            off_linkhdr: 0,
            kind,
            off_linktype,
            off_linkpl,
            off_nl: 0,
            off_nl_nosnap: 0,
            mac: None,
            prefix: Prefix::None,
            var_pl: false,
            tunnel: None,
        };
        let with = |mut link: Link, off_nl, mac| {
            link.off_nl = off_nl;
            link.off_nl_nosnap = 3;
            link.mac = mac;
            link
        };
        Ok(match link_type {
            LinkType::EN10MB => with(l(Kind::Ether, Some(12), 14), 0, Some((6, 0))),
            LinkType::FDDI => with(l(Kind::Llc, Some(13), 13), 8, Some((7, 1))),
            LinkType::IEEE802 => with(l(Kind::Llc, Some(14), 14), 8, Some((8, 2))),
            LinkType::IP_OVER_FC => with(l(Kind::Llc, Some(16), 16), 8, Some((10, 2))),
            // Ethernet after a netANALYZER pseudo-header (and preamble and SFD).
            LinkType::NETANALYZER => {
                Link { off_linkhdr: 4, ..with(l(Kind::Ether, Some(16), 18), 0, Some((6, 0))) }
            }
            LinkType::NETANALYZER_TRANSPARENT => {
                Link { off_linkhdr: 12, ..with(l(Kind::Ether, Some(24), 26), 0, Some((6, 0))) }
            }
            // Ethernet with a 4-byte switch tag before the type.
            LinkType::DSA_TAG_BRCM | LinkType::DSA_TAG_DSA => {
                with(l(Kind::Ether, Some(16), 18), 0, Some((6, 0)))
            }
            LinkType::SLIP => l(Kind::Raw, None, 16),
            LinkType::RAW => l(Kind::Raw, None, 0),
            LinkType::IPV4 => l(Kind::Ipv4, None, 0),
            LinkType::IPV6 => l(Kind::Ipv6, None, 0),
            LinkType::LINUX_SLL => l(Kind::Sll, Some(14), 16),
            LinkType::LINUX_SLL2 => l(Kind::Sll2, Some(0), 20),
            LinkType::NULL => l(Kind::Null, Some(0), 4),
            LinkType::LOOP => l(Kind::Loop, Some(0), 4),
            LinkType::PPP | LinkType::PPP_SERIAL | LinkType::PPP_PPPD => l(Kind::Ppp, Some(2), 4),
            LinkType::C_HDLC => Link { off_nl_nosnap: 1, ..l(Kind::CHdlc, Some(2), 4) },
            // DLT_ENC: the address family in host order, like DLT_NULL, in a 12-byte header.
            LinkType::ENC => l(Kind::Null, Some(0), 12),
            LinkType::PFLOG => Link { var_pl: true, ..l(Kind::Pflog, Some(0), 0) },
            LinkType::PPP_ETHER => l(Kind::Ppp, Some(6), 8),
            LinkType::IEEE802_11
            | LinkType::IEEE802_11_RADIO
            | LinkType::IEEE802_11_RADIO_AVS
            | LinkType::PRISM_HEADER
            | LinkType::PPI => {
                let prefix = match link_type {
                    LinkType::IEEE802_11 => Prefix::None,
                    LinkType::IEEE802_11_RADIO => Prefix::Radiotap,
                    LinkType::IEEE802_11_RADIO_AVS => Prefix::Avs,
                    LinkType::PRISM_HEADER => Prefix::Prism,
                    _ => Prefix::Ppi,
                };
                Link {
                    off_nl: 8,
                    off_nl_nosnap: 3,
                    prefix,
                    var_pl: true,
                    ..l(Kind::Wlan, Some(24), 0)
                }
            }
            _ => {
                return Err(CompileError::new(
                    crate::error::CompileErrorKind::LinkTypeUnsupported { link: link_type },
                    None,
                ));
            }
        })
    }

    /// Whether the generator has a model of `link_type`.
    pub fn supports(link_type: LinkType) -> bool {
        Link::new(link_type).is_ok()
    }

    /// The offset of the network-layer header from the start of the packet.
    pub(crate) fn nl(&self) -> u32 {
        self.off_linkpl + self.off_nl
    }

    /// Whether the link layer has MAC addresses (Ethernet-like, or 802.11).
    pub(crate) fn is_ether(&self) -> bool {
        self.mac.is_some() || self.kind == Kind::Wlan
    }

    /// Whether the link-layer header starts at a run-time offset (`off_linkhdr.is_variable`).
    pub(crate) fn var_hdr(&self) -> bool {
        self.prefix != Prefix::None
    }

    /// The link type the model describes now (PPP after `pppoes`, Ethernet inside a tunnel).
    pub fn link_type(&self) -> LinkType {
        self.link_type
    }

    /// Where a field `off` bytes from `base` is when that place is a constant: `None` when
    /// the base lies at an offset the program computes at run time (behind a variable-length
    /// header, or inside a tunnel).
    pub fn resolve(&self, base: Base, off: u32) -> Option<Loc> {
        if base == Base::Packet {
            return Some(Loc::Abs(off));
        }
        let header = matches!(base, Base::LinkHdr | Base::LinkType);
        if self.tunnel.is_some() || (self.var_hdr() && header) || (self.var_pl && !header) {
            return None;
        }
        let nl = self.nl();
        Some(match base {
            Base::Packet => Loc::Abs(off),
            Base::LinkHdr => Loc::Abs(self.off_linkhdr.wrapping_add(off)),
            Base::Net => Loc::Abs(nl.wrapping_add(off)),
            Base::LinkType => Loc::Abs(self.off_linktype.unwrap_or(0).wrapping_add(off)),
            Base::LinkPl => Loc::Abs(self.off_linkpl.wrapping_add(off)),
            Base::NoSnap => {
                Loc::Abs(self.off_linkpl.wrapping_add(self.off_nl_nosnap).wrapping_add(off))
            }
            Base::TranV4 => Loc::AfterIpv4 { hdr: nl, off: nl.wrapping_add(off) },
            Base::TranV6 => Loc::Abs(nl.wrapping_add(40).wrapping_add(off)),
        })
    }
}

/// gencode's `ethertype_to_ppptype`: the PPP protocol number for an EtherType (or 802.2
/// SAP) as libpcap uses them internally; others are compared as they are.
pub(crate) fn ppp_type(ll_proto: u32) -> u32 {
    use ethertype::*;
    match ll_proto {
        IP => 0x21,
        IPV6 => 0x57,
        DECNET => 0x27,
        ATALK => 0x29,
        0x0600 => 0x25,
        llcsap::ISONS => 0x23,
        llcsap::BPDU => 0x31,
        llcsap::IPX => 0x2b,
        v => v,
    }
}
