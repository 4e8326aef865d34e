//! Classic BPF as a [`Target`]: predicates are [`crate::build::Pred`]s built with libpcap's
//! block algebra, values are gencode's scratch-word values, and fields are loaded at a
//! constant offset or at one the program computes at run time (the scratch words that hold
//! variable header lengths and tunnel offsets, allocated on first use as gencode's
//! `off_linkhdr.reg`/`off_linkpl.reg`). Also [`generate`], the generator's entry for BPF.
//!
//! Every call reaches the [`Builder`] in gencode's order, so the graph, and the listing
//! [`crate::emit`] lays out, is libpcap's.

use sift_filter::ast::{ArithOp, ByteOp, Expr, Proto};

use super::link::Link;
use super::target::{Extension, Field, Loc, Target};
use super::{Base, Gen, R};
use crate::build::{Builder, Cmp, Load, Pred, Value};
use crate::error::{ArithError, CompileError, CompileErrorKind as K};
use crate::ir::{AluOp, Cfg, JmpOp, Operand, Size, Slot, Src, Stmt, XSrc};
use crate::pipeline::Options;

/// The classic BPF target: the builder, and the scratch words for run-time offsets.
#[derive(Debug)]
pub struct Bpf {
    /// The graph under construction.
    pub(super) b: Builder,
    /// The scratch word holding the link-layer header's offset, once a load needed it
    /// (gencode's `off_linkhdr.reg`; variable-length radio headers only).
    pub(super) hdr_reg: Option<Slot>,
    /// The scratch word holding the link-layer payload's offset, once a load needed it
    /// (gencode's `off_linkpl.reg`; 802.11 and pflog).
    pub(super) pl_reg: Option<Slot>,
    /// Whether allocating one of those words failed (reported when the expression is done).
    pub(super) reg_error: bool,
    /// `protochain` walks generated so far.
    pub(super) walks: u32,
    /// The payload and type offset words of `vlan` with Linux extensions (zeroed first).
    pub(super) vlan_words: Option<(Slot, Slot)>,
    /// The capture's own link layer (what the offsets computed first are about, even after
    /// `vxlan`/`geneve` moved the generator's link model into the tunnel).
    pub(super) outer: Link,
}

/// Generates the unoptimized graph for `expr` (`None`: the empty filter, which accepts
/// everything) with the link type, snapshot length, netmask, Linux extensions and resolver of
/// `opts` (its `optimize` and `mode` are the pipeline's business).
pub fn generate(expr: Option<&Expr>, opts: &Options<'_>) -> Result<Cfg, CompileError> {
    let outer = Link::new(opts.link);
    let bpf = Bpf {
        b: Builder::new(),
        hdr_reg: None,
        pl_reg: None,
        reg_error: false,
        walks: 0,
        vlan_words: None,
        outer,
    };
    let mut g = Gen::new(bpf, opts.link, opts.netmask, opts.linux_ext, opts.resolver)?
        .with_savefile(opts.savefile);
    match expr {
        None => Ok(g.into_target().b.accept_all(opts.snaplen)),
        Some(e) => {
            let p = g.expr(e)?;
            let p = g.vloffsets(p)?;
            Ok(g.into_target().b.finish(p, opts.snaplen))
        }
    }
}

impl Bpf {
    /// The statements loading a field (gencode's `gen_load_a`).
    fn load_field(&mut self, link: &Link, base: Base, off: u32, size: Size) -> Load {
        if let Some(loc) = link.resolve(base, off) {
            return match loc {
                Loc::Abs(k) => Load::Abs(size, k),
                Loc::AfterIpv4 { hdr, off } => Load::AfterIpv4(hdr, size, off),
            };
        }
        let nl = link.nl();
        if let Some(t) = link.tunnel {
            // Inside vxlan/geneve: every base is a scratch word the tunnel check filled.
            let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
            let with = |r: Slot, k: u32| Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), ind(k)]);
            return match base {
                Base::Packet => Load::Abs(size, off),
                Base::LinkHdr => match t.hdr {
                    Some(r) => with(r, link.off_linkhdr.wrapping_add(off)),
                    None => Load::Abs(size, link.off_linkhdr.wrapping_add(off)),
                },
                Base::LinkType => with(t.lt, link.off_linktype.unwrap_or(0).wrapping_add(off)),
                Base::Net => with(t.pl, nl.wrapping_add(off)),
                Base::LinkPl => with(t.pl, link.off_linkpl.wrapping_add(off)),
                Base::NoSnap => {
                    with(t.pl, link.off_linkpl.wrapping_add(link.off_nl_nosnap).wrapping_add(off))
                }
                Base::TranV6 => with(t.pl, nl.wrapping_add(40).wrapping_add(off)),
                Base::TranV4 => {
                    let mut v = iphdrlen_var(link, t.pl);
                    v.push(ind(nl.wrapping_add(off)));
                    Load::Stmts(v)
                }
            };
        }
        if matches!(base, Base::LinkHdr | Base::LinkType) {
            // A variable-length header before the link-layer header (gencode's
            // gen_abs_offset_varpart(&off_linkhdr)): relative to its length, computed into a
            // scratch word first.
            let r = self.hdr_reg();
            let k = match base {
                Base::LinkType => link.off_linktype.unwrap_or(0).wrapping_add(off),
                _ => link.off_linkhdr.wrapping_add(off),
            };
            return Load::Stmts(vec![Stmt::Ldx(XSrc::Mem(r)), Stmt::Ld(Src::Ind(size, k))]);
        }
        // A variable-length link-layer header: the payload's offset is in a scratch word.
        let r = self.pl_reg();
        let ldx = Stmt::Ldx(XSrc::Mem(r));
        let ind = |k: u32| Stmt::Ld(Src::Ind(size, k));
        Load::Stmts(match base {
            Base::Packet => return Load::Abs(size, off),
            Base::Net => vec![ldx, ind(nl.wrapping_add(off))],
            Base::LinkPl => vec![ldx, ind(link.off_linkpl.wrapping_add(off))],
            Base::NoSnap => {
                vec![ldx, ind(link.off_linkpl.wrapping_add(link.off_nl_nosnap).wrapping_add(off))]
            }
            Base::TranV6 => vec![ldx, ind(nl.wrapping_add(40).wrapping_add(off))],
            _ => {
                // gen_loadx_iphdrlen with a variable payload offset.
                let mut v = iphdrlen_var(link, r);
                v.push(ind(nl.wrapping_add(off)));
                v
            }
        })
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

/// `ldx M[r]; ldb [x + nl]; and #0xf; lsh #2; add x; tax`: X = the offset of the IPv4
/// payload when the network layer starts at the run-time offset in `M[r]` (gencode's
/// `gen_loadx_iphdrlen` with a variable offset).
pub(super) fn iphdrlen_var(link: &Link, r: Slot) -> Vec<Stmt> {
    vec![
        Stmt::Ldx(XSrc::Mem(r)),
        Stmt::Ld(Src::Ind(Size::B, link.nl())),
        Stmt::Alu(AluOp::And, Operand::K(0xf)),
        Stmt::Alu(AluOp::Lsh, Operand::K(2)),
        Stmt::Alu(AluOp::Add, Operand::X),
        Stmt::Tax,
    ]
}

impl Target for Bpf {
    type Pred = Pred;
    type Value = Value;

    fn test(&mut self, link: &Link, field: Field, cmp: Cmp, value: u32, mask: u32) -> R<Pred> {
        let load = self.load_field(link, field.base, field.off, field.size);
        Ok(self.b.cmp(load, cmp, value, mask))
    }

    fn and(&mut self, p: Pred, q: Pred) -> Pred {
        self.b.and(p, q)
    }

    fn or(&mut self, p: Pred, q: Pred) -> Pred {
        self.b.or(p, q)
    }

    fn not(&mut self, p: Pred) -> Pred {
        !p
    }

    fn always(&mut self) -> Pred {
        self.b.always()
    }

    fn never(&mut self) -> Pred {
        self.b.never()
    }

    fn len_test(&mut self, cmp: Cmp, n: u32) -> R<Pred> {
        Ok(self.b.cmp(Load::Len, cmp, n, u32::MAX))
    }

    fn imm(&mut self, k: u32) -> R<Value> {
        Ok(self.b.imm(k)?)
    }

    fn wire_len(&mut self) -> R<Value> {
        Ok(self.b.len()?)
    }

    fn load(&mut self, index: Value, at: Loc, size: Size, guard: Option<Pred>) -> R<Value> {
        Ok(match at {
            Loc::Abs(off) => self.b.load(index, &[], off, size, guard)?,
            Loc::AfterIpv4 { hdr, off } => {
                self.b.load(index, &[Stmt::Ldx(XSrc::Msh(hdr))], off, size, guard)?
            }
        })
    }

    fn take_guard(&mut self, v: &mut Value) -> Option<Pred> {
        v.take_guard()
    }

    fn arith(&mut self, op: ArithOp, a: Value, b: Value) -> R<Value> {
        // libpcap 1.10 looks at the *first* statement of the right operand: a constant there
        // (even the index of `proto[k]`) counts as the divisor or shift.
        if let Some(Stmt::Ld(Src::Imm(k))) = b.stmts().first() {
            let err = match op {
                ArithOp::Div if *k == 0 => Some(ArithError::DivisionByZero),
                ArithOp::Mod if *k == 0 => Some(ArithError::ModulusByZero),
                ArithOp::Shl | ArithOp::Shr if *k > 31 => Some(ArithError::ShiftTooLarge),
                _ => None,
            };
            if let Some(err) = err {
                return Err(CompileError::new(K::Arithmetic(err), None));
            }
        }
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
        Ok(self.b.arith(op, a, b)?)
    }

    fn neg(&mut self, a: Value) -> R<Value> {
        Ok(self.b.neg(a))
    }

    fn relation(&mut self, cmp: Cmp, a: Value, b: Value) -> R<Pred> {
        Ok(self.b.relation(cmp, a, b))
    }

    fn extension(g: &mut Gen<'_, Bpf>, ext: Extension) -> R<Pred> {
        match ext {
            Extension::Protochain { v, proto } => g.protochain(v, proto),
            Extension::Tunnel { geneve, vni } => g.tunnel(geneve, vni),
            Extension::VlanMetadata { id } => g.vlan_linux(id),
            Extension::ByteAccumulator { op, value } => {
                let alu = if op == ByteOp::And { AluOp::And } else { AluOp::Or };
                let p = g.t.b.branch(
                    vec![Stmt::Alu(alu, Operand::K(value))],
                    JmpOp::Jeq,
                    Operand::K(0),
                );
                Ok(!p)
            }
        }
    }

    fn index_load_var(g: &mut Gen<'_, Bpf>, proto: Proto, index: Value, size: Size) -> R<Value> {
        g.index_load_var(proto, index, size)
    }
}
