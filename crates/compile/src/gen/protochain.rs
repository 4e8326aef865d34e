//! `protochain`: the walk along IPv6 extension headers and AH headers (gencode's
//! `gen_protochain`), one [`Stmt::Walk`] that emission expands (see [`crate::walk`]).

use super::*;
use crate::build::Pred;
use crate::ir::{JmpOp, Operand, Src, Stmt, Walk, XSrc};

impl Gen<'_, Bpf> {
    /// gencode's `gen_protochain`: follow the IPv6 extension headers (hop-by-hop,
    /// destination options, routing, fragment) and AH headers from the network header, and
    /// test whether one of them or the final header is protocol `v`.
    ///
    /// As gencode, one block: the walk's start (A = the first next header, X = where it
    /// starts), the walk, and `jeq #v` on the header it stopped at. The walk is one opaque
    /// statement here; emission makes it libpcap's loop (so the unoptimized program is
    /// libpcap's, instruction for instruction) or, for the kernel, unrolled.
    pub(super) fn protochain(&mut self, v: u32, proto: Option<Proto>) -> R<Pred> {
        // gencode allocates a scratch word first, also for the default case (where it is
        // never freed).
        let reg = self.t.b.alloc_slot()?;
        let v6 = match proto {
            Some(Proto::Ip) => false,
            Some(Proto::Ip6) => true,
            None => {
                let b0 = self.protochain(v, Some(Proto::Ip))?;
                let b1 = self.protochain(v, Some(Proto::Ip6))?;
                return Ok(self.t.b.or(b0, b1));
            }
            _ => return Err(CompileError::new(Q::Protochain, None)),
        };
        if self.link.var_pl || self.link.tunnel.is_some() {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Protochain, link: self.link.link_type },
                None,
            ));
        }
        self.t.walks += 1;
        if self.t.walks > PROTOCHAIN_WALKS {
            return Err(CompileError::new(
                K::ResourceLimit {
                    what: Resource::ProtochainWalks,
                    limit: PROTOCHAIN_WALKS.into(),
                },
                None,
            ));
        }
        let b0 = self.linktype(if v6 { ethertype::IPV6 } else { ethertype::IP })?;
        let nl = self.link.nl();
        let start = if v6 {
            [Stmt::Ld(Src::Abs(Size::B, nl.wrapping_add(6))), Stmt::Ldx(XSrc::Imm(40))]
        } else {
            [Stmt::Ld(Src::Abs(Size::B, nl.wrapping_add(9))), Stmt::Ldx(XSrc::Msh(nl))]
        };
        let walk = Stmt::Walk(Walk { want: v, nl, ipv6: v6, slot: reg });
        let b = self.t.b.branch(vec![start[0], start[1], walk], JmpOp::Jeq, Operand::K(v));
        if proto.is_some() {
            self.t.b.free_slot(reg);
        }
        Ok(self.t.b.and(b0, b))
    }
}
