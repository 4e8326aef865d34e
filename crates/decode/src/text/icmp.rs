//! ICMP and ICMPv6 as tcpdump prints them: echo, unreachable (from the quoted header),
//! neighbour discovery with its options, MLDv2 reports.

use sift_wire::ipv4::{self, Ipv4Packet};
use sift_wire::ipv6::{self, Ipv6Packet};
use sift_wire::{ipproto, tcp};

use super::*;

/// Where an error message quotes the offending packet's header: after the four bytes of the
/// rest of header.
const QUOTED: usize = 4;

impl<'a> Walk<'_, 'a> {
    pub(super) fn icmp(&mut self, m: decode::Icmp<'a>) {
        // tcpdump formats the whole message before printing it: a truncated one prints only
        // the truncation mark.
        let mark = self.out.len();
        self.icmp_text(m);
        if self.out.ends_with(b" [|icmp]") {
            self.out.truncate(mark);
            self.trunc("icmp");
        }
    }

    pub(super) fn icmp_text(&mut self, m: decode::Icmp<'a>) {
        self.out.s("ICMP ");
        let rest = m.rest;
        match m.icmp_type {
            0 | 8 => {
                self.out.s(if m.icmp_type == 0 { "echo reply" } else { "echo request" });
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp");
                    return;
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            3 => {
                // The embedded header names what was unreachable.
                let inner = rest.get(QUOTED..).unwrap_or(&[]);
                if inner.len() < ipv4::HEADER_LEN {
                    self.trunc("icmp");
                    return;
                }
                let quoted = Ipv4Packet::new_unchecked(inner);
                let (dst, proto, ihl) =
                    (&quoted.dst_addr(), quoted.protocol(), quoted.header_len());
                match m.code {
                    0 => {
                        self.out.s("net ");
                        self.out.ip4(dst);
                        self.out.s(" unreachable");
                    }
                    1 => {
                        self.out.s("host ");
                        self.out.ip4(dst);
                        self.out.s(" unreachable");
                    }
                    2 => {
                        self.out.ip4(dst);
                        self.out.s(" protocol ");
                        self.out.u(u64::from(proto));
                        self.out.s(" unreachable");
                    }
                    3 => {
                        let Some(port) = be16(inner, ihl + tcp::field::DST_PORT) else {
                            self.trunc("icmp");
                            return;
                        };
                        self.out.ip4(dst);
                        match proto {
                            ipproto::TCP => self.out.s(" tcp port "),
                            ipproto::UDP => self.out.s(" udp port "),
                            p => {
                                self.out.s(" protocol ");
                                self.out.u(u64::from(p));
                                self.out.s(" port ");
                            }
                        }
                        self.out.u(u64::from(port));
                        self.out.s(" unreachable");
                    }
                    c => {
                        self.out.ip4(dst);
                        self.out.s(" unreachable - code ");
                        self.out.u(u64::from(c));
                    }
                }
            }
            13 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp");
                    return;
                };
                self.out.s("time stamp query id ");
                self.out.u(u64::from(id));
                self.out.s(" seq ");
                self.out.u(u64::from(seq));
            }
            11 => {
                self.out.s(if m.code == 0 {
                    "time exceeded in-transit"
                } else {
                    "ip reassembly time exceeded"
                });
            }
            t => {
                let name = match t {
                    4 => "source quench",
                    5 => "redirect",
                    9 => "router advertisement",
                    10 => "router solicitation",
                    12 => "parameter problem",
                    13 => "time stamp request",
                    14 => "time stamp reply",
                    15 => "information request",
                    16 => "information reply",
                    17 => "address mask request",
                    18 => "address mask reply",
                    _ => "",
                };
                if name.is_empty() {
                    self.out.s("type-#");
                    self.out.u(u64::from(t));
                } else {
                    self.out.s(name);
                }
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(m.len));
    }

    pub(super) fn icmp6(&mut self, i: usize, m: decode::Icmp<'a>) {
        let verbose = self.o().verbose > 0;
        if let (true, Some((ip, _)), Some(seg)) =
            (verbose && !self.fragmented(i), self.ip_before(i), self.icmp6_bytes(i, m))
        {
            let sum = pseudo_checksum(ip, 58, seg);
            if sum == 0 {
                self.out.s("[icmp6 sum ok] ");
            } else {
                self.out.s("[bad icmp6 cksum 0x");
                self.out.hex_width(u64::from(m.checksum), 4);
                self.out.s(" -> 0x");
                self.out.hex_width(u64::from(checksum::corrected(m.checksum, sum)), 4);
                self.out.s("!] ");
            }
        }
        if verbose && matches!(m.icmp_type, 128 | 129 | 135 | 136) {
            return self.icmp6_verbose(m);
        }
        self.out.s("ICMP6, ");
        let rest = m.rest;
        match names::icmp6_type(m.icmp_type) {
            Some(n) => self.out.s(n),
            None => {
                self.out.s("unknown icmp6 type (");
                self.out.u(u64::from(m.icmp_type));
                self.out.s(")");
            }
        }
        match m.icmp_type {
            128 | 129 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            135 | 136 => {
                let Some(target) = rest.get(4..20) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(if m.icmp_type == 135 { ", who has " } else { ", tgt is " });
                self.out.ip6(target);
            }
            1 => {
                // The embedded IPv6 header names what was unreachable.
                let inner = rest.get(QUOTED..).unwrap_or(&[]);
                if inner.len() < ipv6::HEADER_LEN {
                    return self.trunc("icmp6");
                }
                let quoted = Ipv6Packet::new_unchecked(inner);
                let dst = &quoted.dst_addr();
                let what = match m.code {
                    0 => ", unreachable route ",
                    1 => ", unreachable prohibited ",
                    2 => ", beyond scope ",
                    3 => ", unreachable address ",
                    4 => ", unreachable port, ",
                    _ => "",
                };
                if what.is_empty() {
                    self.out.s(", unknown code (");
                    self.out.u(u64::from(m.code));
                    self.out.s(")");
                } else if m.code == 4 {
                    // The quoted transport header's destination port, after the fixed header.
                    let nh = quoted.next_header();
                    let at = ipv6::HEADER_LEN + tcp::field::DST_PORT;
                    let Some(dport) = be16(inner, at) else { return self.trunc("icmp6") };
                    self.out.s(what);
                    self.out.ip6(dst);
                    match nh {
                        ipproto::TCP => self.out.s(" tcp port "),
                        ipproto::UDP => self.out.s(" udp port "),
                        _ => {
                            self.out.s(" protocol ");
                            self.out.u(u64::from(nh));
                            self.out.s(" port ");
                        }
                    }
                    self.out.u(u64::from(dport));
                } else {
                    self.out.s(what);
                    self.out.ip6(dst);
                }
            }
            2 => {
                let Some(mtu) = be32(rest, 0) else { return self.trunc("icmp6") };
                self.out.s(", mtu ");
                self.out.u(u64::from(mtu));
            }
            143 => {
                let Some(n) = be16(rest, 2) else {
                    self.trunc("icmp6");
                    return;
                };
                self.out.s(", ");
                self.out.u(u64::from(n));
                self.out.s(" group record(s)");
                if self.o().verbose > 0 {
                    // Each record: type, aux length, source count, group, sources, aux data.
                    let mut at = 4;
                    for _ in 0..n {
                        let (Some(rtype), Some(aux), Some(nsrc), Some(group)) = (
                            u8_at(rest, at),
                            u8_at(rest, at + 1),
                            be16(rest, at + 2),
                            rest.get(at + 4..at + 20),
                        ) else {
                            return self.trunc("icmp6");
                        };
                        self.out.s(" [gaddr ");
                        self.out.ip6(group);
                        self.out.s(match rtype {
                            1 => " is_in",
                            2 => " is_ex",
                            3 => " to_in",
                            4 => " to_ex",
                            5 => " allow",
                            6 => " block",
                            _ => " [invalid]",
                        });
                        if self.o().verbose > 1 {
                            self.out.s(" {");
                            for k in 0..usize::from(nsrc) {
                                let Some(src) = rest.get(at + 20 + 16 * k..at + 36 + 16 * k) else {
                                    return self.trunc("icmp6");
                                };
                                self.out.s(" ");
                                self.out.ip6(src);
                            }
                            self.out.s(" }]");
                        } else {
                            self.out.s(", ");
                            self.out.u(u64::from(nsrc));
                            self.out.s(" source(s)]");
                        }
                        at += 20 + 16 * usize::from(nsrc) + 4 * usize::from(aux);
                    }
                    return;
                }
            }
            _ => {}
        }
        self.out.s(", length ");
        self.out.u(u64::from(m.len));
    }

    /// The whole ICMPv6 message when it was captured.
    pub(super) fn icmp6_bytes(&self, _i: usize, m: decode::Icmp<'a>) -> Option<&'a [u8]> {
        let start = self.offset_of(m.rest).checked_sub(4)?;
        self.d.data.get(start..start + m.len as usize)
    }

    pub(super) fn icmp6_verbose(&mut self, m: decode::Icmp<'a>) {
        let rest = m.rest;
        self.out.s("ICMP6, ");
        self.out.s(names::icmp6_type(m.icmp_type).unwrap_or(""));
        match m.icmp_type {
            128 | 129 => {
                let (Some(id), Some(seq)) = (be16(rest, 0), be16(rest, 2)) else {
                    return self.trunc("icmp6");
                };
                self.out.s(", id ");
                self.out.u(u64::from(id));
                self.out.s(", seq ");
                self.out.u(u64::from(seq));
            }
            _ => {
                self.out.s(", length ");
                self.out.u(u64::from(m.len));
                let Some(target) = rest.get(4..20) else { return self.trunc("icmp6") };
                if m.icmp_type == 135 {
                    self.out.s(", who has ");
                    self.out.ip6(target);
                } else {
                    self.out.s(", tgt is ");
                    self.out.ip6(target);
                    let f = rest[0];
                    self.out.s(", Flags [");
                    let start = self.out.len();
                    for (bit, name) in [(0x80u8, "router"), (0x40, "solicited"), (0x20, "override")]
                    {
                        if f & bit != 0 {
                            if self.out.len() > start {
                                self.out.s(", ");
                            }
                            self.out.s(name);
                        }
                    }
                    if self.out.len() == start {
                        self.out.s("none");
                    }
                    self.out.s("]");
                }
                let want = (m.len as usize).saturating_sub(4);
                let end = want.min(rest.len());
                let mut opts = &rest[20.min(end)..end];
                // The option walk stops quietly at the end of the capture, but marks an
                // option cut in the middle.
                let mut missing = false;
                while !opts.is_empty() {
                    if opts.len() < 2 {
                        missing = true;
                        break;
                    }
                    let (t, l) = (opts[0], usize::from(opts[1]));
                    if l == 0 {
                        break;
                    }
                    if opts.len() < l * 8 {
                        missing = true;
                        break;
                    }
                    let body = &opts[2..l * 8];
                    self.out.s("\n\t  ");
                    self.out.s(match t {
                        1 => "source link-address",
                        2 => "destination link-address",
                        3 => "prefix info",
                        5 => "mtu",
                        _ => "unknown",
                    });
                    self.out.s(" option (");
                    self.out.u(u64::from(t));
                    self.out.s("), length ");
                    self.out.u((l * 8) as u64);
                    self.out.s(" (");
                    self.out.u(l as u64);
                    self.out.s("): ");
                    if t == 1 || t == 2 {
                        self.out.mac(&body[..6.min(body.len())]);
                    }
                    if self.o().verbose > 1 {
                        let shown =
                            if t == 1 || t == 2 { &body[..6.min(body.len())] } else { body };
                        hex_dump_with(self.out, "\n\t    ", shown, false);
                    }
                    opts = &opts[l * 8..];
                }
                if missing {
                    self.trunc("icmp6");
                }
            }
        }
    }
}
