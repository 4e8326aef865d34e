//! pfctl's canonical printing (`pfctl -nv`): rules, tables, and anchors with their bodies.
//!
//! The order of the parts and their spelling follow pfctl's `print_rule`, `print_fromto`,
//! `print_pool`, `print_tabledef` exactly, since the regression tests compare bytes: ports and
//! users print as numbers, the address family is always shown once decided, `flags S/SA` is
//! shown because it was made explicit, state options only when one differs from the default.

use std::fmt::Write as _;

use crate::addr::{self, AddrKind, Af};
use crate::ast::{
    Action, Dir, IdItem, Op, Pool, PoolType, PortItem, Route, Rule, Ruleset, TIMEOUTS, TableDef,
    TableEntry, flag, scrub, state,
};
use crate::expand::{NAT_PORT_HIGH, NAT_PORT_LOW};
use crate::host::Host;

fn op(out: &mut String, op: Op, a1: &str, a2: &str) {
    let _ = match op {
        Op::Irg => write!(out, " {a1} >< {a2}"),
        Op::Xrg => write!(out, " {a1} <> {a2}"),
        Op::Eq => write!(out, " = {a1}"),
        Op::Ne => write!(out, " != {a1}"),
        Op::Lt => write!(out, " < {a1}"),
        Op::Le => write!(out, " <= {a1}"),
        Op::Gt => write!(out, " > {a1}"),
        Op::Ge => write!(out, " >= {a1}"),
        Op::Rrg => write!(out, " {a1}:{a2}"),
        Op::None => Ok(()),
    };
}

fn port(out: &mut String, p: &PortItem) {
    out.push_str(" port");
    op(out, p.op, &p.a.to_string(), &p.b.to_string());
}

fn ugid(out: &mut String, id: &IdItem, what: &str) {
    let _ = write!(out, " {what}");
    if id.a == u32::MAX && (id.op == Op::Eq || id.op == Op::Ne) {
        op(out, id.op, "unknown", &id.b.to_string());
    } else {
        op(out, id.op, &id.a.to_string(), &id.b.to_string());
    }
}

fn flags(out: &mut String, f: u8) {
    for (i, c) in "FSRPAUEW".chars().enumerate() {
        if f & (1 << i) != 0 {
            out.push(c);
        }
    }
}

fn pool(out: &mut String, pl: &Pool, af: Af, nat: bool, rdr: bool) {
    if !pl.ifname.is_empty() {
        if let AddrKind::Mask { addr, .. } = &pl.addr
            && !addr::zero_af(addr, af)
        {
            out.push_str(&addr::format_addr(&pl.addr, af));
            out.push('@');
        }
        out.push_str(&pl.ifname);
    } else {
        out.push_str(&addr::format_addr(&pl.addr, af));
    }
    let (p1, p2) = (pl.proxy_port[0], pl.proxy_port[1]);
    if nat {
        if (p1 != NAT_PORT_LOW || p2 != NAT_PORT_HIGH) && (p1 != 0 || p2 != 0) {
            if p1 == p2 {
                let _ = write!(out, " port {p1}");
            } else {
                let _ = write!(out, " port {p1}:{p2}");
            }
        }
    } else if rdr && p1 != 0 {
        let _ = write!(out, " port {p1}");
        if p2 != 0 && p2 != p1 {
            let _ = write!(out, ":{p2}");
        }
    }
    match pl.ty {
        PoolType::None => {}
        PoolType::Bitmask => out.push_str(" bitmask"),
        PoolType::Random => out.push_str(" random"),
        PoolType::SourceHash => {
            let k = pl.key;
            let _ = write!(out, " source-hash 0x{:08x}{:08x}{:08x}{:08x}", k[0], k[1], k[2], k[3]);
        }
        PoolType::RoundRobin => out.push_str(" round-robin"),
        PoolType::LeastStates => out.push_str(" least-states"),
    }
    if pl.sticky {
        out.push_str(" sticky-address");
    }
    if nat && p1 == 0 && p2 == 0 {
        out.push_str(" static-port");
    }
}

/// pfctl's `print_rule` for `r`, whose anchor call (if any) prints as `anchor_call`.
pub fn rule(r: &Rule, host: &dyn Host) -> String {
    let mut o = String::new();
    match &r.anchor {
        Some(a) => {
            let last = a.name.rsplit('/').next().unwrap_or("");
            if last.starts_with('_') {
                o.push_str("anchor");
            } else {
                let _ = write!(o, "anchor \"{}\"", a.name);
            }
        }
        None => o.push_str(match r.action {
            Action::Pass => "pass",
            Action::Block => "block",
            Action::Match => "match",
        }),
    }
    let anchor = r.anchor.is_some();
    if r.action == Action::Block {
        if r.rule_flag & flag::RETURN != 0 {
            o.push_str(" return");
        } else if r.rule_flag & flag::RETURNRST != 0 {
            if r.return_ttl == 0 {
                o.push_str(" return-rst");
            } else {
                let _ = write!(o, " return-rst(ttl {})", r.return_ttl);
            }
        } else if r.rule_flag & flag::RETURNICMP != 0 {
            let c4 =
                crate::icmp::code_name((r.return_icmp >> 8) as u8, r.return_icmp as u8, Af::Inet);
            let c6 = crate::icmp::code_name(
                (r.return_icmp6 >> 8) as u8,
                r.return_icmp6 as u8,
                Af::Inet6,
            );
            let n4 = c4.map_or_else(|| (r.return_icmp & 255).to_string(), str::to_string);
            let n6 = c6.map_or_else(|| (r.return_icmp6 & 255).to_string(), str::to_string);
            let _ = match r.af {
                Af::Inet => write!(o, " return-icmp({n4})"),
                Af::Inet6 => write!(o, " return-icmp6({n6})"),
                Af::Any => write!(o, " return-icmp({n4}, {n6})"),
            };
        } else {
            o.push_str(" drop");
        }
    }
    match r.direction {
        Dir::In => o.push_str(" in"),
        Dir::Out => o.push_str(" out"),
        Dir::InOut => {}
    }
    if r.log != 0 {
        o.push_str(" log");
        if r.log & !1 != 0 || r.logif != 0 {
            let mut parts = Vec::new();
            if r.log & 2 != 0 {
                parts.push("all".to_string());
            }
            if r.log & 4 != 0 {
                parts.push("matches".to_string());
            }
            if r.log & 8 != 0 {
                parts.push("user".to_string());
            }
            if r.logif != 0 {
                parts.push(format!("to pflog{}", r.logif));
            }
            let _ = write!(o, " ({})", parts.join(", "));
        }
    }
    if r.quick {
        o.push_str(" quick");
    }
    if !r.ifname.is_empty() {
        let _ = write!(o, " on {}{}", if r.ifnot { "! " } else { "" }, r.ifname);
    }
    if let Some(rd) = r.onrdomain {
        let _ = write!(o, " on {}rdomain {rd}", if r.ifnot { "! " } else { "" });
    }
    match r.af {
        Af::Inet => o.push_str(" inet"),
        Af::Inet6 => o.push_str(" inet6"),
        Af::Any => {}
    }
    if r.proto != 0 {
        match host.protocol_name(r.proto) {
            Some(n) => {
                let _ = write!(o, " proto {n}");
            }
            None => {
                let _ = write!(o, " proto {}", r.proto);
            }
        }
    }
    // from/to
    if r.src.addr.is_any()
        && r.dst.addr.is_any()
        && !r.src.neg
        && !r.dst.neg
        && r.src.port.op == Op::None
        && r.dst.port.op == Op::None
        && r.os.is_none()
    {
        o.push_str(" all");
    } else {
        o.push_str(" from ");
        if r.src.neg {
            o.push_str("! ");
        }
        o.push_str(&addr::format_addr(&r.src.addr, r.af));
        if r.src.port.op != Op::None {
            port(&mut o, &r.src.port);
        }
        if let Some(os) = &r.os {
            let _ = write!(o, " os \"{os}\"");
        }
        o.push_str(" to ");
        if r.dst.neg {
            o.push_str("! ");
        }
        o.push_str(&addr::format_addr(&r.dst.addr, r.af));
        if r.dst.port.op != Op::None {
            port(&mut o, &r.dst.port);
        }
    }
    if let Some((not, name)) = &r.rcv {
        let _ = write!(o, " {}received-on {name}", if *not { "!" } else { "" });
    }
    if r.uid.op != Op::None {
        ugid(&mut o, &r.uid, "user");
    }
    if r.gid.op != Op::None {
        ugid(&mut o, &r.gid, "group");
    }
    if r.flags != 0 || r.flagset != 0 {
        o.push_str(" flags ");
        flags(&mut o, r.flags);
        o.push('/');
        flags(&mut o, r.flagset);
    } else if (r.action == Action::Pass || r.action == Action::Match)
        && (r.proto == 0 || r.proto == 6)
        && r.rule_flag & flag::FRAGMENT == 0
        && !anchor
        && r.keep_state != 0
    {
        o.push_str(" flags any");
    }
    if r.icmp_type != 0 {
        let ty = r.icmp_type - 1;
        o.push_str(if r.af != Af::Inet6 { " icmp-type" } else { " icmp6-type" });
        match crate::icmp::type_name(ty, r.af) {
            Some(n) => {
                let _ = write!(o, " {n}");
            }
            None => {
                let _ = write!(o, " {ty}");
            }
        }
        if r.icmp_code != 0 {
            let code = r.icmp_code - 1;
            match crate::icmp::code_name(ty, code, r.af) {
                Some(n) => {
                    let _ = write!(o, " code {n}");
                }
                None => {
                    let _ = write!(o, " code {code}");
                }
            }
        }
    }
    if r.tos != 0 {
        let _ = write!(o, " tos 0x{:02x}", r.tos);
    }
    if r.prio != 0 {
        let _ = write!(o, " prio {}", if r.prio == 0xff { 0 } else { r.prio });
    }
    if r.pktrate.0 != 0 {
        let _ = write!(o, " max-pkt-rate {}/{}", r.pktrate.0, r.pktrate.1);
    }
    if r.scrub_flags & (scrub::SETPRIO | scrub::SETTOS) != 0
        || !r.qname.is_empty()
        || r.rule_flag & flag::SETDELAY != 0
    {
        let mut parts = Vec::new();
        if r.scrub_flags & scrub::SETPRIO != 0 {
            if r.set_prio[0] == r.set_prio[1] {
                parts.push(format!("prio {}", r.set_prio[0]));
            } else {
                parts.push(format!("prio({}, {})", r.set_prio[0], r.set_prio[1]));
            }
        }
        if !r.qname.is_empty() {
            if r.pqname.is_empty() {
                parts.push(format!("queue {}", r.qname));
            } else {
                parts.push(format!("queue({}, {})", r.qname, r.pqname));
            }
        }
        if r.scrub_flags & scrub::SETTOS != 0 {
            parts.push(format!("tos 0x{:02x}", r.set_tos));
        }
        if r.rule_flag & flag::SETDELAY != 0 {
            parts.push(format!("delay {}", r.delay));
        }
        let _ = write!(o, " set ({})", parts.join(", "));
    }
    let ropts = r.max_states != 0
        || r.max_src_nodes != 0
        || r.max_src_states != 0
        || r.rule_flag
            & (flag::NOSYNC | flag::SRCTRACK | flag::IFBOUND | flag::STATESLOPPY | flag::PFLOW)
            != 0
        || r.timeout.iter().any(|&t| t != 0);
    if r.keep_state == 0 && r.action == Action::Pass && !anchor {
        o.push_str(" no state");
    } else if r.keep_state == state::NORMAL && ropts {
        o.push_str(" keep state");
    } else if r.keep_state == state::MODULATE {
        o.push_str(" modulate state");
    } else if r.keep_state == state::SYNPROXY {
        o.push_str(" synproxy state");
    }
    if r.prob != 0 {
        let v = f64::from(r.prob) * 100.0 / (f64::from(u32::MAX) + 1.0);
        let mut s = format!("{v:.6}");
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
        let _ = write!(o, " probability {s}%");
    }
    if ropts {
        // pfctl's separator logic, including its quirk: `overload` does not count as printed.
        let mut t = String::new();
        let mut first = true;
        let item = |t: &mut String, first: &mut bool, s: &str, counts: bool| {
            if !*first {
                t.push_str(", ");
            }
            t.push_str(s);
            if counts {
                *first = false;
            }
        };
        if r.max_states != 0 {
            item(&mut t, &mut first, &format!("max {}", r.max_states), true);
        }
        if r.rule_flag & flag::NOSYNC != 0 {
            item(&mut t, &mut first, "no-sync", true);
        }
        if r.rule_flag & flag::SRCTRACK != 0 {
            let kind = if r.rule_flag & flag::RULESRCTRACK != 0 { "rule" } else { "global" };
            item(&mut t, &mut first, &format!("source-track {kind}"), true);
        }
        if r.max_src_states != 0 {
            item(&mut t, &mut first, &format!("max-src-states {}", r.max_src_states), true);
        }
        if r.max_src_conn != 0 {
            item(&mut t, &mut first, &format!("max-src-conn {}", r.max_src_conn), true);
        }
        if r.max_src_conn_rate.0 != 0 {
            let (a, b) = r.max_src_conn_rate;
            item(&mut t, &mut first, &format!("max-src-conn-rate {a}/{b}"), true);
        }
        if r.max_src_nodes != 0 {
            item(&mut t, &mut first, &format!("max-src-nodes {}", r.max_src_nodes), true);
        }
        if !r.overload.is_empty() {
            let mut s = format!("overload <{}>", r.overload);
            if r.flush != 0 {
                s.push_str(" flush");
            }
            if r.flush & 2 != 0 {
                s.push_str(" global");
            }
            item(&mut t, &mut first, &s, false);
        }
        if r.rule_flag & flag::IFBOUND != 0 {
            item(&mut t, &mut first, "if-bound", true);
        }
        if r.rule_flag & flag::STATESLOPPY != 0 {
            item(&mut t, &mut first, "sloppy", true);
        }
        if r.rule_flag & flag::PFLOW != 0 {
            item(&mut t, &mut first, "pflow", true);
        }
        for (i, &v) in r.timeout.iter().enumerate() {
            if v != 0 {
                item(&mut t, &mut first, &format!("{} {v}", TIMEOUTS[i]), true);
            }
        }
        let _ = write!(o, " ({t})");
    }
    if r.rule_flag & flag::FRAGMENT != 0 {
        o.push_str(" fragment");
    }
    if r.scrub_flags & (scrub::NODF | scrub::RANDOMID | scrub::SCRUB_TCP) != 0
        || r.min_ttl != 0
        || r.max_mss != 0
    {
        let mut parts = Vec::new();
        if r.scrub_flags & scrub::NODF != 0 {
            parts.push("no-df".to_string());
        }
        if r.scrub_flags & scrub::RANDOMID != 0 {
            parts.push("random-id".to_string());
        }
        if r.min_ttl != 0 {
            parts.push(format!("min-ttl {}", r.min_ttl));
        }
        if r.scrub_flags & scrub::SCRUB_TCP != 0 {
            parts.push("reassemble tcp".to_string());
        }
        if r.max_mss != 0 {
            parts.push(format!("max-mss {}", r.max_mss));
        }
        let _ = write!(o, " scrub ({})", parts.join(" "));
    }
    if r.allow_opts {
        o.push_str(" allow-opts");
    }
    if !r.label.is_empty() {
        let _ = write!(o, " label \"{}\"", r.label);
    }
    if r.rule_flag & flag::ONCE != 0 {
        o.push_str(" once");
    }
    if !r.tag.is_empty() {
        let _ = write!(o, " tag {}", r.tag);
    }
    if !r.match_tag.is_empty() {
        if r.match_tag_not {
            o.push_str(" !");
        }
        let _ = write!(o, " tagged {}", r.match_tag);
    }
    if let Some(t) = r.rtableid {
        let _ = write!(o, " rtable {t}");
    }
    match r.divert.0 {
        1 => {
            let _ = write!(
                o,
                " divert-to {} port {}",
                addr::ntop(&r.divert.1, r.af).unwrap_or_else(|| "?".into()),
                r.divert.2
            );
        }
        2 => o.push_str(" divert-reply"),
        3 => {
            let _ = write!(o, " divert-packet port {}", r.divert.2);
        }
        _ => {}
    }
    let naf = if r.naf.is_set() { r.naf } else { r.af };
    if !anchor && !matches!(r.nat.addr, AddrKind::None) && r.rule_flag & flag::AFTO != 0 {
        let _ = write!(o, " af-to {} from ", if r.naf == Af::Inet { "inet" } else { "inet6" });
        pool(&mut o, &r.nat, naf, true, false);
        if !matches!(r.rdr.addr, AddrKind::None) {
            o.push_str(" to ");
            pool(&mut o, &r.rdr, naf, false, true);
        }
    } else if !anchor && !matches!(r.nat.addr, AddrKind::None) {
        o.push_str(" nat-to ");
        pool(&mut o, &r.nat, naf, true, false);
    } else if !anchor && !matches!(r.rdr.addr, AddrKind::None) {
        o.push_str(" rdr-to ");
        pool(&mut o, &r.rdr, r.af, false, true);
    }
    if r.rt != Route::None {
        o.push_str(match r.rt {
            Route::RouteTo => " route-to",
            Route::ReplyTo => " reply-to",
            _ => " dup-to",
        });
        o.push(' ');
        pool(&mut o, &r.route, r.af, false, false);
    }
    o
}

/// pfctl's `print_tabledef`, with its newline.
pub fn tabledef(t: &TableDef) -> String {
    let mut o = format!("table <{}>", t.name);
    if t.is_const {
        o.push_str(" const");
    }
    if t.persist {
        o.push_str(" persist");
    }
    if t.counters {
        o.push_str(" counters");
    }
    let mut i = 0;
    while i < t.entries.len() {
        match &t.entries[i] {
            TableEntry::File(f) => {
                let _ = write!(o, " file \"{f}\"");
                i += 1;
            }
            TableEntry::Hosts(_) => {
                o.push_str(" {");
                while let Some(TableEntry::Hosts(hs)) = t.entries.get(i) {
                    for h in hs {
                        o.push_str(if h.not { " !" } else { " " });
                        o.push_str(&addr::format_addr(&h.addr, h.af));
                        if let Some(n) = &h.ifname {
                            let _ = write!(o, "@{n}");
                        }
                    }
                    i += 1;
                }
                o.push_str(" }");
            }
        }
    }
    if t.init_addr && t.entries.is_empty() {
        o.push_str(" { }");
    }
    o.push('\n');
    o
}

/// The rules of anchor `idx`, at `depth`, as `pfctl -nv` prints them (anchors with their
/// bodies in braces, two spaces per level).
pub fn ruleset(rs: &Ruleset, idx: usize, depth: usize, host: &dyn Host, out: &mut String) {
    let Some(a) = rs.anchors.get(idx) else { return };
    for (nr, r) in a.rules.iter().enumerate() {
        out.push_str(&"  ".repeat(depth));
        let mut r2;
        let r = if r.label.contains("$nr") || r.tag.contains("$nr") || r.match_tag.contains("$nr") {
            r2 = r.clone();
            let n = nr.to_string();
            r2.label = r2.label.replace("$nr", &n);
            r2.tag = r2.tag.replace("$nr", &n);
            r2.match_tag = r2.match_tag.replace("$nr", &n);
            &r2
        } else {
            r
        };
        out.push_str(&rule(r, host));
        match &r.anchor {
            Some(call) if depth < crate::parse::MAX_ANCHOR_DEPTH => {
                let body = rs.anchors.get(call.ruleset).is_some_and(|b| !b.rules.is_empty());
                if body {
                    out.push_str(" {\n");
                    ruleset(rs, call.ruleset, depth + 1, host, out);
                    out.push_str(&"  ".repeat(depth));
                    out.push_str("}\n");
                } else {
                    out.push('\n');
                }
            }
            _ => out.push('\n'),
        }
    }
}

/// pfctl's `print_queuespec`.
pub fn queue(q: &crate::ast::Queue) -> String {
    let mut o = format!("queue {}", q.name);
    if let Some(p) = &q.parent {
        let _ = write!(o, " parent {p}");
    } else if !q.ifname.is_empty() {
        let _ = write!(o, " on {}", q.ifname);
    }
    if q.flows != 0 {
        let _ = write!(o, " flows {}", q.flows);
        if q.quantum != 0 {
            let _ = write!(o, " quantum {}", q.quantum);
        }
    }
    let bw = |v: u32| -> String {
        let mut rate = v;
        let mut i = 0;
        let units = [' ', 'K', 'M', 'G'];
        while rate >= 1000 && i < 3 && rate.is_multiple_of(1000) {
            rate /= 1000;
            i += 1;
        }
        if i == 0 { format!("{rate}") } else { format!("{rate}{}", units[i]) }
    };
    let sc = |o: &mut String, prefix: &str, s: (u32, u32, u32)| {
        if s.0 != 0 {
            let _ = write!(o, "{prefix}{}", bw(s.0));
        }
        if s.2 != 0 {
            let _ = write!(o, " burst {} for {}ms", bw(s.1), s.2);
        }
    };
    if q.bandwidth[0].0 != 0 || q.bandwidth[0].1 != 0 {
        sc(&mut o, " bandwidth ", q.bandwidth[0]);
        sc(&mut o, ", min ", q.bandwidth[1]);
        sc(&mut o, ", max ", q.bandwidth[2]);
    }
    if q.default {
        o.push_str(" default");
    }
    if q.qlimit != 0 {
        let _ = write!(o, " qlimit {}", q.qlimit);
    }
    o.push('\n');
    o
}
