//! pf's `af-to` (NAT64 and NAT46): the addresses of the other family a connection is given
//! (pf_lb.c's `pf_get_transaddr_af`, with RFC 6052's IPv4-embedded IPv6 addresses as
//! `inet_nat64`/`inet_nat46` build them) and the packet rebuilt in that family (pf.c's
//! `pf_translate_af`: a new IP header, ICMP echo and ICMPv6 echo mapped onto each other, the
//! transport checksum moved from one pseudo-header to the other).
//!
//! Why its own module: unlike the other translations the packet changes length and
//! protocol, so it cannot be rewritten in place; [`Firewall::process`](crate::Firewall::process)
//! makes the new packet. ICMP errors of af-to connections are rebuilt too
//! ([`translate_error`]: type and code mapped as `pf_translate_icmp_af`, the quoted packet in
//! the new family); their checksum is computed anew, so an error whose checksum was wrong is
//! dropped rather than repaired.

use sift_wire::checksum::{add, fold};
use sift_wire::ipproto;

use crate::packet::{Family, Packet};

/// RFC 6052's prefix lengths; others are taken as /96.
const PREFIXES: [u32; 6] = [32, 40, 48, 56, 64, 96];

fn prefix_len(len: u32) -> u32 {
    if PREFIXES.contains(&len) { len } else { 96 }
}

/// The bit positions (from the top of the IPv6 address) of the 32 bits of an IPv4 address
/// embedded after a prefix of `len` bits: RFC 6052 skips bits 64–71 (the "u" octet).
fn embed_positions(len: u32) -> [u32; 4] {
    let mut at = len;
    let mut pos = [0; 4];
    for p in &mut pos {
        if at == 64 {
            at = 72;
        }
        *p = at;
        at += 8;
    }
    pos
}

/// `inet_nat64`: the IPv6 address of IPv4 `v4` (a key: IPv4 in the top 32 bits) under the
/// IPv6 `prefix` of `len` bits.
pub(crate) fn embed(v4: u128, prefix: u128, len: u32) -> u128 {
    let len = prefix_len(len);
    let mut out = prefix & (u128::MAX << (128 - len));
    let bytes = ((v4 >> 96) as u32).to_be_bytes();
    for (b, at) in bytes.iter().zip(embed_positions(len)) {
        out &= !(0xffu128 << (120 - at));
        out |= u128::from(*b) << (120 - at);
    }
    out
}

/// `inet_nat46`'s inverse use: the IPv4 address (a key) embedded in IPv6 `v6` after a
/// prefix of `len` bits.
pub(crate) fn extract(v6: u128, len: u32) -> u128 {
    let len = prefix_len(len);
    let mut v4 = 0u32;
    for at in embed_positions(len) {
        v4 = v4 << 8 | ((v6 >> (120 - at)) & 0xff) as u32;
    }
    u128::from(v4) << 96
}

/// The protocol of `proto` in the other family (ICMP and ICMPv6 swap).
pub(crate) fn other_proto(proto: u8) -> u8 {
    match proto {
        ipproto::ICMP => ipproto::ICMPV6,
        ipproto::ICMPV6 => ipproto::ICMP,
        p => p,
    }
}

/// ICMP echo types in the other family (request 8 ↔ 128, reply 0 ↔ 129); other types are
/// not translated.
fn other_echo(ty: u8, to: Family) -> Option<u8> {
    match (to, ty) {
        (Family::Inet, 128) => Some(8),
        (Family::Inet, 129) => Some(0),
        (Family::Inet6, 8) => Some(128),
        (Family::Inet6, 0) => Some(129),
        _ => None,
    }
}

fn addr_bytes(a: u128, af: Family) -> Vec<u8> {
    let b = a.to_be_bytes();
    match af {
        Family::Inet => b[..4].to_vec(),
        Family::Inet6 => b.to_vec(),
    }
}

/// The one's-complement sum (not inverted) of a pseudo-header's addresses.
fn addr_sum(src: &[u8], dst: &[u8]) -> u16 {
    fold(add(add(0, src), dst))
}

/// The IP header pf's `pf_translate_af` writes in family `to` for a payload of `len` bytes:
/// IPv4 with identification 0 (DF set when `df`) and its checksum, or IPv6 with the traffic
/// class; `(tos, ttl, proto)` carried over.
fn ip_header(
    to: Family,
    (tos, ttl, proto): (u8, u8, u8),
    len: usize,
    src: &[u8],
    dst: &[u8],
    df: bool,
) -> Vec<u8> {
    let mut h = match to {
        Family::Inet => {
            let off = if df { 0x40 } else { 0 };
            let mut h = vec![0x45, tos, 0, 0, 0, 0, off, 0, ttl, proto, 0, 0];
            h[2..4].copy_from_slice(&((20 + len) as u16).to_be_bytes());
            h
        }
        Family::Inet6 => {
            let mut h = (0x6000_0000u32 | u32::from(tos) << 20).to_be_bytes().to_vec();
            h.extend((len as u16).to_be_bytes());
            h.extend([proto, ttl]);
            h
        }
    };
    h.extend(src);
    h.extend(dst);
    if to == Family::Inet {
        let c = sift_wire::checksum::internet(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
    h
}

/// The packet in `bytes` rebuilt in family `to` with these addresses and ports (for ICMP the
/// query id), as pf's `pf_translate_af` does; `None` when it cannot be (an ICMP message that
/// is not an echo, a fragment, bytes that are not a packet).
pub(crate) fn translate(
    bytes: &[u8],
    to: Family,
    (src, sport): (u128, u16),
    (dst, dport): (u128, u16),
) -> Option<Vec<u8>> {
    let p = Packet::parse(bytes).ok()?;
    if p.fragment || p.af == to {
        return None;
    }
    let l4 = p.l4();
    let (ttl, tos) = (p.ttl, p.tos);
    let proto = other_proto(p.proto);
    let (old_src, old_dst) = match p.af {
        Family::Inet => (&bytes[12..16], &bytes[16..20]),
        Family::Inet6 => (&bytes[8..24], &bytes[24..40]),
    };
    let (nsrc, ndst) = (addr_bytes(src, to), addr_bytes(dst, to));
    let mut t = l4.to_vec();
    let fix = |t: &mut [u8], at: usize, old: u16, new: u16| {
        if let Some(c) = t.get(at..at + 2).map(|c| u16::from_be_bytes([c[0], c[1]])) {
            let n = !fold(u64::from(!c) + u64::from(!old) + u64::from(new));
            t[at..at + 2].copy_from_slice(&n.to_be_bytes());
        }
    };
    let len = l4.len() as u16;
    match p.proto {
        ipproto::TCP | ipproto::UDP => {
            let at = if p.proto == ipproto::TCP { 16 } else { 6 };
            let udp_none = p.proto == ipproto::UDP && t.get(6..8) == Some(&[0, 0]);
            if !udp_none {
                // The pseudo-header's addresses change family; its length and protocol stay.
                fix(&mut t, at, addr_sum(old_src, old_dst), addr_sum(&nsrc, &ndst));
            }
            for (i, port) in [sport, dport].into_iter().enumerate() {
                let old = u16::from_be_bytes([t[2 * i], t[2 * i + 1]]);
                if old != port {
                    if !udp_none {
                        fix(&mut t, at, old, port);
                    }
                    t[2 * i..2 * i + 2].copy_from_slice(&port.to_be_bytes());
                }
            }
            if p.proto == ipproto::UDP && !udp_none && t[6..8] == [0, 0] {
                t[6..8].copy_from_slice(&[0xff, 0xff]);
            }
        }
        ipproto::ICMP | ipproto::ICMPV6 => {
            let ty = other_echo(t[0], to)?;
            let old_word = u16::from_be_bytes([t[0], t[1]]);
            t[0] = ty;
            let new_word = u16::from_be_bytes([t[0], t[1]]);
            fix(&mut t, 2, old_word, new_word);
            let old_id = u16::from_be_bytes([t[4], t[5]]);
            fix(&mut t, 2, old_id, sport);
            t[4..6].copy_from_slice(&sport.to_be_bytes());
            // ICMPv6's checksum covers a pseudo-header (addresses, length, next header),
            // ICMP's does not.
            let pseudo = |s: &[u8], d: &[u8]| {
                fold(add(add(add(0, s), d), &[0, 0, (len >> 8) as u8, len as u8, 0, 0, 0, 58]))
            };
            if p.af == Family::Inet6 {
                fix(&mut t, 2, pseudo(old_src, old_dst), 0);
            } else {
                fix(&mut t, 2, 0, pseudo(&nsrc, &ndst));
            }
        }
        _ => {}
    }
    let mut out = ip_header(to, (tos, ttl, proto), t.len(), &nsrc, &ndst, true);
    out.extend(t);
    Some(out)
}

/// pf's `pf_translate_icmp_af`: the type and code of an ICMP error in family `to` (with the
/// MTU of a "too big" moved by the header difference), `None` for errors pf drops.
fn error_type(ty: u8, code: u8, to: Family) -> Option<(u8, u8)> {
    match to {
        Family::Inet6 => match (ty, code) {
            (3, 2) => Some((4, 1)), // protocol unreachable: parameter problem, next header
            (3, 3) => Some((1, 4)), // port unreachable
            (3, 4) => Some((2, 0)), // fragmentation needed: packet too big
            (3, 9 | 10 | 13) => Some((1, 1)), // administratively prohibited
            (3, 0 | 1 | 5..=8 | 11 | 12) => Some((1, 0)), // no route
            (11, c) => Some((3, c)), // time exceeded
            _ => None,
        },
        Family::Inet => match (ty, code) {
            (1, 0 | 2 | 3) => Some((3, 1)), // host unreachable
            (1, 1) => Some((3, 10)),        // administratively prohibited
            (1, 4) => Some((3, 3)),         // port unreachable
            (2, _) => Some((3, 4)),         // packet too big: fragmentation needed
            (3, c) => Some((11, c)),        // time exceeded
            (4, 1) => Some((3, 2)),         // unknown next header: protocol unreachable
            _ => None,
        },
    }
}

/// The quoted packet of an ICMP error rebuilt in family `to` (its header from the quote, its
/// transport bytes kept, ports set): what `pf_change_icmp_af` makes of the inner header. A
/// UDP checksum the quote holds moves between pseudo-headers.
fn quoted(
    q: &[u8],
    from: Family,
    to: Family,
    (src, sport): (u128, u16),
    (dst, dport): (u128, u16),
) -> Option<Vec<u8>> {
    let (hlen, proto, ttl, tos, stated) = match from {
        Family::Inet => {
            let hl = usize::from(*q.first()? & 0x0f) * 4;
            let stated = usize::from(u16::from_be_bytes([*q.get(2)?, *q.get(3)?]));
            (hl, *q.get(9)?, *q.get(8)?, *q.get(1)?, stated.checked_sub(hl)?)
        }
        Family::Inet6 => {
            let stated = usize::from(u16::from_be_bytes([*q.get(4)?, *q.get(5)?]));
            let tc = (u16::from_be_bytes([*q.first()?, *q.get(1)?]) >> 4) as u8;
            (40, *q.get(6)?, *q.get(7)?, tc, stated)
        }
    };
    let (old_src, old_dst) = match from {
        Family::Inet => (q.get(12..16)?, q.get(16..20)?),
        Family::Inet6 => (q.get(8..24)?, q.get(24..40)?),
    };
    let mut t = q.get(hlen..)?.to_vec();
    let (nsrc, ndst) = (addr_bytes(src, to), addr_bytes(dst, to));
    let nproto = other_proto(proto);
    match proto {
        ipproto::TCP | ipproto::UDP if t.len() >= 4 => {
            let sum_at = if proto == ipproto::UDP { Some(6) } else { Some(16) };
            let held = sum_at.filter(|&a| a + 2 <= t.len() && t[a..a + 2] != [0, 0]);
            let fix = |t: &mut [u8], at: usize, old: u16, new: u16| {
                let c = u16::from_be_bytes([t[at], t[at + 1]]);
                let n = !fold(u64::from(!c) + u64::from(!old) + u64::from(new));
                t[at..at + 2].copy_from_slice(&n.to_be_bytes());
            };
            if let Some(at) = held {
                fix(&mut t, at, addr_sum(old_src, old_dst), addr_sum(&nsrc, &ndst));
            }
            for (i, port) in [sport, dport].into_iter().enumerate() {
                let old = u16::from_be_bytes([t[2 * i], t[2 * i + 1]]);
                if let Some(at) = held {
                    fix(&mut t, at, old, port);
                }
                t[2 * i..2 * i + 2].copy_from_slice(&port.to_be_bytes());
            }
        }
        ipproto::ICMP | ipproto::ICMPV6 if t.len() >= 6 => {
            // An echo quoted: its type in the new family and its id; its checksum is not
            // held whole by most quotes and is left.
            t[0] = other_echo(t[0], to)?;
            t[4..6].copy_from_slice(&sport.to_be_bytes());
        }
        _ => {}
    }
    let mut out = ip_header(to, (tos, ttl, nproto), stated, &nsrc, &ndst, true);
    out.extend(t);
    Some(out)
}

/// An ICMP error about an `af-to` connection rebuilt in family `to` (pf's
/// `pf_test_state_icmp` for af-to states): the error's own addresses `outer`, its type and
/// code mapped, the packet it quotes rebuilt with `quoted_src`/`quoted_dst`; the message's
/// checksum computed anew (ICMPv6's over its pseudo-header). `None` when pf would drop it.
pub(crate) fn translate_error(
    bytes: &[u8],
    to: Family,
    outer: (u128, u128),
    quoted_src: (u128, u16),
    quoted_dst: (u128, u16),
) -> Option<Vec<u8>> {
    let p = Packet::parse(bytes).ok()?;
    if p.af == to || p.fragment {
        return None;
    }
    let m = p.l4();
    // The message is rebuilt whole, so its checksum is computed anew: an error whose
    // checksum was wrong is not translated (it would come out right).
    let (s, d) = match p.af {
        Family::Inet => (&bytes[12..16], &bytes[16..20]),
        Family::Inet6 => (&bytes[8..24], &bytes[24..40]),
    };
    let start = match p.af {
        Family::Inet => 0,
        Family::Inet6 => sift_wire::checksum::pseudo(s, d, ipproto::ICMPV6, m.len() as u32),
    };
    if sift_wire::checksum::finish(add(start, m)) != 0 {
        return None;
    }
    let (ty, code) = error_type(*m.first()?, *m.get(1)?, to)?;
    let mut hdr = m.get(..8)?.to_vec();
    hdr[0] = ty;
    hdr[1] = code;
    hdr[2..4].fill(0);
    if ty == 2 && to == Family::Inet6 {
        // Packet too big: the MTU grows by the header difference (IPv4's next-hop MTU is in
        // the low half of the word).
        let mtu = u32::from(u16::from_be_bytes([hdr[6], hdr[7]])) + 20;
        hdr[4..8].copy_from_slice(&mtu.to_be_bytes());
    } else if ty == 3 && code == 4 && to == Family::Inet {
        let mtu = u32::from_be_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]).saturating_sub(20);
        hdr[4..6].fill(0);
        hdr[6..8].copy_from_slice(&(mtu.min(0xffff) as u16).to_be_bytes());
    } else if ty == 4 && to == Family::Inet6 {
        // Parameter problem, next header: the pointer at IPv6's next header field.
        hdr[4..8].copy_from_slice(&6u32.to_be_bytes());
    } else {
        hdr[4..8].fill(0);
    }
    let inner = quoted(m.get(8..)?, p.af, to, quoted_src, quoted_dst)?;
    let mut msg = hdr;
    msg.extend(inner);
    let (src, dst) = (addr_bytes(outer.0, to), addr_bytes(outer.1, to));
    let start = match to {
        Family::Inet => 0,
        Family::Inet6 => sift_wire::checksum::pseudo(&src, &dst, ipproto::ICMPV6, msg.len() as u32),
    };
    let c = sift_wire::checksum::finish(add(start, &msg));
    msg[2..4].copy_from_slice(&c.to_be_bytes());
    let proto = if to == Family::Inet { ipproto::ICMP } else { ipproto::ICMPV6 };
    let mut out = ip_header(to, (p.tos, p.ttl, proto), msg.len(), &src, &dst, false);
    out.extend(msg);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(s: &str) -> u128 {
        u128::from(s.parse::<std::net::Ipv6Addr>().unwrap())
    }

    fn v4(s: &str) -> u128 {
        u128::from(u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())) << 96
    }

    /// RFC 6052 section 2.4's table: 192.0.2.33 under 2001:db8::/32 … /96.
    #[test]
    fn rfc6052_examples() {
        let cases = [
            (32, "2001:db8:c000:221::"),
            (40, "2001:db8:1c0:2:21::"),
            (48, "2001:db8:122:c000:2:2100::"),
            (56, "2001:db8:122:3c0:0:221::"),
            (64, "2001:db8:122:344:c0:2:2100:0"),
            (96, "2001:db8:122:344::192.0.2.33"),
        ];
        for (len, want) in cases {
            let prefix = if len == 32 { v6("2001:db8::") } else { v6("2001:db8:122:344::") };
            let got = embed(v4("192.0.2.33"), prefix, len);
            assert_eq!(got, v6(want), "/{len}");
            assert_eq!(extract(got, len), v4("192.0.2.33"), "/{len}");
        }
    }
}
