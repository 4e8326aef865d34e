//! The host a rule set is read on: interfaces and their addresses, interface groups, services,
//! protocols, users, groups, host names and files.
//!
//! Why a trait: pfctl resolves `lo0`, `ssh`, `wheel` or `localhost` against the machine it runs
//! on, so the same rule set prints differently on two machines. sift's tests must not depend on
//! the machine, so everything pfctl would ask the system goes through [`Host`]: [`SystemHost`]
//! reads the local `/etc` files and interfaces (never DNS), [`FixtureHost`] is a table — by
//! default the OpenBSD host of pfctl's regression tests, with OpenBSD's services and protocols.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// One address of an interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfAddr {
    /// The address.
    pub addr: IpAddr,
    /// Its prefix length.
    pub prefix: u8,
    /// The broadcast address (IPv4 broadcast interfaces).
    pub broadcast: Option<IpAddr>,
    /// The peer address (point-to-point interfaces).
    pub peer: Option<IpAddr>,
    /// The scope (interface index) of an IPv6 link-local address, 0 otherwise.
    pub scope: u32,
}

/// An interface, its groups and addresses (in the order the system lists them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Its name (`lo0`).
    pub name: String,
    /// Its index.
    pub index: u32,
    /// The groups it belongs to (`lo`, `egress`…).
    pub groups: Vec<String>,
    /// Whether it is a loopback interface.
    pub loopback: bool,
    /// Whether it is point-to-point.
    pub pointopoint: bool,
    /// Whether it has a broadcast address.
    pub broadcast: bool,
    /// Its addresses.
    pub addrs: Vec<IfAddr>,
}

/// What pfctl asks the system while reading a rule set.
pub trait Host {
    /// The interfaces, in the system's order.
    fn interfaces(&self) -> &[Interface];
    /// The port of a service (`getservbyname`), for `tcp` or `udp`.
    fn service(&self, name: &str, proto: &str) -> Option<u16>;
    /// A protocol's number by name or alias (`getprotobyname`).
    fn protocol_number(&self, name: &str) -> Option<u8>;
    /// A protocol's name by number (`getprotobynumber`).
    fn protocol_name(&self, number: u8) -> Option<String>;
    /// A user's id.
    fn user(&self, name: &str) -> Option<u32>;
    /// A group's id.
    fn group(&self, name: &str) -> Option<u32>;
    /// The addresses of a host name (from the hosts file; sift never asks DNS).
    fn host_addrs(&self, name: &str) -> Vec<IpAddr>;
    /// Reads a file named in the rule set (`include`, `file`, `load anchor`).
    fn read_file(&self, path: &str) -> std::io::Result<String>;

    /// The interface or group called `name`, if any (pfctl's `ifa_exists`).
    fn if_exists(&self, name: &str) -> bool {
        self.interfaces().iter().any(|i| i.name == name || i.groups.iter().any(|g| g == name))
    }
    /// An interface's index by name, 0 when unknown.
    fn if_index(&self, name: &str) -> u32 {
        self.interfaces().iter().find(|i| i.name == name).map_or(0, |i| i.index)
    }
    /// An interface's name by index.
    fn if_name(&self, index: u32) -> Option<String> {
        if index == 0 {
            return None;
        }
        self.interfaces().iter().find(|i| i.index == index).map(|i| i.name.clone())
    }
}

/// A services database: (name or alias, port, protocol).
#[derive(Clone, Debug, Default)]
pub struct Services(Vec<(String, u16, String)>);

impl Services {
    /// Parses `/etc/services` text.
    pub fn parse(text: &str) -> Services {
        let mut out = Vec::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            let (Some(name), Some(pp)) = (words.next(), words.next()) else { continue };
            let Some((port, proto)) = pp.split_once('/') else { continue };
            let Ok(port) = port.parse::<u16>() else { continue };
            out.push((name.to_string(), port, proto.to_string()));
            for alias in words {
                out.push((alias.to_string(), port, proto.to_string()));
            }
        }
        Services(out)
    }

    /// The port of `name` for `proto`.
    pub fn lookup(&self, name: &str, proto: &str) -> Option<u16> {
        self.0.iter().find(|(n, _, p)| n == name && p == proto).map(|e| e.1)
    }
}

/// A protocols database: (name, number, aliases).
#[derive(Clone, Debug, Default)]
pub struct Protocols(Vec<(String, u8, Vec<String>)>);

impl Protocols {
    /// Parses `/etc/protocols` text.
    pub fn parse(text: &str) -> Protocols {
        let mut out = Vec::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            let (Some(name), Some(num)) = (words.next(), words.next()) else { continue };
            let Ok(num) = num.parse::<u8>() else { continue };
            out.push((name.to_string(), num, words.map(str::to_string).collect()));
        }
        Protocols(out)
    }

    /// A number by name or alias.
    pub fn number(&self, name: &str) -> Option<u8> {
        self.0.iter().find(|(n, _, a)| n == name || a.iter().any(|x| x == name)).map(|e| e.1)
    }

    /// A name by number.
    pub fn name(&self, number: u8) -> Option<String> {
        self.0.iter().find(|e| e.1 == number).map(|e| e.0.clone())
    }
}

/// OpenBSD's services, the subset the fixture host knows (from OpenBSD's `/etc/services`).
pub const OPENBSD_SERVICES: &str = include_str!("../data/services");
/// OpenBSD's protocols, the subset the fixture host knows (from OpenBSD's `/etc/protocols`).
pub const OPENBSD_PROTOCOLS: &str = include_str!("../data/protocols");

/// A host described by a table, for tests and for reproducible output.
#[derive(Clone, Debug)]
pub struct FixtureHost {
    /// The interfaces.
    pub interfaces: Vec<Interface>,
    /// The services.
    pub services: Services,
    /// The protocols.
    pub protocols: Protocols,
    /// Users and their ids.
    pub users: Vec<(String, u32)>,
    /// Groups and their ids.
    pub groups: Vec<(String, u32)>,
    /// Host names and their addresses.
    pub hosts: Vec<(String, Vec<IpAddr>)>,
    /// The directory relative file names are read from.
    pub dir: PathBuf,
    /// Whether files may be read at all (a fuzzer's host reads none).
    pub files: bool,
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

impl FixtureHost {
    /// The OpenBSD host pfctl's regression tests ran on: `lo0` (127.0.0.1/8, ::1,
    /// fe80::1%lo0), `lo1000000`, `tun1000000`, `tun1000001`, `enc0`, the `egress` group,
    /// OpenBSD's services, protocols, users and groups; files are read from `dir`.
    pub fn openbsd(dir: impl Into<PathBuf>) -> FixtureHost {
        let plain = |name: &str, index: u32, group: &str, loopback: bool, p2p: bool| Interface {
            name: name.into(),
            index,
            groups: vec![group.into()],
            loopback,
            pointopoint: p2p,
            broadcast: false,
            addrs: vec![],
        };
        let mut lo0 = plain("lo0", 3, "lo", true, false);
        lo0.addrs = vec![
            IfAddr { addr: ip("::1"), prefix: 128, broadcast: None, peer: None, scope: 0 },
            IfAddr { addr: ip("fe80::1"), prefix: 64, broadcast: None, peer: None, scope: 3 },
            IfAddr { addr: ip("127.0.0.1"), prefix: 8, broadcast: None, peer: None, scope: 0 },
        ];
        let mut tun0 = plain("tun1000000", 6, "tun", false, true);
        tun0.groups.push("egress".into());
        FixtureHost {
            interfaces: vec![
                plain("enc0", 2, "enc", false, false),
                lo0,
                plain("lo1000000", 5, "lo", true, false),
                tun0,
                plain("tun1000001", 7, "tun", false, true),
            ],
            services: Services::parse(OPENBSD_SERVICES),
            protocols: Protocols::parse(OPENBSD_PROTOCOLS),
            users: [("root", 0), ("daemon", 1), ("operator", 2), ("bin", 3), ("nobody", 32767)]
                .iter()
                .map(|(n, i)| (n.to_string(), *i))
                .collect(),
            groups: [
                ("wheel", 0),
                ("daemon", 1),
                ("kmem", 2),
                ("sys", 3),
                ("tty", 4),
                ("operator", 5),
                ("bin", 7),
                ("staff", 20),
                ("sshd", 27),
                ("nogroup", 32766),
                ("nobody", 32767),
            ]
            .iter()
            .map(|(n, i)| (n.to_string(), *i))
            .collect(),
            hosts: vec![("localhost".into(), vec![ip("127.0.0.1"), ip("::1")])],
            dir: dir.into(),
            files: true,
        }
    }
}

impl Host for FixtureHost {
    fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }
    fn service(&self, name: &str, proto: &str) -> Option<u16> {
        self.services.lookup(name, proto)
    }
    fn protocol_number(&self, name: &str) -> Option<u8> {
        self.protocols.number(name)
    }
    fn protocol_name(&self, number: u8) -> Option<String> {
        self.protocols.name(number)
    }
    fn user(&self, name: &str) -> Option<u32> {
        self.users.iter().find(|u| u.0 == name).map(|u| u.1)
    }
    fn group(&self, name: &str) -> Option<u32> {
        self.groups.iter().find(|g| g.0 == name).map(|g| g.1)
    }
    fn host_addrs(&self, name: &str) -> Vec<IpAddr> {
        self.hosts.iter().find(|h| h.0 == name).map(|h| h.1.clone()).unwrap_or_default()
    }
    fn read_file(&self, path: &str) -> std::io::Result<String> {
        if !self.files {
            return Err(std::io::ErrorKind::NotFound.into());
        }
        read_relative(&self.dir, path)
    }
}

/// The largest file a rule set may include, load or fill a table from (`/dev/zero` must not
/// exhaust memory).
pub const MAX_FILE: u64 = 16 << 20;

fn read_relative(dir: &Path, path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let p = Path::new(path);
    let full = if p.is_absolute() { p.to_path_buf() } else { dir.join(p) };
    let mut bytes = Vec::new();
    std::fs::File::open(full)?.take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The machine sift runs on: `/etc/services`, `/etc/protocols`, `/etc/passwd`, `/etc/group`,
/// `/etc/hosts` and the interfaces in `/proc/net` (no DNS); OpenBSD's tables fill in when a
/// file is missing.
#[derive(Clone, Debug)]
pub struct SystemHost {
    inner: FixtureHost,
}

impl SystemHost {
    /// Reads the system's tables; relative files are read from the current directory.
    pub fn load() -> SystemHost {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let mut inner = FixtureHost::openbsd(".");
        inner.interfaces = system_interfaces();
        if let Some(t) = read("/etc/services") {
            inner.services = Services::parse(&t);
        }
        if let Some(t) = read("/etc/protocols") {
            inner.protocols = Protocols::parse(&t);
        }
        let ids = |t: &str| -> Vec<(String, u32)> {
            t.lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split(':').collect();
                    Some((f.first()?.to_string(), f.get(2)?.parse().ok()?))
                })
                .collect()
        };
        if let Some(t) = read("/etc/passwd") {
            inner.users = ids(&t);
        }
        if let Some(t) = read("/etc/group") {
            inner.groups = ids(&t);
        }
        if let Some(t) = read("/etc/hosts") {
            let mut hosts: Vec<(String, Vec<IpAddr>)> = Vec::new();
            for line in t.lines() {
                let line = line.split('#').next().unwrap_or("");
                let mut w = line.split_whitespace();
                let Some(Ok(a)) = w.next().map(str::parse::<IpAddr>) else { continue };
                for name in w {
                    match hosts.iter_mut().find(|h| h.0 == name) {
                        Some(h) => h.1.push(a),
                        None => hosts.push((name.to_string(), vec![a])),
                    }
                }
            }
            inner.hosts = hosts;
        }
        SystemHost { inner }
    }
}

/// The machine's interfaces and addresses without a netlink socket: names and indexes from
/// `/sys/class/net`, IPv4 addresses from the local routes of `/proc/net/fib_trie` matched to
/// interfaces through `/proc/net/route` (loopback addresses go to `lo`), IPv6 addresses from
/// `/proc/net/if_inet6`.
fn system_interfaces() -> Vec<Interface> {
    let mut out: Vec<Interface> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        let mut names: Vec<String> =
            dir.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
        names.sort();
        for name in names {
            let index = std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            let group: String = name.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
            out.push(Interface {
                loopback: name == "lo",
                name,
                index,
                groups: vec![group],
                pointopoint: false,
                broadcast: false,
                addrs: vec![],
            });
        }
    }
    add_ipv4(&mut out);
    if let Ok(t) = std::fs::read_to_string("/proc/net/if_inet6") {
        for line in t.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || f[0].len() != 32 {
                continue;
            }
            let mut bytes = [0u8; 16];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = u8::from_str_radix(&f[0][2 * i..2 * i + 2], 16).unwrap_or(0);
            }
            let prefix = u8::from_str_radix(f[2], 16).unwrap_or(128);
            let scope = u8::from_str_radix(f[3], 16).unwrap_or(0);
            let index = u32::from_str_radix(f[1], 16).unwrap_or(0);
            if let Some(i) = out.iter_mut().find(|i| i.name == f[5]) {
                i.addrs.push(IfAddr {
                    addr: IpAddr::V6(bytes.into()),
                    prefix,
                    broadcast: None,
                    peer: None,
                    scope: if scope == 0x20 { index } else { 0 },
                });
            }
        }
    }
    out
}

/// IPv4 addresses of the interfaces, from `/proc/net/fib_trie` and `/proc/net/route`.
fn add_ipv4(out: &mut [Interface]) {
    let Ok(trie) = std::fs::read_to_string("/proc/net/fib_trie") else { return };
    let mut local: Vec<std::net::Ipv4Addr> = Vec::new();
    let mut last: Option<std::net::Ipv4Addr> = None;
    for line in trie.lines() {
        let t = line.trim();
        if let Some(a) = t.strip_prefix("|-- ") {
            last = a.parse().ok();
        } else if t.starts_with("/32 host LOCAL")
            && let Some(a) = last
            && !local.contains(&a)
        {
            local.push(a);
        }
    }
    let routes: Vec<(String, u32, u32)> = std::fs::read_to_string("/proc/net/route")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let dest = u32::from_str_radix(f.get(1)?, 16).ok()?.swap_bytes();
            let gw = u32::from_str_radix(f.get(2)?, 16).ok()?;
            let mask = u32::from_str_radix(f.get(7)?, 16).ok()?.swap_bytes();
            (gw == 0).then(|| (f[0].to_string(), dest, mask))
        })
        .collect();
    for a in local {
        let v = u32::from(a);
        let (name, prefix) = if a.is_loopback() {
            ("lo".to_string(), 8)
        } else {
            match routes.iter().filter(|r| v & r.2 == r.1).max_by_key(|r| r.2.count_ones()) {
                Some(r) => (r.0.clone(), r.2.count_ones() as u8),
                None => continue,
            }
        };
        if let Some(i) = out.iter_mut().find(|i| i.name == name) {
            i.addrs.push(IfAddr {
                addr: IpAddr::V4(a),
                prefix,
                broadcast: None,
                peer: None,
                scope: 0,
            });
        }
    }
}

impl Host for SystemHost {
    fn interfaces(&self) -> &[Interface] {
        &self.inner.interfaces
    }
    fn service(&self, name: &str, proto: &str) -> Option<u16> {
        self.inner.service(name, proto)
    }
    fn protocol_number(&self, name: &str) -> Option<u8> {
        self.inner.protocol_number(name)
    }
    fn protocol_name(&self, number: u8) -> Option<String> {
        self.inner.protocol_name(number)
    }
    fn user(&self, name: &str) -> Option<u32> {
        self.inner.user(name)
    }
    fn group(&self, name: &str) -> Option<u32> {
        self.inner.group(name)
    }
    fn host_addrs(&self, name: &str) -> Vec<IpAddr> {
        self.inner.host_addrs(name)
    }
    fn read_file(&self, path: &str) -> std::io::Result<String> {
        read_relative(Path::new("."), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openbsd_tables_resolve_the_regression_names() {
        let h = FixtureHost::openbsd(".");
        assert_eq!(h.service("ident", "tcp"), Some(113));
        assert_eq!(h.service("www", "tcp"), Some(80));
        assert_eq!(h.protocol_number("icmp6"), Some(58));
        assert_eq!(h.protocol_name(58).as_deref(), Some("ipv6-icmp"));
        assert!(h.if_exists("egress"));
        assert_eq!(h.group("sshd"), Some(27));
    }
}
