//! Tunnels: GRE and Geneve (VXLAN's two fields are printed by the dispatcher).

use sift_wire::ethertype;

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn gre_flags(&mut self, flags: u16) {
        self.out.s(", Flags [");
        let start = self.out.len();
        for (bit, name) in [
            (0x8000u16, "checksum present"),
            (0x2000, "key present"),
            (0x1000, "sequence# present"),
        ] {
            if flags & bit != 0 {
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

    pub(super) fn gre(&mut self, i: usize, g: decode::Gre) {
        let version = g.flags & 7;
        self.out.s("GREv");
        self.out.u(u64::from(version));
        if version > 1 {
            self.out.s(" (invalid)");
            return;
        }
        if self.o().verbose > 0 {
            self.gre_flags(g.flags);
        }
        if self.o().link_header {
            self.out.s(", proto ");
            self.out.s(names::ethertype(g.protocol).unwrap_or("unknown"));
            self.out.s(" (0x");
            self.out.hex_width(u64::from(g.protocol), 4);
            self.out.s(")");
        }
        if let Some(k) = g.key {
            self.out.s(", key=0x");
            self.out.hex(u64::from(k));
        }
        if let Some(s) = g.seq {
            self.out.s(", seq ");
            self.out.u(u64::from(s));
        }
        self.out.s(", length ");
        self.out.u(u64::from(g.len));
        self.out.s(if self.o().verbose > 0 { "\n\t" } else { ": " });
        match g.protocol {
            ethertype::IPV4 | ethertype::IPV6 | ethertype::TEB | ethertype::MPLS => {
                self.layer(i + 1)
            }
            p => {
                self.out.s("gre-proto-0x");
                self.out.hex(u64::from(p));
            }
        }
    }

    pub(super) fn geneve(&mut self, i: usize, g: decode::Geneve<'a>) {
        self.out.s("Geneve");
        if g.version != 0 {
            self.out.s(" version ");
            self.out.u(u64::from(g.version));
            return;
        }
        self.out.s(", Flags [");
        match (g.oam, g.critical) {
            (false, false) => self.out.s("none"),
            (true, false) => self.out.s("O"),
            (false, true) => self.out.s("C"),
            (true, true) => self.out.s("O, C"),
        }
        self.out.s("], vni 0x");
        self.out.hex(u64::from(g.vni));
        if self.o().link_header {
            self.out.s(", proto ");
            self.out.s(names::ethertype(g.protocol).unwrap_or("unknown"));
            self.out.s(" (0x");
            self.out.hex_width(u64::from(g.protocol), 4);
            self.out.s(")");
        }
        if g.opt_len > 0 {
            self.out.s(", options [");
            if self.o().verbose > 0 {
                let mut opts = g.options;
                let mut first = true;
                while let (Some(class), Some(t), Some(l)) =
                    (be16(opts, 0), u8_at(opts, 2), u8_at(opts, 3))
                {
                    if !first {
                        self.out.s(", ");
                    }
                    first = false;
                    let len = 4 + usize::from(l & 0x1f) * 4;
                    self.out.s("class ");
                    self.out.s(if class == 0 { "Standard" } else { "Unknown" });
                    self.out.s(" (0x");
                    self.out.hex(u64::from(class));
                    self.out.s(") type 0x");
                    self.out.hex(u64::from(t));
                    if t & 0x80 != 0 {
                        self.out.s("(C)");
                    }
                    self.out.s(" len ");
                    self.out.u(len as u64);
                    if self.o().verbose > 1 && len > 4 {
                        self.out.s(" data");
                        let mut k = 4;
                        while let Some(w) = be32(opts, k).filter(|_| k < len) {
                            self.out.s(" ");
                            self.out.hex_width(u64::from(w), 8);
                            k += 4;
                        }
                    }
                    opts = opts.get(len..).unwrap_or(&[]);
                }
            } else {
                self.out.u(u64::from(g.opt_len));
                self.out.s(" bytes");
            }
            self.out.s("]");
        }
        self.out.s(if self.o().verbose > 0 { "\n\t" } else { ": " });
        match self.at(i + 1) {
            Some(Layer::Truncated { proto: Proto::Geneve, .. }) => self.trunc("geneve"),
            _ => self.layer(i + 1),
        }
    }
}
