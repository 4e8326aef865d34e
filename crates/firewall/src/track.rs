//! Protocol tracking of a state's packets: TCP as pf's `pf_tcp_track_full` (sequence windows
//! with window scaling, pf's slack `MAXACKWINDOW`, resets only in window, the peers' state
//! progression and its timeouts) and `pf_tcp_track_sloppy`, UDP and other protocols'
//! pseudo-states, ICMP queries, and the packet an ICMP error quotes.
//!
//! Why its own module: this is where pf decides that a packet of a known connection does not
//! belong to it (`state-mismatch`, pf's `PFRES_BADSTATE`); the state table only finds states.

use sift_wire::ipproto;

use crate::Reason;
use crate::packet::{Family, Packet, tcp_flags as th};
use crate::rewrite::SeqShift;
use crate::state::{Peer, State, tcps, udps};
use crate::timeouts::tm;

/// pf's `PF_WSCALE_FLAG`: the peer sent the window scale option.
pub const WSCALE_FLAG: u8 = 0x80;
/// pf's `PF_WSCALE_MASK`: the shift.
pub const WSCALE_MASK: u8 = 0x0f;
/// The largest shift TCP allows (`TCP_MAX_WINSHIFT`).
pub const MAX_WINSHIFT: u8 = 14;
/// pf's slack on acknowledgements (`MAXACKWINDOW`): a maximal window and a segment.
pub const MAXACKWINDOW: u32 = 0xffff + 1500;

/// The TCP fields tracking reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The header has options (SACK blocks may need rewriting).
    pub has_options: bool,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Window (unscaled).
    pub win: u16,
    /// Flags.
    pub flags: u8,
    /// Payload length.
    pub len: u32,
    /// A SYN's window scale option (pf's `pf_get_wscale`: [`WSCALE_FLAG`] | shift), else 0.
    pub wscale: u8,
    /// The timestamp option (TSval, TSecr), if the segment has one.
    pub ts: Option<(u32, u32)>,
}

impl Segment {
    /// The segment of a TCP packet (`None` if the header does not fit).
    pub fn of(pkt: &Packet<'_>) -> Option<Segment> {
        let t = pkt.l4();
        if t.len() < 20 {
            return None;
        }
        let be32 = |o: usize| u32::from_be_bytes([t[o], t[o + 1], t[o + 2], t[o + 3]]);
        let hlen = usize::from(t[12] >> 4) * 4;
        let flags = t[13];
        let mut wscale = 0;
        let mut ts = None;
        if hlen > 20 {
            let opts = t.get(20..hlen.min(t.len())).unwrap_or(&[]);
            let mut i = 0;
            while i < opts.len() {
                match opts[i] {
                    0 => break,
                    1 => i += 1,
                    kind => {
                        let Some(&l) = opts.get(i + 1) else { break };
                        if l < 2 {
                            break;
                        }
                        if kind == 3 && l >= 3 && i + 2 < opts.len() && flags & th::SYN != 0 {
                            wscale = opts[i + 2].min(MAX_WINSHIFT) | WSCALE_FLAG;
                        }
                        if kind == 8 && l == 10 && i + 10 <= opts.len() {
                            let w = |o: usize| {
                                u32::from_be_bytes([opts[o], opts[o + 1], opts[o + 2], opts[o + 3]])
                            };
                            ts = Some((w(i + 2), w(i + 6)));
                        }
                        i += usize::from(l);
                    }
                }
            }
        }
        Some(Segment {
            has_options: hlen > 20,
            seq: be32(4),
            ack: be32(8),
            win: u16::from_be_bytes([t[14], t[15]]),
            flags,
            len: t.len().saturating_sub(hlen) as u32,
            wscale,
            ts,
        })
    }
}

#[inline]
fn seq_geq(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

#[inline]
fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The peers of `s`: (sender, receiver) of a packet from the creating side or the other.
fn peers(s: &mut State, from_src: bool) -> (&mut Peer, &mut Peer) {
    if from_src { (&mut s.src, &mut s.dst) } else { (&mut s.dst, &mut s.src) }
}

/// The TCP timeout the peers' states call for.
fn tcp_timeout(a: u8, b: u8) -> usize {
    if a >= tcps::FIN_WAIT_2 && b >= tcps::FIN_WAIT_2 {
        tm::TCP_CLOSED
    } else if a >= tcps::CLOSING && b >= tcps::CLOSING {
        tm::TCP_FIN_WAIT
    } else if a < tcps::ESTABLISHED || b < tcps::ESTABLISHED {
        tm::TCP_OPENING
    } else if a >= tcps::CLOSING || b >= tcps::CLOSING {
        tm::TCP_CLOSING
    } else {
        tm::TCP_ESTABLISHED
    }
}

/// The peers of a new TCP state (pf's `pf_create_state` for TCP).
pub(crate) fn tcp_create(s: &mut State, seg: &Segment) {
    let src = &mut s.src;
    src.seqlo = seg.seq;
    src.seqhi = seg.seq.wrapping_add(seg.len).wrapping_add(1);
    if seg.flags & th::SYN != 0 {
        src.seqhi = src.seqhi.wrapping_add(1);
        src.wscale = seg.wscale;
    }
    src.max_win = seg.win.max(1);
    let shift = src.wscale & WSCALE_MASK;
    if shift != 0 {
        // Remove the scale factor from the initial window.
        let win = u32::from(src.max_win) + (1u32 << shift);
        src.max_win = ((win - 1) >> shift) as u16;
    }
    if seg.flags & th::FIN != 0 {
        src.seqhi = src.seqhi.wrapping_add(1);
    }
    src.state = tcps::SYN_SENT;
    s.dst = Peer { seqhi: 1, max_win: 1, state: tcps::CLOSED, ..Peer::default() };
    s.timeout = tm::TCP_FIRST;
}

/// What a tracked TCP segment did besides passing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tracked {
    /// Nothing more.
    Pass,
    /// The handshake completed (both peers established): count the connection.
    Established,
}

/// pf's `pf_tcp_track_full`: whether the segment fits the windows, updating them, the peers'
/// states and the timeout; `state-mismatch` when it does not.
///
/// Modulated states (`modulate state`, a spliced `synproxy`): `seg` is as it arrived, the
/// windows are kept in each side's own numbers; `shift` receives how the segment's numbers
/// change on their way, and `iss` draws the other side's modulator when its first segment
/// comes (pf's deferred modulator).
pub(crate) fn tcp_full(
    s: &mut State,
    seg: &Segment,
    from_src: bool,
    now: u64,
    iss: &mut dyn FnMut() -> u32,
    shift: &mut Option<SeqShift>,
) -> Result<Tracked, Reason> {
    let (src, dst) = peers(s, from_src);
    let flags = seg.flags;
    let orig_seq = seg.seq;
    let mut seq = seg.seq;
    let mut ack = seg.ack;
    if src.seqlo == 0 {
        if dst.seqdiff != 0 && src.seqdiff == 0 {
            // The responder's first segment: its numbers get a modulator of their own.
            src.seqdiff = iss().wrapping_sub(seq).max(1);
            ack = seg.ack.wrapping_sub(dst.seqdiff);
            *shift = Some(SeqShift { seq: src.seqdiff, ack: Some(dst.seqdiff), sack: 0, ts: None });
        }
    } else {
        ack = seg.ack.wrapping_sub(dst.seqdiff);
        if src.seqdiff != 0 {
            *shift = Some(SeqShift { seq: src.seqdiff, ack: Some(dst.seqdiff), sack: 0, ts: None });
        }
    }
    if dst.seqdiff != 0 && seg.has_options {
        // SACK blocks name the other side's numbers: they go back by its modulator.
        shift.get_or_insert(SeqShift { seq: 0, ack: None, sack: 0, ts: None }).sack = dst.seqdiff;
    }
    let mut win = seg.win;
    let (mut sws, mut dws) = (0u8, 0u8);
    if src.wscale != 0 && dst.wscale != 0 && flags & th::SYN == 0 {
        sws = src.wscale & WSCALE_MASK;
        dws = dst.wscale & WSCALE_MASK;
    }
    let mut end;
    if src.seqlo == 0 {
        // The first packet from this side.
        end = seq.wrapping_add(seg.len);
        if flags & th::SYN != 0 {
            end = end.wrapping_add(1);
            if dst.wscale & WSCALE_FLAG != 0 {
                src.wscale = seg.wscale;
                if src.wscale & WSCALE_FLAG != 0 {
                    // Remove the scale factor from the initial window.
                    sws = src.wscale & WSCALE_MASK;
                    win = ((u32::from(win) + (1u32 << sws) - 1) >> sws) as u16;
                    dws = dst.wscale & WSCALE_MASK;
                } else {
                    // The other side's window was scaled for nothing.
                    dst.max_win =
                        (u32::from(dst.max_win) << (dst.wscale & WSCALE_MASK)).min(0xffff) as u16;
                    dst.wscale = 0;
                }
            }
        }
        if flags & th::FIN != 0 {
            end = end.wrapping_add(1);
        }
        src.seqlo = seq;
        if src.state < tcps::SYN_SENT {
            src.state = tcps::SYN_SENT;
        }
        let reach = (u32::from(dst.max_win) << dws).max(1);
        if src.seqhi == 1 || seq_geq(end.wrapping_add(reach), src.seqhi) {
            src.seqhi = end.wrapping_add(reach);
        }
        if win > src.max_win {
            src.max_win = win;
        }
    } else {
        end = seq.wrapping_add(seg.len);
        if flags & th::SYN != 0 {
            end = end.wrapping_add(1);
        }
        if flags & th::FIN != 0 {
            end = end.wrapping_add(1);
        }
    }
    if flags & th::ACK == 0 {
        // Let it pass the acknowledgement test.
        ack = dst.seqlo;
    } else if (ack == 0 && flags & (th::ACK | th::RST) == (th::ACK | th::RST))
        || dst.state < tcps::SYN_SENT
    {
        // Broken stacks acknowledge 0 in resets; nothing sent yet to acknowledge.
        ack = dst.seqlo;
    }
    if seq == end {
        // No data: ease the sequencing restrictions.
        seq = src.seqlo;
        end = seq;
    }
    let ackskew = dst.seqlo.wrapping_sub(ack) as i32 as i64;
    let back = u32::from(dst.max_win) << dws;
    let in_window = seq_geq(src.seqhi, end)
        && seq_geq(seq, src.seqlo.wrapping_sub(back))
        && ackskew >= -i64::from(MAXACKWINDOW)
        && ackskew <= i64::from(MAXACKWINDOW) << sws
        && (flags & th::RST == 0
            || orig_seq == src.seqlo
            || orig_seq == src.seqlo.wrapping_add(1)
            || orig_seq.wrapping_add(1) == src.seqlo);
    if in_window {
        advance_window(src, dst, win, end, ack, sws);
        let tracked = flag_transitions(src, dst, flags, false);
        let t = tcp_timeout(src.state, dst.state);
        s.timeout = t;
        s.last = now;
        Ok(tracked)
    } else if (dst.state < tcps::SYN_SENT
        || dst.state >= tcps::FIN_WAIT_2
        || src.state >= tcps::FIN_WAIT_2)
        && seq_geq(src.seqhi.wrapping_add(MAXACKWINDOW), end)
        && seq_geq(seq, src.seqlo.wrapping_sub(MAXACKWINDOW))
    {
        // pf's loose path: SYNs shotgunned before the peer answers, a connection picked up
        // after the table was flushed, stray packets after a close.
        advance_window(src, dst, win, end, ack, sws);
        if flags & th::FIN != 0 && src.state < tcps::CLOSING {
            src.state = tcps::CLOSING;
        }
        if flags & th::RST != 0 {
            src.state = tcps::TIME_WAIT;
            dst.state = tcps::TIME_WAIT;
        }
        Ok(Tracked::Pass)
    } else {
        Err(Reason::BadState)
    }
}

/// What an accepted segment moves, in both of pf's paths (in window and loose): the sender's
/// largest window and highest sequence number sent, and how far the receiver may send.
fn advance_window(src: &mut Peer, dst: &mut Peer, win: u16, end: u32, ack: u32, sws: u8) {
    if src.max_win < win {
        src.max_win = win;
    }
    if seq_gt(end, src.seqlo) {
        src.seqlo = end;
    }
    let scaled = u32::from(win) << sws;
    if seq_geq(ack.wrapping_add(scaled), dst.seqhi) {
        dst.seqhi = ack.wrapping_add(scaled.max(1));
    }
}

/// The peers' states from a segment's flags, as both of pf's trackers advance them (a SYN
/// opens, a FIN closes, an ACK establishes or finishes a close, a RST ends both); `sloppy`
/// adds `pf_tcp_track_sloppy`'s cases for connections seen from one side only.
fn flag_transitions(src: &mut Peer, dst: &mut Peer, flags: u8, sloppy: bool) -> Tracked {
    let mut tracked = Tracked::Pass;
    if flags & th::SYN != 0 && src.state < tcps::SYN_SENT {
        src.state = tcps::SYN_SENT;
    }
    if flags & th::FIN != 0 && src.state < tcps::CLOSING {
        src.state = tcps::CLOSING;
    }
    if flags & th::ACK != 0 {
        if dst.state == tcps::SYN_SENT {
            dst.state = tcps::ESTABLISHED;
            if src.state == tcps::ESTABLISHED {
                tracked = Tracked::Established;
            }
        } else if dst.state == tcps::CLOSING {
            dst.state = tcps::FIN_WAIT_2;
        } else if sloppy && src.state == tcps::SYN_SENT && dst.state < tcps::SYN_SENT {
            // Only one half of the connection is seen.
            src.state = tcps::ESTABLISHED;
            dst.state = tcps::ESTABLISHED;
        } else if sloppy
            && src.state == tcps::CLOSING
            && dst.state == tcps::ESTABLISHED
            && dst.seqlo == 0
        {
            // The close of a half connection.
            dst.state = tcps::CLOSING;
        }
    }
    if flags & th::RST != 0 {
        src.state = tcps::TIME_WAIT;
        dst.state = tcps::TIME_WAIT;
    }
    tracked
}

/// pf's `pf_tcp_track_sloppy`: the peers' states from the flags alone, no windows.
pub(crate) fn tcp_sloppy(s: &mut State, seg: &Segment, from_src: bool, now: u64) -> Tracked {
    let (src, dst) = peers(s, from_src);
    let tracked = flag_transitions(src, dst, seg.flags, true);
    s.timeout = tcp_timeout(s.src.state, s.dst.state);
    s.last = now;
    tracked
}

/// A UDP or other protocol's packet on its state (`PFUDPS_*` / `PFOTHERS_*`).
pub(crate) fn datagram(s: &mut State, from_src: bool, now: u64) {
    let (src, dst) = peers(s, from_src);
    if src.state < udps::SINGLE {
        src.state = udps::SINGLE;
    }
    if dst.state == udps::SINGLE {
        dst.state = udps::MULTIPLE;
    }
    let multiple = s.src.state == udps::MULTIPLE && s.dst.state == udps::MULTIPLE;
    s.timeout = match (s.key[0].proto == ipproto::UDP, multiple) {
        (true, true) => tm::UDP_MULTIPLE,
        (true, false) => tm::UDP_SINGLE,
        (false, true) => tm::OTHER_MULTIPLE,
        (false, false) => tm::OTHER_SINGLE,
    };
    s.last = now;
}

/// An ICMP query or reply on its state: pf moves it to `icmp.error`.
pub(crate) fn icmp(s: &mut State, now: u64) {
    s.timeout = tm::ICMP_ERROR;
    s.last = now;
}

/// The ICMP id of a query (`None` if the header does not fit).
pub fn icmp_id(pkt: &Packet<'_>) -> Option<u16> {
    let t = pkt.l4();
    Some(u16::from_be_bytes([*t.get(4)?, *t.get(5)?]))
}

/// The packet an ICMP error quotes: its addresses, protocol, ports (or ICMP id) and TCP
/// sequence number, from the IP header and the first 8 bytes of its transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quoted {
    /// The family.
    pub af: Family,
    /// The protocol.
    pub proto: u8,
    /// Source address key.
    pub src: u128,
    /// Destination address key.
    pub dst: u128,
    /// Ports (ICMP: the id twice).
    pub ports: (u16, u16),
    /// The TCP sequence number (0 otherwise).
    pub seq: u32,
}

/// Reads the quoted packet of ICMP error `pkt` (`None` if it does not hold one pf can key).
pub fn quoted(pkt: &Packet<'_>) -> Option<Quoted> {
    let inner = pkt.l4().get(8..)?;
    let (af, proto, src, dst, t) = match (pkt.af, inner.first()? >> 4) {
        (Family::Inet, 4) => {
            let hlen = usize::from(inner[0] & 0x0f) * 4;
            if hlen < 20 || inner.len() < hlen {
                return None;
            }
            let a = |o: usize| {
                Some(u128::from(u32::from_be_bytes(inner[o..o + 4].try_into().ok()?)) << 96)
            };
            let frag = u16::from_be_bytes([inner[6], inner[7]]) & 0x1fff;
            if frag != 0 {
                return None;
            }
            (Family::Inet, inner[9], a(12)?, a(16)?, &inner[hlen..])
        }
        (Family::Inet6, 6) => {
            if inner.len() < 40 {
                return None;
            }
            let a = |o: usize| Some(u128::from_be_bytes(inner[o..o + 16].try_into().ok()?));
            (Family::Inet6, inner[6], a(8)?, a(24)?, &inner[40..])
        }
        _ => return None,
    };
    let be16 = |o: usize| Some(u16::from_be_bytes([*t.get(o)?, *t.get(o + 1)?]));
    let (ports, seq) = match proto {
        ipproto::TCP => ((be16(0)?, be16(2)?), u32::from_be_bytes(t.get(4..8)?.try_into().ok()?)),
        ipproto::UDP => ((be16(0)?, be16(2)?), 0),
        ipproto::ICMP | ipproto::ICMPV6 => {
            let id = be16(4)?;
            ((id, id), 0)
        }
        _ => ((0, 0), 0),
    };
    Some(Quoted { af, proto, src, dst, ports, seq })
}

/// pf's test of an ICMP error quoting a TCP segment of state `s`, sent by the side opposite
/// the error (`sender_is_src`: the state's creating side): its sequence number must be in the
/// sender's window (sloppy states skip the test).
pub(crate) fn quoted_tcp_fits(s: &State, seq: u32, sender_is_src: bool) -> bool {
    if s.sloppy {
        return true;
    }
    let (src, dst) = if sender_is_src { (&s.src, &s.dst) } else { (&s.dst, &s.src) };
    let dws = if src.wscale != 0 && dst.wscale != 0 { dst.wscale & WSCALE_MASK } else { 0 };
    seq_geq(src.seqhi, seq) && seq_geq(seq, src.seqlo.wrapping_sub(u32::from(dst.max_win) << dws))
}
