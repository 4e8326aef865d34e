//! Frames that are not one clean packet: a large datagram cut into IP fragments (IPv4, or
//! IPv6 fragment headers), and deliberately malformed frames.

use std::io::Write as _;

use sift_wire::ipv4::Ipv4Packet;
use sift_wire::ipv6::Ipv6Packet;
use sift_wire::ipv6ext::{Ipv6ExtHeader, Ipv6FragmentRepr};
use sift_wire::tcp::{self, TcpRepr};
use sift_wire::{ipproto, ipv4, ipv6};

use super::*;

impl Generator {
    /// A large UDP datagram: the first fragment goes out now, the rest are queued.
    pub(super) fn emit_fragments(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let size = self.rng.range(1_600, 8_000) as usize;
        let mut work = std::mem::take(&mut self.work);
        let mut p = Packet::new(&mut work, scratch);
        let ip = self.begin(&mut p, flow, Dir::ToServer, None, 64);
        p.udp(flow.client.port, pools::DISCARD_PORT);
        let r = self.rng.next_u64();
        p.payload_with(size, |i| (r >> ((i % 8) * 8)) as u8 ^ (i / 256) as u8);
        p.finish();
        let id = self.next_frag_id;
        self.next_frag_id = self.next_frag_id.wrapping_add(1);
        let mut frames = std::mem::take(&mut self.pending);
        let mut spare = std::mem::take(&mut self.spare);
        if flow.v6 {
            fragment_v6(&work, ip, id, &mut frames, &mut spare);
        } else {
            fragment_v4(&work, ip, &mut frames, &mut spare);
        }
        self.work = work;
        if self.cfg.link == Link::Ethernet {
            for f in frames.iter_mut() {
                if f.len() < 60 {
                    f.resize(60, 0);
                }
            }
        }
        match frames.pop_front() {
            Some(first) => {
                buf.clear();
                buf.extend_from_slice(&first);
                spare.push(first);
            }
            None => buf.clear(),
        }
        self.pending = frames;
        self.spare = spare;
    }

    // ---- Malformed frames --------------------------------------------------------------------

    pub(super) fn malformed_frame(&mut self, buf: &mut Vec<u8>) {
        let mut flow = self.new_flow();
        flow.kind = Kind::Tcp;
        flow.encap = Encap::None;
        flow.tunnel = Tunnel::None;
        flow.v6ext = V6Ext::None;
        flow.v4opts = V4Options::None;
        flow.server.port = 80;
        flow.phase = Phase::Request;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut p = Packet::new(buf, &mut scratch);
        let ip = self.begin(&mut p, &flow, Dir::ToServer, None, 64);
        let l4 = p.len();
        p.tcp(&TcpRepr {
            src_port: flow.client.port,
            dst_port: 80,
            seq: flow.c_seq,
            ack: flow.s_seq,
            flags: tcp::flags::ACK | tcp::flags::PSH,
            window: 501,
            urgent: 0,
            options: &[],
        });
        let _ = write!(p.buf_mut(), "GET /malformed HTTP/1.1\r\nHost: example.com\r\n\r\n");
        p.finish();
        self.scratch = scratch;
        let len = buf.len();
        let flip = |buf: &mut Vec<u8>, at: usize, f: &dyn Fn(u8) -> u8| {
            if let Some(b) = buf.get_mut(at) {
                *b = f(*b);
            }
        };
        let choice = self.rng.below(if flow.v6 { 4 } else { 7 });
        match (flow.v6, choice) {
            // Cut inside the IP header: the frame itself is short (wire length = captured).
            (_, 0) => buf.truncate((ip + ipv4::field::SRC.start).min(len)),
            // TCP data offset below 5.
            (_, 1) => flip(buf, l4 + tcp::field::FLAGS, &|b| (b & 0x0f) | 0x30),
            // TCP checksum wrong.
            (_, 2) => flip(buf, l4 + tcp::field::CHECKSUM + 1, &|b| b ^ 0x5a),
            // IPv6 payload length beyond the frame / IPv4 total length beyond the frame.
            (true, _) => flip(buf, ip + ipv6::field::LENGTH, &|b| b.wrapping_add(4)),
            (false, 3) => flip(buf, ip + ipv4::field::LENGTH, &|b| b.wrapping_add(4)),
            // IPv4 header length below 5.
            (false, 4) => flip(buf, ip + ipv4::field::VER_IHL, &|_| 0x43),
            // IPv4 header checksum wrong.
            (false, 5) => flip(buf, ip + ipv4::field::CHECKSUM + 1, &|b| b ^ 0xa5),
            // Version 7 under an IPv4 EtherType.
            _ => flip(buf, ip + ipv4::field::VER_IHL, &|b| (b & 0x0f) | 0x70),
        }
        self.pad(buf);
    }
}

fn take_spare(spare: &mut Vec<Vec<u8>>) -> Vec<u8> {
    let mut v = spare.pop().unwrap_or_default();
    v.clear();
    v
}

/// Splits the finished frame `f` (IPv4 header at `ip`, no options) into fragments of at most
/// 1500 bytes of IP packet each.
fn fragment_v4(f: &[u8], ip: usize, out: &mut VecDeque<Vec<u8>>, spare: &mut Vec<Vec<u8>>) {
    let Some(header) = f.get(ip..).filter(|h| h.len() >= ipv4::HEADER_LEN) else { return };
    let ihl = Ipv4Packet::new_unchecked(header).header_len();
    let Some(payload) = f.get(ip + ihl..) else { return };
    let chunk = (1500 - ihl) & !7;
    let mut off = 0;
    while off < payload.len() {
        let end = (off + chunk).min(payload.len());
        let more = end < payload.len();
        let mut frame = take_spare(spare);
        frame.extend_from_slice(&f[..ip + ihl]);
        let mut h = Ipv4Packet::new_unchecked(&mut frame[ip..]);
        h.set_total_len((ihl + end - off) as u16);
        h.set_flags_frag(0);
        h.set_more_frags(more);
        h.set_frag_offset((off / 8) as u16);
        h.fill_checksum();
        frame.extend_from_slice(&payload[off..end]);
        out.push_back(frame);
        off = end;
    }
}

/// Splits the finished frame `f` (IPv6 header at `ip`, no extension headers) into fragments
/// with fragment headers, at most 1500 bytes of IP packet each.
fn fragment_v6(
    f: &[u8],
    ip: usize,
    id: u32,
    out: &mut VecDeque<Vec<u8>>,
    spare: &mut Vec<Vec<u8>>,
) {
    let Some(header) = f.get(ip..).filter(|h| h.len() >= ipv6::HEADER_LEN) else { return };
    let next = Ipv6Packet::new_unchecked(header).next_header();
    let payload = &header[ipv6::HEADER_LEN..];
    let chunk = (1500 - ipv6::HEADER_LEN - 8) & !7;
    let mut off = 0;
    while off < payload.len() {
        let end = (off + chunk).min(payload.len());
        let frag = Ipv6FragmentRepr {
            next_header: next,
            frag_offset: (off / 8) as u16,
            more_frags: end < payload.len(),
            ident: id,
        };
        let mut frame = take_spare(spare);
        frame.extend_from_slice(&f[..ip + ipv6::HEADER_LEN]);
        let mut h = Ipv6Packet::new_unchecked(&mut frame[ip..]);
        h.set_payload_len((frag.buffer_len() + end - off) as u16);
        h.set_next_header(ipproto::FRAGMENT);
        let at = frame.len();
        frame.resize(at + frag.buffer_len(), 0);
        frag.emit(&mut Ipv6ExtHeader::new_unchecked(ipproto::FRAGMENT, &mut frame[at..]));
        frame.extend_from_slice(&payload[off..end]);
        out.push_back(frame);
        off = end;
    }
}
