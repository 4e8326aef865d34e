//! Checksums: the Internet checksum (RFC 1071) with IPv4/IPv6 pseudo-headers, its incremental
//! update (RFC 1624), and CRC32c for SCTP (RFC 9260 appendix A).
//!
//! The Internet checksum is built in three steps so that a pseudo-header, a header and a payload
//! in different places can be summed without copying: [`add`] accumulates 16-bit big-endian
//! words into a running `u64` (not yet folded), [`fold`] folds it to 16 bits with end-around
//! carry, and [`finish`] folds and inverts it into the value a checksum field stores.
//! A message is correct when the sum over it, checksum field included, finishes to 0.
//!
//! **Incremental update.** Rewriting an address or a port (NAT) must not re-sum the payload.
//! RFC 1624 eqn. 3, `HC' = ~(~HC + ~m + m')`, gives the new checksum from the old one and the
//! old and new values of the changed 16-bit words: [`update16`], [`update32`], [`update_bytes`].
//! It equals a full recomputation whenever the message has a nonzero word other than the
//! checksum (every IP, TCP, UDP and ICMP message does: a version, a protocol or a length),
//! including the cases where the result is 0x0000 or 0xFFFF that the older eqn. 2 got wrong.
//! The changed words must be 16-bit aligned within the summed message, as every address and
//! port field is.

/// Adds `data` to a running sum (not yet folded or inverted), as 16-bit big-endian words. An
/// odd trailing byte is padded with zero, so only the last piece of a message may have odd
/// length.
#[inline]
pub fn add(mut acc: u64, data: &[u8]) -> u64 {
    // 32-bit words: the ones' complement sum of the 16-bit halves is congruent modulo 0xffff.
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a running sum to 16 bits with end-around carry (not inverted). Zero only when every
/// word summed was zero.
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Folds and inverts a running sum: the value to store in a checksum field, or 0 when
/// verifying a message whose checksum is right.
#[inline]
pub fn finish(acc: u64) -> u16 {
    !fold(acc)
}

/// The Internet checksum of `data`.
#[inline]
pub fn internet(data: &[u8]) -> u16 {
    finish(add(0, data))
}

/// The running sum of an IPv4 pseudo-header (RFC 793 §3.1): addresses, protocol, length.
#[inline]
pub fn pseudo_ipv4(src: &[u8; 4], dst: &[u8; 4], protocol: u8, len: u32) -> u64 {
    pseudo(src, dst, protocol, len)
}

/// The running sum of an IPv6 pseudo-header (RFC 8200 §8.1): addresses, upper-layer length,
/// next header.
#[inline]
pub fn pseudo_ipv6(src: &[u8; 16], dst: &[u8; 16], next_header: u8, len: u32) -> u64 {
    pseudo(src, dst, next_header, len)
}

/// The pseudo-header sum for addresses of either family (4 or 16 bytes each).
#[inline]
pub fn pseudo(src: &[u8], dst: &[u8], protocol: u8, len: u32) -> u64 {
    add(add(0, src), dst) + u64::from(protocol) + u64::from(len >> 16) + u64::from(len & 0xffff)
}

/// RFC 1624 eqn. 3: the checksum after one 16-bit word of the message changed from `old` to
/// `new`.
#[inline]
pub fn update16(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(u64::from(!checksum) + u64::from(!old) + u64::from(new))
}

/// The checksum after an aligned 32-bit field changed from `old` to `new`.
#[inline]
pub fn update32(checksum: u16, old: u32, new: u32) -> u16 {
    let acc = u64::from(!checksum)
        + u64::from(!(old >> 16) as u16)
        + u64::from(!old as u16)
        + (u64::from(new >> 16))
        + u64::from(new as u16);
    !fold(acc)
}

/// The checksum after the aligned bytes `old` became `new` (an address, a port pair…). The two
/// must have the same length; an odd trailing byte counts as the high byte of a word.
#[inline]
pub fn update_bytes(checksum: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut acc = u64::from(!checksum);
    for w in old.chunks(2) {
        let word = u16::from_be_bytes([w[0], w.get(1).copied().unwrap_or(0)]);
        acc += u64::from(!word);
    }
    !fold(add(acc, new))
}

/// The value a checksum field should have held, given the `stored` value and the checksum
/// `computed` over the message with that stored value in place (tcpdump's
/// `in_cksum_shouldbe`, for "incorrect -> 0x…" messages).
#[inline]
pub fn corrected(stored: u16, computed: u16) -> u16 {
    fold(u64::from(stored) + u64::from(computed))
}

/// The CRC32c lookup table (reflected polynomial 0x82F63B78), built at compile time.
static CRC32C_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82f6_3b78 } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC32c (Castagnoli) of `data`, final value (already inverted). SCTP stores it with
/// `to_le_bytes` (RFC 9260 appendix A: the low byte first).
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c_update(0, data)
}

/// Continues a CRC32c over more data: `crc32c_update(crc32c(a), b) == crc32c(a ++ b)`.
pub fn crc32c_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = CRC32C_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook 16-bit-at-a-time sum, to check the 32-bit-word one against.
    fn naive(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for c in data.chunks(2) {
            s += u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]));
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
        assert_eq!(finish(add(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), !0xddf2);
        assert_eq!(internet(&[]), 0xffff);
        assert_eq!(internet(&[0x12]), !0x1200);
        assert_eq!(fold(0), 0);
        assert_eq!(fold(0x1_fffe), 0xffff);
    }

    #[test]
    fn word_sizes_agree_with_the_naive_sum() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for len in 0..200 {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x.is_multiple_of(5) { 0xff } else { x as u8 }
                })
                .collect();
            assert_eq!(internet(&data), naive(&data), "{data:02x?}");
            // Split at an even point: the running sum carries over.
            let mid = (len / 2) & !1;
            assert_eq!(finish(add(add(0, &data[..mid]), &data[mid..])), naive(&data));
        }
        assert_eq!(internet(&[0xff; 64]), naive(&[0xff; 64]));
    }

    #[test]
    fn pseudo_headers_sum_addresses_protocol_and_length() {
        let v4 = pseudo_ipv4(&[10, 0, 0, 1], &[10, 0, 0, 2], 6, 0x1_0002);
        assert_eq!(fold(v4), fold(0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 6 + 1 + 2));
        let v6 = pseudo_ipv6(&[0; 16], &[0xff; 16], 58, 8);
        assert_eq!(u64::from(fold(v6)), u64::from(fold(8 * 0xffff + 58 + 8)));
    }

    #[test]
    fn incremental_updates_match_rfc1624_examples() {
        // RFC 1624 §4: a word changes from 0x5555 to 0x3285 where the other words sum to
        // 0xCD7A (checksum 0xDD2F); eqn. 3 gives 0x0000 (eqn. 2 gave 0xFFFF).
        assert_eq!(update16(0xdd2f, 0x5555, 0x3285), 0x0000);
        assert_eq!(update32(0xdd2f, 0x0000_5555, 0x0000_3285), 0x0000);
        assert_eq!(update_bytes(0xdd2f, &[0x55, 0x55], &[0x32, 0x85]), 0x0000);
        // Nothing changes when the value does not.
        assert_eq!(update16(0x1234, 0xabcd, 0xabcd), 0x1234);
        assert_eq!(update32(0x1234, 0xdead_beef, 0xdead_beef), 0x1234);
        assert_eq!(update_bytes(0x1234, &[1, 2, 3, 4], &[1, 2, 3, 4]), 0x1234);
    }

    #[test]
    fn corrected_is_what_verification_wants() {
        let mut msg = vec![0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x00, 0x00, 0x40, 0x11];
        msg.extend_from_slice(&[0xab, 0xcd]); // a wrong checksum
        let computed = internet(&msg);
        let right = corrected(0xabcd, computed);
        msg[10..12].copy_from_slice(&right.to_be_bytes());
        assert_eq!(internet(&msg), 0);
    }

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c_update(crc32c(b"1234"), b"56789"), 0xe306_9283);
    }
}
