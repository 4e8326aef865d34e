//! The rule grammar: `pass`/`block`/`match` and `anchor` rules, their addresses, ports,
//! users, ICMP types, state options, pools and the rest of parse.y's `filter_opts`.
//!
//! Each function is one parse.y production and makes the same checks with the same messages;
//! what parse.y's `pfrule` action does once the rule is read (default `keep state` and
//! `flags S/SA`, state options, address family decision) is `rule_action::finish_pfrule`.

use crate::addr::{self, AddrKind, Af, HostAddr, iflags};
use crate::ast::{Action, Dir, Endpoint, IdItem, IfItem, Op, PortItem, RuleSpec, flag};
use crate::lex::Tok;
use crate::parse::{Fail, PResult, Parser};

/// `strtoul(s, &ep, 0)` over the whole string, as pfctl's `atoul`.
pub fn atoul(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return if radix == 16 { None } else { Some(0) };
    }
    u64::from_str_radix(digits, radix).ok()
}

/// pfctl's `getservice`: a number or a service name (tcp, then udp).
fn getservice(p: &mut Parser, n: &str) -> PResult<u16> {
    if let Some(v) = atoul(n) {
        if v > 65535 {
            p.error(format!("illegal port value {v}"));
            return Err(Fail::Reported);
        }
        return Ok(v as u16);
    }
    match p.host.service(n, "tcp").or_else(|| p.host.service(n, "udp")) {
        Some(port) => Ok(port),
        None => {
            p.error(format!("unknown port {n}"));
            Err(Fail::Reported)
        }
    }
}

/// pfctl's `parseport`: `a`, `a:b` (with `range`), `a:*` (with `star`); returns (a, b, op)
/// with op `Rrg` for a range, `Irg` for `a:*`, `None` for a single port.
pub(crate) fn parseport(
    p: &mut Parser,
    s: &str,
    range: bool,
    star: bool,
) -> PResult<(u16, u16, Op)> {
    let Some(i) = s.find(':') else {
        return Ok((getservice(p, s)?, 0, Op::None));
    };
    if star && &s[i + 1..] == "*" {
        return Ok((getservice(p, &s[..i])?, 0, Op::Irg));
    }
    if range {
        let a = getservice(p, &s[..i])?;
        let b = getservice(p, &s[i + 1..])?;
        return Ok(if a == b { (a, 0, Op::None) } else { (a, b, Op::Rrg) });
    }
    p.error(format!("port is invalid: {s}"));
    Err(Fail::Reported)
}

fn validate_range(op: Op, a: u16, b: u16) -> bool {
    (op == Op::Rrg && a > b) || (op == Op::Irg && a >= b) || (op == Op::Xrg && a > b)
}

/// `pass|block|match …`
pub fn pfrule(p: &mut Parser) -> PResult<()> {
    let start = p.peek().span;
    let Tok::Word(w) = p.bump().tok else { unreachable!("statement checked the keyword") };
    let action = match w.as_str() {
        "pass" => Action::Pass,
        "match" => Action::Match,
        _ => Action::Block,
    };
    let mut block = (p.blockpolicy, 0u8, DEFAULT_ICMP, DEFAULT_ICMP6);
    if action == Action::Block {
        block = blockspec(p)?;
    } else {
        block.0 = 0;
    }
    let mut spec = rule_head(p, true)?;
    spec.action = action;
    spec.block = block;
    spec.span = start.cover(p.last_span);
    end_of_rule(p)?;
    crate::rule_action::finish_pfrule(p, spec)
}

/// yacc reduces a rule only when the next token can follow it: the end of the line (or the
/// brace closing an anchor body); anything else is a syntax error before the rule's checks run.
pub(crate) fn end_of_rule(p: &mut Parser) -> PResult<()> {
    match p.tok() {
        Tok::Newline | Tok::Eof | Tok::Punct('}') => Ok(()),
        _ => p.syntax("a rule option or the end of the line"),
    }
}

/// ICMP unreachable / port unreachable: `returnicmpdefault`.
pub const DEFAULT_ICMP: u16 = (3 << 8) | 3;
/// ICMP6 destination unreachable / no port: `returnicmp6default`.
pub const DEFAULT_ICMP6: u16 = (1 << 8) | 4;

fn blockspec(p: &mut Parser) -> PResult<(u32, u8, u16, u16)> {
    let policy = p.blockpolicy;
    let Tok::Word(w) = p.tok() else { return Ok((policy, 0, DEFAULT_ICMP, DEFAULT_ICMP6)) };
    Ok(match w.as_str() {
        "drop" => {
            p.bump();
            (0, 0, 0, 0)
        }
        "return-rst" => {
            p.bump();
            let mut ttl = 0;
            if p.eat_punct('(') {
                p.expect_kw("ttl")?;
                let n = p.number("a ttl")?;
                p.expect_punct(')')?;
                if !(0..=255).contains(&n) {
                    p.error(format!("illegal ttl value {n}"));
                    return Err(Fail::Reported);
                }
                ttl = n as u8;
            }
            (flag::RETURNRST, ttl, 0, 0)
        }
        "return-icmp" => {
            p.bump();
            if p.eat_punct('(') {
                let a = reticmp(p, Af::Inet)?;
                let mut b = DEFAULT_ICMP;
                if !p.eat_punct(')') {
                    p.comma();
                    b = reticmp(p, Af::Inet6)?;
                    p.expect_punct(')')?;
                    (flag::RETURNICMP, 0, a, b)
                } else {
                    // pfctl stores the icmp default in the icmp6 slot here.
                    b = if b == DEFAULT_ICMP { DEFAULT_ICMP } else { b };
                    (flag::RETURNICMP, 0, a, b)
                }
            } else {
                (flag::RETURNICMP, 0, DEFAULT_ICMP, DEFAULT_ICMP6)
            }
        }
        "return-icmp6" => {
            p.bump();
            if p.eat_punct('(') {
                let b = reticmp(p, Af::Inet6)?;
                p.expect_punct(')')?;
                (flag::RETURNICMP, 0, DEFAULT_ICMP, b)
            } else {
                (flag::RETURNICMP, 0, DEFAULT_ICMP, DEFAULT_ICMP6)
            }
        }
        "return" => {
            p.bump();
            (flag::RETURN, 0, DEFAULT_ICMP, DEFAULT_ICMP6)
        }
        _ => (policy, 0, DEFAULT_ICMP, DEFAULT_ICMP6),
    })
}

fn reticmp(p: &mut Parser, af: Af) -> PResult<u16> {
    let ty: u16 = if af == Af::Inet { DEFAULT_ICMP >> 8 } else { DEFAULT_ICMP6 >> 8 };
    if let Tok::Number(n) = p.tok() {
        p.bump();
        if !(0..=255).contains(&n) {
            p.error(format!("invalid icmp code {n}"));
            return Err(Fail::Reported);
        }
        return Ok((ty << 8) | n as u16);
    }
    let s = p.string("an icmp code")?;
    let code = match atoul(&s) {
        Some(v) => v,
        None => match crate::icmp::code_by_name(ty as u8, &s, af) {
            Some(c) => u64::from(c),
            None => {
                p.error(format!("unknown icmp code {s}"));
                return Err(Fail::Reported);
            }
        },
    };
    if code > 255 {
        p.error(format!("invalid icmp code {code}"));
        return Err(Fail::Reported);
    }
    Ok((ty << 8) | code as u16)
}

/// `dir logquick interface af proto fromto filter_opts` (`anchor` rules take `quick` only).
pub fn rule_head(p: &mut Parser, with_log: bool) -> PResult<RuleSpec> {
    let mut spec = RuleSpec::default();
    if p.eat_kw("in") {
        spec.dir = Dir::In;
    } else if p.eat_kw("out") {
        spec.dir = Dir::Out;
    }
    if with_log {
        let (log, logif, quick) = logquick(p)?;
        spec.log = log;
        spec.logif = logif;
        spec.quick = quick;
    } else {
        spec.quick = p.eat_kw("quick");
    }
    if p.eat_kw("on") {
        spec.interfaces = Some(interface_list(p)?);
    }
    spec.af = af(p);
    if p.eat_kw("proto") {
        let mut protos = Vec::new();
        if p.eat_punct('{') {
            p.optnl();
            loop {
                protos.push(proto_item(p)?);
                p.optnl();
                if p.eat_punct('}') {
                    break;
                }
                p.comma();
                p.optnl();
            }
        } else {
            protos.push(proto_item(p)?);
        }
        spec.protos = Some(protos);
    }
    if p.eat_kw("all") {
    } else {
        if p.eat_kw("from") {
            spec.src = ipportspec(p)?;
        }
        if p.eat_kw("os") {
            let mut oses = Vec::new();
            if p.eat_punct('{') {
                p.optnl();
                loop {
                    oses.push(p.string("an OS name")?);
                    p.optnl();
                    if p.eat_punct('}') {
                        break;
                    }
                    p.comma();
                    p.optnl();
                }
            } else {
                oses.push(p.string("an OS name")?);
            }
            spec.os = Some(oses);
        }
        if p.eat_kw("to") {
            spec.dst = ipportspec(p)?;
            if spec.dst.hosts.iter().flatten().any(|h| h.addr == AddrKind::UrpfFailed) {
                p.error("\"urpf-failed\" is not permitted in a destination address");
                return Err(Fail::Reported);
            }
        }
    }
    spec.opts = crate::rule_opts::filter_opts(p)?;
    Ok(spec)
}

/// `logquick`: `log [(opts)]` and `quick` in either order; returns (log bits, logif, quick).
pub fn logquick(p: &mut Parser) -> PResult<(u8, u8, bool)> {
    let mut quick = false;
    let mut log = (0u8, 0u8);
    if p.eat_kw("quick") {
        quick = true;
        if p.at_kw("log") {
            log = parse_log(p)?;
        }
    } else if p.at_kw("log") {
        log = parse_log(p)?;
        quick = p.eat_kw("quick");
    }
    Ok((log.0, log.1, quick))
}

fn parse_log(p: &mut Parser) -> PResult<(u8, u8)> {
    p.bump();
    let mut bits = 1u8;
    let mut logif = 0u8;
    if p.eat_punct('(') {
        loop {
            if p.eat_kw("all") {
                bits |= 2;
            } else if p.eat_kw("matches") {
                bits |= 4;
            } else if p.eat_kw("user") {
                bits |= 8;
            } else if p.eat_kw("to") {
                let s = p.string("a pflog interface")?;
                let Some(n) = s.strip_prefix("pflog") else {
                    p.error(format!("{s}: should be a pflog interface"));
                    return Err(Fail::Reported);
                };
                match n.parse::<u8>() {
                    Ok(v) => logif = v,
                    Err(_) => {
                        p.error(format!("{s}: invalid"));
                        return Err(Fail::Reported);
                    }
                }
            } else {
                return p.syntax("`all`, `matches`, `user` or `to`");
            }
            if p.eat_punct(')') {
                break;
            }
            p.comma();
        }
    }
    Ok((bits, logif))
}

/// `if_item_not` or `{ list }`.
pub fn interface_list(p: &mut Parser) -> PResult<Vec<IfItem>> {
    let item = |p: &mut Parser| -> PResult<IfItem> {
        let not = p.eat_punct('!');
        let mut i = if_item(p)?;
        i.not = not;
        Ok(i)
    };
    if p.eat_punct('{') {
        p.optnl();
        let mut out = Vec::new();
        loop {
            out.push(item(p)?);
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
    Ok(vec![item(p)?])
}

/// `if_item`: a name, `any`, or `rdomain N`.
pub fn if_item(p: &mut Parser) -> PResult<IfItem> {
    if p.eat_kw("any") {
        return Ok(IfItem { name: "any".into(), ..IfItem::default() });
    }
    if p.eat_kw("rdomain") {
        let n = p.number("a routing domain")?;
        if !(0..=255).contains(&n) {
            p.error(format!("rdomain {n} outside range"));
        }
        return Ok(IfItem { rdomain: Some(n as i32), ..IfItem::default() });
    }
    let name = p.string("an interface name")?;
    if name.len() >= 16 {
        p.error("interface name too long");
        return Err(Fail::Reported);
    }
    let loopback = p
        .host
        .interfaces()
        .iter()
        .any(|i| (i.name == name || i.groups.contains(&name)) && i.loopback);
    Ok(IfItem { name, loopback, ..IfItem::default() })
}

/// `af`: `inet`, `inet6` or nothing.
pub fn af(p: &mut Parser) -> Af {
    if p.eat_kw("inet") {
        Af::Inet
    } else if p.eat_kw("inet6") {
        Af::Inet6
    } else {
        Af::Any
    }
}

fn proto_item(p: &mut Parser) -> PResult<u8> {
    let v = if let Tok::Number(n) = p.tok() {
        p.bump();
        if !(0..=255).contains(&n) {
            p.error("protocol outside range");
            return Err(Fail::Reported);
        }
        n as u8
    } else {
        let s = p.string("a protocol")?;
        match p.host.protocol_number(&s) {
            Some(n) => n,
            None => {
                p.error(format!("unknown protocol {s}"));
                return Err(Fail::Reported);
            }
        }
    };
    if v == 0 {
        p.error("proto 0 cannot be used");
        return Err(Fail::Reported);
    }
    Ok(v)
}

fn ipportspec(p: &mut Parser) -> PResult<Endpoint> {
    let mut e = Endpoint::default();
    if !p.at_kw("port") {
        e.hosts = ipspec(p)?;
    }
    if p.eat_kw("port") {
        e.ports = Some(portspec(p)?);
    }
    Ok(e)
}

/// `ipspec`: `any`, a host, or a list; `None` stands for any.
fn ipspec(p: &mut Parser) -> PResult<Option<Vec<HostAddr>>> {
    if p.eat_kw("any") {
        return Ok(None);
    }
    if p.peek().tok == Tok::Punct('{') && p.nest >= crate::parse::MAX_LIST_DEPTH {
        p.error(format!("lists nested too deeply (at most {})", crate::parse::MAX_LIST_DEPTH));
        return Err(Fail::Reported);
    }
    if p.eat_punct('{') {
        p.nest += 1;
        let r = ipspec_list(p);
        p.nest -= 1;
        return r;
    }
    Ok(Some(xhost(p)?))
}

fn ipspec_list(p: &mut Parser) -> PResult<Option<Vec<HostAddr>>> {
    {
        p.optnl();
        let mut out: Option<Vec<HostAddr>> = Some(Vec::new());
        let mut first = true;
        loop {
            let item = ipspec(p)?;
            // pfctl: `any` anywhere in a list makes the whole list `any`.
            match (item, first) {
                (None, _) => out = None,
                (Some(v), _) => {
                    if let Some(o) = out.as_mut() {
                        o.extend(v);
                    }
                }
            }
            first = false;
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
}

/// `xhost`: `[!] host`, `[!] no-route`, `[!] urpf-failed`.
pub fn xhost(p: &mut Parser) -> PResult<Vec<HostAddr>> {
    let not = p.eat_punct('!');
    let mut hosts = if p.eat_kw("no-route") {
        vec![HostAddr::new(AddrKind::NoRoute, Af::Any)]
    } else if p.eat_kw("urpf-failed") {
        vec![HostAddr::new(AddrKind::UrpfFailed, Af::Any)]
    } else {
        host(p)?
    };
    for h in &mut hosts {
        h.not = not;
    }
    Ok(hosts)
}

fn resolve(p: &mut Parser, s: &str, span: sift_diag::Span) -> PResult<Vec<HostAddr>> {
    match addr::host(s, p.host) {
        Ok(v) => Ok(v),
        Err(e) => {
            p.bare(e.0, span);
            p.error_at("could not parse host specification", p.last_line, span);
            Err(Fail::Reported)
        }
    }
}

/// `host`: a word with an optional `/bits`, a range, `(if)`, `<table>` or `route label`.
pub fn host(p: &mut Parser) -> PResult<Vec<HostAddr>> {
    let span = p.peek().span;
    match p.tok() {
        Tok::Number(n) => {
            p.bump();
            p.expect_punct('/')?;
            let bits = p.number("a mask length")?;
            resolve(p, &format!("{n}/{bits}"), span)
        }
        Tok::Punct('(') => {
            let mut h = dynaddr(p)?;
            if p.eat_punct('/') {
                let bits = p.number("a mask length")?;
                if !(0..=128).contains(&bits) {
                    p.error("bit number too big");
                    return Err(Fail::Reported);
                }
                addr::set_ipmask(&mut h, Some(bits as u32));
            }
            Ok(vec![h])
        }
        Tok::Punct('<') => {
            p.bump();
            let name = p.string("a table name")?;
            p.expect_punct('>')?;
            if name.len() >= 32 {
                p.error(format!("table name '{name}' too long"));
                return Err(Fail::Reported);
            }
            Ok(vec![HostAddr::new(AddrKind::Table(name), Af::Any)])
        }
        Tok::Word(w) if w == "route" => {
            p.bump();
            let l = p.string("a route label")?;
            if l.len() >= 32 {
                p.error("route label too long, max 31 chars");
                return Err(Fail::Reported);
            }
            Ok(vec![HostAddr::new(AddrKind::RtLabel(l), Af::Any)])
        }
        _ => {
            let s = p.string("an address, `any`, `(interface)` or `<table>`")?;
            if p.eat_punct('/') {
                let bits = p.number("a mask length")?;
                let sp = span.cover(p.peek().span);
                return resolve(p, &format!("{s}/{bits}"), sp);
            }
            if p.eat_punct('-') {
                let e = p.string("an address")?;
                let b = resolve(p, &s, span)?;
                let ee = resolve(p, &e, span)?;
                let ok = b.len() == 1
                    && ee.len() == 1
                    && b[0].af == ee[0].af
                    && matches!(b[0].addr, AddrKind::Mask { .. })
                    && matches!(ee[0].addr, AddrKind::Mask { .. })
                    && full_mask(&b[0])
                    && full_mask(&ee[0]);
                if !ok {
                    p.error("invalid address range");
                    return Err(Fail::Reported);
                }
                let (AddrKind::Mask { addr: from, .. }, AddrKind::Mask { addr: to, .. }) =
                    (&b[0].addr, &ee[0].addr)
                else {
                    unreachable!("checked above")
                };
                let mut h = HostAddr::new(AddrKind::Range { from: *from, to: *to }, b[0].af);
                h.ifindex = b[0].ifindex;
                return Ok(vec![h]);
            }
            resolve(p, &s, span)
        }
    }
}

fn full_mask(h: &HostAddr) -> bool {
    h.addr.mask().is_some_and(|m| addr::unmask(m) == if h.af == Af::Inet { 32 } else { 128 })
}

/// `dynaddr`: `( ifname[:modifiers] )`.
fn dynaddr(p: &mut Parser) -> PResult<HostAddr> {
    p.expect_punct('(')?;
    let s = p.string("an interface name")?;
    p.expect_punct(')')?;
    if !s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
        p.error(format!("invalid interface name '{s}'"));
        return Err(Fail::Reported);
    }
    let mut name = s.as_str();
    let mut flags = 0u8;
    while let Some(i) = name.rfind(':') {
        flags |= match &name[i + 1..] {
            "network" => iflags::NETWORK,
            "broadcast" => iflags::BROADCAST,
            "peer" => iflags::PEER,
            "0" => iflags::NOALIAS,
            _ => {
                p.error(format!("interface {s} has bad modifier"));
                return Err(Fail::Reported);
            }
        };
        name = &name[..i];
    }
    let mode = flags & !iflags::NOALIAS;
    if mode & mode.wrapping_sub(1) != 0 {
        p.error("illegal combination of interface modifiers");
        return Err(Fail::Reported);
    }
    if name.len() >= 16 {
        p.error("interface name too long");
        return Err(Fail::Reported);
    }
    Ok(HostAddr::new(
        AddrKind::Dyn { ifname: name.into(), flags, mask: addr::mask_of(128) },
        Af::Any,
    ))
}

fn portspec(p: &mut Parser) -> PResult<Vec<PortItem>> {
    if p.eat_punct('{') {
        p.optnl();
        let mut out = Vec::new();
        loop {
            out.push(port_item(p)?);
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
    Ok(vec![port_item(p)?])
}

fn unaryop(p: &mut Parser) -> Option<Op> {
    let op = match p.tok() {
        Tok::Punct('=') => Op::Eq,
        Tok::Ne => Op::Ne,
        Tok::Le => Op::Le,
        Tok::Punct('<') => Op::Lt,
        Tok::Ge => Op::Ge,
        Tok::Punct('>') => Op::Gt,
        _ => return None,
    };
    p.bump();
    Some(op)
}

fn port_item(p: &mut Parser) -> PResult<PortItem> {
    if let Some(op) = unaryop(p) {
        let s = p.numberstring("a port")?;
        let (a, b, t) = parseport(p, &s, true, false)?;
        if t != Op::None {
            p.error("':' cannot be used with an other port operator");
            return Err(Fail::Reported);
        }
        return Ok(PortItem { op, a, b });
    }
    let s = p.numberstring("a port, a range or an operator")?;
    let (a, b, t) = parseport(p, &s, true, false)?;
    let binop = match p.tok() {
        Tok::Xrg => Some(Op::Xrg),
        Tok::Irg => Some(Op::Irg),
        _ => None,
    };
    if let Some(op) = binop {
        p.bump();
        let s2 = p.numberstring("a port")?;
        let (a2, _, t2) = parseport(p, &s2, true, false)?;
        if t != Op::None || t2 != Op::None {
            p.error("':' cannot be used with an other port operator");
            return Err(Fail::Reported);
        }
        if validate_range(op, a, a2) {
            p.error("invalid port range");
            return Err(Fail::Reported);
        }
        return Ok(PortItem { op, a, b: a2 });
    }
    if t != Op::None {
        if validate_range(Op::Rrg, a, b) {
            p.error("invalid port range");
            return Err(Fail::Reported);
        }
        return Ok(PortItem { op: Op::Rrg, a, b });
    }
    Ok(PortItem { op: Op::Eq, a, b })
}

pub(crate) fn ids(p: &mut Parser, user: bool) -> PResult<Vec<IdItem>> {
    if p.eat_punct('{') {
        p.optnl();
        let mut out = Vec::new();
        loop {
            out.push(id_item(p, user)?);
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
    Ok(vec![id_item(p, user)?])
}

fn id(p: &mut Parser, user: bool) -> PResult<u32> {
    let what = if user { "user" } else { "group" };
    if let Tok::Number(n) = p.tok() {
        p.bump();
        if !(0..i64::from(u32::MAX)).contains(&n) {
            p.error(format!("illegal {} value {n}", if user { "uid" } else { "gid" }));
            return Err(Fail::Reported);
        }
        return Ok(n as u32);
    }
    let s = p.string(&format!("a {what} name or id"))?;
    if s == "unknown" {
        return Ok(u32::MAX);
    }
    let v = if user { p.host.user(&s) } else { p.host.group(&s) };
    match v {
        Some(v) => Ok(v),
        None => {
            p.error(format!("unknown {what} {s}"));
            Err(Fail::Reported)
        }
    }
}

fn id_item(p: &mut Parser, user: bool) -> PResult<IdItem> {
    let what = if user { "user" } else { "group" };
    if let Some(op) = unaryop(p) {
        let v = id(p, user)?;
        if v == u32::MAX && op != Op::Eq && op != Op::Ne {
            p.error(format!("{what} unknown requires operator = or !="));
            return Err(Fail::Reported);
        }
        return Ok(IdItem { op, a: v, b: v });
    }
    let a = id(p, user)?;
    let binop = match p.tok() {
        Tok::Xrg => Some(Op::Xrg),
        Tok::Irg => Some(Op::Irg),
        _ => None,
    };
    if let Some(op) = binop {
        p.bump();
        let b = id(p, user)?;
        if a == u32::MAX || b == u32::MAX {
            p.error(format!("{what} unknown requires operator = or !="));
            return Err(Fail::Reported);
        }
        return Ok(IdItem { op, a, b });
    }
    Ok(IdItem { op: Op::Eq, a, b: a })
}
