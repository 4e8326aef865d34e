//! Test support shared by tests/scrub.rs and tests/reply.rs: packets built from a one-line
//! description with every checksum right, an independent checksum check, a decoder that prints
//! the fields the two modules touch, and the tshark oracle over a raw-IP pcap.
//!
//! A description is `v4|v6 PROTO [key=value…]`: PROTO is `tcp`, `udp`, `icmp T/C`,
//! `icmp6 T/C` or a protocol number; keys: `src`, `dst`, `sport`, `dport`, `seq`, `ack`,
//! `flags` (letters FSRPAUEW), `x2` (TCP reserved bits), `urp`, `win`, `opt` (TCP options in
//! hex, padded with EOL to a multiple of 4), `len` (payload bytes), `ttl`, `tos`, `id`,
//! `off` (IPv4 fragment word, hex), `ipopt` (IPv4 option words of NOPs), `frag6=OFF/M`
//! (an IPv6 fragment header), `badsum` (a wrong transport checksum), `pad` (trailing bytes
//! after the IP packet, as link-layer padding).
#![allow(dead_code)]

use std::fmt::Write;
use std::net::IpAddr;

use sift_wire::checksum;

/// Builds the packet a description names.
pub fn build(desc: &str) -> Vec<u8> {
    let mut words = desc.split_whitespace();
    let v6 = match words.next() {
        Some("v4") => false,
        Some("v6") => true,
        other => panic!("description must start with v4 or v6, not {other:?}"),
    };
    let proto_word = words.next().expect("protocol");
    let (proto, icmp_tc) = match proto_word {
        "tcp" => (6u8, None),
        "udp" => (17, None),
        "icmp" | "icmp6" => {
            let tc = words.next().expect("icmp T/C");
            let (t, c) = tc.split_once('/').expect("T/C");
            (if proto_word == "icmp" { 1 } else { 58 }, Some((num(t) as u8, num(c) as u8)))
        }
        n => (num(n) as u8, None),
    };
    let mut src: IpAddr =
        if v6 { "2001:db8::1".parse().unwrap() } else { "10.0.0.1".parse().unwrap() };
    let mut dst: IpAddr =
        if v6 { "2001:db8::2".parse().unwrap() } else { "10.0.0.2".parse().unwrap() };
    let (mut sport, mut dport, mut seq, mut ack, mut win) =
        (1234u16, 80u16, 1000u32, 0u32, 8192u16);
    let (mut flags, mut x2, mut urp, mut opt, mut len) = (0u8, 0u8, 0u16, Vec::new(), 0usize);
    let (mut ttl, mut tos, mut id, mut off, mut ipopt) = (64u8, 0u8, 0x1234u16, 0u16, 0usize);
    let (mut frag6, mut badsum, mut pad) = (None, false, 0usize);
    for w in words {
        let (k, v) = w.split_once('=').unwrap_or((w, ""));
        match k {
            "src" => src = v.parse().expect("src"),
            "dst" => dst = v.parse().expect("dst"),
            "sport" => sport = num(v) as u16,
            "dport" => dport = num(v) as u16,
            "seq" => seq = num(v) as u32,
            "ack" => ack = num(v) as u32,
            "win" => win = num(v) as u16,
            "flags" => flags = tcp_flags(v),
            "x2" => x2 = num(v) as u8,
            "urp" => urp = num(v) as u16,
            "opt" => opt = hex(v),
            "len" => len = num(v) as usize,
            "ttl" => ttl = num(v) as u8,
            "tos" => tos = num(v) as u8,
            "id" => id = num(v) as u16,
            "off" => off = num(v) as u16,
            "ipopt" => ipopt = num(v) as usize,
            "frag6" => {
                let (o, m) = v.split_once('/').expect("OFF/M");
                frag6 = Some((num(o) as u16, num(m) != 0));
            }
            "badsum" => badsum = true,
            "pad" => pad = num(v) as usize,
            _ => panic!("unknown key {k}"),
        }
    }
    while opt.len() % 4 != 0 {
        opt.push(0);
    }
    let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    let mut l4 = match proto {
        6 => {
            let mut t = vec![0u8; 20];
            t[0..2].copy_from_slice(&sport.to_be_bytes());
            t[2..4].copy_from_slice(&dport.to_be_bytes());
            t[4..8].copy_from_slice(&seq.to_be_bytes());
            t[8..12].copy_from_slice(&ack.to_be_bytes());
            t[12] = (((20 + opt.len()) / 4) as u8) << 4 | (x2 & 0x0f);
            t[13] = flags;
            t[14..16].copy_from_slice(&win.to_be_bytes());
            t[18..20].copy_from_slice(&urp.to_be_bytes());
            t.extend_from_slice(&opt);
            t
        }
        17 => {
            let mut u = vec![0u8; 8];
            u[0..2].copy_from_slice(&sport.to_be_bytes());
            u[2..4].copy_from_slice(&dport.to_be_bytes());
            u[4..6].copy_from_slice(&((8 + len) as u16).to_be_bytes());
            u
        }
        1 | 58 => {
            let (t, c) = icmp_tc.expect("icmp type/code");
            vec![t, c, 0, 0, 0x12, 0x34, 0, 1]
        }
        _ => Vec::new(),
    };
    l4.extend_from_slice(&payload);
    let (s, d) = (addr_bytes(src), addr_bytes(dst));
    let csum_at = match proto {
        6 => Some(16),
        17 => Some(6),
        1 | 58 => Some(2),
        _ => None,
    };
    if let Some(at) = csum_at {
        let start = if proto == 1 { 0 } else { checksum::pseudo(&s, &d, proto, l4.len() as u32) };
        let mut sum = checksum::finish(checksum::add(start, &l4));
        if proto == 17 && sum == 0 {
            sum = 0xffff;
        }
        if badsum {
            sum ^= 0x5a5a;
        }
        l4[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    }
    let mut ip = Vec::new();
    if v6 {
        let mut ext = Vec::new();
        let mut next = proto;
        if let Some((o, m)) = frag6 {
            ext = vec![proto, 0, 0, 0, 0, 0, 0, 7];
            ext[2..4].copy_from_slice(&((o << 3) | u16::from(m)).to_be_bytes());
            next = 44;
        }
        let plen = ext.len() + l4.len();
        ip.extend_from_slice(&[0x60 | (tos >> 4), tos << 4, 0, 0]);
        ip.extend_from_slice(&(plen as u16).to_be_bytes());
        ip.extend_from_slice(&[next, ttl]);
        ip.extend_from_slice(&s);
        ip.extend_from_slice(&d);
        ip.extend_from_slice(&ext);
    } else {
        let hlen = 20 + 4 * ipopt;
        ip.extend_from_slice(&[0x40 | (hlen / 4) as u8, tos]);
        ip.extend_from_slice(&((hlen + l4.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&id.to_be_bytes());
        ip.extend_from_slice(&off.to_be_bytes());
        ip.extend_from_slice(&[ttl, proto, 0, 0]);
        ip.extend_from_slice(&s);
        ip.extend_from_slice(&d);
        ip.extend(std::iter::repeat_n(1u8, 4 * ipopt));
        let sum = checksum::internet(&ip);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
    }
    ip.extend_from_slice(&l4);
    ip.extend(std::iter::repeat_n(0xeeu8, pad));
    ip
}

fn num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).expect("hex number"),
        None => s.parse().unwrap_or_else(|_| panic!("number {s}")),
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// Lowercase hex of `b`.
pub fn to_hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn tcp_flags(s: &str) -> u8 {
    s.chars().fold(0, |f, c| f | 1 << "FSRPAUEW".find(c).unwrap_or_else(|| panic!("flag {c}")))
}

/// TCP flags as letters (FSRPAUEW), `.` for none.
pub fn flag_letters(f: u8) -> String {
    let s: String =
        "FSRPAUEW".chars().enumerate().filter(|(i, _)| f & (1 << i) != 0).map(|(_, c)| c).collect();
    if s.is_empty() { ".".into() } else { s }
}

fn addr_bytes(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// The offset of the upper-layer header and its protocol, walking IPv6 extension headers;
/// `None` for a fragment after the first or bytes that do not parse.
pub fn upper(ip: &[u8]) -> Option<(usize, u8, usize)> {
    match ip.first()? >> 4 {
        4 => {
            let hlen = usize::from(ip[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
            (hlen >= 20 && total >= hlen && total <= ip.len()).then_some((hlen, ip[9], total))
        }
        6 => {
            let total = 40 + usize::from(u16::from_be_bytes([*ip.get(4)?, *ip.get(5)?]));
            if total > ip.len() {
                return None;
            }
            let (mut off, mut next) = (40, ip[6]);
            while matches!(next, 0 | 43 | 60 | 44 | 51) {
                let h = ip.get(off..off + 8)?;
                let len = match next {
                    44 => 8,
                    51 => (usize::from(h[1]) + 2) * 4,
                    _ => (usize::from(h[1]) + 1) * 8,
                };
                next = h[0];
                off += len;
            }
            (off <= total).then_some((off, next, total))
        }
        _ => None,
    }
}

/// Whether every checksum of `ip` is right, computed in full (the IPv4 header's, and the
/// TCP, UDP, ICMP or ICMPv6 one).
pub fn checksums_ok(ip: &[u8]) -> bool {
    let Some((off, proto, total)) = upper(ip) else { return false };
    let v6 = ip[0] >> 4 == 6;
    if !v6 && checksum::internet(&ip[..off]) != 0 {
        return false;
    }
    let l4 = &ip[off..total];
    let (s, d): (&[u8], &[u8]) =
        if v6 { (&ip[8..24], &ip[24..40]) } else { (&ip[12..16], &ip[16..20]) };
    match proto {
        6 | 17 | 58 => {
            checksum::finish(checksum::add(checksum::pseudo(s, d, proto, l4.len() as u32), l4)) == 0
        }
        1 => checksum::internet(l4) == 0,
        _ => true,
    }
}

/// The fields the scrub and reply modules read and write, one line.
pub fn describe(ip: &[u8]) -> String {
    let Some((off, proto, total)) = upper(ip) else { return format!("unparsable {}", to_hex(ip)) };
    let mut s = String::new();
    if ip[0] >> 4 == 4 {
        let _ = write!(
            s,
            "v4 {}>{} tos={:#04x} len={} id={:#06x} off={:#06x} ttl={} p={}",
            std::net::Ipv4Addr::from([ip[12], ip[13], ip[14], ip[15]]),
            std::net::Ipv4Addr::from([ip[16], ip[17], ip[18], ip[19]]),
            ip[1],
            total,
            u16::from_be_bytes([ip[4], ip[5]]),
            u16::from_be_bytes([ip[6], ip[7]]),
            ip[8],
            proto
        );
    } else {
        let a = |r: std::ops::Range<usize>| {
            std::net::Ipv6Addr::from(<[u8; 16]>::try_from(&ip[r]).unwrap())
        };
        let _ = write!(
            s,
            "v6 {}>{} tc={:#04x} flow={:#07x} plen={} hlim={} nxt={}",
            a(8..24),
            a(24..40),
            (u32::from_be_bytes([ip[0], ip[1], ip[2], ip[3]]) >> 20) as u8,
            u32::from_be_bytes([ip[0], ip[1], ip[2], ip[3]]) & 0xf_ffff,
            total - 40,
            ip[7],
            proto
        );
    }
    let l4 = &ip[off..total];
    match proto {
        6 if l4.len() >= 20 => {
            let be32 = |a: usize| u32::from_be_bytes([l4[a], l4[a + 1], l4[a + 2], l4[a + 3]]);
            let hlen = usize::from(l4[12] >> 4) * 4;
            let _ = write!(
                s,
                " | tcp {}>{} seq={} ack={} off={} x2={} flags={} win={} urp={}",
                u16::from_be_bytes([l4[0], l4[1]]),
                u16::from_be_bytes([l4[2], l4[3]]),
                be32(4),
                be32(8),
                hlen / 4,
                l4[12] & 0x0f,
                flag_letters(l4[13]),
                u16::from_be_bytes([l4[14], l4[15]]),
                u16::from_be_bytes([l4[18], l4[19]])
            );
            if hlen > 20 && hlen <= l4.len() {
                let _ = write!(s, " opt={}", to_hex(&l4[20..hlen]));
            }
        }
        1 | 58 if l4.len() >= 8 => {
            let _ = write!(
                s,
                " | {} type={} code={} word={:#010x} quote={}",
                if proto == 1 { "icmp" } else { "icmp6" },
                l4[0],
                l4[1],
                u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]),
                l4.len() - 8
            );
        }
        _ => {}
    }
    let _ = write!(s, " | cksum {}", if checksums_ok(ip) { "ok" } else { "BAD" });
    s
}

/// Checks with tshark that every checksum of `packets` (IP packets) is right: writes them to
/// a raw-IP pcap and asks tshark for each checksum's status. Prints SKIP when tshark is
/// missing (a failure under `SIFT_REQUIRE_ORACLES=1`). Returns how many packets were checked.
pub fn tshark_checksums(name: &str, packets: &[Vec<u8>]) -> usize {
    let Some(tshark) = sift_testkit::tool("tshark") else { return 0 };
    let dir = std::env::temp_dir().join(format!("sift-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out.pcap");
    // pcap header: magic, v2.4, zone 0, sigfigs 0, snaplen 65535, LINKTYPE_RAW (101).
    let mut pcap = Vec::new();
    pcap.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    pcap.extend_from_slice(&2u16.to_le_bytes());
    pcap.extend_from_slice(&4u16.to_le_bytes());
    for w in [0u32, 0, 65535, 101] {
        pcap.extend_from_slice(&w.to_le_bytes());
    }
    for (i, p) in packets.iter().enumerate() {
        for w in [i as u32, 0, p.len() as u32, p.len() as u32] {
            pcap.extend_from_slice(&w.to_le_bytes());
        }
        pcap.extend_from_slice(p);
    }
    std::fs::write(&path, &pcap).unwrap();
    let out = std::process::Command::new(tshark)
        .arg("-r")
        .arg(&path)
        .args(["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"])
        .args(["-o", "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=;"])
        .args([
            "-e",
            "ip.checksum.status",
            "-e",
            "tcp.checksum.status",
            "-e",
            "udp.checksum.status",
        ])
        .args(["-e", "icmp.checksum.status", "-e", "icmpv6.checksum.status"])
        .output()
        .expect("run tshark");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), packets.len(), "tshark read every packet:\n{text}");
    for (line, p) in lines.iter().zip(packets) {
        let fields: Vec<&str> = line.split(';').collect();
        // The first value of each field is the outer header's; quoted headers inside ICMP
        // errors follow (and are unverified when cut short: status 2).
        let first = |i: usize| fields[i].split(',').next().unwrap_or("");
        let v4 = p[0] >> 4 == 4;
        let (_, proto, _) = upper(p).expect("a parsable packet");
        let want: &[usize] = match proto {
            6 => &[1],
            17 => &[2],
            1 => &[3],
            58 => &[4],
            _ => &[],
        };
        if v4 {
            assert_eq!(first(0), "1", "IPv4 header checksum per tshark: {line} for {}", to_hex(p));
        }
        for &i in want {
            assert_eq!(first(i), "1", "transport checksum per tshark: {line} for {}", to_hex(p));
        }
        assert!(
            !line.split([';', ',']).any(|v| v == "0"),
            "a bad checksum per tshark: {line} for {}",
            to_hex(p)
        );
    }
    packets.len()
}
