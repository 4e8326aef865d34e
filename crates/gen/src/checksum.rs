//! Checksums: the Internet checksum (RFC 1071) and CRC32c (RFC 9260 appendix A, for SCTP).

/// Adds `data` to a running ones'-complement sum (not yet folded or inverted). An odd trailing
/// byte is padded with zero, so only the last chunk of a message may have odd length.
pub fn sum16(mut acc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a running sum to 16 bits and inverts it: the value to store in a checksum field.
pub fn finish16(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum of `data`.
pub fn internet(data: &[u8]) -> u16 {
    finish16(sum16(0, data))
}

/// The running sum of an IPv4 pseudo-header.
pub fn pseudo_v4(src: [u8; 4], dst: [u8; 4], proto: u8, len: u32) -> u64 {
    let acc = sum16(sum16(0, &src), &dst);
    acc + u64::from(proto) + u64::from(len & 0xffff) + u64::from(len >> 16)
}

/// The running sum of an IPv6 pseudo-header (RFC 8200 §8.1).
pub fn pseudo_v6(src: [u8; 16], dst: [u8; 16], next_header: u8, len: u32) -> u64 {
    let acc = sum16(sum16(0, &src), &dst);
    acc + u64::from(len & 0xffff) + u64::from(len >> 16) + u64::from(next_header)
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
    let mut c = !0u32;
    for &b in data {
        c = CRC32C_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
        assert_eq!(finish16(sum16(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), !0xddf2);
        assert_eq!(internet(&[]), 0xffff);
        assert_eq!(internet(&[0x12]), !0x1200);
    }

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
    }
}
