//! The statements besides rules: `set` options, `table` definitions, `antispoof` and
//! `queue` definitions, with pfctl's checks, messages and verbose printing.
//!
//! Why apart from the statement driver: each is a small grammar of its own, and pfctl prints
//! most of them the moment they are read (`set timeout tcp.first 6`), before any rule.

use crate::addr::{self, AddrKind, HostAddr};
use crate::ast::{Queue, TableDef, TableEntry};
use crate::lex::Tok;
use crate::parse::{Fail, PResult, Parser, io_reason};

impl Parser<'_> {
    // ---- set ------------------------------------------------------------------------------

    pub(crate) fn option(&mut self) -> PResult<()> {
        self.bump();
        let Tok::Word(w) = self.tok() else { return self.syntax("an option name") };
        match w.as_str() {
            "reassemble" => {
                self.bump();
                let yes = if self.eat_kw("no") {
                    false
                } else {
                    let s = self.string("`yes` or `no`")?;
                    if s != "yes" {
                        self.error(format!("invalid value '{s}', expected 'yes' or 'no'"));
                        return Err(Fail::Reported);
                    }
                    true
                };
                let nodf = self.eat_kw("no-df");
                self.reassemble = (yes, nodf);
                let line = format!(
                    "set reassemble {} {}",
                    if yes { "yes" } else { "no" },
                    if nodf { "no-df" } else { "" }
                );
                self.print(&line);
            }
            "optimization" => {
                self.bump();
                let s = self.string("an optimization")?;
                if !["normal", "default", "satellite", "high-latency", "conservative", "aggressive"]
                    .contains(&s.as_str())
                {
                    self.error(format!("unknown optimization {s}"));
                    return Err(Fail::Reported);
                }
                self.print(&format!("set optimization {s}"));
            }
            "ruleset-optimization" => {
                self.bump();
                let s = self.string("`none`, `basic` or `profile`")?;
                if !["none", "basic", "profile"].contains(&s.as_str()) {
                    self.error(format!("unknown ruleset-optimization {s}"));
                    return Err(Fail::Reported);
                }
            }
            "timeout" => {
                self.bump();
                if self.eat_punct('{') {
                    self.optnl();
                    loop {
                        self.timeout_spec()?;
                        self.optnl();
                        if self.eat_punct('}') {
                            break;
                        }
                        self.comma();
                        self.optnl();
                    }
                } else {
                    self.timeout_spec()?;
                }
            }
            "limit" => {
                self.bump();
                if self.eat_punct('{') {
                    self.optnl();
                    loop {
                        self.limit_spec()?;
                        self.optnl();
                        if self.eat_punct('}') {
                            break;
                        }
                        self.comma();
                        self.optnl();
                    }
                } else {
                    self.limit_spec()?;
                }
            }
            "loginterface" => {
                self.bump();
                let s =
                    if self.eat_kw("all") { "all".into() } else { self.string("an interface")? };
                self.print(&format!("set loginterface {s}"));
            }
            "hostid" => {
                self.bump();
                let n = match self.tok() {
                    Tok::Number(n) => {
                        self.bump();
                        n
                    }
                    _ => {
                        let s = self.string("a number")?;
                        match crate::parse_rule::atoul(&s) {
                            Some(v) => v as i64,
                            None => {
                                self.error(format!("{s} is not a number"));
                                return Err(Fail::Reported);
                            }
                        }
                    }
                };
                if n <= 0 || n > i64::from(u32::MAX) {
                    self.error("hostid must be non-zero");
                    return Err(Fail::Reported);
                }
                self.print(&format!("set hostid 0x{n:08x}"));
            }
            "block-policy" => {
                self.bump();
                if self.eat_kw("drop") {
                    self.print("set block-policy drop");
                    self.blockpolicy = 0;
                } else if self.eat_kw("return") {
                    self.print("set block-policy return");
                    self.blockpolicy = crate::ast::flag::RETURN;
                } else {
                    return self.syntax("`drop` or `return`");
                }
            }
            "fingerprints" => {
                self.bump();
                let s = self.string("a file name")?;
                self.print(&format!("set fingerprints \"{s}\""));
            }
            "state-policy" => {
                self.bump();
                if self.eat_kw("if-bound") {
                    self.print("set state-policy if-bound");
                    self.default_ifbound = true;
                } else if self.eat_kw("floating") {
                    self.print("set state-policy floating");
                    self.default_ifbound = false;
                } else {
                    return self.syntax("`if-bound` or `floating`");
                }
            }
            "debug" => {
                self.bump();
                let s = if self.eat_kw("debug") { "debug".into() } else { self.string("a level")? };
                const LEVELS: &[&str] =
                    &["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];
                let ok = LEVELS.contains(&s.to_ascii_lowercase().as_str())
                    || s.parse::<u8>().is_ok_and(|v| v <= 7);
                if !ok {
                    self.error(format!("error setting debuglevel {s}"));
                    return Err(Fail::Reported);
                }
                self.print(&format!("set debug {s}"));
            }
            "skip" => {
                self.bump();
                self.expect_kw("on")?;
                let ifs = crate::parse_rule::interface_list(self)?;
                if ifs.len() == 1 && !ifs[0].not && ifs[0].name == "none" {
                    self.print("set skip on none");
                } else {
                    let names: Vec<String> = ifs.iter().map(|i| format!(" {}", i.name)).collect();
                    self.print(&format!("set skip on {{{} }}", names.concat()));
                    for i in &ifs {
                        if i.not {
                            self.error("skip on ! <interface> is not supported");
                        } else if i.rdomain.is_some() {
                            self.error("skip on rdomain <num> is not supported");
                        }
                    }
                    if ifs.iter().any(|i| i.not || i.rdomain.is_some()) {
                        self.error("error setting skip interface(s)");
                        return Err(Fail::Reported);
                    }
                }
            }
            "state-defaults" => {
                self.bump();
                let opts = crate::rule_opts::state_opt_list(self)?;
                if self.state_defaults.is_some() {
                    self.error("cannot redefine state-defaults");
                    return Err(Fail::Reported);
                }
                self.state_defaults = Some(opts);
            }
            "syncookies" => {
                self.bump();
                let s = self.string("`never`, `adaptive` or `always`")?;
                if !["never", "adaptive", "always"].contains(&s.as_str()) {
                    self.error("illegal value for syncookies");
                    return Err(Fail::Reported);
                }
                let mut marks = String::new();
                if self.eat_punct('(') {
                    loop {
                        let k = self.string("`start` or `end`")?;
                        let v = self.string("a percentage")?;
                        let pct = v.strip_suffix('%').and_then(|x| x.parse::<f64>().ok());
                        let Some(pct) = pct else { return self.syntax("a percentage") };
                        if pct <= 0.0 || pct > 100.0 {
                            self.error("illegal percentage value");
                            return Err(Fail::Reported);
                        }
                        if k != "start" && k != "end" {
                            self.error("illegal syncookie option");
                            return Err(Fail::Reported);
                        }
                        marks.push_str(&format!(
                            "{}{k} {v}",
                            if marks.is_empty() { "" } else { ", " }
                        ));
                        if self.eat_punct(')') {
                            break;
                        }
                        self.comma();
                    }
                }
                if marks.is_empty() {
                    self.print(&format!("set syncookies {s}"));
                } else {
                    self.print(&format!("set syncookies {s} ({marks})"));
                }
            }
            _ => return self.syntax("an option name"),
        }
        Ok(())
    }

    fn timeout_spec(&mut self) -> PResult<()> {
        let name = self.string("a timeout name")?;
        let n = self.number("a number of seconds")?;
        if !(0..=i64::from(u32::MAX)).contains(&n) {
            self.error("only positive values permitted");
            return Err(Fail::Reported);
        }
        if !crate::ast::TIMEOUTS.contains(&name.as_str()) {
            self.error(format!("unknown timeout {name}"));
            return Err(Fail::Reported);
        }
        self.print(&format!("set timeout {name} {n}"));
        Ok(())
    }

    fn limit_spec(&mut self) -> PResult<()> {
        let name = self.string("a limit name")?;
        let n = self.number("a number")?;
        if !(0..=i64::from(u32::MAX)).contains(&n) {
            self.error("only positive values permitted");
            return Err(Fail::Reported);
        }
        const LIMITS: &[&str] = &[
            "states",
            "src-nodes",
            "frags",
            "tables",
            "table-entries",
            "pktdelay-pkts",
            "anchors",
        ];
        if !LIMITS.contains(&name.as_str()) {
            self.error(format!("unable to set limit {name} {n}"));
            return Err(Fail::Reported);
        }
        self.print(&format!("set limit {name} {n}"));
        Ok(())
    }

    // ---- tables ---------------------------------------------------------------------------

    pub(crate) fn tabledef(&mut self) -> PResult<()> {
        self.bump();
        self.expect_punct('<')?;
        let name = self.string("a table name")?;
        self.expect_punct('>')?;
        let mut t = TableDef { name: name.clone(), ..TableDef::default() };
        loop {
            if self.at_string() {
                let s = self.string("a table option")?;
                match s.as_str() {
                    "const" => t.is_const = true,
                    "persist" => t.persist = true,
                    "counters" => t.counters = true,
                    _ => {
                        self.error(format!("invalid table option '{s}'"));
                        return Err(Fail::Reported);
                    }
                }
            } else if self.eat_punct('{') {
                self.optnl();
                if self.eat_punct('}') {
                    t.init_addr = true;
                    continue;
                }
                let hosts = self.table_host_list()?;
                self.expect_punct('}')?;
                for h in &hosts {
                    let msg = match &h.addr {
                        AddrKind::Mask { .. } => continue,
                        AddrKind::Range { .. } => "address ranges are not permitted inside tables",
                        AddrKind::Dyn { .. } => "dynamic addresses are not permitted inside tables",
                        AddrKind::Table(_) => "tables cannot contain tables",
                        AddrKind::NoRoute => "\"no-route\" is not permitted inside tables",
                        AddrKind::UrpfFailed => "\"urpf-failed\" is not permitted inside tables",
                        _ => "unknown address type",
                    };
                    self.error(msg);
                    return Err(Fail::Reported);
                }
                t.entries.push(TableEntry::Hosts(hosts));
                t.init_addr = true;
            } else if self.eat_kw("file") {
                let f = self.string("a file name")?;
                t.entries.push(TableEntry::File(f));
                t.init_addr = true;
            } else {
                break;
            }
        }
        if name.len() >= 32 {
            self.error("table name too long, max 31 chars");
            return Err(Fail::Reported);
        }
        for e in &t.entries {
            if let TableEntry::File(f) = e {
                match self.host.read_file(f) {
                    Ok(text) => {
                        for w in text
                            .lines()
                            .map(|l| l.split('#').next().unwrap_or(""))
                            .flat_map(str::split_whitespace)
                        {
                            let w = w.strip_prefix('!').unwrap_or(w);
                            if addr::host(w, self.host).is_err() {
                                self.error(format!("file \"{f}\" contains bad data"));
                                return Err(Fail::Reported);
                            }
                        }
                    }
                    Err(e) => {
                        let why = io_reason(&e);
                        self.error(format!("cannot load \"{f}\": {why}"));
                        return Err(Fail::Reported);
                    }
                }
            }
        }
        if self.verbose && self.at_top_anchor() {
            let line = crate::print::tabledef(&t);
            self.stdout.push_str(&line);
        }
        self.ruleset.tables.push(t);
        Ok(())
    }

    fn table_host_list(&mut self) -> PResult<Vec<HostAddr>> {
        let mut out = Vec::new();
        loop {
            if self.peek().tok == Tok::Punct('{') && self.nest >= crate::parse::MAX_LIST_DEPTH {
                self.error(format!(
                    "lists nested too deeply (at most {})",
                    crate::parse::MAX_LIST_DEPTH
                ));
                return Err(Fail::Reported);
            }
            if self.eat_punct('{') {
                self.optnl();
                self.nest += 1;
                let inner = self.table_host_list();
                self.nest -= 1;
                out.extend(inner?);
                self.expect_punct('}')?;
            } else {
                out.extend(crate::parse_rule::xhost(self)?);
            }
            self.optnl();
            if self.peek().tok == Tok::Punct('}') {
                return Ok(out);
            }
            self.comma();
            self.optnl();
        }
    }

    /// Registers an automatic table holding `hosts` and prints it as pfctl does; returns its
    /// name.
    pub(crate) fn auto_table(&mut self, hosts: Vec<HostAddr>) -> String {
        let name = format!("__automatic_{}", self.auto_tables);
        self.auto_tables += 1;
        let t = TableDef {
            name: name.clone(),
            is_const: true,
            init_addr: true,
            entries: vec![TableEntry::Hosts(hosts)],
            ..TableDef::default()
        };
        if self.verbose {
            let line = crate::print::tabledef(&t);
            self.stdout.push_str(&line);
        }
        self.ruleset.tables.push(t);
        name
    }

    // ---- antispoof --------------------------------------------------------------------------

    pub(crate) fn antispoof(&mut self) -> PResult<()> {
        self.bump();
        let (log, logif, quick) = crate::parse_rule::logquick(self)?;
        self.expect_kw("for")?;
        let mut ifs = Vec::new();
        let one = |p: &mut Parser| -> PResult<crate::ast::IfItem> {
            if p.eat_punct('(') {
                let mut i = crate::parse_rule::if_item(p)?;
                p.expect_punct(')')?;
                i.dynamic = true;
                Ok(i)
            } else {
                crate::parse_rule::if_item(p)
            }
        };
        if self.eat_punct('{') {
            self.optnl();
            loop {
                ifs.push(one(self)?);
                self.optnl();
                if self.eat_punct('}') {
                    break;
                }
                self.comma();
                self.optnl();
            }
        } else {
            ifs.push(one(self)?);
        }
        let af = crate::parse_rule::af(self);
        let mut label = None;
        let mut rtable = None;
        loop {
            if self.eat_kw("label") {
                let l = self.string("a label")?;
                if label.is_some() {
                    self.error("label cannot be redefined");
                    return Err(Fail::Reported);
                }
                label = Some(l);
            } else if self.eat_kw("rtable") {
                let n = self.number("a routing table id")?;
                if !(0..=255).contains(&n) {
                    self.error("invalid rtable id");
                    return Err(Fail::Reported);
                }
                rtable = Some(n as i32);
            } else {
                break;
            }
        }
        crate::expand::antispoof(self, log, logif, quick, &ifs, af, label, rtable);
        Ok(())
    }

    // ---- queues -----------------------------------------------------------------------------

    pub(crate) fn queue(&mut self) -> PResult<()> {
        self.bump();
        let name = self.string("a queue name")?;
        let ifs =
            if self.eat_kw("on") { Some(crate::parse_rule::interface_list(self)?) } else { None };
        let mut q = Queue { name, line: self.last_line, ..Queue::default() };
        let (mut bw, mut parent, mut default, mut qlimit, mut flows, mut quantum) =
            (false, false, false, false, false, false);
        while let Tok::Word(w) = self.tok() {
            match w.as_str() {
                "bandwidth" => {
                    self.bump();
                    if bw {
                        self.error("bandwidth cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    bw = true;
                    q.bandwidth[0] = self.scspec()?;
                    loop {
                        let save_comma = self.peek().tok == Tok::Punct(',');
                        if save_comma {
                            self.bump();
                        }
                        if self.eat_kw("min") {
                            q.bandwidth[1] = self.scspec()?;
                        } else if self.eat_kw("max") {
                            q.bandwidth[2] = self.scspec()?;
                        } else if save_comma {
                            return self.syntax("`min` or `max`");
                        } else {
                            break;
                        }
                    }
                }
                "parent" => {
                    self.bump();
                    let p = self.string("a queue name")?;
                    if parent {
                        self.error("parent cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    parent = true;
                    q.parent = Some(p);
                }
                "default" => {
                    self.bump();
                    if default {
                        self.error("default cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    default = true;
                    q.default = true;
                }
                "qlimit" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if qlimit {
                        self.error("qlimit cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(0..=65535).contains(&n) {
                        self.error("qlimit out of range: max 65535");
                        return Err(Fail::Reported);
                    }
                    qlimit = true;
                    q.qlimit = n as u32;
                }
                "flows" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if flows {
                        self.error("number of flows cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(1..=32767).contains(&n) {
                        self.error("number of flows out of range: max 32767");
                        return Err(Fail::Reported);
                    }
                    flows = true;
                    q.flows = n as u32;
                }
                "quantum" => {
                    self.bump();
                    let n = self.number("a number")?;
                    if quantum {
                        self.error("quantum cannot be respecified");
                        return Err(Fail::Reported);
                    }
                    if !(1..=65535).contains(&n) {
                        self.error("quantum out of range: max 65535");
                        return Err(Fail::Reported);
                    }
                    quantum = true;
                    q.quantum = n as u32;
                }
                _ => break,
            }
        }
        if !(bw || parent || default || qlimit || flows || quantum) {
            return self.syntax("a queue option");
        }
        if ifs.is_none() && q.parent.is_none() {
            self.error("root queue without interface");
            return Err(Fail::Reported);
        }
        if let Some(ifs) = &ifs
            && (ifs.len() != 1 || !self.host.interfaces().iter().any(|i| i.name == ifs[0].name))
        {
            self.error("not an interface");
            return Err(Fail::Reported);
        }
        let names: Vec<String> = match &ifs {
            Some(v) => v.iter().map(|i| i.name.clone()).collect(),
            None => vec![String::new()],
        };
        for ifname in names {
            if !bw && !flows {
                self.error("no bandwidth or flow specification");
                return Err(Fail::Reported);
            }
            let mut qq = q.clone();
            qq.ifname = ifname;
            self.ruleset.queues.push(qq);
        }
        Ok(())
    }

    fn scspec(&mut self) -> PResult<(u32, u32, u32)> {
        let m2 = self.bandwidth()?;
        if self.eat_kw("burst") {
            let m1 = self.bandwidth()?;
            self.expect_kw("for")?;
            let s = self.string("a time in ms")?;
            let ms = s.strip_suffix("ms").and_then(|v| v.parse::<u32>().ok());
            let Some(ms) = ms else {
                self.error("time in scspec must be in ms");
                return Err(Fail::Reported);
            };
            return Ok((m2, m1, ms));
        }
        Ok((m2, 0, 0))
    }

    fn bandwidth(&mut self) -> PResult<u32> {
        if let Tok::Number(n) = self.tok() {
            self.bump();
            if !(0..=i64::from(u32::MAX)).contains(&n) {
                self.error("bandwidth number too big");
                return Err(Fail::Reported);
            }
            return Ok(n as u32);
        }
        let s = self.string("a bandwidth")?;
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let Ok(v) = num.parse::<f64>() else {
            self.error(format!("unknown unit \"{unit}\""));
            return Err(Fail::Reported);
        };
        let unit = unit.trim_end_matches("Bit").trim_end_matches("bit");
        let unit =
            if unit.len() > 1 { unit.trim_end_matches('B').trim_end_matches('b') } else { unit };
        let mult = match unit {
            "" | "b" => 1.0,
            "K" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "%" => {
                self.error("no bandwidth in % yet");
                return Err(Fail::Reported);
            }
            _ => {
                self.error(format!("unknown unit \"{unit}\""));
                return Err(Fail::Reported);
            }
        };
        Ok((v * mult) as u32)
    }
}
