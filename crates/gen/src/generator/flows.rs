//! One packet of each kind of flow: TCP connections (with HTTP, TLS-like and bulk payloads),
//! DNS, pings, ARP, neighbour discovery, SCTP associations and syslog.

use std::io::Write as _;

use sift_wire::tcp::{TcpOption, TcpRepr, emit_options};
use sift_wire::{arp, sctp};

use super::*;
use crate::build::{DnsAnswer, dns_type};

impl Generator {
    pub(super) fn emit_tcp(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        use sift_wire::tcp::flags::{ACK, FIN, PSH, RST, SYN};
        let wscale = 7;
        let (dir, flags, phase_after) = match flow.phase {
            Phase::Syn => (Dir::ToServer, SYN, Phase::SynAck),
            Phase::SynAck => (Dir::ToClient, SYN | ACK, Phase::HandshakeAck),
            Phase::HandshakeAck => (Dir::ToServer, ACK, Phase::Request),
            Phase::Request => (Dir::ToServer, PSH | ACK, Phase::Response),
            Phase::Response => (Dir::ToClient, ACK, Phase::Response),
            Phase::DataAck => (Dir::ToServer, ACK, Phase::Response),
            Phase::FinalAck => (Dir::ToServer, ACK, Phase::Close),
            Phase::Close => (Dir::ToServer, FIN | ACK, Phase::Fin2),
            Phase::Fin2 => (Dir::ToClient, FIN | ACK, Phase::LastAck),
            Phase::LastAck | Phase::Done => (Dir::ToServer, ACK, Phase::Done),
        };
        let mut flags = flags;
        let mut next = phase_after;
        // Occasionally the server resets instead of closing.
        if flow.phase == Phase::Close && self.rng.chance(Prob::one_in(12)) {
            flags = RST | ACK;
            next = Phase::Done;
        }
        let seg_max = u32::from(flow.mss) - 12;
        // Decide the payload before writing headers (sizes drive the state machine).
        let mut payload_len = 0u32;
        match flow.phase {
            Phase::Request => {
                flow.resp_total = if self.rng.chance(Prob::one_in(10)) {
                    self.rng.range(8_000, 64_000) as u32
                } else {
                    self.rng.range(300, 4_000) as u32
                };
                flow.resp_left = flow.resp_total;
                flow.unacked = 0;
            }
            Phase::Response => {
                payload_len = flow.resp_left.min(seg_max);
                flow.resp_left -= payload_len;
                flow.unacked += 1;
                if flow.resp_left == 0 {
                    flags |= PSH;
                    next = Phase::FinalAck;
                } else if flow.unacked >= 2 {
                    next = Phase::DataAck;
                }
            }
            Phase::DataAck => flow.unacked = 0,
            Phase::FinalAck => {
                flow.rounds = flow.rounds.saturating_sub(1);
                if flow.rounds > 0 {
                    next = Phase::Request;
                }
            }
            _ => {}
        }
        if dir == Dir::ToServer {
            flow.c_ts = flow.c_ts.wrapping_add(1 + self.rng.below(20) as u32);
        } else {
            flow.s_ts = flow.s_ts.wrapping_add(1 + self.rng.below(20) as u32);
        }
        let (seq, ack, tsval, tsecr) = match dir {
            Dir::ToServer => (flow.c_seq, flow.s_seq, flow.c_ts, flow.s_ts),
            Dir::ToClient => (flow.s_seq, flow.c_seq, flow.s_ts, flow.c_ts),
        };
        let syn_opts = [
            TcpOption::Mss(flow.mss),
            TcpOption::SackPermitted,
            TcpOption::Timestamps { value: tsval, echo: if flags & ACK != 0 { tsecr } else { 0 } },
            TcpOption::Nop,
            TcpOption::WindowScale(wscale),
        ];
        let data_opts =
            [TcpOption::Nop, TcpOption::Nop, TcpOption::Timestamps { value: tsval, echo: tsecr }];
        let options: &[TcpOption] = if flags & SYN != 0 {
            &syn_opts
        } else if flags & RST != 0 {
            &[]
        } else {
            &data_opts
        };
        let window = if flags & SYN != 0 { 64_240 } else { 501 + self.rng.below(12) as u16 };
        let mut option_bytes = [0u8; 40];
        let n = emit_options(options, &mut option_bytes);
        let hdr = TcpRepr {
            src_port: if dir == Dir::ToServer { flow.client.port } else { flow.server.port },
            dst_port: if dir == Dir::ToServer { flow.server.port } else { flow.client.port },
            seq,
            ack: if flags & ACK != 0 { ack } else { 0 },
            flags,
            window,
            urgent: 0,
            options: &option_bytes[..n],
        };
        let mut p = Packet::new(buf, scratch);
        self.begin(&mut p, flow, dir, None, 64);
        p.tcp(&hdr);
        let before = p.len();
        match flow.phase {
            Phase::Request => self.tcp_request(&mut p, flow),
            Phase::Response => self.tcp_response(&mut p, flow, payload_len),
            _ => {}
        }
        let sent = (p.len() - before) as u32;
        p.finish();
        let consumed = sent + u32::from(flags & (SYN | FIN) != 0);
        match dir {
            Dir::ToServer => flow.c_seq = flow.c_seq.wrapping_add(consumed),
            Dir::ToClient => flow.s_seq = flow.s_seq.wrapping_add(consumed),
        }
        flow.phase = next;
    }

    fn tcp_request(&mut self, p: &mut Packet<'_>, flow: &Flow) {
        match flow.server.port {
            80 | 8080 => {
                const PATHS: [&str; 6] = [
                    "/",
                    "/index.html",
                    "/api/v1/items",
                    "/static/app.js",
                    "/images/logo.png",
                    "/search",
                ];
                let path = PATHS[self.rng.index(PATHS.len())];
                let host = pools::DNS_NAMES[flow.name];
                let _ = write!(
                    p.buf_mut(),
                    "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: sift-gen/0.1\r\nAccept: */*\r\n\r\n"
                );
            }
            443 | 8443 => {
                let n = self.rng.range(60, 700) as usize;
                self.tls_record(p, n);
            }
            _ => {
                let n = self.rng.range(16, 1200) as usize;
                let r = self.rng.next_u64();
                p.payload_with(n, |i| (r >> ((i % 8) * 8)) as u8 ^ i as u8);
            }
        }
    }

    fn tls_record(&mut self, p: &mut Packet<'_>, n: usize) {
        let n = n.max(6);
        let body = (n - 5) as u16;
        p.payload(&[0x17, 0x03, 0x03]).payload(&body.to_be_bytes());
        let r = self.rng.next_u64();
        p.payload_with(n - 5, |i| (r.rotate_left(i as u32 % 64) as u8).wrapping_add(i as u8));
    }

    fn tcp_response(&mut self, p: &mut Packet<'_>, flow: &Flow, len: u32) {
        let len = len as usize;
        let first = flow.resp_left + len as u32 == flow.resp_total;
        match flow.server.port {
            80 | 8080 => {
                let start = p.len();
                if first {
                    let total = flow.resp_total as usize;
                    // Content-Length makes header + body exactly `total` bytes.
                    let base =
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: \r\n\r\n"
                            .len();
                    let cl = (1..=7)
                        .map(|d| total.saturating_sub(base + d))
                        .find(|cl| decimal_digits(*cl) + base + cl == total)
                        .unwrap_or(0);
                    let _ = write!(
                        p.buf_mut(),
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {cl}\r\n\r\n"
                    );
                }
                let written = p.len() - start;
                const BODY: &[u8] = b"<html><body><p>sift generated this page.</p></body></html>\n";
                let offset = (flow.resp_total - flow.resp_left) as usize;
                p.payload_with(len.saturating_sub(written), |i| BODY[(offset + i) % BODY.len()]);
            }
            443 | 8443 => self.tls_record(p, len),
            _ => {
                let r = self.rng.next_u64();
                p.payload_with(len, |i| (r >> ((i % 8) * 8)) as u8 ^ (i >> 3) as u8);
            }
        }
    }

    pub(super) fn emit_dns(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let name = pools::DNS_NAMES[flow.name];
        let qtype = if flow.v6 || flow.id & 3 == 0 { dns_type::AAAA } else { dns_type::A };
        let dir = if flow.step == 0 { Dir::ToServer } else { Dir::ToClient };
        let mut p = Packet::new(buf, scratch);
        self.begin(&mut p, flow, dir, None, 64);
        if dir == Dir::ToServer {
            p.udp(flow.client.port, 53).dns_query(flow.id, name, qtype);
        } else {
            let mut answers = [DnsAnswer::A([0; 4]); 3];
            let n = if name.ends_with(".invalid") { 0 } else { self.rng.range(1, 3) as usize };
            for a in answers.iter_mut().take(n) {
                let s = self.server(0);
                *a = if qtype == dns_type::AAAA {
                    DnsAnswer::Aaaa(s.v6)
                } else {
                    DnsAnswer::A(s.v4)
                };
            }
            let ttl = self.rng.range(30, 86_400) as u32;
            p.udp(53, flow.client.port).dns_response(flow.id, name, qtype, &answers[..n], ttl);
        }
        p.finish();
    }

    pub(super) fn emit_ping(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let request = flow.step.is_multiple_of(2);
        let seq = (flow.step / 2 + 1) as u16;
        let dir = if request { Dir::ToServer } else { Dir::ToClient };
        let mut p = Packet::new(buf, scratch);
        self.begin(&mut p, flow, dir, None, 64);
        if flow.v6 {
            p.icmpv6_echo(request, flow.id, seq);
        } else {
            p.icmp_echo(request, flow.id, seq);
        }
        // Like Linux ping: an 8-byte timestamp, then 0x10, 0x11, … (56 bytes of data).
        let secs = (self.now_ns / 1_000_000_000).to_le_bytes();
        let usec = ((self.now_ns / 1000) % 1_000_000).to_le_bytes();
        p.payload(&secs).payload(&usec);
        p.payload_with(40, |i| 0x10 + i as u8);
        p.finish();
    }

    pub(super) fn emit_arp(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let (c, s) = (flow.client, flow.server);
        let mut p = Packet::new(buf, scratch);
        if flow.step == 0 {
            self.begin(&mut p, flow, Dir::ToServer, Some(BROADCAST), 64);
            p.arp(arp::OP_REQUEST, c.mac, c.v4, [0; 6], s.v4);
        } else {
            self.begin(&mut p, flow, Dir::ToClient, None, 64);
            p.arp(arp::OP_REPLY, s.mac, s.v4, c.mac, c.v4);
        }
        p.finish();
    }

    pub(super) fn emit_ndp(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let (c, s) = (flow.client, flow.server);
        let mut p = Packet::new(buf, scratch);
        if flow.step == 0 {
            let group = pools::solicited_node(s.v6);
            let solicit = Flow {
                server: End { v6: group, mac: pools::ipv6_multicast_mac(group), ..s },
                ..*flow
            };
            self.begin(&mut p, &solicit, Dir::ToServer, None, 255);
            p.icmpv6_neighbor_solicitation(s.v6, c.mac);
        } else {
            self.begin(&mut p, flow, Dir::ToClient, None, 255);
            p.icmpv6_neighbor_advertisement(s.v6, s.mac, true);
        }
        p.finish();
    }

    pub(super) fn emit_sctp(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        let step = flow.step;
        let dir = if step.is_multiple_of(2) { Dir::ToServer } else { Dir::ToClient };
        let (sport, dport) = match dir {
            Dir::ToServer => (flow.client.port, flow.server.port),
            Dir::ToClient => (flow.server.port, flow.client.port),
        };
        // vtag: the receiver's tag; 0 on INIT.
        let vtag = match (step, dir) {
            (0, _) => 0,
            (_, Dir::ToServer) => flow.vtag_s,
            (_, Dir::ToClient) => flow.vtag_c,
        };
        let tsn_c = flow.c_seq;
        let mut p = Packet::new(buf, scratch);
        self.begin(&mut p, flow, dir, None, 64);
        p.sctp(sport, dport, vtag);
        match step {
            0 => {
                p.sctp_init(flow.vtag_c, 106_496, 10, tsn_c);
            }
            1 => {
                // INIT ACK with a state cookie parameter (type 7).
                let mut body = [0u8; 16 + 4 + 24];
                body[0..4].copy_from_slice(&flow.vtag_s.to_be_bytes());
                body[4..8].copy_from_slice(&106_496u32.to_be_bytes());
                body[8..10].copy_from_slice(&10u16.to_be_bytes());
                body[10..12].copy_from_slice(&10u16.to_be_bytes());
                body[12..16].copy_from_slice(&flow.s_seq.to_be_bytes());
                body[16..20].copy_from_slice(&[0, 7, 0, 28]);
                self.rng.fill(&mut body[20..]);
                p.sctp_chunk(sctp::CHUNK_INIT_ACK, 0, &body);
            }
            2 => {
                let mut cookie = [0u8; 24];
                self.rng.fill(&mut cookie);
                p.sctp_chunk(sctp::CHUNK_COOKIE_ECHO, 0, &cookie);
            }
            3 => {
                p.sctp_chunk(sctp::CHUNK_COOKIE_ACK, 0, &[]);
            }
            _ if dir == Dir::ToServer => {
                let ssn = ((step - 4) / 2) as u16;
                let mut msg = [0u8; 64];
                let n = {
                    let mut w = &mut msg[..];
                    let _ = write!(w, "sift sctp message {ssn} of association {:08x}", flow.vtag_c);
                    64 - w.len()
                };
                p.sctp_data(tsn_c, 0, ssn, 0, &msg[..n]);
                flow.c_seq = flow.c_seq.wrapping_add(1);
            }
            _ => {
                // SACK: cumulative TSN ack, a_rwnd, no gap blocks, no duplicates.
                let mut body = [0u8; 12];
                body[0..4].copy_from_slice(&tsn_c.wrapping_sub(1).to_be_bytes());
                body[4..8].copy_from_slice(&106_496u32.to_be_bytes());
                p.sctp_chunk(sctp::CHUNK_SACK, 0, &body);
            }
        }
        p.finish();
    }

    pub(super) fn emit_syslog(
        &mut self,
        flow: &mut Flow,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<Fixup>,
    ) {
        const APPS: [&str; 4] = ["sshd", "cron", "kernel", "nginx"];
        const MSGS: [&str; 4] = [
            "Accepted publickey for deploy",
            "session opened for user root",
            "eth0: link becomes ready",
            "upstream timed out while reading response header",
        ];
        let app = APPS[self.rng.index(APPS.len())];
        let msg = MSGS[self.rng.index(MSGS.len())];
        let pri = 8 * self.rng.range(1, 23) + self.rng.below(8);
        let secs = (self.now_ns / 1_000_000_000) % 86_400;
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        let host = flow.client.v4[3];
        let pid = 100 + u32::from(flow.id) % 30_000;
        let mut p = Packet::new(buf, scratch);
        self.begin(&mut p, flow, Dir::ToServer, None, 64);
        p.udp(flow.client.port, pools::SYSLOG_PORT);
        let _ = write!(
            p.buf_mut(),
            "<{pri}>Nov 14 {h:02}:{m:02}:{s:02} host{host} {app}[{pid}]: {msg}"
        );
        p.finish();
    }
}

fn decimal_digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}
