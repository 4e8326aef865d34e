//! Filter AST → a predicate tree over *field tests* (the leaves), in exactly the order and with
//! exactly the loads sift's classic BPF code generator (`sift_compile::gen`, after libpcap's
//! gencode) evaluates them: `and`/`or` are left-to-right short-circuit, and a leaf is one BPF
//! comparison (`ld`, optional `and #mask`, `jeq`/`jgt`/`jge`/`jset`). The CSPF code generator
//! ([`crate::codegen`]) needs that order to give the same verdict as the BPF program on packets
//! too short for some of the fields.
//!
//! Only what CSPF can express is built: fields at fixed offsets, or (with the indirect-push
//! extension) right after a variable-length IPv4 header. Everything else is a [`CspfError`]
//! saying why.

use std::net::{IpAddr, Ipv6Addr};

use sift_filter::Resolver;
use sift_filter::ast::*;

use crate::CspfError;

/// Where a field is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Base {
    /// `off` bytes from the start of the packet.
    Fixed,
    /// `off` bytes after the IPv4 header whose first byte is at `nl` (`4 * (pkt[nl] & 0xf)`
    /// bytes long): BPF's `ldx 4*([nl]&0xf); ld [x + nl + off]`.
    AfterIpv4 {
        /// Offset of the IPv4 header.
        nl: u32,
    },
}

/// A packet field: `size` (1, 2 or 4) bytes at `off` from `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Field {
    pub base: Base,
    pub off: u32,
    pub size: u32,
}

impl Field {
    /// One past the last byte, relative to the base.
    pub fn end(self) -> u32 {
        self.off.saturating_add(self.size)
    }
}

/// A leaf comparison: `(field & mask) CMP value` (`Set`: `(field & mask) & value != 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    Eq,
    Gt,
    Ge,
    Set,
}

/// One field test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Leaf {
    pub field: Field,
    pub mask: u32,
    pub cmp: Cmp,
    pub value: u32,
}

/// A predicate tree; `And`/`Or` evaluate their operands left to right with short circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tree {
    Const(bool),
    Leaf(Leaf),
    Not(Box<Tree>),
    And(Vec<Tree>),
    Or(Vec<Tree>),
}

fn and(a: Tree, b: Tree) -> Tree {
    match (a, b) {
        (Tree::And(mut xs), Tree::And(ys)) => {
            xs.extend(ys);
            Tree::And(xs)
        }
        (Tree::And(mut xs), y) => {
            xs.push(y);
            Tree::And(xs)
        }
        (x, Tree::And(mut ys)) => {
            ys.insert(0, x);
            Tree::And(ys)
        }
        (x, y) => Tree::And(vec![x, y]),
    }
}

fn or(a: Tree, b: Tree) -> Tree {
    match (a, b) {
        (Tree::Or(mut xs), Tree::Or(ys)) => {
            xs.extend(ys);
            Tree::Or(xs)
        }
        (Tree::Or(mut xs), y) => {
            xs.push(y);
            Tree::Or(xs)
        }
        (x, Tree::Or(mut ys)) => {
            ys.insert(0, x);
            Tree::Or(ys)
        }
        (x, y) => Tree::Or(vec![x, y]),
    }
}

fn not(a: Tree) -> Tree {
    match a {
        Tree::Not(x) => *x,
        x => Tree::Not(Box::new(x)),
    }
}

impl Tree {
    /// Calls `f` on every leaf.
    pub fn for_each_leaf(&self, f: &mut dyn FnMut(&Leaf)) {
        match self {
            Tree::Const(_) => {}
            Tree::Leaf(l) => f(l),
            Tree::Not(x) => x.for_each_leaf(f),
            Tree::And(xs) | Tree::Or(xs) => xs.iter().for_each(|x| x.for_each_leaf(f)),
        }
    }
}

mod ethertype {
    pub const IP: u32 = 0x0800;
    pub const ARP: u32 = 0x0806;
    pub const REVARP: u32 = 0x8035;
    pub const IPV6: u32 = 0x86dd;
}

mod ipproto {
    pub const ICMP: u32 = 1;
    pub const IGMP: u32 = 2;
    pub const TCP: u32 = 6;
    pub const IGRP: u32 = 9;
    pub const UDP: u32 = 17;
    pub const FRAGMENT: u32 = 44;
    pub const ESP: u32 = 50;
    pub const AH: u32 = 51;
    pub const ICMPV6: u32 = 58;
    pub const PIM: u32 = 103;
    pub const VRRP: u32 = 112;
    pub const SCTP: u32 = 132;
}

/// How a supported link type says what its payload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// An EtherType at `type_off` (Ethernet, Linux cooked v1).
    EtherType,
    /// Raw IP: the version nibble.
    Raw,
    /// Only IPv4.
    Ipv4,
    /// Only IPv6.
    Ipv6,
    /// BSD loopback: the address family, 32 bits in little-endian host order.
    Null,
    /// OpenBSD loopback: the address family, 32 bits in network order.
    Loop,
}

/// The supported link types (fixed-length link headers).
#[derive(Clone, Copy, Debug)]
struct Link {
    kind: Kind,
    type_off: u32,
    nl: u32,
    /// Source and destination MAC offsets.
    mac: Option<(u32, u32)>,
}

/// The DLT numbers the CSPF compiler supports (Linux values).
pub const SUPPORTED_DLTS: &[(&str, i32)] = &[
    ("EN10MB", 1),
    ("LINUX_SLL", 113),
    ("RAW", 12),
    ("IPV4", 228),
    ("IPV6", 229),
    ("NULL", 0),
    ("LOOP", 108),
];

fn link_for(dlt: i32) -> Result<Link, CspfError> {
    let l = |_name: &str, kind, type_off, nl, mac| Link { kind, type_off, nl, mac };
    Ok(match dlt {
        1 => l("EN10MB", Kind::EtherType, 12, 14, Some((6, 0))),
        113 => l("LINUX_SLL", Kind::EtherType, 14, 16, None),
        12 => l("RAW", Kind::Raw, 0, 0, None),
        228 => l("IPV4", Kind::Ipv4, 0, 0, None),
        229 => l("IPV6", Kind::Ipv6, 0, 0, None),
        0 => l("NULL", Kind::Null, 0, 4, None),
        108 => l("LOOP", Kind::Loop, 0, 4, None),
        _ => {
            return Err(CspfError::new(
                format!(
                    "the CSPF compiler supports only fixed-length link headers ({}), not DLT {dlt}",
                    SUPPORTED_DLTS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
                None,
            ));
        }
    })
}

type R<T> = Result<T, CspfError>;

/// The message part that names the extension flag.
pub(crate) const NEEDS_INDIRECT: &str = "(needs the indirect-push extension: --cspf-indirect)";

/// Builds the tree for `expr` on link type `dlt`.
pub(crate) fn build(expr: &Expr, dlt: i32, indirect: bool, resolver: &dyn Resolver) -> R<Tree> {
    let link = link_for(dlt)?;
    let mut g = Gen { link, indirect, resolver, label_depth: 0 };
    g.expr(expr)
}

struct Gen<'a> {
    /// The link-layer model; `vlan` and `mpls` move its offsets for what follows, as in
    /// gencode.
    link: Link,
    indirect: bool,
    resolver: &'a dyn Resolver,
    /// MPLS labels matched so far.
    label_depth: u32,
}

fn err(msg: impl Into<String>) -> CspfError {
    CspfError::new(msg, None)
}

fn cant(what: impl std::fmt::Display) -> CspfError {
    err(format!("the CSPF compiler does not support {what}"))
}

fn leaf(base: Base, off: u32, size: u32, cmp: Cmp, value: u32, mask: u32) -> Tree {
    Tree::Leaf(Leaf { field: Field { base, off, size }, mask, cmp, value })
}

fn eq(off: u32, size: u32, value: u32) -> Tree {
    leaf(Base::Fixed, off, size, Cmp::Eq, value, u32::MAX)
}

use sift_diag::number::parse_c_u32 as parse_num;

fn v4(s: &str) -> R<(u32, u32)> {
    sift_filter::semantic::ipv4_parts(s).ok_or_else(|| err(format!("invalid IPv4 address '{s}'")))
}

impl Gen<'_> {
    fn expr(&mut self, e: &Expr) -> R<Tree> {
        let at = |r: R<Tree>| r.map_err(|x| x.at(e.span));
        match &e.kind {
            ExprKind::Chain { first, rest } => {
                let mut acc = self.expr(first)?;
                for (op, _, e) in rest {
                    let p = self.expr(e)?;
                    acc = match op {
                        BoolOp::And => and(acc, p),
                        BoolOp::Or => or(acc, p),
                    };
                }
                Ok(acc)
            }
            ExprKind::Not(x) => Ok(not(self.expr(x)?)),
            ExprKind::Prim(p) => at(self.prim(p)),
            ExprKind::Rel { op, lhs, rhs } => at(self.relation(*op, lhs, rhs)),
        }
    }

    // ---- link layer ---------------------------------------------------------------------

    fn linktype(&mut self, ll: u32) -> R<Tree> {
        if self.label_depth > 0 {
            // Inside MPLS: the bottom-of-stack bit and the IP version.
            let version = match ll {
                ethertype::IP => 0x40,
                ethertype::IPV6 => 0x60,
                _ => return Err(err("unsupported protocol over mpls")),
            };
            let b0 = self.net(0u32.wrapping_sub(2), 1, Cmp::Eq, 1, 1);
            let b1 = self.net(0, 1, Cmp::Eq, version, 0xf0);
            return Ok(and(b0, b1));
        }
        let l = self.link;
        Ok(match l.kind {
            Kind::EtherType => {
                if ll <= 1500 || matches!(ll, 0x809b | 0x80f3) {
                    return Err(cant(format!(
                        "802.2 LLC/SNAP-encapsulated protocols (link-layer protocol {ll:#x})"
                    )));
                }
                eq(l.type_off, 2, ll)
            }
            Kind::Raw => match ll {
                ethertype::IP => leaf(Base::Fixed, 0, 1, Cmp::Eq, 0x40, 0xf0),
                ethertype::IPV6 => leaf(Base::Fixed, 0, 1, Cmp::Eq, 0x60, 0xf0),
                _ => Tree::Const(false),
            },
            Kind::Ipv4 => Tree::Const(ll == ethertype::IP),
            Kind::Ipv6 => Tree::Const(ll == ethertype::IPV6),
            Kind::Null | Kind::Loop => {
                let af = match ll {
                    ethertype::IP => 2u32,
                    ethertype::IPV6 => 10,
                    _ => return Ok(Tree::Const(false)),
                };
                let v = if l.kind == Kind::Null { af.swap_bytes() } else { af };
                eq(0, 4, v)
            }
        })
    }

    fn net(&self, off: u32, size: u32, cmp: Cmp, v: u32, mask: u32) -> Tree {
        leaf(Base::Fixed, self.link.nl.wrapping_add(off), size, cmp, v, mask)
    }

    fn net_eq(&self, off: u32, size: u32, v: u32) -> Tree {
        self.net(off, size, Cmp::Eq, v, u32::MAX)
    }

    /// Not a fragment other than the first.
    fn ipfrag(&self) -> Tree {
        not(self.net(6, 2, Cmp::Set, 0x1fff, u32::MAX))
    }

    // ---- protocols ----------------------------------------------------------------------

    fn abbrev(&mut self, p: Proto) -> R<Tree> {
        use ipproto::*;
        match p {
            Proto::Ip => self.linktype(ethertype::IP),
            Proto::Ip6 => self.linktype(ethertype::IPV6),
            Proto::Arp => self.linktype(ethertype::ARP),
            Proto::Rarp => self.linktype(ethertype::REVARP),
            Proto::Tcp => self.proto(TCP, None),
            Proto::Udp => self.proto(UDP, None),
            Proto::Sctp => self.proto(SCTP, None),
            Proto::Icmp => self.proto(ICMP, Some(Proto::Ip)),
            Proto::Igmp => self.proto(IGMP, Some(Proto::Ip)),
            Proto::Igrp => self.proto(IGRP, Some(Proto::Ip)),
            Proto::Pim => self.proto(PIM, None),
            Proto::Vrrp | Proto::Carp => self.proto(VRRP, Some(Proto::Ip)),
            Proto::Icmp6 => self.proto(ICMPV6, Some(Proto::Ip6)),
            Proto::Ah => self.proto(AH, None),
            Proto::Esp => self.proto(ESP, None),
            Proto::Decnet => self.linktype(0x6003),
            Proto::Sca => self.linktype(0x6007),
            Proto::Lat => self.linktype(0x6004),
            Proto::Mopdl => self.linktype(0x6001),
            Proto::Moprc => self.linktype(0x6002),
            p if p.is_link() => Err(err("link layer applied in wrong context")),
            Proto::Atalk | Proto::Aarp | Proto::Stp | Proto::Ipx | Proto::Netbeui | Proto::Iso => {
                Err(cant(format!("`{}` (802.2 LLC/SNAP encapsulation)", p.as_str())))
            }
            p => Err(cant(format!("`{}`", p.as_str()))),
        }
    }

    fn proto(&mut self, v: u32, proto: Option<Proto>) -> R<Tree> {
        match proto {
            None => {
                let b0 = self.proto(v, Some(Proto::Ip))?;
                let b1 = self.proto(v, Some(Proto::Ip6))?;
                Ok(or(b0, b1))
            }
            Some(Proto::Ip) => {
                let b0 = self.linktype(ethertype::IP)?;
                Ok(and(b0, self.net_eq(9, 1, v)))
            }
            Some(Proto::Ip6) => {
                let b0 = self.linktype(ethertype::IPV6)?;
                let frag = and(self.net_eq(6, 1, ipproto::FRAGMENT), self.net_eq(40, 1, v));
                let b1 = or(self.net_eq(6, 1, v), frag);
                Ok(and(b0, b1))
            }
            Some(p) if p.is_link() => self.linktype(v),
            Some(Proto::Arp) => Err(err("arp does not encapsulate another protocol")),
            Some(Proto::Rarp) => Err(err("rarp does not encapsulate another protocol")),
            Some(
                p @ (Proto::Tcp
                | Proto::Udp
                | Proto::Sctp
                | Proto::Icmp
                | Proto::Icmp6
                | Proto::Igmp),
            ) => Err(err(format!("'{}' modifier applied to proto", p.as_str()))),
            Some(p) => Err(cant(format!("`{} proto`", p.as_str()))),
        }
    }

    // ---- primitives ---------------------------------------------------------------------

    fn prim(&mut self, p: &Primitive) -> R<Tree> {
        match p {
            Primitive::Proto(p) => self.abbrev(*p),
            Primitive::Id { quals, id, id_span } => self.id(quals, id).map_err(|e| e.at(*id_span)),
            Primitive::Less(_) | Primitive::Greater(_) => Err(err(
                "CSPF cannot test the packet length: its only operands are packet words and constants",
            )),
            Primitive::Byte { index, op, value } => {
                let cmp = |c, neg: bool| {
                    let t = leaf(Base::Fixed, *index, 1, c, *value, u32::MAX);
                    if neg { not(t) } else { t }
                };
                match op {
                    ByteOp::Eq => Ok(cmp(Cmp::Eq, false)),
                    ByteOp::Gt => Ok(cmp(Cmp::Gt, false)),
                    ByteOp::Lt => Ok(cmp(Cmp::Ge, true)),
                    ByteOp::And | ByteOp::Or => Err(cant(
                        "`byte N & V` / `byte N | V` (libpcap tests an unloaded accumulator there)",
                    )),
                }
            }
            Primitive::Broadcast(proto) => match proto {
                p if p.is_none_or(Proto::is_link) => {
                    if self.link.mac.is_none() {
                        return Err(err("not a broadcast link"));
                    }
                    Ok(self.ehostop([0xff; 6], Dir::Dst))
                }
                Some(Proto::Ip) => Err(err("netmask not known, so 'ip broadcast' not supported")),
                _ => Err(err("only link-layer/IP broadcast filters supported")),
            },
            Primitive::Multicast(proto) => match proto {
                p if p.is_none_or(Proto::is_link) => {
                    let Some((_, dst)) = self.link.mac else {
                        return Err(err(
                            "link-layer multicast filters supported only on ethernet/FDDI/token ring/ARCNET/802.11/ATM LANE/Fibre Channel",
                        ));
                    };
                    Ok(leaf(Base::Fixed, dst, 1, Cmp::Set, 1, u32::MAX))
                }
                Some(Proto::Ip) => {
                    let b0 = self.linktype(ethertype::IP)?;
                    Ok(and(b0, self.net(16, 1, Cmp::Ge, 224, u32::MAX)))
                }
                Some(Proto::Ip6) => {
                    let b0 = self.linktype(ethertype::IPV6)?;
                    Ok(and(b0, self.net_eq(24, 1, 255)))
                }
                _ => Err(err(
                    "only IP multicast filters supported on ethernet/FDDI/token ring/ARCNET/802.11/ATM LANE/Fibre Channel",
                )),
            },
            Primitive::Vlan(id) => self.vlan(*id),
            Primitive::Mpls(label) => self.mpls(*label),
            Primitive::Pppoed => self.linktype(0x8863),
            Primitive::Pppoes(_) => Err(cant("`pppoes` (the link layer becomes PPP)")),
            Primitive::Inbound | Primitive::Outbound | Primitive::Ifindex(_) => Err(err(
                "CSPF cannot see the packet's direction or interface: it reads only packet words",
            )),
            Primitive::Geneve(_) | Primitive::Vxlan(_) => Err(err(
                "CSPF cannot follow `geneve`/`vxlan`: the inner headers sit after a UDP header \
                 whose offset varies, and after a tunnel header of variable length",
            )),
            Primitive::Llc(_) => Err(cant("`llc` (802.2 LLC frames)")),
            Primitive::PfIfname(_)
            | Primitive::PfRuleset(_)
            | Primitive::PfRulenum(_)
            | Primitive::PfSubrulenum(_)
            | Primitive::PfReason(_)
            | Primitive::PfAction(_) => Err(cant("pflog primitives (DLT_PFLOG)")),
            Primitive::WlanType { .. }
            | Primitive::WlanSubtype { .. }
            | Primitive::WlanDir { .. } => {
                Err(cant("802.11 primitives (their header length varies)"))
            }
            Primitive::Atm(_) | Primitive::AtmField { .. } => {
                Err(cant("ATM primitives (DLT_SUNATM)"))
            }
            Primitive::Mtp2(_) | Primitive::Mtp3Field { .. } => Err(cant("MTP2/MTP3 primitives")),
        }
    }

    /// gencode's `gen_vlan` without Linux extensions: the three VLAN EtherTypes, the VLAN id,
    /// then every later offset moves 4 bytes on.
    fn vlan(&mut self, id: Option<u32>) -> R<Tree> {
        if self.label_depth > 0 {
            return Err(err("no VLAN match after MPLS"));
        }
        if self.link.mac.is_none() {
            return Err(cant("`vlan` on link types other than Ethernet"));
        }
        let b0 = self.linktype(0x8100)?;
        let b1 = self.linktype(0x88a8)?;
        let b1 = or(b0, b1);
        let b2 = self.linktype(0x9100)?;
        let mut b = or(b1, b2);
        if let Some(id) = id {
            b = and(b, self.net(0, 2, Cmp::Eq, id, 0x0fff));
        }
        self.link.type_off += 4;
        self.link.nl += 4;
        Ok(b)
    }

    /// gencode's `gen_mpls`: later network-layer offsets move 4 bytes on.
    fn mpls(&mut self, label: Option<u32>) -> R<Tree> {
        let mut b = if self.label_depth > 0 {
            self.net(0u32.wrapping_sub(2), 1, Cmp::Eq, 0, 1)
        } else {
            if self.link.mac.is_none() {
                return Err(cant("`mpls` on link types other than Ethernet"));
            }
            self.linktype(0x8847)?
        };
        if let Some(label) = label {
            if label > 0xfffff {
                return Err(err(format!("MPLS label {label} greater than maximum 1048575")));
            }
            b = and(b, self.net(0, 4, Cmp::Eq, label << 12, 0xffff_f000));
        }
        self.link.nl += 4;
        self.label_depth += 1;
        Ok(b)
    }

    fn id(&mut self, q: &Quals, id: &Id) -> R<Tree> {
        let proto = q.proto.map(|p| p.0);
        let dir = q.dir.map_or(Dir::SrcOrDst, |d| d.0);
        if !matches!(dir, Dir::Src | Dir::Dst | Dir::SrcOrDst | Dir::SrcAndDst) {
            return Err(cant(format!("`{}`", dir.as_str())).at_opt(q.dir.map(|d| d.1)));
        }
        let ty = q.ty.map(|t| t.0);
        if let Some((p, span)) = q.proto
            && !p.qualifies_id()
        {
            return Err(cant(format!("`{}` qualifiers", p.as_str())).at_opt(Some(span)));
        }
        match ty {
            None | Some(QualType::Host | QualType::Net) => self.host_like(proto, dir, ty, id),
            Some(QualType::Port) => self.port_id(proto, dir, id, false),
            Some(QualType::Portrange) => self.port_id(proto, dir, id, true),
            Some(QualType::Proto) => {
                let v = match id {
                    Id::Num(n) => *n,
                    Id::Name(s) => self.proto_number(proto, s)?,
                    _ => return Err(err("illegal protocol")),
                };
                self.proto(v, proto)
            }
            Some(QualType::Protochain) => Err(err(
                "CSPF cannot follow `protochain`: it needs a loop over IPv6 extension headers",
            )),
            Some(QualType::Gateway) => Err(cant("`gateway`")),
        }
    }

    fn proto_number(&self, proto: Option<Proto>, s: &str) -> R<u32> {
        if proto.is_some_and(Proto::is_link) {
            return match s {
                "ip" => Ok(ethertype::IP),
                "ip6" => Ok(ethertype::IPV6),
                "arp" => Ok(ethertype::ARP),
                "rarp" => Ok(ethertype::REVARP),
                "decnet" => Ok(0x6003),
                "lat" => Ok(0x6004),
                "sca" => Ok(0x6007),
                "moprc" => Ok(0x6002),
                "mopdl" => Ok(0x6001),
                "loopback" => Ok(0x9000),
                "lldp" => Ok(0x88cc),
                "slow" => Ok(0x8809),
                _ => Err(cant(format!("ether proto '{s}'"))),
            };
        }
        if !matches!(proto, None | Some(Proto::Ip | Proto::Ip6)) {
            return Err(err(format!("unknown protocol: {s}")));
        }
        self.resolver
            .protocol(s)
            .map(u32::from)
            .ok_or_else(|| err(format!("unknown ip proto '{s}'")))
    }

    // ---- hosts --------------------------------------------------------------------------

    fn host_like(
        &mut self,
        proto: Option<Proto>,
        dir: Dir,
        ty: Option<QualType>,
        id: &Id,
    ) -> R<Tree> {
        let is_net = ty == Some(QualType::Net);
        let link = proto.is_some_and(Proto::is_link);
        match id {
            Id::Num(n) => {
                if link {
                    return Err(err("illegal link layer address"));
                }
                let (mut v, mut mask) = (*n, u32::MAX);
                if is_net {
                    while v != 0 && v & 0xff00_0000 == 0 {
                        v <<= 8;
                        mask <<= 8;
                    }
                }
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4(s) => {
                if link {
                    return Err(err("illegal link layer address"));
                }
                let (v, n) = v4(s)?;
                let mask = u32::MAX.checked_shl(32 - 8 * n).unwrap_or(0);
                self.host(v, mask, proto, dir, is_net)
            }
            Id::V4Prefix { addr, len } => {
                let (v, _) = v4(addr)?;
                let mask = if *len == 0 { 0 } else { u32::MAX << (32 - len) };
                if !is_net {
                    return Err(err("Mask syntax for networks only"));
                }
                self.host(v, mask, proto, dir, true)
            }
            Id::V4Mask { addr, mask } => {
                let (v, _) = v4(addr)?;
                let (m, _) = v4(mask)?;
                if !is_net {
                    return Err(err("Mask syntax for networks only"));
                }
                self.host(v, m, proto, dir, true)
            }
            Id::V6(a) => self.host6(*a, 128, proto, dir, is_net),
            Id::V6Prefix(a, len) => {
                if !is_net && *len != 128 {
                    return Err(err("Mask syntax for networks only"));
                }
                self.host6(*a, *len, proto, dir, is_net)
            }
            Id::Mac(m) => {
                if is_net || !(proto.is_none() || link) {
                    return Err(err("ethernet address used in non-ether expression"));
                }
                if self.link.mac.is_none() {
                    return Err(err(
                        "ethernet addresses supported only on ethernet/FDDI/token ring/802.11/ATM LANE/Fibre Channel",
                    ));
                }
                Ok(self.ehostop(*m, dir))
            }
            Id::Arc(_) => Err(cant("ARCnet addresses")),
            Id::Name(s) => self.host_name(proto, dir, is_net, s),
        }
    }

    fn host_name(&mut self, proto: Option<Proto>, dir: Dir, is_net: bool, s: &str) -> R<Tree> {
        let resolver = self.resolver;
        if is_net {
            let Some(mut v) = resolver.network(s) else {
                return Err(err(format!("unknown network '{s}'")));
            };
            let mut mask = u32::MAX;
            while v != 0 && v & 0xff00_0000 == 0 {
                v <<= 8;
                mask <<= 8;
            }
            return self.host(v, mask, proto, dir, true);
        }
        if proto.is_some_and(Proto::is_link) {
            if self.link.mac.is_none() {
                return Err(err(
                    "only ethernet/FDDI/token ring/802.11/ATM LANE/Fibre Channel supports link-level host name",
                ));
            }
            let Some(mac) = resolver.ether(s) else {
                return Err(err(format!("unknown ether host '{s}'")));
            };
            return Ok(self.ehostop(mac, dir));
        }
        let (mut tproto, mut tproto6) = (proto, proto);
        if self.link.kind != Kind::EtherType && proto.is_none() {
            tproto = Some(Proto::Ip);
            tproto6 = Some(Proto::Ip6);
        }
        let mut acc: Option<Tree> = None;
        for addr in resolver.host(s) {
            let tmp = match addr {
                IpAddr::V4(a) => {
                    if tproto == Some(Proto::Ip6) {
                        continue;
                    }
                    self.host(u32::from(a), u32::MAX, tproto, dir, false)?
                }
                IpAddr::V6(a) => {
                    if matches!(tproto6, Some(Proto::Ip | Proto::Arp | Proto::Rarp)) {
                        continue;
                    }
                    self.host6(a, 128, tproto6, dir, false)?
                }
            };
            acc = Some(match acc {
                Some(b) => or(b, tmp),
                None => tmp,
            });
        }
        acc.ok_or_else(|| err(format!("unknown host '{s}'")))
    }

    fn host(
        &mut self,
        addr: u32,
        mask: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<Tree> {
        let what = if is_net { "net" } else { "host" };
        match proto {
            None if self.label_depth > 0 => self.host(addr, mask, Some(Proto::Ip), dir, is_net),
            None => {
                let b0 = self.host(addr, mask, Some(Proto::Ip), dir, is_net)?;
                let b1 = self.host(addr, mask, Some(Proto::Arp), dir, is_net)?;
                let b1 = or(b0, b1);
                let b0 = self.host(addr, mask, Some(Proto::Rarp), dir, is_net)?;
                Ok(or(b1, b0))
            }
            Some(Proto::Ip) => self.hostop(addr, mask, dir, ethertype::IP, 12, 16),
            Some(Proto::Arp) => self.hostop(addr, mask, dir, ethertype::ARP, 14, 24),
            Some(Proto::Rarp) => self.hostop(addr, mask, dir, ethertype::REVARP, 14, 24),
            Some(p) if p.is_link() => Err(err(format!("link-layer modifier applied to {what}"))),
            Some(p) => Err(err(format!("'{}' modifier applied to {what}", p.as_str()))),
        }
    }

    fn hostop(&mut self, addr: u32, mask: u32, dir: Dir, ll: u32, src: u32, dst: u32) -> R<Tree> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let b0 = self.linktype(ll)?;
                Ok(and(b0, self.net(off, 4, Cmp::Eq, addr, mask)))
            }
            _ => {
                let b0 = self.hostop(addr, mask, Dir::Src, ll, src, dst)?;
                let b1 = self.hostop(addr, mask, Dir::Dst, ll, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { and(b0, b1) } else { or(b0, b1) })
            }
        }
    }

    fn host6(
        &mut self,
        addr: Ipv6Addr,
        len: u32,
        proto: Option<Proto>,
        dir: Dir,
        is_net: bool,
    ) -> R<Tree> {
        let what = if is_net { "net" } else { "host" };
        match proto {
            None | Some(Proto::Ip6) => {
                let bits = u128::from(addr);
                let mask: u128 = if len == 0 { 0 } else { u128::MAX << (128 - len.min(128)) };
                if bits & !mask != 0 {
                    return Err(err("non-network bits set in IPv6 address"));
                }
                self.hostop6(bits, mask, dir, 8, 24)
            }
            Some(p) if p.is_link() => {
                Err(err(format!("link-layer modifier applied to ip6 {what}")))
            }
            Some(p) => Err(err(format!("'{}' modifier applied to ip6 {what}", p.as_str()))),
        }
    }

    fn hostop6(&mut self, addr: u128, mask: u128, dir: Dir, src: u32, dst: u32) -> R<Tree> {
        match dir {
            Dir::Src | Dir::Dst => {
                let off = if dir == Dir::Src { src } else { dst };
                let word = |x: u128, i: u32| (x >> (96 - 32 * i)) as u32;
                let mut b1 = self.net(off + 12, 4, Cmp::Eq, word(addr, 3), word(mask, 3));
                for i in (0..3).rev() {
                    let b0 = self.net(off + 4 * i, 4, Cmp::Eq, word(addr, i), word(mask, i));
                    b1 = and(b0, b1);
                }
                let b0 = self.linktype(ethertype::IPV6)?;
                Ok(and(b0, b1))
            }
            _ => {
                let b0 = self.hostop6(addr, mask, Dir::Src, src, dst)?;
                let b1 = self.hostop6(addr, mask, Dir::Dst, src, dst)?;
                Ok(if dir == Dir::SrcAndDst { and(b0, b1) } else { or(b0, b1) })
            }
        }
    }

    /// gencode's `gen_bcmp`: 32-bit words from the end, then a 16-bit one.
    fn bcmp(&self, off: u32, bytes: &[u8]) -> Tree {
        let mut size = bytes.len();
        let mut acc: Option<Tree> = None;
        let mut push = |p: Tree| {
            acc = Some(match acc.take() {
                Some(b) => and(b, p),
                None => p,
            });
        };
        while size >= 4 {
            let w = u32::from_be_bytes([
                bytes[size - 4],
                bytes[size - 3],
                bytes[size - 2],
                bytes[size - 1],
            ]);
            push(eq(off + size as u32 - 4, 4, w));
            size -= 4;
        }
        while size >= 2 {
            let h = u32::from(u16::from_be_bytes([bytes[size - 2], bytes[size - 1]]));
            push(eq(off + size as u32 - 2, 2, h));
            size -= 2;
        }
        if size > 0 {
            push(eq(off, 1, u32::from(bytes[0])));
        }
        acc.unwrap_or(Tree::Const(true))
    }

    fn ehostop(&self, mac: [u8; 6], dir: Dir) -> Tree {
        let (src, dst) = self.link.mac.unwrap_or((6, 0));
        match dir {
            Dir::Src => self.bcmp(src, &mac),
            Dir::Dst => self.bcmp(dst, &mac),
            _ => {
                let b0 = self.ehostop(mac, Dir::Src);
                let b1 = self.ehostop(mac, Dir::Dst);
                if dir == Dir::SrcAndDst { and(b0, b1) } else { or(b0, b1) }
            }
        }
    }

    // ---- ports --------------------------------------------------------------------------

    fn port_id(&mut self, proto: Option<Proto>, dir: Dir, id: &Id, range: bool) -> R<Tree> {
        let qual = match proto {
            None => None,
            Some(Proto::Tcp) => Some(ipproto::TCP),
            Some(Proto::Udp) => Some(ipproto::UDP),
            Some(Proto::Sctp) => Some(ipproto::SCTP),
            Some(_) => {
                let what = if range { "portrange" } else { "port" };
                return Err(err(format!("illegal qualifier of '{what}'")));
            }
        };
        let (lo, hi, real) = match id {
            Id::Num(n) => (*n, *n, qual),
            Id::Name(s) if range => {
                let Some((a, b)) = s.split_once('-') else {
                    return Err(err(format!("unknown port in range '{s}'")));
                };
                let (a, pa) = self.port_number(a, qual)?;
                let (b, pb) = self.port_number(b, qual)?;
                (a, b, if pa == pb { pa } else { None })
            }
            Id::Name(s) => {
                let (p, real) = self.port_number(s, qual)?;
                (p, p, real)
            }
            _ => return Err(err("illegal port")),
        };
        if lo > 65535 || hi > 65535 {
            return Err(err(format!("port number {} greater than maximum 65535", lo.max(hi))));
        }
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let r = Some((lo, hi)).filter(|_| range);
        let b = self.port(r, lo, real, dir, false)?;
        let b6 = self.port(r, lo, real, dir, true)?;
        Ok(or(b6, b))
    }

    fn port_number(&self, s: &str, qual: Option<u32>) -> R<(u32, Option<u32>)> {
        if let Some(n) = parse_num(s) {
            return Ok((n, qual));
        }
        let Some(svc) = self.resolver.service(s) else {
            return Err(err(format!("unknown port '{s}'")));
        };
        let (port, real) = match (svc.tcp, svc.udp, svc.sctp) {
            (Some(t), Some(u), _) if t == u => (t, None),
            (Some(t), _, _) => (t, Some(ipproto::TCP)),
            (None, Some(u), _) => (u, Some(ipproto::UDP)),
            (None, None, Some(s)) => (s, Some(ipproto::SCTP)),
            (None, None, None) => return Err(err(format!("unknown port '{s}'"))),
        };
        let name = |p| match p {
            ipproto::TCP => "tcp",
            ipproto::UDP => "udp",
            _ => "sctp",
        };
        match (qual, real) {
            (Some(q), Some(r)) if q != r => Err(err(format!("port '{s}' is {}", name(r)))),
            (Some(q), _) => Ok((u32::from(port), Some(q))),
            (None, r) => Ok((u32::from(port), r)),
        }
    }

    /// The transport header of IPv4 (variable offset) or IPv6 (fixed).
    fn tran(&self, v6: bool) -> R<(Base, u32)> {
        let nl = self.link.nl;
        if v6 {
            return Ok((Base::Fixed, nl + 40));
        }
        if !self.indirect {
            return Err(err(format!(
                "CSPF cannot reach a field after the IPv4 header: the header's length varies and CSPF reads only fixed offsets {NEEDS_INDIRECT}"
            )));
        }
        Ok((Base::AfterIpv4 { nl }, 0))
    }

    fn port(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: Option<u32>,
        dir: Dir,
        v6: bool,
    ) -> R<Tree> {
        let b0 = self.linktype(if v6 { ethertype::IPV6 } else { ethertype::IP })?;
        let b1 = match proto {
            Some(p) => self.portop(range, port, p, dir, v6)?,
            None => {
                let tmp = self.portop(range, port, ipproto::TCP, dir, v6)?;
                let b1 = self.portop(range, port, ipproto::UDP, dir, v6)?;
                let b1 = or(tmp, b1);
                let tmp = self.portop(range, port, ipproto::SCTP, dir, v6)?;
                or(tmp, b1)
            }
        };
        Ok(and(b0, b1))
    }

    fn portop(
        &mut self,
        range: Option<(u32, u32)>,
        port: u32,
        proto: u32,
        dir: Dir,
        v6: bool,
    ) -> R<Tree> {
        let b0 = if v6 {
            self.net_eq(6, 1, proto)
        } else {
            and(self.net_eq(9, 1, proto), self.ipfrag())
        };
        let (base, off) = self.tran(v6)?;
        let atom = |o: u32| match range {
            Some((lo, hi)) => and(
                leaf(base, off + o, 2, Cmp::Ge, lo, u32::MAX),
                not(leaf(base, off + o, 2, Cmp::Gt, hi, u32::MAX)),
            ),
            None => leaf(base, off + o, 2, Cmp::Eq, port, u32::MAX),
        };
        let b1 = match dir {
            Dir::Src => atom(0),
            Dir::Dst => atom(2),
            _ => {
                let (s, d) = (atom(0), atom(2));
                if dir == Dir::SrcAndDst { and(s, d) } else { or(s, d) }
            }
        };
        Ok(and(b0, b1))
    }

    // ---- relations ----------------------------------------------------------------------

    /// `a op b` where one side is a packet field (optionally `& constant`) and the other a
    /// constant, or both constants. CSPF has no arithmetic beyond `&`, `|`, `^` on 16-bit words.
    fn relation(&mut self, op: RelOp, lhs: &Arith, rhs: &Arith) -> R<Tree> {
        let l = self.operand(lhs)?;
        let r = self.operand(rhs)?;
        let (field, guard, mask, k, op) = match (l, r) {
            (Operand::Const(a), Operand::Const(b)) => {
                let v = match op {
                    RelOp::Gt => a > b,
                    RelOp::Ge => a >= b,
                    RelOp::Eq => a == b,
                    RelOp::Le => a <= b,
                    RelOp::Lt => a < b,
                    RelOp::Ne => a != b,
                };
                return Ok(Tree::Const(v));
            }
            (Operand::Field { field, guard, mask }, Operand::Const(k)) => {
                (field, guard, mask, k, op)
            }
            (Operand::Const(k), Operand::Field { field, guard, mask }) => {
                let flipped = match op {
                    RelOp::Gt => RelOp::Lt,
                    RelOp::Ge => RelOp::Le,
                    RelOp::Lt => RelOp::Gt,
                    RelOp::Le => RelOp::Ge,
                    o => o,
                };
                (field, guard, mask, k, flipped)
            }
            (Operand::Field { .. }, Operand::Field { .. }) => {
                return Err(err(
                    "CSPF cannot compare two packet fields wider than or split across its 16-bit words",
                ));
            }
        };
        let t = |c| Tree::Leaf(Leaf { field, mask, cmp: c, value: k });
        let p = match op {
            RelOp::Eq => t(Cmp::Eq),
            RelOp::Ne => not(t(Cmp::Eq)),
            RelOp::Gt => t(Cmp::Gt),
            RelOp::Ge => t(Cmp::Ge),
            RelOp::Lt => not(t(Cmp::Ge)),
            RelOp::Le => not(t(Cmp::Gt)),
        };
        Ok(match guard {
            Some(g) => and(g, p),
            None => p,
        })
    }

    fn operand(&mut self, a: &Arith) -> R<Operand> {
        let no_arith = || {
            err("CSPF cannot compute this: it has no arithmetic on packet data (a relation must be a field, optionally `& constant`, against a constant)")
                .at_opt(Some(a.span))
        };
        match &a.kind {
            ArithKind::Num(n) => Ok(Operand::Const(*n)),
            ArithKind::Len => Err(err(
                "CSPF cannot test the packet length: its only operands are packet words and constants",
            )
            .at_opt(Some(a.span))),
            ArithKind::Load { proto, index, size } => {
                let ArithKind::Num(k) = index.kind else {
                    return Err(err(
                        "CSPF cannot index the packet with a computed offset: it reads only fixed offsets",
                    )
                    .at_opt(Some(index.span)));
                };
                let (field, guard) = self.index_load(*proto, k, u32::from(*size)).map_err(|e| e.at(a.span))?;
                Ok(Operand::Field { field, guard, mask: u32::MAX })
            }
            ArithKind::Bin { op: ArithOp::And, lhs, rhs } => {
                match (self.operand(lhs)?, self.operand(rhs)?) {
                    (Operand::Const(x), Operand::Const(y)) => Ok(Operand::Const(x & y)),
                    (Operand::Field { field, guard, mask }, Operand::Const(m)) => {
                        Ok(Operand::Field { field, guard, mask: mask & m })
                    }
                    // gencode keeps only the left operand's protocol check.
                    (Operand::Const(m), Operand::Field { field, mask, .. }) => {
                        Ok(Operand::Field { field, guard: None, mask: mask & m })
                    }
                    _ => Err(no_arith()),
                }
            }
            ArithKind::Bin { op, lhs, rhs } => {
                match (self.operand(lhs)?, self.operand(rhs)?) {
                    (Operand::Const(x), Operand::Const(y)) => {
                        let v = match op {
                            ArithOp::Add => x.wrapping_add(y),
                            ArithOp::Sub => x.wrapping_sub(y),
                            ArithOp::Mul => x.wrapping_mul(y),
                            ArithOp::Div if y != 0 => x / y,
                            ArithOp::Mod if y != 0 => x % y,
                            ArithOp::Div => return Err(err("division by zero").at_opt(Some(a.span))),
                            ArithOp::Mod => return Err(err("modulus by zero").at_opt(Some(a.span))),
                            ArithOp::Or => x | y,
                            ArithOp::Xor => x ^ y,
                            ArithOp::Shl if y <= 31 => x << y,
                            ArithOp::Shr if y <= 31 => x >> y,
                            ArithOp::Shl | ArithOp::Shr => {
                                return Err(err("shift by more than 31 bits").at_opt(Some(a.span)));
                            }
                            ArithOp::And => x & y,
                        };
                        Ok(Operand::Const(v))
                    }
                    _ => Err(no_arith()),
                }
            }
            ArithKind::Neg(x) => match self.operand(x)? {
                Operand::Const(v) => Ok(Operand::Const(v.wrapping_neg())),
                _ => Err(no_arith()),
            },
        }
    }

    /// `proto[k:size]`: the field and the guard gencode puts before it.
    fn index_load(&mut self, proto: Proto, k: u32, size: u32) -> R<(Field, Option<Tree>)> {
        let nl = self.link.nl;
        let fixed = |off: u32| Field { base: Base::Fixed, off, size };
        match proto {
            p if p.is_link() => Ok((fixed(k), None)),
            Proto::Ip | Proto::Arp | Proto::Rarp | Proto::Ip6 => {
                let guard = self.abbrev(proto)?;
                Ok((fixed(nl.saturating_add(k)), Some(guard)))
            }
            Proto::Sctp
            | Proto::Tcp
            | Proto::Udp
            | Proto::Icmp
            | Proto::Igmp
            | Proto::Igrp
            | Proto::Pim
            | Proto::Vrrp
            | Proto::Carp => {
                let p = self.abbrev(proto)?;
                let g = and(p, self.ipfrag());
                let ip = self.abbrev(Proto::Ip)?;
                let g = and(ip, g);
                let (base, off) = self.tran(false)?;
                Ok((Field { base, off: off.saturating_add(k), size }, Some(g)))
            }
            Proto::Icmp6 => {
                let g = self.abbrev(Proto::Ip6)?;
                let g = and(g, self.net_eq(6, 1, ipproto::ICMPV6));
                Ok((fixed((nl + 40).saturating_add(k)), Some(g)))
            }
            p => Err(cant(format!("`{}[…]`", p.as_str()))),
        }
    }
}

enum Operand {
    Const(u32),
    Field { field: Field, guard: Option<Tree>, mask: u32 },
}
