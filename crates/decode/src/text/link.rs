//! Link layers and what rides directly on them: Ethernet, Linux cooked v1/v2, 802.1Q tags, MPLS
//! label stacks, PPPoE and ARP.

use sift_wire::ethertype;

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn ether(&mut self, i: usize, e: decode::Ether) {
        let eflag = self.o().link_header;
        if let Some(Layer::Truncated { proto: Proto::Vlan, .. }) = self.at(i + 1) {
            // A cut 802.1Q tag: tcpdump stops inside its link-layer header.
            if eflag {
                self.out.mac(&e.src);
                self.out.s(" > ");
                self.out.mac(&e.dst);
                self.out.s(", ");
            }
            return self.trunc_soft("vlan");
        }
        if eflag {
            self.out.mac(&e.src);
            self.out.s(" > ");
            self.out.mac(&e.dst);
            self.out.s(", ");
            if e.ethertype < 0x600 {
                self.out.s("802.3, length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            } else if self.o().quiet {
                match names::ethertype(e.ethertype) {
                    Some(n) => self.out.s(n),
                    None => {
                        self.out.s("ethertype Unknown (0x");
                        self.out.hex_width(u64::from(e.ethertype), 4);
                        self.out.s(")");
                    }
                }
                self.out.s(", length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            } else {
                ethertype_text(self.out, e.ethertype);
                self.out.s(", length ");
                self.out.u(u64::from(e.len));
                self.out.s(": ");
            }
        } else if e.ethertype < 0x600 {
            self.out.mac(&e.src);
            self.out.s(" > ");
            self.out.mac(&e.dst);
            self.out.s(", 802.3, length ");
            self.out.u(u64::from(e.len));
            self.out.s(": ");
        }
        self.layer(i + 1);
    }

    pub(super) fn sll(&mut self, i: usize, s: decode::Sll<'a>) {
        // An unknown protocol makes tcpdump print the header as -e would.
        let unknown = matches!(self.at(i + 1), Some(Layer::Unknown { .. }));
        let eflag = self.o().link_header || unknown;
        if s.version == 2 {
            let name = self.p.ifname(s.ifindex).unwrap_or("?");
            self.out.extend_from_slice(name.as_bytes());
            for _ in name.len()..5 {
                self.out.push(b' ');
            }
            self.out.push(b' ');
            let t = pkttype_name(s.pkttype);
            self.out.s(t);
            for _ in t.len()..3 {
                self.out.push(b' ');
            }
            self.out.push(b' ');
            if eflag {
                self.out.s("ifindex ");
                self.out.u(u64::from(s.ifindex));
                self.out.push(b' ');
            }
        } else if eflag {
            let t = pkttype_name(s.pkttype);
            for _ in t.len()..3 {
                self.out.push(b' ');
            }
            self.out.s(t);
            self.out.push(b' ');
        }
        if eflag {
            if s.addr.len() == 6 {
                self.out.mac(s.addr);
                self.out.push(b' ');
            }
            if !self.o().quiet {
                if s.protocol < 0x600 {
                    match s.protocol {
                        1 => self.out.s("802.3"),
                        4 => self.out.s("802.2"),
                        p => {
                            self.out.s("ethertype Unknown (0x");
                            self.out.hex_width(u64::from(p), 4);
                            self.out.s(")");
                        }
                    }
                } else {
                    ethertype_text(self.out, s.protocol);
                }
                self.out.s(", length ");
                self.out.u(u64::from(s.len));
                self.out.s(": ");
            }
        }
        self.layer(i + 1);
    }

    pub(super) fn vlan(&mut self, i: usize, v: decode::Vlan) {
        if self.o().link_header {
            self.out.s("vlan ");
            self.out.u(u64::from(v.vid));
            self.out.s(", p ");
            self.out.u(u64::from(v.pcp));
            if v.dei {
                self.out.s(", DEI");
            }
            self.out.s(", ");
            if let Some(Layer::Truncated { proto: Proto::Vlan, .. }) = self.at(i + 1) {
                return self.trunc_soft("vlan");
            }
            match names::ethertype(v.ethertype) {
                Some(n) if self.o().quiet => self.out.s(n),
                _ => ethertype_text(self.out, v.ethertype),
            }
            self.out.s(", ");
        }
        self.layer(i + 1);
    }

    pub(super) fn mpls(&mut self, i: usize) {
        let mut j = i;
        self.out.s("MPLS");
        while let Some(Layer::Mpls(m)) = self.at(j) {
            self.out.s(if j > i && self.o().verbose > 0 { "\n\t(label " } else { " (label " });
            self.out.u(u64::from(m.label));
            self.out.s(", tc ");
            self.out.u(u64::from(m.tc));
            if m.bottom {
                self.out.s(", [S]");
            }
            self.out.s(", ttl ");
            self.out.u(u64::from(m.ttl));
            self.out.s(")");
            j += 1;
        }
        match self.at(j) {
            Some(Layer::Truncated { proto: Proto::Mpls, .. }) => self.trunc("mpls"),
            Some(Layer::Payload { data, .. }) => self.default_print(data),
            None => {}
            Some(_) => {
                self.out.s(if self.o().verbose > 0 { "\n\t" } else { " " });
                self.layer(j);
            }
        }
    }

    pub(super) fn pppoe(&mut self, i: usize, p: decode::Pppoe<'a>) {
        self.out.s("PPPoE ");
        self.out.s(match p.code {
            0 => "",
            0x09 => "PADI",
            0x07 => "PADO",
            0x19 => "PADR",
            0x65 => "PADS",
            0xa7 => "PADT",
            _ => "Unknown",
        });
        if p.code == 0 {
            self.out.s(" [ses 0x");
            self.out.hex(u64::from(p.session));
            self.out.s("] ");
            let cut = matches!(self.at(i + 1), Some(Layer::Truncated { proto: Proto::Ppp, .. }));
            if self.o().link_header && !cut {
                match p.ppp_protocol {
                    0x0021 => self.out.s("IP"),
                    0x0057 => self.out.s("IP6"),
                    _ => self.out.s("unknown"),
                }
                self.out.s(" (0x");
                self.out.hex_width(u64::from(p.ppp_protocol), 4);
                self.out.s("), length ");
                self.out.u(u64::from(p.payload_len));
                self.out.s(": ");
            }
            self.layer(i + 1);
        } else {
            if p.session != 0 {
                self.out.s(" [ses 0x");
                self.out.hex(u64::from(p.session));
                self.out.s("]");
            }
            self.pppoe_tags(p.tags);
        }
    }

    pub(super) fn pppoe_tags(&mut self, tags: &[u8]) {
        let mut off = 0;
        while let (Some(t), Some(l)) = (be16(tags, off), be16(tags, off + 2)) {
            let body = tags.get(off + 4..off + 4 + usize::from(l)).unwrap_or(&[]);
            let name = match t {
                0 => "EOL",
                0x0101 => "Service-Name",
                0x0102 => "AC-Name",
                0x0103 => "Host-Uniq",
                0x0104 => "AC-Cookie",
                0x0105 => "Vendor-Specific",
                0x0110 => "Relay-Session-ID",
                0x0120 => "PPP-Max-Payload",
                0x0201 => "Service-Name-Error",
                0x0202 => "AC-System-Error",
                0x0203 => "Generic-Error",
                _ => "",
            };
            self.out.s(" [");
            if name.is_empty() {
                self.out.s("TAG-0x");
                self.out.hex(u64::from(t));
            } else {
                self.out.s(name);
            }
            if !body.is_empty() {
                self.out.s(" ");
                let printable = body.iter().all(|b| (0x20..0x7f).contains(b));
                if printable {
                    self.out.extend_from_slice(body);
                } else {
                    self.out.s("0x");
                    for b in body {
                        for nib in [b >> 4, b & 15] {
                            self.out.push(b"0123456789ABCDEF"[usize::from(nib)]);
                        }
                    }
                }
            }
            self.out.s("]");
            off += 4 + usize::from(l);
            if t == 0 {
                break;
            }
        }
    }

    pub(super) fn arp(&mut self, a: decode::Arp<'a>) {
        if !a.complete {
            self.trunc("arp");
            return;
        }
        if !self.o().link_header {
            self.out.s("ARP, ");
        }
        if self.o().verbose > 0
            && a.ptype == ethertype::IPV4
            && a.hlen == 6
            && a.plen == 4
            && (a.htype == 1 || a.htype == 6)
        {
            self.out.s(if a.htype == 1 { "Ethernet" } else { "IEEE 802" });
            self.out.s(" (len 6), IPv4 (len 4), ");
        }
        let ethernet_ipv4 = a.ptype == ethertype::IPV4 && a.hlen == 6 && a.plen == 4;
        if !ethernet_ipv4 || !(a.htype == 1 || a.htype == 6) {
            // Not Ethernet/IPv4: tcpdump prints the numbers.
            self.out.s("hardware #");
            self.out.u(u64::from(a.htype));
            self.out.s(", length ");
            self.out.u(u64::from(a.len));
            return;
        }
        if !a.complete {
            self.trunc("arp");
            return;
        }
        match a.op {
            1 => {
                self.out.s("Request who-has ");
                self.out.ip4(a.tpa);
                if a.tha.iter().any(|b| *b != 0) {
                    self.out.s(" (");
                    self.out.mac(a.tha);
                    self.out.s(")");
                }
                self.out.s(" tell ");
                self.out.ip4(a.spa);
            }
            2 => {
                self.out.s("Reply ");
                self.out.ip4(a.spa);
                self.out.s(" is-at ");
                self.out.mac(a.sha);
            }
            3 => {
                self.out.s("Reverse Request who-is ");
                self.out.mac(a.tha);
                self.out.s(" tell ");
                self.out.mac(a.sha);
            }
            4 => {
                self.out.s("Reverse Reply ");
                self.out.mac(a.tha);
                self.out.s(" at ");
                self.out.ip4(a.tpa);
            }
            8 => {
                self.out.s("Inverse Request who-is ");
                self.out.mac(a.tha);
                self.out.s(" tell ");
                self.out.mac(a.sha);
            }
            9 => {
                self.out.s("Inverse Reply ");
                self.out.mac(a.sha);
                self.out.s(" at ");
                self.out.ip4(a.spa);
            }
            op => {
                self.out.s("Unknown (");
                self.out.u(u64::from(op));
                self.out.s(")");
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(a.len));
    }
}
