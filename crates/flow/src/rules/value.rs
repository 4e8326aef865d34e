//! The values of match fields and actions: numbers (C syntax, as `ovs-ofctl`'s `strtol` with
//! base 0 reads them), MAC and IP addresses with their masks, and port names.

use std::net::{Ipv4Addr, Ipv6Addr};

use sift_diag::number::{self, Syntax};
use sift_wire::ethernet::Mac;

use super::{MAX_PORT, PortMap};
use crate::key::PortNo;

/// A bad value: the message and an optional help line.
#[derive(Debug)]
pub(crate) struct Bad(pub String, pub Option<String>);

type R<T> = Result<T, Bad>;

fn bad<T>(message: String, help: impl Into<Option<String>>) -> R<T> {
    Err(Bad(message, help.into()))
}

/// A number up to `max`; `what` names it in the message.
pub(crate) fn num(text: &str, max: u64, what: &str) -> R<u64> {
    match number::parse(text, Syntax::C, max) {
        Ok((n, _)) => Ok(n),
        Err(e) => bad(
            format!("invalid {what} `{text}`"),
            format!("{e}: expected a number from 0 to {max} (decimal, 0x hex or 0 octal)"),
        ),
    }
}

/// `VALUE` or `VALUE/MASK`, each up to `max`; the value is returned within the mask.
pub(crate) fn masked_num(text: &str, max: u64, what: &str) -> R<(u64, u64)> {
    match text.split_once('/') {
        None => Ok((num(text, max, what)?, max)),
        Some((v, m)) => {
            let (v, m) = (num(v, max, what)?, num(m, max, &format!("{what} mask"))?);
            Ok((v & m, m))
        }
    }
}

/// `xx:xx:xx:xx:xx:xx` (one or two hex digits a byte).
pub(crate) fn mac(text: &str) -> R<Mac> {
    let mut out = [0u8; 6];
    let mut parts = text.split(':');
    for b in &mut out {
        let Some(p) = parts.next().filter(|p| (1..=2).contains(&p.len())) else {
            return bad_mac(text);
        };
        let Ok(v) = u8::from_str_radix(p, 16) else { return bad_mac(text) };
        *b = v;
    }
    if parts.next().is_some() {
        return bad_mac(text);
    }
    Ok(out)
}

fn bad_mac<T>(text: &str) -> R<T> {
    bad(
        format!("invalid Ethernet address `{text}`"),
        "expected six hex bytes separated by `:` (as 02:00:0a:00:00:0a)".to_string(),
    )
}

/// `MAC` or `MAC/MASK`, the value within the mask.
pub(crate) fn masked_mac(text: &str) -> R<(Mac, Mac)> {
    match text.split_once('/') {
        None => Ok((mac(text)?, [0xff; 6])),
        Some((v, m)) => {
            let (mut v, m) = (mac(v)?, mac(m)?);
            for (a, b) in v.iter_mut().zip(m) {
                *a &= b;
            }
            Ok((v, m))
        }
    }
}

/// `A.B.C.D`, `A.B.C.D/LEN` or `A.B.C.D/MASK`, the value within the mask.
pub(crate) fn masked_ipv4(text: &str) -> R<(u32, u32)> {
    let addr = |t: &str| {
        t.parse::<Ipv4Addr>().map(u32::from).map_err(|_| {
            Bad(
                format!("invalid IPv4 address `{t}`"),
                Some("expected a dotted quad (as 10.0.0.1), with /LEN or /MASK".into()),
            )
        })
    };
    match text.split_once('/') {
        None => Ok((addr(text)?, u32::MAX)),
        Some((v, m)) => {
            let v = addr(v)?;
            let m = if m.contains('.') {
                addr(m)?
            } else {
                let n = prefix_len(m, 32)?;
                if n == 0 { 0 } else { u32::MAX << (32 - n) }
            };
            Ok((v & m, m))
        }
    }
}

/// An IPv6 address, with `/LEN` or `/MASK`, the value within the mask.
pub(crate) fn masked_ipv6(text: &str) -> R<(u128, u128)> {
    let addr = |t: &str| {
        t.parse::<Ipv6Addr>().map(u128::from).map_err(|_| {
            Bad(
                format!("invalid IPv6 address `{t}`"),
                Some("expected an IPv6 address (as 2001:db8::1), with /LEN or /MASK".into()),
            )
        })
    };
    match text.split_once('/') {
        None => Ok((addr(text)?, u128::MAX)),
        Some((v, m)) => {
            let v = addr(v)?;
            let m = if m.contains(':') {
                addr(m)?
            } else {
                let n = prefix_len(m, 128)?;
                if n == 0 { 0 } else { u128::MAX << (128 - n) }
            };
            Ok((v & m, m))
        }
    }
}

fn prefix_len(text: &str, max: u32) -> R<u32> {
    match text.parse::<u32>() {
        Ok(n) if n <= max && !text.starts_with('+') => Ok(n),
        _ => bad(
            format!("invalid prefix length `{text}`"),
            format!("expected 0 to {max}, or a mask"),
        ),
    }
}

/// A port: a name of the map, or a number from 1 to `MAX_PORT`.
pub(crate) fn port(text: &str, ports: &PortMap) -> R<PortNo> {
    if let Some(p) = ports.number(text) {
        return Ok(p);
    }
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        return match number::parse(text, Syntax::C, u64::from(MAX_PORT)) {
            Ok((n, _)) if n > 0 => Ok(n as PortNo),
            _ => bad(
                format!("invalid port number `{text}`"),
                format!("port numbers are 1 to {MAX_PORT}"),
            ),
        };
    }
    let names: Vec<&str> = ports.iter().map(|p| p.0).collect();
    let help = if names.is_empty() {
        "no port has a name: give a number".to_string()
    } else {
        format!("known ports: {}", names.join(", "))
    };
    bad(format!("unknown port `{text}`"), help)
}

/// The length of a mask's leading ones when the mask is a prefix.
pub(crate) fn cidr(mask: u128, bits: u32) -> Option<u32> {
    let full = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    let ones = (mask << (128 - bits)).leading_ones();
    let prefix = if ones == 0 { 0 } else { full & (full << (bits - ones.min(bits))) };
    (mask == prefix).then_some(ones.min(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_masks() {
        assert_eq!(masked_ipv4("10.1.2.3/8").unwrap(), (0x0a00_0000, 0xff00_0000));
        assert_eq!(masked_ipv4("10.1.2.3/255.0.0.255").unwrap(), (0x0a00_0003, 0xff00_00ff));
        assert_eq!(masked_ipv4("0.0.0.0/0").unwrap(), (0, 0));
        assert!(masked_ipv4("10.0.0.0/33").is_err());
        assert!(masked_ipv4("10.0.0").is_err());
        assert_eq!(masked_ipv6("2001:db8::1/32").unwrap().1, u128::MAX << 96);
        assert_eq!(mac("2:0:a:0:0:ff").unwrap(), [2, 0, 10, 0, 0, 0xff]);
        assert!(mac("02:00:0a:00:00").is_err());
        assert!(mac("02:00:0a:00:00:00:00").is_err());
        assert!(mac("002:00:0a:00:00:00").is_err());
    }

    #[test]
    fn prefixes() {
        assert_eq!(cidr(0xff00_0000, 32), Some(8));
        assert_eq!(cidr(0, 32), Some(0));
        assert_eq!(cidr(0xffff_ffff, 32), Some(32));
        assert_eq!(cidr(0xff00_00ff, 32), None);
        assert_eq!(cidr(u128::MAX, 128), Some(128));
        assert_eq!(cidr(u128::MAX << 64, 128), Some(64));
    }
}
