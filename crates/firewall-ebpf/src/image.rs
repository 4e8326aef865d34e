//! What the maps hold for a rule set: the classifier's [`Tables`] and the state options turned
//! into map entries, checked first, written the same way into sift's VM and into the kernel.
//!
//! Why its own module: the program trusts the maps (a class past `pf_bits` reads as "no rule"),
//! so every index the tables hold is checked here, once, with a typed error; and the two engines
//! differ only in how an entry is written ([`MapsMut`]).

use sift_firewall::Settings;

use crate::Tables;
use crate::layout::{self, Config, MAX_WORDS, RuleEntry, map, region, rule_flag};
use crate::{Error, Result};

/// Writing map entries (sift's VM or the kernel).
pub trait MapsMut {
    /// Writes `value` at `key` of map `name` (`BPF_ANY`).
    fn write(&mut self, name: &str, key: &[u8], value: &[u8]) -> Result<()>;
}

/// The map entries of a rule set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// `pf_config`.
    pub config: Config,
    /// `pf_class`, [`region::ENTRIES`] classes.
    pub classes: Vec<u32>,
    /// `pf_bits`: each class's vector, [`MAX_WORDS`] words.
    pub bits: Vec<Vec<u64>>,
    /// `pf_rules`, by rule index.
    pub rules: Vec<RuleEntry>,
    /// `pf_src4`, `pf_dst4`, `pf_src6`, `pf_dst6`: (key, class).
    pub tries: [Vec<(Vec<u8>, u32)>; 4],
    /// `pf_states`' size (`set limit states`).
    pub state_limit: u32,
}

fn check_len(what: &'static str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::Tables(format!("{what}: {got} entries, not {want}")));
    }
    Ok(())
}

impl Image {
    /// The entries of `t` under `settings` (timeouts and the state limit).
    pub fn new(t: &Tables, settings: &Settings) -> Result<Image> {
        let nclasses = t.bits.len();
        if t.nwords == 0 || t.nwords as usize > MAX_WORDS {
            return Err(Error::Tables(format!("{} words (1 to {MAX_WORDS})", t.nwords)));
        }
        if t.rules.len() > t.nwords as usize * 64 {
            return Err(Error::Tables(format!(
                "{} rules do not fit {} words",
                t.rules.len(),
                t.nwords
            )));
        }
        let class = |what: &'static str, c: u32| -> Result<u32> {
            if c as usize >= nclasses {
                return Err(Error::Tables(format!("{what}: class {c} of {nclasses}")));
            }
            Ok(c)
        };
        let mut bits = Vec::with_capacity(nclasses);
        for (i, b) in t.bits.iter().enumerate() {
            if b.len() != t.nwords as usize {
                return Err(Error::Tables(format!(
                    "class {i}: {} words, not {}",
                    b.len(),
                    t.nwords
                )));
            }
            let mut v = b.clone();
            v.resize(MAX_WORDS, 0);
            bits.push(v);
        }
        check_len("proto", t.proto.len(), 512)?;
        check_len("sport", t.sport.len(), 65_537)?;
        check_len("dport", t.dport.len(), 65_537)?;
        check_len("tcpflags", t.tcpflags.len(), 257)?;
        check_len("icmp", t.icmp.len(), 131_073)?;
        check_len("tos", t.tos.len(), 256)?;
        let mut classes = vec![0u32; region::ENTRIES as usize];
        for (what, start, v) in [
            ("proto", region::PROTO, &t.proto),
            ("sport", region::SPORT, &t.sport),
            ("dport", region::DPORT, &t.dport),
            ("tcpflags", region::TCPFLAGS, &t.tcpflags),
            ("icmp", region::ICMP, &t.icmp),
            ("tos", region::TOS, &t.tos),
        ] {
            for (i, &c) in v.iter().enumerate() {
                classes[start as usize + i] = class(what, c)?;
            }
        }
        let mut tries: [Vec<(Vec<u8>, u32)>; 4] = Default::default();
        for (i, v) in [&t.src4, &t.dst4].into_iter().enumerate() {
            for p in v {
                if p.len > 32 {
                    return Err(Error::Tables(format!("IPv4 prefix length {}", p.len)));
                }
                tries[i].push((layout::lpm_key(p.len, &p.addr), class("address", p.class)?));
            }
        }
        for (i, v) in [&t.src6, &t.dst6].into_iter().enumerate() {
            for p in v {
                if p.len > 128 {
                    return Err(Error::Tables(format!("IPv6 prefix length {}", p.len)));
                }
                tries[2 + i].push((layout::lpm_key(p.len, &p.addr), class("address", p.class)?));
            }
        }
        let rules = t
            .rules
            .iter()
            .map(|r| {
                let f = |b: bool, v: u32| if b { v } else { 0 };
                RuleEntry {
                    nr: r.nr,
                    flags: f(r.block, rule_flag::BLOCK)
                        | f(r.quick, rule_flag::QUICK)
                        | f(r.keep_state, rule_flag::KEEP)
                        | f(r.sloppy, rule_flag::SLOPPY)
                        | f(r.log, rule_flag::LOG)
                        | f(r.log_all, rule_flag::LOG_ALL),
                }
            })
            .collect();
        let mut timeouts = [0u32; layout::TIMEOUTS];
        timeouts.copy_from_slice(&settings.timeouts[..layout::TIMEOUTS]);
        let config = Config {
            nwords: t.nwords,
            quick: class("quick", t.quick)?,
            dir: [class("dir_in", t.dir_in)?, class("dir_out", t.dir_out)?],
            frag: [class("frag", t.frag[0])?, class("frag", t.frag[1])?, class("frag", t.frag[2])?],
            timeouts,
        };
        Ok(Image { config, classes, bits, rules, tries, state_limit: settings.state_limit.max(1) })
    }

    /// Writes every entry (maps freshly created: zero entries of the class array are left).
    pub fn write(&self, maps: &mut dyn MapsMut) -> Result<()> {
        maps.write(map::CONFIG, &0u32.to_le_bytes(), &self.config.encode())?;
        for (i, &c) in self.classes.iter().enumerate() {
            if c != 0 {
                maps.write(map::CLASS, &(i as u32).to_le_bytes(), &c.to_le_bytes())?;
            }
        }
        for (i, b) in self.bits.iter().enumerate() {
            let v: Vec<u8> = b.iter().flat_map(|w| w.to_le_bytes()).collect();
            maps.write(map::BITS, &(i as u32).to_le_bytes(), &v)?;
        }
        for (i, r) in self.rules.iter().enumerate() {
            maps.write(map::RULES, &(i as u32).to_le_bytes(), &r.encode())?;
        }
        for (name, entries) in [map::SRC4, map::DST4, map::SRC6, map::DST6].iter().zip(&self.tries)
        {
            for (k, c) in entries {
                maps.write(name, k, &c.to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// The classes `pf_bits` needs room for.
    pub fn classes_needed(&self) -> u32 {
        self.bits.len().max(1) as u32
    }
}
