//! The link-layer model: where the link-layer header, its type field, its payload and the
//! network layer are, per link type, and which of those places are known only at run time
//! (gencode's `init_linktype` and its `off_*` offsets). It is the only place that knows how
//! each link type carries its payload type; their names and numbers are
//! `sift_wire::LinkType`'s. Every link type has a model: one libpcap has no link-layer
//! protocol test for is [`Kind::Opaque`], on which the primitives that do not depend on the
//! link layer (`len`, `less`, `greater`, `link[…]`) still compile, as in libpcap.

use crate::ir::Slot;

use super::Base;
use super::target::Loc;
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

/// gencode's `OFFSET_NOT_SET`: a place the link type does not have. libpcap still adds offsets
/// to it (its `u_int` arithmetic wraps), so a load relative to it lands where libpcap's lands;
/// every offset computed from one wraps the same way.
pub(crate) const NOT_SET: u32 = u32::MAX;

/// How a link type carries its payload type (which of gencode's `gen_linktype` cases applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Ethernet (DLT_EN10MB and Ethernet after a pseudo-header or a switch tag).
    Ether,
    /// Raw IP, version in the first nibble of the link-layer header (DLT_RAW, DLT_SLIP,
    /// DLT_SLIP_BSDOS).
    Raw,
    /// Raw IPv4 only (DLT_IPV4).
    Ipv4,
    /// Raw IPv6 only (DLT_IPV6).
    Ipv6,
    /// Linux cooked v1 (DLT_LINUX_SLL): EtherType at 14.
    Sll,
    /// Linux cooked v2 (DLT_LINUX_SLL2): EtherType at 0.
    Sll2,
    /// BSD loopback and OpenBSD enc (DLT_NULL, DLT_ENC): the address family in the byte order
    /// of the host that wrote it.
    Null,
    /// OpenBSD loopback (DLT_LOOP): the address family in network byte order.
    Loop,
    /// PPP (DLT_PPP and its framings, DLT_PPP_BSDOS): the PPP protocol at the type offset.
    Ppp,
    /// Cisco HDLC (DLT_C_HDLC): EtherType at 2.
    CHdlc,
    /// 802.2 LLC after a MAC header or none (DLT_FDDI, DLT_IEEE802, DLT_IP_OVER_FC,
    /// DLT_ATM_RFC1483, DLT_ATM_CLIP): SNAP type at payload + 6.
    Llc,
    /// 802.11 (DLT_IEEE802_11 and the radio-header variants): a variable-length MAC header
    /// (computed at run time into a scratch word), then 802.2 LLC.
    Wlan,
    /// OpenBSD pflog (DLT_PFLOG): a variable-length header whose first byte is its length,
    /// the address family at 1.
    Pflog,
    /// ARCnet (DLT_ARCNET, DLT_ARCNET_LINUX): one-byte source and destination addresses at 0
    /// and 1, a one-byte protocol ID at the type offset.
    Arcnet,
    /// Frame Relay (DLT_FRELAY): a two-byte Q.922 address, then the UI control byte 0x03 and
    /// an NLPID.
    Frelay,
    /// Juniper's capture header (the DLT_JUNIPER_* types gencode knows): the magic cookie
    /// `MGC`, then flags whose low bit is the direction. A link-layer protocol test checks
    /// only the cookie.
    Juniper,
    /// Sun raw ATM (DLT_SUNATM): a 4-byte pseudo-header (flags with the protocol type, VPI,
    /// VCI), then an LLC-encapsulated PDU (or LANE, after `lane`).
    SunAtm,
    /// Solaris ipnet (DLT_IPNET): the address family byte at 1 (IPv4 2, IPv6 26), the
    /// direction in the halfword at 2.
    Ipnet,
    /// LocalTalk (DLT_LTALK): AppleTalk only.
    Ltalk,
    /// BACnet MS/TP (DLT_BACNET_MS_TP): a link-layer protocol test checks the preamble
    /// 0x55 0xff.
    MsTp,
    /// An EtherType at the type offset and nothing else gencode knows (gencode's default case:
    /// DLT_SYMANTEC_FIREWALL, DLT_APPLE_IP_OVER_IEEE1394).
    TypeField,
    /// A link type with no link-layer protocol test (gencode's "link-layer type filtering not
    /// implemented"): only what does not depend on the link layer compiles (`len`, `less`,
    /// `greater`, `link[…]`, `byte`, and the SS7 fields where the link type has them).
    Opaque,
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

/// The link-layer model of one link type, as the primitives seen so far left it (`vlan`,
/// `mpls`, `pppoes`, `lane` and tunnels move it on). Targets other than classic BPF read it
/// through [`Link::resolve`].
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// The link type the offsets describe (PPP after `pppoes`, EN10MB inside a tunnel or
    /// after `lane`).
    pub(crate) link_type: LinkType,
    /// What kind of header.
    pub(crate) kind: Kind,
    /// Offset of the link-layer header (`off_linkhdr`; moves after `pppoes` and `lane`).
    pub(crate) off_linkhdr: u32,
    /// Offset of the type field (`None`: the link type has none, gencode's `OFFSET_NOT_SET`).
    pub(crate) off_linktype: Option<u32>,
    /// Offset of the link-layer payload (`off_linkpl`; may be [`NOT_SET`]).
    pub(crate) off_linkpl: u32,
    /// Offset of the network layer in the payload (`off_nl`; may be [`NOT_SET`]).
    pub(crate) off_nl: u32,
    /// Offset of the network layer in an 802.2 payload without SNAP (`off_nl_nosnap`; may be
    /// [`NOT_SET`]).
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
    /// Raw ATM (gencode's `is_atm`): the ATM pseudo-header's protocol type, VPI and VCI are at
    /// 0, 1 and 2 from the link-layer header (even after `lane` moved that header on).
    pub(crate) atm: bool,
    /// LANE-encapsulated Ethernet inside SunATM (gencode's `prevlinktype` after `lane`):
    /// Ethernet tests first check that the frame is not an LE control frame.
    pub(crate) lane: bool,
    /// SS7 (MTP2, MTP2 with pseudo-header, ERF): the offset of MTP2's length indicator, from
    /// which the MTP3 fields follow (gencode's `off_li`; `off_sio`… are li + 1, 2, 2, 5).
    pub(crate) ss7: Option<u32>,
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
    /// The model of `link_type` (gencode's `init_linktype`). Every link type has one: a link
    /// type gencode does not know is [`Kind::Opaque`], on which only primitives that do not
    /// depend on the link layer compile.
    pub(crate) fn new(link_type: LinkType) -> Link {
        use LinkType as L;
        let base = Link {
            link_type,
            kind: Kind::Opaque,
            off_linkhdr: 0,
            off_linktype: None,
            off_linkpl: NOT_SET,
            off_nl: NOT_SET,
            off_nl_nosnap: NOT_SET,
            mac: None,
            prefix: Prefix::None,
            var_pl: false,
            tunnel: None,
            atm: false,
            lane: false,
            ss7: None,
        };
        // `kind`, the type field, the payload, and the network layer with and without SNAP.
        let l = |kind, off_linktype, off_linkpl, off_nl, off_nl_nosnap| Link {
            kind,
            off_linktype,
            off_linkpl,
            off_nl,
            off_nl_nosnap,
            ..base
        };
        let ether = |hdr: u32| Link {
            off_linkhdr: hdr,
            mac: Some((6, 0)),
            ..l(Kind::Ether, Some(hdr + 12), hdr + 14, 0, 3)
        };
        let llc = |off: u32, mac| Link { mac, ..l(Kind::Llc, Some(off), off, 8, 3) };
        let juniper = |off_linktype, off_linkpl, off_nl, off_nl_nosnap| {
            l(Kind::Juniper, Some(off_linktype), off_linkpl, off_nl, off_nl_nosnap)
        };
        match link_type {
            L::EN10MB => ether(0),
            // Ethernet after a netANALYZER pseudo-header (and preamble and SFD).
            L::NETANALYZER => ether(4),
            L::NETANALYZER_TRANSPARENT => ether(12),
            // Ethernet with a 4-byte switch tag before the type.
            L::DSA_TAG_BRCM | L::DSA_TAG_DSA => {
                Link { mac: Some((6, 0)), ..l(Kind::Ether, Some(16), 18, 0, 3) }
            }
            L::FDDI => llc(13, Some((7, 1))),
            L::IEEE802 => llc(14, Some((8, 2))),
            L::IP_OVER_FC => llc(16, Some((10, 2))),
            L::ATM_RFC1483 | L::ATM_CLIP => llc(0, None),
            // The ATM pseudo-header: flags and protocol type, VPI, VCI; the PDU at 4.
            L::SUNATM => Link { atm: true, ..l(Kind::SunAtm, Some(4), 4, 8, 3) },
            L::SLIP => l(Kind::Raw, None, 16, 0, 0),
            L::SLIP_BSDOS => l(Kind::Raw, None, 24, 0, 0),
            L::RAW => l(Kind::Raw, None, 0, 0, 0),
            L::IPV4 => l(Kind::Ipv4, None, 0, 0, 0),
            L::IPV6 => l(Kind::Ipv6, None, 0, 0, 0),
            L::LINUX_SLL => l(Kind::Sll, Some(14), 16, 0, 0),
            L::LINUX_SLL2 => l(Kind::Sll2, Some(0), 20, 0, 0),
            L::NULL => l(Kind::Null, Some(0), 4, 0, 0),
            L::LOOP => l(Kind::Loop, Some(0), 4, 0, 0),
            // DLT_ENC: the address family in host order, like DLT_NULL, in a 12-byte header.
            L::ENC => l(Kind::Null, Some(0), 12, 0, 0),
            L::PPP | L::PPP_SERIAL | L::PPP_PPPD => l(Kind::Ppp, Some(2), 4, 0, 0),
            L::PPP_ETHER => l(Kind::Ppp, Some(6), 8, 0, 0),
            L::PPP_BSDOS => l(Kind::Ppp, Some(5), 24, 0, 0),
            L::C_HDLC => l(Kind::CHdlc, Some(2), 4, 0, 1),
            L::PFLOG => Link { var_pl: true, ..l(Kind::Pflog, Some(0), 0, 0, 0) },
            L::IEEE802_11
            | L::IEEE802_11_RADIO
            | L::IEEE802_11_RADIO_AVS
            | L::PRISM_HEADER
            | L::PPI => {
                let prefix = match link_type {
                    L::IEEE802_11 => Prefix::None,
                    L::IEEE802_11_RADIO => Prefix::Radiotap,
                    L::IEEE802_11_RADIO_AVS => Prefix::Avs,
                    L::PRISM_HEADER => Prefix::Prism,
                    _ => Prefix::Ppi,
                };
                Link { prefix, var_pl: true, ..l(Kind::Wlan, Some(24), 0, 8, 3) }
            }
            L::ARCNET => l(Kind::Arcnet, Some(2), 6, 0, 0),
            L::ARCNET_LINUX => l(Kind::Arcnet, Some(4), 8, 0, 0),
            L::FRELAY => l(Kind::Frelay, None, 0, 0, 0),
            // FRF.16: gencode sets offsets but no link-layer protocol test.
            L::MFR => l(Kind::Opaque, None, 0, 4, 0),
            L::LTALK => l(Kind::Ltalk, None, 0, 0, 0),
            L::IPNET => l(Kind::Ipnet, Some(1), 24, 0, NOT_SET),
            L::SYMANTEC_FIREWALL => l(Kind::TypeField, Some(6), 44, 0, 0),
            L::APPLE_IP_OVER_IEEE1394 => l(Kind::TypeField, Some(16), 18, 0, 0),
            L::BACNET_MS_TP => Link { kind: Kind::MsTp, ..base },
            L::PFSYNC => l(Kind::Opaque, None, 4, 0, 0),
            L::MTP2 => Link { ss7: Some(2), ..base },
            L::MTP2_WITH_PHDR => Link { ss7: Some(6), ..base },
            L::ERF => Link { ss7: Some(22), ..base },
            L::JUNIPER_MFR
            | L::JUNIPER_MLFR
            | L::JUNIPER_MLPPP
            | L::JUNIPER_PPP
            | L::JUNIPER_CHDLC
            | L::JUNIPER_FRELAY => juniper(4, 4, 0, NOT_SET),
            L::JUNIPER_ATM1 => juniper(4, 4, 0, 10),
            L::JUNIPER_ATM2 => juniper(8, 8, 0, 10),
            L::JUNIPER_PPPOE | L::JUNIPER_ETHER => juniper(16, 14, 18, 21),
            L::JUNIPER_PPPOE_ATM => juniper(4, 6, 0, NOT_SET),
            L::JUNIPER_GGSN => juniper(6, 12, 0, NOT_SET),
            L::JUNIPER_ES => juniper(6, NOT_SET, NOT_SET, NOT_SET),
            L::JUNIPER_MONITOR => juniper(12, 12, 0, NOT_SET),
            L::JUNIPER_SERVICES => juniper(12, NOT_SET, NOT_SET, NOT_SET),
            L::JUNIPER_VP | L::JUNIPER_ST => juniper(18, NOT_SET, NOT_SET, NOT_SET),
            L::JUNIPER_ISM
            | L::JUNIPER_VS
            | L::JUNIPER_SRX_E2E
            | L::JUNIPER_FIBRECHANNEL
            | L::JUNIPER_ATM_CEMIC => juniper(8, NOT_SET, NOT_SET, NOT_SET),
            _ => base,
        }
    }

    /// Whether the generator has a model of `link_type`'s header, so that its link-layer
    /// protocol primitives (`ip`, `arp`, `host`…) compile. Primitives that do not depend on
    /// the link layer (`len`, `less`, `greater`, `link[…]`) compile on every link type.
    pub fn supports(link_type: LinkType) -> bool {
        Link::new(link_type).kind != Kind::Opaque
    }

    /// The offset of the network-layer header from the start of the packet.
    pub(crate) fn nl(&self) -> u32 {
        self.off_linkpl.wrapping_add(self.off_nl)
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
