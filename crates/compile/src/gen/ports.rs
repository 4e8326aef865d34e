//! `port` and `portrange` over TCP, UDP and SCTP, on IPv4 (past its variable-length header)
//! and IPv6, with service names (gencode's `gen_port`, `gen_portrange`, `gen_portop*`).

use super::*;

impl<T: Target> Gen<'_, T> {
    pub(super) fn port_id(
        &mut self,
        proto: Option<Proto>,
        dir: Dir,
        id: &Id,
        range: bool,
    ) -> R<T::Pred> {
        let qual = match proto {
            None => PROTO_UNDEF,
            Some(Proto::Tcp) => Some(ipproto::TCP),
            Some(Proto::Udp) => Some(ipproto::UDP),
            Some(Proto::Sctp) => Some(ipproto::SCTP),
            Some(_) => {
                return Err(CompileError::new(Q::OnPort { range }, None));
            }
        };
        let (lo, hi, real) = match id {
            Id::Num(n) => (*n, *n, qual),
            Id::Name(s) if range => {
                let Some((a, b)) = s.split_once('-') else {
                    return Err(CompileError::new(
                        K::NameUnknown { what: NameKind::PortRange, name: s.clone() },
                        None,
                    ));
                };
                let (a, pa) = self.port_number(a, qual)?;
                let (b, pb) = self.port_number(b, qual)?;
                (a, b, if pa == pb { pa } else { PROTO_UNDEF })
            }
            Id::Name(s) => {
                let (p, real) = self.port_number(s, qual)?;
                (p, p, real)
            }
            _ => {
                return Err(CompileError::new(
                    K::AddressInvalid { what: AddressKind::Port, text: String::new() },
                    None,
                ));
            }
        };
        if lo > 65535 || hi > 65535 {
            return Err(CompileError::new(
                K::OutOfRange { what: Quantity::Port, value: lo.max(hi).into(), max: 65535 },
                None,
            ));
        }
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let b = self.port(Some((lo, hi)).filter(|_| range), lo, real, dir, false)?;
        let b6 = self.port(Some((lo, hi)).filter(|_| range), lo, real, dir, true)?;
        Ok(self.or(b6, b))
    }

    /// A service name or number, checked against the qualifier (gencode's `gen_scode`).
    pub(super) fn port_number(&self, s: &str, qual: Option<u32>) -> R<(u32, Option<u32>)> {
        if let Some(n) = parse_num(s) {
            return Ok((n, qual));
        }
        let Some(svc) = self.resolver.service(s) else {
            return Err(CompileError::new(
                K::NameUnknown { what: NameKind::Port, name: s.into() },
                None,
            ));
        };
        let (port, real) = match (svc.tcp, svc.udp, svc.sctp) {
            (Some(t), Some(u), _) if t == u => (t, PROTO_UNDEF),
            (Some(t), _, _) => (t, Some(ipproto::TCP)),
            (None, Some(u), _) => (u, Some(ipproto::UDP)),
            (None, None, Some(s)) => (s, Some(ipproto::SCTP)),
            (None, None, None) => {
                return Err(CompileError::new(
                    K::NameUnknown { what: NameKind::Port, name: s.into() },
                    None,
                ));
            }
        };
        let name = |p| match p {
            ipproto::TCP => "tcp",
            ipproto::UDP => "udp",
            _ => "sctp",
        };
        match (qual, real) {
            (Some(q), Some(r)) if q != r => {
                Err(CompileError::new(K::PortWrongProto { name: s.into(), proto: name(r) }, None))
            }
            (Some(q), _) => Ok((u32::from(port), Some(q))),
            (None, r) => Ok((u32::from(port), r)),
        }
    }

    /// gencode's `gen_port`/`gen_portrange` (`v6` false) and their IPv6 versions.
    pub(super) fn port(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: Option<u32>,
        dir: Dir,
        v6: bool,
    ) -> R<T::Pred> {
        let b0 = self.linktype(if v6 { ethertype::IPV6 } else { ethertype::IP })?;
        let b1 = match proto {
            Some(p) => self.portop(range, port, p, dir, v6)?,
            None => {
                let tmp = self.portop(range, port, ipproto::TCP, dir, v6)?;
                let b1 = self.portop(range, port, ipproto::UDP, dir, v6)?;
                let b1 = self.or(tmp, b1);
                let tmp = self.portop(range, port, ipproto::SCTP, dir, v6)?;
                self.or(tmp, b1)
            }
        };
        Ok(self.and(b0, b1))
    }

    pub(super) fn portop(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: u32,
        dir: Dir,
        v6: bool,
    ) -> R<T::Pred> {
        let b0 = if v6 {
            self.eq(Base::Net, 6, Size::B, proto)?
        } else {
            let tmp = self.eq(Base::Net, 9, Size::B, proto)?;
            let frag = self.ipfrag()?;
            self.and(tmp, frag)
        };
        let base = if v6 { Base::TranV6 } else { Base::TranV4 };
        let b1 = match dir {
            Dir::Src => self.portatom(base, 0, range, port)?,
            Dir::Dst => self.portatom(base, 2, range, port)?,
            _ => {
                let tmp = self.portatom(base, 0, range, port)?;
                let b1 = self.portatom(base, 2, range, port)?;
                if dir == Dir::SrcAndDst { self.and(tmp, b1) } else { self.or(tmp, b1) }
            }
        };
        Ok(self.and(b0, b1))
    }

    pub(super) fn portatom(
        &mut self,
        base: Base,
        off: u32,
        range: Option<(u32, u32)>,
        port: u32,
    ) -> R<T::Pred> {
        match range {
            Some((lo, hi)) => {
                let b1 = self.cmp(base, off, Size::H, Cmp::Ge, lo, u32::MAX)?;
                let b2 = self.cmp(base, off, Size::H, Cmp::Le, hi, u32::MAX)?;
                Ok(self.and(b1, b2))
            }
            _ => self.eq(base, off, Size::H, port),
        }
    }
}
