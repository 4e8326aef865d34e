//! pf's state timeouts and limits: the defaults of `pfvar.h`, what `set timeout` / `set limit`
//! change, and `pf_state_expires`' adaptive scaling.
//!
//! Why its own module: a state's lifetime depends on three layers — pf's defaults, the rule
//! set's `set timeout` and the rule's own `<timeout> N` options — and, past `adaptive.start`
//! states, on how full the table is. The table of defaults exists once, here, indexed as
//! `sift_pf::ast::TIMEOUTS` names them.

use sift_pf::ast::TIMEOUTS;

/// Indices into the timeouts (`PFTM_*`, in [`TIMEOUTS`] order).
pub mod tm {
    /// `tcp.first`: after the first packet.
    pub const TCP_FIRST: usize = 0;
    /// `tcp.opening`: before both sides are established.
    pub const TCP_OPENING: usize = 1;
    /// `tcp.established`
    pub const TCP_ESTABLISHED: usize = 2;
    /// `tcp.closing`: after the first FIN.
    pub const TCP_CLOSING: usize = 3;
    /// `tcp.finwait`: both sides sent FIN.
    pub const TCP_FIN_WAIT: usize = 4;
    /// `tcp.closed`: both FINs acknowledged, or a reset.
    pub const TCP_CLOSED: usize = 5;
    /// `udp.first`
    pub const UDP_FIRST: usize = 6;
    /// `udp.single`: only the first side sent.
    pub const UDP_SINGLE: usize = 7;
    /// `udp.multiple`: both sides sent.
    pub const UDP_MULTIPLE: usize = 8;
    /// `icmp.first`
    pub const ICMP_FIRST: usize = 9;
    /// `icmp.error`: after a reply.
    pub const ICMP_ERROR: usize = 10;
    /// `other.first`
    pub const OTHER_FIRST: usize = 11;
    /// `other.single`
    pub const OTHER_SINGLE: usize = 12;
    /// `other.multiple`
    pub const OTHER_MULTIPLE: usize = 13;
    /// `frag`
    pub const FRAG: usize = 14;
    /// `interval`: how often pf's purge walks the whole table.
    pub const INTERVAL: usize = 15;
    /// `adaptive.start`
    pub const ADAPTIVE_START: usize = 16;
    /// `adaptive.end`
    pub const ADAPTIVE_END: usize = 17;
    /// `src.track`
    pub const SRC_NODE: usize = 18;
    /// `tcp.tsdiff`
    pub const TS_DIFF: usize = 19;
    /// How many.
    pub const COUNT: usize = 20;
}

/// pf's default timeouts in seconds (`PFTM_*_VAL`), adaptive thresholds in states
/// (`PFSTATE_ADAPT_START`/`_END`: 60% and 120% of the default state limit).
pub const DEFAULT_TIMEOUTS: [u32; tm::COUNT] = [
    120,     // tcp.first
    30,      // tcp.opening
    86_400,  // tcp.established
    900,     // tcp.closing
    45,      // tcp.finwait
    90,      // tcp.closed
    60,      // udp.first
    30,      // udp.single
    60,      // udp.multiple
    20,      // icmp.first
    10,      // icmp.error
    60,      // other.first
    30,      // other.single
    60,      // other.multiple
    60,      // frag
    10,      // interval
    60_000,  // adaptive.start
    120_000, // adaptive.end
    0,       // src.track
    30,      // tcp.tsdiff
];

/// pf's default `set limit states` (`PFSTATE_HIWAT`).
pub const DEFAULT_STATE_LIMIT: u32 = 100_000;
/// pf's default `set limit src-nodes` (`PFSNODE_HIWAT`).
pub const DEFAULT_SRC_NODE_LIMIT: u32 = 10_000;
/// pf's default `set limit frags` (`PFFRAG_FRENT_HIWAT`, as `pfctl -sm` shows it).
pub const DEFAULT_FRAG_LIMIT: u32 = 65_536;
/// pf's default `set limit tables` (`PFR_KTABLE_HIWAT`).
pub const DEFAULT_TABLE_LIMIT: u32 = 1_000;
/// pf's default `set limit table-entries` (`PFR_KENTRY_HIWAT`).
pub const DEFAULT_TABLE_ENTRY_LIMIT: u32 = 200_000;

/// Why a `set` line could not be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// `set timeout NAME` with a name pf does not know.
    #[error("line {line}: unknown timeout {name:?}")]
    Timeout {
        /// The line (1-based) of the text read.
        line: usize,
        /// The name.
        name: String,
    },
    /// A number that is not one.
    #[error("line {line}: {text:?} is not a number")]
    Number {
        /// The line (1-based).
        line: usize,
        /// The text.
        text: String,
    },
}

/// The rule set's global options that concern states and resources (`set timeout`,
/// `set limit states|src-nodes|frags|tables|table-entries`, `set state-policy`,
/// `set reassemble`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Timeouts by [`tm`] index.
    pub timeouts: [u32; tm::COUNT],
    /// `set limit states`.
    pub state_limit: u32,
    /// `set limit src-nodes`.
    pub src_node_limit: u32,
    /// `set state-policy if-bound` (default floating).
    pub if_bound: bool,
    /// `set limit frags`: fragments held for reassembly.
    pub frag_limit: u32,
    /// `set limit tables`.
    pub table_limit: u32,
    /// `set limit table-entries`: entries of all tables together.
    pub table_entry_limit: u32,
    /// `set reassemble yes|no [no-df]`: (reassemble, clear DF on fragments).
    pub reassemble: (bool, bool),
    /// Whether `adaptive.start`/`adaptive.end` were set (otherwise they follow the state
    /// limit, 60% and 120%, as pfctl sets them with `set limit states`).
    adaptive_set: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeouts: DEFAULT_TIMEOUTS,
            state_limit: DEFAULT_STATE_LIMIT,
            src_node_limit: DEFAULT_SRC_NODE_LIMIT,
            if_bound: false,
            frag_limit: DEFAULT_FRAG_LIMIT,
            table_limit: DEFAULT_TABLE_LIMIT,
            table_entry_limit: DEFAULT_TABLE_ENTRY_LIMIT,
            reassemble: (true, false),
            adaptive_set: false,
        }
    }
}

impl Settings {
    /// The index of timeout `name` (`tcp.first`, … as pfctl names them).
    pub fn timeout_index(name: &str) -> Option<usize> {
        TIMEOUTS.iter().position(|&t| t == name)
    }

    /// `set timeout NAME SECONDS`; false if the name is unknown.
    pub fn set_timeout(&mut self, name: &str, seconds: u32) -> bool {
        let Some(i) = Settings::timeout_index(name) else { return false };
        self.timeouts[i] = seconds;
        if i == tm::ADAPTIVE_START || i == tm::ADAPTIVE_END {
            self.adaptive_set = true;
        }
        true
    }

    /// `set limit states N`: adaptive scaling follows (60% / 120%) unless it was set.
    pub fn set_state_limit(&mut self, n: u32) {
        self.state_limit = n;
        if !self.adaptive_set {
            self.timeouts[tm::ADAPTIVE_START] = (u64::from(n) * 6 / 10) as u32;
            self.timeouts[tm::ADAPTIVE_END] = (u64::from(n) * 12 / 10) as u32;
        }
    }

    /// Reads the `set` lines of `pfctl -nv`'s output (sift-pf prints every option it read in
    /// pfctl's canonical form; other lines are ignored).
    pub fn from_pfctl_verbose(text: &str) -> Result<Settings, SettingsError> {
        let mut s = Settings::default();
        for (i, line) in text.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |w: &str| {
                w.parse::<u32>().map_err(|_| SettingsError::Number { line: i + 1, text: w.into() })
            };
            match words.as_slice() {
                ["set", "timeout", name, n] => {
                    let n = number(n)?;
                    if !s.set_timeout(name, n) {
                        return Err(SettingsError::Timeout { line: i + 1, name: name.to_string() });
                    }
                }
                ["set", "limit", "states", n] => s.set_state_limit(number(n)?),
                ["set", "limit", "src-nodes", n] => s.src_node_limit = number(n)?,
                ["set", "limit", "frags", n] => s.frag_limit = number(n)?,
                ["set", "limit", "tables", n] => s.table_limit = number(n)?,
                ["set", "limit", "table-entries", n] => s.table_entry_limit = number(n)?,
                ["set", "reassemble", yes, rest @ ..] => {
                    s.reassemble = (*yes == "yes", rest.contains(&"no-df"));
                }
                ["set", "state-policy", p] => s.if_bound = *p == "if-bound",
                _ => {}
            }
        }
        Ok(s)
    }
}

/// pf's `pf_state_expires`: when a state last active at `last` with timeout `timeout` expires.
/// `rule` are the rule's own timeouts (0: unset), `rule_states` the rule's state count (used
/// when the rule sets its own `adaptive.start`), `states` the table's.
pub fn expires(
    settings: &Settings,
    rule: &[u32; tm::COUNT],
    timeout: usize,
    last: u64,
    rule_states: u32,
    states: u32,
) -> u64 {
    let pick = |i: usize| if rule[i] != 0 { rule[i] } else { settings.timeouts[i] };
    let mut t = u64::from(pick(timeout));
    let (start, end, n) = if rule[tm::ADAPTIVE_START] != 0 {
        (rule[tm::ADAPTIVE_START], rule[tm::ADAPTIVE_END], rule_states)
    } else {
        (settings.timeouts[tm::ADAPTIVE_START], settings.timeouts[tm::ADAPTIVE_END], states)
    };
    if start != 0 && end > start && n > start {
        if n >= end {
            return last;
        }
        t = t * u64::from(end - n) / u64::from(end - start);
    }
    last + t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_names_line_up() {
        assert_eq!(TIMEOUTS.len(), tm::COUNT);
        assert_eq!(Settings::timeout_index("tcp.established"), Some(tm::TCP_ESTABLISHED));
        assert_eq!(Settings::timeout_index("src.track"), Some(tm::SRC_NODE));
        assert_eq!(DEFAULT_TIMEOUTS[tm::INTERVAL], 10);
    }

    #[test]
    fn set_lines_are_read() {
        let s = Settings::from_pfctl_verbose(
            "set limit states 1000\nset timeout tcp.first 5\nset state-policy if-bound\npass all\n",
        )
        .unwrap();
        assert_eq!(s.state_limit, 1000);
        assert_eq!(s.timeouts[tm::ADAPTIVE_START], 600);
        assert_eq!(s.timeouts[tm::ADAPTIVE_END], 1200);
        assert_eq!(s.timeouts[tm::TCP_FIRST], 5);
        assert!(s.if_bound);
        assert!(Settings::from_pfctl_verbose("set timeout nope 1\n").is_err());
    }

    #[test]
    fn adaptive_scaling_as_pf_state_expires() {
        let mut s = Settings::default();
        s.set_state_limit(100);
        let none = [0; tm::COUNT];
        // Below adaptive.start (60): the full timeout.
        assert_eq!(expires(&s, &none, tm::UDP_SINGLE, 1000, 0, 50), 1030);
        // Halfway between 60 and 120: half of it.
        assert_eq!(expires(&s, &none, tm::UDP_SINGLE, 1000, 0, 90), 1015);
        // At adaptive.end: at once.
        assert_eq!(expires(&s, &none, tm::UDP_SINGLE, 1000, 0, 120), 1000);
        // A rule's own timeout wins.
        let mut r = none;
        r[tm::UDP_SINGLE] = 7;
        assert_eq!(expires(&s, &r, tm::UDP_SINGLE, 1000, 0, 0), 1007);
    }
}
