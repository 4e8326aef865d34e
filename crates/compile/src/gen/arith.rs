//! Arithmetic: values (`len`, constants, `proto[i:n]` with the protocol check gencode guards
//! the load with, the operators) for relations (gencode's `gen_load`, `gen_arth`,
//! `gen_relation`).

use super::*;
use crate::build::Value;
use crate::ir::{AluOp, Operand, Slot, Src, Stmt, XSrc};

impl<T: Target> Gen<'_, T> {
    /// The value of `a` (gencode's `gen_loadi`, `gen_loadlen`, `gen_load`, `gen_neg`,
    /// `gen_arth`).
    pub(super) fn arith(&mut self, a: &Arith) -> R<T::Value> {
        let r = match &a.kind {
            ArithKind::Num(n) => self.t.imm(*n)?,
            ArithKind::Len => self.t.wire_len().map_err(|e| e.at(a.span))?,
            ArithKind::Neg(x) => {
                let v = self.arith(x)?;
                self.t.neg(v).map_err(|e| e.at(a.span))?
            }
            ArithKind::Bin { op, lhs, rhs } => {
                let x = self.arith(lhs)?;
                let mut y = self.arith(rhs)?;
                // gencode's gen_arth keeps the left operand's protocol check only.
                drop(self.t.take_guard(&mut y));
                self.t.arith(*op, x, y).map_err(|e| e.at(a.span))?
            }
            ArithKind::Load { proto, index, size } => {
                let idx = self.arith(index)?;
                self.index_load(*proto, idx, size_of(*size)).map_err(|e| {
                    // A target that cannot index with a computed value points at the index.
                    let computed = matches!(
                        e.kind,
                        K::TargetLimit { need: crate::error::Need::ComputedIndex, .. }
                    );
                    e.at(if computed { index.span } else { a.span })
                })?
            }
        };
        Ok(r)
    }

    /// gencode's `gen_load`: `proto[index:size]`.
    pub(super) fn index_load(
        &mut self,
        proto: Proto,
        mut idx: T::Value,
        size: Size,
    ) -> R<T::Value> {
        if self.link.var_hdr() || self.link.var_pl || self.link.tunnel.is_some() {
            return T::index_load_var(self, proto, idx, size);
        }
        let nl = self.link.nl();
        match proto {
            p if p.is_link() => self.t.load(idx, Loc::Abs(self.link.off_linkhdr), size, None),
            Proto::Radio => Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Radio, link: self.link.link_type },
                None,
            )),
            p if is_net_proto(p) => {
                let guard = self.abbrev(proto)?;
                self.t.load(idx, Loc::Abs(nl), size, Some(guard))
            }
            p if is_tran_proto(p) => {
                let old = self.t.take_guard(&mut idx);
                let p = self.abbrev(proto)?;
                let frag = self.ipfrag()?;
                let mut g = self.and(p, frag);
                if let Some(old) = old {
                    g = self.and(old, g);
                }
                let ip = self.abbrev(Proto::Ip)?;
                let g = self.and(ip, g);
                self.t.load(idx, Loc::AfterIpv4 { hdr: nl, off: nl }, size, Some(g))
            }
            Proto::Icmp6 => {
                let old = self.t.take_guard(&mut idx);
                let mut g = self.abbrev(Proto::Ip6)?;
                if let Some(old) = old {
                    g = self.and(old, g);
                }
                let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6)?;
                let g = self.and(g, nh);
                self.t.load(idx, Loc::Abs(nl.wrapping_add(40)), size, Some(g))
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }
}

/// Protocols whose `proto[i]` counts from the network-layer header.
fn is_net_proto(p: Proto) -> bool {
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

/// Protocols whose `proto[i]` counts from the end of the IPv4 header.
fn is_tran_proto(p: Proto) -> bool {
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

impl Gen<'_, Bpf> {
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
                Ok(self.t.b.load(idx, &[], 0, size, None)?)
            }
            p if p.is_link() && self.link.tunnel.is_some() => {
                let hdr = self.link.off_linkhdr;
                match self.link.tunnel.and_then(|t| t.hdr) {
                    Some(r) => {
                        Ok(self.t.b.load(idx, &[Stmt::Ldx(XSrc::Mem(r))], hdr, size, None)?)
                    }
                    None => Ok(self.t.b.load(idx, &[], hdr, size, None)?),
                }
            }
            p if p.is_link() => {
                let hdr = self.link.off_linkhdr;
                if !var_hdr {
                    return Ok(self.t.b.load(idx, &[], hdr, size, None)?);
                }
                let (mut slot, mut failed) = (self.t.hdr_reg, false);
                let v = self.t.b.load_via(
                    idx,
                    |b| {
                        let r = *slot.get_or_insert_with(|| Bpf::var_slot(b, &mut failed));
                        vec![Stmt::Ldx(XSrc::Mem(r))]
                    },
                    hdr,
                    size,
                    None,
                )?;
                self.t.hdr_reg = slot;
                self.t.reg_error |= failed;
                Ok(v)
            }
            p if is_net_proto(p) || p == Proto::Icmp6 || is_tran_proto(p) => {
                let tran = is_tran_proto(p);
                let old = if tran || p == Proto::Icmp6 { idx.take_guard() } else { None };
                let tunnel_pl = self.link.tunnel.map(|t| t.pl);
                let (mut slot, mut failed) = (tunnel_pl.or(self.t.pl_reg), false);
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
                let off = if p == Proto::Icmp6 { nl.wrapping_add(40) } else { nl };
                let v = self.t.b.load_via(
                    idx,
                    |b| iphdr(*slot.get_or_insert_with(|| Bpf::var_slot(b, &mut failed))),
                    off,
                    size,
                    None,
                )?;
                if tunnel_pl.is_none() {
                    self.t.pl_reg = slot;
                }
                self.t.reg_error |= failed;
                let g = if tran {
                    let pp = self.abbrev(proto)?;
                    let frag = self.ipfrag()?;
                    let mut g = self.t.b.and(pp, frag);
                    if let Some(old) = old {
                        g = self.t.b.and(old, g);
                    }
                    let ip = self.abbrev(Proto::Ip)?;
                    self.t.b.and(ip, g)
                } else if p == Proto::Icmp6 {
                    let mut g = self.abbrev(Proto::Ip6)?;
                    if let Some(old) = old {
                        g = self.t.b.and(old, g);
                    }
                    let nh = self.eq(Base::Net, 6, Size::B, ipproto::ICMPV6)?;
                    self.t.b.and(g, nh)
                } else {
                    self.abbrev(proto)?
                };
                Ok(self.t.b.guarded(v, g))
            }
            p => Err(CompileError::unsupported(format!("`{}[…]`", p.as_str()), None)),
        }
    }
}
