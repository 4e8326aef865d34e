//! An encoder for test captures, written independently of the crate's writers so that reader
//! and writer are checked against something other than each other. It can produce what the
//! writers never do: big-endian files, several sections, simple and obsolete packet blocks.
#![allow(dead_code)]

/// One expected packet.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkt {
    pub secs: u64,
    pub nanos: u32,
    pub wire_len: u32,
    pub data: Vec<u8>,
    pub interface: u32,
}

impl std::fmt::Debug for Pkt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sum =
            self.data.iter().fold(0u32, |a, &b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
        write!(
            f,
            "Pkt({}.{:09} if{} len {} cap {} sum {sum:08x})",
            self.secs,
            self.nanos,
            self.interface,
            self.wire_len,
            self.data.len()
        )
    }
}

/// Deterministic test packets: varied sizes (0 to 1600 bytes), some truncated (caplen < len).
pub fn packets(n: usize, seed: u64) -> Vec<Pkt> {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    (0..n)
        .map(|i| {
            let len = (next() % 1601) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let extra = if next() % 4 == 0 { (next() % 3000) as u32 } else { 0 };
            Pkt {
                secs: 1_600_000_000 + i as u64 * 3,
                nanos: (next() % 1_000_000_000) as u32,
                wire_len: len as u32 + extra,
                data,
                interface: 0,
            }
        })
        .collect()
}

pub struct Enc {
    pub big: bool,
    pub buf: Vec<u8>,
}

impl Enc {
    pub fn new(big: bool) -> Self {
        Enc { big, buf: Vec::new() }
    }
    pub fn u16(&mut self, v: u16) {
        let b = if self.big { v.to_be_bytes() } else { v.to_le_bytes() };
        self.buf.extend_from_slice(&b);
    }
    pub fn u32(&mut self, v: u32) {
        let b = if self.big { v.to_be_bytes() } else { v.to_le_bytes() };
        self.buf.extend_from_slice(&b);
    }
    pub fn u64(&mut self, v: u64) {
        let b = if self.big { v.to_be_bytes() } else { v.to_le_bytes() };
        self.buf.extend_from_slice(&b);
    }
    pub fn pad4(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
}

/// A classic pcap file; `nano` selects the magic and the meaning of the fraction field.
pub fn pcap_file(big: bool, nano: bool, link_type: u32, snaplen: u32, pkts: &[Pkt]) -> Vec<u8> {
    let mut e = Enc::new(big);
    e.u32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    e.u16(2);
    e.u16(4);
    e.u32(0);
    e.u32(0);
    e.u32(snaplen);
    e.u32(link_type);
    for p in pkts {
        e.u32(p.secs as u32);
        e.u32(if nano { p.nanos } else { p.nanos / 1000 });
        e.u32(p.data.len() as u32);
        e.u32(p.wire_len);
        e.buf.extend_from_slice(&p.data);
    }
    e.buf
}

/// A pcapng block: type, length, body (padded), length.
pub fn block(e: &mut Enc, block_type: u32, body: &[u8]) {
    let padded = body.len().next_multiple_of(4);
    let len = (padded + 12) as u32;
    e.u32(block_type);
    e.u32(len);
    e.buf.extend_from_slice(body);
    e.pad4();
    e.u32(len);
}

pub fn shb(e: &mut Enc) {
    let mut b = Enc::new(e.big);
    b.u32(0x1A2B_3C4D);
    b.u16(1);
    b.u16(0);
    b.u64(u64::MAX);
    block(e, 0x0A0D_0D0A, &b.buf);
}

/// An IDB with `if_name` and, when not 6, `if_tsresol`.
pub fn idb(e: &mut Enc, link_type: u16, snaplen: u32, name: &str, tsresol: u8) {
    let mut b = Enc::new(e.big);
    b.u16(link_type);
    b.u16(0);
    b.u32(snaplen);
    b.u16(2);
    b.u16(name.len() as u16);
    b.buf.extend_from_slice(name.as_bytes());
    b.pad4();
    if tsresol != 6 {
        b.u16(9);
        b.u16(1);
        b.buf.extend_from_slice(&[tsresol, 0, 0, 0]);
    }
    b.u32(0);
    block(e, 1, &b.buf);
}

fn units(p: &Pkt, tsresol: u8) -> u64 {
    let ups: u128 =
        if tsresol & 0x80 != 0 { 1 << (tsresol & 0x7f) } else { 10u128.pow(u32::from(tsresol)) };
    (u128::from(p.secs) * ups + u128::from(p.nanos) * ups / 1_000_000_000) as u64
}

/// An EPB for `p` on local interface `iface` whose resolution is `tsresol`, with an
/// `epb_flags` option (inbound).
pub fn epb(e: &mut Enc, iface: u32, tsresol: u8, p: &Pkt) {
    let mut o = Enc::new(e.big);
    o.u16(2);
    o.u16(4);
    o.u32(1);
    o.u32(0);
    epb_with_options(e, iface, tsresol, p, &o.buf);
}

/// An EPB for `p` on local interface `iface` whose resolution is `tsresol`, with the given
/// options bytes.
pub fn epb_with_options(e: &mut Enc, iface: u32, tsresol: u8, p: &Pkt, options: &[u8]) {
    let mut b = Enc::new(e.big);
    let u = units(p, tsresol);
    b.u32(iface);
    b.u32((u >> 32) as u32);
    b.u32(u as u32);
    b.u32(p.data.len() as u32);
    b.u32(p.wire_len);
    b.buf.extend_from_slice(&p.data);
    b.pad4();
    b.buf.extend_from_slice(options);
    block(e, 6, &b.buf);
}

/// An obsolete Packet Block.
pub fn pb(e: &mut Enc, iface: u16, tsresol: u8, p: &Pkt) {
    let mut b = Enc::new(e.big);
    let u = units(p, tsresol);
    b.u16(iface);
    b.u16(0);
    b.u32((u >> 32) as u32);
    b.u32(u as u32);
    b.u32(p.data.len() as u32);
    b.u32(p.wire_len);
    b.buf.extend_from_slice(&p.data);
    block(e, 2, &b.buf);
}

/// A Simple Packet Block (interface 0, no timestamp, caplen = min(wire_len, snaplen)).
pub fn spb(e: &mut Enc, p: &Pkt) {
    let mut b = Enc::new(e.big);
    b.u32(p.wire_len);
    b.buf.extend_from_slice(&p.data);
    block(e, 3, &b.buf);
}

/// An ISB with isb_ifrecv and isb_ifdrop.
pub fn isb(e: &mut Enc, iface: u32, recv: u64, drop: u64) {
    let mut b = Enc::new(e.big);
    b.u32(iface);
    b.u32(0);
    b.u32(0);
    b.u16(4);
    b.u16(8);
    b.u64(recv);
    b.u16(5);
    b.u16(8);
    b.u64(drop);
    b.u32(0);
    block(e, 5, &b.buf);
}

/// Reads every packet with the crate's reader; returns the packets and the final error.
pub fn read_all(reader: &mut sift_pcap::Reader) -> (Vec<Pkt>, Option<sift_pcap::Error>) {
    let mut out = Vec::new();
    loop {
        match reader.next_packet() {
            Ok(Some(p)) => out.push(Pkt {
                secs: p.timestamp.secs,
                nanos: p.timestamp.nanos,
                wire_len: p.wire_len,
                data: p.data.to_vec(),
                interface: p.interface,
            }),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Reads bytes through the memory (whole-buffer) path.
pub fn read_bytes(bytes: &[u8]) -> Result<(Vec<Pkt>, Option<sift_pcap::Error>), sift_pcap::Error> {
    let mut r = sift_pcap::Reader::from_bytes(bytes.to_vec())?;
    Ok(read_all(&mut r))
}

/// A reader that hands out at most `chunk` bytes per call, to exercise stream refills.
pub struct Trickle {
    pub data: Vec<u8>,
    pub at: usize,
    pub chunk: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Reads bytes through the streaming path, `chunk` bytes at a time.
pub fn read_stream(
    bytes: &[u8],
    chunk: usize,
) -> Result<(Vec<Pkt>, Option<sift_pcap::Error>), sift_pcap::Error> {
    let t = Trickle { data: bytes.to_vec(), at: 0, chunk };
    let mut r = sift_pcap::Reader::from_read(Box::new(t))?;
    Ok(read_all(&mut r))
}

/// Expected packets after a micro-precision round trip (nanoseconds cut to microseconds).
pub fn to_micro(pkts: &[Pkt]) -> Vec<Pkt> {
    pkts.iter().map(|p| Pkt { nanos: p.nanos / 1000 * 1000, ..p.clone() }).collect()
}
