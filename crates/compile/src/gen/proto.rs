//! Network and transport protocols: the abbreviations (`ip`, `tcp`, `icmp6`, the ISO and
//! IS-IS ones…), `[ip|ip6|link|iso|isis] proto N`, protocol names, and the fragment test
//! (gencode's `gen_proto_abbrev`, `gen_proto`, `gen_ipfrag`).

use super::*;

impl<T: Target> Gen<'_, T> {
    /// gencode's `gen_ipfrag`: not a fragment other than the first.
    pub(super) fn ipfrag(&mut self) -> R<T::Pred> {
        self.cmp(Base::Net, 6, Size::H, Cmp::Clear, 0x1fff, u32::MAX)
    }

    /// gencode's `gen_proto_abbrev`.
    pub(super) fn abbrev(&mut self, p: Proto) -> R<T::Pred> {
        use ipproto::*;
        match p {
            Proto::Ip => self.linktype(ethertype::IP),
            Proto::Ip6 => self.linktype(ethertype::IPV6),
            Proto::Arp => self.linktype(ethertype::ARP),
            Proto::Rarp => self.linktype(ethertype::REVARP),
            Proto::Tcp => self.proto(TCP, None),
            Proto::Udp => self.proto(UDP, None),
            Proto::Sctp => self.proto(SCTP, None),
            Proto::Icmp => self.proto(ICMP, Some(Proto::Ip)),
            Proto::Igmp => self.proto(IGMP, Some(Proto::Ip)),
            Proto::Igrp => self.proto(IGRP, Some(Proto::Ip)),
            Proto::Pim => self.proto(PIM, None),
            Proto::Vrrp | Proto::Carp => self.proto(VRRP, Some(Proto::Ip)),
            Proto::Icmp6 => self.proto(ICMPV6, Some(Proto::Ip6)),
            Proto::Ah => self.proto(AH, None),
            Proto::Atalk => self.linktype(ethertype::ATALK),
            Proto::Aarp => self.linktype(ethertype::AARP),
            Proto::Decnet => self.linktype(ethertype::DECNET),
            Proto::Sca => self.linktype(ethertype::SCA),
            Proto::Lat => self.linktype(ethertype::LAT),
            Proto::Mopdl => self.linktype(ethertype::MOPDL),
            Proto::Moprc => self.linktype(ethertype::MOPRC),
            Proto::Iso => self.linktype(link::llcsap::ISONS),
            Proto::Clnp => self.proto(osi::CLNP, Some(Proto::Iso)),
            Proto::Esis => self.proto(osi::ESIS, Some(Proto::Iso)),
            Proto::Isis => self.proto(osi::ISIS, Some(Proto::Iso)),
            // IS-IS PDU types: L1/L2 LAN hello 15/16, point-to-point hello 17, L1/L2 LSP
            // 18/20, CSNP 24/25, PSNP 26/27.
            Proto::L1 => self.isis_any(&[15, 17, 18, 24, 26]),
            Proto::L2 => self.isis_any(&[16, 17, 20, 25, 27]),
            Proto::Iih => self.isis_any(&[15, 16, 17]),
            Proto::Lsp => self.isis_any(&[18, 20]),
            Proto::Snp => self.isis_any(&[24, 25, 26, 27]),
            Proto::Csnp => self.isis_any(&[24, 25]),
            Proto::Psnp => self.isis_any(&[26, 27]),
            Proto::Stp => self.linktype(link::llcsap::BPDU),
            Proto::Ipx => self.linktype(link::llcsap::IPX),
            Proto::Netbeui => self.linktype(link::llcsap::NETBEUI),
            Proto::Esp => self.proto(ESP, None),
            p if p.is_link() => Err(CompileError::new(Q::LinkAlone, None)),
            p => Err(CompileError::unsupported(format!("`{}`", p.as_str()), None)),
        }
    }

    /// Any of the IS-IS PDU types, or-ed in gencode's order (each new one in front).
    pub(super) fn isis_any(&mut self, types: &[u32]) -> R<T::Pred> {
        let b0 = self.proto(types[0], Some(Proto::Isis))?;
        let b1 = self.proto(types[1], Some(Proto::Isis))?;
        let mut b1 = self.or(b0, b1);
        for &t in &types[2..] {
            let b0 = self.proto(t, Some(Proto::Isis))?;
            b1 = self.or(b0, b1);
        }
        Ok(b1)
    }

    /// gencode's `gen_proto(v, proto, Q_DEFAULT)`: `[ip|ip6|link] proto v`.
    pub(super) fn proto(&mut self, v: u32, proto: Option<Proto>) -> R<T::Pred> {
        match proto {
            None => {
                let b0 = self.proto(v, Some(Proto::Ip))?;
                let b1 = self.proto(v, Some(Proto::Ip6))?;
                Ok(self.or(b0, b1))
            }
            Some(Proto::Ip) => {
                let b0 = self.linktype(ethertype::IP)?;
                let b1 = self.eq(Base::Net, 9, Size::B, v)?;
                Ok(self.and(b0, b1))
            }
            Some(Proto::Ip6) => {
                let b0 = self.linktype(ethertype::IPV6)?;
                // Also a fragment header before the final header.
                let b2 = self.eq(Base::Net, 6, Size::B, ipproto::FRAGMENT)?;
                let b1 = self.eq(Base::Net, 40, Size::B, v)?;
                let b1 = self.and(b2, b1);
                let b2 = self.eq(Base::Net, 6, Size::B, v)?;
                let b1 = self.or(b2, b1);
                Ok(self.and(b0, b1))
            }
            Some(p) if p.is_link() => {
                // libpcap 1.11's range checks.
                let what = match self.link.kind {
                    link::Kind::Ppp => Quantity::PppProtocol,
                    link::Kind::CHdlc => Quantity::HdlcProtocol,
                    _ => Quantity::EtherType,
                };
                if v > 65535 {
                    return Err(CompileError::new(
                        K::OutOfRange { what, value: v.into(), max: 65535 },
                        None,
                    ));
                }
                if matches!(
                    self.link.kind,
                    link::Kind::Ether | link::Kind::Sll | link::Kind::Llc | link::Kind::Wlan
                ) && (256..=link::ETHERMTU).contains(&v)
                {
                    return Err(CompileError::new(
                        K::OutOfRange { what: Quantity::LlcDsap, value: v.into(), max: 255 },
                        None,
                    ));
                }
                self.linktype(v)
            }
            // Frame Relay carries the NLPID itself: one test (gencode's special case).
            Some(Proto::Iso) if self.link.kind == link::Kind::Frelay => {
                self.eq(Base::LinkHdr, 2, Size::H, 0x0300 | v)
            }
            Some(Proto::Iso) => {
                let b0 = self.linktype(link::llcsap::ISONS)?;
                let b1 = self.eq(Base::NoSnap, 0, Size::B, v)?;
                Ok(self.and(b0, b1))
            }
            Some(Proto::Isis) => {
                let b0 = self.proto(osi::ISIS, Some(Proto::Iso))?;
                let b1 = self.eq(Base::NoSnap, 4, Size::B, v)?;
                Ok(self.and(b0, b1))
            }
            Some(p @ (Proto::Arp | Proto::Rarp)) => {
                Err(CompileError::new(Q::NoEncapsulation(p), None))
            }
            Some(
                p @ (Proto::Tcp
                | Proto::Udp
                | Proto::Sctp
                | Proto::Icmp
                | Proto::Icmp6
                | Proto::Igmp),
            ) => Err(CompileError::new(Q::OnProto(p), None)),
            Some(p) => Err(CompileError::unsupported(format!("`{} proto`", p.as_str()), None)),
        }
    }

    pub(super) fn proto_number(&self, proto: Option<Proto>, s: &str) -> R<u32> {
        if proto.is_some_and(Proto::is_link) {
            let v = match s {
                "ip" => ethertype::IP,
                "ip6" => ethertype::IPV6,
                "arp" => ethertype::ARP,
                "rarp" => ethertype::REVARP,
                "decnet" => ethertype::DECNET,
                "lat" => ethertype::LAT,
                "sca" => ethertype::SCA,
                "moprc" => ethertype::MOPRC,
                "mopdl" => ethertype::MOPDL,
                "loopback" => ethertype::LOOPBACK,
                "atalk" => ethertype::ATALK,
                "aarp" => ethertype::AARP,
                "ipx" => link::llcsap::IPX,
                "lldp" => ethertype::LLDP,
                // Slow protocols (LACP, IEEE 802.3 annex 57A).
                "slow" => 0x8809,
                "iso" => 0xfe,
                "stp" => 0x42,
                "netbeui" => 0xf0,
                _ => {
                    return Err(CompileError::new(
                        K::NameUnknown { what: NameKind::EtherProto, name: s.into() },
                        None,
                    ));
                }
            };
            return Ok(v);
        }
        if proto == Some(Proto::Iso) {
            // pcap_nametoosi
            return match s {
                "clnp" => Ok(osi::CLNP),
                "esis" => Ok(osi::ESIS),
                "isis" => Ok(osi::ISIS),
                _ => Err(CompileError::new(
                    K::NameUnknown { what: NameKind::OsiProto, name: s.into() },
                    None,
                )),
            };
        }
        if !matches!(proto, None | Some(Proto::Ip | Proto::Ip6)) {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::Protocol, name: s.into() },
                None,
            ));
        }
        self.resolver.protocol(s).map(u32::from).ok_or_else(|| {
            CompileError::new(K::NameUnknown { what: NameKind::IpProto, name: s.into() }, None)
        })
    }
}
