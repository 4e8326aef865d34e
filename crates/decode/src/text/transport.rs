//! What the transport printers share: where a transport segment starts in the packet, whether
//! it is a fragment, and tcpdump's `-v` checksum remark.

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn fragmented(&self, i: usize) -> bool {
        self.d.layers()[..i].iter().any(|l| match l {
            Layer::Ipv4(ip) => ip.frag & 0x3fff != 0,
            Layer::Ipv6Ext(x) => x.kind == 44,
            _ => false,
        })
    }

    /// `, cksum 0x1234 (correct)` for TCP (`at` = checksum offset 16) with -v.
    pub(super) fn transport_checksum(
        &mut self,
        ip: IpRef<'a>,
        i: usize,
        proto: u8,
        len: u32,
        at: usize,
    ) {
        if self.o().skip_checksums {
            return;
        }
        let Some(seg) = self.segment(i, len) else { return };
        let stored = be16(seg, at).unwrap_or(0);
        let sum = pseudo_checksum(ip, proto, seg);
        self.out.s(", cksum 0x");
        self.out.hex_width(u64::from(stored), 4);
        if sum == 0 {
            self.out.s(" (correct)");
        } else {
            self.out.s(" (incorrect -> 0x");
            self.out.hex_width(u64::from(checksum::corrected(stored, sum)), 4);
            self.out.s(")");
        }
    }

    /// The captured bytes of layer `i` when all `len` of them were captured.
    pub(super) fn segment(&self, i: usize, len: u32) -> Option<&'a [u8]> {
        let start = match self.d.layers()[i] {
            Layer::Tcp(t) => t.options.as_ptr() as usize - 20,
            Layer::Udp(_) => return self.udp_bytes(i, len),
            _ => return None,
        };
        let off = start - self.d.data.as_ptr() as usize;
        self.d.data.get(off..off + len as usize)
    }

    pub(super) fn udp_bytes(&self, i: usize, len: u32) -> Option<&'a [u8]> {
        // UDP keeps no slice; find it right after the previous layer's header.
        let prev = i.checked_sub(1)?;
        let start = match self.d.layers()[prev] {
            Layer::Ipv4(ip) => self.offset_of(ip.header) + usize::from(ip.hlen),
            Layer::Ipv6(ip) => self.offset_of(ip.header) + ip.header.len(),
            Layer::Ipv6Ext(x) => self.offset_of(x.header) + x.hdr_len as usize,
            _ => return None,
        };
        self.d.data.get(start..start + len as usize)
    }
}
