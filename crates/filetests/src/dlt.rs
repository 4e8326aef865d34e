//! Link-type names and numbers.
//!
//! The corpus names link types the way `tcpdump -y` does (`EN10MB`, `RAW`…). Two number spaces
//! meet here: **DLT** numbers are what `pcap_open_dead` and libpcap's code generator take and
//! differ between operating systems; **LINKTYPE** numbers are what capture files store and are
//! the same everywhere. On Linux they differ for a handful of types (`RAW` is DLT 12 but
//! LINKTYPE 101, `SLIP_BSDOS` 15/102, `PPP_BSDOS` 16/103, `ATM_RFC1483` 11/100, `ATM_CLIP`
//! 19/106). The table holds every link type the corpus names, with Linux's DLT values (read from
//! libpcap 1.10.3's `pcap/dlt.h`, plus the 1.11 additions from the LINKTYPE registry).

/// One link type: its `tcpdump -y` name, its DLT number on Linux and its LINKTYPE number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkType {
    /// The name without the `DLT_` prefix, as the corpus spells it.
    pub name: &'static str,
    /// The DLT number on Linux (what `pcap_open_dead` takes).
    pub dlt: i32,
    /// The LINKTYPE number stored in capture files.
    pub linktype: u32,
}

/// `(name, DLT on Linux, LINKTYPE)` for every link type the corpus names.
const TABLE: &[(&str, i32, u32)] = &[
    ("A429", 184, 184),
    ("A653_ICM", 185, 185),
    ("AOS", 222, 222),
    ("APPLE_IP_OVER_IEEE1394", 138, 138),
    ("ARCNET", 7, 7),
    ("ARCNET_LINUX", 129, 129),
    ("ATM_CLIP", 19, 106),
    ("ATM_RFC1483", 11, 100),
    ("ATSC_ALP", 289, 289),
    ("AUERSWALD_LOG", 296, 296),
    ("AX25", 3, 3),
    ("AX25_KISS", 202, 202),
    ("BACNET_MS_TP", 165, 165),
    ("BLUETOOTH_BREDR_BB", 255, 255),
    ("BLUETOOTH_HCI_H4", 187, 187),
    ("BLUETOOTH_HCI_H4_WITH_PHDR", 201, 201),
    ("BLUETOOTH_LE_LL", 251, 251),
    ("BLUETOOTH_LE_LL_WITH_PHDR", 256, 256),
    ("BLUETOOTH_LINUX_MONITOR", 254, 254),
    ("CAN20B", 190, 190),
    ("CAN_SOCKETCAN", 227, 227),
    ("CHAOS", 5, 5),
    ("C_HDLC", 104, 104),
    ("DBUS", 231, 231),
    ("DECT", 221, 221),
    ("DECT_NR", 301, 301),
    ("DISPLAYPORT_AUX", 275, 275),
    ("DOCSIS", 143, 143),
    ("DOCSIS31_XRA31", 273, 273),
    ("DSA_TAG_BRCM", 281, 281),
    ("DSA_TAG_BRCM_PREPEND", 282, 282),
    ("DSA_TAG_DSA", 284, 284),
    ("DSA_TAG_EDSA", 285, 285),
    ("DVB_CI", 235, 235),
    ("EBHSCR", 279, 279),
    ("ELEE", 286, 286),
    ("EN10MB", 1, 1),
    ("EN3MB", 2, 2),
    ("ENC", 109, 109),
    ("EPON", 259, 259),
    ("ERF", 197, 197),
    ("ERF_ETH", 175, 175),
    ("ERF_POS", 176, 176),
    ("ETHERNET_MPACKET", 274, 274),
    ("ETW", 290, 290),
    ("FC_2", 224, 224),
    ("FC_2_WITH_FRAME_DELIMS", 225, 225),
    ("FDDI", 10, 10),
    ("FIRA_UCI", 299, 299),
    ("FRELAY", 107, 107),
    ("GPF_F", 171, 171),
    ("GPF_T", 170, 170),
    ("GPRS_LLC", 169, 169),
    ("I2C_LINUX", 209, 209),
    ("IEEE802", 6, 6),
    ("IEEE802_11", 105, 105),
    ("IEEE802_11_RADIO", 127, 127),
    ("IEEE802_11_RADIO_AVS", 163, 163),
    ("IEEE802_15_4", 195, 195),
    ("IEEE802_15_4_LINUX", 191, 191),
    ("IEEE802_15_4_NOFCS", 230, 230),
    ("IEEE802_15_4_NONASK_PHY", 215, 215),
    ("IEEE802_15_4_TAP", 283, 283),
    ("IEEE802_16_MAC_CPS", 188, 188),
    ("IEEE802_16_MAC_CPS_RADIO", 193, 193),
    ("INFINIBAND", 247, 247),
    ("IPMB_KONTRON", 199, 199),
    ("IPMI_HPM_2", 260, 260),
    ("IPNET", 226, 226),
    ("IPOIB", 242, 242),
    ("IPV4", 228, 228),
    ("IPV6", 229, 229),
    ("IP_OVER_FC", 122, 122),
    ("ISO_14443", 264, 264),
    ("JUNIPER_ATM1", 137, 137),
    ("JUNIPER_ATM2", 135, 135),
    ("JUNIPER_ATM_CEMIC", 238, 238),
    ("JUNIPER_CHDLC", 181, 181),
    ("JUNIPER_ES", 132, 132),
    ("JUNIPER_ETHER", 178, 178),
    ("JUNIPER_FIBRECHANNEL", 234, 234),
    ("JUNIPER_FRELAY", 180, 180),
    ("JUNIPER_GGSN", 133, 133),
    ("JUNIPER_ISM", 194, 194),
    ("JUNIPER_MFR", 134, 134),
    ("JUNIPER_MLFR", 131, 131),
    ("JUNIPER_MLPPP", 130, 130),
    ("JUNIPER_MONITOR", 164, 164),
    ("JUNIPER_PIC_PEER", 174, 174),
    ("JUNIPER_PPP", 179, 179),
    ("JUNIPER_PPPOE", 167, 167),
    ("JUNIPER_PPPOE_ATM", 168, 168),
    ("JUNIPER_SERVICES", 136, 136),
    ("JUNIPER_SRX_E2E", 233, 233),
    ("JUNIPER_ST", 200, 200),
    ("JUNIPER_VP", 183, 183),
    ("JUNIPER_VS", 232, 232),
    ("LINUX_EVDEV", 216, 216),
    ("LINUX_IRDA", 144, 144),
    ("LINUX_LAPD", 177, 177),
    ("LINUX_SLL", 113, 113),
    ("LINUX_SLL2", 276, 276),
    ("LOOP", 108, 108),
    ("LTALK", 114, 114),
    ("MDB", 300, 300),
    ("MFR", 182, 182),
    ("MPEG_2_TS", 243, 243),
    ("MPLS", 219, 219),
    ("MTP2", 140, 140),
    ("MTP2_WITH_PHDR", 139, 139),
    ("MTP3", 141, 141),
    ("MUX27010", 236, 236),
    ("NETANALYZER", 240, 240),
    ("NETANALYZER_NG", 291, 291),
    ("NETANALYZER_TRANSPARENT", 241, 241),
    ("NETLINK", 253, 253),
    ("NFC_LLCP", 245, 245),
    ("NFLOG", 239, 239),
    ("NG40", 244, 244),
    ("NORDIC_BLE", 272, 272),
    ("NULL", 0, 0),
    ("OPENFLOW", 267, 267),
    ("OPENVIZSLA", 278, 278),
    ("PFLOG", 117, 117),
    ("PFSYNC", 246, 246),
    ("PKTAP", 258, 258),
    ("PPI", 192, 192),
    ("PPP", 9, 9),
    ("PPP_BSDOS", 16, 103),
    ("PPP_ETHER", 51, 51),
    ("PPP_PPPD", 166, 166),
    ("PPP_SERIAL", 50, 50),
    ("PRISM_HEADER", 119, 119),
    ("PROFIBUS_DL", 257, 257),
    ("PRONET", 4, 4),
    ("RAIF1", 198, 198),
    ("RAW", 12, 101),
    ("RDS", 265, 265),
    ("REDBACK_SMARTEDGE", 32, 32),
    ("RTAC_SERIAL", 250, 250),
    ("SCCP", 142, 142),
    ("SCTP", 248, 248),
    ("SDLC", 268, 268),
    ("SILABS_DEBUG_CHANNEL", 298, 298),
    ("SITA", 196, 196),
    ("SLIP", 8, 8),
    ("SLIP_BSDOS", 15, 102),
    ("STANAG_5066_D_PDU", 237, 237),
    ("SUNATM", 123, 123),
    ("SYMANTEC_FIREWALL", 99, 99),
    ("TI_LLN_SNIFFER", 269, 269),
    ("USBPCAP", 249, 249),
    ("USB_2_0", 288, 288),
    ("USB_2_0_FULL_SPEED", 294, 294),
    ("USB_2_0_HIGH_SPEED", 295, 295),
    ("USB_2_0_LOW_SPEED", 293, 293),
    ("USB_DARWIN", 266, 266),
    ("USB_FREEBSD", 186, 186),
    ("USB_LINUX", 189, 189),
    ("USB_LINUX_MMAPPED", 220, 220),
    ("VPP_DISPATCH", 280, 280),
    ("VSOCK", 271, 271),
    ("WATTSTOPPER_DLM", 263, 263),
    ("WIHART", 223, 223),
    ("ZBOSS_NCP", 292, 292),
    ("ZWAVE_R1_R2", 261, 261),
    ("ZWAVE_R3", 262, 262),
    ("ZWAVE_TAP", 297, 297),
    ("Z_WAVE_SERIAL", 287, 287),
];

/// Every link type in the table, in name order.
pub fn all() -> impl Iterator<Item = LinkType> {
    TABLE.iter().map(|&(name, dlt, linktype)| LinkType { name, dlt, linktype })
}

/// Looks a link type up by its corpus name (`"EN10MB"`; a `DLT_` prefix is accepted).
pub fn by_name(name: &str) -> Option<LinkType> {
    let name = name.strip_prefix("DLT_").unwrap_or(name);
    all().find(|l| l.name == name)
}

/// Looks a link type up by the LINKTYPE number a capture file stores.
pub fn by_linktype(linktype: u32) -> Option<LinkType> {
    all().find(|l| l.linktype == linktype)
}

/// Looks a link type up by its DLT number on Linux.
pub fn by_dlt(dlt: i32) -> Option<LinkType> {
    all().find(|l| l.dlt == dlt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_numbers_that_differ_from_linktypes() {
        assert_eq!(by_name("RAW").map(|l| (l.dlt, l.linktype)), Some((12, 101)));
        assert_eq!(by_name("DLT_LOOP").map(|l| l.dlt), Some(108));
        assert_eq!(by_name("ENC").map(|l| l.dlt), Some(109));
        assert_eq!(by_name("SLIP_BSDOS").map(|l| (l.dlt, l.linktype)), Some((15, 102)));
        assert_eq!(by_linktype(101).map(|l| l.name), Some("RAW"));
        assert_eq!(by_dlt(1).map(|l| l.name), Some("EN10MB"));
    }

    #[test]
    fn names_and_dlts_are_unique() {
        let mut names: Vec<_> = all().map(|l| l.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        let mut dlts: Vec<_> = all().map(|l| l.dlt).collect();
        dlts.sort_unstable();
        dlts.dedup();
        assert_eq!(dlts.len(), TABLE.len());
    }
}
