//! pf's `af-to` (NAT64 and NAT46): the addresses of the other family a connection is given
//! (pf_lb.c's `pf_get_transaddr_af`, with RFC 6052's IPv4-embedded IPv6 addresses as
//! `inet_nat64`/`inet_nat46` build them) and the packet rebuilt in that family (pf.c's
//! `pf_translate_af`: a new IP header, ICMP echo and ICMPv6 echo mapped onto each other, the
//! transport checksum moved from one pseudo-header to the other).
//!
//! Why its own module: unlike the other translations the packet changes length and
//! protocol, so it cannot be rewritten in place; [`Firewall::process`](crate::Firewall::process)
//! makes the new packet. ICMP errors of af-to states are not translated (pf rebuilds the
//! packet they quote too); they are dropped with pf's `translate` reason.

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
    let mut out = match to {
        Family::Inet => {
            let total = (20 + t.len()) as u16;
            let mut h = vec![0x45, tos, 0, 0, 0, 0, 0x40, 0, ttl, proto, 0, 0];
            h[2..4].copy_from_slice(&total.to_be_bytes());
            h.extend(&nsrc);
            h.extend(&ndst);
            let c = sift_wire::checksum::internet(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            h
        }
        Family::Inet6 => {
            let flow = 0x6000_0000u32 | u32::from(tos) << 20;
            let mut h = flow.to_be_bytes().to_vec();
            h.extend(len.to_be_bytes());
            h.extend([proto, ttl]);
            h.extend(&nsrc);
            h.extend(&ndst);
            h
        }
    };
    out.extend(t);
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
