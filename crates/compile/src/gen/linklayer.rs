//! The link layer: "the link-layer payload is protocol P" on every supported link type
//! (EtherTypes, 802.2 LLC and SNAP, PPP protocol numbers, loopback address families, the IP
//! version nibble, inside MPLS and tunnels), and the `llc` primitives (gencode's
//! `gen_linktype`, `gen_llc_linktype`, `gen_snap`, `gen_llc_*`).

use super::*;

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
            Kind::Null | Kind::Loop => {
                // AF_INET and Linux's AF_INET6; DLT_NULL holds it in (little-endian) host order.
                let af = match ll_proto {
                    IP => 2u32,
                    IPV6 => 10,
                    _ => return Ok(self.t.never()),
                };
                let v = if link.kind == Kind::Null { af.swap_bytes() } else { af };
                self.eq(Base::Packet, 0, Size::W, v)
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
        }
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
            link::Kind::Llc => Ok(self.t.always()),
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
