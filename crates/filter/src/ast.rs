//! The syntax tree. Every node carries the span of the text it came from.
//!
//! Shape, chosen for the code generator:
//! * `and`/`or` have equal precedence and associate left, so a run of them is kept flat as
//!   [`ExprKind::Chain`] (`first`, then `(op, operand)` pairs folded left). A 10,000-term
//!   `or` list is one vector, not a 10,000-deep tree, and nothing recurses over it.
//! * Qualifier inheritance is resolved by the parser: `host a or b` yields two
//!   [`Primitive::Id`] nodes that both say `host`; the inherited qualifiers keep the spans of
//!   the tokens they were written at.
//! * Names stay names (`Id::Name`): resolving them needs a [`crate::Resolver`], which the
//!   parser only uses to check them ([`crate::parse_with`]); codegen resolves them again with
//!   the same resolver. Numbers, addresses and table names (802.11, LLC, pflog) are decoded.

use crate::lexer::Kw;
use sift_diag::Span;
use std::net::Ipv6Addr;

/// A boolean expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// The text it covers.
    pub span: Span,
}

/// The kinds of boolean expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// `first op1 e1 op2 e2 …`, evaluated left to right: `((first op1 e1) op2 e2) …`.
    Chain {
        /// The first operand.
        first: Box<Expr>,
        /// The following operators (with their spans) and operands.
        rest: Vec<(BoolOp, Span, Expr)>,
    },
    /// `not e` / `! e`.
    Not(Box<Expr>),
    /// A primitive.
    Prim(Primitive),
    /// `lhs op rhs`, unsigned 32-bit.
    Rel {
        /// The comparison.
        op: RelOp,
        /// Left side.
        lhs: Arith,
        /// Right side.
        rhs: Arith,
    },
}

/// `and` or `or`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    /// `and`, `&&`.
    And,
    /// `or`, `||`.
    Or,
}

/// A comparison (`<=`, `<`, `!=` are the negations of `>`, `>=`, `=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelOp {
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `=`, `==`.
    Eq,
    /// `<=`.
    Le,
    /// `<`.
    Lt,
    /// `!=`.
    Ne,
}

impl RelOp {
    /// The operator's text.
    pub fn as_str(self) -> &'static str {
        match self {
            RelOp::Gt => ">",
            RelOp::Ge => ">=",
            RelOp::Eq => "=",
            RelOp::Le => "<=",
            RelOp::Lt => "<",
            RelOp::Ne => "!=",
        }
    }
}

/// An arithmetic expression (32-bit unsigned, as the BPF A register).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arith {
    /// What it is.
    pub kind: ArithKind,
    /// The text it covers.
    pub span: Span,
}

/// The kinds of arithmetic expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArithKind {
    /// A literal (named constants such as `tcp-syn` are already numbers).
    Num(u32),
    /// `len` / `length`: the wire length.
    Len,
    /// `proto[index]` or `proto[index:size]`.
    Load {
        /// The protocol whose header the index is relative to.
        proto: Proto,
        /// The byte offset.
        index: Box<Arith>,
        /// 1, 2 or 4.
        size: u8,
    },
    /// `-a`.
    Neg(Box<Arith>),
    /// `lhs op rhs`.
    Bin {
        /// The operator.
        op: ArithOp,
        /// Left operand.
        lhs: Box<Arith>,
        /// Right operand.
        rhs: Box<Arith>,
    },
}

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Mod,
    /// `&`.
    And,
    /// `|`.
    Or,
    /// `^`.
    Xor,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
}

impl ArithOp {
    /// The operator's text.
    pub fn as_str(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "%",
            ArithOp::And => "&",
            ArithOp::Or => "|",
            ArithOp::Xor => "^",
            ArithOp::Shl => "<<",
            ArithOp::Shr => ">>",
        }
    }
}

macro_rules! protos {
    ($($v:ident),* $(,)?) => {
        /// A protocol qualifier (libpcap's `pname`). `link ether ppp slip fddi tr wlan` are one
        /// qualifier in libpcap (`Q_LINK`); the spelling is kept for printing, and
        /// [`Proto::is_link`] tells them apart from the rest.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Proto { $($v),* }
        impl Proto {
            /// The protocol for a keyword, if the keyword is a protocol.
            pub fn from_kw(k: Kw) -> Option<Proto> {
                match k { $(Kw::$v => Some(Proto::$v),)* _ => None }
            }
            /// The keyword spelling this protocol.
            pub fn kw(self) -> Kw {
                match self { $(Proto::$v => Kw::$v),* }
            }
        }
    };
}

protos!(
    Link, Ether, Ppp, Slip, Fddi, Tr, Wlan, Ip, Arp, Rarp, Sctp, Tcp, Udp, Icmp, Igmp, Igrp, Pim,
    Vrrp, Carp, Radio, Ip6, Icmp6, Ah, Esp, Atalk, Aarp, Decnet, Lat, Sca, Moprc, Mopdl, Iso, Esis,
    Isis, L1, L2, Iih, Lsp, Snp, Csnp, Psnp, Clnp, Stp, Ipx, Netbeui,
);

impl Proto {
    /// The keyword text (`ether`, `ip6`…).
    pub fn as_str(self) -> &'static str {
        self.kw().as_str()
    }

    /// Whether a bare name or address may carry this protocol qualifier (`ip host x`,
    /// `tcp port y`, `ether host z`): the link layer, the network protocols and the IP
    /// protocols libpcap accepts there. (`iso`/`isis` with a `proto` type are a separate case.)
    pub fn qualifies_id(self) -> bool {
        self.is_link()
            || matches!(
                self,
                Proto::Ip
                    | Proto::Ip6
                    | Proto::Arp
                    | Proto::Rarp
                    | Proto::Tcp
                    | Proto::Udp
                    | Proto::Sctp
                    | Proto::Icmp
                    | Proto::Icmp6
                    | Proto::Igmp
                    | Proto::Igrp
                    | Proto::Pim
                    | Proto::Vrrp
                    | Proto::Carp
                    | Proto::Ah
                    | Proto::Esp
            )
    }

    /// Whether this is one of the link-layer spellings (`link ether ppp slip fddi tr wlan`).
    pub fn is_link(self) -> bool {
        matches!(
            self,
            Proto::Link
                | Proto::Ether
                | Proto::Ppp
                | Proto::Slip
                | Proto::Fddi
                | Proto::Tr
                | Proto::Wlan
        )
    }

    /// Whether `proto[…]` is allowed.
    pub fn has_accessor(self) -> bool {
        self.is_link()
            || matches!(
                self,
                Proto::Arp
                    | Proto::Atalk
                    | Proto::Carp
                    | Proto::Decnet
                    | Proto::Icmp
                    | Proto::Icmp6
                    | Proto::Igmp
                    | Proto::Igrp
                    | Proto::Ip
                    | Proto::Ip6
                    | Proto::Lat
                    | Proto::Mopdl
                    | Proto::Moprc
                    | Proto::Pim
                    | Proto::Radio
                    | Proto::Rarp
                    | Proto::Sca
                    | Proto::Sctp
                    | Proto::Tcp
                    | Proto::Udp
                    | Proto::Vrrp
            )
    }
}

/// A direction qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// `src`.
    Src,
    /// `dst`.
    Dst,
    /// `src or dst` / `dst or src`.
    SrcOrDst,
    /// `src and dst` / `dst and src`.
    SrcAndDst,
    /// `ra` (802.11 receiver address).
    Ra,
    /// `ta` (802.11 transmitter address).
    Ta,
    /// `addr1`.
    Addr1,
    /// `addr2`.
    Addr2,
    /// `addr3`.
    Addr3,
    /// `addr4`.
    Addr4,
}

impl Dir {
    /// The qualifier text.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Src => "src",
            Dir::Dst => "dst",
            Dir::SrcOrDst => "src or dst",
            Dir::SrcAndDst => "src and dst",
            Dir::Ra => "ra",
            Dir::Ta => "ta",
            Dir::Addr1 => "addr1",
            Dir::Addr2 => "addr2",
            Dir::Addr3 => "addr3",
            Dir::Addr4 => "addr4",
        }
    }
}

/// An address-type qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QualType {
    /// `host`.
    Host,
    /// `net`.
    Net,
    /// `port`.
    Port,
    /// `portrange`.
    Portrange,
    /// `proto`.
    Proto,
    /// `protochain`.
    Protochain,
    /// `gateway`.
    Gateway,
}

impl QualType {
    /// The qualifier text.
    pub fn as_str(self) -> &'static str {
        match self {
            QualType::Host => "host",
            QualType::Net => "net",
            QualType::Port => "port",
            QualType::Portrange => "portrange",
            QualType::Proto => "proto",
            QualType::Protochain => "protochain",
            QualType::Gateway => "gateway",
        }
    }
}

/// The qualifiers of a primitive, each with the span where it was written (for inherited
/// qualifiers, the span of the original).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quals {
    /// Protocol; `None` means libpcap's default ("any protocol consistent with the type").
    pub proto: Option<(Proto, Span)>,
    /// Direction; `None` means `src or dst`.
    pub dir: Option<(Dir, Span)>,
    /// Type; `None` means `host`.
    pub ty: Option<(QualType, Span)>,
}

/// The operand of a qualified primitive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id {
    /// A number: a port, protocol, or a one-part address (`host 10`).
    Num(u32),
    /// 2–4 dotted numbers, as written (`10.1`, `10.1.2.3`); parts already checked ≤ 255
    /// except for DECnet (`area.node`).
    V4(String),
    /// `a.b.c.d/len`.
    V4Prefix {
        /// The address part, as written.
        addr: String,
        /// The prefix length (≤ 32).
        len: u32,
    },
    /// `a.b.c.d mask m.m.m.m`.
    V4Mask {
        /// The address part, as written.
        addr: String,
        /// The mask, as written.
        mask: String,
    },
    /// An IPv6 address.
    V6(Ipv6Addr),
    /// `addr/len`.
    V6Prefix(Ipv6Addr, u32),
    /// A MAC-48 address.
    Mac([u8; 6]),
    /// `$xx` (ARCnet, MS/TP).
    Arc(u8),
    /// A name (host, network, service, protocol, port range `a-b`), as written.
    Name(String),
}

/// A comparison of an ATM or MTP3 field: `= v` for a list of values, or a relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldCmp {
    /// Equal to any of these (`vpi 1`, `vpi (1 or 2)`).
    Any(Vec<u32>),
    /// `relop n`.
    Rel(RelOp, u32),
}

/// A `byte` primitive's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOp {
    /// `&`.
    And,
    /// `|`.
    Or,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `=`.
    Eq,
}

/// A primitive (libpcap's `rterm` other than relations and parentheses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Primitive {
    /// `[proto] [dir] [type] id`.
    Id {
        /// Its qualifiers (possibly inherited).
        quals: Quals,
        /// The operand.
        id: Id,
        /// The operand's span.
        id_span: Span,
    },
    /// A protocol abbreviation (`tcp`, `ip6`, `arp`, `ether`…).
    Proto(Proto),
    /// `[proto] broadcast`.
    Broadcast(Option<Proto>),
    /// `[proto] multicast`.
    Multicast(Option<Proto>),
    /// `less n`.
    Less(u32),
    /// `greater n`.
    Greater(u32),
    /// `byte idx op value`.
    Byte {
        /// Byte offset.
        index: u32,
        /// Operator.
        op: ByteOp,
        /// Operand (≤ 255).
        value: u32,
    },
    /// `inbound`.
    Inbound,
    /// `outbound`.
    Outbound,
    /// `ifindex n`.
    Ifindex(u32),
    /// `vlan [id]`.
    Vlan(Option<u32>),
    /// `mpls [label]`.
    Mpls(Option<u32>),
    /// `pppoed`.
    Pppoed,
    /// `pppoes [session]`.
    Pppoes(Option<u32>),
    /// `geneve [vni]`.
    Geneve(Option<u32>),
    /// `vxlan [vni]`.
    Vxlan(Option<u32>),
    /// `llc [kind]`; the kind is the lowercase name (`i`, `s`, `u`, `rr`, `ui`…).
    Llc(Option<String>),
    /// pflog `ifname NAME` / `on NAME`.
    PfIfname(String),
    /// pflog `ruleset NAME`.
    PfRuleset(String),
    /// pflog `rulenum N`.
    PfRulenum(u32),
    /// pflog `subrulenum N`.
    PfSubrulenum(u32),
    /// pflog `reason N|name` (decoded).
    PfReason(u32),
    /// pflog `action name` (decoded).
    PfAction(u32),
    /// `[proto] type T [subtype S]` (802.11; values are the frame-control bits).
    WlanType {
        /// The protocol qualifier, if written.
        proto: Option<Proto>,
        /// Type bits (`0x00`, `0x04`, `0x08`).
        ty: u32,
        /// Subtype bits (already shifted, `0x00..=0xf0`).
        subtype: Option<u32>,
    },
    /// `[proto] subtype S` (type and subtype bits combined).
    WlanSubtype {
        /// The protocol qualifier, if written.
        proto: Option<Proto>,
        /// Type | subtype bits.
        type_subtype: u32,
    },
    /// `[proto] dir D` (0..=3).
    WlanDir {
        /// The protocol qualifier, if written.
        proto: Option<Proto>,
        /// The direction bits.
        dir: u32,
    },
    /// An ATM type keyword (`lane`, `oam`, `metac`…; SunATM only).
    Atm(Kw),
    /// `vpi`/`vci` with a value, list or relation.
    AtmField {
        /// `vpi` or `vci`.
        field: Kw,
        /// The comparison.
        cmp: FieldCmp,
    },
    /// An MTP2 type keyword (`fisu`, `lssu`, `msu` and `h` forms).
    Mtp2(Kw),
    /// An MTP3 field (`sio opc dpc sls` and `h` forms) with a value, list or relation.
    Mtp3Field {
        /// The field keyword.
        field: Kw,
        /// The comparison.
        cmp: FieldCmp,
    },
}
