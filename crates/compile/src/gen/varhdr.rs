//! Variable-length link headers (radiotap, AVS, Prism, PPI, 802.11, pflog): the code placed
//! before the whole filter that computes their lengths into the scratch words the loads use
//! (gencode's `insert_compute_vloffsets`).

use super::*;
use crate::build::{BuildError, Load, Pred};
use crate::ir::{AluOp, JmpOp, Operand, Src, Stmt, XSrc};

impl Gen<'_, Bpf> {
    /// gencode's `insert_compute_vloffsets` (and, for PPI, `gen_ppi_dlt_check`): code before
    /// `p` that computes the run-time offsets `p`'s loads use. Only the offsets some load
    /// needed are computed.
    pub(super) fn vloffsets(&mut self, p: Pred) -> R<Pred> {
        use Stmt::*;
        // The payload offset is computed from the header offset.
        if self.t.pl_reg.is_some() && self.t.outer.var_hdr() && self.t.hdr_reg.is_none() {
            self.t.hdr_reg();
        }
        if self.t.reg_error {
            return Err(BuildError::TooManyRegisters.into());
        }
        // libpcap's quirk, kept: after `vxlan`/`geneve` gencode's offset registers are the
        // tunnel's, and `insert_compute_vloffsets` (which runs last) writes the outer
        // header's offsets into *those*; the outer loads read words nothing wrote (zero).
        let (hdr_reg, pl_reg) = match self.link.tunnel {
            Some(t) if self.t.outer.var_hdr() || self.t.outer.var_pl => (t.hdr, Some(t.pl)),
            _ => (self.t.hdr_reg, self.t.pl_reg),
        };
        let ldb = |k| Ld(Src::Abs(Size::B, k));
        // The header offset: statements leaving it in X and its word, after an optional
        // branchy head (Prism/AVS).
        let (head, mut stmts): (Option<Pred>, Vec<Stmt>) = match (self.t.outer.prefix, hdr_reg) {
            (Prefix::Radiotap | Prefix::Ppi, Some(r)) => (
                None,
                vec![
                    ldb(3),
                    Alu(AluOp::Lsh, Operand::K(8)),
                    Tax,
                    ldb(2),
                    Alu(AluOp::Or, Operand::X),
                    St(r),
                    Tax,
                ],
            ),
            (Prefix::Avs, Some(r)) => (None, vec![Ld(Src::Abs(Size::W, 4)), St(r), Tax]),
            (Prefix::Prism, Some(r)) => {
                // An AVS header (its cookie in the first word) gives its length at 4; a Prism
                // header is 144 bytes.
                let c = self.t.b.branch(
                    vec![Ld(Src::Abs(Size::W, 0)), Alu(AluOp::And, Operand::K(0xffff_f000))],
                    JmpOp::Jeq,
                    Operand::K(0x8021_1000),
                );
                let avs = self.t.b.straight(vec![Ld(Src::Abs(Size::W, 4))]);
                let prism = self.t.b.straight(vec![Ld(Src::Imm(144))]);
                let h = self.t.b.ite(c, avs, prism);
                (Some(self.t.b.join(h)), vec![St(r), Tax])
            }
            _ => (None, Vec::new()),
        };
        let body = match (self.t.outer.kind, pl_reg) {
            (link::Kind::Wlan, Some(pl)) => {
                // gen_load_802_11_header_len: 24 bytes, 2 more for QoS data frames, and with
                // radiotap, rounded up to 4 when the flags say there is padding.
                if stmts.is_empty() {
                    stmts.push(Ldx(XSrc::Imm(self.t.outer.off_linkhdr)));
                }
                stmts.extend([
                    Txa,
                    Alu(AluOp::Add, Operand::K(24)),
                    St(pl),
                    Ld(Src::Ind(Size::B, 0)),
                ]);
                let data1 =
                    self.t.b.branch(std::mem::take(&mut stmts), JmpOp::Jset, Operand::K(0x08));
                let data2 = self.t.b.branch(Vec::new(), JmpOp::Jset, Operand::K(0x04));
                let is_data = self.t.b.and(data1, !data2);
                let qos = self.t.b.branch(Vec::new(), JmpOp::Jset, Operand::K(0x80));
                let add2 = self.t.b.straight(vec![
                    Ld(Src::Mem(pl)),
                    Alu(AluOp::Add, Operand::K(2)),
                    St(pl),
                ]);
                let qos = self.t.b.and(qos, add2);
                let qos = self.t.b.join(qos);
                let rest = if self.t.outer.prefix == Prefix::Radiotap {
                    let flags = self.t.b.branch(
                        vec![Ld(Src::Abs(Size::W, 4))],
                        JmpOp::Jset,
                        Operand::K(0x0000_0002u32.swap_bytes()),
                    );
                    let ext = self.t.b.branch(
                        Vec::new(),
                        JmpOp::Jset,
                        Operand::K(0x8000_0000u32.swap_bytes()),
                    );
                    let tsft = self.t.b.branch(
                        Vec::new(),
                        JmpOp::Jset,
                        Operand::K(0x0000_0001u32.swap_bytes()),
                    );
                    let pad16 = self.t.b.branch(vec![ldb(16)], JmpOp::Jset, Operand::K(0x20));
                    let pad8 = self.t.b.branch(vec![ldb(8)], JmpOp::Jset, Operand::K(0x20));
                    let pad = self.t.b.ite(tsft, pad16, pad8);
                    let round = self.t.b.straight(vec![
                        Ld(Src::Mem(pl)),
                        Alu(AluOp::Add, Operand::K(3)),
                        Alu(AluOp::And, Operand::K(!3)),
                        St(pl),
                    ]);
                    let pad = self.t.b.and(pad, round);
                    let r = self.t.b.and(flags, !ext);
                    let r = self.t.b.and(r, pad);
                    let r = self.t.b.join(r);
                    let qos = self.t.b.seq(qos, r);
                    Some(qos)
                } else {
                    Some(qos)
                };
                let body = match rest {
                    Some(q) => self.t.b.and(is_data, q),
                    None => is_data,
                };
                Some(self.t.b.join(body))
            }
            (link::Kind::Pflog, Some(pl)) => {
                // gen_load_pflog_llprefixlen: the header length, rounded up to 4.
                stmts.extend([
                    ldb(0),
                    Alu(AluOp::Add, Operand::K(3)),
                    Alu(AluOp::And, Operand::K(0xffff_fffc)),
                    St(pl),
                    Tax,
                ]);
                None
            }
            _ => None,
        };
        if stmts.is_empty()
            && head.is_none()
            && let Some((pl, lt)) = self.t.vlan_words
        {
            // gencode's is_vlan_vloffset: the words start at zero.
            stmts.extend([Ld(Src::Imm(0)), St(pl), St(lt)]);
        }
        let mut p = match body {
            Some(body) => self.t.b.seq(body, p),
            None => {
                if !stmts.is_empty() {
                    self.t.b.prepend(&p, &stmts);
                }
                p
            }
        };
        if let Some(h) = head {
            p = self.t.b.seq(h, p);
        }
        if self.t.outer.prefix == Prefix::Ppi && self.link.tunnel.is_none() {
            // gen_ppi_dlt_check: the PPI header's DLT (little-endian) is DLT_IEEE802_11.
            // (libpcap tests the link type at the end: after vxlan/geneve there is none.)
            let check = self.t.b.cmp(Load::Abs(Size::W, 4), Cmp::Eq, 105u32.swap_bytes(), u32::MAX);
            p = self.t.b.and(check, p);
        }
        Ok(p)
    }
}
