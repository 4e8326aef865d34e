//! Parse errors: data first (a kind, a span, an optional auxiliary span), text second.

use sift_diag::{Diagnostic, Span};
use std::fmt;

/// What went wrong. Named noun-first, as regex-syntax does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A character that starts no token.
    CharUnexpected {
        /// The character.
        ch: char,
    },
    /// A number with a digit its base does not allow (`08`).
    NumberInvalid {
        /// The token text.
        text: String,
        /// `octal`, `hex` or `decimal`.
        base: &'static str,
    },
    /// A number that does not fit in 32 bits.
    NumberOverflow {
        /// The token text.
        text: String,
        /// `decimal`, `hexadecimal` or `octal`.
        base: &'static str,
    },
    /// A colon-separated token that is not a MAC address (`1:2:3:4:5`).
    MacBogus {
        /// The token text.
        text: String,
    },
    /// A protocol that cannot stand alone (`link`, `ether`, `radio`).
    AbbreviationInvalid {
        /// libpcap's name for it (`link` for every link-layer spelling).
        name: &'static str,
    },
    /// A token that the grammar does not allow here.
    TokenUnexpected {
        /// A description of what was found.
        found: String,
        /// What would have been accepted, already phrased ("`and`, `or` or `)`").
        expected: String,
    },
    /// Parentheses or `not` nested deeper than [`crate::MAX_DEPTH`].
    NestingTooDeep,
    /// A qualifier that cannot apply to what follows (libpcap: "'%s' is not a valid qualifier
    /// for '%s'").
    QualifierInvalid {
        /// The qualifier.
        qual: String,
        /// What it was applied to.
        target: String,
    },
    /// `port`/`portrange`/`proto`/`protochain` given an address.
    QualifierOnAddress {
        /// The type qualifier.
        qual: String,
        /// `IPv4 address`, `IPv6 address and prefix length`…
        what: String,
    },
    /// A numeric argument above its limit ("%s %u greater than maximum %u").
    ValueTooLarge {
        /// What the number is (`port number`, `VLAN tag`…).
        what: String,
        /// The value given.
        value: u64,
        /// The largest allowed.
        max: u64,
    },
    /// A MAC address with a non-link protocol qualifier.
    MacNonEther,
    /// `$xx` with a protocol other than `link`.
    ArcnetProtoInvalid,
    /// An IPv4 address or network with a part out of range.
    Ipv4Invalid {
        /// The text.
        text: String,
    },
    /// A bad IPv6 address (`fe80::256.1.2.3`).
    Ipv6Invalid {
        /// The text.
        text: String,
    },
    /// An IPv6 prefix length above 128.
    Ipv6MaskTooLong,
    /// A DECnet address that is not `area.node` within range.
    DecnetInvalid {
        /// The text.
        text: String,
    },
    /// A link-layer address that is not a MAC (`link host 1.2.3.4`).
    LinkAddressInvalid {
        /// The text.
        text: String,
    },
    /// A network with host bits set (`net 1.2.3.4/24`).
    NetworkBitsNonZero {
        /// The network as written.
        text: String,
    },
    /// `x / 0` with a literal zero.
    DivisionByZero,
    /// `x % 0` with a literal zero.
    ModulusByZero,
    /// `x << 32` or more with a literal.
    ShiftTooLarge,
    /// `proto[i:n]` with `n` not 1, 2 or 4.
    DataSizeInvalid,
    /// `proto[…]` on a protocol with no accessor.
    IndexUnsupported {
        /// The protocol.
        proto: String,
    },
    /// An unknown 802.11 type name.
    WlanTypeUnknown {
        /// The name.
        name: String,
    },
    /// An unknown 802.11 subtype name (for the type given, if any).
    WlanSubtypeUnknown {
        /// The name.
        name: String,
        /// The type's frame-control bits, when `type T subtype S` named one.
        ty: Option<u32>,
    },
    /// An unknown 802.11 direction name.
    WlanDirUnknown {
        /// The name.
        name: String,
    },
    /// An 802.11 type number out of range.
    WlanTypeInvalid,
    /// An 802.11 subtype number out of range.
    WlanSubtypeInvalid,
    /// An 802.11 direction number out of range.
    WlanDirInvalid,
    /// An unknown `llc` type name.
    LlcTypeUnknown {
        /// The name.
        name: String,
    },
    /// An unknown pflog reason.
    PfReasonUnknown {
        /// The name.
        name: String,
    },
    /// An unknown pflog action.
    PfActionUnknown {
        /// The name.
        name: String,
    },
    /// A host name not found (or not of the needed address family).
    HostUnknown {
        /// The name.
        name: String,
        /// Whether it exists but not for the address family the qualifiers ask for.
        family: bool,
    },
    /// A name with no MAC address in the ethers database.
    EtherHostUnknown {
        /// The name.
        name: String,
    },
    /// A network name not in the networks database.
    NetUnknown {
        /// The name.
        name: String,
    },
    /// A service name not in the services database.
    PortUnknown {
        /// The name.
        name: String,
    },
    /// A service known only for the other transport (`udp port <tcp-only name>`).
    PortWrongProto {
        /// The name.
        name: String,
        /// The only transport it exists for.
        proto: &'static str,
    },
    /// An unknown protocol name after `proto`/`protochain`.
    ProtoUnknown {
        /// The qualifiers as written (`ip proto`, `tcp proto`…).
        qual: String,
        /// The name.
        name: String,
    },
}

/// A parse error: what, where, and optionally an earlier location involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// Where.
    pub span: Span,
    /// An earlier token involved (the conflicting qualifier) and a note about it.
    pub aux: Option<(Span, String)>,
}

impl ParseError {
    /// An error without an auxiliary span.
    pub fn new(kind: ParseErrorKind, span: Span) -> ParseError {
        ParseError { kind, span, aux: None }
    }

    /// Adds an auxiliary span.
    pub fn with_aux(mut self, span: Span, note: impl Into<String>) -> ParseError {
        self.aux = Some((span, note.into()));
        self
    }

    /// libpcap's wording for this error (what `pcap_compile` would print), for compatibility
    /// and for matching libpcap's test corpus.
    pub fn libpcap_message(&self) -> String {
        use ParseErrorKind as K;
        match &self.kind {
            K::CharUnexpected { .. } | K::TokenUnexpected { .. } | K::NestingTooDeep => {
                "can't parse filter expression: syntax error".into()
            }
            K::NumberInvalid { text, base } => format!("number {text} contains non-{base} digit"),
            K::NumberOverflow { text, base } => format!("{base} number {text} overflows 32 bits"),
            K::MacBogus { .. } => "invalid Ethernet address".into(),
            K::AbbreviationInvalid { name } => {
                format!("'{name}' cannot be used as an abbreviation")
            }
            K::QualifierInvalid { qual, target } => {
                format!("'{qual}' is not a valid qualifier for '{target}'")
            }
            K::QualifierOnAddress { qual, what } => format!("'{qual}' qualifier applied to {what}"),
            K::ValueTooLarge { what, value, max } => {
                format!("{what} {value} greater than maximum {max}")
            }
            K::MacNonEther => "Ethernet address used in non-ether expression".into(),
            K::ArcnetProtoInvalid => {
                "'link' is the only valid proto qualifier for 'host $XX'".into()
            }
            K::Ipv4Invalid { text } => format!("invalid IPv4 address '{text}'"),
            K::Ipv6Invalid { text } => format!("invalid IPv6 address {text}"),
            K::Ipv6MaskTooLong => "mask length must be <= 128".into(),
            K::DecnetInvalid { text } => format!("invalid DECnet address '{text}'"),
            K::LinkAddressInvalid { text } => format!("illegal link-layer address '{text}'"),
            K::NetworkBitsNonZero { text } => format!("non-network bits set in \"{text}\""),
            K::DivisionByZero => "division by zero".into(),
            K::ModulusByZero => "modulus by zero".into(),
            K::ShiftTooLarge => "shift by more than 31 bits".into(),
            K::DataSizeInvalid => "data size must be 1, 2, or 4".into(),
            K::IndexUnsupported { proto } => {
                format!("'{proto}' does not support the index operation")
            }
            K::WlanTypeUnknown { .. } => "unknown 802.11 type name".into(),
            // libpcap's `subtype NAME` without a type reports the type table.
            K::WlanSubtypeUnknown { ty: None, .. } => "unknown 802.11 type name".into(),
            K::WlanSubtypeUnknown { .. } => "unknown 802.11 subtype name".into(),
            K::WlanDirUnknown { .. } => "unknown 802.11 direction".into(),
            K::WlanTypeInvalid => "invalid 802.11 type value".into(),
            K::WlanSubtypeInvalid => "invalid 802.11 subtype value".into(),
            K::WlanDirInvalid => "invalid 802.11 direction".into(),
            K::LlcTypeUnknown { name } => format!("unknown LLC type name \"{name}\""),
            K::PfReasonUnknown { name } => format!("unknown PF reason \"{name}\""),
            K::PfActionUnknown { name } => format!("unknown PF action \"{name}\""),
            K::HostUnknown { name, family: false } => format!("unknown host '{name}'"),
            K::HostUnknown { name, family: true } => {
                format!("unknown host '{name}' for specified address family")
            }
            K::EtherHostUnknown { name } => format!("unknown Ethernet-like host '{name}'"),
            K::NetUnknown { name } => format!("unknown network '{name}'"),
            K::PortUnknown { name } => format!("unknown port '{name}'"),
            K::PortWrongProto { name, proto } => format!("port '{name}' is {proto}"),
            K::ProtoUnknown { qual, name } => format!("unknown '{qual}' value '{name}'"),
        }
    }

    /// sift's wording: libpcap's, with code in backticks, and precise syntax errors.
    pub fn message(&self) -> String {
        match &self.kind {
            ParseErrorKind::CharUnexpected { ch } => format!("unexpected character `{ch}`"),
            // "expected a primitive after `and`" says all at the end of the input.
            ParseErrorKind::TokenUnexpected { found, expected }
                if found == "end of input" && expected.contains(" after `") =>
            {
                format!("expected {expected}")
            }
            ParseErrorKind::TokenUnexpected { found, expected } => {
                format!("expected {expected}, found {found}")
            }
            ParseErrorKind::ValueTooLarge { what, value, max } => {
                let what = what.strip_suffix(" number").unwrap_or(what);
                format!("{what} {value} is out of range (0–{max})")
            }
            ParseErrorKind::NumberInvalid { text, base } => {
                format!("number `{text}` contains a non-{base} digit")
            }
            ParseErrorKind::NumberOverflow { text, base } => {
                format!("{base} number `{text}` overflows 32 bits")
            }
            ParseErrorKind::MacBogus { text } => format!("invalid Ethernet address `{text}`"),
            ParseErrorKind::Ipv6Invalid { text } => format!("invalid IPv6 address `{text}`"),
            ParseErrorKind::NetworkBitsNonZero { text } => {
                format!("non-network bits set in `{text}`")
            }
            ParseErrorKind::WlanTypeUnknown { name } => {
                format!("unknown 802.11 type name `{name}`")
            }
            ParseErrorKind::WlanSubtypeUnknown { name, .. } => {
                format!("unknown 802.11 subtype name `{name}`")
            }
            ParseErrorKind::WlanDirUnknown { name } => format!("unknown 802.11 direction `{name}`"),
            ParseErrorKind::LlcTypeUnknown { name } => format!("unknown LLC type name `{name}`"),
            ParseErrorKind::PfReasonUnknown { name } => format!("unknown PF reason `{name}`"),
            ParseErrorKind::PfActionUnknown { name } => format!("unknown PF action `{name}`"),
            ParseErrorKind::NestingTooDeep => {
                format!("expression nested too deeply (limit {})", crate::MAX_DEPTH)
            }
            _ => backticks(&self.libpcap_message()),
        }
    }

    /// The error as a diagnostic ready to render against the source.
    pub fn diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::new(self.message(), self.span);
        if let Some((s, n)) = &self.aux {
            d = d.with_aux(*s, n.clone());
        }
        if let Some(h) = self.help() {
            d = d.with_help(h);
        }
        d
    }

    /// Renders the error under the source line (see [`sift_diag::Diagnostic::render`]).
    pub fn render(&self, source: &str) -> String {
        self.diagnostic().render(source)
    }

    fn help(&self) -> Option<String> {
        use ParseErrorKind as K;
        Some(match &self.kind {
            K::NumberInvalid { base: "octal", .. } => {
                "a number with a leading `0` is octal; drop the `0` for decimal".into()
            }
            K::PortUnknown { name } => {
                format!("`{name}` is not a number and not in the services database")
            }
            K::HostUnknown { .. } => {
                "names are looked up in the hosts file only; sift never asks DNS".into()
            }
            K::NetworkBitsNonZero { .. } => "clear the host bits or use `host`".into(),
            K::MacNonEther => "a MAC address needs `ether` (or no protocol qualifier)".into(),
            K::MacBogus { .. } => {
                "a MAC address is six groups of 1-2 hex digits (`a:b:c:d:e:f`, `-` or `.` \
                 separated), `xxxx.xxxx.xxxx` or 12 hex digits"
                    .into()
            }
            K::Ipv6Invalid { .. } => "an embedded IPv4 address needs four parts of 0-255".into(),
            K::WlanTypeUnknown { .. } => "802.11 types are `mgt`, `ctl` and `data`".into(),
            K::WlanSubtypeUnknown { ty, .. } => {
                let names = crate::semantic::wlan_subtype_names(*ty);
                format!("known subtypes: {}", names.join(", "))
            }
            K::WlanDirUnknown { .. } => {
                "directions are `nods`, `tods`, `fromds`, `dstods` or a number 0-3".into()
            }
            K::LlcTypeUnknown { .. } => format!(
                "LLC types are {}",
                crate::semantic::LLC_TYPES.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
            ),
            K::QualifierInvalid { qual, target } => match target.as_str() {
                "port" | "portrange" => {
                    format!("`{target}` applies to `tcp`, `udp` and `sctp`, or to all three without a protocol")
                }
                "proto" => "`proto` follows `ip`, `ip6`, `iso`, `isis` or a link-layer protocol".into(),
                "protochain" => "`protochain` follows `ip` or `ip6`".into(),
                "gateway" => "`gateway` takes `ip`, `arp` or `rarp`, or no protocol".into(),
                t if t.starts_with("host <IPv4") || t.starts_with("net <IPv4") => {
                    "an IPv4 address or network takes `ip`, `arp` or `rarp`, or no protocol".into()
                }
                t if t.contains("IPv6") => {
                    "an IPv6 address or network takes `ip6`, or no protocol".into()
                }
                t if t.starts_with("host <Internet") => {
                    "a host name takes `ip`, `ip6`, `arp`, `rarp` or a link-layer protocol".into()
                }
                _ if qual == "gateway" => "`gateway` takes a host name (in both the hosts and ethers files)".into(),
                _ if qual == "host" => "use `net` for a network".into(),
                _ => return None,
            },
            K::QualifierOnAddress { qual, .. } => match qual.as_str() {
                "port" | "portrange" => format!("`{qual}` takes port numbers or service names"),
                _ => format!("`{qual}` takes a protocol number or name; use `host` or `net` for an address"),
            },
            K::AbbreviationInvalid { .. } => {
                "a link-layer protocol needs a qualifier or an index, as in `ether host …` or `ether[0]`"
                    .into()
            }
            K::DataSizeInvalid => "the size after `:` is 1, 2 or 4 bytes".into(),
            K::TokenUnexpected { found, expected }
                if found.starts_with("name `")
                    && crate::lexer::Kw::lookup(&found[6..found.len() - 1].to_ascii_lowercase()).is_some()
                    && found[6..found.len() - 1].bytes().any(|b| b.is_ascii_uppercase()) =>
            {
                format!("keywords are lowercase: `{}`", found[6..found.len() - 1].to_ascii_lowercase())
            }
            K::TokenUnexpected { found, expected }
                if expected.starts_with("a primitive")
                    && (found.starts_with("name") || found.starts_with("address")) =>
            {
                let text = found.split('`').nth(1).unwrap_or("x");
                format!(
                    "write a qualifier, as in `host {text}`; a bare name or address inherits \
                     qualifiers only right after a qualified primitive (`host a or b`)"
                )
            }
            K::NestingTooDeep => "split the expression or remove redundant parentheses".into(),
            _ => return None,
        })
    }
}

/// Turns libpcap's `'x'` quoting into backticks.
fn backticks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut open = false;
    let b = s.as_bytes();
    for (i, ch) in s.char_indices() {
        if ch == '\'' {
            // An apostrophe inside a word ("can't") is not a quote.
            let prev = i.checked_sub(1).map(|j| b[j]);
            let next = b.get(i + 1).copied();
            let inner = prev.is_some_and(|p| p.is_ascii_alphabetic())
                && next.is_some_and(|n| n.is_ascii_alphabetic())
                && !open;
            if !inner {
                out.push('`');
                open = !open;
                continue;
            }
        }
        out.push(ch);
    }
    out
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message(), self.span)
    }
}

impl std::error::Error for ParseError {}
