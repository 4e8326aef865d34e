//! TCP conversations as the tracking cases write them (`c|s FLAGS key=value…` lines: who
//! sends, the flags, `seq`, `ack`, `win`, `ws`, `len`, `t` the clock) and the IPv4 TCP packets
//! they describe; shared with the kernel program's equivalence tests (`sift-firewall-ebpf`).

use sift_firewall::packet::Direction;

use super::flags;

/// The client's and the server's address and port in every conversation.
pub const CLIENT: ([u8; 4], u16) = ([10, 0, 0, 1], 40000);
/// The server.
pub const SERVER: ([u8; 4], u16) = ([10, 0, 0, 2], 80);

/// One line of a conversation.
#[derive(Clone, Debug)]
pub struct Segment {
    /// The IPv4 packet.
    pub bytes: Vec<u8>,
    /// Out from the client, in from the server.
    pub dir: Direction,
    /// The clock (`t=`), when the line sets it.
    pub now: Option<u64>,
}

/// The segment a line describes (`None` for blank lines, `#` comments and `>` results).
pub fn segment(line: &str) -> Option<Segment> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() || words[0].starts_with('#') || words[0].starts_with('>') {
        return None;
    }
    let (mut seq, mut ack, mut win, mut ws, mut len, mut now) =
        (0u32, 0u32, 65535u16, None, 0usize, None);
    for w in &words[2..] {
        let (k, v) = w.split_once('=').expect("key=value");
        match k {
            "seq" => seq = v.parse().expect("seq"),
            "ack" => ack = v.parse().expect("ack"),
            "win" => win = v.parse().expect("win"),
            "ws" => ws = Some(v.parse().expect("ws")),
            "len" => len = v.parse().expect("len"),
            "t" => now = Some(v.parse().expect("t")),
            _ => panic!("unknown {k}"),
        }
    }
    let (from, to, dir) = match words[0] {
        "c" => (CLIENT, SERVER, Direction::Out),
        "s" => (SERVER, CLIENT, Direction::In),
        other => panic!("side {other}"),
    };
    Some(Segment {
        bytes: tcp_packet(from, to, flags(words[1]), (seq, ack, win), ws, len),
        dir,
        now,
    })
}

/// An IPv4 TCP packet (no checksums: pf's test does not read them).
pub fn tcp_packet(
    (src, sport): ([u8; 4], u16),
    (dst, dport): ([u8; 4], u16),
    flags: u8,
    (seq, ack, win): (u32, u32, u16),
    ws: Option<u8>,
    len: usize,
) -> Vec<u8> {
    let opt = if ws.is_some() { 4 } else { 0 };
    let total = 20 + 20 + opt + len;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let t = &mut p[20..];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = (((20 + opt) / 4) as u8) << 4;
    t[13] = flags;
    t[14..16].copy_from_slice(&win.to_be_bytes());
    if let Some(ws) = ws {
        t[20..24].copy_from_slice(&[1, 3, 3, ws]);
    }
    p
}
