//! EtherType values (IEEE 802 numbers in Ethernet, Linux cooked, Cisco HDLC, GRE and SNAP
//! headers). Names for printing live with the printers; these are the numbers.

/// The largest 802.3 length: a type field up to this value is a length, not an EtherType.
pub const MAX_8023_LENGTH: u16 = 1500;
/// The smallest EtherType: type fields from here on name protocols (IEEE 802.3 leaves
/// 1501–1535 undefined; readers treat them as lengths).
pub const MIN_ETHERTYPE: u16 = 0x0600;

/// IPv4.
pub const IPV4: u16 = 0x0800;
/// ARP.
pub const ARP: u16 = 0x0806;
/// Wake-on-LAN.
pub const WOL: u16 = 0x0842;
/// DEC (experimental, used by the first DEC protocols).
pub const DEC: u16 = 0x6000;
/// DEC MOP dump/load.
pub const MOPDL: u16 = 0x6001;
/// DEC MOP remote console.
pub const MOPRC: u16 = 0x6002;
/// DECnet Phase IV.
pub const DECNET: u16 = 0x6003;
/// DEC LAT.
pub const LAT: u16 = 0x6004;
/// DEC SCA.
pub const SCA: u16 = 0x6007;
/// Transparent Ethernet bridging (an Ethernet frame inside GRE and NVGRE).
pub const TEB: u16 = 0x6558;
/// Reverse ARP.
pub const REVARP: u16 = 0x8035;
/// AppleTalk.
pub const ATALK: u16 = 0x809b;
/// AppleTalk ARP.
pub const AARP: u16 = 0x80f3;
/// IEEE 802.1Q VLAN tag.
pub const VLAN: u16 = 0x8100;
/// Novell IPX.
pub const IPX: u16 = 0x8137;
/// IPv6.
pub const IPV6: u16 = 0x86dd;
/// MPLS unicast.
pub const MPLS: u16 = 0x8847;
/// MPLS multicast.
pub const MPLS_MULTICAST: u16 = 0x8848;
/// PPPoE discovery stage.
pub const PPPOE_DISCOVERY: u16 = 0x8863;
/// PPPoE session stage.
pub const PPPOE_SESSION: u16 = 0x8864;
/// IEEE 802.3 slow protocols (LACP, OAM).
pub const SLOW_PROTOCOLS: u16 = 0x8809;
/// PROFINET.
pub const PROFINET: u16 = 0x8892;
/// IEEE 802.1X (EAP over LAN).
pub const EAPOL: u16 = 0x888e;
/// IEEE 802.1ad service VLAN tag (Q-in-Q).
pub const QINQ: u16 = 0x88a8;
/// LLDP.
pub const LLDP: u16 = 0x88cc;
/// MACsec.
pub const MACSEC: u16 = 0x88e5;
/// Precision Time Protocol (IEEE 1588).
pub const PTP: u16 = 0x88f7;
/// Fibre Channel over Ethernet.
pub const FCOE: u16 = 0x8906;
/// FCoE Initialization Protocol.
pub const FIP: u16 = 0x8914;
/// Network Service Header.
pub const NSH: u16 = 0x894f;
/// The pre-standard Q-in-Q tag some switches use.
pub const QINQ_9100: u16 = 0x9100;
/// Ethernet configuration testing protocol (loopback).
pub const LOOPBACK: u16 = 0x9000;

/// The VLAN tag protocol identifiers libpcap's `vlan` accepts (802.1Q, 802.1ad, 0x9100).
pub const VLAN_TPIDS: [u16; 3] = [VLAN, QINQ, QINQ_9100];

/// Whether `ethertype` announces a VLAN tag (one of [`VLAN_TPIDS`]).
#[inline]
pub fn is_vlan_tpid(ethertype: u16) -> bool {
    matches!(ethertype, VLAN | QINQ | QINQ_9100)
}
