//! What the kernel program cannot do, refused before a rule set is loaded, with the rule
//! named.
//!
//! Why its own module: the classifier refuses what it cannot classify (rule-level matching);
//! this is the other half, the actions and options of the rules it classified that the fixed
//! program does not carry out. A rule set that passes both runs as `Firewall::test` runs it.

use sift_firewall::{Firewall, Settings};
use sift_pf::addr::AddrKind;
use sift_pf::ast::{self, Rule, flag};
use sift_pf::host::Host;

use crate::{Error, Result, RuleSet, Tables};

/// What of `r` the program cannot do (`None`: nothing).
fn unsupported(r: &Rule) -> Option<&'static str> {
    let f = r.rule_flag;
    let pool = |p: &ast::Pool| !matches!(p.addr, AddrKind::None);
    Some(if r.action == ast::Action::Match {
        "a match rule"
    } else if r.anchor.is_some() {
        "an anchor call"
    } else if f & flag::AFTO != 0 {
        "af-to"
    } else if pool(&r.nat) {
        "nat-to / binat-to"
    } else if pool(&r.rdr) {
        "rdr-to"
    } else if r.rt != ast::Route::None || pool(&r.route) {
        "route-to / reply-to / dup-to"
    } else if r.keep_state == ast::state::SYNPROXY {
        "synproxy state"
    } else if r.keep_state == ast::state::MODULATE {
        "modulate state"
    } else if r.action == ast::Action::Block
        && f & (flag::RETURN | flag::RETURNRST | flag::RETURNICMP) != 0
    {
        "block return"
    } else if r.scrub_flags != 0 || r.min_ttl != 0 || r.max_mss != 0 || r.set_tos != 0 {
        "scrub (packet normalization)"
    } else if r.max_states != 0 {
        "max (a rule's state limit)"
    } else if r.max_src_nodes != 0
        || r.max_src_states != 0
        || r.max_src_conn != 0
        || r.max_src_conn_rate.0 != 0
        || !r.overload.is_empty()
        || f & (flag::SRCTRACK | flag::RULESRCTRACK) != 0
    {
        "source tracking (max-src-*, overload)"
    } else if r.timeout.iter().any(|&t| t != 0) {
        "a rule's own timeouts"
    } else if r.divert.0 != 0 {
        "divert"
    } else if f & flag::ONCE != 0 {
        "once"
    } else if r.pktrate.0 != 0 {
        "max-pkt-rate"
    } else if !r.tag.is_empty() {
        "tag"
    } else if !r.qname.is_empty() || r.set_prio != [0, 0] || r.delay != 0 {
        "queueing (set queue, set prio, set delay)"
    } else if r.rtableid.is_some() {
        "rtable"
    } else {
        return None;
    })
}

impl RuleSet {
    /// Checks the rules `tables` classifies (rules of `fw`): an error names the first rule
    /// the program cannot carry out. On success, the rules'
    /// `log` bits and interface binding are taken from `fw` (for reading states back).
    pub fn check(
        &mut self,
        fw: &Firewall,
        host: &dyn Host,
        tables: &Tables,
        settings: &Settings,
    ) -> Result<()> {
        for (i, meta) in tables.rules.iter().enumerate() {
            let Some(r) = fw.rule(meta.id) else { continue };
            if let Some(what) = unsupported(r) {
                return Err(Error::Unsupported {
                    nr: meta.nr,
                    text: sift_pf::print::rule(r, host),
                    what: what.to_string(),
                });
            }
            if let Some(b) = self.log_bits.get_mut(i) {
                *b = r.log;
            }
            if let Some(b) = self.if_bound.get_mut(i) {
                *b = r.rule_flag & flag::IFBOUND != 0 || settings.if_bound;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Rule {
        let host = sift_pf::host::FixtureHost::openbsd(".");
        let rs = sift_pf::parse("pf.conf", text, &sift_pf::Options::default(), &host).unwrap();
        rs.anchors[0].rules[0].clone()
    }

    #[test]
    fn what_the_program_cannot_do_is_named() {
        for (text, what) in [
            ("pass out on em0 from any to any nat-to 192.0.2.1\n", Some("nat-to / binat-to")),
            ("pass in proto tcp to port 80 rdr-to 10.0.0.1\n", Some("rdr-to")),
            ("pass out route-to 192.0.2.1 keep state\n", Some("route-to / reply-to / dup-to")),
            ("pass in proto tcp all synproxy state\n", Some("synproxy state")),
            ("pass out proto tcp all modulate state\n", Some("modulate state")),
            ("block return in all\n", Some("block return")),
            ("block return-rst in proto tcp all\n", Some("block return")),
            ("pass in all scrub (no-df)\n", Some("scrub (packet normalization)")),
            ("pass in all keep state (max 10)\n", Some("max (a rule's state limit)")),
            (
                "pass in proto tcp all keep state (max-src-conn 5)\n",
                Some("source tracking (max-src-*, overload)"),
            ),
            ("pass in all keep state (tcp.established 60)\n", Some("a rule's own timeouts")),
            ("match in all\n", Some("a match rule")),
            ("pass in all tag foo\n", Some("tag")),
            ("pass in all keep state\n", None),
            ("block in log quick proto udp all\n", None),
            ("pass in proto tcp all flags S/SA keep state (sloppy)\n", None),
        ] {
            assert_eq!(unsupported(&rule(text)), what, "{text}");
        }
    }
}
