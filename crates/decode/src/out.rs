//! Appending text to a reused byte buffer without going through `fmt`.
//!
//! The printers write every packet into one `Vec<u8>` that the caller reuses, so printing does
//! not allocate once the buffer has grown. `core::fmt` would work too but costs a virtual call
//! and padding logic per field; these helpers write digits and addresses directly.

/// Extension methods for the output buffer.
pub(crate) trait Out {
    fn s(&mut self, text: &str);
    fn u(&mut self, n: u64);
    fn hex(&mut self, n: u64);
    fn hex_width(&mut self, n: u64, width: usize);
    fn dec_width(&mut self, n: u64, width: usize);
    fn ip4(&mut self, a: &[u8]);
    fn ip6(&mut self, a: &[u8]);
    fn mac(&mut self, a: &[u8]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// "00", "01", … "99".
const DIGITS2: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

impl Out for Vec<u8> {
    #[inline]
    fn s(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }

    #[inline]
    fn u(&mut self, mut n: u64) {
        // Two digits per division, from a table.
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        while n >= 100 {
            let r = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
        }
        if n >= 10 {
            let r = n as usize * 2;
            i -= 2;
            buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
        } else {
            i -= 1;
            buf[i] = b'0' + n as u8;
        }
        self.extend_from_slice(&buf[i..]);
    }

    fn hex(&mut self, n: u64) {
        self.hex_width(n, 1);
    }

    fn hex_width(&mut self, mut n: u64, width: usize) {
        let mut buf = [0u8; 16];
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = HEX[(n & 15) as usize];
            n >>= 4;
            if n == 0 {
                break;
            }
        }
        for _ in (buf.len() - i)..width {
            self.push(b'0');
        }
        self.extend_from_slice(&buf[i..]);
    }

    fn dec_width(&mut self, n: u64, width: usize) {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut m = n;
        loop {
            i -= 1;
            buf[i] = b'0' + (m % 10) as u8;
            m /= 10;
            if m == 0 {
                break;
            }
        }
        for _ in (buf.len() - i)..width {
            self.push(b'0');
        }
        self.extend_from_slice(&buf[i..]);
    }

    fn ip4(&mut self, a: &[u8]) {
        for (i, &b) in a.iter().take(4).enumerate() {
            if i > 0 {
                self.push(b'.');
            }
            if b >= 100 {
                self.push(b'0' + b / 100);
            }
            if b >= 10 {
                self.push(b'0' + b / 10 % 10);
            }
            self.push(b'0' + b % 10);
        }
    }

    /// RFC 5952 text, as inet_ntop writes it (with the IPv4-mapped and -compatible forms).
    fn ip6(&mut self, a: &[u8]) {
        let mut w = [0u16; 8];
        for (i, word) in w.iter_mut().enumerate() {
            *word = u16::from_be_bytes([a[2 * i], a[2 * i + 1]]);
        }
        // Longest run of zero words (first one on ties), if at least two long.
        let (mut best, mut best_len, mut cur, mut cur_len) = (usize::MAX, 0, usize::MAX, 0);
        for (i, word) in w.iter().enumerate() {
            if *word == 0 {
                if cur == usize::MAX {
                    cur = i;
                    cur_len = 1;
                } else {
                    cur_len += 1;
                }
                if cur_len > best_len {
                    best = cur;
                    best_len = cur_len;
                }
            } else {
                cur = usize::MAX;
                cur_len = 0;
            }
        }
        if best_len < 2 {
            best = usize::MAX;
        }
        let mut i = 0;
        while i < 8 {
            if i == best {
                self.push(b':');
                if i + best_len == 8 {
                    self.push(b':');
                }
                i += best_len;
                continue;
            }
            if i > 0 {
                self.push(b':');
            }
            if i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
                self.ip4(&a[12..16]);
                return;
            }
            self.hex(u64::from(w[i]));
            i += 1;
        }
    }

    fn mac(&mut self, a: &[u8]) {
        for (i, b) in a.iter().enumerate() {
            if i > 0 {
                self.push(b':');
            }
            self.push(HEX[(b >> 4) as usize]);
            self.push(HEX[(b & 15) as usize]);
        }
    }
}

/// Big-endian reads that return `None` past the end of the slice.
pub(crate) fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}

pub(crate) fn be32(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

pub(crate) fn u8_at(d: &[u8], at: usize) -> Option<u8> {
    d.get(at).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(text: &str) -> String {
        let addr: std::net::Ipv6Addr = text.parse().unwrap();
        let mut v = Vec::new();
        v.ip6(&addr.octets());
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn ipv6_text_matches_inet_ntop() {
        for (t, want) in [
            ("::", "::"),
            ("::1", "::1"),
            ("2001:db8::1", "2001:db8::1"),
            ("2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"),
            ("2001:db8:1::15", "2001:db8:1::15"),
            ("fe80::aff:fe00:c", "fe80::aff:fe00:c"),
            ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("1::", "1::"),
            ("ff02::1:ff00:53", "ff02::1:ff00:53"),
        ] {
            assert_eq!(v6(t), want);
        }
    }

    #[test]
    fn numbers() {
        let mut v = Vec::new();
        v.u(0);
        v.s(" ");
        v.u(u64::MAX);
        v.s(" ");
        v.hex_width(0xab, 4);
        v.s(" ");
        v.dec_width(7, 3);
        assert_eq!(v, b"0 18446744073709551615 00ab 007");
        for n in (0..2000u64).chain([9_999, 10_000, 99_999, 100_000, u64::from(u32::MAX)]) {
            let mut v = Vec::new();
            v.u(n);
            assert_eq!(v, n.to_string().as_bytes());
        }
        for a in [[0u8, 9, 10, 99], [100, 199, 200, 255]] {
            let mut v = Vec::new();
            v.ip4(&a);
            assert_eq!(v, std::net::Ipv4Addr::from(a).to_string().as_bytes());
        }
    }
}
