//! Compile errors: data first (a kind, a span), text second.
//!
//! **Why it exists.** Every stage of the compiler (the parser, the code generator, the
//! optimizer, emission, validation, and targets other than classic BPF) can refuse a filter.
//! Callers need to tell the reasons apart (is this something sift cannot do *yet*? does the
//! optimizer say no packet can match? does CSPF need its extension?) without reading messages,
//! and users need a message that says what is wrong, where, and what was expected. So an error
//! is a [`CompileErrorKind`] carrying the facts, and an optional [`Span`]; turning it into
//! text is a separate step:
//!
//! * [`CompileError`]'s `Display` and [`CompileError::render`] give **sift's wording**: code in
//!   backticks, numbers with their range ("port 99999 is out of range (0–65535)"), the source
//!   line with `^^^` under the span (via `sift-diag`), and a help line where one helps.
//! * [`CompileError::libpcap_message`] gives **libpcap's exact wording** (what `pcap_compile`
//!   prints), for the tests that compare sift with libpcap's corpus and nothing else.

use std::fmt;

use sift_diag::{Diagnostic, Span};
use sift_filter::ast::Proto;
use sift_filter::{ParseError, ParseErrorKind};
use sift_wire::LinkType;

/// The text every "sift cannot do this yet" message contains (it is in [`CompileError`]'s
/// `Display` for [`CompileErrorKind::Unsupported`]; classify errors with
/// [`CompileError::is_unsupported`], not with this).
pub const UNSUPPORTED: &str = "not supported by sift yet";

/// A compile error: what went wrong, and where in the filter text when that is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// What went wrong.
    pub kind: CompileErrorKind,
    /// The offending text, when known.
    pub span: Option<Span>,
}

/// What went wrong. Named noun-first, as [`ParseErrorKind`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompileErrorKind {
    /// The text is not a filter expression (lexical, grammar and parse-time checks).
    Parse {
        /// What the parser found wrong.
        kind: ParseErrorKind,
        /// An earlier token involved (a conflicting qualifier) and a note about it.
        aux: Option<(Span, String)>,
    },
    /// The optimizer proved that no packet can be accepted (libpcap's "expression rejects all
    /// packets"; the same filter compiles without optimizing).
    RejectsAll,
    /// Something libpcap compiles that sift does not yet.
    Unsupported {
        /// What, as code in backticks or a phrase ("ATM primitives").
        what: String,
    },
    /// A limit of sift or of the target machine.
    ResourceLimit {
        /// Which limit.
        what: Resource,
        /// Its value.
        limit: u64,
    },
    /// A number above the largest value its field holds.
    OutOfRange {
        /// What the number is.
        what: Quantity,
        /// The value given.
        value: u64,
        /// The largest allowed.
        max: u64,
    },
    /// A primitive the current link layer cannot carry (after `pppoes` or a tunnel, the inner
    /// one).
    NotOnLinkType {
        /// The primitive.
        what: LinkFeature,
        /// The link layer.
        link: LinkType,
    },
    /// A qualifier that does not apply to what follows it.
    Qualifier(QualifierError),
    /// A name the resolver does not know.
    NameUnknown {
        /// What kind of name.
        what: NameKind,
        /// The name.
        name: String,
    },
    /// A service known only for another transport (`udp port <tcp-only name>`).
    PortWrongProto {
        /// The service name.
        name: String,
        /// The only transport it exists for.
        proto: &'static str,
    },
    /// An address or number that is not valid where it stands.
    AddressInvalid {
        /// What it should have been.
        what: AddressKind,
        /// The text, when there is one.
        text: String,
    },
    /// A primitive that cannot follow `mpls`.
    AfterMpls(MplsConflict),
    /// `ip broadcast` without a netmask.
    NetmaskUnknown,
    /// An arithmetic error found while generating code (libpcap checks the first statement
    /// of the right operand, so `len / ip[0]`-style divisors count when constant).
    Arithmetic(ArithError),
    /// Something a target machine other than classic BPF cannot express.
    TargetLimit {
        /// The target (`CSPF`).
        target: &'static str,
        /// The capability it lacks.
        need: Need,
        /// Why, in the target's words.
        because: &'static str,
        /// The option that would provide it, if one does (`the indirect-push extension:
        /// --cspf-indirect`).
        option: Option<&'static str>,
    },
    /// A link type a target other than classic BPF does not support.
    TargetLinkType {
        /// The target (`CSPF`).
        target: &'static str,
        /// The link type asked for.
        link: LinkType,
        /// The link types the target supports.
        supported: &'static [LinkType],
        /// What the supported ones have in common (`fixed-length link headers`).
        kind: &'static str,
    },
    /// The compiled program fails validation (with `Mode::Linux`, for example, a program that
    /// reads a scratch word before writing it, as libpcap's `geneve` code does).
    Invalid(sift_verify::ValidationError),
    /// A bug in sift: the graph could not be emitted.
    Internal(String),
}

/// A limit of [`CompileErrorKind::ResourceLimit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource {
    /// Parentheses, `not`, unary minus and arithmetic nested deeper than the parser allows.
    Nesting,
    /// More `protochain` walks than one filter may hold.
    ProtochainWalks,
    /// More scratch memory words than classic BPF has (16).
    ScratchWords,
    /// A classic BPF program longer than Linux accepts.
    Instructions {
        /// The program's length.
        len: u64,
    },
    /// A target program longer than the target holds.
    TargetWords {
        /// The target (`CSPF`).
        target: &'static str,
        /// The program's length, at least.
        words: u64,
    },
    /// A target program deeper than the target's stack.
    TargetStack {
        /// The target (`CSPF`).
        target: &'static str,
        /// The depth the program needs.
        depth: u64,
    },
    /// An expression too large for a target compiler's analysis.
    TargetComplexity {
        /// The target (`CSPF`).
        target: &'static str,
    },
}

/// What an out-of-range number is ([`CompileErrorKind::OutOfRange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Quantity {
    /// A TCP/UDP/SCTP port.
    Port,
    /// An EtherType after `link proto`.
    EtherType,
    /// A PPP protocol after `link proto` on PPP.
    PppProtocol,
    /// A Cisco HDLC protocol after `link proto`.
    HdlcProtocol,
    /// An 802.2 DSAP after `link proto` on an 802.2 link layer (256–1500 are neither).
    LlcDsap,
    /// An MPLS label.
    MplsLabel,
    /// A VXLAN or Geneve network identifier.
    Vni {
        /// Geneve rather than VXLAN.
        geneve: bool,
    },
    /// A DECnet area number.
    DecnetArea,
    /// A DECnet node number.
    DecnetNode,
    /// The length of a pflog interface or ruleset name.
    NameLength {
        /// `interface` or `ruleset`.
        noun: &'static str,
    },
}

/// A primitive that needs something the link layer lacks ([`CompileErrorKind::NotOnLinkType`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkFeature {
    /// `llc`: an 802.2 LLC link layer.
    Llc,
    /// `type`/`subtype` (`"type/subtype"`) or `dir` (`"dir"`): an 802.11 header.
    Wlan(&'static str),
    /// `vlan`.
    Vlan,
    /// `mpls`.
    Mpls,
    /// A pflog field (`rnr`, `ifname`…): a pflog header.
    Pflog(&'static str),
    /// `broadcast`: a link layer with MAC addresses.
    Broadcast,
    /// `multicast`: a link layer with MAC addresses.
    Multicast,
    /// A MAC address.
    MacAddress,
    /// `ether host NAME`.
    MacHostName,
    /// `gateway`.
    Gateway,
    /// `radio[…]`: a radio header.
    Radio,
    /// `inbound` (true) or `outbound` (false) where the direction is not in the header and
    /// the capture is not live.
    Direction(bool),
    /// `ifindex` where the interface is not in the header and the capture is not live.
    Ifindex,
    /// `protochain` behind a variable-length link header.
    Protochain,
    /// A link-layer protocol test (`ip`, `arp`, `host`…) on a link type whose header sift
    /// and libpcap have no model of (libpcap's "link-layer type filtering not implemented").
    LinkProtocol,
    /// An ATM primitive (`vpi`, `lane`, `oam`…) off raw ATM (SunATM).
    Atm(&'static str),
    /// An SS7 primitive (`fisu`, `sio`, `opc`…) off an SS7 link type (MTP2, ERF).
    Ss7(&'static str),
    /// An ARCnet address (`$xx`) off ARCnet.
    ArcnetAddress,
}

/// A qualifier that does not apply ([`CompileErrorKind::Qualifier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QualifierError {
    /// A protocol before `host`/`net` that has no addresses of that kind (`None`: a
    /// link-layer protocol).
    OnHost {
        /// The protocol, `None` for a link-layer one.
        proto: Option<Proto>,
        /// An IPv6 address.
        v6: bool,
        /// `net` rather than `host`.
        net: bool,
    },
    /// A transport protocol before `proto` (`tcp proto 1`).
    OnProto(Proto),
    /// A protocol other than `tcp`, `udp`, `sctp` before `port`/`portrange`.
    OnPort {
        /// `portrange`.
        range: bool,
    },
    /// An 802.11 direction before `port`/`portrange`.
    DirOnPort {
        /// The direction (`addr1`…).
        dir: &'static str,
        /// `port` or `portrange`.
        target: &'static str,
    },
    /// An 802.11 direction elsewhere than before an 802.11 MAC address.
    WlanDir {
        /// The direction (`addr1`…).
        dir: &'static str,
    },
    /// `src`/`dst` before `gateway`.
    GatewayDirection,
    /// A protocol other than `ip`, `arp`, `rarp` before `gateway`.
    GatewayProto,
    /// A protocol other than `ip`, `ip6` before `protochain`.
    Protochain,
    /// A mask or prefix length after `host`.
    MaskOnHost,
    /// A MAC address after a protocol that has none.
    MacNonEther,
    /// An ARCnet address (`$xx`) after another protocol than the link layer, or another type
    /// than `host`.
    ArcnetNonLink,
    /// `arp proto`/`rarp proto` (`Proto::Arp`, `Proto::Rarp`).
    NoEncapsulation(Proto),
    /// A link-layer protocol standing alone.
    LinkAlone,
    /// `broadcast` after a protocol other than the link layer or `ip`.
    Broadcast,
    /// `multicast` after a protocol other than the link layer, `ip` or `ip6`.
    Multicast,
    /// A number or IPv4 address after a link-layer `host`.
    LinkNumber,
}

/// What kind of name is unknown ([`CompileErrorKind::NameUnknown`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameKind {
    /// A host name.
    Host,
    /// A host name in the ethers file.
    EtherHost,
    /// A `gateway` name missing from the ethers file.
    GatewayEther,
    /// A network name.
    Network,
    /// A service name.
    Port,
    /// A `portrange` that is not `a-b`.
    PortRange,
    /// A protocol name after `link proto`.
    EtherProto,
    /// A protocol name after `iso proto`.
    OsiProto,
    /// A protocol name after `ip proto`.
    IpProto,
    /// A protocol name after another protocol's `proto`.
    Protocol,
    /// An `llc` subtype name.
    LlcType,
}

/// What an invalid address should have been ([`CompileErrorKind::AddressInvalid`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressKind {
    /// An IPv4 address.
    Ipv4,
    /// A DECnet `area.node` address.
    Decnet,
    /// An IPv6 network without host bits.
    Ipv6Network,
    /// A port (not an address).
    Port,
    /// A protocol (not an address).
    Protocol,
    /// A `gateway` host name.
    Gateway,
}

/// What cannot follow `mpls` ([`CompileErrorKind::AfterMpls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MplsConflict {
    /// `vlan`.
    Vlan,
    /// `gateway`.
    Gateway,
    /// A protocol other than IPv4 and IPv6 (its link-layer number).
    Protocol(u32),
}

/// An arithmetic error ([`CompileErrorKind::Arithmetic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ArithError {
    /// Division by a constant zero.
    DivisionByZero,
    /// Modulus by a constant zero.
    ModulusByZero,
    /// A shift by a constant above 31.
    ShiftTooLarge,
}

/// A capability of classic BPF that another target may lack ([`CompileErrorKind::TargetLimit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Need {
    /// Testing the packet length.
    PacketLength,
    /// Arithmetic on packet data.
    Arithmetic,
    /// Indexing the packet with a computed offset.
    ComputedIndex,
    /// Reading a field after a variable-length IPv4 header.
    AfterIpv4,
    /// Reading a field at an offset computed at run time (variable link headers, tunnels).
    RuntimeOffset,
    /// A loop (`protochain`).
    Loop,
    /// Following a `geneve`/`vxlan` tunnel.
    Tunnel,
    /// Comparing two packet fields.
    FieldComparison,
    /// Reading a field further into the packet than the target addresses.
    FarOffset,
    /// libpcap's `byte N & V` / `byte N | V`, which test an unloaded accumulator.
    Accumulator,
    /// Reading the socket's metadata (Linux ancillary data).
    Metadata,
}

impl Need {
    /// What the target cannot do, as the object of "cannot".
    pub fn describe(self) -> &'static str {
        match self {
            Need::PacketLength => "test the packet length",
            Need::Arithmetic => "compute this",
            Need::ComputedIndex => "index the packet with a computed offset",
            Need::AfterIpv4 => "reach a field after the IPv4 header",
            Need::RuntimeOffset => "reach a field at an offset computed at run time",
            Need::Loop => "follow `protochain`",
            Need::Tunnel => "follow `geneve`/`vxlan`",
            Need::FieldComparison => "compare two packet fields",
            Need::FarOffset => "reach that far",
            Need::Accumulator => "test `byte N & V` or `byte N | V`",
            Need::Metadata => "read the socket's metadata",
        }
    }
}

impl From<ParseError> for CompileError {
    fn from(e: ParseError) -> CompileError {
        let kind = match e.kind {
            ParseErrorKind::NestingTooDeep => CompileErrorKind::ResourceLimit {
                what: Resource::Nesting,
                limit: sift_filter::MAX_DEPTH as u64,
            },
            kind => CompileErrorKind::Parse { kind, aux: e.aux },
        };
        CompileError { kind, span: Some(e.span) }
    }
}

impl From<crate::build::BuildError> for CompileError {
    fn from(e: crate::build::BuildError) -> CompileError {
        use crate::build::BuildError as B;
        let kind = match e {
            B::TooManyRegisters => CompileErrorKind::ResourceLimit {
                what: Resource::ScratchWords,
                limit: crate::ir::Slot::COUNT as u64,
            },
            B::DivisionByZero => CompileErrorKind::Arithmetic(ArithError::DivisionByZero),
            B::ModulusByZero => CompileErrorKind::Arithmetic(ArithError::ModulusByZero),
        };
        CompileError::new(kind, None)
    }
}

impl From<QualifierError> for CompileErrorKind {
    fn from(q: QualifierError) -> CompileErrorKind {
        CompileErrorKind::Qualifier(q)
    }
}

/// `DLT_NAME`, or `DLT n` for a link type without a name (libpcap's spelling in messages).
fn dlt_name(link: LinkType) -> String {
    match link.name() {
        Some(n) => format!("DLT_{n}"),
        None => format!("DLT {}", link.number()),
    }
}

/// The description libpcap prints for a link type (its name when it has none).
fn descr(link: LinkType) -> String {
    link.description().map_or_else(|| link.to_string(), str::to_owned)
}

const MAC_LINKS: &str = "ethernet/FDDI/token ring/802.11/ATM LANE/Fibre Channel";

impl CompileError {
    /// An error of `kind` at `span`.
    pub fn new(kind: impl Into<CompileErrorKind>, span: Option<Span>) -> CompileError {
        CompileError { kind: kind.into(), span }
    }

    /// "`what`: not supported by sift yet".
    pub fn unsupported(what: impl fmt::Display, span: Option<Span>) -> CompileError {
        CompileError::new(CompileErrorKind::Unsupported { what: what.to_string() }, span)
    }

    /// The same error, located at `span` unless it already has a location.
    pub fn at(mut self, span: Span) -> CompileError {
        self.span.get_or_insert(span);
        self
    }

    /// Whether libpcap would compile the filter and sift cannot (yet): an unsupported
    /// primitive, or more `protochain` walks than sift allows in one filter.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.kind,
            CompileErrorKind::Unsupported { .. }
                | CompileErrorKind::ResourceLimit { what: Resource::ProtochainWalks, .. }
        )
    }

    /// Whether the optimizer proved that no packet can match.
    pub fn is_rejects_all(&self) -> bool {
        matches!(self.kind, CompileErrorKind::RejectsAll)
    }

    /// Whether this is sift's own fault, not the expression's: the compiler emitted a program
    /// that its validator refuses, or an internal invariant broke.
    pub fn is_internal(&self) -> bool {
        matches!(self.kind, CompileErrorKind::Invalid(_) | CompileErrorKind::Internal(_))
    }

    /// libpcap's exact wording for this error (what `pcap_compile` prints), for the tests
    /// that compare with libpcap's corpus. Errors libpcap does not have (sift's limits,
    /// other targets) give sift's wording.
    pub fn libpcap_message(&self) -> String {
        use CompileErrorKind as K;
        match &self.kind {
            K::Parse { kind, aux } => {
                let e = ParseError { kind: kind.clone(), span: Span::default(), aux: aux.clone() };
                e.libpcap_message()
            }
            K::ResourceLimit { what: Resource::Nesting, .. } => {
                "can't parse filter expression: syntax error".into()
            }
            K::ResourceLimit { what: Resource::ScratchWords, .. } => {
                "too many registers needed to evaluate expression".into()
            }
            K::ResourceLimit { what: Resource::ProtochainWalks, limit } => {
                format!("more than {limit} `protochain` walks in one filter: {UNSUPPORTED}")
            }
            K::RejectsAll => "expression rejects all packets".into(),
            K::OutOfRange { what, value, max } => match what {
                Quantity::Port => format!("port number {value} greater than maximum {max}"),
                Quantity::EtherType => format!("EtherType {value} greater than maximum {max}"),
                Quantity::PppProtocol => format!("PPP protocol {value} greater than maximum {max}"),
                Quantity::HdlcProtocol => {
                    format!("HDLC protocol {value} greater than maximum {max}")
                }
                Quantity::LlcDsap => format!("LLC DSAP {value} greater than maximum {max}"),
                Quantity::MplsLabel => format!("MPLS label {value} greater than maximum {max}"),
                Quantity::Vni { geneve } => format!(
                    "{} VNI {value} greater than maximum {max}",
                    if *geneve { "GENEVE" } else { "VXLAN" }
                ),
                Quantity::DecnetArea => format!("DECnet area number > {max}"),
                Quantity::DecnetNode => format!("DECnet node number > {max}"),
                Quantity::NameLength { noun } => {
                    format!("{noun} names can only be {max} characters")
                }
            },
            K::NotOnLinkType { what, link } => {
                let (name, descr) = (dlt_name(*link), descr(*link));
                match what {
                    LinkFeature::Llc
                        if matches!(
                            *link,
                            LinkType::IP_OVER_FC
                                | LinkType::NETANALYZER
                                | LinkType::NETANALYZER_TRANSPARENT
                        ) =>
                    {
                        format!("'llc' not supported on {name}")
                    }
                    LinkFeature::Llc => format!("'llc' not supported for {descr}"),
                    LinkFeature::Wlan(w) => format!("'{w}' not supported on {name}"),
                    LinkFeature::Vlan if *link == LinkType::PPI => {
                        format!("'vlan' not supported on {name}")
                    }
                    LinkFeature::Vlan => format!("no VLAN support for {descr}"),
                    LinkFeature::Mpls => format!("no MPLS support for {descr}"),
                    LinkFeature::Pflog(w) => format!("'{w}' supported only on PFLOG linktype"),
                    LinkFeature::Broadcast => "not a broadcast link".into(),
                    LinkFeature::Multicast => "link-layer multicast filters supported only on ethernet/FDDI/token ring/ARCNET/802.11/ATM LANE/Fibre Channel".into(),
                    LinkFeature::MacAddress => {
                        format!("ethernet addresses supported only on {MAC_LINKS}")
                    }
                    LinkFeature::MacHostName => {
                        format!("only {MAC_LINKS} supports link-level host name")
                    }
                    LinkFeature::Gateway => format!("'gateway' supported only on {MAC_LINKS}"),
                    LinkFeature::Radio => "radio information not present in capture".into(),
                    LinkFeature::Direction(inbound) => format!(
                        "not a live capture, '{}' not supported on {name}",
                        if *inbound { "inbound" } else { "outbound" }
                    ),
                    LinkFeature::Ifindex => "not a live capture".into(),
                    LinkFeature::Protochain => {
                        "'protochain' not supported with variable length headers".into()
                    }
                    LinkFeature::LinkProtocol => {
                        format!("link-layer type filtering not implemented for {name}")
                    }
                    LinkFeature::Atm(w) => format!("'{w}' supported only on SUNATM"),
                    LinkFeature::Ss7(w) => format!("'{w}' supported only on SS7"),
                    LinkFeature::ArcnetAddress => {
                        format!("'link host $XX' not supported on {name}")
                    }
                }
            }
            K::Qualifier(q) => match q {
                QualifierError::OnHost { proto, v6, net } => {
                    let what = match (*v6, *net) {
                        (false, false) => "host",
                        (false, true) => "net",
                        (true, false) => "ip6 host",
                        (true, true) => "ip6 net",
                    };
                    match proto {
                        None => format!("link-layer modifier applied to {what}"),
                        Some(p) => format!("'{}' modifier applied to {what}", p.as_str()),
                    }
                }
                QualifierError::OnProto(p) => format!("'{}' modifier applied to proto", p.as_str()),
                QualifierError::OnPort { range } => {
                    format!("illegal qualifier of '{}'", if *range { "portrange" } else { "port" })
                }
                QualifierError::DirOnPort { dir, target } => {
                    format!("'{dir}' is not a valid qualifier for '{target}'")
                }
                QualifierError::WlanDir { dir } => {
                    format!("'{dir}' is valid for 802.11 syntax only")
                }
                QualifierError::GatewayDirection => "direction applied to 'gateway'".into(),
                QualifierError::GatewayProto => "illegal modifier of 'gateway'".into(),
                QualifierError::Protochain => "bad protocol applied for 'protochain'".into(),
                QualifierError::MaskOnHost => "Mask syntax for networks only".into(),
                QualifierError::MacNonEther => {
                    "ethernet address used in non-ether expression".into()
                }
                QualifierError::ArcnetNonLink => {
                    "'link' is the only valid proto qualifier for 'host $XX'".into()
                }
                QualifierError::NoEncapsulation(p) => {
                    format!("{} does not encapsulate another protocol", p.as_str())
                }
                QualifierError::LinkAlone => "link layer applied in wrong context".into(),
                QualifierError::Broadcast => {
                    "only link-layer/IP broadcast filters supported".into()
                }
                QualifierError::Multicast => "only IP multicast filters supported on ethernet/FDDI/token ring/ARCNET/802.11/ATM LANE/Fibre Channel".into(),
                QualifierError::LinkNumber => "illegal link layer address".into(),
            },
            K::NameUnknown { what, name } => match what {
                NameKind::Host => format!("unknown host '{name}'"),
                NameKind::EtherHost => format!("unknown ether host '{name}'"),
                NameKind::GatewayEther => format!("unknown ether host: {name}"),
                NameKind::Network => format!("unknown network '{name}'"),
                NameKind::Port => format!("unknown port '{name}'"),
                NameKind::PortRange => format!("unknown port in range '{name}'"),
                NameKind::EtherProto => format!("unknown ether proto '{name}'"),
                NameKind::OsiProto => format!("unknown osi proto '{name}'"),
                NameKind::IpProto => format!("unknown ip proto '{name}'"),
                NameKind::Protocol => format!("unknown protocol: {name}"),
                NameKind::LlcType => format!("unknown LLC type name '{name}'"),
            },
            K::PortWrongProto { name, proto } => format!("port '{name}' is {proto}"),
            K::AddressInvalid { what, text } => match what {
                AddressKind::Ipv4 => format!("invalid IPv4 address '{text}'"),
                AddressKind::Decnet => "invalid DECnet address".into(),
                AddressKind::Ipv6Network => "non-network bits set in IPv6 address".into(),
                AddressKind::Port => "illegal port".into(),
                AddressKind::Protocol => "illegal protocol".into(),
                AddressKind::Gateway => "illegal gateway address".into(),
            },
            K::AfterMpls(c) => match c {
                MplsConflict::Vlan => "no VLAN match after MPLS".into(),
                MplsConflict::Gateway => "'gateway' cannot be used within MPLS".into(),
                MplsConflict::Protocol(_) => "unsupported protocol over mpls".into(),
            },
            K::Arithmetic(a) => match a {
                ArithError::DivisionByZero => "division by zero".into(),
                ArithError::ModulusByZero => "modulus by zero".into(),
                ArithError::ShiftTooLarge => "shift by more than 31 bits".into(),
            },
            K::NetmaskUnknown => "netmask not known, so 'ip broadcast' not supported".into(),
            K::Internal(m) => format!("internal error: {m}"),
            _ => self.to_string(),
        }
    }

    /// The error as a diagnostic against the source (`None` when it has no location).
    pub fn diagnostic(&self) -> Option<Diagnostic> {
        let span = self.span?;
        if let CompileErrorKind::Parse { kind, aux } = &self.kind {
            return Some(ParseError { kind: kind.clone(), span, aux: aux.clone() }.diagnostic());
        }
        let mut d = Diagnostic::new(self.to_string(), span);
        if let Some(h) = self.help() {
            d = d.with_help(h);
        }
        Some(d)
    }

    /// Renders the error for people: `error: message`, then the source line with `^^^` under
    /// the span (`line:col` in the header for multi-line sources) and a help line where one
    /// helps. Ends with a newline.
    pub fn render(&self, source: &str) -> String {
        match self.diagnostic() {
            Some(d) => d.render(source),
            None => {
                let mut out = format!("error: {self}\n");
                if let Some(h) = self.help() {
                    out.push_str(&format!("  help: {h}\n"));
                }
                out
            }
        }
    }

    fn help(&self) -> Option<String> {
        use CompileErrorKind as K;
        Some(match &self.kind {
            K::ResourceLimit { what: Resource::Nesting, .. } => {
                "split the expression or remove redundant parentheses".into()
            }
            K::NameUnknown { what: NameKind::Host | NameKind::GatewayEther, .. } => {
                "names are looked up in the hosts and ethers files only; sift never asks DNS".into()
            }
            K::NameUnknown { what: NameKind::EtherHost, .. } => {
                "MAC addresses of names come from the ethers file".into()
            }
            _ => return None,
        })
    }
}

impl fmt::Display for CompileError {
    /// sift's wording (see the module documentation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CompileErrorKind as K;
        match &self.kind {
            K::Parse { kind, aux } => {
                let e = ParseError { kind: kind.clone(), span: Span::default(), aux: aux.clone() };
                f.write_str(&e.message())
            }
            K::RejectsAll => f.write_str("expression rejects all packets"),
            K::Unsupported { what } => write!(f, "{what}: {UNSUPPORTED}"),
            K::ResourceLimit { what, limit } => match what {
                Resource::Nesting => write!(f, "expression nested too deeply (limit {limit})"),
                Resource::ProtochainWalks => {
                    write!(f, "too many `protochain` walks in one filter (limit {limit})")
                }
                Resource::ScratchWords => {
                    write!(f, "expression needs more scratch memory words than BPF has ({limit})")
                }
                Resource::Instructions { len } => {
                    write!(f, "program too long: {len} instructions (limit {limit})")
                }
                Resource::TargetWords { target, words } => write!(
                    f,
                    "the {target} program would be {words} words or more; a filter holds at most {limit}"
                ),
                Resource::TargetStack { target, depth } => write!(
                    f,
                    "the {target} program needs {depth} stack words; the machine has {limit}"
                ),
                Resource::TargetComplexity { target } => {
                    write!(f, "expression too complex for the {target} compiler")
                }
            },
            K::OutOfRange { what, value, max } => {
                let what = match what {
                    Quantity::Port => "port",
                    Quantity::EtherType => "EtherType",
                    Quantity::PppProtocol => "PPP protocol",
                    Quantity::HdlcProtocol => "Cisco HDLC protocol",
                    Quantity::LlcDsap => "LLC DSAP",
                    Quantity::MplsLabel => "MPLS label",
                    Quantity::Vni { geneve: true } => "Geneve VNI",
                    Quantity::Vni { geneve: false } => "VXLAN VNI",
                    Quantity::DecnetArea => "DECnet area",
                    Quantity::DecnetNode => "DECnet node",
                    Quantity::NameLength { noun } => {
                        return write!(f, "{noun} names hold at most {max} characters");
                    }
                };
                write!(f, "{what} {value} is out of range (0–{max})")
            }
            K::NotOnLinkType { what, link } => {
                const NO_MAC: &str = "it has no MAC addresses";
                let (what, why) = match what {
                    LinkFeature::Llc => ("`llc`", Some("it has no 802.2 LLC header")),
                    LinkFeature::Wlan("dir") => ("`dir`", Some("it is not 802.11")),
                    LinkFeature::Wlan(_) => ("`type`/`subtype`", Some("it is not 802.11")),
                    LinkFeature::Vlan => ("`vlan`", None),
                    LinkFeature::Mpls => ("`mpls`", None),
                    LinkFeature::Pflog(w) => {
                        let d = link.description().map(|d| format!(" ({d})")).unwrap_or_default();
                        return write!(
                            f,
                            "`{w}` is not available on link type {link}{d}: it is not pflog"
                        );
                    }
                    LinkFeature::Broadcast => ("`broadcast`", Some(NO_MAC)),
                    LinkFeature::Multicast => ("`multicast`", Some(NO_MAC)),
                    LinkFeature::MacAddress => ("a MAC address", Some(NO_MAC)),
                    LinkFeature::MacHostName => ("a link-level host name", Some(NO_MAC)),
                    LinkFeature::Gateway => ("`gateway`", Some(NO_MAC)),
                    LinkFeature::Radio => ("`radio[…]`", Some("it has no radio header")),
                    LinkFeature::Direction(inbound) => (
                        if *inbound { "`inbound`" } else { "`outbound`" },
                        Some(
                            "the direction is not in its header, and only a live capture knows it",
                        ),
                    ),
                    LinkFeature::Ifindex => (
                        "`ifindex`",
                        Some(
                            "the interface is not in its header, and only a live capture knows it",
                        ),
                    ),
                    LinkFeature::Protochain => {
                        ("`protochain`", Some("the length of its link-layer header varies"))
                    }
                    LinkFeature::LinkProtocol => (
                        "a link-layer protocol test",
                        Some("its header says nothing libpcap or sift can read about the payload"),
                    ),
                    LinkFeature::Atm(w) | LinkFeature::Ss7(w) => {
                        let needs = if matches!(what, LinkFeature::Atm(_)) {
                            "it is not raw ATM (SUNATM)"
                        } else {
                            "it is not SS7 (MTP2, MTP2_WITH_PHDR, ERF)"
                        };
                        let d = link.description().map(|d| format!(" ({d})")).unwrap_or_default();
                        return write!(f, "`{w}` is not available on link type {link}{d}: {needs}");
                    }
                    LinkFeature::ArcnetAddress => {
                        ("an ARCnet address (`$xx`)", Some("it is not ARCnet"))
                    }
                };
                let d = link.description().map(|d| format!(" ({d})")).unwrap_or_default();
                write!(f, "{what} is not available on link type {link}{d}")?;
                match why {
                    Some(why) => write!(f, ": {why}"),
                    None => Ok(()),
                }
            }
            K::Qualifier(q) => match q {
                QualifierError::OnHost { proto, v6, net } => {
                    let what = if *net { "net" } else { "host" };
                    let addr = if *v6 { "an IPv6" } else { "an IPv4" };
                    match proto {
                        None => write!(
                            f,
                            "a link-layer protocol cannot qualify `{what}` with {addr} address"
                        ),
                        Some(p) => write!(
                            f,
                            "`{}` cannot qualify `{what}` with {addr} address",
                            p.as_str()
                        ),
                    }
                }
                QualifierError::OnProto(p) => {
                    write!(
                        f,
                        "`{}` cannot qualify `proto`: it carries no other protocol",
                        p.as_str()
                    )
                }
                QualifierError::OnPort { range } => write!(
                    f,
                    "`{}` applies to `tcp`, `udp` and `sctp` only",
                    if *range { "portrange" } else { "port" }
                ),
                QualifierError::DirOnPort { dir, target } => {
                    write!(f, "`{dir}` is not a valid qualifier for `{target}`")
                }
                QualifierError::WlanDir { dir } => {
                    write!(f, "`{dir}` applies only to 802.11 MAC addresses")
                }
                QualifierError::GatewayDirection => {
                    f.write_str("`gateway` takes no direction (`src`, `dst`)")
                }
                QualifierError::GatewayProto => {
                    f.write_str("`gateway` takes `ip`, `arp` or `rarp`, or no protocol")
                }
                QualifierError::Protochain => {
                    f.write_str("`protochain` follows `ip` or `ip6` only")
                }
                QualifierError::MaskOnHost => {
                    f.write_str("a mask or prefix length needs `net`, not `host`")
                }
                QualifierError::MacNonEther => {
                    f.write_str("a MAC address needs `ether` (or no protocol qualifier)")
                }
                QualifierError::ArcnetNonLink => {
                    f.write_str("an ARCnet address (`$xx`) needs `link host` (or `link`)")
                }
                QualifierError::NoEncapsulation(p) => {
                    write!(f, "`{}` does not encapsulate another protocol", p.as_str())
                }
                QualifierError::LinkAlone => {
                    f.write_str("a link-layer protocol cannot stand alone here")
                }
                QualifierError::Broadcast => {
                    f.write_str("`broadcast` follows a link-layer protocol or `ip` only")
                }
                QualifierError::Multicast => {
                    f.write_str("`multicast` follows a link-layer protocol, `ip` or `ip6` only")
                }
                QualifierError::LinkNumber => {
                    f.write_str("a link-layer address is a MAC address, not a number")
                }
            },
            K::NameUnknown { what, name } => {
                let what = match what {
                    NameKind::Host => "host",
                    NameKind::EtherHost | NameKind::GatewayEther => "Ethernet host",
                    NameKind::Network => "network",
                    NameKind::Port => "port",
                    NameKind::PortRange => {
                        return write!(f, "`{name}` is not a port range (`p1-p2`)");
                    }
                    NameKind::EtherProto => "link-layer protocol",
                    NameKind::OsiProto => "OSI protocol",
                    NameKind::IpProto => "IP protocol",
                    NameKind::Protocol => "protocol",
                    NameKind::LlcType => "LLC type",
                };
                write!(f, "unknown {what} `{name}`")
            }
            K::PortWrongProto { name, proto } => {
                write!(f, "port `{name}` exists for {proto} only")
            }
            K::AddressInvalid { what, text } => {
                let t = if text.is_empty() { String::new() } else { format!(" `{text}`") };
                match what {
                    AddressKind::Ipv4 => write!(f, "invalid IPv4 address{t}"),
                    AddressKind::Decnet => write!(f, "invalid DECnet address{t} (`area.node`)"),
                    AddressKind::Ipv6Network => {
                        write!(f, "non-network bits set in IPv6 network{t}")
                    }
                    AddressKind::Port => write!(f, "expected a port, found{t}"),
                    AddressKind::Protocol => write!(f, "expected a protocol, found{t}"),
                    AddressKind::Gateway => write!(f, "`gateway` takes a host name{t}"),
                }
            }
            K::AfterMpls(c) => match c {
                MplsConflict::Vlan => f.write_str("`vlan` cannot follow `mpls`"),
                MplsConflict::Gateway => f.write_str("`gateway` cannot follow `mpls`"),
                MplsConflict::Protocol(p) => write!(
                    f,
                    "only IPv4 and IPv6 can be tested after `mpls` (not link-layer protocol {p:#x})"
                ),
            },
            K::Arithmetic(a) => f.write_str(match a {
                ArithError::DivisionByZero => "division by zero",
                ArithError::ModulusByZero => "modulus by zero",
                ArithError::ShiftTooLarge => "shift by more than 31 bits",
            }),
            K::TargetLimit { target, need, because, option } => {
                write!(f, "{target} cannot {}: {because}", need.describe())?;
                match option {
                    Some(o) => write!(f, " (needs {o})"),
                    None => Ok(()),
                }
            }
            K::TargetLinkType { target, link, supported, kind } => {
                let names: Vec<String> = supported.iter().map(|l| l.to_string()).collect();
                write!(
                    f,
                    "the {target} compiler supports only {kind} ({}), not {link}",
                    names.join(", ")
                )
            }
            K::NetmaskUnknown => {
                f.write_str("`ip broadcast` needs the network's netmask, which is not known")
            }
            K::Invalid(e) => write!(f, "the compiled program is not valid: {e}"),
            K::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for CompileError {}
