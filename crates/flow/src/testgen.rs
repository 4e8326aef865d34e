//! Random rule sets and frames for the differential tests, the benchmark and the fuzz targets
//! (feature `testgen`).
//!
//! Rules are drawn as text (so every drawn rule also exercises the parser) from a vocabulary
//! that overlaps on purpose: the addresses, ports and MACs of `sift_gen`'s pools at several
//! prefix lengths and masks, a few priorities so that ties happen, protocols with their
//! prerequisites. Frames are `sift_gen` traffic (with its truncated and malformed frames),
//! plus frames cut short, frames with bytes flipped and frames of random bytes.
//!
//! Everything draws from an [`Entropy`]: a seeded generator for tests and benchmarks, or the
//! fuzzer's bytes.

use std::fmt::Write as _;

use sift_gen::{Config, Generator, Link};

use crate::rules::PortMap;

/// A source of random numbers.
pub trait Entropy {
    /// The next 64 bits.
    fn next_u64(&mut self) -> u64;

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `xs` (not empty).
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// xorshift64*, seeded (a zero seed is replaced).
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl Entropy for XorShift {
    fn next_u64(&mut self) -> u64 {
        if self.0 == 0 {
            self.0 = 0x9e37_79b9_7f4a_7c15;
        }
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The fuzzer's bytes, eight at a time, then zeros.
#[derive(Clone, Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Draws from `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data }
    }

    /// Whether every byte was used.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next `n` bytes (fewer at the end).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.data.split_at(n.min(self.data.len()));
        self.data = b;
        a
    }
}

impl Entropy for Bytes<'_> {
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let t = self.take(8);
        b[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(b)
    }
}

/// The ports rules name: `p1` to `p4`, numbers 1 to 4.
pub fn ports() -> PortMap {
    let mut p = PortMap::new();
    for i in 1..=4 {
        p.add(&format!("p{i}"), i).expect("fresh names");
    }
    p
}

const V4: [&str; 16] = [
    "10.0.0.0/24",
    "10.0.0.0/8",
    "10.0.0.10",
    "10.0.0.11",
    "10.0.0.53",
    "10.0.0.0/28",
    "10.0.0.16/28",
    "10.1.0.0/16",
    "192.0.2.0/24",
    "192.0.2.1",
    "198.51.100.0/25",
    "198.51.100.128/25",
    "203.0.113.0/24",
    "0.0.0.0/1",
    "128.0.0.0/1",
    "10.0.0.1/255.0.0.255",
];
const V6: [&str; 8] = [
    "2001:db8:1::/64",
    "2001:db8:2::/64",
    "2001:db8::/32",
    "2001:db8:1::1",
    "2001:db8:2::5",
    "::/1",
    "2001:db8:1::53",
    "2001:db8:2::/120",
];
const MACS: [&str; 6] = [
    "02:00:0a:00:00:0a",
    "02:00:0a:00:00:01",
    "ff:ff:ff:ff:ff:ff",
    "01:00:00:00:00:00/01:00:00:00:00:00",
    "02:00:0a:00:00:00/ff:ff:ff:ff:ff:f0",
    "00:00:00:00:00:00/02:00:00:00:00:00",
];
const PORTS: [&str; 12] = [
    "443",
    "80",
    "53",
    "514",
    "9",
    "8080",
    "9899",
    "0x8000/0x8000",
    "0x50/0xfff0",
    "0/0xff00",
    "8443",
    "22",
];

/// One rule's text: a match (with its prerequisites) and actions consistent with it.
pub fn rule_text(e: &mut impl Entropy) -> String {
    let mut s = String::new();
    let prio = e.pick(&[1u32, 10, 10, 100, 100, 1000, 32768]);
    if prio != 32768 {
        let _ = write!(s, "priority={prio},");
    }
    if e.chance(40) {
        let _ = write!(s, "in_port=p{},", 1 + e.below(4));
    }
    if e.chance(10) {
        let _ = write!(s, "dl_src={},", e.pick(&MACS));
    }
    if e.chance(10) {
        let _ = write!(s, "dl_dst={},", e.pick(&MACS));
    }
    if e.chance(8) {
        let v =
            e.pick(&["dl_vlan=0xffff", "dl_vlan=10", "vlan_tci=0x1000/0x1000", "dl_vlan_pcp=0"]);
        let _ = write!(s, "{v},");
    }
    let proto = e.pick(&[
        "", "", "ip", "ip", "ipv6", "arp", "tcp", "tcp", "udp", "udp", "icmp", "tcp6", "udp6",
        "icmp6", "sctp",
    ]);
    if !proto.is_empty() {
        let _ = write!(s, "{proto},");
    }
    let v4 = matches!(proto, "ip" | "tcp" | "udp" | "icmp" | "sctp");
    let v6 = proto.ends_with('6');
    let transport = matches!(proto, "tcp" | "udp" | "sctp" | "tcp6" | "udp6");
    if v4 {
        for f in ["nw_src", "nw_dst"] {
            if e.chance(45) {
                let _ = write!(s, "{f}={},", e.pick(&V4));
            }
        }
    }
    if v6 {
        for f in ["ipv6_src", "ipv6_dst"] {
            if e.chance(45) {
                let _ = write!(s, "{f}={},", e.pick(&V6));
            }
        }
    }
    if proto == "arp" {
        if e.chance(50) {
            let _ = write!(s, "arp_op={},", 1 + e.below(2));
        }
        if e.chance(40) {
            let _ = write!(s, "arp_tpa={},", e.pick(&V4));
        }
        if e.chance(20) {
            let _ = write!(s, "arp_sha={},", e.pick(&MACS));
        }
    }
    if v4 || v6 {
        if e.chance(10) {
            let _ = write!(s, "nw_frag={},", e.pick(&["no", "first", "later", "yes", "not_later"]));
        }
        if e.chance(5) {
            let _ = write!(s, "nw_ttl={},", e.pick(&[64, 255, 1, 128]));
        }
        if e.chance(5) {
            let _ = write!(s, "nw_tos={},", e.pick(&[0, 184, 32]));
        }
    }
    if transport {
        for f in ["tp_src", "tp_dst"] {
            if e.chance(if f == "tp_dst" { 55 } else { 15 }) {
                let _ = write!(s, "{f}={},", e.pick(&PORTS));
            }
        }
    }
    if proto.starts_with("tcp") && e.chance(20) {
        let _ = write!(
            s,
            "tcp_flags={},",
            e.pick(&["+syn", "+syn-ack", "+fin", "+rst", "syn|ack", "+ack"])
        );
    }
    if proto.starts_with("icmp") {
        if e.chance(50) {
            let t = if v6 { e.pick(&[128, 129, 135, 136]) } else { e.pick(&[0, 8, 3, 11]) };
            let _ = write!(s, "icmp_type={t},");
        }
        if e.chance(15) {
            let _ = write!(s, "icmp_code=0,");
        }
    }
    s.push_str("actions=");
    s.push_str(&actions_text(e, v4, v6, transport));
    s
}

fn actions_text(e: &mut impl Entropy, v4: bool, v6: bool, transport: bool) -> String {
    if e.chance(20) {
        return "drop".into();
    }
    let mut parts = Vec::new();
    for _ in 0..1 + e.below(3) {
        let mut choices = vec!["out", "out", "out", "in_port", "vlan", "mac", "push", "pop"];
        if v4 {
            choices.extend(["nw4", "tos", "ttl"]);
        }
        if v6 {
            choices.extend(["nw6", "tos", "ttl"]);
        }
        if transport {
            choices.extend(["tp", "tp"]);
        }
        let a = match e.pick(&choices) {
            "out" => format!("output:p{}", 1 + e.below(4)),
            "in_port" => "in_port".into(),
            "vlan" => format!("mod_vlan_vid:{}", e.below(4096)),
            "mac" => format!("mod_dl_dst:02:00:00:00:00:{:02x}", e.below(256)),
            "push" => "push_vlan:0x8100".into(),
            "pop" => "pop_vlan".into(),
            "nw4" => format!("set_field:10.9.{}.{}->nw_dst", e.below(256), e.below(256)),
            "nw6" => format!("set_field:2001:db8:9::{:x}->ipv6_src", e.below(65536)),
            "tos" => format!("mod_nw_tos:{}", 4 * e.below(64)),
            "ttl" => format!("mod_nw_ttl:{}", e.below(256)),
            _ => format!("mod_tp_{}:{}", if e.chance(50) { "src" } else { "dst" }, e.below(65536)),
        };
        parts.push(a);
    }
    if e.chance(30) {
        parts.push(format!("set_field:p{}->in_port", 1 + e.below(4)));
        parts.push(format!("output:p{}", 1 + e.below(4)));
    }
    parts.join(",")
}

/// `n` rules, one a line.
pub fn rule_set_text(e: &mut impl Entropy, n: usize) -> String {
    (0..n).map(|_| rule_text(e) + "\n").collect()
}

/// Frames: `sift_gen` traffic and damaged or random frames.
#[derive(Debug)]
pub struct Frames {
    generator: Generator,
}

impl Frames {
    /// Traffic from `seed`, with truncated and malformed frames among it.
    pub fn new(seed: u64) -> Frames {
        let config = Config {
            truncate: 0.03,
            malformed: 0.03,
            ipv6: 0.3,
            encapsulation: 0.15,
            max_flows: 64,
            ..Config::with_link(Link::Ethernet)
        };
        Frames { generator: Generator::new(seed, config) }
    }

    /// The next frame into `buf`.
    pub fn next(&mut self, e: &mut impl Entropy, buf: &mut Vec<u8>) {
        let roll = e.below(100);
        if roll < 85 {
            self.generator.next_frame(buf);
            return;
        }
        if roll < 90 {
            self.generator.next_frame(buf);
            let n = e.below(buf.len() as u64 + 1) as usize;
            buf.truncate(n);
            return;
        }
        if roll < 95 {
            self.generator.next_frame(buf);
            for _ in 0..1 + e.below(3) {
                if buf.is_empty() {
                    break;
                }
                let at = e.below(buf.len().min(64) as u64) as usize;
                buf[at] ^= 1 << e.below(8);
            }
            return;
        }
        random_frame(e, buf);
    }
}

/// A frame of random bytes, usually with a known EtherType (possibly VLAN-tagged) so that
/// the parsers go deep.
pub fn random_frame(e: &mut impl Entropy, buf: &mut Vec<u8>) {
    buf.clear();
    let len = e.below(120) as usize;
    buf.extend((0..len).map(|_| e.next_u64() as u8));
    if len >= 14 && e.chance(80) {
        let mut at = 12;
        if e.chance(25) && len >= 18 {
            buf[at..at + 2].copy_from_slice(&e.pick(&[0x8100u16, 0x88a8]).to_be_bytes());
            at += 4;
        }
        let ty: u16 = e.pick(&[0x0800, 0x86dd, 0x0806, 0x8100]);
        buf[at..at + 2].copy_from_slice(&ty.to_be_bytes());
        if let Some(b) = buf.get_mut(at + 2) {
            *b = match ty {
                0x0800 => 0x45,
                0x86dd => 0x60,
                _ => *b,
            };
        }
        if ty == 0x0800
            && let Some(p) = buf.get_mut(at + 2 + 9)
        {
            *p = e.pick(&[6, 17, 1, 132, 47]);
        }
        if ty == 0x86dd
            && let Some(p) = buf.get_mut(at + 2 + 6)
        {
            *p = e.pick(&[6, 17, 58, 44, 0, 60]);
        }
    }
}
