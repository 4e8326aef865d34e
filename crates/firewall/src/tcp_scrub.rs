//! `scrub (reassemble tcp)`: pf's stateful TCP normalization (pf_norm.c's
//! `pf_normalize_tcp_init` and `pf_normalize_tcp_stateful`) for the states of rules that ask
//! for it: neither side may lower its TTL (hop limit) below the highest it has used — packets
//! are raised back to it, so that a packet cannot be made to expire between the firewall and
//! the host it would confuse — and TCP timestamps are modulated per side (each side's TSval is
//! shifted by a random amount, the other side's echo shifted back), hiding the hosts' uptime
//! and making timestamps a check: a TSval older than the peer last echoed, one that jumps
//! ahead faster than any clock ticks, or an echo of a TSval the peer never sent is dropped
//! with pf's `bad-timestamp` reason.
//!
//! Why its own module: the per-side data lives apart from the state (pf keeps a pointer to a
//! `pf_state_scrub`; here an `Option<Box<…>>`), only the states of such rules carry it, and
//! the checks run after tracking has accepted the segment. What differs from pf: pf checks
//! before it moves the windows; sift after (a segment refused here has advanced them), and
//! the clock is in seconds, so the allowance for a jumping TSval is counted per second.

use crate::Reason;
use crate::rewrite::SeqShift;
use crate::state::State;
use crate::track::Segment;

/// The fastest timestamp clock pf allows for (`TS_MAXFREQ`, ticks per second).
const TS_MAXFREQ: u64 = 1100;

/// One side's normalization data (pf's `pf_state_scrub`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PeerScrub {
    /// Set up (from the side's first segment).
    pub on: bool,
    /// The highest TTL (hop limit) the side used.
    pub ttl: u8,
    /// The side sent a timestamp in its SYN: its timestamps are modulated (`PFSS_TIMESTAMP`).
    pub ts: bool,
    /// What is added to its TSvals.
    pub ts_mod: u32,
    /// Its first TSval, its highest TSval and its highest echo (its own numbers).
    pub tsval0: u32,
    pub tsval: u32,
    pub tsecr: u32,
    /// When it last sent a timestamp (seconds).
    pub last: u64,
}

/// What the normalization does to a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TcpScrub {
    /// Raise the TTL (hop limit) to this.
    pub ttl: u8,
    /// The timestamp shift (added to TSval, subtracted from TSecr).
    pub ts: Option<(u32, u32)>,
}

#[inline]
fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[inline]
fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// pf's `pf_normalize_tcp_init` for the side sending `seg` with TTL `ttl`: its TTL, and the
/// timestamp modulation when its SYN carries a timestamp.
pub(crate) fn init(p: &mut PeerScrub, seg: &Segment, ttl: u8, now: u64, random: u32) {
    *p = PeerScrub { on: true, ttl, ..PeerScrub::default() };
    if seg.flags & crate::packet::tcp_flags::SYN == 0 {
        return;
    }
    if let Some((tsval, tsecr)) = seg.ts {
        p.ts = true;
        p.ts_mod = random;
        p.tsval0 = tsval;
        p.tsval = tsval;
        p.tsecr = tsecr;
        p.last = now;
    }
}

/// pf's `pf_normalize_tcp_stateful` for `seg` of state `s` from the creating side (or the
/// other): the TTL floor and the timestamps; `random` seeds the side's modulation if its
/// first segment comes now.
pub(crate) fn stateful(
    s: &mut State,
    seg: &Segment,
    from_src: bool,
    ttl: u8,
    now: u64,
    random: u32,
) -> Result<TcpScrub, Reason> {
    let Some(sides) = s.tcp_scrub.as_mut() else { return Ok(TcpScrub::default()) };
    let (si, di) = if from_src { (0, 1) } else { (1, 0) };
    if !sides[si].on {
        init(&mut sides[si], seg, ttl, now, random);
    }
    let (mut src, dst) = (sides[si], sides[di]);
    // The TTL floor.
    src.ttl = src.ttl.max(ttl);
    let mut out = TcpScrub { ttl: src.ttl, ts: None };
    if let Some((tsval, tsecr)) = seg.ts
        && (src.ts || dst.ts)
    {
        let add = if src.ts { src.ts_mod } else { 0 };
        let sub = if dst.ts { dst.ts_mod } else { 0 };
        out.ts = Some((add, sub));
        // The echo in the other side's own numbers.
        let echo = tsecr.wrapping_sub(sub);
        if src.ts && dst.ts && dst.tsval != 0 && seg.flags & crate::packet::tcp_flags::SYN == 0 {
            let ticks = (now.saturating_sub(src.last) + 1).saturating_mul(TS_MAXFREQ);
            let ahead = src.tsval.wrapping_add(ticks.min(u64::from(u32::MAX >> 1)) as u32);
            let stale = tsval != 0 && seq_lt(tsval, dst.tsecr);
            let jumps = tsval != 0 && seq_gt(tsval, ahead);
            let bad_echo = tsecr != 0 && (seq_gt(echo, dst.tsval) || seq_lt(echo, dst.tsval0));
            if stale || jumps || bad_echo {
                return Err(Reason::BadTimestamp);
            }
        }
        if tsval != 0 && (src.tsval == 0 || seq_gt(tsval, src.tsval)) {
            src.tsval = tsval;
            src.last = now;
        }
        if tsecr != 0 && (src.tsecr == 0 || seq_gt(echo, src.tsecr)) {
            src.tsecr = echo;
        }
    }
    sides[si] = src;
    Ok(out)
}

/// The shift a segment gets: modulation's and the timestamps' together.
pub(crate) fn merge(shift: Option<SeqShift>, ts: Option<(u32, u32)>) -> Option<SeqShift> {
    match (shift, ts) {
        (s, None) => s,
        (Some(mut s), ts) => {
            s.ts = ts;
            Some(s)
        }
        (None, ts) => Some(SeqShift { seq: 0, ack: None, sack: 0, ts }),
    }
}
