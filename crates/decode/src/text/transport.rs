//! Transports and what tcpdump prints on top of them: TCP (flags, relative sequence numbers,
//! options, HTTP/SSH first lines), UDP (checksums, syslog), SCTP chunks, ICMP and ICMPv6.

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn tcp(&mut self, i: usize, t: decode::Tcp<'a>) {
        let Some((ip, direct)) = self.ip_before(i) else { return };
        self.endpoints(ip, direct, Some((t.sport, t.dport)));
        let hlen = u32::from(t.hlen);
        let length = t.len;
        if hlen < 20 {
            self.out.s(" tcp ");
            self.out.u(u64::from(length.wrapping_sub(hlen)));
            self.out.s(" [bad hdr length ");
            self.out.u(u64::from(hlen));
            self.out.s(" - too short, < 20]");
            return;
        }
        if self.o().quiet {
            self.out.s("tcp ");
            self.out.u(u64::from(length.wrapping_sub(hlen)));
            if hlen > length {
                self.out.s(" [bad hdr length ");
                self.out.u(u64::from(hlen));
                self.out.s(" - too long, > ");
                self.out.u(u64::from(length));
                self.out.s("]");
            }
            return;
        }
        self.out.s("Flags [");
        let flags = t.flags;
        let start = self.out.len();
        // tcpdump 4.99 prints the eight classic flags only (not AE).
        for (bit, c) in [
            (0x01u16, b'F'),
            (0x02, b'S'),
            (0x04, b'R'),
            (0x08, b'P'),
            (0x10, b'.'),
            (0x20, b'U'),
            (0x40, b'E'),
            (0x80, b'W'),
        ] {
            if flags & bit != 0 {
                self.out.push(c);
            }
        }
        if self.out.len() == start {
            self.out.s("none");
        }
        self.out.s("]");
        let (mut seq, mut ack) = (t.seq, t.ack);
        let (mut thseq, mut thack, mut rev) = (0u32, 0u32, false);
        if !self.o().absolute_seq && flags & 0x10 != 0 {
            let (src, dst, v6): (&[u8], &[u8], bool) = match ip {
                IpRef::V4(h) => (h.src, h.dst, false),
                IpRef::V6(h) => (h.src, h.dst, true),
            };
            rev = t.sport > t.dport || (t.sport == t.dport && src > dst);
            let mut key = ConvKey { src: [0; 16], dst: [0; 16], ports: 0, v6 };
            let (a, b) = if rev { (dst, src) } else { (src, dst) };
            key.src[..a.len()].copy_from_slice(a);
            key.dst[..b.len()].copy_from_slice(b);
            key.ports = if rev {
                u32::from(t.dport) << 16 | u32::from(t.sport)
            } else {
                u32::from(t.sport) << 16 | u32::from(t.dport)
            };
            let entry = self.p.tcp.get(&key).copied();
            let state = match entry {
                Some(s) if flags & 0x02 == 0 => {
                    if rev {
                        seq = seq.wrapping_sub(s.ack);
                        ack = ack.wrapping_sub(s.seq);
                    } else {
                        seq = seq.wrapping_sub(s.seq);
                        ack = ack.wrapping_sub(s.ack);
                    }
                    s
                }
                _ => {
                    let s = if rev {
                        ConvSeq { ack: seq, seq: ack.wrapping_sub(1) }
                    } else {
                        ConvSeq { seq, ack: ack.wrapping_sub(1) }
                    };
                    self.p.tcp.insert(key, s);
                    s
                }
            };
            thseq = state.seq;
            thack = state.ack;
        }
        if hlen > length {
            self.out.s(" [bad hdr length ");
            self.out.u(u64::from(hlen));
            self.out.s(" - too long, > ");
            self.out.u(u64::from(length));
            self.out.s("]");
            return;
        }
        if self.o().verbose > 0 && !self.fragmented(i) {
            self.transport_checksum(ip, i, 6, t.len, 16);
        }
        let dlen = length - hlen;
        if self.o().verbose > 1 || dlen > 0 || flags & 0x07 != 0 {
            self.out.s(", seq ");
            self.out.u(u64::from(seq));
            if dlen > 0 {
                self.out.s(":");
                self.out.u(u64::from(seq.wrapping_add(dlen)));
            }
        }
        if flags & 0x10 != 0 {
            self.out.s(", ack ");
            self.out.u(u64::from(ack));
        }
        self.out.s(", win ");
        self.out.u(u64::from(t.win));
        if flags & 0x20 != 0 {
            self.out.s(", urg ");
            self.out.u(u64::from(t.urp));
        }
        if hlen > 20 {
            let ok = self.tcp_options(t, rev, thseq, thack);
            if !ok {
                return;
            }
        }
        self.out.s(", length ");
        self.out.u(u64::from(dlen));
        if dlen == 0 {
            return;
        }
        if flags & 0x04 != 0 && self.o().verbose > 0 {
            return;
        }
        let body = match self.at(i + 1) {
            Some(Layer::Payload { data, .. }) => data,
            Some(Layer::Dns(dns)) => {
                self.out.s(" ");
                return self.dns(dns);
            }
            Some(Layer::Truncated { proto: Proto::Dns, .. }) => {
                self.out.s(" ");
                return self.trunc_soft("domain");
            }
            _ => &[][..],
        };
        if self.o().packet_type.is_some() {
            // tcpdump's -T: no dissection by port.
            return;
        }
        let port = |p: u16| t.sport == p || t.dport == p;
        if port(22) {
            if let Some(line) = ssh_banner(body, dlen as usize) {
                self.out.s(": SSH: ");
                self.out.extend_from_slice(line);
            }
        } else if port(80) || port(8080) {
            self.out.s(": ");
            self.http(body, dlen as usize, "HTTP");
        } else if port(554) || port(8554) {
            self.out.s(": ");
            self.http(body, dlen as usize, "RTSP");
        }
    }

    pub(super) fn fragmented(&self, i: usize) -> bool {
        self.d.layers()[..i].iter().any(|l| match l {
            Layer::Ipv4(ip) => ip.frag & 0x3fff != 0,
            Layer::Ipv6Ext(x) => x.kind == 44,
            _ => false,
        })
    }

    /// Returns false when the options were bad (tcpdump then stops the line).
    pub(super) fn tcp_options(
        &mut self,
        t: decode::Tcp<'a>,
        rev: bool,
        thseq: u32,
        thack: u32,
    ) -> bool {
        let mut hlen = usize::from(t.hlen) - 20;
        let cp = t.options;
        let mut at = 0;
        let mut ch = false;
        self.out.s(", options [");
        while hlen > 0 {
            if ch {
                self.out.s(",");
            }
            let Some(opt) = u8_at(cp, at) else {
                self.trunc("tcp");
                return false;
            };
            at += 1;
            let len;
            if opt == 0 || opt == 1 {
                len = 1;
            } else {
                let Some(l) = u8_at(cp, at) else {
                    self.trunc("tcp");
                    return false;
                };
                at += 1;
                len = usize::from(l);
                if len < 2 || len > hlen {
                    return self.bad_opt(ch);
                }
                hlen -= 1;
            }
            hlen -= 1;
            let name = match opt {
                0 => "eol",
                1 => "nop",
                2 => "mss",
                3 => "wscale",
                4 => "sackOK",
                5 => "sack",
                6 => "echo",
                7 => "echoreply",
                8 => "TS",
                11 => "cc",
                12 => "ccnew",
                13 => "ccecho",
                19 => "md5",
                20 => "scps",
                27 => "snack",
                28 => "uto",
                29 => "tcp-ao",
                30 => "mptcp",
                34 => "tfo",
                253 | 254 => "exp",
                _ => "",
            };
            if name.is_empty() {
                self.out.s("unknown-");
                self.out.u(u64::from(opt));
            } else {
                self.out.s(name);
            }
            let mut datalen = 0usize;
            // `Err(true)`: not captured (truncation), `Err(false)`: beyond the option length.
            let check = |need: usize, hlen: usize| -> Result<(), bool> {
                if need > hlen {
                    Err(false)
                } else if at + need > cp.len() {
                    Err(true)
                } else {
                    Ok(())
                }
            };
            let r: Result<(), bool> = (|| {
                match opt {
                    2 => {
                        datalen = 2;
                        check(2, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(be16(cp, at).unwrap_or(0)));
                    }
                    3 => {
                        datalen = 1;
                        check(1, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(cp[at]));
                    }
                    5 => {
                        datalen = len - 2;
                        if !datalen.is_multiple_of(8) {
                            self.out.s(" invalid sack");
                        } else {
                            self.out.s(" ");
                            self.out.u((datalen / 8) as u64);
                            self.out.s(" ");
                            let mut k = 0;
                            while k < datalen {
                                check(k + 4, hlen)?;
                                let s = be32(cp, at + k).unwrap_or(0);
                                check(k + 8, hlen)?;
                                let e = be32(cp, at + k + 4).unwrap_or(0);
                                let base = if rev { thseq } else { thack };
                                self.out.s("{");
                                self.out.u(u64::from(s.wrapping_sub(base)));
                                self.out.s(":");
                                self.out.u(u64::from(e.wrapping_sub(base)));
                                self.out.s("}");
                                k += 8;
                            }
                        }
                    }
                    6 | 7 | 11 | 12 | 13 => {
                        datalen = 4;
                        check(4, hlen)?;
                        self.out.s(" ");
                        self.out.u(u64::from(be32(cp, at).unwrap_or(0)));
                    }
                    8 => {
                        datalen = 8;
                        check(8, hlen)?;
                        self.out.s(" val ");
                        self.out.u(u64::from(be32(cp, at).unwrap_or(0)));
                        self.out.s(" ecr ");
                        self.out.u(u64::from(be32(cp, at + 4).unwrap_or(0)));
                    }
                    28 => {
                        datalen = 2;
                        check(2, hlen)?;
                        let v = be16(cp, at).unwrap_or(0);
                        self.out.s(" 0x");
                        self.out.hex(u64::from(v));
                        let secs =
                            if v & 1 != 0 { u32::from(v >> 1) * 60 } else { u32::from(v >> 1) };
                        self.out.s(" ");
                        self.out.u(u64::from(secs));
                    }
                    0 | 1 => {}
                    19 if len == 18 => {
                        datalen = 16;
                        check(16, hlen)?;
                        self.out.s(" shared secret not supplied with -M, can't check - ");
                        for k in 0..16 {
                            self.out.hex_width(u64::from(cp[at + k]), 2);
                        }
                    }
                    34 => {
                        datalen = len - 2;
                        self.out.s(" ");
                        if datalen == 0 {
                            self.out.s(" cookiereq");
                        } else if !datalen.is_multiple_of(2) || !(4..=16).contains(&datalen) {
                            self.out.s(" (invalid)");
                        } else {
                            check(datalen, hlen)?;
                            self.out.s(" cookie ");
                            for k in 0..datalen {
                                self.out.hex_width(u64::from(cp[at + k]), 2);
                            }
                        }
                    }
                    _ => {
                        datalen = len - 2;
                        if datalen > 0 {
                            self.out.s(" 0x");
                        }
                        for k in 0..datalen {
                            check(k + 1, hlen)?;
                            self.out.hex_width(u64::from(cp[at + k]), 2);
                        }
                    }
                }
                Ok(())
            })();
            match r {
                Ok(()) => {}
                Err(true) => {
                    self.trunc_soft("tcp");
                    if ch {
                        self.out.s(">");
                    }
                    return false;
                }
                Err(false) => return self.bad_opt(true),
            }
            at += datalen;
            hlen -= datalen;
            let mut used = datalen + 1;
            if opt > 1 {
                used += 1;
            }
            if used != len {
                self.out.s("[len ");
                self.out.u(len as u64);
                self.out.s("]");
            }
            ch = true;
            if opt == 0 {
                break;
            }
        }
        self.out.s("]");
        true
    }

    pub(super) fn bad_opt(&mut self, ch: bool) -> bool {
        self.out.s("[bad opt]");
        if ch {
            self.out.s("]");
        }
        false
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
            self.out.hex_width(u64::from(should_be(stored, sum)), 4);
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
            Layer::Ipv6(ip) => self.offset_of(ip.src) - 8 + 40,
            Layer::Ipv6Ext(x) => self.offset_of(x.header) + x.hdr_len as usize,
            _ => return None,
        };
        self.d.data.get(start..start + len as usize)
    }

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
                        self.out.hex_width(u64::from(should_be(u.checksum, sum)), 4);
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

    pub(super) fn http(&mut self, body: &[u8], len: usize, name: &str) {
        const CMDS: &[&str] = &[
            "OPTIONS",
            "GET",
            "HEAD",
            "POST",
            "PUT",
            "DELETE",
            "TRACE",
            "CONNECT",
            "PROPFIND",
            "PROPPATCH",
            "MKCOL",
            "COPY",
            "MOVE",
            "LOCK",
            "UNLOCK",
            "POLL",
            "BCOPY",
            "BMOVE",
            "SEARCH",
            "BDELETE",
            "BPROPFIND",
            "BPROPPATCH",
            "SUBSCRIBE",
            "UNSUBSCRIBE",
            "NOTIFY",
            "ACL",
            "BIND",
            "CHECKIN",
            "CHECKOUT",
            "LABEL",
            "LINK",
            "MERGE",
            "MKACTIVITY",
            "MKWORKSPACE",
            "REBIND",
            "REPORT",
            "UNBIND",
            "UNCHECKOUT",
            "UNLINK",
            "UPDATE",
            "VERSION-CONTROL",
            "BASELINE-CONTROL",
            "MKREDIRECTREF",
            "UPDATEREDIRECTREF",
            "ORDERPATCH",
            "DESCRIBE",
            "ANNOUNCE",
            "GET_PARAMETER",
            "PAUSE",
            "PLAY",
            "RECORD",
            "REDIRECT",
            "SETUP",
            "SET_PARAMETER",
            "TEARDOWN",
        ];
        let body = &body[..body.len().min(len)];
        let mut print = false;
        let (idx, tok) = fetch_token(body, 0, len);
        if idx != 0 {
            if CMDS.iter().any(|c| c.as_bytes().eq_ignore_ascii_case(tok)) {
                print = true;
            }
            let (idx2, tok2) = fetch_token(body, idx, len);
            if idx2 != 0 && tok2.len() == 3 && tok2.iter().all(u8::is_ascii_digit) {
                print = true;
            }
        }
        self.out.s(name);
        if print {
            if self.o().verbose > 0 {
                self.out.s(", length: ");
                self.out.u(len as u64);
                let mut at = 0;
                while at < len {
                    match print_txt_line(self.out, "\n\t", body, at, len) {
                        Ok(Some(next)) => at = next,
                        Ok(None) => break,
                        Err(()) => {
                            self.trunc(&name.to_ascii_lowercase());
                            break;
                        }
                    }
                }
            } else if print_txt_line(self.out, ": ", body, 0, len).is_err() {
                self.trunc(&name.to_ascii_lowercase());
            }
        }
    }

    pub(super) fn sctp(&mut self, i: usize, s: decode::Sctp<'a>) {
        // Unlike TCP and UDP, tcpdump's SCTP printer always shows the addresses.
        let Some((ip, _)) = self.ip_before(i) else { return };
        self.endpoints(ip, true, Some((s.sport, s.dport)));
        self.out.s("sctp");
        let mut sep = if self.o().verbose >= 2 { "\n\t" } else { " (" };
        let mut off = 0;
        let chunks = s.chunks;
        let mut remaining = s.len.saturating_sub(12) as usize;
        let mut n = 0;
        while remaining > 0 {
            let Some(ctype) = u8_at(chunks, off) else {
                self.trunc_soft("sctp");
                return;
            };
            let (Some(flags), Some(clen)) = (u8_at(chunks, off + 1), be16(chunks, off + 2)) else {
                self.trunc_soft("sctp");
                return;
            };
            let clen = usize::from(clen);
            if off + clen > chunks.len() {
                self.trunc_soft("sctp");
                return;
            }
            n += 1;
            self.out.s(sep);
            self.out.u(n);
            self.out.s(") ");
            if clen < 4 {
                self.out.s("[Bad chunk length ");
                self.out.u(clen as u64);
                self.out.s(", < size of chunk descriptor]");
                return;
            }
            let align = (4 - clen % 4) % 4;
            if clen > remaining {
                self.out.s("[Bad chunk length ");
                self.out.u(clen as u64);
                self.out.s(", > remaining data in packet]");
                return;
            }
            self.out.s("[");
            match names::sctp_chunk(ctype) {
                Some(name) => self.out.s(name),
                None => {
                    self.out.s("Unknown chunk type: 0x");
                    self.out.hex(u64::from(ctype));
                }
            }
            self.out.s("] ");
            let body = chunks.get(off + 4..off + clen).unwrap_or(&[]);
            let need = |k: usize| body.len() >= k;
            match ctype {
                0 => {
                    if flags & 4 != 0 {
                        self.out.s("(U)");
                    }
                    if flags & 2 != 0 {
                        self.out.s("(B)");
                    }
                    if flags & 1 != 0 {
                        self.out.s("(E)");
                    }
                    if flags & 7 != 0 {
                        self.out.s(" ");
                    }
                    if !need(12) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    self.out.s("[TSN: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [SID: ");
                    self.out.u(u64::from(be16(body, 4).unwrap_or(0)));
                    self.out.s("] [SSEQ ");
                    self.out.u(u64::from(be16(body, 6).unwrap_or(0)));
                    self.out.s("] [PPID 0x");
                    self.out.hex(u64::from(be32(body, 8).unwrap_or(0)));
                    self.out.s("] ");
                    if self.o().verbose > 1 {
                        self.out.s("[Payload:");
                        hex_dump(self.out, &body[12..], true);
                        self.out.s("]");
                    }
                }
                1 | 2 => {
                    if !need(16) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    self.out.s("[init tag: ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [rwnd: ");
                    self.out.u(u64::from(be32(body, 4).unwrap_or(0)));
                    self.out.s("] [OS: ");
                    self.out.u(u64::from(be16(body, 8).unwrap_or(0)));
                    self.out.s("] [MIS: ");
                    self.out.u(u64::from(be16(body, 10).unwrap_or(0)));
                    self.out.s("] [init TSN: ");
                    self.out.u(u64::from(be32(body, 12).unwrap_or(0)));
                    self.out.s("] ");
                }
                3 => {
                    if !need(12) {
                        self.trunc_soft("sctp");
                        return;
                    }
                    let gaps = be16(body, 8).unwrap_or(0);
                    let dups = be16(body, 10).unwrap_or(0);
                    self.out.s("[cum ack ");
                    self.out.u(u64::from(be32(body, 0).unwrap_or(0)));
                    self.out.s("] [a_rwnd ");
                    self.out.u(u64::from(be32(body, 4).unwrap_or(0)));
                    self.out.s("] [#gap acks ");
                    self.out.u(u64::from(gaps));
                    self.out.s("] [#dup tsns ");
                    self.out.u(u64::from(dups));
                    self.out.s("] ");
                }
                _ => {}
            }
            if self.o().verbose < 2 {
                sep = ", (";
            }
            let step = clen + align;
            if align > 0 && off + step > chunks.len() && remaining > clen {
                self.trunc_soft("sctp");
                return;
            }
            off += step;
            remaining = remaining.saturating_sub(step);
        }
    }

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
                let inner = rest.get(4..).unwrap_or(&[]);
                let dst = inner.get(16..20);
                let ihl = inner.first().map_or(0, |b| usize::from(b & 15) * 4);
                let proto = u8_at(inner, 9).unwrap_or(0);
                let Some(dst) = dst else {
                    self.trunc("icmp");
                    return;
                };
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
                        let Some(port) = be16(inner, ihl + 2) else {
                            self.trunc("icmp");
                            return;
                        };
                        self.out.ip4(dst);
                        match proto {
                            6 => self.out.s(" tcp port "),
                            17 => self.out.s(" udp port "),
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
                self.out.hex_width(u64::from(should_be(m.checksum, sum)), 4);
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
                let inner = rest.get(4..).unwrap_or(&[]);
                let Some(dst) = inner.get(24..40) else { return self.trunc("icmp6") };
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
                    let (Some(&nh), Some(dport)) = (inner.get(6), be16(inner, 42)) else {
                        return self.trunc("icmp6");
                    };
                    self.out.s(what);
                    self.out.ip6(dst);
                    match nh {
                        6 => self.out.s(" tcp port "),
                        17 => self.out.s(" udp port "),
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

/// An SSH version line (`SSH-…`) at the start of `p`, without its line end.
fn ssh_banner(p: &[u8], len: usize) -> Option<&[u8]> {
    let p = &p[..p.len().min(len)];
    if !p.starts_with(b"SSH-") {
        return None;
    }
    let mut idx = 4;
    while idx < len {
        let c = *p.get(idx)?;
        if c == b'\n' {
            break;
        } else if c == b'\r' {
            if p.get(idx + 1) == Some(&b'\n') {
                break;
            }
            return None;
        } else if !(0x20..0x7f).contains(&c) {
            return None;
        }
        idx += 1;
    }
    Some(&p[..idx])
}

/// One token of a text protocol line, as tcpdump's `fetch_token`: returns the index after the
/// token and its trailing blanks (0 when there is no token) and the token.
fn fetch_token(p: &[u8], mut idx: usize, len: usize) -> (usize, &[u8]) {
    let start = idx;
    while idx < len {
        let Some(&c) = p.get(idx) else { return (0, &[]) };
        if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
            break;
        }
        if !(0x20..0x7f).contains(&c) {
            return (0, &[]);
        }
        if idx - start + 2 > 129 {
            return (0, &[]);
        }
        idx += 1;
    }
    if idx == start {
        return (0, &[]);
    }
    let tok = &p[start..idx];
    while idx < len {
        let Some(&c) = p.get(idx) else { break };
        if c == b'\r' || c == b'\n' {
            break;
        }
        if !(0x20..0x7f).contains(&c) {
            break;
        }
        if c != b' ' && c != b'\t' {
            break;
        }
        idx += 1;
    }
    (idx, tok)
}

/// tcpdump's `print_txt_line`: prints one line with `prefix`; `Ok(Some(next))` after a line
/// end, `Ok(None)` when the text stops being a line, `Err` when the text ends before a line
/// end (the line is printed; tcpdump then marks the truncation).
fn print_txt_line(
    out: &mut Vec<u8>,
    prefix: &str,
    p: &[u8],
    mut idx: usize,
    len: usize,
) -> Result<Option<usize>, ()> {
    let start = idx;
    while idx < len {
        let Some(&c) = p.get(idx) else { return Err(()) };
        if c == b'\n' {
            out.s(prefix);
            out.extend_from_slice(&p[start..idx]);
            return Ok(Some(idx + 1));
        } else if c == b'\r' {
            if idx + 1 >= len {
                return Ok(None);
            }
            let Some(&n) = p.get(idx + 1) else { return Err(()) };
            if n == b'\n' {
                out.s(prefix);
                out.extend_from_slice(&p[start..idx]);
                return Ok(Some(idx + 2));
            }
            return Ok(None);
        } else if !(0x20..0x7f).contains(&c) && c != b'\t' {
            return Ok(None);
        }
        idx += 1;
    }
    out.s(prefix);
    out.extend_from_slice(&p[start..idx]);
    Err(())
}
