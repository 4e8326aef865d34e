//! DNS messages as tcpdump's domain printer shows them: id, flags, questions, answers.

use super::*;

impl<'a> Walk<'_, 'a> {
    pub(super) fn dns(&mut self, dns: Dns<'a>) {
        let msg = dns.msg;
        let f = dns.flags;
        let opcode = (f >> 11) & 15;
        let ops = [
            "",
            " inv_q",
            " stat",
            " op3",
            " notify",
            " update",
            " op6",
            " op7",
            " op8",
            " updateA",
            " updateD",
            " updateDA",
            " updateM",
            " updateMA",
            " zoneInit",
            " zoneRef",
        ];
        self.out.u(u64::from(dns.id));
        self.out.s(ops[usize::from(opcode)]);
        let v = self.o().verbose;
        let mut cp = 12usize;
        if f & 0x8000 != 0 {
            let rcode = f & 15;
            let rname = match rcode {
                0 => "",
                1 => " FormErr",
                2 => " ServFail",
                3 => " NXDomain",
                4 => " NotImp",
                5 => " Refused",
                6 => " YXDomain",
                7 => " YXRRSet",
                8 => " NXRRSet",
                9 => " NotAuth",
                10 => " NotZone",
                _ => "",
            };
            if rname.is_empty() && rcode > 10 {
                self.out.s(" Resp");
                self.out.u(u64::from(rcode));
            } else {
                self.out.s(rname);
            }
            if f & 0x0400 != 0 {
                self.out.s("*");
            }
            if f & 0x0080 == 0 {
                self.out.s("-");
            }
            if f & 0x0200 != 0 {
                self.out.s("|");
            }
            if dns.qdcount != 1 {
                self.out.s(" [");
                self.out.u(u64::from(dns.qdcount));
                self.out.s("q]");
            }
            for q in 0..dns.qdcount {
                if v > 1 {
                    if q != 0 {
                        self.out.s(",");
                    }
                    self.out.s(" q:");
                    match self.dns_question(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                } else {
                    match decode::dns_name(msg, cp, |_| {}) {
                        Some(n) => cp = n + 4,
                        None => return self.trunc_soft("domain"),
                    }
                }
            }
            self.out.s(" ");
            self.out.u(u64::from(dns.ancount));
            self.out.s("/");
            self.out.u(u64::from(dns.nscount));
            self.out.s("/");
            self.out.u(u64::from(dns.arcount));
            let mut left = dns.ancount;
            if left > 0 {
                match self.dns_record(msg, cp) {
                    Some(n) => cp = n,
                    None => return self.trunc_soft("domain"),
                }
                left -= 1;
                while cp < msg.len() && left > 0 {
                    self.out.s(",");
                    match self.dns_record(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                    left -= 1;
                }
            }
            if left > 0 {
                return self.trunc_soft("domain");
            }
        } else {
            if f & 0x0100 != 0 {
                self.out.s("+");
            }
            if f & 0x0010 != 0 {
                self.out.s("%");
            }
            if f & 0x6cf != 0 {
                self.out.s(" [b2&3=0x");
                self.out.hex(u64::from(f));
                self.out.s("]");
            }
            if opcode == 1 {
                if dns.qdcount != 0 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.qdcount));
                    self.out.s("q]");
                }
                if dns.ancount != 1 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.ancount));
                    self.out.s("a]");
                }
            } else {
                if dns.ancount != 0 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.ancount));
                    self.out.s("a]");
                }
                if dns.qdcount != 1 {
                    self.out.s(" [");
                    self.out.u(u64::from(dns.qdcount));
                    self.out.s("q]");
                }
            }
            if dns.nscount != 0 {
                self.out.s(" [");
                self.out.u(u64::from(dns.nscount));
                self.out.s("n]");
            }
            if dns.arcount != 0 {
                self.out.s(" [");
                self.out.u(u64::from(dns.arcount));
                self.out.s("au]");
            }
            let mut left = dns.qdcount;
            if left > 0 {
                match self.dns_question(msg, cp) {
                    Some(n) => cp = n,
                    None => return self.trunc_soft("domain"),
                }
                left -= 1;
                while cp < msg.len() && left > 0 {
                    match self.dns_question(msg, cp) {
                        Some(n) => cp = n,
                        None => return self.trunc_soft("domain"),
                    }
                    left -= 1;
                }
            }
            if left > 0 {
                return self.trunc_soft("domain");
            }
        }
        self.out.s(" (");
        self.out.u(u64::from(dns.len));
        self.out.s(")");
    }

    pub(super) fn dns_name_text(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        let start = self.out.len();
        let out = &mut *self.out;
        let end = decode::dns_name(msg, at, |label| {
            for &b in label {
                if b == b'.' || b == b'\\' {
                    out.push(b'\\');
                    out.push(b);
                } else if (0x21..0x7f).contains(&b) {
                    out.push(b);
                } else {
                    out.push(b'\\');
                    out.dec_width(u64::from(b), 3);
                }
            }
            out.push(b'.');
        });
        if end.is_some() && self.out.len() == start {
            self.out.push(b'.');
        }
        end
    }

    pub(super) fn dns_question(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        let after = decode::dns_name(msg, at, |_| {})?;
        let qtype = be16(msg, after)?;
        let qclass = be16(msg, after + 2)?;
        self.out.s(" ");
        self.dns_type_text(qtype);
        if qclass != 1 {
            self.dns_class_text(qclass);
        }
        self.out.s("? ");
        self.dns_name_text(msg, at)?;
        Some(after + 4)
    }

    pub(super) fn dns_type_text(&mut self, t: u16) {
        match names::dns_type(t) {
            Some(n) => self.out.s(n),
            None => {
                self.out.s("Type");
                self.out.u(u64::from(t));
            }
        }
    }

    pub(super) fn dns_class_text(&mut self, c: u16) {
        self.out.s(" ");
        match c & 0x7fff {
            1 => self.out.s("IN"),
            3 => self.out.s("CHAOS"),
            4 => self.out.s("HS"),
            255 => self.out.s("ANY"),
            other => {
                self.out.s("(Class ");
                self.out.u(u64::from(other));
                self.out.s(")");
            }
        }
    }

    pub(super) fn dns_record(&mut self, msg: &[u8], at: usize) -> Option<usize> {
        // A record whose name or fixed fields were not captured prints nothing and ends the
        // section quietly (tcpdump returns the end of the capture).
        let after_name = if self.o().verbose > 0 {
            self.out.s(" ");
            self.dns_name_text(msg, at)?
        } else {
            match decode::dns_name(msg, at, |_| {}) {
                Some(n) => n,
                None => return Some(msg.len()),
            }
        };
        if after_name + 10 > msg.len() {
            return Some(msg.len());
        }
        let rtype = be16(msg, after_name)?;
        let class = be16(msg, after_name + 2)?;
        let rdlen = usize::from(be16(msg, after_name + 8)?);
        let rdata = after_name + 10;
        let end = rdata + rdlen;
        if class != 1 && rtype != 41 {
            self.dns_class_text(class);
        }
        self.out.s(" ");
        self.dns_type_text(rtype);
        match rtype {
            1 => {
                let a = msg.get(rdata..rdata + 4)?;
                self.out.s(" ");
                self.out.ip4(a);
            }
            28 => {
                let a = msg.get(rdata..rdata + 16)?;
                self.out.s(" ");
                self.out.ip6(a);
            }
            2 | 5 | 12 | 39 => {
                self.out.s(" ");
                self.dns_name_text(msg, rdata)?;
            }
            16 => {
                let mut at = rdata;
                while at < end {
                    let n = usize::from(*msg.get(at)?);
                    let text = msg.get(at + 1..at + 1 + n)?;
                    self.out.s(" \"");
                    for &c in text {
                        if (0x20..0x7f).contains(&c) {
                            self.out.push(c);
                        } else {
                            self.out.s("\\0x");
                            self.out.hex_width(u64::from(c), 2);
                        }
                    }
                    self.out.s("\"");
                    at += 1 + n;
                }
            }
            15 => {
                self.out.s(" ");
                self.dns_name_text(msg, rdata + 2)?;
                self.out.s(" ");
                self.out.u(u64::from(be16(msg, rdata)?));
            }
            _ => {}
        }
        Some(end)
    }
}
