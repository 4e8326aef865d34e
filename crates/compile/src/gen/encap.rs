//! Encapsulations that move the offsets of what follows: `vlan` (also with Linux's VLAN
//! metadata), `mpls`, `pppoes`, and the `geneve`/`vxlan` tunnels (gencode's `gen_vlan`,
//! `gen_mpls`, `gen_pppoes`, `gen_geneve`, `gen_vxlan`).

use super::*;
use crate::build::{Load, Pred};
use crate::ir::{AluOp, JmpOp, Operand, Src, Stmt, XSrc};

impl<T: Target> Gen<'_, T> {
    /// gencode's `gen_vlan` without BPF extensions: the three VLAN EtherTypes, the VLAN id,
    /// then every later offset moves 4 bytes on.
    pub(super) fn vlan(&mut self, id: Option<u32>) -> R<T::Pred> {
        if self.label_depth > 0 {
            return Err(CompileError::new(K::AfterMpls(MplsConflict::Vlan), None));
        }
        // PPI's header is named even after `pppoes` moved the link layer on.
        let vlan_error =
            |link| CompileError::new(K::NotOnLinkType { what: LinkFeature::Vlan, link }, None);
        if self.link.prefix == Prefix::Ppi {
            return Err(vlan_error(LinkType::PPI));
        }
        if !matches!(self.link.kind, link::Kind::Ether | link::Kind::Wlan) {
            return Err(vlan_error(self.link.link_type));
        }
        // Only the capture's own outermost header can have its tag in the metadata.
        if self.linux_ext
            && self.vlan_depth == 0
            && self.link.link_type == LinkType::EN10MB
            && self.link.tunnel.is_none()
        {
            return T::extension(self, Extension::VlanMetadata { id });
        }
        let b0 = self.linktype(ethertype::VLAN)?;
        let b1 = self.linktype(ethertype::QINQ)?;
        let b1 = self.or(b0, b1);
        let b2 = self.linktype(ethertype::QINQ_9100)?;
        let mut b = self.or(b1, b2);
        if let Some(id) = id {
            let c = self.cmp(Base::Net, 0, Size::H, Cmp::Eq, id, 0x0fff)?;
            b = self.and(b, c);
        }
        self.link.off_linkpl = self.link.off_linkpl.wrapping_add(4);
        self.link.off_linktype = self.link.off_linktype.map(|o| o.wrapping_add(4));
        self.vlan_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_mpls`: later network-layer offsets move 4 bytes on.
    pub(super) fn mpls(&mut self, label: Option<u32>) -> R<T::Pred> {
        let mut b = if self.label_depth > 0 {
            // The previous label's bottom-of-stack bit is clear.
            self.cmp(Base::Net, 0u32.wrapping_sub(2), Size::B, Cmp::Eq, 0, 1)?
        } else {
            match self.link.kind {
                link::Kind::Ether | link::Kind::CHdlc => self.linktype(ethertype::MPLS)?,
                link::Kind::Ppp if self.link.link_type == LinkType::PPP => {
                    self.eq(Base::LinkType, 0, Size::H, 0x0281)?
                }
                _ => {
                    return Err(CompileError::new(
                        K::NotOnLinkType { what: LinkFeature::Mpls, link: self.link.link_type },
                        None,
                    ));
                }
            }
        };
        if let Some(label) = label {
            if label > 0xfffff {
                return Err(CompileError::new(
                    K::OutOfRange { what: Quantity::MplsLabel, value: label.into(), max: 0xfffff },
                    None,
                ));
            }
            let c = self.cmp(Base::Net, 0, Size::W, Cmp::Eq, label << 12, 0xffff_f000)?;
            b = self.and(b, c);
        }
        self.link.off_nl = self.link.off_nl.wrapping_add(4);
        self.link.off_nl_nosnap = self.link.off_nl_nosnap.wrapping_add(4);
        self.label_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_pppoes`: the session EtherType and id, then the link layer becomes PPP
    /// 6 bytes into the payload.
    pub(super) fn pppoes(&mut self, sess: Option<u32>) -> R<T::Pred> {
        let mut b = self.linktype(ethertype::PPPOE_SESSION)?;
        if let Some(sess) = sess {
            let c = self.cmp(Base::Net, 0, Size::W, Cmp::Eq, sess, 0xffff)?;
            b = self.and(b, c);
        }
        // Past the PPPoE header, which follows any 802.2 LLC/SNAP header (gencode's
        // PUSH_LINKHDR: at a run-time offset when the payload is at one).
        let hdr = self.link.nl().wrapping_add(6);
        if let Some(t) = self.link.tunnel {
            self.link.tunnel = Some(link::Tunnel { hdr: Some(t.pl), lt: t.pl, ..t });
        }
        self.link.kind = link::Kind::Ppp;
        self.link.mac = None;
        self.link.link_type = LinkType::PPP;
        self.link.off_linkhdr = hdr;
        self.link.off_linktype = Some(hdr);
        self.link.off_linkpl = hdr.wrapping_add(2);
        self.link.lane = false;
        self.link.off_nl = 0;
        self.link.off_nl_nosnap = 0;
        Ok(b)
    }
}

/// The encapsulations only classic BPF can follow: tags in socket metadata, tunnels.
impl Gen<'_, Bpf> {
    /// gencode's `gen_vlan_bpf_extensions` (a live Linux capture, first `vlan`): the kernel
    /// may have taken the tag out of the packet into its metadata (`vlanp`, `vlan_tci`), or
    /// left it in. The type and payload offsets become run-time words, 0 or 4 (zeroed before
    /// the filter, moved when the tag is in the packet), for every later primitive.
    pub(super) fn vlan_linux(&mut self, id: Option<u32>) -> R<Pred> {
        const SKF_AD_VLAN_TAG: u32 = 44;
        const SKF_AD_VLAN_TAG_PRESENT: u32 = 48;
        let pl = self.t.b.alloc_slot()?;
        let lt = self.t.b.alloc_slot()?;
        let present = self.t.b.cmp(
            Load::Abs(Size::B, SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT),
            Cmp::Eq,
            1,
            u32::MAX,
        );
        let k = Operand::K;
        let moved = self.t.b.straight(vec![
            Stmt::Ld(Src::Mem(pl)),
            Stmt::Alu(AluOp::Add, k(4)),
            Stmt::St(pl),
            Stmt::Ld(Src::Mem(lt)),
            Stmt::Alu(AluOp::Add, k(4)),
            Stmt::St(lt),
        ]);
        let b0 = self.linktype(ethertype::VLAN)?;
        let b1 = self.linktype(ethertype::QINQ)?;
        let b1 = self.t.b.or(b0, b1);
        let b2 = self.linktype(ethertype::QINQ_9100)?;
        let in_packet = self.t.b.or(b1, b2);
        let in_packet = self.t.b.seq(moved, in_packet);
        let mut b = self.t.b.or(present, in_packet);
        if let Some(id) = id {
            // The VID from the metadata, or from the tag in the packet.
            let c = self.t.b.cmp(
                Load::Abs(Size::B, SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT),
                Cmp::Eq,
                1,
                u32::MAX,
            );
            let meta =
                self.t.b.straight(vec![Stmt::Ld(Src::Abs(Size::H, SKF_AD_OFF + SKF_AD_VLAN_TAG))]);
            let pkt = self.t.b.straight(vec![Stmt::Ld(Src::Abs(Size::H, self.link.nl()))]);
            let tci = self.t.b.ite(c, meta, pkt);
            let tci = self.t.b.join(tci);
            let vid = self.t.b.branch(vec![Stmt::Alu(AluOp::And, k(0x0fff))], JmpOp::Jeq, k(id));
            let vid = self.t.b.seq(tci, vid);
            b = self.t.b.and(b, vid);
        }
        self.link.tunnel = Some(link::Tunnel { hdr: None, lt, pl, geneve: false });
        self.t.vlan_words = Some((pl, lt));
        self.vlan_depth += 1;
        Ok(b)
    }

    /// gencode's `gen_geneve`/`gen_vxlan`: UDP to port 6081 (Geneve, version 0) or 4789
    /// (VXLAN, I flag), over IPv4 or IPv6, with the VNI if given; then the offsets of the
    /// inner frame go into scratch words, and every later primitive looks inside the tunnel
    /// (an Ethernet frame; for Geneve, the link type is Geneve's protocol type unless that
    /// is Ethernet).
    pub(super) fn tunnel(&mut self, geneve: bool, vni: Option<u32>) -> R<Pred> {
        if let Some(v) = vni
            && v > 0xff_ffff
        {
            return Err(CompileError::new(
                K::OutOfRange { what: Quantity::Vni { geneve }, value: v.into(), max: 0xff_ffff },
                None,
            ));
        }
        let port = if geneve { 6081 } else { 4789 };
        // The word holding the run-time payload offset, if there is one: an outer tunnel's
        // (a tunnel in a tunnel), or the variable link header's.
        let var = match self.link.tunnel {
            Some(t) => Some(t.pl),
            None if self.link.var_pl => Some(self.t.pl_reg()),
            None => None,
        };
        let mut sides = Vec::new();
        for v6 in [false, true] {
            let b0 = self.port(None, port, Some(ipproto::UDP), Dir::Dst, v6)?;
            let base = if v6 { Base::TranV6 } else { Base::TranV4 };
            let flags = if geneve {
                self.cmp(base, 8, Size::B, Cmp::Eq, 0, 0xc0)?
            } else {
                self.cmp(base, 8, Size::B, Cmp::Eq, 0x08, u32::MAX)?
            };
            let mut b = self.t.b.and(b0, flags);
            if let Some(v) = vni {
                let c = self.cmp(base, 12, Size::W, Cmp::Eq, v << 8, 0xffff_ff00)?;
                b = self.t.b.and(b, c);
            }
            // A = X = the offset of the UDP header from the network header (plus the
            // variable payload offset), by a test that always holds.
            let nl = self.link.nl();
            let stmts = match (v6, var) {
                (false, None) => vec![Stmt::Ldx(XSrc::Msh(nl)), Stmt::Txa],
                (false, Some(r)) => {
                    let mut v = bpf::iphdrlen_var(&self.link, r);
                    v.push(Stmt::Txa);
                    v
                }
                (true, None) => vec![Stmt::Ld(Src::Imm(40)), Stmt::Tax],
                (true, Some(r)) => {
                    vec![
                        Stmt::Ldx(XSrc::Mem(r)),
                        Stmt::Ld(Src::Imm(40)),
                        Stmt::Alu(AluOp::Add, Operand::X),
                        Stmt::Tax,
                    ]
                }
            };
            let set_x = self.t.b.branch(stmts, JmpOp::Jeq, Operand::X);
            sides.push(self.t.b.and(b, set_x));
        }
        let v6 = sides.pop().expect("two sides");
        let v4 = sides.pop().expect("two sides");
        let b = self.t.b.or(v4, v6);
        let udp = self.link.nl().wrapping_add(8);
        let k = Operand::K;
        let (hdr, lt, pl, offsets) = if geneve {
            let lt = self.t.b.alloc_slot()?;
            let hdr = self.t.b.alloc_slot()?;
            let pl = self.t.b.alloc_slot()?;
            // X = the Geneve header; the inner frame follows its options.
            let head = self.t.b.branch(
                vec![
                    Stmt::Alu(AluOp::Add, k(udp)),
                    Stmt::Tax,
                    Stmt::Alu(AluOp::Add, k(2)),
                    Stmt::St(lt),
                    Stmt::Ld(Src::Ind(Size::B, 0)),
                    Stmt::Alu(AluOp::And, k(0x3f)),
                    Stmt::Alu(AluOp::Mul, k(4)),
                    Stmt::Alu(AluOp::Add, k(8)),
                    Stmt::Alu(AluOp::Add, Operand::X),
                    Stmt::St(hdr),
                    Stmt::Ld(Src::Ind(Size::H, 2)),
                    Stmt::Ldx(XSrc::Mem(hdr)),
                ],
                JmpOp::Jeq,
                k(ethertype::TEB),
            );
            // Transparent Ethernet bridging: the type and payload of the inner Ethernet.
            let eth = self.t.b.straight(vec![
                Stmt::Txa,
                Stmt::Alu(AluOp::Add, k(12)),
                Stmt::St(lt),
                Stmt::Alu(AluOp::Add, k(2)),
                Stmt::Tax,
            ]);
            let head = self.t.b.and(head, eth);
            let head = self.t.b.join(head);
            let done =
                self.t.b.branch(vec![Stmt::Stx(pl), Stmt::Ld(Src::Imm(0))], JmpOp::Jeq, k(0));
            (hdr, lt, pl, self.t.b.seq(head, done))
        } else {
            let hdr = self.t.b.alloc_slot()?;
            let lt = self.t.b.alloc_slot()?;
            let pl = self.t.b.alloc_slot()?;
            let done = self.t.b.branch(
                vec![
                    Stmt::Alu(AluOp::Add, k(udp)),
                    Stmt::Alu(AluOp::Add, k(8)),
                    Stmt::St(hdr),
                    Stmt::Alu(AluOp::Add, k(12)),
                    Stmt::St(lt),
                    Stmt::Alu(AluOp::Add, k(2)),
                    Stmt::Tax,
                    Stmt::Stx(pl),
                    Stmt::Ld(Src::Imm(0)),
                ],
                JmpOp::Jeq,
                k(0),
            );
            (hdr, lt, pl, done)
        };
        let b = self.t.b.and(b, offsets);
        // Later primitives see an Ethernet frame at those offsets.
        self.link = Link {
            link_type: LinkType::EN10MB,
            kind: link::Kind::Ether,
            off_linkhdr: 0,
            off_linktype: Some(0),
            off_linkpl: 0,
            off_nl: 0,
            off_nl_nosnap: 3,
            mac: Some((6, 0)),
            prefix: Prefix::None,
            var_pl: false,
            tunnel: Some(link::Tunnel { hdr: Some(hdr), lt, pl, geneve }),
            atm: self.link.atm,
            lane: false,
            ss7: None,
        };
        Ok(b)
    }
}
