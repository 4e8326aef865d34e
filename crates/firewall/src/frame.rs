//! Where the IP packet is in a captured frame: what pf judges of a capture's records.
//!
//! Why its own module: pf sees IP packets on interfaces; a capture holds link-layer frames.
//! Frames that are not IPv4 or IPv6 (ARP, LLDP, …) are not pf's to judge (they pass, as on
//! OpenBSD), and IP in an 802.1Q tag is judged as on the VLAN's interface. The CLI and the
//! replay tests read frames the same way through this module.

/// What a frame holds for pf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// An IPv4 or IPv6 packet (from its IP header on), and the VLAN id it was tagged with.
    Ip {
        /// The IP packet.
        ip: &'a [u8],
        /// The 802.1Q VLAN id, if tagged.
        vlan: Option<u16>,
    },
    /// Anything else: not pf's to judge.
    Other,
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_VLAN: [u16; 2] = [0x8100, 0x88a8];

fn ethertype(t: u16, rest: &[u8], vlan: Option<u16>) -> Frame<'_> {
    match t {
        ETH_IPV4 | ETH_IPV6 => Frame::Ip { ip: rest, vlan },
        _ => Frame::Other,
    }
}

/// The IP packet of a frame of link type `link` (pcap's `LINKTYPE_*` number).
pub fn ip_of(link: u16, data: &[u8]) -> Frame<'_> {
    let be16 = |b: &[u8], o: usize| b.get(o..o + 2).map(|x| u16::from_be_bytes([x[0], x[1]]));
    match link {
        // Ethernet, with up to two VLAN tags (the innermost id names the interface).
        1 => {
            let mut off = 12;
            let mut vlan = None;
            let Some(mut t) = be16(data, off) else { return Frame::Other };
            for _ in 0..2 {
                if !ETH_VLAN.contains(&t) {
                    break;
                }
                let Some(tci) = be16(data, off + 2) else { return Frame::Other };
                vlan = Some(tci & 0x0fff);
                off += 4;
                let Some(n) = be16(data, off) else { return Frame::Other };
                t = n;
            }
            ethertype(t, data.get(off + 2..).unwrap_or(&[]), vlan)
        }
        // Raw IP.
        101 | 12 | 14 => match data.first().map(|b| b >> 4) {
            Some(4 | 6) => Frame::Ip { ip: data, vlan: None },
            _ => Frame::Other,
        },
        // BSD loopback (host or network byte order family).
        0 | 108 => match data.get(4).map(|b| b >> 4) {
            Some(4 | 6) => Frame::Ip { ip: &data[4..], vlan: None },
            _ => Frame::Other,
        },
        // Linux cooked capture.
        113 => match be16(data, 14) {
            Some(t) => ethertype(t, data.get(16..).unwrap_or(&[]), None),
            None => Frame::Other,
        },
        // Linux cooked capture v2.
        276 => match be16(data, 0) {
            Some(t) => ethertype(t, data.get(20..).unwrap_or(&[]), None),
            None => Frame::Other,
        },
        _ => Frame::Other,
    }
}

/// The interface a frame's packet is judged on: `vlanN` for a tagged one, else `ifname`.
pub fn interface(ifname: &str, vlan: Option<u16>) -> String {
    match vlan {
        Some(v) => format!("vlan{v}"),
        None => ifname.to_string(),
    }
}

/// The frame that carries `ip`, an answer to a frame whose link-layer header was `header`
/// (link type `link`): the same header, on Ethernet with the two addresses swapped (the
/// answer goes back to the sender).
pub fn answer_frame(link: u16, header: &[u8], ip: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(header.len() + ip.len());
    f.extend_from_slice(header);
    if link == 1 && f.len() >= 12 {
        let (dst, src) = f.split_at_mut(6);
        dst.swap_with_slice(&mut src[..6]);
    }
    f.extend_from_slice(ip);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_vlan_and_other_frames() {
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x45]);
        assert_eq!(ip_of(1, &eth), Frame::Ip { ip: &[0x45], vlan: Some(10) });
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 1]);
        assert_eq!(ip_of(1, &arp), Frame::Other);
        assert_eq!(ip_of(101, &[0x60, 0]), Frame::Ip { ip: &[0x60, 0], vlan: None });
        assert_eq!(interface("em0", Some(10)), "vlan10");
        let header = [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 0x08, 0x00];
        assert_eq!(
            answer_frame(1, &header, &[0x45])[..13],
            [2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 8]
        );
    }
}
