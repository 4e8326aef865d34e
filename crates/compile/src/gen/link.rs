//! The link-layer model: where the link-layer type field and payload are, per link type, and
//! how "the packet is protocol P" is tested (gencode's `init_linktype` and `gen_linktype`).

use crate::build::{Builder, Cmp, Load, Pred};
use crate::ir::{Size, Slot};

use super::{CompileError, R};

/// EtherTypes used by the generator.
pub(crate) mod ethertype {
    pub const IP: u32 = 0x0800;
    pub const ARP: u32 = 0x0806;
    pub const REVARP: u32 = 0x8035;
    pub const IPV6: u32 = 0x86dd;
    pub const ATALK: u32 = 0x809b;
    pub const AARP: u32 = 0x80f3;
    pub const IPX: u32 = 0x8137;
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
pub(crate) const ETHERMTU: u32 = 1500;

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

/// One supported link type (Linux DLT numbers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Link {
    /// `DLT_…` name without the prefix.
    pub name: &'static str,
    /// What kind of header.
    pub kind: Kind,
    /// `pcap_datalink_val_to_description` (for libpcap's "no VLAN support for …").
    pub descr: &'static str,
    /// Offset of the link-layer header (`off_linkhdr`; moves after `pppoes`).
    pub off_linkhdr: u32,
    /// Offset of the type field (`None`: the link type has none, gencode's `OFFSET_NOT_SET`).
    pub off_linktype: Option<u32>,
    /// Offset of the link-layer payload (`off_linkpl`).
    pub off_linkpl: u32,
    /// Offset of the network layer in the payload (`off_nl`).
    pub off_nl: u32,
    /// Offset of the network layer in an 802.2 payload without SNAP (`off_nl_nosnap`).
    pub off_nl_nosnap: u32,
    /// Offsets of the source and destination MAC addresses, for link types that have them.
    pub mac: Option<(u32, u32)>,
    /// The variable-length header before the link-layer header, if any.
    pub prefix: Prefix,
    /// Whether the link-layer payload starts at a run-time offset (`off_linkpl.is_variable`):
    /// payload-relative loads are `ldx M[r]; ld [x + k]`.
    pub var_pl: bool,
    /// Inside `vxlan`/`geneve`: the scratch words holding the inner offsets.
    pub tunnel: Option<Tunnel>,
}

/// The scratch words holding run-time offsets of the frame later primitives look at
/// (gencode's `off_linkhdr.reg`, `off_linktype.reg` and `off_linkpl.reg` after
/// `gen_vxlan`/`gen_geneve`, or after `vlan` with Linux extensions).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tunnel {
    /// The inner link-layer header (`None`: at its constant offset, as after `vlan` with
    /// Linux extensions, which moves only the type and payload).
    pub hdr: Option<Slot>,
    /// The inner link-layer type field (Geneve: its protocol type unless Ethernet).
    pub lt: Slot,
    /// The inner link-layer payload.
    pub pl: Slot,
    /// Geneve (whose link type is compared as is) rather than VXLAN.
    pub geneve: bool,
}

/// `(DLT, name)` of link types libpcap knows but sift does not generate code for yet.
const OTHER_NAMES: &[(i32, &str)] = &[
    (16, "PPP_BSDOS"),
    (7, "ARCNET"),
    (129, "ARCNET_LINUX"),
    (140, "MTP2"),
    (123, "SUNATM"),
    (107, "FRELAY"),
];

/// `(name, DLT)` of the link types the generator supports (Linux DLT numbers).
pub const SUPPORTED: &[(&str, i32)] = &[
    ("EN10MB", 1),
    ("RAW", 12),
    ("IPV4", 228),
    ("IPV6", 229),
    ("LINUX_SLL", 113),
    ("LINUX_SLL2", 276),
    ("NULL", 0),
    ("LOOP", 108),
    ("PPP", 9),
    ("C_HDLC", 104),
    ("FDDI", 10),
    ("IEEE802", 6),
    ("SLIP", 8),
    ("ENC", 109),
    ("PFLOG", 117),
    ("IEEE802_11", 105),
    ("IEEE802_11_RADIO", 127),
    ("IEEE802_11_RADIO_AVS", 163),
    ("PRISM_HEADER", 119),
    ("PPI", 192),
    ("PPP_SERIAL", 50),
    ("PPP_PPPD", 166),
    ("PPP_ETHER", 51),
    ("IP_OVER_FC", 122),
    ("NETANALYZER", 240),
    ("NETANALYZER_TRANSPARENT", 241),
    ("DSA_TAG_BRCM", 281),
    ("DSA_TAG_DSA", 284),
];

/// `pcap_datalink_val_to_description` of the supported link types.
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("EN10MB", "Ethernet"),
    ("RAW", "Raw IP"),
    ("IPV4", "Raw IPv4"),
    ("IPV6", "Raw IPv6"),
    ("LINUX_SLL", "Linux cooked v1"),
    ("LINUX_SLL2", "Linux cooked v2"),
    ("NULL", "BSD loopback"),
    ("LOOP", "OpenBSD loopback"),
    ("PPP", "PPP"),
    ("C_HDLC", "Cisco HDLC"),
    ("FDDI", "FDDI"),
    ("IEEE802", "Token Ring"),
    ("SLIP", "SLIP"),
    ("ENC", "OpenBSD encapsulated IP"),
    ("PFLOG", "OpenBSD pflog file"),
    ("IEEE802_11", "802.11"),
    ("IEEE802_11_RADIO", "802.11 plus radiotap header"),
    ("IEEE802_11_RADIO_AVS", "802.11 plus AVS radio information header"),
    ("PRISM_HEADER", "802.11 plus Prism header"),
    ("PPI", "Per-Packet Information"),
    ("PPP_SERIAL", "PPP over serial"),
    ("PPP_PPPD", "PPP for pppd, with direction flag"),
    ("PPP_ETHER", "PPPoE"),
    ("IP_OVER_FC", "RFC 2625 IP-over-Fibre Channel"),
    ("NETANALYZER", "Ethernet with Hilscher netANALYZER pseudo-header"),
    ("NETANALYZER_TRANSPARENT", "Ethernet with Hilscher netANALYZER pseudo-header and preamble"),
    ("DSA_TAG_BRCM", "Broadcom tag"),
    ("DSA_TAG_DSA", "Marvell DSA"),
];

impl Link {
    /// The model for DLT number `dlt`, or an error naming it.
    pub fn for_dlt(dlt: i32) -> R<Link> {
        let l = |name, kind, off_linktype, off_linkpl| Link {
            name,
            descr: DESCRIPTIONS.iter().find(|(n, _)| *n == name).map_or(name, |(_, d)| d),
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
        Ok(match dlt {
            1 => with(l("EN10MB", Kind::Ether, Some(12), 14), 0, Some((6, 0))),
            10 => with(l("FDDI", Kind::Llc, Some(13), 13), 8, Some((7, 1))),
            6 => with(l("IEEE802", Kind::Llc, Some(14), 14), 8, Some((8, 2))),
            122 => with(l("IP_OVER_FC", Kind::Llc, Some(16), 16), 8, Some((10, 2))),
            // Ethernet after a netANALYZER pseudo-header (and preamble and SFD).
            240 => Link {
                off_linkhdr: 4,
                ..with(l("NETANALYZER", Kind::Ether, Some(16), 18), 0, Some((6, 0)))
            },
            241 => Link {
                off_linkhdr: 12,
                ..with(l("NETANALYZER_TRANSPARENT", Kind::Ether, Some(24), 26), 0, Some((6, 0)))
            },
            // Ethernet with a 4-byte switch tag before the type.
            281 => with(l("DSA_TAG_BRCM", Kind::Ether, Some(16), 18), 0, Some((6, 0))),
            284 => with(l("DSA_TAG_DSA", Kind::Ether, Some(16), 18), 0, Some((6, 0))),
            8 => l("SLIP", Kind::Raw, None, 16),
            12 => l("RAW", Kind::Raw, None, 0),
            228 => l("IPV4", Kind::Ipv4, None, 0),
            229 => l("IPV6", Kind::Ipv6, None, 0),
            113 => l("LINUX_SLL", Kind::Sll, Some(14), 16),
            276 => l("LINUX_SLL2", Kind::Sll2, Some(0), 20),
            0 => l("NULL", Kind::Null, Some(0), 4),
            108 => l("LOOP", Kind::Loop, Some(0), 4),
            9 => l("PPP", Kind::Ppp, Some(2), 4),
            104 => Link { off_nl_nosnap: 1, ..l("C_HDLC", Kind::CHdlc, Some(2), 4) },
            // DLT_ENC: the address family in host order, like DLT_NULL, in a 12-byte header.
            109 => l("ENC", Kind::Null, Some(0), 12),
            117 => Link { var_pl: true, ..l("PFLOG", Kind::Pflog, Some(0), 0) },
            50 => l("PPP_SERIAL", Kind::Ppp, Some(2), 4),
            166 => l("PPP_PPPD", Kind::Ppp, Some(2), 4),
            51 => l("PPP_ETHER", Kind::Ppp, Some(6), 8),
            105 | 127 | 163 | 119 | 192 => {
                let (name, prefix) = match dlt {
                    105 => ("IEEE802_11", Prefix::None),
                    127 => ("IEEE802_11_RADIO", Prefix::Radiotap),
                    163 => ("IEEE802_11_RADIO_AVS", Prefix::Avs),
                    119 => ("PRISM_HEADER", Prefix::Prism),
                    _ => ("PPI", Prefix::Ppi),
                };
                Link {
                    off_nl: 8,
                    off_nl_nosnap: 3,
                    prefix,
                    var_pl: true,
                    ..l(name, Kind::Wlan, Some(24), 0)
                }
            }
            _ => {
                let name = OTHER_NAMES
                    .iter()
                    .find(|(d, _)| *d == dlt)
                    .map_or_else(|| format!("DLT {dlt}"), |(_, n)| format!("DLT_{n}"));
                return Err(CompileError::new(
                    format!("link type {name} is not supported by sift yet"),
                    None,
                ));
            }
        })
    }

    /// The offset of the network-layer header from the start of the packet.
    pub fn nl(&self) -> u32 {
        self.off_linkpl + self.off_nl
    }

    /// Whether the link layer has MAC addresses (Ethernet-like, or 802.11).
    pub fn is_ether(&self) -> bool {
        self.mac.is_some() || self.kind == Kind::Wlan
    }

    /// Whether the link-layer header starts at a run-time offset (`off_linkhdr.is_variable`).
    pub fn var_hdr(&self) -> bool {
        self.prefix != Prefix::None
    }

    /// gencode's `gen_linktype(ll_proto)`: "the link-layer payload is `ll_proto`".
    pub fn linktype(&self, b: &mut Builder, ll_proto: u32) -> R<Pred> {
        use ethertype::*;
        let cmp_h = |b: &mut Builder, off: u32, v: u32| {
            b.cmp(Load::Abs(Size::H, off), Cmp::Eq, v, u32::MAX)
        };
        Ok(match self.kind {
            // libpcap 1.10 compares LINUX_SLL2's protocol field as is.
            Kind::Sll2 => cmp_h(b, self.off_linktype.unwrap_or(0), ll_proto),
            Kind::Ether | Kind::Sll => {
                // The code generator handles 802.2/SNAP encapsulation before calling this.
                if ll_proto <= ETHERMTU || matches!(ll_proto, ATALK | AARP) {
                    return Err(CompileError::unsupported(
                        format!(
                            "link-layer protocol {ll_proto:#x} (LLC/SNAP encapsulation) on DLT_{}",
                            self.name
                        ),
                        None,
                    ));
                }
                cmp_h(b, self.off_linktype.unwrap_or(0), ll_proto)
            }
            Kind::Raw => match ll_proto {
                IP => b.cmp(Load::Abs(Size::B, 0), Cmp::Eq, 0x40, 0xf0),
                IPV6 => b.cmp(Load::Abs(Size::B, 0), Cmp::Eq, 0x60, 0xf0),
                _ => b.never(),
            },
            Kind::Ipv4 => {
                if ll_proto == IP {
                    b.always()
                } else {
                    b.never()
                }
            }
            Kind::Ipv6 => {
                if ll_proto == IPV6 {
                    b.always()
                } else {
                    b.never()
                }
            }
            Kind::Null | Kind::Loop => {
                // AF_INET and Linux's AF_INET6; DLT_NULL holds it in (little-endian) host order.
                let af = match ll_proto {
                    IP => 2u32,
                    IPV6 => 10,
                    _ => return Ok(b.never()),
                };
                let v = if self.kind == Kind::Null { af.swap_bytes() } else { af };
                b.cmp(Load::Abs(Size::W, 0), Cmp::Eq, v, u32::MAX)
            }
            Kind::Ppp => cmp_h(b, self.off_linktype.unwrap_or(2), ppp_type(ll_proto)),
            Kind::Llc | Kind::Wlan | Kind::Pflog => {
                // The code generator handles these link types before calling this.
                return Err(CompileError::unsupported("LLC link-layer types here", None));
            }
            Kind::CHdlc => {
                // Cisco's EtherType lookalike for OSI is 0xfefe.
                let v = if ll_proto == llcsap::ISONS { 0xfefe } else { ll_proto };
                cmp_h(b, self.off_linktype.unwrap_or(2), v)
            }
        })
    }
}

/// gencode's `ethertype_to_ppptype`: the PPP protocol number for an EtherType (or 802.2
/// SAP) as libpcap uses them internally; others are compared as they are.
pub fn ppp_type(ll_proto: u32) -> u32 {
    use ethertype::*;
    match ll_proto {
        IP => 0x21,
        IPV6 => 0x57,
        0x6003 => 0x27,
        ATALK => 0x29,
        0x0600 => 0x25,
        llcsap::ISONS => 0x23,
        llcsap::BPDU => 0x31,
        llcsap::IPX => 0x2b,
        v => v,
    }
}
