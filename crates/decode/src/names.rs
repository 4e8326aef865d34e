//! Number → name tables, spelled as tcpdump spells them. The numbers are [`sift_wire`]'s
//! constants where the workspace names them; the names are tcpdump's and live only here.

use sift_wire::tcp::flags;
use sift_wire::{ethertype, ipproto, loopback};

/// tcpdump's `ethertype_values` for the types sift meets.
pub(crate) fn ethertype(t: u16) -> Option<&'static str> {
    Some(match t {
        ethertype::IPV4 => "IPv4",
        ethertype::ARP => "ARP",
        ethertype::IPV6 => "IPv6",
        ethertype::VLAN => "802.1Q",
        ethertype::QINQ => "802.1Q-QinQ",
        ethertype::QINQ_9100 => "802.1Q-9100",
        ethertype::MPLS => "MPLS unicast",
        ethertype::MPLS_MULTICAST => "MPLS multicast",
        ethertype::PPPOE_DISCOVERY => "PPPoE D",
        ethertype::PPPOE_SESSION => "PPPoE S",
        ethertype::REVARP => "Reverse ARP",
        ethertype::TEB => "TEB",
        ethertype::LLDP => "LLDP",
        ethertype::EAPOL => "EAPOL",
        ethertype::SLOW_PROTOCOLS => "Slow Protocols",
        ethertype::PTP => "PTP",
        ethertype::PROFINET => "PROFINET",
        ethertype::FCOE => "FCoE",
        ethertype::FIP => "FCoE Initialization",
        ethertype::LOOPBACK => "Loopback",
        ethertype::DEC => "DEC",
        ethertype::DECNET => "DECNET",
        ethertype::ATALK => "Appletalk",
        ethertype::AARP => "Appletalk ARP",
        ethertype::IPX => "IPX",
        ethertype::MACSEC => "MACsec",
        ethertype::NSH => "NSH",
        ethertype::WOL => "Wake-on-LAN",
        _ => return None,
    })
}

/// tcpdump's `ipproto_values` (used with `-v`).
pub(crate) fn ip_proto(p: u8) -> Option<&'static str> {
    Some(match p {
        ipproto::HOPOPTS => "Options",
        ipproto::ICMP => "ICMP",
        ipproto::IGMP => "IGMP",
        ipproto::IPIP => "IPIP",
        ipproto::TCP => "TCP",
        ipproto::EGP => "EGP",
        ipproto::IGRP => "IGRP",
        ipproto::UDP => "UDP",
        ipproto::DCCP => "DCCP",
        ipproto::IPV6 => "IPv6",
        ipproto::ROUTING => "Routing",
        ipproto::FRAGMENT => "Fragment",
        ipproto::RSVP => "RSVP",
        ipproto::GRE => "GRE",
        ipproto::ESP => "ESP",
        ipproto::AH => "AH",
        ipproto::MOBILE => "Mobile IP",
        ipproto::ICMPV6 => "ICMPv6",
        ipproto::MOBILE_OLD => "Mobile IP (old)",
        ipproto::EIGRP => "EIGRP",
        ipproto::OSPF => "OSPF",
        ipproto::PIM => "PIM",
        ipproto::IPCOMP => "Compressed IP",
        ipproto::VRRP => "VRRP",
        ipproto::PGM => "PGM",
        ipproto::SCTP => "SCTP",
        ipproto::MOBILITY => "Mobility",
        _ => return None,
    })
}

/// TCP flags as tcpdump letters them (`[S.]`), in its order; the JSON writer adds AE as `e`.
pub(crate) const TCP_FLAGS: [(u16, u8); 8] = [
    (flags::FIN, b'F'),
    (flags::SYN, b'S'),
    (flags::RST, b'R'),
    (flags::PSH, b'P'),
    (flags::ACK, b'.'),
    (flags::URG, b'U'),
    (flags::ECE, b'E'),
    (flags::CWR, b'W'),
];

/// The letters of the flags set in `bits`, in [`TCP_FLAGS`] order (and AE last when `ae`).
pub(crate) fn tcp_flag_letters(out: &mut Vec<u8>, bits: u16, ae: bool) {
    for (bit, c) in TCP_FLAGS {
        if bits & bit != 0 {
            out.push(c);
        }
    }
    if ae && bits & flags::AE != 0 {
        out.push(b'e');
    }
}

/// BSD address families (`AF IPv4 (2)`).
pub(crate) fn bsd_af(f: u32) -> Option<&'static str> {
    Some(match f {
        loopback::AF_INET => "IPv4",
        loopback::AF_OSI => "OSI",
        loopback::AF_APPLETALK => "Appletalk",
        loopback::AF_IPX => "IPX",
        f if loopback::is_inet6(f) => "IPv6",
        _ => return None,
    })
}

/// DNS types (`ns_type2str`).
pub(crate) fn dns_type(t: u16) -> Option<&'static str> {
    Some(match t {
        1 => "A",
        2 => "NS",
        5 => "CNAME",
        6 => "SOA",
        12 => "PTR",
        13 => "HINFO",
        15 => "MX",
        16 => "TXT",
        28 => "AAAA",
        33 => "SRV",
        35 => "NAPTR",
        39 => "DNAME",
        41 => "OPT",
        43 => "DS",
        46 => "RRSIG",
        47 => "NSEC",
        48 => "DNSKEY",
        64 => "SVCB",
        65 => "HTTPS",
        99 => "SPF",
        251 => "IXFR",
        252 => "AXFR",
        255 => "ANY",
        257 => "CAA",
        _ => return None,
    })
}

/// ICMPv6 type names (`icmp6_type_values`).
pub(crate) fn icmp6_type(t: u8) -> Option<&'static str> {
    Some(match t {
        1 => "destination unreachable",
        2 => "packet too big",
        3 => "time exceeded in-transit",
        4 => "parameter problem",
        128 => "echo request",
        129 => "echo reply",
        130 => "multicast listener query",
        131 => "multicast listener report",
        132 => "multicast listener done",
        133 => "router solicitation",
        134 => "router advertisement",
        135 => "neighbor solicitation",
        136 => "neighbor advertisement",
        137 => "redirect",
        138 => "router renumbering",
        139 => "node information query",
        140 => "node information reply",
        141 => "inverse neighbor solicitation",
        142 => "inverse neighbor advertisement",
        143 => "multicast listener report v2",
        144 => "ha discovery request",
        145 => "ha discovery reply",
        146 => "mobile router solicitation",
        147 => "mobile router advertisement",
        151 => "multicast router advertisement",
        152 => "multicast router solicitation",
        153 => "multicast router termination",
        155 => "RPL",
        _ => return None,
    })
}

/// SCTP chunk names (`sctp_chunkid_str`).
pub(crate) fn sctp_chunk(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "DATA",
        1 => "INIT",
        2 => "INIT ACK",
        3 => "SACK",
        4 => "HB REQ",
        5 => "HB ACK",
        6 => "ABORT",
        7 => "SHUTDOWN",
        8 => "SHUTDOWN ACK",
        9 => "OP ERR",
        10 => "COOKIE ECHO",
        11 => "COOKIE ACK",
        12 => "ECN ECHO",
        13 => "ECN CWR",
        14 => "SHUTDOWN COMPLETE",
        15 => "AUTH",
        64 => "I-DATA",
        128 => "ASCONF ACK",
        130 => "RE-CONFIG",
        132 => "PAD",
        192 => "FOR CUM TSN",
        193 => "ASCONF",
        194 => "I-FORWARD-FWD",
        _ => return None,
    })
}

/// Syslog facilities.
pub(crate) const SYSLOG_FACILITY: [&str; 24] = [
    "kernel", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
    "authpriv", "ftp", "ntp", "security", "console", "cron", "local0", "local1", "local2",
    "local3", "local4", "local5", "local6", "local7",
];

/// Syslog severities.
pub(crate) const SYSLOG_SEVERITY: [&str; 8] =
    ["emergency", "alert", "critical", "error", "warning", "notice", "info", "debug"];
