//! What the firewall's text-driven tests share: reading an address with its port and TCP
//! flags as their case files write them.
#![allow(dead_code)] // each test binary uses its part

use std::net::IpAddr;

/// `[v6]:port`, `v4:port`, or a bare address (port 0).
pub fn addr_port(s: &str) -> (IpAddr, u16) {
    if let Some(rest) = s.strip_prefix('[') {
        let (a, p) = rest.split_once("]:").expect("[addr]:port");
        return (a.parse().expect("address"), p.parse().expect("port"));
    }
    match s.rsplit_once(':') {
        Some((a, p)) if !a.contains(':') => (a.parse().expect("address"), p.parse().expect("port")),
        _ => (s.parse().expect("address"), 0),
    }
}

/// TCP flags as letters (`SA`, `FPA`; `-` for none): F S R P A U E W.
pub fn flags(s: &str) -> u8 {
    if s == "-" {
        return 0;
    }
    s.chars().fold(0, |f, c| {
        f | match c {
            'F' => 0x01,
            'S' => 0x02,
            'R' => 0x04,
            'P' => 0x08,
            'A' => 0x10,
            'U' => 0x20,
            'E' => 0x40,
            'W' => 0x80,
            _ => panic!("flag {c}"),
        }
    })
}
pub mod conversation;
pub mod random;
