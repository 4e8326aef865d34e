//! Tunnels: GRE, VXLAN and Geneve, and what they carry.

use sift_wire::ethertype;
use sift_wire::geneve::{self, GenevePacket};
use sift_wire::gre::{self, GrePacket};
use sift_wire::vxlan::{self, VxlanPacket};

use super::{Cx, Geneve, Gre, Layer, Proto, Unknown, Vxlan, sub};

impl<'a> Cx<'_, 'a> {
    pub(super) fn gre(&mut self, data: &'a [u8], len: u32) {
        if data.len() < gre::HEADER_LEN {
            self.trunc(Proto::Gre, data, len);
            return;
        }
        let p = GrePacket::new_unchecked(data);
        let hl = p.header_len();
        if data.len() < hl {
            // An optional field (checksum, key, sequence number) was not captured.
            self.trunc(Proto::Gre, data, len);
            return;
        }
        let protocol = p.protocol_type();
        let g = Gre {
            flags: p.flags(),
            protocol,
            checksum: p.checksum(),
            key: p.key(),
            seq: p.seq(),
            len,
        };
        if !self.push(Layer::Gre(g)) || p.version() != 0 {
            return;
        }
        let rest = p.payload();
        let l = sub(len, hl);
        match protocol {
            ethertype::IPV4 => self.ipv4(rest, l),
            ethertype::IPV6 => self.ipv6(rest, l),
            ethertype::TEB => {
                self.ether(rest, l);
            }
            ethertype::MPLS => self.mpls(rest, l),
            other => {
                self.push(Layer::Unknown { what: Unknown::EtherType(other), data: rest, len: l });
            }
        }
    }

    pub(super) fn vxlan(&mut self, data: &'a [u8], len: u32) {
        if data.len() < vxlan::HEADER_LEN {
            self.trunc(Proto::Vxlan, data, len);
            return;
        }
        let p = VxlanPacket::new_unchecked(data);
        if self.push(Layer::Vxlan(Vxlan { flags: p.flags(), vni: p.vni(), len })) {
            self.ether(p.payload(), sub(len, vxlan::HEADER_LEN));
        }
    }

    pub(super) fn geneve(&mut self, data: &'a [u8], len: u32) {
        if data.len() < geneve::HEADER_LEN {
            self.trunc(Proto::Geneve, data, len);
            return;
        }
        let p = GenevePacket::new_unchecked(data);
        let protocol = p.protocol_type();
        let hl = p.header_len();
        let g = Geneve {
            version: p.version(),
            opt_len: p.options_len() as u32,
            oam: p.oam(),
            critical: p.critical(),
            protocol,
            vni: p.vni(),
            options: &data[geneve::HEADER_LEN..hl.min(data.len())],
            len,
        };
        if !self.push(Layer::Geneve(g)) {
            return;
        }
        if data.len() < hl {
            self.trunc(Proto::Geneve, data, len);
            return;
        }
        let rest = p.payload();
        let l = sub(len, hl);
        if protocol == ethertype::TEB {
            self.ether(rest, l);
        } else {
            self.ethertype(protocol, rest, l);
        }
    }
}
