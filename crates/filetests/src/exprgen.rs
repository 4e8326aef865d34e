//! A seeded generator of pcap-filter expressions.
//!
//! The corpus holds the cases libpcap's authors thought of; random expressions find the rest:
//! operator precedence (`and`/`or` have equal precedence, `%` and `^` none), qualifier
//! inheritance (`host a or b`, `not tcp port 80 and 443`), offsets shifted by `vlan`, `mpls`
//! and `pppoes`, and arithmetic with every operator. The generator writes expressions as text,
//! mostly well-typed for the link type it is given (primitives that need an Ethernet header are
//! only drawn for Ethernet-like links), using the addresses and ports `sift-gen` traffic
//! carries so that filters match some packets. Some expressions are still refused (a division
//! by a zero literal, a protocol the link cannot carry); the differential runner checks that
//! the candidate refuses those too.

use sift_gen::{Prob, Rng};

/// What the generator may draw for a link type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Ethernet addresses and `ether` primitives (EN10MB and its relatives).
    pub ether: bool,
    /// `vlan`, `mpls`, `pppoes` (Ethernet only).
    pub encapsulation: bool,
    /// ARP/RARP (links with an EtherType).
    pub arp: bool,
    /// 802.11 primitives (`wlan type`, `subtype`, `dir`, `wlan addr1`…).
    pub wlan: bool,
    /// LLC-based primitives (`llc`, `stp`, `iso`, `netbeui`…): links with 802.2 LLC.
    pub llc: bool,
    /// `inbound`/`outbound` from the link header (SLL, SLL2) and `ifindex` (SLL2).
    pub direction: bool,
}

impl Profile {
    /// The profile for a corpus link-type name.
    pub fn for_link(name: &str) -> Profile {
        let ether = matches!(name, "EN10MB" | "NETANALYZER" | "NETANALYZER_TRANSPARENT");
        let arp =
            ether || matches!(name, "LINUX_SLL" | "LINUX_SLL2" | "FDDI" | "IEEE802" | "IEEE802_11");
        let wlan = matches!(
            name,
            "IEEE802_11" | "IEEE802_11_RADIO" | "IEEE802_11_RADIO_AVS" | "PRISM_HEADER" | "PPI"
        );
        let llc = ether || wlan || matches!(name, "FDDI" | "IEEE802" | "IP_OVER_FC");
        let direction = matches!(name, "LINUX_SLL" | "LINUX_SLL2");
        Profile { ether, encapsulation: ether, arp, wlan, llc, direction }
    }
}

/// The generator.
#[derive(Debug)]
pub struct ExprGen {
    rng: Rng,
    profile: Profile,
}

const V4_HOSTS: &[&str] = &[
    "10.0.0.1",
    "10.0.0.53",
    "10.0.0.10",
    "10.0.0.11",
    "10.0.0.12",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.2",
    "10.1.0.3",
    "10.2.0.1",
    "255.255.255.255",
    "224.0.0.1",
];
const V6_HOSTS: &[&str] =
    &["2001:db8:1::1", "2001:db8:1::53", "2001:db8:1::a", "2001:db8:2::1", "ff02::1", "::1"];
const V4_NETS: &[&str] = &[
    "10.0.0.0/24",
    "10.0.0.0/8",
    "10.0.0",
    "192.0.2.0/24",
    "198.51.100",
    "10.1",
    "203.0.113.0/25",
    "0.0.0.0/0",
    "10.2.0.0 mask 255.255.255.0",
    "192.0.0.0 mask 255.0.0.0",
    "224.0.0.0/4",
];
const V6_NETS: &[&str] = &["2001:db8:1::/48", "2001:db8::/32", "fe80::/10", "ff00::/8"];
const MACS: &[&str] = &[
    "02:00:0a:00:00:01",
    "02:00:0a:00:00:35",
    "ff:ff:ff:ff:ff:ff",
    "02:00:0a:00:00:0a",
    "33:33:00:00:00:01",
    "0200.0a00.0001",
];
const PORTS: &[&str] =
    &["80", "443", "53", "514", "9", "8080", "9899", "http", "domain", "ssh", "6081", "4789"];
const ABBREVS: &[&str] = &[
    "ip", "ip6", "tcp", "udp", "icmp", "icmp6", "sctp", "igmp", "pim", "vrrp", "ah", "esp", "carp",
];
const PROTO_NAMES: &[&str] = &["tcp", "udp", "icmp", "1", "6", "17", "58", "132", "47", "50"];
const ACCESSORS: &[&str] = &["ip", "tcp", "udp", "icmp", "ip6", "link"];
const ETHER_ACCESSORS: &[&str] = &["ether", "arp"];
const CONSTANTS: &[&str] = &[
    "tcpflags",
    "tcp-syn",
    "tcp-ack",
    "tcp-fin",
    "tcp-rst",
    "tcp-push",
    "icmptype",
    "icmp-echo",
    "icmp-echoreply",
    "icmp-unreach",
];
const ARITH_OPS: &[&str] = &["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
const RELOPS: &[&str] = &["=", "==", "!=", "<", "<=", ">", ">="];

impl ExprGen {
    /// A generator for link type `link` (a corpus name) from `seed`.
    pub fn new(seed: u64, link: &str) -> ExprGen {
        ExprGen { rng: Rng::new(seed), profile: Profile::for_link(link) }
    }

    /// `n` expressions.
    pub fn take(&mut self, n: usize) -> Vec<String> {
        (0..n).map(|_| self.expr()).collect()
    }

    /// One expression.
    pub fn expr(&mut self) -> String {
        let depth = self.rng.below(4) as u32;
        self.boolean(depth)
    }

    fn one_in(&mut self, n: u32) -> bool {
        self.rng.chance(Prob::one_in(n))
    }

    fn pick(&mut self, items: &[&'static str]) -> &'static str {
        self.rng.pick(items)
    }

    fn boolean(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self.primitive();
        }
        match self.rng.below(6) {
            0 => {
                let not = self.pick(&["not ", "!", "not "]);
                format!("{not}{}", self.paren(depth - 1))
            }
            1 => self.inherited(),
            _ => {
                let op = self.pick(&["and", "or", "&&", "||", "and", "or"]);
                let a = self.paren_or_bare(depth - 1);
                let b = self.paren_or_bare(depth - 1);
                format!("{a} {op} {b}")
            }
        }
    }

    fn paren(&mut self, depth: u32) -> String {
        let e = self.boolean(depth);
        if depth == 0 && self.one_in(2) { e } else { format!("({e})") }
    }

    /// Sometimes no parentheses, so that equal precedence and left association are exercised.
    fn paren_or_bare(&mut self, depth: u32) -> String {
        if self.one_in(3) { self.boolean(depth) } else { self.paren(depth) }
    }

    /// Qualifier inheritance: a qualified primitive followed by bare ids.
    fn inherited(&mut self) -> String {
        let (head, ids): (String, &[&str]) = match self.rng.below(4) {
            0 => (format!("{} host {}", self.dir(), self.pick(V4_HOSTS)), V4_HOSTS),
            1 => (format!("{} port {}", self.pick(&["tcp", "udp", ""]), self.pick(PORTS)), PORTS),
            2 => (format!("net {}", self.pick(&["10.0.0.0/24", "192.0.2.0/24"])), &["10.1.0.0/16"]),
            _ => (format!("host {}", self.pick(V6_HOSTS)), V6_HOSTS),
        };
        let mut s = head.trim().to_owned();
        for _ in 0..=self.rng.below(2) {
            let op = self.pick(&["or", "and", "or", "and not"]);
            let id = self.rng.pick(ids);
            s = format!("{s} {op} {id}");
        }
        if self.one_in(3) { format!("not {s}") } else { s }
    }

    fn dir(&mut self) -> &'static str {
        self.pick(&["", "", "src", "dst", "src or dst", "src and dst"])
    }

    fn primitive(&mut self) -> String {
        let p = self.profile;
        loop {
            let s = match self.rng.below(21) {
                0 | 1 => {
                    let proto = if p.arp {
                        self.pick(&["", "", "ip", "arp", "rarp"])
                    } else {
                        self.pick(&["", "", "ip"])
                    };
                    format!("{proto} {} host {}", self.dir(), self.pick(V4_HOSTS))
                }
                2 => format!(
                    "{} {} host {}",
                    self.pick(&["", "ip6"]),
                    self.dir(),
                    self.pick(V6_HOSTS)
                ),
                3 => {
                    format!("{} {} net {}", self.pick(&["", "ip"]), self.dir(), self.pick(V4_NETS))
                }
                4 => format!("{} net {}", self.dir(), self.pick(V6_NETS)),
                5 | 6 => {
                    let proto = self.pick(&["", "tcp", "udp", "sctp", "ip6 tcp", "ip udp"]);
                    if self.one_in(3) {
                        let a = self.rng.below(2000);
                        let b = self.rng.below(70000).min(65535);
                        format!("{proto} {} portrange {a}-{b}", self.dir())
                    } else {
                        format!("{proto} {} port {}", self.dir(), self.pick(PORTS))
                    }
                }
                7 | 8 => self.pick(ABBREVS).to_owned(),
                9 => format!(
                    "{} proto {}",
                    self.pick(&["ip", "ip6", ""]),
                    self.pick(PROTO_NAMES).replace("tcp", "\\tcp").replace("udp", "\\udp")
                ),
                10 => format!("{} {}", self.pick(&["less", "greater"]), self.rng.below(1600)),
                11 => self.pick(&["ip multicast", "ip6 multicast", "ip broadcast"]).to_owned(),
                12..=14 => self.relation(),
                15 if p.ether => {
                    let mac = self.pick(MACS);
                    match self.rng.below(5) {
                        0 => format!("ether {} host {mac}", self.dir()),
                        1 => format!("ether {} {mac}", self.pick(&["src", "dst"])),
                        2 => format!(
                            "ether proto {}",
                            self.pick(&["\\ip", "\\arp", "\\ip6", "0x88cc", "2048", "\\rarp"])
                        ),
                        3 => self
                            .pick(&["ether broadcast", "ether multicast", "broadcast", "multicast"])
                            .to_owned(),
                        _ => format!(
                            "{} {mac}",
                            self.pick(&["ether host", "ether src", "ether dst"])
                        ),
                    }
                }
                16 if p.encapsulation => match self.rng.below(4) {
                    0 => format!("vlan {}", self.pick(&["", "10", "100", "4095", "0"])),
                    1 => format!("mpls {}", self.pick(&["", "16", "100", "1048575"])),
                    2 => format!("pppoes {}", self.pick(&["", "1", "0x1234"])),
                    _ => self.pick(&["pppoed", "vlan and vlan", "mpls and mpls"]).to_owned(),
                },
                17 => self
                    .pick(&[
                        "geneve",
                        "geneve 5",
                        "ip6 protochain 6",
                        "protochain 17",
                        "ip protochain \\udp",
                    ])
                    .to_owned(),
                18 if p.arp => {
                    self.pick(&["arp", "rarp", "arp or rarp", "ether proto \\arp"]).to_owned()
                }
                19 => self.extra(),
                _ => self.relation(),
            };
            let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
            if !s.is_empty() {
                return s;
            }
        }
    }

    /// Link-specific and less common primitives.
    fn extra(&mut self) -> String {
        let p = self.profile;
        match self.rng.below(6) {
            0 if p.wlan => match self.rng.below(5) {
                0 => format!("wlan type {}", self.pick(&["mgt", "ctl", "data"])),
                1 => format!(
                    "{}subtype {}",
                    self.pick(&["", "wlan "]),
                    self.pick(&[
                        "beacon",
                        "probe-req",
                        "assoc-req",
                        "ack",
                        "rts",
                        "cts",
                        "data",
                        "qos-data",
                        "null"
                    ])
                ),
                2 => format!("wlan dir {}", self.pick(&["nods", "tods", "fromds", "dstods", "2"])),
                3 => format!(
                    "wlan {} {}",
                    self.pick(&[
                        "addr1", "addr2", "addr3", "addr4", "ra", "ta", "host", "src", "dst"
                    ]),
                    self.pick(MACS)
                ),
                _ => format!("wlan[{}] & 0x{:x} != 0", self.rng.below(4), self.rng.below(256)),
            },
            1 if p.llc => self
                .pick(&["llc", "stp", "netbeui", "iso", "llc i", "llc s", "llc u", "ipx", "decnet"])
                .to_owned(),
            2 if p.direction => {
                self.pick(&["inbound", "outbound", "ifindex 2", "ifindex 10"]).to_owned()
            }
            3 => format!(
                "tcp[tcpflags] & ({}) {} 0",
                self.pick(&["tcp-syn", "tcp-syn|tcp-ack", "tcp-fin|tcp-rst", "tcp-push"]),
                self.pick(&["!=", "="])
            ),
            4 => format!(
                "{} = {}",
                self.pick(&["icmp[icmptype]", "icmp6[icmp6type]", "icmp[icmpcode]"]),
                self.pick(&[
                    "icmp-echo",
                    "icmp-echoreply",
                    "icmp6-echo",
                    "icmp6-neighborsolicit",
                    "0",
                    "3"
                ])
            ),
            _ => self
                .pick(&[
                    "ip6 protochain 44",
                    "ip and not tcp",
                    "ip6 and udp port 53",
                    "ip[6:2] & 0x1fff != 0",
                ])
                .to_owned(),
        }
    }

    fn relation(&mut self) -> String {
        let a = self.arith(2, true);
        let op = self.pick(RELOPS);
        let b = self.arith(1, false);
        format!("{a} {op} {b}")
    }

    fn accessor(&mut self) -> String {
        let proto = if self.profile.ether && self.one_in(3) {
            self.pick(ETHER_ACCESSORS)
        } else {
            self.pick(ACCESSORS)
        };
        let idx = if self.one_in(4) {
            self.arith(1, false)
        } else if self.one_in(3) {
            self.pick(CONSTANTS).to_owned()
        } else {
            self.rng.below(60).to_string()
        };
        match self.rng.below(4) {
            0 => format!("{proto}[{idx}]"),
            1 => format!("{proto}[{idx}:1]"),
            2 => format!("{proto}[{idx}:2]"),
            _ => format!("{proto}[{idx}:4]"),
        }
    }

    fn literal(&mut self) -> String {
        match self.rng.below(6) {
            0 => format!("0x{:x}", self.rng.next_u32()),
            1 => self.pick(CONSTANTS).to_owned(),
            2 => {
                self.pick(&["0", "1", "2", "3", "4", "5", "255", "0xff", "0x800", "040"]).to_owned()
            }
            _ => self.rng.below(70000).to_string(),
        }
    }

    fn arith(&mut self, depth: u32, want_access: bool) -> String {
        if depth == 0 {
            return match self.rng.below(if want_access { 3 } else { 5 }) {
                0 | 1 => self.accessor(),
                2 => self.pick(&["len", "length"]).to_owned(),
                _ => self.literal(),
            };
        }
        match self.rng.below(5) {
            0 => self.arith(0, want_access),
            1 => format!("-{}", self.arith(0, false)),
            2 => format!("({})", self.arith(depth - 1, want_access)),
            _ => {
                let op = self.pick(ARITH_OPS);
                let a = self.arith(depth - 1, want_access);
                // Mostly non-zero, small right operands: a literal zero divisor or a shift of
                // 32 or more is a compile-time error (still drawn now and then).
                let b = if matches!(op, "/" | "%" | "<<" | ">>") && !self.one_in(8) {
                    (self.rng.below(31) + 1).to_string()
                } else {
                    self.arith(depth - 1, false)
                };
                format!("{a} {op} {b}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_varied() {
        let a = ExprGen::new(3, "EN10MB").take(200);
        let b = ExprGen::new(3, "EN10MB").take(200);
        assert_eq!(a, b);
        let mut uniq = a.clone();
        uniq.sort();
        uniq.dedup();
        assert!(uniq.len() > 150);
        assert!(a.iter().any(|e| e.contains('%')));
        assert!(a.iter().any(|e| e.contains(" or ")));
        assert!(a.iter().all(|e| !e.contains("  ")));
    }

    #[test]
    fn raw_profile_draws_no_ether() {
        let a = ExprGen::new(4, "RAW").take(300);
        assert!(a.iter().all(|e| !e.contains("ether") && !e.contains("vlan")));
    }
}
