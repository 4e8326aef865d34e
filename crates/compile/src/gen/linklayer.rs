//! The link layer: "the link-layer payload is protocol P" on every link type that says
//! (EtherTypes, 802.2 LLC and SNAP, PPP protocol numbers, loopback address families in the
//! capture file's byte order, the IP version nibble, ARCnet protocol IDs, Frame Relay NLPIDs,
//! Juniper's cookie, SunATM's LLC encapsulation, inside MPLS, LANE and tunnels), and the `llc`
//! primitives (gencode's `gen_linktype`, `gen_loopback_linktype`, `gen_llc_linktype`,
//! `gen_snap`, `gen_llc_*`).

use super::atm::{AtmField, PT_LLC, SUNATM_PKT_BEGIN};
use super::*;
use crate::pipeline::ByteOrder;

use sift_wire::loopback::{AF_INET, AF_INET6_BSD, AF_INET6_DARWIN, AF_INET6_FREEBSD};

/// Linux's AF_INET6, what libpcap on Linux tests without a capture file (the BSDs' values are
/// `sift_wire::loopback`'s).
const AF_INET6_LINUX: u32 = 10;

impl<T: Target> Gen<'_, T> {
    pub(super) fn linktype(&mut self, ll_proto: u32) -> R<T::Pred> {
        if self.label_depth > 0 {
            // Inside MPLS: the bottom-of-stack bit and the IP version (gen_mpls_linktype).
            let version = match ll_proto {
                ethertype::IP | 0x21 => 0x40,
                ethertype::IPV6 | 0x57 => 0x60,
                _ => {
                    return Err(CompileError::new(
                        K::AfterMpls(MplsConflict::Protocol(ll_proto)),
                        None,
                    ));
                }
            };
            let b0 = self.cmp(Base::Net, 0u32.wrapping_sub(2), Size::B, Cmp::Eq, 1, 1)?;
            let b1 = self.cmp(Base::Net, 0, Size::B, Cmp::Eq, version, 0xf0)?;
            return Ok(self.and(b0, b1));
        }
        if self.link.lane && self.link.kind == link::Kind::Ether && self.link.tunnel.is_none() {
            // LANE inside SunATM: not an LE control frame, then the Ethernet test (gencode's
            // gen_prevlinkhdr_check).
            let b0 = self.lane_data()?;
            self.link.lane = false;
            let b1 = self.linktype(ll_proto);
            self.link.lane = true;
            return Ok(self.and(b0, b1?));
        }
        if matches!(self.link.kind, link::Kind::Ether | link::Kind::Sll)
            && (ll_proto <= link::ETHERMTU
                || matches!(ll_proto, ethertype::ATALK | ethertype::AARP))
        {
            return self.llc_linktype(ll_proto);
        }
        let tunnel = self.link.tunnel.filter(|_| self.link.kind == link::Kind::Ether);
        if tunnel.is_some_and(|t| t.geneve) {
            // Geneve's protocol type, or the inner Ethernet type (gencode's is_geneve).
            return self.eq(Base::LinkType, 0, Size::H, ll_proto);
        }
        if self.link.tunnel.is_some() && self.link.kind == link::Kind::Ppp {
            // PPP at a run-time offset (`pppoes` inside a tunnel or after `vlan` with Linux
            // extensions).
            return self.eq(Base::LinkType, 0, Size::H, link::ppp_type(ll_proto));
        }
        if tunnel.is_some() && ll_proto > link::ETHERMTU {
            // Ethernet at run-time offsets (inside vxlan, after `vlan` with Linux
            // extensions): the type field through its word.
            return self.eq(Base::LinkType, 0, Size::H, ll_proto);
        }
        match self.link.kind {
            link::Kind::Llc => return self.llc802_linktype(ll_proto),
            link::Kind::SunAtm => {
                // LLC encapsulation (the pseudo-header's protocol type), then the 802.2 test.
                let b0 = self.atm_field(AtmField::ProtoType, Cmp::Eq, PT_LLC)?;
                let b1 = self.llc802_linktype(ll_proto)?;
                return Ok(self.and(b0, b1));
            }
            link::Kind::Wlan => {
                // A data frame (gen_check_802_11_data_frame), then the 802.2 payload.
                let b0 = self.wlan_data_frame()?;
                let b1 = self.llc802_linktype(ll_proto)?;
                return Ok(self.and(b0, b1));
            }
            link::Kind::Pflog => {
                // The address family, in the header's second byte (Linux's AF_INET6).
                return Ok(match ll_proto {
                    ethertype::IP => self.eq(Base::LinkHdr, 1, Size::B, 2)?,
                    ethertype::IPV6 => self.eq(Base::LinkHdr, 1, Size::B, 10)?,
                    _ => self.t.never(),
                });
            }
            _ => {}
        }
        self.fixed_linktype(ll_proto)
    }

    /// gencode's `gen_linktype(ll_proto)` where the link layer says what its payload is at a
    /// fixed place: a type field, the IP version nibble, a loopback address family.
    fn fixed_linktype(&mut self, ll_proto: u32) -> R<T::Pred> {
        use ethertype::*;
        use link::{Kind, llcsap};
        let link = self.link;
        let type_h = |g: &mut Self, off: u32, v: u32| g.eq(Base::Packet, off, Size::H, v);
        match link.kind {
            // libpcap 1.10 compares LINUX_SLL2's protocol field as is.
            Kind::Sll2 => type_h(self, link.off_linktype.unwrap_or(0), ll_proto),
            Kind::Ether | Kind::Sll => {
                // `linktype` handles 802.2/SNAP encapsulation before calling this.
                if ll_proto <= link::ETHERMTU || matches!(ll_proto, ATALK | AARP) {
                    return Err(CompileError::unsupported(
                        format!(
                            "link-layer protocol {ll_proto:#x} (LLC/SNAP encapsulation) on {}",
                            link.link_type
                        ),
                        None,
                    ));
                }
                type_h(self, link.off_linktype.unwrap_or(0), ll_proto)
            }
            Kind::Raw => match ll_proto {
                IP => self.cmp(Base::Packet, 0, Size::B, Cmp::Eq, 0x40, 0xf0),
                IPV6 => self.cmp(Base::Packet, 0, Size::B, Cmp::Eq, 0x60, 0xf0),
                _ => Ok(self.t.never()),
            },
            Kind::Ipv4 => Ok(if ll_proto == IP { self.t.always() } else { self.t.never() }),
            Kind::Ipv6 => Ok(if ll_proto == IPV6 { self.t.always() } else { self.t.never() }),
            Kind::Null | Kind::Loop => match ll_proto {
                IP => self.loopback_af(AF_INET),
                // A capture file may come from any system, so every BSD value of AF_INET6 is
                // tested (gencode's order: 24 or 28, then 30 in front); without one, this
                // system's (Linux: 10).
                IPV6 if self.savefile.is_some() => {
                    let b0 = self.loopback_af(AF_INET6_BSD)?;
                    let b1 = self.loopback_af(AF_INET6_FREEBSD)?;
                    let b1 = self.or(b0, b1);
                    let b0 = self.loopback_af(AF_INET6_DARWIN)?;
                    Ok(self.or(b0, b1))
                }
                IPV6 => self.loopback_af(AF_INET6_LINUX),
                _ => Ok(self.t.never()),
            },
            Kind::Ppp if link.link_type == LinkType::PPP_BSDOS && ll_proto == IP => {
                // IPv4, or Van Jacobson compressed or uncompressed TCP/IP.
                let off = link.off_linktype.unwrap_or(2);
                let b0 = type_h(self, off, 0x21)?;
                let b1 = type_h(self, off, 0x2d)?;
                let b1 = self.or(b0, b1);
                let b0 = type_h(self, off, 0x2f)?;
                Ok(self.or(b1, b0))
            }
            Kind::Ppp => type_h(self, link.off_linktype.unwrap_or(2), link::ppp_type(ll_proto)),
            Kind::Llc | Kind::Wlan | Kind::Pflog => {
                // `linktype` handles these link types before calling this.
                Err(CompileError::unsupported("LLC link-layer types here", None))
            }
            Kind::CHdlc => {
                // Cisco's EtherType lookalike for OSI is 0xfefe.
                let v = if ll_proto == llcsap::ISONS { 0xfefe } else { ll_proto };
                type_h(self, link.off_linktype.unwrap_or(2), v)
            }
            Kind::Arcnet => {
                // ARCnet protocol IDs, RFC 1201's and (for IPv4 and ARP) RFC 1051's.
                let id = |g: &mut Self, v: u32| g.eq(Base::LinkType, 0, Size::B, v);
                match ll_proto {
                    IPV6 => id(self, 0xc4),
                    IP | ARP => {
                        let (new, old) = if ll_proto == IP { (0xd4, 0xf0) } else { (0xd5, 0xf1) };
                        let b0 = id(self, new)?;
                        let b1 = id(self, old)?;
                        Ok(self.or(b0, b1))
                    }
                    REVARP => id(self, 0xd6),
                    ATALK => id(self, 0xdd),
                    _ => Ok(self.t.never()),
                }
            }
            Kind::Frelay => {
                // The UI control byte and the NLPID (gencode assumes a two-byte address).
                let nlpid = |g: &mut Self, v: u32| g.eq(Base::LinkHdr, 2, Size::H, 0x0300 | v);
                match ll_proto {
                    IP => nlpid(self, 0xcc),
                    IPV6 => nlpid(self, 0x8e),
                    llcsap::ISONS => {
                        let b0 = nlpid(self, osi::CLNP)?;
                        let b1 = nlpid(self, osi::ESIS)?;
                        let b2 = nlpid(self, osi::ISIS)?;
                        let b2 = self.or(b1, b2);
                        Ok(self.or(b0, b2))
                    }
                    _ => Ok(self.t.never()),
                }
            }
            // Only the magic cookie "MGC" (gencode: "just lets verify the magic number").
            Kind::Juniper => self.cmp(Base::LinkHdr, 0, Size::W, Cmp::Eq, 0x4d47_4300, 0xffff_ff00),
            // The MS/TP preamble.
            Kind::MsTp => self.cmp(Base::LinkHdr, 0, Size::W, Cmp::Eq, 0x55ff_0000, 0xffff_0000),
            Kind::Ipnet => match ll_proto {
                IP => self.eq(Base::LinkType, 0, Size::B, 2),
                IPV6 => self.eq(Base::LinkType, 0, Size::B, 26),
                _ => Ok(self.t.never()),
            },
            Kind::Ltalk => Ok(if ll_proto == ATALK { self.t.always() } else { self.t.never() }),
            Kind::TypeField => type_h(self, link.off_linktype.unwrap_or(0), ll_proto),
            Kind::SunAtm => {
                // `linktype` handles SunATM before calling this.
                Err(CompileError::unsupported("SunATM link-layer types here", None))
            }
            Kind::Opaque => Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::LinkProtocol, link: link.link_type },
                None,
            )),
        }
    }

    /// gencode's `gen_loopback_linktype`: the 32-bit address family of DLT_NULL and DLT_ENC
    /// is in the byte order of the system that wrote it (the capture file's, or this host's
    /// without one); DLT_LOOP's is big-endian.
    fn loopback_af(&mut self, af: u32) -> R<T::Pred> {
        let little = match self.savefile {
            Some(order) => order == ByteOrder::Little,
            None => ByteOrder::native() == ByteOrder::Little,
        };
        let v = if self.link.kind == link::Kind::Null && little { af.swap_bytes() } else { af };
        self.eq(Base::LinkHdr, 0, Size::W, v)
    }

    /// gencode's `gen_prevlinkhdr_check` after `lane`: the LANE frame does not begin with the
    /// LE control marker 0xff00 (the SunATM pseudo-header is at the start of the packet).
    pub(super) fn lane_data(&mut self) -> R<T::Pred> {
        let b0 = self.eq(Base::Packet, SUNATM_PKT_BEGIN, Size::H, 0xff00)?;
        Ok(self.not(b0))
    }

    /// gencode's `gen_ether_linktype` and `gen_linux_sll_linktype` for 802.2/SNAP-encapsulated
    /// protocols (LLC SAPs, IPX, AppleTalk).
    pub(super) fn llc_linktype(&mut self, ll_proto: u32) -> R<T::Pred> {
        use link::llcsap;
        let ether = self.link.kind == link::Kind::Ether;
        // "This is an 802.2 frame": a length, not a type (Ethernet), or LINUX_SLL_P_802_2.
        let is_8022 = |g: &mut Self| {
            if ether {
                let p = g.cmp(Base::LinkType, 0, Size::H, Cmp::Gt, link::ETHERMTU, u32::MAX)?;
                Ok(g.not(p))
            } else {
                g.eq(Base::LinkType, 0, Size::H, 4)
            }
        };
        Ok(match ll_proto {
            llcsap::ISONS | llcsap::IP | llcsap::NETBEUI => {
                let b0 = is_8022(self)?;
                let b1 = self.eq(Base::LinkPl, 0, Size::H, (ll_proto << 8) | ll_proto)?;
                self.and(b0, b1)
            }
            llcsap::IPX if ether => {
                let b0 = self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX)?;
                let b1 = self.eq(Base::LinkPl, 0, Size::H, 0xffff)?;
                let b1 = self.or(b0, b1);
                let b0 = self.snap(0x000000, ethertype::IPX)?;
                let b1 = self.or(b0, b1);
                let b0 = is_8022(self)?;
                let b1 = self.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ethertype::IPX)?;
                self.or(b0, b1)
            }
            llcsap::IPX => {
                let b0 = self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX)?;
                let b1 = self.snap(0x000000, ethertype::IPX)?;
                let b1 = self.or(b0, b1);
                let b0 = is_8022(self)?;
                let b1 = self.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, 1)?; // LINUX_SLL_P_802_3
                let b1 = self.or(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ethertype::IPX)?;
                self.or(b0, b1)
            }
            ethertype::ATALK | ethertype::AARP => {
                let b0 = is_8022(self)?;
                let b1 = if ll_proto == ethertype::ATALK {
                    self.snap(0x080007, ethertype::ATALK)?
                } else {
                    self.snap(0x000000, ethertype::AARP)?
                };
                let b1 = self.and(b0, b1);
                let b0 = self.eq(Base::LinkType, 0, Size::H, ll_proto)?;
                self.or(b0, b1)
            }
            _ if ether => {
                let b0 = is_8022(self)?;
                let b1 = self.eq(Base::LinkType, 2, Size::B, ll_proto)?;
                self.and(b0, b1)
            }
            _ => {
                let b0 = is_8022(self)?;
                let b1 = self.eq(Base::LinkPl, 0, Size::B, ll_proto)?;
                self.and(b0, b1)
            }
        })
    }

    /// gencode's `gen_llc_linktype` (FDDI, Token Ring): the DSAP, or the SNAP type field.
    pub(super) fn llc802_linktype(&mut self, ll_proto: u32) -> R<T::Pred> {
        use link::llcsap;
        match ll_proto {
            llcsap::IP | llcsap::ISONS | llcsap::NETBEUI => {
                self.eq(Base::LinkPl, 0, Size::H, (ll_proto << 8) | ll_proto)
            }
            llcsap::IPX => self.eq(Base::LinkPl, 0, Size::B, llcsap::IPX),
            ethertype::ATALK => self.snap(0x080007, ethertype::ATALK),
            p if p <= link::ETHERMTU => self.eq(Base::LinkPl, 0, Size::B, p),
            p => self.eq(Base::LinkPl, 6, Size::H, p),
        }
    }

    /// An 802.11 data frame: type bits `10` in the frame control (libpcap 1.11's
    /// `gen_check_802_11_data_frame`, one masked comparison).
    pub(super) fn wlan_data_frame(&mut self) -> R<T::Pred> {
        self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Eq, 0x08, 0x0c)
    }

    /// gencode's `gen_llc`: "an 802.2 LLC frame".
    pub(super) fn llc_frame(&mut self) -> R<T::Pred> {
        let not_here = || {
            CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Llc, link: self.link.link_type },
                None,
            )
        };
        if matches!(
            self.link.link_type,
            LinkType::IP_OVER_FC | LinkType::NETANALYZER | LinkType::NETANALYZER_TRANSPARENT
        ) {
            return Err(not_here());
        }
        match self.link.kind {
            link::Kind::Wlan => self.wlan_data_frame(),
            link::Kind::Ether => {
                let b0 = self.cmp(Base::LinkType, 0, Size::H, Cmp::Gt, link::ETHERMTU, u32::MAX)?;
                let b0 = self.not(b0);
                // Not NetWare over raw 802.3 (DSAP and SSAP 0xff).
                let b1 = self.eq(Base::LinkPl, 0, Size::H, 0xffff)?;
                let b1 = self.not(b1);
                Ok(self.and(b0, b1))
            }
            link::Kind::Llc if self.link.link_type == LinkType::ATM_CLIP => Err(not_here()),
            link::Kind::Llc => Ok(self.t.always()),
            // LLC encapsulation in the ATM pseudo-header.
            link::Kind::SunAtm => self.atm_field(AtmField::ProtoType, Cmp::Eq, PT_LLC),
            _ => Err(not_here()),
        }
    }

    /// `llc [i|s|u|subtype]` (gencode's `gen_llc_*`).
    pub(super) fn llc(&mut self, kind: Option<&str>) -> R<T::Pred> {
        let b0 = self.llc_frame()?;
        let Some(kind) = kind else { return Ok(b0) };
        let b1 = match kind {
            "i" => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Clear, 1, u32::MAX)?,
            "s" => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, 1, 3)?,
            "u" => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, 3, 3)?,
            k => {
                let s_sub = match k {
                    "rr" => Some(0x01),
                    "rnr" => Some(0x05),
                    "rej" => Some(0x09),
                    _ => None,
                };
                let u_sub = match k {
                    "ui" => Some(0x03),
                    "ua" => Some(0x63),
                    "disc" => Some(0x43),
                    "dm" => Some(0x0f),
                    "sabme" => Some(0x6f),
                    "test" => Some(0xe3),
                    "xid" => Some(0xaf),
                    "frmr" => Some(0x87),
                    _ => None,
                };
                match (s_sub, u_sub) {
                    (Some(v), _) => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, v, 0x0f)?,
                    (None, Some(v)) => self.cmp(Base::LinkPl, 2, Size::B, Cmp::Eq, v, 0xef)?,
                    (None, None) => {
                        return Err(CompileError::new(
                            K::NameUnknown { what: NameKind::LlcType, name: k.into() },
                            None,
                        ));
                    }
                }
            }
        };
        Ok(self.and(b0, b1))
    }

    /// gencode's `gen_snap`: an LLC/SNAP header with `orgcode` and `ptype`.
    pub(super) fn snap(&mut self, orgcode: u32, ptype: u32) -> R<T::Pred> {
        let [_, o1, o2, o3] = orgcode.to_be_bytes();
        let [p1, p2] = (ptype as u16).to_be_bytes();
        self.bcmp(Base::LinkPl, 0, &[0xaa, 0xaa, 0x03, o1, o2, o3, p1, p2])
    }
}
