//! The options after a rule's addresses (parse.y's `filter_opts`): flags, ICMP types, TOS,
//! state options, translation and routing pools, scrub options, `set` options, tags, labels.
//!
//! Why apart from the address grammar: these productions are many and independent of each
//! other; each keeps parse.y's checks (`… cannot be redefined`) and messages.

use crate::addr::{self, AddrKind, Af, HostAddr};
use crate::ast::{
    Divert, FilterOpts, IcmpItem, PoolOpts, PoolType, PortItem, Redir, Route, StateOpt, state,
};
use crate::lex::Tok;
use crate::parse::{Fail, PResult, Parser};
use crate::parse_rule::{af, host, ids, if_item, parseport};
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
            match hex.get(i * 8..i * 8 + 8).map(|h| u32::from_str_radix(h, 16)) {
                Some(Ok(v)) => *w = v,
                _ => {
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
            if h.iter().any(|x| !matches!(x.addr, AddrKind::Mask { .. })) {
                p.error("only addresses can be listed for redirection pools ");
                return Err(Fail::Reported);
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
pub(crate) fn filter_opts(p: &mut Parser) -> PResult<FilterOpts> {
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
                if !(0..=i64::from(u32::MAX)).contains(&a)
                    || !(0..=i64::from(u32::MAX)).contains(&b)
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
    let (mut nodf, mut minttl, mut maxmss, mut reass, mut rid) =
        (false, false, false, false, false);
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
