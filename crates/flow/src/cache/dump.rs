//! Megaflows as `ovs-dpctl dump-flows` prints datapath flows: the masked key as nested
//! `header(field=value/mask,…)` groups (fields outside the mask left out), the statistics and
//! the actions in the datapath's notation.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use sift_wire::{ethertype, ipproto};

use super::MegaflowInfo;
use crate::key::{Field, FlowKey, FlowMask, NW_FRAG_ANY, NW_FRAG_LATER, PortNo};
use crate::rules::print::{mac, port, set_field};
use crate::rules::{Action, Actions, PortMap, SetField};

/// `name=value` (and `/mask` when not full) for each masked field of a group.
struct Group {
    parts: Vec<String>,
}

impl Group {
    fn new() -> Group {
        Group { parts: Vec::new() }
    }

    fn num(&mut self, name: &str, f: Field, k: &FlowKey, m: &FlowMask) {
        let (v, mask) = (k.get(f), m.get(f));
        if mask == 0 {
            return;
        }
        let mut s = format!("{name}={v}");
        if mask != f.full() {
            let _ = write!(s, "/{mask:#x}");
        }
        self.parts.push(s);
    }

    fn with(
        &mut self,
        name: &str,
        f: Field,
        k: &FlowKey,
        m: &FlowMask,
        show: impl Fn(u128) -> String,
    ) {
        let (v, mask) = (k.get(f), m.get(f));
        if mask == 0 {
            return;
        }
        let mut s = format!("{name}={}", show(v));
        if mask != f.full() {
            let _ = write!(s, "/{}", show(mask));
        }
        self.parts.push(s);
    }

    fn put(self, out: &mut Vec<String>, header: &str) {
        if !self.parts.is_empty() {
            out.push(format!("{header}({})", self.parts.join(",")));
        }
    }
}

fn v4(v: u128) -> String {
    Ipv4Addr::from(v as u32).to_string()
}

fn v6(v: u128) -> String {
    Ipv6Addr::from(v).to_string()
}

/// The masked key in `ovs-dpctl`'s notation.
pub fn format_key(k: &FlowKey, m: &FlowMask, ports: &PortMap) -> String {
    let mut out = Vec::new();
    let (inp, inp_m) = (k.get(Field::InPort), m.get(Field::InPort));
    if inp_m == Field::InPort.full() {
        out.push(format!("in_port({})", port(inp as PortNo, ports)));
    } else if inp_m != 0 {
        out.push(format!("in_port({inp}/{inp_m:#x})"));
    }
    let mut g = Group::new();
    g.with("src", Field::DlSrc, k, m, mac);
    g.with("dst", Field::DlDst, k, m, mac);
    g.put(&mut out, "eth");
    for (name, f) in [("vlan", Field::VlanTci), ("vlan2", Field::VlanTci2)] {
        let mut g = Group::new();
        g.with("tci", f, k, m, |v| format!("{v:#06x}"));
        g.put(&mut out, name);
    }
    let (t, tm) = (k.get(Field::DlType), m.get(Field::DlType));
    if tm == 0xffff {
        out.push(format!("eth_type({t:#06x})"));
    } else if tm != 0 {
        out.push(format!("eth_type({t:#06x}/{tm:#06x})"));
    }
    let frag = |g: &mut Group| {
        let (v, mask) = (k.get(Field::NwFrag) as u8, m.get(Field::NwFrag) as u8);
        if mask == NW_FRAG_ANY | NW_FRAG_LATER {
            let name = match v {
                0 => "no",
                NW_FRAG_ANY => "first",
                _ => "later",
            };
            g.parts.push(format!("frag={name}"));
        } else if mask != 0 {
            g.parts.push(format!("frag={v:#x}/{mask:#x}"));
        }
    };
    let dl = k.get(Field::DlType) as u16;
    let mut g = Group::new();
    match dl {
        ethertype::IPV6 => {
            g.with("src", Field::Ipv6Src, k, m, v6);
            g.with("dst", Field::Ipv6Dst, k, m, v6);
            g.num("proto", Field::NwProto, k, m);
            g.num("tclass", Field::NwTos, k, m);
            g.num("hlimit", Field::NwTtl, k, m);
            frag(&mut g);
            g.put(&mut out, "ipv6");
        }
        ethertype::ARP => {
            g.with("sip", Field::NwSrc, k, m, v4);
            g.with("tip", Field::NwDst, k, m, v4);
            g.num("op", Field::NwProto, k, m);
            g.with("sha", Field::ArpSha, k, m, mac);
            g.with("tha", Field::ArpTha, k, m, mac);
            g.put(&mut out, "arp");
        }
        _ => {
            g.with("src", Field::NwSrc, k, m, v4);
            g.with("dst", Field::NwDst, k, m, v4);
            g.num("proto", Field::NwProto, k, m);
            g.num("tos", Field::NwTos, k, m);
            g.num("ttl", Field::NwTtl, k, m);
            frag(&mut g);
            g.put(&mut out, if dl == ethertype::IPV4 { "ipv4" } else { "nw" });
        }
    }
    let l4 = match (dl, k.get(Field::NwProto) as u8) {
        (ethertype::IPV4 | ethertype::IPV6, ipproto::TCP) => "tcp",
        (ethertype::IPV4 | ethertype::IPV6, ipproto::UDP) => "udp",
        (ethertype::IPV4 | ethertype::IPV6, ipproto::SCTP) => "sctp",
        (ethertype::IPV4, ipproto::ICMP) => "icmp",
        (ethertype::IPV6, ipproto::ICMPV6) => "icmpv6",
        _ => "l4",
    };
    let (src, dst) = if l4.starts_with("icmp") { ("type", "code") } else { ("src", "dst") };
    let mut g = Group::new();
    g.num(src, Field::TpSrc, k, m);
    g.num(dst, Field::TpDst, k, m);
    g.put(&mut out, l4);
    let (flags, flags_m) = (k.get(Field::TcpFlags), m.get(Field::TcpFlags));
    if flags_m != 0 {
        out.push(format!("tcp_flags({flags:#05x}/{flags_m:#05x})"));
    }
    out.join(",")
}

/// The actions in the datapath's notation (`drop`; a port; `set(header(field=value))`;
/// `push_vlan(tpid=…)`; `pop_vlan`; `in_port` for the ingress port), given the flow's key
/// for the headers' names.
pub fn format_actions(a: &Actions, k: &FlowKey, ports: &PortMap) -> String {
    if a.is_drop() {
        return "drop".into();
    }
    let l4 = match k.get(Field::NwProto) as u8 {
        ipproto::TCP => "tcp",
        ipproto::UDP => "udp",
        ipproto::SCTP => "sctp",
        _ => "l4",
    };
    let ip = if k.get(Field::DlType) as u16 == ethertype::IPV6 { "ipv6" } else { "ipv4" };
    let parts: Vec<String> = a
        .as_slice()
        .iter()
        .map(|a| match a {
            Action::Output(p) => port(*p, ports),
            Action::InPort => "in_port".into(),
            Action::PushVlan(t) => format!("push_vlan(tpid={t:#06x})"),
            Action::PopVlan => "pop_vlan".into(),
            Action::Set(f) => {
                let (v, _) = set_field(f, ports);
                let (header, field) = match f {
                    SetField::EthSrc(_) => ("eth", "src"),
                    SetField::EthDst(_) => ("eth", "dst"),
                    SetField::Ipv4Src(_) => ("ipv4", "src"),
                    SetField::Ipv4Dst(_) => ("ipv4", "dst"),
                    SetField::Ipv6Src(_) => ("ipv6", "src"),
                    SetField::Ipv6Dst(_) => ("ipv6", "dst"),
                    SetField::NwTos(_) => (ip, if ip == "ipv6" { "tclass" } else { "tos" }),
                    SetField::NwTtl(_) => (ip, if ip == "ipv6" { "hlimit" } else { "ttl" }),
                    SetField::TpSrc(_) => (l4, "src"),
                    SetField::TpDst(_) => (l4, "dst"),
                    SetField::VlanVid(_) => ("vlan", "vid"),
                    SetField::VlanPcp(_) => ("vlan", "pcp"),
                    SetField::InPort(_) => return format!("set(in_port({v}))"),
                };
                format!("set({header}({field}={v}))")
            }
        })
        .collect();
    parts.join(",")
}

/// One megaflow's line.
pub(crate) fn line(m: &MegaflowInfo<'_>, now: u64, ports: &PortMap) -> String {
    let used = match m.used {
        None => "never".to_string(),
        Some(t) => format!("{:.3}s", now.saturating_sub(t) as f64 / 1e9),
    };
    format!(
        "{}, packets:{}, bytes:{}, used:{used}, actions:{}",
        format_key(m.key, m.mask, ports),
        m.packets,
        m.bytes,
        format_actions(m.actions, m.key, ports)
    )
}
