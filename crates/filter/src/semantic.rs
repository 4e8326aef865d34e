//! The checks libpcap makes while parsing (qualifier combinations, value ranges, address
//! validity), and the name tables the grammar decodes (802.11, LLC, pflog).
//!
//! Only checks that do not depend on the link type live here; "'x' not supported on DLT_…"
//! and friends belong to the code generator.

use crate::ast::{Dir, Id, Proto, QualType, Quals};
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::parse_number;
use sift_diag::Span;

/// `llc` type names (case-insensitive).
pub const LLC_TYPES: &[&str] =
    &["i", "s", "u", "rr", "rnr", "rej", "ui", "ua", "disc", "dm", "sabme", "test", "xid", "frmr"];

const PF_REASONS: &[&str] = &[
    "match",
    "bad-offset",
    "fragment",
    "short",
    "normalize",
    "memory",
    "bad-timestamp",
    "congestion",
    "ip-option",
    "proto-cksum",
    "state-mismatch",
    "state-insert",
    "state-limit",
    "src-limit",
    "synproxy",
    // OS-specific codes (FreeBSD, OpenBSD, NetBSD); the code generator decides per DLT_PFLOG
    // variant what they mean.
    "map-failed",
    "state-locked",
    "translate",
    "no-route",
    "dummynet",
];

/// A pflog reason code by name.
pub fn pf_reason(name: &str) -> Option<u32> {
    PF_REASONS.iter().position(|r| r.eq_ignore_ascii_case(name)).map(|i| i as u32)
}

/// A pflog action code by name.
pub fn pf_action(name: &str) -> Option<u32> {
    let n = name.to_ascii_lowercase();
    Some(match n.as_str() {
        "pass" | "accept" => 0,
        "drop" | "block" => 1,
        "scrub" => 2,
        "noscrub" => 3,
        "nat" => 4,
        "nonat" => 5,
        "binat" => 6,
        "nobinat" => 7,
        "rdr" => 8,
        "nordr" => 9,
        "synproxy-drop" => 10,
        "defer" => 11,
        "match" => 12,
        "divert" => 13,
        "rt" => 14,
        "afrt" => 15,
        "dummynet" => 16,
        "nodummynet" => 17,
        "nat64" => 18,
        "nonat64" => 19,
        _ => return None,
    })
}

const WLAN_TYPES: &[(&str, u32)] =
    &[("mgt", 0x00), ("management", 0x00), ("ctl", 0x04), ("control", 0x04), ("data", 0x08)];

const WLAN_MGT: &[(&str, u32)] = &[
    ("assocreq", 0x00),
    ("assoc-req", 0x00),
    ("assocresp", 0x10),
    ("assoc-resp", 0x10),
    ("reassocreq", 0x20),
    ("reassoc-req", 0x20),
    ("reassocresp", 0x30),
    ("reassoc-resp", 0x30),
    ("probereq", 0x40),
    ("probe-req", 0x40),
    ("proberesp", 0x50),
    ("probe-resp", 0x50),
    ("beacon", 0x80),
    ("atim", 0x90),
    ("disassoc", 0xa0),
    ("disassociation", 0xa0),
    ("auth", 0xb0),
    ("authentication", 0xb0),
    ("deauth", 0xc0),
    ("deauthentication", 0xc0),
];
const WLAN_CTL: &[(&str, u32)] = &[
    ("bar", 0x80),
    ("ba", 0x90),
    ("ps-poll", 0xa0),
    ("rts", 0xb0),
    ("cts", 0xc0),
    ("ack", 0xd0),
    ("cf-end", 0xe0),
    ("cf-end-ack", 0xf0),
];
const WLAN_DATA: &[(&str, u32)] = &[
    ("data", 0x00),
    ("data-cf-ack", 0x10),
    ("data-cf-poll", 0x20),
    ("data-cf-ack-poll", 0x30),
    ("null", 0x40),
    ("cf-ack", 0x50),
    ("cf-poll", 0x60),
    ("cf-ack-poll", 0x70),
    ("qos-data", 0x80),
    ("qos-data-cf-ack", 0x90),
    ("qos-data-cf-poll", 0xa0),
    ("qos-data-cf-ack-poll", 0xb0),
    ("qos", 0xc0),
    ("qos-cf-poll", 0xe0),
    ("qos-cf-ack-poll", 0xf0),
];

fn find(t: &[(&str, u32)], name: &str) -> Option<u32> {
    t.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|e| e.1)
}

/// An 802.11 type name's frame-control bits.
pub fn wlan_type(name: &str) -> Option<u32> {
    find(WLAN_TYPES, name)
}

/// An 802.11 subtype name's bits, within type `ty`.
pub fn wlan_subtype(ty: u32, name: &str) -> Option<u32> {
    match ty {
        0x00 => find(WLAN_MGT, name),
        0x04 => find(WLAN_CTL, name),
        0x08 => find(WLAN_DATA, name),
        _ => None,
    }
}

/// An 802.11 subtype name alone: type | subtype bits (management, control, data order).
pub fn wlan_type_subtype(name: &str) -> Option<u32> {
    [(0x00, WLAN_MGT), (0x04, WLAN_CTL), (0x08, WLAN_DATA)]
        .iter()
        .find_map(|(t, tab)| find(tab, name).map(|s| s | t))
}

/// The first name of a type | subtype value (for printing `subtype NAME`).
pub fn wlan_type_subtype_name(v: u32) -> &'static str {
    [(0x00, WLAN_MGT), (0x04, WLAN_CTL), (0x08, WLAN_DATA)]
        .iter()
        .filter(|(t, _)| v & 0x0c == *t)
        .find_map(|(_, tab)| tab.iter().find(|(_, s)| *s == v & 0xf0).map(|e| e.0))
        .unwrap_or("assocreq")
}

/// The subtype names of type `ty` (all types when `None`), for help texts.
pub fn wlan_subtype_names(ty: Option<u32>) -> Vec<&'static str> {
    [(0x00, WLAN_MGT), (0x04, WLAN_CTL), (0x08, WLAN_DATA)]
        .iter()
        .filter(|(t, _)| ty.is_none_or(|x| x == *t))
        .flat_map(|(_, tab)| tab.iter().map(|e| e.0))
        .collect()
}

/// An 802.11 direction name.
pub fn wlan_dir(name: &str) -> Option<u32> {
    find(&[("nods", 0), ("tods", 1), ("fromds", 2), ("dstods", 3)], name)
}

/// Parses dotted IPv4 text into its value (left-aligned) and number of parts, or `None`
/// when a part is not a number ≤ 255.
pub fn ipv4_parts(text: &str) -> Option<(u32, u32)> {
    let mut v: u32 = 0;
    let mut n = 0;
    for part in text.split('.') {
        let p = parse_number(part).ok()?;
        if p > 255 || n == 4 {
            return None;
        }
        v |= p << (24 - 8 * n);
        n += 1;
    }
    Some((v, n))
}

fn is_addr(id: &Id) -> bool {
    matches!(id, Id::V4(_) | Id::V4Prefix { .. } | Id::V4Mask { .. } | Id::V6(_) | Id::V6Prefix(..))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks one `[proto] [dir] [type] id` primitive as libpcap does before generating code.
pub(crate) fn check_id(q: &Quals, id: &Id, span: Span, text: &str) -> Result<(), ParseError> {
    let ty = q.ty.map(|t| t.0);
    let proto = q.proto.map(|p| p.0);
    let err = |k: K| ParseError::new(k, span);
    let qual_err = |qual: &str, target: String, at: Span| {
        ParseError::new(K::QualifierInvalid { qual: qual.into(), target }, span)
            .with_aux(at, format!("`{qual}` given here"))
    };
    // 1. port/portrange/proto/protochain applied to an address.
    if let Some((
        t @ (QualType::Port | QualType::Portrange | QualType::Proto | QualType::Protochain),
        ts,
    )) = q.ty
        && is_addr(id)
    {
        let what = match id {
            Id::V4(_) => "IPv4 address",
            Id::V4Prefix { .. } => "IPv4 address and prefix length",
            Id::V4Mask { .. } => "IPv4 address and netmask",
            Id::V6(_) => "IPv6 address",
            _ => "IPv6 address and prefix length",
        };
        return Err(err(K::QualifierOnAddress { qual: t.as_str().into(), what: what.into() })
            .with_aux(ts, "qualifier given here"));
    }
    // 0. A MAC address goes with `[link] [dir] [host]` only.
    if let Id::Mac(_) = id
        && (!matches!(ty, None | Some(QualType::Host)) || q.proto.is_some_and(|p| !p.0.is_link()))
    {
        let at = q.proto.map(|p| p.1).or(q.ty.map(|t| t.1)).unwrap_or(span);
        return Err(err(K::MacNonEther).with_aux(at, "qualifier given here"));
    }
    // `decnet proto NAME` is refused before the name is looked up.
    if let (Some((t @ (QualType::Proto | QualType::Protochain), _)), Some((Proto::Decnet, ps))) =
        (q.ty, q.proto)
    {
        return Err(qual_err("decnet", t.as_str().into(), ps));
    }
    // 2. gateway takes a name only (but `decnet gateway` is refused first).
    if let (Some((QualType::Gateway, _)), Some((Proto::Decnet, ps))) = (q.ty, q.proto)
        && !matches!(id, Id::V6(_) | Id::V6Prefix(..))
    {
        return Err(ParseError::new(
            K::QualifierInvalid { qual: "decnet".into(), target: "gateway".into() },
            ps,
        )
        .with_aux(span, "applied to this"));
    }
    if let Some((QualType::Gateway, ts)) = q.ty
        && !matches!(id, Id::Name(_))
    {
        let target = if matches!(id, Id::Arc(_)) { "$XX".into() } else { collapse(text) };
        return Err(qual_err("gateway", target, ts));
    }
    // 3. Address validity.
    let decnet = proto == Some(Proto::Decnet);
    match id {
        Id::V4(s) | Id::V4Prefix { addr: s, .. } | Id::V4Mask { addr: s, .. } if !decnet => {
            if ipv4_parts(s).is_none() {
                return Err(err(K::Ipv4Invalid { text: s.clone() }));
            }
            if let Id::V4Mask { mask, .. } = id
                && ipv4_parts(mask).is_none()
            {
                return Err(err(K::Ipv4Invalid { text: mask.clone() }));
            }
        }
        _ => {}
    }
    // 4. host on a network.
    if let Some((QualType::Host, ts)) = q.ty {
        let net = match id {
            Id::V4Prefix { .. } | Id::V4Mask { .. } => true,
            Id::V6Prefix(_, l) => *l < 128,
            _ => false,
        };
        if net && (!decnet || matches!(id, Id::V6Prefix(..))) {
            return Err(qual_err("host", collapse(text), ts));
        }
    }
    // 5. ARCnet and MAC addresses.
    if let Id::Arc(_) = id {
        if let Some((t, ts)) = q.ty
            && t != QualType::Host
        {
            return Err(qual_err(t.as_str(), "$XX".into(), ts));
        }
        if let Some((p, ps)) = q.proto
            && p != Proto::Link
        {
            return Err(err(K::ArcnetProtoInvalid).with_aux(ps, "protocol given here"));
        }
        return Ok(());
    }
    if let Id::Mac(_) = id
        && let Some((p, ps)) = q.proto
        && !p.is_link()
    {
        return Err(err(K::MacNonEther).with_aux(ps, "protocol given here"));
    }
    // 6. 802.11 address directions with ports.
    if let (Some((d, ds)), Some(t @ (QualType::Port | QualType::Portrange))) = (q.dir, ty)
        && !matches!(d, Dir::Src | Dir::Dst | Dir::SrcOrDst | Dir::SrcAndDst)
    {
        return Err(ParseError::new(
            K::QualifierInvalid { qual: d.as_str().into(), target: t.as_str().into() },
            span,
        )
        .with_aux(ds, "direction given here"));
    }
    // 7. Protocol qualifier against the type and the kind of id. libpcap looks a protocol
    // name up before this check, so for `proto NAME` it runs after resolution.
    if !matches!((ty, id), (Some(QualType::Proto | QualType::Protochain), Id::Name(_))) {
        check_proto_compat(q, id, span, text)?;
    }
    check_values(q, id, span, text)
}

/// Step 7 of [`check_id`]: the protocol qualifier against the type and the kind of id.
pub(crate) fn check_proto_compat(
    q: &Quals,
    id: &Id,
    span: Span,
    text: &str,
) -> Result<(), ParseError> {
    let ty = q.ty.map(|t| t.0);
    let err = |k: K| ParseError::new(k, span);
    if let Some((p, ps)) = q.proto {
        use Proto as P;
        let ip4 = |p: Proto| matches!(p, P::Ip | P::Arp | P::Rarp);
        let t = ty.unwrap_or(QualType::Host);
        let (ok, target): (bool, String) = match t {
            QualType::Port | QualType::Portrange => {
                (matches!(p, P::Tcp | P::Udp | P::Sctp), t.as_str().into())
            }
            QualType::Proto => {
                (p.is_link() || matches!(p, P::Ip | P::Ip6 | P::Iso | P::Isis), "proto".into())
            }
            QualType::Protochain => (matches!(p, P::Ip | P::Ip6), "protochain".into()),
            QualType::Gateway => (ip4(p), "gateway".into()),
            QualType::Host | QualType::Net => {
                let host = t == QualType::Host;
                match id {
                    Id::V6(_) | Id::V6Prefix(..) => (
                        p == P::Ip6,
                        if host { "host <IPv6 address>" } else { "net <IPv6 prefix>" }.into(),
                    ),
                    Id::Mac(_) => (true, String::new()),
                    Id::Name(_) if p == P::Decnet => (false, t.as_str().into()),
                    Id::Name(_) => (
                        if host { ip4(p) || p == P::Ip6 || p.is_link() } else { ip4(p) },
                        if host { "host <Internet hostname>" } else { "net <IPv4 network name>" }
                            .into(),
                    ),
                    Id::V4Prefix { .. } | Id::V4Mask { .. } if p == P::Decnet => {
                        (false, t.as_str().into())
                    }
                    Id::V4Prefix { .. } | Id::V4Mask { .. } => (ip4(p), "net <IPv4 prefix>".into()),
                    _ if p == P::Decnet && !host => (false, "net".into()),
                    _ if p == P::Decnet => (true, String::new()),
                    _ if p.is_link() => {
                        return Err(err(K::LinkAddressInvalid { text: collapse(text) }));
                    }
                    _ => (
                        ip4(p),
                        if host { "host <IPv4 address>" } else { "net <IPv4 address>" }.into(),
                    ),
                }
            }
        };
        if !ok {
            return Err(ParseError::new(
                K::QualifierInvalid { qual: p.as_str().into(), target },
                ps,
            )
            .with_aux(span, "applied to this"));
        }
        // DECnet addresses: area.node, area ≤ 63, node ≤ 1023.
        if p == P::Decnet && t == QualType::Host {
            let good = match id {
                Id::V4(s) => {
                    let parts: Vec<_> = s.split('.').map(parse_number).collect();
                    matches!(parts.as_slice(), [Ok(a), Ok(n)] if *a <= 63 && *n <= 1023)
                }
                _ => false,
            };
            if !good {
                return Err(err(K::DecnetInvalid { text: collapse(text) }));
            }
        }
    }
    Ok(())
}

/// Step 8 of [`check_id`]: numeric ranges and network bits.
fn check_values(q: &Quals, id: &Id, span: Span, text: &str) -> Result<(), ParseError> {
    let ty = q.ty.map(|t| t.0);
    let proto = q.proto.map(|p| p.0);
    let err = |k: K| ParseError::new(k, span);
    let too_large = |what: &str, value: u32, max: u32| {
        Err(err(K::ValueTooLarge { what: what.into(), value: value.into(), max: max.into() }))
    };
    match (ty, id) {
        (Some(QualType::Port | QualType::Portrange), Id::Num(n)) if *n > 65535 => {
            return too_large("port number", *n, 65535);
        }
        (Some(QualType::Portrange), Id::Name(s)) => {
            for part in s.splitn(2, '-') {
                if let Ok(n) = parse_number(part)
                    && n > 65535
                {
                    return too_large("port number", n, 65535);
                }
            }
        }
        (Some(QualType::Proto), Id::Num(n)) if proto == Some(Proto::Iso) && *n > 255 => {
            return too_large("ISO protocol", *n, 255);
        }
        (Some(QualType::Proto), Id::Num(n)) if proto == Some(Proto::Isis) && *n > 31 => {
            return too_large("IS-IS PDU type", *n, 31);
        }
        (Some(QualType::Proto | QualType::Protochain), Id::Num(n))
            if !proto.is_some_and(|p| p.is_link() || matches!(p, Proto::Iso | Proto::Isis))
                && *n > 255 =>
        {
            return too_large("protocol number", *n, 255);
        }
        (_, Id::V4Prefix { addr, len }) => {
            if *len > 32 {
                return too_large("netmask length", *len, 32);
            }
            let (v, _) = ipv4_parts(addr).unwrap_or((0, 0));
            let mask = if *len == 0 { 0 } else { u32::MAX << (32 - len) };
            if v & !mask != 0 {
                return Err(err(K::NetworkBitsNonZero { text: collapse(text) }));
            }
        }
        (_, Id::V4Mask { addr, mask }) => {
            let (v, _) = ipv4_parts(addr).unwrap_or((0, 0));
            let (m, _) = ipv4_parts(mask).unwrap_or((0, 0));
            if v & !m != 0 {
                return Err(err(K::NetworkBitsNonZero { text: collapse(text) }));
            }
        }
        (_, Id::V6Prefix(a, len)) => {
            if *len > 128 {
                return Err(err(K::Ipv6MaskTooLong));
            }
            let v = u128::from(*a);
            let mask = if *len == 0 { 0 } else { u128::MAX << (128 - len) };
            if v & !mask != 0 {
                return Err(err(K::NetworkBitsNonZero { text: collapse(text) }));
            }
        }
        _ => {}
    }
    Ok(())
}
