//! Internet checksum arithmetic as the kernel does it on x86-64 (`csum_partial`,
//! `csum_fold`, `csum_replace*`, `inet_proto_csum_replace*`): the helpers `bpf_csum_diff`,
//! `bpf_l3_csum_replace` and `bpf_l4_csum_replace` return or store these exact values.
//! Values are in memory order (a big-endian field loaded little-endian stays as it is):
//! one's-complement sums do not depend on byte order as long as it is the same throughout.

/// `csum_partial(buf, len, seed)`: the 32-bit one's-complement sum of `buf` (little-endian
/// words) and `seed`, accumulated in 64 bits and folded with `add32_with_carry`.
pub fn csum_partial(buf: &[u8], seed: u32) -> u32 {
    let mut acc = u64::from(seed);
    let add = |acc: u64, v: u64| {
        let (s, c) = acc.overflowing_add(v);
        s + u64::from(c)
    };
    let mut chunks = buf.chunks_exact(8);
    for c in &mut chunks {
        acc = add(acc, u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    let mut rest = chunks.remainder();
    if rest.len() >= 4 {
        acc = add(acc, u64::from(u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]])));
        rest = &rest[4..];
    }
    if rest.len() >= 2 {
        acc = add(acc, u64::from(u16::from_le_bytes([rest[0], rest[1]])));
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        acc = add(acc, u64::from(b));
    }
    add32(acc as u32, (acc >> 32) as u32)
}

/// `csum_add`: 32-bit one's-complement addition.
pub fn add32(a: u32, b: u32) -> u32 {
    let (s, c) = a.overflowing_add(b);
    s.wrapping_add(u32::from(c))
}

/// `csum_sub`.
pub fn sub32(a: u32, b: u32) -> u32 {
    add32(a, !b)
}

/// `csum_from32to16`: a 32-bit sum folded to 16 bits (not inverted).
pub fn from32to16(sum: u32) -> u16 {
    let s = (sum & 0xffff) + (sum >> 16);
    ((s & 0xffff) + (s >> 16)) as u16
}

/// `csum_fold`: folded to 16 bits and inverted.
pub fn fold(sum: u32) -> u16 {
    !from32to16(sum)
}

/// `bpf_csum_diff`'s value (Linux 6.13 on: the same on every architecture): the sum of `to`
/// minus the sum of `from`, on top of `seed`, folded to 16 bits.
pub fn csum_diff(from: &[u8], to: &[u8], seed: u32) -> u64 {
    let r = match (from.is_empty(), to.is_empty()) {
        (false, false) => sub32(csum_partial(to, seed), csum_partial(from, 0)),
        (true, false) => csum_partial(to, seed),
        (false, true) => !csum_partial(from, !seed),
        (true, true) => seed,
    };
    u64::from(from32to16(r))
}

/// `csum_replace4` / `inet_proto_csum_replace4` (not `CHECKSUM_PARTIAL`): the checksum
/// `sum` after a 4-byte field changed from `from` to `to`.
pub fn replace4(sum: u16, from: u32, to: u32) -> u16 {
    let mut diff = [0u8; 8];
    diff[..4].copy_from_slice(&(!from).to_le_bytes());
    diff[4..].copy_from_slice(&to.to_le_bytes());
    fold(csum_partial(&diff, !u32::from(sum)))
}

/// `csum_replace2`: the same for a 2-byte field.
pub fn replace2(sum: u16, from: u16, to: u16) -> u16 {
    let add16 = |a: u16, b: u16| {
        let (s, c) = a.overflowing_add(b);
        s.wrapping_add(u16::from(c))
    };
    !add16(add16(!sum, !from), to)
}

/// `csum_replace_by_diff`: the checksum after a change whose sum is `diff`.
pub fn replace_by_diff(sum: u16, diff: u32) -> u16 {
    fold(add32(diff, !u32::from(sum)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_updates_equal_recomputing() {
        // An IPv4 header; its checksum at bytes 10–11.
        let mut h =
            [0x45u8, 0, 0, 0x54, 0x12, 0x34, 0x40, 0, 0x40, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let full = |h: &[u8]| fold(csum_partial(h, 0));
        let c = full(&h);
        h[10..12].copy_from_slice(&c.to_le_bytes());
        assert_eq!(full(&h), 0);
        // Change the destination: replace4 gives the recomputed checksum.
        let from = u32::from_le_bytes(h[16..20].try_into().unwrap());
        let to = u32::from_le_bytes([192, 168, 1, 1]);
        let sum = u16::from_le_bytes([h[10], h[11]]);
        h[16..20].copy_from_slice(&to.to_le_bytes());
        let new = replace4(sum, from, to);
        h[10..12].copy_from_slice(&new.to_le_bytes());
        assert_eq!(full(&h), 0);
        // TTL: replace2.
        let (from, to) = (u16::from_le_bytes([h[8], h[9]]), u16::from_le_bytes([63, 1]));
        h[8..10].copy_from_slice(&to.to_le_bytes());
        let new = replace2(u16::from_le_bytes([h[10], h[11]]), from, to);
        h[10..12].copy_from_slice(&new.to_le_bytes());
        assert_eq!(full(&h), 0);
    }
}
