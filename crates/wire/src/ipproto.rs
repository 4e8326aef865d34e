//! IP protocol numbers (the IPv4 protocol field, the IPv6 next-header field).

/// IPv6 hop-by-hop options.
pub const HOPOPTS: u8 = 0;
/// ICMP.
pub const ICMP: u8 = 1;
/// IGMP.
pub const IGMP: u8 = 2;
/// IPv4 in IP.
pub const IPIP: u8 = 4;
/// TCP.
pub const TCP: u8 = 6;
/// EGP.
pub const EGP: u8 = 8;
/// Cisco IGRP.
pub const IGRP: u8 = 9;
/// UDP.
pub const UDP: u8 = 17;
/// DCCP.
pub const DCCP: u8 = 33;
/// IPv6 in IP.
pub const IPV6: u8 = 41;
/// IPv6 routing header.
pub const ROUTING: u8 = 43;
/// IPv6 fragment header.
pub const FRAGMENT: u8 = 44;
/// RSVP.
pub const RSVP: u8 = 46;
/// GRE.
pub const GRE: u8 = 47;
/// IPsec ESP.
pub const ESP: u8 = 50;
/// IPsec authentication header.
pub const AH: u8 = 51;
/// ICMPv6.
pub const ICMPV6: u8 = 58;
/// IP Mobility (Min Encap).
pub const MOBILE: u8 = 55;
/// IPv6 "no next header".
pub const NONE: u8 = 59;
/// IPv6 destination options.
pub const DSTOPTS: u8 = 60;
/// Mobile IP, the number before RFC 2004 took 55.
pub const MOBILE_OLD: u8 = 62;
/// EIGRP.
pub const EIGRP: u8 = 88;
/// OSPF.
pub const OSPF: u8 = 89;
/// PIM.
pub const PIM: u8 = 103;
/// IP payload compression.
pub const IPCOMP: u8 = 108;
/// VRRP (also CARP, which shares the number).
pub const VRRP: u8 = 112;
/// PGM reliable multicast.
pub const PGM: u8 = 113;
/// SCTP.
pub const SCTP: u8 = 132;
/// IPv6 mobility header.
pub const MOBILITY: u8 = 135;
