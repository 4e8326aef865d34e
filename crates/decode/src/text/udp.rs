//! UDP as tcpdump prints it: lengths, checksums with `-v`, and syslog.

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn udp(&mut self, i: usize, u: decode::Udp) {
        let Some((ip, direct)) = self.ip_before(i) else { return };
        let ports = Some((u.sport, u.dport));
        let length = u.len;
        if length < 8 {
            self.endpoints(ip, direct, ports);
            self.out.s("truncated-udp ");
            self.out.u(u64::from(length));
            return;
        }
        let mut ulen = u32::from(u.ulen);
        if ulen == 0 && length > 65535 {
            ulen = length;
        }
        if ulen < 8 {
            self.endpoints(ip, direct, ports);
            self.out.s("truncated-udplength ");
            self.out.u(u64::from(ulen));
            return;
        }
        let ulen = ulen - 8;
        let length = (length - 8).min(ulen);
        self.endpoints(ip, direct, ports);
        let fragmented = self.fragmented(i);
        // tcpdump's -T hands the payload over before the checksum is looked at.
        let checked = !self.o().skip_checksums && self.o().packet_type.is_none();
        if self.o().verbose > 0 && !fragmented && checked {
            let v6 = matches!(ip, IpRef::V6(_));
            if v6 || self.o().verbose > 1 {
                if !v6 && u.checksum == 0 {
                    self.out.s("[no cksum] ");
                } else if let Some(seg) = self.udp_bytes(i, length + 8) {
                    let sum = pseudo_checksum(ip, 17, seg);
                    if sum == 0 {
                        self.out.s("[udp sum ok] ");
                    } else {
                        self.out.s("[bad udp cksum 0x");
                        self.out.hex_width(u64::from(u.checksum), 4);
                        self.out.s(" -> 0x");
                        self.out.hex_width(u64::from(checksum::corrected(u.checksum, sum)), 4);
                        self.out.s("!] ");
                    }
                }
            }
        }
        if !self.o().quiet {
            match self.at(i + 1) {
                Some(Layer::Dns(dns)) => return self.dns(dns),
                Some(Layer::Truncated { proto: Proto::Dns, .. }) => {
                    // tcpdump's domain printer reads the id first.
                    return self.trunc_soft("domain");
                }
                Some(Layer::Vxlan(_) | Layer::Geneve(_))
                | Some(Layer::Truncated { proto: Proto::Vxlan | Proto::Geneve, .. }) => {
                    return self.layer(i + 1);
                }
                Some(Layer::Payload { data, .. }) if (u.sport == 514 || u.dport == 514) => {
                    return self.syslog(data, length);
                }
                _ => {}
            }
        }
        if ulen > length && !fragmented {
            self.out.s("UDP, bad length ");
            self.out.u(u64::from(ulen));
            self.out.s(" > ");
            self.out.u(u64::from(length));
        } else {
            self.out.s("UDP, length ");
            self.out.u(u64::from(ulen));
        }
    }

    pub(super) fn syslog(&mut self, data: &[u8], len: u32) {
        // The priority is read before anything is printed.
        let invalid = |w: &mut Self| w.out.s(" (invalid)");
        let Some(&first) = data.first() else { return self.trunc("syslog") };
        if first != b'<' {
            return invalid(self);
        }
        let mut pri: u32 = 0;
        let mut k = 1;
        loop {
            let Some(&c) = data.get(k) else { return self.trunc("syslog") };
            if k <= 3 && c.is_ascii_digit() {
                pri = pri * 10 + u32::from(c - b'0');
                k += 1;
            } else {
                break;
            }
        }
        if data.get(k) != Some(&b'>') {
            return invalid(self);
        }
        let fac = (pri >> 3) as usize;
        // tcpdump's "unknown (N)" for facilities past the table; N is at most 124.
        let mut fac_buf = *b"unknown (   )";
        let fac_name: &str = match names::SYSLOG_FACILITY.get(fac) {
            Some(n) => n,
            None => {
                let digits = [
                    b'0' + (fac / 100) as u8,
                    b'0' + (fac / 10 % 10) as u8,
                    b'0' + (fac % 10) as u8,
                ];
                let skip = if fac >= 100 {
                    0
                } else if fac >= 10 {
                    1
                } else {
                    2
                };
                let n = 3 - skip;
                fac_buf[9..9 + n].copy_from_slice(&digits[skip..]);
                fac_buf[9 + n] = b')';
                std::str::from_utf8(&fac_buf[..10 + n]).unwrap_or("unknown")
            }
        };
        self.out.s("SYSLOG");
        if self.o().verbose > 0 {
            self.out.s(", length: ");
            self.out.u(u64::from(len));
            self.out.s("\n\tFacility ");
            self.out.s(fac_name);
            self.out.s(" (");
            self.out.u(fac as u64);
            self.out.s("), Severity ");
            self.out.s(names::SYSLOG_SEVERITY[(pri & 7) as usize]);
            self.out.s(" (");
            self.out.u(u64::from(pri & 7));
            self.out.s(")\n\tMsg: ");
            for k2 in k + 1..len as usize {
                let Some(&c) = data.get(k2) else {
                    self.trunc("syslog");
                    return;
                };
                if (0x20..0x7f).contains(&c) {
                    self.out.push(c);
                } else {
                    self.out.s("\\0x");
                    self.out.hex_width(u64::from(c), 2);
                }
            }
            if self.o().verbose > 1 {
                hex_dump(self.out, &data[..data.len().min(len as usize)], false);
            }
            return;
        }
        self.out.s(" ");
        self.out.s(fac_name);
        self.out.s(".");
        self.out.s(names::SYSLOG_SEVERITY[(pri & 7) as usize]);
        self.out.s(", length: ");
        self.out.u(u64::from(len));
    }
}
