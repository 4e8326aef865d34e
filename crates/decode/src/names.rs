//! Number → name tables, spelled as tcpdump spells them.

/// tcpdump's `ethertype_values` for the types sift meets.
pub(crate) fn ethertype(t: u16) -> Option<&'static str> {
    Some(match t {
        0x0800 => "IPv4",
        0x0806 => "ARP",
        0x86dd => "IPv6",
        0x8100 => "802.1Q",
        0x88a8 => "802.1Q-QinQ",
        0x9100 => "802.1Q-9100",
        0x8847 => "MPLS unicast",
        0x8848 => "MPLS multicast",
        0x8863 => "PPPoE D",
        0x8864 => "PPPoE S",
        0x8035 => "Reverse ARP",
        0x6558 => "TEB",
        0x88cc => "LLDP",
        0x888e => "EAPOL",
        0x8809 => "Slow Protocols",
        0x88f7 => "PTP",
        0x8892 => "PROFINET",
        0x8906 => "FCoE",
        0x8914 => "FCoE Initialization",
        0x9000 => "Loopback",
        0x6000 => "DEC",
        0x6003 => "DECNET",
        0x809b => "Appletalk",
        0x80f3 => "Appletalk ARP",
        0x8137 => "IPX",
        0x88e5 => "MACsec",
        0x894f => "NSH",
        0x0842 => "Wake-on-LAN",
        _ => return None,
    })
}

/// tcpdump's `ipproto_values` (used with `-v`).
pub(crate) fn ip_proto(p: u8) -> Option<&'static str> {
    Some(match p {
        0 => "Options",
        1 => "ICMP",
        2 => "IGMP",
        4 => "IPIP",
        6 => "TCP",
        8 => "EGP",
        9 => "IGRP",
        17 => "UDP",
        33 => "DCCP",
        41 => "IPv6",
        43 => "Routing",
        44 => "Fragment",
        46 => "RSVP",
        47 => "GRE",
        50 => "ESP",
        51 => "AH",
        55 => "Mobile IP",
        58 => "ICMPv6",
        62 => "Mobile IP (old)",
        88 => "EIGRP",
        89 => "OSPF",
        103 => "PIM",
        108 => "Compressed IP",
        112 => "VRRP",
        113 => "PGM",
        132 => "SCTP",
        135 => "Mobility",
        _ => return None,
    })
}

/// BSD address families (`AF IPv4 (2)`).
pub(crate) fn bsd_af(f: u32) -> Option<&'static str> {
    Some(match f {
        2 => "IPv4",
        7 => "OSI",
        16 => "Appletalk",
        23 => "IPX",
        24 | 28 | 30 => "IPv6",
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
