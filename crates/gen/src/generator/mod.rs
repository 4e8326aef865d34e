//! The traffic model: an endless, deterministic stream of frames.
//!
//! A [`Generator`] keeps a small set of concurrent *flows* (TCP connections, DNS lookups,
//! pings, ARP and neighbour discovery exchanges, SCTP associations, syslog and bulk UDP) and at
//! each step either opens a new flow or advances a random open one by one packet, so
//! conversations interleave as on a real link. Each flow picks once, at its start, its hosts,
//! IP version, L2 encapsulation (802.1Q, QinQ, MPLS, PPPoE), tunnel (VXLAN, Geneve, GRE) and
//! header extras (IPv4 options, IPv6 extension headers), so all its packets agree.
//!
//! Timestamps form a Poisson process: exponential gaps with the configured mean, at least 1 ns,
//! so they strictly increase. Frames are captured up to the snap length; optionally some are cut
//! shorter at random (`caplen < wirelen`), and some are deliberately malformed.

use std::collections::VecDeque;

use sift_wire::LinkType;
use sift_wire::ipv4::Ipv4Repr;
use sift_wire::ipv6::Ipv6Repr;

use crate::build::{Fixup, Mac, Packet, ipv4_header, ipv6_header};
use crate::pools::{self, BROADCAST, GATEWAY_MAC};
use crate::rng::{Prob, Rng};

mod config;
mod damage;
mod flows;

pub use config::{Config, FrameMeta, Link, Mix};

/// The deterministic frame generator. See the module documentation.
#[derive(Debug)]
pub struct Generator {
    cfg: Config,
    rng: Rng,
    now_ns: u64,
    flows: Vec<Flow>,
    kinds: Vec<(u32, Kind)>,
    scratch: Vec<Fixup>,
    /// Frames already built (IP fragments) waiting to be handed out.
    pending: VecDeque<Vec<u8>>,
    /// Spare buffers for `pending`, so fragment trains do not allocate once warmed up.
    spare: Vec<Vec<u8>>,
    work: Vec<u8>,
    p_truncate: Prob,
    p_malformed: Prob,
    p_ipv6: Prob,
    p_encap: Prob,
    p_tunnel: Prob,
    p_v4opts: Prob,
    p_v6ext: Prob,
    next_ip_id: u16,
    next_frag_id: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tcp,
    Dns,
    Ping,
    Arp,
    Ndp,
    Sctp,
    Syslog,
    Fragments,
}

/// One end of a flow.
#[derive(Clone, Copy, Debug)]
struct End {
    mac: Mac,
    v4: [u8; 4],
    v6: [u8; 16],
    port: u16,
}

#[derive(Clone, Copy, Debug)]
enum Encap {
    None,
    Vlan(u16, u8),
    QinQ(u16, u16),
    Mpls(u32, Option<u32>),
    Pppoe(u16),
}

#[derive(Clone, Copy, Debug)]
enum Tunnel {
    None,
    Vxlan { vni: u32, a: [u8; 4], b: [u8; 4], sport: u16 },
    Geneve { vni: u32, a: [u8; 4], b: [u8; 4], sport: u16 },
    Gre { a: [u8; 4], b: [u8; 4] },
}

#[derive(Clone, Copy, Debug)]
enum V4Options {
    None,
    RouterAlert,
    Timestamp,
}

#[derive(Clone, Copy, Debug)]
enum V6Ext {
    None,
    HopByHop,
    DestOptions,
    Srh,
    HopByHopAndDest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Syn,
    SynAck,
    HandshakeAck,
    Request,
    Response,
    DataAck,
    FinalAck,
    Close,
    Fin2,
    LastAck,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Flow {
    kind: Kind,
    v6: bool,
    client: End,
    server: End,
    encap: Encap,
    tunnel: Tunnel,
    v4opts: V4Options,
    v6ext: V6Ext,
    /// Packets emitted so far.
    step: u32,
    /// Packets to emit (for the simple request/response kinds).
    total: u32,
    phase: Phase,
    c_seq: u32,
    s_seq: u32,
    c_ts: u32,
    s_ts: u32,
    rounds: u32,
    resp_total: u32,
    resp_left: u32,
    unacked: u32,
    id: u16,
    name: usize,
    mss: u16,
    vtag_c: u32,
    vtag_s: u32,
}

/// Direction of a packet within a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    ToServer,
    ToClient,
}

impl Generator {
    /// A generator whose whole output is determined by `seed` and `config`.
    pub fn new(seed: u64, config: Config) -> Generator {
        let mut cfg = config;
        cfg.max_flows = cfg.max_flows.max(1);
        let m = cfg.mix;
        let mut kinds = vec![
            (m.tcp, Kind::Tcp),
            (m.dns, Kind::Dns),
            (m.ping, Kind::Ping),
            (m.sctp, Kind::Sctp),
            (m.syslog, Kind::Syslog),
            (m.fragments, Kind::Fragments),
            (m.ndp, Kind::Ndp),
        ];
        if cfg.link.has_ethertype() {
            kinds.push((m.arp, Kind::Arp));
        }
        if kinds.iter().all(|(w, _)| *w == 0) {
            kinds.push((1, Kind::Tcp));
        }
        Generator {
            rng: Rng::new(seed),
            now_ns: cfg.start_ns,
            flows: Vec::with_capacity(cfg.max_flows.min(1024)),
            kinds,
            scratch: Vec::with_capacity(16),
            pending: VecDeque::new(),
            spare: Vec::new(),
            work: Vec::with_capacity(16 * 1024),
            p_truncate: Prob::new(cfg.truncate),
            p_malformed: Prob::new(cfg.malformed),
            p_ipv6: Prob::new(cfg.ipv6),
            p_encap: Prob::new(cfg.encapsulation),
            p_tunnel: Prob::new(cfg.tunnels),
            p_v4opts: Prob::new(cfg.ipv4_options),
            p_v6ext: Prob::new(cfg.ipv6_extensions),
            next_ip_id: 1,
            next_frag_id: 1,
            cfg,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The link type of the frames (for a pcap header).
    pub fn link_type(&self) -> LinkType {
        self.cfg.link.link_type()
    }

    /// Writes the next frame's captured bytes into `buf` (cleared first; reuse it across calls
    /// and nothing is allocated per frame) and returns its timestamp and wire length.
    pub fn next_frame(&mut self, buf: &mut Vec<u8>) -> FrameMeta {
        let gap = self.rng.exponential(self.cfg.mean_gap_ns).max(1);
        self.now_ns = self.now_ns.saturating_add(gap);
        let mut malformed = false;
        if let Some(frame) = self.pending.pop_front() {
            buf.clear();
            buf.extend_from_slice(&frame);
            self.spare.push(frame);
        } else if self.rng.chance(self.p_malformed) {
            self.malformed_frame(buf);
            malformed = true;
        } else {
            self.flow_frame(buf);
        }
        let wire_len = buf.len();
        let mut cap = wire_len.min(self.cfg.snaplen as usize);
        if cap > 1 && self.rng.chance(self.p_truncate) {
            // Cut below what the snap length keeps; half the cuts land in the first 100 bytes,
            // where the headers are.
            let hi = if self.rng.chance(Prob::one_in(2)) { cap - 1 } else { (cap - 1).min(100) };
            cap = self.rng.range(1, hi as u64) as usize;
        }
        buf.truncate(cap);
        FrameMeta {
            ts_sec: self.now_ns / 1_000_000_000,
            ts_nsec: (self.now_ns % 1_000_000_000) as u32,
            wire_len: u32::try_from(wire_len).unwrap_or(u32::MAX),
            malformed,
        }
    }

    fn flow_frame(&mut self, buf: &mut Vec<u8>) {
        let open_new = self.flows.is_empty()
            || (self.flows.len() < self.cfg.max_flows && self.rng.chance(Prob::one_in(6)));
        if open_new {
            let flow = self.new_flow();
            self.flows.push(flow);
        }
        let i = if open_new { self.flows.len() - 1 } else { self.rng.index(self.flows.len()) };
        let mut flow = self.flows[i];
        self.emit(&mut flow, buf);
        if flow.phase == Phase::Done {
            self.flows.swap_remove(i);
        } else {
            self.flows[i] = flow;
        }
    }

    // ---- Flow set-up -------------------------------------------------------------------------

    /// A host index skewed toward 0: a few hosts carry most flows.
    fn skewed(&mut self, n: u32) -> u32 {
        let k = self.rng.below(u64::from(n)) + 1;
        self.rng.below(k) as u32
    }

    fn client(&mut self) -> End {
        let n = pools::FIRST_CLIENT + self.skewed(pools::CLIENTS);
        let v4 = [10, 0, 0, n as u8];
        End {
            mac: pools::mac_of(v4),
            v4,
            v6: pools::with_host(pools::LAN_V6, n),
            port: self.ephemeral(),
        }
    }

    fn ephemeral(&mut self) -> u16 {
        self.rng.range(u64::from(pools::EPHEMERAL.0), u64::from(pools::EPHEMERAL.1)) as u16
    }

    fn server(&mut self, port: u16) -> End {
        let net = self.rng.index(pools::SERVER_NETS_V4.len());
        let (base, count) = pools::SERVER_NETS_V4[net];
        let h = 1 + self.skewed(count);
        let v4 = [base[0], base[1], base[2], h as u8];
        let v6 = pools::with_host(pools::SERVER_NET_V6, 1 + self.skewed(pools::SERVERS_V6));
        End { mac: GATEWAY_MAC, v4, v6, port }
    }

    fn new_flow(&mut self) -> Flow {
        let kinds = std::mem::take(&mut self.kinds);
        let kind = self.rng.weighted(&kinds).copied().unwrap_or(Kind::Tcp);
        self.kinds = kinds;
        let mut client = self.client();
        let (mut v6, mut server) = (self.rng.chance(self.p_ipv6), self.server(0));
        let mut total = 2;
        match kind {
            Kind::Tcp => {
                let services = pools::TCP_SERVICES;
                server.port = self.rng.weighted(&services).copied().unwrap_or(443);
            }
            Kind::Dns => {
                server = End {
                    mac: pools::RESOLVER_MAC,
                    v4: pools::RESOLVER_V4,
                    v6: pools::RESOLVER_V6,
                    port: 53,
                };
            }
            Kind::Ping => total = 2 * self.rng.range(1, 4) as u32,
            Kind::Arp => {
                v6 = false;
                // A client resolving the gateway, or the gateway resolving a client.
                server =
                    End { mac: GATEWAY_MAC, v4: pools::GATEWAY_V4, v6: pools::GATEWAY_V6, port: 0 };
                if self.rng.chance(Prob::one_in(2)) {
                    std::mem::swap(&mut client, &mut server);
                }
            }
            Kind::Ndp => {
                v6 = true;
                server =
                    End { mac: GATEWAY_MAC, v4: pools::GATEWAY_V4, v6: pools::GATEWAY_V6, port: 0 };
                if self.rng.chance(Prob::one_in(3)) {
                    // Link-local resolution.
                    client.v6 = pools::link_local(client.mac);
                    server.v6 = pools::link_local(server.mac);
                }
            }
            Kind::Sctp => {
                server.port = pools::SCTP_PORT;
                total = 4 + 2 * self.rng.range(1, 4) as u32;
            }
            Kind::Syslog => {
                server.port = pools::SYSLOG_PORT;
                total = self.rng.range(1, 5) as u32;
            }
            Kind::Fragments => {
                server.port = pools::DISCARD_PORT;
                total = 1;
            }
        }
        let l2_ok = self.cfg.link == Link::Ethernet;
        let encap = if l2_ok && kind != Kind::Arp && self.rng.chance(self.p_encap) {
            match self.rng.below(if kind == Kind::Fragments { 3 } else { 4 }) {
                0 => Encap::Vlan(self.rng.range(1, 4094) as u16, self.rng.below(8) as u8),
                1 => Encap::QinQ(self.rng.range(1, 4094) as u16, self.rng.range(1, 4094) as u16),
                2 => {
                    let inner = if self.rng.chance(Prob::one_in(2)) {
                        Some(self.rng.range(16, 0xf_ffff) as u32)
                    } else {
                        None
                    };
                    Encap::Mpls(self.rng.range(16, 0xf_ffff) as u32, inner)
                }
                _ => Encap::Pppoe(self.rng.range(1, 0xfffe) as u16),
            }
        } else {
            Encap::None
        };
        let tunnel_ok = !v6 && matches!(kind, Kind::Tcp | Kind::Dns | Kind::Ping | Kind::Syslog);
        let tunnel = if tunnel_ok && self.rng.chance(self.p_tunnel) {
            let (base, count) = pools::VTEPS_V4;
            let a = [base[0], base[1], base[2], 1 + self.rng.below(u64::from(count)) as u8];
            let b = [base[0], base[1], base[2], 1 + self.rng.below(u64::from(count)) as u8];
            let vni = self.rng.range(1, 0xff_ffff) as u32;
            let sport = self.ephemeral();
            match self.rng.below(3) {
                0 => Tunnel::Vxlan { vni, a, b, sport },
                1 => Tunnel::Geneve { vni, a, b, sport },
                _ => Tunnel::Gre { a, b },
            }
        } else {
            Tunnel::None
        };
        let ip_kind = kind != Kind::Arp;
        let v4opts = if ip_kind && !v6 && kind != Kind::Fragments && self.rng.chance(self.p_v4opts)
        {
            if self.rng.chance(Prob::one_in(2)) {
                V4Options::RouterAlert
            } else {
                V4Options::Timestamp
            }
        } else {
            V4Options::None
        };
        let v6ext = if v6
            && !matches!(kind, Kind::Fragments | Kind::Ndp)
            && self.rng.chance(self.p_v6ext)
        {
            match self.rng.below(4) {
                0 => V6Ext::HopByHop,
                1 => V6Ext::DestOptions,
                2 => V6Ext::Srh,
                _ => V6Ext::HopByHopAndDest,
            }
        } else {
            V6Ext::None
        };
        let id = self.rng.next_u32() as u16;
        let name = self.rng.index(pools::DNS_NAMES.len());
        Flow {
            kind,
            v6,
            client,
            server,
            encap,
            tunnel,
            v4opts,
            v6ext,
            step: 0,
            total,
            phase: Phase::Syn,
            c_seq: self.rng.next_u32(),
            s_seq: self.rng.next_u32(),
            c_ts: self.rng.next_u32(),
            s_ts: self.rng.next_u32(),
            rounds: self.rng.range(1, 3) as u32,
            resp_total: 0,
            resp_left: 0,
            unacked: 0,
            id,
            name,
            mss: if v6 { 1440 } else { 1460 },
            vtag_c: self.rng.next_u32() | 1,
            vtag_s: self.rng.next_u32() | 1,
        }
    }

    // ---- Headers shared by all flows ---------------------------------------------------------

    /// Writes the link header, L2 encapsulation, tunnel and IP header(s) of a packet of `flow`
    /// going `dir`, leaving `p` ready for the transport header. Returns the offset of the
    /// (innermost) IP header.
    fn begin(
        &mut self,
        p: &mut Packet<'_>,
        flow: &Flow,
        dir: Dir,
        dst_mac: Option<Mac>,
        hop_limit: u8,
    ) -> usize {
        let (src, dst) = match dir {
            Dir::ToServer => (flow.client, flow.server),
            Dir::ToClient => (flow.server, flow.client),
        };
        let dst_mac = dst_mac.unwrap_or(dst.mac);
        self.link_header(p, src.mac, dst_mac, dir);
        match flow.encap {
            Encap::None => {}
            Encap::Vlan(vid, pcp) => {
                p.vlan(false, pcp, vid);
            }
            Encap::QinQ(s, c) => {
                p.vlan(true, 0, s).vlan(false, 0, c);
            }
            Encap::Mpls(l1, l2) => match l2 {
                Some(l2) => {
                    p.mpls(&[l1, l2], 64);
                }
                None => {
                    p.mpls(&[l1], 64);
                }
            },
            Encap::Pppoe(sid) => {
                p.pppoe_session(sid);
            }
        }
        if flow.kind == Kind::Arp {
            return p.len();
        }
        let id = self.ip_id();
        match flow.tunnel {
            Tunnel::None => {}
            Tunnel::Vxlan { vni, a, b, sport } | Tunnel::Geneve { vni, a, b, sport } => {
                let (oa, ob) = if dir == Dir::ToServer { (a, b) } else { (b, a) };
                let geneve = matches!(flow.tunnel, Tunnel::Geneve { .. });
                p.ipv4(&Ipv4Repr { ident: id, ..ipv4_header(oa, ob) });
                let port =
                    if geneve { sift_wire::geneve::UDP_PORT } else { sift_wire::vxlan::UDP_PORT };
                p.udp_no_checksum(sport, port);
                if geneve {
                    p.geneve(vni);
                } else {
                    p.vxlan(vni);
                }
                p.ethernet(dst_mac, src.mac);
            }
            Tunnel::Gre { a, b } => {
                let (oa, ob) = if dir == Dir::ToServer { (a, b) } else { (b, a) };
                p.ipv4(&Ipv4Repr { ident: id, ..ipv4_header(oa, ob) }).gre();
            }
        }
        let at = p.len();
        if flow.v6 {
            p.ipv6(&Ipv6Repr {
                hop_limit,
                flow_label: u32::from(flow.id) << 4,
                ..ipv6_header(src.v6, dst.v6)
            });
            match flow.v6ext {
                V6Ext::None => {}
                V6Ext::HopByHop => {
                    p.ipv6_hop_by_hop(false);
                }
                V6Ext::DestOptions => {
                    p.ipv6_dest_options();
                }
                V6Ext::Srh => {
                    p.ipv6_routing_srh(&[dst.v6, pools::GATEWAY_V6]);
                }
                V6Ext::HopByHopAndDest => {
                    p.ipv6_hop_by_hop(false).ipv6_dest_options();
                }
            }
        } else {
            let ts_opt: [u8; 12];
            let options: &[u8] = match flow.v4opts {
                V4Options::None => &[],
                V4Options::RouterAlert => &[0x94, 0x04, 0x00, 0x00],
                V4Options::Timestamp => {
                    let ms = ((self.now_ns / 1_000_000) % 86_400_000) as u32;
                    let b = ms.to_be_bytes();
                    ts_opt = [68, 12, 13, 0, b[0], b[1], b[2], b[3], b[0], b[1], b[2], b[3]];
                    &ts_opt
                }
            };
            p.ipv4(&Ipv4Repr { ident: id, ttl: hop_limit, options, ..ipv4_header(src.v4, dst.v4) });
        }
        at
    }

    fn link_header(&mut self, p: &mut Packet<'_>, src: Mac, dst: Mac, dir: Dir) {
        // The capture point is the client side: its packets are outgoing.
        let pkttype = if dst == BROADCAST {
            1
        } else if dst[0] & 1 == 1 {
            2
        } else if dir == Dir::ToServer {
            4
        } else {
            0
        };
        match self.cfg.link {
            Link::Ethernet => {
                p.ethernet(dst, src);
            }
            Link::LinuxSll => {
                p.linux_sll(pkttype, src);
            }
            Link::LinuxSll2 => {
                p.linux_sll2(pkttype as u8, 2, src);
            }
            Link::Raw => {}
            Link::Null => {
                p.null_header();
            }
            Link::Loop => {
                p.loop_header();
            }
        }
    }

    fn ip_id(&mut self) -> u16 {
        self.next_ip_id = self.next_ip_id.wrapping_add(1 + self.rng.below(3) as u16);
        self.next_ip_id
    }

    /// Pads short Ethernet frames to the 60-byte minimum, as a receiving NIC delivers them.
    fn pad(&self, buf: &mut Vec<u8>) {
        if self.cfg.link == Link::Ethernet && buf.len() < 60 {
            buf.resize(60, 0);
        }
    }

    // ---- Flows -------------------------------------------------------------------------------

    fn emit(&mut self, flow: &mut Flow, buf: &mut Vec<u8>) {
        let mut scratch = std::mem::take(&mut self.scratch);
        match flow.kind {
            Kind::Tcp => self.emit_tcp(flow, buf, &mut scratch),
            Kind::Dns => self.emit_dns(flow, buf, &mut scratch),
            Kind::Ping => self.emit_ping(flow, buf, &mut scratch),
            Kind::Arp => self.emit_arp(flow, buf, &mut scratch),
            Kind::Ndp => self.emit_ndp(flow, buf, &mut scratch),
            Kind::Sctp => self.emit_sctp(flow, buf, &mut scratch),
            Kind::Syslog => self.emit_syslog(flow, buf, &mut scratch),
            Kind::Fragments => self.emit_fragments(flow, buf, &mut scratch),
        }
        self.scratch = scratch;
        self.pad(buf);
        flow.step += 1;
        if !matches!(flow.kind, Kind::Tcp) && flow.step >= flow.total {
            flow.phase = Phase::Done;
        }
    }
}
