//! The address and port pools the generator draws from.
//!
//! They are public and fixed so that tests and benchmarks can write filters that match a known,
//! useful fraction of the traffic (`net 10.0.0.0/24`, `host 10.0.0.10`, `port 443`…). All
//! "internet" addresses come from the documentation ranges (RFC 5737, RFC 3849): generated
//! captures never name a real host.
//!
//! Hosts are picked with a skew toward the low indices, so a few hosts carry most of the
//! traffic, as on a real network.

use crate::build::Mac;

/// The local IPv4 network of the clients (the capture point's LAN).
pub const LAN_V4: ([u8; 4], u8) = ([10, 0, 0, 0], 24);
/// The default gateway on the LAN (IPv4); remote traffic goes through its MAC.
pub const GATEWAY_V4: [u8; 4] = [10, 0, 0, 1];
/// The DNS resolver on the LAN.
pub const RESOLVER_V4: [u8; 4] = [10, 0, 0, 53];
/// Number of client hosts: `10.0.0.10` … `10.0.0.(10 + CLIENTS - 1)`.
pub const CLIENTS: u32 = 40;
/// The first client host number.
pub const FIRST_CLIENT: u32 = 10;

/// Remote IPv4 server networks and how many hosts of each are used (from `.1`).
pub const SERVER_NETS_V4: [([u8; 4], u32); 4] =
    [([192, 0, 2, 0], 20), ([198, 51, 100, 0], 40), ([203, 0, 113, 0], 10), ([10, 1, 0, 0], 16)];
/// Tunnel endpoints (VXLAN/Geneve/GRE outer addresses): `10.2.0.1` … `10.2.0.8`.
pub const VTEPS_V4: ([u8; 4], u32) = ([10, 2, 0, 0], 8);

/// The local IPv6 prefix (/64) of the clients; host `n` is `2001:db8:1::n` (hex digits of n).
pub const LAN_V6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// The IPv6 gateway, `2001:db8:1::1`.
pub const GATEWAY_V6: [u8; 16] = with_host(LAN_V6, 1);
/// The IPv6 resolver, `2001:db8:1::53`.
pub const RESOLVER_V6: [u8; 16] = with_host(LAN_V6, 0x53);
/// The remote IPv6 server prefix, `2001:db8:2::/64`; hosts `::1` … `::(SERVERS_V6)`.
pub const SERVER_NET_V6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// Number of IPv6 servers.
pub const SERVERS_V6: u32 = 30;

/// TCP server ports with their weights.
pub const TCP_SERVICES: [(u32, u16); 5] = [(45, 443), (30, 80), (8, 8080), (7, 8443), (10, 9)];
/// The UDP port of the syslog-like flows.
pub const SYSLOG_PORT: u16 = 514;
/// The UDP port of bulk (fragmented) datagrams: discard.
pub const DISCARD_PORT: u16 = 9;
/// The SCTP server port.
pub const SCTP_PORT: u16 = 9899;
/// The ephemeral port range used by clients (Linux default).
pub const EPHEMERAL: (u16, u16) = (32768, 60999);

/// Names queried over DNS (answers point at the server pools).
pub const DNS_NAMES: [&str; 12] = [
    "example.com",
    "www.example.com",
    "api.example.net",
    "cdn.example.org",
    "mail.example.com",
    "login.example.net",
    "static.example.org",
    "updates.example.com",
    "time.example.net",
    "images.example.org",
    "git.example.com",
    "missing.example.invalid",
];

/// An IPv6 address in `prefix` with the low 32 bits set to `host`.
pub const fn with_host(prefix: [u8; 16], host: u32) -> [u8; 16] {
    let mut a = prefix;
    let h = host.to_be_bytes();
    a[12] = h[0];
    a[13] = h[1];
    a[14] = h[2];
    a[15] = h[3];
    a
}

/// The MAC address of a LAN host given its IPv4 address: `02:00:` + the four address bytes
/// (locally administered, so it can never collide with a real vendor's).
pub const fn mac_of(ip: [u8; 4]) -> Mac {
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

/// The gateway's MAC.
pub const GATEWAY_MAC: Mac = mac_of(GATEWAY_V4);
/// The resolver's MAC.
pub const RESOLVER_MAC: Mac = mac_of(RESOLVER_V4);
/// Ethernet broadcast.
pub const BROADCAST: Mac = [0xff; 6];

/// The solicited-node multicast address of `target` (RFC 4291 §2.7.1).
pub fn solicited_node(target: [u8; 16]) -> [u8; 16] {
    [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]]
}

/// The Ethernet multicast MAC of an IPv6 multicast address (RFC 2464 §7).
pub fn ipv6_multicast_mac(group: [u8; 16]) -> Mac {
    [0x33, 0x33, group[12], group[13], group[14], group[15]]
}

/// The link-local address derived from a MAC (modified EUI-64).
pub fn link_local(mac: Mac) -> [u8; 16] {
    [0xfe, 0x80, 0, 0, 0, 0, 0, 0, mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]]
}
