//! `bpf_trace_printk`'s format language as the kernel checks it (`bpf_bprintf_prepare`):
//! `%d %i %u %x %X` with `l`/`ll`, `%c`, `%s` (a string the program points at), `%p`
//! (printed as hexadecimal: the kernel prints a hashed pointer, which cannot be the same),
//! `%%`, an optional `0+- ` flag and width; at most 3 arguments; printable ASCII only; the
//! format ends with a NUL inside its size.

use crate::memory::Memory;

/// The formatted line (without the NUL), or `Err` where the kernel returns `-EINVAL`.
pub(crate) fn format(m: &Memory<'_>, fmt: &[u8], args: [u64; 3]) -> Result<Vec<u8>, ()> {
    let end = fmt.iter().position(|&b| b == 0).ok_or(())?;
    let fmt = &fmt[..end];
    let mut out = Vec::new();
    let mut next = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if !(c.is_ascii_graphic() || c.is_ascii_whitespace()) {
            return Err(());
        }
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        if next >= 3 {
            return Err(());
        }
        let arg = args[next];
        next += 1;
        let mut zero = false;
        let mut left = false;
        while let Some(&f) = fmt.get(i).filter(|f| b"0+- ".contains(f)) {
            zero |= f == b'0';
            left |= f == b'-';
            i += 1;
        }
        let mut width = 0usize;
        while let Some(d) = fmt.get(i).filter(|d| d.is_ascii_digit()) {
            width = (width * 10 + usize::from(d - b'0')).min(1024);
            i += 1;
        }
        let conv = *fmt.get(i).ok_or(())?;
        i += 1;
        let text: Vec<u8> = match conv {
            b'p' => {
                // %pK, %px and friends: one more letter is part of the conversion.
                if fmt.get(i).is_some_and(u8::is_ascii_alphanumeric) {
                    i += 1;
                }
                format!("0x{arg:x}").into_bytes()
            }
            b'c' => vec![arg as u8],
            b's' => {
                let mut s = Vec::new();
                let mut p = arg;
                while s.len() < 512 {
                    match m.load(p, 1) {
                        Ok(0) => break,
                        Ok(b) => s.push(b as u8),
                        Err(_) => return Ok(b"(efault)".to_vec()),
                    }
                    p = p.wrapping_add(1);
                }
                s
            }
            _ => {
                let mut size = 4;
                let mut conv = conv;
                if conv == b'l' {
                    size = 8;
                    conv = *fmt.get(i).ok_or(())?;
                    i += 1;
                    if conv == b'l' {
                        conv = *fmt.get(i).ok_or(())?;
                        i += 1;
                    }
                }
                let v = if size == 4 { arg & 0xffff_ffff } else { arg };
                match conv {
                    b'd' | b'i' if size == 4 => (v as u32 as i32).to_string(),
                    b'd' | b'i' => (v as i64).to_string(),
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => return Err(()),
                }
                .into_bytes()
            }
        };
        let pad = width.saturating_sub(text.len());
        if left {
            out.extend_from_slice(&text);
            out.extend(std::iter::repeat_n(b' ', pad));
        } else {
            let fill = if zero { b'0' } else { b' ' };
            if zero && text.first() == Some(&b'-') {
                out.push(b'-');
                out.extend(std::iter::repeat_n(fill, pad));
                out.extend_from_slice(&text[1..]);
            } else {
                out.extend(std::iter::repeat_n(fill, pad));
                out.extend_from_slice(&text);
            }
        }
    }
    out.truncate(1023);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let mut m = Memory::new(&mut [], &mut [], false, &mut [], &mut []);
        let _ = &mut m;
        let f = |fmt: &[u8], a: [u64; 3]| format(&m, fmt, a).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(
            f(b"x=%d %llx %p\0", [-7i64 as u64, 0x1234567890, 255]).as_deref(),
            Ok("x=-7 1234567890 0xff")
        );
    }
}
