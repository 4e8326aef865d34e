//! IPv4 packets built and read by hand for the pf tests: crafted segments to append to or
//! inject into real sessions, and the fields of captured ones. Independent of sift's own
//! parsers, so the tests do not check sift with itself.
#![allow(dead_code)]

use std::net::Ipv4Addr;

/// TCP flag bits.
pub mod flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
}

/// The Internet checksum of `data` added to `sum`.
fn fold(mut sum: u32, data: &[u8]) -> u32 {
    for c in data.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    sum
}

fn finish(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet (20-byte header, DF clear, TTL 64) around `l4`, checksums filled in for TCP,
/// UDP and ICMP.
pub fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, id: u16, l4: &[u8]) -> Vec<u8> {
    let total = 20 + l4.len();
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0, 0, 64, proto, 0, 0]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    let c = finish(fold(0, &p));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let at = p.len();
    p.extend_from_slice(l4);
    let cksum_at = match proto {
        6 => Some(16),
        17 => Some(6),
        1 => Some(2),
        _ => None,
    };
    if let Some(off) = cksum_at {
        let l4 = &mut p[at..];
        l4[off] = 0;
        l4[off + 1] = 0;
        let mut sum = 0;
        if proto != 1 {
            let mut pseudo = Vec::with_capacity(12);
            pseudo.extend_from_slice(&src.octets());
            pseudo.extend_from_slice(&dst.octets());
            pseudo.extend_from_slice(&[0, proto]);
            pseudo.extend_from_slice(&(l4.len() as u16).to_be_bytes());
            sum = fold(0, &pseudo);
        }
        let mut c = finish(fold(sum, l4));
        if proto == 17 && c == 0 {
            c = 0xffff;
        }
        l4[off..off + 2].copy_from_slice(&c.to_be_bytes());
    }
    p
}

/// One TCP segment's header fields (no options).
#[derive(Clone, Copy, Debug)]
pub struct TcpSpec {
    /// Source address and port.
    pub src: (Ipv4Addr, u16),
    /// Destination address and port.
    pub dst: (Ipv4Addr, u16),
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Flag bits ([`flags`]).
    pub flags: u8,
    /// Window field (unscaled).
    pub win: u16,
}

/// A TCP segment in IPv4.
pub fn tcp(t: &TcpSpec, id: u16, payload: &[u8]) -> Vec<u8> {
    let mut l4 = Vec::with_capacity(20 + payload.len());
    l4.extend_from_slice(&t.src.1.to_be_bytes());
    l4.extend_from_slice(&t.dst.1.to_be_bytes());
    l4.extend_from_slice(&t.seq.to_be_bytes());
    l4.extend_from_slice(&t.ack.to_be_bytes());
    l4.extend_from_slice(&[5 << 4, t.flags]);
    l4.extend_from_slice(&t.win.to_be_bytes());
    l4.extend_from_slice(&[0, 0, 0, 0]);
    l4.extend_from_slice(payload);
    ipv4(t.src.0, t.dst.0, 6, id, &l4)
}

/// A UDP datagram in IPv4.
pub fn udp(src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16), id: u16, payload: &[u8]) -> Vec<u8> {
    let mut l4 = Vec::with_capacity(8 + payload.len());
    l4.extend_from_slice(&src.1.to_be_bytes());
    l4.extend_from_slice(&dst.1.to_be_bytes());
    l4.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    l4.extend_from_slice(&[0, 0]);
    l4.extend_from_slice(payload);
    ipv4(src.0, dst.0, 17, id, &l4)
}

/// An ICMP echo request (`ty` 8) or reply (`ty` 0) in IPv4.
pub fn icmp_echo(src: Ipv4Addr, dst: Ipv4Addr, ty: u8, ident: u16, seq: u16, id: u16) -> Vec<u8> {
    let mut l4 = vec![ty, 0, 0, 0];
    l4.extend_from_slice(&ident.to_be_bytes());
    l4.extend_from_slice(&seq.to_be_bytes());
    l4.extend_from_slice(b"sift pf echo....");
    ipv4(src, dst, 1, id, &l4)
}

/// `ip` in an Ethernet II frame between two fixed addresses.
pub fn ether(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(ip);
    f
}

/// What the tests read of a captured IPv4 packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ip {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// IP identification.
    pub id: u16,
    /// Protocol number.
    pub proto: u8,
    /// The TCP segment, for TCP.
    pub tcp: Option<Tcp>,
    /// Source and destination ports, for TCP and UDP.
    pub ports: Option<(u16, u16)>,
    /// The transport header and payload as captured.
    pub l4: Vec<u8>,
}

/// A captured TCP segment's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tcp {
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Flag bits.
    pub flags: u8,
    /// Window field (unscaled).
    pub win: u16,
    /// Payload length.
    pub len: u32,
    /// Window scale option (on a SYN).
    pub wscale: Option<u8>,
    /// Number of SACK blocks in a SACK option.
    pub sack_blocks: usize,
}

impl Tcp {
    /// Sequence space the segment occupies (payload, SYN and FIN count one each).
    pub fn seq_len(&self) -> u32 {
        self.len + u32::from(self.flags & flags::SYN != 0) + u32::from(self.flags & flags::FIN != 0)
    }
}

/// Reads an IPv4 packet (`None` for anything else or too short).
pub fn parse_ipv4(p: &[u8]) -> Option<Ip> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(p[0] & 15) * 4;
    let total = usize::from(u16::from_be_bytes([p[2], p[3]])).min(p.len());
    let l4 = p.get(ihl..total)?;
    let be16 = |b: &[u8], o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
    let be32 = |b: &[u8], o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let proto = p[9];
    let mut ip = Ip {
        src: Ipv4Addr::new(p[12], p[13], p[14], p[15]),
        dst: Ipv4Addr::new(p[16], p[17], p[18], p[19]),
        id: be16(p, 4),
        proto,
        tcp: None,
        ports: None,
        l4: l4.to_vec(),
    };
    if (proto == 6 || proto == 17) && l4.len() >= 8 {
        ip.ports = Some((be16(l4, 0), be16(l4, 2)));
    }
    if proto == 6 && l4.len() >= 20 {
        let off = usize::from(l4[12] >> 4) * 4;
        let opts = l4.get(20..off).unwrap_or(&[]);
        let (mut wscale, mut sack_blocks) = (None, 0);
        let mut i = 0;
        while i < opts.len() {
            match opts[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let Some(&len) = opts.get(i + 1) else { break };
                    let len = usize::from(len).max(2);
                    if kind == 3 && len == 3 {
                        wscale = opts.get(i + 2).copied();
                    }
                    if kind == 5 {
                        sack_blocks = (len - 2) / 8;
                    }
                    i += len;
                }
            }
        }
        ip.tcp = Some(Tcp {
            seq: be32(l4, 4),
            ack: be32(l4, 8),
            flags: l4[13],
            win: be16(l4, 14),
            len: l4.len().saturating_sub(off) as u32,
            wscale,
            sack_blocks,
        });
    }
    Some(ip)
}

/// The IPv4 packet of an Ethernet frame (`None` for other ethertypes).
pub fn ipv4_of_ether(frame: &[u8]) -> Option<&[u8]> {
    (frame.get(12..14)? == [0x08, 0x00]).then(|| &frame[14..])
}
