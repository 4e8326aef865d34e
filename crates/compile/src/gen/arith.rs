//! Arithmetic: values (`len`, constants, `proto[i:n]` with the protocol check gencode guards
//! the load with, the operators) for relations (gencode's `gen_load`, `gen_arth`,
//! `gen_relation`).

use super::*;

impl Gen<'_> {
    pub(super) fn arith(&mut self, a: &Arith) -> R<Value> {
        let r = match &a.kind {
            ArithKind::Num(n) => self.b.imm(*n)?,
            ArithKind::Len => self.b.len()?,
            ArithKind::Neg(x) => {
                let v = self.arith(x)?;
                self.b.neg(v)
            }
            ArithKind::Bin { op, lhs, rhs } => {
                let x = self.arith(lhs)?;
                let mut y = self.arith(rhs)?;
                // libpcap 1.10 looks at the *first* statement of the right operand: a constant
                // there (even the index of `proto[k]`) counts as the divisor or shift.
                if let Some(Stmt::Ld(Src::Imm(k))) = y.stmts().first() {
                    let msg = match op {
                        ArithOp::Div if *k == 0 => Some(ArithError::DivisionByZero),
                        ArithOp::Mod if *k == 0 => Some(ArithError::ModulusByZero),
                        ArithOp::Shl | ArithOp::Shr if *k > 31 => Some(ArithError::ShiftTooLarge),
                        _ => None,
                    };
                    if let Some(msg) = msg {
                        return Err(CompileError::new(K::Arithmetic(msg), Some(a.span)));
                    }
                }
                // gencode's gen_arth keeps the left operand's protocol check only.
                drop(y.take_guard());
                let op = match op {
                    ArithOp::Add => AluOp::Add,
                    ArithOp::Sub => AluOp::Sub,
                    ArithOp::Mul => AluOp::Mul,
                    ArithOp::Div => AluOp::Div,
                    ArithOp::Mod => AluOp::Mod,
                    ArithOp::And => AluOp::And,
                    ArithOp::Or => AluOp::Or,
                    ArithOp::Xor => AluOp::Xor,
                    ArithOp::Shl => AluOp::Lsh,
                    ArithOp::Shr => AluOp::Rsh,
                };
                self.b.arith(op, x, y).map_err(|e| CompileError::from(e).at(a.span))?
            }
            ArithKind::Load { proto, index, size } => {
                let idx = self.arith(index)?;
                self.index_load(*proto, idx, size_of(*size)).map_err(|e| e.at(a.span))?
            }
        };
        Ok(r)
    }

    /// gencode's `gen_load`: `proto[index:size]`.
    pub(super) fn index_load(&mut self, proto: Proto, mut idx: Value, size: Size) -> R<Value> {
        if self.link.var_hdr() || self.link.var_pl || self.link.tunnel.is_some() {
            return self.index_load_var(proto, idx, size);
        }
        let nl = self.link.nl();
        match proto {
            p if p.is_link() => Ok(self.b.load(idx, &[], self.link.off_linkhdr, size, None)?),
            Proto::Radio => Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Radio, link: self.link.link_type },
                None,
            )),
            p if Self::is_net_proto(p) => {
                let guard = self.abbrev(proto)?;
                Ok(self.b.load(idx, &[], nl, size, Some(guard))?)
            }
            p if Self::is_tran_proto(p) => {
                let old = idx.take_guard();
                let p = self.abbrev(proto)?;
                let frag = self.ipfrag();
                let mut g = self.b.and(p, frag);
                if let Some(old) = old {
                    g = self.b.and(old, g);
                }
                let ip = self.abbrev(Proto::Ip)?;
                let g = self.b.and(ip, g);
                Ok(self.b.load(idx, &[Stmt::Ldx(XSrc::Msh(nl))], nl, size, Some(g))?)
            }
            Proto::Icmp6 => {
                let old = idx.take_guard();
                let mut g = self.abbrev(Proto::Ip6)?;
                if let Some(old) = old {
                    g = self.b.and(old, g);
                }
                let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6);
                let g = self.b.and(g, nh);
                Ok(self.b.load(idx, &[], nl + 40, size, Some(g))?)
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }

    pub(super) fn is_net_proto(p: Proto) -> bool {
        matches!(
            p,
            Proto::Ip
                | Proto::Arp
                | Proto::Rarp
                | Proto::Ip6
                | Proto::Atalk
                | Proto::Decnet
                | Proto::Sca
                | Proto::Lat
                | Proto::Moprc
                | Proto::Mopdl
        )
    }

    pub(super) fn is_tran_proto(p: Proto) -> bool {
        matches!(
            p,
            Proto::Sctp
                | Proto::Tcp
                | Proto::Udp
                | Proto::Icmp
                | Proto::Igmp
                | Proto::Igrp
                | Proto::Pim
                | Proto::Vrrp
                | Proto::Carp
        )
    }

    /// `gen_load` when the link-layer header or payload starts at a run-time offset: the
    /// offset's scratch word is allocated while the load is built, before the protocol
    /// checks, as in gencode.
    pub(super) fn index_load_var(&mut self, proto: Proto, mut idx: Value, size: Size) -> R<Value> {
        let nl = self.link.nl();
        let var_hdr = self.link.var_hdr();
        match proto {
            Proto::Radio => {
                if !matches!(self.link.prefix, Prefix::Radiotap | Prefix::Avs | Prefix::Prism) {
                    return Err(CompileError::new(
                        K::NotOnLinkType { what: LinkFeature::Radio, link: self.link.link_type },
                        None,
                    ));
                }
                Ok(self.b.load(idx, &[], 0, size, None)?)
            }
            p if p.is_link() && self.link.tunnel.is_some() => {
                let hdr = self.link.off_linkhdr;
                match self.link.tunnel.and_then(|t| t.hdr) {
                    Some(r) => Ok(self.b.load(idx, &[Stmt::Ldx(XSrc::Mem(r))], hdr, size, None)?),
                    None => Ok(self.b.load(idx, &[], hdr, size, None)?),
                }
            }
            p if p.is_link() => {
                let hdr = self.link.off_linkhdr;
                if !var_hdr {
                    return Ok(self.b.load(idx, &[], hdr, size, None)?);
                }
                let (mut slot, mut failed) = (self.hdr_reg, false);
                let v = self.b.load_via(
                    idx,
                    |b| {
                        let r = *slot.get_or_insert_with(|| Self::var_slot(b, &mut failed));
                        vec![Stmt::Ldx(XSrc::Mem(r))]
                    },
                    hdr,
                    size,
                    None,
                )?;
                self.hdr_reg = slot;
                self.reg_error |= failed;
                Ok(v)
            }
            p if Self::is_net_proto(p) || p == Proto::Icmp6 || Self::is_tran_proto(p) => {
                let tran = Self::is_tran_proto(p);
                let old = if tran || p == Proto::Icmp6 { idx.take_guard() } else { None };
                let tunnel_pl = self.link.tunnel.map(|t| t.pl);
                let (mut slot, mut failed) = (tunnel_pl.or(self.pl_reg), false);
                let iphdr = |r: Slot| {
                    let mut v = vec![Stmt::Ldx(XSrc::Mem(r))];
                    if tran {
                        v.extend([
                            Stmt::Ld(Src::Ind(Size::B, nl)),
                            Stmt::Alu(AluOp::And, Operand::K(0xf)),
                            Stmt::Alu(AluOp::Lsh, Operand::K(2)),
                            Stmt::Alu(AluOp::Add, Operand::X),
                            Stmt::Tax,
                        ]);
                    }
                    v
                };
                let off = if p == Proto::Icmp6 { nl + 40 } else { nl };
                let v = self.b.load_via(
                    idx,
                    |b| iphdr(*slot.get_or_insert_with(|| Self::var_slot(b, &mut failed))),
                    off,
                    size,
                    None,
                )?;
                if tunnel_pl.is_none() {
                    self.pl_reg = slot;
                }
                self.reg_error |= failed;
                let g = if tran {
                    let pp = self.abbrev(proto)?;
                    let frag = self.ipfrag();
                    let mut g = self.b.and(pp, frag);
                    if let Some(old) = old {
                        g = self.b.and(old, g);
                    }
                    let ip = self.abbrev(Proto::Ip)?;
                    self.b.and(ip, g)
                } else if p == Proto::Icmp6 {
                    let mut g = self.abbrev(Proto::Ip6)?;
                    if let Some(old) = old {
                        g = self.b.and(old, g);
                    }
                    let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6);
                    self.b.and(g, nh)
                } else {
                    self.abbrev(proto)?
                };
                Ok(self.b.guarded(v, g))
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }
}
