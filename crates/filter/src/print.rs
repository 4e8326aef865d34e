//! The canonical printer: AST → text that parses back to the same tree (spans aside).
//!
//! Canonical means explicit: inherited qualifiers are written out (`host a or host b`),
//! every binary arithmetic operation is parenthesised, nested `and`/`or` runs get parentheses,
//! names that would lex as something else get a backslash.

use crate::ast::*;
use crate::lexer::{Tok, lex};
use std::fmt::{self, Write};

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        expr(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for Arith {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        arith(&mut s, self);
        f.write_str(&s)
    }
}

fn operand(out: &mut String, e: &Expr) {
    if matches!(e.kind, ExprKind::Chain { .. }) {
        out.push('(');
        expr(out, e);
        out.push(')');
    } else {
        expr(out, e);
    }
}

fn expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Chain { first, rest } => {
            operand(out, first);
            for (op, _, e) in rest {
                out.push_str(if *op == BoolOp::And { " and " } else { " or " });
                operand(out, e);
            }
        }
        ExprKind::Not(inner) => {
            out.push_str("not ");
            operand(out, inner);
        }
        ExprKind::Rel { op, lhs, rhs } => {
            arith(out, lhs);
            let _ = write!(out, " {} ", op.as_str());
            arith(out, rhs);
        }
        ExprKind::Prim(p) => prim(out, p),
    }
}

fn arith(out: &mut String, a: &Arith) {
    match &a.kind {
        ArithKind::Num(n) => {
            let _ = write!(out, "{n}");
        }
        ArithKind::Len => out.push_str("len"),
        ArithKind::Load { proto, index, size } => {
            let _ = write!(out, "{}[", proto.as_str());
            arith(out, index);
            if *size != 1 {
                let _ = write!(out, ":{size}");
            }
            out.push(']');
        }
        ArithKind::Neg(inner) => {
            out.push('-');
            arith(out, inner);
        }
        ArithKind::Bin { op, lhs, rhs } => {
            out.push('(');
            // `-a % b` is `-(a % b)` (and the same for `^`), so a negated left operand gets
            // its own parentheses; done for every operator to keep one rule.
            if matches!(lhs.kind, ArithKind::Neg(_)) {
                out.push('(');
                arith(out, lhs);
                out.push(')');
            } else {
                arith(out, lhs);
            }
            let _ = write!(out, " {} ", op.as_str());
            arith(out, rhs);
            out.push(')');
        }
    }
}

/// A name as it must be written to lex back as the same name.
pub(crate) fn name(n: &str) -> String {
    match lex(n) {
        Ok(t) if t.len() == 2 && t[0].tok == Tok::Id(n.to_owned()) => n.to_owned(),
        _ => format!("\\{n}"),
    }
}

fn id(out: &mut String, i: &Id) {
    let _ = match i {
        Id::Num(n) => write!(out, "{n}"),
        Id::V4(s) => write!(out, "{s}"),
        Id::V4Prefix { addr, len } => write!(out, "{addr}/{len}"),
        Id::V4Mask { addr, mask } => write!(out, "{addr} mask {mask}"),
        Id::V6(a) => write!(out, "{a}"),
        Id::V6Prefix(a, l) => write!(out, "{a}/{l}"),
        Id::Mac(m) => write!(
            out,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        ),
        Id::Arc(a) => write!(out, "${a:02x}"),
        Id::Name(n) => write!(out, "{}", name(n)),
    };
}

fn opt_proto(out: &mut String, p: &Option<Proto>) {
    if let Some(p) = p {
        out.push_str(p.as_str());
        out.push(' ');
    }
}

fn field_cmp(out: &mut String, c: &FieldCmp) {
    let _ = match c {
        FieldCmp::Any(v) if v.len() == 1 => write!(out, " {}", v[0]),
        FieldCmp::Any(v) => {
            let list: Vec<String> = v.iter().map(u32::to_string).collect();
            write!(out, " ({})", list.join(" or "))
        }
        FieldCmp::Rel(op, n) => write!(out, " {} {n}", op.as_str()),
    };
}

fn opt_num(out: &mut String, kw: &str, n: &Option<u32>) -> fmt::Result {
    out.push_str(kw);
    match n {
        Some(n) => write!(out, " {n}"),
        None => Ok(()),
    }
}

const PF_ACTIONS: &[&str] = &[
    "pass",
    "drop",
    "scrub",
    "noscrub",
    "nat",
    "nonat",
    "binat",
    "nobinat",
    "rdr",
    "nordr",
    "synproxy-drop",
    "defer",
    "match",
    "divert",
    "rt",
    "afrt",
    "dummynet",
    "nodummynet",
    "nat64",
    "nonat64",
];

fn prim(out: &mut String, p: &Primitive) {
    use Primitive as P;
    let _ = match p {
        P::Id { quals, id: i, .. } => {
            let mut parts: Vec<&str> = Vec::new();
            if let Some((p, _)) = quals.proto {
                parts.push(p.as_str());
            }
            if let Some((d, _)) = quals.dir {
                parts.push(d.as_str());
            }
            if let Some((t, _)) = quals.ty {
                parts.push(t.as_str());
            }
            out.push_str(&parts.join(" "));
            out.push(' ');
            id(out, i);
            Ok(())
        }
        P::Proto(p) => write!(out, "{}", p.as_str()),
        P::Broadcast(p) => {
            opt_proto(out, p);
            write!(out, "broadcast")
        }
        P::Multicast(p) => {
            opt_proto(out, p);
            write!(out, "multicast")
        }
        P::Less(n) => write!(out, "less {n}"),
        P::Greater(n) => write!(out, "greater {n}"),
        P::Byte { index, op, value } => {
            let o = match op {
                ByteOp::And => "&",
                ByteOp::Or => "|",
                ByteOp::Lt => "<",
                ByteOp::Gt => ">",
                ByteOp::Eq => "=",
            };
            write!(out, "byte {index} {o} {value}")
        }
        P::Inbound => write!(out, "inbound"),
        P::Outbound => write!(out, "outbound"),
        P::Ifindex(n) => write!(out, "ifindex {n}"),
        P::Vlan(n) => opt_num(out, "vlan", n),
        P::Mpls(n) => opt_num(out, "mpls", n),
        P::Pppoed => write!(out, "pppoed"),
        P::Pppoes(n) => opt_num(out, "pppoes", n),
        P::Geneve(n) => opt_num(out, "geneve", n),
        P::Vxlan(n) => opt_num(out, "vxlan", n),
        P::Llc(None) => write!(out, "llc"),
        P::Llc(Some(k)) => write!(out, "llc {k}"),
        P::PfIfname(n) => write!(out, "ifname {}", name(n)),
        P::PfRuleset(n) => write!(out, "ruleset {}", name(n)),
        P::PfRulenum(n) => write!(out, "rulenum {n}"),
        P::PfSubrulenum(n) => write!(out, "subrulenum {n}"),
        P::PfReason(n) => write!(out, "reason {n}"),
        P::PfAction(n) => write!(out, "action {}", PF_ACTIONS.get(*n as usize).unwrap_or(&"pass")),
        P::WlanType { proto, ty, subtype } => {
            opt_proto(out, proto);
            let _ = write!(out, "type {ty}");
            match subtype {
                Some(s) => write!(out, " subtype {s}"),
                None => Ok(()),
            }
        }
        P::WlanSubtype { proto, type_subtype } => {
            opt_proto(out, proto);
            write!(out, "subtype {}", crate::semantic::wlan_type_subtype_name(*type_subtype))
        }
        P::WlanDir { proto, dir } => {
            opt_proto(out, proto);
            write!(out, "dir {dir}")
        }
        P::Atm(k) | P::Mtp2(k) => write!(out, "{}", k.as_str()),
        P::AtmField { field, cmp } | P::Mtp3Field { field, cmp } => {
            out.push_str(field.as_str());
            field_cmp(out, cmp);
            Ok(())
        }
    };
}
