//! Link-layer header types: names for the numbers, as tcpdump and libpcap spell them.
//!
//! The table covers the types sift's compiler and printer know about plus the common others; an
//! unknown number prints as `LINKTYPE_<n>`-style `DLT <n>`.

/// `(LINKTYPE number, name as in pcap_datalink_val_to_name, description)`.
const TABLE: &[(u16, &str, &str)] = &[
    (0, "NULL", "BSD loopback"),
    (1, "EN10MB", "Ethernet"),
    (6, "IEEE802", "Token ring"),
    (8, "SLIP", "SLIP"),
    (9, "PPP", "PPP"),
    (10, "FDDI", "FDDI"),
    (50, "PPP_SERIAL", "PPP over serial"),
    (51, "PPP_ETHER", "PPPoE"),
    (101, "RAW", "Raw IP"),
    (104, "C_HDLC", "Cisco HDLC"),
    (105, "IEEE802_11", "802.11"),
    (108, "LOOP", "OpenBSD loopback"),
    (109, "ENC", "OpenBSD encapsulated IP"),
    (113, "LINUX_SLL", "Linux cooked v1"),
    (117, "PFLOG", "OpenBSD pflog"),
    (119, "PRISM_HEADER", "802.11 plus Prism header"),
    (127, "IEEE802_11_RADIO", "802.11 plus radiotap header"),
    (129, "ARCNET_LINUX", "Linux ARCNET"),
    (138, "APPLE_IP_OVER_IEEE1394", "Apple IP-over-IEEE 1394"),
    (143, "DOCSIS", "DOCSIS"),
    (163, "IEEE802_11_RADIO_AVS", "802.11 plus AVS radio information header"),
    (165, "BACNET_MS_TP", "BACnet MS/TP"),
    (192, "PPI", "Per-Packet Information"),
    (228, "IPV4", "Raw IPv4"),
    (229, "IPV6", "Raw IPv6"),
    (276, "LINUX_SLL2", "Linux cooked v2"),
];

/// The tcpdump name of a link type (`EN10MB`, `LINUX_SLL2`…), if known.
pub fn name(link_type: u16) -> Option<&'static str> {
    TABLE.iter().find(|(n, _, _)| *n == link_type).map(|(_, name, _)| *name)
}

/// A human description of a link type (`Ethernet`…), if known.
pub fn description(link_type: u16) -> Option<&'static str> {
    TABLE.iter().find(|(n, _, _)| *n == link_type).map(|(_, _, d)| *d)
}

/// Parses a link-type name (case-insensitive, with or without `DLT_`/`LINKTYPE_`) or number.
pub fn from_name(text: &str) -> Option<u16> {
    if let Ok(n) = text.parse::<u16>() {
        return Some(n);
    }
    let upper = text.to_ascii_uppercase();
    let bare =
        upper.strip_prefix("DLT_").or_else(|| upper.strip_prefix("LINKTYPE_")).unwrap_or(&upper);
    TABLE.iter().find(|(_, name, _)| *name == bare).map(|(n, _, _)| *n)
}

/// The name if known, else `DLT <n>`.
pub fn display(link_type: u16) -> String {
    name(link_type).map_or_else(|| format!("DLT {link_type}"), str::to_owned)
}
