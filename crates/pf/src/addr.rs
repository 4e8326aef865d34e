//! Addresses as pfctl holds them: a 16-byte address and mask (IPv4 in the first four bytes),
//! dynamic interface addresses, tables, ranges; and pfctl's `host()` resolution of a word
//! (`10/8`, `lo0:network`, `localhost`, `fe80::1%lo0`) into a list of them.
//!
//! Why its own module: the printer, the list expansion and the checks all reason about masks
//! bit by bit as pfctl does (`set_ipmask` masks the address, `unmask` counts bits), so the
//! representation follows pfctl's rather than `std::net`'s.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::host::Host;

/// An address family as pfctl's `sa_family_t` (0 when not yet known).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Af {
    /// Not decided.
    #[default]
    Any,
    /// IPv4 (`inet`).
    Inet,
    /// IPv6 (`inet6`).
    Inet6,
}

impl Af {
    /// Whether the family is known.
    pub fn is_set(self) -> bool {
        self != Af::Any
    }
}

/// `:network`, `:broadcast`, `:peer`, `:0` modifiers of interface addresses.
pub mod iflags {
    /// `:network`
    pub const NETWORK: u8 = 1;
    /// `:broadcast`
    pub const BROADCAST: u8 = 2;
    /// `:peer`
    pub const PEER: u8 = 4;
    /// `:0` (no aliases)
    pub const NOALIAS: u8 = 8;
}

/// 16 bytes of address (pf's `pf_addr`).
pub type Bytes = [u8; 16];

/// What an address is (pf's `pf_addr_wrap`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrKind {
    /// An address and mask; both zero is `any`.
    Mask {
        /// The address.
        addr: Bytes,
        /// The mask.
        mask: Bytes,
    },
    /// `a - b`
    Range {
        /// First address.
        from: Bytes,
        /// Last address.
        to: Bytes,
    },
    /// `(ifname:flags)/bits`
    Dyn {
        /// The interface or group.
        ifname: String,
        /// [`iflags`].
        flags: u8,
        /// The mask.
        mask: Bytes,
    },
    /// `<name>`
    Table(String),
    /// `no-route`
    NoRoute,
    /// `urpf-failed`
    UrpfFailed,
    /// `route "label"`
    RtLabel(String),
    /// No address (an unused pool).
    None,
}

impl AddrKind {
    /// `any`: address and mask zero.
    pub fn any() -> AddrKind {
        AddrKind::Mask { addr: [0; 16], mask: [0; 16] }
    }

    /// Whether this is `any`.
    pub fn is_any(&self) -> bool {
        matches!(self, AddrKind::Mask { addr, mask } if zero(addr) && zero(mask))
    }

    /// The mask, where the kind has one.
    pub fn mask(&self) -> Option<&Bytes> {
        match self {
            AddrKind::Mask { mask, .. } | AddrKind::Dyn { mask, .. } => Some(mask),
            _ => None,
        }
    }

    /// A dynamic address that may stand for several addresses (no `:0`, not network/broadcast
    /// of… as pf's `DYNIF_MULTIADDR`).
    pub fn dyn_multiaddr(&self) -> bool {
        matches!(self, AddrKind::Dyn { flags, .. } if flags & iflags::NOALIAS == 0)
    }
}

/// One host of a list (pfctl's `node_host`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostAddr {
    /// The address.
    pub addr: AddrKind,
    /// Its family (unknown for tables and dynamic addresses).
    pub af: Af,
    /// `!`
    pub not: bool,
    /// Scope of an IPv6 link-local address (the interface index), 0 otherwise.
    pub ifindex: u32,
    /// `@ifname` (pool addresses).
    pub ifname: Option<String>,
}

impl HostAddr {
    /// A host of `kind` and family `af`.
    pub fn new(addr: AddrKind, af: Af) -> HostAddr {
        HostAddr { addr, af, not: false, ifindex: 0, ifname: None }
    }
}

/// Whether all bytes are zero.
pub fn zero(b: &Bytes) -> bool {
    b.iter().all(|&x| x == 0)
}

/// Whether the first bytes of the family are zero (pf's `PF_AZERO(a, af)`).
pub fn zero_af(b: &Bytes, af: Af) -> bool {
    match af {
        Af::Inet => b[..4].iter().all(|&x| x == 0),
        _ => zero(b),
    }
}

/// A mask of `bits` ones (pfctl's `set_ipmask` before masking).
pub fn mask_of(bits: u32) -> Bytes {
    let mut m = [0u8; 16];
    for (i, byte) in m.iter_mut().enumerate() {
        let lo = (i as u32) * 8;
        if bits >= lo + 8 {
            *byte = 0xff;
        } else if bits > lo {
            *byte = 0xffu8 << (8 - (bits - lo));
        }
    }
    m
}

/// The number of leading one bits of a mask (pfctl's `unmask`).
pub fn unmask(m: &Bytes) -> u32 {
    let mut n = 0;
    for &b in m {
        if b == 0xff {
            n += 8;
        } else {
            n += b.leading_ones();
            break;
        }
    }
    n
}

/// `addr & mask`
pub fn and(a: &Bytes, m: &Bytes) -> Bytes {
    let mut o = [0u8; 16];
    for i in 0..16 {
        o[i] = a[i] & m[i];
    }
    o
}

/// The bytes of an IP address (IPv4 in the first four).
pub fn bytes_of(ip: IpAddr) -> Bytes {
    match ip {
        IpAddr::V4(v4) => {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&v4.octets());
            b
        }
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The family of an IP address.
pub fn af_of(ip: IpAddr) -> Af {
    if ip.is_ipv4() { Af::Inet } else { Af::Inet6 }
}

/// `inet_ntop(af, b)`; `None` for an unknown family.
pub fn ntop(b: &Bytes, af: Af) -> Option<String> {
    match af {
        Af::Inet => Some(Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
        Af::Inet6 => Some(Ipv6Addr::from(*b).to_string()),
        Af::Any => None,
    }
}

/// Sets a host's mask to `bits` (or the family's full width for `None`) and masks the address,
/// as pfctl's `set_ipmask`.
pub fn set_ipmask(h: &mut HostAddr, bits: Option<u32>) {
    let b = bits.unwrap_or(if h.af == Af::Inet { 32 } else { 128 });
    let m = mask_of(b);
    match &mut h.addr {
        AddrKind::Mask { addr, mask } => {
            *mask = m;
            *addr = and(addr, &m);
        }
        AddrKind::Dyn { mask, .. } => *mask = m,
        _ => {}
    }
}

/// Why a host word could not be resolved; pfctl prints the first line unprefixed, then
/// `could not parse host specification`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError(pub String);

/// pfctl's `host()`: a word (with an optional `/bits`) as interface addresses, a numeric
/// address, or a host name.
pub fn host(s: &str, host: &dyn Host) -> Result<Vec<HostAddr>, HostError> {
    let (name, mask) = match s.find('/') {
        Some(i) => {
            let m = &s[i + 1..];
            let bits = match m.parse::<i64>() {
                Ok(v) if (0..=128).contains(&v) => v as u32,
                Ok(v) if v > 128 => {
                    return Err(HostError(format!("netmask is too large: {}", &s[i..])));
                }
                Ok(_) => return Err(HostError(format!("netmask is too small: {}", &s[i..]))),
                Err(_) => return Err(HostError(format!("netmask is invalid: {}", &s[i..]))),
            };
            (&s[..i], Some(bits))
        }
        None => (s, None),
    };
    if let Some(h) = host_if(name, mask, host)? {
        return Ok(h);
    }
    if let Some(h) = host_ip(name, mask, host) {
        return Ok(vec![h]);
    }
    let addrs = host.host_addrs(name);
    if !addrs.is_empty() {
        return Ok(addrs
            .into_iter()
            .map(|a| {
                let mut h =
                    HostAddr::new(AddrKind::Mask { addr: bytes_of(a), mask: [0; 16] }, af_of(a));
                set_ipmask(&mut h, mask);
                h
            })
            .collect());
    }
    Err(HostError(format!("no IP address found for {s}")))
}

/// pfctl's `host_if`: `ifname[:network|:broadcast|:peer][:0]`.
fn host_if(
    s: &str,
    mask: Option<u32>,
    host: &dyn Host,
) -> Result<Option<Vec<HostAddr>>, HostError> {
    let mut name = s;
    let mut flags = 0u8;
    while let Some(i) = name.rfind(':') {
        flags |= match &name[i + 1..] {
            "network" => iflags::NETWORK,
            "broadcast" => iflags::BROADCAST,
            "peer" => iflags::PEER,
            "0" => iflags::NOALIAS,
            _ => return Ok(None),
        };
        name = &name[..i];
    }
    let mode = flags & !iflags::NOALIAS;
    if mode & mode.wrapping_sub(1) != 0 {
        return Err(HostError("illegal combination of interface modifiers".into()));
    }
    if flags & (iflags::NETWORK | iflags::BROADCAST) != 0 && mask.is_some() {
        return Err(HostError("network or broadcast lookup, but extra netmask given".into()));
    }
    if host.if_exists(name) || name == "self" {
        let mut h = ifa_lookup(name, flags, host);
        if mask.is_some() {
            for n in &mut h {
                set_ipmask(n, mask);
            }
        }
        return Ok(Some(h));
    }
    Ok(None)
}

/// pfctl's `ifa_lookup`: the addresses of an interface, a group, or every interface (`self`).
pub fn ifa_lookup(name: &str, flags: u8, host: &dyn Host) -> Vec<HostAddr> {
    let mut out = Vec::new();
    for i in host.interfaces() {
        if name != "self" && i.name != name && !i.groups.iter().any(|g| g == name) {
            continue;
        }
        let (mut got4, mut got6) = (false, false);
        for a in &i.addrs {
            let af = af_of(a.addr);
            if flags & iflags::BROADCAST != 0 && (af != Af::Inet || !i.broadcast) {
                continue;
            }
            if flags & iflags::PEER != 0 && !i.pointopoint {
                continue;
            }
            if flags & iflags::NETWORK != 0 && a.scope > 0 {
                continue;
            }
            if flags & iflags::NOALIAS != 0 {
                if af == Af::Inet && got4 {
                    continue;
                }
                if af == Af::Inet6 && (a.scope > 0 || got6) {
                    continue;
                }
            }
            if af == Af::Inet {
                got4 = true;
            } else {
                got6 = true;
            }
            let src = if flags & iflags::BROADCAST != 0 {
                a.broadcast.unwrap_or(a.addr)
            } else if flags & iflags::PEER != 0 {
                a.peer.unwrap_or(a.addr)
            } else {
                a.addr
            };
            let mut h = HostAddr::new(AddrKind::Mask { addr: bytes_of(src), mask: [0; 16] }, af);
            if flags & iflags::NETWORK != 0 {
                set_ipmask(&mut h, Some(u32::from(a.prefix)));
            } else {
                set_ipmask(&mut h, None);
            }
            if af == Af::Inet6 {
                h.ifindex = a.scope;
            }
            out.push(h);
        }
    }
    out
}

/// pfctl's `host_ip`: a numeric address (strict dotted quad or IPv6 with an optional
/// `%scope`), or with a mask, the classful shorthand `10`, `10.1` (`inet_net_pton`).
fn host_ip(s: &str, mask: Option<u32>, host: &dyn Host) -> Option<HostAddr> {
    let (addr_part, scope) = match s.split_once('%') {
        Some((a, sc)) => (a, Some(sc)),
        None => (s, None),
    };
    let parsed: Option<IpAddr> = if let Ok(v4) = addr_part.parse::<Ipv4Addr>() {
        if scope.is_some() { None } else { Some(IpAddr::V4(v4)) }
    } else if let Ok(v6) = addr_part.parse::<Ipv6Addr>() {
        Some(IpAddr::V6(v6))
    } else {
        None
    };
    let mut h = match parsed {
        Some(ip) => {
            let mut h =
                HostAddr::new(AddrKind::Mask { addr: bytes_of(ip), mask: [0; 16] }, af_of(ip));
            if let Some(sc) = scope {
                let idx = host.if_index(sc);
                if idx == 0 {
                    return None;
                }
                h.ifindex = idx;
            }
            h
        }
        None => {
            mask?;
            let b = inet_net_pton4(s)?;
            HostAddr::new(AddrKind::Mask { addr: b, mask: [0; 16] }, Af::Inet)
        }
    };
    if h.af == Af::Inet && mask.is_some_and(|m| m > 32) {
        // pfctl keeps the too-long mask and reports it when the rule is expanded.
        if let AddrKind::Mask { mask: mm, .. } = &mut h.addr {
            *mm = mask_of(mask.unwrap_or(0));
        }
        return Some(h);
    }
    set_ipmask(&mut h, mask);
    Some(h)
}

/// `inet_net_pton(AF_INET, …)` without a `/bits`: one to four decimal octets.
fn inet_net_pton4(s: &str) -> Option<Bytes> {
    let mut b = [0u8; 16];
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        b[i] = p.parse::<u8>().ok()?;
    }
    Some(b)
}

/// pfctl's `print_addr` (non-verbose).
pub fn format_addr(a: &AddrKind, af: Af) -> String {
    let mut out = String::new();
    match a {
        AddrKind::Dyn { ifname, flags, mask } => {
            out.push('(');
            out.push_str(ifname);
            if flags & iflags::NETWORK != 0 {
                out.push_str(":network");
            }
            if flags & iflags::BROADCAST != 0 {
                out.push_str(":broadcast");
            }
            if flags & iflags::PEER != 0 {
                out.push_str(":peer");
            }
            if flags & iflags::NOALIAS != 0 {
                out.push_str(":0");
            }
            out.push(')');
            if !zero(mask) {
                let bits = unmask(mask);
                if bits < if af == Af::Inet { 32 } else { 128 } {
                    out.push_str(&format!("/{bits}"));
                }
            }
        }
        AddrKind::Table(name) => out.push_str(&format!("<{name}>")),
        AddrKind::Range { from, to } => {
            out.push_str(&ntop(from, af).unwrap_or_else(|| "?".into()));
            out.push_str(" - ");
            out.push_str(&ntop(to, af).unwrap_or_else(|| "?".into()));
        }
        AddrKind::Mask { addr, mask } => {
            if zero(addr) && zero(mask) {
                out.push_str("any");
            } else {
                out.push_str(&ntop(addr, af).unwrap_or_else(|| "?".into()));
                let bits = unmask(mask);
                if bits < if af == Af::Inet { 32 } else { 128 } {
                    out.push_str(&format!("/{bits}"));
                }
            }
        }
        AddrKind::NoRoute => out.push_str("no-route"),
        AddrKind::UrpfFailed => out.push_str("urpf-failed"),
        AddrKind::RtLabel(l) => out.push_str(&format!("route \"{l}\"")),
        AddrKind::None => out.push('?'),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::FixtureHost;

    #[test]
    fn classful_and_masked_addresses() {
        let h = FixtureHost::openbsd(".");
        let a = host("10/8", &h).unwrap();
        assert_eq!(format_addr(&a[0].addr, Af::Inet), "10.0.0.0/8");
        let a = host("192.168.37.29/25", &h).unwrap();
        assert_eq!(format_addr(&a[0].addr, Af::Inet), "192.168.37.0/25");
        assert!(host("10.0.0.0.1", &h).is_err());
        let lo = host("lo0", &h).unwrap();
        assert_eq!(lo.len(), 3);
    }
}
