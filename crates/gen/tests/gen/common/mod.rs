//! Helpers shared by the integration tests: a pcap writer and an independent frame parser
//! that re-checks every length and checksum with its own (deliberately naive) arithmetic.
#![allow(dead_code)]

use sift_gen::{FrameMeta, Generator, Link};

/// Generates `n` frames.
pub fn frames(g: &mut Generator, n: usize) -> Vec<(FrameMeta, Vec<u8>)> {
    let mut buf = Vec::new();
    (0..n).map(|_| (g.next_frame(&mut buf), buf.clone())).collect()
}

/// A little-endian, nanosecond pcap file.
pub fn pcap_bytes(linktype: u32, snaplen: u32, frames: &[(FrameMeta, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&snaplen.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
    for (m, data) in frames {
        out.extend_from_slice(&(m.ts_sec as u32).to_le_bytes());
        out.extend_from_slice(&m.ts_nsec.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&m.wire_len.to_le_bytes());
        out.extend_from_slice(data);
    }
    out
}

/// Naive Internet checksum: sum of big-endian 16-bit words, end-around carry. Returns the
/// folded sum; a correct message (checksum field included) folds to 0xffff.
pub fn ones_sum(parts: &[&[u8]]) -> u16 {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(p);
    }
    if bytes.len() % 2 == 1 {
        bytes.push(0);
    }
    let mut sum: u32 = 0;
    for w in bytes.chunks(2) {
        sum += (u32::from(w[0]) << 8) | u32::from(w[1]);
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Bit-at-a-time CRC32c, independent of the crate's table version.
pub fn crc32c_bitwise(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0x82f6_3b78 & mask);
        }
    }
    !crc
}

/// What the parser found in one frame.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Protocol names in order, spelled as tshark's `frame.protocols` spells them.
    pub protos: Vec<&'static str>,
    /// Checksums verified: (which, correct).
    pub checks: Vec<(&'static str, bool)>,
    /// Length fields that disagree with the frame.
    pub errors: Vec<String>,
}

impl Parsed {
    fn err(&mut self, e: impl Into<String>) {
        self.errors.push(e.into());
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Parses a complete (untruncated) frame of `link`.
pub fn parse(link: Link, f: &[u8]) -> Parsed {
    let mut p = Parsed::default();
    match link {
        Link::Ethernet => {
            p.protos.push("eth");
            ethertype(&mut p, f, 12, 14);
        }
        Link::LinuxSll => {
            p.protos.push("sll");
            ethertype(&mut p, f, 14, 16);
        }
        Link::LinuxSll2 => {
            p.protos.push("sll");
            ethertype(&mut p, f, 0, 20);
        }
        Link::Raw => {
            p.protos.push("raw");
            by_version(&mut p, f, 0);
        }
        Link::Null | Link::Loop => {
            p.protos.push("null");
            let Some(af) = f.get(..4) else { return p };
            let af = if link == Link::Null {
                u32::from_le_bytes([af[0], af[1], af[2], af[3]])
            } else {
                u32::from_be_bytes([af[0], af[1], af[2], af[3]])
            };
            match af {
                2 => ipv4(&mut p, f, 4),
                24 => ipv6(&mut p, f, 4),
                other => p.err(format!("address family {other}")),
            }
        }
        _ => p.err("unknown link"),
    }
    p
}

fn by_version(p: &mut Parsed, f: &[u8], off: usize) {
    match f.get(off).map(|b| b >> 4) {
        Some(4) => ipv4(p, f, off),
        Some(6) => ipv6(p, f, off),
        v => p.err(format!("IP version {v:?}")),
    }
}

fn ethertype(p: &mut Parsed, f: &[u8], at: usize, off: usize) {
    let Some(t) = be16(f, at) else { return p.err("short link header") };
    match t {
        0x0800 => ipv4(p, f, off),
        0x86dd => ipv6(p, f, off),
        0x0806 => {
            p.protos.push("arp");
            if f.len() < off + 28 {
                p.err("short ARP");
            }
        }
        0x8100 | 0x88a8 => {
            p.protos.push(if t == 0x8100 { "vlan" } else { "ieee8021ad" });
            ethertype(p, f, off + 2, off + 4);
        }
        0x8847 => {
            p.protos.push("mpls");
            let mut o = off;
            while let Some(b) = f.get(o + 2) {
                o += 4;
                if b & 1 == 1 {
                    break;
                }
            }
            by_version(p, f, o);
        }
        0x8864 => {
            p.protos.push("pppoes");
            let len = be16(f, off + 4).unwrap_or(0) as usize;
            // Ethernet padding may follow; the PPPoE length must cover the IP packet exactly.
            let proto = be16(f, off + 6).unwrap_or(0);
            let ip_len = match proto {
                0x0021 => be16(f, off + 10).map(usize::from),
                0x0057 => be16(f, off + 12).map(|n| usize::from(n) + 40),
                _ => None,
            };
            if ip_len.map(|n| n + 2) != Some(len) {
                p.err(format!("PPPoE length {len} vs IP {ip_len:?}"));
            }
            match proto {
                0x0021 => ipv4(p, f, off + 8),
                0x0057 => ipv6(p, f, off + 8),
                other => p.err(format!("PPP protocol {other:#x}")),
            }
        }
        0x6558 => {
            p.protos.push("eth");
            ethertype(p, f, off + 12, off + 14);
        }
        other => p.err(format!("ethertype {other:#06x}")),
    }
}

fn ipv4(p: &mut Parsed, f: &[u8], off: usize) {
    p.protos.push("ip");
    let Some(&vihl) = f.get(off) else { return p.err("no IPv4 header") };
    let ihl = usize::from(vihl & 0xf) * 4;
    let Some(hdr) = f.get(off..off + ihl) else { return p.err("short IPv4 header") };
    p.checks.push(("ipv4", ones_sum(&[hdr]) == 0xffff));
    let total = usize::from(be16(f, off + 2).unwrap_or(0));
    // Anything after the IP packet can only be Ethernet padding (zeros, frame of 60).
    let end = off + total;
    if end > f.len() || (end < f.len() && (f.len() > 60 || f[end..].iter().any(|&b| b != 0))) {
        return p.err(format!("IPv4 total length {total} in a frame of {} at {off}", f.len()));
    }
    let frag = be16(f, off + 6).unwrap_or(0);
    if frag & 0x3fff != 0 {
        return; // a fragment: the transport checksum covers the reassembled datagram
    }
    let src = &f[off + 12..off + 16];
    let dst = &f[off + 16..off + 20];
    transport(p, f, f[off + 9], off + ihl, end, &[src, dst]);
}

fn ipv6(p: &mut Parsed, f: &[u8], off: usize) {
    p.protos.push("ipv6");
    let Some(plen) = be16(f, off + 4) else { return p.err("short IPv6 header") };
    let end = off + 40 + usize::from(plen);
    if end > f.len() || (end < f.len() && (f.len() > 60 || f[end..].iter().any(|&b| b != 0))) {
        return p.err(format!("IPv6 payload length {plen} in a frame of {}", f.len()));
    }
    let src = &f[off + 8..off + 24];
    let dst = &f[off + 24..off + 40];
    let mut next = f[off + 6];
    let mut o = off + 40;
    loop {
        match next {
            0 | 43 | 60 => {
                p.protos.push(match next {
                    0 => "ipv6.hopopts",
                    43 => "ipv6.routing",
                    _ => "ipv6.dstopts",
                });
                let Some(&len) = f.get(o + 1) else { return p.err("short extension header") };
                next = f[o];
                o += (usize::from(len) + 1) * 8;
            }
            44 => {
                p.protos.push("ipv6.fraghdr");
                return; // transport checksum covers the reassembled datagram
            }
            _ => break,
        }
    }
    transport(p, f, next, o, end, &[src, dst]);
}

fn transport(p: &mut Parsed, f: &[u8], proto: u8, off: usize, end: usize, addrs: &[&[u8]]) {
    let Some(seg) = f.get(off..end) else { return p.err("transport beyond the frame") };
    let len = (seg.len() as u32).to_be_bytes();
    let pseudo = |proto: u8| -> Vec<u8> {
        let mut v = Vec::new();
        for a in addrs {
            v.extend_from_slice(a);
        }
        if addrs[0].len() == 4 {
            v.extend_from_slice(&[0, proto, len[2], len[3]]);
        } else {
            v.extend_from_slice(&len);
            v.extend_from_slice(&[0, 0, 0, proto]);
        }
        v
    };
    match proto {
        6 => {
            p.protos.push("tcp");
            if seg.len() < 20 || usize::from(seg[12] >> 4) * 4 > seg.len() || seg[12] >> 4 < 5 {
                return p.err("bad TCP header length");
            }
            p.checks.push(("tcp", ones_sum(&[&pseudo(6), seg]) == 0xffff));
        }
        17 => {
            p.protos.push("udp");
            if be16(seg, 4).map(usize::from) != Some(seg.len()) {
                return p.err("UDP length");
            }
            if be16(seg, 6) != Some(0) {
                p.checks.push(("udp", ones_sum(&[&pseudo(17), seg]) == 0xffff));
            }
            let (sport, dport) = (be16(seg, 0), be16(seg, 2));
            if sport == Some(53) || dport == Some(53) {
                p.protos.push("dns");
            } else if dport == Some(4789) {
                p.protos.push("vxlan");
                p.protos.push("eth");
                ethertype(p, f, off + 8 + 8 + 12, off + 8 + 8 + 14);
            } else if dport == Some(6081) {
                p.protos.push("geneve");
                let optlen = usize::from(seg.get(8).map_or(0, |b| b & 0x3f)) * 4;
                ethertype(p, f, off + 8 + 2, off + 8 + 8 + optlen);
            }
        }
        132 => {
            p.protos.push("sctp");
            if seg.len() < 12 {
                return p.err("short SCTP");
            }
            let mut copy = seg.to_vec();
            let stored = u32::from_le_bytes([copy[8], copy[9], copy[10], copy[11]]);
            copy[8..12].copy_from_slice(&[0; 4]);
            p.checks.push(("sctp", crc32c_bitwise(&copy) == stored));
        }
        1 => {
            p.protos.push("icmp");
            p.checks.push(("icmp", ones_sum(&[seg]) == 0xffff));
        }
        58 => {
            p.protos.push("icmpv6");
            p.checks.push(("icmpv6", ones_sum(&[&pseudo(58), seg]) == 0xffff));
        }
        47 => {
            p.protos.push("gre");
            ethertype(p, f, off + 2, off + 4);
        }
        other => p.err(format!("IP protocol {other}")),
    }
}
