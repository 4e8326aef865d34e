//! Printing rules as `ovs-ofctl` prints them.
//!
//! The match is recovered from its bits in the order and forms of OVS's `match_format`: the
//! protocol shorthand first (`tcp`, `udp6`, `arp`…; `nw_proto` only when no shorthand names
//! it), then `in_port`, the VLAN (`dl_vlan`/`dl_vlan_pcp` when they say it all, `vlan_tci`
//! otherwise), MACs, `dl_type` when no shorthand covers it, addresses (`arp_spa`/`arp_tpa`
//! under `arp`), TOS, TTL, fragments, ports (`icmp_type`/`icmp_code` under ICMP), TCP flags.
//! Exact values print plainly, prefixes as `/LEN`, other masks as `/MASK` (16-bit ones in
//! hex). The priority is printed unless it is the default. What prints reads back to the
//! same rule (the round-trip property the tests and the `flow_rules` fuzz target check).

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use sift_wire::{ethertype, ipproto};

use super::parse::TCP_FLAG_NAMES;
use super::value::cidr;
use super::{Action, Actions, DEFAULT_PRIORITY, Match, PortMap, Rule, SetField};
use crate::key::{Field, NW_FRAG_ANY, NW_FRAG_LATER, PortNo, TCP_FLAGS_MASK};
use crate::layout::VLAN_PRESENT;

/// A port as rules name it: its name in `ports`, else its number.
pub fn port(p: PortNo, ports: &PortMap) -> String {
    ports.name(p).map_or_else(|| p.to_string(), str::to_string)
}

/// A MAC address, `xx:xx:xx:xx:xx:xx`.
pub fn mac(v: u128) -> String {
    let b = (v as u64).to_be_bytes();
    format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[2], b[3], b[4], b[5], b[6], b[7])
}

fn ip4(v: u128) -> Ipv4Addr {
    Ipv4Addr::from(v as u32)
}

/// The match (and the priority unless default), without a trailing comma.
pub fn matches(m: &Match, priority: u16, ports: &PortMap) -> String {
    let mut s = String::new();
    if priority != DEFAULT_PRIORITY {
        let _ = write!(s, "priority={priority},");
    }
    let (dl, dl_m) = m.field(Field::DlType);
    let (proto, proto_m) = m.field(Field::NwProto);
    let (mut skip_type, mut skip_proto) = (false, false);
    if dl_m != 0 {
        skip_type = true;
        let named = |s: &mut String, v4: bool| {
            let name = match (v4, proto as u8) {
                (_, ipproto::TCP) => "tcp",
                (_, ipproto::UDP) => "udp",
                (_, ipproto::SCTP) => "sctp",
                (true, ipproto::ICMP) => "icmp",
                (false, ipproto::ICMPV6) => "icmp",
                _ => "",
            };
            if proto_m == 0 || name.is_empty() {
                s.push_str(if v4 { "ip," } else { "ipv6," });
                false
            } else {
                s.push_str(name);
                s.push_str(if v4 { "," } else { "6," });
                true
            }
        };
        match dl as u16 {
            ethertype::IPV4 => skip_proto = named(&mut s, true),
            ethertype::IPV6 => skip_proto = named(&mut s, false),
            ethertype::ARP => s.push_str("arp,"),
            _ => skip_type = false,
        }
    }
    let (inp, inp_m) = m.field(Field::InPort);
    if inp_m != 0 {
        let _ = write!(s, "in_port={},", port(inp as PortNo, ports));
    }
    vlan(&mut s, m);
    eth(&mut s, "dl_src", m.field(Field::DlSrc));
    eth(&mut s, "dl_dst", m.field(Field::DlDst));
    if !skip_type && dl_m != 0 {
        let _ = write!(s, "dl_type=0x{dl:04x},");
    }
    let arp = dl as u16 == ethertype::ARP;
    if dl as u16 == ethertype::IPV6 {
        ipv6(&mut s, "ipv6_src", m.field(Field::Ipv6Src));
        ipv6(&mut s, "ipv6_dst", m.field(Field::Ipv6Dst));
    } else if arp {
        ipv4(&mut s, "arp_spa", m.field(Field::NwSrc));
        ipv4(&mut s, "arp_tpa", m.field(Field::NwDst));
    } else {
        ipv4(&mut s, "nw_src", m.field(Field::NwSrc));
        ipv4(&mut s, "nw_dst", m.field(Field::NwDst));
    }
    if !skip_proto && proto_m != 0 {
        let _ = write!(s, "{}={proto},", if arp { "arp_op" } else { "nw_proto" });
    }
    if arp {
        eth(&mut s, "arp_sha", m.field(Field::ArpSha));
        eth(&mut s, "arp_tha", m.field(Field::ArpTha));
    }
    let (tos, tos_m) = m.field(Field::NwTos);
    if tos_m & 0xfc != 0 {
        let _ = write!(s, "nw_tos={},", tos & 0xfc);
    }
    let (ttl, ttl_m) = m.field(Field::NwTtl);
    if ttl_m != 0 {
        let _ = write!(s, "nw_ttl={ttl},");
    }
    let (frag, frag_m) = m.field(Field::NwFrag);
    let (any, later) = (u128::from(NW_FRAG_ANY), u128::from(NW_FRAG_LATER));
    let frag_name = match frag_m {
        m if m == any | later => match (frag & any != 0, frag & later != 0) {
            (true, true) => "later",
            (true, false) => "first",
            (false, false) => "no",
            (false, true) => "<error>",
        },
        m if m == any => ["no", "yes"][usize::from(frag & any != 0)],
        m if m == later => ["not_later", "later"][usize::from(frag & later != 0)],
        _ => "",
    };
    if !frag_name.is_empty() {
        let _ = write!(s, "nw_frag={frag_name},");
    }
    let icmp = (dl as u16 == ethertype::IPV4 && proto as u8 == ipproto::ICMP)
        || (dl as u16 == ethertype::IPV6 && proto as u8 == ipproto::ICMPV6);
    let (src, dst) = if icmp { ("icmp_type", "icmp_code") } else { ("tp_src", "tp_dst") };
    be16(&mut s, src, m.field(Field::TpSrc));
    be16(&mut s, dst, m.field(Field::TpDst));
    let ip_any = matches!(dl as u16, ethertype::IPV4 | ethertype::IPV6);
    let (flags, flags_m) = m.field(Field::TcpFlags);
    if ip_any && proto as u8 == ipproto::TCP && flags_m != 0 {
        tcp_flags(&mut s, flags as u16, flags_m as u16);
        s.push(',');
    }
    if s.ends_with(',') {
        s.pop();
    }
    s
}

fn vlan(s: &mut String, m: &Match) {
    let (tci, mask) = m.field(Field::VlanTci);
    let (tci, mask) = (tci as u16, mask as u16);
    if mask == 0 {
        return;
    }
    let (vid_m, pcp_m, cfi) = (mask & 0x0fff, mask & 0xe000, mask & VLAN_PRESENT);
    if cfi != 0
        && tci & VLAN_PRESENT != 0
        && (vid_m == 0 || vid_m == 0x0fff)
        && (pcp_m == 0 || pcp_m == 0xe000)
        && (vid_m != 0 || pcp_m != 0)
    {
        if vid_m != 0 {
            let _ = write!(s, "dl_vlan={},", tci & 0x0fff);
        }
        if pcp_m != 0 {
            let _ = write!(s, "dl_vlan_pcp={},", tci >> 13);
        }
    } else if mask == 0xffff {
        let _ = write!(s, "vlan_tci=0x{tci:04x},");
    } else {
        let _ = write!(s, "vlan_tci=0x{tci:04x}/0x{mask:04x},");
    }
}

fn eth(s: &mut String, name: &str, (v, m): (u128, u128)) {
    if m == 0 {
        return;
    }
    let _ = write!(s, "{name}={}", mac(v));
    if m != 0xffff_ffff_ffff {
        let _ = write!(s, "/{}", mac(m));
    }
    s.push(',');
}

fn ipv4(s: &mut String, name: &str, (v, m): (u128, u128)) {
    if m == 0 {
        return;
    }
    let _ = write!(s, "{name}={}", ip4(v));
    if m != 0xffff_ffff {
        match cidr(m, 32) {
            Some(n) => {
                let _ = write!(s, "/{n}");
            }
            None => {
                let _ = write!(s, "/{}", ip4(m));
            }
        }
    }
    s.push(',');
}

fn ipv6(s: &mut String, name: &str, (v, m): (u128, u128)) {
    if m == 0 {
        return;
    }
    let _ = write!(s, "{name}={}", Ipv6Addr::from(v));
    if m != u128::MAX {
        match cidr(m, 128) {
            Some(n) => {
                let _ = write!(s, "/{n}");
            }
            None => {
                let _ = write!(s, "/{}", Ipv6Addr::from(m));
            }
        }
    }
    s.push(',');
}

fn be16(s: &mut String, name: &str, (v, m): (u128, u128)) {
    match m {
        0 => {}
        0xffff => {
            let _ = write!(s, "{name}={v},");
        }
        _ => {
            let _ = write!(s, "{name}=0x{v:x}/0x{m:x},");
        }
    }
}

/// OVS's `format_flags_masked` for TCP flags: all 12 bits as `syn|ack` (or `0`), named bits
/// as `+syn-ack`, anything else as `0xVAL/0xMASK`.
fn tcp_flags(s: &mut String, v: u16, m: u16) {
    let named = (1u16 << TCP_FLAG_NAMES.len()) - 1;
    s.push_str("tcp_flags=");
    if m == TCP_FLAGS_MASK && v & !named == 0 {
        if v == 0 {
            s.push('0');
        }
        let names: Vec<&str> = (0..TCP_FLAG_NAMES.len())
            .filter(|i| v & (1 << i) != 0)
            .map(|i| TCP_FLAG_NAMES[i])
            .collect();
        s.push_str(&names.join("|"));
    } else if m & !named == 0 {
        for (i, name) in TCP_FLAG_NAMES.iter().enumerate() {
            if m & (1 << i) != 0 {
                s.push(if v & (1 << i) != 0 { '+' } else { '-' });
                s.push_str(name);
            }
        }
    } else {
        let _ = write!(s, "0x{v:03x}/0x{m:03x}");
    }
}

/// A `set_field`'s value and field as `set_field:VALUE->FIELD` writes them.
pub fn set_field(f: &SetField, ports: &PortMap) -> (String, &'static str) {
    let n6 = |a: &[u8; 6]| a.iter().fold(0u128, |x, &y| (x << 8) | u128::from(y));
    match f {
        SetField::EthSrc(a) => (mac(n6(a)), "eth_src"),
        SetField::EthDst(a) => (mac(n6(a)), "eth_dst"),
        SetField::Ipv4Src(a) => (Ipv4Addr::from(*a).to_string(), "ip_src"),
        SetField::Ipv4Dst(a) => (Ipv4Addr::from(*a).to_string(), "ip_dst"),
        SetField::Ipv6Src(a) => (Ipv6Addr::from(*a).to_string(), "ipv6_src"),
        SetField::Ipv6Dst(a) => (Ipv6Addr::from(*a).to_string(), "ipv6_dst"),
        SetField::NwTos(v) => (v.to_string(), "nw_tos"),
        SetField::NwTtl(v) => (v.to_string(), "nw_ttl"),
        SetField::TpSrc(v) => (v.to_string(), "tp_src"),
        SetField::TpDst(v) => (v.to_string(), "tp_dst"),
        SetField::VlanVid(v) => (v.to_string(), "vlan_vid"),
        SetField::VlanPcp(v) => (v.to_string(), "vlan_pcp"),
        SetField::InPort(p) => (port(*p, ports), "in_port"),
    }
}

/// The actions as `actions=` takes them (`drop` for none).
pub fn actions(a: &Actions, ports: &PortMap) -> String {
    if a.is_drop() {
        return "drop".into();
    }
    let parts: Vec<String> = a
        .as_slice()
        .iter()
        .map(|a| match a {
            Action::Output(p) => format!("output:{}", port(*p, ports)),
            Action::InPort => "IN_PORT".into(),
            Action::Set(f) => {
                let (v, name) = set_field(f, ports);
                format!("set_field:{v}->{name}")
            }
            Action::PushVlan(t) => format!("push_vlan:0x{t:04x}"),
            Action::PopVlan => "pop_vlan".into(),
        })
        .collect();
    parts.join(",")
}

/// The rule's canonical line: `MATCH actions=ACTIONS`.
pub fn rule(r: &Rule, ports: &PortMap) -> String {
    let m = matches(&r.matches, r.priority, ports);
    let sep = if m.is_empty() { "" } else { " " };
    format!("{m}{sep}actions={}", actions(&r.actions, ports))
}

/// `ovs-ofctl dump-flows`'s line for the rule (without the cookie, duration and table, which
/// sift's table does not have): ` n_packets=N, n_bytes=N, MATCH actions=ACTIONS`.
pub fn dump_line(r: &Rule, packets: u64, bytes: u64, ports: &PortMap) -> String {
    format!(" n_packets={packets}, n_bytes={bytes}, {}", rule(r, ports))
}
