//! IPv4 (with `-v` options) and IPv6 (with extension headers), and the `addr.port > addr.port: `
//! part shared by the transports.

use sift_wire::ipproto;
use sift_wire::ipv4::{self, Ipv4Packet};

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn ipv4(&mut self, i: usize, ip: Ipv4<'a>) {
        if !self.o().link_header {
            self.out.s("IP ");
        }
        if ip.missing > 0 {
            self.out.s("truncated-ip - ");
            self.out.u(u64::from(ip.missing));
            self.out.s(" bytes missing! ");
        }
        if let Some(Layer::Malformed { .. }) = self.at(i + 1) {
            return self.layer(i + 1);
        }
        if self.o().verbose > 0 && self.ipv4_verbose(ip) {
            return;
        }
        let next = self.at(i + 1);
        let first_fragment = ip.frag & 0x1fff == 0;
        let ports_follow = has_ports(ip.protocol);
        if !first_fragment {
            self.out.ip4(&ip.src);
            self.out.s(" > ");
            self.out.ip4(&ip.dst);
            self.out.s(":");
            return self.layer(i + 1);
        }
        if !ports_follow {
            self.out.ip4(&ip.src);
            self.out.s(" > ");
            self.out.ip4(&ip.dst);
            self.out.s(": ");
        }
        if let Some(Layer::Truncated { proto: Proto::Ipv4, .. }) = next {
            self.out.s(" [remaining caplen(");
            self.out.u(self.d.data.len().saturating_sub(self.offset_of(ip.header)) as u64);
            self.out.s(") < header length(");
            self.out.u(u64::from(ip.hlen));
            self.out.s(")]");
            self.trunc("ip");
            return;
        }
        self.layer(i + 1);
    }

    pub(super) fn offset_of(&self, part: &[u8]) -> usize {
        // Offsets of borrowed slices within the packet, from their addresses.
        let base = self.d.data.as_ptr() as usize;
        (part.as_ptr() as usize).saturating_sub(base)
    }

    /// The `-v` header line; returns true when the packet ends there (options cut short).
    pub(super) fn ipv4_verbose(&mut self, ip: Ipv4<'a>) -> bool {
        self.out.s("(tos 0x");
        self.out.hex(u64::from(ip.tos));
        match ip.tos & 3 {
            1 => self.out.s(",ECT(1)"),
            2 => self.out.s(",ECT(0)"),
            3 => self.out.s(",CE"),
            _ => {}
        }
        if ip.ttl >= 1 {
            self.out.s(", ttl ");
            self.out.u(u64::from(ip.ttl));
        }
        self.out.s(", id ");
        self.out.u(u64::from(ip.id));
        self.out.s(", offset ");
        self.out.u(u64::from(ip.frag_offset()));
        self.out.s(", flags [");
        let mut any = false;
        for (bit, name) in [(0x8000u16, "rsvd"), (0x4000, "DF"), (0x2000, "+")] {
            if ip.frag & bit != 0 {
                if any {
                    self.out.s(", ");
                }
                self.out.s(name);
                any = true;
            }
        }
        if !any {
            self.out.s("none");
        }
        self.out.s("], proto ");
        self.out.s(names::ip_proto(ip.protocol).unwrap_or("unknown"));
        self.out.s(" (");
        self.out.u(u64::from(ip.protocol));
        self.out.s("), length ");
        self.out.u(u64::from(ip.total_len));
        let mut cut = false;
        if ip.hlen > 20 {
            self.out.s(", options (");
            match self.ipv4_options(ip.options, usize::from(ip.hlen) - 20) {
                OptEnd::Done => {}
                OptEnd::Cut => {
                    self.out.s(" [truncated-option]");
                    cut = true;
                }
                OptEnd::Gone => {
                    // Reading an option's type or length byte gave up.
                    self.trunc("ip");
                    return true;
                }
            }
            self.out.s(")");
        }
        let whole = ip.header.len() == usize::from(ip.hlen);
        if !cut
            && whole
            && !self.o().skip_checksums
            && !Ipv4Packet::new_unchecked(ip.header).verify_checksum()
        {
            self.out.s(", bad cksum ");
            self.out.hex(u64::from(ip.checksum));
            self.out.s(" (->");
            let mut copy = [0u8; ipv4::MAX_HEADER_LEN];
            let copy = &mut copy[..ip.header.len()];
            copy.copy_from_slice(ip.header);
            let mut right = Ipv4Packet::new_unchecked(copy);
            right.fill_checksum();
            self.out.hex(u64::from(right.checksum()));
            self.out.s(")!");
        }
        self.out.s(")\n    ");
        if cut {
            // Options cut by the capture: tcpdump names the addresses and stops.
            self.out.ip4(&ip.src);
            self.out.s(" > ");
            self.out.ip4(&ip.dst);
            self.out.s(": ");
            self.trunc_soft("ip");
        }
        cut
    }

    /// Prints the options area (`full` bytes long, `opts` of it captured).
    pub(super) fn ipv4_options(&mut self, opts: &[u8], full: usize) -> OptEnd {
        let mut off = 0;
        let mut sep = "";
        while off < full {
            let Some(&t) = opts.get(off) else { return OptEnd::Gone };
            self.out.s(sep);
            sep = ",";
            let name = match t {
                0 => "EOL",
                1 => "NOP",
                7 => "RR",
                68 => "timestamp",
                82 => "traceroute",
                130 => "security",
                131 => "LSRR",
                137 => "SSRR",
                148 => "RA",
                _ => "",
            };
            if name.is_empty() {
                self.out.s("unknown ");
                self.out.u(u64::from(t));
            } else {
                self.out.s(name);
            }
            let len = if t == 0 || t == 1 {
                1
            } else {
                let Some(l) = opts.get(off + 1).copied() else { return OptEnd::Gone };
                if l < 2 {
                    self.out.s(" [bad length ");
                    self.out.u(u64::from(l));
                    self.out.s("]");
                    return OptEnd::Done;
                }
                usize::from(l)
            };
            if len > full - off {
                self.out.s(" [bad length ");
                self.out.u(len as u64);
                self.out.s("]");
                return OptEnd::Done;
            }
            let Some(o) = opts.get(off..off + len) else { return OptEnd::Cut };
            match t {
                0 => return OptEnd::Done,
                68 => self.ip_ts(o),
                7 | 131 | 137 => {
                    if len < 3 {
                        self.out.s(" [bad length ");
                        self.out.u(len as u64);
                        self.out.s("]");
                    } else {
                        if (len + 1) & 3 != 0 {
                            self.out.s(" [bad length ");
                            self.out.u(len as u64);
                            self.out.s("]");
                        }
                        let ptr = usize::from(o[2]).wrapping_sub(1);
                        if ptr < 3 || (ptr + 1) & 3 != 0 || ptr > len + 1 {
                            self.out.s(" [bad ptr ");
                            self.out.u(u64::from(o[2]));
                            self.out.s("]");
                        }
                        let mut k = 3;
                        while k < len {
                            let Some(a) = o.get(k..k + 4) else { return OptEnd::Done };
                            self.out.s(" ");
                            self.out.ip4(a);
                            if ptr > k {
                                self.out.s(",");
                            }
                            k += 4;
                        }
                    }
                }
                148 => {
                    if len < 4 {
                        self.out.s(" [bad length ");
                        self.out.u(len as u64);
                        self.out.s("]");
                    } else {
                        let v = be16(o, 2).unwrap_or(0);
                        if v != 0 {
                            self.out.s(" value ");
                            self.out.u(u64::from(v));
                        }
                    }
                }
                _ => {}
            }
            off += len;
        }
        OptEnd::Done
    }

    pub(super) fn ip_ts(&mut self, o: &[u8]) {
        let length = o.len();
        if length < 4 {
            self.out.s("[bad length ");
            self.out.u(length as u64);
            self.out.s("]");
            return;
        }
        self.out.s(" TS{");
        let flag = o[3] & 15;
        let hoplen = if flag != 0 { 8 } else { 4 };
        if (length - 4) & (hoplen - 1) != 0 {
            self.out.s("[bad length ");
            self.out.u(length as u64);
            self.out.s("]");
        }
        let ptr = usize::from(o[2]).wrapping_sub(1);
        let mut len = 0;
        if ptr < 4 || (ptr.wrapping_sub(4)) & (hoplen - 1) != 0 || ptr > length + 1 {
            self.out.s("[bad ptr ");
            self.out.u(u64::from(o[2]));
            self.out.s("]");
        }
        let known = match flag {
            0 => {
                self.out.s("TSONLY");
                true
            }
            1 => {
                self.out.s("TS+ADDR");
                true
            }
            3 => {
                self.out.s("PRESPEC");
                true
            }
            f => {
                self.out.s("[bad ts type ");
                self.out.u(u64::from(f));
                self.out.s("]");
                false
            }
        };
        if known {
            let mut ty = " ";
            len = 4;
            while len < length {
                if ptr == len {
                    ty = " ^ ";
                }
                let Some(v) = be32(o, len + hoplen - 4) else { break };
                self.out.s(ty);
                self.out.u(u64::from(v));
                self.out.s("@");
                if hoplen == 8 {
                    self.out.ip4(&o[len..len + 4]);
                }
                ty = " ";
                len += hoplen;
            }
        }
        if ptr == len {
            self.out.s(" ^ ");
        }
        if o[3] >> 4 != 0 {
            self.out.s(" [");
            self.out.u(u64::from(o[3] >> 4));
            self.out.s(" hops not recorded]} ");
        } else {
            self.out.s("}");
        }
    }

    pub(super) fn ipv6(&mut self, i: usize, ip: Ipv6<'a>) {
        if !self.o().link_header {
            self.out.s("IP6 ");
        }
        if ip.missing > 0 {
            self.out.s("truncated-ip6 - ");
            self.out.u(u64::from(ip.missing));
            self.out.s(" bytes missing!");
        }
        if let Some(Layer::Malformed { .. }) = self.at(i + 1) {
            return self.layer(i + 1);
        }
        if self.o().verbose > 0 {
            self.out.s("(");
            if ip.class != 0 {
                self.out.s("class 0x");
                self.out.hex_width(u64::from(ip.class), 2);
                self.out.s(", ");
            }
            if ip.flow != 0 {
                self.out.s("flowlabel 0x");
                self.out.hex_width(u64::from(ip.flow), 5);
                self.out.s(", ");
            }
            self.out.s("hlim ");
            self.out.u(u64::from(ip.hlim));
            self.out.s(", next-header ");
            self.out.s(names::ip_proto(ip.next).unwrap_or("unknown"));
            self.out.s(" (");
            self.out.u(u64::from(ip.next));
            self.out.s(") payload length: ");
            self.out.u(u64::from(ip.payload_len));
            self.out.s(") ");
        }
        if !has_ports(ip.next) {
            self.out.ip6(&ip.src);
            self.out.s(" > ");
            self.out.ip6(&ip.dst);
            self.out.s(": ");
        }
        let mut j = i + 1;
        while let Some(Layer::Ipv6Ext(x)) = self.at(j) {
            self.ipv6_ext(x);
            j += 1;
            if x.kind == 44 {
                let offlg = be16(x.header, 2).unwrap_or(0);
                if offlg & 0xfff8 != 0 {
                    return;
                }
            }
        }
        match self.at(j) {
            Some(Layer::Truncated { proto: Proto::Ipv6Ext, .. }) => self.trunc_soft("ip6"),
            _ => self.layer(j),
        }
    }

    pub(super) fn ipv6_ext(&mut self, x: decode::Ipv6Ext<'a>) {
        match x.kind {
            0 | 60 => {
                self.out.s(if x.kind == 0 { "HBH " } else { "DSTOPT " });
                if self.o().verbose > 0 {
                    self.ipv6_opts(x.header.get(2..).unwrap_or(&[]));
                }
            }
            44 => {
                let offlg = be16(x.header, 2).unwrap_or(0);
                if self.o().verbose > 0 && x.header.len() < 8 {
                    // -v also prints the identification, which was not captured.
                    return self.trunc("frag6");
                }
                self.out.s("frag (");
                if self.o().verbose > 0 {
                    self.out.s("0x");
                    self.out.hex_width(u64::from(be32(x.header, 4).unwrap_or(0)), 8);
                    self.out.s(":");
                }
                self.out.u(u64::from(offlg & 0xfff8));
                self.out.s("|");
                self.out.u(u64::from(x.len));
                self.out.s(")");
                if offlg & 0xfff8 == 0 {
                    self.out.s(" ");
                }
            }
            43 => {
                let h = x.header;
                self.out.s("RT6");
                let fields = [" (len=", ", type=", ", segleft="];
                for (k, name) in fields.iter().enumerate() {
                    let Some(v) = u8_at(h, k + 1) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(name);
                    self.out.u(u64::from(v));
                    if k == 1 && v == 0 {
                        self.out.s(" [Deprecated]");
                    }
                }
                let rtype = h[2];
                if rtype == 4 {
                    let Some(last) = u8_at(h, 4) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(", last-entry=");
                    self.out.u(u64::from(last));
                    if self.o().verbose > 0 {
                        let Some(flags) = u8_at(h, 5) else {
                            self.out.s(") ");
                            return;
                        };
                        self.out.s(", flags=0x");
                        self.out.hex(u64::from(flags));
                    }
                    let Some(tag) = be16(h, 6) else {
                        self.out.s(") ");
                        return;
                    };
                    self.out.s(", tag=");
                    self.out.hex(u64::from(tag));
                    for k in 0..=usize::from(last) {
                        let at = 8 + 16 * k;
                        let Some(a) = h.get(at..at + 16) else { break };
                        self.out.s(", [");
                        self.out.u(k as u64);
                        self.out.s("]");
                        self.out.ip6(a);
                    }
                } else if rtype == 0 || rtype == 2 {
                    let mut at = 8;
                    let mut k = 0;
                    while let Some(a) = h.get(at..at + 16) {
                        self.out.s(", [");
                        self.out.u(k);
                        self.out.s("]");
                        self.out.ip6(a);
                        at += 16;
                        k += 1;
                    }
                }
                self.out.s(") ");
            }
            _ => {}
        }
    }

    pub(super) fn ipv6_opts(&mut self, mut opts: &[u8]) {
        while let Some(&t) = opts.first() {
            if t == 0 {
                self.out.s("(pad1)");
                opts = &opts[1..];
                continue;
            }
            let Some(&l) = opts.get(1) else { break };
            let body = opts.get(2..2 + usize::from(l)).unwrap_or(&[]);
            match t {
                1 => {
                    self.out.s("(padn)");
                }
                5 => {
                    self.out.s("(rtalert: 0x");
                    self.out.hex_width(u64::from(be16(body, 0).unwrap_or(0)), 4);
                    self.out.s(") ");
                }
                0xc2 => {
                    self.out.s("(jumbo: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s(") ");
                }
                _ => {
                    self.out.s("(opt_type 0x");
                    self.out.hex_width(u64::from(t), 2);
                    self.out.s(": len=");
                    self.out.u(u64::from(l));
                    self.out.s(") ");
                }
            }
            opts = opts.get(2 + usize::from(l)..).unwrap_or(&[]);
        }
        self.out.s(" ");
    }

    /// `src.sport > dst.dport: ` (or ports only after IPv6 extension headers, or addresses
    /// only without ports).
    pub(super) fn endpoints(&mut self, ip: IpRef<'a>, direct: bool, ports: Option<(u16, u16)>) {
        match ports {
            Some((sp, dp)) => {
                if direct {
                    ip.addr(self.out, true);
                    self.out.push(b'.');
                }
                self.out.u(u64::from(sp));
                self.out.s(" > ");
                if direct {
                    ip.addr(self.out, false);
                    self.out.push(b'.');
                }
                self.out.u(u64::from(dp));
                self.out.s(": ");
            }
            None => {
                ip.addr(self.out, true);
                self.out.s(" > ");
                ip.addr(self.out, false);
                self.out.s(": ");
            }
        }
    }
}

/// Whether tcpdump prints ports (not addresses alone) for this IP protocol.
fn has_ports(protocol: u8) -> bool {
    matches!(protocol, ipproto::TCP | ipproto::UDP | ipproto::SCTP | ipproto::DCCP)
}
