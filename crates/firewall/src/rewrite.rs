//! Rewriting the headers of a translated packet in place, every checksum updated incrementally
//! (RFC 1624) as pf's `pf_translate`, `pf_change_ap` and `pf_translate_icmp` do: the IPv4
//! header checksum, the TCP/UDP checksum over the pseudo-header (a UDP checksum of 0 stays 0),
//! the ICMPv6 checksum over the pseudo-header, the ICMP query id; for an ICMP error, the
//! packet it quotes (its IP header, ports and the checksums the quote holds) and the ICMP
//! checksum over the whole message.
//!
//! Why its own module and incremental: a checksum that was wrong stays exactly as wrong (pf
//! never repairs what it forwards), and an established flow's packet costs a few additions
//! rather than a pass over its payload.

use sift_wire::checksum::{update_bytes, update16};
use sift_wire::ipproto;

use crate::packet::{Family, Packet};

/// How a packet of a translated connection is rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rewrite {
    /// The packet's own addresses and ports (for ICMP queries the id) become these.
    Header {
        /// New source address (pf's 16 bytes as a key: IPv4 in the top 32 bits).
        src: u128,
        /// New source port or query id.
        sport: u16,
        /// New destination address.
        dst: u128,
        /// New destination port or query id.
        dport: u16,
    },
    /// An ICMP error about a translated connection: the packet it quotes gets these addresses
    /// and ports, and the error's own destination (source) follows the quoted source
    /// (destination) where that changed.
    Quoted {
        /// New quoted source address.
        src: u128,
        /// New quoted source port or id.
        sport: u16,
        /// New quoted destination address.
        dst: u128,
        /// New quoted destination port or id.
        dport: u16,
        /// Subtracted from a quoted TCP segment's sequence number (its sender's modulator:
        /// the error names the numbers the host sent).
        seq_back: u32,
    },
    /// An ICMP error about an `af-to` connection, rebuilt in the other family: its own
    /// addresses, and the packet it quotes with these addresses and ports
    /// ([`Firewall::process`](crate::Firewall::process) makes it).
    AfError {
        /// The new family.
        af: Family,
        /// The error's new source (the sender's address mapped into the family).
        src: u128,
        /// The error's new destination.
        dst: u128,
        /// The quoted packet's new source and port.
        qsrc: (u128, u16),
        /// The quoted packet's new destination and port.
        qdst: (u128, u16),
    },
    /// `af-to`: the packet is rebuilt in the other family with these addresses and ports;
    /// [`Firewall::process`](crate::Firewall::process) makes the new packet ([`apply`] cannot:
    /// its length changes).
    Af {
        /// The new family.
        af: Family,
        /// New source address.
        src: u128,
        /// New source port or query id.
        sport: u16,
        /// New destination address.
        dst: u128,
        /// New destination port or query id.
        dport: u16,
    },
}

/// Where the parts of a packet are (read once; rewriting moves none of them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    af: Family,
    proto: u8,
    /// Offset of the transport header.
    pub(crate) l4: usize,
    /// The end of the packet as its header says.
    end: usize,
}

impl Layout {
    /// The layout of a parsed packet; `None` for a fragment (no transport header).
    pub(crate) fn of(p: &Packet<'_>) -> Option<Layout> {
        if p.fragment {
            return None;
        }
        let l4 = p.l4();
        let off = l4.as_ptr() as usize - p.bytes.as_ptr() as usize;
        Some(Layout { af: p.af, proto: p.proto, l4: off, end: off + l4.len() })
    }
}

fn layout(bytes: &[u8]) -> Option<Layout> {
    Layout::of(&Packet::parse(bytes).ok()?)
}

/// The offset of the address field (source: 0, destination: 1) of an IP header at `ip`.
fn addr_at(af: Family, ip: usize, which: usize) -> usize {
    match af {
        Family::Inet => ip + 12 + 4 * which,
        Family::Inet6 => ip + 8 + 16 * which,
    }
}

fn addr_bytes(a: u128, af: Family) -> ([u8; 16], usize) {
    (a.to_be_bytes(), if af == Family::Inet { 4 } else { 16 })
}

fn get16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    if let Some(s) = b.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

/// A checksum field that covers a change: where, and whether it is UDP's (0 means none).
#[derive(Clone, Copy)]
struct Sum {
    at: usize,
    udp: bool,
}

impl Sum {
    fn fix(self, b: &mut [u8], old: &[u8], new: &[u8]) {
        let Some(c) = get16(b, self.at) else { return };
        if self.udp && c == 0 {
            return;
        }
        let mut n = update_bytes(c, old, new);
        if self.udp && n == 0 {
            n = 0xffff;
        }
        put16(b, self.at, n);
    }
}

/// The transport checksum of `proto` at `l4` that covers the pseudo-header (its addresses),
/// if the bytes hold it.
fn pseudo_sum(proto: u8, l4: usize, len: usize) -> Option<Sum> {
    let s = match proto {
        ipproto::TCP => Sum { at: l4 + 16, udp: false },
        ipproto::UDP => Sum { at: l4 + 6, udp: true },
        ipproto::ICMPV6 => Sum { at: l4 + 2, udp: false },
        _ => return None,
    };
    (s.at + 2 <= len).then_some(s)
}

/// The checksum covering `proto`'s ports or query id at `l4`.
fn port_sum(proto: u8, l4: usize, len: usize) -> Option<Sum> {
    match proto {
        ipproto::ICMP => (l4 + 4 <= len).then_some(Sum { at: l4 + 2, udp: false }),
        _ => pseudo_sum(proto, l4, len),
    }
}

/// The offset of port `which` (0 source, 1 destination) of `proto` at `l4`: TCP/UDP ports,
/// or the ICMP/ICMPv6 query id (the same field for both).
fn port_at(proto: u8, l4: usize, which: usize) -> Option<usize> {
    match proto {
        ipproto::TCP | ipproto::UDP => Some(l4 + 2 * which),
        ipproto::ICMP | ipproto::ICMPV6 => Some(l4 + 4),
        _ => None,
    }
}

/// Sets address `which` of the IP header at `ip` to `new`, fixing the IPv4 header checksum
/// and `sums`. Returns whether it changed.
fn set_addr(b: &mut [u8], af: Family, ip: usize, which: usize, new: u128, sums: &[Sum]) -> bool {
    let at = addr_at(af, ip, which);
    let (nb, n) = addr_bytes(new, af);
    let mut ob = [0u8; 16];
    let Some(old) = b.get(at..at + n) else { return false };
    ob[..n].copy_from_slice(old);
    let old = &ob[..n];
    if *old == nb[..n] {
        return false;
    }
    if af == Family::Inet {
        Sum { at: ip + 10, udp: false }.fix(b, old, &nb[..n]);
    }
    for s in sums {
        s.fix(b, old, &nb[..n]);
    }
    b[at..at + n].copy_from_slice(&nb[..n]);
    true
}

/// Sets the port (or id) at `at` to `new`, fixing `sum`.
fn set_port(b: &mut [u8], at: usize, new: u16, sum: Option<Sum>) -> bool {
    let Some(old) = get16(b, at) else { return false };
    if old == new {
        return false;
    }
    if let Some(s) = sum {
        let Some(c) = get16(b, s.at) else { return false };
        if !(s.udp && c == 0) {
            let mut n = update16(c, old, new);
            if s.udp && n == 0 {
                n = 0xffff;
            }
            put16(b, s.at, n);
        }
    }
    put16(b, at, new);
    true
}

/// Applies `rw` to the packet in `bytes` (an IPv4 or IPv6 packet from its IP header on);
/// returns whether anything changed. Bytes that are not a whole packet are left alone.
pub fn apply(bytes: &mut [u8], rw: &Rewrite) -> bool {
    layout(bytes).is_some_and(|l| apply_at(bytes, &l, rw))
}

/// [`apply`] on a packet whose layout is known.
pub(crate) fn apply_at(bytes: &mut [u8], l: &Layout, rw: &Rewrite) -> bool {
    match *rw {
        Rewrite::Header { src, sport, dst, dport } => header(bytes, l, [src, dst], [sport, dport]),
        Rewrite::Quoted { src, sport, dst, dport, seq_back } => {
            quoted(bytes, l, [src, dst], [sport, dport], seq_back)
        }
        Rewrite::Af { .. } | Rewrite::AfError { .. } => false,
    }
}

fn header(b: &mut [u8], l: &Layout, addrs: [u128; 2], ports: [u16; 2]) -> bool {
    let sum = pseudo_sum(l.proto, l.l4, l.end);
    let sums = sum.as_slice();
    let mut changed = false;
    for (which, &a) in addrs.iter().enumerate() {
        changed |= set_addr(b, l.af, 0, which, a, sums);
    }
    // ICMP has one id field: the source's.
    let icmp = matches!(l.proto, ipproto::ICMP | ipproto::ICMPV6);
    for (which, &port) in ports.iter().enumerate().take(if icmp { 1 } else { 2 }) {
        if let Some(at) = port_at(l.proto, l.l4, which)
            && at + 2 <= l.end
        {
            changed |= set_port(b, at, port, port_sum(l.proto, l.l4, l.end));
        }
    }
    changed
}

fn quoted(b: &mut [u8], l: &Layout, addrs: [u128; 2], ports: [u16; 2], seq_back: u32) -> bool {
    let icmp_sum = l.l4 + 2;
    let inner = l.l4 + 8;
    if inner >= l.end {
        return false;
    }
    let before = b[l.l4..l.end].to_vec();
    // The quoted packet: its header, addresses and transport fields.
    let (ihl, iproto) = match (l.af, b[inner] >> 4) {
        (Family::Inet, 4) => (usize::from(b[inner] & 0x0f) * 4, b.get(inner + 9).copied()),
        (Family::Inet6, 6) => (40, b.get(inner + 6).copied()),
        _ => return false,
    };
    let Some(iproto) = iproto else { return false };
    if inner + ihl > l.end {
        return false;
    }
    // Work on the message alone so that nothing past it is touched; `moved[i]`: the quoted
    // source (0) or destination (1) changed.
    let mut moved = [false; 2];
    {
        let msg = &mut b[..l.end];
        let it = inner + ihl;
        let isums: Vec<Sum> = match iproto {
            // Only checksums the quote holds whole; ICMPv6's covers its pseudo-header.
            ipproto::TCP | ipproto::UDP | ipproto::ICMPV6 => {
                pseudo_sum(iproto, it, l.end).into_iter().collect()
            }
            _ => Vec::new(),
        };
        for which in 0..2 {
            moved[which] |= set_addr(msg, l.af, inner, which, addrs[which], &isums);
        }
        let icmp = matches!(iproto, ipproto::ICMP | ipproto::ICMPV6);
        for which in 0..2 {
            if icmp && which == 1 {
                break;
            }
            if let Some(at) = port_at(iproto, it, which)
                && at + 2 <= l.end
            {
                moved[which] |= set_port(msg, at, ports[which], port_sum(iproto, it, l.end));
            }
        }
    }
    let it = inner + ihl;
    let mut renumbered = false;
    if iproto == ipproto::TCP && seq_back != 0 && it + 8 <= l.end {
        let old = u32::from_be_bytes([b[it + 4], b[it + 5], b[it + 6], b[it + 7]]);
        let new = old.wrapping_sub(seq_back);
        if it + 18 <= l.end {
            Sum { at: it + 16, udp: false }.fix(b, &old.to_be_bytes(), &new.to_be_bytes());
        }
        b[it + 4..it + 8].copy_from_slice(&new.to_be_bytes());
        renumbered = true;
    }
    if moved == [false; 2] && !renumbered {
        return false;
    }
    // The ICMP checksum covers the whole message (and, for ICMPv6, the outer addresses).
    let after = b[l.l4..l.end].to_vec();
    if let Some(c) = get16(&before, 2) {
        // The checksum field itself is part of the message: leave it out of the difference.
        let (mut ob, mut nb) = (before, after);
        ob[2..4].fill(0);
        nb[2..4].fill(0);
        put16(b, icmp_sum, update_bytes(c, &ob, &nb));
    }
    // The error's own addresses follow (pf's `pf_translate_icmp`): its destination becomes
    // the quoted source where that moved, its source the quoted destination.
    let outer: Vec<Sum> =
        if l.af == Family::Inet6 { vec![Sum { at: icmp_sum, udp: false }] } else { Vec::new() };
    if moved[0] {
        set_addr(b, l.af, 0, 1, addrs[0], &outer);
    }
    if moved[1] {
        set_addr(b, l.af, 0, 0, addrs[1], &outer);
    }
    true
}

/// How a TCP segment's numbers change on their way through a modulated state (`modulate
/// state`, a spliced `synproxy state`): pf's `pf_change_a` of the sequence and acknowledgement
/// numbers and `pf_modulate_sack` of the SACK blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeqShift {
    /// Added to the sequence number.
    pub seq: u32,
    /// Subtracted from the acknowledgement number (`None`: left alone).
    pub ack: Option<u32>,
    /// Subtracted from both edges of every SACK block (0: none).
    pub sack: u32,
    /// `reassemble tcp`'s timestamp modulation: added to a nonzero TSval, subtracted from a
    /// nonzero TSecr.
    pub ts: Option<(u32, u32)>,
}

/// Sets the 32-bit field at `at` to `new`, fixing the TCP checksum at `sum`.
fn set32(b: &mut [u8], at: usize, new: u32, sum: usize) {
    let Some(old) = b.get(at..at + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]])) else {
        return;
    };
    if let Some(c) = get16(b, sum) {
        put16(b, sum, sift_wire::checksum::update32(c, old, new));
    }
    b[at..at + 4].copy_from_slice(&new.to_be_bytes());
}

/// Applies `shift` to the TCP segment in `bytes` (an IP packet); returns whether it was one.
pub fn apply_shift(bytes: &mut [u8], shift: &SeqShift) -> bool {
    layout(bytes).is_some_and(|l| apply_shift_at(bytes, &l, shift))
}

/// [`apply_shift`] on a packet whose layout is known.
pub(crate) fn apply_shift_at(bytes: &mut [u8], l: &Layout, shift: &SeqShift) -> bool {
    if l.proto != ipproto::TCP || l.l4 + 20 > l.end {
        return false;
    }
    let (t, sum) = (l.l4, l.l4 + 16);
    let be32 = |b: &[u8], o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if shift.seq != 0 {
        let seq = be32(bytes, t + 4).wrapping_add(shift.seq);
        set32(bytes, t + 4, seq, sum);
    }
    if let Some(d) = shift.ack {
        let ack = be32(bytes, t + 8).wrapping_sub(d);
        set32(bytes, t + 8, ack, sum);
    }
    if shift.sack != 0 || shift.ts.is_some() {
        let hlen = (usize::from(bytes[t + 12] >> 4) * 4).min(l.end - t);
        let mut i = t + 20;
        while i < t + hlen {
            match bytes[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let Some(&len) = bytes.get(i + 1) else { break };
                    let len = usize::from(len);
                    if len < 2 || i + len > t + hlen {
                        break;
                    }
                    if kind == 8
                        && len == 10
                        && let Some((add, sub)) = shift.ts
                    {
                        let (tsval, tsecr) = (be32(bytes, i + 2), be32(bytes, i + 6));
                        if tsval != 0 && add != 0 {
                            set32(bytes, i + 2, tsval.wrapping_add(add), sum);
                        }
                        if tsecr != 0 && sub != 0 {
                            set32(bytes, i + 6, tsecr.wrapping_sub(sub), sum);
                        }
                    }
                    if kind == 5 {
                        // Blocks of two edges, each 4 bytes.
                        let mut e = i + 2;
                        while e + 4 <= i + len {
                            let v = be32(bytes, e).wrapping_sub(shift.sack);
                            set32(bytes, e, v, sum);
                            e += 4;
                        }
                    }
                    i += len;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP segment with a SACK option of two blocks, its checksums filled in.
    fn sack_segment() -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let mut t = vec![0u8; 20];
        t[0..4].copy_from_slice(&[0x9c, 0x40, 0, 80]);
        t[4..8].copy_from_slice(&1000u32.to_be_bytes());
        t[8..12].copy_from_slice(&7000u32.to_be_bytes());
        t[12] = 10 << 4; // 40 bytes: 20 of options
        t[13] = 0x10;
        // NOP, NOP, SACK with two blocks (18 bytes).
        t.extend([1, 1, 5, 18]);
        for e in [7100u32, 7200, 7300, 7400] {
            t.extend(e.to_be_bytes());
        }
        p.extend(&t);
        let len = p.len() as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        let c = sift_wire::checksum::internet(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        let src: [u8; 4] = p[12..16].try_into().unwrap();
        let dst: [u8; 4] = p[16..20].try_into().unwrap();
        let acc = sift_wire::checksum::pseudo_ipv4(&src, &dst, 6, (p.len() - 20) as u32);
        let c = sift_wire::checksum::finish(sift_wire::checksum::add(acc, &p[20..]));
        p[36..38].copy_from_slice(&c.to_be_bytes());
        p
    }

    fn tcp_sum_ok(p: &[u8]) -> bool {
        let src: [u8; 4] = p[12..16].try_into().unwrap();
        let dst: [u8; 4] = p[16..20].try_into().unwrap();
        let acc = sift_wire::checksum::pseudo_ipv4(&src, &dst, 6, (p.len() - 20) as u32);
        sift_wire::checksum::finish(sift_wire::checksum::add(acc, &p[20..])) == 0
    }

    #[test]
    fn shift_moves_seq_ack_and_every_sack_edge_keeping_the_checksum() {
        let mut p = sack_segment();
        assert!(tcp_sum_ok(&p));
        let shift = SeqShift { seq: 5, ack: Some(100), sack: 100, ts: None };
        assert!(apply_shift(&mut p, &shift));
        let be32 = |o: usize| u32::from_be_bytes(p[o..o + 4].try_into().unwrap());
        assert_eq!((be32(24), be32(28)), (1005, 6900));
        assert_eq!([be32(44), be32(48), be32(52), be32(56)], [7000, 7100, 7200, 7300]);
        assert!(tcp_sum_ok(&p));
    }
}
