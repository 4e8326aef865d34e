//! TCP as tcpdump prints it: flags, relative sequence numbers, options, and the first line
//! of HTTP, RTSP and SSH payloads.

use sift_wire::{ipproto, tcp};

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
        names::tcp_flag_letters(self.out, flags, false);
        if self.out.len() == start {
            self.out.s("none");
        }
        self.out.s("]");
        let (mut seq, mut ack) = (t.seq, t.ack);
        let (mut thseq, mut thack, mut rev) = (0u32, 0u32, false);
        if !self.o().absolute_seq && flags & 0x10 != 0 {
            let (src, dst, v6): (&[u8], &[u8], bool) = match &ip {
                IpRef::V4(h) => (&h.src[..], &h.dst[..], false),
                IpRef::V6(h) => (&h.src[..], &h.dst[..], true),
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
            self.transport_checksum(ip, i, ipproto::TCP, t.len, tcp::field::CHECKSUM);
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
