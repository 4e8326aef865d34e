//! pf's per-packet normalizations: the TCP sanity rewrites pf applies to every TCP segment and
//! the `scrub (…)` options of a rule, done on a packet's bytes with every checksum kept right.
//!
//! Why this module: sift replays captures through a pf rule set and writes what pf would
//! forward. pf does not forward a packet's bytes unchanged: `pf_test` runs `pf_normalize_tcp` on
//! every TCP segment that is not a fragment (before the state lookup, scrub rules or not), and
//! after the decision it applies the deciding rule's (or the state's) scrub options with
//! `pf_normalize_mss` and `pf_scrub`. Each function here is one of pf's (pf.c, pf_norm.c), on
//! an IPv4 or IPv6 packet starting at its IP header:
//!
//! * [`normalize_tcp`] (`pf_normalize_tcp`): drops SYN+RST, segments with neither SYN, ACK nor
//!   RST, and FIN, PUSH or URG without ACK ([`Reason::Normalize`]); clears FIN on a SYN, the
//!   four reserved bits beside the data offset, and the urgent pointer when URG is not set.
//!   That is pf's whole set: it does not clear an acknowledgment number without ACK, and a bad
//!   data offset never gets here (`pf_setup_pdesc` refuses it as `short`, as
//!   [`Packet::parse`](crate::packet::Packet::parse) does; [`normalize_tcp`] answers
//!   [`Reason::Short`] for it too so that it never reads past the header).
//! * [`normalize_ip4_off`] (the part of `pf_normalize_ip` that is not reassembly): an IPv4
//!   fragment with DF set is dropped ([`Reason::Fragment`]) unless `set reassemble yes no-df`
//!   cleared DF first; a non-fragment keeps no bit of the fragment word but DF.
//! * [`normalize_mss`] (`pf_normalize_mss`, `max-mss`): lowers every MSS option above the limit.
//!   pf walks the options of every TCP segment for it, not only of SYNs, and so does this.
//! * [`scrub_ip`] (`pf_scrub`): `no-df` clears DF (IPv4, fragments included), `min-ttl` raises
//!   the TTL or hop limit, `set-tos` replaces the IPv4 TOS or IPv6 traffic class keeping the
//!   two ECN bits (pf ORs the new value's low bits into them), `random-id` gives an IPv4
//!   packet that is not a fragment a new identification from the caller's generator (pf's
//!   `ip_randomid()`; a generator keeps tests deterministic).
//! * [`scrub`] runs [`normalize_mss`] (TCP only) then [`scrub_ip`], pf_test's order.
//!
//! What differs from pf, and why: pf leaves the IPv4 header checksum to `ip_output`, which
//! recomputes it; here every change updates the IPv4 header checksum and the TCP checksum
//! incrementally (RFC 1624, `sift_wire::checksum`), since the bytes are the output. None of
//! these fields is in a pseudo-header, so no transport checksum changes for an IP field.
//! pf's `pf_normalize_tcp` sets its drop reason on a local variable: the normalize counter
//! (`pfctl -si`) counts the drop while the packet's logged reason stays `match`; callers that
//! log should know that [`Reason::Normalize`] here is the counter's.
//!
//! Every function takes any bytes: too short, a wrong version or an offset past the end is
//! refused or left alone, never a panic.

use sift_pf::ast;
use sift_wire::checksum;

use crate::Reason;
use crate::packet::{Packet, tcp_flags as th};

/// IPv4 "don't fragment".
const IP_DF: u16 = 0x4000;
/// IPv4 "more fragments" and the fragment offset.
const IP_MF_OFF: u16 = 0x3fff;
/// The TCP MSS option's kind and length.
const TCPOPT_MAXSEG: u8 = 2;
const TCPOLEN_MAXSEG: u8 = 4;

/// Where the transport header of `pkt` starts in `pkt.bytes`; `None` for a fragment or when
/// the transport header is not in the bytes. Compute it before borrowing the bytes mutably.
pub fn l4_offset(pkt: &Packet<'_>) -> Option<usize> {
    if pkt.fragment {
        return None;
    }
    let l4 = pkt.l4();
    let base = pkt.bytes.as_ptr() as usize;
    let at = l4.as_ptr() as usize;
    // `l4()` is a subslice of `bytes` (or an empty slice when it cannot be found).
    (at >= base && at - base + l4.len() <= pkt.bytes.len() && !l4.is_empty()).then_some(at - base)
}

/// Writes `new` at `at` in the checksummed message `msg` and updates the checksum stored at
/// `csum_at` (big-endian) for the change, over the 16-bit-aligned window that covers it.
/// Returns whether anything changed. `at + new.len()` must lie within `msg`; the window must
/// not include the checksum field.
fn patch(msg: &mut [u8], csum_at: usize, at: usize, new: &[u8]) -> bool {
    let end = at + new.len();
    if msg[at..end] == *new {
        return false;
    }
    let lo = at & !1;
    let hi = (end + 1) & !1;
    // An odd window end past the message counts as a zero pad byte, as the sum pads it.
    let mut old = [0u8; 8];
    let mut upd = [0u8; 8];
    let n = hi - lo;
    debug_assert!(n <= 8, "patch windows are a few bytes");
    let window = |msg: &[u8], w: &mut [u8; 8]| {
        for (i, b) in w.iter_mut().take(n).enumerate() {
            *b = msg.get(lo + i).copied().unwrap_or(0);
        }
    };
    window(msg, &mut old);
    msg[at..end].copy_from_slice(new);
    window(msg, &mut upd);
    let sum = u16::from_be_bytes([msg[csum_at], msg[csum_at + 1]]);
    let sum = checksum::update_bytes(sum, &old[..n], &upd[..n]);
    msg[csum_at..csum_at + 2].copy_from_slice(&sum.to_be_bytes());
    true
}

/// The TCP header at `l4` in `ip`, checked to fit with its options (pf_setup_pdesc's test).
fn tcp_header(ip: &mut [u8], l4: usize) -> Result<&mut [u8], Reason> {
    let seg = ip.get_mut(l4..).ok_or(Reason::Short)?;
    if seg.len() < 20 {
        return Err(Reason::Short);
    }
    let hlen = usize::from(seg[12] >> 4) * 4;
    if hlen < 20 || hlen > seg.len() {
        return Err(Reason::Short);
    }
    Ok(&mut seg[..hlen])
}

/// TCP checksum offset in the header.
const TH_SUM: usize = 16;

/// pf's `pf_normalize_tcp` on the TCP segment at `l4` (its offset in `ip`, as [`l4_offset`]
/// gives it): `Err(Reason::Normalize)` for a segment pf drops, otherwise the segment
/// normalized in place with its checksum updated; `Ok(true)` when something was rewritten.
/// `Err(Reason::Short)` when the TCP header does not fit (pf refuses it before).
pub fn normalize_tcp(ip: &mut [u8], l4: usize) -> Result<bool, Reason> {
    let tcp = tcp_header(ip, l4)?;
    let orig = tcp[13];
    let mut flags = orig;
    if flags & th::SYN != 0 {
        if flags & th::RST != 0 {
            return Err(Reason::Normalize);
        }
        // pf clears FIN on a SYN rather than dropping ("XXX why clear instead of drop?").
        flags &= !th::FIN;
    } else if flags & (th::ACK | th::RST) == 0 {
        return Err(Reason::Normalize);
    }
    if flags & th::ACK == 0 && flags & (th::FIN | th::PUSH | th::URG) != 0 {
        return Err(Reason::Normalize);
    }
    let mut rewrote = false;
    if flags != orig || tcp[12] & 0x0f != 0 {
        // Data offset kept, the four reserved bits (pf's th_x2) cleared, the flags set.
        let word = [tcp[12] & 0xf0, flags];
        rewrote |= patch(tcp, TH_SUM, 12, &word);
    }
    if flags & th::URG == 0 && (tcp[18] != 0 || tcp[19] != 0) {
        rewrote |= patch(tcp, TH_SUM, 18, &[0, 0]);
    }
    Ok(rewrote)
}

/// pf's `pf_normalize_mss`: every MSS option of the TCP segment at `l4` whose value exceeds
/// `max_mss` is set to `max_mss`, the checksum updated. Options are walked as pf's
/// `pf_find_tcpopt` walks them (EOL counts as padding, a length below 2 as 2). Returns whether
/// anything changed; a header that does not fit changes nothing.
pub fn normalize_mss(ip: &mut [u8], l4: usize, max_mss: u16) -> bool {
    let Ok(tcp) = tcp_header(ip, l4) else { return false };
    let mut changed = false;
    let end = tcp.len();
    let mut at = 20;
    while let Some(opt) = find_tcpopt(tcp, at, end, TCPOPT_MAXSEG, TCPOLEN_MAXSEG) {
        let mss = u16::from_be_bytes([tcp[opt + 2], tcp[opt + 3]]);
        if mss > max_mss {
            changed |= patch(tcp, TH_SUM, opt + 2, &max_mss.to_be_bytes());
        }
        at = opt + usize::from(tcp[opt + 1]);
    }
    changed
}

/// pf's `pf_find_tcpopt`: the offset of the next option of `kind` at least `min_len` long
/// that fits whole (its first `min_len` bytes) in `hdr[at..end]`.
fn find_tcpopt(hdr: &[u8], mut at: usize, end: usize, kind: u8, min_len: u8) -> Option<usize> {
    let min = usize::from(min_len);
    while at < end && end - at >= min {
        match hdr[at] {
            // pf treats EOL as padding: some stacks zero-fill their option space.
            0 | 1 => {
                at += 1;
                continue;
            }
            k if k == kind && hdr[at + 1] >= min_len => return Some(at),
            _ => {}
        }
        at += usize::from(hdr[at + 1]).max(2);
    }
    None
}

/// The scrub options in force for a packet (pf's `pf_rule_actions` fields that `pf_scrub` and
/// `pf_normalize_mss` read): from the deciding rule, or accumulated over the `match` rules and
/// the deciding rule into a state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScrubOpts {
    /// `no-df`: clear IPv4 "don't fragment".
    pub nodf: bool,
    /// `random-id`: a new IPv4 identification for packets that are not fragments.
    pub random_id: bool,
    /// `min-ttl N` (0: none).
    pub min_ttl: u8,
    /// `max-mss N` (0: none).
    pub max_mss: u16,
    /// `reassemble tcp`: the state normalizes its TCP connection (TTL floor, timestamps).
    pub reassemble_tcp: bool,
    /// `set-tos T`.
    pub set_tos: Option<u8>,
}

impl ScrubOpts {
    /// The scrub options of one rule; `None` when it has none.
    pub fn from_rule(r: &ast::Rule) -> Option<ScrubOpts> {
        let mut o = ScrubOpts::default();
        o.add_rule(r);
        (!o.is_empty()).then_some(o)
    }

    /// Adds the options of `r` as pf's `pf_rule_to_actions` does for each matching rule: the
    /// flags accumulate, a nonzero `min-ttl`/`max-mss` and a `set-tos` replace earlier ones.
    pub fn add_rule(&mut self, r: &ast::Rule) {
        let f = r.scrub_flags;
        self.nodf |= f & ast::scrub::NODF != 0;
        self.random_id |= f & ast::scrub::RANDOMID != 0;
        if f & ast::scrub::SETTOS != 0 {
            self.set_tos = Some(r.set_tos);
        }
        if r.min_ttl != 0 {
            self.min_ttl = r.min_ttl;
        }
        if r.max_mss != 0 {
            self.max_mss = r.max_mss;
        }
        self.reassemble_tcp |= f & ast::scrub::SCRUB_TCP != 0;
    }

    /// Whether the options change nothing.
    pub fn is_empty(&self) -> bool {
        *self == ScrubOpts::default()
    }
}

/// IPv4 header checksum offset.
const IP_SUM: usize = 10;

/// The IPv4 header (checked: version 4, header length 20–60 and within `ip`).
fn ip4_header(ip: &mut [u8]) -> Option<&mut [u8]> {
    let first = *ip.first()?;
    let hlen = usize::from(first & 0x0f) * 4;
    (first >> 4 == 4 && hlen >= 20 && hlen <= ip.len()).then(move || &mut ip[..hlen])
}

/// pf's `pf_scrub` on the IP header of `ip`: `no-df`, `min-ttl`, `set-tos`, `random-id` in pf's
/// order, the IPv4 header checksum updated. `next_id` is asked for an identification only when
/// `random-id` applies. Returns whether anything changed.
pub fn scrub_ip(ip: &mut [u8], opts: &ScrubOpts, next_id: &mut impl FnMut() -> u16) -> bool {
    match ip.first().map(|b| b >> 4) {
        Some(4) => scrub_ip4(ip, opts, next_id),
        Some(6) if ip.len() >= 40 => scrub_ip6(ip, opts),
        _ => false,
    }
}

fn scrub_ip4(ip: &mut [u8], opts: &ScrubOpts, next_id: &mut impl FnMut() -> u16) -> bool {
    let Some(h) = ip4_header(ip) else { return false };
    let mut changed = false;
    let off = u16::from_be_bytes([h[6], h[7]]);
    if opts.nodf && off & IP_DF != 0 {
        changed |= patch(h, IP_SUM, 6, &(off & !IP_DF).to_be_bytes());
    }
    if opts.min_ttl != 0 && h[8] < opts.min_ttl {
        changed |= patch(h, IP_SUM, 8, &[opts.min_ttl]);
    }
    if let Some(tos) = opts.set_tos {
        changed |= patch(h, IP_SUM, 1, &[tos | (h[1] & 0x03)]);
    }
    // pf's test is "no bit but DF in the fragment word": the reserved bit counts too.
    let off = u16::from_be_bytes([h[6], h[7]]);
    if opts.random_id && off & !IP_DF == 0 {
        changed |= patch(h, IP_SUM, 4, &next_id().to_be_bytes());
    }
    changed
}

fn scrub_ip6(ip: &mut [u8], opts: &ScrubOpts) -> bool {
    let mut changed = false;
    if opts.min_ttl != 0 && ip[7] < opts.min_ttl {
        ip[7] = opts.min_ttl;
        changed = true;
    }
    if let Some(tos) = opts.set_tos {
        // pf clears the six DSCP bits of the flow word (0x0fc00000) and ORs in tos << 20.
        let word = u32::from_be_bytes([ip[0], ip[1], ip[2], ip[3]]);
        let new = (word & !0x0fc0_0000) | (u32::from(tos) << 20);
        if new != word {
            ip[..4].copy_from_slice(&new.to_be_bytes());
            changed = true;
        }
    }
    changed
}

/// pf_test's scrubbing of a packet it passes: `max-mss` on a TCP segment (`l4` its offset, as
/// [`l4_offset`] gives it; `None` for other packets and fragments), then [`scrub_ip`].
/// Returns whether anything changed.
pub fn scrub(
    ip: &mut [u8],
    l4: Option<usize>,
    opts: &ScrubOpts,
    next_id: &mut impl FnMut() -> u16,
) -> bool {
    let mut changed = false;
    if opts.max_mss != 0
        && let Some(l4) = l4
        && proto(ip) == Some(sift_wire::ipproto::TCP)
    {
        changed |= normalize_mss(ip, l4, opts.max_mss);
    }
    changed | scrub_ip(ip, opts, next_id)
}

/// The upper-layer protocol of an IPv4 or IPv6 packet (after IPv6 extension headers).
fn proto(ip: &[u8]) -> Option<u8> {
    Packet::parse(ip).ok().map(|p| p.proto)
}

/// The non-reassembly part of pf's `pf_normalize_ip` on an IPv4 packet: a fragment has DF
/// cleared when `reassemble_nodf` (`set reassemble yes no-df`), and is refused with
/// [`Reason::Fragment`] when DF is still set; a packet that is not a fragment keeps only DF in
/// its fragment word (the reserved bit is cleared). Returns whether anything changed; other
/// bytes (IPv6, too short) are left alone.
pub fn normalize_ip4_off(ip: &mut [u8], reassemble_nodf: bool) -> Result<bool, Reason> {
    let Some(h) = ip4_header(ip) else { return Ok(false) };
    let off = u16::from_be_bytes([h[6], h[7]]);
    if off & IP_MF_OFF != 0 {
        let mut changed = false;
        let mut off = off;
        if reassemble_nodf && off & IP_DF != 0 {
            off &= !IP_DF;
            changed = patch(h, IP_SUM, 6, &off.to_be_bytes());
        }
        if off & IP_DF != 0 {
            return Err(Reason::Fragment);
        }
        return Ok(changed);
    }
    Ok(patch(h, IP_SUM, 6, &(off & IP_DF).to_be_bytes()))
}

/// Whether `pkt` is one `pf_normalize_tcp` applies to: TCP and not a fragment.
pub fn is_normalized_tcp(pkt: &Packet<'_>) -> bool {
    pkt.proto == sift_wire::ipproto::TCP && !pkt.fragment
}
