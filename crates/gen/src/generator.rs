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
use std::io::Write as _;

use crate::build::{
    DnsAnswer, Fixup, Ipv4, Ipv6, Mac, Packet, Tcp, TcpOption, dns_type, tcp_flags,
};
use crate::checksum::{finish16, sum16};
use crate::pools::{self, BROADCAST, GATEWAY_MAC};
use crate::rng::{Prob, Rng};

/// The link-layer encapsulation of generated frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Link {
    /// Ethernet II (LINKTYPE_ETHERNET / DLT_EN10MB, 1).
    Ethernet,
    /// Linux cooked capture v1 (LINKTYPE_LINUX_SLL, 113).
    LinuxSll,
    /// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276).
    LinuxSll2,
    /// Raw IP, no link header (LINKTYPE_RAW, 101).
    Raw,
    /// BSD loopback, host-order (here little-endian) address family (LINKTYPE_NULL, 0).
    Null,
    /// OpenBSD loopback, network-order address family (LINKTYPE_LOOP, 108).
    Loop,
}

impl Link {
    /// Every link type, in a fixed order.
    pub const ALL: [Link; 6] =
        [Link::Ethernet, Link::LinuxSll, Link::LinuxSll2, Link::Raw, Link::Null, Link::Loop];

    /// The LINKTYPE_ number written in pcap and pcapng files.
    pub fn linktype(self) -> u32 {
        match self {
            Link::Ethernet => 1,
            Link::LinuxSll => 113,
            Link::LinuxSll2 => 276,
            Link::Raw => 101,
            Link::Null => 0,
            Link::Loop => 108,
        }
    }

    /// libpcap's name for the link type (`tcpdump -y`).
    pub fn name(self) -> &'static str {
        match self {
            Link::Ethernet => "EN10MB",
            Link::LinuxSll => "LINUX_SLL",
            Link::LinuxSll2 => "LINUX_SLL2",
            Link::Raw => "RAW",
            Link::Null => "NULL",
            Link::Loop => "LOOP",
        }
    }

    /// Whether frames carry an Ethernet-like header with an EtherType, so that ARP and
    /// neighbour discovery make sense.
    pub fn has_ethertype(self) -> bool {
        matches!(self, Link::Ethernet | Link::LinuxSll | Link::LinuxSll2)
    }
}

/// Relative weights of the flow kinds started by the generator (0 disables a kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    /// TCP connections: handshake, HTTP / TLS-like / bulk exchanges, FIN or RST close.
    pub tcp: u32,
    /// DNS query and response (UDP 53).
    pub dns: u32,
    /// Pings (ICMP or ICMPv6 echo).
    pub ping: u32,
    /// ARP request and reply (Ethernet-like links only).
    pub arp: u32,
    /// IPv6 neighbour solicitation and advertisement.
    pub ndp: u32,
    /// SCTP associations: INIT handshake, DATA and SACK.
    pub sctp: u32,
    /// Small syslog datagrams (UDP 514).
    pub syslog: u32,
    /// Large UDP datagrams sent as IP fragments (IPv4, or IPv6 fragment headers).
    pub fragments: u32,
}

impl Default for Mix {
    fn default() -> Mix {
        Mix { tcp: 55, dns: 15, ping: 6, arp: 4, ndp: 3, sctp: 3, syslog: 10, fragments: 4 }
    }
}

/// Generator settings. `Config::default()` gives Ethernet frames with a realistic mix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Link-layer encapsulation.
    pub link: Link,
    /// Timestamp of the first frame, in nanoseconds since the epoch.
    pub start_ns: u64,
    /// Mean gap between frames, in nanoseconds.
    pub mean_gap_ns: u64,
    /// Captured length limit.
    pub snaplen: u32,
    /// Fraction of frames additionally cut at a random length below what the snap length keeps
    /// (so `caplen < wirelen`).
    pub truncate: f64,
    /// Fraction of frames deliberately malformed (bad checksums, impossible lengths, short
    /// headers).
    pub malformed: f64,
    /// Fraction of IP flows over IPv6.
    pub ipv6: f64,
    /// Fraction of flows (Ethernet only) carried in 802.1Q, QinQ, MPLS or PPPoE.
    pub encapsulation: f64,
    /// Fraction of IPv4 flows carried in a tunnel (VXLAN, Geneve, GRE).
    pub tunnels: f64,
    /// Fraction of IPv4 flows with IP options.
    pub ipv4_options: f64,
    /// Fraction of IPv6 flows with extension headers.
    pub ipv6_extensions: f64,
    /// Flow-kind weights.
    pub mix: Mix,
    /// Maximum number of flows open at once (at least 1).
    pub max_flows: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            link: Link::Ethernet,
            start_ns: 1_700_000_000_000_000_000,
            mean_gap_ns: 20_000,
            snaplen: 262_144,
            truncate: 0.0,
            malformed: 0.0,
            ipv6: 0.25,
            encapsulation: 0.08,
            tunnels: 0.03,
            ipv4_options: 0.02,
            ipv6_extensions: 0.08,
            mix: Mix::default(),
            max_flows: 32,
        }
    }
}

impl Config {
    /// The default configuration on another link type.
    pub fn with_link(link: Link) -> Config {
        Config { link, ..Config::default() }
    }
}

/// What [`Generator::next_frame`] says about the frame it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameMeta {
    /// Seconds since the epoch.
    pub ts_sec: u64,
    /// Nanoseconds within the second.
    pub ts_nsec: u32,
    /// The frame's length on the wire; the buffer holds the captured bytes (at most this many).
    pub wire_len: u32,
    /// Whether the frame was deliberately malformed.
    pub malformed: bool,
}

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

    /// The LINKTYPE_ number of the frames (for a pcap header).
    pub fn link_type(&self) -> u32 {
        self.cfg.link.linktype()
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
                p.ipv4(&Ipv4 { id, ..Ipv4::new(oa, ob) });
                p.udp_no_checksum(sport, if geneve { 6081 } else { 4789 });
                if geneve {
                    p.geneve(vni);
                } else {
                    p.vxlan(vni);
                }
                p.ethernet(dst_mac, src.mac);
            }
            Tunnel::Gre { a, b } => {
                let (oa, ob) = if dir == Dir::ToServer { (a, b) } else { (b, a) };
                p.ipv4(&Ipv4 { id, ..Ipv4::new(oa, ob) }).gre();
            }
        }
        let at = p.len();
        if flow.v6 {
            p.ipv6(&Ipv6 {
                hop_limit,
                flow_label: u32::from(flow.id) << 4,
                ..Ipv6::new(src.v6, dst.v6)
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
            p.ipv4(&Ipv4 { id, ttl: hop_limit, options, ..Ipv4::new(src.v4, dst.v4) });
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

    fn emit_tcp(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
        use tcp_flags::{ACK, FIN, PSH, RST, SYN};
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
            TcpOption::Timestamps(tsval, if flags & ACK != 0 { tsecr } else { 0 }),
            TcpOption::Nop,
            TcpOption::WindowScale(wscale),
        ];
        let data_opts = [TcpOption::Nop, TcpOption::Nop, TcpOption::Timestamps(tsval, tsecr)];
        let options: &[TcpOption] = if flags & SYN != 0 {
            &syn_opts
        } else if flags & RST != 0 {
            &[]
        } else {
            &data_opts
        };
        let window = if flags & SYN != 0 { 64_240 } else { 501 + self.rng.below(12) as u16 };
        let hdr = Tcp {
            sport: if dir == Dir::ToServer { flow.client.port } else { flow.server.port },
            dport: if dir == Dir::ToServer { flow.server.port } else { flow.client.port },
            seq,
            ack: if flags & ACK != 0 { ack } else { 0 },
            flags,
            window,
            urgent: 0,
            options,
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

    fn emit_dns(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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

    fn emit_ping(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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

    fn emit_arp(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
        let (c, s) = (flow.client, flow.server);
        let mut p = Packet::new(buf, scratch);
        if flow.step == 0 {
            self.begin(&mut p, flow, Dir::ToServer, Some(BROADCAST), 64);
            p.arp(1, c.mac, c.v4, [0; 6], s.v4);
        } else {
            self.begin(&mut p, flow, Dir::ToClient, None, 64);
            p.arp(2, s.mac, s.v4, c.mac, c.v4);
        }
        p.finish();
    }

    fn emit_ndp(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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

    fn emit_sctp(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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
                p.sctp_chunk(2, 0, &body);
            }
            2 => {
                let mut cookie = [0u8; 24];
                self.rng.fill(&mut cookie);
                p.sctp_chunk(10, 0, &cookie);
            }
            3 => {
                p.sctp_chunk(11, 0, &[]);
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
                p.sctp_chunk(3, 0, &body);
            }
        }
        p.finish();
    }

    fn emit_syslog(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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

    /// A large UDP datagram: the first fragment goes out now, the rest are queued.
    fn emit_fragments(&mut self, flow: &mut Flow, buf: &mut Vec<u8>, scratch: &mut Vec<Fixup>) {
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

    fn malformed_frame(&mut self, buf: &mut Vec<u8>) {
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
        p.tcp(&Tcp {
            sport: flow.client.port,
            dport: 80,
            seq: flow.c_seq,
            ack: flow.s_seq,
            flags: tcp_flags::ACK | tcp_flags::PSH,
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
            (_, 0) => buf.truncate((ip + 12).min(len)),
            // TCP data offset below 5.
            (_, 1) => flip(buf, l4 + 12, &|b| (b & 0x0f) | 0x30),
            // TCP checksum wrong.
            (_, 2) => flip(buf, l4 + 17, &|b| b ^ 0x5a),
            // IPv6 payload length beyond the frame / IPv4 total length beyond the frame.
            (true, _) => flip(buf, ip + 4, &|b| b.wrapping_add(4)),
            (false, 3) => flip(buf, ip + 2, &|b| b.wrapping_add(4)),
            // IPv4 header length below 5.
            (false, 4) => flip(buf, ip, &|_| 0x43),
            // IPv4 header checksum wrong.
            (false, 5) => flip(buf, ip + 11, &|b| b ^ 0xa5),
            // Version 7 under an IPv4 EtherType.
            _ => flip(buf, ip, &|b| (b & 0x0f) | 0x70),
        }
        self.pad(buf);
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

fn take_spare(spare: &mut Vec<Vec<u8>>) -> Vec<u8> {
    let mut v = spare.pop().unwrap_or_default();
    v.clear();
    v
}

/// Splits the finished frame `f` (IPv4 header at `ip`, no options) into fragments of at most
/// 1500 bytes of IP packet each.
fn fragment_v4(f: &[u8], ip: usize, out: &mut VecDeque<Vec<u8>>, spare: &mut Vec<Vec<u8>>) {
    let Some(&vihl) = f.get(ip) else { return };
    let ihl = usize::from(vihl & 0x0f) * 4;
    let Some(payload) = f.get(ip + ihl..) else { return };
    let chunk = (1500 - ihl) & !7;
    let mut off = 0;
    while off < payload.len() {
        let end = (off + chunk).min(payload.len());
        let more = end < payload.len();
        let mut frame = take_spare(spare);
        frame.extend_from_slice(&f[..ip + ihl]);
        let total = (ihl + end - off) as u16;
        frame[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
        let flags = (u16::from(more) << 13) | ((off / 8) as u16 & 0x1fff);
        frame[ip + 6..ip + 8].copy_from_slice(&flags.to_be_bytes());
        frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
        let c = finish16(sum16(0, &frame[ip..ip + ihl]));
        frame[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
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
    let Some(&next) = f.get(ip + 6) else { return };
    let Some(payload) = f.get(ip + 40..) else { return };
    let chunk = (1500 - 48) & !7;
    let mut off = 0;
    while off < payload.len() {
        let end = (off + chunk).min(payload.len());
        let more = end < payload.len();
        let mut frame = take_spare(spare);
        frame.extend_from_slice(&f[..ip + 40]);
        let plen = (8 + end - off) as u16;
        frame[ip + 4..ip + 6].copy_from_slice(&plen.to_be_bytes());
        frame[ip + 6] = 44;
        frame.extend_from_slice(&[next, 0]);
        frame.extend_from_slice(&((((off / 8) as u16) << 3) | u16::from(more)).to_be_bytes());
        frame.extend_from_slice(&id.to_be_bytes());
        frame.extend_from_slice(&payload[off..end]);
        out.push_back(frame);
        off = end;
    }
}
