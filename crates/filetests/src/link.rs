//! Link-layer wrappers: frames for link types `sift-gen` does not generate.
//!
//! `sift-gen` writes realistic traffic on six link types (Ethernet, Linux cooked v1/v2, raw IP,
//! BSD and OpenBSD loopback). libpcap's compiler knows dozens more, and the corpus tests many of
//! them (802.11 alone has more accept cases than Ethernet). This module takes an Ethernet frame
//! from `sift-gen` apart into addresses, EtherType and payload, and puts the payload back
//! together behind another link header: PPP, Cisco HDLC, SLIP, FDDI and Token Ring with
//! LLC/SNAP, 802.11 data, management and control frames (bare, behind radiotap, AVS, Prism or
//! PPI headers), pflog, enc, IPNET, ARCnet, Juniper's capture headers, SS7 and others, and
//! headers of random bytes for link types libpcap only offers `link[…]` and `len` on. The
//! headers follow the layouts libpcap's code generator assumes (`gencode.c`), with the variable
//! parts (direction bytes, flags, radiotap fields, 802.11 address layouts) drawn at random so
//! that filters meet every branch.

use sift_gen::{Prob, Rng};
use sift_wire::ethernet::{self, EthernetFrame};
use sift_wire::{ethertype, loopback, pppoe};

/// An Ethernet frame taken apart: what the wrappers re-encapsulate.
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// The EtherType (may be a VLAN, MPLS or PPPoE type when the frame was encapsulated).
    pub ethertype: u16,
    /// The captured bytes after the EtherType.
    pub payload: &'a [u8],
    /// The length on the wire of what follows the EtherType.
    pub wire_payload: u32,
}

impl<'a> Parts<'a> {
    /// Splits a captured Ethernet frame; `None` when fewer than 14 bytes were captured.
    pub fn of_ethernet(frame: &'a [u8], wire_len: u32) -> Option<Parts<'a>> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        Some(Parts {
            dst: eth.dst_addr(),
            src: eth.src_addr(),
            ethertype: eth.ethertype(),
            payload: eth.payload(),
            wire_payload: wire_len.saturating_sub(ethernet::HEADER_LEN as u32),
        })
    }

    /// Whether the payload is an IP packet (IPv4 or IPv6 EtherType).
    pub fn is_ip(&self) -> bool {
        matches!(self.ethertype, ethertype::IPV4 | ethertype::IPV6)
    }
}

/// The link types [`wrap`] can build, by corpus name.
pub const WRAPPED: &[&str] = &[
    "IPV4",
    "IPV6",
    "PPP",
    "PPP_SERIAL",
    "PPP_PPPD",
    "PPP_BSDOS",
    "PPP_ETHER",
    "C_HDLC",
    "FRELAY",
    "SLIP",
    "SLIP_BSDOS",
    "FDDI",
    "IEEE802",
    "IP_OVER_FC",
    "ATM_RFC1483",
    "ATM_CLIP",
    "SUNATM",
    "IEEE802_11",
    "IEEE802_11_RADIO",
    "IEEE802_11_RADIO_AVS",
    "PRISM_HEADER",
    "PPI",
    "PFLOG",
    "ENC",
    "IPNET",
    "NETANALYZER",
    "NETANALYZER_TRANSPARENT",
    "DSA_TAG_BRCM",
    "DSA_TAG_DSA",
    "SYMANTEC_FIREWALL",
    "APPLE_IP_OVER_IEEE1394",
    "ARCNET",
    "ARCNET_LINUX",
    "LTALK",
    "BACNET_MS_TP",
    "JUNIPER_MLPPP",
    "JUNIPER_MLFR",
    "JUNIPER_ES",
    "JUNIPER_GGSN",
    "JUNIPER_MFR",
    "JUNIPER_ATM2",
    "JUNIPER_SERVICES",
    "JUNIPER_ATM1",
    "JUNIPER_MONITOR",
    "JUNIPER_PPPOE",
    "JUNIPER_PPPOE_ATM",
    "JUNIPER_ETHER",
    "JUNIPER_PPP",
    "JUNIPER_FRELAY",
    "JUNIPER_CHDLC",
    "JUNIPER_VP",
    "JUNIPER_ISM",
    "JUNIPER_ST",
    "JUNIPER_VS",
    "JUNIPER_SRX_E2E",
    "JUNIPER_FIBRECHANNEL",
    "JUNIPER_ATM_CEMIC",
    "MTP2",
    "MTP2_WITH_PHDR",
    "ERF",
    "MFR",
    "NFLOG",
    "PKTAP",
    "IPOIB",
    "VSOCK",
    "IEEE802_15_4",
    "IEEE802_15_4_NOFCS",
];

/// Where an IP packet starts after a Juniper header, as libpcap's code generator assumes
/// (its link-layer payload plus network-layer offsets; `None` where it has none).
fn juniper_payload(link: &str) -> Option<usize> {
    Some(match link {
        "JUNIPER_MLPPP" | "JUNIPER_MLFR" | "JUNIPER_MFR" | "JUNIPER_PPP" | "JUNIPER_FRELAY"
        | "JUNIPER_CHDLC" | "JUNIPER_ATM1" => 4,
        "JUNIPER_ATM2" => 8,
        "JUNIPER_PPPOE" | "JUNIPER_ETHER" => 32,
        "JUNIPER_PPPOE_ATM" => 6,
        "JUNIPER_GGSN" | "JUNIPER_MONITOR" => 12,
        _ => return None,
    })
}

/// An ARCnet protocol ID for an EtherType: RFC 1201's, or RFC 1051's for IPv4 and ARP.
fn arcnet_type(rng: &mut Rng, ethertype: u16) -> u8 {
    match ethertype {
        ethertype::IPV4 => rng.pick(&[0xd4u8, 0xf0]),
        ethertype::ARP => rng.pick(&[0xd5u8, 0xf1]),
        ethertype::REVARP => 0xd6,
        ethertype::IPV6 => 0xc4,
        ethertype::ATALK => 0xdd,
        _ => rng.pick(&[0u8, 0xd5, 0xe8, 0xfa]),
    }
}

fn ppp_proto(ethertype: u16) -> u16 {
    match ethertype {
        ethertype::IPV4 => pppoe::PPP_IPV4,
        ethertype::IPV6 => pppoe::PPP_IPV6,
        ethertype::IPX => 0x002b,
        ethertype::ATALK => 0x0029,
        ethertype::DECNET => 0x0027,
        ethertype::MPLS => 0x0281,
        other => other,
    }
}

fn snap(out: &mut Vec<u8>, ethertype: u16) {
    out.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// An address family for a loopback-like header: AF_INET, or one of the AF_INET6 values of
/// the BSDs and Linux.
fn af(rng: &mut Rng, ethertype: u16) -> u32 {
    match ethertype {
        ethertype::IPV4 => loopback::AF_INET,
        // Linux's AF_INET6 (10) and the BSDs'.
        ethertype::IPV6 => rng.pick(&[
            10,
            loopback::AF_INET6_BSD,
            loopback::AF_INET6_FREEBSD,
            loopback::AF_INET6_DARWIN,
        ]),
        _ => rng.pick(&[0, 7, 17, 0x0800]),
    }
}

/// An 802.11 header (and LLC/SNAP for data frames) in front of `p`'s payload; returns whether
/// the payload follows (control and management frames carry no IP).
fn ieee80211(rng: &mut Rng, out: &mut Vec<u8>, p: &Parts<'_>) -> bool {
    let bssid = [0x02, 0x11, 0x22, 0x33, 0x44, rng.below(3) as u8];
    match rng.below(10) {
        // Control frames: ACK/CTS (10 bytes), RTS/PS-Poll/BAR (16 bytes).
        0 => {
            let fc0 = rng.pick(&[0xd4u8, 0xc4, 0xb4, 0xa4, 0x84, 0x94, 0xe4, 0xf4]);
            out.extend_from_slice(&[fc0, rng.pick(&[0u8, 0x10]), 0, 0]);
            out.extend_from_slice(&p.dst);
            if fc0 != 0xd4 && fc0 != 0xc4 {
                out.extend_from_slice(&p.src);
            }
            false
        }
        // Management frames: beacon, probe request/response, (de)auth, (re)assoc, action.
        1 => {
            let fc0 = rng.pick(&[0x80u8, 0x40, 0x50, 0xb0, 0xc0, 0x00, 0x10, 0x20, 0xa0, 0xd0]);
            out.extend_from_slice(&[fc0, rng.pick(&[0u8, 0x08, 0x40]), 0x3a, 0x01]);
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&p.src);
            out.extend_from_slice(&bssid);
            out.extend_from_slice(&[0x10, 0x00]);
            let mut body = [0u8; 24];
            rng.fill(&mut body);
            out.extend_from_slice(&body[..rng.below(25) as usize]);
            false
        }
        // Data frames (plain or QoS; null-data sometimes), every ToDS/FromDS combination.
        _ => {
            let qos = rng.chance(Prob::one_in(3));
            let null = rng.chance(Prob::one_in(16));
            let ds = rng.below(4) as u8;
            let protected = rng.chance(Prob::one_in(16));
            let fc0 = match (qos, null) {
                (false, false) => 0x08,
                (true, false) => 0x88,
                (false, true) => 0x48,
                (true, true) => 0xc8,
            };
            let fc1 = ds | if protected { 0x40 } else { 0 };
            out.extend_from_slice(&[fc0, fc1, 0x2c, 0x00]);
            let (a1, a2, a3) = match ds {
                0 => (p.dst, p.src, bssid),
                1 => (bssid, p.src, p.dst),
                2 => (p.dst, bssid, p.src),
                _ => (bssid, bssid, p.dst),
            };
            out.extend_from_slice(&a1);
            out.extend_from_slice(&a2);
            out.extend_from_slice(&a3);
            out.extend_from_slice(&[0x20, 0x01]);
            if ds == 3 {
                out.extend_from_slice(&p.src);
            }
            if qos {
                out.extend_from_slice(&[rng.below(8) as u8, 0]);
            }
            if null {
                return false;
            }
            snap(out, p.ethertype);
            true
        }
    }
}

/// A radiotap header: bare, with Flags, or with TSFT and Flags (FCS and data-pad flags drawn
/// at random).
fn radiotap(rng: &mut Rng, out: &mut Vec<u8>) {
    match rng.below(3) {
        0 => out.extend_from_slice(&[0, 0, 8, 0, 0, 0, 0, 0]),
        1 => {
            let flags = rng.pick(&[0u8, 0x10, 0x20, 0x30, 0x02]);
            out.extend_from_slice(&[0, 0, 12, 0, 0x02, 0, 0, 0, flags, 0, 0, 0]);
        }
        _ => {
            let flags = rng.pick(&[0u8, 0x10, 0x20]);
            out.extend_from_slice(&[0, 0, 20, 0, 0x03, 0, 0, 0]);
            let mut tsft = [0u8; 8];
            rng.fill(&mut tsft);
            out.extend_from_slice(&tsft);
            out.extend_from_slice(&[flags, 0, 0, 0]);
        }
    }
}

/// Builds a frame of link type `link` (a name in [`WRAPPED`]) carrying `p`'s payload; returns
/// the captured bytes and the wire length, or `None` when the link cannot carry it (IP-only
/// links and non-IP payloads).
pub fn wrap(link: &str, rng: &mut Rng, p: &Parts<'_>) -> Option<(Vec<u8>, u32)> {
    let mut out = Vec::with_capacity(p.payload.len() + 64);
    let mut carries_payload = true;
    match link {
        "IPV4" | "IPV6" => {
            if !p.is_ip() {
                return None;
            }
        }
        "PPP" | "PPP_SERIAL" => {
            out.extend_from_slice(&[0xff, 0x03]);
            out.extend_from_slice(&ppp_proto(p.ethertype).to_be_bytes());
        }
        "PPP_PPPD" => {
            out.extend_from_slice(&[rng.pick(&[0u8, 1, 0xff]), 0x03]);
            out.extend_from_slice(&ppp_proto(p.ethertype).to_be_bytes());
        }
        "PPP_BSDOS" => {
            let mut h = [0u8; 24];
            rng.fill(&mut h);
            h[5..7].copy_from_slice(&ppp_proto(p.ethertype).to_be_bytes());
            out.extend_from_slice(&h);
        }
        "PPP_ETHER" => {
            let len = (p.wire_payload + 2).min(0xffff) as u16;
            out.extend_from_slice(&[0x11, 0x00, 0x12, 0x34]);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&ppp_proto(p.ethertype).to_be_bytes());
        }
        "C_HDLC" => {
            out.extend_from_slice(&[rng.pick(&[0x0fu8, 0x8f]), 0x00]);
            out.extend_from_slice(&p.ethertype.to_be_bytes());
        }
        "FRELAY" => {
            out.extend_from_slice(&[0x18, 0x41, 0x03]);
            match p.ethertype {
                ethertype::IPV4 => out.push(0xcc),
                ethertype::IPV6 => out.push(0x8e),
                t => {
                    out.extend_from_slice(&[0x00, 0x80, 0, 0, 0]);
                    out.extend_from_slice(&t.to_be_bytes());
                }
            }
        }
        "SLIP" | "SLIP_BSDOS" => {
            if !p.is_ip() {
                return None;
            }
            let mut h = vec![0u8; if link == "SLIP" { 16 } else { 24 }];
            h[0] = rng.pick(&[0u8, 1, 2]);
            if rng.chance(Prob::one_in(4)) {
                rng.fill(&mut h[1..]);
            }
            out.extend_from_slice(&h);
        }
        "FDDI" => {
            out.push(rng.pick(&[0x50u8, 0x51, 0x57]));
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&p.src);
            snap(&mut out, p.ethertype);
        }
        "IEEE802" => {
            out.extend_from_slice(&[0x10, 0x40]);
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&p.src);
            snap(&mut out, p.ethertype);
        }
        "IP_OVER_FC" => {
            out.extend_from_slice(&[0x10, 0x00]);
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&[0x10, 0x00]);
            out.extend_from_slice(&p.src);
            snap(&mut out, p.ethertype);
        }
        "ATM_RFC1483" | "ATM_CLIP" => snap(&mut out, p.ethertype),
        "SUNATM" => {
            out.extend_from_slice(&[rng.pick(&[0x02u8, 0x82, 0x01, 0x00]), 0, 0, 32]);
            snap(&mut out, p.ethertype);
        }
        "IEEE802_11" => carries_payload = ieee80211(rng, &mut out, p),
        "IEEE802_11_RADIO" => {
            radiotap(rng, &mut out);
            carries_payload = ieee80211(rng, &mut out, p);
        }
        "IEEE802_11_RADIO_AVS" | "PRISM_HEADER" => {
            let avs = link == "IEEE802_11_RADIO_AVS" || rng.chance(Prob::one_in(4));
            if avs {
                let mut h = [0u8; 64];
                rng.fill(&mut h[8..]);
                h[0..4].copy_from_slice(&0x8021_1001u32.to_be_bytes());
                h[4..8].copy_from_slice(&64u32.to_be_bytes());
                out.extend_from_slice(&h);
            } else {
                let mut h = [0u8; 144];
                rng.fill(&mut h[8..]);
                h[0..4].copy_from_slice(&0x44u32.to_le_bytes());
                h[4..8].copy_from_slice(&144u32.to_le_bytes());
                out.extend_from_slice(&h);
            }
            carries_payload = ieee80211(rng, &mut out, p);
        }
        "PPI" => {
            out.extend_from_slice(&[0, 0, 8, 0]);
            out.extend_from_slice(&rng.pick(&[105u32, 105, 1, 127]).to_le_bytes());
            carries_payload = ieee80211(rng, &mut out, p);
        }
        "PFLOG" => {
            let mut h = [0u8; 64];
            rng.fill(&mut h[2..]);
            h[0] = 61;
            h[1] = af(rng, p.ethertype) as u8;
            h[2] = rng.below(10) as u8; // action
            h[3] = rng.below(16) as u8; // reason
            h[4..8].copy_from_slice(b"em0\0");
            h[60] = rng.below(3) as u8; // direction
            out.extend_from_slice(&h);
        }
        "ENC" => {
            out.extend_from_slice(&af(rng, p.ethertype).to_le_bytes());
            let mut h = [0u8; 8];
            rng.fill(&mut h);
            out.extend_from_slice(&h);
        }
        "IPNET" => {
            let family: u8 = match p.ethertype {
                ethertype::IPV4 => 2,
                ethertype::IPV6 => 26,
                _ => rng.below(30) as u8,
            };
            let mut h = [0u8; 24];
            rng.fill(&mut h[2..]);
            h[0] = 1;
            h[1] = family;
            out.extend_from_slice(&h);
        }
        "NETANALYZER" | "NETANALYZER_TRANSPARENT" => {
            let mut h = [0u8; 4];
            rng.fill(&mut h);
            out.extend_from_slice(&h);
            if link == "NETANALYZER_TRANSPARENT" {
                out.extend_from_slice(&[0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xd5]);
            }
            ethernet(&mut out, p);
        }
        "DSA_TAG_BRCM" | "DSA_TAG_DSA" => {
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&p.src);
            let mut tag = [0u8; 4];
            rng.fill(&mut tag);
            out.extend_from_slice(&tag);
            out.extend_from_slice(&p.ethertype.to_be_bytes());
        }
        "SYMANTEC_FIREWALL" => {
            let mut h = [0u8; 42];
            rng.fill(&mut h);
            out.extend_from_slice(&h);
            out.extend_from_slice(&p.ethertype.to_be_bytes());
        }
        "APPLE_IP_OVER_IEEE1394" => {
            out.extend_from_slice(&[0x00, 0x11]);
            out.extend_from_slice(&p.dst);
            out.extend_from_slice(&[0x00, 0x22]);
            out.extend_from_slice(&p.src);
            out.extend_from_slice(&p.ethertype.to_be_bytes());
        }
        "ARCNET" | "ARCNET_LINUX" => {
            // Source and destination (sometimes the broadcast address 0), then (Linux) a
            // 2-byte offset, the protocol ID, the split flag and a sequence number.
            let ids = [0x00u8, 0x01, 0x12, 0xc0, 0xd1, 0xdc, 0x7e, 0xfe];
            out.extend_from_slice(&[rng.pick(&ids), rng.pick(&ids)]);
            if link == "ARCNET_LINUX" {
                out.extend_from_slice(&[0, 0]);
            }
            out.push(arcnet_type(rng, p.ethertype));
            out.extend_from_slice(&[rng.pick(&[0u8, 1, 0xff]), 0, rng.below(256) as u8]);
        }
        "LTALK" => {
            // LLAP: destination, source, type (1: short DDP, 2: long DDP).
            out.extend_from_slice(&[rng.below(256) as u8, rng.below(256) as u8]);
            out.push(rng.pick(&[1u8, 2, 0x81]));
        }
        "BACNET_MS_TP" => {
            // Preamble 0x55 0xff (sometimes damaged), frame type, destination, source,
            // length, header CRC.
            let pre = if rng.chance(Prob::one_in(5)) { rng.pick(&[0x55u8, 0x00]) } else { 0x55 };
            out.extend_from_slice(&[pre, 0xff, rng.below(8) as u8, rng.pick(&[0xffu8, 7, 0x7e])]);
            out.extend_from_slice(&[rng.below(128) as u8, 0, 8, rng.below(256) as u8]);
        }
        l if l.starts_with("JUNIPER_") => {
            // The cookie "MGC" (sometimes not), flags with the direction in the low bit, then
            // what precedes the payload where libpcap expects it.
            let cookie: &[u8] = if rng.chance(Prob::one_in(6)) { b"MGX" } else { b"MGC" };
            out.extend_from_slice(cookie);
            out.push(rng.pick(&[0u8, 1, 0x80, 0x81]));
            let at = juniper_payload(l).unwrap_or_else(|| 4 + rng.below(24) as usize);
            let mut fill = vec![0u8; at.saturating_sub(4)];
            rng.fill(&mut fill);
            out.extend_from_slice(&fill);
        }
        "MTP2" | "MTP2_WITH_PHDR" | "ERF" => {
            // A pseudo-header, then MTP2 with a length indicator (FISU, LSSU, MSU) and an
            // MTP3 routing label of random bytes.
            let phdr = match link {
                "MTP2" => 0,
                "MTP2_WITH_PHDR" => 4,
                _ => 20,
            };
            let mut h = vec![0u8; phdr + 12];
            rng.fill(&mut h);
            h[phdr + 2] = rng.pick(&[0u8, 1, 2, 3, 0x3f, 0x40, 0x41, 0xc2]);
            out.extend_from_slice(&h);
        }
        "MFR" | "NFLOG" | "PKTAP" | "IPOIB" | "VSOCK" | "IEEE802_15_4" | "IEEE802_15_4_NOFCS" => {
            // Link types libpcap has no protocol tests for: a header of random bytes.
            let mut h = vec![0u8; 4 + rng.below(40) as usize];
            rng.fill(&mut h);
            out.extend_from_slice(&h);
        }
        _ => return None,
    }
    let header = out.len() as u32;
    if !carries_payload {
        let wire = header;
        return Some((out, wire));
    }
    out.extend_from_slice(p.payload);
    Some((out, header.saturating_add(p.wire_payload)))
}

fn ethernet(out: &mut Vec<u8>, p: &Parts<'_>) {
    out.extend_from_slice(&p.dst);
    out.extend_from_slice(&p.src);
    out.extend_from_slice(&p.ethertype.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> Parts<'static> {
        Parts {
            dst: [1; 6],
            src: [2; 6],
            ethertype: ethertype::IPV4,
            payload: &[0x45, 0, 0, 20],
            wire_payload: 20,
        }
    }

    #[test]
    fn every_wrapped_link_builds_ip() {
        let mut rng = Rng::new(1);
        for link in WRAPPED {
            for _ in 0..20 {
                let (bytes, wire) = wrap(link, &mut rng, &parts()).expect(link);
                assert!(wire as usize >= bytes.len(), "{link}");
            }
        }
    }

    #[test]
    fn known_layouts() {
        let mut rng = Rng::new(2);
        let (b, w) = wrap("PPP", &mut rng, &parts()).unwrap();
        assert_eq!(&b[..4], &[0xff, 0x03, 0x00, 0x21]);
        assert_eq!(w, 24);
        let (b, _) = wrap("FDDI", &mut rng, &parts()).unwrap();
        assert_eq!(&b[13..21], &[0xaa, 0xaa, 3, 0, 0, 0, 8, 0]);
        assert!(wrap("IPV4", &mut rng, &Parts { ethertype: ethertype::ARP, ..parts() }).is_none());
    }
}
