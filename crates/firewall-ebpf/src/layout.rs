//! The layout the program and this crate share (`bpf/pf.bpf.h`): map names, the class array's
//! regions, flag bits, pf's numbers and the byte layout of the maps' keys and values.
//!
//! Why its own module: the C header is the source of these numbers; every constant here is
//! checked against it by a test (`header_and_layout_agree`), and the encoders below are the only
//! place that knows where a field sits in a map value.

use sift_firewall::packet::Direction;

/// Words of a rule bit vector (`PF_MAX_WORDS`).
pub const MAX_WORDS: usize = 64;
/// Rules the program decides among (`PF_MAX_RULES`).
pub const MAX_RULES: usize = MAX_WORDS * 64;
/// The rule index of pf's default rule (`PF_NO_RULE`).
pub const NO_RULE: u32 = u32::MAX;
/// The per-rule counters' slot of the default rule (`PF_DEFAULT_SLOT`).
pub const DEFAULT_SLOT: u32 = MAX_RULES as u32;
/// Classes the `pf_bits` map holds unless the loader sizes it (`PF_MAX_CLASSES`).
pub const MAX_CLASSES: u32 = 16384;

/// The class array's regions (`PF_CL_*`): where each field's packet value → class table
/// starts.
pub mod region {
    /// `(af == inet6) * 256 + protocol`, 512 entries.
    pub const PROTO: u32 = 0;
    /// Source port, or [`super::NO_PORTS`]; 65,537 entries.
    pub const SPORT: u32 = 512;
    /// Destination port, as `SPORT`.
    pub const DPORT: u32 = SPORT + 65_537;
    /// TCP flags byte, or [`super::NO_FLAGS`]; 257 entries.
    pub const TCPFLAGS: u32 = DPORT + 65_537;
    /// `(af == inet6) * 65536 + type * 256 + code`, or [`super::NO_ICMP`]; 131,073 entries.
    pub const ICMP: u32 = TCPFLAGS + 257;
    /// TOS / traffic class; 256 entries.
    pub const TOS: u32 = ICMP + 131_073;
    /// Entries of the whole array.
    pub const ENTRIES: u32 = TOS + 256;
}

/// The port index of a packet without ports (`PF_NO_PORTS`).
pub const NO_PORTS: u32 = 65_536;
/// The flags index of a packet that is not TCP (`PF_NO_FLAGS`).
pub const NO_FLAGS: u32 = 256;
/// The ICMP index of a packet that is not ICMP of its family (`PF_NO_ICMP`).
pub const NO_ICMP: u32 = 131_072;

/// A rule's flags in `pf_rules` (`PF_R_*`).
pub mod rule_flag {
    /// `block`
    pub const BLOCK: u32 = 1;
    /// `quick`
    pub const QUICK: u32 = 2;
    /// `keep state`
    pub const KEEP: u32 = 4;
    /// `keep state (sloppy)`
    pub const SLOPPY: u32 = 8;
    /// `log`
    pub const LOG: u32 = 16;
    /// `log (all)`
    pub const LOG_ALL: u32 = 32;
}

/// A state's flags (`PF_S_*`).
pub mod state_flag {
    /// Sloppy tracking.
    pub const SLOPPY: u8 = 1;
    /// Its rule logs.
    pub const LOG: u8 = 2;
    /// Its rule logs every packet of its states.
    pub const LOG_ALL: u8 = 4;
}

/// The program's family numbers (`PF_INET`, `PF_INET6`).
pub const INET: u8 = 0;
/// See [`INET`].
pub const INET6: u8 = 1;
/// Directions (`PF_IN`, `PF_OUT`).
pub const IN: u8 = 0;
/// See [`IN`].
pub const OUT: u8 = 1;
/// pf's reasons the program counts (`PFRES_MAX`).
pub const REASONS: usize = 17;
/// Timeouts (`PFTM_MAX`).
pub const TIMEOUTS: usize = 20;
/// Bytes of a packet a pflog record carries (`PF_LOG_SNAP`).
pub const LOG_SNAP: usize = 128;
/// The ring buffer's bytes (`PF_LOG_BYTES`).
pub const LOG_BYTES: u32 = 262_144;
/// IPv6 extension headers walked at most (`PF_MAX_EXT`).
pub const MAX_EXT: usize = 64;

/// The maps' names in the object.
pub mod map {
    /// The configuration.
    pub const CONFIG: &str = "pf_config";
    /// Packet value → class.
    pub const CLASS: &str = "pf_class";
    /// Class → rule bit vector.
    pub const BITS: &str = "pf_bits";
    /// IPv4 source address → class.
    pub const SRC4: &str = "pf_src4";
    /// IPv4 destination address → class.
    pub const DST4: &str = "pf_dst4";
    /// IPv6 source address → class.
    pub const SRC6: &str = "pf_src6";
    /// IPv6 destination address → class.
    pub const DST6: &str = "pf_dst6";
    /// Rule index → what it does.
    pub const RULES: &str = "pf_rules";
    /// The state table.
    pub const STATES: &str = "pf_states";
    /// Per-rule counters.
    pub const RULE_COUNTERS: &str = "pf_rule_counters";
    /// Global counters.
    pub const COUNTERS: &str = "pf_counters";
    /// pflog records.
    pub const LOG: &str = "pf_log";
    /// A packet's work, per CPU (the program's own).
    pub const SCRATCH: &str = "pf_scratch";
}

/// The programs' names in the object.
pub mod program {
    /// XDP: packets going in.
    pub const XDP: &str = "pf_xdp";
    /// TC ingress: packets going in.
    pub const TC_IN: &str = "pf_tc_in";
    /// TC egress: packets going out.
    pub const TC_OUT: &str = "pf_tc_out";
}

/// The program's number for a direction.
pub fn dir_number(dir: Direction) -> u8 {
    match dir {
        Direction::In => IN,
        Direction::Out => OUT,
    }
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

/// `struct pf_config`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Words in use.
    pub nwords: u32,
    /// The class of the quick rules.
    pub quick: u32,
    /// The classes of the rules for this interface, in and out.
    pub dir: [u32; 2],
    /// The classes for not a fragment, a TCP fragment, another fragment.
    pub frag: [u32; 3],
    /// Timeouts in seconds by pf's index.
    pub timeouts: [u32; TIMEOUTS],
}

impl Config {
    /// `sizeof(struct pf_config)`.
    pub const SIZE: usize = 28 + 4 * TIMEOUTS + 4;

    /// The map value.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::SIZE);
        for x in [self.nwords, self.quick, self.dir[0], self.dir[1]].iter().chain(&self.frag) {
            v.extend_from_slice(&x.to_le_bytes());
        }
        for t in self.timeouts {
            v.extend_from_slice(&t.to_le_bytes());
        }
        // `zero`: always 0 (the program hides offsets from its verifier with it).
        v.extend_from_slice(&0u32.to_le_bytes());
        v
    }
}

/// `struct pf_rule`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleEntry {
    /// pf's rule number.
    pub nr: u32,
    /// [`rule_flag`] bits.
    pub flags: u32,
}

impl RuleEntry {
    /// `sizeof(struct pf_rule)`.
    pub const SIZE: usize = 8;

    /// The map value.
    pub fn encode(&self) -> [u8; 8] {
        let mut v = [0u8; 8];
        v[..4].copy_from_slice(&self.nr.to_le_bytes());
        v[4..].copy_from_slice(&self.flags.to_le_bytes());
        v
    }
}

/// An LPM trie key (`struct pf_lpm4` / `pf_lpm6`): the prefix length, then the address.
pub fn lpm_key(len: u8, addr: &[u8]) -> Vec<u8> {
    let mut k = u32::from(len).to_le_bytes().to_vec();
    k.extend_from_slice(addr);
    k
}

/// `struct pf_rule_counters`, summed over the CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleCounters {
    /// Classifications that ended at this rule.
    pub stops: u64,
    /// Packets by direction (in, out).
    pub packets: [u64; 2],
    /// Bytes by direction.
    pub bytes: [u64; 2],
    /// States created.
    pub states: u64,
}

impl RuleCounters {
    /// `sizeof(struct pf_rule_counters)`.
    pub const SIZE: usize = 48;

    /// Reads a (summed) value.
    pub fn decode(b: &[u8]) -> RuleCounters {
        RuleCounters {
            stops: u64_at(b, 0),
            packets: [u64_at(b, 8), u64_at(b, 16)],
            bytes: [u64_at(b, 24), u64_at(b, 32)],
            states: u64_at(b, 40),
        }
    }
}

/// `struct pf_counters`, summed over the CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Decisions by pf's reason (passes by a state are not counted).
    pub reasons: [u64; REASONS],
    /// State lookups.
    pub searches: u64,
    /// States created.
    pub inserts: u64,
    /// States removed by the program (expired, or closed and reused).
    pub removals: u64,
    /// Packets by direction (in, out) and verdict (passed, blocked).
    pub packets: [[u64; 2]; 2],
    /// Bytes (IP total lengths), as `packets`.
    pub bytes: [[u64; 2]; 2],
    /// Frames that were not IPv4 or IPv6 (passed).
    pub not_ip: u64,
    /// pflog records lost (the ring buffer was full).
    pub log_lost: u64,
}

impl Counters {
    /// `sizeof(struct pf_counters)`.
    pub const SIZE: usize = 8 * (REASONS + 3 + 4 + 4 + 2);

    /// Reads a (summed) value.
    pub fn decode(b: &[u8]) -> Counters {
        let mut c = Counters::default();
        for (i, r) in c.reasons.iter_mut().enumerate() {
            *r = u64_at(b, 8 * i);
        }
        let o = 8 * REASONS;
        c.searches = u64_at(b, o);
        c.inserts = u64_at(b, o + 8);
        c.removals = u64_at(b, o + 16);
        c.packets =
            [[u64_at(b, o + 24), u64_at(b, o + 32)], [u64_at(b, o + 40), u64_at(b, o + 48)]];
        c.bytes = [[u64_at(b, o + 56), u64_at(b, o + 64)], [u64_at(b, o + 72), u64_at(b, o + 80)]];
        c.not_ip = u64_at(b, o + 88);
        c.log_lost = u64_at(b, o + 96);
        c
    }
}

/// `struct pf_state_key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateKeyBytes {
    /// Addresses, network order, IPv4 in the first 4 bytes.
    pub addr: [[u8; 16]; 2],
    /// Ports.
    pub port: [u16; 2],
    /// [`INET`] or [`INET6`].
    pub af: u8,
    /// The protocol.
    pub proto: u8,
}

impl StateKeyBytes {
    /// `sizeof(struct pf_state_key)`.
    pub const SIZE: usize = 40;

    /// Reads a key.
    pub fn decode(b: &[u8]) -> StateKeyBytes {
        let mut addr = [[0u8; 16]; 2];
        addr[0].copy_from_slice(&b[0..16]);
        addr[1].copy_from_slice(&b[16..32]);
        StateKeyBytes { addr, port: [u16_at(b, 32), u16_at(b, 34)], af: b[36], proto: b[37] }
    }

    /// The map key.
    pub fn encode(&self) -> [u8; Self::SIZE] {
        let mut k = [0u8; Self::SIZE];
        k[0..16].copy_from_slice(&self.addr[0]);
        k[16..32].copy_from_slice(&self.addr[1]);
        k[32..34].copy_from_slice(&self.port[0].to_le_bytes());
        k[34..36].copy_from_slice(&self.port[1].to_le_bytes());
        k[36] = self.af;
        k[37] = self.proto;
        k
    }
}

/// `struct pf_peer`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerBytes {
    /// `seqlo`
    pub seqlo: u32,
    /// `seqhi`
    pub seqhi: u32,
    /// `max_win`
    pub max_win: u16,
    /// `wscale`
    pub wscale: u8,
    /// `state`
    pub state: u8,
}

impl PeerBytes {
    fn decode(b: &[u8]) -> PeerBytes {
        PeerBytes {
            seqlo: u32_at(b, 0),
            seqhi: u32_at(b, 4),
            max_win: u16_at(b, 8),
            wscale: b[10],
            state: b[11],
        }
    }
}

/// `struct pf_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateBytes {
    /// The creating side.
    pub src: PeerBytes,
    /// The other side.
    pub dst: PeerBytes,
    /// Created (seconds of `bpf_ktime_get_ns`).
    pub creation: u64,
    /// Last updated.
    pub last: u64,
    /// Packets from the creating side, from the other.
    pub packets: [u64; 2],
    /// Bytes, as `packets`.
    pub bytes: [u64; 2],
    /// The rule's index ([`NO_RULE`]: pf's default rule).
    pub rule: u32,
    /// Its timeout's index.
    pub timeout: u8,
    /// [`IN`] or [`OUT`].
    pub direction: u8,
    /// [`state_flag`] bits.
    pub flags: u8,
    /// The interface it was created on.
    pub ifindex: u32,
}

impl StateBytes {
    /// `sizeof(struct pf_state)`.
    pub const SIZE: usize = 88;

    /// Reads a value.
    pub fn decode(b: &[u8]) -> StateBytes {
        StateBytes {
            src: PeerBytes::decode(&b[0..12]),
            dst: PeerBytes::decode(&b[12..24]),
            creation: u64_at(b, 24),
            last: u64_at(b, 32),
            packets: [u64_at(b, 40), u64_at(b, 48)],
            bytes: [u64_at(b, 56), u64_at(b, 64)],
            rule: u32_at(b, 72),
            timeout: b[76],
            direction: b[77],
            flags: b[78],
            ifindex: u32_at(b, 80),
        }
    }
}

/// `struct pf_log`: a pflog record of the ring buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// `bpf_ktime_get_ns` when it was written.
    pub ts_ns: u64,
    /// The rule's index ([`NO_RULE`]: the default rule).
    pub rule: u32,
    /// The IP total length.
    pub len: u32,
    /// The interface.
    pub ifindex: u32,
    /// [`INET`] or [`INET6`].
    pub af: u8,
    /// 0 passed, 1 blocked.
    pub action: u8,
    /// pf's reason.
    pub reason: u8,
    /// [`IN`] or [`OUT`].
    pub dir: u8,
    /// The packet's first bytes from its IP header on.
    pub data: Vec<u8>,
}

impl LogRecord {
    /// `sizeof(struct pf_log)`.
    pub const SIZE: usize = 32 + LOG_SNAP;

    /// Reads a record (`None`: not one of the program's).
    pub fn decode(b: &[u8]) -> Option<LogRecord> {
        if b.len() < Self::SIZE {
            return None;
        }
        let caplen = (u32_at(b, 16) as usize).min(LOG_SNAP);
        Some(LogRecord {
            ts_ns: u64_at(b, 0),
            rule: u32_at(b, 8),
            len: u32_at(b, 12),
            ifindex: u32_at(b, 20),
            af: b[24],
            action: b[25],
            reason: b[26],
            dir: b[27],
            data: b[32..32 + caplen].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `#define` of `bpf/pf.bpf.h` that this module mirrors has the same value here.
    #[test]
    fn header_and_layout_agree() {
        let header = include_str!("../bpf/pf.bpf.h");
        let defines: std::collections::HashMap<&str, u64> = header
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                (w.next()? == "#define").then_some(())?;
                let name = w.next()?;
                let v = w.next()?;
                let n = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok()?,
                    None => v.parse().ok()?,
                };
                Some((name, n))
            })
            .collect();
        let want: &[(&str, u64)] = &[
            ("PF_MAX_WORDS", MAX_WORDS as u64),
            ("PF_MAX_RULES", MAX_RULES as u64),
            ("PF_NO_RULE", u64::from(NO_RULE)),
            ("PF_DEFAULT_SLOT", u64::from(DEFAULT_SLOT)),
            ("PF_MAX_CLASSES", u64::from(MAX_CLASSES)),
            ("PF_CL_PROTO", u64::from(region::PROTO)),
            ("PF_CL_SPORT", u64::from(region::SPORT)),
            ("PF_CL_DPORT", u64::from(region::DPORT)),
            ("PF_CL_TCPFLAGS", u64::from(region::TCPFLAGS)),
            ("PF_CL_ICMP", u64::from(region::ICMP)),
            ("PF_CL_TOS", u64::from(region::TOS)),
            ("PF_CL_ENTRIES", u64::from(region::ENTRIES)),
            ("PF_NO_PORTS", u64::from(NO_PORTS)),
            ("PF_NO_FLAGS", u64::from(NO_FLAGS)),
            ("PF_NO_ICMP", u64::from(NO_ICMP)),
            ("PF_INET", u64::from(INET)),
            ("PF_INET6", u64::from(INET6)),
            ("PF_IN", u64::from(IN)),
            ("PF_OUT", u64::from(OUT)),
            ("PF_R_BLOCK", u64::from(rule_flag::BLOCK)),
            ("PF_R_QUICK", u64::from(rule_flag::QUICK)),
            ("PF_R_KEEP", u64::from(rule_flag::KEEP)),
            ("PF_R_SLOPPY", u64::from(rule_flag::SLOPPY)),
            ("PF_R_LOG", u64::from(rule_flag::LOG)),
            ("PF_R_LOG_ALL", u64::from(rule_flag::LOG_ALL)),
            ("PF_S_SLOPPY", u64::from(state_flag::SLOPPY)),
            ("PF_S_LOG", u64::from(state_flag::LOG)),
            ("PF_S_LOG_ALL", u64::from(state_flag::LOG_ALL)),
            ("PFRES_MAX", REASONS as u64),
            ("PFTM_MAX", TIMEOUTS as u64),
            ("PF_LOG_SNAP", LOG_SNAP as u64),
            ("PF_LOG_BYTES", u64::from(LOG_BYTES)),
            ("PF_MAX_EXT", MAX_EXT as u64),
        ];
        for (name, v) in want {
            assert_eq!(defines.get(name), Some(v), "{name}");
        }
        // pf's own numbers, as sift-firewall has them.
        use sift_firewall::Reason;
        use sift_firewall::state::{tcps, udps};
        use sift_firewall::timeouts::tm;
        let pf: &[(&str, u64)] = &[
            ("PFRES_MATCH", Reason::Match.code().into()),
            ("PFRES_BADOFF", Reason::BadOffset.code().into()),
            ("PFRES_FRAG", Reason::Fragment.code().into()),
            ("PFRES_SHORT", Reason::Short.code().into()),
            ("PFRES_NORM", Reason::Normalize.code().into()),
            ("PFRES_MEMORY", Reason::Memory.code().into()),
            ("PFRES_BADSTATE", Reason::BadState.code().into()),
            ("PFRES_STATEINS", Reason::StateInsert.code().into()),
            ("PFTM_TCP_FIRST", tm::TCP_FIRST as u64),
            ("PFTM_TCP_OPENING", tm::TCP_OPENING as u64),
            ("PFTM_TCP_ESTABLISHED", tm::TCP_ESTABLISHED as u64),
            ("PFTM_TCP_CLOSING", tm::TCP_CLOSING as u64),
            ("PFTM_TCP_FIN_WAIT", tm::TCP_FIN_WAIT as u64),
            ("PFTM_TCP_CLOSED", tm::TCP_CLOSED as u64),
            ("PFTM_UDP_FIRST", tm::UDP_FIRST as u64),
            ("PFTM_UDP_SINGLE", tm::UDP_SINGLE as u64),
            ("PFTM_UDP_MULTIPLE", tm::UDP_MULTIPLE as u64),
            ("PFTM_ICMP_FIRST", tm::ICMP_FIRST as u64),
            ("PFTM_ICMP_ERROR", tm::ICMP_ERROR as u64),
            ("PFTM_OTHER_FIRST", tm::OTHER_FIRST as u64),
            ("PFTM_OTHER_SINGLE", tm::OTHER_SINGLE as u64),
            ("PFTM_OTHER_MULTIPLE", tm::OTHER_MULTIPLE as u64),
            ("TCPS_CLOSED", tcps::CLOSED.into()),
            ("TCPS_SYN_SENT", tcps::SYN_SENT.into()),
            ("TCPS_ESTABLISHED", tcps::ESTABLISHED.into()),
            ("TCPS_CLOSING", tcps::CLOSING.into()),
            ("TCPS_FIN_WAIT_2", tcps::FIN_WAIT_2.into()),
            ("TCPS_TIME_WAIT", tcps::TIME_WAIT.into()),
            ("PFUDPS_SINGLE", udps::SINGLE.into()),
            ("PFUDPS_MULTIPLE", udps::MULTIPLE.into()),
        ];
        for (name, v) in pf {
            assert_eq!(defines.get(name), Some(v), "{name}");
        }
        assert_eq!(REASONS, sift_firewall::Reason::NoRoute.code() as usize + 1);
        assert_eq!(TIMEOUTS, tm::COUNT);
    }

    /// The object's maps have the sizes the encoders assume.
    #[test]
    fn map_values_have_the_encoders_sizes() {
        let object = crate::object().unwrap();
        let size = |name: &str| {
            let m = object.maps.iter().find(|m| m.name == name).unwrap();
            (m.key_size as usize, m.value_size as usize)
        };
        assert_eq!(size(map::CONFIG), (4, Config::SIZE));
        assert_eq!(size(map::CLASS), (4, 4));
        assert_eq!(size(map::BITS), (4, MAX_WORDS * 8));
        assert_eq!(size(map::SRC4), (8, 4));
        assert_eq!(size(map::SRC6), (20, 4));
        assert_eq!(size(map::RULES), (4, RuleEntry::SIZE));
        assert_eq!(size(map::STATES), (StateKeyBytes::SIZE, StateBytes::SIZE));
        assert_eq!(size(map::RULE_COUNTERS), (4, RuleCounters::SIZE));
        assert_eq!(size(map::COUNTERS), (4, Counters::SIZE));
        let m = object.maps.iter().find(|m| m.name == map::CLASS).unwrap();
        assert_eq!(m.max_entries, region::ENTRIES);
    }
}
