//! Link-layer header types: one table for the whole workspace.
//!
//! Two number spaces meet here. **LINKTYPE** numbers are what pcap and pcapng files store and
//! are the same on every system; **DLT** numbers are what `pcap_open_dead` and libpcap's code
//! generator take, and differ between systems for a handful of historical types. On Linux they
//! differ only for `RAW` (DLT 12, LINKTYPE 101), `SLIP_BSDOS` (15/102), `PPP_BSDOS` (16/103),
//! `ATM_RFC1483` (11/100) and `ATM_CLIP` (19/106).
//!
//! [`LinkType`] holds the LINKTYPE number: it is what a file says, and the one conversion to a
//! DLT ([`LinkType::dlt`]) happens where libpcap's numbering is needed (the compiler's libpcap
//! oracle, `pcap_open_dead`). Names are `pcap_datalink_val_to_name`'s (the `tcpdump -y`
//! spelling, without `DLT_`), descriptions `pcap_datalink_val_to_description`'s from the
//! system's libpcap 1.10, which is what tcpdump prints in "link-type EN10MB (Ethernet)".
//! The table holds every link type libpcap's test corpus names (1.11's additions included).

use std::fmt;

/// A link-layer header type, by its LINKTYPE number (what capture files store).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkType(u16);

impl LinkType {
    /// `LINKTYPE_NULL` (0).
    pub const NULL: LinkType = LinkType(0);
    /// `LINKTYPE_EN10MB` (1).
    pub const EN10MB: LinkType = LinkType(1);
    /// `LINKTYPE_IEEE802` (6).
    pub const IEEE802: LinkType = LinkType(6);
    /// `LINKTYPE_ARCNET` (7).
    pub const ARCNET: LinkType = LinkType(7);
    /// `LINKTYPE_SLIP` (8).
    pub const SLIP: LinkType = LinkType(8);
    /// `LINKTYPE_PPP` (9).
    pub const PPP: LinkType = LinkType(9);
    /// `LINKTYPE_FDDI` (10).
    pub const FDDI: LinkType = LinkType(10);
    /// `LINKTYPE_PPP_SERIAL` (50).
    pub const PPP_SERIAL: LinkType = LinkType(50);
    /// `LINKTYPE_PPP_ETHER` (51).
    pub const PPP_ETHER: LinkType = LinkType(51);
    /// `LINKTYPE_RAW` (101).
    pub const RAW: LinkType = LinkType(101);
    /// `LINKTYPE_SLIP_BSDOS` (102).
    pub const SLIP_BSDOS: LinkType = LinkType(102);
    /// `LINKTYPE_PPP_BSDOS` (103).
    pub const PPP_BSDOS: LinkType = LinkType(103);
    /// `LINKTYPE_ATM_RFC1483` (100).
    pub const ATM_RFC1483: LinkType = LinkType(100);
    /// `LINKTYPE_ATM_CLIP` (106).
    pub const ATM_CLIP: LinkType = LinkType(106);
    /// `LINKTYPE_C_HDLC` (104).
    pub const C_HDLC: LinkType = LinkType(104);
    /// `LINKTYPE_IEEE802_11` (105).
    pub const IEEE802_11: LinkType = LinkType(105);
    /// `LINKTYPE_FRELAY` (107).
    pub const FRELAY: LinkType = LinkType(107);
    /// `LINKTYPE_LOOP` (108).
    pub const LOOP: LinkType = LinkType(108);
    /// `LINKTYPE_ENC` (109).
    pub const ENC: LinkType = LinkType(109);
    /// `LINKTYPE_LINUX_SLL` (113).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// `LINKTYPE_PFLOG` (117).
    pub const PFLOG: LinkType = LinkType(117);
    /// `LINKTYPE_PRISM_HEADER` (119).
    pub const PRISM_HEADER: LinkType = LinkType(119);
    /// `LINKTYPE_IP_OVER_FC` (122).
    pub const IP_OVER_FC: LinkType = LinkType(122);
    /// `LINKTYPE_SUNATM` (123).
    pub const SUNATM: LinkType = LinkType(123);
    /// `LINKTYPE_IEEE802_11_RADIO` (127).
    pub const IEEE802_11_RADIO: LinkType = LinkType(127);
    /// `LINKTYPE_ARCNET_LINUX` (129).
    pub const ARCNET_LINUX: LinkType = LinkType(129);
    /// `LINKTYPE_MTP2` (140).
    pub const MTP2: LinkType = LinkType(140);
    /// `LINKTYPE_MTP2_WITH_PHDR` (139).
    pub const MTP2_WITH_PHDR: LinkType = LinkType(139);
    /// `LINKTYPE_MTP3` (141).
    pub const MTP3: LinkType = LinkType(141);
    /// `LINKTYPE_SCCP` (142).
    pub const SCCP: LinkType = LinkType(142);
    /// `LINKTYPE_DOCSIS` (143).
    pub const DOCSIS: LinkType = LinkType(143);
    /// `LINKTYPE_IEEE802_11_RADIO_AVS` (163).
    pub const IEEE802_11_RADIO_AVS: LinkType = LinkType(163);
    /// `LINKTYPE_BACNET_MS_TP` (165).
    pub const BACNET_MS_TP: LinkType = LinkType(165);
    /// `LINKTYPE_PPP_PPPD` (166).
    pub const PPP_PPPD: LinkType = LinkType(166);
    /// `LINKTYPE_MFR` (182).
    pub const MFR: LinkType = LinkType(182);
    /// `LINKTYPE_PPI` (192).
    pub const PPI: LinkType = LinkType(192);
    /// `LINKTYPE_IEEE802_15_4_LINUX` (191).
    pub const IEEE802_15_4_LINUX: LinkType = LinkType(191);
    /// `LINKTYPE_IEEE802_15_4` (195).
    pub const IEEE802_15_4: LinkType = LinkType(195);
    /// `LINKTYPE_IPNET` (226).
    pub const IPNET: LinkType = LinkType(226);
    /// `LINKTYPE_IEEE802_15_4_NOFCS` (230).
    pub const IEEE802_15_4_NOFCS: LinkType = LinkType(230);
    /// `LINKTYPE_IPV4` (228).
    pub const IPV4: LinkType = LinkType(228);
    /// `LINKTYPE_IPV6` (229).
    pub const IPV6: LinkType = LinkType(229);
    /// `LINKTYPE_NFLOG` (239).
    pub const NFLOG: LinkType = LinkType(239);
    /// `LINKTYPE_NETANALYZER` (240).
    pub const NETANALYZER: LinkType = LinkType(240);
    /// `LINKTYPE_NETANALYZER_TRANSPARENT` (241).
    pub const NETANALYZER_TRANSPARENT: LinkType = LinkType(241);
    /// `LINKTYPE_IPOIB` (242).
    pub const IPOIB: LinkType = LinkType(242);
    /// `LINKTYPE_NETLINK` (253).
    pub const NETLINK: LinkType = LinkType(253);
    /// `LINKTYPE_PKTAP` (258).
    pub const PKTAP: LinkType = LinkType(258);
    /// `LINKTYPE_VSOCK` (271).
    pub const VSOCK: LinkType = LinkType(271);
    /// `LINKTYPE_LINUX_SLL2` (276).
    pub const LINUX_SLL2: LinkType = LinkType(276);
    /// `LINKTYPE_DSA_TAG_BRCM` (281).
    pub const DSA_TAG_BRCM: LinkType = LinkType(281);
    /// `LINKTYPE_DSA_TAG_DSA` (284).
    pub const DSA_TAG_DSA: LinkType = LinkType(284);
    /// `LINKTYPE_USB_LINUX` (189).
    pub const USB_LINUX: LinkType = LinkType(189);
    /// `LINKTYPE_USB_LINUX_MMAPPED` (220).
    pub const USB_LINUX_MMAPPED: LinkType = LinkType(220);
    /// `LINKTYPE_CAN_SOCKETCAN` (227).
    pub const CAN_SOCKETCAN: LinkType = LinkType(227);
    /// `LINKTYPE_JUNIPER_ETHER` (178).
    pub const JUNIPER_ETHER: LinkType = LinkType(178);
    /// `LINKTYPE_SYMANTEC_FIREWALL` (99).
    pub const SYMANTEC_FIREWALL: LinkType = LinkType(99);
    /// `LINKTYPE_LTALK` (114).
    pub const LTALK: LinkType = LinkType(114);
    /// `LINKTYPE_JUNIPER_MLPPP` (130).
    pub const JUNIPER_MLPPP: LinkType = LinkType(130);
    /// `LINKTYPE_JUNIPER_MLFR` (131).
    pub const JUNIPER_MLFR: LinkType = LinkType(131);
    /// `LINKTYPE_JUNIPER_ES` (132).
    pub const JUNIPER_ES: LinkType = LinkType(132);
    /// `LINKTYPE_JUNIPER_GGSN` (133).
    pub const JUNIPER_GGSN: LinkType = LinkType(133);
    /// `LINKTYPE_JUNIPER_MFR` (134).
    pub const JUNIPER_MFR: LinkType = LinkType(134);
    /// `LINKTYPE_JUNIPER_ATM2` (135).
    pub const JUNIPER_ATM2: LinkType = LinkType(135);
    /// `LINKTYPE_JUNIPER_SERVICES` (136).
    pub const JUNIPER_SERVICES: LinkType = LinkType(136);
    /// `LINKTYPE_JUNIPER_ATM1` (137).
    pub const JUNIPER_ATM1: LinkType = LinkType(137);
    /// `LINKTYPE_APPLE_IP_OVER_IEEE1394` (138).
    pub const APPLE_IP_OVER_IEEE1394: LinkType = LinkType(138);
    /// `LINKTYPE_LINUX_IRDA` (144).
    pub const LINUX_IRDA: LinkType = LinkType(144);
    /// `LINKTYPE_JUNIPER_MONITOR` (164).
    pub const JUNIPER_MONITOR: LinkType = LinkType(164);
    /// `LINKTYPE_JUNIPER_PPPOE` (167).
    pub const JUNIPER_PPPOE: LinkType = LinkType(167);
    /// `LINKTYPE_JUNIPER_PPPOE_ATM` (168).
    pub const JUNIPER_PPPOE_ATM: LinkType = LinkType(168);
    /// `LINKTYPE_LINUX_LAPD` (177).
    pub const LINUX_LAPD: LinkType = LinkType(177);
    /// `LINKTYPE_JUNIPER_PPP` (179).
    pub const JUNIPER_PPP: LinkType = LinkType(179);
    /// `LINKTYPE_JUNIPER_FRELAY` (180).
    pub const JUNIPER_FRELAY: LinkType = LinkType(180);
    /// `LINKTYPE_JUNIPER_CHDLC` (181).
    pub const JUNIPER_CHDLC: LinkType = LinkType(181);
    /// `LINKTYPE_JUNIPER_VP` (183).
    pub const JUNIPER_VP: LinkType = LinkType(183);
    /// `LINKTYPE_USB_FREEBSD` (186).
    pub const USB_FREEBSD: LinkType = LinkType(186);
    /// `LINKTYPE_BLUETOOTH_HCI_H4` (187).
    pub const BLUETOOTH_HCI_H4: LinkType = LinkType(187);
    /// `LINKTYPE_CAN20B` (190).
    pub const CAN20B: LinkType = LinkType(190);
    /// `LINKTYPE_IEEE802_16_MAC_CPS_RADIO` (193).
    pub const IEEE802_16_MAC_CPS_RADIO: LinkType = LinkType(193);
    /// `LINKTYPE_JUNIPER_ISM` (194).
    pub const JUNIPER_ISM: LinkType = LinkType(194);
    /// `LINKTYPE_SITA` (196).
    pub const SITA: LinkType = LinkType(196);
    /// `LINKTYPE_ERF` (197).
    pub const ERF: LinkType = LinkType(197);
    /// `LINKTYPE_RAIF1` (198).
    pub const RAIF1: LinkType = LinkType(198);
    /// `LINKTYPE_IPMB_KONTRON` (199).
    pub const IPMB_KONTRON: LinkType = LinkType(199);
    /// `LINKTYPE_JUNIPER_ST` (200).
    pub const JUNIPER_ST: LinkType = LinkType(200);
    /// `LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR` (201).
    pub const BLUETOOTH_HCI_H4_WITH_PHDR: LinkType = LinkType(201);
    /// `LINKTYPE_AX25_KISS` (202).
    pub const AX25_KISS: LinkType = LinkType(202);
    /// `LINKTYPE_I2C_LINUX` (209).
    pub const I2C_LINUX: LinkType = LinkType(209);
    /// `LINKTYPE_IEEE802_15_4_NONASK_PHY` (215).
    pub const IEEE802_15_4_NONASK_PHY: LinkType = LinkType(215);
    /// `LINKTYPE_JUNIPER_VS` (232).
    pub const JUNIPER_VS: LinkType = LinkType(232);
    /// `LINKTYPE_JUNIPER_SRX_E2E` (233).
    pub const JUNIPER_SRX_E2E: LinkType = LinkType(233);
    /// `LINKTYPE_JUNIPER_FIBRECHANNEL` (234).
    pub const JUNIPER_FIBRECHANNEL: LinkType = LinkType(234);
    /// `LINKTYPE_JUNIPER_ATM_CEMIC` (238).
    pub const JUNIPER_ATM_CEMIC: LinkType = LinkType(238);
    /// `LINKTYPE_PFSYNC` (246).
    pub const PFSYNC: LinkType = LinkType(246);
    /// `LINKTYPE_USBPCAP` (249).
    pub const USBPCAP: LinkType = LinkType(249);
    /// `LINKTYPE_IEEE802_15_4_TAP` (283).
    pub const IEEE802_15_4_TAP: LinkType = LinkType(283);

    /// The link type a file stores as `number`.
    pub const fn new(number: u16) -> LinkType {
        LinkType(number)
    }

    /// The LINKTYPE number (what a file stores).
    pub const fn number(self) -> u16 {
        self.0
    }

    /// The DLT number on Linux: what `pcap_open_dead`, `tcpdump -y` and libpcap's code
    /// generator take (libpcap's `linktype_to_dlt`).
    pub const fn dlt(self) -> i32 {
        match self.0 {
            100 => 11,
            101 => 12,
            102 => 15,
            103 => 16,
            106 => 19,
            n => n as i32,
        }
    }

    /// The link type of a Linux DLT number (libpcap's `dlt_to_linktype`), `None` for numbers
    /// no file can store (negative or too large) and for the LINKTYPE numbers that are not
    /// DLT numbers on Linux (100–103, 106).
    pub const fn from_dlt(dlt: i32) -> Option<LinkType> {
        match dlt {
            11 => Some(LinkType(100)),
            12 => Some(LinkType(101)),
            15 => Some(LinkType(102)),
            16 => Some(LinkType(103)),
            19 => Some(LinkType(106)),
            100..=103 | 106 => None,
            0..=0xffff => Some(LinkType(dlt as u16)),
            _ => None,
        }
    }

    /// The name as tcpdump spells it (`EN10MB`, `LINUX_SLL2`…), if the table knows it.
    pub fn name(self) -> Option<&'static str> {
        entry(self).map(|e| e.2)
    }

    /// libpcap's description (`Ethernet`…), if it has one.
    pub fn description(self) -> Option<&'static str> {
        entry(self).and_then(|e| e.3)
    }

    /// A link type by name: any case, with or without `DLT_` or `LINKTYPE_`. Numbers are not
    /// names (callers decide which number space a number is in: [`LinkType::new`],
    /// [`LinkType::from_dlt`]).
    pub fn from_name(text: &str) -> Option<LinkType> {
        let upper = text.to_ascii_uppercase();
        let bare = upper
            .strip_prefix("DLT_")
            .or_else(|| upper.strip_prefix("LINKTYPE_"))
            .unwrap_or(&upper);
        let bare = ALIASES.iter().find(|(alias, _)| *alias == bare).map_or(bare, |(_, name)| name);
        TABLE.iter().find(|e| e.2 == bare).map(|e| LinkType(e.0))
    }

    /// A link type as a user gives one on the command line (`-y`): a name as
    /// [`LinkType::from_name`] reads it, or a number, which is a DLT number as `tcpdump -y`
    /// and `pcap_open_dead` number link types ([`LinkType::from_dlt`]).
    pub fn parse(text: &str) -> Option<LinkType> {
        match text.parse::<i32>() {
            Ok(dlt) => LinkType::from_dlt(dlt),
            Err(_) => LinkType::from_name(text),
        }
    }

    /// Every link type the table knows, by LINKTYPE number.
    pub fn all() -> impl Iterator<Item = LinkType> {
        TABLE.iter().map(|e| LinkType(e.0))
    }
}

/// The name if known, else `DLT <n>` (tcpdump's `pcap_datalink_val_to_name` fallback), with
/// the LINKTYPE number.
impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "DLT {}", self.0),
        }
    }
}

impl fmt::Debug for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "LinkType({name} = {})", self.0),
            None => write!(f, "LinkType({})", self.0),
        }
    }
}

fn entry(t: LinkType) -> Option<&'static (u16, i32, &'static str, Option<&'static str>)> {
    TABLE.binary_search_by_key(&t.0, |e| e.0).ok().map(|i| &TABLE[i])
}

/// Other names libpcap has used for a type in the table: `(alias, name)`.
const ALIASES: &[(&str, &str)] = &[
    // libpcap 1.10's name for DLT 209; 1.11 and the corpus say I2C_LINUX.
    ("IPMB_LINUX", "I2C_LINUX"),
];

/// `(LINKTYPE, DLT on Linux, name, libpcap 1.10's description)`, sorted by LINKTYPE.
const TABLE: &[(u16, i32, &str, Option<&str>)] = &[
    (0, 0, "NULL", Some("BSD loopback")),
    (1, 1, "EN10MB", Some("Ethernet")),
    (2, 2, "EN3MB", None),
    (3, 3, "AX25", None),
    (4, 4, "PRONET", None),
    (5, 5, "CHAOS", None),
    (6, 6, "IEEE802", Some("Token ring")),
    (7, 7, "ARCNET", Some("BSD ARCNET")),
    (8, 8, "SLIP", Some("SLIP")),
    (9, 9, "PPP", Some("PPP")),
    (10, 10, "FDDI", Some("FDDI")),
    (32, 32, "REDBACK_SMARTEDGE", None),
    (50, 50, "PPP_SERIAL", Some("PPP over serial")),
    (51, 51, "PPP_ETHER", Some("PPPoE")),
    (99, 99, "SYMANTEC_FIREWALL", Some("Symantec Firewall")),
    (100, 11, "ATM_RFC1483", Some("RFC 1483 LLC-encapsulated ATM")),
    (101, 12, "RAW", Some("Raw IP")),
    (102, 15, "SLIP_BSDOS", Some("BSD/OS SLIP")),
    (103, 16, "PPP_BSDOS", Some("BSD/OS PPP")),
    (104, 104, "C_HDLC", Some("Cisco HDLC")),
    (105, 105, "IEEE802_11", Some("802.11")),
    (106, 19, "ATM_CLIP", Some("Linux Classical IP over ATM")),
    (107, 107, "FRELAY", Some("Frame Relay")),
    (108, 108, "LOOP", Some("OpenBSD loopback")),
    (109, 109, "ENC", Some("OpenBSD encapsulated IP")),
    (113, 113, "LINUX_SLL", Some("Linux cooked v1")),
    (114, 114, "LTALK", Some("Localtalk")),
    (117, 117, "PFLOG", Some("OpenBSD pflog file")),
    (119, 119, "PRISM_HEADER", Some("802.11 plus Prism header")),
    (122, 122, "IP_OVER_FC", Some("RFC 2625 IP-over-Fibre Channel")),
    (123, 123, "SUNATM", Some("Sun raw ATM")),
    (127, 127, "IEEE802_11_RADIO", Some("802.11 plus radiotap header")),
    (129, 129, "ARCNET_LINUX", Some("Linux ARCNET")),
    (130, 130, "JUNIPER_MLPPP", Some("Juniper Multi-Link PPP")),
    (131, 131, "JUNIPER_MLFR", Some("Juniper Multi-Link Frame Relay")),
    (132, 132, "JUNIPER_ES", Some("Juniper Encryption Services PIC")),
    (133, 133, "JUNIPER_GGSN", Some("Juniper GGSN PIC")),
    (134, 134, "JUNIPER_MFR", Some("Juniper FRF.16 Frame Relay")),
    (135, 135, "JUNIPER_ATM2", Some("Juniper ATM2 PIC")),
    (136, 136, "JUNIPER_SERVICES", Some("Juniper Advanced Services PIC")),
    (137, 137, "JUNIPER_ATM1", Some("Juniper ATM1 PIC")),
    (138, 138, "APPLE_IP_OVER_IEEE1394", Some("Apple IP-over-IEEE 1394")),
    (139, 139, "MTP2_WITH_PHDR", Some("SS7 MTP2 with Pseudo-header")),
    (140, 140, "MTP2", Some("SS7 MTP2")),
    (141, 141, "MTP3", Some("SS7 MTP3")),
    (142, 142, "SCCP", Some("SS7 SCCP")),
    (143, 143, "DOCSIS", Some("DOCSIS")),
    (144, 144, "LINUX_IRDA", Some("Linux IrDA")),
    (163, 163, "IEEE802_11_RADIO_AVS", Some("802.11 plus AVS radio information header")),
    (164, 164, "JUNIPER_MONITOR", Some("Juniper Passive Monitor PIC")),
    (165, 165, "BACNET_MS_TP", Some("BACnet MS/TP")),
    (166, 166, "PPP_PPPD", Some("PPP for pppd, with direction flag")),
    (167, 167, "JUNIPER_PPPOE", Some("Juniper PPPoE")),
    (168, 168, "JUNIPER_PPPOE_ATM", Some("Juniper PPPoE/ATM")),
    (169, 169, "GPRS_LLC", Some("GPRS LLC")),
    (170, 170, "GPF_T", Some("GPF-T")),
    (171, 171, "GPF_F", Some("GPF-F")),
    (174, 174, "JUNIPER_PIC_PEER", Some("Juniper PIC Peer")),
    (175, 175, "ERF_ETH", Some("Ethernet with Endace ERF header")),
    (176, 176, "ERF_POS", Some("Packet-over-SONET with Endace ERF header")),
    (177, 177, "LINUX_LAPD", Some("Linux vISDN LAPD")),
    (178, 178, "JUNIPER_ETHER", Some("Juniper Ethernet")),
    (179, 179, "JUNIPER_PPP", Some("Juniper PPP")),
    (180, 180, "JUNIPER_FRELAY", Some("Juniper Frame Relay")),
    (181, 181, "JUNIPER_CHDLC", Some("Juniper C-HDLC")),
    (182, 182, "MFR", Some("FRF.16 Frame Relay")),
    (183, 183, "JUNIPER_VP", Some("Juniper Voice PIC")),
    (184, 184, "A429", Some("Arinc 429")),
    (185, 185, "A653_ICM", Some("Arinc 653 Interpartition Communication")),
    (186, 186, "USB_FREEBSD", Some("USB with FreeBSD header")),
    (187, 187, "BLUETOOTH_HCI_H4", Some("Bluetooth HCI UART transport layer")),
    (188, 188, "IEEE802_16_MAC_CPS", Some("IEEE 802.16 MAC Common Part Sublayer")),
    (189, 189, "USB_LINUX", Some("USB with Linux header")),
    (190, 190, "CAN20B", Some("Controller Area Network (CAN) v. 2.0B")),
    (191, 191, "IEEE802_15_4_LINUX", Some("IEEE 802.15.4 with Linux padding")),
    (192, 192, "PPI", Some("Per-Packet Information")),
    (
        193,
        193,
        "IEEE802_16_MAC_CPS_RADIO",
        Some("IEEE 802.16 MAC Common Part Sublayer plus radiotap header"),
    ),
    (194, 194, "JUNIPER_ISM", Some("Juniper Integrated Service Module")),
    (195, 195, "IEEE802_15_4", Some("IEEE 802.15.4 with FCS")),
    (196, 196, "SITA", Some("SITA pseudo-header")),
    (197, 197, "ERF", Some("Endace ERF header")),
    (198, 198, "RAIF1", Some("Ethernet with u10 Networks pseudo-header")),
    (199, 199, "IPMB_KONTRON", Some("IPMB with Kontron pseudo-header")),
    (200, 200, "JUNIPER_ST", Some("Juniper Secure Tunnel")),
    (
        201,
        201,
        "BLUETOOTH_HCI_H4_WITH_PHDR",
        Some("Bluetooth HCI UART transport layer plus pseudo-header"),
    ),
    (202, 202, "AX25_KISS", Some("AX.25 with KISS header")),
    (209, 209, "I2C_LINUX", Some("IPMB with Linux/Pigeon Point pseudo-header")),
    (215, 215, "IEEE802_15_4_NONASK_PHY", Some("IEEE 802.15.4 with non-ASK PHY data")),
    (216, 216, "LINUX_EVDEV", Some("Linux evdev events")),
    (219, 219, "MPLS", Some("MPLS with label as link-layer header")),
    (220, 220, "USB_LINUX_MMAPPED", Some("USB with padded Linux header")),
    (221, 221, "DECT", Some("DECT")),
    (222, 222, "AOS", Some("AOS Space Data Link protocol")),
    (223, 223, "WIHART", Some("Wireless HART")),
    (224, 224, "FC_2", Some("Fibre Channel FC-2")),
    (225, 225, "FC_2_WITH_FRAME_DELIMS", Some("Fibre Channel FC-2 with frame delimiters")),
    (226, 226, "IPNET", Some("Solaris ipnet")),
    (227, 227, "CAN_SOCKETCAN", Some("CAN-bus with SocketCAN headers")),
    (228, 228, "IPV4", Some("Raw IPv4")),
    (229, 229, "IPV6", Some("Raw IPv6")),
    (230, 230, "IEEE802_15_4_NOFCS", Some("IEEE 802.15.4 without FCS")),
    (231, 231, "DBUS", Some("D-Bus")),
    (232, 232, "JUNIPER_VS", Some("Juniper Virtual Server")),
    (233, 233, "JUNIPER_SRX_E2E", Some("Juniper SRX E2E")),
    (234, 234, "JUNIPER_FIBRECHANNEL", Some("Juniper Fibre Channel")),
    (235, 235, "DVB_CI", Some("DVB-CI")),
    (236, 236, "MUX27010", Some("MUX27010")),
    (237, 237, "STANAG_5066_D_PDU", Some("STANAG 5066 D_PDUs")),
    (238, 238, "JUNIPER_ATM_CEMIC", Some("Juniper ATM CEMIC")),
    (239, 239, "NFLOG", Some("Linux netfilter log messages")),
    (240, 240, "NETANALYZER", Some("Ethernet with Hilscher netANALYZER pseudo-header")),
    (
        241,
        241,
        "NETANALYZER_TRANSPARENT",
        Some("Ethernet with Hilscher netANALYZER pseudo-header and with preamble and SFD"),
    ),
    (242, 242, "IPOIB", Some("RFC 4391 IP-over-Infiniband")),
    (243, 243, "MPEG_2_TS", Some("MPEG-2 transport stream")),
    (244, 244, "NG40", Some("ng40 protocol tester Iub/Iur")),
    (245, 245, "NFC_LLCP", Some("NFC LLCP PDUs with pseudo-header")),
    (246, 246, "PFSYNC", Some("Packet filter state syncing")),
    (247, 247, "INFINIBAND", Some("InfiniBand")),
    (248, 248, "SCTP", Some("SCTP")),
    (249, 249, "USBPCAP", Some("USB with USBPcap header")),
    (250, 250, "RTAC_SERIAL", Some("Schweitzer Engineering Laboratories RTAC packets")),
    (251, 251, "BLUETOOTH_LE_LL", Some("Bluetooth Low Energy air interface")),
    (253, 253, "NETLINK", Some("Linux netlink")),
    (254, 254, "BLUETOOTH_LINUX_MONITOR", Some("Bluetooth Linux Monitor")),
    (
        255,
        255,
        "BLUETOOTH_BREDR_BB",
        Some("Bluetooth Basic Rate/Enhanced Data Rate baseband packets"),
    ),
    (
        256,
        256,
        "BLUETOOTH_LE_LL_WITH_PHDR",
        Some("Bluetooth Low Energy air interface with pseudo-header"),
    ),
    (257, 257, "PROFIBUS_DL", Some("PROFIBUS data link layer")),
    (258, 258, "PKTAP", Some("Apple DLT_PKTAP")),
    (259, 259, "EPON", Some("Ethernet with 802.3 Clause 65 EPON preamble")),
    (260, 260, "IPMI_HPM_2", Some("IPMI trace packets")),
    (261, 261, "ZWAVE_R1_R2", Some("Z-Wave RF profile R1 and R2 packets")),
    (262, 262, "ZWAVE_R3", Some("Z-Wave RF profile R3 packets")),
    (
        263,
        263,
        "WATTSTOPPER_DLM",
        Some("WattStopper Digital Lighting Management (DLM) and Legrand Nitoo Open protocol"),
    ),
    (264, 264, "ISO_14443", Some("ISO 14443 messages")),
    (265, 265, "RDS", Some("IEC 62106 Radio Data System groups")),
    (266, 266, "USB_DARWIN", Some("USB with Darwin header")),
    (267, 267, "OPENFLOW", Some("OpenBSD DLT_OPENFLOW")),
    (268, 268, "SDLC", Some("IBM SDLC frames")),
    (269, 269, "TI_LLN_SNIFFER", Some("TI LLN sniffer frames")),
    (271, 271, "VSOCK", Some("Linux vsock")),
    (272, 272, "NORDIC_BLE", Some("Nordic Semiconductor Bluetooth LE sniffer frames")),
    (273, 273, "DOCSIS31_XRA31", Some("Excentis XRA-31 DOCSIS 3.1 RF sniffer frames")),
    (274, 274, "ETHERNET_MPACKET", Some("802.3br mPackets")),
    (275, 275, "DISPLAYPORT_AUX", Some("DisplayPort AUX channel monitoring data")),
    (276, 276, "LINUX_SLL2", Some("Linux cooked v2")),
    (278, 278, "OPENVIZSLA", Some("OpenVizsla USB")),
    (279, 279, "EBHSCR", Some("Elektrobit High Speed Capture and Replay (EBHSCR)")),
    (280, 280, "VPP_DISPATCH", Some("VPP graph dispatch tracer")),
    (281, 281, "DSA_TAG_BRCM", Some("Broadcom tag")),
    (282, 282, "DSA_TAG_BRCM_PREPEND", Some("Broadcom tag (prepended)")),
    (283, 283, "IEEE802_15_4_TAP", Some("IEEE 802.15.4 with pseudo-header")),
    (284, 284, "DSA_TAG_DSA", Some("Marvell DSA")),
    (285, 285, "DSA_TAG_EDSA", Some("Marvell EDSA")),
    (286, 286, "ELEE", Some("ELEE lawful intercept packets")),
    (287, 287, "Z_WAVE_SERIAL", Some("Z-Wave serial frames between host and chip")),
    (288, 288, "USB_2_0", Some("USB 2.0/1.1/1.0 as transmitted over the cable")),
    (289, 289, "ATSC_ALP", Some("ATSC Link-Layer Protocol packets")),
    (290, 290, "ETW", None),
    (291, 291, "NETANALYZER_NG", None),
    (292, 292, "ZBOSS_NCP", None),
    (293, 293, "USB_2_0_LOW_SPEED", None),
    (294, 294, "USB_2_0_FULL_SPEED", None),
    (295, 295, "USB_2_0_HIGH_SPEED", None),
    (296, 296, "AUERSWALD_LOG", None),
    (297, 297, "ZWAVE_TAP", None),
    (298, 298, "SILABS_DEBUG_CHANNEL", None),
    (299, 299, "FIRA_UCI", None),
    (300, 300, "MDB", None),
    (301, 301, "DECT_NR", None),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0), "sorted by LINKTYPE, no repeats");
        let mut names: Vec<_> = TABLE.iter().map(|e| e.2).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        let mut dlts: Vec<_> = TABLE.iter().map(|e| e.1).collect();
        dlts.sort_unstable();
        dlts.dedup();
        assert_eq!(dlts.len(), TABLE.len());
    }

    #[test]
    fn dlt_conversion_agrees_with_the_table() {
        for e in TABLE {
            let t = LinkType(e.0);
            assert_eq!(t.dlt(), e.1, "{}", e.2);
            assert_eq!(LinkType::from_dlt(e.1), Some(t), "{}", e.2);
        }
        assert_eq!(LinkType::RAW.dlt(), 12);
        assert_eq!(LinkType::from_dlt(12), Some(LinkType::RAW));
        assert_eq!(LinkType::from_dlt(101), None);
        assert_eq!(LinkType::from_dlt(-1), None);
        // The Linux numbers that differ from the LINKTYPE ones, by name (as the filter test
        // corpus names them).
        let by_name = |n: &str| LinkType::from_name(n).map(|t| (t.dlt(), t.number()));
        assert_eq!(by_name("RAW"), Some((12, 101)));
        assert_eq!(by_name("DLT_LOOP"), Some((108, 108)));
        assert_eq!(by_name("ENC"), Some((109, 109)));
        assert_eq!(by_name("SLIP_BSDOS"), Some((15, 102)));
        assert_eq!(LinkType::new(101).name(), Some("RAW"));
        assert_eq!(LinkType::from_dlt(1).and_then(LinkType::name), Some("EN10MB"));
    }

    #[test]
    fn names() {
        assert_eq!(LinkType::from_name("en10mb"), Some(LinkType::EN10MB));
        assert_eq!(LinkType::from_name("DLT_RAW"), Some(LinkType::RAW));
        assert_eq!(LinkType::from_name("LINKTYPE_LINUX_SLL2"), Some(LinkType::LINUX_SLL2));
        assert_eq!(LinkType::from_name("IPMB_LINUX").map(LinkType::number), Some(209));
        assert_eq!(LinkType::from_name("1"), None);
        assert_eq!(LinkType::parse("12"), Some(LinkType::RAW));
        assert_eq!(LinkType::parse("dlt_raw"), Some(LinkType::RAW));
        assert_eq!(LinkType::parse("101"), None);
        assert_eq!(LinkType::EN10MB.to_string(), "EN10MB");
        assert_eq!(LinkType::new(4000).to_string(), "DLT 4000");
        assert_eq!(LinkType::IEEE802.description(), Some("Token ring"));
    }
}
