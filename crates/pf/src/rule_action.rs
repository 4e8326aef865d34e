//! What parse.y does once a rule is read: `filteropts_to_rule`, the `pfrule` action (default
//! `keep state` and `flags S/SA`, state options, the address family decision) and the
//! `anchorrule` action, before list expansion.
//!
//! Why apart from the grammar: these are the semantic rules of a rule as a whole, in parse.y's
//! order, and they decide which message a mistake gets.

use crate::addr::{Af, HostAddr};
use crate::ast::{Action, Dir, FilterOpts, Route, RuleSpec, StateOpt, flag, state};
use crate::parse::{Fail, PResult, Parser};

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
    let flags_set = spec.opts.flags != 0 || spec.opts.flagset != 0;
    if (flags_set || spec.os.is_some())
        && let Some(protos) = &spec.protos
        && !protos.contains(&6)
    {
        if flags_set {
            p.error("flags only apply to tcp");
        }
        if spec.os.is_some() {
            p.error("OS fingerprinting only apply to tcp");
        }
        return Err(Fail::Reported);
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
