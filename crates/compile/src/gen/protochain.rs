//! `protochain`: the walk along IPv6 extension headers and AH headers, unrolled
//! [`super::PROTOCHAIN_STEPS`] deep because sift's programs are acyclic (gencode's
//! `gen_protochain`).

use super::*;
use crate::build::Pred;
use crate::ir::{AluOp, JmpOp, Operand, Src, Stmt, XSrc};

impl Gen<'_, Bpf> {
    /// gencode's `gen_protochain`: follow the IPv6 extension headers (hop-by-hop,
    /// destination options, routing, fragment) and AH headers from the network header, and
    /// test whether one of them or the final header is protocol `v`.
    ///
    /// libpcap walks the chain with a backward `ja`. sift's programs are acyclic, so the walk
    /// is unrolled [`PROTOCHAIN_STEPS`] times: the program gives libpcap's result on every
    /// packet whose walk ends (finds `v`, `IPPROTO_NONE`, a header that is neither an
    /// extension nor AH, or runs out of packet) within that many header advances, and
    /// rejects packets whose walk is longer. libpcap's own oddities are kept: a load past
    /// the captured data ends the whole program with 0, and after an AH header the offset is
    /// the AH length alone (not added to the previous offset).
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
            vec![Stmt::Ld(Src::Abs(Size::B, nl.wrapping_add(6))), Stmt::Ldx(XSrc::Imm(40))]
        } else {
            vec![Stmt::Ld(Src::Abs(Size::B, nl.wrapping_add(9))), Stmt::Ldx(XSrc::Msh(nl))]
        };
        let k = |v| Operand::K(v);
        // Built from the last step back to the first: `next` is the rest of the walk.
        let mut next = self.t.b.branch(Vec::new(), JmpOp::Jeq, k(v));
        for step in (0..PROTOCHAIN_STEPS).rev() {
            let found = self.t.b.branch(
                if step == 0 { start.clone() } else { Vec::new() },
                JmpOp::Jeq,
                k(v),
            );
            let none = self.t.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::NONE));
            // AH: A = its next header, X = (its length + 2) * 4.
            let ah = self.t.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::AH));
            let ah_body = self.t.b.straight(vec![
                Stmt::Txa,
                Stmt::Ld(Src::Ind(Size::B, nl)),
                Stmt::St(reg),
                Stmt::Txa,
                Stmt::Alu(AluOp::Add, k(1)),
                Stmt::Tax,
                Stmt::Ld(Src::Ind(Size::B, nl)),
                Stmt::Alu(AluOp::Add, k(2)),
                Stmt::Alu(AluOp::Mul, k(4)),
                Stmt::Tax,
                Stmt::Ld(Src::Mem(reg)),
            ]);
            let ah = self.t.b.and(ah, ah_body);
            let advance = if v6 {
                // Hop-by-hop, destination options, routing, fragment: A = the next header,
                // X += (the length + 1) * 8.
                let mut ext = self.t.b.branch(Vec::new(), JmpOp::Jeq, k(ipproto::HOPOPTS));
                for h in [ipproto::DSTOPTS, ipproto::ROUTING, ipproto::FRAGMENT] {
                    let e = self.t.b.branch(Vec::new(), JmpOp::Jeq, k(h));
                    ext = self.t.b.or(ext, e);
                }
                let body = self.t.b.straight(vec![
                    Stmt::Ld(Src::Ind(Size::B, nl)),
                    Stmt::St(reg),
                    Stmt::Ld(Src::Ind(Size::B, nl.wrapping_add(1))),
                    Stmt::Alu(AluOp::Add, k(1)),
                    Stmt::Alu(AluOp::Mul, k(8)),
                    Stmt::Alu(AluOp::Add, Operand::X),
                    Stmt::Tax,
                    Stmt::Ld(Src::Mem(reg)),
                ]);
                self.t.b.ite(ext, body, ah)
            } else {
                ah
            };
            // Neither v nor IPPROTO_NONE: advance (false exits: no further header).
            let adv = self.t.b.and(!none, advance);
            let adv = self.t.b.and(adv, next);
            next = self.t.b.or(found, adv);
        }
        if proto.is_some() {
            self.t.b.free_slot(reg);
        }
        Ok(self.t.b.and(b0, next))
    }
}
