//! Addresses: the qualifier checks of an id primitive, `host`/`net` (IPv4, IPv6, names),
//! MAC addresses (Ethernet-like and 802.11), `gateway`, DECnet hosts, `broadcast` and
//! `multicast` (gencode's `gen_scode`/`gen_ncode`/`gen_mcode6`, `gen_host`, `gen_host6`,
//! `gen_ehostop`, `gen_gateway`, `gen_dnhostop`).

use super::*;

impl<T: Target> Gen<'_, T> {
    pub(super) fn id(&mut self, q: &Quals, id: &Id) -> R<T::Pred> {
        let proto = q.proto.map(|p| p.0);
        let dir = q.dir.map_or(Dir::SrcOrDst, |d| d.0);
        let ty = q.ty.map(|t| t.0);
        if !matches!(dir, Dir::Src | Dir::Dst | Dir::SrcOrDst | Dir::SrcAndDst) {
            let dspan = q.dir.map(|d| d.1);
            let d = dir.as_str();
            if let Some(t @ (QualType::Port | QualType::Portrange)) = ty {
                let t = if t == QualType::Port { "port" } else { "portrange" };
                return Err(CompileError::new(Q::DirOnPort { dir: d, target: t }, dspan));
            }
            let wlan_dir = matches!(
                dir,
                Dir::Addr1 | Dir::Addr2 | Dir::Addr3 | Dir::Addr4 | Dir::Ra | Dir::Ta
            );
            if !wlan_dir {
                return Err(CompileError::unsupported(format!("`{d}`"), dspan));
            }
            let mac_id = match id {
                Id::Mac(_) => true,
                Id::Name(_) => q.proto.is_some_and(|p| p.0.is_link()),
                _ => false,
            };
            if self.link.kind != link::Kind::Wlan
                || !mac_id
                || !matches!(ty, None | Some(QualType::Host))
            {
                return Err(CompileError::new(Q::WlanDir { dir: d }, dspan));
            }
        }
        if q.proto.is_some_and(|p| p.0 == Proto::Decnet)
            && matches!(ty, None | Some(QualType::Host))
        {
            return self.decnet_host(id, dir);
        }
        if let Some((p, span)) = q.proto
            && !(p.qualifies_id()
                || (matches!(p, Proto::Iso | Proto::Isis) && ty == Some(QualType::Proto)))
        {
            return Err(CompileError::unsupported(
                format!("`{}` qualifiers", p.as_str()),
                Some(span),
            ));
        }
        match ty {
            None | Some(QualType::Host | QualType::Net) => self.host_like(proto, dir, ty, id),
            Some(QualType::Port) => self.port_id(proto, dir, id, false),
            Some(QualType::Portrange) => self.port_id(proto, dir, id, true),
            Some(QualType::Proto) => {
                let v = match id {
                    Id::Num(n) => *n,
                    Id::Name(s) => self.proto_number(proto, s)?,
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Protocol, text: String::new() },
                            None,
                        ));
                    }
                };
                self.proto(v, proto)
            }
            Some(QualType::Protochain) => {
                let v = match id {
                    Id::Num(n) => *n,
                    Id::Name(s) => self.proto_number(proto, s)?,
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Protocol, text: String::new() },
                            None,
                        ));
                    }
                };
                T::extension(self, Extension::Protochain { v, proto })
            }
            Some(QualType::Gateway) => match id {
                Id::Name(s) => self.gateway(proto, q.dir.is_some(), s),
                _ => Err(CompileError::new(
                    K::AddressInvalid { what: AddressKind::Gateway, text: String::new() },
                    None,
                )),
            },
        }
    }

    pub(super) fn host_like(
        &mut self,
        proto: Option<Proto>,
        dir: Dir,
        ty: Option<QualType>,
        id: &Id,
    ) -> R<T::Pred> {
        let is_net = ty == Some(QualType::Net);
        let link = proto.is_some_and(Proto::is_link);
        match id {
            Id::Num(n) => {
                if link {
                    return Err(CompileError::new(Q::LinkNumber, None));
                }
                let (mut v, mut mask) = (*n, u32::MAX);
                if is_net {
                    while v != 0 && v & 0xff00_0000 == 0 {
                        v <<= 8;
                        mask <<= 8;
                    }
                }
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4(s) => {
                if link {
                    return Err(CompileError::new(Q::LinkNumber, None));
                }
                let (v, n) = v4(s)?;
                let mask = u32::MAX.checked_shl(32 - 8 * n).unwrap_or(0);
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4Prefix { addr, len } => {
                let (v, _) = v4(addr)?;
                let mask = if *len == 0 { 0 } else { u32::MAX << (32 - len) };
                if !is_net {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host(v, mask, proto, dir, true)
            }
            Id::V4Mask { addr, mask } => {
                let (v, _) = v4(addr)?;
                let (m, _) = v4(mask)?;
                if !is_net {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host(v, m, proto, dir, true)
            }
            Id::V6(a) => self.host6(*a, 128, proto, dir, is_net),
            Id::V6Prefix(a, len) => {
                if !is_net && *len != 128 {
                    return Err(CompileError::new(Q::MaskOnHost, None));
                }
                self.host6(*a, *len, proto, dir, is_net)
            }
            Id::Mac(m) => {
                if is_net || !(proto.is_none() || link) {
                    return Err(CompileError::new(Q::MacNonEther, None));
                }
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::MacAddress,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                self.mac_host(*m, dir)
            }
            Id::Arc(a) => {
                if self.link.kind != link::Kind::Arcnet {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::ArcnetAddress,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                if is_net || !link {
                    return Err(CompileError::new(Q::ArcnetNonLink, None));
                }
                self.ahostop(*a, dir)
            }
            Id::Name(s) => self.host_name(proto, dir, is_net, s),
        }
    }

    pub(super) fn host_name(
        &mut self,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
        s: &str,
    ) -> R<T::Pred> {
        let resolver = self.resolver;
        if is_net {
            let Some(mut v) = resolver.network(s) else {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::Network, name: s.into() },
                    None,
                ));
            };
            // libpcap left-justifies getnetbyname's number byte by byte, widening the mask
            // only while it shifts; the resolver's numbers are already left-aligned.
            let mut mask = u32::MAX;
            while v != 0 && v & 0xff00_0000 == 0 {
                v <<= 8;
                mask <<= 8;
            }
            return self.host(v, mask, proto, dir, true);
        }
        if proto.is_some_and(Proto::is_link) {
            if !self.link.is_ether() {
                return Err(CompileError::new(
                    K::NotOnLinkType { what: LinkFeature::MacHostName, link: self.link.link_type },
                    None,
                ));
            }
            let Some(mac) = resolver.ether(s) else {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::EtherHost, name: s.into() },
                    None,
                ));
            };
            return self.mac_host(mac, dir);
        }
        let (mut tproto, mut tproto6) = (proto, proto);
        if self.link.off_linktype.is_none() && proto.is_none() {
            tproto = Some(Proto::Ip);
            tproto6 = Some(Proto::Ip6);
        }
        let mut acc: Option<T::Pred> = None;
        for addr in resolver.host(s) {
            let tmp = match addr {
                IpAddr::V4(a) => {
                    if tproto == Some(Proto::Ip6) {
                        continue;
                    }
                    self.host(u32::from(a), u32::MAX, tproto, dir, false)?
                }
                IpAddr::V6(a) => {
                    if matches!(tproto6, Some(Proto::Ip | Proto::Arp | Proto::Rarp)) {
                        continue;
                    }
                    self.host6(a, 128, tproto6, dir, false)?
                }
            };
            acc = Some(match acc {
                Some(b) => self.or(b, tmp),
                None => tmp,
            });
        }
        acc.ok_or_else(|| unknown_host(s))
    }

    /// gencode's `gen_host` for IPv4.
    pub(super) fn host(
        &mut self,
        addr: u32,
        mask: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<T::Pred> {
        match proto {
            None if self.label_depth > 0 => self.host(addr, mask, Some(Proto::Ip), dir, is_net),
            None => {
                let b0 = self.host(addr, mask, Some(Proto::Ip), dir, is_net)?;
                let b1 = self.host(addr, mask, Some(Proto::Arp), dir, is_net)?;
                let b1 = self.or(b0, b1);
                let b0 = self.host(addr, mask, Some(Proto::Rarp), dir, is_net)?;
                Ok(self.or(b1, b0))
            }
            Some(Proto::Ip) => self.hostop(addr, mask, dir, ethertype::IP, 12, 16),
            Some(Proto::Arp) => self.hostop(addr, mask, dir, ethertype::ARP, 14, 24),
            Some(Proto::Rarp) => self.hostop(addr, mask, dir, ethertype::REVARP, 14, 24),
            Some(p) if p.is_link() => {
                Err(CompileError::new(Q::OnHost { proto: None, v6: false, net: is_net }, None))
            }
            Some(p) => {
                Err(CompileError::new(Q::OnHost { proto: Some(p), v6: false, net: is_net }, None))
            }
        }
    }

    pub(super) fn hostop(
        &mut self,
        addr: u32,
        mask: u32,
        dir: Dir,
        ll: u32,
        src: u32,
        dst: u32,
    ) -> R<T::Pred> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let b0 = self.linktype(ll)?;
                let b1 = self.cmp(Base::Net, off, Size::W, Cmp::Eq, addr, mask)?;
                Ok(self.and(b0, b1))
            }
            _ => {
                let b0 = self.hostop(addr, mask, Dir::Src, ll, src, dst)?;
                let b1 = self.hostop(addr, mask, Dir::Dst, ll, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_host6`.
    pub(super) fn host6(
        &mut self,
        addr: Ipv6Addr,
        len: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<T::Pred> {
        match proto {
            None | Some(Proto::Ip6) => {
                let bits = u128::from(addr);
                let mask: u128 = if len == 0 { 0 } else { u128::MAX << (128 - len.min(128)) };
                if bits & !mask != 0 {
                    return Err(CompileError::new(
                        K::AddressInvalid { what: AddressKind::Ipv6Network, text: String::new() },
                        None,
                    ));
                }
                self.hostop6(bits, mask, dir, 8, 24)
            }
            Some(p) if p.is_link() => {
                Err(CompileError::new(Q::OnHost { proto: None, v6: true, net: is_net }, None))
            }
            Some(p) => {
                Err(CompileError::new(Q::OnHost { proto: Some(p), v6: true, net: is_net }, None))
            }
        }
    }

    pub(super) fn hostop6(
        &mut self,
        addr: u128,
        mask: u128,
        dir: Dir,
        src: u32,
        dst: u32,
    ) -> R<T::Pred> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let word = |x: u128, i: u32| (x >> (96 - 32 * i)) as u32;
                let mut b1 =
                    self.cmp(Base::Net, off + 12, Size::W, Cmp::Eq, word(addr, 3), word(mask, 3))?;
                for i in (0..3).rev() {
                    let b0 = self.cmp(
                        Base::Net,
                        off + 4 * i,
                        Size::W,
                        Cmp::Eq,
                        word(addr, i),
                        word(mask, i),
                    )?;
                    b1 = self.and(b0, b1);
                }
                let b0 = self.linktype(ethertype::IPV6)?;
                Ok(self.and(b0, b1))
            }
            _ => {
                let b0 = self.hostop6(addr, mask, Dir::Src, src, dst)?;
                let b1 = self.hostop6(addr, mask, Dir::Dst, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) })
            }
        }
    }

    /// A MAC address in direction `dir`: 802.11's address rules or Ethernet's (after `lane`,
    /// in a LANE data frame).
    pub(super) fn mac_host(&mut self, mac: [u8; 6], dir: Dir) -> R<T::Pred> {
        if self.link.kind == link::Kind::Wlan {
            self.wlanhostop(mac, dir)
        } else if self.link.lane {
            let b0 = self.lane_data()?;
            let b1 = self.ehostop(mac, dir)?;
            Ok(self.and(b0, b1))
        } else {
            self.ehostop(mac, dir)
        }
    }

    /// gencode's `gen_ahostop`: an ARCnet address (source at 0, destination at 1).
    ///
    /// The address is libpcap 1.10's reading of `$xx` (tcpdump's library): its
    /// `pcap_ether_aton` takes the `$` for a digit, so the byte compared is 0xd0 with the
    /// first hex digit written (`$c0` compares 0xdc). The AST keeps the value; the digit
    /// count comes from the token's length.
    pub(super) fn ahostop(&mut self, aid: u8, dir: Dir) -> R<T::Pred> {
        let first = if self.arc_digits == 2 { aid >> 4 } else { aid };
        self.ahost_byte(0xd0 | u32::from(first & 0x0f), dir)
    }

    fn ahost_byte(&mut self, v: u32, dir: Dir) -> R<T::Pred> {
        match dir {
            Dir::Src => self.eq(Base::LinkHdr, 0, Size::B, v),
            Dir::Dst => self.eq(Base::LinkHdr, 1, Size::B, v),
            _ => {
                let b0 = self.ahost_byte(v, Dir::Src)?;
                let b1 = self.ahost_byte(v, Dir::Dst)?;
                Ok(if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_ehostop` for Ethernet.
    pub(super) fn ehostop(&mut self, mac: [u8; 6], dir: Dir) -> R<T::Pred> {
        match dir {
            Dir::Src => {
                let (src, _) = self.link.mac.unwrap_or((6, 0));
                self.bcmp(Base::LinkHdr, src, &mac)
            }
            Dir::Dst => {
                let (_, dst) = self.link.mac.unwrap_or((6, 0));
                self.bcmp(Base::LinkHdr, dst, &mac)
            }
            _ => {
                let b0 = self.ehostop(mac, Dir::Src)?;
                let b1 = self.ehostop(mac, Dir::Dst)?;
                Ok(if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_bcmp` over the link header: words from the end, then a half word.
    pub(super) fn bcmp(&mut self, base: Base, off: u32, bytes: &[u8]) -> R<T::Pred> {
        let mut size = bytes.len();
        let mut acc: Option<T::Pred> = None;
        let mut push = |g: &mut Self, p: T::Pred| {
            acc = Some(match acc.take() {
                Some(b) => g.and(b, p),
                None => p,
            });
        };
        while size >= 4 {
            let w = u32::from_be_bytes(bytes[size - 4..size].try_into().expect("4 bytes"));
            let p = self.eq(base, off + size as u32 - 4, Size::W, w)?;
            push(self, p);
            size -= 4;
        }
        while size >= 2 {
            let h = u32::from(u16::from_be_bytes([bytes[size - 2], bytes[size - 1]]));
            let p = self.eq(base, off + size as u32 - 2, Size::H, h)?;
            push(self, p);
            size -= 2;
        }
        if size > 0 {
            let p = self.eq(base, off, Size::B, u32::from(bytes[0]))?;
            push(self, p);
        }
        // (Every caller compares at least one byte.)
        Ok(acc.unwrap_or_else(|| self.t.always()))
    }

    /// gencode's `gateway NAME`: the MAC address of `NAME` in either direction, and none of
    /// its IPv4 addresses.
    pub(super) fn gateway(&mut self, proto: Option<Proto>, has_dir: bool, s: &str) -> R<T::Pred> {
        let resolver = self.resolver;
        let Some(mac) = resolver.ether(s) else {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::GatewayEther, name: s.into() },
                None,
            ));
        };
        let addrs = resolver.host(s);
        if addrs.is_empty() {
            return Err(unknown_host(s));
        }
        if has_dir {
            return Err(CompileError::new(Q::GatewayDirection, None));
        }
        if self.label_depth > 0 {
            return Err(CompileError::new(K::AfterMpls(MplsConflict::Gateway), None));
        }
        if !matches!(proto, None | Some(Proto::Ip | Proto::Arp | Proto::Rarp)) {
            return Err(CompileError::new(Q::GatewayProto, None));
        }
        if !self.link.is_ether() {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Gateway, link: self.link.link_type },
                None,
            ));
        }
        let v4: Vec<u32> = addrs
            .iter()
            .filter_map(|a| match a {
                IpAddr::V4(a) => Some(u32::from(*a)),
                IpAddr::V6(_) => None,
            })
            .collect();
        if v4.is_empty() {
            return Err(unknown_host(s));
        }
        // libpcap 1.11's reading (the corpus): per protocol, the protocol and none of the
        // addresses, the protocols or-ed: `(ip and not (src or dst in A)) or (arp and …)…`.
        let b0 = self.mac_host(mac, Dir::SrcOrDst)?;
        let protos: &[(u32, u32, u32)] = match proto {
            Some(Proto::Ip) => &[(ethertype::IP, 12, 16)],
            Some(Proto::Arp) => &[(ethertype::ARP, 14, 24)],
            Some(Proto::Rarp) => &[(ethertype::REVARP, 14, 24)],
            _ if self.label_depth > 0 => &[(ethertype::IP, 12, 16)],
            _ => &[(ethertype::IP, 12, 16), (ethertype::ARP, 14, 24), (ethertype::REVARP, 14, 24)],
        };
        let mut acc: Option<T::Pred> = None;
        for &(ll, src, dst) in protos {
            let lt = self.linktype(ll)?;
            let mut m: Option<T::Pred> = None;
            for &a in &v4 {
                let s1 = self.eq(Base::Net, src, Size::W, a)?;
                let d1 = self.eq(Base::Net, dst, Size::W, a)?;
                let sd = self.or(s1, d1);
                m = Some(match m {
                    Some(b) => self.or(b, sd),
                    None => sd,
                });
            }
            let m = m.expect("at least one address");
            let m = self.not(m);
            let g = self.and(lt, m);
            acc = Some(match acc {
                Some(b) => self.or(b, g),
                None => g,
            });
        }
        let acc = acc.expect("at least one protocol");
        Ok(self.and(b0, acc))
    }

    /// gencode's `gen_dnhostop`: a DECnet `area.node` address in the four header layouts.
    pub(super) fn decnet_host(&mut self, id: &Id, dir: Dir) -> R<T::Pred> {
        let addr = match id {
            Id::Num(n) => *n,
            Id::V4(s) => {
                let mut parts = s.split('.').map(parse_num);
                match (parts.next().flatten(), parts.next().flatten(), parts.next()) {
                    (Some(area), Some(node), None) => {
                        if area > 63 {
                            return Err(CompileError::new(
                                K::OutOfRange {
                                    what: Quantity::DecnetArea,
                                    value: area.into(),
                                    max: 63,
                                },
                                None,
                            ));
                        }
                        if node > 1023 {
                            return Err(CompileError::new(
                                K::OutOfRange {
                                    what: Quantity::DecnetNode,
                                    value: node.into(),
                                    max: 1023,
                                },
                                None,
                            ));
                        }
                        (area << 10) | node
                    }
                    _ => {
                        return Err(CompileError::new(
                            K::AddressInvalid { what: AddressKind::Decnet, text: s.clone() },
                            None,
                        ));
                    }
                }
            }
            _ => return Err(CompileError::unsupported("DECnet names", None)),
        };
        self.dnhostop(addr, dir)
    }

    pub(super) fn dnhostop(&mut self, addr: u32, dir: Dir) -> R<T::Pred> {
        let (sh, lh) = match dir {
            Dir::Dst => (1, 7),
            Dir::Src => (3, 15),
            _ => {
                let b0 = self.dnhostop(addr, Dir::Src)?;
                let b1 = self.dnhostop(addr, Dir::Dst)?;
                return Ok(if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) });
            }
        };
        // Fields in DECnet's little-endian order, as gencode's ntohs() on this machine.
        let a = u32::from((addr as u16).swap_bytes());
        let b0 = self.linktype(ethertype::DECNET)?;
        // Long header with pad, long without, short with pad, short without.
        let tmp = self.cmp(Base::Net, 2, Size::H, Cmp::Eq, 0x8106, 0xff07)?;
        let b1 = self.eq(Base::Net, 2 + 1 + lh, Size::H, a)?;
        let b1 = self.and(tmp, b1);
        let tmp = self.cmp(Base::Net, 2, Size::B, Cmp::Eq, 0x06, 0x07)?;
        let b2 = self.eq(Base::Net, 2 + lh, Size::H, a)?;
        let b2 = self.and(tmp, b2);
        let b1 = self.or(b2, b1);
        let tmp = self.cmp(Base::Net, 2, Size::H, Cmp::Eq, 0x8102, 0xff07)?;
        let b2 = self.eq(Base::Net, 2 + 1 + sh, Size::H, a)?;
        let b2 = self.and(tmp, b2);
        let b1 = self.or(b2, b1);
        let tmp = self.cmp(Base::Net, 2, Size::B, Cmp::Eq, 0x02, 0x07)?;
        let b2 = self.eq(Base::Net, 2 + sh, Size::H, a)?;
        let b2 = self.and(tmp, b2);
        let b1 = self.or(b2, b1);
        Ok(self.and(b0, b1))
    }

    pub(super) fn broadcast(&mut self, proto: Option<Proto>) -> R<T::Pred> {
        match proto {
            // ARCnet broadcasts go to address 0.
            p if p.is_none_or(Proto::is_link) && self.link.kind == link::Kind::Arcnet => {
                self.ahost_byte(0, Dir::Dst)
            }
            p if p.is_none_or(Proto::is_link) => {
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::Broadcast,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                self.mac_host([0xff; 6], Dir::Dst)
            }
            Some(Proto::Ip) => {
                let Some(netmask) = self.netmask else {
                    return Err(CompileError::new(K::NetmaskUnknown, None));
                };
                let b0 = self.linktype(ethertype::IP)?;
                let hostmask = !netmask;
                let b1 = self.cmp(Base::Net, 16, Size::W, Cmp::Eq, 0, hostmask)?;
                let b2 = self.cmp(Base::Net, 16, Size::W, Cmp::Eq, hostmask, hostmask)?;
                let b2 = self.or(b1, b2);
                Ok(self.and(b0, b2))
            }
            _ => Err(CompileError::new(Q::Broadcast, None)),
        }
    }

    pub(super) fn multicast(&mut self, proto: Option<Proto>) -> R<T::Pred> {
        match proto {
            // All ARCnet multicasts use the broadcast address.
            p if p.is_none_or(Proto::is_link) && self.link.kind == link::Kind::Arcnet => {
                self.ahost_byte(0, Dir::Dst)
            }
            p if p.is_none_or(Proto::is_link) => {
                if !self.link.is_ether() {
                    return Err(CompileError::new(
                        K::NotOnLinkType {
                            what: LinkFeature::Multicast,
                            link: self.link.link_type,
                        },
                        None,
                    ));
                }
                if self.link.kind == link::Kind::Wlan {
                    let mut f = |g: &mut Self, off: u32| g.lh_set(off, 1);
                    return self.wlan_by_frame(&mut f, false);
                }
                let lane = if self.link.lane { Some(self.lane_data()?) } else { None };
                let (_, dst) = self.link.mac.unwrap_or((6, 0));
                let b0 = self.cmp(Base::LinkHdr, dst, Size::B, Cmp::Set, 1, u32::MAX)?;
                Ok(match lane {
                    Some(b1) => self.and(b1, b0),
                    None => b0,
                })
            }
            Some(Proto::Ip) => {
                let b0 = self.linktype(ethertype::IP)?;
                let b1 = self.cmp(Base::Net, 16, Size::B, Cmp::Ge, 224, u32::MAX)?;
                Ok(self.and(b0, b1))
            }
            Some(Proto::Ip6) => {
                let b0 = self.linktype(ethertype::IPV6)?;
                let b1 = self.eq(Base::Net, 24, Size::B, 255)?;
                Ok(self.and(b0, b1))
            }
            _ => Err(CompileError::new(Q::Multicast, None)),
        }
    }
}
