//! Field loads of the classic BPF target: where a field is once the link-layer model has
//! placed it, at a constant offset or at one the program computes at run time (the scratch
//! words that hold variable header lengths and tunnel offsets, allocated on first use as
//! gencode's `off_linkhdr.reg`/`off_linkpl.reg`).

use super::*;

impl Gen<'_> {
    pub(super) fn load(&mut self, base: Base, off: u32, size: Size) -> Load {
        let nl = self.link.nl();
        if let Some(t) = self.link.tunnel {
            // Inside vxlan/geneve: every base is a scratch word the tunnel check filled.
            let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
            let with = |r: Slot, k: u32| Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), ind(k)]);
            return match base {
                Base::LinkHdr => match t.hdr {
                    Some(r) => with(r, self.link.off_linkhdr.wrapping_add(off)),
                    None => Load::Abs(size, self.link.off_linkhdr.wrapping_add(off)),
                },
                Base::LinkType => with(t.lt, self.link.off_linktype.unwrap_or(0) + off),
                Base::Net => with(t.pl, nl.wrapping_add(off)),
                Base::LinkPl => with(t.pl, self.link.off_linkpl + off),
                Base::NoSnap => with(t.pl, self.link.off_linkpl + self.link.off_nl_nosnap + off),
                Base::TranV6 => with(t.pl, nl + 40 + off),
                Base::TranV4 => {
                    let mut v = self.iphdrlen_var(t.pl);
                    v.push(ind(nl + off));
                    Load::Stmts(v)
                }
            };
        }
        if self.link.var_hdr() && matches!(base, Base::LinkHdr | Base::LinkType) {
            // gencode's gen_abs_offset_varpart(&off_linkhdr): relative to the radio header's
            // length, computed into a scratch word first.
            let r = self.hdr_reg();
            let k = match base {
                Base::LinkType => self.link.off_linktype.unwrap_or(0) + off,
                _ => self.link.off_linkhdr.wrapping_add(off),
            };
            return Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), Stmt::Ld(Src::Ind(size, k))]);
        }
        if self.link.var_pl && !matches!(base, Base::LinkHdr | Base::LinkType) {
            let r = self.pl_reg();
            let ldx = Stmt::Ldx(XSrc::Mem(r));
            let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
            return Load::Stmts(match base {
                Base::Net => vec![ldx, ind(nl.wrapping_add(off))],
                Base::LinkPl => vec![ldx, ind(self.link.off_linkpl + off)],
                Base::NoSnap => {
                    vec![ldx, ind(self.link.off_linkpl + self.link.off_nl_nosnap + off)]
                }
                Base::TranV6 => vec![ldx, ind(nl + 40 + off)],
                _ => {
                    // gen_loadx_iphdrlen with a variable payload offset.
                    let mut v = self.iphdrlen_var(r);
                    v.push(ind(nl + off));
                    v
                }
            });
        }
        match base {
            Base::LinkHdr => Load::Abs(size, self.link.off_linkhdr.wrapping_add(off)),
            Base::Net => Load::Abs(size, nl.wrapping_add(off)),
            Base::LinkType => Load::Abs(size, self.link.off_linktype.unwrap_or(0) + off),
            Base::LinkPl => Load::Abs(size, self.link.off_linkpl + off),
            Base::NoSnap => Load::Abs(size, self.link.off_linkpl + self.link.off_nl_nosnap + off),
            Base::TranV4 => Load::AfterIpv4(nl, size, nl + off),
            Base::TranV6 => Load::Abs(size, nl + 40 + off),
        }
    }

    /// `ldx M[r]; ldb [x + nl]; and #0xf; lsh #2; add x; tax`: X = the offset of the IPv4
    /// payload when the network layer starts at the run-time offset in `M[r]` (gencode's
    /// `gen_loadx_iphdrlen` with a variable offset).
    pub(super) fn iphdrlen_var(&self, r: Slot) -> Vec<Stmt> {
        vec![
            Stmt::Ldx(XSrc::Mem(r)),
            Stmt::Ld(Src::Ind(Size::B, self.link.nl())),
            Stmt::Alu(AluOp::And, Operand::K(0xf)),
            Stmt::Alu(AluOp::Lsh, Operand::K(2)),
            Stmt::Alu(AluOp::Add, Operand::X),
            Stmt::Tax,
        ]
    }

    /// A scratch word for a variable offset (gencode's `alloc_reg` in
    /// `gen_abs_offset_varpart`); a failure is reported when the expression is done.
    pub(super) fn var_slot(b: &mut Builder, failed: &mut bool) -> Slot {
        b.alloc_slot().unwrap_or_else(|_| {
            *failed = true;
            Slot::new(0).expect("slot 0 exists")
        })
    }

    /// The scratch word holding the link-layer header offset, allocated on first use.
    pub(super) fn hdr_reg(&mut self) -> Slot {
        match self.hdr_reg {
            Some(r) => r,
            None => {
                let r = Self::var_slot(&mut self.b, &mut self.reg_error);
                self.hdr_reg = Some(r);
                r
            }
        }
    }

    /// The scratch word holding the link-layer payload offset, allocated on first use.
    pub(super) fn pl_reg(&mut self) -> Slot {
        match self.pl_reg {
            Some(r) => r,
            None => {
                let r = Self::var_slot(&mut self.b, &mut self.reg_error);
                self.pl_reg = Some(r);
                r
            }
        }
    }
}
