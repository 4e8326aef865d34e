//! The rule grammar: `pass`/`block`/`match` and `anchor` rules, their addresses, ports,
//! users, ICMP types, state options, pools and the rest of parse.y's `filter_opts`.
//!
//! Each function is one parse.y production and makes the same checks with the same messages;
//! what parse.y's `pfrule` action does once the rule is read (default `keep state` and
//! `flags S/SA`, state options, address family decision) is [`finish_pfrule`].

use crate::addr::{self, AddrKind, Af, HostAddr, iflags};
use crate::ast::{
    Action, Dir, Divert, Endpoint, FilterOpts, IcmpItem, IdItem, IfItem, Op, PoolOpts, PoolType,
    PortItem, Redir, Route, RuleSpec, StateOpt, flag, state,
};
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
fn parseport(p: &mut Parser, s: &str, range: bool, star: bool) -> PResult<(u16, u16, Op)> {
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
    spec.span = start.cover(p.peek().span);
    end_of_rule(p)?;
    finish_pfrule(p, spec)
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
    spec.opts = filter_opts(p)?;
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
    let loopback = p.host.interfaces().iter().any(|i| {
        (i.name == name || i.groups.iter().any(|g| *g == name)) && i.loopback
    });
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
    if p.eat_punct('{') {
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
    Ok(Some(xhost(p)?))
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

fn ids(p: &mut Parser, user: bool) -> PResult<Vec<IdItem>> {
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

/// `flag`: a word of `FSRPAUEW`.
fn flag_word(p: &mut Parser) -> PResult<u8> {
    let s = p.string("TCP flags (letters of FSRPAUEW)")?;
    let mut f = 0u8;
    for c in s.chars() {
        match "FSRPAUEW".find(c) {
            Some(i) => f |= 1 << i,
            None => {
                p.error(format!("bad flags {s}"));
                return Err(Fail::Reported);
            }
        }
    }
    Ok(f)
}

fn icmp_list(p: &mut Parser, v6: bool) -> PResult<Vec<IcmpItem>> {
    if p.eat_punct('{') {
        p.optnl();
        let mut out = Vec::new();
        loop {
            out.push(icmp_item(p, v6)?);
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
    Ok(vec![icmp_item(p, v6)?])
}

fn icmp_item(p: &mut Parser, v6: bool) -> PResult<IcmpItem> {
    let af = if v6 { Af::Inet6 } else { Af::Inet };
    let proto = if v6 { 58 } else { 1 };
    let six = if v6 { "6" } else { "" };
    let ty: u8 = if let Tok::Number(n) = p.tok() {
        p.bump();
        if !(0..=255).contains(&n) {
            p.error(format!("illegal icmp{six}-type {n}"));
            return Err(Fail::Reported);
        }
        n as u8
    } else {
        let s = p.string("an icmp type")?;
        match crate::icmp::type_by_name(&s, af) {
            Some(t) => t,
            None => {
                p.error(format!("unknown icmp{six}-type {s}"));
                return Err(Fail::Reported);
            }
        }
    };
    let mut code = 0u8;
    if p.eat_kw("code") {
        if let Tok::Number(n) = p.tok() {
            p.bump();
            if !(0..=255).contains(&n) {
                p.error(format!("illegal icmp-code {n}"));
                return Err(Fail::Reported);
            }
            code = n as u8 + 1;
        } else {
            let s = p.string("an icmp code")?;
            match crate::icmp::code_by_name(ty, &s, af) {
                Some(c) => code = c + 1,
                None => {
                    p.error(format!("unknown icmp{six}-code {s}"));
                    return Err(Fail::Reported);
                }
            }
        }
    }
    Ok(IcmpItem { ty: ty.wrapping_add(1), code, proto })
}

fn tos(p: &mut Parser) -> PResult<u8> {
    if let Tok::Number(n) = p.tok() {
        p.bump();
        if !(0..=255).contains(&n) {
            p.error(format!("illegal tos value {n}"));
            return Err(Fail::Reported);
        }
        return Ok(n as u8);
    }
    let s = p.string("a tos value")?;
    let v: i64 = match s.as_str() {
        "lowdelay" => 0x10,
        "throughput" => 0x08,
        "reliability" => 0x04,
        _ if s.starts_with("0x") => i64::from_str_radix(&s[2..], 16).unwrap_or(256),
        _ => 256,
    };
    if !(0..=255).contains(&v) {
        p.error(format!("illegal tos value {s}"));
        return Err(Fail::Reported);
    }
    Ok(v as u8)
}

/// `state_opt_list`: comma-separated state options.
pub fn state_opt_list(p: &mut Parser) -> PResult<Vec<StateOpt>> {
    let mut out = vec![state_opt_item(p)?];
    loop {
        let comma = p.peek().tok == Tok::Punct(',');
        if comma {
            p.bump();
        }
        let Tok::Word(w) = p.tok() else {
            if comma {
                return p.syntax("a state option");
            }
            return Ok(out);
        };
        let starts = matches!(
            w.as_str(),
            "max"
                | "no-sync"
                | "max-src-states"
                | "max-src-conn"
                | "max-src-conn-rate"
                | "overload"
                | "max-src-nodes"
                | "source-track"
                | "if-bound"
                | "floating"
                | "sloppy"
                | "pflow"
        ) || !crate::lex::is_keyword(&w);
        if !starts {
            if comma {
                return p.syntax("a state option");
            }
            return Ok(out);
        }
        out.push(state_opt_item(p)?);
    }
}

fn positive(p: &mut Parser, n: i64) -> PResult<u32> {
    if !(0..=i64::from(u32::MAX)).contains(&n) {
        p.error("only positive values permitted");
        return Err(Fail::Reported);
    }
    Ok(n as u32)
}

fn state_opt_item(p: &mut Parser) -> PResult<StateOpt> {
    let Tok::Word(w) = p.tok() else { return p.syntax("a state option") };
    let kw = w.clone();
    if !crate::lex::is_keyword(&kw) {
        p.bump();
        let n = p.number("a number of seconds")?;
        let n = positive(p, n)?;
        let Some(i) = crate::ast::TIMEOUTS.iter().position(|t| *t == kw) else {
            p.error(format!("illegal timeout name {kw}"));
            return Err(Fail::Reported);
        };
        if !kw.contains('.') {
            p.error(format!("illegal state timeout {kw}"));
            return Err(Fail::Reported);
        }
        return Ok(StateOpt::Timeout(i, n));
    }
    p.bump();
    Ok(match kw.as_str() {
        "max" => {
            let n = p.number("a number")?;
            StateOpt::Max(positive(p, n)?)
        }
        "no-sync" => StateOpt::NoSync,
        "max-src-states" => {
            let n = p.number("a number")?;
            StateOpt::MaxSrcStates(positive(p, n)?)
        }
        "max-src-conn" => {
            let n = p.number("a number")?;
            StateOpt::MaxSrcConn(positive(p, n)?)
        }
        "max-src-conn-rate" => {
            let a = p.number("a number")?;
            p.expect_punct('/')?;
            let b = p.number("a number of seconds")?;
            let (a, b) = (positive(p, a)?, positive(p, b)?);
            StateOpt::MaxSrcConnRate(a, b)
        }
        "overload" => {
            p.expect_punct('<')?;
            let t = p.string("a table name")?;
            p.expect_punct('>')?;
            if t.len() >= 32 {
                p.error(format!("table name '{t}' too long"));
                return Err(Fail::Reported);
            }
            let mut fl = 0;
            if p.eat_kw("flush") {
                fl = 1;
                if p.eat_kw("global") {
                    fl |= 2;
                }
            }
            StateOpt::Overload(t, fl)
        }
        "max-src-nodes" => {
            let n = p.number("a number")?;
            StateOpt::MaxSrcNodes(positive(p, n)?)
        }
        "source-track" => {
            if p.eat_kw("global") {
                StateOpt::SrcTrack(2)
            } else if p.eat_kw("rule") {
                StateOpt::SrcTrack(1)
            } else {
                StateOpt::SrcTrack(0)
            }
        }
        "if-bound" => StateOpt::StateLock(true),
        "floating" => StateOpt::StateLock(false),
        "sloppy" => StateOpt::Sloppy,
        "pflow" => StateOpt::Pflow,
        _ => return p.syntax("a state option"),
    })
}

fn hashkey(p: &mut Parser) -> PResult<[u32; 4]> {
    if !p.at_string() {
        // pfctl draws a random key; sift uses a fixed one so output is reproducible.
        return Ok([0x5eed_0001, 0x5eed_0002, 0x5eed_0003, 0x5eed_0004]);
    }
    let mut parts = vec![p.string("a key")?];
    while p.at_string() {
        parts.push(p.string("a key")?);
    }
    let s = parts.join(" ");
    if let Some(hex) = s.strip_prefix("0x") {
        if s.len() != 34 {
            p.error("hex key must be 128 bits (32 hex digits) long");
            return Err(Fail::Reported);
        }
        let mut k = [0u32; 4];
        for (i, w) in k.iter_mut().enumerate() {
            match u32::from_str_radix(&hex[i * 8..i * 8 + 8], 16) {
                Ok(v) => *w = v,
                Err(_) => {
                    p.error("invalid hex key");
                    return Err(Fail::Reported);
                }
            }
        }
        return Ok(k);
    }
    let d = crate::md5::digest(s.as_bytes());
    let mut k = [0u32; 4];
    for (i, w) in k.iter_mut().enumerate() {
        *w = u32::from_be_bytes([d[i * 4], d[i * 4 + 1], d[i * 4 + 2], d[i * 4 + 3]]);
    }
    Ok(k)
}

fn pool_opts(p: &mut Parser) -> PResult<PoolOpts> {
    let mut o = PoolOpts::default();
    loop {
        let Tok::Word(w) = p.tok() else { return Ok(o) };
        let ty = match w.as_str() {
            "bitmask" => Some(PoolType::Bitmask),
            "random" => Some(PoolType::Random),
            "source-hash" => Some(PoolType::SourceHash),
            "round-robin" => Some(PoolType::RoundRobin),
            "least-states" => Some(PoolType::LeastStates),
            "static-port" | "sticky-address" => None,
            _ => return Ok(o),
        };
        p.bump();
        match ty {
            Some(t) => {
                if o.ty != PoolType::None {
                    p.error("pool type cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.ty = t;
                if t == PoolType::SourceHash {
                    o.key = Some(hashkey(p)?);
                }
            }
            None if w == "static-port" => {
                if o.static_port {
                    p.error("static-port cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.static_port = true;
            }
            None => {
                if o.sticky {
                    p.error("sticky-address cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.sticky = true;
            }
        }
    }
}

/// `redirspec`: a host or `{ hosts }` (with optional `weight`).
fn redirspec(p: &mut Parser) -> PResult<Vec<HostAddr>> {
    let weight = |p: &mut Parser| -> PResult<()> {
        if p.eat_kw("weight") {
            let n = p.number("a weight")?;
            if !(1..=65535).contains(&n) {
                p.error("weight out of range");
                return Err(Fail::Reported);
            }
        }
        Ok(())
    };
    if p.eat_punct('{') {
        p.optnl();
        let mut out = Vec::new();
        loop {
            let h = host(p)?;
            if !out.is_empty() || true {
                if h.iter().any(|x| !matches!(x.addr, AddrKind::Mask { .. })) {
                    p.error("only addresses can be listed for redirection pools ");
                    return Err(Fail::Reported);
                }
            }
            out.extend(h);
            weight(p)?;
            p.optnl();
            if p.eat_punct('}') {
                return Ok(out);
            }
            p.comma();
            p.optnl();
        }
    }
    let h = host(p)?;
    weight(p)?;
    Ok(h)
}

/// `redirpool pool_opts`
fn redirpool(p: &mut Parser, with_port: bool) -> PResult<Redir> {
    let hosts = redirspec(p)?;
    let mut r = Redir { hosts, ..Redir::default() };
    if with_port && p.eat_kw("port") {
        let s = p.numberstring("a port")?;
        let (a, b, t) = parseport(p, &s, true, true)?;
        r.rport = PortItem { op: t, a, b };
    }
    r.pool = pool_opts(p)?;
    Ok(r)
}

/// `filter_opts`
fn filter_opts(p: &mut Parser) -> PResult<FilterOpts> {
    let mut o = FilterOpts::default();
    loop {
        let not = p.peek().tok == Tok::Punct('!');
        if not {
            p.bump();
            if p.eat_kw("tagged") {
                let t = string_words(p, "a tag")?;
                o.tagged = Some((true, t));
                continue;
            }
            if p.eat_kw("received-on") {
                let i = if_item(p)?;
                if o.rcv.is_some() {
                    p.error("cannot respecify received-on");
                    return Err(Fail::Reported);
                }
                o.rcv = Some((true, i.name));
                continue;
            }
            return p.syntax("`tagged` or `received-on` after `!`");
        }
        let Tok::Word(w) = p.tok() else { return Ok(o) };
        match w.as_str() {
            "user" | "group" => {
                p.bump();
                let mut v = ids(p, w == "user")?;
                let list = if w == "user" { &mut o.uid } else { &mut o.gid };
                v.append(list);
                *list = v;
            }
            "flags" => {
                p.bump();
                let (a, b) = if p.eat_kw("any") {
                    (0, 0)
                } else if p.eat_punct('/') {
                    (0, flag_word(p)?)
                } else {
                    let a = flag_word(p)?;
                    p.expect_punct('/')?;
                    (a, flag_word(p)?)
                };
                if o.flags_given {
                    p.error("flags cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.flags_given = true;
                o.flags |= a;
                o.flagset |= b;
            }
            "icmp-type" | "icmp6-type" => {
                p.bump();
                let v = icmp_list(p, w == "icmp6-type")?;
                if !o.icmp.is_empty() {
                    p.error("icmp-type cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.icmp = v;
            }
            "prio" => {
                p.bump();
                let n = p.number("a priority")?;
                if o.prio.is_some() {
                    p.error("prio cannot be redefined");
                    return Err(Fail::Reported);
                }
                if !(0..=7).contains(&n) {
                    p.error("prio must be 0 - 7");
                    return Err(Fail::Reported);
                }
                o.prio = Some(n as u8);
            }
            "tos" => {
                p.bump();
                let t = tos(p)?;
                if o.tos.is_some() {
                    p.error("tos cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.tos = Some(t);
            }
            "no" | "keep" | "modulate" | "synproxy" => {
                p.bump();
                let kind = match w.as_str() {
                    "no" => 0,
                    "keep" => state::NORMAL,
                    "modulate" => state::MODULATE,
                    _ => state::SYNPROXY,
                };
                p.expect_kw("state")?;
                let mut opts = Vec::new();
                if kind != 0 && p.eat_punct('(') {
                    opts = state_opt_list(p)?;
                    p.expect_punct(')')?;
                }
                if o.keep.is_some() {
                    p.error("modulate or keep cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.keep = Some((kind, opts));
            }
            "fragment" => {
                p.bump();
                o.fragment = true;
            }
            "allow-opts" => {
                p.bump();
                o.allow_opts = true;
            }
            "label" => {
                p.bump();
                let l = p.string("a label in quotes")?;
                if o.label.is_some() {
                    p.error("label cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.label = Some(l);
            }
            "queue" => {
                p.bump();
                let q = qname(p)?;
                if o.queue.is_some() {
                    p.error("queue cannot be redefined");
                    return Err(Fail::Reported);
                }
                o.queue = Some(q);
            }
            "tag" => {
                p.bump();
                o.tag = Some(string_words(p, "a tag")?);
            }
            "tagged" => {
                p.bump();
                o.tagged = Some((false, string_words(p, "a tag")?));
            }
            "probability" => {
                p.bump();
                let v = if let Tok::Number(n) = p.tok() {
                    p.bump();
                    n as f64
                } else {
                    let s = p.string("a probability")?;
                    let (num, pct) = match s.strip_suffix('%') {
                        Some(x) => (x, true),
                        None => (s.as_str(), false),
                    };
                    match num.parse::<f64>() {
                        Ok(v) if !num.is_empty() => {
                            if pct {
                                v * 0.01
                            } else {
                                v
                            }
                        }
                        _ => {
                            p.error(format!("invalid probability: {s}"));
                            return Err(Fail::Reported);
                        }
                    }
                };
                let x = (v * f64::from(u32::MAX) + 0.5).floor();
                if !(0.0..=f64::from(u32::MAX)).contains(&x) {
                    p.error(format!("invalid probability: {}%", v * 100.0));
                    return Err(Fail::Reported);
                }
                o.prob = (x as u32).max(1);
            }
            "rtable" => {
                p.bump();
                let n = p.number("a routing table id")?;
                if !(0..=255).contains(&n) {
                    p.error("invalid rtable id");
                    return Err(Fail::Reported);
                }
                if n != 0 {
                    p.error(format!("rtable {n} does not exist"));
                    return Err(Fail::Reported);
                }
                o.rtable = Some(n as i32);
            }
            "divert-to" => {
                p.bump();
                let s = p.string("an address")?;
                p.expect_kw("port")?;
                let ps = p.numberstring("a port")?;
                let (port, _, _) = parseport(p, &ps, false, false)?;
                if o.divert != Divert::None {
                    p.error("more than one divert option");
                    return Err(Fail::Reported);
                }
                let Ok(h) = addr::host(&s, p.host) else {
                    p.error(format!("could not parse divert address: {s}"));
                    return Err(Fail::Reported);
                };
                if port == 0 {
                    p.error("invalid divert port: 0");
                    return Err(Fail::Reported);
                }
                o.divert = Divert::To(h, port);
            }
            "divert-reply" => {
                p.bump();
                if o.divert != Divert::None {
                    p.error("more than one divert option");
                    return Err(Fail::Reported);
                }
                o.divert = Divert::Reply;
            }
            "divert-packet" => {
                p.bump();
                p.expect_kw("port")?;
                let ps = p.numberstring("a port")?;
                let (port, _, _) = parseport(p, &ps, false, false)?;
                if o.divert != Divert::None {
                    p.error("more than one divert option");
                    return Err(Fail::Reported);
                }
                if p.reassemble.0 {
                    o.scrub_tcp = true;
                }
                if port == 0 {
                    p.error("invalid divert port: 0");
                    return Err(Fail::Reported);
                }
                o.divert = Divert::Packet(port);
            }
            "scrub" => {
                p.bump();
                p.expect_punct('(')?;
                scrub_opts(p, &mut o)?;
                p.expect_punct(')')?;
            }
            "nat-to" | "binat-to" => {
                p.bump();
                let mut r = redirpool(p, true)?;
                if o.nat.is_some() {
                    p.error("cannot respecify nat-to/binat-to");
                    return Err(Fail::Reported);
                }
                if w == "binat-to" {
                    r.binat = true;
                    r.pool.static_port = true;
                }
                o.nat = Some(r);
            }
            "af-to" => {
                p.bump();
                let target = af(p);
                p.expect_kw("from")?;
                let mut from = redirpool(p, true)?;
                let to = if p.eat_kw("to") { Some(redirpool(p, true)?) } else { None };
                if o.nat.is_some() {
                    p.error("cannot respecify af-to");
                    return Err(Fail::Reported);
                }
                if target == Af::Any {
                    p.error("no target address family specified");
                    return Err(Fail::Reported);
                }
                from.af = target;
                if let Some(mut to) = to {
                    if from.hosts.first().is_some_and(|h| h.af.is_set() && h.af != target)
                        || to.hosts.first().is_some_and(|h| h.af.is_set() && h.af != target)
                    {
                        p.error("af-to addresses must be in the target address family");
                        return Err(Fail::Reported);
                    }
                    to.af = target;
                    o.rdr = Some(to);
                } else {
                    o.rdr = Some(Redir::default());
                }
                o.nat = Some(from);
                o.afto = true;
            }
            "rdr-to" => {
                p.bump();
                let r = redirpool(p, true)?;
                if o.rdr.is_some() {
                    p.error("cannot respecify rdr-to");
                    return Err(Fail::Reported);
                }
                o.rdr = Some(r);
            }
            "route-to" | "reply-to" | "dup-to" => {
                p.bump();
                let hosts = redirspec(p)?;
                let pool = pool_opts(p)?;
                if o.route.is_some() {
                    p.error("cannot respecify route-to/reply-to/dup-to");
                    return Err(Fail::Reported);
                }
                let kind = match w.as_str() {
                    "route-to" => Route::RouteTo,
                    "reply-to" => Route::ReplyTo,
                    _ => Route::DupTo,
                };
                o.route = Some((kind, Redir { hosts, pool, ..Redir::default() }));
            }
            "received-on" => {
                p.bump();
                let i = if_item(p)?;
                if o.rcv.is_some() {
                    p.error("cannot respecify received-on");
                    return Err(Fail::Reported);
                }
                o.rcv = Some((false, i.name));
            }
            "once" => {
                p.bump();
                o.once = true;
            }
            "max-pkt-rate" => {
                p.bump();
                let a = p.number("a number")?;
                p.expect_punct('/')?;
                let b = p.number("a number of seconds")?;
                if !(0..=i64::from(u32::MAX)).contains(&a) || !(0..=i64::from(u32::MAX)).contains(&b)
                {
                    p.error("only positive values permitted");
                    return Err(Fail::Reported);
                }
                if o.pktrate.is_some() {
                    p.error("cannot respecify max-pkt-rate");
                    return Err(Fail::Reported);
                }
                o.pktrate = Some((a as u32, b as u32));
            }
            "set" => {
                p.bump();
                if p.eat_punct('(') {
                    loop {
                        filter_set(p, &mut o)?;
                        if p.eat_punct(')') {
                            break;
                        }
                        p.comma();
                    }
                } else {
                    filter_set(p, &mut o)?;
                }
            }
            _ => return Ok(o),
        }
    }
}

/// pfctl's `string`: one or more STRINGs joined by spaces.
fn string_words(p: &mut Parser, what: &str) -> PResult<String> {
    let mut parts = vec![p.string(what)?];
    while p.at_string() {
        parts.push(p.string(what)?);
    }
    Ok(parts.join(" "))
}

fn qname(p: &mut Parser) -> PResult<(String, Option<String>)> {
    let defined = |p: &mut Parser, q: &str| -> PResult<()> {
        if p.ruleset.queues.iter().any(|x| x.name == q) {
            Ok(())
        } else {
            p.error(format!("queue {q} is not defined"));
            Err(Fail::Reported)
        }
    };
    if p.eat_punct('(') {
        let a = p.string("a queue name")?;
        let mut b = None;
        if !p.eat_punct(')') {
            p.comma();
            b = Some(p.string("a queue name")?);
            p.expect_punct(')')?;
        }
        defined(p, &a)?;
        if let Some(b) = &b {
            defined(p, b)?;
        }
        return Ok((a, b));
    }
    let a = p.string("a queue name")?;
    defined(p, &a)?;
    Ok((a, None))
}

fn filter_set(p: &mut Parser, o: &mut FilterOpts) -> PResult<()> {
    if p.eat_kw("prio") {
        let (a, b) = if p.eat_punct('(') {
            let a = p.number("a priority")?;
            p.comma();
            let b = p.number("a priority")?;
            p.expect_punct(')')?;
            (a, b)
        } else {
            let a = p.number("a priority")?;
            (a, a)
        };
        if !(0..=7).contains(&a) || !(0..=7).contains(&b) {
            p.error("prio must be 0 - 7");
            return Err(Fail::Reported);
        }
        if o.set_prio.is_some() {
            p.error("prio cannot be redefined");
            return Err(Fail::Reported);
        }
        o.set_prio = Some((a as u8, b as u8));
    } else if p.eat_kw("queue") {
        let q = qname(p)?;
        if o.queue.is_some() {
            p.error("queue cannot be redefined");
            return Err(Fail::Reported);
        }
        o.queue = Some(q);
    } else if p.eat_kw("tos") {
        let t = tos(p)?;
        if o.set_tos.is_some() {
            p.error("tos cannot be respecified");
            return Err(Fail::Reported);
        }
        o.set_tos = Some(t);
    } else if p.eat_kw("delay") {
        let n = p.number("a delay in ms")?;
        if o.delay.is_some() {
            p.error("delay cannot be respecified");
            return Err(Fail::Reported);
        }
        if !(0..=0xffff).contains(&n) {
            p.error(format!("illegal delay value {n} (0-65535)"));
            return Err(Fail::Reported);
        }
        o.delay = Some(n as u16);
    } else {
        return p.syntax("`prio`, `queue`, `tos` or `delay`");
    }
    Ok(())
}

fn scrub_opts(p: &mut Parser, o: &mut FilterOpts) -> PResult<()> {
    let (mut nodf, mut minttl, mut maxmss, mut reass, mut rid) = (false, false, false, false, false);
    loop {
        if p.eat_kw("no-df") {
            if nodf {
                p.error("no-df cannot be respecified");
                return Err(Fail::Reported);
            }
            nodf = true;
            o.nodf = true;
        } else if p.eat_kw("min-ttl") {
            let n = p.number("a ttl")?;
            if minttl {
                p.error("min-ttl cannot be respecified");
                return Err(Fail::Reported);
            }
            if !(0..=255).contains(&n) {
                p.error(format!("illegal min-ttl value {n}"));
                return Err(Fail::Reported);
            }
            minttl = true;
            o.min_ttl = n as u8;
        } else if p.eat_kw("max-mss") {
            let n = p.number("a segment size")?;
            if maxmss {
                p.error("max-mss cannot be respecified");
                return Err(Fail::Reported);
            }
            if !(0..=65535).contains(&n) {
                p.error(format!("illegal max-mss value {n}"));
                return Err(Fail::Reported);
            }
            maxmss = true;
            o.max_mss = n as u16;
        } else if p.eat_kw("reassemble") {
            let s = p.string("`tcp`")?;
            if !s.eq_ignore_ascii_case("tcp") {
                p.error(format!("scrub reassemble supports only tcp, not '{s}'"));
                return Err(Fail::Reported);
            }
            if reass {
                p.error("reassemble tcp cannot be respecified");
                return Err(Fail::Reported);
            }
            reass = true;
            o.scrub_tcp = true;
        } else if p.eat_kw("random-id") {
            if rid {
                p.error("random-id cannot be respecified");
                return Err(Fail::Reported);
            }
            rid = true;
            o.randomid = true;
        } else {
            return p.syntax("a scrub option");
        }
        if p.peek().tok == Tok::Punct(')') {
            return Ok(());
        }
        p.comma();
    }
}

/// What parse.y's `pfrule` action does once the rule is read, then list expansion.
pub fn finish_pfrule(p: &mut Parser, spec: RuleSpec) -> PResult<()> {
    let mut r = crate::ast::Rule { action: spec.action, ..crate::ast::Rule::default() };
    let (bflag, ttl, icmp, icmp6) = spec.block;
    if spec.action == Action::Block {
        r.rule_flag |= bflag;
        if bflag == flag::RETURNRST {
            r.return_ttl = ttl;
        }
        r.return_icmp = icmp;
        r.return_icmp6 = icmp6;
    }
    r.direction = spec.dir;
    r.log = spec.log;
    r.logif = spec.logif;
    r.quick = spec.quick;
    r.af = spec.af;
    filteropts_to_rule(p, &mut r, &spec.opts, false)?;
    if spec.opts.afto && spec.opts.route.is_some() {
        p.error("af-to cannot be used together with route-to, reply-to, dup-to");
        return Err(Fail::Reported);
    }
    if spec.opts.flags_given || spec.os.is_some() {
        if let Some(protos) = &spec.protos
            && !protos.contains(&6)
        {
            if spec.opts.flags_given && (spec.opts.flags != 0 || spec.opts.flagset != 0) {
                p.error("flags only apply to tcp");
            }
            if spec.os.is_some() {
                p.error("OS fingerprinting only apply to tcp");
            }
            if spec.opts.flags != 0 || spec.opts.flagset != 0 || spec.os.is_some() {
                return Err(Fail::Reported);
            }
        }
    }
    let mut defaults = false;
    let mut opts: Vec<StateOpt> = Vec::new();
    match &spec.opts.keep {
        Some((k, o)) => {
            r.keep_state = *k;
            opts = o.clone();
        }
        None => {
            if r.action == Action::Pass {
                r.keep_state = state::NORMAL;
                opts = p.state_defaults.clone().unwrap_or_default();
                defaults = true;
            }
        }
    }
    let _ = defaults;
    let (mut srctrack, mut statelock, mut adaptive) = (None::<u8>, false, false);
    for o in &opts {
        match o {
            StateOpt::Max(n) => {
                if r.max_states != 0 {
                    p.error("state option 'max' multiple definitions");
                    return Err(Fail::Reported);
                }
                r.max_states = *n;
            }
            StateOpt::NoSync => {
                if r.rule_flag & flag::NOSYNC != 0 {
                    p.error("state option 'sync' multiple definitions");
                    return Err(Fail::Reported);
                }
                r.rule_flag |= flag::NOSYNC;
            }
            StateOpt::SrcTrack(t) => {
                if srctrack.is_some() {
                    p.error("state option 'source-track' multiple definitions");
                    return Err(Fail::Reported);
                }
                srctrack = Some(*t);
                r.rule_flag |= flag::SRCTRACK;
            }
            StateOpt::MaxSrcStates(n) => {
                if r.max_src_states != 0 {
                    p.error("state option 'max-src-states' multiple definitions");
                    return Err(Fail::Reported);
                }
                if *n == 0 {
                    p.error("'max-src-states' must be > 0");
                    return Err(Fail::Reported);
                }
                r.max_src_states = *n;
                r.rule_flag |= flag::SRCTRACK;
            }
            StateOpt::Overload(t, f) => {
                if !r.overload.is_empty() {
                    p.error("multiple 'overload' table definitions");
                    return Err(Fail::Reported);
                }
                r.overload = t.clone();
                r.flush = *f;
            }
            StateOpt::MaxSrcConn(n) => {
                if r.max_src_conn != 0 {
                    p.error("state option 'max-src-conn' multiple definitions");
                    return Err(Fail::Reported);
                }
                if *n == 0 {
                    p.error("'max-src-conn' must be > 0");
                    return Err(Fail::Reported);
                }
                r.max_src_conn = *n;
                r.rule_flag |= flag::SRCTRACK | flag::RULESRCTRACK;
            }
            StateOpt::MaxSrcConnRate(a, b) => {
                if r.max_src_conn_rate.0 != 0 {
                    p.error("state option 'max-src-conn-rate' multiple definitions");
                    return Err(Fail::Reported);
                }
                if *a == 0 || *b == 0 {
                    p.error("'max-src-conn-rate' values must be > 0");
                    return Err(Fail::Reported);
                }
                if *a > 2000 * 1000 * 1000 / 1000 {
                    p.error(format!("'max-src-conn-rate' maximum rate must be < {}", 2_000_000));
                    return Err(Fail::Reported);
                }
                r.max_src_conn_rate = (*a, *b);
                r.rule_flag |= flag::SRCTRACK | flag::RULESRCTRACK;
            }
            StateOpt::MaxSrcNodes(n) => {
                if r.max_src_nodes != 0 {
                    p.error("state option 'max-src-nodes' multiple definitions");
                    return Err(Fail::Reported);
                }
                if *n == 0 {
                    p.error("'max-src-nodes' must be > 0");
                    return Err(Fail::Reported);
                }
                r.max_src_nodes = *n;
                r.rule_flag |= flag::SRCTRACK | flag::RULESRCTRACK;
            }
            StateOpt::StateLock(b) => {
                if statelock {
                    p.error("state locking option: multiple definitions");
                    return Err(Fail::Reported);
                }
                statelock = true;
                if *b {
                    r.rule_flag |= flag::IFBOUND;
                }
            }
            StateOpt::Sloppy => {
                if r.rule_flag & flag::STATESLOPPY != 0 {
                    p.error("state sloppy option: multiple definitions");
                    return Err(Fail::Reported);
                }
                r.rule_flag |= flag::STATESLOPPY;
            }
            StateOpt::Pflow => {
                if r.rule_flag & flag::PFLOW != 0 {
                    p.error("state pflow option: multiple definitions");
                    return Err(Fail::Reported);
                }
                r.rule_flag |= flag::PFLOW;
            }
            StateOpt::Timeout(i, s) => {
                if *i == crate::ast::TM_ADAPTIVE_START || *i == crate::ast::TM_ADAPTIVE_END {
                    adaptive = true;
                }
                if r.timeout[*i] != 0 {
                    p.error(format!(
                        "state timeout {} multiple definitions",
                        crate::ast::TIMEOUTS[*i]
                    ));
                    return Err(Fail::Reported);
                }
                r.timeout[*i] = *s;
            }
        }
    }
    if r.action == Action::Pass
        && r.flags == 0
        && r.flagset == 0
        && !spec.opts.fragment
        && !spec.opts.flags_given
        && r.keep_state != 0
    {
        r.flags = 0x02;
        r.flagset = 0x12;
    }
    if !adaptive && r.max_states != 0 {
        r.timeout[crate::ast::TM_ADAPTIVE_START] = (r.max_states / 10) * 6;
        r.timeout[crate::ast::TM_ADAPTIVE_END] = (r.max_states / 10) * 12;
    }
    if r.rule_flag & flag::SRCTRACK != 0 {
        let global = srctrack == Some(2);
        if global && r.max_src_nodes != 0 {
            p.error("'max-src-nodes' is incompatible with 'source-track global'");
            return Err(Fail::Reported);
        }
        if global && r.max_src_conn != 0 {
            p.error("'max-src-conn' is incompatible with 'source-track global'");
            return Err(Fail::Reported);
        }
        if global && r.max_src_conn_rate.1 != 0 {
            p.error("'max-src-conn-rate' is incompatible with 'source-track global'");
            return Err(Fail::Reported);
        }
        if r.timeout[crate::ast::TM_SRC_NODE] < r.max_src_conn_rate.1 {
            r.timeout[crate::ast::TM_SRC_NODE] = r.max_src_conn_rate.1;
        }
        if srctrack == Some(1) {
            r.rule_flag |= flag::RULESRCTRACK;
        }
    }
    if r.keep_state != 0 && !statelock && p.default_ifbound {
        r.rule_flag |= flag::IFBOUND;
    }
    decide_af(&spec.src.hosts, &mut r.af);
    decide_af(&spec.dst.hosts, &mut r.af);
    if let Some((rt, _)) = &spec.opts.route {
        if *rt != Route::DupTo && r.direction == Dir::InOut {
            p.error("direction must be explicit with rules that specify routing");
            return Err(Fail::Reported);
        }
        r.rt = *rt;
    }
    crate::expand::divertspec(p, &mut r, &spec.opts.divert)?;
    crate::expand::expand_rule(p, r, &spec, None);
    Ok(())
}

/// parse.y's `decide_address_family`: a list whose hosts share one family decides it.
fn decide_af(hosts: &Option<Vec<HostAddr>>, af: &mut Af) {
    let Some(h) = hosts else { return };
    if af.is_set() || h.is_empty() {
        return;
    }
    let first = h[0].af;
    *af = if h.iter().all(|x| x.af == first) { first } else { Af::Any };
}

/// parse.y's `filteropts_to_rule`.
pub fn filteropts_to_rule(
    p: &mut Parser,
    r: &mut crate::ast::Rule,
    o: &FilterOpts,
    anchor: bool,
) -> PResult<()> {
    if o.once {
        if (r.action != Action::Pass && r.action != Action::Block) || anchor {
            p.error("'once' only applies to pass/block rules");
            return Err(Fail::Reported);
        }
        r.rule_flag |= flag::ONCE;
    }
    r.keep_state = o.keep.as_ref().map_or(0, |k| k.0);
    if let Some(pr) = o.pktrate {
        r.pktrate = pr;
    }
    r.prob = o.prob;
    r.rtableid = o.rtable;
    r.tos = o.tos.unwrap_or(0);
    if o.nodf {
        r.scrub_flags |= crate::ast::scrub::NODF;
    }
    if o.randomid {
        r.scrub_flags |= crate::ast::scrub::RANDOMID;
    }
    r.min_ttl = o.min_ttl;
    r.max_mss = o.max_mss;
    if let Some(t) = &o.tag {
        if t.len() >= 64 {
            p.error("tag too long, max 63 chars");
            return Err(Fail::Reported);
        }
        r.tag = t.clone();
    }
    if let Some((not, t)) = &o.tagged {
        if t.len() >= 64 {
            p.error("tag too long, max 63 chars");
            return Err(Fail::Reported);
        }
        r.match_tag = t.clone();
        r.match_tag_not = *not;
    }
    if let Some(l) = &o.label {
        if l.len() >= 64 {
            p.error("rule label too long (max 63 chars)");
            return Err(Fail::Reported);
        }
        r.label = l.clone();
    }
    if o.afto {
        r.rule_flag |= flag::AFTO;
    }
    r.flags = o.flags;
    r.flagset = o.flagset;
    if o.flags & o.flagset != o.flags {
        p.error("flags always false");
        return Err(Fail::Reported);
    }
    if let Some((q, pq)) = &o.queue {
        r.qname = q.clone();
        r.pqname = pq.clone().unwrap_or_default();
    }
    if o.fragment {
        r.rule_flag |= flag::FRAGMENT;
    }
    r.allow_opts = o.allow_opts;
    if o.scrub_tcp {
        r.scrub_flags |= crate::ast::scrub::SCRUB_TCP;
    }
    if let Some(pr) = o.prio {
        r.prio = if pr == 0 { 0xff } else { pr };
    }
    if let Some((a, b)) = o.set_prio {
        r.set_prio = [a, b];
        r.scrub_flags |= crate::ast::scrub::SETPRIO;
    }
    if let Some(t) = o.set_tos {
        r.scrub_flags |= crate::ast::scrub::SETTOS;
        r.set_tos = t;
    }
    if let Some(d) = o.delay {
        r.delay = d;
        r.rule_flag |= flag::SETDELAY;
    }
    Ok(())
}

/// The `anchorrule` action: checks, then expansion with the anchor attached.
pub fn finish_anchor_rule(
    p: &mut Parser,
    spec: RuleSpec,
    call: String,
    ruleset: usize,
) -> PResult<()> {
    let mut r = crate::ast::Rule {
        direction: spec.dir,
        quick: spec.quick,
        af: spec.af,
        anchor: Some(crate::ast::AnchorCall { name: call, ruleset }),
        ..crate::ast::Rule::default()
    };
    if (spec.opts.flags_given || spec.os.is_some())
        && let Some(protos) = &spec.protos
        && !protos.contains(&6)
    {
        if spec.opts.flags_given {
            p.error("flags only apply to tcp");
        }
        if spec.os.is_some() {
            p.error("OS fingerprinting only applies to tcp");
        }
        return Err(Fail::Reported);
    }
    filteropts_to_rule(p, &mut r, &spec.opts, true)?;
    if spec.opts.keep.is_some() {
        p.error("cannot specify state handling on anchors");
        return Err(Fail::Reported);
    }
    if spec.opts.route.is_some() {
        p.error("cannot specify route handling on anchors");
        return Err(Fail::Reported);
    }
    decide_af(&spec.src.hosts, &mut r.af);
    decide_af(&spec.dst.hosts, &mut r.af);
    let mut spec = spec;
    spec.opts.nat = None;
    spec.opts.rdr = None;
    spec.opts.route = None;
    crate::expand::expand_rule(p, r, &spec, None);
    Ok(())
}
