//! SCTP as tcpdump prints it: the chunks, with DATA, INIT and SACK fields.

use sift_wire::sctp;

use super::*;

impl<'a> Walk<'_, 'a> {
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
                sctp::CHUNK_DATA => {
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
                sctp::CHUNK_INIT | sctp::CHUNK_INIT_ACK => {
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
                sctp::CHUNK_SACK => {
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
}
