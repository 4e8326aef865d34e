//! ICMP and ICMPv6 type and code names, as pfctl's tables in `pfctl_parser.c`.
//!
//! Why a module: the parser looks names up (`icmp-type echoreq`, `return-icmp(port-unr)`) and
//! the printer turns numbers back into the same names; one table serves both.

use crate::addr::Af;

/// ICMP types: (name, type).
const ICMP_TYPES: &[(&str, u8)] = &[
    ("echoreq", 8),
    ("echorep", 0),
    ("unreach", 3),
    ("squench", 4),
    ("redir", 5),
    ("althost", 6),
    ("routeradv", 9),
    ("routersol", 10),
    ("timex", 11),
    ("paramprob", 12),
    ("timereq", 13),
    ("timerep", 14),
    ("inforeq", 15),
    ("inforep", 16),
    ("maskreq", 17),
    ("maskrep", 18),
    ("trace", 30),
    ("dataconv", 31),
    ("mobredir", 32),
    ("ipv6-where", 33),
    ("ipv6-here", 34),
    ("mobregreq", 35),
    ("mobregrep", 36),
    ("skip", 39),
    ("photuris", 40),
];

/// ICMPv6 types: (name, type).
const ICMP6_TYPES: &[(&str, u8)] = &[
    ("unreach", 1),
    ("toobig", 2),
    ("timex", 3),
    ("paramprob", 4),
    ("echoreq", 128),
    ("echorep", 129),
    ("groupqry", 130),
    ("listqry", 130),
    ("grouprep", 131),
    ("listenrep", 131),
    ("groupterm", 132),
    ("listendone", 132),
    ("routersol", 133),
    ("routeradv", 134),
    ("neighbrsol", 135),
    ("neighbradv", 136),
    ("redir", 137),
    ("routrrenum", 138),
    ("wrureq", 139),
    ("wrurep", 140),
    ("fqdnreq", 139),
    ("fqdnrep", 140),
    ("niqry", 139),
    ("nirep", 140),
    ("mtraceresp", 200),
    ("mtrace", 201),
];

/// ICMP codes: (name, type, code).
const ICMP_CODES: &[(&str, u8, u8)] = &[
    ("net-unr", 3, 0),
    ("host-unr", 3, 1),
    ("proto-unr", 3, 2),
    ("port-unr", 3, 3),
    ("needfrag", 3, 4),
    ("srcfail", 3, 5),
    ("net-unk", 3, 6),
    ("host-unk", 3, 7),
    ("isolate", 3, 8),
    ("net-prohib", 3, 9),
    ("host-prohib", 3, 10),
    ("net-tos", 3, 11),
    ("host-tos", 3, 12),
    ("filter-prohib", 3, 13),
    ("host-preced", 3, 14),
    ("cutoff-preced", 3, 15),
    ("redir-net", 5, 0),
    ("redir-host", 5, 1),
    ("redir-tos-net", 5, 2),
    ("redir-tos-host", 5, 3),
    ("normal-adv", 9, 0),
    ("common-adv", 9, 16),
    ("transit", 11, 0),
    ("reassemb", 11, 1),
    ("badhead", 12, 0),
    ("optmiss", 12, 1),
    ("badlen", 12, 2),
    ("unknown-ind", 40, 1),
    ("auth-fail", 40, 2),
    ("decrypt-fail", 40, 3),
];

/// ICMPv6 codes: (name, type, code).
const ICMP6_CODES: &[(&str, u8, u8)] = &[
    ("admin-unr", 1, 1),
    ("noroute-unr", 1, 0),
    ("notnbr-unr", 1, 5),
    ("beyond-unr", 1, 2),
    ("addr-unr", 1, 3),
    ("port-unr", 1, 4),
    ("transit", 3, 0),
    ("reassemb", 3, 1),
    ("badhead", 4, 0),
    ("nxthdr", 4, 1),
    ("redironlink", 137, 0),
    ("redirrouter", 137, 1),
];

fn types(af: Af) -> &'static [(&'static str, u8)] {
    if af == Af::Inet6 { ICMP6_TYPES } else { ICMP_TYPES }
}

fn codes(af: Af) -> &'static [(&'static str, u8, u8)] {
    if af == Af::Inet6 { ICMP6_CODES } else { ICMP_CODES }
}

/// A type by name.
pub fn type_by_name(name: &str, af: Af) -> Option<u8> {
    types(af).iter().find(|t| t.0 == name).map(|t| t.1)
}

/// A type's name.
pub fn type_name(ty: u8, af: Af) -> Option<&'static str> {
    types(af).iter().find(|t| t.1 == ty).map(|t| t.0)
}

/// A code of `ty` by name.
pub fn code_by_name(ty: u8, name: &str, af: Af) -> Option<u8> {
    codes(af).iter().find(|c| c.1 == ty && c.0 == name).map(|c| c.2)
}

/// A code's name.
pub fn code_name(ty: u8, code: u8, af: Af) -> Option<&'static str> {
    codes(af).iter().find(|c| c.1 == ty && c.2 == code).map(|c| c.0)
}
