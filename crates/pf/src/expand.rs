//! List expansion: one [`Rule`] per combination of a rule's lists, as parse.y's `expand_rule`.
//!
//! For every interface × protocol × ICMP type × source × destination × source port ×
//! destination port × OS × user × group, the address family is decided (or the combination is
//! skipped silently when families clash), translation and routing pools are collapsed (several
//! addresses become an automatic table), label macros are substituted, and the rule is checked
//! (`rule_consistent`). A `binat-to` rule adds its mirrored inbound `rdr-to` rule. The
//! messages, their order and the quirks (an error in one combination skips the following ones)
//! are pfctl's.

use crate::addr::{self, AddrKind, Af, HostAddr};
use crate::ast::{
    Action, Dir, Divert, IcmpItem, IdItem, IfItem, Op, Pool, PoolType, PortItem, Redir, Route,
    Rule, RuleSpec, flag, scrub, state,
};
use crate::parse::{Fail, PResult, Parser};

/// pf's default NAT proxy port range.
pub const NAT_PORT_LOW: u16 = 50001;
/// pf's default NAT proxy port range.
pub const NAT_PORT_HIGH: u16 = 65535;

/// The lists of one rule.
#[derive(Clone, Debug, Default)]
struct Lists {
    ifs: Vec<IfItem>,
    protos: Vec<u8>,
    icmp: Vec<IcmpItem>,
    src: Vec<HostAddr>,
    dst: Vec<HostAddr>,
    sports: Vec<PortItem>,
    dports: Vec<PortItem>,
    oses: Vec<Option<String>>,
    uids: Vec<IdItem>,
    gids: Vec<IdItem>,
    rcv: Option<(bool, String)>,
}

fn any_host() -> HostAddr {
    HostAddr::new(AddrKind::any(), Af::Any)
}

fn or_one<T: Clone>(v: Option<&Vec<T>>, zero: T) -> Vec<T> {
    match v {
        Some(v) if !v.is_empty() => v.clone(),
        _ => vec![zero],
    }
}

/// The translation specs of a rule: nat, rdr, route.
#[derive(Clone, Debug, Default)]
struct Specs {
    nat: Option<Redir>,
    rdr: Option<Redir>,
    route: Option<Redir>,
}

/// Expands `spec` (already turned into the template `r`) into rules of the current anchor.
pub fn expand_rule(p: &mut Parser, r: Rule, spec: &RuleSpec, _unused: Option<()>) {
    let lists = Lists {
        ifs: or_one(spec.interfaces.as_ref(), IfItem::default()),
        protos: or_one(spec.protos.as_ref(), 0),
        icmp: or_one(Some(&spec.opts.icmp), IcmpItem::default()),
        src: or_one(spec.src.hosts.as_ref(), any_host()),
        dst: or_one(spec.dst.hosts.as_ref(), any_host()),
        sports: or_one(spec.src.ports.as_ref(), PortItem::default()),
        dports: or_one(spec.dst.ports.as_ref(), PortItem::default()),
        oses: match &spec.os {
            Some(v) => v.iter().cloned().map(Some).collect(),
            None => vec![None],
        },
        uids: or_one(Some(&spec.opts.uid), IdItem::default()),
        gids: or_one(Some(&spec.opts.gid), IdItem::default()),
        rcv: spec.opts.rcv.clone(),
    };
    let specs = Specs {
        nat: spec.opts.nat.clone(),
        rdr: spec.opts.rdr.clone(),
        route: spec.opts.route.as_ref().map(|r| r.1.clone()),
    };
    let mut r = r;
    let outer = p.rule_span;
    if !spec.span.is_empty() {
        p.rule_span = Some(spec.span);
    }
    r.nat.addr = AddrKind::any();
    r.rdr.addr = AddrKind::any();
    r.route.addr = AddrKind::any();
    expand(p, r, &lists, &specs);
    p.rule_span = outer;
}

#[allow(clippy::too_many_lines)]
fn expand(p: &mut Parser, mut r: Rule, l: &Lists, specs: &Specs) {
    let combos = [
        l.ifs.len(),
        l.protos.len(),
        l.icmp.len(),
        l.src.len(),
        l.dst.len(),
        l.sports.len(),
        l.dports.len(),
        l.oses.len(),
        l.uids.len(),
        l.gids.len(),
    ]
    .iter()
    .try_fold(1u64, |acc, &n| {
        acc.checked_mul(n as u64).filter(|v| *v <= crate::parse::MAX_EXPANSION)
    });
    if combos.is_none() {
        p.error(format!("rule expands to more than {} rules", crate::parse::MAX_EXPANSION));
        return;
    }
    let af = r.af;
    let dir = r.direction;
    let label = r.label.clone();
    let tag = r.tag.clone();
    let match_tag = r.match_tag.clone();
    let (flags, flagset, keep_state) = (r.flags, r.flagset, r.keep_state);
    let mut added = 0;
    let mut error = 0;
    r.src.addr = AddrKind::any();
    r.dst.addr = AddrKind::any();
    for interface in &l.ifs {
        for &proto in &l.protos {
            for icmp in &l.icmp {
                for src_host in &l.src {
                    for dst_host in &l.dst {
                        for sport in &l.sports {
                            for dport in &l.dports {
                                for os in &l.oses {
                                    for uid in &l.uids {
                                        for gid in &l.gids {
                                            r.af = af;
                                            error +=
                                                collapse(p, &mut r, specs.rdr.as_ref(), Which::Rdr);
                                            error +=
                                                collapse(p, &mut r, specs.nat.as_ref(), Which::Nat);
                                            error += collapse(
                                                p,
                                                &mut r,
                                                specs.route.as_ref(),
                                                Which::Route,
                                            );
                                            if (src_host.ifname.is_some()
                                                && matches!(src_host.addr, AddrKind::Mask { .. }))
                                                || (dst_host.ifname.is_some()
                                                    && matches!(
                                                        dst_host.addr,
                                                        AddrKind::Mask { .. }
                                                    ))
                                            {
                                                p.error("@if syntax not permitted in from or to");
                                                error += 1;
                                            }
                                            let if_idx = |n: &str| p.host.if_index(n);
                                            if (r.af.is_set()
                                                && src_host.af.is_set()
                                                && r.af != src_host.af)
                                                || (r.af.is_set()
                                                    && dst_host.af.is_set()
                                                    && r.af != dst_host.af)
                                                || (src_host.af.is_set()
                                                    && dst_host.af.is_set()
                                                    && src_host.af != dst_host.af)
                                                || (src_host.ifindex != 0
                                                    && dst_host.ifindex != 0
                                                    && src_host.ifindex != dst_host.ifindex)
                                                || (src_host.ifindex != 0
                                                    && !interface.name.is_empty()
                                                    && src_host.ifindex != if_idx(&interface.name))
                                                || (dst_host.ifindex != 0
                                                    && !interface.name.is_empty()
                                                    && dst_host.ifindex != if_idx(&interface.name))
                                            {
                                                continue;
                                            }
                                            if !r.af.is_set() && src_host.af.is_set() {
                                                r.af = src_host.af;
                                            } else if !r.af.is_set() && dst_host.af.is_set() {
                                                r.af = dst_host.af;
                                            }
                                            r.ifname = if !interface.name.is_empty() {
                                                interface.name.clone()
                                            } else {
                                                p.host
                                                    .if_name(src_host.ifindex)
                                                    .or_else(|| p.host.if_name(dst_host.ifindex))
                                                    .unwrap_or_default()
                                            };
                                            r.onrdomain = interface.rdomain;
                                            let ctx = LabelCtx {
                                                ifname: &r.ifname,
                                                af: r.af,
                                                src: src_host,
                                                sport,
                                                dst: dst_host,
                                                dport,
                                                proto,
                                                host: p.host,
                                            };
                                            r.label = ctx.expand(&label);
                                            r.tag = ctx.expand(&tag);
                                            r.match_tag = ctx.expand(&match_tag);

                                            let src_h = dynnode(src_host, r.af);
                                            let dst_h = dynnode(dst_host, r.af);
                                            error += check_netmask(p, &src_h, r.af);
                                            error += check_netmask(p, &dst_h, r.af);

                                            r.ifnot = interface.not;
                                            r.proto = proto;
                                            r.src.addr = src_h.addr.clone();
                                            r.src.neg = src_h.not;
                                            r.src.port = *sport;
                                            r.dst.addr = dst_h.addr.clone();
                                            r.dst.neg = dst_h.not;
                                            r.dst.port = *dport;
                                            r.uid = *uid;
                                            r.gid = *gid;
                                            r.rcv = l.rcv.clone();
                                            r.icmp_type = icmp.ty;
                                            r.icmp_code = icmp.code;
                                            r.keep_state = if (keep_state == state::MODULATE
                                                || keep_state == state::SYNPROXY)
                                                && r.proto != 0
                                                && r.proto != 6
                                            {
                                                state::NORMAL
                                            } else {
                                                keep_state
                                            };
                                            if r.proto != 0 && r.proto != 6 {
                                                r.flags = 0;
                                                r.flagset = 0;
                                            } else {
                                                r.flags = flags;
                                                r.flagset = flagset;
                                            }
                                            if icmp.proto != 0 && r.proto != icmp.proto {
                                                p.error("icmp-type mismatch");
                                                error += 1;
                                            }
                                            r.os = os.clone();

                                            let binat = specs.nat.as_ref().is_some_and(|n| n.binat);
                                            if binat {
                                                error += binat_checks(p, &r, &src_h, af);
                                                r.direction = Dir::Out;
                                            }
                                            error += apply(
                                                p,
                                                &mut r,
                                                specs.nat.as_ref(),
                                                Which::Nat,
                                                dport,
                                            );
                                            error += apply(
                                                p,
                                                &mut r,
                                                specs.rdr.as_ref(),
                                                Which::Rdr,
                                                dport,
                                            );
                                            error += apply(
                                                p,
                                                &mut r,
                                                specs.route.as_ref(),
                                                Which::Route,
                                                dport,
                                            );

                                            if rule_consistent(p, &r) > 0 || error > 0 {
                                                p.error("skipping rule due to errors");
                                            } else {
                                                p.add_rule(r.clone());
                                                added += 1;
                                            }
                                            r.direction = dir;

                                            if error == 0 && binat {
                                                let mut rb = r.clone();
                                                rb.direction = Dir::In;
                                                let nat = specs.nat.clone().unwrap_or_default();
                                                let mut srch = src_host.clone();
                                                srch.ifname = None;
                                                let dsth =
                                                    HostAddr::new(rb.nat.addr.clone(), Af::Any);
                                                let mut bin = nat.clone();
                                                bin.binat = false;
                                                bin.pool.static_port = false;
                                                bin.hosts = vec![srch];
                                                let inner = Lists {
                                                    ifs: vec![interface.clone()],
                                                    protos: vec![proto],
                                                    icmp: vec![*icmp],
                                                    src: vec![dst_host.clone()],
                                                    dst: vec![dsth],
                                                    sports: vec![*dport],
                                                    dports: vec![*sport],
                                                    oses: vec![os.clone()],
                                                    uids: vec![*uid],
                                                    gids: vec![*gid],
                                                    rcv: l.rcv.clone(),
                                                };
                                                let s2 = Specs {
                                                    nat: None,
                                                    rdr: Some(bin),
                                                    route: None,
                                                };
                                                expand(p, rb, &inner, &s2);
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if added == 0 {
        p.error("rule expands to no valid combination");
    }
}

/// pfctl's `gen_dynnode`: a dynamic address in an IPv4 rule has at most a /32 mask.
fn dynnode(h: &HostAddr, af: Af) -> HostAddr {
    let mut n = h.clone();
    if let AddrKind::Dyn { mask, .. } = &mut n.addr
        && af == Af::Inet
        && addr::unmask(mask) > 32
    {
        *mask = addr::mask_of(32);
    }
    n
}

fn check_netmask(p: &mut Parser, h: &HostAddr, af: Af) -> usize {
    if let AddrKind::Mask { mask, .. } = &h.addr
        && af == Af::Inet
        && mask[4..].iter().any(|&b| b != 0)
    {
        let span = p.peek().span;
        p.bare(format!("netmask {} invalid for IPv4 address", addr::unmask(mask)), span);
        p.failed = true;
        return 1;
    }
    0
}

fn binat_checks(p: &mut Parser, r: &Rule, src: &HostAddr, af: Af) -> usize {
    let mut error = 0;
    if let AddrKind::Table(t) = &src.addr {
        p.error(format!("invalid use of table <{t}> as the source address of a binat-to rule"));
        error += 1;
    } else if let AddrKind::Dyn { ifname, .. } = &src.addr
        && src.addr.dyn_multiaddr()
    {
        p.error(format!(
            "invalid use of interface ({ifname}) as the source address of a binat-to rule"
        ));
        error += 1;
    } else if !matches!(r.src.addr, AddrKind::Mask { .. } | AddrKind::Dyn { .. })
        || !matches!(r.nat.addr, AddrKind::Mask { .. } | AddrKind::Dyn { .. })
    {
        p.error("binat-to requires a specified source and redirect address");
        error += 1;
    }
    if r.src.addr.dyn_multiaddr() || r.nat.addr.dyn_multiaddr() {
        p.error("dynamic interfaces must be used with :0 in a binat-to rule");
        error += 1;
    }
    let zero_mask = |a: &AddrKind| match a.mask() {
        Some(m) => addr::zero_af(m, af) && af.is_set(),
        None => af.is_set(),
    };
    if zero_mask(&r.src.addr) || zero_mask(&r.nat.addr) {
        p.error("source and redir addresess must have a matching network mask in binat-rule");
        error += 1;
    }
    if matches!(r.nat.addr, AddrKind::Table(_)) {
        p.error("tables cannot be used as the redirect address of a binat-to rule");
        error += 1;
    }
    if r.direction != Dir::InOut {
        p.error("binat-to cannot be specified with a direction");
        error += 1;
    }
    error
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Nat,
    Rdr,
    Route,
}

fn pool_mut(r: &mut Rule, w: Which) -> &mut Pool {
    match w {
        Which::Nat => &mut r.nat,
        Which::Rdr => &mut r.rdr,
        Which::Route => &mut r.route,
    }
}

fn dyntype(t: PoolType) -> bool {
    matches!(t, PoolType::RoundRobin | PoolType::LeastStates)
}

/// parse.y's `collapse_redirspec`.
fn collapse(p: &mut Parser, r: &mut Rule, rs: Option<&Redir>, w: Which) -> usize {
    let routing = w == Which::Route;
    let Some(rs) = rs.filter(|rs| !rs.hosts.is_empty()) else {
        pool_mut(r, w).addr = AddrKind::None;
        return 0;
    };
    let what = if routing { "routing" } else { "translation" };
    if r.rule_flag & flag::AFTO != 0 {
        r.naf = rs.af;
    }
    let mut af = Af::Any;
    let mut naddr = 0;
    let mut table: Option<Vec<HostAddr>> = None;
    let mut first: Option<HostAddr> = None;
    for h in &rs.hosts {
        if routing
            && let AddrKind::Dyn { flags, .. } = &h.addr
            && *flags != addr::iflags::PEER
        {
            p.error("route spec requires :peer with dynamic interface addresses");
            return 1;
        }
        if rs.af.is_set() && !r.af.is_set() && !af.is_set() {
            af = match r.naf {
                Af::Inet6 => Af::Inet,
                Af::Inet => Af::Inet6,
                Af::Any => rs.af,
            };
        }
        if h.af.is_set() && !r.naf.is_set() {
            if r.af.is_set() && r.af != h.af {
                continue;
            }
            if !r.af.is_set() && af.is_set() && af != h.af {
                p.error(format!("{what} spec contains addresses with different address families"));
                return 1;
            }
        } else if h.af.is_set() && rs.af.is_set() && rs.af != h.af {
            p.error(format!(
                "{what} spec contains addresses that don't match target address family"
            ));
            return 1;
        }
        if !r.af.is_set() && !af.is_set() {
            af = h.af;
        }
        if naddr == 0 {
            pool_mut(r, w).addr = h.addr.clone();
            if h.ifname.is_some() {
                p.error(format!("@if not permitted for {what}"));
                return 1;
            }
            first = Some(h.clone());
        } else {
            if rs.pool.ty != PoolType::None && !dyntype(rs.pool.ty) {
                p.error("pool type is not valid for multiple translation or routing addresses");
                return 1;
            }
            let prev_special = first
                .as_ref()
                .is_some_and(|f| !matches!(f.addr, AddrKind::Mask { .. } | AddrKind::None));
            if prev_special && !matches!(h.addr, AddrKind::Mask { .. } | AddrKind::None) {
                p.error("multiple tables or dynamic interfaces not supported for translation or routing");
                return 1;
            }
            let t = table.get_or_insert_with(Vec::new);
            if let Some(f) = first.take() {
                let mut f = f;
                f.not = false;
                t.push(f);
            }
            let mut h = h.clone();
            h.not = false;
            t.push(h);
        }
        naddr += 1;
    }
    if !r.af.is_set() && af.is_set() {
        r.af = af;
    }
    if naddr == 0 {
        p.error(format!("af mismatch in {what} spec"));
        return 1;
    }
    if let Some(t) = table {
        let name = p.auto_table(t);
        pool_mut(r, w).addr = AddrKind::Table(name);
    }
    0
}

/// parse.y's `apply_redirspec`.
fn apply(p: &mut Parser, r: &mut Rule, rs: Option<&Redir>, w: Which, np: &PortItem) -> usize {
    let Some(rs) = rs else { return 0 };
    let pool = pool_mut(r, w);
    pool.proxy_port[0] = rs.rport.a;
    if w != Which::Nat {
        if rs.rport.b == 0 && rs.rport.op != Op::None {
            pool.proxy_port[1] = rs.rport.a.wrapping_add(np.b.wrapping_sub(np.a));
        } else {
            let (op, a, b) = (rs.rport.op, rs.rport.a, rs.rport.b);
            if (op == Op::Rrg && a > b) || (op == Op::Irg && a >= b) || (op == Op::Xrg && a > b) {
                p.error("invalid rdr-to port range");
                return 1;
            }
            pool.port_op = rs.rport.op;
            pool.proxy_port[1] = rs.rport.b;
        }
    } else {
        pool.proxy_port[1] = rs.rport.b;
        if pool.proxy_port[0] == 0 && pool.proxy_port[1] == 0 {
            pool.proxy_port = [NAT_PORT_LOW, NAT_PORT_HIGH];
        } else if pool.proxy_port[1] == 0 {
            pool.proxy_port[1] = pool.proxy_port[0];
        }
    }
    pool.ty = rs.pool.ty;
    if pool.ty == PoolType::None
        && (matches!(pool.addr, AddrKind::Table(_)) || pool.addr.dyn_multiaddr())
    {
        pool.ty = PoolType::RoundRobin;
    }
    if !dyntype(pool.ty) {
        for h in &rs.hosts {
            if let AddrKind::Table(_) = h.addr {
                p.error("tables are not supported by pool type");
                return 1;
            }
            if let AddrKind::Dyn { ifname, .. } = &h.addr
                && h.addr.dyn_multiaddr()
            {
                p.error(format!("interface ({ifname}) is not supported by pool type"));
                return 1;
            }
        }
    }
    let pool = pool_mut(r, w);
    if let Some(k) = rs.pool.key {
        pool.key = k;
    }
    pool.sticky = rs.pool.sticky;
    if rs.pool.static_port {
        if w != Which::Nat {
            p.error("the 'static-port' option is only valid with nat rules");
            return 1;
        }
        if pool.proxy_port[0] != NAT_PORT_LOW && pool.proxy_port[1] != NAT_PORT_HIGH {
            p.error("the 'static-port' option can't be used when specifying a port range");
            return 1;
        }
        pool.proxy_port = [0, 0];
    }
    0
}

/// parse.y's `rule_consistent`; returns the number of problems.
fn rule_consistent(p: &mut Parser, r: &Rule) -> usize {
    let mut n = 0;
    let mut e = |p: &mut Parser, m: &str| {
        p.error(m.to_string());
        n += 1;
    };
    let tcpudp = r.proto == 6 || r.proto == 17;
    if r.proto != 6 && r.os.is_some() {
        e(p, "os only applies to tcp");
    }
    if !tcpudp && (r.src.port.op != Op::None || r.dst.port.op != Op::None) {
        e(p, "port only applies to tcp/udp");
    }
    if !tcpudp && r.uid.op != Op::None {
        e(p, "user only applies to tcp/udp");
    }
    if !tcpudp && r.gid.op != Op::None {
        e(p, "group only applies to tcp/udp");
    }
    if r.proto != 1 && r.proto != 58 && (r.icmp_type != 0 || r.icmp_code != 0) {
        e(p, "icmp-type/code only applies to icmp");
    }
    if !r.af.is_set() && (r.icmp_type != 0 || r.icmp_code != 0) {
        e(p, "must indicate address family with icmp-type/code");
    }
    if r.rule_flag & flag::AFTO != 0 && r.af == r.naf {
        e(p, "must indicate different address family with af-to");
    }
    if !r.overload.is_empty() && r.max_src_conn == 0 && r.max_src_conn_rate.1 == 0 {
        e(p, "'overload' requires 'max-src-conn' or 'max-src-conn-rate'");
    }
    if (r.proto == 1 && r.af == Af::Inet6) || (r.proto == 58 && r.af == Af::Inet) {
        let m = format!(
            "proto {} doesn't match address family {}",
            if r.proto == 1 { "icmp" } else { "icmp6" },
            if r.af == Af::Inet { "inet" } else { "inet6" }
        );
        e(p, &m);
    }
    if r.allow_opts && r.action != Action::Pass {
        e(p, "allow-opts can only be specified for pass rules");
    }
    if r.rule_flag & flag::FRAGMENT != 0
        && (r.src.port.op != Op::None
            || r.dst.port.op != Op::None
            || r.flagset != 0
            || r.icmp_type != 0
            || r.icmp_code != 0)
    {
        e(p, "fragments can be filtered only on IP header fields");
    }
    if r.rule_flag & flag::RETURNRST != 0 && r.proto != 6 {
        e(p, "return-rst can only be applied to TCP rules");
    }
    if r.max_src_nodes != 0 && r.rule_flag & flag::RULESRCTRACK == 0 {
        e(p, "max-src-nodes requires 'source-track rule'");
    }
    if r.action != Action::Pass && r.keep_state != 0 {
        e(p, "keep state is great, but only for pass rules");
    }
    if r.rt != Route::None && r.keep_state == 0 {
        e(p, "route-to, reply-to and dup-to require keep state");
    }
    if r.rule_flag & flag::STATESLOPPY != 0
        && (r.keep_state == state::MODULATE || r.keep_state == state::SYNPROXY)
    {
        e(p, "sloppy state matching cannot be used with synproxy state or modulate state");
    }
    if r.keep_state == state::SYNPROXY && r.direction != Dir::In {
        p.warn("warning: synproxy used for inbound rules only, ignored for outbound");
    }
    let nat_or_rdr = !matches!(r.nat.addr, AddrKind::None) || !matches!(r.rdr.addr, AddrKind::None);
    if nat_or_rdr && r.action != Action::Match && r.keep_state == 0 {
        e(p, "nat-to and rdr-to require keep state");
    }
    if r.direction == Dir::InOut && nat_or_rdr {
        e(p, "nat-to and rdr-to require a direction");
    }
    if r.af == Af::Inet6 && r.scrub_flags & (scrub::NODF | scrub::RANDOMID) != 0 {
        e(p, "address family inet6 does not support scrub options no-df, random-id");
    }
    match r.action {
        Action::Match => {
            if r.divert.0 != 0 {
                e(p, "divert is not supported on match rules");
            }
            if r.rt != Route::None {
                e(p, "route-to, reply-to and dup-to are not supported on match rules");
            }
            if r.rule_flag & flag::AFTO != 0 {
                e(p, "af-to is not supported on match rules");
            }
        }
        Action::Block => {
            if r.rt != Route::None {
                e(p, "route-to, reply-to and dup-to are not supported on block rules");
            }
        }
        Action::Pass => {}
    }
    n
}

/// parse.y's `expand_divertspec`.
pub fn divertspec(p: &mut Parser, r: &mut Rule, d: &Divert) -> PResult<()> {
    match d {
        Divert::None => {}
        Divert::To(hosts, port) => {
            if r.direction == Dir::Out {
                p.error("divert-to used with outgoing rule");
                return Err(Fail::Reported);
            }
            let h = if r.af.is_set() {
                match hosts.iter().find(|h| h.af == r.af) {
                    Some(h) => h,
                    None => {
                        p.error("divert-to address family mismatch");
                        return Err(Fail::Reported);
                    }
                }
            } else {
                r.af = hosts[0].af;
                &hosts[0]
            };
            let a = match &h.addr {
                AddrKind::Mask { addr, .. } => *addr,
                _ => [0; 16],
            };
            r.divert = (1, a, *port);
        }
        Divert::Reply => {
            if r.direction == Dir::In {
                p.error("divert-reply used with incoming rule");
                return Err(Fail::Reported);
            }
            r.divert = (2, [0; 16], 0);
        }
        Divert::Packet(port) => r.divert = (3, [0; 16], *port),
    }
    Ok(())
}

struct LabelCtx<'a> {
    ifname: &'a str,
    af: Af,
    src: &'a HostAddr,
    sport: &'a PortItem,
    dst: &'a HostAddr,
    dport: &'a PortItem,
    proto: u8,
    host: &'a dyn crate::host::Host,
}

impl LabelCtx<'_> {
    fn expand(&self, s: &str) -> String {
        if !s.contains('$') {
            return s.to_string();
        }
        let mut out = s.to_string();
        if out.contains("$if") {
            let v = if self.ifname.is_empty() { "any" } else { self.ifname };
            out = out.replace("$if", v);
        }
        for (name, h) in [("$srcaddr", self.src), ("$dstaddr", self.dst)] {
            if out.contains(name) {
                out = out.replace(name, &label_addr(h, self.af));
            }
        }
        for (name, port) in [("$srcport", self.sport), ("$dstport", self.dport)] {
            if out.contains(name) {
                out = out.replace(name, &label_port(port));
            }
        }
        if out.contains("$proto") {
            let v = self.host.protocol_name(self.proto).unwrap_or_else(|| self.proto.to_string());
            out = out.replace("$proto", &v);
        }
        out
    }
}

fn label_addr(h: &HostAddr, af: Af) -> String {
    let tmp = match &h.addr {
        AddrKind::Dyn { ifname, .. } => format!("({ifname})"),
        AddrKind::Table(t) => format!("<{t}>"),
        AddrKind::NoRoute => "no-route".into(),
        AddrKind::UrpfFailed => "urpf-failed".into(),
        AddrKind::Mask { addr, mask } => {
            if !af.is_set() || (addr::zero_af(addr, af) && addr::zero_af(mask, af)) {
                "any".into()
            } else {
                let a = addr::ntop(addr, af).unwrap_or_else(|| "?".into());
                let bits = addr::unmask(mask);
                if (af == Af::Inet && bits < 32) || (af == Af::Inet6 && bits < 128) {
                    format!("{a}/{bits}")
                } else {
                    a
                }
            }
        }
        _ => "?".into(),
    };
    if h.not { format!("! {tmp}") } else { tmp }
}

fn label_port(p: &PortItem) -> String {
    let (a, b) = (p.a, p.b);
    match p.op {
        Op::None => String::new(),
        Op::Irg => format!("{a}><{b}"),
        Op::Xrg => format!("{a}<>{b}"),
        Op::Eq => format!("{a}"),
        Op::Ne => format!("!={a}"),
        Op::Lt => format!("<{a}"),
        Op::Le => format!("<={a}"),
        Op::Gt => format!(">{a}"),
        Op::Ge => format!(">={a}"),
        Op::Rrg => String::new(),
    }
}

/// parse.y's `antispoof` action: for each interface, block traffic from its networks arriving
/// on any other interface (and, for non-loopback interfaces, traffic to itself from its own
/// addresses).
#[allow(clippy::too_many_arguments)]
pub fn antispoof(
    p: &mut Parser,
    log: u8,
    logif: u8,
    quick: bool,
    ifs: &[IfItem],
    af: Af,
    label: Option<String>,
    rtable: Option<i32>,
) {
    for i in ifs {
        let base = Rule {
            action: Action::Block,
            direction: Dir::In,
            log,
            logif,
            quick,
            af,
            label: label.clone().unwrap_or_default(),
            rtableid: rtable,
            ..Rule::default()
        };
        let j = IfItem { name: i.name.clone(), not: true, ..IfItem::default() };
        let (hosts, hh) = if i.dynamic {
            let mut h = HostAddr::new(
                AddrKind::Dyn {
                    ifname: i.name.clone(),
                    flags: addr::iflags::NETWORK,
                    mask: addr::mask_of(128),
                },
                Af::Any,
            );
            h.not = false;
            let plain = HostAddr::new(
                AddrKind::Dyn { ifname: i.name.clone(), flags: 0, mask: addr::mask_of(128) },
                Af::Any,
            );
            (vec![h], Some(vec![plain]))
        } else {
            (addr::ifa_lookup(&i.name, addr::iflags::NETWORK, p.host), None)
        };
        if !hosts.is_empty() {
            let spec = RuleSpec {
                interfaces: Some(vec![j]),
                src: crate::ast::Endpoint { hosts: Some(hosts), ports: None },
                ..RuleSpec::default()
            };
            expand_rule(p, base.clone(), &spec, None);
        }
        if !i.loopback {
            let h = hh.unwrap_or_else(|| addr::ifa_lookup(&i.name, 0, p.host));
            if !h.is_empty() {
                let spec = RuleSpec {
                    src: crate::ast::Endpoint { hosts: Some(h), ports: None },
                    ..RuleSpec::default()
                };
                expand_rule(p, base, &spec, None);
            }
        }
    }
}
