//! Name resolution: services, protocols, hosts, ethers and networks, behind a trait.
//!
//! libpcap asks the C library (getaddrinfo, getservbyname, ether_hostton, getnetbyname), which
//! may query DNS and depends on the machine. sift keeps that behind [`Resolver`]:
//! [`SystemResolver`] reads `/etc/services`, `/etc/protocols`, `/etc/hosts`, `/etc/ethers` and
//! `/etc/networks` once and never asks DNS (a name not in the files is "unknown host");
//! [`TableResolver`] is filled by hand or from hosts(5)/ethers(5)/networks(5) lines and carries
//! built-in well-known services and protocols, so tests do not depend on `/etc`.

use crate::ast::{Expr, ExprKind, Id, Primitive, Proto, QualType};
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::parse_number;
use std::collections::HashMap;
use std::net::IpAddr;

/// A service's port numbers per transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Service {
    /// Port for TCP, if the service exists for TCP.
    pub tcp: Option<u16>,
    /// Port for UDP, if the service exists for UDP.
    pub udp: Option<u16>,
    /// Port for SCTP, if the service exists for SCTP.
    pub sctp: Option<u16>,
}

/// Where names come from. Lookups of numeric text never reach a resolver.
pub trait Resolver {
    /// A service name (`http`, `domain`).
    fn service(&self, name: &str) -> Option<Service>;
    /// An IP protocol name (`tcp` → 6).
    fn protocol(&self, name: &str) -> Option<u8>;
    /// All addresses of a host name (IPv4 and IPv6), in file order.
    fn host(&self, name: &str) -> Vec<IpAddr>;
    /// The MAC address of a name (ethers(5)).
    fn ether(&self, name: &str) -> Option<[u8; 6]>;
    /// A network name's number, left-aligned (networks(5)).
    fn network(&self, name: &str) -> Option<u32>;
}

/// A resolver backed by tables in memory. Host, ether and network names are
/// case-insensitive (as the C library's lookups); service and protocol names are not.
#[derive(Clone, Debug, Default)]
pub struct TableResolver {
    services: HashMap<String, Service>,
    protocols: HashMap<String, u8>,
    hosts: HashMap<String, Vec<IpAddr>>,
    ethers: HashMap<String, [u8; 6]>,
    networks: HashMap<String, u32>,
}

const WELL_KNOWN_SERVICES: &[(&str, u16, bool, bool)] = &[
    ("ftp-data", 20, true, false),
    ("ftp", 21, true, false),
    ("ssh", 22, true, false),
    ("telnet", 23, true, false),
    ("smtp", 25, true, false),
    ("time", 37, true, true),
    ("whois", 43, true, false),
    ("domain", 53, true, true),
    ("bootps", 67, false, true),
    ("bootpc", 68, false, true),
    ("tftp", 69, false, true),
    ("gopher", 70, true, false),
    ("finger", 79, true, false),
    ("http", 80, true, false),
    ("www", 80, true, false),
    ("kerberos", 88, true, true),
    ("pop3", 110, true, false),
    ("sunrpc", 111, true, true),
    ("auth", 113, true, false),
    ("nntp", 119, true, false),
    ("ntp", 123, false, true),
    ("netbios-ns", 137, false, true),
    ("netbios-dgm", 138, false, true),
    ("netbios-ssn", 139, true, false),
    ("imap", 143, true, false),
    ("snmp", 161, false, true),
    ("snmp-trap", 162, false, true),
    ("bgp", 179, true, false),
    ("ldap", 389, true, true),
    ("https", 443, true, true),
    ("microsoft-ds", 445, true, false),
    ("isakmp", 500, false, true),
    ("syslog", 514, false, true),
    ("rip", 520, false, true),
    ("submission", 587, true, false),
    ("ldaps", 636, true, false),
    ("imaps", 993, true, false),
    ("pop3s", 995, true, false),
    ("openvpn", 1194, true, true),
    ("mysql", 3306, true, false),
    ("domain-s", 853, true, true),
];

const WELL_KNOWN_PROTOCOLS: &[(&str, u8)] = &[
    ("ip", 0),
    ("icmp", 1),
    ("igmp", 2),
    ("ggp", 3),
    ("ipencap", 4),
    ("st", 5),
    ("tcp", 6),
    ("egp", 8),
    ("igp", 9),
    ("pup", 12),
    ("udp", 17),
    ("hmp", 20),
    ("xns-idp", 22),
    ("rdp", 27),
    ("iso-tp4", 29),
    ("dccp", 33),
    ("xtp", 36),
    ("ddp", 37),
    ("idpr-cmtp", 38),
    ("ipv6", 41),
    ("ipv6-route", 43),
    ("ipv6-frag", 44),
    ("idrp", 45),
    ("rsvp", 46),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("skip", 57),
    ("ipv6-icmp", 58),
    ("ipv6-nonxt", 59),
    ("ipv6-opts", 60),
    ("rspf", 73),
    ("vmtp", 81),
    ("eigrp", 88),
    ("ospf", 89),
    ("ax.25", 93),
    ("ipip", 94),
    ("etherip", 97),
    ("encap", 98),
    ("pim", 103),
    ("ipcomp", 108),
    ("vrrp", 112),
    ("l2tp", 115),
    ("isis", 124),
    ("sctp", 132),
    ("fc", 133),
    ("mobility-header", 135),
    ("udplite", 136),
    ("mpls-in-ip", 137),
    ("manet", 138),
    ("hip", 139),
    ("shim6", 140),
    ("wesp", 141),
    ("rohc", 142),
    ("ethernet", 143),
];

/// Names `ether proto` / `link proto` accept (libpcap's built-in table).
pub const ETHER_PROTO_NAMES: &[(&str, u32)] = &[
    ("aarp", 0x80f3),
    ("arp", 0x0806),
    ("atalk", 0x809b),
    ("decnet", 0x6003),
    ("ip", 0x0800),
    ("ip6", 0x86dd),
    ("ipx", 0x8137),
    ("iso", 0xfefe),
    ("lat", 0x6004),
    ("lldp", 0x88cc),
    ("loopback", 0x9000),
    ("mopdl", 0x6001),
    ("moprc", 0x6002),
    ("netbeui", 0xf0f0),
    ("rarp", 0x8035),
    ("sca", 0x6007),
    ("slow", 0x8809),
    ("stp", 0x42),
];

impl TableResolver {
    /// An empty resolver (no names at all).
    pub fn empty() -> TableResolver {
        TableResolver::default()
    }

    /// A resolver with built-in well-known services and protocols and no hosts.
    pub fn well_known() -> TableResolver {
        let mut r = TableResolver::default();
        for &(n, p, tcp, udp) in WELL_KNOWN_SERVICES {
            r.services.insert(
                n.into(),
                Service { tcp: tcp.then_some(p), udp: udp.then_some(p), sctp: None },
            );
        }
        for &(n, p) in WELL_KNOWN_PROTOCOLS {
            r.protocols.insert(n.into(), p);
        }
        r
    }

    /// Adds a host address.
    pub fn add_host(&mut self, name: &str, addr: IpAddr) {
        self.hosts.entry(name.to_ascii_lowercase()).or_default().push(addr);
    }

    /// Adds an ethers entry.
    pub fn add_ether(&mut self, name: &str, mac: [u8; 6]) {
        self.ethers.entry(name.to_ascii_lowercase()).or_insert(mac);
    }

    /// Adds a network.
    pub fn add_network(&mut self, name: &str, net: u32) {
        self.networks.entry(name.to_ascii_lowercase()).or_insert(net);
    }

    /// Adds a service.
    pub fn add_service(&mut self, name: &str, s: Service) {
        self.services.insert(name.into(), s);
    }

    /// Adds a protocol.
    pub fn add_protocol(&mut self, name: &str, p: u8) {
        self.protocols.insert(name.into(), p);
    }

    /// Loads hosts(5), ethers(5) and networks(5) lines mixed in one text (the format of
    /// libpcap's TESTrun name fixtures); `#` starts a comment. Each line is classified by its
    /// first field: an IP address (hosts), a MAC address (ethers), otherwise `name number`
    /// (networks).
    pub fn load_mixed(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 2 {
                continue;
            }
            if let Ok(a) = f[0].parse::<IpAddr>() {
                for n in &f[1..] {
                    self.add_host(n, a);
                }
            } else if let Some(m) = parse_mac(f[0]) {
                self.add_ether(f[1], m);
            } else if let Some(n) = parse_net(f[1]) {
                self.add_network(f[0], n);
                for alias in &f[2..] {
                    self.add_network(alias, n);
                }
            }
        }
    }

    /// Loads services(5) lines (`name port/proto aliases…`).
    pub fn load_services(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            let f: Vec<&str> = line.split_whitespace().collect();
            let Some((port, proto)) = f.get(1).and_then(|p| p.split_once('/')) else { continue };
            let Ok(port) = port.parse::<u16>() else { continue };
            for n in std::iter::once(&f[0]).chain(&f[2..]) {
                let s = self.services.entry((*n).into()).or_default();
                match proto {
                    "tcp" => s.tcp = s.tcp.or(Some(port)),
                    "udp" => s.udp = s.udp.or(Some(port)),
                    "sctp" => s.sctp = s.sctp.or(Some(port)),
                    _ => {}
                }
            }
        }
    }

    /// Loads protocols(5) lines (`name number aliases…`).
    pub fn load_protocols(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            let f: Vec<&str> = line.split_whitespace().collect();
            let Some(Ok(p)) = f.get(1).map(|p| p.parse::<u8>()) else { continue };
            for n in std::iter::once(&f[0]).chain(&f[2..]) {
                self.protocols.entry((*n).into()).or_insert(p);
            }
        }
    }
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return None;
    }
    let mut m = [0u8; 6];
    for (o, p) in m.iter_mut().zip(parts) {
        *o = u8::from_str_radix(p, 16).ok()?;
    }
    Some(m)
}

fn parse_net(s: &str) -> Option<u32> {
    let mut v = 0u32;
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    for (k, p) in parts.iter().enumerate() {
        let n: u32 = p.parse().ok()?;
        if n > 255 {
            return None;
        }
        v |= n << (24 - 8 * k);
    }
    Some(v)
}

impl Resolver for TableResolver {
    fn service(&self, name: &str) -> Option<Service> {
        self.services.get(name).copied()
    }
    fn protocol(&self, name: &str) -> Option<u8> {
        self.protocols.get(name).copied()
    }
    fn host(&self, name: &str) -> Vec<IpAddr> {
        self.hosts.get(&name.to_ascii_lowercase()).cloned().unwrap_or_default()
    }
    fn ether(&self, name: &str) -> Option<[u8; 6]> {
        self.ethers.get(&name.to_ascii_lowercase()).copied()
    }
    fn network(&self, name: &str) -> Option<u32> {
        self.networks.get(&name.to_ascii_lowercase()).copied()
    }
}

/// The machine's `/etc` files, read once; never DNS.
#[derive(Clone, Debug)]
pub struct SystemResolver(TableResolver);

impl SystemResolver {
    /// Reads `/etc/services`, `/etc/protocols`, `/etc/hosts`, `/etc/ethers` and
    /// `/etc/networks`; missing files are empty.
    pub fn new() -> SystemResolver {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let mut t = TableResolver::empty();
        t.load_services(&read("/etc/services"));
        t.load_protocols(&read("/etc/protocols"));
        t.load_mixed(&read("/etc/hosts"));
        t.load_mixed(&read("/etc/ethers"));
        t.load_mixed(&read("/etc/networks"));
        SystemResolver(t)
    }
}

impl Default for SystemResolver {
    fn default() -> Self {
        SystemResolver::new()
    }
}

impl Resolver for SystemResolver {
    fn service(&self, name: &str) -> Option<Service> {
        self.0.service(name)
    }
    fn protocol(&self, name: &str) -> Option<u8> {
        self.0.protocol(name)
    }
    fn host(&self, name: &str) -> Vec<IpAddr> {
        self.0.host(name)
    }
    fn ether(&self, name: &str) -> Option<[u8; 6]> {
        self.0.ether(name)
    }
    fn network(&self, name: &str) -> Option<u32> {
        self.0.network(name)
    }
}

/// Checks every name in `e` against `r`, with libpcap's errors ("unknown host 'x'"…).
/// Walks the tree with an explicit stack.
pub fn check_names(e: &Expr, r: &dyn Resolver) -> Result<(), ParseError> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Chain { first, rest } => {
                stack.extend(rest.iter().rev().map(|r| &r.2));
                stack.push(first);
            }
            ExprKind::Not(inner) => stack.push(inner),
            ExprKind::Rel { .. } => {}
            ExprKind::Prim(Primitive::Id { quals, id: Id::Name(name), id_span }) => {
                let err = |k: K| Err(ParseError::new(k, *id_span));
                let proto = quals.proto.map(|p| p.0);
                match quals.ty.map(|t| t.0).unwrap_or(QualType::Host) {
                    QualType::Host => {
                        if proto.is_some_and(Proto::is_link) {
                            if r.ether(name).is_none() {
                                return err(K::EtherHostUnknown { name: name.clone() });
                            }
                            continue;
                        }
                        let addrs = r.host(name);
                        let ok = match proto {
                            Some(Proto::Ip | Proto::Arp | Proto::Rarp) => {
                                addrs.iter().any(IpAddr::is_ipv4)
                            }
                            Some(Proto::Ip6) => addrs.iter().any(IpAddr::is_ipv6),
                            _ => !addrs.is_empty(),
                        };
                        if !ok {
                            return err(K::HostUnknown {
                                name: name.clone(),
                                family: !addrs.is_empty(),
                            });
                        }
                    }
                    QualType::Gateway => {
                        if r.ether(name).is_none() {
                            return err(K::EtherHostUnknown { name: name.clone() });
                        }
                        if !r.host(name).iter().any(IpAddr::is_ipv4) {
                            return err(K::HostUnknown { name: name.clone(), family: false });
                        }
                    }
                    QualType::Net => {
                        if r.network(name).is_none() {
                            return err(K::NetUnknown { name: name.clone() });
                        }
                    }
                    QualType::Port => {
                        check_port(name, proto, r).map_err(|k| ParseError::new(k, *id_span))?
                    }
                    QualType::Portrange => {
                        let (a, b) = name.split_once('-').unwrap_or((name, name));
                        for p in [a, b] {
                            if parse_number(p).is_err() {
                                check_port(p, proto, r)
                                    .map_err(|k| ParseError::new(k, *id_span))?;
                            }
                        }
                    }
                    t @ (QualType::Proto | QualType::Protochain) => {
                        let known = if proto.is_some_and(Proto::is_link) {
                            ETHER_PROTO_NAMES.iter().any(|(n, _)| n == name)
                        } else if matches!(proto, Some(Proto::Iso | Proto::Isis)) {
                            [
                                "clnp", "esis", "isis", "l1", "l2", "iih", "lsp", "snp", "csnp",
                                "psnp",
                            ]
                            .contains(&name.as_str())
                        } else {
                            r.protocol(name).is_some()
                        };
                        if !known {
                            let qual = match proto {
                                Some(p) => format!("{} {}", p.as_str(), t.as_str()),
                                None => t.as_str().into(),
                            };
                            return err(K::ProtoUnknown { qual, name: name.clone() });
                        }
                        crate::semantic::check_proto_compat(
                            quals,
                            &Id::Name(name.clone()),
                            *id_span,
                            name,
                        )?;
                    }
                }
            }
            ExprKind::Prim(_) => {}
        }
    }
    Ok(())
}

fn check_port(name: &str, proto: Option<Proto>, r: &dyn Resolver) -> Result<(), K> {
    let Some(s) = r.service(name) else { return Err(K::PortUnknown { name: name.into() }) };
    match proto {
        Some(Proto::Tcp) if s.tcp.is_none() => {
            Err(K::PortWrongProto { name: name.into(), proto: "udp" })
        }
        Some(Proto::Udp) if s.udp.is_none() => {
            Err(K::PortWrongProto { name: name.into(), proto: "tcp" })
        }
        _ => Ok(()),
    }
}

/// Two resolvers in order: what the first does not know is asked of the second (in tests, the
/// libpcap corpus's name fixtures over the system's files).
#[derive(Debug, Default)]
pub struct Layered<A, B>(pub A, pub B);

impl<A: Resolver, B: Resolver> Resolver for Layered<A, B> {
    fn service(&self, name: &str) -> Option<Service> {
        self.0.service(name).or_else(|| self.1.service(name))
    }
    fn protocol(&self, name: &str) -> Option<u8> {
        self.0.protocol(name).or_else(|| self.1.protocol(name))
    }
    fn host(&self, name: &str) -> Vec<IpAddr> {
        let v = self.0.host(name);
        if v.is_empty() { self.1.host(name) } else { v }
    }
    fn ether(&self, name: &str) -> Option<[u8; 6]> {
        self.0.ether(name).or_else(|| self.1.ether(name))
    }
    fn network(&self, name: &str) -> Option<u32> {
        self.0.network(name).or_else(|| self.1.network(name))
    }
}
