//! Reading rules: `ovs-ofctl add-flow`'s text, one rule a line.
//!
//! A line is `FIELD=VALUE` pairs and bare keywords separated by commas or white space (OVS's
//! `ofputil_parse_key_value`: `:` works as `=`), then `actions=` and the actions to the end of
//! the line. `#` starts a comment; blank lines are skipped. The counters `ovs-ofctl
//! dump-flows` prints (`n_packets`, `n_bytes`, `duration`, `idle_age`, `hard_age`) are read
//! and ignored, so a dump reads back, as in OVS.
//!
//! Where OVS silently lets a later setting win (`tcp,udp`), sift refuses the conflict and
//! points at both; everything else follows OVS: defaults, prerequisites, `drop` alone.

use std::sync::Arc;

use sift_diag::Span;
use sift_wire::{ethertype, ipproto};

use super::error::{FlowError, ParseErrors};
use super::value::{self, Bad};
use super::{Action, Actions, DEFAULT_PRIORITY, Match, PortMap, Rule, SetField};
use crate::key::{Field, NW_FRAG_ANY, NW_FRAG_LATER, TCP_FLAGS_MASK};
use crate::layout::VLAN_PRESENT;

/// Reads every rule of `text` (one a line). Port names resolve through `ports`.
pub fn parse_rules(text: &str, ports: &PortMap) -> Result<Vec<Rule>, ParseErrors> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let mut start = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let end = start + line.trim_end_matches(['\n', '\r']).len();
        let cx = Cx { src: text, ports, line_no: n as u32 + 1, line_start: start };
        match cx.line(start, end) {
            Ok(Some(r)) => rules.push(r),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        start += line.len();
    }
    if errors.is_empty() { Ok(rules) } else { Err(ParseErrors { errors }) }
}

/// Reads one rule (the whole of `text`; a blank or comment-only text is an error).
pub fn parse_rule(text: &str, ports: &PortMap) -> Result<Rule, FlowError> {
    let cx = Cx { src: text, ports, line_no: 1, line_start: 0 };
    cx.line(0, text.len())?.ok_or_else(|| cx.err(Span::empty(0), "expected a rule, found nothing"))
}

/// What a match field needs the match to fix first (OVS's `mf_prereqs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prereq {
    None,
    /// IPv4 or IPv6.
    Ip,
    Ipv4,
    Ipv6,
    Arp,
    /// IPv4 or ARP (`nw_src` is ARP's sender address under `arp`, as in OVS).
    Ipv4OrArp,
    /// TCP, UDP or SCTP over either IP.
    Transport,
    Tcp,
    /// ICMP over IPv4 or ICMPv6 over IPv6.
    Icmp,
}

impl Prereq {
    fn met(self, m: &Match) -> bool {
        let dl = |t: u16| m.is_exact(Field::DlType, t.into());
        let proto = |p: u8| m.is_exact(Field::NwProto, p.into());
        let ip = dl(ethertype::IPV4) || dl(ethertype::IPV6);
        match self {
            Prereq::None => true,
            Prereq::Ip => ip,
            Prereq::Ipv4 => dl(ethertype::IPV4),
            Prereq::Ipv6 => dl(ethertype::IPV6),
            Prereq::Arp => dl(ethertype::ARP),
            Prereq::Ipv4OrArp => dl(ethertype::IPV4) || dl(ethertype::ARP),
            Prereq::Transport => {
                ip && (proto(ipproto::TCP) || proto(ipproto::UDP) || proto(ipproto::SCTP))
            }
            Prereq::Tcp => ip && proto(ipproto::TCP),
            Prereq::Icmp => {
                (dl(ethertype::IPV4) && proto(ipproto::ICMP))
                    || (dl(ethertype::IPV6) && proto(ipproto::ICMPV6))
            }
        }
    }

    fn needs(self) -> &'static str {
        match self {
            Prereq::None => "nothing",
            Prereq::Ip => "`ip` or `ipv6`",
            Prereq::Ipv4 => "`ip` (`dl_type=0x0800`)",
            Prereq::Ipv6 => "`ipv6` (`dl_type=0x86dd`)",
            Prereq::Arp => "`arp` (`dl_type=0x0806`)",
            Prereq::Ipv4OrArp => "`ip` or `arp`",
            Prereq::Transport => "`tcp`, `udp` or `sctp` (or `tcp6`, `udp6`, `sctp6`)",
            Prereq::Tcp => "`tcp` or `tcp6`",
            Prereq::Icmp => "`icmp` or `icmp6`",
        }
    }
}

/// The match keywords.
#[derive(Clone, Copy, Debug)]
enum Kw {
    Priority,
    /// A dump's counters, read back and ignored.
    Ignored,
    /// A protocol shorthand: EtherType and maybe IP protocol.
    Proto(u16, Option<u8>),
    InPort,
    Mac(Field, Prereq),
    DlVlan,
    DlVlanPcp,
    VlanTci,
    DlType,
    Ipv4(Field, Prereq),
    Ipv6(Field),
    /// A number field: field, largest value, prerequisite, whether a `/mask` is allowed.
    Num(Field, u64, Prereq, bool),
    NwTos,
    NwFrag,
    TcpFlags,
}

fn keyword(name: &str) -> Option<Kw> {
    use Field as F;
    use ipproto as p;
    let (v4, v6) = (ethertype::IPV4, ethertype::IPV6);
    Some(match name {
        "priority" => Kw::Priority,
        "n_packets" | "n_bytes" | "duration" | "idle_age" | "hard_age" => Kw::Ignored,
        "ip" => Kw::Proto(v4, None),
        "ipv6" => Kw::Proto(v6, None),
        "arp" => Kw::Proto(ethertype::ARP, None),
        "tcp" => Kw::Proto(v4, Some(p::TCP)),
        "udp" => Kw::Proto(v4, Some(p::UDP)),
        "sctp" => Kw::Proto(v4, Some(p::SCTP)),
        "icmp" => Kw::Proto(v4, Some(p::ICMP)),
        "tcp6" => Kw::Proto(v6, Some(p::TCP)),
        "udp6" => Kw::Proto(v6, Some(p::UDP)),
        "sctp6" => Kw::Proto(v6, Some(p::SCTP)),
        "icmp6" => Kw::Proto(v6, Some(p::ICMPV6)),
        "in_port" => Kw::InPort,
        "dl_src" | "eth_src" => Kw::Mac(F::DlSrc, Prereq::None),
        "dl_dst" | "eth_dst" => Kw::Mac(F::DlDst, Prereq::None),
        "arp_sha" => Kw::Mac(F::ArpSha, Prereq::Arp),
        "arp_tha" => Kw::Mac(F::ArpTha, Prereq::Arp),
        "dl_vlan" => Kw::DlVlan,
        "dl_vlan_pcp" => Kw::DlVlanPcp,
        "vlan_tci" => Kw::VlanTci,
        "dl_type" | "eth_type" => Kw::DlType,
        "nw_src" | "ip_src" => Kw::Ipv4(F::NwSrc, Prereq::Ipv4OrArp),
        "nw_dst" | "ip_dst" => Kw::Ipv4(F::NwDst, Prereq::Ipv4OrArp),
        "arp_spa" => Kw::Ipv4(F::NwSrc, Prereq::Arp),
        "arp_tpa" => Kw::Ipv4(F::NwDst, Prereq::Arp),
        "ipv6_src" => Kw::Ipv6(F::Ipv6Src),
        "ipv6_dst" => Kw::Ipv6(F::Ipv6Dst),
        "nw_proto" | "ip_proto" => Kw::Num(F::NwProto, 255, Prereq::Ip, false),
        "arp_op" => Kw::Num(F::NwProto, 255, Prereq::Arp, false),
        "nw_ttl" => Kw::Num(F::NwTtl, 255, Prereq::Ip, false),
        "nw_tos" => Kw::NwTos,
        "nw_frag" => Kw::NwFrag,
        "tp_src" => Kw::Num(F::TpSrc, 0xffff, Prereq::Transport, true),
        "tp_dst" => Kw::Num(F::TpDst, 0xffff, Prereq::Transport, true),
        "tcp_flags" => Kw::TcpFlags,
        "icmp_type" | "icmpv6_type" => Kw::Num(F::TpSrc, 255, Prereq::Icmp, false),
        "icmp_code" | "icmpv6_code" => Kw::Num(F::TpDst, 255, Prereq::Icmp, false),
        _ => return None,
    })
}

/// TCP flag names in bit order (OVS's `packet_tcp_flag_to_string`).
pub(crate) const TCP_FLAG_NAMES: [&str; 9] =
    ["fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns"];

/// One `key`, `key=value` or `key:value` of a line.
#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    key: &'a str,
    key_span: Span,
    value: Option<(&'a str, Span)>,
}

impl Tok<'_> {
    fn span(&self) -> Span {
        self.value.map_or(self.key_span, |v| self.key_span.cover(v.1))
    }
}

fn is_delim(c: u8) -> bool {
    matches!(c, b',' | b' ' | b'\t' | b'\r' | b'\n')
}

/// Splits `src[pos..end]` into tokens as OVS's `ofputil_parse_key_value` does.
struct Lexer<'a> {
    cx: &'a Cx<'a>,
    src: &'a str,
    pos: usize,
    end: usize,
}

impl<'a> Lexer<'a> {
    fn next(&mut self) -> Result<Option<Tok<'a>>, FlowError> {
        let b = self.src.as_bytes();
        while self.pos < self.end && is_delim(b[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= self.end {
            return Ok(None);
        }
        let start = self.pos;
        while self.pos < self.end && !is_delim(b[self.pos]) && !b"=:(".contains(&b[self.pos]) {
            self.pos += 1;
        }
        let key = &self.src[start..self.pos];
        let key_span = Span::from_range(start..self.pos);
        if self.pos < self.end && b[self.pos] == b'(' {
            return Err(self
                .cx
                .err(Span::from_range(self.pos..self.pos + 1), "unexpected `(`")
                .help("sift reads OVS's `key=value` forms, not its parenthesized actions"));
        }
        if key.is_empty() {
            return Err(self.cx.err(Span::from_range(start..start + 1), "expected a field name"));
        }
        let mut value = None;
        if self.pos < self.end && matches!(b[self.pos], b'=' | b':') {
            self.pos += 1;
            let vs = self.pos;
            while self.pos < self.end && !is_delim(b[self.pos]) {
                self.pos += 1;
            }
            value = Some((&self.src[vs..self.pos], Span::from_range(vs..self.pos)));
        }
        Ok(Some(Tok { key, key_span, value }))
    }
}

struct Cx<'a> {
    src: &'a str,
    ports: &'a PortMap,
    /// The line being read: its number and where it starts.
    line_no: u32,
    line_start: usize,
}

/// A match being built, with who set what (for conflicts and prerequisites).
struct Builder {
    m: Match,
    /// (field, bits set, token span), in order.
    set_by: Vec<(Field, u128, Span)>,
    /// (keyword as written, prerequisite, token span), in order.
    prereqs: Vec<(String, Prereq, Span)>,
    priority: Option<(u16, Span)>,
}

impl Cx<'_> {
    fn err(&self, span: Span, message: impl Into<String>) -> FlowError {
        FlowError::new(self.src, self.line_no, self.line_start, span, message)
    }

    fn bad(&self, span: Span, b: Bad) -> FlowError {
        let e = self.err(span, b.0);
        match b.1 {
            Some(h) => e.help(h),
            None => e,
        }
    }

    /// The rule on `src[start..end]` (one line), `None` when blank or a comment.
    fn line(&self, start: usize, end: usize) -> Result<Option<Rule>, FlowError> {
        let end = self.src[start..end].find('#').map_or(end, |i| start + i);
        if self.src[start..end].trim().is_empty() {
            return Ok(None);
        }
        let mut lex = Lexer { cx: self, src: self.src, pos: start, end };
        let mut b =
            Builder { m: Match::any(), set_by: Vec::new(), prereqs: Vec::new(), priority: None };
        let mut actions_at = None;
        while let Some(t) = lex.next()? {
            if matches!(t.key, "actions" | "action") && t.value.is_some() {
                actions_at = t.value.map(|v| v.1.start as usize);
                break;
            }
            self.field(&mut b, t)?;
        }
        let Some(at) = actions_at else {
            return Err(self
                .err(Span::empty(end as u32), "must specify an action")
                .help("end the rule with `actions=…` (`actions=drop` drops)"));
        };
        for (name, p, span) in &b.prereqs {
            if !p.met(&b.m) {
                return Err(self
                    .err(*span, format!("`{name}` needs {} in the match", p.needs()))
                    .help("OVS refuses a field whose protocol the match does not fix (OFPBMC_BAD_PREREQ)"));
            }
        }
        let actions = self.actions(at, end, &b.m)?;
        Ok(Some(Rule {
            priority: b.priority.map_or(DEFAULT_PRIORITY, |p| p.0),
            matches: b.m,
            actions: Arc::new(actions),
        }))
    }

    /// Sets `mask` bits of field `f` to `value`, refusing a conflict with an earlier setting.
    fn set(
        &self,
        b: &mut Builder,
        f: Field,
        value: u128,
        mask: u128,
        span: Span,
    ) -> Result<(), FlowError> {
        let (v0, m0) = b.m.field(f);
        let clash = (v0 ^ value) & m0 & mask;
        if clash != 0 {
            let earlier = b.set_by.iter().rev().find(|(g, bits, _)| *g == f && bits & clash != 0);
            let mut e = self.err(
                span,
                format!("`{}` conflicts with an earlier setting", &self.src[span.range()]),
            );
            if let Some((_, _, s)) = earlier {
                e = e.aux(*s, "set here");
            }
            return Err(e);
        }
        b.m.set_bits(f, value, mask);
        b.set_by.push((f, mask, span));
        Ok(())
    }

    fn value<'t>(&self, t: &Tok<'t>) -> Result<(&'t str, Span), FlowError> {
        t.value.filter(|v| !v.0.is_empty()).ok_or_else(|| {
            self.err(t.span(), format!("field `{}` missing value", t.key))
                .help(format!("write `{}=VALUE`", t.key))
        })
    }

    fn field(&self, b: &mut Builder, t: Tok<'_>) -> Result<(), FlowError> {
        let Some(kw) = keyword(t.key) else {
            let e = self.err(t.key_span, format!("unknown keyword `{}`", t.key));
            return Err(if t.key == "actions" || t.key == "action" {
                e.help("write `actions=…`")
            } else {
                e.help(
                    "sift's match fields: priority, in_port, dl_src, dl_dst, dl_vlan, \
                     dl_vlan_pcp, vlan_tci, dl_type, ip, ipv6, arp, tcp, udp, sctp, icmp (and \
                     tcp6, udp6, sctp6, icmp6), nw_src, nw_dst, ipv6_src, ipv6_dst, nw_proto, \
                     nw_tos, nw_ttl, nw_frag, tp_src, tp_dst, tcp_flags, icmp_type, icmp_code, \
                     arp_op, arp_spa, arp_tpa, arp_sha, arp_tha",
                )
            });
        };
        let span = t.span();
        let prereq = |b: &mut Builder, p: Prereq| b.prereqs.push((t.key.to_string(), p, span));
        match kw {
            Kw::Ignored => {
                self.value(&t)?;
            }
            Kw::Priority => {
                let (v, vs) = self.value(&t)?;
                let p = value::num(v, 0xffff, "priority").map_err(|e| self.bad(vs, e))? as u16;
                if let Some((old, os)) = b.priority
                    && old != p
                {
                    return Err(self
                        .err(span, "`priority` conflicts with an earlier setting")
                        .aux(os, "set here"));
                }
                b.priority = Some((p, span));
            }
            Kw::Proto(dl, proto) => {
                if t.value.is_some() {
                    return Err(self.err(span, format!("`{}` takes no value", t.key)));
                }
                self.set(b, Field::DlType, dl.into(), 0xffff, span)?;
                if let Some(p) = proto {
                    self.set(b, Field::NwProto, p.into(), 0xff, span)?;
                }
            }
            Kw::InPort => {
                let (v, vs) = self.value(&t)?;
                let p = value::port(v, self.ports).map_err(|e| self.bad(vs, e))?;
                self.set(b, Field::InPort, p.into(), Field::InPort.full(), span)?;
            }
            Kw::Mac(f, p) => {
                let (v, vs) = self.value(&t)?;
                let (v, m) = value::masked_mac(v).map_err(|e| self.bad(vs, e))?;
                let n = |a: [u8; 6]| a.iter().fold(0u128, |x, &y| (x << 8) | u128::from(y));
                self.set(b, f, n(v), n(m), span)?;
                prereq(b, p);
            }
            Kw::DlVlan => {
                let (v, vs) = self.value(&t)?;
                let vid = value::num(v, 0xffff, "VLAN id").map_err(|e| self.bad(vs, e))?;
                // OVS: 0xffff means "no tag"; otherwise a VID and the present bit.
                let (val, mask) = match vid {
                    0xffff => (0, 0xffff),
                    0..=0xfff => (u128::from(VLAN_PRESENT) | u128::from(vid), 0x1fff),
                    _ => {
                        return Err(self
                            .err(vs, format!("invalid VLAN id `{v}`"))
                            .help("expected 0 to 4095, or 0xffff for frames without a tag"));
                    }
                };
                self.set(b, Field::VlanTci, val, mask, span)?;
            }
            Kw::DlVlanPcp => {
                let (v, vs) = self.value(&t)?;
                let pcp = value::num(v, 7, "VLAN priority").map_err(|e| self.bad(vs, e))?;
                let val = u128::from(VLAN_PRESENT) | (u128::from(pcp) << 13);
                self.set(b, Field::VlanTci, val, 0xf000, span)?;
            }
            Kw::VlanTci => {
                let (v, vs) = self.value(&t)?;
                let (v, m) =
                    value::masked_num(v, 0xffff, "VLAN TCI").map_err(|e| self.bad(vs, e))?;
                self.set(b, Field::VlanTci, v.into(), m.into(), span)?;
            }
            Kw::DlType => {
                let (v, vs) = self.value(&t)?;
                let ty = value::num(v, 0xffff, "EtherType").map_err(|e| self.bad(vs, e))?;
                self.set(b, Field::DlType, ty.into(), 0xffff, span)?;
            }
            Kw::Ipv4(f, p) => {
                let (v, vs) = self.value(&t)?;
                let (v, m) = value::masked_ipv4(v).map_err(|e| self.bad(vs, e))?;
                self.set(b, f, v.into(), m.into(), span)?;
                prereq(b, p);
            }
            Kw::Ipv6(f) => {
                let (v, vs) = self.value(&t)?;
                let (v, m) = value::masked_ipv6(v).map_err(|e| self.bad(vs, e))?;
                self.set(b, f, v, m, span)?;
                prereq(b, Prereq::Ipv6);
            }
            Kw::Num(f, max, p, maskable) => {
                let (v, vs) = self.value(&t)?;
                let (v, m) = if maskable {
                    value::masked_num(v, max, t.key)
                } else {
                    value::num(v, max, t.key).map(|v| (v, max))
                }
                .map_err(|e| self.bad(vs, e))?;
                // Exact 8-bit values sit in 16-bit fields (ICMP type and code): compare all.
                let m = if m == max { f.full() as u64 } else { m };
                self.set(b, f, v.into(), m.into(), span)?;
                prereq(b, p);
            }
            Kw::NwTos => {
                let (v, vs) = self.value(&t)?;
                let tos = value::num(v, 255, "nw_tos").map_err(|e| self.bad(vs, e))?;
                if tos & 3 != 0 {
                    return Err(self
                        .err(vs, format!("invalid nw_tos `{v}`"))
                        .help("nw_tos is the DSCP in the TOS byte: a multiple of 4 (the low 2 bits are ECN)"));
                }
                self.set(b, Field::NwTos, tos.into(), 0xfc, span)?;
                prereq(b, Prereq::Ip);
            }
            Kw::NwFrag => {
                let (v, vs) = self.value(&t)?;
                let (val, mask) = match v {
                    "no" => (0, NW_FRAG_ANY),
                    "yes" => (NW_FRAG_ANY, NW_FRAG_ANY),
                    "first" => (NW_FRAG_ANY, NW_FRAG_ANY | NW_FRAG_LATER),
                    "later" => (NW_FRAG_ANY | NW_FRAG_LATER, NW_FRAG_ANY | NW_FRAG_LATER),
                    "not_later" => (0, NW_FRAG_LATER),
                    _ => {
                        return Err(self
                            .err(vs, format!("invalid nw_frag `{v}`"))
                            .help("expected no, yes, first, later or not_later"));
                    }
                };
                self.set(b, Field::NwFrag, val.into(), mask.into(), span)?;
                prereq(b, Prereq::Ip);
            }
            Kw::TcpFlags => {
                let (v, vs) = self.value(&t)?;
                let (val, mask) = tcp_flags(v).map_err(|e| self.bad(vs, e))?;
                self.set(b, Field::TcpFlags, val.into(), mask.into(), span)?;
                prereq(b, Prereq::Tcp);
            }
        }
        Ok(())
    }

    fn actions(&self, start: usize, end: usize, m: &Match) -> Result<Actions, FlowError> {
        let mut lex = Lexer { cx: self, src: self.src, pos: start, end };
        let mut list = Vec::new();
        let mut drop = None;
        while let Some(t) = lex.next()? {
            if t.key == "drop" && t.value.is_none() {
                drop = Some(t.span());
                continue;
            }
            list.push(self.action(t, m)?);
        }
        if let Some(span) = drop
            && !list.is_empty()
        {
            return Err(self.err(span, "`drop` must not be accompanied by any other action"));
        }
        Ok(Actions::new(list))
    }

    fn action(&self, t: Tok<'_>, m: &Match) -> Result<Action, FlowError> {
        let span = t.span();
        let lower = t.key.to_ascii_lowercase();
        if t.value.is_none() {
            match lower.as_str() {
                "in_port" => return Ok(Action::InPort),
                "pop_vlan" | "strip_vlan" => return Ok(Action::PopVlan),
                _ => {}
            }
            if t.key.starts_with(|c: char| c.is_ascii_digit()) || self.ports.number(t.key).is_some()
            {
                let p = value::port(t.key, self.ports).map_err(|e| self.bad(span, e))?;
                return Ok(Action::Output(p));
            }
        }
        let need_value = || {
            t.value.filter(|v| !v.0.is_empty()).ok_or_else(|| {
                self.err(span, format!("`{}` needs a value", t.key))
                    .help(format!("write `{}:VALUE`", t.key))
            })
        };
        let set =
            |f: &str, v: &str, vs: Span| self.set_field(f, t.key_span, v, vs, m).map(Action::Set);
        match t.key {
            "output" => {
                let (v, vs) = need_value()?;
                if v.eq_ignore_ascii_case("in_port") {
                    return Ok(Action::InPort);
                }
                value::port(v, self.ports).map(Action::Output).map_err(|e| self.bad(vs, e))
            }
            "push_vlan" => {
                let (v, vs) = need_value()?;
                let tpid = value::num(v, 0xffff, "push_vlan ethertype")
                    .map_err(|e| self.bad(vs, e))? as u16;
                if tpid != ethertype::VLAN && tpid != ethertype::QINQ {
                    return Err(self
                        .err(vs, format!("`{v}` is not a VLAN ethertype"))
                        .help("push_vlan takes 0x8100 (802.1Q) or 0x88a8 (802.1ad)"));
                }
                Ok(Action::PushVlan(tpid))
            }
            "set_field" => {
                let (v, vs) = need_value()?;
                let Some(arrow) = v.find("->") else {
                    return Err(self.err(vs, "`set_field` needs `VALUE->FIELD`"));
                };
                let value_span = Span::new(vs.start, vs.start + arrow as u32);
                let field_span = Span::new(value_span.end + 2, vs.end);
                let field = &v[arrow + 2..];
                self.set_field(field, field_span, &v[..arrow], value_span, m).map(Action::Set)
            }
            k if k.starts_with("mod_") => {
                let (v, vs) = need_value()?;
                let field = match k {
                    "mod_dl_src" => "eth_src",
                    "mod_dl_dst" => "eth_dst",
                    "mod_nw_src" => "ip_src",
                    "mod_nw_dst" => "ip_dst",
                    "mod_nw_tos" => "nw_tos",
                    "mod_nw_ttl" => "nw_ttl",
                    "mod_tp_src" => "tp_src",
                    "mod_tp_dst" => "tp_dst",
                    "mod_vlan_vid" => "vlan_vid",
                    "mod_vlan_pcp" => "vlan_pcp",
                    _ => return Err(self.unknown_action(&t)),
                };
                set(field, v, vs)
            }
            _ => Err(self.unknown_action(&t)),
        }
    }

    fn unknown_action(&self, t: &Tok<'_>) -> FlowError {
        self.err(t.key_span, format!("unknown action `{}`", t.key)).help(
            "sift's actions: output:PORT, PORT, in_port, drop, set_field:VALUE->FIELD, \
             mod_dl_src/dst, mod_nw_src/dst/tos/ttl, mod_tp_src/dst, mod_vlan_vid/pcp, \
             push_vlan:TPID, pop_vlan, strip_vlan",
        )
    }

    fn set_field(
        &self,
        field: &str,
        fs: Span,
        v: &str,
        vs: Span,
        m: &Match,
    ) -> Result<SetField, FlowError> {
        let bad = |e| self.bad(vs, e);
        let (sf, prereq) = match field {
            "eth_src" | "dl_src" => (SetField::EthSrc(value::mac(v).map_err(bad)?), Prereq::None),
            "eth_dst" | "dl_dst" => (SetField::EthDst(value::mac(v).map_err(bad)?), Prereq::None),
            "ip_src" | "nw_src" | "ip_dst" | "nw_dst" => {
                let (a, mask) = value::masked_ipv4(v).map_err(bad)?;
                if mask != u32::MAX {
                    return Err(self.err(vs, "sift's set_field takes no mask"));
                }
                let a = a.to_be_bytes();
                let sf = if field.ends_with("src") {
                    SetField::Ipv4Src(a)
                } else {
                    SetField::Ipv4Dst(a)
                };
                (sf, Prereq::Ipv4)
            }
            "ipv6_src" | "ipv6_dst" => {
                let (a, mask) = value::masked_ipv6(v).map_err(bad)?;
                if mask != u128::MAX {
                    return Err(self.err(vs, "sift's set_field takes no mask"));
                }
                let a = a.to_be_bytes();
                let sf = if field.ends_with("src") {
                    SetField::Ipv6Src(a)
                } else {
                    SetField::Ipv6Dst(a)
                };
                (sf, Prereq::Ipv6)
            }
            "nw_tos" => {
                let tos = value::num(v, 255, "nw_tos").map_err(bad)? as u8;
                if tos & 3 != 0 {
                    return Err(self
                        .err(vs, format!("invalid nw_tos `{v}`"))
                        .help("nw_tos is the DSCP in the TOS byte: a multiple of 4 (the low 2 bits are ECN)"));
                }
                (SetField::NwTos(tos), Prereq::Ip)
            }
            "nw_ttl" => {
                (SetField::NwTtl(value::num(v, 255, "nw_ttl").map_err(bad)? as u8), Prereq::Ip)
            }
            "tp_src" | "tcp_src" | "udp_src" | "sctp_src" => (
                SetField::TpSrc(value::num(v, 0xffff, "port").map_err(bad)? as u16),
                Prereq::Transport,
            ),
            "tp_dst" | "tcp_dst" | "udp_dst" | "sctp_dst" => (
                SetField::TpDst(value::num(v, 0xffff, "port").map_err(bad)? as u16),
                Prereq::Transport,
            ),
            "vlan_vid" => (
                SetField::VlanVid(value::num(v, 0xfff, "VLAN id").map_err(bad)? as u16),
                Prereq::None,
            ),
            "vlan_pcp" => (
                SetField::VlanPcp(value::num(v, 7, "VLAN priority").map_err(bad)? as u8),
                Prereq::None,
            ),
            "in_port" => (SetField::InPort(value::port(v, self.ports).map_err(bad)?), Prereq::None),
            _ => {
                return Err(self.err(fs, format!("sift cannot set field `{field}`")).help(
                    "settable: eth_src, eth_dst, ip_src, ip_dst, ipv6_src, ipv6_dst, nw_tos, \
                     nw_ttl, tp_src, tp_dst, vlan_vid, vlan_pcp, in_port",
                ));
            }
        };
        if !prereq.met(m) {
            return Err(self
                .err(fs, format!("set_field `{field}` lacks correct prerequisites"))
                .help(format!(
                    "the match must have {} (OVS: OFPBAC_MATCH_INCONSISTENT)",
                    prereq.needs()
                )));
        }
        Ok(sf)
    }
}

/// `tcp_flags`: `VALUE[/MASK]`, `+flag-flag…` (the named bits set or clear, the others
/// wildcarded) or `flag|flag…` (exactly those bits set).
fn tcp_flags(text: &str) -> Result<(u16, u16), Bad> {
    let max = u64::from(TCP_FLAGS_MASK);
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        let (v, m) = value::masked_num(text, max, "tcp_flags")?;
        return Ok((v as u16, m as u16));
    }
    let bit = |name: &str| {
        TCP_FLAG_NAMES.iter().position(|n| *n == name).map(|i| 1u16 << i).ok_or_else(|| {
            Bad(
                format!("unknown TCP flag `{name}`"),
                Some(format!("TCP flags: {}", TCP_FLAG_NAMES.join(", "))),
            )
        })
    };
    if text.starts_with(['+', '-']) {
        let (mut v, mut m) = (0u16, 0u16);
        let mut rest = text;
        while !rest.is_empty() {
            let on = rest.starts_with('+');
            if !on && !rest.starts_with('-') {
                return Err(Bad(
                    format!("invalid tcp_flags `{text}`"),
                    Some("write +flag or -flag for each flag".into()),
                ));
            }
            let body = &rest[1..];
            let n = body.find(['+', '-']).unwrap_or(body.len());
            let b = bit(&body[..n])?;
            if m & b != 0 {
                return Err(Bad(format!("TCP flag `{}` given twice", &body[..n]), None));
            }
            m |= b;
            if on {
                v |= b;
            }
            rest = &body[n..];
        }
        return Ok((v, m));
    }
    let mut v = 0;
    for name in text.split('|') {
        v |= bit(name)?;
    }
    Ok((v, TCP_FLAGS_MASK))
}
