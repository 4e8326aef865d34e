//! pf's `synproxy state`: pf completes the client's TCP handshake itself, and only then opens
//! the server's side; when the server answers, pf splices the two connections, shifting each
//! side's sequence numbers by the difference between the numbers it chose and the peer's.
//!
//! Why its own module: until the splice the state's packets are not tracked but answered
//! (pf.c's `pf_synproxy`, called before tracking in `pf_test_state`): the client's SYN gets a
//! SYN+ACK from pf, the client's ACK makes pf send the server a SYN, the server's SYN+ACK makes
//! pf send the server its ACK and the client a window update, and none of those packets goes
//! on. The server sees nothing from a client that never completed its handshake (the point of
//! the option: SYN floods stop at the firewall). After the splice the state is an ordinary
//! modulated one (`rewrite::SeqShift`).
//!
//! As pf, only a SYN going in starts the proxy (on an outbound rule the state is a plain
//! one). What differs: pf takes the MSS it announces from the routes to both ends
//! (`pf_calc_mss`); offline there are no routes, so an interface MTU of 1,500 bytes is assumed
//! on both (the MSS is the client's, at most 1,460 for IPv4 and 1,440 for IPv6).

use crate::eval::next_random;
use crate::packet::{Direction, Family, Meta, Packet, tcp_flags as th};
use crate::reply::{OwnSegment, own_segment};
use crate::state::{StateId, tcps};
use crate::track::Segment;
use crate::{Decision, Firewall, Reason, Verdict};

/// The MSS a host announces when its SYN carries none (`tcp_mssdflt`).
const MSS_DEFAULT: u16 = 512;

/// The MSS option of a TCP segment (the transport header and data), if any.
fn mss_option(t: &[u8]) -> Option<u16> {
    let hlen = (usize::from(*t.get(12)? >> 4) * 4).min(t.len());
    let mut i = 20;
    while i < hlen {
        match t[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let len = usize::from(*t.get(i + 1)?);
                if len < 2 || i + len > hlen {
                    break;
                }
                if kind == 2 && len == 4 {
                    return Some(u16::from_be_bytes([t[i + 2], t[i + 3]]));
                }
                i += len;
            }
        }
    }
    None
}

impl Firewall {
    /// A packet pf makes for a state's handshake, from `src` to `dst`.
    #[allow(clippy::too_many_arguments)]
    fn own(
        &mut self,
        af: Family,
        (src, sport): (u128, u16),
        (dst, dport): (u128, u16),
        seq: u32,
        ack: u32,
        flags: u8,
        win: u16,
        mss: u16,
    ) -> Vec<u8> {
        let ip_id = next_random(&mut self.rng) as u16;
        own_segment(&OwnSegment { af, src, dst, sport, dport, seq, ack, flags, win, mss, ip_id })
    }

    /// The SYN of a connection a `synproxy state` rule passed going in, its state `id` just
    /// created: pf answers the client with a SYN+ACK of its own and keeps the SYN
    /// (pf_test_rule's synproxy branch).
    pub(crate) fn start_synproxy(&mut self, id: StateId, pkt: &Packet<'_>, d: &mut Decision) {
        let Some(seg) = Segment::of(pkt) else { return };
        let ceiling = if pkt.af == Family::Inet { 1460 } else { 1440 };
        let mss = mss_option(pkt.l4()).unwrap_or(MSS_DEFAULT).min(ceiling).max(64);
        let iss = next_random(&mut self.rng) as u32;
        let Some(s) = self.states.get_mut(id) else { return };
        s.src.state = tcps::PROXY_SRC;
        s.src.seqhi = iss;
        s.proxy_mss = mss;
        let synack = self.own(
            pkt.af,
            (pkt.dst, pkt.dport),
            (pkt.src, pkt.sport),
            iss,
            seg.seq.wrapping_add(1),
            th::SYN | th::ACK,
            0,
            mss,
        );
        d.reply = Some(synack);
        d.held = true;
        d.reason = Reason::Synproxy;
        d.rewrite = None;
        d.shift = None;
    }

    /// pf's `pf_synproxy` for a TCP packet of state `id`: `Some` when the proxy answered,
    /// kept or refused it; `None` when the state is not (or no longer) proxying and the packet
    /// is tracked as usual.
    pub(crate) fn synproxy(
        &mut self,
        id: StateId,
        pkt: &Packet<'_>,
        seg: &Segment,
        meta: &Meta<'_>,
    ) -> Option<Decision> {
        let s = self.states.get(id)?;
        if s.src.state < tcps::PROXY_SRC {
            return None;
        }
        let forward = meta.dir == s.direction;
        // The key of the far side for this packet (pf's `key[pd->didx]`), oriented as pf's.
        let (sk, si, di) = match meta.dir {
            Direction::In => (s.key[1], 0, 1),
            Direction::Out => (s.key[0], 1, 0),
        };
        let mut d = self.state_decision(id, meta.dir, pkt.af, Err(Reason::Synproxy));
        d.rewrite = None;
        d.scrub = None;
        let held = |mut d: Decision| {
            d.action = Verdict::Pass;
            d.held = true;
            Some(d)
        };
        let (flags, seq, ack) = (seg.flags, seg.seq, seg.ack);
        if s.src.state == tcps::PROXY_SRC {
            if !forward {
                return held(d);
            }
            if flags & th::SYN != 0 {
                if seq != s.src.seqlo {
                    return Some(d);
                }
                // The client sent its SYN again: so does pf its SYN+ACK.
                let (iss, mss) = (s.src.seqhi, s.proxy_mss);
                d.reply = Some(self.own(
                    pkt.af,
                    (pkt.dst, pkt.dport),
                    (pkt.src, pkt.sport),
                    iss,
                    seq.wrapping_add(1),
                    th::SYN | th::ACK,
                    0,
                    mss,
                ));
                return held(d);
            }
            if flags & (th::ACK | th::RST | th::FIN) != th::ACK
                || ack != s.src.seqhi.wrapping_add(1)
                || seq != s.src.seqlo.wrapping_add(1)
            {
                return Some(d);
            }
            self.states.get_mut(id)?.src.state = tcps::PROXY_DST;
        }
        let s = self.states.get(id)?;
        if forward {
            // The client's ACK: its handshake with pf is complete; pf opens the server's.
            if flags & (th::SYN | th::ACK) != th::ACK
                || ack != s.src.seqhi.wrapping_add(1)
                || seq != s.src.seqlo.wrapping_add(1)
            {
                return Some(d);
            }
            let mut dst_iss = s.dst.seqhi;
            if dst_iss == 1 {
                dst_iss = next_random(&mut self.rng) as u32;
            }
            let mss = s.proxy_mss;
            let st = self.states.get_mut(id)?;
            st.src.max_win = seg.win.max(1);
            st.dst.seqhi = dst_iss;
            d.ahead = Some(self.own(
                pkt.af,
                (sk.addr[si], sk.port[si]),
                (sk.addr[di], sk.port[di]),
                dst_iss,
                0,
                th::SYN,
                0,
                mss,
            ));
            return held(d);
        }
        // The server's SYN+ACK: pf acknowledges it, tells the client the server's window and
        // splices the two numberings.
        if flags & (th::SYN | th::ACK) != th::SYN | th::ACK || ack != s.dst.seqhi.wrapping_add(1) {
            return Some(d);
        }
        let (src_seqhi, src_seqlo, src_win) = (s.src.seqhi, s.src.seqlo, s.src.max_win);
        let dst_win = seg.win.max(1);
        d.reply = Some(self.own(
            pkt.af,
            (pkt.dst, pkt.dport),
            (pkt.src, pkt.sport),
            ack,
            seq.wrapping_add(1),
            th::ACK,
            src_win,
            0,
        ));
        d.ahead = Some(self.own(
            pkt.af,
            (sk.addr[si], sk.port[si]),
            (sk.addr[di], sk.port[di]),
            src_seqhi.wrapping_add(1),
            src_seqlo.wrapping_add(1),
            th::ACK,
            dst_win,
            0,
        ));
        let st = self.states.get_mut(id)?;
        st.dst.max_win = dst_win;
        st.dst.seqlo = seq;
        st.src.seqdiff = st.dst.seqhi.wrapping_sub(st.src.seqlo);
        st.dst.seqdiff = st.src.seqhi.wrapping_sub(st.dst.seqlo);
        st.src.seqhi = st.src.seqlo.wrapping_add(u32::from(st.dst.max_win));
        st.dst.seqhi = st.dst.seqlo.wrapping_add(u32::from(st.src.max_win));
        st.src.wscale = 0;
        st.dst.wscale = 0;
        st.src.state = tcps::ESTABLISHED;
        st.dst.state = tcps::ESTABLISHED;
        st.timeout = crate::timeouts::tm::TCP_ESTABLISHED;
        st.last = meta.now;
        held(d)
    }
}
